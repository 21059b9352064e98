//! A JMESPath subset, for `payload_shaping`'s `shapingSchema`, enrich's `sourceField`,
//! split's `itemsPath` and extraction's `x-path`:
//!
//! - field paths `a.b.c`, quoted fields `"a b"`, the current node `@`;
//! - indexes `a[0]`, `a[-1]` (from the end);
//! - projections `a[*].b` (each element; nulls dropped) and flatten `a[].b`;
//! - multiselect hashes `{total: amount, who: customer.name}` and lists `[a, b.c]`, also
//!   after a projection: `items[*].{sku: id, n: qty}`.
//!
//! Not supported (a clear error names the position): filters `[?…]`, slices, pipes, functions,
//! literals, `*` on objects. A missing field is `null`, as in JMESPath.
//!
//! Bounded, since every expression is a tenant's: at most [`MAX_CHARS`] characters and
//! [`MAX_DEPTH`] levels (each step of a path, each projection, hash or list one level), so
//! parsing, evaluating and dropping an expression recurse a bounded depth: `[[[[…` fifty
//! thousand deep overflowed the worker's stack and aborted the whole server. Evaluating builds
//! at most [`MAX_BUILT_BYTES`] beyond twice the input: hashes of `@` chained thirty times
//! doubled the input thirty times. It visits at most [`MAX_VISITS`] values: a hash of a
//! thousand projections of the input builds nothing for items whose field is missing, yet read
//! a million-item input a thousand times (tens of seconds a run, per node).

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// Why an expression is not taken: the message names the position and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapingError(pub String);

impl fmt::Display for ShapingError {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Current,
    Field(String),
    Index(i64),
    /// `left.right`: right applied to the value of left.
    Sub(Box<Expr>, Box<Expr>),
    /// `left[*]right` (or `left[]right` when `flatten`): right applied to each element.
    Project {
        left: Box<Expr>,
        right: Box<Expr>,
        flatten: bool,
    },
    Hash(Vec<(String, Expr)>),
    List(Vec<Expr>),
}

/// The longest expression taken, in characters.
pub const MAX_CHARS: usize = 16 * 1024;
/// The deepest an expression may nest (see the module's docs).
pub const MAX_DEPTH: usize = 100;

/// Parses an expression of the subset.
pub fn parse(expression: &str) -> Result<Expr, ShapingError> {
    let count = expression.chars().count();
    if count > MAX_CHARS {
        return Err(ShapingError(format!(
            "JMESPath expression of {count} characters: at most {MAX_CHARS} are taken"
        )));
    }
    let mut parser = Parser { chars: expression.chars().collect(), at: 0, source: expression };
    let expr = parser.expression(0)?;
    parser.skip_spaces();
    if parser.at < parser.chars.len() {
        return Err(parser.error("unexpected character"));
    }
    Ok(expr)
}

/// Parses and evaluates in one go.
pub fn search(expression: &str, value: &Value) -> Result<Value, ShapingError> {
    evaluate(&parse(expression)?, value)
}

/// Bytes, as [`weight`] counts them, an evaluation may build beyond twice its input's: each
/// hash or list copies what its entries select, so `{a:@,b:@}.{a:@,b:@}…` thirty steps long
/// doubled its input thirty times and took the server's memory.
pub const MAX_BUILT_BYTES: usize = 64 * 1024 * 1024;
/// Values one evaluation visits at most (each step of the expression at each value it reaches
/// one): about a second of evaluating.
pub const MAX_VISITS: usize = 20_000_000;

/// Evaluates an expression, building at most [`MAX_BUILT_BYTES`] plus twice the input's
/// weight (the input itself may come out whole, and a projection may copy it once more).
pub fn evaluate(expr: &Expr, value: &Value) -> Result<Value, ShapingError> {
    let mut budget =
        Budget { left: MAX_BUILT_BYTES, limit: MAX_BUILT_BYTES, input: Some(value), visits_left: MAX_VISITS };
    let found = eval(expr, value, &mut budget)?;
    budget.own(found)
}

/// What a built value's node takes in memory beside its text, roughly (a `Value` is 32 bytes;
/// a map's entry and the allocator add about as much: 64 MiB counted was ~190 MiB resident
/// at 32).
const NODE_BYTES: usize = 64;

/// A value's size in memory, roughly, as the bounds on what tenants' settings build count it
/// (here and [`crate::calls::MAX_OUTPUT_BYTES`]): [`NODE_BYTES`] a node, plus its text and keys.
pub fn weight(value: &Value) -> usize {
    NODE_BYTES
        + match value {
            Value::String(text) => text.len(),
            Value::Array(items) => items.iter().map(weight).sum(),
            Value::Object(map) => map.iter().map(|(key, value)| key.len() + weight(value)).sum(),
            _ => 0,
        }
}

/// What an evaluation may still build.
struct Budget<'i> {
    left: usize,
    limit: usize,
    /// The input, until its share is added: weighed only by an evaluation that needs it, since
    /// an extraction evaluates a path for each field of a document.
    input: Option<&'i Value>,
    /// Values it may still visit.
    visits_left: usize,
}

impl Budget<'_> {
    fn visit(&mut self) -> Result<(), ShapingError> {
        self.visits_left = self.visits_left.checked_sub(1).ok_or_else(|| {
            ShapingError(format!(
                "the expression visits more than {MAX_VISITS} values of this input: select less, or \
                 fewer projections of the same part"
            ))
        })?;
        Ok(())
    }

    fn take(&mut self, bytes: usize) -> Result<(), ShapingError> {
        if bytes > self.left {
            if let Some(input) = self.input.take() {
                let share = weight(input).saturating_mul(2);
                self.left = self.left.saturating_add(share);
                self.limit = self.limit.saturating_add(share);
            }
        }
        self.left = self.left.checked_sub(bytes).ok_or_else(|| {
            ShapingError(format!(
                "the expression builds more than {} MiB from this input: select less, or fewer copies \
                 of the same part",
                self.limit / (1024 * 1024)
            ))
        })?;
        Ok(())
    }

    /// The value itself: a copy of a selected part is counted, a built one was when built.
    fn own(&mut self, value: Cow<'_, Value>) -> Result<Value, ShapingError> {
        match value {
            Cow::Borrowed(part) => {
                self.take(weight(part))?;
                Ok(part.clone())
            }
            Cow::Owned(built) => Ok(built),
        }
    }
}

static NULL: Value = Value::Null;

/// What `expr` selects from `value`: a part of it, or what a hash, list or projection built.
fn eval<'v>(expr: &Expr, value: &'v Value, budget: &mut Budget<'_>) -> Result<Cow<'v, Value>, ShapingError> {
    budget.visit()?;
    Ok(match expr {
        Expr::Current => Cow::Borrowed(value),
        Expr::Field(name) => Cow::Borrowed(value.get(name).unwrap_or(&NULL)),
        Expr::Index(i) => Cow::Borrowed(match value {
            Value::Array(items) => {
                let index = if *i < 0 { items.len() as i64 + i } else { *i };
                usize::try_from(index).ok().and_then(|i| items.get(i)).unwrap_or(&NULL)
            }
            _ => &NULL,
        }),
        Expr::Sub(left, right) => match eval(left, value, budget)? {
            Cow::Borrowed(Value::Null) | Cow::Owned(Value::Null) => Cow::Borrowed(&NULL),
            Cow::Borrowed(inner) => eval(right, inner, budget)?,
            Cow::Owned(inner) => {
                let found = eval(right, &inner, budget)?;
                Cow::Owned(budget.own(found)?)
            }
        },
        Expr::Project { left, right, flatten } => {
            let left = eval(left, value, budget)?;
            let Value::Array(items) = left.as_ref() else { return Ok(Cow::Borrowed(&NULL)) };
            let items: Vec<&Value> = if *flatten {
                items
                    .iter()
                    .flat_map(|item| match item {
                        Value::Array(inner) => inner.iter().collect(),
                        other => vec![other],
                    })
                    .collect()
            } else {
                items.iter().collect()
            };
            let mut projected = Vec::new();
            for item in items {
                let found = eval(right, item, budget)?;
                if !found.is_null() {
                    budget.take(NODE_BYTES)?;
                    projected.push(budget.own(found)?);
                }
            }
            Cow::Owned(Value::Array(projected))
        }
        Expr::Hash(entries) => {
            if value.is_null() {
                return Ok(Cow::Borrowed(&NULL));
            }
            let mut map = Map::new();
            for (key, expr) in entries {
                budget.take(NODE_BYTES + key.len())?;
                let found = eval(expr, value, budget)?;
                map.insert(key.clone(), budget.own(found)?);
            }
            Cow::Owned(Value::Object(map))
        }
        Expr::List(items) => {
            if value.is_null() {
                return Ok(Cow::Borrowed(&NULL));
            }
            let mut list = Vec::with_capacity(items.len());
            for expr in items {
                budget.take(NODE_BYTES)?;
                let found = eval(expr, value, budget)?;
                list.push(budget.own(found)?);
            }
            Cow::Owned(Value::Array(list))
        }
    })
}

struct Parser<'a> {
    chars: Vec<char>,
    at: usize,
    source: &'a str,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> ShapingError {
        // A long expression is quoted by its start only.
        let quoted: String = self.source.chars().take(80).collect();
        let cut = if quoted.len() < self.source.len() { "…" } else { "" };
        ShapingError(format!(
            "JMESPath `{quoted}{cut}`: {what} at position {} (supported: see the shaping docs)",
            self.at
        ))
    }

    /// Refuses a level past [`MAX_DEPTH`].
    fn within(&self, depth: usize) -> Result<(), ShapingError> {
        match depth > MAX_DEPTH {
            true => Err(self.error(&format!("nested deeper than {MAX_DEPTH} levels"))),
            false => Ok(()),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_spaces();
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// An expression at nesting `depth` (see [`MAX_DEPTH`]).
    fn expression(&mut self, depth: usize) -> Result<Expr, ShapingError> {
        let first = self.primary(depth)?;
        self.chain(first, depth)
    }

    /// `.field`, `[n]`, `[*]`, `[]` after a value; each one a level deeper.
    fn chain(&mut self, mut left: Expr, mut depth: usize) -> Result<Expr, ShapingError> {
        loop {
            depth += 1;
            self.within(depth)?;
            self.skip_spaces();
            match self.peek() {
                Some('.') => {
                    self.at += 1;
                    self.skip_spaces();
                    let right = match self.peek() {
                        Some('{') => self.hash(depth)?,
                        Some('[') => self.list(depth)?,
                        _ => Expr::Field(self.identifier()?),
                    };
                    left = Expr::Sub(Box::new(left), Box::new(right));
                }
                Some('[') => {
                    if let Some(flatten) = self.projection_bracket() {
                        let right = self.chain(Expr::Current, depth)?;
                        return Ok(Expr::Project { left: Box::new(left), right: Box::new(right), flatten });
                    }
                    let index = self.index()?;
                    left = Expr::Sub(Box::new(left), Box::new(Expr::Index(index)));
                }
                _ => return Ok(left),
            }
        }
    }

    /// Consumes `[*]` (→ `Some(false)`) or `[]` (→ `Some(true)`).
    fn projection_bracket(&mut self) -> Option<bool> {
        let rest: String = self.chars[self.at..].iter().filter(|c| !c.is_whitespace()).take(3).collect();
        let flatten = if rest.starts_with("[*]") {
            false
        } else if rest.starts_with("[]") {
            true
        } else {
            return None;
        };
        let closing = self.chars[self.at..].iter().position(|&c| c == ']').unwrap_or(0);
        self.at += closing + 1;
        Some(flatten)
    }

    fn index(&mut self) -> Result<i64, ShapingError> {
        self.eat('[');
        self.skip_spaces();
        let start = self.at;
        if self.peek() == Some('-') {
            self.at += 1;
        }
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let number: String = self.chars[start..self.at].iter().collect();
        let index = number.parse().map_err(|_| self.error("expected an index, `*` or `]`"))?;
        if !self.eat(']') {
            return Err(self.error("expected `]`"));
        }
        Ok(index)
    }

    fn primary(&mut self, depth: usize) -> Result<Expr, ShapingError> {
        self.skip_spaces();
        match self.peek() {
            Some('@') => {
                self.at += 1;
                Ok(Expr::Current)
            }
            Some('{') => self.hash(depth + 1),
            Some('[') => {
                // Only the next character that is not a space decides (reading the whole rest
                // at every bracket made a long expression quadratic).
                let next = self.chars[self.at + 1..].iter().find(|c| !c.is_whitespace());
                let is_index = next.is_some_and(|&c| c == '*' || c == ']' || c == '-' || c.is_ascii_digit());
                if is_index {
                    Ok(Expr::Current)
                } else {
                    self.list(depth + 1)
                }
            }
            _ => Ok(Expr::Field(self.identifier()?)),
        }
    }

    fn identifier(&mut self) -> Result<String, ShapingError> {
        self.skip_spaces();
        if self.peek() == Some('"') {
            self.at += 1;
            let start = self.at;
            while self.peek().is_some_and(|c| c != '"') {
                self.at += 1;
            }
            if self.peek() != Some('"') {
                return Err(self.error("unclosed quoted identifier"));
            }
            let name = self.chars[start..self.at].iter().collect();
            self.at += 1;
            return Ok(name);
        }
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '$') {
            self.at += 1;
        }
        if start == self.at {
            return Err(self.error("expected a field name"));
        }
        Ok(self.chars[start..self.at].iter().collect())
    }

    fn hash(&mut self, depth: usize) -> Result<Expr, ShapingError> {
        self.within(depth)?;
        self.eat('{');
        let mut entries = Vec::new();
        loop {
            let key = self.identifier()?;
            if !self.eat(':') {
                return Err(self.error("expected `:` after a key"));
            }
            entries.push((key, self.expression(depth)?));
            if self.eat('}') {
                return Ok(Expr::Hash(entries));
            }
            if !self.eat(',') {
                return Err(self.error("expected `,` or `}`"));
            }
        }
    }

    fn list(&mut self, depth: usize) -> Result<Expr, ShapingError> {
        self.within(depth)?;
        self.eat('[');
        let mut items = Vec::new();
        loop {
            items.push(self.expression(depth)?);
            if self.eat(']') {
                return Ok(Expr::List(items));
            }
            if !self.eat(',') {
                return Err(self.error("expected `,` or `]`"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "invoice": {"number": "INV-42", "total": 12.5},
            "customer name": "Acme",
            "items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}, {"qty": 3}],
            "pages": [[1, 2], [3]]
        })
    }

    #[test]
    fn paths_indexes_and_projections() {
        let d = doc();
        assert_eq!(search("invoice.number", &d).unwrap(), json!("INV-42"));
        assert_eq!(search("\"customer name\"", &d).unwrap(), json!("Acme"));
        assert_eq!(search("items[1].sku", &d).unwrap(), json!("B"));
        assert_eq!(search("items[-1].qty", &d).unwrap(), json!(3));
        assert_eq!(search("items[*].sku", &d).unwrap(), json!(["A", "B"]));
        assert_eq!(search("pages[]", &d).unwrap(), json!([1, 2, 3]));
        assert_eq!(search("missing.field", &d).unwrap(), Value::Null);
        assert_eq!(search("@", &json!(3)).unwrap(), json!(3));
    }

    #[test]
    fn multiselect_hashes_and_lists() {
        let d = doc();
        assert_eq!(
            search("{id: invoice.number, amount: invoice.total, first: items[0].sku}", &d).unwrap(),
            json!({"id": "INV-42", "amount": 12.5, "first": "A"})
        );
        assert_eq!(
            search("items[*].{code: sku, n: qty}", &d).unwrap(),
            json!([{"code": "A", "n": 1}, {"code": "B", "n": 2}, {"code": null, "n": 3}])
        );
        assert_eq!(search("[invoice.number, items[0].qty]", &d).unwrap(), json!(["INV-42", 1]));
    }

    #[test]
    fn an_expression_that_copies_its_input_over_and_over_stops_at_the_budget() {
        // each step doubles what the last built: thirty took the server's memory
        let doubling = vec!["{a: @, b: @}"; 30].join(".");
        let err = search(&doubling, &json!("x")).unwrap_err();
        assert!(err.0.contains("builds more than 64 MiB from this input"), "{err}");
        // a few steps are fine, and a large input may come out whole
        let four = ["{a: @, b: @}"; 4].join(".");
        assert_eq!(search(&four, &json!(1)).unwrap()["a"]["b"]["a"]["b"], json!(1));
        let big = json!({"rows": (0..100_000).map(|i| json!({"id": i, "text": "x".repeat(500)})).collect::<Vec<_>>()});
        assert!(weight(&big) > MAX_BUILT_BYTES / 2);
        assert_eq!(search("@", &big).unwrap(), big);
        assert_eq!(search("rows[*].id", &big).unwrap().as_array().unwrap().len(), 100_000);
    }

    #[test]
    fn an_expression_projecting_a_large_input_over_and_over_stops_at_its_visits() {
        let rows = json!({"rows": (0..100_000).map(|i| json!({"id": i})).collect::<Vec<_>>()});
        let many: Vec<String> = (0..300).map(|i| format!("k{i}: rows[*].missing")).collect();
        let err = search(&format!("{{{}}}", many.join(", ")), &rows).unwrap_err();
        assert!(err.0.contains("visits more than 20000000 values"), "{err}");
        let few: Vec<String> = (0..3).map(|i| format!("k{i}: rows[*].id")).collect();
        let three = search(&format!("{{{}}}", few.join(", ")), &rows).unwrap();
        assert_eq!(three["k2"].as_array().unwrap().len(), 100_000);
    }

    #[test]
    fn unsupported_syntax_is_named() {
        let err = parse("items[?qty > `1`]").unwrap_err();
        assert!(err.0.contains("position 6"), "{err}");
        assert!(parse("a |").is_err());
    }

    #[test]
    fn a_deep_or_long_expression_is_refused_without_exhausting_the_stack() {
        for deep in [
            "[".repeat(10_000),
            format!("a{}", ".a".repeat(5_000)),
            format!("a{}", "[*]".repeat(5_000)),
            "{a:".repeat(5_000),
            format!("a{}", "[0]".repeat(5_000)),
        ] {
            let err = parse(&deep).unwrap_err();
            assert!(err.0.contains("nested deeper than 100 levels"), "{err}");
        }
        let err = parse(&"a".repeat(MAX_CHARS + 1)).unwrap_err();
        assert!(err.0.contains("at most 16384"), "{err}");
        // Within the bounds, deep paths and wide multiselects still read.
        let path = format!("a{}", ".a".repeat(90));
        assert!(parse(&path).is_ok());
        let wide =
            format!("{{{}}}", (0..500).map(|i| format!("k{i}: [x, y[*].z]")).collect::<Vec<_>>().join(", "));
        assert!(parse(&wide).is_ok());
    }
}
