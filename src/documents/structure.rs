//! A decoded document's structure: its pages cut into sections (`heading`, `paragraph`,
//! `table`, `list`), each with a label, its 1-based page and its text.
//!
//! Read from what decoding already produced, without a model:
//! - text of any kind (PDF text layer or OCR, plain text, HTML stripped, an e-mail body):
//!   blocks separated by blank lines. A block whose lines mostly hold column gaps (two or
//!   more runs of 2+ spaces, a tab or a `|`) is a table; one whose lines all start with a
//!   bullet or a number is a list; a single short line without closing punctuation that is
//!   upper case, numbered (`2.1 Scope`), marked (`# Terms`) or Title Case is a heading; the
//!   rest are paragraphs.
//! - CSV: one table. JSON: one section per top-level field (a table for an array of
//!   objects, a list for other arrays).
//! - An e-mail: a heading with its subject, then the body, then each attachment's sections
//!   on the pages after.
//!
//! Labels: a heading's own text; any other section is labelled by the heading it sits
//! under (or its page) and its place there: `Payment Terms › paragraph 2`. Labels are unique
//! within a document, so a mention's `sectionLabel` names one section.

use crate::engines::Document;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// Longest label kept (characters); longer headings are cut.
const LABEL_MAX: usize = 120;
/// Sections one document is cut into at most; the rest of its text joins the last one (its
/// label and page those of where it starts). A text is the tenant's input: 32 MiB of blank-line
/// separated letters were 10 million sections, each with its label, kept as rows (gigabytes).
pub const MAX_SECTIONS: usize = 20_000;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Section {
    pub label: String,
    #[serde(rename = "type")]
    pub section_type: String,
    pub page: i64,
    pub text: String,
}

/// Sections of a document, in reading order, and its page count.
pub fn sections(document: &Document) -> (Vec<Section>, i64) {
    let mut builder = Builder::default();
    add_document(&mut builder, document, 0, None);
    let pages = builder.max_page.max(1);
    (builder.sections, pages)
}

#[derive(Default)]
struct Builder {
    sections: Vec<Section>,
    /// The heading the next sections sit under.
    context: Option<String>,
    /// Count per (context, type), for labels.
    counts: HashMap<(String, String), usize>,
    used: HashMap<String, usize>,
    max_page: i64,
}

impl Builder {
    fn push(&mut self, section_type: &str, page: i64, text: String, prefix: Option<&str>) {
        let text = text.trim_end().to_string();
        if text.trim().is_empty() {
            return;
        }
        self.max_page = self.max_page.max(page);
        if self.sections.len() >= MAX_SECTIONS {
            if let Some(last) = self.sections.last_mut() {
                last.text.push_str("\n\n");
                last.text.push_str(&text);
            }
            return;
        }
        let label = if section_type == "heading" {
            let heading: String =
                text.trim().trim_start_matches('#').trim().chars().take(LABEL_MAX).collect();
            let heading = match prefix {
                Some(prefix) => format!("{prefix} › {heading}"),
                None => heading,
            };
            self.context = Some(heading.clone());
            heading
        } else {
            let context = self.context.clone().unwrap_or_else(|| match prefix {
                Some(prefix) => format!("{prefix} › page {page}"),
                None => format!("page {page}"),
            });
            let count = self.counts.entry((context.clone(), section_type.to_string())).or_default();
            *count += 1;
            format!("{context} › {section_type} {count}")
        };
        // A heading repeated (a running header on every page) stays unique: "Terms (2)".
        let seen = self.used.entry(label.clone()).or_default();
        *seen += 1;
        let label = if *seen == 1 { label } else { format!("{label} ({seen})") };
        self.sections.push(Section { label, section_type: section_type.into(), page, text });
    }
}

/// Adds a document's sections, its pages numbered after `page_offset`.
fn add_document(builder: &mut Builder, document: &Document, page_offset: i64, prefix: Option<&str>) {
    let first_page = page_offset + 1;
    match document.input_type.as_str() {
        "csv" => builder.push("table", first_page, document.text.clone(), prefix),
        "json" => add_json(builder, document.json.as_ref(), first_page, prefix),
        "email" => {
            if let Some(email) = &document.email {
                if !email.subject.trim().is_empty() {
                    builder.push("heading", first_page, email.subject.clone(), prefix);
                }
            }
            add_text(builder, &document.text, first_page, prefix);
        }
        _ => {
            for (index, page) in document.pages.iter().enumerate() {
                add_text(builder, page, page_offset + index as i64 + 1, prefix);
            }
        }
    }
    builder.max_page = builder.max_page.max(page_offset + document.pages.len().max(1) as i64);
    for attachment in &document.attachments {
        // Cut like a heading: every label of the attachment's sections starts with it.
        let name: String =
            attachment.file_name.as_deref().unwrap_or("attachment").chars().take(LABEL_MAX).collect();
        let offset = builder.max_page;
        let saved = builder.context.take();
        add_document(builder, attachment, offset, Some(&name));
        builder.context = saved;
    }
}

fn add_json(builder: &mut Builder, json: Option<&Value>, page: i64, prefix: Option<&str>) {
    let Some(Value::Object(fields)) = json else {
        if let Some(value) = json {
            builder.push("paragraph", page, serde_json::to_string_pretty(value).unwrap_or_default(), prefix);
        }
        return;
    };
    for (name, value) in fields {
        builder.push("heading", page, name.clone(), prefix);
        let section_type = match value {
            Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => "table",
            Value::Array(_) => "list",
            _ => "paragraph",
        };
        let text = match value {
            Value::String(text) => text.clone(),
            other => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        builder.push(section_type, page, text, prefix);
    }
}

fn add_text(builder: &mut Builder, text: &str, page: i64, prefix: Option<&str>) {
    let mut block: Vec<&str> = Vec::new();
    let flush = |builder: &mut Builder, block: &mut Vec<&str>| {
        if block.is_empty() {
            return;
        }
        let kind = block_type(block);
        builder.push(kind, page, block.join("\n"), prefix);
        block.clear();
    };
    for line in text.lines() {
        if line.trim().is_empty() {
            flush(builder, &mut block);
        } else if block.is_empty() && is_heading(&[line]) {
            // A heading line starts its own section even without a blank line after it.
            builder.push("heading", page, line.trim().to_string(), prefix);
        } else {
            block.push(line);
        }
    }
    flush(builder, &mut block);
}

/// A `Key: value` line reads as a field, not a heading.
fn is_field(line: &str) -> bool {
    line.split_once(':').is_some_and(|(_, value)| !value.trim().is_empty())
}

fn block_type(lines: &[&str]) -> &'static str {
    if is_heading(lines) {
        "heading"
    } else if lines.len() >= 2 && lines.iter().filter(|l| is_table_row(l)).count() * 2 > lines.len() {
        "table"
    } else if lines.iter().all(|l| is_list_item(l)) {
        "list"
    } else {
        "paragraph"
    }
}

fn is_heading(lines: &[&str]) -> bool {
    let [line] = lines else { return false };
    let line = line.trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    if line.is_empty() || line.chars().count() > 80 || words.len() > 10 {
        return false;
    }
    if line.ends_with(['.', ',', ';'])
        || is_field(line)
        || is_table_row(line)
        || is_list_item(line) && !is_numbered_heading(line)
    {
        return false;
    }
    let letters: Vec<char> = line.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.is_empty() {
        return false;
    }
    let upper = letters.iter().all(|c| c.is_uppercase()) && letters.len() >= 3;
    let title = words.iter().filter(|w| w.chars().next().is_some_and(char::is_alphabetic)).all(|w| {
        w.chars().next().is_some_and(char::is_uppercase)
            || matches!(*w, "of" | "and" | "the" | "to" | "for" | "in")
    });
    line.starts_with('#') || upper || is_numbered_heading(line) || (title && words.len() <= 6)
}

/// `2.1 Scope`, `3) Payment`: a number, then a capitalised word.
fn is_numbered_heading(line: &str) -> bool {
    let Some((number, rest)) = line.split_once(' ') else { return false };
    let number = number.trim_end_matches(['.', ')']);
    !number.is_empty()
        && number.split('.').all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
        && rest.chars().next().is_some_and(char::is_uppercase)
}

fn is_table_row(line: &str) -> bool {
    let gaps = line.trim().split("  ").filter(|piece| !piece.trim().is_empty()).count();
    line.contains('\t') || line.contains('|') || gaps >= 3
}

fn is_list_item(line: &str) -> bool {
    let line = line.trim_start();
    if line.starts_with(['-', '*', '•', '–']) {
        return true;
    }
    let digits: String = line.chars().take_while(char::is_ascii_digit).collect();
    !digits.is_empty() && line[digits.len()..].starts_with(['.', ')']) && digits.len() <= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(pages: &[&str]) -> Document {
        Document {
            input_type: "pdf".into(),
            text: pages.join("\n"),
            pages: pages.iter().map(|p| p.to_string()).collect(),
            ..Document::default()
        }
    }

    #[test]
    fn pages_split_into_headings_paragraphs_tables_and_lists() {
        let document = text(&[
            "SERVICE AGREEMENT\n\nThis agreement is made between Acme Corp and Initech.\n\n1. Scope\nThe work covers design.",
            "Payment Terms\n- Net 30\n- Late fee 2%\n\nItem      Qty      Price\nBolts     10       5.00\nNuts      20       2.00",
        ]);
        let (sections, pages) = sections(&document);
        assert_eq!(pages, 2);
        let seen: Vec<(&str, &str, i64)> =
            sections.iter().map(|s| (s.label.as_str(), s.section_type.as_str(), s.page)).collect();
        assert_eq!(
            seen,
            vec![
                ("SERVICE AGREEMENT", "heading", 1),
                ("SERVICE AGREEMENT › paragraph 1", "paragraph", 1),
                ("1. Scope", "heading", 1),
                ("1. Scope › paragraph 1", "paragraph", 1),
                ("Payment Terms", "heading", 2),
                ("Payment Terms › list 1", "list", 2),
                ("Payment Terms › table 1", "table", 2),
            ]
        );
    }

    #[test]
    fn field_lines_are_a_paragraph_and_labels_stay_unique() {
        let document = text(&[
            "Invoice number: INV-1\nVendor: Acme\n\nTerms\n\nTerms\n\nPay soon please.\n\nBuyer: Initech",
        ]);
        let (sections, _) = sections(&document);
        let labels: Vec<&str> = sections.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            vec!["page 1 › paragraph 1", "Terms", "Terms (2)", "Terms › paragraph 1", "Terms › paragraph 2"]
        );
        let texts = sections.iter().map(|s| s.text.as_str());
        assert_eq!(crate::documents::places::first_places(&["acme"], texts), vec![Some(0)]);
    }

    #[test]
    fn a_document_of_more_blocks_than_sections_keeps_its_text_in_the_last_one() {
        let blocks: Vec<String> = (0..MAX_SECTIONS + 5).map(|i| format!("block number {i}.")).collect();
        let (sections, _) = sections(&text(&[&blocks.join("\n\n")]));
        assert_eq!(sections.len(), MAX_SECTIONS);
        let last = sections.last().unwrap();
        let tail = format!("block number {}.", MAX_SECTIONS + 4);
        assert!(last.text.starts_with(&format!("block number {}.", MAX_SECTIONS - 1)), "{}", last.text);
        assert!(last.text.ends_with(&tail), "nothing lost: {}", last.text);
    }

    #[test]
    fn an_attachments_long_file_name_is_cut_in_its_sections_labels() {
        let attachment = Document { file_name: Some("x".repeat(100_000)), ..text(&["Paid in full."]) };
        let document = Document { attachments: vec![attachment], ..text(&["See attached."]) };
        let (sections, _) = sections(&document);
        let label = &sections.last().unwrap().label;
        assert!(
            label.starts_with(&"x".repeat(LABEL_MAX)) && label.chars().count() < LABEL_MAX + 30,
            "{label}"
        );
    }

    #[test]
    fn json_fields_and_csv_become_sections() {
        let json: Value = serde_json::json!({"items": [{"a": 1}], "note": "hi"});
        let document = Document {
            input_type: "json".into(),
            json: Some(json),
            pages: vec![String::new()],
            ..Document::default()
        };
        let types: Vec<String> = sections(&document).0.into_iter().map(|s| s.section_type).collect();
        assert_eq!(types, vec!["heading", "table", "heading", "paragraph"]);
        let csv = Document { input_type: "csv".into(), text: "a,b\n1,2".into(), ..Document::default() };
        assert_eq!(sections(&csv).0[0].section_type, "table");
    }
}
