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
use crate::json_size::json_bytes;
use crate::memo::Memo;
use crate::versions::{FunctionVersion, WorkflowVersion};
use std::sync::Arc;
use std::time::Duration;

/// How long a remembered plan is used before it is read again.
pub const PLAN_TRUST: Duration = Duration::from_secs(1);
/// Plans remembered at most (the memory starts over when full).
const PLANS_REMEMBERED: usize = 4096;
/// Largest plan remembered (its function versions' bodies, serialized): a plan may hold
/// 4 MiB, and 4,096 of those would be 16 GiB; a larger one is read for each call, so the
/// memory holds at most 256 MiB.
const REMEMBERED_PLAN_BYTES: usize = 64 * 1024;

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
        if plan_bytes(&plan) <= REMEMBERED_PLAN_BYTES {
            self.plans.put_if_unchanged(seen, key, plan.clone());
        }
        Ok(Some(plan))
    }

    /// After a workflow write: plans read before it are not used again.
    pub(crate) fn forget_plans(&self) {
        self.plans.forget_all();
    }
}

/// What a plan's function versions' bodies take serialized.
fn plan_bytes(plan: &WorkflowPlan) -> usize {
    plan.functions.iter().map(|f| json_bytes(&f.body)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::records::functions::{FunctionRow, StoredFunctionVersion};
    use crate::store::records::workflows::{StoredWorkflowVersion, WorkflowRow};
    use serde_json::json;

    /// A one-node workflow `name` running a function whose body holds `body_bytes` of text.
    async fn workflow(records: &Records, owner: Owner<'_>, name: &str, body_bytes: usize) {
        let function = FunctionRow {
            id: format!("fn_{name}"),
            name: format!("f-{name}"),
            current_version: 1,
            created_at: 1,
            updated_at: 1,
        };
        let version = StoredFunctionVersion {
            version_num: 1,
            function_type: "transform".into(),
            body: json!({ "prompt": "x".repeat(body_bytes) }),
            audit: json!({}),
            created_at: 1,
        };
        assert!(records.insert_function(owner, &function, &version).await.unwrap());
        let head = WorkflowRow {
            id: format!("wf_{name}"),
            name: name.into(),
            current_version: 1,
            display_name: None,
            created_at: 1,
            updated_at: 1,
        };
        let node =
            json!({"name": "only", "function": {"id": function.id, "name": function.name, "versionNum": 1}});
        let body = json!({"mainNodeName": "only", "nodes": [node], "edges": []});
        let pins = [(function.id.clone(), function.name.clone(), 1)];
        let stored = StoredWorkflowVersion { version_num: 1, body, created_at: 1 };
        assert!(records.insert_workflow(owner, &head, &stored, &pins).await.unwrap());
    }

    #[tokio::test]
    async fn a_small_plan_is_remembered_and_a_large_one_read_again_for_each_call() {
        let (_dir, records) = Records::on_sqlite_for_tests().await;
        let owner = Owner { account_id: "acc_plans", environment: "sandbox" };
        workflow(&records, owner, "small", 1_000).await;
        workflow(&records, owner, "large", REMEMBERED_PLAN_BYTES + 1).await;
        let first = records.workflow_plan(owner, "small").await.unwrap().unwrap();
        let again = records.workflow_plan(owner, "small").await.unwrap().unwrap();
        assert!(Arc::ptr_eq(&first, &again), "remembered");
        let first = records.workflow_plan(owner, "large").await.unwrap().unwrap();
        let again = records.workflow_plan(owner, "large").await.unwrap().unwrap();
        assert!(!Arc::ptr_eq(&first, &again), "read again");
        assert_eq!(first.functions.len(), 1);
        records.close().await;
    }
}
