//! Fuzz target: property tests over what turns a tenant's bytes into values — the name
//! normaliser, the text checker, the request extractors and the rewrite of hyper's bare
//! error answers. `cargo test --test fuzz` runs 256 cases per property; for a longer run,
//! `PROPTEST_CASES=100000 cargo test --release --test fuzz`. A failure prints the smallest
//! input that still fails.

use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use canon::access::params::{array_param, bool_param, int_param, limit_param, list_param, time_param};
use canon::api::buckets::CreateBucket;
use canon::api::entities::BulkSeed;
use canon::api::extract::{parse_json, ApiJson, ApiQuery};
use canon::api::graph::{GraphParams, ReviewQuery};
use canon::api::listener::enveloped;
use canon::graph::normalize::normalize;
use proptest::prelude::*;
use std::sync::OnceLock;

/// Text heavy in what breaks parsers: controls, NUL, combining marks, compatibility forms,
/// legal suffixes, percent escapes and JSON or form punctuation, among any characters.
fn hostile_text() -> impl Strategy<Value = String> {
    let tricky = [
        "\0", "\u{1}", "\u{1f}", "\u{7f}", "\u{85}", "\t", "\n", "\r", " ", ".", ",", "-", " Inc", " L.L.C.",
        " GmbH", "ﬁ", "Ａ", "İ", "ß", "\u{301}", "\u{fdfa}", "\u{feff}", "%00", "%", "%zz", "&", "=", "[]",
        "\"", "\\", "{", "}", "[", "]", ":", "+",
    ];
    let piece = prop_oneof![
        any::<char>().prop_map(String::from),
        prop::sample::select(tricky.to_vec()).prop_map(String::from),
        "[a-zA-Z0-9]{1,8}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| tokio::runtime::Builder::new_current_thread().build().expect("a runtime"))
        .block_on(future)
}

/// Statuses an extractor may refuse a request with; anything else is a bug.
fn refused_properly(status: StatusCode, message: &str) -> bool {
    matches!(status.as_u16(), 400 | 413 | 415) && !message.is_empty()
}

proptest! {
    #[test]
    fn normalised_names_are_lowercase_words_and_normalise_to_themselves(name in hostile_text()) {
        let normalized = normalize(&name);
        prop_assert!(normalized.chars().all(|c| c == ' ' || c.is_alphanumeric()), "{normalized:?}");
        prop_assert!(!normalized.starts_with(' ') && !normalized.ends_with(' ') && !normalized.contains("  "));
        prop_assert!(canon::text::check("name", &normalized).is_ok(), "a key never holds a control character");
        prop_assert_eq!(normalize(&normalized), normalized.clone(), "normalising twice changes nothing");
    }

    #[test]
    fn the_text_checker_refuses_exactly_the_control_characters_but_tab_and_newline(text in hostile_text()) {
        let has_control = text.chars().any(|c| c.is_control() && c != '\t' && c != '\n');
        prop_assert_eq!(canon::text::check("field", &text).is_err(), has_control);
    }

    #[test]
    fn any_json_body_is_parsed_or_refused_with_a_400(body in prop_oneof![
        hostile_text().prop_map(String::into_bytes),
        prop::collection::vec(any::<u8>(), 0..256),
        hostile_text().prop_map(|t| format!("{{\"name\": {t:?}, \"description\": \"{t}\"}}").into_bytes()),
    ]) {
        if let Err(err) = parse_json::<serde_json::Value>(&body) {
            prop_assert!(refused_properly(err.status(), err.message()));
        }
        if let Err(err) = parse_json::<BulkSeed>(&body) {
            prop_assert!(refused_properly(err.status(), err.message()));
        }
    }

    #[test]
    fn the_json_extractor_answers_any_body_and_content_type(
        body in hostile_text(),
        content_type in prop_oneof![Just("application/json".to_string()), hostile_text()],
    ) {
        let request = Request::builder().method("POST").uri("/v3/buckets");
        let request = match axum::http::HeaderValue::from_str(&content_type) {
            Ok(value) => request.header("content-type", value),
            Err(_) => request,
        };
        let request = request.body(Body::from(body)).expect("a request");
        if let Err(err) = block_on(ApiJson::<CreateBucket>::from_request(request, &())) {
            prop_assert!(refused_properly(err.status(), err.message()), "{} {}", err.status(), err.message());
        }
    }

    #[test]
    fn the_query_extractor_answers_any_query_string(query in hostile_text()) {
        let encoded: String = query
            .bytes()
            .map(|b| if b.is_ascii_graphic() { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        let Ok(request) = Request::builder().uri(format!("/v3/review-queue?{encoded}")).body(()) else {
            return Ok(());
        };
        let (mut parts, ()) = request.into_parts();
        if let Err(err) = block_on(ApiQuery::<ReviewQuery>::from_request_parts(&mut parts, &())) {
            prop_assert!(refused_properly(err.status(), err.message()));
        }
        if let Err(err) = block_on(ApiQuery::<GraphParams>::from_request_parts(&mut parts, &())) {
            prop_assert!(refused_properly(err.status(), err.message()));
        }
    }

    #[test]
    fn parameter_parsers_answer_any_text_and_keep_limits_in_bounds(raw in hostile_text(), n in any::<i64>()) {
        let number = n.to_string();
        for text in [raw.as_str(), number.as_str()] {
            let _ = int_param("n", Some(text));
            let _ = bool_param("b", Some(text));
            let _ = time_param("since", Some(text));
            if let Ok(limit) = limit_param(Some(text), 50, 200) {
                prop_assert!((1..=200).contains(&limit));
            }
            let values = [text.to_string()];
            prop_assert!(list_param(&values).iter().all(|v| !v.is_empty() && v.trim() == v));
            prop_assert!(array_param("tags", &values).is_ok_and(|v| !v.is_empty()) || list_param(&values).is_empty());
        }
    }

    #[test]
    fn rewriting_hypers_answers_never_panics_and_always_yields_json(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        status in 100u16..600,
        extra in hostile_text(),
    ) {
        let _ = enveloped(&bytes);
        let head = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nx-extra: {}\r\n\r\n", extra.escape_debug());
        if let Some(answer) = enveloped(head.as_bytes()) {
            prop_assert!(status >= 400);
            let text = String::from_utf8(answer).expect("UTF-8");
            let (_, body) = text.split_once("\r\n\r\n").expect("a head and a body");
            let body: serde_json::Value = serde_json::from_str(body).expect("a JSON body");
            prop_assert_eq!(body["code"].as_u64(), Some(u64::from(status)));
        }
    }
}

/// An e-mail of attached messages and multiparts, `shape` choosing each level's wrapper.
fn nested_mime(shape: &[bool]) -> Vec<u8> {
    let mut mail = String::from("From: a@a.example\r\nSubject: fuzz\r\n");
    for (level, chain) in shape.iter().enumerate() {
        if *chain {
            mail.push_str("Content-Type: message/rfc822\r\n\r\n");
        } else {
            mail.push_str(&format!(
                "Content-Type: multipart/mixed; boundary=b{level}\r\n\r\n--b{level}\r\n\
                 Content-Type: text/plain\r\n\r\nlevel {level}\r\n--b{level}\r\n\
                 Content-Type: message/rfc822\r\n\r\nSubject: inner\r\n"
            ));
        }
    }
    mail.push_str("Content-Type: text/plain\r\n\r\nbottom\r\n");
    mail.into_bytes()
}

proptest! {
    /// Nested and truncated MIME: an error or a document, never a panic; a document only
    /// within the limits.
    #[test]
    fn nested_and_truncated_mime_is_an_error_or_a_document_within_the_limits(
        shape in prop::collection::vec(any::<bool>(), 0..60),
        cut in 0.0..=1.0f64,
        noise in prop::collection::vec(any::<u8>(), 0..16),
    ) {
        let mut mail = nested_mime(&shape);
        mail.truncate((mail.len() as f64 * cut) as usize);
        mail.extend_from_slice(&noise);
        if let Ok(mut document) = canon::engines::decode("email", &mail) {
            // Depth counts attached messages only: a cut can leave the innermost text part
            // as an attachment of its own, one level below the last message.
            let mut depth = 0;
            while let Some(inner) = document.attachments.pop().filter(|inner| inner.email.is_some()) {
                depth += 1;
                document = inner;
            }
            prop_assert!(depth <= canon::engines::limits::MAX_EMAIL_DEPTH);
        }
    }
}

proptest! {
    // Each case runs pdftotext (and maybe pdftoppm): few cases by default.
    #![proptest_config(ProptestConfig::with_cases(8))]
    /// Malformed PDFs (a sound one cut and with bytes flipped): an error or a document.
    #[test]
    fn malformed_pdfs_are_an_error_or_a_document(cut in 0.0..=1.0f64, flips in prop::collection::vec(any::<(usize, u8)>(), 0..32)) {
        let mut pdf = std::fs::read(canon::provision::source_dir().join("tests/fixtures/invoice.pdf")).unwrap();
        pdf.truncate((pdf.len() as f64 * cut) as usize);
        let len = pdf.len().max(1);
        for (at, byte) in flips {
            if let Some(b) = pdf.get_mut(at % len) {
                *b ^= byte;
            }
        }
        let _ = canon::engines::decode("pdf", &pdf);
    }
}
