//! `POST /v3/infer-schema`: a JSON Schema for documents like the one uploaded, with a
//! description and a classification, read from the decoded file without a model:
//! - JSON: the value's own structure (objects, arrays of the merged item shape, types, and
//!   string formats: date, date-time, email, uri);
//! - CSV: an array of row objects, each column typed by its values;
//! - anything with text (PDF, images by OCR, e-mail, HTML, plain text): `Label: value`
//!   lines become typed properties (numbers, amounts, dates), and table sections
//!   ([`super::structure`]) become arrays of row objects keyed by their header.
//!
//! Property names are camelCase of the label; every property carries the label it was read
//! from as its `description`, so the schema works as a transform function's `outputSchema`.
//! The classification is by keywords (invoice, receipt, purchase order, contract, bank
//! statement, résumé, e-mail, spreadsheet); unknown documents are `document`.

use super::structure::{self, Section};
use crate::engines::Document;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    /// textual, visual, audio, video or mixed.
    pub content_nature: String,
    pub content_type: String,
    pub description: String,
    pub document_types: Vec<DocumentType>,
    pub file_name: String,
    /// document, image, spreadsheet, email or data.
    pub file_type: String,
    pub is_multi_document: bool,
    pub size_bytes: i64,
    #[schema(value_type = Object)]
    pub schema: Value,
    /// canon's addition, present when a model is configured to refine the schema
    /// ([`super::refine`]): `{status: refined | rejected | failed, model, reason?, error?}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub refinement: Option<Value>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentType {
    pub count: i64,
    pub description: String,
    pub name: String,
}

/// What the upload was, beside its decoded content.
pub struct Upload<'a> {
    pub file_name: &'a str,
    pub content_type: &'a str,
    pub size_bytes: i64,
}

pub fn analyse(document: &Document, upload: &Upload<'_>) -> Analysis {
    let schema = match document.input_type.as_str() {
        "json" => {
            let mut schema = of_value(document.json.as_ref().unwrap_or(&Value::Null));
            schema["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
            schema
        }
        "csv" => csv_schema(document),
        _ => text_schema(document),
    };
    let (name, description) = classify(document);
    let file_type = match document.input_type.as_str() {
        "csv" => "spreadsheet",
        "json" => "data",
        "email" => "email",
        "png" | "jpeg" | "webp" | "tiff" => "image",
        _ => "document",
    };
    let content_nature = if file_type == "image" { "visual" } else { "textual" };
    let fields = schema.get("properties").and_then(Value::as_object).map_or(0, Map::len);
    let (sections, pages) = structure::sections(document);
    let tables = sections.iter().filter(|s| s.section_type == "table").count();
    let parts = document.attachments.len();
    let summary = format!(
        "{article} {name_text} ({file_type}, {pages} page{plural}, {n} section{splural}{tables_text}). \
         The inferred schema has {fields} top-level field{fplural}{attachments}.",
        article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "An" } else { "A" },
        name_text = name.replace('_', " "),
        plural = if pages == 1 { "" } else { "s" },
        n = sections.len(),
        splural = if sections.len() == 1 { "" } else { "s" },
        tables_text = if tables > 0 {
            format!(", {tables} table{}", if tables == 1 { "" } else { "s" })
        } else {
            String::new()
        },
        fplural = if fields == 1 { "" } else { "s" },
        attachments = if parts > 0 { format!("; it carries {parts} attachment(s)") } else { String::new() },
    );
    let mut document_types =
        vec![DocumentType { count: 1, description: description.into(), name: name.into() }];
    for attachment in &document.attachments {
        let (name, description) = classify(attachment);
        match document_types.iter_mut().find(|t| t.name == name) {
            Some(known) => known.count += 1,
            None => document_types.push(DocumentType {
                count: 1,
                description: description.into(),
                name: name.into(),
            }),
        }
    }
    Analysis {
        content_nature: content_nature.into(),
        content_type: upload.content_type.into(),
        description: summary,
        document_types,
        file_name: upload.file_name.into(),
        file_type: file_type.into(),
        is_multi_document: parts > 0,
        size_bytes: upload.size_bytes,
        schema,
        refinement: None,
    }
}

/// A schema describing `value` (arrays: the merged shape of their items).
pub fn of_value(value: &Value) -> Value {
    match value {
        Value::Null => json!({"type": "null"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"type": "integer"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::String(text) => string_schema(text),
        Value::Array(items) => {
            let mut merged: Option<Value> = None;
            for item in items {
                let schema = of_value(item);
                merged = Some(match merged {
                    None => schema,
                    Some(before) => merge(before, schema),
                });
            }
            json!({"type": "array", "items": merged.unwrap_or(json!({}))})
        }
        Value::Object(fields) => {
            let properties: Map<String, Value> =
                fields.iter().map(|(k, v)| (k.clone(), of_value(v))).collect();
            let required: Vec<&String> =
                fields.iter().filter(|(_, v)| !v.is_null()).map(|(k, _)| k).collect();
            json!({"type": "object", "properties": properties, "required": required})
        }
    }
}

/// Two item shapes as one: objects by property (required only if in both), differing
/// scalar types widened (integer and number → number; else a list of types).
///
/// `a` (the shape of the items so far) is merged into in place: copying its properties for
/// each item made an array of objects with distinct keys quadratic (100,000 items: minutes).
fn merge(mut a: Value, mut b: Value) -> Value {
    if a == b {
        return a;
    }
    if a["type"] == "object" && b["type"] == "object" {
        let required_in = |s: &Value| -> HashSet<String> {
            s["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let required_b = required_in(&b);
        let incoming = b.get_mut("properties").and_then(Value::as_object_mut).map(std::mem::take);
        let Some(shape) = a.as_object_mut() else { return a };
        let properties = shape.entry("properties").or_insert_with(|| json!({}));
        if let Some(properties) = properties.as_object_mut() {
            for (key, value) in incoming.unwrap_or_default() {
                match properties.get_mut(&key) {
                    Some(before) => {
                        let merged = merge(std::mem::take(before), value);
                        *before = merged;
                    }
                    None => {
                        properties.insert(key, value);
                    }
                }
            }
        }
        if let Some(Value::Array(required)) = shape.get_mut("required") {
            required.retain(|k| k.as_str().is_some_and(|k| required_b.contains(k)));
        } else {
            shape.insert("required".into(), json!([]));
        }
        return a;
    }
    let numeric = |s: &Value| s["type"] == "integer" || s["type"] == "number";
    if numeric(&a) && numeric(&b) {
        return json!({"type": "number"});
    }
    if a["type"] == "string" && b["type"] == "string" {
        return json!({"type": "string"});
    }
    let mut types: Vec<Value> = Vec::new();
    for t in [&a["type"], &b["type"]] {
        if !types.contains(t) {
            types.push(t.clone());
        }
    }
    json!({"type": types})
}

/// A string's schema, with a format when every character says so.
fn string_schema(text: &str) -> Value {
    let text = text.trim();
    let format = if chrono::DateTime::parse_from_rfc3339(text).is_ok() {
        Some("date-time")
    } else if chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok() {
        Some("date")
    } else if text.contains('@')
        && !text.contains(' ')
        && text.rsplit('@').next().is_some_and(|d| d.contains('.'))
    {
        Some("email")
    } else if text.starts_with("https://") || text.starts_with("http://") {
        Some("uri")
    } else {
        None
    };
    match format {
        Some(format) => json!({"type": "string", "format": format}),
        None => json!({"type": "string"}),
    }
}

/// A value read from text: its schema (numbers, amounts and dates recognised).
fn scalar_schema(text: &str) -> Value {
    let cleaned: String = text.trim().trim_start_matches(['$', '€', '£']).replace(',', "");
    let cleaned =
        cleaned.trim_end_matches([' ', '$', '€', '£']).trim_end_matches(" USD").trim_end_matches(" EUR");
    if !cleaned.is_empty() && cleaned.parse::<i64>().is_ok() && !text.trim().starts_with('0') {
        return json!({"type": "integer"});
    }
    if cleaned.parse::<f64>().is_ok() && cleaned.contains('.') {
        return json!({"type": "number"});
    }
    for format in ["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%B %d, %Y", "%d %B %Y", "%b %d, %Y"] {
        if chrono::NaiveDate::parse_from_str(text.trim(), format).is_ok() {
            return json!({"type": "string", "format": "date"});
        }
    }
    string_schema(text)
}

fn csv_schema(document: &Document) -> Value {
    let mut properties = Map::new();
    if let Some(first) = document.rows.as_ref().and_then(|r| r.first()) {
        for column in first.keys() {
            let values: Vec<String> = document
                .rows
                .iter()
                .flatten()
                .filter_map(|r| r.get(column).and_then(Value::as_str).map(str::to_string))
                .filter(|v| !v.trim().is_empty())
                .collect();
            let schema =
                values.iter().map(|v| scalar_schema(v)).reduce(merge).unwrap_or(json!({"type": "string"}));
            properties.insert(property_name(column), with_description(schema, column));
        }
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"rows": {"type": "array", "items": {"type": "object", "properties": properties}}},
        "required": ["rows"],
    })
}

fn text_schema(document: &Document) -> Value {
    let (sections, _) = structure::sections(document);
    let mut properties = Map::new();
    for section in &sections {
        match section.section_type.as_str() {
            "table" => {
                let name = property_name(&table_name(section, &sections));
                properties.entry(name).or_insert_with(|| table_schema(section));
            }
            _ => {
                for line in section.text.lines() {
                    let Some((label, value)) = line.split_once(':') else { continue };
                    let label = label.trim().trim_start_matches(['-', '*', '•']).trim();
                    let words = label.split_whitespace().count();
                    if label.is_empty() || words > 5 || value.trim().is_empty() || label.starts_with("http") {
                        continue;
                    }
                    properties
                        .entry(property_name(label))
                        .or_insert_with(|| with_description(scalar_schema(value), label));
                }
            }
        }
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": properties,
    })
}

/// A table's name: the heading it sits under, else "items".
fn table_name(table: &Section, sections: &[Section]) -> String {
    let heading = table.label.split(" › ").next().unwrap_or_default();
    let named = sections.iter().any(|s| s.section_type == "heading" && s.label == heading);
    if named {
        heading.to_string()
    } else {
        "items".into()
    }
}

/// Columns of a table section (its first line, split at gaps of 2+ spaces, tabs or `|`),
/// typed by the rows under them.
fn table_schema(table: &Section) -> Value {
    let split = |line: &str| -> Vec<String> {
        line.split(['\t', '|'])
            .flat_map(|piece| piece.split("  "))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut lines = table.text.lines();
    let header = lines.next().map(split).unwrap_or_default();
    let rows: Vec<Vec<String>> = lines.map(split).collect();
    let mut properties = Map::new();
    for (i, column) in header.iter().enumerate() {
        let schema = rows
            .iter()
            .filter_map(|row| row.get(i))
            .map(|cell| scalar_schema(cell))
            .reduce(merge)
            .unwrap_or(json!({"type": "string"}));
        properties.insert(property_name(column), with_description(schema, column));
    }
    json!({"type": "array", "description": table.label, "items": {"type": "object", "properties": properties}})
}

fn with_description(mut schema: Value, label: &str) -> Value {
    schema["description"] = json!(label);
    schema
}

/// `Invoice number` → `invoiceNumber`.
pub fn property_name(label: &str) -> String {
    let mut out = String::new();
    for (i, word) in label.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).enumerate() {
        let lower = word.to_lowercase();
        if i == 0 {
            out.push_str(&lower);
        } else {
            let mut chars = lower.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        }
    }
    if out.is_empty() {
        "field".into()
    } else {
        out
    }
}

/// `(name, description)` of the kind of document, by keywords.
fn classify(document: &Document) -> (&'static str, &'static str) {
    let text = document.text.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
    match document.input_type.as_str() {
        "csv" => return ("spreadsheet", "Tabular data: rows under a header line"),
        "json" => return ("data_record", "Structured JSON data"),
        _ => {}
    }
    if has(&["purchase order", "p.o. number", "po number"]) {
        ("purchase_order", "An order for goods or services sent to a vendor")
    } else if has(&["invoice"]) {
        ("invoice", "A bill for goods or services with amounts due")
    } else if has(&["receipt", "amount paid", "thank you for your purchase"]) {
        ("receipt", "Proof of a completed payment")
    } else if has(&["statement period", "opening balance", "closing balance"]) {
        ("bank_statement", "Account activity over a period")
    } else if has(&["agreement", "contract", "hereinafter", "the parties"]) {
        ("contract", "An agreement between parties with terms and obligations")
    } else if has(&["curriculum vitae", "work experience", "education"]) {
        ("resume", "A person's work history and qualifications")
    } else if document.input_type == "email" {
        ("email", "An e-mail message")
    } else {
        ("document", "A document")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_of_many_distinct_keys_merge_into_one_shape_of_them_all() {
        let items: Vec<Value> = (0..20_000).map(|i| json!({ format!("k{i}"): i, "shared": "x" })).collect();
        let schema = of_value(&Value::Array(items));
        let shape = &schema["items"];
        assert_eq!(shape["properties"].as_object().unwrap().len(), 20_001);
        assert_eq!(shape["properties"]["k7"], json!({"type": "integer"}));
        assert_eq!(shape["required"], json!(["shared"]), "only what every item has");
    }

    #[test]
    fn json_structure_becomes_a_schema_with_formats() {
        let value = json!({"id": 7, "email": "a@b.example", "at": "2024-05-01", "lines": [{"qty": 1}, {"qty": 2.5, "sku": "x"}]});
        let schema = of_value(&value);
        assert_eq!(schema["properties"]["email"]["format"], "email");
        assert_eq!(schema["properties"]["at"]["format"], "date");
        assert_eq!(schema["properties"]["id"]["type"], "integer");
        let line = &schema["properties"]["lines"]["items"];
        assert_eq!(line["properties"]["qty"]["type"], "number");
        assert_eq!(line["required"], json!(["qty"]));
    }

    #[test]
    fn labels_become_camel_case_properties() {
        assert_eq!(property_name("Invoice number"), "invoiceNumber");
        assert_eq!(property_name("P.O. #"), "pO");
        assert_eq!(scalar_schema("$1,234.50"), json!({"type": "number"}));
        assert_eq!(scalar_schema("March 3, 2024"), json!({"type": "string", "format": "date"}));
    }
}
