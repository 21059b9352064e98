//! Collection names: dot-separated paths (`customers.premium.vip`). Letters, digits,
//! underscores and dots only; each segment 1–256 characters starting with a letter or an
//! underscore; no leading, trailing or consecutive dots. A collection is created and written
//! to under at most 32 segments and 1,024 characters in all ([`too_long`]).

/// Longest segment accepted.
pub const SEGMENT_MAX: usize = 256;
/// Longest name, and most segments: every point of a collection carries each of its name's
/// prefixes ([`scopes`]), so 50,000 one-letter segments made 2.5 GB of them for one item.
pub const NAME_MAX: usize = 1_024;
pub const SEGMENTS_MAX: usize = 32;

/// Why `name` is not a valid collection name, or `None` when it is.
pub fn problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("must not be empty".into());
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '.')) {
        return Some(format!("{bad:?} is not allowed; use only letters, digits, underscores and dots"));
    }
    if name.starts_with('.') || name.ends_with('.') {
        return Some("must not start or end with a dot".into());
    }
    if name.contains("..") {
        return Some("must not contain consecutive dots".into());
    }
    for segment in name.split('.') {
        if segment.len() > SEGMENT_MAX {
            return Some(format!("segment {:?}… is longer than {SEGMENT_MAX} characters", &segment[..16]));
        }
        if segment.starts_with(|c: char| c.is_ascii_digit()) {
            return Some(format!(
                "segment {segment:?} starts with a digit; each segment must start with a letter or an underscore"
            ));
        }
    }
    None
}

/// Why a collection may not be created, or written to, under `name` (a valid one): it is
/// past [`NAME_MAX`] or [`SEGMENTS_MAX`]. Names created before these bounds stay readable
/// and deletable.
pub fn too_long(name: &str) -> Option<String> {
    if name.len() > NAME_MAX {
        return Some(format!("is {} characters long; at most {NAME_MAX}", name.len()));
    }
    let segments = name.split('.').count();
    (segments > SEGMENTS_MAX).then(|| format!("has {segments} segments; at most {SEGMENTS_MAX}"))
}

/// Every path from the root to `name`: `a.b.c` → `a`, `a.b`, `a.b.c`.
pub fn scopes(name: &str) -> Vec<String> {
    let mut scopes = Vec::new();
    for (i, c) in name.char_indices() {
        if c == '.' {
            scopes.push(name[..i].to_string());
        }
    }
    scopes.push(name.to_string());
    scopes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_examples_are_judged_as_documented() {
        for good in
            ["product_catalog", "orders.line_items.sku", "customer_data", "price_v2", "_private", "A.b2._c"]
        {
            assert_eq!(problem(good), None, "{good}");
        }
        for (bad, why) in [
            ("product-catalog", "'-' is not allowed"),
            ("123items", "starts with a digit"),
            ("items..data", "consecutive dots"),
            ("order#123", "'#' is not allowed"),
            (".items", "start or end with a dot"),
            ("items.", "start or end with a dot"),
            ("a.9b", "starts with a digit"),
            ("", "must not be empty"),
        ] {
            let message = problem(bad).unwrap_or_default();
            assert!(message.contains(why), "{bad}: {message}");
        }
        assert!(problem(&"a".repeat(257)).unwrap().contains("longer than 256"));
        assert_eq!(problem(&"a".repeat(256)), None);
        let deep = vec!["a"; 33].join(".");
        assert_eq!(problem(&deep), None, "readable");
        assert!(too_long(&deep).unwrap().contains("has 33 segments; at most 32"));
        assert_eq!(too_long(&vec!["a"; 32].join(".")), None);
        let long = vec!["a".repeat(200); 6].join(".");
        assert!(too_long(&long).unwrap().contains("is 1205 characters long; at most 1024"));
    }

    #[test]
    fn scopes_are_every_prefix_path() {
        assert_eq!(scopes("a.b.c"), ["a", "a.b", "a.b.c"]);
        assert_eq!(scopes("solo"), ["solo"]);
    }
}
