//! Curation: each mutation calls the service function its REST endpoint calls. Editing an
//! entity's description is not offered: the service (and REST's PATCH) has no such change.

use super::types::{Entity, MergeResult, MergeSuggestion, Reviewer, Synonym, ValidateResult};
use super::{dashboard_user, request, OrGql};
use crate::graph::entities::EntityChanges;
use async_graphql::{Context, Object, ID};

pub struct MutationRoot;

impl MutationRoot {
    async fn update(
        ctx: &Context<'_>,
        id: &str,
        bucket: Option<String>,
        changes: EntityChanges,
    ) -> async_graphql::Result<Entity> {
        let rc = request(ctx);
        let actor = rc.caller.actor();
        let entity = rc
            .state
            .graph
            .update_entity(&rc.caller.tenant, id, bucket.as_deref(), changes, &actor)
            .await
            .gql()?;
        Ok(Entity(entity.entity))
    }
}

#[Object]
impl MutationRoot {
    /// Approve an `extracted` or `proposed` entity (else code 409), as
    /// `PATCH /v3/entities/{id}` with `status: approved`.
    async fn validate(
        &self,
        ctx: &Context<'_>,
        id: ID,
        bucket: Option<String>,
    ) -> async_graphql::Result<Entity> {
        let changes = EntityChanges { status: Some("approved".into()), ..Default::default() };
        Self::update(ctx, &id, bucket, changes).await
    }

    /// Reject an `extracted` or `proposed` entity (else code 409).
    async fn reject(
        &self,
        ctx: &Context<'_>,
        id: ID,
        bucket: Option<String>,
    ) -> async_graphql::Result<Entity> {
        let changes = EntityChanges { status: Some("rejected".into()), ..Default::default() };
        Self::update(ctx, &id, bucket, changes).await
    }

    /// Approve or reject many entities (`POST /v3/entities/bulk-validate`); each row says what
    /// happened to it.
    async fn bulk_validate(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "entityIDs")] entity_ids: Vec<ID>,
        #[graphql(desc = "`approved` or `rejected`.")] status: String,
        bucket: Option<String>,
    ) -> async_graphql::Result<ValidateResult> {
        let rc = request(ctx);
        let ids: Vec<String> = entity_ids.into_iter().map(|id| id.0).collect();
        let result = rc
            .state
            .graph
            .bulk_validate(&rc.caller.tenant, &ids, &status, bucket.as_deref(), &rc.caller.actor())
            .await
            .gql()?;
        Ok(result.into())
    }

    /// Make a user a reviewer of an entity type (dashboard token, `admin` role; idempotent).
    async fn assign_reviewer(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "typeID")] type_id: ID,
        #[graphql(name = "userID")] user_id: ID,
    ) -> async_graphql::Result<Reviewer> {
        let identity = dashboard_user(ctx)?;
        Ok(request(ctx).state.reviewers.assign(identity, &type_id, &user_id).await.gql()?.into())
    }

    /// Remove a reviewer from an entity type (dashboard token, `admin` role).
    async fn remove_reviewer(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "typeID")] type_id: ID,
        #[graphql(name = "userID")] user_id: ID,
    ) -> async_graphql::Result<bool> {
        let identity = dashboard_user(ctx)?;
        request(ctx).state.reviewers.remove(identity, &type_id, &user_id).await.gql()?;
        Ok(true)
    }

    /// Assign an entity type (`ety_…`); null or the empty string clears the assignment.
    async fn assign_type(
        &self,
        ctx: &Context<'_>,
        id: ID,
        #[graphql(name = "typeID")] type_id: Option<ID>,
        bucket: Option<String>,
    ) -> async_graphql::Result<Entity> {
        let changes = EntityChanges {
            assigned_type_id: Some(type_id.map(|t| t.0).unwrap_or_default()),
            ..Default::default()
        };
        Self::update(ctx, &id, bucket, changes).await
    }

    /// Set the canonical name (it also becomes a surface form; 409 if another entity owns it).
    async fn edit_canonical(
        &self,
        ctx: &Context<'_>,
        id: ID,
        canonical: String,
        bucket: Option<String>,
    ) -> async_graphql::Result<Entity> {
        let changes = EntityChanges { canonical: Some(canonical), ..Default::default() };
        Self::update(ctx, &id, bucket, changes).await
    }

    /// Attach a synonym (`POST /v3/entities/{id}/synonyms`); source `customer_defined` by default.
    /// A form of the entity's canonical name is no synonym (code 409).
    async fn add_synonym(
        &self,
        ctx: &Context<'_>,
        id: ID,
        text: String,
        #[graphql(desc = "`customer_defined` (default), `sme_approved` or `extracted`.")] source: Option<
            String,
        >,
        locale: Option<String>,
        bucket: Option<String>,
    ) -> async_graphql::Result<Synonym> {
        let rc = request(ctx);
        let tenant = &rc.caller.tenant;
        let (entity_id, _) = rc.state.graph.resolve_entity(tenant, &id, bucket.as_deref()).await.gql()?;
        let source = source.as_deref().unwrap_or("customer_defined");
        let synonym = rc
            .state
            .graph
            .add_synonym(tenant, &entity_id, &text, source, locale.as_deref(), &rc.caller.actor())
            .await
            .gql()?;
        Ok(synonym.into())
    }

    /// Remove a `customer_defined` or `sme_approved` synonym (`extracted` ones: code 409).
    async fn remove_synonym(
        &self,
        ctx: &Context<'_>,
        id: ID,
        #[graphql(name = "synonymID")] synonym_id: ID,
    ) -> async_graphql::Result<bool> {
        let rc = request(ctx);
        rc.state.graph.remove_synonym(&rc.caller.tenant, &id, &synonym_id, &rc.caller.actor()).await.gql()?;
        Ok(true)
    }

    /// Merge entities into `id` (`POST /v3/entities/{id}/merge`); every merge can be undone.
    async fn merge(
        &self,
        ctx: &Context<'_>,
        id: ID,
        #[graphql(name = "entityIDs")] entity_ids: Vec<ID>,
    ) -> async_graphql::Result<MergeResult> {
        let rc = request(ctx);
        let merged: Vec<String> = entity_ids.into_iter().map(|id| id.0).collect();
        let result =
            rc.state.suggestions.merge(&rc.caller.tenant, &id, &merged, &rc.caller.actor()).await.gql()?;
        Ok(result.into())
    }

    /// Undo a merge (`POST /v3/merges/{mergeID}/undo`): returns the restored entity.
    async fn unmerge(
        &self,
        ctx: &Context<'_>,
        #[graphql(name = "mergeID")] merge_id: ID,
    ) -> async_graphql::Result<Entity> {
        let rc = request(ctx);
        Ok(Entity(
            rc.state.suggestions.unmerge(&rc.caller.tenant, &merge_id, &rc.caller.actor()).await.gql()?,
        ))
    }

    /// Accept a merge suggestion: its second entity is merged into the first. `blind`: decided
    /// with the scores hidden (recorded with the decision).
    async fn accept_suggestion(
        &self,
        ctx: &Context<'_>,
        id: ID,
        blind: Option<bool>,
    ) -> async_graphql::Result<MergeResult> {
        let rc = request(ctx);
        let blind = blind.unwrap_or(false);
        Ok(rc
            .state
            .suggestions
            .accept(&rc.caller.tenant, &id, None, blind, &rc.caller.actor())
            .await
            .gql()?
            .into())
    }

    /// Dismiss a merge suggestion: the pair is not suggested again. `blind`: decided with the
    /// scores hidden (recorded with the decision).
    async fn dismiss_suggestion(
        &self,
        ctx: &Context<'_>,
        id: ID,
        blind: Option<bool>,
    ) -> async_graphql::Result<MergeSuggestion> {
        let rc = request(ctx);
        let blind = blind.unwrap_or(false);
        Ok(rc
            .state
            .suggestions
            .dismiss(&rc.caller.tenant, &id, blind, &rc.caller.actor())
            .await
            .gql()?
            .into())
    }
}
