//! A tenant's regular expression: compiled within bounds, and searched a window of the text at
//! a time so that its caller can stop between windows.
//!
//! The `regex` crate matches in linear time, but the factor is the pattern's: one its lazy DFA
//! cannot hold (`(?i)[a-z ]{2000}Z`) runs ~10 µs a byte (measured, release), so one search of a
//! 32 MiB section took over five minutes that nothing could interrupt. A text longer than
//! [`WINDOW`] + [`REACH`] is therefore searched [`WINDOW`] bytes at a time, each search
//! reading [`REACH`] bytes on (so a match up to [`REACH`] long that starts in the window is
//! found whole), and the deadline is checked between windows: one window of such a pattern
//! takes ~0.3 s. A caller with many patterns checks its deadline before each, too.
//!
//! What the windows change, in a text longer than 32 KiB only: a match longer than
//! [`REACH`] may be missed or found shorter (a greedy `.+` ends within its window's reach);
//! assertions (`$`, `\b`) still see the whole text.

use regex_automata::meta::{BuildError, Regex};
use regex_automata::util::syntax;
use regex_automata::Input;
use std::ops::Range;
use std::time::Instant;

/// The most one pattern's compiled program may take (Unicode `\w{20}` needs about 1 MiB).
pub const PATTERN_BYTES: usize = 1 << 20;
/// The most one pattern's lazy search cache may grow to.
pub const SEARCH_CACHE_BYTES: usize = 256 << 10;
/// Bytes of text one search reads before the deadline is checked again.
pub const WINDOW: usize = 16 * 1024;
/// Bytes past its window a search reads: the longest match windows always find.
pub const REACH: usize = 16 * 1024;

/// A tenant's regular expression (RE2 syntax, the `regex` crate's), with its source.
#[derive(Clone, Debug)]
pub struct Pattern {
    source: String,
    regex: Regex,
}

/// The deadline passed before the text was searched to its end.
#[derive(Debug, PartialEq, Eq)]
pub struct OutOfTime {
    /// Bytes of the text searched before the deadline (no match among them).
    pub searched: usize,
}

impl Pattern {
    /// Compiles `source` within [`PATTERN_BYTES`] and [`SEARCH_CACHE_BYTES`]; the error says
    /// what is wrong with it, for the tenant.
    pub fn compile(source: &str, ignore_case: bool) -> Result<Self, String> {
        let regex = Regex::builder()
            .syntax(syntax::Config::new().case_insensitive(ignore_case))
            .configure(
                Regex::config().nfa_size_limit(Some(PATTERN_BYTES)).hybrid_cache_capacity(SEARCH_CACHE_BYTES),
            )
            .build(source)
            .map_err(explain)?;
        Ok(Self { source: source.to_string(), regex })
    }

    /// The pattern as the tenant wrote it.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Bytes the compiled pattern holds.
    pub fn memory(&self) -> usize {
        self.regex.memory_usage()
    }

    /// The first match in `text` (byte range), searched window by window: past `deadline`
    /// between two windows it stops (the first is always searched, so a call makes progress).
    pub fn find(&self, text: &str, deadline: Instant) -> Result<Option<Range<usize>>, OutOfTime> {
        self.first(text, deadline, |input| {
            let span = input.get_span();
            let found = self.regex.search(&input)?.range();
            // A match starting in the reach may be cut at the span's end: the next window,
            // which starts before it, finds it whole.
            (found.start < span.start + WINDOW || span.end == text.len()).then_some(found)
        })
    }

    /// Whether `text` has a match, searched as [`Pattern::find`] does (any match in a window
    /// is one in the text: assertions see the whole text).
    pub fn is_match(&self, text: &str, deadline: Instant) -> Result<bool, OutOfTime> {
        self.first(text, deadline, |input| self.regex.is_match(input).then_some(())).map(|hit| hit.is_some())
    }

    fn first<T>(
        &self,
        text: &str,
        deadline: Instant,
        search: impl Fn(Input<'_>) -> Option<T>,
    ) -> Result<Option<T>, OutOfTime> {
        for window in windows(text) {
            if window.start > 0 && Instant::now() >= deadline {
                return Err(OutOfTime { searched: window.start });
            }
            if let Some(hit) = search(Input::new(text).range(window)) {
                return Ok(Some(hit));
            }
        }
        Ok(None)
    }
}

/// The spans searched in turn: the whole text when it is short, else windows of [`WINDOW`]
/// reaching [`REACH`] further, on character boundaries.
fn windows(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let whole = text.len() <= WINDOW + REACH;
    let mut start = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if whole {
            done = true;
            return Some(0..text.len());
        }
        let end = text.ceil_char_boundary((start + WINDOW + REACH).min(text.len()));
        let span = start..end;
        done = end == text.len();
        start = text.ceil_char_boundary(start + WINDOW);
        Some(span)
    })
}

/// What is wrong with a pattern, in words a tenant can act on.
fn explain(err: BuildError) -> String {
    if let Some(syntax) = err.syntax_error() {
        syntax.to_string()
    } else if let Some(limit) = err.size_limit() {
        format!(
            "its compiled form exceeds the size limit of {limit} bytes; use narrower classes or fewer \
             repetitions (a Unicode \\w repeated 100 times is too large)"
        )
    } else {
        err.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[test]
    fn windows_cover_a_long_text_overlapping_by_their_reach() {
        let text = "é".repeat(40_000); // 80,000 bytes, two a character
        let spans: Vec<Range<usize>> = windows(&text).collect();
        assert_eq!(spans.first().map(|s| s.start), Some(0));
        assert_eq!(spans.last().map(|s| s.end), Some(text.len()));
        for pair in spans.windows(2) {
            assert!(pair[0].end - pair[1].start + 1 >= REACH, "{pair:?}");
            assert!(text.is_char_boundary(pair[1].start) && text.is_char_boundary(pair[0].end));
        }
        assert_eq!(windows("short").collect::<Vec<_>>(), vec![0..5]);
        assert_eq!(windows("").collect::<Vec<_>>(), vec![0..0]);
    }

    #[test]
    fn a_match_anywhere_in_a_long_text_is_found_where_it_is() {
        let pattern = Pattern::compile(r"INV-\d+", false).unwrap();
        for at in [0, WINDOW - 3, WINDOW, 2 * WINDOW - 3, 3 * WINDOW - 6, 3 * WINDOW + 7, 200_000] {
            let text = format!("{}INV-4242{}", "x".repeat(at), "y".repeat(100_000));
            assert_eq!(pattern.find(&text, later()), Ok(Some(at..at + 8)), "at {at}");
            assert_eq!(pattern.is_match(&text, later()), Ok(true));
        }
        assert_eq!(pattern.find(&"x".repeat(100_000), later()), Ok(None));
    }

    #[test]
    fn assertions_see_the_whole_text_not_the_window() {
        // `x$` would match at every window's end if windows were cut texts.
        let text = format!("{}x\ny", "x".repeat(100_000));
        assert_eq!(Pattern::compile(r"x$", false).unwrap().find(&text, later()), Ok(None));
        let multi = Pattern::compile(r"(?m)x$", false).unwrap();
        assert_eq!(multi.find(&text, later()), Ok(Some(100_000..100_001)));
    }

    #[test]
    fn a_slow_pattern_stops_at_its_deadline_within_a_window() {
        let pattern = Pattern::compile(r"[a-z ]{2000}Z", true).unwrap();
        let text = "ab ".repeat(1 << 20); // 3 MiB: ~30 s for this pattern (release)
        let err = pattern.find(&text, Instant::now() + Duration::from_millis(200)).unwrap_err();
        assert!(err.searched > 0 && err.searched < text.len(), "{err:?}");
        // The first window is searched whatever the deadline: a caller always makes progress.
        assert_eq!(pattern.is_match("short", Instant::now()), Ok(false));
        let past = Instant::now();
        assert_eq!(pattern.find(&text, past), Err(OutOfTime { searched: WINDOW }));
    }

    #[test]
    fn a_pattern_past_its_bounds_is_refused_saying_so() {
        let err = Pattern::compile(r"\w{100}", false).unwrap_err();
        assert!(err.contains("exceeds the size limit of 1048576 bytes"), "{err}");
        let err = Pattern::compile(r"(unclosed", false).unwrap_err();
        assert!(err.contains("unclosed group"), "{err}");
        assert!(Pattern::compile("acme", true).unwrap().is_match("ACME corp", later()).unwrap());
    }
}
