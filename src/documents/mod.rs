//! Parsed documents: what a `parse` function (or any function that links across documents)
//! read, kept beside its output — pages, sections ([`structure`]), and the entities and
//! relationships linking found — for `POST /v3/fs` to list, read and search.

pub mod infer;
pub mod places;
pub mod refine;
pub mod structure;

use crate::engines::Document;
use crate::error::ServiceResult;
use crate::graph::Tenant;
use crate::ids;
use crate::store::records::documents::{DocumentRow, ItemRow};
use crate::store::records::Records;
use serde_json::Value;
pub use structure::Section;

/// An entity linking recorded for a document.
#[derive(Clone, Debug)]
pub struct LinkedEntity {
    pub entity_id: String,
    pub surface: String,
    pub type_name: String,
    pub section_label: String,
    pub page: Option<i64>,
}

/// A relation linking recorded between two entities of a document.
#[derive(Clone, Debug)]
pub struct LinkedRelation {
    pub source: String,
    pub target: String,
    pub source_surface: String,
    pub target_surface: String,
    pub relation_type: String,
}

/// What linking found in one document.
#[derive(Clone, Debug, Default)]
pub struct Linked {
    pub entities: Vec<LinkedEntity>,
    pub relations: Vec<LinkedRelation>,
    pub bucket_id: Option<String>,
}

/// The run a document was read by.
pub struct ParsedBy<'a> {
    pub transformation_id: &'a str,
    pub reference_id: &'a str,
    pub call_id: &'a str,
    pub function_id: &'a str,
    pub function_name: &'a str,
}

#[derive(Clone)]
pub struct DocumentService {
    records: Records,
}

impl DocumentService {
    pub fn new(records: Records) -> Self {
        Self { records }
    }

    /// Records a parsed document (its sections and page count beside it) once per run (a
    /// resumed call records nothing twice).
    pub async fn record(
        &self,
        tenant: &Tenant,
        by: ParsedBy<'_>,
        document: &Document,
        (sections, page_count): (&[Section], i64),
        output: &Value,
        linked: Option<&Linked>,
    ) -> ServiceResult<()> {
        let id = by.transformation_id;
        let reference_id = if by.reference_id.is_empty() { id } else { by.reference_id };
        let row = DocumentRow {
            id: id.to_string(),
            reference_id: reference_id.to_string(),
            call_id: by.call_id.to_string(),
            function_id: by.function_id.to_string(),
            function_name: by.function_name.to_string(),
            input_type: document.input_type.clone(),
            file_name: document.file_name.clone(),
            bucket_id: linked.and_then(|l| l.bucket_id.clone()),
            memory_linked: linked.is_some(),
            page_count,
            section_count: sections.len() as i64,
            created_at: ids::now_millis(),
        };
        let item = |scope: &str, letter: char, position: usize| ItemRow {
            id: format!("{id}:{letter}:{position:06}"),
            document_id: id.to_string(),
            scope: scope.to_string(),
            position: position as i64,
            ..ItemRow::default()
        };
        let mut items: Vec<ItemRow> = sections
            .iter()
            .enumerate()
            .map(|(i, s)| ItemRow {
                label: s.label.clone(),
                item_type: s.section_type.clone(),
                page: Some(s.page),
                text: s.text.clone(),
                ..item("sections", 's', i)
            })
            .collect();
        if let Some(linked) = linked {
            items.extend(linked.entities.iter().enumerate().map(|(i, e)| ItemRow {
                label: e.section_label.clone(),
                item_type: e.type_name.clone(),
                page: e.page,
                entity_id: Some(e.entity_id.clone()),
                text: e.surface.clone(),
                ..item("entities", 'e', i)
            }));
            items.extend(linked.relations.iter().enumerate().map(|(i, r)| ItemRow {
                label: format!("{} → {}", r.source, r.target),
                item_type: r.relation_type.clone(),
                entity_id: Some(r.source.clone()),
                text: format!("{} {} {}", r.source_surface, r.relation_type, r.target_surface),
                ..item("relationships", 'r', i)
            }));
        }
        self.records.save_document(tenant.owner(), &row, &output.to_string(), &items).await?;
        Ok(())
    }
}
