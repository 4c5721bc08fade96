//! Flor's sender at its own tap (docs/replay.md "Flor"; seed 002 §5, Appendix A.1; WIRE.md
//! B.3). Flor resends a WQE only when it is lost: a WRITE chunk's unacknowledged units as
//! WRITE_RETX SENDs, a lost SEND as a SEND with the same reliable number (flagged as a
//! retransmission). Every software ACK the sender got shows arriving at its tap, so a resend of
//! what an ACK had acknowledged (longer than the reaction time before) is a departure
//! (`flor.resend-acked`):
//!
//! - an ACK names a WRITE chunk by its reliable number (message id, first unit); the chunk's
//!   units are read from its first packet's RETH length (units of `flor_unit_size`, 4 KiB);
//! - it names a SEND by its global number: a DATA or ADDR_REQ SEND by its reliable number, a
//!   WRITE_RETX piece by the units it carries (its header's WRITE reliable number and body
//!   length);
//! - the resends judged: a WRITE_RETX piece all of whose units were acknowledged, a DATA SEND
//!   retransmission whose reliable number was, and a WRITE chunk sent again (its last packet, by
//!   its immediate) once it was (Flor never resends by WRITE). An ADDR_REQ is sent again while no
//!   ADDR_RESP came, acknowledged or not (its ACK does not carry the address): not judged.
//!
//! A resend acknowledged in part is not a departure (the sender resends a lost chunk's
//! unacknowledged units, cut to the chunk size in force). Memory is bounded: the state of the
//! [`MIDS`] most recently used message ids (a message id wraps and is used again, always after
//! an ADDR_REQ naming it, which starts its state afresh), and the global numbers and
//! acknowledged reliable numbers of the last [`GNS`] SENDs.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use rocescope_codec::ext::flor::{Acked, Addr, Flor, SendType};

use crate::recent::Recent;
use crate::rules;
use crate::{Finding, FindingKind};

/// Message ids whose state is kept (the most recently used).
pub const MIDS: usize = 4096;
/// SENDs whose global number is kept (to read the ACKs naming them).
pub const GNS: usize = 1 << 16;

/// What a SEND carried, as its global number's ACK acknowledges it.
#[derive(Clone, Copy, Debug)]
enum Sent {
    /// A DATA or ADDR_REQ SEND: its reliable number.
    Rn(u32),
    /// A WRITE_RETX piece: message id, first unit, units.
    Units(u32, u32, u32),
}

/// What the tap saw of one message id since its ADDR_REQ.
#[derive(Debug, Default)]
struct Mid {
    /// Units of each WRITE chunk by first unit, learned from its first packet's RETH.
    chunks: HashMap<u32, u32>,
    /// Chunks whose last packet was sent.
    sent: BTreeSet<u32>,
    /// The acknowledged units, and when.
    acked: BTreeMap<u32, u64>,
}

/// One Flor connection at its sender's tap.
pub(super) struct FlorJudge {
    flow: String,
    reaction_ns: u64,
    unit: u64,
    /// The chunk being sent (UC keeps a QP's order): its units, from its first packet's RETH.
    chunk_units: Option<u32>,
    /// Per message id; a message id is used again after it wraps, always after an ADDR_REQ
    /// naming it, which starts it afresh here.
    mids: Recent<u32, Mid>,
    /// The SENDs by global number, oldest first for pruning.
    gns: HashMap<u64, Sent>,
    gn_order: VecDeque<u64>,
    /// SEND reliable numbers acknowledged, and when (oldest first for pruning).
    acked_rns: HashMap<u32, u64>,
    rn_order: VecDeque<u32>,
    pub requests: u64,
    pub acks: u64,
    pub findings: Vec<Finding>,
}

impl FlorJudge {
    pub fn new(flow: String, reaction_ns: u64, unit_size: u32) -> FlorJudge {
        FlorJudge {
            flow,
            reaction_ns,
            unit: unit_size.max(1) as u64,
            chunk_units: None,
            mids: Recent::new(MIDS),
            gns: HashMap::new(),
            gn_order: VecDeque::new(),
            acked_rns: HashMap::new(),
            rn_order: VecDeque::new(),
            requests: 0,
            acks: 0,
            findings: Vec::new(),
        }
    }

    fn units(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.unit).max(1) as u32
    }

    /// Acknowledged longer than the reaction time before `now`.
    fn acked_before(&self, at: Option<&u64>, now: u64) -> bool {
        at.is_some_and(|&t| now.saturating_sub(t) > self.reaction_ns)
    }

    /// The state of message id `mid` (`fresh`: an ADDR_REQ starts it again), keeping the
    /// [`MIDS`] most recent.
    fn mid(&mut self, mid: u32, fresh: bool) -> &mut Mid {
        self.mids.get_mut(mid, fresh)
    }

    fn units_acked(&self, mid: u32, first: u32, n: u32, now: u64) -> bool {
        let Some(m) = self.mids.get(&mid) else { return false };
        (first..first.saturating_add(n)).all(|u| self.acked_before(m.acked.get(&u), now))
    }

    fn ack_units(&mut self, mid: u32, first: u32, n: u32, now: u64) {
        let m = self.mid(mid, false);
        for u in first..first.saturating_add(n) {
            m.acked.entry(u).or_insert(now);
        }
    }

    fn depart(&mut self, number: u64, now: u64, what: String) {
        let expected =
            "a WQE sent again only while an ACK has not acknowledged it (Flor resends lost WQEs)".to_string();
        self.findings.push(Finding::of(
            FindingKind::Departure,
            rules::FLOR_RESEND_ACKED,
            &self.flow,
            vec![number],
            now,
            expected,
            what,
        ));
    }

    /// A request packet of the data QP with its payload: its Flor part (`None`: a WRITE First or
    /// Middle, a SEND Middle or Last) and, for a WRITE First or Only, its RETH length.
    pub fn data(&mut self, number: u64, now: u64, flor: Option<&Flor>, reth_len: Option<u32>, payload: &[u8]) {
        self.requests += 1;
        if let Some(len) = reth_len {
            self.chunk_units = Some(self.units(len as u64));
        }
        match flor {
            Some(Flor::Write(rn)) => {
                let (mid, off) = (rn.mid, rn.chunk_off);
                let units = self.chunk_units.take();
                let m = self.mid(mid, false);
                let units = units.or_else(|| m.chunks.get(&off).copied()).unwrap_or(1);
                let again = !m.sent.insert(off);
                m.chunks.insert(off, units);
                if again && self.units_acked(mid, off, units, now) {
                    let what = format!(
                        "WRITE chunk of message {mid} at unit {off} ({units} units) sent again after an ACK acknowledged it"
                    );
                    self.depart(number, now, what);
                }
            }
            Some(Flor::Send(h)) => {
                let sent = match h.kind {
                    SendType::WriteRetx => {
                        let w = h.write();
                        let units = self.units(h.body_len as u64);
                        if self.units_acked(w.mid, w.chunk_off, units, now) {
                            let what = format!(
                                "WRITE_RETX of message {} units {}..{} (global number {}) after ACKs acknowledged them all",
                                w.mid,
                                w.chunk_off,
                                w.chunk_off + units,
                                h.gn
                            );
                            self.depart(number, now, what);
                        }
                        Sent::Units(w.mid, w.chunk_off, units)
                    }
                    // (An ADDR_REQ is sent again, acknowledged or not, while no ADDR_RESP came:
                    // its ACK does not carry the address. A first one starts its message id.)
                    SendType::AddrReq => {
                        if let (Some(Addr::Req { mid, .. }), false) = (h.addr(payload), h.retx()) {
                            self.mid(mid, true);
                        }
                        Sent::Rn(h.rn)
                    }
                    SendType::AddrResp => Sent::Rn(h.rn),
                    SendType::Data => {
                        // A retransmission, or the same SEND (global number) again.
                        let again = h.retx() || self.gns.contains_key(&h.gn);
                        if again && self.acked_before(self.acked_rns.get(&h.rn), now) {
                            let what = format!(
                                "{} SEND with reliable number {} resent (global number {}) after an ACK acknowledged it",
                                h.kind.name(),
                                h.rn,
                                h.gn
                            );
                            self.depart(number, now, what);
                        }
                        Sent::Rn(h.rn)
                    }
                };
                if self.gns.insert(h.gn, sent).is_none() {
                    self.gn_order.push_back(h.gn);
                    if self.gn_order.len() > GNS {
                        if let Some(old) = self.gn_order.pop_front() {
                            self.gns.remove(&old);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A software ACK reaching the sender at `now`, listing `acked`.
    pub fn ack(&mut self, now: u64, acked: &[Acked], split: rocescope_codec::params::ImmSplit) {
        self.acks += 1;
        for a in acked {
            match *a {
                Acked::Write { rn } => {
                    let w = rocescope_codec::ext::flor::WriteRn::from_imm(split, rn);
                    let units = self.mids.get(&w.mid).and_then(|m| m.chunks.get(&w.chunk_off)).copied().unwrap_or(1);
                    self.ack_units(w.mid, w.chunk_off, units, now);
                }
                Acked::Send { gn } => match self.gns.get(&gn).copied() {
                    Some(Sent::Rn(rn)) => {
                        if let std::collections::hash_map::Entry::Vacant(e) = self.acked_rns.entry(rn) {
                            e.insert(now);
                            self.rn_order.push_back(rn);
                            if self.rn_order.len() > GNS {
                                if let Some(old) = self.rn_order.pop_front() {
                                    self.acked_rns.remove(&old);
                                }
                            }
                        }
                    }
                    Some(Sent::Units(mid, first, n)) => self.ack_units(mid, first, n, now),
                    None => {}
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::ext::flor::{AddrRepr, SendHeader, SendRepr, WriteRn};
    use rocescope_codec::{Params, Warnings};

    fn split() -> rocescope_codec::params::ImmSplit {
        Params::default().flor_split
    }

    /// A SEND's first packet payload, parsed as the codec reads it.
    fn send(repr: SendRepr<'_>) -> (SendHeader, Vec<u8>) {
        let bytes = repr.to_vec();
        let h = SendHeader::parse(&bytes, bytes.len(), true, split(), &mut Warnings::default()).expect("a SEND header");
        (h, bytes)
    }

    fn write(mid: u32, off: u32) -> Flor {
        Flor::Write(WriteRn::from_imm(split(), rocescope_codec::ext::flor::imm(split(), false, mid, off)))
    }

    fn rn(mid: u32, off: u32) -> u32 {
        rocescope_codec::ext::flor::imm(split(), false, mid, off)
    }

    #[test]
    fn a_resend_of_what_an_ack_acknowledged_departs_and_a_reused_message_id_starts_afresh() {
        let mut j = FlorJudge::new("f".into(), 5_000, 4096);
        let none: &[u8] = &[];
        // Message 7: ADDR_REQ, then a 4-unit chunk (RETH on its First, immediate on its Last).
        let (h, b) = send(SendRepr::addr(1, 1, AddrRepr::Req { mid: 7, msg_len: 4 * 4096 }));
        j.data(1, 0, Some(&Flor::Send(h)), None, &b);
        j.data(2, 10, None, Some(4 * 4096), none);
        j.data(3, 20, Some(&write(7, 0)), None, none);
        j.ack(100_000, &[Acked::Write { rn: rn(7, 0) }], split());
        // Its last packet sent again, 200 µs after the ACK: a departure.
        j.data(4, 300_000, Some(&write(7, 0)), None, none);
        assert_eq!(j.findings.len(), 1);
        assert!(j.findings[0].seen.contains("message 7 at unit 0 (4 units)"), "{}", j.findings[0].seen);
        // A WRITE_RETX of units 2..4: acknowledged with the chunk, a departure; within the
        // reaction time of an ACK, not.
        let (h, b) = send(SendRepr::write_retx(2, 2, rn(7, 2), &[0u8; 2 * 4096]));
        j.data(5, 400_000, Some(&Flor::Send(h)), None, &b);
        assert_eq!(j.findings.len(), 2);
        // A DATA SEND resent (flagged) after its ACK, and one resent before any.
        let (h, b) = send(SendRepr::data(3, 3, false, b"hello"));
        j.data(6, 500_000, Some(&Flor::Send(h)), None, &b);
        j.ack(510_000, &[Acked::Send { gn: 3 }], split());
        let mut again = h;
        again.flags |= 0x40; // the retransmission flag
        again.gn = 4;
        j.data(7, 512_000, Some(&Flor::Send(again)), None, &b); // within 5 µs: not judged
        j.data(8, 600_000, Some(&Flor::Send(again)), None, &b);
        assert_eq!(j.findings.len(), 3);
        assert!(j.findings[2].seen.contains("reliable number 3"), "{}", j.findings[2].seen);
        // Message id 7 used again after it wrapped: a new ADDR_REQ starts it afresh, so its first
        // chunk is no resend.
        let (h, b) = send(SendRepr::addr(4, 5, AddrRepr::Req { mid: 7, msg_len: 4096 }));
        j.data(9, 700_000, Some(&Flor::Send(h)), None, &b);
        j.data(10, 700_010, Some(&write(7, 0)), Some(4096), none);
        assert_eq!(j.findings.len(), 3);
        assert!(j.findings.iter().all(|f| f.rule == "flor.resend-acked" && f.kind == FindingKind::Departure));
        assert_eq!(j.findings.iter().map(|f| f.frames[0]).collect::<Vec<_>>(), vec![4, 5, 8]);
    }
}
