//! Reviewers of entity types: dashboard users assigned to curate a type's entities.
//! Roles: `admin` assigns and removes; `operator` (or admin) lists a type's reviewers; a user
//! reads their own assignments, another's needs `admin`. Assignments live in the graph,
//! users in the record store.

use crate::error::{ServiceError, ServiceResult};
use crate::graph::audit::Actor;
use crate::graph::columns::str_col;
use crate::graph::{GraphService, Tenant};
use crate::ids;
use crate::params;
use crate::store::records::Records;
use serde::Serialize;
use std::sync::Arc;
use utoipa::ToSchema;

/// A dashboard user acting (from a verified token).
#[derive(Clone, Debug)]
pub struct DashboardIdentity {
    pub user_id: String,
    pub role: String,
    pub tenant: Tenant,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reviewer {
    #[serde(rename = "typeID")]
    pub type_id: String,
    #[serde(rename = "userID")]
    pub user_id: String,
    pub email: String,
    pub role: String,
    pub assigned_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    #[serde(rename = "typeID")]
    pub type_id: String,
    pub name: String,
    pub assigned_at: String,
}

#[derive(Clone)]
pub struct ReviewerService {
    pub graph: Arc<GraphService>,
    pub records: Records,
}

fn require(identity: &DashboardIdentity, roles: &[&str], what: &str) -> ServiceResult<()> {
    if roles.contains(&identity.role.as_str()) {
        Ok(())
    } else {
        Err(ServiceError::Forbidden(format!("{what} needs the {} role", roles.join(" or "))))
    }
}

impl ReviewerService {
    /// A user of the caller's tenant, or 404.
    async fn tenant_user(
        &self,
        tenant: &Tenant,
        user_id: &str,
    ) -> ServiceResult<crate::store::records::users::User> {
        self.records
            .find_user(user_id)
            .await?
            .filter(|u| u.account_id == tenant.account_id && u.environment == tenant.environment)
            .ok_or_else(|| ServiceError::not_found("user", user_id))
    }

    pub async fn assign(
        &self,
        identity: &DashboardIdentity,
        type_id: &str,
        user_id: &str,
    ) -> ServiceResult<Reviewer> {
        require(identity, &["admin"], "assigning reviewers")?;
        let tenant = &identity.tenant;
        let user = self.tenant_user(tenant, user_id).await?;
        let actor = Actor { user_id: Some(identity.user_id.clone()), key_id: None };
        let rows = self
            .graph
            .run_query(
                tenant,
                crate::graph::queries::REVIEWER_ASSIGN,
                params! { "typeID" => type_id, "userID" => user.id, "actor" => actor.label(), "now" => ids::now_rfc3339() },
            )
            .await?;
        let row = rows.first().ok_or_else(|| ServiceError::not_found("entity type", type_id))?;
        Ok(Reviewer {
            type_id: str_col(row, "typeID"),
            user_id: user.id,
            email: user.email,
            role: user.role,
            assigned_at: str_col(row, "assignedAt"),
        })
    }

    pub async fn list(&self, identity: &DashboardIdentity, type_id: &str) -> ServiceResult<Vec<Reviewer>> {
        require(identity, &["operator", "admin"], "listing reviewers")?;
        let tenant = &identity.tenant;
        self.graph.get_entity_type(tenant, type_id).await?;
        let rows = self
            .graph
            .run_query(tenant, crate::graph::queries::REVIEWER_LIST, params! { "typeID" => type_id })
            .await?;
        let mut reviewers = Vec::new();
        for row in rows {
            if let Ok(user) = self.tenant_user(tenant, &str_col(&row, "userID")).await {
                reviewers.push(Reviewer {
                    type_id: type_id.to_string(),
                    user_id: user.id,
                    email: user.email,
                    role: user.role,
                    assigned_at: str_col(&row, "assignedAt"),
                });
            }
        }
        Ok(reviewers)
    }

    pub async fn remove(
        &self,
        identity: &DashboardIdentity,
        type_id: &str,
        user_id: &str,
    ) -> ServiceResult<()> {
        require(identity, &["admin"], "removing reviewers")?;
        let rows = self
            .graph
            .run_query(
                &identity.tenant,
                crate::graph::queries::REVIEWER_REMOVE,
                params! { "typeID" => type_id, "userID" => user_id },
            )
            .await?;
        if rows.is_empty() {
            return Err(ServiceError::not_found("reviewer assignment", format!("{type_id}/{user_id}")));
        }
        Ok(())
    }

    pub async fn assignments(
        &self,
        identity: &DashboardIdentity,
        user_id: &str,
    ) -> ServiceResult<Vec<Assignment>> {
        if identity.user_id != user_id {
            require(identity, &["admin"], "reading another user's assignments")?;
        }
        self.tenant_user(&identity.tenant, user_id).await?;
        self.assigned_types(&identity.tenant, user_id).await
    }

    async fn assigned_types(&self, tenant: &Tenant, user_id: &str) -> ServiceResult<Vec<Assignment>> {
        let rows = self
            .graph
            .run_query(tenant, crate::graph::queries::REVIEWER_ASSIGNMENTS, params! { "userID" => user_id })
            .await?;
        Ok(rows
            .iter()
            .map(|row| Assignment {
                type_id: str_col(row, "typeID"),
                name: str_col(row, "name"),
                assigned_at: str_col(row, "assignedAt"),
            })
            .collect())
    }

    /// The types `assigned_to` (`me` or `usr_…`) reviews, for the review queue's filter.
    pub async fn reviewed_types(
        &self,
        tenant: &Tenant,
        me: Option<&str>,
        assigned_to: &str,
    ) -> ServiceResult<Vec<String>> {
        let user_id = match assigned_to {
            "me" => me.ok_or_else(|| {
                ServiceError::invalid_field(
                    "assignedTo",
                    "`me` needs a dashboard token; with an API key name the user (usr_…)",
                )
            })?,
            other if ids::has_prefix(other, "usr") => other,
            _ => return Err(ServiceError::invalid_field("assignedTo", "must be `me` or a user ID (usr_…)")),
        };
        Ok(self.assigned_types(tenant, user_id).await?.into_iter().map(|a| a.type_id).collect())
    }

    /// The review queue's type filter: the `types` asked for (empty: any), narrowed to those
    /// `assigned_to` reviews when given. None is any type.
    pub async fn queue_types(
        &self,
        tenant: &Tenant,
        me: Option<&str>,
        types: Vec<String>,
        assigned_to: Option<&str>,
    ) -> ServiceResult<Option<Vec<String>>> {
        let asked = (!types.is_empty()).then_some(types);
        let Some(assigned) = assigned_to else { return Ok(asked) };
        let reviewed = self.reviewed_types(tenant, me, assigned).await?;
        Ok(Some(match asked {
            Some(ids) => ids.into_iter().filter(|id| reviewed.contains(id)).collect(),
            None => reviewed,
        }))
    }
}
