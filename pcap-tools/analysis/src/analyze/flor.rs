//! Flor's software ACKs as loss signals (docs/analysis.md, "Flor"; WIRE.md B.3; seed 002 §5 and
//! Appendix A.1; notes/flor.md §1.2, §1.3, §3.3).
//!
//! Flor's unit of reliability is the WQE: a WRITE chunk named by its reliable number (message id,
//! chunk offset: the immediate of its last packet) or a SEND named by its SEND reliable number
//! and a global number (its header, first packet). A lost chunk is resent by SEND (WRITE_RETX,
//! carrying the chunk's number, possibly cut in pieces), a lost SEND by SEND with the same reliable
//! number; each resend has a new global number and new PSNs, so the PSN tracker sees it as a new
//! message: here it is a retransmission of the WQE. The receiver's ACKs (a UD QP of their own)
//! list the WQEs received. Here, per data flow:
//! - an ACK listing a WQE sent after one it does not list (in the tap's order: UC keeps a QP's
//!   order) shows a gap (the notes' rule, §3.3): the next copy of the unlisted WQE is its repair
//!   (`end_host`) and the copy before it lost (`flor_ack`, `asked_for`);
//! - the ACK listing a WQE (or its resend) completes its message(s) (the PSN tracker's, one per
//!   WQE) at the ACK's frame;
//! - the ACK flow's `serves` is the data flow named by the ACK's QPN.
//!
//! Chunk lengths are read in units of 4096 bytes (`flor_unit_size`'s default) to place resent
//! pieces in their chunk.

use std::collections::{BTreeMap, HashMap};

use rocescope_codec::ext::flor::Acked;

use super::pkt::{Class, FlorAckPkt, Pkt, PktExt};
use super::report::{Cause, Evidence, Loss, Ns, Repair, Retransmission, Signal};
use super::track::Place;
use super::Analyzer;

/// Bytes per chunk-offset unit (the `flor_unit_size` default).
const UNIT: u64 = 4096;

/// A WQE: a WRITE chunk (message id, first offset) or a SEND (reliable number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Write(u32, u32),
    Send(u32),
}

/// The latest copy of a WQE.
#[derive(Clone, Copy, Debug, Default)]
struct WqeCopy {
    order: u64,
    psn: u32,
    frame: u64,
    time: u64,
}

#[derive(Clone, Debug, Default)]
struct Wqe {
    /// Chunk offset units it covers (WRITE chunks).
    units: u32,
    copies: u32,
    last: WqeCopy,
    acked: bool,
    /// An ACK listed a later WQE but not this copy.
    gap: bool,
    /// First PSNs of the tracker's messages carrying its copies.
    firsts: Vec<u64>,
}

/// One data flow's Flor WQEs.
#[derive(Debug, Default)]
pub struct FlowFlor {
    order: u64,
    /// The WQE being received: its first PSN and its payload so far.
    wqe_first: Option<u64>,
    wqe_bytes: u64,
    wqes: BTreeMap<Key, Wqe>,
    /// Unacknowledged latest copies, by order.
    open: BTreeMap<u64, Key>,
    /// SEND global numbers → the WQE they carried.
    by_gn: HashMap<u64, Key>,
    /// The reliable number's split, from the WRITE chunks.
    split: Option<rocescope_codec::params::ImmSplit>,
    /// The WQE being received is a resend (its later packets are too).
    resending: bool,
}

/// Acknowledged WQEs are forgotten this many WQEs later (checked every [`TRIM_EVERY`]).
const KEEP_ACKED: u64 = 1 << 16;
const TRIM_EVERY: u64 = 4096;

impl FlowFlor {
    /// Forgets WQEs acknowledged long ago (memory stays bounded by the flow's window).
    fn trim(&mut self) {
        let old = self.order.saturating_sub(KEEP_ACKED);
        self.wqes.retain(|_, w| !(w.acked && w.last.order < old));
        let wqes = &self.wqes;
        self.by_gn.retain(|_, k| wqes.contains_key(k));
    }

    /// The WRITE chunk holding offset `off` of message `mid`, if seen.
    fn chunk_of(&self, mid: u32, off: u32) -> Option<Key> {
        let (k, w) = self.wqes.range(..=Key::Write(mid, off)).next_back()?;
        match *k {
            Key::Write(m, o) if m == mid && off < o.saturating_add(w.units.max(1)) => Some(*k),
            _ => None,
        }
    }
}

impl Analyzer {
    /// A data packet of a Flor flow `i` (after the PSN tracker counted it).
    pub(super) fn flor_data(&mut self, i: usize, k: &Pkt, place: Place) {
        let Class::Request { pos, .. } = k.class else { return };
        let Some(v) = self.flows[i].data.peek(k.psn) else { return };
        let st = self.flows[i].flor.get_or_insert_with(Default::default);
        use rocescope_codec::ib::opcode::Position;
        if matches!(pos, Position::First | Position::Only) {
            st.wqe_first = Some(v);
            st.wqe_bytes = 0;
            st.resending = false;
        }
        st.wqe_bytes += k.payload as u64;
        let first = st.wqe_first.unwrap_or(v);
        let key = match k.ext {
            PktExt::FlorWrite { mid, off, split } => {
                st.split = Some(split);
                let units = st.wqe_bytes.div_ceil(UNIT).max(1) as u32;
                let key = Key::Write(mid, off);
                st.wqes.entry(key).or_default().units = units;
                key
            }
            PktExt::FlorSend { write: Some((mid, off)), gn, .. } => {
                let key = st.chunk_of(mid, off).unwrap_or(Key::Write(mid, off));
                st.by_gn.insert(gn, key);
                key
            }
            PktExt::FlorSend { rn, gn, .. } => {
                st.by_gn.insert(gn, Key::Send(rn));
                Key::Send(rn)
            }
            _ => {
                if st.resending {
                    self.flows[i].data.count_resend(first, k.payload);
                }
                return;
            }
        };
        st.order += 1;
        if st.order.is_multiple_of(TRIM_EVERY) {
            st.trim();
        }
        let order = st.order;
        let w = st.wqes.entry(key).or_default();
        let prior = w.copies;
        let last = w.last;
        let (gap, acked) = (w.gap, w.acked);
        w.copies += 1;
        w.gap = false;
        w.last = WqeCopy { order, psn: k.psn, frame: k.frame, time: k.time_ns };
        w.firsts.push(first);
        if prior > 0 {
            st.open.remove(&last.order);
        }
        if !acked {
            st.open.insert(order, key);
        }
        if prior == 0 {
            return;
        }
        st.resending = true;
        self.flows[i].data.count_resend(first, k.payload);
        // A resend of the WQE.
        let trigger = match place {
            _ if gap => Signal::FlorAck,
            Place::Source => Signal::Timeout,
            _ => Signal::Unknown,
        };
        let spurious = if acked {
            Some(true)
        } else if gap {
            Some(false)
        } else {
            None
        };
        let cause = match spurious {
            Some(true) => Cause::Spurious,
            Some(false) => Cause::Loss,
            None => Cause::Unknown,
        };
        let out = self.flows[i].sdr_out.get_or_insert_with(Default::default);
        if gap && !acked {
            out.losses.push(Loss {
                psn: last.psn,
                frame: last.frame,
                time_ns: Ns(last.time),
                signal: Signal::FlorAck,
                repair: Repair::EndHost,
                evidence: Evidence::AskedFor,
                message: None,
            });
        }
        out.retx.push(Retransmission {
            psn: k.psn,
            frame: k.frame,
            time_ns: Ns(k.time_ns),
            spurious,
            cause,
            trigger,
            copy: prior,
            message: None,
        });
        let s = &mut self.flows[i].data.stats;
        s.losses += (gap && !acked) as u64;
        s.retransmitted += 1;
        s.spurious += acked as u64;
        s.timeouts += (trigger == Signal::Timeout) as u64;
        s.max_retries = s.max_retries.max(prior);
    }

    /// A Flor software ACK (on its own UD QP, receiver → sender).
    pub(super) fn flor_ack(&mut self, a: &FlorAckPkt) {
        let k = &a.pkt;
        let Some(c) = self.index.get(&super::Key(k.iface, k.src, k.dst, k.destqp)) else { return };
        let Some(j) = self.index.get(&super::Key(k.iface, k.dst, k.src, a.qpn)) else { return };
        if c != j {
            self.flows[c].serves = Some(j);
        }
        let Some(st) = self.flows[j].flor.as_mut() else { return };
        let mut newest = 0;
        let mut firsts = Vec::new();
        for e in &a.acked {
            let key = match *e {
                Acked::Write { rn } => {
                    let split = st.split.unwrap_or(rocescope_codec::Params::default().flor_split);
                    let (_, mid, off) = split.split(rn);
                    st.chunk_of(mid, off)
                }
                Acked::Send { gn } => st.by_gn.get(&gn).copied(),
            };
            let Some(w) = key.and_then(|key| st.wqes.get_mut(&key)) else { continue };
            newest = newest.max(w.last.order);
            if !w.acked {
                w.acked = true;
                w.gap = false;
                st.open.remove(&w.last.order);
                firsts.append(&mut w.firsts);
            }
        }
        // Listed a later WQE, not these: a gap.
        let behind: Vec<Key> = st.open.range(..newest).map(|(_, &key)| key).collect();
        for key in behind {
            if let Some(w) = st.wqes.get_mut(&key) {
                w.gap = true;
            }
        }
        for v in firsts {
            self.flows[j].data.complete_message_at(v, k.frame, k.time_ns);
        }
    }
}
