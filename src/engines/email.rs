//! E-mail decoding under [`limits`]: `mail-parser` parses the message once (nested messages
//! included, without recursion for unencoded ones), then one walk over that tree decodes the
//! bodies and attachments; no subtree is parsed twice, so the work is linear in the file.
//!
//! Two shapes are refused before parsing, because `mail-parser` itself recurses on them and a
//! deep one overflows the stack (the process aborts, every tenant loses the server): a
//! transfer-encoded attached message (base64 or quoted-printable `message/rfc822`, which RFC 2046
//! does not allow anyway: the parser re-parses it recursively), and more `Content-Type` headers
//! than the part limit. A cheap scan also refuses a straight chain of attached messages deeper
//! than the depth limit; every other depth is checked on the parsed tree. Parsing runs on a
//! thread of its own with a large (lazily committed) stack, so what the scan lets through
//! (at most ~2,000 levels) cannot reach the end of the stack either.

use super::input_types::{attachment_type, text_document};
use super::limits::{exceeded, Budget, MAX_EMAIL_DEPTH, MAX_EMAIL_PARTS};
use super::{html, Document, EmailHeaders, EngineError};
use mail_parser::{Message, MessageParser, MimeHeaders, PartType};

/// Stack of the parsing thread: reserved, touched only as deep as the message goes.
const PARSE_STACK: usize = 64 * 1024 * 1024;

/// Decodes one attachment of a supported input type under what is left of the budget
/// ([`super::inputs`] passes its own decoder: an attachment may be any input, an e-mail too).
pub type DecodeAttachment = fn(&str, &[u8], &mut Budget) -> Result<Document, EngineError>;

pub fn decode(
    bytes: &[u8],
    budget: &mut Budget,
    attachment: DecodeAttachment,
) -> Result<Document, EngineError> {
    if budget.email_depth > MAX_EMAIL_DEPTH {
        return Err(depth_exceeded());
    }
    scan(bytes)?;
    std::thread::scope(|scope| {
        let parsing = std::thread::Builder::new()
            .name("canon-email".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, || {
                let message = MessageParser::default()
                    .parse(bytes)
                    .ok_or_else(|| EngineError::decoding("not an e-mail message (no headers found)"))?;
                check_shape(&message, budget)?;
                let depth = budget.email_depth;
                decode_message(&message, depth, budget, attachment)
            })
            .map_err(|err| EngineError::decoding(format!("starting the e-mail decoder: {err}")))?;
        // A panic in the parser is this file's failure, not the server's.
        parsing.join().map_err(|_| EngineError::decoding("the e-mail could not be parsed"))?
    })
}

fn depth_exceeded() -> EngineError {
    exceeded(
        format!(
            "the e-mail nests attached messages (message/rfc822) more than {MAX_EMAIL_DEPTH} levels deep"
        ),
        format!(
            "a nesting depth of {MAX_EMAIL_DEPTH} (emailNestingDepth); attach inner messages less deeply"
        ),
    )
}

fn parts_exceeded(what: &str) -> EngineError {
    exceeded(
        format!("the e-mail has more than {MAX_EMAIL_PARTS} MIME parts ({what})"),
        format!("{MAX_EMAIL_PARTS} parts (emailParts); send fewer attachments per message"),
    )
}

/// What can be refused from the raw bytes, before the parser sees them (see the module notes).
fn scan(raw: &[u8]) -> Result<(), EngineError> {
    let lower = raw.to_ascii_lowercase();
    // In a multipart/digest a part without a Content-Type is an attached message.
    let digest = contains(&lower, b"digest");
    let mut chain = 0;
    // Header blocks (and bodies) are runs of non-empty lines.
    for block in
        lower.split(|b| *b == b'\n').collect::<Vec<_>>().split(|line| line.is_empty() || *line == b"\r")
    {
        let has = |needle: &[u8]| block.iter().any(|line| contains(line, needle));
        let message = has(b"message") && (has(b"rfc822") || has(b"global"));
        let digest_part = digest && !has(b"content-type");
        if (message || digest_part) && (has(b"base64") || has(b"quoted-printable")) {
            return Err(EngineError::decoding(
                "an attached message (message/rfc822) is base64 or quoted-printable encoded; \
                 RFC 2046 allows only 7bit, 8bit or binary for attached messages: attach it unencoded",
            ));
        }
        chain = if message { chain + 1 } else { 0 };
        if chain > MAX_EMAIL_DEPTH {
            return Err(depth_exceeded());
        }
    }
    if count(&lower, b"content-type") > MAX_EMAIL_PARTS {
        return Err(parts_exceeded("counting its Content-Type headers"));
    }
    Ok(())
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack.windows(needle.len()).filter(|w| *w == needle).count()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Nesting depth and number of parts of the parsed tree, without recursion.
/// Counts from the budget's depth and parts: an e-mail parsed again inside another adds to them.
fn check_shape(message: &Message<'_>, budget: &mut Budget) -> Result<(), EngineError> {
    let mut pending = vec![(message, budget.email_depth)];
    while let Some((message, depth)) = pending.pop() {
        budget.email_parts += message.parts.len();
        if budget.email_parts > MAX_EMAIL_PARTS {
            return Err(parts_exceeded("counting the parts of attached messages too"));
        }
        for part in &message.parts {
            if let PartType::Message(inner) = &part.body {
                if depth + 1 > MAX_EMAIL_DEPTH {
                    return Err(depth_exceeded());
                }
                pending.push((inner, depth + 1));
            }
        }
    }
    Ok(())
}

/// Headers, text body and attachments of a parsed message; recursion is bounded by
/// [`check_shape`].
fn decode_message(
    message: &Message<'_>,
    depth: usize,
    budget: &mut Budget,
    attachment: DecodeAttachment,
) -> Result<Document, EngineError> {
    let addresses = |address: Option<&mail_parser::Address>| -> String {
        address
            .map(|a| a.iter().filter_map(|addr| addr.address()).collect::<Vec<_>>().join(", "))
            .unwrap_or_default()
    };
    let headers = EmailHeaders {
        to: addresses(message.to()),
        delivered_to: message.header_raw("Delivered-To").map(|v| v.trim().to_string()).unwrap_or_default(),
        from: addresses(message.from()),
        subject: message.subject().unwrap_or_default().to_string(),
    };
    let plain: Vec<String> = message
        .text_bodies()
        .filter(|part| part.is_text() && !part.is_text_html())
        .filter_map(|part| part.text_contents().map(str::to_string))
        .collect();
    let body = if plain.is_empty() {
        let html_parts: Vec<String> =
            message.html_bodies().filter_map(|part| part.text_contents().map(html::to_text)).collect();
        html_parts.join("\n\n")
    } else {
        plain.join("\n\n")
    };
    budget.take(body.len())?;
    let mut attachments = Vec::new();
    for part in message.attachments() {
        let name = part.attachment_name().map(str::to_string);
        let content_type = part
            .content_type()
            .map(|ct| format!("{}/{}", ct.ctype(), ct.subtype().unwrap_or_default()).to_ascii_lowercase());
        let Some(kind) = attachment_type(content_type.as_deref(), name.as_deref()) else { continue };
        let decoded = match part.message() {
            Some(inner) => decode_message(inner, depth + 1, budget, attachment),
            None => {
                budget.email_depth = depth + 1;
                let decoded = attachment(kind, part.contents(), budget);
                budget.email_depth = depth;
                decoded
            }
        };
        let mut document = decoded.map_err(|err| EngineError {
            message: format!("attachment {}: {}", name.as_deref().unwrap_or("(unnamed)"), err.message),
            ..err
        })?;
        document.file_name = name;
        attachments.push(document);
    }
    Ok(Document { email: Some(headers), attachments, ..text_document("email", body) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message whose body is a message, `levels` deep, "hello" at the bottom.
    fn chain(levels: usize) -> String {
        let mut mail = String::from("From: a@a.example\r\nSubject: top\r\n");
        for _ in 0..levels {
            mail.push_str("Content-Type: message/rfc822\r\n\r\n");
        }
        mail + "Content-Type: text/plain\r\n\r\nhello\r\n"
    }

    /// `levels` messages each attached in a multipart/mixed of the one above (no straight chain).
    fn wrapped(levels: usize) -> String {
        let mut mail = String::from("From: a@a.example\r\nSubject: top\r\n");
        for level in 0..levels {
            mail.push_str(&format!(
                "Content-Type: multipart/mixed; boundary=b{level}\r\n\r\n--b{level}\r\n\
                 Content-Type: text/plain\r\n\r\nlevel {level}\r\n--b{level}\r\n\
                 Content-Type: message/rfc822\r\n\r\nSubject: inner {level}\r\n"
            ));
        }
        mail.push_str("Content-Type: text/plain\r\n\r\nbottom\r\n");
        for level in (0..levels).rev() {
            mail.push_str(&format!("--b{level}--\r\n"));
        }
        mail
    }

    fn decoded(mail: &str) -> Result<Document, EngineError> {
        decode(mail.as_bytes(), &mut Budget::default(), super::super::inputs::decode_with)
    }

    #[test]
    fn a_chain_3000_deep_is_refused_naming_the_depth_limit() {
        let err = decoded(&chain(3_000)).unwrap_err();
        assert_eq!(err.kind, "input_limit");
        assert!(err.message.contains("nesting depth of 20"), "{}", err.message);
    }

    #[test]
    fn messages_nested_within_the_limit_decode_once_each() {
        let mut document = decoded(&wrapped(5)).unwrap();
        let mut levels = 0;
        while let Some(inner) = document.attachments.pop() {
            levels += 1;
            document = inner;
        }
        assert_eq!(levels, 5);
        assert_eq!(document.text.trim(), "bottom");
        assert!(decoded(&chain(20)).is_ok());
    }

    #[test]
    fn nesting_past_the_limit_inside_multiparts_is_refused_from_the_parsed_tree() {
        let err = decoded(&wrapped(21)).unwrap_err();
        assert!(err.message.contains("nesting depth of 20"), "{}", err.message);
        let err = decoded(&wrapped(300)).unwrap_err();
        assert!(err.message.contains("nesting depth of 20"), "{}", err.message);
    }

    #[test]
    fn too_many_parts_are_refused_naming_the_part_limit() {
        let mut mail = String::from("From: a@a.example\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n");
        for i in 0..1_001 {
            mail.push_str(&format!("--x\r\nContent-Type: text/plain\r\n\r\npart {i}\r\n"));
        }
        let err = decoded(&(mail + "--x--\r\n")).unwrap_err();
        assert_eq!(err.kind, "input_limit");
        assert!(err.message.contains("1000 parts"), "{}", err.message);
    }

    #[test]
    fn an_encoded_attached_message_is_refused_before_parsing() {
        let mail = "From: a@a.example\r\nContent-Type: message/rfc822\r\n\
                    Content-Transfer-Encoding: base64\r\n\r\nU3ViamVjdDogeA0KDQpoaQ0K\r\n";
        let err = decoded(mail).unwrap_err();
        assert!(err.message.contains("attach it unencoded"), "{}", err.message);
    }
}
