//! What a call of a workflow runs — the workflow's current version and the function version
//! each node pins — remembered per workflow name, because every call reads it and the two
//! reads were ~290 µs of a call's ~2 ms on SQLite.
//!
//! A plan changes when its workflow does, or when a function it runs is renamed: function
//! versions are otherwise immutable, and a function the current version of a workflow runs
//! cannot be deleted. So every workflow or function write of this process
//! ([`Records::insert_workflow`], [`Records::add_workflow_version`],
//! [`Records::delete_workflow`], [`Records::add_function_version`],
//! [`Records::delete_function`]) forgets every remembered plan once it is done, and a call
//! this process takes after the write runs what it wrote. Another process sharing the
//! database (PostgreSQL) runs the version it read for up to [`PLAN_TRUST`] after the change.

use super::Owner;
use super::{RecordError, Records};
use crate::memo::Memo;
use crate::versions::{FunctionVersion, WorkflowVersion};
use std::sync::Arc;
use std::time::Duration;

/// How long a remembered plan is used before it is read again.
pub const PLAN_TRUST: Duration = Duration::from_secs(1);
/// Plans remembered at most (the memory starts over when full).
const PLANS_REMEMBERED: usize = 4096;

/// A workflow's current version and the function versions its nodes pin (a pin whose
/// function is gone is missing).
#[derive(Debug)]
pub struct WorkflowPlan {
    pub workflow: WorkflowVersion,
    pub functions: Vec<FunctionVersion>,
}

/// (account, environment, workflow name) → its plan.
pub(crate) type Plans = Memo<(String, String, String), Arc<WorkflowPlan>>;

pub(crate) fn plans() -> Arc<Plans> {
    Arc::new(Memo::new(PLAN_TRUST, PLANS_REMEMBERED))
}

impl Records {
    /// The plan of the owner's workflow called `name`, `None` when there is no such workflow.
    pub async fn workflow_plan(
        &self,
        owner: Owner<'_>,
        name: &str,
    ) -> Result<Option<Arc<WorkflowPlan>>, RecordError> {
        let key = (owner.account_id.to_string(), owner.environment.to_string(), name.to_string());
        if let Some(plan) = self.plans.get(&key) {
            return Ok(Some(plan));
        }
        let seen = self.plans.revision();
        let Some(workflow) = self.current_workflow(owner, name).await? else {
            return Ok(None);
        };
        let pins: Vec<(&str, i64)> =
            workflow.nodes.iter().map(|n| (n.function_id.as_str(), n.function_version_num)).collect();
        let functions = self.pinned_function_versions(owner, &pins).await?;
        let plan = Arc::new(WorkflowPlan { workflow, functions });
        self.plans.put_if_unchanged(seen, key, plan.clone());
        Ok(Some(plan))
    }

    /// After a workflow write: plans read before it are not used again.
    pub(crate) fn forget_plans(&self) {
        self.plans.forget_all();
    }
}
