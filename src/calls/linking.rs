//! Cross-document linking: entities found in a function's output become mentions resolved
//! into the knowledge graph by the same resolution as bulk seeding (a name or synonym that
//! normalises to a known key joins that entity; anything else becomes a new `proposed`
//! entity), so two documents naming one company under two surface forms end in one entity
//! with two mentions.
//!
//! The setting: `linkAcrossDocuments: true` on an extract, transform or analyze function,
//! or `parseConfig.linkAcrossDocuments` on a parse function (default on for parse).
//! Entities come from:
//! - schema fields annotated with an entity type: `{"type": "string", "x-entityType":
//!   "Company"}` (or arrays of such strings); the field's JSON pointer is the mention's
//!   `sectionLabel`;
//! - gazetteer matches: known entities (canonical names and synonyms) named in the input
//!   text (`sectionLabel` `text`).
//!
//! A mention's `page` and `sectionLabel` are those of the first section of the input (see
//! [`crate::documents::structure`]) that names it; a field whose value no section names
//! keeps its JSON pointer as `sectionLabel` and the first page that names it (1 when none
//! does), and a mention read from another node's JSON has no page.
//!
//! Relations: a schema may declare `"x-relations": [{"source": "/buyer", "target":
//! "/seller", "type": "BUYS_FROM"}]` (JSON pointers into the output); when both ends were
//! found together, the relation is recorded.
//!
//! Decisions: the bucket is the call's `bucket` (by name), else the function's
//! `parseConfig.defaultBucket`, else the tenant's default bucket. A run is linked at most
//! once (by its transformation ID), so resuming a call never doubles its mentions.

use crate::documents::{structure, Linked, LinkedEntity, LinkedRelation, Section};
use crate::engines::Document;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::relations::NewMention;
use crate::graph::{GraphService, Tenant};
use crate::pagination::{Cursor, PageRequest};
use crate::versions::{FunctionVersion, Kind};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Whether a function links what it finds.
pub fn links(function: &FunctionVersion) -> bool {
    let body = &function.body;
    let flag = |v: Option<&Value>| v.and_then(Value::as_bool);
    let parse_default = function.function_type == "parse";
    let enabled = flag(body.get("linkAcrossDocuments"))
        .or_else(|| flag(body.pointer("/parseConfig/linkAcrossDocuments")))
        .unwrap_or(parse_default);
    enabled && matches!(function.kind(), Kind::Extract | Kind::Transform | Kind::Analyze)
}

/// A surface of an entity found in the output.
struct Found {
    surface: String,
    type_name: String,
    pointer: String,
}

#[allow(clippy::too_many_arguments)]
pub async fn link(
    graph: &GraphService,
    tenant: &Tenant,
    bucket_name: Option<&str>,
    function: &FunctionVersion,
    output: &Value,
    document: Option<&Document>,
    reference_id: &str,
    transformation_id: &str,
    sections: &[Section],
) -> ServiceResult<Option<Linked>> {
    graph.ensure_tenant(tenant).await?;
    // Linking is at most once per run: a resumed call replays finished runs, and one whose
    // mentions exist (even partly, if canon died mid-way) is not linked again.
    if graph.transformation_linked(tenant, transformation_id).await? {
        return Ok(None);
    }
    let bucket_name =
        bucket_name.or_else(|| function.body.pointer("/parseConfig/defaultBucket").and_then(Value::as_str));
    let bucket_id = match bucket_name {
        Some(name) => Some(
            bucket_by_name(graph, tenant, name)
                .await?
                .ok_or_else(|| ServiceError::invalid_field("bucket", format!("no bucket named {name:?}")))?,
        ),
        None => None,
    };
    let bucket_id = graph.write_bucket(tenant, bucket_id.as_deref()).await?;
    let schema = crate::engines::output_schema(function);
    let mut found = Vec::new();
    if let Some(schema) = schema {
        annotated(schema, output, "", &mut found);
    }
    // pointer → entity, for the declared relations.
    let mut at_pointer: HashMap<String, String> = HashMap::new();
    let reference = (!reference_id.is_empty()).then(|| reference_id.to_string());
    let mut linked = Linked { bucket_id: Some(bucket_id.clone()), ..Linked::default() };
    let mention = |entity_id: String, surface: String, fallback: String| {
        let section = structure::section_of(sections, &surface);
        NewMention {
            entity_id,
            reference_id: reference.clone(),
            transformation_id: Some(transformation_id.to_string()),
            page: section.map(|s| s.page).or_else(|| document.map(|d| page_of(d, &surface))),
            section_label: Some(section.map_or(fallback, |s| s.label.clone())),
            surface,
        }
    };
    let mut record = |new: &NewMention, type_name: &str| {
        linked.entities.push(LinkedEntity {
            entity_id: new.entity_id.clone(),
            surface: new.surface.clone(),
            type_name: type_name.to_string(),
            section_label: new.section_label.clone().unwrap_or_default(),
            page: new.page,
        })
    };
    for (index, entity) in found.iter().enumerate() {
        let row = json!({ "canonical": entity.surface, "type": entity.type_name, "synonyms": [] });
        let tag = format!("{transformation_id}:{}", entity.pointer);
        let results = graph.seed_rows(tenant, &bucket_id, &[row], &tag, index).await?;
        let Some(entity_id) = results.into_iter().next().and_then(|r| r.entity_id) else { continue };
        let new = mention(entity_id.clone(), entity.surface.clone(), entity.pointer.clone());
        record(&new, &entity.type_name);
        graph.create_mention(tenant, new).await?;
        at_pointer.insert(entity.pointer.clone(), entity_id);
    }
    if let Some(document) = document {
        let already: Vec<&String> = at_pointer.values().collect();
        for matched in graph.entities_named_in(tenant, &bucket_id, &document.text).await? {
            if already.contains(&&matched.entity_id) {
                continue;
            }
            let new = mention(matched.entity_id, matched.surface, "text".into());
            record(&new, &matched.type_name);
            graph.create_mention(tenant, new).await?;
        }
    }
    let relations =
        schema.and_then(|s| s.get("x-relations")).and_then(Value::as_array).cloned().unwrap_or_default();
    for relation in relations {
        let end = |key: &str| relation.get(key).and_then(Value::as_str).and_then(|p| at_pointer.get(p));
        let relation_type = relation.get("type").and_then(Value::as_str);
        if let (Some(source), Some(target), Some(relation_type)) =
            (end("source"), end("target"), relation_type)
        {
            graph.create_relation(tenant, source, target, relation_type).await?;
            let surface = |id: &String| {
                linked
                    .entities
                    .iter()
                    .find(|e| &e.entity_id == id)
                    .map(|e| e.surface.clone())
                    .unwrap_or_default()
            };
            linked.relations.push(LinkedRelation {
                source_surface: surface(source),
                target_surface: surface(target),
                source: source.clone(),
                target: target.clone(),
                relation_type: relation_type.to_string(),
            });
        }
    }
    Ok(Some(linked))
}

/// The 1-based page whose text first names `surface` (any case); page 1 when none does
/// (the value was normalised, say, or read from an attachment).
fn page_of(document: &Document, surface: &str) -> i64 {
    let wanted = surface.to_lowercase();
    document.pages.iter().position(|page| page.to_lowercase().contains(&wanted)).map_or(1, |i| i as i64 + 1)
}

/// Strings of the output under schema fields that carry `x-entityType`.
fn annotated(schema: &Value, value: &Value, pointer: &str, found: &mut Vec<Found>) {
    if let Some(type_name) = schema.get("x-entityType").and_then(Value::as_str) {
        let mut push = |surface: &str, pointer: String| {
            if !surface.trim().is_empty() {
                found.push(Found {
                    surface: surface.trim().to_string(),
                    type_name: type_name.to_string(),
                    pointer,
                });
            }
        };
        match value {
            Value::String(surface) => push(surface, pointer.to_string()),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(surface) = item.as_str() {
                        push(surface, format!("{pointer}/{i}"));
                    }
                }
            }
            _ => {}
        }
        return;
    }
    if let (Some(properties), Some(fields)) =
        (schema.get("properties").and_then(Value::as_object), value.as_object())
    {
        for (name, sub_schema) in properties {
            if let Some(sub_value) = fields.get(name) {
                annotated(sub_schema, sub_value, &format!("{pointer}/{name}"), found);
            }
        }
    }
    if let (Some(item_schema), Some(items)) = (schema.get("items"), value.as_array()) {
        for (i, item) in items.iter().enumerate() {
            annotated(item_schema, item, &format!("{pointer}/{i}"), found);
        }
    }
}

/// The ID of the tenant's live bucket with exactly this name.
pub async fn bucket_by_name(
    graph: &GraphService,
    tenant: &Tenant,
    name: &str,
) -> ServiceResult<Option<String>> {
    let page = PageRequest { limit: 100, cursor: Cursor::First };
    let buckets = graph.list_buckets(tenant, &page, Some(name)).await?.buckets;
    Ok(buckets.into_iter().find(|b| b.name == name).map(|b| b.bucket_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_is_on_the_first_page_that_names_it() {
        let document = Document {
            pages: vec!["Invoice INV-1".into(), "Terms of ACME Corp.".into()],
            ..Default::default()
        };
        assert_eq!(page_of(&document, "acme corp."), 2);
        assert_eq!(page_of(&document, "Nowhere Ltd"), 1);
    }

    #[test]
    fn annotated_fields_and_arrays_are_found_with_their_pointers() {
        let schema = json!({"type": "object", "properties": {
            "vendor": {"type": "string", "x-entityType": "Company"},
            "people": {"type": "array", "items": {"type": "string"}, "x-entityType": "Person"},
            "total": {"type": "number"}
        }});
        let output = json!({"vendor": "ACME Corp.", "people": ["Ann", "Bo"], "total": 3});
        let mut found = Vec::new();
        annotated(&schema, &output, "", &mut found);
        let seen: Vec<(&str, &str, &str)> =
            found.iter().map(|f| (f.surface.as_str(), f.type_name.as_str(), f.pointer.as_str())).collect();
        assert_eq!(
            seen,
            vec![
                ("ACME Corp.", "Company", "/vendor"),
                ("Ann", "Person", "/people/0"),
                ("Bo", "Person", "/people/1")
            ]
        );
    }
}
