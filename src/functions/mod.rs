//! Functions and workflows: immutable numbered versions, validation, and the lists.
//!
//! Decisions (what the spec leaves open):
//! - **Versions.** Every create writes version 1; every update (PATCH) writes the next
//!   version, even when nothing changed, and never touches an older one. A function's name is
//!   its identity's: after a rename every version reads with the current `functionName`.
//! - **Pinning.** A workflow node that names no `versionNum` is pinned to the function's
//!   current version at the time the workflow version is saved, so a workflow version always
//!   runs exactly the function versions it was saved with; updating a function never changes
//!   an existing workflow version (save a new workflow version to pick it up). A PATCH that
//!   leaves the topology out copies the previous version's nodes with their pins.
//! - **Deleting a function** is refused (409, naming the workflows) while the current
//!   version of a workflow runs it. Otherwise the function and all its versions are deleted;
//!   [`Records::function_version`](crate::store::records::Records::function_version) then
//!   returns `None` for them, and a call still holding an older workflow version that named
//!   it fails that node.
//! - **Deleting a workflow** deletes it with its versions and connectors and answers 200
//!   `{workflow: {id, name, versionNum}, connectorErrors: []}`: connectors are stored as
//!   given but canon talks to no third-party integration, so teardown cannot fail.
//! - **Inbound e-mail addresses** are derived from the resource ID, so they are stable
//!   across renames: `<functionID or workflowID, lower-case>@inbound.canon.local`.
//! - **Audit records** name the caller: `apiKeyName` for an API key; `userID` and
//!   `userEmail` for a dashboard token. `emailAddress` (actions arriving by e-mail) never
//!   applies. Each version keeps the audit block it was written with.
//! - **`usedInWorkflows`** on a function (get, list) names every live workflow with a
//!   version running any version of it; on a function version (the version endpoints) only
//!   the workflow versions running that very version.
//! - **Lists** read the environment's functions or workflows at their current version and
//!   filter, sort and page them in the service (every filter ANDed; `totalCount` counts all
//!   matches, ignoring the cursor). Version filters (`<id>.<n>`, `<name>.<n>`) on the
//!   workflow list match the workflow's current version; on the function list the
//!   `workflow…VersionNums` filters match that workflow version exactly. This reads every
//!   function or workflow of the environment per request: fine for thousands, not millions.
//! - **Version histories** list oldest first by default (`sortOrder=desc` for newest
//!   first), paged by `versionNum` cursors, like every list of the spec (`asc` default).

pub mod copy;
pub mod listing;
pub mod reach;
pub mod schema;
pub mod schema_patterns;
pub mod service;
pub mod type_settings;
pub mod validate;
pub mod workflows;

use serde_json::{json, Map, Value};

pub use service::FunctionsService;

/// Domain of the inbound addresses of functions and workflows.
pub const INBOUND_DOMAIN: &str = "inbound.canon.local";

/// Who makes a change, as audit records show it.
#[derive(Clone, Debug, Default)]
pub struct Author {
    pub user_id: Option<String>,
    pub user_email: Option<String>,
    pub api_key_name: Option<String>,
}

impl Author {
    /// An audit record of an action by this author at `now` (epoch milliseconds).
    pub fn action(&self, now: i64) -> Value {
        let mut record = Map::new();
        record.insert("userActionID".into(), json!(crate::ids::new_id("ua")));
        for (key, value) in
            [("userID", &self.user_id), ("userEmail", &self.user_email), ("apiKeyName", &self.api_key_name)]
        {
            if let Some(value) = value {
                record.insert(key.into(), json!(value));
            }
        }
        record.insert("createdAt".into(), json!(crate::ids::millis_rfc3339(now)));
        Value::Object(record)
    }
}

/// The inbound e-mail address of a function or workflow.
pub fn inbound_address(id: &str) -> String {
    format!("{}@{INBOUND_DOMAIN}", id.to_lowercase())
}
