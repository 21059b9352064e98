//! Connectors: outside systems that start calls of a workflow.
//!
//! - `box`: watches a Box folder through Box's REST API (base URL `CANON_BOX_API_URL`):
//!   every poll ([`BoxPoller`]) takes a token by the client-credentials grant
//!   (`POST /oauth2/token`, enterprise subject), lists the folder
//!   (`GET /2.0/folders/{id}/items`), and submits each file not seen before as a call of
//!   the connector's workflow (`GET /2.0/files/{id}/content`), once: the file is claimed in
//!   the record store before the call is made, and released only if the call could not be.
//!   A poll of one connector is bounded ([`PollBounds`]: 10,000 items read, 20 files
//!   submitted); the next poll goes on from where it stopped, kept with the connector (a
//!   restart or another instance goes on from there too). An environment holds at most
//!   [`MAX_CONNECTORS`].
//! - `paragon`: needs Paragon's hosted service, which canon does not run: refused with 422.
//!
//! The Box client secret is sealed at rest and never returned (responses show it masked).

pub mod boxapi;

use crate::calls::{CallRequest, CallService, SubmittedFile};
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::ids;
use crate::secrets::SecretsService;
use crate::store::records::connectors::ConnectorRow;
use crate::store::records::keys::Environment;
use crate::store::records::Records;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use utoipa::ToSchema;

/// What `POST /v3/connectors` takes.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ConnectorInput {
    pub name: String,
    /// `box` or `paragon`.
    #[serde(rename = "type")]
    pub connector_type: String,
    #[serde(rename = "workflowID")]
    pub workflow_id: Option<String>,
    #[serde(rename = "workflowName")]
    pub workflow_name: Option<String>,
    #[serde(rename = "boxClientID")]
    pub box_client_id: Option<String>,
    #[serde(rename = "boxClientSecret")]
    pub box_client_secret: Option<String>,
    #[serde(rename = "boxEnterpriseID")]
    pub box_enterprise_id: Option<String>,
    #[serde(rename = "boxFolderID")]
    pub box_folder_id: Option<String>,
    #[serde(rename = "paragonIntegration")]
    pub paragon_integration: Option<String>,
    #[serde(rename = "paragonConfiguration")]
    #[schema(value_type = Option<Object>)]
    pub paragon_configuration: Option<Value>,
}

/// A connector as the API shows it (every field present, as bem-sdk's model requires).
#[derive(Debug, Serialize, ToSchema)]
pub struct Connector {
    #[serde(rename = "connectorID")]
    pub connector_id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub connector_type: String,
    #[serde(rename = "workflowID")]
    pub workflow_id: String,
    #[serde(rename = "workflowName")]
    pub workflow_name: String,
    #[serde(rename = "boxClientID")]
    pub box_client_id: String,
    /// Masked: the secret is never returned.
    #[serde(rename = "boxClientSecret")]
    pub box_client_secret: String,
    #[serde(rename = "boxEnterpriseID")]
    pub box_enterprise_id: String,
    #[serde(rename = "boxFolderID")]
    pub box_folder_id: String,
    #[serde(rename = "paragonIntegration")]
    pub paragon_integration: String,
    #[serde(rename = "paragonConfiguration")]
    #[schema(value_type = Object)]
    pub paragon_configuration: Value,
    #[serde(rename = "paragonSyncID")]
    pub paragon_sync_id: String,
}

fn shown(row: &ConnectorRow) -> Connector {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    Connector {
        connector_id: row.id.clone(),
        name: row.name.clone(),
        connector_type: row.connector_type.clone(),
        workflow_id: row.workflow_id.clone(),
        workflow_name: row.workflow_name.clone(),
        box_client_id: text(&row.box_client_id),
        box_client_secret: if row.box_client_secret.is_some() { "********".into() } else { String::new() },
        box_enterprise_id: text(&row.box_enterprise_id),
        box_folder_id: text(&row.box_folder_id),
        paragon_integration: String::new(),
        paragon_configuration: Value::Object(Default::default()),
        paragon_sync_id: String::new(),
    }
}

/// What the sealed Box secret is bound to.
fn secret_name(connector_id: &str) -> String {
    format!("connector:{connector_id}:boxClientSecret")
}

/// The connector types `type` takes (paragon is refused with 422: it runs on Paragon's service).
pub const TYPES: [&str; 2] = ["box", "paragon"];
/// Longest connector name.
pub const NAME_MAX: usize = 200;
/// Connectors one environment holds: every poll of every instance walks them all.
pub const MAX_CONNECTORS: i64 = 100;

#[derive(Clone)]
pub struct ConnectorService {
    pub records: Records,
    pub secrets: SecretsService,
}

impl ConnectorService {
    pub async fn create(&self, tenant: &Tenant, input: ConnectorInput) -> ServiceResult<Connector> {
        crate::text::check_len("name", &input.name, NAME_MAX, true)?;
        match input.connector_type.as_str() {
            "box" => {}
            "paragon" => {
                return Err(ServiceError::Unprocessable {
                    message:
                        "type: paragon connectors run on Paragon's hosted service, which canon does not \
                              run; use a box connector or call the workflow directly"
                            .into(),
                    details: Some(serde_json::json!({ "field": "type", "error": "unsupported" })),
                })
            }
            _ => return Err(ServiceError::invalid_field("type", format!("must be {}", TYPES.join(" or ")))),
        }
        let required = |field: &str, value: &Option<String>| -> ServiceResult<String> {
            let value = value.as_deref().map(str::trim).unwrap_or_default();
            if value.is_empty() {
                return Err(ServiceError::invalid_field(field, "required for a box connector"));
            }
            crate::text::check_len(field, value, 500, true)?;
            Ok(value.to_string())
        };
        let folder = required("boxFolderID", &input.box_folder_id)?;
        let client_id = required("boxClientID", &input.box_client_id)?;
        let client_secret = required("boxClientSecret", &input.box_client_secret)?;
        let enterprise = input.box_enterprise_id.as_deref().map(str::trim).filter(|e| !e.is_empty());
        crate::text::check_opt("boxEnterpriseID", enterprise)?;
        let (workflow_id, workflow_name) = self.workflow(tenant, &input).await?;
        let id = ids::new_id("con");
        let row = ConnectorRow {
            id: id.clone(),
            account_id: tenant.account_id.clone(),
            environment: tenant.environment.as_str().into(),
            name: input.name.trim().to_string(),
            connector_type: "box".into(),
            workflow_id,
            workflow_name,
            box_client_id: Some(client_id),
            box_client_secret: Some(self.secrets.seal_for(tenant, &secret_name(&id), &client_secret)),
            box_enterprise_id: enterprise.map(str::to_string),
            box_folder_id: Some(folder),
            created_at: ids::now_millis(),
            poll_offset: 0,
        };
        if !self.records.insert_connector(&row, MAX_CONNECTORS).await? {
            return Err(ServiceError::count_reached(
                format!(
                    "an environment holds at most {MAX_CONNECTORS} connectors; delete one \
                     (DELETE /v3/connectors/{{connectorID}}) before adding another"
                ),
                "connectorsPerEnvironment",
                MAX_CONNECTORS,
            ));
        }
        Ok(shown(&row))
    }

    /// The workflow named by ID and/or name (both must agree).
    async fn workflow(&self, tenant: &Tenant, input: &ConnectorInput) -> ServiceResult<(String, String)> {
        crate::text::check_opt("workflowID", input.workflow_id.as_deref())?;
        crate::text::check_opt("workflowName", input.workflow_name.as_deref())?;
        let by_id = match &input.workflow_id {
            Some(id) => Some(
                self.records
                    .workflow_name_by_id(tenant.owner(), id)
                    .await?
                    .ok_or_else(|| ServiceError::not_found("workflow", id))?,
            ),
            None => None,
        };
        match (by_id, &input.workflow_name) {
            (Some((id, name)), Some(given)) if &name != given => Err(ServiceError::invalid_field(
                "workflowName",
                format!("workflow {id} is named {name:?}, not {given:?}"),
            )),
            (Some(found), _) => Ok(found),
            (None, Some(name)) => {
                let record = self
                    .records
                    .find_workflow(tenant.owner(), name)
                    .await?
                    .ok_or_else(|| ServiceError::not_found("workflow", name))?;
                Ok((record.head.id, record.head.name))
            }
            (None, None) => Err(ServiceError::invalid_field("workflowID", "give workflowID or workflowName")),
        }
    }

    pub async fn list(
        &self,
        tenant: &Tenant,
        workflow_id: Option<&str>,
        workflow_name: Option<&str>,
    ) -> ServiceResult<Vec<Connector>> {
        crate::text::check_opt("workflowID", workflow_id)?;
        crate::text::check_opt("workflowName", workflow_name)?;
        let rows = self.records.list_connectors(tenant.owner(), workflow_id, workflow_name).await?;
        Ok(rows.iter().map(shown).collect())
    }

    pub async fn delete(&self, tenant: &Tenant, id: &str) -> ServiceResult<()> {
        crate::text::check("connectorID", id)?;
        if !self.records.delete_connector(tenant.owner(), id).await? {
            return Err(ServiceError::not_found("connector", id));
        }
        Ok(())
    }

    /// Tears down the connectors of a deleted workflow; each failure becomes a
    /// `connectorErrors` entry of the delete response.
    pub async fn teardown_workflow(&self, tenant: &Tenant, workflow_id: &str) -> Vec<Value> {
        let rows = match self.records.list_connectors(tenant.owner(), Some(workflow_id), None).await {
            Ok(rows) => rows,
            Err(err) => {
                tracing::error!(error = %err, "cannot list a deleted workflow's connectors");
                return vec![serde_json::json!({ "code": "connector_lookup_failed", "operation": "delete",
                    "message": "the workflow's connectors could not be listed; delete them with DELETE /v3/connectors/{id}" })];
            }
        };
        let mut errors = Vec::new();
        for row in rows {
            if let Err(err) = self.records.delete_connector(tenant.owner(), &row.id).await {
                tracing::error!(error = %err, connector = %row.id, "cannot tear down a connector");
                errors.push(serde_json::json!({ "code": "connector_teardown_failed", "operation": "delete",
                    "message": "the connector could not be removed; delete it with DELETE /v3/connectors/{id}",
                    "connectorID": row.id, "name": row.name }));
            }
        }
        errors
    }
}

/// Folder items one poll of a connector reads (a folder may hold millions): the next poll
/// goes on after them, and after the folder's end starts again from its first.
pub const ITEMS_PER_POLL: usize = 10_000;
/// Files one poll of a connector downloads and submits (up to 50 MB each): the others stay
/// unclaimed, for the next poll.
pub const FILES_PER_POLL: usize = 20;

/// How much one pass does for one account environment's connectors together (see
/// [`ITEMS_PER_POLL`], [`FILES_PER_POLL`]): the bounds were per connector, so an environment's
/// 100 connectors took 100 times a pass's share (2,000 files of up to 50 MB) while every other
/// tenant's connectors waited for the same pass. An environment's connectors take turns
/// coming first from one pass to the next.
#[derive(Clone, Copy, Debug)]
pub struct PollBounds {
    pub items: usize,
    pub files: usize,
}

impl Default for PollBounds {
    fn default() -> Self {
        PollBounds { items: ITEMS_PER_POLL, files: FILES_PER_POLL }
    }
}

/// Polls every Box connector's folder and submits new files as calls, each account
/// environment's connectors within [`PollBounds`] a pass, so that no tenant's folders hold the
/// others' back.
pub struct BoxPoller {
    service: ConnectorService,
    calls: CallService,
    api: boxapi::BoxApi,
    interval: Duration,
    bounds: PollBounds,
    /// Passes made, which turn each environment's connectors round.
    passes: std::sync::atomic::AtomicUsize,
}

impl BoxPoller {
    pub fn new(
        service: ConnectorService,
        calls: CallService,
        api: boxapi::BoxApi,
        interval: Duration,
        bounds: PollBounds,
    ) -> Self {
        BoxPoller { service, calls, api, interval, bounds, passes: Default::default() }
    }

    pub fn spawn(self, mut stop: watch::Receiver<bool>) -> JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                if let Err(err) = self.poll_once().await {
                    tracing::warn!(error = %err, "box connectors poll failed");
                }
                tokio::select! {
                    _ = tokio::time::sleep(self.interval) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
        })
    }

    /// One pass over every Box connector; returns how many calls it submitted.
    pub async fn poll_once(&self) -> anyhow::Result<usize> {
        let mut submitted = 0;
        let rows = self.service.records.connectors_of_type("box").await?;
        let mut by_environment: std::collections::BTreeMap<(&str, &str), Vec<&ConnectorRow>> =
            Default::default();
        for row in &rows {
            by_environment.entry((row.account_id.as_str(), row.environment.as_str())).or_default().push(row);
        }
        let pass = self.passes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for connectors in by_environment.values() {
            // This pass starts at its turn's connector and wraps round.
            let (earlier, from_turn) = connectors.split_at(pass % connectors.len());
            let mut left = self.bounds;
            for row in from_turn.iter().chain(earlier) {
                if left.items == 0 || left.files == 0 {
                    break;
                }
                match self.poll_connector(row, &mut left).await {
                    Ok(n) => submitted += n,
                    Err(err) => tracing::warn!(error = %err, connector = %row.id, "box folder poll failed"),
                }
            }
        }
        Ok(submitted)
    }

    /// Reads up to `left.items` of the folder from where the last poll stopped (the
    /// connector's `poll_offset`, kept in the record store: a restart or another instance
    /// goes on from there) and submits up to `left.files` files not claimed before, taking
    /// what it used from `left`.
    async fn poll_connector(&self, row: &ConnectorRow, left: &mut PollBounds) -> anyhow::Result<usize> {
        let environment = Environment::parse(&row.environment).unwrap_or(Environment::Sandbox);
        let tenant = Tenant { account_id: row.account_id.clone(), environment };
        let sealed = row.box_client_secret.as_deref().unwrap_or_default();
        let secret = self.service.secrets.open_for(&tenant, &secret_name(&row.id), sealed)?;
        let token = self
            .api
            .token(
                row.box_client_id.as_deref().unwrap_or_default(),
                &secret,
                row.box_enterprise_id.as_deref(),
            )
            .await?;
        let folder = row.box_folder_id.as_deref().unwrap_or_default();
        let records = &self.service.records;
        let mut offset = usize::try_from(row.poll_offset).unwrap_or(0);
        let bounds = *left;
        let (mut read, mut attempted, mut submitted) = (0, 0, 0);
        let next = loop {
            let want = (bounds.items - read).min(boxapi::PAGE);
            let page = self.api.folder_page(&token, folder, offset, want).await?;
            read += page.items;
            left.items = bounds.items.saturating_sub(read);
            let ids: Vec<&str> = page.files.iter().map(|file| file.id.as_str()).collect();
            let claimed = records.claimed_connector_files(&row.id, &ids).await?;
            for file in page.files.iter().filter(|file| !claimed.contains(&file.id)) {
                if attempted == bounds.files {
                    // This page again next time: its files not submitted are still unclaimed.
                    self.keep_place(row, offset).await?;
                    return Ok(submitted);
                }
                if !records.claim_connector_file(&row.id, &file.id, ids::now_millis()).await? {
                    continue;
                }
                attempted += 1;
                left.files = bounds.files - attempted;
                match self.submit(&tenant, row, &token, file).await {
                    Ok(call_id) => {
                        records.set_connector_file_call(&row.id, &file.id, &call_id).await?;
                        submitted += 1;
                    }
                    Err(err) => {
                        records.release_connector_file(&row.id, &file.id).await?;
                        tracing::warn!(error = %err, connector = %row.id, file = %file.id, "box file not submitted");
                    }
                }
            }
            offset += page.items;
            if page.items == 0 || offset >= page.total {
                break 0;
            }
            if read >= bounds.items {
                break offset;
            }
        };
        self.keep_place(row, next).await?;
        Ok(submitted)
    }

    /// Records where the connector's next poll reads from, when that moved.
    async fn keep_place(&self, row: &ConnectorRow, offset: usize) -> anyhow::Result<()> {
        let offset = i64::try_from(offset)?;
        if offset != row.poll_offset {
            self.service.records.set_connector_poll_offset(&row.id, offset).await?;
        }
        Ok(())
    }

    async fn submit(
        &self,
        tenant: &Tenant,
        row: &ConnectorRow,
        token: &str,
        file: &boxapi::BoxFile,
    ) -> anyhow::Result<String> {
        let bytes = self.api.download(token, &file.id).await?;
        let extension = file.name.rsplit_once('.').map(|(_, e)| e.to_string()).unwrap_or_default();
        let input_type = crate::engines::supported_input_type(&extension).unwrap_or("text").to_string();
        let request = CallRequest {
            files: vec![SubmittedFile {
                input_type,
                bytes,
                item_reference_id: None,
                file_name: Some(file.name.clone()),
            }],
            call_reference_id: Some(format!("box:{}", file.id)),
            ..CallRequest::default()
        };
        let submitted = self
            .calls
            .submit(tenant, &row.workflow_name, request)
            .await
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        let call_id = submitted.call.get("callID").and_then(Value::as_str).unwrap_or_default().to_string();
        Ok(call_id)
    }
}
