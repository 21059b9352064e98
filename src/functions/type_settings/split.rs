//! A split function's `splitType` (bem-sdk's) and `splitConfig` (canon's), as saving a version
//! checks them and `engines::split` runs them.
//!
//! `splitConfig: {by, itemsPath?, delimiter?}`, `by` one of [`BY`]: `items` reads the array at
//! `itemsPath` (default the input itself), `delimiter` needs a non-empty `delimiter`. Without
//! `by`, `splitType: print_page` splits by pages (`semantic_page` is bem's and not supported
//! here: kept on save, it fails the call), and with neither the input decides (items of a JSON
//! input, pages of a document).

use super::{expression_at, invalid, option, SettingError};
use serde_json::Value;

/// What `splitConfig.by` may be.
pub const BY: [&str; 5] = ["pages", "rows", "attachments", "items", "delimiter"];

/// How a version splits.
#[derive(Debug, PartialEq)]
pub enum By<'a> {
    Pages,
    Rows,
    Attachments,
    /// The array at this path.
    Items(&'a str),
    /// The text between occurrences of this.
    Delimiter(&'a str),
    /// Neither setting given: the input decides.
    Input,
}

/// How the version with these settings splits.
pub fn by<'a>(split_type: Option<&'a Value>, config: Option<&'a Value>) -> Result<By<'a>, SettingError> {
    let config = config.filter(|c| !c.is_null());
    let text = |field: &str| match config {
        Some(config) => option(config, field, "a string", Value::as_str),
        None => Ok(None),
    };
    match text("splitConfig.by")? {
        Some("pages") => Ok(By::Pages),
        Some("rows") => Ok(By::Rows),
        Some("attachments") => Ok(By::Attachments),
        Some("items") => {
            let path = text("splitConfig.itemsPath")?.unwrap_or("@");
            expression_at("splitConfig.itemsPath", path)?;
            Ok(By::Items(path))
        }
        Some("delimiter") => match text("splitConfig.delimiter")?.filter(|d| !d.is_empty()) {
            Some(delimiter) => Ok(By::Delimiter(delimiter)),
            None => Err(invalid(
                "splitConfig.delimiter".into(),
                "is required (non-empty) to split by delimiter".into(),
            )),
        },
        Some(other) => {
            Err(invalid("splitConfig.by".into(), format!("must be one of {} (got {other:?})", BY.join(", "))))
        }
        None => match split_type.and_then(Value::as_str) {
            Some("print_page") => Ok(By::Pages),
            Some("semantic_page") => Err(SettingError::Unsupported {
                field: "splitType".into(),
                message: "semantic_page is not supported; use print_page".into(),
            }),
            Some(other) => Err(invalid("splitType".into(), format!("must be print_page (got {other:?})"))),
            None => Ok(By::Input),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn split_settings_read_as_a_split_and_a_bad_one_names_its_field() {
        let refused = |config: Value| format!("{:?}", by(None, Some(&config)).unwrap_err());
        let items = json!({"by": "items", "itemsPath": "order.lines"});
        assert_eq!(by(None, Some(&items)).unwrap(), By::Items("order.lines"));
        let print_page = json!("print_page");
        assert_eq!(by(Some(&print_page), None).unwrap(), By::Pages);
        assert_eq!(by(None, None).unwrap(), By::Input);
        assert!(refused(json!({"by": "chapters"})).contains("splitConfig.by"));
        assert!(refused(json!({"by": "delimiter", "delimiter": ""})).contains("splitConfig.delimiter"));
        assert!(refused(json!({"by": "items", "itemsPath": 3})).contains("splitConfig.itemsPath"));
        assert!(refused(json!({"by": 5})).contains("must be a string"));
        let deep = refused(json!({"by": "items", "itemsPath": "[".repeat(1000)}));
        assert!(deep.contains("splitConfig.itemsPath") && deep.contains("nested deeper"), "{deep}");
        let semantic = json!("semantic_page");
        assert!(matches!(by(Some(&semantic), None), Err(SettingError::Unsupported { .. })));
    }
}
