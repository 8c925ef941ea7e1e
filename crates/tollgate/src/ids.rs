//! Ids and tokens Tollgate makes itself, whatever the store's backend (ground floor).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh id: `<prefix>_<unix ms>_<8 random hex digits>` (upstream's shape).
pub fn new_id(prefix: &str) -> String {
    let ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    format!("{prefix}_{ms}_{}", &random_hex()[..8])
}

/// 16 random hex digits (std's per-instance random hash keys, a counter and the time): unique
/// enough for ids and tokens, not meant as a secret.
pub fn random_hex() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_shaped_and_distinct() {
        let ids: std::collections::BTreeSet<String> = (0..1000).map(|_| new_id("plan")).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let parts: Vec<&str> = id.split('_').collect();
            assert_eq!(parts.len(), 3, "{id}");
            assert_eq!(parts[0], "plan");
            assert!(parts[1].parse::<u64>().is_ok(), "{id}");
            assert_eq!(parts[2].len(), 8, "{id}");
            assert!(parts[2].chars().all(|c| c.is_ascii_hexdigit()), "{id}");
        }
    }
}
