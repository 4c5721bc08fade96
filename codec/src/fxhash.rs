//! A fast, non-cryptographic hasher for small keys looked up once per frame: the decoder's and
//! the analysers' per-flow maps, the simulator's QP lookups (the word-at-a-time multiply-rotate
//! scheme of Firefox's and rustc's "FxHash", written here in a few lines rather than adding a
//! crate). Its keys come from captures and simulations, not from an adversary we must resist: a
//! capture crafted to collide can make lookups slow, never wrong. Nothing iterates these maps in
//! an order that reaches an output.

use core::hash::{BuildHasherDefault, Hasher};
use std::collections::{HashMap, HashSet};

/// `BuildHasher` for `HashMap<K, V, FxBuild>`.
pub type FxBuild = BuildHasherDefault<FxHasher>;
/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<K> = HashSet<K, FxBuild>;

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// The hasher state: one word.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        while let Some((w, rest)) = bytes.split_first_chunk::<8>() {
            self.add(u64::from_le_bytes(*w));
            bytes = rest;
        }
        if let Some((w, rest)) = bytes.split_first_chunk::<4>() {
            self.add(u64::from(u32::from_le_bytes(*w)));
            bytes = rest;
        }
        for &b in bytes {
            self.add(u64::from(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_work_and_spread_small_keys() {
        let mut m: FxHashMap<u32, u32> = FxHashMap::default();
        for i in 0..10_000u32 {
            m.insert(i * 7, i);
        }
        assert!((0..10_000u32).all(|i| m[&(i * 7)] == i));
        let hash = |k: u32| {
            let mut h = FxHasher::default();
            h.write_u32(k);
            h.finish()
        };
        // Consecutive keys land in different buckets of a 1,024-bucket table (hashbrown indexes
        // buckets by the low bits and keeps 7 high bits as tags).
        let buckets: HashSet<u64> = (0..1024u32).map(|k| hash(k) & 1023).collect();
        assert_eq!(buckets.len(), 1024);
        let tags: HashSet<u64> = (0..1024u32).map(|k| hash(k) >> 57).collect();
        assert!(tags.len() > 100, "{}", tags.len());
    }
    use core::hash::BuildHasher;
    use std::net::{IpAddr, Ipv4Addr};

    #[test]
    fn equal_keys_hash_equal_and_neighbours_differ() {
        let b = FxBuild::default();
        let a = |x: u8| IpAddr::V4(Ipv4Addr::new(10, 0, 0, x));
        assert_eq!(b.hash_one((a(1), a(2), 7u32)), b.hash_one((a(1), a(2), 7u32)));
        assert_ne!(b.hash_one((a(1), a(2), 7u32)), b.hash_one((a(2), a(1), 7u32)));
        assert_ne!(b.hash_one((a(1), a(2), 7u32)), b.hash_one((a(1), a(2), 8u32)));
    }

    #[test]
    fn one_step_is_rotate_xor_multiply() {
        // By hand: from 0, rotate_left(5) is 0, 0 ^ 1 = 1, 1 · SEED = SEED.
        let mut h = FxHasher::default();
        h.write_u32(1);
        assert_eq!(h.finish(), 0x517c_c1b7_2722_0a95);
    }
}
