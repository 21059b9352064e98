//! Books (vendor/books, from the `py_stringsimjoin` 0.3.6 sdist): two booksellers' catalogues,
//! 3,022 and 3,099 listings, deduplicated as one set of `Book`s named by their title as each
//! shop writes it ('The Death Cure (Maze Runner Series #3)' against 'The Death Cure (Maze
//! Runner Series #3)(Maze Runner Trilogy (Paperback))'). Listings with one ISBN-13 are one
//! product: that is the truth, and the ISBN is given to neither system. Every pair is judged.
//!
//! Three sets: `books` (both catalogues whole), and a split by ISBN-13 into `books-dev` and
//! `books-test` (a product is in one half with all its listings: the ISBN's twelfth digit
//! even or odd; listings without an ISBN, which no truth pair holds, in `books-dev`).
//! Resolution changes made for the product set were chosen on `books-dev` only; the half to
//! report is `books-test`.
//!
//! With `all`, author and publisher compare as fuzzy text (the shops name imprints
//! differently: 'Scholastic, Inc.' / 'Arthur A. Levine Books'). Page counts and dates are not
//! compared: the shops count pages of different printings and write dates in different forms.

use crate::{all_pairs, csv_rows, LabelledSet, SetRecord};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub const SPLINK_COLUMNS: &[&str] = &["title", "author", "publisher"];

/// Which listings a set holds.
#[derive(Clone, Copy, PartialEq)]
pub enum Part {
    Whole,
    Dev,
    Test,
}

impl Part {
    pub const ALL: [(&'static str, Part); 3] =
        [("books", Part::Whole), ("books-dev", Part::Dev), ("books-test", Part::Test)];

    fn holds(self, isbn: &str) -> bool {
        let odd = isbn.chars().nth(11).and_then(|c| c.to_digit(10)).is_some_and(|d| d % 2 == 1);
        match self {
            Part::Whole => true,
            Part::Dev => !odd,
            Part::Test => odd,
        }
    }
}

pub fn load(dir: &Path, name: &str, part: Part) -> anyhow::Result<LabelledSet> {
    let mut records = Vec::new();
    let mut isbns = Vec::new();
    for file in ["books_table_A.csv", "books_table_B.csv"] {
        let text = std::fs::read_to_string(dir.join(file))
            .map_err(|e| anyhow::anyhow!("{file}: {e}; run `make provision`"))?;
        let rows = csv_rows(&text);
        let header = rows.first().ok_or_else(|| anyhow::anyhow!("{file} is empty"))?;
        let column = |name: &str| {
            header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| anyhow::anyhow!("{file} has no {name} column"))
        };
        let (title, author, publisher, isbn) =
            (column("Title")?, column("Author")?, column("Publisher")?, column("ISBN13")?);
        for row in rows.iter().skip(1).filter(|r| r.len() == header.len() && part.holds(&r[isbn])) {
            let attributes = BTreeMap::from([
                ("author".to_string(), row[author].clone()),
                ("publisher".to_string(), row[publisher].clone()),
            ]);
            isbns.push(row[isbn].clone());
            records.push(SetRecord {
                canonical: row[title].clone(),
                attributes,
                splink: vec![row[title].clone(), row[author].clone(), row[publisher].clone()],
            });
        }
    }
    let mut by_isbn: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, isbn) in isbns.iter().enumerate().filter(|(_, isbn)| !isbn.is_empty()) {
        by_isbn.entry(isbn).or_default().push(i);
    }
    Ok(LabelledSet {
        name: name.into(),
        type_name: "Book",
        records,
        schema: json!({ "properties": {
            "author": { "type": "string", "x-compare": "fuzzy" },
            "publisher": { "type": "string", "x-compare": "fuzzy" },
        }}),
        truth: all_pairs(by_isbn.values()),
        judged: None,
        splink_kind: "books",
        splink_columns: SPLINK_COLUMNS,
    })
}
