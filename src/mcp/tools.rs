//! The `/mcp` tools: each one a call of the service its REST endpoint calls, for the caller
//! the request authenticated as. A service error becomes a tool error whose content is the
//! body REST would answer (`{message, code, details?}`): an agent reads the same words, and
//! another tenant's entity stays "not found".

use super::args::{
    CatArgs, DirectionArg, EntityArgs, FindArgs, GrepArgs, HeadArgs, LsArgs, MergeArgs, NeighborsArgs,
    PathArgs, RelationsArgs, ReviewArgs, SearchArgs, TimelineArgs, XrefArgs,
};
use crate::access::caller::Caller;
use crate::access::error::{ApiError, ErrorBody};
use crate::access::state::AppState;
use crate::error::{ServiceError, ServiceResult};
use crate::fs::request::{self, Op};
use crate::graph::relations::{Direction, RelationsQuery, MAX_RELATIONS_PAGE, RELATIONS_PAGE};
use crate::graph::timeline::{MAX_TIMELINE_PAGE, TIMELINE_PAGE};
use axum::http::request::Parts;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde::Serialize;
use serde_json::{json, Value};

/// One per request (the transport is stateless); cloning the state is cheap.
#[derive(Clone)]
pub struct CanonTools {
    state: AppState,
}

type ToolResult = Result<CallToolResult, ErrorData>;

impl CanonTools {
    pub fn new(state: AppState) -> Self {
        Self { state }
    }

    /// Runs one `POST /v3/fs` op: the arguments go through the REST body's parser.
    async fn fs(&self, parts: &Parts, op: Op, args: impl Serialize) -> ToolResult {
        let caller = caller(parts)?;
        let mut body =
            serde_json::to_value(args).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        body["op"] = json!(op.name());
        let run = async {
            let request = request::parse(body)?;
            self.state.fs.run(&caller.tenant, request).await
        };
        Ok(answer(run.await))
    }
}

#[tool_router]
impl CanonTools {
    /// List parsed documents (newest last), a page at a time: referenceID, transformationID,
    /// function, pages and sections of each.
    #[tool(annotations(read_only_hint = true))]
    async fn fs_ls(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<LsArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Ls, args).await
    }

    /// Read one parsed document: its sections (label, type, page, text), extracted output,
    /// entities and relationships; `range` and `select` narrow it.
    #[tool(annotations(read_only_hint = true))]
    async fn fs_cat(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<CatArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Cat, args).await
    }

    /// Search the parsed documents' sections, entity surfaces and relationships for a
    /// substring or regular expression; each hit names its document and section.
    #[tool(annotations(read_only_hint = true))]
    async fn fs_grep(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<GrepArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Grep, args).await
    }

    /// The first sections of a parsed document.
    #[tool(annotations(read_only_hint = true))]
    async fn fs_head(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<HeadArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Head, args).await
    }

    /// What a document (pages, section types, entity count) or an entity (status, type,
    /// mentions) is, without its content.
    #[tool(annotations(read_only_hint = true))]
    async fn fs_stat(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<PathArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Stat, args).await
    }

    /// List canonical entities of the memory by name, type or age, a page at a time.
    #[tool(annotations(read_only_hint = true))]
    async fn fs_find(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<FindArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Find, args).await
    }

    /// Open an entity with every mention of it (document, section, page).
    #[tool(annotations(read_only_hint = true))]
    async fn fs_open(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<PathArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Open, args).await
    }

    /// The sections, across documents, that mention an entity, with their text.
    #[tool(annotations(read_only_hint = true))]
    async fn fs_xref(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<XrefArgs>,
    ) -> ToolResult {
        self.fs(&parts, Op::Xref, args).await
    }

    /// An entity's relations in the knowledge graph (inbound and outbound edges with the
    /// entity at the other end), a page at a time.
    #[tool(annotations(read_only_hint = true))]
    async fn entity_relations(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<RelationsArgs>,
    ) -> ToolResult {
        let caller = caller(&parts)?;
        let limit = match page_size(args.limit, RELATIONS_PAGE, MAX_RELATIONS_PAGE) {
            Ok(limit) => limit,
            Err(refused) => return Ok(answer::<()>(Err(refused))),
        };
        let query = RelationsQuery {
            direction: match args.direction.unwrap_or(DirectionArg::Both) {
                DirectionArg::Inbound => Direction::Inbound,
                DirectionArg::Outbound => Direction::Outbound,
                DirectionArg::Both => Direction::Both,
            },
            relation_type: args.relation_type,
            cursor: args.cursor,
            bucket: args.bucket,
            limit,
        };
        Ok(answer(self.state.graph.entity_relations(&caller.tenant, &args.entity_id, query).await))
    }

    /// The entities within `depth` hops of one in the knowledge graph, nearest first (at most
    /// 200, lowest IDs first within a hop).
    #[tool(annotations(read_only_hint = true))]
    async fn entity_neighbors(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<NeighborsArgs>,
    ) -> ToolResult {
        let caller = caller(&parts)?;
        let found = self
            .state
            .graph
            .neighbors(
                &caller.tenant,
                &args.entity_id,
                args.depth.unwrap_or(1),
                args.relation_type.as_deref(),
            )
            .await;
        Ok(answer(found.map(|neighbors| json!({ "entityID": args.entity_id, "neighbors": neighbors }))))
    }

    /// Live entities whose canonical name or a surface form contains the text (any case).
    #[tool(annotations(read_only_hint = true))]
    async fn search_entities(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<SearchArgs>,
    ) -> ToolResult {
        let caller = caller(&parts)?;
        let found = self
            .state
            .graph
            .search_entities(&caller.tenant, &args.text, args.bucket.as_deref(), args.limit.unwrap_or(25))
            .await;
        Ok(answer(found.map(|entities| json!({ "entities": entities }))))
    }

    /// An entity's synonyms with their IDs and sources (`extracted`, `customer_defined`,
    /// `sme_approved`), oldest first, at most the first 500.
    #[tool(annotations(read_only_hint = true))]
    async fn entity_synonyms(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<EntityArgs>,
    ) -> ToolResult {
        let caller = caller(&parts)?;
        let listed = self.state.graph.list_synonyms(&caller.tenant, &args.entity_id).await;
        Ok(answer(listed.map(|synonyms| json!({ "synonyms": synonyms }))))
    }

    /// What happened to an entity, newest first: status changes, merges and unmerges,
    /// synonym and name edits, type changes and merge-suggestion decisions, each with who and
    /// when, a page at a time.
    #[tool(annotations(read_only_hint = true))]
    async fn entity_timeline(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<TimelineArgs>,
    ) -> ToolResult {
        let caller = caller(&parts)?;
        let limit = match page_size(args.limit, TIMELINE_PAGE, MAX_TIMELINE_PAGE) {
            Ok(limit) => limit,
            Err(refused) => return Ok(answer::<()>(Err(refused))),
        };
        let page = self.state.graph.timeline(
            &caller.tenant,
            &args.entity_id,
            args.cursor.as_deref(),
            limit as usize,
        );
        Ok(answer(page.await))
    }

    /// Approve entities (from extracted or proposed), as `POST /v3/entities/bulk-validate`
    /// with status approved does.
    #[tool]
    async fn validate_entities(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<ReviewArgs>,
    ) -> ToolResult {
        self.review(&parts, args, "approved").await
    }

    /// Reject entities (from extracted or proposed), as `POST /v3/entities/bulk-validate`
    /// with status rejected does.
    #[tool(annotations(destructive_hint = true))]
    async fn reject_entities(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<ReviewArgs>,
    ) -> ToolResult {
        self.review(&parts, args, "rejected").await
    }

    /// Merge entities into one (`entityID` survives): their names, mentions and relations
    /// move to it and their IDs resolve to it. Recorded, and undoable over REST.
    #[tool(annotations(destructive_hint = true))]
    async fn merge_entities(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<MergeArgs>,
    ) -> ToolResult {
        let caller = caller(&parts)?;
        let merged = self
            .state
            .suggestions
            .merge(&caller.tenant, &args.entity_id, &args.entity_ids, &caller.actor())
            .await;
        Ok(answer(merged))
    }
}

impl CanonTools {
    async fn review(&self, parts: &Parts, args: ReviewArgs, status: &str) -> ToolResult {
        let caller = caller(parts)?;
        let result = self
            .state
            .graph
            .bulk_validate(&caller.tenant, &args.entity_ids, status, args.bucket.as_deref(), &caller.actor())
            .await;
        Ok(answer(result))
    }
}

#[tool_handler(
    name = "canon",
    instructions = "canon's knowledge graph over parsed documents: fs_* tools walk documents and \
        entities like a shell; entity_* and search_entities read the graph; validate_entities, \
        reject_entities and merge_entities curate it."
)]
impl ServerHandler for CanonTools {}

/// A tool's `limit`: `default` when absent, refused (REST's 400 body) outside 1..=`max`.
fn page_size(limit: Option<u32>, default: u32, max: u32) -> ServiceResult<u32> {
    let limit = limit.unwrap_or(default);
    if !(1..=max).contains(&limit) {
        return Err(ServiceError::invalid_field("limit", format!("must be between 1 and {max}")));
    }
    Ok(limit)
}

/// The caller the `/mcp` route authenticated (its middleware always puts one there).
fn caller(parts: &Parts) -> Result<&Caller, ErrorData> {
    parts
        .extensions
        .get::<Caller>()
        .ok_or_else(|| ErrorData::internal_error("the request reached a tool unauthenticated", None))
}

/// A service's answer as a tool result: the value, or the error body REST would send.
fn answer<T: Serialize>(result: ServiceResult<T>) -> CallToolResult {
    let failure = match result.map(serde_json::to_value) {
        Ok(Ok(value)) => return CallToolResult::structured(value),
        Ok(Err(err)) => ServiceError::Internal(err.into()),
        Err(err) => err,
    };
    let refused = ApiError::from(failure);
    let body = ErrorBody {
        message: refused.message().to_string(),
        code: refused.status().as_u16(),
        details: refused.details().cloned(),
    };
    CallToolResult::structured_error(serde_json::to_value(body).unwrap_or(Value::Null))
}
