//! The event queue the drivers of the stacks (the [`harness`](super::harness) and the fabric
//! simulator, `rocescope-sim`) run on: events come out in time order, and events of the same
//! instant in the order they were scheduled, so a run is a pure function of its inputs.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::Nanos;

/// A queued event, ordered by time then by insertion: `key` is `time << 64 | insertion
/// number`, one comparison per key.
struct Entry<E> {
    key: u128,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.cmp(&o.key)
    }
}

/// Events of type `E`, each due at a time.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0 }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `ev` at `at` (after everything already scheduled at `at`).
    pub fn push(&mut self, at: Nanos, ev: E) {
        self.seq += 1;
        self.heap.push(Reverse(Entry { key: ((at as u128) << 64) | self.seq as u128, ev }));
    }

    /// Takes the next event and its time.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.heap.pop().map(|Reverse(e)| ((e.key >> 64) as Nanos, e.ev))
    }

    /// When the next event is due.
    pub fn next_at(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse(e)| (e.key >> 64) as Nanos)
    }
}
