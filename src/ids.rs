//! Prefixed, time-ordered identifiers (`bkt_01J…`): sorting by ID is sorting by creation,
//! which is what makes ID cursors stable.

/// A new ID with the given prefix (`"bkt"` gives `bkt_<ULID>`).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new())
}

/// `count` new IDs with the given prefix, in increasing order across every call in this
/// process, even within one millisecond: items written together list in the order they were
/// sent, and entries two requests write in the same millisecond (an entity's timeline, ordered
/// by time then ID) in the order they were made. A generator per call had ordered such entries
/// by their random bits. Within a millisecond the 80 random bits count up from the last ID's by
/// a random step (as [`new_ksuid`]'s do), so an ID does not give its neighbours away. Two
/// processes' IDs of one millisecond still order by their random bits.
pub fn new_ids(prefix: &str, count: usize) -> Vec<String> {
    (0..count).map(|_| format!("{prefix}_{}", next_ulid())).collect()
}

/// A ULID above every one this function made before (see [`new_ids`]).
fn next_ulid() -> ulid::Ulid {
    use rand::Rng;
    use std::sync::Mutex;
    // Fresh random parts start below 2^79 and steps stay below 2^40: 2^39 IDs a millisecond
    // before a step could pass 80 bits (it then moves to the next millisecond).
    const START: u128 = (1 << 79) - 1;
    const TOP: u128 = 1 << 80;
    // (millisecond, random part) of the last ULID made.
    static LAST: Mutex<(u64, u128)> = Mutex::new((0, 0));
    let now = u64::try_from(now_millis()).unwrap_or_default();
    let mut rng = rand::thread_rng();
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let next = if last.0 >= now && last.0 != 0 {
        // The same millisecond, or the clock stepped back: above the last.
        let random = last.1 + u128::from(rng.gen_range(1..1u64 << 40));
        if random < TOP {
            (last.0, random)
        } else {
            (last.0 + 1, rng.gen::<u128>() & START)
        }
    } else {
        (now, rng.gen::<u128>() & START)
    };
    *last = next;
    ulid::Ulid::from_parts(next.0, next.1)
}

/// A new KSUID (27 base62 characters: a timestamp in seconds, then 128 bits), the shape of
/// event IDs: sorting by ID is sorting by creation second, and, within one process, by
/// creation. Within a second the 128 bits count up from a random start by random steps
/// instead of being drawn afresh: still unguessable, but each event lands at the end of the
/// indexes on its ID, so a write dirties one index page instead of one per event.
pub fn new_ksuid() -> String {
    const EPOCH: i64 = 1_400_000_000;
    let seconds = (chrono::Utc::now().timestamp() - EPOCH).clamp(0, i64::from(u32::MAX)) as u32;
    let payload = next_payload(seconds);
    let mut bytes = [0u8; 20];
    bytes[..4].copy_from_slice(&seconds.to_be_bytes());
    bytes[4..].copy_from_slice(&payload.to_be_bytes());
    base62_27(&bytes)
}

/// The 128 bits of the next KSUID of `second`: above the last one's when it was of the same
/// second (or a later one: the clock stepped back), else a fresh random start.
fn next_payload(second: u32) -> u128 {
    use rand::Rng;
    use std::sync::Mutex;
    // (second, payload) of the last KSUID made.
    static LAST: Mutex<(u32, u128)> = Mutex::new((0, 0));
    let mut rng = rand::thread_rng();
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // Starts in the lower half, steps below 2^64: 2^63 KSUIDs a second before it could wrap.
    let payload = if last.0 >= second && last.0 != 0 {
        last.1 + u128::from(rng.gen_range(1..u64::MAX))
    } else {
        rng.gen::<u128>() >> 1
    };
    *last = (last.0.max(second), payload);
    payload
}

/// Base62 of a 160-bit big-endian number, most significant digit first, zero-padded to 27.
fn base62_27(bytes: &[u8; 20]) -> String {
    const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut digits = [b'0'; 27];
    let mut number = bytes.to_vec();
    for slot in digits.iter_mut().rev() {
        let mut remainder = 0u32;
        for byte in number.iter_mut() {
            let value = (remainder << 8) | u32::from(*byte);
            *byte = (value / 62) as u8;
            remainder = value % 62;
        }
        *slot = ALPHABET[remainder as usize];
    }
    String::from_utf8(digits.to_vec()).unwrap_or_default()
}

/// Whether `id` has the shape of a KSUID.
pub fn is_ksuid(id: &str) -> bool {
    id.len() == 27 && id.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Whether `id` has the shape of an ID with this prefix.
pub fn has_prefix(id: &str, prefix: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Current time as RFC 3339 with millisecond precision, UTC.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// An instant in epoch milliseconds as RFC 3339 with millisecond precision, UTC (the form
/// every stored time is shown in).
pub fn millis_rfc3339(millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(millis)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Current time in epoch milliseconds.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_made_together_are_in_order() {
        let ids = new_ids("itm", 1_000);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn ids_made_one_call_after_another_in_the_same_millisecond_are_in_order() {
        let ids: Vec<String> = (0..2_000).map(|_| new_ids("aud", 1).remove(0)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "each above the one made before");
        let ulids: Vec<ulid::Ulid> =
            ids.iter().map(|id| ulid::Ulid::from_string(&id[4..]).unwrap()).collect();
        let steps: std::collections::HashSet<u128> = ulids
            .windows(2)
            .filter(|w| w[0].timestamp_ms() == w[1].timestamp_ms())
            .map(|w| w[1].random() - w[0].random())
            .collect();
        assert!(!steps.is_empty(), "some IDs of one millisecond to compare");
        assert!(steps.len() > 1 && !steps.contains(&1), "random steps, not a count: {steps:?}");
    }

    #[test]
    fn ksuids_are_27_base62_characters_ordered_by_second() {
        let first = new_ksuid();
        assert!(is_ksuid(&first), "{first}");
        assert_ne!(first, new_ksuid());
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        assert!(new_ksuid() > first);
    }

    #[test]
    fn ksuids_made_in_one_second_are_in_order_and_distinct() {
        let ids: Vec<String> = (0..1_000).map(|_| new_ksuid()).collect();
        let in_order = ids.windows(2).filter(|w| w[0] < w[1]).count();
        // A second may turn during the loop: then one pair starts the next second, in order too.
        assert_eq!(in_order, ids.len() - 1, "{:?}", ids.windows(2).find(|w| w[0] >= w[1]));
    }
}
