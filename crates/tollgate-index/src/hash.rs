//! Hashing shared by the index: FNV-1a for stable keys (file keys, embedder features), and a
//! one-multiply hasher for maps and sets keyed by `u64`s (hashes or chunk ids: SipHash showed
//! up in profiles of both index builds and queries).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// 64-bit FNV-1a: stable across runs and platforms, so it may be stored.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Hashes a `u64` key with one multiply (Fibonacci hashing), which spreads sequential chunk ids
/// into the high bits hashbrown groups by; not for keys an attacker picks to collide.
#[derive(Debug, Default)]
pub(crate) struct U64Hasher(u64);

impl Hasher for U64Hasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = fnv1a(bytes);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type HashKeyMap<V> = HashMap<u64, V, BuildHasherDefault<U64Hasher>>;
pub(crate) type HashKeySet = HashSet<u64, BuildHasherDefault<U64Hasher>>;
