//! A WHERE clause built from optional list filters, with numbered placeholders, for the
//! list endpoints whose filters all AND together, and their ID-cursor pages.

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::Any;

/// Bytes of stored JSON one page of a list reads and shows at most (one item at least): an
/// event's output, a function's body or a view's cells may be large, and a page of many was
/// read whole into memory. A page cut short is shorter than its `limit`; the next goes on from
/// its last item (the SDK pages on until a page is empty). Events, dataset rows, function and
/// workflow lists and view table pages share it.
pub const PAGE_BYTES: usize = 16 * 1024 * 1024;

/// Where a page starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cursor {
    First,
    After(String),
    Before(String),
}

impl Cursor {
    /// Whether a page from here is read by ascending ID: reading forwards follows the sort
    /// order; `endingBefore` reads backwards from it.
    pub fn reads_up(&self, ascending: bool) -> bool {
        let forwards = !matches!(self, Cursor::Before(_));
        forwards == ascending
    }
}

enum Bind {
    Text(String),
    Int(i64),
}

/// Conditions ANDed together; each binds its own values.
#[derive(Default)]
pub struct Filter {
    clauses: Vec<String>,
    binds: Vec<Bind>,
}

impl Filter {
    fn next(&self) -> usize {
        self.binds.len() + 1
    }

    pub fn eq(&mut self, column: &str, value: &str) -> &mut Self {
        self.clauses.push(format!("{column} = ${}", self.next()));
        self.binds.push(Bind::Text(value.to_string()));
        self
    }

    pub fn eq_int(&mut self, column: &str, value: i64) -> &mut Self {
        self.clauses.push(format!("{column} = ${}", self.next()));
        self.binds.push(Bind::Int(value));
        self
    }

    /// `column IN (values)`; an empty list adds nothing (the filter was not given).
    pub fn any_of(&mut self, column: &str, values: &[String]) -> &mut Self {
        self.in_list(column, values.iter().cloned().map(Bind::Text).collect())
    }

    pub fn any_of_int(&mut self, column: &str, values: &[i64]) -> &mut Self {
        self.in_list(column, values.iter().copied().map(Bind::Int).collect())
    }

    fn in_list(&mut self, column: &str, values: Vec<Bind>) -> &mut Self {
        if !values.is_empty() {
            self.clauses.push(format!("{column} IN ({})", placeholders(self.next(), values.len())));
            self.binds.extend(values);
        }
        self
    }

    /// `column IN ({select} IN (values))`: `select` is a subquery up to its own `IN` list
    /// (`SELECT view_id FROM view_functions WHERE function_id`); an empty list adds nothing.
    pub fn any_of_through(&mut self, column: &str, select: &str, values: &[String]) -> &mut Self {
        if !values.is_empty() {
            let list = placeholders(self.next(), values.len());
            self.clauses.push(format!("{column} IN ({select} IN ({list}))"));
            self.binds.extend(values.iter().cloned().map(Bind::Text));
        }
        self
    }

    /// Case-insensitive substring, wildcards in `text` taken literally.
    pub fn contains(&mut self, column: &str, text: &str) -> &mut Self {
        self.clauses.push(format!("LOWER({column}) LIKE ${} ESCAPE '\\'", self.next()));
        self.binds.push(Bind::Text(contains_pattern(text)));
        self
    }

    /// A condition without values.
    pub fn raw(&mut self, clause: &str) -> &mut Self {
        self.clauses.push(clause.to_string());
        self
    }

    pub fn where_clause(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.clauses.join(" AND "))
        }
    }

    /// Narrows the filter to one page of `limit` and gives its `SELECT {columns} FROM
    /// {table} WHERE … ORDER BY {id} … LIMIT n` (count matches before: this adds the
    /// cursor), newest-last when `ascending`. Rows come back in the order the page is read;
    /// [`page_rows`] puts them in display order.
    pub fn page_sql(
        &mut self,
        columns: &str,
        table: &str,
        id: &str,
        cursor: &Cursor,
        ascending: bool,
        limit: u32,
    ) -> String {
        let reads_up = cursor.reads_up(ascending);
        if let Cursor::After(at) | Cursor::Before(at) = cursor {
            let op = if reads_up { ">" } else { "<" };
            self.clauses.push(format!("{id} {op} ${}", self.next()));
            self.binds.push(Bind::Text(at.clone()));
        }
        let order = if reads_up { "ASC" } else { "DESC" };
        format!("SELECT {columns} FROM {table} {} ORDER BY {id} {order} LIMIT {limit}", self.where_clause())
    }

    pub fn bind<'q>(
        &'q self,
        mut query: Query<'q, Any, AnyArguments<'q>>,
    ) -> Query<'q, Any, AnyArguments<'q>> {
        for bind in &self.binds {
            query = match bind {
                Bind::Text(text) => query.bind(text.as_str()),
                Bind::Int(n) => query.bind(*n),
            };
        }
        query
    }
}

/// `LIKE` pattern matching `text` anywhere (lower case), with `%`, `_` and `\\` taken
/// literally.
pub fn contains_pattern(text: &str) -> String {
    let mut pattern = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// `$from, $from+1, …` for `count` values.
pub fn placeholders(from: usize, count: usize) -> String {
    (from..from + count).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// The first of `keys` whose sizes fit in `max_bytes` together, the first of them always:
/// what a page reads whole stays within its bytes (a key without a size, gone meanwhile,
/// costs nothing).
pub fn fitting<K: Clone>(keys: &[K], size: impl Fn(&K) -> Option<i64>, max_bytes: usize) -> Vec<K> {
    let mut total = 0usize;
    let mut kept = Vec::new();
    for key in keys {
        total = total.saturating_add(size(key).unwrap_or(0).max(0) as usize);
        if total > max_bytes && !kept.is_empty() {
            break;
        }
        kept.push(key.clone());
    }
    kept
}

/// `($1, …, $width), ($width+1, …)`: the VALUES of a multi-row insert of `rows` rows.
pub fn value_rows(rows: usize, width: usize) -> String {
    (0..rows).map(|row| format!("({})", placeholders(row * width + 1, width))).collect::<Vec<_>>().join(", ")
}

/// Rows of a page read by [`Filter::page_sql`], in display order.
pub fn page_rows<T>(mut rows: Vec<T>, cursor: &Cursor) -> Vec<T> {
    if matches!(cursor, Cursor::Before(_)) {
        rows.reverse();
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_together_with_numbered_placeholders() {
        let mut filter = Filter::default();
        filter.eq("a", "x").any_of("b", &["1".into(), "2".into()]).any_of("c", &[]).contains("d", "5%");
        assert_eq!(filter.where_clause(), "WHERE a = $1 AND b IN ($2, $3) AND LOWER(d) LIKE $4 ESCAPE '\\'");
    }

    #[test]
    fn a_page_before_a_cursor_reads_against_the_sort_order() {
        let sql = Filter::default().page_sql("id", "t", "id", &Cursor::Before("k".into()), true, 10);
        assert!(sql.ends_with("WHERE id < $1 ORDER BY id DESC LIMIT 10"), "{sql}");
        let sql = Filter::default().page_sql("id", "t", "id", &Cursor::After("k".into()), false, 10);
        assert!(sql.ends_with("WHERE id < $1 ORDER BY id DESC LIMIT 10"), "{sql}");
    }

    #[test]
    fn substring_patterns_take_wildcards_literally() {
        assert_eq!(contains_pattern("Pre_m%"), "%pre\\_m\\%%");
    }

    #[test]
    fn a_page_keeps_the_keys_that_fit_and_the_first_one_always() {
        let sizes = |k: &i64| Some(*k * 10);
        assert_eq!(fitting(&[1, 2, 3, 4], sizes, 60), vec![1, 2, 3]);
        assert_eq!(fitting(&[9, 1], sizes, 60), vec![9], "the first alone, past the bound");
        assert_eq!(fitting(&[1, 5, 1], |k: &i64| (*k != 5).then_some(100), 150), vec![1, 5]);
    }

    #[test]
    fn placeholders_number_from_the_given_position() {
        assert_eq!(placeholders(3, 3), "$3, $4, $5");
    }
}
