//! Labelled values of a text (`Label: value`, a label and a value in neighbouring layout
//! columns, a value on the line under `Label:`), read for every label a schema wants in one
//! pass.
//!
//! Each property used to read the whole text on its own: a schema of many properties over a
//! long text (both the tenant's) was properties × text (100 properties over 2 MiB: 36 s in a
//! debug build; a 2 MB schema holds 100,000). [`LabelIndex::build`] reads the text once,
//! keeping only the values whose label is one a property wants; a property then reads its own.

use std::collections::{BTreeMap, HashMap, HashSet};

/// Most words of a wanted label that a longer label may start or end with (a partial match).
/// Longer wanted labels match whole labels only: a label's word prefixes and suffixes are
/// looked up one by one, and a hostile label has as many as it has words.
pub const PARTIAL_WORDS: usize = 32;

/// The values of a text whose label some property wants, by wanted label.
#[derive(Debug, Default)]
pub struct LabelIndex {
    /// Per wanted label, each labelled value's score and index into `values`, in text order.
    hits: HashMap<String, Vec<(u8, usize)>>,
    values: Vec<String>,
}

impl LabelIndex {
    /// Reads `text` once for the labels in `wanted` (each as [`normalise_label`] gives it).
    pub fn build(text: &str, wanted: &HashSet<String>) -> Self {
        let mut index = Self::default();
        let longest = wanted.iter().map(String::len).max().unwrap_or(0);
        if longest == 0 {
            return index;
        }
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let segments = columns(line);
            for (i, segment) in segments.iter().enumerate() {
                let (label, after_colon) = match segment.split_once(':') {
                    Some((label, after)) => (label, Some(after.trim())),
                    None if i + 1 < segments.len() => (*segment, None),
                    None => continue,
                };
                let label = normalise_label(label);
                let matched = matches(&label, after_colon.is_some(), wanted, longest);
                if matched.is_empty() {
                    continue;
                }
                let value = match after_colon {
                    Some(after) if !after.is_empty() => after,
                    Some(_) => match segments.get(i + 1) {
                        Some(next) => next,
                        None => lines
                            .peek()
                            .map(|next| next.trim())
                            .filter(|next| !next.contains(':'))
                            .unwrap_or_default(),
                    },
                    None => segments[i + 1],
                };
                if value.is_empty() {
                    continue;
                }
                index.values.push(value.to_string());
                for (wanted, score) in matched {
                    index.hits.entry(wanted.to_string()).or_default().push((score, index.values.len() - 1));
                }
            }
        }
        index
    }

    /// Values labelled with one of `labels`, best label match first, then in text order; each
    /// hit read is one of `steps` (false once they have run out, with what was read so far).
    pub fn values(&self, labels: &[String], steps: &mut dyn FnMut(usize) -> bool) -> Vec<String> {
        let mut best: BTreeMap<usize, u8> = BTreeMap::new();
        for label in labels {
            let hits = self.hits.get(label).map(Vec::as_slice).unwrap_or_default();
            if !steps(hits.len()) {
                return Vec::new();
            }
            for &(score, value) in hits {
                let kept = best.entry(value).or_default();
                *kept = (*kept).max(score);
            }
        }
        let mut found: Vec<(u8, usize)> = best.into_iter().map(|(value, score)| (score, value)).collect();
        found.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        found.into_iter().map(|(_, value)| self.values[value].clone()).collect()
    }
}

/// The wanted labels `label` matches, with their scores: 3 the same label before a colon, 2 the
/// same label before a column gap, 1 a label that starts or ends with the wanted words before
/// a colon.
fn matches<'w>(label: &str, colon: bool, wanted: &'w HashSet<String>, longest: usize) -> Vec<(&'w str, u8)> {
    let mut found = Vec::new();
    if let Some(same) = wanted.get(label) {
        found.push((same.as_str(), if colon { 3 } else { 2 }));
    }
    if !colon {
        return found;
    }
    let spaces: Vec<usize> = label.match_indices(' ').map(|(at, _)| at).collect();
    let starts = spaces.iter().take(PARTIAL_WORDS).map(|&at| &label[..at]);
    let ends = spaces.iter().rev().take(PARTIAL_WORDS).map(|&at| &label[at + 1..]);
    for part in starts.chain(ends).filter(|part| part.len() <= longest) {
        if let Some(hit) = wanted.get(part) {
            found.push((hit.as_str(), 1));
        }
    }
    found
}

/// `invoiceNumber` → "invoice Number", `total_amount` → "total amount", `VATId` → "VAT Id".
pub fn split_words(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let boundary = c.is_uppercase()
            && previous.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if boundary {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Lower-case words; `No.`, `Nr`, `Num`, `#` read as "number".
pub fn normalise_label(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| match c {
            '#' => " number ".to_string(),
            c if c.is_alphanumeric() => c.to_lowercase().collect(),
            _ => " ".to_string(),
        })
        .collect();
    let mut words: Vec<&str> = Vec::new();
    for word in spaced.split_whitespace() {
        let word = match word {
            "no" | "nr" | "num" | "nbr" => "number",
            other => other,
        };
        if !(word == "number" && words.last() == Some(&"number")) {
            words.push(word);
        }
    }
    words.join(" ")
}

/// Layout columns: pieces of a line separated by a tab or two or more spaces.
fn columns(line: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let gap = if bytes[i] == b'\t' {
            1
        } else if bytes[i] == b' ' && bytes.get(i + 1) == Some(&b' ') {
            bytes[i..].iter().take_while(|&&b| b == b' ' || b == b'\t').count()
        } else {
            0
        };
        if gap > 0 {
            pieces.push(&line[start..i]);
            i += gap;
            start = i;
        } else {
            i += 1;
        }
    }
    pieces.push(&line[start..]);
    pieces.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(text: &str, wanted: &[&str]) -> LabelIndex {
        LabelIndex::build(text, &wanted.iter().map(|w| w.to_string()).collect())
    }

    fn values(index: &LabelIndex, labels: &[&str]) -> Vec<String> {
        let labels: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        index.values(&labels, &mut |_| true)
    }

    #[test]
    fn labels_read_number_abbreviations_and_columns_split_on_gaps() {
        assert_eq!(normalise_label("Invoice #"), "invoice number");
        assert_eq!(normalise_label("PO Nr."), "po number");
        assert_eq!(columns("Total      $1,234.50\tEUR"), vec!["Total", "$1,234.50", "EUR"]);
    }

    #[test]
    fn exact_labels_come_first_then_partial_ones_each_in_text_order() {
        let text =
            "Order date: 2024-01-02\nDate: 2024-03-04\nDate    2024-05-06\nDelivery date: 2024-07-08\n";
        let index = index(text, &["date"]);
        assert_eq!(values(&index, &["date"]), vec!["2024-03-04", "2024-05-06", "2024-01-02", "2024-07-08"]);
    }

    #[test]
    fn a_value_may_sit_in_the_next_column_or_on_the_next_line() {
        let index =
            index("Total:    $5\nVendor:\nACME Corp\nBuyer:\nName: x\n", &["total", "vendor", "buyer"]);
        assert_eq!(values(&index, &["total"]), vec!["$5"]);
        assert_eq!(values(&index, &["vendor"]), vec!["ACME Corp"]);
        assert!(values(&index, &["buyer"]).is_empty(), "a labelled line under it is not its value");
    }

    #[test]
    fn a_value_two_forms_of_a_property_label_is_read_once_at_its_best_score() {
        let index = index("Invoice number: 7\nNumber: 8\n", &["invoice number", "number"]);
        assert_eq!(values(&index, &["invoice number", "number"]), vec!["7", "8"]);
    }

    #[test]
    fn a_wanted_label_of_more_than_the_partial_words_matches_only_whole_labels() {
        let long = vec!["word"; PARTIAL_WORDS + 1].join(" ");
        let index = index(
            &format!(
                "{long} extra: 9
{long}: 10
the {long}: 11
some total: 12
"
            ),
            &[&long, "total"],
        );
        assert_eq!(values(&index, &[&long]), vec!["10"]);
        assert_eq!(values(&index, &["total"]), vec!["12"], "a short one ends a label of any length");
    }

    #[test]
    fn reading_stops_when_the_steps_run_out() {
        let index = index("A: 1\nA: 2\n", &["a"]);
        let mut left = 1_usize;
        let mut steps = |n: usize| {
            left = left.saturating_sub(n);
            left > 0
        };
        assert!(index.values(&["a".to_string()], &mut steps).is_empty());
    }
}
