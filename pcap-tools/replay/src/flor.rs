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
//! unacknowledged units, cut to the chunk size in force). Memory is bounded: the acknowledged
//! units of the [`MIDS`] most recent message ids, and the global numbers of the last [`GNS`]
//! SENDs.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use rocescope_codec::ext::flor::{Acked, Flor, SendType};

use crate::rules;
use crate::{Finding, FindingKind};

/// Message ids whose acknowledged units are kept.
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

/// One Flor connection at its sender's tap.
pub(super) struct FlorJudge {
    flow: String,
    reaction_ns: u64,
    unit: u64,
    /// The chunk being sent (UC keeps a QP's order): its units, from its first packet's RETH.
    chunk_units: Option<u32>,
    /// Units of each WRITE chunk by (message id, first unit), learned at its last packet.
    chunks: HashMap<(u32, u32), u32>,
    /// The SENDs by global number, oldest first for pruning.
    gns: HashMap<u64, Sent>,
    gn_order: VecDeque<u64>,
    /// Per message id, the acknowledged units (first unit → when acknowledged).
    acked_units: BTreeMap<u32, BTreeMap<u32, u64>>,
    /// SEND reliable numbers acknowledged, and when.
    acked_rns: BTreeMap<u32, u64>,
    /// WRITE chunks (message id, first unit) whose last packet was sent.
    chunk_sent: BTreeSet<(u32, u32)>,
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
            chunks: HashMap::new(),
            gns: HashMap::new(),
            gn_order: VecDeque::new(),
            acked_units: BTreeMap::new(),
            acked_rns: BTreeMap::new(),
            chunk_sent: BTreeSet::new(),
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

    fn units_acked(&self, mid: u32, first: u32, n: u32, now: u64) -> bool {
        let Some(m) = self.acked_units.get(&mid) else { return false };
        (first..first.saturating_add(n)).all(|u| self.acked_before(m.get(&u), now))
    }

    fn ack_units(&mut self, mid: u32, first: u32, n: u32, now: u64) {
        let m = self.acked_units.entry(mid).or_default();
        for u in first..first.saturating_add(n) {
            m.entry(u).or_insert(now);
        }
        while self.acked_units.len() > MIDS {
            self.acked_units.pop_first();
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

    /// A request packet of the data QP: its Flor part (`None`: a WRITE First or Middle, a SEND
    /// Middle or Last) and, for a WRITE First or Only, its RETH length.
    pub fn data(&mut self, number: u64, now: u64, flor: Option<&Flor>, reth_len: Option<u32>) {
        self.requests += 1;
        if let Some(len) = reth_len {
            self.chunk_units = Some(self.units(len as u64));
        }
        match flor {
            Some(Flor::Write(rn)) => {
                let key = (rn.mid, rn.chunk_off);
                let units = self.chunk_units.take().or_else(|| self.chunks.get(&key).copied()).unwrap_or(1);
                if !self.chunk_sent.insert(key) && self.units_acked(rn.mid, rn.chunk_off, units, now) {
                    let what = format!(
                        "WRITE chunk of message {} at unit {} ({units} units) sent again after an ACK acknowledged it",
                        rn.mid, rn.chunk_off
                    );
                    self.depart(number, now, what);
                }
                self.chunks.insert(key, units);
                if self.chunks.len() > 4 * MIDS {
                    self.chunks.clear();
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
                    // its ACK does not carry the address.)
                    SendType::AddrReq | SendType::AddrResp => Sent::Rn(h.rn),
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
                    let units = self.chunks.get(&(w.mid, w.chunk_off)).copied().unwrap_or(1);
                    self.ack_units(w.mid, w.chunk_off, units, now);
                }
                Acked::Send { gn } => match self.gns.get(&gn).copied() {
                    Some(Sent::Rn(rn)) => {
                        self.acked_rns.entry(rn).or_insert(now);
                        while self.acked_rns.len() > GNS {
                            self.acked_rns.pop_first();
                        }
                    }
                    Some(Sent::Units(mid, first, n)) => self.ack_units(mid, first, n, now),
                    None => {}
                },
            }
        }
    }
}
