//! REST transport for reviewer assignments (dashboard tokens only).

use super::extract::ApiJson;
use crate::access::caller::DashboardUser;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::state::AppState;
use crate::graph::reviewers::{Assignment, Reviewer};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Deserialize, ToSchema)]
pub struct AssignReviewer {
    /// The user to assign (`usr_…`).
    #[serde(rename = "userID")]
    pub user_id: String,
}

#[derive(Serialize, ToSchema)]
pub struct ReviewerList {
    pub reviewers: Vec<Reviewer>,
}

#[derive(Serialize, ToSchema)]
pub struct AssignmentList {
    pub assignments: Vec<Assignment>,
}

/// Assign a reviewer to a type (role `admin`); assigning again returns the existing assignment.
#[utoipa::path(post, path = "/v3/entity-types/{typeID}/reviewers", tag = "reviewers", params(("typeID" = String, Path)),
    request_body = AssignReviewer, security(("dashboardToken" = [])),
    responses((status = 200, body = Reviewer), (status = 400, body = ErrorBody), (status = 401, description = "no dashboard token (API keys are refused)", body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn assign(
    State(state): State<AppState>,
    DashboardUser(user): DashboardUser,
    Path(type_id): Path<String>,
    ApiJson(body): ApiJson<AssignReviewer>,
) -> Result<Json<Reviewer>, ApiError> {
    Ok(Json(state.reviewers.assign(&user, &type_id, &body.user_id).await?))
}

/// The users reviewing a type, with email and role (role `operator` or `admin`).
#[utoipa::path(get, path = "/v3/entity-types/{typeID}/reviewers", tag = "reviewers", params(("typeID" = String, Path)),
    security(("dashboardToken" = [])),
    responses((status = 200, body = ReviewerList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    DashboardUser(user): DashboardUser,
    Path(type_id): Path<String>,
) -> Result<Json<ReviewerList>, ApiError> {
    Ok(Json(ReviewerList { reviewers: state.reviewers.list(&user, &type_id).await? }))
}

/// Remove a reviewer from a type (role `admin`).
#[utoipa::path(delete, path = "/v3/entity-types/{typeID}/reviewers/{userID}", tag = "reviewers",
    params(("typeID" = String, Path), ("userID" = String, Path)), security(("dashboardToken" = [])),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(state): State<AppState>,
    DashboardUser(user): DashboardUser,
    Path((type_id, user_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.reviewers.remove(&user, &type_id, &user_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The types a user reviews: your own, or anyone's with role `admin`.
#[utoipa::path(get, path = "/v3/users/{userID}/reviewer-assignments", tag = "reviewers", params(("userID" = String, Path)),
    security(("dashboardToken" = [])),
    responses((status = 200, body = AssignmentList), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn assignments(
    State(state): State<AppState>,
    DashboardUser(user): DashboardUser,
    Path(user_id): Path<String>,
) -> Result<Json<AssignmentList>, ApiError> {
    Ok(Json(AssignmentList { assignments: state.reviewers.assignments(&user, &user_id).await? }))
}
