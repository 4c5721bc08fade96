//! Records kept on disk instead of in memory, so that the ground truth of a long run
//! (`docs/truth.md`, "Memory") costs disk, not memory: [`DiskVec`] is an array of fixed-size
//! records in an unlinked temporary file (in `std::env::temp_dir()`, i.e. `TMPDIR`), read and
//! written at record offsets. Reads and writes go through the file (the page cache), never
//! through a mapping, so the records do not count in the process's resident memory.
//!
//! Errors are sticky: an I/O error is kept, reads after it give zeroed records, and
//! [`DiskVec::check`] reports it; whoever writes the truth checks before it reports success.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use super::sim::flor_judge::Closed;
use super::sim::flor_sent::{AckGns, SentWqe};
use super::sim::{Accept, Cover, DropCause, Fate, Kind, NackNames, Origin, SdrCtrlNames, TapFrame, TxRec};
use super::spill_var::DiskVarVec;
use rocescope_stacks::RetxReason;

/// A record of fixed size on disk. An all-zero record must decode (to anything): it is what a
/// slot never written reads as.
pub trait Record: Sized {
    const SIZE: usize;
    fn encode(&self, out: &mut Enc<'_>);
    fn decode(inp: &mut Dec<'_>) -> Self;
}

/// Writes a record's fields, little-endian.
pub struct Enc<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Enc<'_> {
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
    pub fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
}

/// Reads a record's fields.
pub struct Dec<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Dec<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        a
    }
    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub fn bool(&mut self) -> bool {
        self.u8() != 0
    }
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, off)
}
#[cfg(unix)]
fn write_all_at(f: &File, buf: &[u8], off: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, buf, off)
}
#[cfg(windows)]
fn read_at(f: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(f, buf, off)
}
#[cfg(windows)]
fn write_all_at(f: &File, mut buf: &[u8], mut off: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(f, buf, off)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
        off += n as u64;
    }
    Ok(())
}

/// Fills `buf` from `off`; what lies past the end of the file reads as zeros.
fn read_full_at(f: &File, buf: &mut [u8], off: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let n = read_at(f, &mut buf[done..], off + done as u64)?;
        if n == 0 {
            buf[done..].fill(0);
            break;
        }
        done += n;
    }
    Ok(())
}

/// An unlinked temporary file; an error names the directory.
fn temp_file() -> io::Result<File> {
    let dir = std::env::temp_dir();
    make_temp_file(&dir)
        .map_err(|e| io::Error::new(e.kind(), format!("a temporary file for the truth in {}: {e}", dir.display())))
}

fn make_temp_file(dir: &std::path::Path) -> io::Result<File> {
    static N: AtomicU64 = AtomicU64::new(0);
    for _ in 0..100 {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let path = dir.join(format!("rocescope-spill-{}-{n}-{nanos}", std::process::id()));
        match std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
            Ok(f) => {
                // Unlinked at once on Unix: the file goes when the handle does.
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary file name"))
}

/// Bytes per cached block of a [`DiskVec`], and blocks cached per array.
const BLOCK: usize = 4 * 1024;
const CACHED: usize = 4;

/// A cached block: its number, its bytes, whether they differ from the file's.
struct Block {
    no: u64,
    bytes: Vec<u8>,
    dirty: bool,
}

/// An array of [`Record`]s in a temporary file, through a small write-back cache of blocks
/// ([`CACHED`] of [`BLOCK`] bytes, evicted round robin), so that the derivation's mostly
/// sequential walks cost few system calls. Methods take `&self`; a slot never written reads as
/// the zeroed record.
pub struct DiskVec<T: Record> {
    file: Option<File>,
    len: Cell<u64>,
    cache: RefCell<(Vec<Block>, usize)>,
    error: RefCell<Option<io::Error>>,
    _t: PhantomData<T>,
}

impl<T: Record> DiskVec<T> {
    /// Records per block (a record never straddles two).
    const PER: u64 = if BLOCK / T::SIZE == 0 { 1 } else { (BLOCK / T::SIZE) as u64 };

    /// An empty array (its file is made now; if that fails, [`Self::check`] says so).
    pub fn new() -> DiskVec<T> {
        let (file, error) = match temp_file() {
            Ok(f) => (Some(f), None),
            Err(e) => (None, Some(e)),
        };
        DiskVec {
            file,
            len: Cell::new(0),
            cache: RefCell::new((Vec::new(), 0)),
            error: RefCell::new(error),
            _t: PhantomData,
        }
    }

    /// Records (one past the highest slot written).
    pub fn len(&self) -> u64 {
        self.len.get()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every record: the array is empty again, its slots zeroed.
    pub fn clear(&self) {
        let (blocks, _) = &mut *self.cache.borrow_mut();
        blocks.clear();
        self.len.set(0);
        if let Some(f) = &self.file {
            if let Err(e) = f.set_len(0) {
                self.fail(e);
            }
        }
    }

    /// The first I/O error, if any happened.
    pub fn check(&self) -> io::Result<()> {
        match self.error.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Keeps `e` as the array's first error, if it has none (an array made from another whose
    /// reads failed).
    pub fn fail_with(&self, e: io::Error) {
        self.fail(e)
    }

    fn fail(&self, e: io::Error) {
        let mut err = self.error.borrow_mut();
        if err.is_none() {
            *err = Some(e);
        }
    }

    fn block_bytes() -> usize {
        Self::PER as usize * T::SIZE
    }

    fn write_back(&self, b: &mut Block) {
        if b.dirty {
            if let Some(f) = &self.file {
                if let Err(e) = write_all_at(f, &b.bytes, b.no * Self::block_bytes() as u64) {
                    self.fail(e);
                }
            }
            b.dirty = false;
        }
    }

    /// Runs `op` on the bytes of record `i` (its block loaded into the cache first).
    fn with<R>(&self, i: u64, write: bool, op: impl FnOnce(&mut [u8]) -> R) -> R {
        let (no, at) = (i / Self::PER, (i % Self::PER) as usize * T::SIZE);
        let mut cache = self.cache.borrow_mut();
        let (blocks, next) = &mut *cache;
        let k = match blocks.iter().position(|b| b.no == no) {
            Some(k) => k,
            None => {
                let mut bytes = vec![0u8; Self::block_bytes()];
                // Blocks wholly past the end were never written: zeros.
                let past_end = no * Self::PER >= self.len.get();
                if let (Some(f), false) = (&self.file, past_end) {
                    if let Err(e) = read_full_at(f, &mut bytes, no * Self::block_bytes() as u64) {
                        self.fail(e);
                        bytes.fill(0);
                    }
                }
                let b = Block { no, bytes, dirty: false };
                if blocks.len() < CACHED {
                    blocks.push(b);
                    blocks.len() - 1
                } else {
                    let k = *next;
                    *next = (k + 1) % CACHED;
                    let mut old = std::mem::replace(&mut blocks[k], b);
                    self.write_back(&mut old);
                    k
                }
            }
        };
        let b = &mut blocks[k];
        b.dirty |= write;
        op(&mut b.bytes[at..at + T::SIZE])
    }

    /// Appends a record.
    pub fn push(&self, v: &T) {
        self.set(self.len.get(), v);
    }

    /// Writes slot `i` (the array grows to hold it).
    pub fn set(&self, i: u64, v: &T) {
        self.with(i, true, |buf| {
            buf.fill(0);
            let mut e = Enc { buf, pos: 0 };
            v.encode(&mut e);
            debug_assert_eq!(e.pos, T::SIZE, "record size");
        });
        self.len.set(self.len.get().max(i + 1));
    }

    /// Slot `i` (zeroed if never written, or after an error).
    pub fn get(&self, i: u64) -> T {
        self.with(i, false, |buf| T::decode(&mut Dec { buf, pos: 0 }))
    }

    /// Every record in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The first slot of `lo..hi` whose record fails `before`, where the records of `lo..hi`
    /// are partitioned (all that pass come before all that fail); `hi` when all pass. The
    /// search starts at slot `near`, gallops out (doubling steps) and then halves, so that it
    /// reads O(log d) records for an answer d slots from `near`: walks in order, starting each
    /// search where the last ended, read mostly blocks already cached.
    pub fn partition_point_near(&self, lo: u64, hi: u64, near: u64, before: impl Fn(&T) -> bool) -> u64 {
        if lo >= hi {
            return lo;
        }
        let pass = |i: u64| before(&self.get(i));
        let c = near.clamp(lo, hi - 1);
        // The answer is in a..=b.
        let (mut a, mut b) = if pass(c) {
            let mut step = 1;
            while c + step < hi && pass(c + step) {
                step *= 2;
            }
            (c + step / 2 + 1, (c + step).min(hi))
        } else {
            let mut step = 1;
            while step <= c - lo && !pass(c - step) {
                step *= 2;
            }
            (if step <= c - lo { c - step + 1 } else { lo }, c - step / 2)
        };
        while a < b {
            let m = a + (b - a) / 2;
            if pass(m) {
                a = m + 1;
            } else {
                b = m;
            }
        }
        a
    }
}

impl<T: Record> Default for DiskVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

// Encodings of the simulator's records. Enums are one byte (0 = the first variant, so that a
// zeroed record decodes); options carry a presence byte.

fn origin_u8(o: Origin) -> u8 {
    match o {
        Origin::Requester => 0,
        Origin::Responder => 1,
        Origin::Nic => 2,
        Origin::Switch => 3,
    }
}
fn origin_of(b: u8) -> Origin {
    match b {
        1 => Origin::Responder,
        2 => Origin::Nic,
        3 => Origin::Switch,
        _ => Origin::Requester,
    }
}
fn kind_u8(k: Kind) -> u8 {
    match k {
        Kind::Data => 0,
        Kind::ReadResp => 1,
        Kind::Ack => 2,
        Kind::Nak => 3,
        Kind::Sack => 4,
        Kind::HoBounce => 5,
        Kind::Cnp => 6,
        Kind::Other => 7,
    }
}
fn kind_of(b: u8) -> Kind {
    match b {
        1 => Kind::ReadResp,
        2 => Kind::Ack,
        3 => Kind::Nak,
        4 => Kind::Sack,
        5 => Kind::HoBounce,
        6 => Kind::Cnp,
        7 => Kind::Other,
        _ => Kind::Data,
    }
}
fn reason_u8(r: Option<RetxReason>) -> u8 {
    match r {
        None => 0,
        Some(RetxReason::GoBack) => 1,
        Some(RetxReason::Sack) => 2,
        Some(RetxReason::HeaderOnly) => 3,
        Some(RetxReason::Timeout) => 4,
        Some(RetxReason::Nack) => 5,
    }
}
fn reason_of(b: u8) -> Option<RetxReason> {
    match b {
        1 => Some(RetxReason::GoBack),
        2 => Some(RetxReason::Sack),
        3 => Some(RetxReason::HeaderOnly),
        4 => Some(RetxReason::Timeout),
        5 => Some(RetxReason::Nack),
        _ => None,
    }
}
fn accept_u8(a: Option<Accept>) -> u8 {
    match a {
        None => 0,
        Some(Accept::Accepted) => 1,
        Some(Accept::Duplicate) => 2,
        Some(Accept::Discarded) => 3,
    }
}
fn accept_of(b: u8) -> Option<Accept> {
    match b {
        1 => Some(Accept::Accepted),
        2 => Some(Accept::Duplicate),
        3 => Some(Accept::Discarded),
        _ => None,
    }
}
fn cause_u8(c: DropCause) -> u8 {
    match c {
        DropCause::Queue => 0,
        DropCause::ControlQueue => 1,
        DropCause::Link => 2,
        DropCause::Switch => 3,
        DropCause::NoEndpoint => 4,
        DropCause::Reorder => 5,
    }
}
fn cause_of(b: u8) -> DropCause {
    match b {
        1 => DropCause::ControlQueue,
        2 => DropCause::Link,
        3 => DropCause::Switch,
        4 => DropCause::NoEndpoint,
        5 => DropCause::Reorder,
        _ => DropCause::Queue,
    }
}

impl Record for TxRec {
    const SIZE: usize =
        4 + 4 + 1 + 1 + 4 + 9 + 1 + 1 + 8 + 4 + (1 + 8 + 1 + 4) + (1 + 8 + 4) + 1 + (1 + 4) + 5 + 5 + 4 + 5 + 5;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u32(self.id);
        o.u32(self.conn);
        o.u8(origin_u8(self.origin));
        o.u8(kind_u8(self.kind));
        o.u32(self.psn);
        o.u8(self.msg.is_some() as u8);
        o.u64(self.msg.unwrap_or(0));
        o.u8(reason_u8(self.reason));
        o.u8(self.to_requester as u8);
        o.u64(self.sent);
        o.u32(self.len);
        let (tag, at, cause, place) = match self.fate {
            Fate::InFlight => (0, 0, 0, 0),
            Fate::Delivered { at } => (1, at, 0, 0),
            Fate::Dropped { at, cause, place } => (2, at, cause_u8(cause), place),
        };
        o.u8(tag);
        o.u64(at);
        o.u8(cause);
        o.u32(place);
        o.u8(self.trimmed.is_some() as u8);
        let (at, place) = self.trimmed.unwrap_or((0, 0));
        o.u64(at);
        o.u32(place);
        o.u8(accept_u8(self.accept));
        let (tag, v) = match self.cover {
            Cover::None => (0, 0),
            Cover::PsnLe(p) => (1, p),
            Cover::PsnLt(p) => (2, p),
            Cover::MsnLt(m) => (3, m),
        };
        o.u8(tag);
        o.u32(v);
        o.u8(self.dcp_msn.is_some() as u8);
        o.u32(self.dcp_msn.unwrap_or(0));
        o.u8(self.copy_of.is_some() as u8);
        o.u32(self.copy_of.unwrap_or(0));
        o.u32(self.qpn);
        o.u8(self.sdr_off.is_some() as u8);
        o.u32(self.sdr_off.unwrap_or(0));
        o.u8(self.sdr_seq.is_some() as u8);
        o.u32(self.sdr_seq.unwrap_or(0));
    }
    fn decode(i: &mut Dec<'_>) -> TxRec {
        let id = i.u32();
        let conn = i.u32();
        let origin = origin_of(i.u8());
        let kind = kind_of(i.u8());
        let psn = i.u32();
        let has_msg = i.bool();
        let msg = i.u64();
        let reason = reason_of(i.u8());
        let to_requester = i.bool();
        let sent = i.u64();
        let len = i.u32();
        let (tag, at, cause, place) = (i.u8(), i.u64(), i.u8(), i.u32());
        let fate = match tag {
            1 => Fate::Delivered { at },
            2 => Fate::Dropped { at, cause: cause_of(cause), place },
            _ => Fate::InFlight,
        };
        let (has_trim, at, place) = (i.bool(), i.u64(), i.u32());
        let accept = accept_of(i.u8());
        let (tag, v) = (i.u8(), i.u32());
        let cover = match tag {
            1 => Cover::PsnLe(v),
            2 => Cover::PsnLt(v),
            3 => Cover::MsnLt(v),
            _ => Cover::None,
        };
        let (has_msn, msn) = (i.bool(), i.u32());
        let (has_copy, copy) = (i.bool(), i.u32());
        let qpn = i.u32();
        let (has_off, off) = (i.bool(), i.u32());
        let (has_seq, seq) = (i.bool(), i.u32());
        TxRec {
            id,
            conn,
            origin,
            kind,
            psn,
            msg: has_msg.then_some(msg),
            reason,
            to_requester,
            sent,
            len,
            fate,
            trimmed: has_trim.then_some((at, place)),
            accept,
            cover,
            dcp_msn: has_msn.then_some(msn),
            copy_of: has_copy.then_some(copy),
            qpn,
            sdr_off: has_off.then_some(off),
            sdr_seq: has_seq.then_some(seq),
        }
    }
}

impl Record for TapFrame {
    const SIZE: usize = 8 + 1 + 8 + 4 + 3;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u64(self.frame);
        o.u8(self.tap);
        o.u64(self.time);
        o.u32(self.tx);
        o.u8(self.incoming as u8);
        o.u8(self.trimmed as u8);
        o.u8(self.ce as u8);
    }
    fn decode(i: &mut Dec<'_>) -> TapFrame {
        TapFrame {
            frame: i.u64(),
            tap: i.u8(),
            time: i.u64(),
            tx: i.u32(),
            incoming: i.bool(),
            trimmed: i.bool(),
            ce: i.bool(),
        }
    }
}

/// What a run spills for its truth instead of keeping it in [`super::sim::Fabric::txs`],
/// [`super::sim::Fabric::tap_frames`], [`super::sim::Fabric::erd_nacks`] and
/// [`super::sim::Fabric::sdr_ctrls`] and Flor's three: every transmission's record at its id
/// once its fate is final, every tap frame in file order, what each ERD NACK segment and SDR
/// control message names, in transmission order (`spill_var.rs`), and Flor's WQEs as sent (in
/// transmission order) and as the receivers closed them (in the order they closed), and the GNs
/// each Flor ACK lists (in transmission order).
pub struct Spilled {
    pub txs: DiskVec<TxRec>,
    pub frames: DiskVec<TapFrame>,
    pub erd_nacks: DiskVarVec<NackNames>,
    pub sdr_ctrls: DiskVarVec<SdrCtrlNames>,
    pub flor_sent: DiskVec<SentWqe>,
    pub flor_wqes: DiskVec<(u32, Closed)>,
    pub flor_acks: DiskVarVec<AckGns>,
}

impl Spilled {
    /// Its temporary files, or why they could not be made.
    pub fn new() -> io::Result<Spilled> {
        let s = Spilled {
            txs: DiskVec::new(),
            frames: DiskVec::new(),
            erd_nacks: DiskVarVec::new(),
            sdr_ctrls: DiskVarVec::new(),
            flor_sent: DiskVec::new(),
            flor_wqes: DiskVec::new(),
            flor_acks: DiskVarVec::new(),
        };
        s.check()?;
        Ok(s)
    }

    /// The first I/O error of any of its files, if any happened.
    pub fn check(&self) -> io::Result<()> {
        self.txs.check()?;
        self.frames.check()?;
        self.erd_nacks.check()?;
        self.sdr_ctrls.check()?;
        self.flor_sent.check()?;
        self.flor_wqes.check()?;
        self.flor_acks.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_as_written() {
        let v: DiskVec<TapFrame> = DiskVec::new();
        let fr = |i: u64| TapFrame {
            frame: i + 1,
            tap: (i % 3) as u8,
            time: i * 7,
            tx: i as u32 * 2,
            incoming: i.is_multiple_of(2),
            trimmed: i.is_multiple_of(5),
            ce: true,
        };
        for i in 0..10_000 {
            v.push(&fr(i));
        }
        assert_eq!(v.len(), 10_000);
        assert_eq!(v.get(4321).time, 4321 * 7);
        let all: Vec<_> = v.iter().collect();
        assert_eq!(all.len(), 10_000);
        assert!(all.iter().enumerate().all(|(i, f)| f.frame == i as u64 + 1 && f.tx == i as u32 * 2));
        v.set(20_000, &fr(5));
        assert_eq!(v.len(), 20_001);
        assert_eq!(v.get(15_000).frame, 0, "a hole reads as zeros");
        assert_eq!(v.get(20_000).time, 35);
        v.check().unwrap();
        v.clear();
        assert!(v.is_empty());
        v.set(3, &fr(9));
        assert_eq!((v.get(0).frame, v.get(3).frame, v.len()), (0, 10, 4), "cleared slots read as zeros");

        let t = TxRec {
            id: 9,
            conn: 2,
            origin: Origin::Nic,
            kind: Kind::HoBounce,
            psn: 0xff_fffe,
            msg: Some(1 << 40),
            reason: Some(RetxReason::Timeout),
            to_requester: true,
            sent: 123,
            len: 1082,
            fate: Fate::Dropped { at: 77, cause: DropCause::Switch, place: 4 },
            trimmed: Some((55, 3)),
            accept: Some(Accept::Discarded),
            cover: Cover::MsnLt(12),
            dcp_msn: Some(7),
            copy_of: Some(3),
            qpn: 0xab_cdef,
            sdr_off: Some(41),
            sdr_seq: Some(0x8000_0001),
        };
        let d: DiskVec<TxRec> = DiskVec::new();
        d.set(3, &t);
        let back = d.get(3);
        assert_eq!(format!("{back:?}"), format!("{t:?}"));
        assert_eq!(d.get(1).fate, Fate::InFlight);
    }
}
