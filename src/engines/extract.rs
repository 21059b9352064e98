//! Schema-guided extraction (built-in extract, transform, analyze): the `outputSchema` is
//! walked property by property (nested objects, arrays of objects) and each property is
//! looked up in the input.
//!
//! JSON input (and CSV rows, seen as a JSON array of row objects):
//! - a property's `x-path` annotation, a JMESPath-subset path such as `a.b[0].c`, relative to
//!   the input, or to the array element inside an array of objects;
//! - otherwise the first key, breadth-first anywhere below, that matches the property name,
//!   its `title` or one of its `x-labels`, ignoring case, spaces, `_` and `-`;
//! - an array-of-objects property with no matching key takes the input itself when it is an
//!   array (CSV rows); an object property with no matching key is filled from the same input.
//!
//! Text input (text, PDF, OCR, HTML, e-mail with its headers and attachments; a property
//! not found in an e-mail's first JSON or CSV attachment is looked for in its text):
//! - labelled values `Label: value`, or a label and a value in neighbouring layout columns
//!   (two or more spaces apart), or a value on the line under `Label:`; the label must be the
//!   property name split into words (`invoiceNumber` → "invoice number"), its `title` or an
//!   `x-labels` alias (`No.`, `Nr`, `#` read as "number"). Exact labels win over labels that
//!   merely start or end with those words;
//! - with no labelled value, a property whose `format` is `email`, `date` or `phone` takes the
//!   first such value anywhere in the text.
//!
//! Values are parsed by `type` and `format` ([`super::typed`]): `number`, `integer`,
//! `boolean`, `string` with `format` `date` (→ `YYYY-MM-DD`), `email`, `phone`; a string
//! `enum` matches case-insensitively. A property with no value is left out (so `required`
//! reports it).
//!
//! The text is read once for every label the schema has ([`super::labels`]), and the work of
//! properties looking through the input is bounded ([`EXTRACTION_STEPS`]).

use super::labels::{normalise_label, split_words, LabelIndex};
use super::limits::exceeded;
use super::typed;
use super::{Document, EngineError, Payload};
use crate::shaping;
use serde_json::{Map, Number, Value};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};

/// Where values come from: a JSON value, a text, or both.
#[derive(Clone, Debug, Default)]
pub struct Source {
    pub json: Option<Value>,
    pub text: String,
}

impl Source {
    pub fn of(input: &Payload) -> Self {
        match input {
            Payload::Json(value) => Self { json: Some(value.clone()), text: String::new() },
            Payload::Document(document) => Self::of_document(document),
        }
    }

    /// A JSON or CSV document is its value; any other document is its text, plus the value of
    /// its first JSON or CSV attachment (an e-mail's order lines).
    fn of_document(document: &Document) -> Self {
        if let Some(json) = structured(document) {
            return Self { json: Some(json), text: String::new() };
        }
        let json = document.attachments.iter().find_map(structured);
        Self { json, text: extraction_text(document) }
    }
}

fn structured(document: &Document) -> Option<Value> {
    if let Some(json) = &document.json {
        return Some(json.clone());
    }
    let rows = document.rows.as_ref()?;
    Some(Value::Array(rows.iter().cloned().map(Value::Object).collect()))
}

/// A document's text for labelled values: e-mail headers first, then the body, then the
/// attachments' texts.
pub fn extraction_text(document: &Document) -> String {
    let mut text = String::new();
    if let Some(email) = &document.email {
        text.push_str(&format!(
            "From: {}\nTo: {}\nDelivered-To: {}\nSubject: {}\n\n",
            email.from, email.to, email.delivered_to, email.subject
        ));
    }
    text.push_str(&document.text);
    for attachment in &document.attachments {
        text.push_str("\n\n");
        text.push_str(&extraction_text(attachment));
    }
    text
}

/// Steps one extraction may take: a property looking through the input's keys or labelled
/// values takes one a key or value, an `x-path` that projects or flattens (`rows[*].id`) one a
/// value of the JSON it is evaluated on, a converted array one an item. Schema and input are
/// the tenant's, and each property reads the input on its own (100,000 properties in a 2 MB
/// schema over a 32 MiB input); past it the run fails naming `extractionSteps`.
pub const EXTRACTION_STEPS: usize = 20_000_000;

/// One extraction's input text, read once for its labels, and what is left of its steps.
struct Extraction<'a> {
    text: &'a str,
    labels: LabelIndex,
    /// The first value of each format anywhere in the text (unlabelled dates, e-mails, phones).
    firsts: RefCell<HashMap<&'static str, Option<String>>>,
    /// Values under each JSON scope an `x-path` was evaluated on (by address), counted once.
    scope_sizes: RefCell<HashMap<usize, usize>>,
    steps_left: Cell<usize>,
}

impl Extraction<'_> {
    /// Takes `steps`; false once they have run out (and from then on).
    fn step(&self, steps: usize) -> bool {
        let left = self.steps_left.get();
        self.steps_left.set(left.saturating_sub(steps));
        left > steps
    }

    fn exhausted(&self) -> bool {
        self.steps_left.get() == 0
    }

    /// Takes as many steps as `scope` holds values: what an `x-path` may look through.
    fn step_through(&self, scope: &Value) -> bool {
        let address = scope as *const Value as usize;
        let size = *self.scope_sizes.borrow_mut().entry(address).or_insert_with(|| values_in(scope));
        self.step(size)
    }
}

/// Whether a path may look through more than its own steps: anything but fields and indexes
/// (`a.b[0]."c d"`): projections and flattening (and what the subset refuses on save: filters,
/// slices, functions).
fn scans(path: &str) -> bool {
    path.contains("[]") || !path.chars().all(|c| c.is_alphanumeric() || "_.[]\" -".contains(c))
}

/// How many values `value` holds, itself included.
fn values_in(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(values_in).sum(),
        Value::Object(map) => map.values().map(values_in).sum(),
        _ => 0,
    }
}

/// The output for `schema` drawn from `source`, or `input_limit` past [`EXTRACTION_STEPS`].
pub fn extract(schema: &Value, source: &Source) -> Result<Value, EngineError> {
    extract_within(schema, source, EXTRACTION_STEPS)
}

fn extract_within(schema: &Value, source: &Source, steps: usize) -> Result<Value, EngineError> {
    let mut wanted = HashSet::new();
    if !source.text.trim().is_empty() {
        wanted_labels("", schema, &mut wanted);
    }
    let ex = Extraction {
        text: &source.text,
        labels: LabelIndex::build(&source.text, &wanted),
        firsts: RefCell::default(),
        scope_sizes: RefCell::default(),
        steps_left: Cell::new(steps),
    };
    let json = source.json.as_ref();
    let value = if is_object(schema) {
        Value::Object(fill_object(schema, json, &ex, true))
    } else {
        let value = match json {
            Some(json) => convert(schema, json, false, &ex),
            None => from_text("", schema, &ex),
        };
        value.unwrap_or(if schema_type(schema) == Some("array") {
            Value::Array(Vec::new())
        } else {
            Value::Null
        })
    };
    if ex.exhausted() {
        return Err(exceeded(
            "this schema's properties read more of the input than an extraction may (each looks through the input's keys or labelled values on its own)",
            format!("{steps} steps (extractionSteps); give properties an x-path, or split the input"),
        ));
    }
    Ok(value)
}

/// The labels every property of `schema` (at any depth) may be read by.
fn wanted_labels(name: &str, schema: &Value, wanted: &mut HashSet<String>) {
    wanted.extend(label_forms(name, schema));
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            wanted_labels(name, property, wanted);
        }
    }
    if let Some(items) = schema.get("items") {
        wanted_labels(name, items, wanted);
    }
}

fn schema_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

fn is_object(schema: &Value) -> bool {
    schema_type(schema) == Some("object")
        || (schema_type(schema).is_none() && schema.get("properties").is_some())
}

/// `texted`: whether the extraction's text may fill what the JSON scope does not (not inside
/// a JSON value being converted).
fn fill_object(schema: &Value, scope: Option<&Value>, ex: &Extraction, texted: bool) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return out };
    if !ex.step(properties.len()) {
        return out;
    }
    for (name, property) in properties {
        if let Some(value) = property_value(name, property, scope, ex, texted) {
            out.insert(name.clone(), value);
        }
    }
    out
}

fn property_value(
    name: &str,
    property: &Value,
    scope: Option<&Value>,
    ex: &Extraction,
    texted: bool,
) -> Option<Value> {
    if let Some(scope) = scope {
        if let Some(path) = property.get("x-path").and_then(Value::as_str) {
            if scans(path) && !ex.step_through(scope) {
                return None;
            }
            let found = shaping::search(path, scope).ok().filter(|v| !v.is_null())?;
            return convert(property, &found, false, ex);
        }
        if let Some(found) = find_key(scope, &key_forms(name, property), ex) {
            return convert(property, found, false, ex);
        }
        let of_objects = property.get("items").is_some_and(is_object);
        if schema_type(property) == Some("array") && of_objects && scope.is_array() {
            return convert(property, scope, false, ex);
        }
        if is_object(property) {
            return Some(Value::Object(fill_object(property, Some(scope), ex, texted))).filter(non_empty);
        }
    }
    if !texted || ex.text.trim().is_empty() {
        return None;
    }
    from_text(name, property, ex)
}

fn non_empty(value: &Value) -> bool {
    value.as_object().is_none_or(|map| !map.is_empty())
}

/// The property name, title and aliases, lower-case letters and digits only.
fn key_forms(name: &str, property: &Value) -> Vec<String> {
    aliases(name, property).iter().map(|alias| compact(alias)).filter(|k| !k.is_empty()).collect()
}

fn aliases(name: &str, property: &Value) -> Vec<String> {
    let mut aliases = vec![name.to_string()];
    if let Some(title) = property.get("title").and_then(Value::as_str) {
        aliases.push(title.to_string());
    }
    if let Some(labels) = property.get("x-labels").and_then(Value::as_array) {
        aliases.extend(labels.iter().filter_map(Value::as_str).map(str::to_string));
    }
    aliases
}

fn compact(text: &str) -> String {
    text.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// The first key (breadth-first) matching one of `keys`.
fn find_key<'a>(scope: &'a Value, keys: &[String], ex: &Extraction) -> Option<&'a Value> {
    let mut queue = VecDeque::from([scope]);
    while let Some(value) = queue.pop_front() {
        if !ex.step(1) {
            return None;
        }
        match value {
            Value::Object(map) => {
                if let Some((_, found)) = map.iter().find(|(key, _)| keys.contains(&compact(key))) {
                    return Some(found);
                }
                queue.extend(map.values());
            }
            Value::Array(items) => queue.extend(items),
            _ => {}
        }
    }
    None
}

/// A JSON value typed by the property's schema. `strict` (text input) refuses values that
/// do not parse; JSON input keeps them so validation names the problem.
fn convert(property: &Value, value: &Value, strict: bool, ex: &Extraction) -> Option<Value> {
    if value.is_null() {
        return None;
    }
    let converted = match (schema_type(property), value) {
        (Some("string") | None, Value::String(s)) => return string_value(property, s, strict),
        (Some("number"), Value::Number(_)) | (Some("boolean"), Value::Bool(_)) => Some(value.clone()),
        (Some("string"), Value::Number(_) | Value::Bool(_)) => {
            return string_value(property, &value.to_string(), strict)
        }
        (Some("number"), Value::String(s)) => {
            typed::parse_number(s).and_then(Number::from_f64).map(Value::Number)
        }
        (Some("integer"), Value::String(s)) => typed::parse_integer(s).map(Value::from),
        (Some("integer"), Value::Number(n)) => n
            .as_i64()
            .map(Value::from)
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| Value::from(f as i64))),
        (Some("boolean"), Value::String(s)) => typed::parse_boolean(s).map(Value::Bool),
        (Some("boolean"), Value::Number(n)) => Some(Value::Bool(n.as_f64() != Some(0.0))),
        (Some("object"), Value::Object(_)) if property.get("properties").is_some() => {
            Some(Value::Object(fill_object(property, Some(value), ex, false)))
        }
        (Some("array"), Value::Array(items)) => {
            if !ex.step(items.len()) {
                return None;
            }
            let item_schema = property.get("items").cloned().unwrap_or(Value::Bool(true));
            Some(Value::Array(
                items.iter().filter_map(|item| convert(&item_schema, item, strict, ex)).collect(),
            ))
        }
        (Some("array"), single) => {
            let item_schema = property.get("items").cloned().unwrap_or(Value::Bool(true));
            convert(&item_schema, single, strict, ex).map(|v| Value::Array(vec![v]))
        }
        (_, _) if strict => None,
        _ => Some(value.clone()),
    };
    match converted {
        Some(v) => Some(v),
        None if strict => None,
        None => Some(value.clone()),
    }
}

fn string_value(property: &Value, text: &str, strict: bool) -> Option<Value> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let parsed = match property.get("format").and_then(Value::as_str) {
        Some("date") => typed::parse_date(text),
        Some("email") => typed::parse_email(text),
        Some("phone" | "phone-number" | "tel") => typed::parse_phone(text),
        _ => match property.get("enum").and_then(Value::as_array) {
            Some(choices) => choices
                .iter()
                .filter_map(Value::as_str)
                .find(|choice| choice.eq_ignore_ascii_case(text))
                .map(str::to_string),
            None => Some(text.to_string()),
        },
    };
    match parsed {
        Some(value) => Some(Value::String(value)),
        None if strict => None,
        None => Some(Value::String(text.to_string())),
    }
}

fn from_text(name: &str, property: &Value, ex: &Extraction) -> Option<Value> {
    let labelled = || ex.labels.values(&label_forms(name, property), &mut |n| ex.step(n));
    match schema_type(property) {
        _ if is_object(property) => {
            Some(Value::Object(fill_object(property, None, ex, true))).filter(non_empty)
        }
        Some("array") => {
            let items = property.get("items").cloned().unwrap_or(Value::Bool(true));
            if is_object(&items) {
                return None;
            }
            let values: Vec<Value> = labelled()
                .into_iter()
                .filter_map(|candidate| convert(&items, &Value::String(candidate), true, ex))
                .collect();
            (!values.is_empty()).then_some(Value::Array(values))
        }
        _ => {
            let labelled = labelled()
                .into_iter()
                .find_map(|candidate| convert(property, &Value::String(candidate), true, ex));
            labelled.or_else(|| anywhere(property, ex))
        }
    }
}

/// A value by its format anywhere in the text, for unlabelled dates, e-mails and phones (each
/// format looked for once an extraction).
fn anywhere(property: &Value, ex: &Extraction) -> Option<Value> {
    let format = match property.get("format").and_then(Value::as_str)? {
        "date" => "date",
        "email" => "email",
        "phone" | "phone-number" | "tel" => "phone",
        _ => return None,
    };
    let mut firsts = ex.firsts.borrow_mut();
    let found = firsts.entry(format).or_insert_with(|| match format {
        "date" => typed::first_date(ex.text),
        "email" => typed::parse_email(ex.text),
        _ => typed::first_phone(ex.text),
    });
    found.clone().map(Value::String)
}

fn label_forms(name: &str, property: &Value) -> Vec<String> {
    let mut forms: Vec<String> =
        aliases(name, property).iter().map(|a| normalise_label(&split_words(a))).collect();
    forms.retain(|f| !f.is_empty());
    forms.dedup();
    forms
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn extract(schema: &Value, source: &Source) -> Value {
        super::extract(schema, source).expect("within its steps")
    }

    fn text_source(text: &str) -> Source {
        Source { json: None, text: text.to_string() }
    }

    #[test]
    fn labelled_text_values_are_typed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "invoiceNumber": {"type": "string"},
                "issueDate": {"type": "string", "format": "date", "title": "Date"},
                "total": {"type": "number"},
                "quantity": {"type": "integer", "x-labels": ["Qty"]},
                "paid": {"type": "boolean"},
                "contact": {"type": "string", "format": "email"},
                "phone": {"type": "string", "format": "phone"}
            }
        });
        let text = "ACME Corp                 Invoice No.: INV-42\n\
                    Date:  March 2, 2024\n\
                    Qty      1,200\n\
                    Subtotal: $1,000.00\n\
                    Total: $1,234.50\n\
                    Paid: yes\n\
                    Questions? billing@acme.example or +1 (555) 010-2000\n";
        assert_eq!(
            extract(&schema, &text_source(text)),
            json!({
                "invoiceNumber": "INV-42",
                "issueDate": "2024-03-02",
                "total": 1234.5,
                "quantity": 1200,
                "paid": true,
                "contact": "billing@acme.example",
                "phone": "+15550102000"
            })
        );
    }

    #[test]
    fn json_values_by_path_and_by_key_anywhere() {
        let schema = json!({
            "type": "object",
            "properties": {
                "customerName": {"type": "string"},
                "amount": {"type": "number", "x-path": "totals[0].gross"},
                "dueDate": {"type": "string", "format": "date"},
                "lines": {
                    "type": "array",
                    "x-path": "order.items",
                    "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}
                }
            },
            "required": ["customerName"]
        });
        let input = json!({
            "order": {
                "customer": {"customer_name": "Acme"},
                "items": [{"SKU": "A-1", "qty": "2"}, {"sku": "B-2", "qty": 3}]
            },
            "totals": [{"gross": "1.234,50 EUR"}],
            "Due Date": "05/01/2024"
        });
        assert_eq!(
            extract(&schema, &Source { json: Some(input), text: String::new() }),
            json!({
                "customerName": "Acme",
                "amount": 1234.5,
                "dueDate": "2024-05-01",
                "lines": [{"sku": "A-1", "qty": 2}, {"sku": "B-2", "qty": 3}]
            })
        );
    }

    #[test]
    fn csv_rows_fill_an_array_of_objects() {
        let schema = json!({
            "type": "object",
            "properties": {"rows": {"type": "array", "items": {
                "type": "object", "properties": {"sku": {"type": "string"}, "price": {"type": "number"}}}}}
        });
        let rows = vec![
            json!({"SKU": "A", "Price": "$1.50"}).as_object().unwrap().clone(),
            json!({"SKU": "B", "Price": "2"}).as_object().unwrap().clone(),
        ];
        let document = Document { input_type: "csv".into(), rows: Some(rows), ..Document::default() };
        let source = Source::of(&Payload::Document(document));
        assert_eq!(
            extract(&schema, &source),
            json!({"rows": [{"sku": "A", "price": 1.5}, {"sku": "B", "price": 2.0}]})
        );
    }

    #[test]
    fn unlabelled_formats_are_found_anywhere_and_missing_values_left_out() {
        let schema = json!({"type": "object", "properties": {
            "sentOn": {"type": "string", "format": "date"},
            "reference": {"type": "string"}
        }});
        assert_eq!(extract(&schema, &text_source("Sent 2024-01-05 by Ann")), json!({"sentOn": "2024-01-05"}));
    }

    #[test]
    fn labels_split_camel_case_and_read_number_abbreviations() {
        assert_eq!(label_forms("invoiceNumber", &json!({})), vec!["invoice number"]);
        assert_eq!(label_forms("VATId", &json!({})), vec!["vat id"]);
    }

    fn many_fields(count: usize) -> Value {
        let properties: Map<String, Value> =
            (0..count).map(|i| (format!("field{i}"), json!({"type": "string"}))).collect();
        json!({"type": "object", "properties": properties})
    }

    #[test]
    fn a_schema_of_many_properties_reads_a_long_text_once_and_finds_each_its_value() {
        let text: String = (0..20_000).map(|i| format!("field{i}: value {i}\nnote {i}\n")).collect();
        let output = extract(&many_fields(2_000), &text_source(&text));
        assert_eq!(output.as_object().unwrap().len(), 2_000);
        assert_eq!(output["field1999"], "value 1999");
    }

    #[test]
    fn an_extraction_past_its_steps_fails_naming_them() {
        let text: String = (0..100).map(|i| format!("field{i}: value {i}\n")).collect();
        assert!(extract_within(&many_fields(100), &text_source(&text), 1_000).is_ok());
        let err = extract_within(&many_fields(100), &text_source(&text), 150).unwrap_err();
        assert_eq!(err.kind, "input_limit");
        assert!(err.message.contains("150 steps (extractionSteps)"), "{}", err.message);
        let rows: Vec<Value> = (0..1_000).map(|i| json!({"id": i})).collect();
        let json_input = Source { json: Some(json!({"deep": {"rows": rows}})), text: String::new() };
        let err = extract_within(&many_fields(50), &json_input, 10_000).unwrap_err();
        assert_eq!(err.kind, "input_limit", "fifty properties each looking through a thousand rows");
        let by_path: Map<String, Value> = (0..50)
            .map(|i| (format!("field{i}"), json!({"type": "string", "x-path": "deep.rows[*].id"})))
            .collect();
        let by_path = json!({"type": "object", "properties": by_path});
        let err = extract_within(&by_path, &json_input, 10_000).unwrap_err();
        assert_eq!(err.kind, "input_limit", "fifty projections each looking through two thousand values");
        let simple = json!({"type": "object", "properties": {"first": {"type": "integer", "x-path": "deep.rows[0].id"}}});
        assert_eq!(
            extract_within(&simple, &json_input, 10).unwrap(),
            json!({"first": 0}),
            "a field path scans nothing"
        );
        assert!(scans("rows[*].id") && scans("rows[]") && scans("length(rows)") && !scans("a.b[-1].\"c d\""));
    }
}
