//! A map keeping the values of the keys most recently started, at most a fixed number: the
//! bounded per-message state of the judges whose messages are named by ids that wrap and are
//! used again (Flor's message ids, SDR-RDMA's message sequence numbers modulo 2^ID).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

pub(super) struct Recent<K, V> {
    map: HashMap<K, V>,
    /// Keys in the order they were started, oldest first.
    order: VecDeque<K>,
    cap: usize,
}

impl<K: Copy + Eq + Hash, V: Default> Recent<K, V> {
    pub fn new(cap: usize) -> Recent<K, V> {
        Recent { map: HashMap::new(), order: VecDeque::new(), cap: cap.max(1) }
    }

    /// The value of `k`, started afresh (`V::default()`) when `fresh` or when `k` is not kept; the
    /// key started longest ago goes when more than the capacity are kept.
    pub fn get_mut(&mut self, k: K, fresh: bool) -> &mut V {
        if fresh || !self.map.contains_key(&k) {
            self.map.insert(k, V::default());
            self.order.retain(|&o| o != k);
            self.order.push_back(k);
            while self.order.len() > self.cap {
                if let Some(old) = self.order.pop_front() {
                    self.map.remove(&old);
                }
            }
        }
        self.map.entry(k).or_default()
    }

    pub fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.map.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recently_started_and_starts_afresh_on_demand() {
        let mut r: Recent<u32, u32> = Recent::new(2);
        *r.get_mut(1, false) = 10;
        *r.get_mut(2, false) = 20;
        assert_eq!(*r.get_mut(1, false), 10, "kept, not started again");
        *r.get_mut(3, false) = 30; // 1 was started first: it goes
        assert_eq!((r.get(&1), r.get(&2), r.get(&3)), (None, Some(&20), Some(&30)));
        assert_eq!(*r.get_mut(2, true), 0, "started afresh");
        *r.get_mut(4, false) = 40; // now 3 is the oldest start
        assert_eq!((r.get(&2), r.get(&3), r.get(&4)), (Some(&0), None, Some(&40)));
    }
}
