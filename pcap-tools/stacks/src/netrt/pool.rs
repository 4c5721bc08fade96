//! The source ToR's duplicate pool (NetRT paper §III-B): a copy of every packet a host port
//! sends into the fabric, kept in a reserved queue of about one BDP. When the pool is full, the
//! oldest duplicate of the flow with the fewest requests goes (§III-B: flows that ask often are
//! the lossy ones). A request's ePSN acts as a cumulative acknowledgement: every duplicate of
//! the flow below it is freed.
//!
//! Serving a request (§III-B, and docs/stacks.md "NetRT" for the choices): each PSN asked for
//! that the pool holds is resent, unless it was resent less than `suppress_ns` ago (a request
//! repeated before the first resend could arrive); if any is missing, the answer includes the
//! lowest missing PSN for one unfulfilled request.

use std::collections::VecDeque;
use std::hash::Hash;

use rocescope_codec::fxhash::FxHashMap;
use rocescope_codec::ib::psn;

use super::super::Nanos;

struct Entry<M> {
    psn: u32,
    len: u32,
    /// When it was kept.
    at: Nanos,
    /// Arrival order over the whole pool (the eviction's "oldest").
    seq: u64,
    resent_at: Option<Nanos>,
    item: M,
}

struct FlowPool<M> {
    /// Requests this flow has made (saturating, §III-E's 32-bit counter).
    requests: u32,
    entries: VecDeque<Entry<M>>,
}

/// What a request gets from the pool.
#[derive(Debug, PartialEq, Eq)]
pub struct Served<M> {
    /// (PSN, copy) to resend, in the order asked.
    pub resend: Vec<(u32, M)>,
    /// The lowest PSN asked for and not held.
    pub unfulfilled: Option<u32>,
}

/// One host port's pool. `K` names a flow, `M` is the stored copy.
pub struct Pool<K, M> {
    capacity: u64,
    /// A duplicate kept longer than this goes first, whatever its flow asked.
    max_age_ns: Nanos,
    bytes: u64,
    seq: u64,
    flows: FxHashMap<K, FlowPool<M>>,
    /// Duplicates evicted while the pool was full (for the run's statistics).
    pub evicted: u64,
}

impl<K: Copy + Eq + Hash + Ord, M: Clone> Pool<K, M> {
    /// A pool of `capacity` bytes whose duplicates older than `max_age_ns` are evicted first.
    pub fn new(capacity: u64, max_age_ns: Nanos) -> Pool<K, M> {
        Pool { capacity, max_age_ns, bytes: 0, seq: 0, flows: FxHashMap::default(), evicted: 0 }
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the pool holds a duplicate of `flow`'s `psn`.
    pub fn holds(&self, flow: K, psn_: u32) -> bool {
        self.flows.get(&flow).is_some_and(|f| f.entries.iter().any(|e| e.psn == psn_))
    }

    /// A copy of a packet on its way into the fabric at `now` (a newer copy of a PSN replaces
    /// the older).
    pub fn insert(&mut self, flow: K, psn_: u32, len: u32, item: M, now: Nanos) {
        if len as u64 > self.capacity {
            return;
        }
        self.remove(flow, psn_);
        while self.bytes + len as u64 > self.capacity && self.evict_one(now) {}
        self.seq += 1;
        let f = self.flows.entry(flow).or_insert_with(|| FlowPool { requests: 0, entries: VecDeque::new() });
        f.entries.push_back(Entry { psn: psn_, len, at: now, seq: self.seq, resent_at: None, item });
        self.bytes += len as u64;
    }

    fn remove(&mut self, flow: K, psn_: u32) {
        if let Some(f) = self.flows.get_mut(&flow) {
            if let Some(i) = f.entries.iter().position(|e| e.psn == psn_) {
                let e = f.entries.remove(i).expect("position is in range");
                self.bytes -= e.len as u64;
            }
        }
    }

    /// Evicts the oldest duplicate of the flow with the fewest requests (ties: the flow whose
    /// oldest duplicate is oldest), or first the pool's oldest duplicate when it is older than
    /// the maximum age (a flow that asked once and went quiet would otherwise keep its
    /// duplicates for ever, and a flow that never asked keep one); false when the pool is empty.
    fn evict_one(&mut self, now: Nanos) -> bool {
        let fronts = || self.flows.iter().filter_map(|(k, f)| f.entries.front().map(|e| (f, e, *k)));
        let stale = fronts().filter(|(_, e, _)| e.at + self.max_age_ns < now).map(|(_, e, k)| (e.seq, k)).min();
        let victim =
            stale.map(|(_, k)| k).or_else(|| fronts().map(|(f, e, k)| (f.requests, e.seq, k)).min().map(|(_, _, k)| k));
        let Some(k) = victim else { return false };
        let f = self.flows.get_mut(&k).expect("the victim exists");
        let e = f.entries.pop_front().expect("the victim has an entry");
        self.bytes -= e.len as u64;
        self.evicted += 1;
        if f.entries.is_empty() && f.requests == 0 {
            self.flows.remove(&k);
        }
        true
    }

    /// A retransmission request of `flow` for `asked` (its ePSN first) at `now`.
    pub fn serve(
        &mut self,
        flow: K,
        epsn: u32,
        asked: impl Iterator<Item = u32>,
        now: Nanos,
        suppress_ns: Nanos,
    ) -> Served<M> {
        let mut out = Served { resend: Vec::new(), unfulfilled: None };
        let f = self.flows.entry(flow).or_insert_with(|| FlowPool { requests: 0, entries: VecDeque::new() });
        f.requests = f.requests.saturating_add(1);
        // The ePSN acknowledges everything before it.
        let mut freed = 0u64;
        f.entries.retain(|e| {
            let keep = !psn::lt(e.psn, epsn);
            if !keep {
                freed += e.len as u64;
            }
            keep
        });
        self.bytes -= freed;
        for p in asked {
            match f.entries.iter_mut().find(|e| e.psn == p) {
                Some(e) => {
                    if e.resent_at.is_none_or(|t| now >= t + suppress_ns) {
                        e.resent_at = Some(now);
                        out.resend.push((p, e.item.clone()));
                    }
                }
                None => {
                    if out.unfulfilled.is_none_or(|u| psn::lt(p, u)) {
                        out.unfulfilled = Some(p);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_resends_what_is_held_and_names_the_lowest_missing_psn() {
        let mut pool: Pool<u32, u32> = Pool::new(10_000, 1_000_000);
        for p in 100..110 {
            pool.insert(1, p, 1000, p, 0);
        }
        assert_eq!(pool.bytes(), 10_000);
        // The WIRE.md example's shape: ePSN 102, 105 also missing; 100 and 101 are freed.
        let s = pool.serve(1, 102, [102, 105].into_iter(), 0, 1000);
        assert_eq!(s, Served { resend: vec![(102, 102), (105, 105)], unfulfilled: None });
        assert_eq!(pool.bytes(), 8_000);
        // A repeat within the suppression time resends nothing; after it, again.
        assert!(pool.serve(1, 102, [102].into_iter(), 500, 1000).resend.is_empty());
        assert_eq!(pool.serve(1, 102, [102].into_iter(), 1000, 1000).resend, [(102, 102)]);
        // Not held (never seen, or freed): unfulfilled names the lowest.
        let s = pool.serve(1, 103, [103, 120, 101].into_iter(), 2000, 1000);
        assert_eq!(s.resend, [(103, 103)]);
        assert_eq!(s.unfulfilled, Some(101));
    }

    #[test]
    fn a_full_pool_evicts_the_oldest_of_the_flow_that_asks_least() {
        let mut pool: Pool<u32, u32> = Pool::new(4_000, 1_000_000);
        pool.insert(1, 0, 1000, 0, 0);
        pool.insert(2, 0, 1000, 0, 0);
        pool.insert(1, 1, 1000, 1, 0);
        pool.insert(2, 1, 1000, 1, 0);
        // Flow 1 asked once (nothing missing): flow 2 asks less and loses its oldest.
        pool.serve(1, 0, std::iter::empty(), 0, 0);
        pool.insert(1, 2, 1000, 2, 0);
        assert!(!pool.holds(2, 0) && pool.holds(2, 1) && pool.holds(1, 0));
        // Equal requests: the oldest duplicate of the pool goes.
        pool.serve(2, 1, std::iter::empty(), 0, 0);
        pool.insert(2, 2, 1000, 2, 0);
        assert!(!pool.holds(1, 0) && pool.holds(1, 1));
        assert_eq!(pool.bytes(), 4_000);
        assert_eq!(pool.evicted, 2);
        // A newer copy replaces the older one of the same PSN.
        pool.insert(1, 1, 1000, 11, 0);
        assert_eq!(pool.bytes(), 4_000);
        assert_eq!(pool.serve(1, 1, [1].into_iter(), 0, 0).resend, [(1, 11)]);
    }

    #[test]
    fn duplicates_past_the_maximum_age_go_first_whatever_their_flow_asked() {
        // Flow 1 asked once and went quiet with a pool's worth kept; flow 2 never asked.
        let mut pool: Pool<u32, u32> = Pool::new(4_000, 10_000);
        for p in 0..4 {
            pool.insert(1, p, 1000, p, 0);
        }
        pool.serve(1, 0, std::iter::empty(), 0, 0);
        // Within the age LFU rules (flow 2 has nothing yet: flow 1's oldest goes); past it, flow
        // 1's stale ones go, although flow 2 asked less (without the age, flow 2 would evict its
        // own and keep one).
        pool.insert(2, 0, 1000, 0, 5_000);
        assert!(!pool.holds(1, 0) && pool.holds(1, 1) && pool.holds(2, 0));
        for p in 1..4 {
            pool.insert(2, p, 1000, p, 20_000 + p as u64);
        }
        assert!((0..4).all(|p| pool.holds(2, p)), "flow 2 keeps a pool's worth");
        assert!((0..4).all(|p| !pool.holds(1, p)));
    }
}
