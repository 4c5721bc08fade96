//! A hash map with a small direct-mapped table in front, for the per-flow maps looked up once
//! per frame (the decoder's detection state, the analysers' flows). A 64-way incast interleaves
//! its flows frame by frame, so remembering only the last flow would rarely help; the table
//! remembers the last key seen at each of its [`TABLE`] positions (chosen by the key's
//! [`FxHasher`](crate::fxhash::FxHasher) hash), and a hit costs that hash and one compare where
//! the map's probe costs several times as much (about a tenth of each thread's work in
//! `rocescope flows`, measured with callgrind).
//!
//! The table is a cache of the map and never disagrees with it: every insertion goes through
//! [`RecentMap::insert`] (or [`RecentMap::get_or_insert_with`]), which writes both. Nothing is
//! ever removed.

use core::hash::{BuildHasher, Hash};

use crate::fxhash::{FxBuild, FxHashMap};

/// Positions in the table (a power of two): enough for a few hundred interleaved flows to
/// mostly keep their own. Of `n` keys, a share of about `1 - (1 - 1/TABLE)^(n-1)` shares its
/// position with another, and keys that share one evict each other at every lap of an incast:
/// for the 128 flows of a 64-way incast (both directions) that is 12 % at 1,024 positions,
/// where 256 left 39 % of them to the map (`rocescope flows` on `scripts/bench-analysis.sh`'s
/// capture took about 3 % longer; 4,096 positions gained nothing more).
pub const TABLE: usize = 1024;

/// A map `K → V` (both small and `Copy`) with a direct-mapped table of recent keys in front.
#[derive(Clone, Debug)]
pub struct RecentMap<K, V> {
    map: FxHashMap<K, V>,
    table: Box<[Option<(K, V)>]>,
}

impl<K: Hash + Eq + Copy, V: Copy> Default for RecentMap<K, V> {
    fn default() -> Self {
        RecentMap { map: FxHashMap::default(), table: vec![None; TABLE].into_boxed_slice() }
    }
}

impl<K: Hash + Eq + Copy, V: Copy> RecentMap<K, V> {
    /// The table position of `key`: the hash's top bits (FxHash's multiply mixes those best).
    #[inline]
    fn at(key: &K) -> usize {
        (FxBuild::default().hash_one(key) >> (64 - TABLE.trailing_zeros())) as usize
    }

    /// The value of `key`; a key found in the map takes its table position. (The table's
    /// part inlined into the caller, the map's out of line.)
    #[inline(always)]
    pub fn lookup(&mut self, key: &K) -> Option<V> {
        let at = Self::at(key);
        if let Some(Some((k, v))) = self.table.get(at) {
            if k == key {
                return Some(*v);
            }
        }
        self.lookup_map(key, at)
    }

    #[inline(never)]
    fn lookup_map(&mut self, key: &K, at: usize) -> Option<V> {
        let v = *self.map.get(key)?;
        if let Some(e) = self.table.get_mut(at) {
            *e = Some((*key, v));
        }
        Some(v)
    }

    /// The value of `key`, the table left as it is (for lookups that are not per frame).
    pub fn get(&self, key: &K) -> Option<V> {
        if let Some(Some((k, v))) = self.table.get(Self::at(key)) {
            if k == key {
                return Some(*v);
            }
        }
        self.map.get(key).copied()
    }

    /// Sets the value of `key`. (Out of line: per frame, only the lookup runs.)
    #[inline(never)]
    pub fn insert(&mut self, key: K, v: V) {
        self.map.insert(key, v);
        if let Some(e) = self.table.get_mut(Self::at(&key)) {
            *e = Some((key, v));
        }
    }

    /// The value of `key`, inserted as `f()` when it has none.
    #[inline(always)]
    pub fn get_or_insert_with(&mut self, key: K, f: impl FnOnce() -> V) -> V {
        if let Some(v) = self.lookup(&key) {
            return v;
        }
        let v = f();
        self.insert(key, v);
        v
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_a_plain_map_through_collisions_and_updates() {
        let mut m: RecentMap<u32, u32> = RecentMap::default();
        let mut plain = std::collections::HashMap::new();
        // Far more keys than table positions: most share a position with others.
        for round in 0..3u32 {
            for k in 0..2000u32 {
                let key = k.wrapping_mul(2_654_435_761) % 5000;
                if (k + round) % 7 == 0 {
                    m.insert(key, k + round);
                    plain.insert(key, k + round);
                }
                let v = m.get_or_insert_with(key, || key + 1);
                let w = *plain.entry(key).or_insert(key + 1);
                assert_eq!(v, w);
                assert_eq!(m.lookup(&key), Some(w));
                assert_eq!(m.get(&(key + 5000)), None);
            }
        }
        assert_eq!(m.len(), plain.len());
        for (k, v) in &plain {
            assert_eq!(m.get(k), Some(*v));
            assert_eq!(m.lookup(k), Some(*v));
        }
    }
}
