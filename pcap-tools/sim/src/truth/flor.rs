//! Flor's ground truth (docs/truth.md "Flor"; seed 002 §4-5, Appendix A.1): Flor's unit of
//! reliability is a `flor_unit_size` unit of a large message (its ADDR_REQ one more), or a small
//! message's one SEND; a WQE transmission (one GN: a WRITE chunk, a WRITE_RETX piece re-sliced
//! from a lost chunk, a DATA or ADDR_REQ SEND) is a copy of every unit it covers, whatever its
//! PSNs. The simulator records each WQE as the sender sent it (`sim/flor_sent.rs`) and as the
//! receiver's UC receive closed it (`sim/flor_judge.rs`), and what each ACK listed; this module
//! indexes them for the truth's derivation: a packet's WQE, the units it covers (numbered densely
//! per connection, like PSNs), its acceptance, the copy that repaired a lost packet, and the ACK
//! that first covers a message at a tap.

use std::cell::Cell;
use std::collections::HashMap;
use std::ops::Range;

use super::sim::flor_judge::{Closed, Verdict};
use super::sim::flor_sent::{SentWqe, WqeKind};
use super::sim::{self, Fabric, TxRec};
use crate::spill::{Dec, DiskVec, Enc, Record};
use crate::spill_sort::sorted_by_key;
use rocescope_codec::ib::psn;

/// A WQE transmission with its message (`u64::MAX` when its first packet named none).
impl Record for (SentWqe, u64) {
    const SIZE: usize = SentWqe::SIZE + 8;
    fn encode(&self, o: &mut Enc<'_>) {
        self.0.encode(o);
        o.u64(self.1);
    }
    fn decode(i: &mut Dec<'_>) -> (SentWqe, u64) {
        (SentWqe::decode(i), i.u64())
    }
}

/// The Flor records of a run, indexed per connection. The records themselves stay on disk
/// (`spill.rs`, sorted by `spill_sort.rs`), whatever the run keeps them in: what the index holds
/// in memory grows with the connections and messages, not with the WQEs and ACKs.
pub(super) struct FlorIndex {
    /// Every WQE transmission with its message, by connection, then in send order (which is
    /// GN order): connection `c`'s at `at[c]..at[c + 1]`.
    sent: DiskVec<(SentWqe, u64)>,
    /// The same, by connection, then message, then send order (a message's at the same
    /// connection's places).
    by_msg: DiskVec<(SentWqe, u64)>,
    at: Vec<u64>,
    /// The WQEs the receiver closed, with their connections, by connection then first
    /// transmission (arrival order, which a UC receive's PSN order makes send order but for a
    /// late packet discarded on its own; sorted all the same, for the searches): connection
    /// `c`'s at `closed_at[c]..closed_at[c + 1]`.
    closed: DiskVec<(u32, Closed)>,
    closed_at: Vec<u64>,
    /// Per connection, per message: its first unit's number; and its data units.
    bases: Vec<Vec<u32>>,
    units: Vec<Vec<u32>>,
    unit: u32,
    mtu: Vec<u32>,
    /// Per connection, where its last search in `sent` (by transmission, by GN) and in `closed`
    /// ended: the derivation's walks are in transmission order, so the next search starts near.
    near_tx: Vec<Cell<u64>>,
    near_gn: Vec<Cell<u64>>,
    near_closed: Vec<Cell<u64>>,
}

/// Per connection, where its records start in an array sorted by connection (and one past the
/// last connection's end).
fn starts(conns: usize, of: impl Iterator<Item = u32>) -> Vec<u64> {
    let mut at = vec![0u64; conns + 1];
    for c in of {
        if let Some(n) = at.get_mut(c as usize + 1) {
            *n += 1;
        }
    }
    for c in 1..at.len() {
        at[c] += at[c - 1];
    }
    at
}

impl FlorIndex {
    pub fn new(f: &Fabric<'_>, tx: impl Fn(u32) -> TxRec) -> FlorIndex {
        let n = f.conns.len();
        let in_order = DiskVec::new();
        let keep_sent = |w: &SentWqe| in_order.push(&(*w, tx(w.first_tx).msg.unwrap_or(u64::MAX)));
        let closed_in_order = DiskVec::new();
        match &f.spilled {
            Some(s) => {
                s.flor_sent.iter().for_each(|w| keep_sent(&w));
                if let Err(e) = s.flor_sent.check() {
                    in_order.fail_with(e);
                }
                s.flor_wqes.iter().for_each(|c| closed_in_order.push(&c));
                if let Err(e) = s.flor_wqes.check() {
                    closed_in_order.fail_with(e);
                }
            }
            None => {
                f.flor_sent.iter().for_each(keep_sent);
                f.flor_wqes.iter().for_each(|c| closed_in_order.push(c));
            }
        }
        // (Stable sorts: a connection's WQEs stay in send order, a message's too.)
        let sent = sorted_by_key(&in_order, |(w, _)| w.conn);
        let by_msg = sorted_by_key(&sent, |(w, m)| (w.conn, *m));
        let at = starts(n, sent.iter().map(|(w, _)| w.conn));
        let closed = sorted_by_key(&closed_in_order, |(conn, c)| (*conn, c.first_tx));
        let closed_at = starts(n, closed.iter().map(|(conn, _)| conn));
        let unit = f.conns.iter().find_map(|c| c.cfg.flor.as_ref().map(|_| c.cfg.params.flor_unit_size)).unwrap_or(1);
        let unit = unit.max(1);
        let (mut bases, mut units) = (Vec::new(), Vec::new());
        for c in &f.conns {
            let (mut b, mut u) = (Vec::new(), Vec::new());
            if let Some(fl) = c.cfg.flor.as_ref() {
                let mut next = 0u32;
                for m in &c.messages {
                    let data = if m.msg.len > fl.send_max { m.msg.len.div_ceil(unit).max(1) } else { 1 };
                    b.push(next);
                    u.push(data);
                    // (A large message's ADDR_REQ is one unit more.)
                    next += data + (m.msg.len > fl.send_max) as u32;
                }
            }
            bases.push(b);
            units.push(u);
        }
        let mtu = f.conns.iter().map(|c| c.cfg.mtu.max(1)).collect();
        let near = |at: &[u64]| at[..n].iter().map(|&a| Cell::new(a)).collect::<Vec<_>>();
        let (near_tx, near_gn, near_closed) = (near(&at), near(&at), near(&closed_at));
        FlorIndex { sent, by_msg, at, closed, closed_at, bases, units, unit, mtu, near_tx, near_gn, near_closed }
    }

    /// The first I/O error reading or writing the index's files, if any happened.
    pub fn check(&self) -> std::io::Result<()> {
        self.sent.check()?;
        self.by_msg.check()?;
        self.closed.check()
    }

    /// Connection `conn`'s places in `sent` (and `by_msg`).
    fn sent_range(&self, conn: u32) -> Option<Range<u64>> {
        Some(*self.at.get(conn as usize)?..*self.at.get(conn as usize + 1)?)
    }

    /// The place in `sent` of the WQE transmission `t` is a packet of.
    fn place(&self, t: &TxRec) -> Option<u64> {
        let r = self.sent_range(t.conn)?;
        let near = &self.near_tx[t.conn as usize];
        let i = self.sent.partition_point_near(r.start, r.end, near.get(), |(w, _)| w.first_tx <= t.id);
        let i = i.checked_sub(1).filter(|&i| i >= r.start)?;
        near.set(i);
        let w = self.sent.get(i).0;
        let k = psn::diff(w.first_psn, t.psn);
        (k >= 0 && (k as u32) < w.packets).then_some(i)
    }

    /// The WQE transmission `t` is a packet of, and its message.
    pub fn wqe(&self, t: &TxRec) -> Option<(SentWqe, u64)> {
        Some(self.sent.get(self.place(t)?))
    }

    /// Connection `conn`'s closed WQE at or before (`at_or_before`) or at or after first
    /// transmission `tx`.
    fn closed_near(&self, conn: u32, tx: u32, at_or_before: bool) -> Option<Closed> {
        let (lo, hi) = (*self.closed_at.get(conn as usize)?, *self.closed_at.get(conn as usize + 1)?);
        let near = &self.near_closed[conn as usize];
        let i = if at_or_before {
            let i = self.closed.partition_point_near(lo, hi, near.get(), |(_, c)| c.first_tx <= tx);
            i.checked_sub(1).filter(|&i| i >= lo)?
        } else {
            self.closed.partition_point_near(lo, hi, near.get(), |(_, c)| c.first_tx < tx)
        };
        (i < hi).then(|| {
            near.set(i);
            self.closed.get(i).1
        })
    }

    /// The units WQE `w` of message `msg` covers, numbered densely per connection.
    pub fn unit_keys(&self, conn: u32, w: &SentWqe, msg: u64) -> Range<u32> {
        let (Some(&base), Some(&data)) = (
            self.bases.get(conn as usize).and_then(|b| b.get(msg as usize)),
            self.units.get(conn as usize).and_then(|u| u.get(msg as usize)),
        ) else {
            return 0..0;
        };
        match w.kind {
            WqeKind::AddrReq { .. } => base + data..base + data + 1,
            WqeKind::Data { .. } => base..base + 1,
            WqeKind::Chunk | WqeKind::Piece { .. } => {
                let start = w.off.min(data);
                base + start..base + (w.off + w.units).min(data)
            }
        }
    }

    /// What the receiver made of packet `t` when it arrived whole (its WQE's verdict: new,
    /// redundant, or lost to the UC receive).
    pub fn accept(&self, t: &TxRec) -> Option<sim::Accept> {
        let c = self.closed_near(t.conn, t.id, true)?;
        let k = psn::diff(c.first_psn, t.psn);
        if k < 0 || k as u32 >= c.packets {
            return None;
        }
        Some(match c.verdict {
            Verdict::New => sim::Accept::Accepted,
            Verdict::Old => sim::Accept::Duplicate,
            Verdict::Aborted => sim::Accept::Discarded,
        })
    }

    /// Whether WQE `w` reached the receiver whole (every packet, its verdict new or redundant).
    pub fn whole(&self, conn: u32, w: &SentWqe) -> bool {
        self.closed_near(conn, w.first_tx, false)
            .is_some_and(|c| c.first_tx == w.first_tx && c.packets == w.packets && c.verdict != Verdict::Aborted)
    }

    /// The unit (of its message: chunk units from 0; DATA and ADDR_REQ 0) of packet `t`'s first
    /// payload byte.
    fn packet_unit(&self, t: &TxRec, w: &SentWqe) -> u32 {
        let k = psn::diff(w.first_psn, t.psn).max(0) as u64;
        let mtu = self.mtu.get(t.conn as usize).copied().unwrap_or(1) as u64;
        let at = match w.kind {
            WqeKind::Chunk => k * mtu,
            WqeKind::Piece { .. } => (k * mtu).saturating_sub(rocescope_codec::ext::flor::SEND_HEADER_LEN as u64),
            WqeKind::Data { .. } | WqeKind::AddrReq { .. } => return 0,
        };
        w.off + (at / self.unit as u64) as u32
    }

    /// The first packet of the WQE transmission that repaired lost packet `t`: the next one of
    /// its message covering the unit of `t`'s first byte (a WRITE_RETX piece for a chunk's, a
    /// SEND again for a SEND's).
    pub fn repair(&self, t: &TxRec) -> Option<u32> {
        let (w, msg) = self.sent.get(self.place(t)?);
        let u = self.packet_unit(t, &w);
        let same = |x: &SentWqe| match (w.kind, x.kind) {
            (WqeKind::Chunk | WqeKind::Piece { .. }, WqeKind::Chunk | WqeKind::Piece { .. }) => x.covers(u),
            (WqeKind::Data { .. }, WqeKind::Data { .. }) | (WqeKind::AddrReq { .. }, WqeKind::AddrReq { .. }) => true,
            _ => false,
        };
        // (The WQEs of `t`'s message sent after its own, in send order.)
        let r = self.sent_range(t.conn)?;
        let after =
            self.by_msg.partition_point_near(r.start, r.end, r.start, |(x, m)| (*m, x.first_tx) <= (msg, w.first_tx));
        (after..r.end)
            .map(|i| self.by_msg.get(i))
            .take_while(|(_, m)| *m == msg)
            .find(|(x, _)| same(x))
            .map(|(x, _)| x.first_tx)
    }

    /// The messages of connection `conn` the ACK listing `gns` covers whole, given what earlier
    /// ACKs listed (`covered`: per message, its data units listed so far): their indices.
    pub fn ack_covers(&self, conn: u32, gns: &[u64], covered: &mut HashMap<u64, Vec<bool>>) -> Vec<u64> {
        let mut out = Vec::new();
        let (Some(r), Some(units)) = (self.sent_range(conn), self.units.get(conn as usize)) else {
            return out;
        };
        let near = &self.near_gn[conn as usize];
        for &gn in gns {
            // (A connection's GNs grow in send order.)
            let i = self.sent.partition_point_near(r.start, r.end, near.get(), |(w, _)| w.gn < gn);
            if i == r.end {
                continue;
            }
            near.set(i);
            let (w, msg) = self.sent.get(i);
            if w.gn != gn {
                continue;
            }
            let Some(&data) = units.get(msg as usize) else { continue };
            let span = match w.kind {
                WqeKind::AddrReq { .. } => continue,
                WqeKind::Data { .. } => 0..1,
                _ => w.off.min(data)..(w.off + w.units).min(data),
            };
            let c = covered.entry(msg).or_insert_with(|| vec![false; data as usize]);
            if c.is_empty() {
                continue;
            }
            span.for_each(|u| c[u as usize] = true);
            if c.iter().all(|&x| x) {
                // (Whole: remembered as empty, so it is reported once.)
                c.clear();
                out.push(msg);
            }
        }
        out
    }
}
