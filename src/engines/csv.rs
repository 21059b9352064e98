//! A small RFC 4180 reader: comma-separated fields, double-quoted fields with `""` escapes
//! and line breaks inside quotes, CRLF or LF records. The first record is the header; each
//! further record becomes an object keyed by it (missing fields are empty strings, extra
//! fields are named `column<N>`, 1-based). Values stay strings: typing is the schema's job.

use serde_json::{Map, Value};

/// The records of a CSV text, as rows of fields.
pub fn records(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut in_quotes = false;
    let mut line = 1;
    // Whether the current record has anything yet (a blank line is no record).
    let mut started = false;
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => {
                in_quotes = true;
                started = true;
            }
            '"' => return Err(format!("line {line}: a quote inside an unquoted field")),
            ',' => {
                record.push(std::mem::take(&mut field));
                started = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                line += 1;
                if started || !field.is_empty() {
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                started = false;
            }
            _ => {
                field.push(c);
                started = true;
            }
        }
    }
    if in_quotes {
        return Err(format!("line {line}: a quoted field is not closed"));
    }
    if started || !field.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

/// An upper bound of the cells [`rows`] makes of `text` (each row has at least the header's
/// columns), counted without building anything: one pass over commas and line breaks
/// outside quotes.
pub fn cell_bound(text: &str) -> usize {
    let (mut in_quotes, mut fields, mut records, mut header) = (false, 0usize, 1usize, None);
    for byte in text.bytes() {
        match byte {
            b'"' => in_quotes = !in_quotes,
            b',' if !in_quotes => fields += 1,
            b'\n' if !in_quotes => {
                header.get_or_insert(fields + 1);
                records += 1;
            }
            _ => {}
        }
    }
    let header = header.unwrap_or(fields + 1);
    header.saturating_mul(records).saturating_add(fields + records)
}

/// The rows of a CSV text keyed by its header line.
pub fn rows(text: &str) -> Result<Vec<Map<String, Value>>, String> {
    let mut records = records(text)?.into_iter();
    let Some(header) = records.next() else { return Ok(Vec::new()) };
    let header: Vec<String> = header.into_iter().map(|name| name.trim().to_string()).collect();
    Ok(records
        .map(|record| {
            let mut row = Map::new();
            for (i, name) in header.iter().enumerate() {
                row.insert(name.clone(), Value::String(record.get(i).cloned().unwrap_or_default()));
            }
            for (i, extra) in record.into_iter().enumerate().skip(header.len()) {
                row.insert(format!("column{}", i + 1), Value::String(extra));
            }
            row
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quoted_fields_keep_commas_quotes_and_line_breaks() {
        let text = "name,note\r\n\"Acme, Inc.\",\"said \"\"hi\"\"\nthen left\"\r\nBeta,\n";
        assert_eq!(
            records(text).unwrap(),
            vec![
                vec!["name".to_string(), "note".into()],
                vec!["Acme, Inc.".into(), "said \"hi\"\nthen left".into()],
                vec!["Beta".into(), "".into()],
            ]
        );
    }

    #[test]
    fn rows_are_keyed_by_the_header() {
        let rows = rows("sku,qty\nA-1,3\nB-2\n\nC-3,1,extra").unwrap();
        assert_eq!(Value::Object(rows[0].clone()), json!({"sku": "A-1", "qty": "3"}));
        assert_eq!(Value::Object(rows[1].clone()), json!({"sku": "B-2", "qty": ""}));
        assert_eq!(Value::Object(rows[2].clone()), json!({"sku": "C-3", "qty": "1", "column3": "extra"}));
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn the_cell_bound_is_at_least_the_cells_of_the_rows() {
        for text in ["sku,qty\nA-1,3\nB-2\n\nC-3,1,extra", "a,b,c\n\n\nx", "\"a,\nb\",c\n1,2", ""] {
            let cells: usize = rows(text).unwrap().iter().map(|row| row.len()).sum();
            assert!(cell_bound(text) >= cells, "{text:?}");
        }
    }

    #[test]
    fn broken_quoting_is_an_error() {
        assert!(records("a,\"open\nb").unwrap_err().contains("not closed"));
        assert!(records("a,b\"c\n").unwrap_err().contains("line 1"));
    }
}
