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
//!
//! Bounds (the output and the document are the tenant's input): a run links at most
//! [`crate::calls::MAX_LINKED_PER_RUN`] mentions (annotated strings first, then the
//! gazetteer's names in text order) and records at most as many declared relations; the
//! gazetteer reads a long text only so far ([`crate::graph::gazetteer`]); each surface is
//! placed in the document in one pass for all of them ([`crate::documents::places`]).

use crate::documents::{places, Linked, LinkedEntity, LinkedRelation, Section};
use crate::engines::Document;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::relations::NewMention;
use crate::graph::{GraphService, Tenant};
use crate::pagination::{Cursor, PageRequest};
use crate::versions::{FunctionVersion, Kind};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

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

/// A surface of an entity found in the output (or, at pointer `text`, by the gazetteer).
struct Surface {
    surface: String,
    type_name: String,
    pointer: String,
}

/// The annotated strings of an output, the first `most` of them.
struct Found {
    surfaces: Vec<Surface>,
    most: usize,
    /// Whether one was left out.
    cut: bool,
}

impl Found {
    fn up_to(most: usize) -> Self {
        Self { surfaces: Vec::new(), most, cut: false }
    }

    fn push(&mut self, surface: &str, type_name: &str, pointer: String) {
        if surface.trim().is_empty() {
            return;
        }
        if self.surfaces.len() >= self.most {
            self.cut = true;
            return;
        }
        self.surfaces.push(Surface {
            surface: surface.trim().to_string(),
            type_name: type_name.to_string(),
            pointer,
        });
    }
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
    most: usize,
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
    let mut found = Found::up_to(most);
    if let Some(schema) = schema {
        annotated(schema, output, "", &mut found);
    }
    // Each annotated string resolves to an entity first (the gazetteer then finds the new ones
    // too); the mentions follow, once every surface is placed in the document.
    let mut mentions: Vec<(String, Surface)> = Vec::new();
    for (index, entity) in found.surfaces.into_iter().enumerate() {
        let row = json!({ "canonical": entity.surface, "type": entity.type_name, "synonyms": [] });
        let tag = format!("{transformation_id}:{}", entity.pointer);
        let results = graph.seed_rows(tenant, &bucket_id, &[row], &tag, index).await?;
        if let Some(entity_id) = results.into_iter().next().and_then(|r| r.entity_id) {
            mentions.push((entity_id, entity));
        }
    }
    let mut cut = found.cut;
    if let Some(document) = document {
        cut |= named_in_text(graph, tenant, &bucket_id, document, &mut mentions, most).await?;
    }
    let places = Places::find(&mentions, sections, document);
    let reference = (!reference_id.is_empty()).then(|| reference_id.to_string());
    let mut linked = Linked { bucket_id: Some(bucket_id.clone()), ..Linked::default() };
    // pointer → entity, for the declared relations.
    let mut at_pointer: HashMap<String, String> = HashMap::new();
    for (index, (entity_id, entity)) in mentions.into_iter().enumerate() {
        let (section, page) = places.of(index);
        let new = NewMention {
            entity_id: entity_id.clone(),
            reference_id: reference.clone(),
            transformation_id: Some(transformation_id.to_string()),
            page,
            section_label: Some(section.map_or_else(|| entity.pointer.clone(), |s| s.label.clone())),
            surface: entity.surface,
        };
        linked.entities.push(LinkedEntity {
            entity_id: new.entity_id.clone(),
            surface: new.surface.clone(),
            type_name: entity.type_name,
            section_label: new.section_label.clone().unwrap_or_default(),
            page: new.page,
        });
        graph.create_mention(tenant, new).await?;
        if entity.pointer != "text" {
            at_pointer.insert(entity.pointer, entity_id);
        }
    }
    cut |= record_relations(graph, tenant, schema, &at_pointer, &mut linked, most).await?;
    if cut {
        tracing::warn!(
            transformation_id,
            most,
            "linking stopped at the bound on one run's mentions or relations; the rest of the output is not linked"
        );
    }
    Ok(Some(linked))
}

/// Adds the entities the document's text names (the gazetteer's, in text order) that the
/// annotated strings did not, while there is room; whether some were left out.
async fn named_in_text(
    graph: &GraphService,
    tenant: &Tenant,
    bucket_id: &str,
    document: &Document,
    mentions: &mut Vec<(String, Surface)>,
    most: usize,
) -> ServiceResult<bool> {
    let matches = graph.entities_named_in(tenant, bucket_id, &document.text).await?;
    let already: HashSet<String> = mentions.iter().map(|(id, _)| id.clone()).collect();
    let room = most.saturating_sub(mentions.len());
    let mut unseen = matches.into_iter().filter(|m| !already.contains(&m.entity_id)).peekable();
    for matched in unseen.by_ref().take(room) {
        let surface =
            Surface { surface: matched.surface, type_name: matched.type_name, pointer: "text".into() };
        mentions.push((matched.entity_id, surface));
    }
    Ok(unseen.peek().is_some())
}

/// Records the schema's declared `x-relations` whose two ends the run found, the first
/// `most` of them; whether some were left out.
async fn record_relations(
    graph: &GraphService,
    tenant: &Tenant,
    schema: Option<&Value>,
    at_pointer: &HashMap<String, String>,
    linked: &mut Linked,
    most: usize,
) -> ServiceResult<bool> {
    let relations = schema.and_then(|s| s.get("x-relations")).and_then(Value::as_array);
    let relations = relations.map(Vec::as_slice).unwrap_or_default();
    for relation in relations.iter().take(most) {
        let end = |key: &str| relation.get(key).and_then(Value::as_str).and_then(|p| at_pointer.get(p));
        let relation_type = relation.get("type").and_then(Value::as_str);
        let (Some(source), Some(target), Some(relation_type)) = (end("source"), end("target"), relation_type)
        else {
            continue;
        };
        graph.create_relation(tenant, source, target, relation_type).await?;
        let surface = |id: &String| {
            linked.entities.iter().find(|e| &e.entity_id == id).map(|e| e.surface.clone()).unwrap_or_default()
        };
        linked.relations.push(LinkedRelation {
            source_surface: surface(source),
            target_surface: surface(target),
            source: source.clone(),
            target: target.clone(),
            relation_type: relation_type.to_string(),
        });
    }
    Ok(relations.len() > most)
}

/// Where each mention's surface is first named: its section, and its page (1 when no page
/// names it: the value was normalised, say, or read from an attachment; none for a run whose
/// input was JSON).
struct Places<'a> {
    sections: &'a [Section],
    in_section: Vec<Option<usize>>,
    on_page: Vec<Option<usize>>,
    has_pages: bool,
}

impl<'a> Places<'a> {
    fn find(mentions: &[(String, Surface)], sections: &'a [Section], document: Option<&Document>) -> Self {
        let surfaces: Vec<&str> = mentions.iter().map(|(_, m)| m.surface.as_str()).collect();
        let pages = document.map(|d| d.pages.as_slice()).unwrap_or_default();
        Self {
            sections,
            in_section: places::first_places(&surfaces, sections.iter().map(|s| s.text.as_str())),
            on_page: places::first_places(&surfaces, pages.iter().map(String::as_str)),
            has_pages: document.is_some(),
        }
    }

    fn of(&self, mention: usize) -> (Option<&'a Section>, Option<i64>) {
        let section = self.in_section[mention].map(|i| &self.sections[i]);
        let page = section
            .map(|s| s.page)
            .or_else(|| self.has_pages.then(|| self.on_page[mention].map_or(1, |i| i as i64 + 1)));
        (section, page)
    }
}
/// Strings of the output under schema fields that carry `x-entityType`.
fn annotated(schema: &Value, value: &Value, pointer: &str, found: &mut Found) {
    if found.cut {
        return;
    }
    if let Some(type_name) = schema.get("x-entityType").and_then(Value::as_str) {
        match value {
            Value::String(surface) => found.push(surface, type_name, pointer.to_string()),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(surface) = item.as_str() {
                        found.push(surface, type_name, format!("{pointer}/{i}"));
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
    fn a_mention_is_in_the_first_section_and_on_the_first_page_naming_it() {
        let document = Document {
            pages: vec!["Invoice INV-1".into(), "Terms of ACME Corp.".into()],
            ..Default::default()
        };
        let section = |label: &str, page: i64, text: &str| Section {
            label: label.into(),
            section_type: "paragraph".into(),
            page,
            text: text.into(),
        };
        let sections = [section("first", 1, "Invoice INV-1"), section("terms", 2, "Terms")];
        let mention = |surface: &str| {
            let at = Surface { surface: surface.into(), type_name: "Company".into(), pointer: "text".into() };
            ("ent".to_string(), at)
        };
        let mentions = [mention("INV-1"), mention("acme corp."), mention("Nowhere Ltd")];
        let places = Places::find(&mentions, &sections, Some(&document));
        let shown = |i: usize| {
            let (section, page) = places.of(i);
            (section.map(|s| s.label.as_str()), page)
        };
        assert_eq!(shown(0), (Some("first"), Some(1)));
        assert_eq!(shown(1), (None, Some(2)), "on the page naming it, in no section");
        assert_eq!(shown(2), (None, Some(1)), "named nowhere: page 1");
        let json_input = Places::find(&mentions, &[], None);
        assert_eq!(json_input.of(1).1, None, "no page for a run of JSON");
    }

    #[test]
    fn an_output_yields_its_first_annotated_strings_up_to_the_bound() {
        let schema = json!({"type": "array", "items": {"type": "string"}, "x-entityType": "Company"});
        let mut found = Found::up_to(2);
        annotated(&schema, &json!(["A", " ", "B", "C"]), "", &mut found);
        let seen: Vec<&str> = found.surfaces.iter().map(|f| f.surface.as_str()).collect();
        assert_eq!((seen, found.cut), (vec!["A", "B"], true));
    }

    #[test]
    fn annotated_fields_and_arrays_are_found_with_their_pointers() {
        let schema = json!({"type": "object", "properties": {
            "vendor": {"type": "string", "x-entityType": "Company"},
            "people": {"type": "array", "items": {"type": "string"}, "x-entityType": "Person"},
            "total": {"type": "number"}
        }});
        let output = json!({"vendor": "ACME Corp.", "people": ["Ann", "Bo"], "total": 3});
        let mut found = Found::up_to(10);
        annotated(&schema, &output, "", &mut found);
        let seen: Vec<(&str, &str, &str)> = found
            .surfaces
            .iter()
            .map(|f| (f.surface.as_str(), f.type_name.as_str(), f.pointer.as_str()))
            .collect();
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
