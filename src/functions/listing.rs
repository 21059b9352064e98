//! Sorting, cursor paging and filter parsing shared by the function and workflow lists.
//! Lists are built in memory from the environment's current versions, so one routine pages
//! every kind of key (IDs, version numbers) in both sort orders.

use crate::error::ServiceError;

pub use crate::pagination::Order;

/// One page of a list: at most `limit` items after (or before) a cursor, in `order`.
#[derive(Clone, Debug)]
pub struct Page<K> {
    pub limit: usize,
    pub order: Order,
    pub starting_after: Option<K>,
    pub ending_before: Option<K>,
}

impl<K: Ord> Page<K> {
    /// Takes the page out of `items` (in ascending key order): with `startingAfter` the
    /// first `limit` items after the cursor in list order, with `endingBefore` the last
    /// `limit` items before it; either way in list order.
    pub fn take<T>(&self, mut items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
        if self.order == Order::Desc {
            items.reverse();
        }
        let before_cursor = |item: &T, cursor: &K| match self.order {
            Order::Asc => key(item) < *cursor,
            Order::Desc => key(item) > *cursor,
        };
        if let Some(cursor) = &self.ending_before {
            let kept: Vec<T> = items.into_iter().filter(|item| before_cursor(item, cursor)).collect();
            let skip = kept.len().saturating_sub(self.limit);
            return kept.into_iter().skip(skip).collect();
        }
        let after = |item: &T| match &self.starting_after {
            Some(cursor) => !before_cursor(item, cursor) && key(item) != *cursor,
            None => true,
        };
        items.into_iter().filter(after).take(self.limit).collect()
    }
}

/// Bytes of function or workflow bodies one page of a list reads and shows (a body may be up
/// to a request's 2 MB, a page 100 of them): the page ends early, and the next
/// (`startingAfter` its last, `endingBefore` its first) goes on from there.
pub use crate::store::records::filters::PAGE_BYTES;

impl<K> Page<K> {
    /// The page's items nearest its cursor first (its last first when it ends before one),
    /// or, applied again, back in list order: what a byte bound keeps is the part nearest
    /// the cursor, so the next page goes on after it.
    pub fn from_cursor<T>(&self, mut items: Vec<T>) -> Vec<T> {
        if self.ending_before.is_some() {
            items.reverse();
        }
        items
    }
}

/// Rejects `startingAfter` together with `endingBefore`.
pub fn exclusive<K>(starting_after: &Option<K>, ending_before: &Option<K>) -> Result<(), ServiceError> {
    if starting_after.is_some() && ending_before.is_some() {
        return Err(ServiceError::Invalid {
            message: "startingAfter and endingBefore are mutually exclusive; send one".into(),
            details: Some(serde_json::json!({
                "fields": ["startingAfter", "endingBefore"],
                "error": "mutually exclusive"
            })),
        });
    }
    Ok(())
}

/// Parses `<key>.<versionNum>` entries of the parameter `field`.
pub fn version_refs(field: &str, entries: &[String]) -> Result<Vec<(String, i64)>, ServiceError> {
    entries
        .iter()
        .map(|entry| {
            entry
                .rsplit_once('.')
                .and_then(|(key, num)| {
                    let num = num.parse::<i64>().ok().filter(|n| *n >= 1)?;
                    (!key.is_empty()).then(|| (key.to_string(), num))
                })
                .ok_or_else(|| {
                    ServiceError::invalid_field(
                        field,
                        format!(
                            "entries must look like <id or name>.<versionNum>, e.g. invoice.3 (got {entry:?})"
                        ),
                    )
                })
        })
        .collect()
}

/// The page size within 1..=100 (default 50).
pub fn limit(raw: Option<i64>) -> Result<usize, ServiceError> {
    match raw {
        None => Ok(50),
        Some(n) if (1..=100).contains(&n) => Ok(n as usize),
        Some(n) => Err(ServiceError::invalid_field("limit", format!("must be between 1 and 100 (got {n})"))),
    }
}

/// A page of a list keyed by IDs with `prefix` (`fn`, `wf`).
pub fn id_page(
    limit_raw: Option<i64>,
    sort_order: Option<&str>,
    starting_after: Option<String>,
    ending_before: Option<String>,
    prefix: &str,
) -> Result<Page<String>, ServiceError> {
    let starting_after = starting_after.filter(|s| !s.is_empty());
    let ending_before = ending_before.filter(|s| !s.is_empty());
    exclusive(&starting_after, &ending_before)?;
    for (field, cursor) in [("startingAfter", &starting_after), ("endingBefore", &ending_before)] {
        if let Some(id) = cursor {
            if !crate::ids::has_prefix(id, prefix) {
                return Err(ServiceError::invalid_field(
                    field,
                    format!("must be an ID starting with {prefix}_"),
                ));
            }
        }
    }
    Ok(Page { limit: limit(limit_raw)?, order: Order::parse(sort_order)?, starting_after, ending_before })
}

/// A page of a version history (cursors are version numbers).
pub fn version_page(
    limit_raw: Option<i64>,
    sort_order: Option<&str>,
    starting_after: Option<i64>,
    ending_before: Option<i64>,
) -> Result<Page<i64>, ServiceError> {
    exclusive(&starting_after, &ending_before)?;
    Ok(Page { limit: limit(limit_raw)?, order: Order::parse(sort_order)?, starting_after, ending_before })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(order: Order, after: Option<i64>, before: Option<i64>) -> Vec<i64> {
        Page { limit: 2, order, starting_after: after, ending_before: before }.take((1..=5).collect(), |n| *n)
    }

    #[test]
    fn pages_run_forwards_and_backwards_in_both_orders() {
        assert_eq!(page(Order::Asc, None, None), vec![1, 2]);
        assert_eq!(page(Order::Asc, Some(2), None), vec![3, 4]);
        assert_eq!(page(Order::Asc, None, Some(4)), vec![2, 3]);
        assert_eq!(page(Order::Desc, None, None), vec![5, 4]);
        assert_eq!(page(Order::Desc, Some(4), None), vec![3, 2]);
        assert_eq!(page(Order::Desc, None, Some(2)), vec![4, 3]);
        assert_eq!(page(Order::Asc, Some(5), None), Vec::<i64>::new());
    }

    #[test]
    fn version_entries_need_a_number_after_the_last_dot() {
        assert_eq!(version_refs("f", &["wf_A.3".into()]).unwrap(), vec![("wf_A".to_string(), 3)]);
        assert!(version_refs("f", &["abc".into()]).is_err());
        assert!(version_refs("f", &["abc.x".into()]).is_err());
        assert!(version_refs("f", &["abc.0".into()]).is_err());
    }
}
