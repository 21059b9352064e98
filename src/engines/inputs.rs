//! Decoding input files into a [`Document`].
//!
//! | inputType (aliases)              | how                                                         |
//! |----------------------------------|-------------------------------------------------------------|
//! | `text` (`txt`)                   | UTF-8 (invalid bytes replaced)                               |
//! | `json`                           | parsed; `text` is the pretty-printed value                   |
//! | `csv`                            | RFC 4180 ([`super::csv`]); rows keyed by the header line     |
//! | `html` (`htm`)                   | tags stripped ([`super::html`])                             |
//! | `email` (`eml`)                  | `mail-parser`: headers, text body (HTML stripped when there  |
//! |                                  | is no text part), attachments decoded by content type/name   |
//! | `pdf`                            | text layer by `pdftotext -layout`; pages split on form feed; |
//! |                                  | without any text layer (a scan), pages rendered by `pdftoppm`|
//! |                                  | at 200 dpi and read by `tesseract`                           |
//! | `png` `jpeg` (`jpg` `jfif`) `webp` `tiff` (`tif`) | OCR by `tesseract`; bytes kept in `image` |
//!
//! `heic`/`heif` are not decoded: Debian's Leptonica (under Tesseract) cannot read them.
//! Attachments of an unsupported type are skipped (an e-mail still decodes).

use super::input_types::{supported_input_type, text_document};
use super::limits::{exceeded, output_exceeded, Budget, CappedWriter, MAX_CSV_CELLS};
use super::{csv, email, html, tools, Document, EngineError};
use serde_json::Value;

/// Resolution scanned PDF pages are rendered at for OCR: enough for body text, at a
/// fraction of the time 300 dpi takes.
const OCR_DPI: u32 = 200;

/// Decodes one file under a fresh [`Budget`] (see [`super::limits`]).
pub fn decode(input_type: &str, bytes: &[u8]) -> Result<Document, EngineError> {
    decode_with(input_type, bytes, &mut Budget::default())
}

/// Decodes one file (or an attachment) under what is left of `budget`.
pub(super) fn decode_with(
    input_type: &str,
    bytes: &[u8],
    budget: &mut Budget,
) -> Result<Document, EngineError> {
    let Some(kind) = supported_input_type(input_type) else {
        return Err(EngineError::new("unsupported_input", format!("unsupported inputType {input_type}")));
    };
    let document = match kind {
        "text" => text_document("text", utf8(bytes)),
        "json" => decode_json(bytes, budget)?,
        "csv" => decode_csv(bytes)?,
        "html" => text_document("html", html::to_text(&utf8(bytes))),
        // Counts its own text (attachments take from the same budget as they decode).
        "email" => return email::decode(bytes, budget, decode_with),
        "pdf" => decode_pdf(bytes)?,
        image => decode_image(image, bytes)?,
    };
    budget.take(document.text.len())?;
    Ok(document)
}

fn utf8(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.strip_prefix('\u{feff}').unwrap_or(&text).to_string()
}

/// Nesting is bounded by serde_json (128 levels); the pretty-printed text, which indentation
/// can make ~100 times the file, stops at what is left of the budget.
fn decode_json(bytes: &[u8], budget: &Budget) -> Result<Document, EngineError> {
    let value: Value = serde_json::from_slice(bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes))
        .map_err(|err| EngineError::decoding(format!("invalid JSON: {err}")))?;
    let mut text = CappedWriter { bytes: Vec::new(), left: budget.left() };
    serde_json::to_writer_pretty(&mut text, &value).map_err(|_| output_exceeded())?;
    let text = String::from_utf8(text.bytes).unwrap_or_default();
    Ok(Document { json: Some(value), ..text_document("json", text) })
}

fn decode_csv(bytes: &[u8]) -> Result<Document, EngineError> {
    let text = utf8(bytes);
    let cells = csv::cell_bound(&text);
    if cells > MAX_CSV_CELLS {
        return Err(exceeded(
            format!("the CSV has up to {cells} cells (rows × columns, missing cells included)"),
            format!("{MAX_CSV_CELLS} cells (csvCells); split the file"),
        ));
    }
    let rows = csv::rows(&text).map_err(|err| EngineError::decoding(format!("invalid CSV: {err}")))?;
    Ok(Document { rows: Some(rows), ..text_document("csv", text) })
}

fn decode_pdf(bytes: &[u8]) -> Result<Document, EngineError> {
    let layout = tools::pdf_text(bytes)?;
    let mut pages: Vec<String> = layout.split('\u{c}').map(str::to_string).collect();
    // pdftotext ends every page with a form feed: the piece after the last one is empty.
    if pages.len() > 1 && pages.last().is_some_and(|p| p.trim().is_empty()) {
        pages.pop();
    }
    if pages.iter().all(|page| page.trim().is_empty()) {
        // No text layer: a scanned PDF. Render the pages and read them like images.
        if pages.len() > tools::MAX_OCR_PAGES as usize {
            return Err(exceeded(
                format!("this scanned PDF has {} pages, more than are read by OCR", pages.len()),
                format!("{} pages (ocrPages); split the PDF", tools::MAX_OCR_PAGES),
            ));
        }
        pages = tools::pdf_pages(bytes, OCR_DPI, |png| tools::ocr("png", png))?;
    }
    Ok(Document { input_type: "pdf".into(), text: pages.join("\n"), pages, ..Document::default() })
}

fn decode_image(input_type: &str, bytes: &[u8]) -> Result<Document, EngineError> {
    let text = tools::ocr(input_type, bytes)?;
    Ok(Document { image: Some(bytes.to_vec()), ..text_document(input_type, text) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_json_is_a_decoding_error() {
        let err = decode("json", b"{nope").unwrap_err();
        assert_eq!(err.kind, "input_decoding");
        assert!(err.message.starts_with("invalid JSON"), "{}", err.message);
    }

    #[test]
    fn an_html_only_email_body_is_stripped_to_text() {
        let eml = "From: Ann <ann@a.example>\r\nTo: b@b.example, c@c.example\r\nSubject: Hi\r\n\
                   Content-Type: text/html; charset=utf-8\r\n\r\n\
                   <p>Total: <b>$5</b></p><script>alert(1)</script>";
        let document = decode("email", eml.as_bytes()).unwrap();
        assert_eq!(document.text, "Total: $5");
        let headers = document.email.unwrap();
        assert_eq!(
            (headers.from.as_str(), headers.to.as_str()),
            ("ann@a.example", "b@b.example, c@c.example")
        );
        assert!(document.attachments.is_empty());
    }
}
