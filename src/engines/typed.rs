//! Typed parsing of values found in text: dates, amounts, integers, booleans, e-mail
//! addresses and phone numbers.
//!
//! - Dates become `YYYY-MM-DD`. Numeric dates: a leading four-digit year is Y-M-D; otherwise
//!   D.M.Y with dots, and with `/` or `-` M/D/Y unless the first number exceeds 12 (then
//!   D/M/Y). Month names and abbreviations (English) in any order; two-digit years are
//!   2000–2069 or 1970–1999.
//! - Amounts: currency signs and codes are ignored; the last of `.`/`,` is the decimal
//!   separator when both appear; a lone `,` followed by exactly three digits groups
//!   thousands, otherwise it is decimal; parentheses or a leading `-` make it negative.
//! - Phone numbers: digits only, with `+`; `00` becomes `+`; ten digits without a prefix are
//!   taken as North American (`+1`); 7 to 15 digits.

use chrono::NaiveDate;
use regex::Regex;
use std::sync::LazyLock;

const MONTHS: [&str; 12] =
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

static DATE_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    let month = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?";
    Regex::new(&format!(
        r"(?i)\b(?:\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}|\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}|(?:\d{{1,2}}(?:st|nd|rd|th)?[ -])?{month}(?:[ -]\d{{1,2}}(?:st|nd|rd|th)?)?,?[ -]\d{{4}})"
    ))
    .expect("date pattern")
});
static EMAIL_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}").expect("email")
});
static PHONE_IN_TEXT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:\+|\b00|\()?\d[\d ().-]{5,}\d").expect("phone"));
static NUMBER_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[-(]?\s*[$€£¥]?\s*(?:\d{1,3}(?:[ \u{a0}]\d{3})+(?:[.,]\d+)?|\d[\d.,']*)").expect("number")
});

/// A date as `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Option<String> {
    let found = DATE_IN_TEXT.find(text)?.as_str();
    let tokens = tokens(found);
    let month_name = tokens.iter().position(|t| month_number(t).is_some());
    let numbers: Vec<&str> =
        tokens.iter().copied().filter(|t| t.chars().all(|c| c.is_ascii_digit())).collect();
    let (year, month, day) = match month_name {
        Some(i) => {
            let month = month_number(tokens[i])?;
            let year = numbers.iter().find(|n| n.len() == 4)?;
            let day = numbers.iter().find(|n| n.len() <= 2).copied().unwrap_or("1");
            (year.parse().ok()?, month, day.parse().ok()?)
        }
        None => {
            let [a, b, c] = numbers[..] else { return None };
            let (a_n, b_n, c_n): (u32, u32, u32) = (a.parse().ok()?, b.parse().ok()?, c.parse().ok()?);
            if a.len() == 4 {
                (a_n as i32, b_n, c_n)
            } else if found.contains('.') || a_n > 12 {
                (full_year(c, c_n), b_n, a_n)
            } else {
                (full_year(c, c_n), a_n, b_n)
            }
        }
    };
    NaiveDate::from_ymd_opt(year, month, day).map(|d| d.format("%Y-%m-%d").to_string())
}

/// The first date in a text, as `YYYY-MM-DD`.
pub fn first_date(text: &str) -> Option<String> {
    DATE_IN_TEXT.find_iter(text).find_map(|m| parse_date(m.as_str()))
}

fn full_year(text: &str, year: u32) -> i32 {
    match (text.len(), year) {
        (2, 0..=69) => 2000 + year as i32,
        (2, _) => 1900 + year as i32,
        _ => year as i32,
    }
}

/// Runs of digits and runs of letters; ordinal suffixes stay apart from their number.
fn tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = None;
    let mut digits = false;
    for (i, c) in text.char_indices() {
        let is_digit = c.is_ascii_digit();
        let is_word = is_digit || c.is_alphabetic();
        match start {
            Some(s) if !is_word || is_digit != digits => {
                tokens.push(&text[s..i]);
                start = is_word.then_some(i);
            }
            None if is_word => start = Some(i),
            _ => {}
        }
        digits = is_digit;
    }
    if let Some(s) = start {
        tokens.push(&text[s..]);
    }
    tokens
}

fn month_number(token: &str) -> Option<u32> {
    let lower = token.to_ascii_lowercase();
    if lower.len() < 3 {
        return None;
    }
    MONTHS.iter().position(|m| lower.starts_with(m)).map(|i| i as u32 + 1)
}

/// An amount or number: `$1,234.50` → 1234.5, `1.234,50 EUR` → 1234.5, `(12)` → -12.
pub fn parse_number(text: &str) -> Option<f64> {
    let found = NUMBER_IN_TEXT.find(text)?.as_str().trim();
    let negative = found.starts_with('-') || (found.starts_with('(') && text.contains(')'));
    let digits: String = found.chars().filter(|c| c.is_ascii_digit() || *c == '.' || *c == ',').collect();
    let digits = digits.trim_end_matches(['.', ',']);
    let last_dot = digits.rfind('.');
    let last_comma = digits.rfind(',');
    let normalised = match (last_dot, last_comma) {
        (Some(d), Some(c)) if c > d => digits.replace('.', "").replace(',', "."),
        (Some(_), Some(_)) => digits.replace(',', ""),
        (None, Some(c)) => {
            let decimals = digits.len() - c - 1;
            if digits.matches(',').count() > 1 || decimals == 3 {
                digits.replace(',', "")
            } else {
                digits.replace(',', ".")
            }
        }
        (Some(_), None) if digits.matches('.').count() > 1 => digits.replace('.', ""),
        _ => digits.to_string(),
    };
    let value: f64 = normalised.parse().ok()?;
    Some(if negative { -value } else { value })
}

/// A whole number (`1,200` → 1200); `None` when it has a fraction.
pub fn parse_integer(text: &str) -> Option<i64> {
    let value = parse_number(text)?;
    (value.fract() == 0.0 && value.abs() < 9.0e15).then_some(value as i64)
}

pub fn parse_boolean(text: &str) -> Option<bool> {
    match text.trim().trim_end_matches('.').to_ascii_lowercase().as_str() {
        "true" | "yes" | "y" | "1" | "x" | "checked" | "on" => Some(true),
        "false" | "no" | "n" | "0" | "unchecked" | "off" | "" => Some(false),
        _ => None,
    }
}

/// The first e-mail address in a text.
pub fn parse_email(text: &str) -> Option<String> {
    EMAIL_IN_TEXT.find(text).map(|m| m.as_str().trim_end_matches('.').to_string())
}

/// A phone number as `+` and digits.
pub fn parse_phone(text: &str) -> Option<String> {
    PHONE_IN_TEXT.find_iter(text).find_map(|m| normalise_phone(m.as_str()))
}

/// The first phone number in a text, skipping dates (a date is never a phone number).
pub fn first_phone(text: &str) -> Option<String> {
    PHONE_IN_TEXT
        .find_iter(text)
        .filter(|m| parse_date(m.as_str()).is_none())
        .filter(|m| {
            m.as_str().starts_with(['+', '('])
                || m.as_str().chars().filter(char::is_ascii_digit).count() >= 10
        })
        .find_map(|m| normalise_phone(m.as_str()))
}

fn normalise_phone(text: &str) -> Option<String> {
    let text = text.trim();
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let international = if text.starts_with('+') {
        digits
    } else if let Some(rest) = digits.strip_prefix("00") {
        rest.to_string()
    } else if digits.len() == 10 {
        format!("1{digits}")
    } else {
        digits
    };
    (7..=15).contains(&international.len()).then(|| format!("+{international}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_many_formats() {
        for (text, expected) in [
            ("2024-01-05", "2024-01-05"),
            ("2024/1/5", "2024-01-05"),
            ("2024-01-05T10:30:00Z", "2024-01-05"),
            ("01/05/2024", "2024-01-05"),
            ("13/05/2024", "2024-05-13"),
            ("05.01.2024", "2024-01-05"),
            ("5 January 2024", "2024-01-05"),
            ("January 5th, 2024", "2024-01-05"),
            ("Jan 5 2024", "2024-01-05"),
            ("05-Jan-2024", "2024-01-05"),
            ("Sept. 30, 2023", "2023-09-30"),
            ("due on 3/4/25 please", "2025-03-04"),
        ] {
            assert_eq!(parse_date(text).as_deref(), Some(expected), "{text}");
        }
        assert_eq!(parse_date("2024-02-30"), None);
        assert_eq!(parse_date("no date here"), None);
        assert_eq!(first_date("Invoice 42, issued 2 March 2024").as_deref(), Some("2024-03-02"));
    }

    #[test]
    fn amounts_with_either_decimal_separator() {
        for (text, expected) in [
            ("$1,234.50", 1234.5),
            ("1.234,50 EUR", 1234.5),
            ("EUR 1 234,50", 1234.5),
            ("12,50 €", 12.5),
            ("1,234", 1234.0),
            ("1.234.567", 1234567.0),
            ("-42.1", -42.1),
            ("(1,000.00)", -1000.0),
            ("USD 99", 99.0),
        ] {
            assert_eq!(parse_number(text), Some(expected), "{text}");
        }
        assert_eq!(parse_number("none"), None);
        assert_eq!(parse_integer("1,200 units"), Some(1200));
        assert_eq!(parse_integer("12.5"), None);
    }

    #[test]
    fn phones_emails_and_booleans() {
        assert_eq!(parse_phone("+44 20 7946 0958").as_deref(), Some("+442079460958"));
        assert_eq!(parse_phone("(555) 123-4567").as_deref(), Some("+15551234567"));
        assert_eq!(parse_phone("0049 30 123456").as_deref(), Some("+4930123456"));
        assert_eq!(parse_phone("12"), None);
        assert_eq!(first_phone("Date 2024-01-05, call +1 555 123 4567").as_deref(), Some("+15551234567"));
        assert_eq!(
            parse_email("Contact: Jane <jane.doe@acme.example>.").as_deref(),
            Some("jane.doe@acme.example")
        );
        assert_eq!(parse_boolean("Yes"), Some(true));
        assert_eq!(parse_boolean("no"), Some(false));
        assert_eq!(parse_boolean("maybe"), None);
    }
}
