//! Flor's ground truth (docs/truth.md "Flor"; seed 002 §4-5, Appendix A.1): Flor's unit of
//! reliability is a `flor_unit_size` unit of a large message (its ADDR_REQ one more), or a small
//! message's one SEND; a WQE transmission (one GN: a WRITE chunk, a WRITE_RETX piece re-sliced
//! from a lost chunk, a DATA or ADDR_REQ SEND) is a copy of every unit it covers, whatever its
//! PSNs. The simulator records each WQE as the sender sent it (`sim/flor_sent.rs`) and as the
//! receiver's UC receive closed it (`sim/flor_judge.rs`), and what each ACK listed; this module
//! indexes them for the truth's derivation: a packet's WQE, the units it covers (numbered densely
//! per connection, like PSNs), its acceptance, the copy that repaired a lost packet, and the ACK
//! that first covers a message at a tap.

use std::collections::HashMap;
use std::ops::Range;

use super::sim::flor_judge::{Closed, Verdict};
use super::sim::flor_sent::{SentWqe, WqeKind};
use super::sim::{self, Fabric, TxRec};
use rocescope_codec::ib::psn;

/// The Flor records of a run, per connection.
pub(super) struct FlorIndex {
    /// Per connection: its WQE transmissions in send order, with their messages.
    sent: Vec<Vec<(SentWqe, u64)>>,
    /// Per connection: the WQEs the receiver closed, in arrival order (its UC receive takes them
    /// in PSN order).
    closed: Vec<Vec<Closed>>,
    /// Per connection, per message: its first unit's number; and its data units.
    bases: Vec<Vec<u32>>,
    units: Vec<Vec<u32>>,
    /// Per connection: a WQE's place in `sent` by GN.
    by_gn: Vec<HashMap<u64, usize>>,
    unit: u32,
    mtu: Vec<u32>,
}

impl FlorIndex {
    pub fn new(f: &Fabric<'_>, tx: impl Fn(u32) -> TxRec) -> FlorIndex {
        let n = f.conns.len();
        let mut sent: Vec<Vec<(SentWqe, u64)>> = vec![Vec::new(); n];
        for w in &f.flor_sent {
            let msg = tx(w.first_tx).msg.unwrap_or(u64::MAX);
            sent[w.conn as usize].push((*w, msg));
        }
        let mut closed: Vec<Vec<Closed>> = vec![Vec::new(); n];
        for (conn, c) in &f.flor_wqes {
            closed[*conn as usize].push(*c);
        }
        // (In arrival order, which a UC receive's PSN order makes send order; sorted all the
        // same, for the binary searches.)
        closed.iter_mut().for_each(|v| v.sort_by_key(|c| c.first_tx));
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
        let by_gn = sent.iter().map(|v| v.iter().enumerate().map(|(i, (w, _))| (w.gn, i)).collect()).collect();
        let mtu = f.conns.iter().map(|c| c.cfg.mtu.max(1)).collect();
        FlorIndex { sent, closed, bases, units, by_gn, unit, mtu }
    }

    /// The place in its connection's `sent` of the WQE transmission `t` is a packet of.
    fn place(&self, t: &TxRec) -> Option<usize> {
        let v = self.sent.get(t.conn as usize)?;
        let i = v.partition_point(|(w, _)| w.first_tx <= t.id).checked_sub(1)?;
        let w = &v[i].0;
        let k = psn::diff(w.first_psn, t.psn);
        (k >= 0 && (k as u32) < w.packets).then_some(i)
    }

    /// The WQE transmission `t` is a packet of, and its message.
    pub fn wqe(&self, t: &TxRec) -> Option<(&SentWqe, u64)> {
        let (w, m) = &self.sent[t.conn as usize][self.place(t)?];
        Some((w, *m))
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
        let v = self.closed.get(t.conn as usize)?;
        let i = v.partition_point(|c| c.first_tx <= t.id).checked_sub(1)?;
        let c = &v[i];
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
        let Some(v) = self.closed.get(conn as usize) else { return false };
        let i = v.partition_point(|c| c.first_tx < w.first_tx);
        v.get(i).is_some_and(|c| c.first_tx == w.first_tx && c.packets == w.packets && c.verdict != Verdict::Aborted)
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
        let i = self.place(t)?;
        let v = &self.sent[t.conn as usize];
        let (w, msg) = &v[i];
        let u = self.packet_unit(t, w);
        let same = |x: &SentWqe| match (w.kind, x.kind) {
            (WqeKind::Chunk | WqeKind::Piece { .. }, WqeKind::Chunk | WqeKind::Piece { .. }) => x.covers(u),
            (WqeKind::Data { .. }, WqeKind::Data { .. }) | (WqeKind::AddrReq { .. }, WqeKind::AddrReq { .. }) => true,
            _ => false,
        };
        v[i + 1..].iter().find(|(x, m)| m == msg && same(x)).map(|(x, _)| x.first_tx)
    }

    /// The messages of connection `conn` the ACK listing `gns` covers whole, given what earlier
    /// ACKs listed (`covered`: per message, its data units listed so far): their indices.
    pub fn ack_covers(&self, conn: u32, gns: &[u64], covered: &mut HashMap<u64, Vec<bool>>) -> Vec<u64> {
        let mut out = Vec::new();
        let (Some(by_gn), Some(units)) = (self.by_gn.get(conn as usize), self.units.get(conn as usize)) else {
            return out;
        };
        for gn in gns {
            let Some(&i) = by_gn.get(gn) else { continue };
            let (w, msg) = &self.sent[conn as usize][i];
            let Some(&data) = units.get(*msg as usize) else { continue };
            let span = match w.kind {
                WqeKind::AddrReq { .. } => continue,
                WqeKind::Data { .. } => 0..1,
                _ => w.off.min(data)..(w.off + w.units).min(data),
            };
            let c = covered.entry(*msg).or_insert_with(|| vec![false; data as usize]);
            if c.is_empty() {
                continue;
            }
            span.for_each(|u| c[u as usize] = true);
            if c.iter().all(|&x| x) {
                // (Whole: remembered as empty, so it is reported once.)
                c.clear();
                out.push(*msg);
            }
        }
        out
    }
}
