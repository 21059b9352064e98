//! REST transport for subscriptions, the webhook signing secret and the delivery log.

use super::extract::{ApiJson, ApiQuery};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::params::{array_param, int_param};
use crate::access::state::AppState;
use crate::delivery::subscriptions::{Subscription, SubscriptionInput};
use crate::delivery::Delivery;
use crate::pagination::{Limits, PageRequest};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

const LIMITS: Limits = Limits { default: 50, max: 100 };

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ListSubscriptions {
    /// 1..100 (default 50).
    #[param(value_type = Option<i32>)]
    pub limit: Option<String>,
    /// A subscriptionID: the page after it.
    pub starting_after: Option<String>,
    /// A subscriptionID: the page before it.
    pub ending_before: Option<String>,
    /// Only subscriptions of these functions (comma-joined or repeated; at least one).
    #[serde(default)]
    #[param(value_type = Option<Vec<String>>)]
    pub function_names: Vec<String>,
}

/// Create a subscription (also served at `POST /v1-alpha/subscriptions`).
#[utoipa::path(post, path = "/v3/subscriptions", tag = "subscriptions", request_body = SubscriptionInput,
    responses((status = 200, body = Subscription), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 422, description = "past 1,000 subscriptions an environment or 50 on one source", body = ErrorBody),
        (status = 429, body = ErrorBody)))]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<SubscriptionInput>,
) -> Result<Json<Subscription>, ApiError> {
    Ok(Json(state.delivery.subscriptions.create(&caller.tenant, body).await?))
}

/// Subscriptions in ID order: a bare JSON array.
#[utoipa::path(get, path = "/v3/subscriptions", tag = "subscriptions", params(ListSubscriptions),
    responses((status = 200, body = Vec<Subscription>), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<ListSubscriptions>,
) -> Result<Json<Vec<Subscription>>, ApiError> {
    let limit = int_param("limit", query.limit.as_deref())?;
    let page = PageRequest::parse(limit, query.starting_after, query.ending_before, LIMITS, "sub")?;
    let names = array_param("functionNames", &query.function_names)?;
    Ok(Json(state.delivery.subscriptions.list(&caller.tenant, &names, &page).await?))
}

/// One subscription.
#[utoipa::path(get, path = "/v3/subscriptions/{subscriptionID}", tag = "subscriptions", params(("subscriptionID" = String, Path)),
    responses((status = 200, body = Subscription), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Subscription>, ApiError> {
    Ok(Json(state.delivery.subscriptions.get(&caller.tenant, &id).await?))
}

/// Change the fields sent; `disabled: true` pauses.
#[utoipa::path(patch, path = "/v3/subscriptions/{subscriptionID}", tag = "subscriptions", params(("subscriptionID" = String, Path)),
    request_body = SubscriptionInput,
    responses((status = 200, body = Subscription), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, description = "moved onto a source with 50 subscriptions", body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<SubscriptionInput>,
) -> Result<Json<Subscription>, ApiError> {
    Ok(Json(state.delivery.subscriptions.update(&caller.tenant, &id, body).await?))
}

/// Delete a subscription; its pending deliveries stop.
#[utoipa::path(delete, path = "/v3/subscriptions/{subscriptionID}", tag = "subscriptions", params(("subscriptionID" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.delivery.subscriptions.delete(&caller.tenant, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, ToSchema)]
pub struct DeliveryLog {
    /// Oldest first, at most 200.
    pub deliveries: Vec<Delivery>,
}

/// The delivery log of a subscription: every delivery and attempt.
#[utoipa::path(get, path = "/v3/subscriptions/{subscriptionID}/deliveries", tag = "subscriptions",
    params(("subscriptionID" = String, Path)),
    responses((status = 200, body = DeliveryLog), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn subscription_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<DeliveryLog>, ApiError> {
    Ok(Json(DeliveryLog { deliveries: state.delivery.of_subscription(&caller.tenant, &id).await? }))
}

/// The deliveries of one event.
#[utoipa::path(get, path = "/v3/events/{eventID}/deliveries", tag = "subscriptions", params(("eventID" = String, Path)),
    responses((status = 200, body = DeliveryLog), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn event_deliveries(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<DeliveryLog>, ApiError> {
    Ok(Json(DeliveryLog { deliveries: state.delivery.of_event(&caller.tenant, &id).await? }))
}

/// Queue a delivery again now (202).
#[utoipa::path(post, path = "/v3/deliveries/{deliveryID}/redeliver", tag = "subscriptions", params(("deliveryID" = String, Path)),
    responses((status = 202), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn redeliver(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.delivery.redeliver(&caller.tenant, &id).await?;
    Ok(StatusCode::ACCEPTED)
}

#[derive(Serialize, ToSchema)]
pub struct WebhookSecret {
    /// In plaintext only when generated; masked (`whsec_…a1b2`) when read.
    pub secret: String,
    #[serde(rename = "createdAt", skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// While a rotation is under way: until when the previous secret still signs.
    #[serde(rename = "previousValidUntil", skip_serializing_if = "Option::is_none")]
    pub previous_valid_until: Option<String>,
}

/// Generate (or rotate) the webhook signing secret: returned in plaintext this once. The
/// previous one keeps signing beside it for the rotation window (24 h by default).
#[utoipa::path(post, path = "/v3/webhook-secret", tag = "subscriptions",
    responses((status = 200, body = WebhookSecret), (status = 401, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn generate_secret(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<WebhookSecret>, ApiError> {
    let secret = state.secrets.generate_signing_secret(&caller.tenant).await?;
    Ok(Json(WebhookSecret { secret, created_at: None, previous_valid_until: None }))
}

/// Whether a signing secret exists: masked, never in plaintext again (404 when none).
#[utoipa::path(get, path = "/v3/webhook-secret", tag = "subscriptions",
    responses((status = 200, body = WebhookSecret), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn read_secret(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<WebhookSecret>, ApiError> {
    let info = state
        .secrets
        .signing_secret_info(&caller.tenant)
        .await?
        .ok_or_else(|| crate::error::ServiceError::not_found("webhook secret", "of this environment"))?;
    Ok(Json(WebhookSecret {
        secret: info.masked,
        created_at: Some(crate::ids::millis_rfc3339(info.created_at)),
        previous_valid_until: info.previous_until.map(crate::ids::millis_rfc3339),
    }))
}

/// Revoke the signing secret: deliveries go out unsigned until a new one is generated.
#[utoipa::path(delete, path = "/v3/webhook-secret", tag = "subscriptions",
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn revoke_secret(State(state): State<AppState>, caller: Caller) -> Result<StatusCode, ApiError> {
    if state.secrets.revoke_signing_secret(&caller.tenant).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(crate::error::ServiceError::not_found("webhook secret", "of this environment").into())
    }
}
