//! Variable-length records kept on disk instead of in memory, so that what the ground truth
//! needs of a run's control frames costs disk, not memory, as its transmissions do
//! (`docs/truth.md`, "Memory"): ERD's NACK segments name any number of PSNs and SDR's control
//! messages any number of chunks (`sim/erd_nack_names.rs`, `sim/sdr_ctrl_names.rs`).
//!
//! A [`DiskVarVec`] is two [`DiskVec`]s (`spill.rs`: unlinked temporary files read through a
//! small block cache, sticky errors reported by [`DiskVarVec::check`]): one of fixed-size index
//! entries (the record's transmission id, where its words start, how many, and its fixed
//! fields) and one of the 32-bit words of every record's variable part, end to end. Records are
//! appended in transmission-id order, so a record is found by its id with a search over the
//! index; the search starts where the last one ended (galloping out, then halving), so that the
//! derivation's walks, in id order or nearly, read mostly blocks already cached: O(log d) reads
//! for a record d entries from the last one found.

use std::cell::Cell;
use std::io;

use super::spill::{Dec, DiskVec, Enc, Record};

/// A record with fixed fields and a variable list of 32-bit words, known by its transmission.
pub trait VarRecord: Sized {
    /// Its fixed fields, besides its transmission id.
    type Head: Record;
    /// Its transmission's id (records are appended in id order).
    fn tx(&self) -> u32;
    /// Its fixed fields; its variable part appended to `words`.
    fn split(&self, words: &mut Vec<u32>) -> Self::Head;
    /// The record of transmission `tx` back from its parts.
    fn join(tx: u32, head: Self::Head, words: &[u32]) -> Self;
}

/// One 32-bit word of a variable part.
impl Record for u32 {
    const SIZE: usize = 4;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u32(*self);
    }
    fn decode(i: &mut Dec<'_>) -> u32 {
        i.u32()
    }
}

/// A record's index entry: its transmission, its words (`len` from word `at`), its fixed fields.
struct Entry<H> {
    tx: u32,
    at: u64,
    len: u32,
    head: H,
}

impl<H: Record> Record for Entry<H> {
    const SIZE: usize = 4 + 8 + 4 + H::SIZE;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u32(self.tx);
        o.u64(self.at);
        o.u32(self.len);
        self.head.encode(o);
    }
    fn decode(i: &mut Dec<'_>) -> Entry<H> {
        Entry { tx: i.u32(), at: i.u64(), len: i.u32(), head: H::decode(i) }
    }
}

/// [`VarRecord`]s in two temporary files: the index and the words. Methods take `&self`.
pub struct DiskVarVec<T: VarRecord> {
    index: DiskVec<Entry<T::Head>>,
    words: DiskVec<u32>,
    /// Where the last search ended (the next usually starts near it).
    cursor: Cell<u64>,
}

impl<T: VarRecord> DiskVarVec<T> {
    /// An empty store (its files are made now; if that fails, [`Self::check`] says so).
    pub fn new() -> DiskVarVec<T> {
        DiskVarVec { index: DiskVec::new(), words: DiskVec::new(), cursor: Cell::new(0) }
    }

    /// Records.
    pub fn len(&self) -> u64 {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first I/O error of either file, if any happened.
    pub fn check(&self) -> io::Result<()> {
        self.index.check()?;
        self.words.check()
    }

    /// Appends a record (its transmission after every one before it).
    pub fn push(&self, v: &T) {
        debug_assert!(self.is_empty() || self.index.get(self.len() - 1).tx < v.tx(), "records in id order");
        let mut words = Vec::new();
        let head = v.split(&mut words);
        let at = self.words.len();
        for w in &words {
            self.words.push(w);
        }
        self.index.push(&Entry { tx: v.tx(), at, len: words.len() as u32, head });
    }

    /// Record `i` (in order of appending).
    pub fn get(&self, i: u64) -> T {
        let e = self.index.get(i);
        let words: Vec<u32> = (e.at..e.at + e.len as u64).map(|w| self.words.get(w)).collect();
        T::join(e.tx, e.head, &words)
    }

    /// Every record in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The record of transmission `tx`, if there is one.
    pub fn find(&self, tx: u32) -> Option<T> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let at = self.index.partition_point_near(0, n, self.cursor.get(), |e| e.tx < tx);
        self.cursor.set(at.min(n - 1));
        (at < n && self.index.get(at).tx == tx).then(|| self.get(at))
    }
}

impl<T: VarRecord> Default for DiskVarVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{NackNames, SdrCtrlNames};
    use rocescope_codec::ext::sdr::CtrlType;

    /// Record `k`: transmission `3k + 1`, no PSN for every fifth, 1,500 (more than a block of
    /// words) for every 97th, a few otherwise.
    fn nack(k: u32) -> NackNames {
        let n = if k % 5 == 0 {
            0
        } else if k % 97 == 0 {
            1500
        } else {
            k % 7
        };
        NackNames { tx: 3 * k + 1, seq: k.wrapping_mul(2_654_435_761), psns: (0..n).map(|j| k ^ j).collect() }
    }

    #[test]
    fn records_read_back_and_are_found_by_transmission() {
        let v: DiskVarVec<NackNames> = DiskVarVec::new();
        assert_eq!(v.find(1), None, "empty");
        // Thousands of entries: the index and the words span many blocks.
        const N: u32 = 5000;
        for k in 0..N {
            v.push(&nack(k));
        }
        v.check().unwrap();
        assert_eq!(v.len(), N as u64);
        assert!(v.iter().zip(0..).all(|(r, k)| r == nack(k)), "in order");
        assert_eq!(v.get(0).psns, Vec::<u32>::new());
        assert_eq!(v.get(97).psns.len(), 1500);
        // In id order, backwards, jumping about: each present id found, each absent one not.
        let ks: Vec<u32> = (0..N).chain((0..N).rev()).chain((0..N).map(|k| k.wrapping_mul(7919) % N)).collect();
        for k in ks {
            assert_eq!(v.find(3 * k + 1), Some(nack(k)), "record {k}");
            assert_eq!(v.find(3 * k + 2), None, "between records {k} and {}", k + 1);
            assert_eq!(v.find(3 * k), None, "before record {k}");
        }
        assert_eq!(v.find(u32::MAX), None, "past the last");
        v.check().unwrap();
    }

    #[test]
    fn sdr_control_records_keep_both_lists() {
        let v: DiskVarVec<SdrCtrlNames> = DiskVarVec::new();
        let ack = SdrCtrlNames {
            tx: 7,
            kind: CtrlType::SrAck,
            msg_seq: 0x8000_0001,
            cum_ack: Some(0),
            sack_bits: 64,
            newly_sacked: (1..40).collect(),
            indices: vec![],
        };
        let nack = SdrCtrlNames {
            tx: 9,
            kind: CtrlType::EcNack,
            msg_seq: 3,
            cum_ack: None,
            sack_bits: 0,
            newly_sacked: vec![],
            indices: vec![2, 5],
        };
        let cts = SdrCtrlNames { tx: 12, kind: CtrlType::Cts, indices: vec![], ..nack.clone() };
        for r in [&ack, &nack, &cts] {
            v.push(r);
        }
        assert_eq!((v.find(12), v.find(7), v.find(9), v.find(8)), (Some(cts), Some(ack), Some(nack), None));
        v.check().unwrap();
    }
}
