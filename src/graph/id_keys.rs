//! ID keys: each entity's and relation's ID as a number (`idKey`), for the windows pages
//! walk ([`super::window`]).
//!
//! FalkorDB's range index answers a range of string IDs imprecisely: it also reads IDs past
//! the upper bound, up to whole stretches of the next burst (seen: 300 random windows of a
//! seed's IDs read 135,070 rows more than they held, p99 16.5 ms), which the exact bounds
//! then drop. The same windows over a numeric property read 3 extra rows in all (p99
//! 1.3 ms). The key is the ID's first 12 ULID characters: its millisecond times 1,024 plus
//! the top 10 of its random bits, below 2^53 until the year 2248, so exact as a float too.
//! Windows read by key and keep exact bounds on the ID.
//!
//! Entities and relations get their key when created (`entity_seed.cypher`,
//! `relation_create.cypher`); ones created before keys existed get theirs once, at the first
//! start that finds them ([`super::migrations`]).

use crate::params;
use crate::store::graph::CypherEngine;
use serde_json::Value;
use ulid::Ulid;

/// An ID's key (`<prefix>_<ULID>`), or None when `id` is not one.
pub fn id_key(id: &str) -> Option<i64> {
    let (prefix, _) = id.split_once('_')?;
    ulid_of(prefix, id).map(|position| (position >> 70) as i64)
}

/// The position of an ID of `prefix` in the ULID space.
pub fn ulid_of(prefix: &str, id: &str) -> Option<u128> {
    Ulid::from_string(id.strip_prefix(prefix)?.strip_prefix('_')?).ok().map(|u| u.0)
}

/// The creation time in an ID, if it is one of `prefix`.
pub fn timestamp(prefix: &str, id: &str) -> Option<u64> {
    ulid_of(prefix, id).map(|at| Ulid(at).timestamp_ms())
}

/// Checks a page's `cursor`: it must be an ID of `prefix` (`what`: "an entity ID"…), as the
/// previous page's `nextCursor` is; a page walks IDs from it, so anything else is a 400.
pub fn check_cursor(cursor: Option<&str>, prefix: &str, what: &str) -> crate::error::ServiceResult<()> {
    match cursor {
        Some(cursor) if timestamp(prefix, cursor).is_none() => {
            Err(crate::error::ServiceError::invalid_field(
                "cursor",
                format!("must be {what} ({prefix}_…) from a previous page"),
            ))
        }
        _ => Ok(()),
    }
}

/// How many keys a backfill statement sets at once.
const BACKFILL_BATCH: usize = 5_000;

/// Gives every entity and relation without a key its key (see [`super::migrations`]): run at
/// start, before pages are served (one without a key is in no window).
pub(super) async fn backfill(engine: &dyn CypherEngine) -> anyhow::Result<()> {
    let missing = engine.run(super::queries::ID_KEYS_MISSING, &params! {}).await?;
    let started = std::time::Instant::now();
    let rows: Vec<Value> = missing
        .iter()
        .filter_map(|row| row.get("id").and_then(Value::as_str))
        .filter_map(|id| Some(serde_json::json!({ "id": id, "idKey": id_key(id)? })))
        .collect();
    for batch in rows.chunks(BACKFILL_BATCH) {
        engine.run(super::queries::ID_KEYS_SET, &params! { "rows" => batch.to_vec() }).await?;
    }
    if !rows.is_empty() {
        tracing::info!(
            ids = rows.len(),
            seconds = started.elapsed().as_secs_f64(),
            "gave entities and relations their ID keys"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_as_the_ids_do_at_a_thousandth_of_a_millisecond() {
        let at = |ms: u64, random: u128| format!("ent_{}", ulid::Ulid::from_parts(ms, random));
        let now = chrono::Utc::now().timestamp_millis() as u64;
        let (a, b) = (id_key(&at(now, 0)).unwrap(), id_key(&at(now, u128::MAX)).unwrap());
        assert_eq!(b - a, 1_023, "one millisecond spans 1,024 keys");
        assert_eq!(id_key(&at(now + 1, 0)).unwrap(), b + 1);
        assert!((b as f64) < 2f64.powi(53), "exact as a float");
        assert_eq!(id_key(&at(now, 0).replace("ent_", "rel_")), Some(a), "relations' IDs too");
        assert_eq!(id_key("ent_not-a-ulid"), None);
    }
}
