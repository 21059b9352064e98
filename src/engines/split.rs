//! Split: one item per piece of the input.
//!
//! - `splitType: "print_page"` (SDK): one item per page of a document (a PDF's pages; other
//!   documents have one page).
//! - `splitConfig` (canon extension, read by `functions::type_settings::split`):
//!   `{by, itemsPath?, delimiter?}` with `by`:
//!   - `"pages"`: as `print_page`;
//!   - `"rows"`: one JSON item per CSV row (or per element of a JSON array input);
//!   - `"attachments"`: one document per e-mail attachment;
//!   - `"items"`: one JSON item per element of the array at `itemsPath` (JMESPath subset;
//!     default: the input itself) of a JSON input;
//!   - `"delimiter"`: one text document per piece of the text between occurrences of
//!     `delimiter` (required; empty pieces dropped).
//! - Neither set: pages for a document, items for a JSON input.
//! - `splitType: "semantic_page"` is not supported (an `unsupported` error).
//!
//! At most [`MAX_SPLIT_ITEMS`] items: each is an event and a run of every node downstream, so a
//! 2 MB body of `[0,0,…]` made a million of each (a failed call naming the limit past it).
//!
//! Each item's event output: `{outputType, printPageOutput: {itemOffset, itemCount}}`, where
//! `outputType` is `print_page` for pages and the `by` value otherwise (0-based offsets);
//! attachments add `fileName`.

use super::limits::MAX_SPLIT_ITEMS;
use super::{invalid_config, payload_value, setting, Document, EngineError, Payload, SplitItem};
use crate::functions::type_settings::split::{self, By};
use crate::shaping;
use crate::versions::FunctionVersion;
use serde_json::{json, Value};

pub fn run(function: &FunctionVersion, input: &Payload) -> Result<Vec<SplitItem>, EngineError> {
    let by = split::by(setting(function, "splitType"), setting(function, "splitConfig"))?;
    let by = match by {
        By::Input if matches!(input, Payload::Json(_)) => By::Items("@"),
        By::Input => By::Pages,
        by => by,
    };
    let (pieces, output_type): (Vec<(Payload, Option<String>)>, &str) = match by {
        By::Pages | By::Input => (
            document(input, "pages")?
                .pages
                .iter()
                .map(|page| (Payload::Document(text_document(page)), None))
                .collect(),
            "print_page",
        ),
        By::Rows => (rows(input)?.into_iter().map(|row| (Payload::Json(row), None)).collect(), "rows"),
        By::Attachments => (
            document(input, "attachments")?
                .attachments
                .iter()
                .map(|a| (Payload::Document(a.clone()), a.file_name.clone()))
                .collect(),
            "attachments",
        ),
        By::Items(path) => {
            (items(input, path)?.into_iter().map(|item| (Payload::Json(item), None)).collect(), "items")
        }
        By::Delimiter(delimiter) => {
            // Counted before any piece is built: each is a document of its own (a text of
            // 16 million commas was 16 million documents before the count below refused it).
            let text = text_of(input);
            let pieces = || text.split(delimiter).map(str::trim).filter(|piece| !piece.is_empty());
            check_count(pieces().count(), "delimiter")?;
            (pieces().map(|piece| (Payload::Document(text_document(piece)), None)).collect(), "delimiter")
        }
    };
    let count = pieces.len();
    check_count(count, output_type)?;
    Ok(pieces
        .into_iter()
        .enumerate()
        .map(|(offset, (payload, file_name))| {
            let mut output = json!({
                "outputType": output_type,
                "printPageOutput": {"itemOffset": offset, "itemCount": count},
            });
            if let Some(name) = file_name {
                output["fileName"] = Value::String(name);
            }
            SplitItem { payload, output }
        })
        .collect())
}

fn document<'a>(input: &'a Payload, by: &str) -> Result<&'a Document, EngineError> {
    match input {
        Payload::Document(document) => Ok(document),
        Payload::Json(_) => Err(invalid_config(format!("split by {by} needs a document input, not JSON"))),
    }
}

fn text_document(text: &str) -> Document {
    Document {
        input_type: "text".into(),
        text: text.to_string(),
        pages: vec![text.to_string()],
        ..Document::default()
    }
}

fn text_of(input: &Payload) -> String {
    match input {
        Payload::Document(document) => document.text.clone(),
        Payload::Json(Value::String(text)) => text.clone(),
        Payload::Json(value) => value.to_string(),
    }
}

/// An `input_limit` error for a split of more than [`MAX_SPLIT_ITEMS`] items.
fn check_count(count: usize, output_type: &str) -> Result<(), EngineError> {
    if count > MAX_SPLIT_ITEMS {
        return Err(super::limits::exceeded(
            format!("the split makes {count} items (by {output_type})"),
            format!("{MAX_SPLIT_ITEMS} items a split (splitItems); split the input before sending it"),
        ));
    }
    Ok(())
}

fn rows(input: &Payload) -> Result<Vec<Value>, EngineError> {
    match input {
        Payload::Document(Document { rows: Some(rows), .. }) => {
            Ok(rows.iter().cloned().map(Value::Object).collect())
        }
        Payload::Document(Document { json: Some(Value::Array(items)), .. })
        | Payload::Json(Value::Array(items)) => Ok(items.clone()),
        _ => Err(invalid_config("split by rows needs a CSV input (or a JSON array)")),
    }
}

fn items(input: &Payload, path: &str) -> Result<Vec<Value>, EngineError> {
    let value = match input {
        Payload::Document(Document { json: Some(json), .. }) => json.clone(),
        other => payload_value(other),
    };
    match shaping::search(path, &value)? {
        Value::Array(items) => Ok(items),
        _ => Err(invalid_config(format!("split by items: `{path}` is not an array in the input"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(body: Value, input: Payload) -> Result<Vec<SplitItem>, EngineError> {
        let function = FunctionVersion {
            function_id: "f".into(),
            function_name: "splitter".into(),
            version_num: 1,
            function_type: "split".into(),
            body,
        };
        run(&function, &input)
    }

    #[test]
    fn items_at_a_path_report_offset_and_count() {
        let input = Payload::Json(json!({"order": {"lines": [{"sku": "A"}, {"sku": "B"}]}}));
        let items =
            split(json!({"splitConfig": {"by": "items", "itemsPath": "order.lines"}}), input).unwrap();
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[1].payload, Payload::Json(v) if v == &json!({"sku": "B"})));
        assert_eq!(
            items[1].output,
            json!({"outputType": "items", "printPageOutput": {"itemOffset": 1, "itemCount": 2}})
        );
    }

    #[test]
    fn a_split_by_delimiter_past_its_items_limit_fails_before_making_them() {
        let text = vec!["a"; MAX_SPLIT_ITEMS + 1].join(",");
        let input = Payload::Json(Value::String(text));
        let err = split(json!({"splitConfig": {"by": "delimiter", "delimiter": ","}}), input).unwrap_err();
        assert!(err.message.contains("10001 items (by delimiter)"), "{}", err.message);
    }

    #[test]
    fn a_split_past_its_items_limit_fails_naming_it() {
        let at_limit = Payload::Json(Value::Array(vec![json!(0); MAX_SPLIT_ITEMS]));
        assert_eq!(split(json!({}), at_limit).unwrap().len(), MAX_SPLIT_ITEMS);
        let past = Payload::Json(Value::Array(vec![json!(0); MAX_SPLIT_ITEMS + 1]));
        let err = split(json!({}), past).unwrap_err();
        assert_eq!(err.kind, "input_limit");
        assert!(
            err.message.contains("10001 items (by items)") && err.message.contains("10000 items a split"),
            "{}",
            err.message
        );
    }

    #[test]
    fn csv_rows_become_json_items() {
        let csv = super::super::inputs::decode("csv", b"sku,qty\nA,1\nB,2\n").unwrap();
        let items = split(json!({"splitConfig": {"by": "rows"}}), Payload::Document(csv)).unwrap();
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[0].payload, Payload::Json(v) if v == &json!({"sku": "A", "qty": "1"})));
        assert_eq!(items[0].output["outputType"], "rows");
        let err = split(json!({"splitConfig": {"by": "rows"}}), Payload::Json(json!({"a": 1}))).unwrap_err();
        assert_eq!(err.kind, "invalid_config");
    }

    #[test]
    fn delimiter_pieces_and_semantic_pages() {
        let input = Payload::Json(json!("one\n---\n\n---\ntwo"));
        let items =
            split(json!({"splitConfig": {"by": "delimiter", "delimiter": "---"}}), input.clone()).unwrap();
        let texts: Vec<String> = items
            .iter()
            .map(|i| match &i.payload {
                Payload::Document(d) => d.text.clone(),
                Payload::Json(_) => String::new(),
            })
            .collect();
        assert_eq!(texts, vec!["one", "two"]);
        assert_eq!(split(json!({"splitType": "semantic_page"}), input).unwrap_err().kind, "unsupported");
    }
}
