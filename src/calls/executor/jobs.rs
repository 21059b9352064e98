//! The job handlers that run a call: from its stored job, or in the process that stored it.

use super::Execution;
use crate::calls::{is_final, CallService, Ended, Plan};
use crate::ids;
use crate::jobs::{Completion, HeldJob, JobHandler};
use crate::store::records::calls::CallRow;
use anyhow::Context as _;
use async_trait::async_trait;
use serde_json::Value;

/// The job handler of [`CALL_JOB`](crate::calls::CALL_JOB).
pub struct CallJob {
    pub service: CallService,
}

#[async_trait]
impl JobHandler for CallJob {
    async fn run(&self, payload: Value) -> anyhow::Result<()> {
        self.run_stored(&payload, None).await.map(|_| ())
    }

    async fn run_held(&self, job: HeldJob<'_>) -> anyhow::Result<Completion> {
        self.run_stored(&job.payload, Some(&job)).await
    }

    async fn gave_up(&self, payload: Value, error: &str) {
        give_up(&self.service, payload, error, INTERNAL_FAILURE).await
    }

    async fn abandoned(&self, payload: Value, message: &str) {
        give_up(&self.service, payload, message, message).await
    }

    /// `message` is written for the tenant (the time limit): shown as it is.
    async fn stopped(&self, payload: Value, message: &str) {
        give_up(&self.service, payload, message, message).await
    }
}

impl CallJob {
    async fn run_stored(&self, payload: &Value, job: Option<&HeldJob<'_>>) -> anyhow::Result<Completion> {
        let call_id = payload.get("callID").and_then(Value::as_str).context("call job without callID")?;
        let Some(call) = self.service.records.call_by_id(call_id).await? else {
            tracing::warn!(call_id, "job for a call that no longer exists");
            return Ok(Completion::ByWorker);
        };
        run_call(&self.service, &call, None, false, job).await
    }
}

/// The first attempt of a call's job, by the process that stored the call already claimed
/// (see [`INLINE_CALLS`](crate::calls::INLINE_CALLS)): it has the call in hand, and knows no run of it exists.
pub struct ClaimedCall {
    pub service: CallService,
    pub call: CallRow,
    /// The plan stored in `call`, as submission resolved it (not parsed back).
    pub plan: Plan,
}

#[async_trait]
impl JobHandler for ClaimedCall {
    async fn run(&self, _payload: Value) -> anyhow::Result<()> {
        run_call(&self.service, &self.call, Some(&self.plan), true, None).await.map(|_| ())
    }

    async fn run_held(&self, job: HeldJob<'_>) -> anyhow::Result<Completion> {
        run_call(&self.service, &self.call, Some(&self.plan), true, Some(&job)).await
    }

    async fn gave_up(&self, payload: Value, error: &str) {
        give_up(&self.service, payload, error, INTERNAL_FAILURE).await
    }

    async fn abandoned(&self, payload: Value, message: &str) {
        give_up(&self.service, payload, message, message).await
    }

    /// `message` is written for the tenant (the time limit): shown as it is.
    async fn stopped(&self, payload: Value, message: &str) {
        give_up(&self.service, payload, message, message).await
    }
}

/// Runs the call unless it has finished, then wakes its waiters. `plan`: the call's plan when
/// the caller holds it (else it is parsed from the call). `fresh`: nothing of it has run yet
/// and it is stored as `running` (no earlier runs to read, no status to set). The call's end
/// is recorded with its last runs, and marks `job` done there when given.
async fn run_call(
    service: &CallService,
    call: &CallRow,
    plan: Option<&Plan>,
    fresh: bool,
    job: Option<&HeldJob<'_>>,
) -> anyhow::Result<Completion> {
    let (completion, ended) = if is_final(&call.status) {
        let ended = Ended {
            call_id: call.id.clone(),
            status: call.status.clone(),
            finished_at: call.finished_at,
            recorded: None,
        };
        (Completion::ByWorker, ended)
    } else {
        Execution::new(service, call, plan)?.run(fresh, job).await?
    };
    let _ = service.finished.send(ended);
    Ok(completion)
}

/// What the caller of a call reads when its job failed on errors of canon's own (they are
/// logged, not shown).
const INTERNAL_FAILURE: &str =
    "the call could not be run: every attempt failed on an internal error (the server log says which)";

/// The call could not be run at all (its job exhausted its retries on infrastructure
/// errors, or its worker kept stopping while running it): it fails with `shown` as its
/// error, instead of staying `running` forever. Node failures never get here; they are
/// error events.
async fn give_up(service: &CallService, payload: Value, error: &str, shown: &str) {
    let Some(call_id) = payload.get("callID").and_then(Value::as_str) else { return };
    tracing::error!(call_id, error, "giving up on a workflow call");
    let finished_at = ids::now_millis();
    if let Err(err) = service.records.fail_call(call_id, shown, finished_at).await {
        tracing::error!(call_id, error = %err, "cannot mark the call as failed");
    }
    let ended = Ended {
        call_id: call_id.to_string(),
        status: "failed".into(),
        finished_at: Some(finished_at),
        recorded: None,
    };
    let _ = service.finished.send(ended);
}
