//! HTML to text: `script`/`style` content dropped, block elements (`p`, `div`, `br`, `tr`,
//! `li`, headings, …) become line breaks, table cells a tab, other tags vanish, entities are
//! decoded, whitespace is collapsed within lines and runs of blank lines to one.

const BLOCK_TAGS: &[&str] = &[
    "br",
    "p",
    "div",
    "tr",
    "li",
    "ul",
    "ol",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "section",
    "article",
    "header",
    "footer",
    "blockquote",
    "pre",
    "hr",
    "title",
];

pub fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..start]));
        let after = &rest[start + 1..];
        let Some(end) = after.find('>') else {
            rest = "";
            break;
        };
        let tag = &after[..end];
        rest = &after[end + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if (name == "script" || name == "style") && !tag.starts_with('/') {
            let close = format!("</{name}");
            // Not `rest.to_ascii_lowercase()`: a copy of the rest of the file at every such tag
            // was quadratic in a file of many (1.4 million `<style></style>` in 20 MB).
            let position = find_ignoring_case(rest, &close);
            rest = match position.and_then(|p| rest[p..].find('>').map(|q| p + q + 1)) {
                Some(skip) => &rest[skip..],
                None => "",
            };
        } else if BLOCK_TAGS.contains(&name.as_str()) {
            out.push('\n');
        } else if name == "td" || name == "th" {
            out.push('\t');
        }
    }
    out.push_str(&decode_entities(rest));
    tidy(&out)
}

/// Where `needle` (ASCII, lower case, starting with `<`) first starts in `haystack`, in any
/// ASCII case: a byte index that is a character boundary, as `<` is one byte.
fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    let needle = needle.as_bytes();
    haystack.as_bytes().windows(needle.len()).position(|window| window.eq_ignore_ascii_case(needle))
}

/// Collapses whitespace within lines, and runs of blank lines to one.
fn tidy(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() && lines.last().is_none_or(|last| last.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('&') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let end = after.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| entity(&after[..e]));
        match (end, decoded) {
            (Some(e), Some(c)) => {
                out.push(c);
                rest = &after[e + 1..];
            }
            _ => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "euro" => '€',
        "pound" => '£',
        "copy" => '©',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_tags_are_found_in_any_case() {
        assert_eq!(find_ignoring_case("x</STYLE>", "</style"), Some(1));
        assert_eq!(find_ignoring_case("é</Script", "</script"), Some(2));
        assert_eq!(find_ignoring_case("</scrip", "</script"), None);
        assert_eq!(to_text("<p>a</p><SCRIPT>x</sCrIpT><p>b</p>"), "a\n\nb");
    }

    #[test]
    fn tags_scripts_and_entities() {
        let html = "<html><head><style>p{color:red}</style><script>var a = '<p>';</script></head>\
                    <body><h1>Invoice&nbsp;42</h1><p>Total: <b>&#36;1,234.50</b> &amp; tax</p>\
                    <table><tr><td>A</td><td>B</td></tr></table></body></html>";
        assert_eq!(to_text(html), "Invoice 42\n\nTotal: $1,234.50 & tax\n\nA B");
    }

    #[test]
    fn unknown_entities_and_stray_ampersands_stay() {
        assert_eq!(to_text("R&D &bogus; &lt;ok&gt;"), "R&D &bogus; <ok>");
    }
}
