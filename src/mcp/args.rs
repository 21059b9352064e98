//! The arguments of each `/mcp` tool. Their JSON Schemas are what `tools/list` shows an
//! agent; the fs ones carry exactly the fields `POST /v3/fs` takes for that op (the same
//! names, so the same [`crate::fs::request::parse`] checks them).

use crate::fs::request::{Context, Filter, Range};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `ls`: the parsed documents, a page at a time.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LsArgs {
    /// `functionName` (exactly), `search` (part of the referenceID), `since` (RFC 3339).
    pub filter: Option<Filter>,
    /// Page size, 1..200 (default 50).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `cat`: one document's sections, output, entities and relationships.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatArgs {
    /// A referenceID or transformationID.
    pub path: String,
    /// Only some pages (`page` or `pageRange`) and section types.
    pub range: Option<Range>,
    /// Dotted paths to keep, such as `sections.label`.
    pub select: Option<Vec<String>>,
}

/// `grep`: text across sections, entity surfaces and relationships.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepArgs {
    /// A substring, or a regular expression (RE2 syntax) with `regex: true`.
    pub pattern: String,
    /// Only this document (a referenceID or transformationID).
    pub path: Option<String>,
    /// `sections`, `entities`, `relationships` or `all` (default).
    pub scope: Option<String>,
    /// Only the number of hits.
    pub count_only: Option<bool>,
    /// `pattern` is a regular expression (default false).
    pub regex: Option<bool>,
    /// Any case (default true).
    pub ignore_case: Option<bool>,
    /// Page size, 1..200 (default 25).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// `head`: a document's first sections.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeadArgs {
    /// A referenceID or transformationID.
    pub path: String,
    /// How many sections, 1..200 (default 10).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub n: Option<i64>,
}

/// `stat` and `open`: one document or entity.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PathArgs {
    /// stat: a referenceID, transformationID or entityID; open: an entityID (a merged-away
    /// one opens its survivor).
    pub path: String,
    /// `bucket`: only entities of this bucket (`bkt_…`).
    pub context: Option<Context>,
}

/// `find`: entities of the memory, a page at a time.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindArgs {
    /// `search` (part of the canonical name), `type` (exactly), `since` (RFC 3339).
    pub filter: Option<Filter>,
    /// Page size, 1..200 (default 50).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// `bucket`: only entities of this bucket (`bkt_…`).
    pub context: Option<Context>,
}

/// `xref`: the sections across documents that mention an entity.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct XrefArgs {
    /// An entityID.
    pub path: String,
    /// Page size, 1..200 (default 25).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<i64>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// `bucket`: only entities of this bucket (`bkt_…`).
    pub context: Option<Context>,
}

/// Which edges of an entity.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DirectionArg {
    Inbound,
    Outbound,
    Both,
}

/// An entity's relations, as `GET /v3/entities/{id}/relations` pages them.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RelationsArgs {
    /// The entity (`ent_…`; a merged-away ID reads its survivor).
    #[serde(rename = "entityID")]
    pub entity_id: String,
    /// Default both.
    pub direction: Option<DirectionArg>,
    /// Only relations of this type (`SELLS_TO`).
    pub relation_type: Option<String>,
    /// Only relations in this bucket (`bkt_…`).
    pub bucket: Option<String>,
    /// Page size, 1..200 (default 50).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page.
    pub cursor: Option<String>,
}

/// The entities near one, hop by hop.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NeighborsArgs {
    /// The entity (`ent_…`).
    #[serde(rename = "entityID")]
    pub entity_id: String,
    /// Hops, 1..5 (default 1).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub depth: Option<u32>,
    /// Only through relations of this type.
    pub relation_type: Option<String>,
}

/// Entities by name.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchArgs {
    /// Part of a canonical name or surface form, any case.
    pub text: String,
    /// Only entities of this bucket (`bkt_…`).
    pub bucket: Option<String>,
    /// At most this many, 1..200 (default 25).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<u32>,
}

/// One entity.
#[derive(Deserialize, JsonSchema)]
pub struct EntityArgs {
    /// The entity (`ent_…`; a merged-away ID reads its survivor).
    #[serde(rename = "entityID")]
    pub entity_id: String,
}

/// An entity's audit timeline, as `GET /v3/entities/{id}/timeline` pages it.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineArgs {
    /// The entity (`ent_…`; a merged-away ID lists its own history).
    #[serde(rename = "entityID")]
    pub entity_id: String,
    /// Page size, 1..200 (default 50).
    #[serde(default, deserialize_with = "crate::wire::whole_opt")]
    pub limit: Option<u32>,
    /// `nextCursor` of the previous page (older items).
    pub cursor: Option<String>,
}

/// Entities to approve or reject.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewArgs {
    /// 1..1000 entity IDs; each row of the answer says what happened to it.
    #[serde(rename = "entityIDs")]
    pub entity_ids: Vec<String>,
    /// Only entities of this bucket (`bkt_…`).
    pub bucket: Option<String>,
}

/// A merge.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeArgs {
    /// The survivor: the others' names, mentions and relations move to it.
    #[serde(rename = "entityID")]
    pub entity_id: String,
    /// 1..100 entities (same bucket) merged into it.
    #[serde(rename = "entityIDs")]
    pub entity_ids: Vec<String>,
}
