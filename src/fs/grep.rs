//! `grep`: a substring (default) or a regular expression over the items of parsed documents
//! — sections, the entities linked from them, the relationships between those — any case
//! unless `ignoreCase: false`.
//!
//! The record store's trigram index picks candidates containing a literal every match must
//! contain (the pattern itself, or a regular expression's required prefix); each candidate
//! is then checked here. Regular expressions use RE2 syntax (the `regex` crate), the syntax
//! of Go's `regexp` that bem-sdk documents; backreferences and look-around are refused by
//! both.

use super::request::{self, FsRequest, Op};
use super::FsResponse;
use crate::error::{ServiceError, ServiceResult};
use crate::graph::Tenant;
use crate::patterns::{OutOfTime, Pattern};
use crate::store::records::documents::{ItemQuery, ItemRow};
use crate::store::records::Records;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Characters of context each side of a match in a snippet.
const SNIPPET_CONTEXT: usize = 60;
/// Longest pattern accepted.
const PATTERN_MAX: usize = 1_000;
/// Candidates read per query, and the most of their text it reads (one candidate at least):
/// a section can be a whole CSV or JSON document, 32 MiB.
const BATCH: u32 = 500;
pub const BATCH_BYTES: usize = 16 * 1024 * 1024;
/// Longest match shown (bytes, cut at a character): a pattern like `.+` matches a section
/// whole.
const MATCH_SHOWN: usize = 1_000;
/// Time one request spends matching candidates before it answers with what it found and a
/// cursor, as after [`super::SCAN_LIMIT`] candidates: a regular expression the DFA cannot
/// hold runs microseconds a byte, so 20,000 long candidates could take minutes, and one
/// 32 MiB candidate five. A candidate is searched a window at a time ([`crate::patterns`]):
/// when the budget runs out inside one, the rest of it is not searched, and the answer's
/// `hint` says which it was.
pub const MATCH_BUDGET: Duration = Duration::from_secs(2);

/// What one grep request reads and matches at most.
#[derive(Clone, Debug)]
pub struct Bounds {
    /// Candidates read ([`super::SCAN_LIMIT`]).
    pub candidates: usize,
    /// Time spent matching them ([`MATCH_BUDGET`]).
    pub matching: Duration,
    /// Text one query of candidates reads ([`BATCH_BYTES`]).
    pub batch_bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self { candidates: super::SCAN_LIMIT, matching: MATCH_BUDGET, batch_bytes: BATCH_BYTES }
    }
}

enum Matcher {
    Substring { needle: String, ignore_case: bool },
    Regex(Pattern),
}

impl Matcher {
    /// Byte range of the first match; a regular expression stops at `deadline` (between
    /// windows: a substring is found at memory speed).
    fn find(&self, text: &str, deadline: Instant) -> Result<Option<(usize, usize)>, OutOfTime> {
        Ok(match self {
            Matcher::Substring { needle, ignore_case: false } => {
                text.find(needle.as_str()).map(|i| (i, i + needle.len()))
            }
            Matcher::Substring { needle, ignore_case: true } => {
                // Lower-casing can change byte lengths: find on the lowered text, then map
                // back by characters.
                let lowered = text.to_lowercase();
                let Some(at) = lowered.find(needle.as_str()) else { return Ok(None) };
                let start_chars = lowered[..at].chars().count();
                let len_chars = needle.chars().count();
                let start = text.char_indices().nth(start_chars).map_or(text.len(), |(i, _)| i);
                let end = text.char_indices().nth(start_chars + len_chars).map_or(text.len(), |(i, _)| i);
                Some((start, end))
            }
            Matcher::Regex(pattern) => pattern.find(text, deadline)?.map(|found| (found.start, found.end)),
        })
    }
}

/// A candidate the matching budget ran out in, for the hint.
struct Unfinished {
    label: String,
    searched: usize,
    length: usize,
}

impl Unfinished {
    fn hint(&self, budget: Duration) -> String {
        format!(
            "the {} s of matching ran out {} bytes into the {} bytes of {:?}: the rest of it was not \
             searched (a simpler pattern searches it whole)",
            budget.as_secs_f64(),
            self.searched,
            self.length,
            self.label
        )
    }
}

/// Runs a grep within `bounds`.
pub async fn run(
    records: &Records,
    tenant: &Tenant,
    request: &FsRequest,
    bounds: &Bounds,
) -> ServiceResult<FsResponse> {
    let scan_limit = bounds.candidates;
    // `request::parse` has refused a grep without a pattern.
    let pattern = request.pattern.as_deref().unwrap_or_default();
    crate::text::check_len("pattern", pattern, PATTERN_MAX, true)?;
    let ignore_case = request.ignore_case.unwrap_or(true);
    let (matcher, literal) = if request.regex.unwrap_or(false) {
        let regex = Pattern::compile(pattern, ignore_case).map_err(|err| {
            ServiceError::invalid_field("pattern", format!("not a valid regular expression: {err}"))
        })?;
        (Matcher::Regex(regex), required_literal(pattern))
    } else {
        let needle = if ignore_case { pattern.to_lowercase() } else { pattern.to_string() };
        (Matcher::Substring { needle, ignore_case }, Some(pattern.to_string()))
    };
    let scopes: Vec<String> = match request.scope.as_deref().unwrap_or("all") {
        "all" => Vec::new(),
        scope @ ("sections" | "entities" | "relationships") => vec![scope.to_string()],
        _ => {
            return Err(ServiceError::invalid_field(
                "scope",
                "must be sections, entities, relationships or all",
            ))
        }
    };
    let document_id = match request.path.as_deref().filter(|p| !p.trim().is_empty()) {
        Some(path) => {
            crate::text::check("path", path)?;
            let doc = records
                .find_document(tenant.owner(), path)
                .await?
                .ok_or_else(|| ServiceError::not_found("parsed document", path))?;
            Some(doc.id)
        }
        None => None,
    };
    let count_only = request.count_only.unwrap_or(false);
    // Plain any-case substring counts are the database's own (the index answers them).
    if count_only && ignore_case && matches!(matcher, Matcher::Substring { .. }) && request.cursor.is_none() {
        let query = item_query(document_id.as_deref(), &scopes, literal.as_deref(), None, BATCH);
        let count = records.count_items(tenant.owner(), &query).await?;
        return Ok(FsResponse { count: Some(count), ..FsResponse::one(Op::Grep, json!([])) });
    }
    let limit = if count_only { usize::MAX } else { request::limit(request)? as usize };
    // Counting checks every candidate, so it too stops after `scan_limit` of them and hands
    // back a cursor: no request scans a whole tenant.
    let mut hits: Vec<Hit> = Vec::new();
    let mut count = 0i64;
    let mut after = request.cursor.clone();
    let mut scanned = 0usize;
    let mut exhausted = false;
    let mut matching = Duration::ZERO;
    let mut unfinished: Option<Unfinished> = None;
    // Past the matching budget the request answers, after one candidate at least (a cursor
    // always leads on).
    while hits.len() <= limit && scanned < scan_limit && (scanned == 0 || matching < bounds.matching) {
        // The last batch is cut to the bound, so no request reads past it.
        let asked = BATCH.min(u32::try_from(scan_limit - scanned).unwrap_or(BATCH));
        let query = item_query(document_id.as_deref(), &scopes, literal.as_deref(), after.as_deref(), asked);
        let (batch, cut) = records.search_items(tenant.owner(), &query, bounds.batch_bytes).await?;
        if batch.is_empty() {
            exhausted = true;
            break;
        }
        let full = cut || batch.len() == asked as usize;
        crate::cpu::blocking(|| {
            for item in batch {
                scanned += 1;
                after = Some(item.id.clone());
                let started = Instant::now();
                let found = matcher.find(&item.text, started + bounds.matching.saturating_sub(matching));
                matching += started.elapsed();
                let found = found.unwrap_or_else(|stopped| {
                    let label = item.label.clone();
                    unfinished =
                        Some(Unfinished { label, searched: stopped.searched, length: item.text.len() });
                    matching = matching.max(bounds.matching);
                    None
                });
                if let Some(range) = found {
                    count += 1;
                    if !count_only {
                        hits.push(Hit::of(item, range));
                        if hits.len() > limit {
                            break;
                        }
                    }
                }
                if matching >= bounds.matching {
                    break;
                }
            }
        });
        if !full && hits.len() <= limit && matching < bounds.matching {
            exhausted = true;
            break;
        }
    }
    if count_only {
        let mut response = FsResponse { count: Some(count), ..FsResponse::one(Op::Grep, json!([])) };
        if !exhausted {
            response.has_more = true;
            response.next_cursor = after;
            response.hint = Some(format!(
                "counted the matches among the first {scanned} candidates (at most {scan_limit}, or {} s \
                 of matching, per request); pass nextCursor to count on and add the counts",
                bounds.matching.as_secs_f64()
            ));
        }
        response.hint = joined(response.hint, unfinished.map(|u| u.hint(bounds.matching)));
        return Ok(response);
    }
    let more = hits.len() > limit || !exhausted;
    hits.truncate(limit);
    let next = if hits.len() == limit && more {
        hits.last().map(|h| h.item.id.clone())
    } else if more {
        after.clone()
    } else {
        None
    };
    let hint = (more && hits.len() < limit)
        .then(|| format!("read {scanned} candidates; pass nextCursor to search on"));
    let hint = joined(hint, unfinished.map(|u| u.hint(bounds.matching)));
    let documents = document_refs(records, tenant, &hits).await?;
    let data: Vec<Value> = hits
        .iter()
        .map(|Hit { item, matched, snippet }| {
            let reference = documents.iter().find(|(id, _)| *id == item.document_id).map(|(_, r)| r.clone());
            json!({
                "referenceID": reference, "transformationID": item.document_id, "scope": item.scope,
                "label": item.label, "type": item.item_type, "page": item.page, "entityID": item.entity_id,
                "match": matched, "snippet": snippet,
            })
        })
        .collect();
    let mut response = FsResponse::list(Op::Grep, data, next);
    response.hint = hint;
    Ok(response)
}

fn item_query<'a>(
    document_id: Option<&'a str>,
    scopes: &'a [String],
    literal: Option<&'a str>,
    after: Option<&'a str>,
    limit: u32,
) -> ItemQuery<'a> {
    ItemQuery { document_id, scopes, literal, after, limit }
}

/// A match as the answer shows it, kept without its candidate's text (up to 32 MiB each).
struct Hit {
    /// The candidate, its text dropped.
    item: ItemRow,
    /// The match, its first [`MATCH_SHOWN`] bytes.
    matched: String,
    snippet: String,
}

impl Hit {
    fn of(mut item: ItemRow, (start, end): (usize, usize)) -> Self {
        let text = std::mem::take(&mut item.text);
        let shown = text.floor_char_boundary(end.min(start + MATCH_SHOWN));
        Hit { item, matched: text[start..shown].to_string(), snippet: snippet(&text, start, shown) }
    }
}

/// `(documentID, referenceID)` of the documents of these hits.
async fn document_refs(
    records: &Records,
    tenant: &Tenant,
    hits: &[Hit],
) -> ServiceResult<Vec<(String, String)>> {
    let mut ids: Vec<String> = hits.iter().map(|h| h.item.document_id.clone()).collect();
    ids.dedup();
    Ok(records
        .documents_by_ids(tenant.owner(), &ids)
        .await?
        .into_iter()
        .map(|d| (d.id, d.reference_id))
        .collect())
}

/// Two hints as one.
fn joined(first: Option<String>, second: Option<String>) -> Option<String> {
    match (first, second) {
        (Some(first), Some(second)) => Some(format!("{first}; {second}")),
        (first, second) => first.or(second),
    }
}

/// The match with some context each side, on character boundaries, in one line.
fn snippet(text: &str, start: usize, end: usize) -> String {
    let before: String =
        text[..start].chars().rev().take(SNIPPET_CONTEXT).collect::<Vec<_>>().into_iter().rev().collect();
    let after: String = text[end..].chars().take(SNIPPET_CONTEXT).collect();
    let mut out = String::new();
    if before.len() < start {
        out.push('…');
    }
    out.push_str(&before);
    out.push_str(&text[start..end]);
    out.push_str(&after);
    if end + after.len() < text.len() {
        out.push('…');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A literal every match of `pattern` starts with, when there is one (for the index).
fn required_literal(pattern: &str) -> Option<String> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let literals = seq.literals()?;
    let [only] = literals else { return None };
    let text = String::from_utf8(only.as_bytes().to_vec()).ok()?;
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_expression_narrows_by_its_required_prefix() {
        assert_eq!(required_literal(r"INV-\d+").as_deref(), Some("INV-"));
        assert_eq!(required_literal(r"\d+ USD"), None);
        assert_eq!(required_literal(r"acme|initech"), None);
    }

    #[test]
    fn any_case_matches_map_back_to_the_original_text() {
        let matcher = Matcher::Substring { needle: "acme".into(), ignore_case: true };
        let text = "Ünïcode — ACME Corp";
        let (start, end) = matcher.find(text, Instant::now()).unwrap().unwrap();
        assert_eq!(&text[start..end], "ACME");
        assert_eq!(snippet("a  b\n ACME  c", 7, 11), "a b ACME c");
    }
}
