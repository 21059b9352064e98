//! What type a file is: the input types canon decodes, their aliases, an attachment's type by
//! content type or name. Below both [`super::inputs`] and [`super::email`], which decode each
//! other's files (an e-mail's attachments, an attached e-mail).

use super::Document;

/// The input types [`supported_input_type`] normalises to (each also names itself).
pub const INPUT_TYPES: &[&str] =
    &["text", "json", "csv", "html", "email", "pdf", "png", "jpeg", "webp", "tiff"];

/// Every name an input type is taken by (in any case), with the type it names.
pub const INPUT_TYPE_NAMES: &[(&str, &str)] = &[
    ("text", "text"),
    ("txt", "text"),
    ("json", "json"),
    ("csv", "csv"),
    ("html", "html"),
    ("htm", "html"),
    ("email", "email"),
    ("eml", "email"),
    ("pdf", "pdf"),
    ("png", "png"),
    ("jpeg", "jpeg"),
    ("jpg", "jpeg"),
    ("jfif", "jpeg"),
    ("webp", "webp"),
    ("tiff", "tiff"),
    ("tif", "tiff"),
];

pub fn supported_input_type(input_type: &str) -> Option<&'static str> {
    let name = input_type.trim();
    INPUT_TYPE_NAMES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map(|(_, input_type)| *input_type)
}

/// A document that is only text, on one page.
pub(super) fn text_document(input_type: &str, text: String) -> Document {
    Document { input_type: input_type.into(), pages: vec![text.clone()], text, ..Document::default() }
}

/// The input type of an attachment, by content type, else by file extension.
pub(super) fn attachment_type(content_type: Option<&str>, name: Option<&str>) -> Option<&'static str> {
    let by_content_type = content_type.and_then(|ct| match ct {
        "text/plain" => Some("text"),
        "text/csv" => Some("csv"),
        "text/html" => Some("html"),
        "application/json" => Some("json"),
        "application/pdf" => Some("pdf"),
        "message/rfc822" => Some("email"),
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpeg"),
        "image/webp" => Some("webp"),
        "image/tiff" => Some("tiff"),
        _ => None,
    });
    by_content_type.or_else(|| {
        let extension = name?.rsplit_once('.')?.1;
        supported_input_type(extension)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_normalised_and_unknown_types_refused() {
        assert_eq!(supported_input_type("JFIF"), Some("jpeg"));
        assert_eq!(supported_input_type("jpg"), Some("jpeg"));
        assert_eq!(supported_input_type("eml"), Some("email"));
        assert_eq!(supported_input_type("docx"), None);
        assert_eq!(supported_input_type("heic"), None);
        assert_eq!(supported_input_type(" Tif "), Some("tiff"));
        for input_type in INPUT_TYPES {
            assert!(INPUT_TYPE_NAMES.contains(&(*input_type, *input_type)), "{input_type} names itself");
        }
    }

    #[test]
    fn attachments_are_typed_by_content_type_then_extension() {
        assert_eq!(attachment_type(Some("application/pdf"), Some("x.bin")), Some("pdf"));
        assert_eq!(attachment_type(Some("application/octet-stream"), Some("scan.JPG")), Some("jpeg"));
        assert_eq!(attachment_type(Some("application/zip"), Some("a.zip")), None);
    }
}
