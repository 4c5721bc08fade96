//! A fast, deterministic hasher for small integer-keyed maps looked up once per frame (the
//! analysers' flow table, the simulator's QP lookups per delivered frame, CNP pacing, first
//! PSNs): the multiply-rotate hash of Firefox and rustc ("FxHash"), written here in a few lines
//! rather than adding a crate. Not DoS-resistant: a capture crafted to collide can make the
//! analysers slow, never wrong. Nothing iterates these maps in an order that reaches an output.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher.
#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
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

/// A `HashMap` with [`FxHasher`].
pub type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with [`FxHasher`].
pub type FxHashSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

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
}
