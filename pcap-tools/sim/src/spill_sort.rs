//! Sorting records on disk (`docs/truth.md`, "Memory"), so that an index over a run's records
//! costs disk, not memory, whatever the run's length: [`sorted_by_key`] copies a [`DiskVec`] into
//! a new one in key order, stably, holding at most [`RUN`] records in memory at a time. It sorts
//! runs of [`RUN`] records in memory, then merges pairs of runs from one temporary file into
//! another until one run is left: each pass reads and writes the records in order, through the
//! arrays' block caches.

use super::spill::{DiskVec, Record};

/// Records sorted in memory at a time (fewer in the crate's own tests, so that small runs
/// take several merge passes).
pub const RUN: u64 = if cfg!(test) { 256 } else { 1 << 14 };

/// `v`'s records in a new array, ordered by `key`; records of equal keys keep their order.
pub fn sorted_by_key<T: Record, K: Ord>(v: &DiskVec<T>, key: impl Fn(&T) -> K) -> DiskVec<T> {
    let n = v.len();
    let mut from = DiskVec::new();
    let mut run = Vec::with_capacity(RUN.min(n) as usize);
    for start in (0..n).step_by(RUN as usize) {
        run.extend((start..(start + RUN).min(n)).map(|i| v.get(i)));
        run.sort_by_key(&key);
        run.drain(..).for_each(|r| from.push(&r));
    }
    if let Err(e) = v.check() {
        from.fail_with(e);
    }
    let mut width = RUN;
    while width < n {
        let to = DiskVec::new();
        let at = |k: u64, end: u64| (k < end).then(|| from.get(k));
        for start in (0..n).step_by(2 * width as usize) {
            let (mid, end) = ((start + width).min(n), (start + 2 * width).min(n));
            let (mut i, mut j) = (start, mid);
            let (mut a, mut b) = (at(i, mid), at(j, end));
            loop {
                // (Ties take the left run's first: stable.)
                let left = match (&a, &b) {
                    (Some(x), Some(y)) => key(x) <= key(y),
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => break,
                };
                if left {
                    to.push(a.as_ref().expect("a left record"));
                    i += 1;
                    a = at(i, mid);
                } else {
                    to.push(b.as_ref().expect("a right record"));
                    j += 1;
                    b = at(j, end);
                }
            }
        }
        if let Err(e) = from.check() {
            to.fail_with(e);
        }
        from = to;
        width *= 2;
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::{Dec, Enc};

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Pair(u32, u32);

    impl Record for Pair {
        const SIZE: usize = 8;
        fn encode(&self, o: &mut Enc<'_>) {
            o.u32(self.0);
            o.u32(self.1);
        }
        fn decode(i: &mut Dec<'_>) -> Pair {
            Pair(i.u32(), i.u32())
        }
    }

    /// Against the standard library's stable sort, over sizes around the run length (one run,
    /// a run and a bit, several passes, an odd number of runs), with many equal keys whose
    /// order must survive.
    #[test]
    fn sorts_stably_as_the_standard_library_does() {
        for n in [0, 1, 7, RUN - 1, RUN, RUN + 1, 3 * RUN + 17, 5 * RUN] {
            let v = DiskVec::new();
            let recs: Vec<Pair> = (0..n as u32).map(|i| Pair(i.wrapping_mul(2_654_435_761) % 1000, i)).collect();
            recs.iter().for_each(|r| v.push(r));
            let sorted = sorted_by_key(&v, |r| r.0);
            let mut want = recs.clone();
            want.sort_by_key(|r| r.0);
            sorted.check().unwrap();
            assert_eq!(sorted.len(), n, "{n} records");
            assert!(sorted.iter().eq(want.iter().copied()), "{n} records");
        }
    }
}
