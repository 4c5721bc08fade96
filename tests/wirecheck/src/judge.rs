//! The sender judged at its own NIC's tap: what it resent, against what the acknowledgements it
//! had received by then allowed.
//!
//! The tap stamps an incoming frame when it reaches the NIC and an outgoing one when it leaves,
//! and a host's NIC sends in the order its stack handed frames over, so whatever the stack knew
//! when it decided to send a frame had arrived at the tap before that frame left.
//!
//! - **Acknowledged PSNs**, from the responses flow, as the requester keeps them (the oldest
//!   PSN it still waits for): an ACK with PSN `a` covers every PSN up to `a`; a NAK (and IRN's
//!   SACK NAK, WIRE.md A.3) with PSN `e` covers those before `e`, and a SACK NAK also the one
//!   PSN it SACKs; but a READ's PSNs are covered only by its responses, accepted in PSN order
//!   (RC; a response out of order is discarded), so nothing after a READ is covered before the
//!   READ's last response arrived in order;
//!   a DCP ACK (tag 01) with eMSN `m` covers every packet of messages below `m` (the data
//!   packets' DCPETH MSN says which message they belong to, WIRE.md B.1).
//! - **Resent after acknowledgement**: a retransmission (a request PSN seen leaving before) of
//!   a PSN the tap had already seen acknowledged, strictly before the frame left. No stack needs one: the receiver has the
//!   packet and said so. READ Requests are left out: an ACK past a READ does not carry its
//!   responses, and re-requesting them is how a requester recovers lost responses (Go-Back-N
//!   then resends everything after the READ too: IBTA Vol. 1 §9.7.5.1; `stacks::gbn`).
//! - **Go-back points** (Go-Back-N): a request packet whose PSN is at or below the highest PSN
//!   sent so far and does not follow the previous one starts a go-back burst. IBTA Vol. 1
//!   §9.7.5.1 (and `stacks::gbn`): every go-back (a NAK, PSN sequence error, with PSN `e`; a
//!   timeout; a duplicate ACK; a READ response missing) resends from the oldest PSN not yet
//!   acknowledged, which after a NAK is `e`. So every burst must start at a PSN the
//!   acknowledgements received before it made the oldest unacknowledged one (above); anything
//!   else (e.g. one packet past the NAK's PSN) is reported. (A burst going back to a PSN
//!   acknowledged since is a resend after acknowledgement, the check above: with today's NIC
//!   queue a burst decided earlier may leave after later ACKs.)
//! - **Completions**: a message (its Last/Only request packet's PSN, or its DCP MSN) whose
//!   acknowledgement the tap saw.

use std::collections::{BTreeSet, HashSet};

use rocescope_codec::ib::psn;

use super::packet::{Pkt, PktKind};
use super::wire::{Conn, Dir, Wire};

/// What the sender's tap shows about one connection.
#[derive(Clone, Debug, Default)]
pub struct SenderView {
    /// Request frames that left (whole data).
    pub data_frames: u64,
    /// Retransmissions: (frame, PSN).
    pub retx: Vec<(u64, u32)>,
    /// Retransmissions of PSNs already acknowledged when they left: (frame, PSN).
    pub resent_after_ack: Vec<(u64, u32)>,
    /// Go-back bursts: (frame, PSN where the burst starts).
    pub go_backs: Vec<(u64, u32)>,
    /// Go-back bursts starting where no NAK, ACK or timeout rule allows: (frame, PSN, the NAK
    /// PSNs received so far, the last three).
    pub bad_go_backs: Vec<(u64, u32, Vec<u32>)>,
    /// Messages whose acknowledgement the tap saw (GBN/IRN: an ACK/NAK covering the message's
    /// last PSN; DCP: an ACK whose eMSN passed its MSN), counted once each.
    pub completed: u64,
    /// Messages whose last packet left the tap (count of distinct Last/Only request PSNs; for
    /// DCP distinct MSNs).
    pub messages: u64,
}

/// Acknowledgement state from the responses flow, as the requester keeps it.
#[derive(Default)]
struct Acks {
    /// The oldest PSN the requester still waits for (`None`: nothing sent yet).
    una: Option<u32>,
    sacked: HashSet<u32>,
    /// DCP: the highest eMSN seen.
    emsn: Option<u32>,
    naks: Vec<u32>,
    /// Every value `una` took: where Go-Back-N may go back to.
    unas: HashSet<u32>,
    /// READ Requests sent (first PSN, PSNs) at or after `una`.
    reads: Vec<(u32, u32)>,
}

impl Acks {
    fn start(&mut self, first: u32) {
        if self.una.is_none() {
            self.set(first);
        }
    }
    fn set(&mut self, u: u32) {
        self.una = Some(u);
        self.unas.insert(u);
    }
    /// The READ whose PSNs hold `p`.
    fn read_at(&self, p: u32) -> Option<(u32, u32)> {
        self.reads.iter().copied().find(|&(s, n)| psn::diff(s, p) >= 0 && (psn::diff(s, p) as u32) < n)
    }
    /// Requests up to `a` are acknowledged, except that `una` stops at a READ (only its
    /// responses, in order, complete it).
    fn ack_through(&mut self, a: u32) {
        let Some(mut u) = self.una else { return };
        while psn::diff(u, a) >= 0 && self.read_at(u).is_none() {
            let next_read = self
                .reads
                .iter()
                .map(|r| r.0)
                .filter(|&s| psn::diff(u, s) > 0 && psn::diff(s, a) >= 0)
                .min_by_key(|&s| psn::diff(u, s));
            u = next_read.unwrap_or(psn::add(a, 1));
        }
        self.set(u);
        self.reads.retain(|&(s, n)| psn::diff(u, psn::add(s, n - 1)) >= 0);
    }
    fn on(&mut self, p: &Pkt, dcp: bool) {
        match p.kind {
            PktKind::Ack if dcp => {
                if let Some(m) = p.aeth_msn {
                    if self.emsn.is_none_or(|x| psn::lt(x, m)) {
                        self.emsn = Some(m);
                    }
                }
            }
            PktKind::Ack => self.ack_through(p.psn),
            PktKind::Nak if p.nak_code == Some(0) => {
                self.ack_through(psn::add(p.psn, psn::MASK));
                self.naks.push(p.psn);
            }
            PktKind::Sack => {
                self.ack_through(psn::add(p.psn, psn::MASK));
                self.naks.push(p.psn);
                if let Some(s) = p.sack_psn {
                    self.sacked.insert(s);
                }
            }
            PktKind::ReadResponse => {
                self.on_response(p.psn);
            }
            _ => {}
        }
    }
    /// A READ response `r` arrived: it acknowledges the requests before it, and is accepted
    /// only in order (RC: when every PSN before it is done); returns whether it was accepted.
    fn on_response(&mut self, r: u32) -> bool {
        self.ack_through(psn::add(r, psn::MASK));
        if self.una != Some(r) {
            return false;
        }
        self.set(psn::add(r, 1));
        self.ack_through(r);
        true
    }
    /// Whether the request packet `p` was acknowledged.
    fn acked(&self, p: &Pkt, dcp: bool) -> bool {
        if dcp {
            return matches!((p.dcp_msn, self.emsn), (Some(m), Some(e)) if psn::lt(m, e));
        }
        self.una.is_some_and(|u| psn::lt(p.psn, u)) || self.sacked.contains(&p.psn)
    }
    /// A READ Request left: its PSNs wait for their responses.
    fn read_sent(&mut self, first: u32, n: u32) {
        // A re-issued READ (from a missing response) lies inside the first one.
        if self.read_at(first).is_none() {
            self.reads.push((first, n));
        }
    }
}

/// For each READ response frame arriving at `c`'s requester tap, whether the requester accepted
/// it (in PSN order, after every request before it was acknowledged: RC).
pub fn response_acceptance(w: &Wire, c: &Conn, mtu: u32) -> std::collections::HashMap<u64, bool> {
    let mut out = std::collections::HashMap::new();
    let Some(tap) = w.tap_at(c.requester) else {
        return out;
    };
    let mut acks = Acks::default();
    for p in w.at(tap.interface) {
        match w.dir(p) {
            Dir::Out if c.is_request(p) && p.kind == PktKind::Data => {
                acks.start(p.psn);
                if let (true, Some((_, len))) = (p.is_read_request(), p.reth) {
                    acks.read_sent(p.psn, len.div_ceil(mtu.max(1)).max(1));
                }
            }
            Dir::In if c.is_response(p) && p.kind == PktKind::ReadResponse => {
                out.insert(p.number, acks.on_response(p.psn));
            }
            Dir::In if c.is_response(p) => acks.on(p, false),
            _ => {}
        }
    }
    out
}

/// Judges the requester of `c` at its own tap (`mtu`: its payload bytes per full packet, which
/// says how many PSNs a READ Request takes); `None` when the requester has no tap.
pub fn sender_view(w: &Wire, c: &Conn, mtu: u32) -> Option<SenderView> {
    let tap = w.tap_at(c.requester)?;
    let dcp = w.profile == rocescope_codec::Profile::Dcp;
    let mut v = SenderView::default();
    // `acks`: everything received so far (file order); `strict`: what had arrived strictly
    // before the frame being judged left (a frame and an ACK stamped the same nanosecond: the
    // frame may have been decided first).
    let (mut acks, mut strict) = (Acks::default(), Acks::default());
    let mut pending: std::collections::VecDeque<&Pkt> = std::collections::VecDeque::new();
    let mut seen: HashSet<u32> = HashSet::new();
    let (mut first, mut max_sent, mut prev): (Option<u32>, Option<u32>, Option<u32>) = (None, None, None);
    // Message ends: (last PSN or MSN) -> completed.
    let mut ends: Vec<u32> = Vec::new();
    let mut ends_set: HashSet<u32> = HashSet::new();
    let mut done: BTreeSet<u32> = BTreeSet::new();
    for p in w.at(tap.interface) {
        match w.dir(p) {
            Dir::In if c.is_response(p) => {
                acks.on(p, dcp);
                pending.push_back(p);
                // Completions of messages whose end has left.
                for &e in &ends {
                    if done.contains(&e) {
                        continue;
                    }
                    let complete = if dcp {
                        acks.emsn.is_some_and(|m| psn::lt(e, m))
                    } else {
                        acks.una.is_some_and(|u| psn::lt(e, u))
                    };
                    if complete {
                        done.insert(e);
                    }
                }
            }
            Dir::Out if c.is_request(p) && p.kind == PktKind::Data => {
                while pending.front().is_some_and(|q| q.ts_ns < p.ts_ns) {
                    strict.on(pending.pop_front().expect("a pending frame"), dcp);
                }
                v.data_frames += 1;
                let start = *first.get_or_insert(p.psn);
                acks.start(start);
                strict.start(start);
                // A READ Request takes one PSN per response packet (a re-issued one, what is left).
                let end = match (p.is_read_request(), p.reth) {
                    (true, Some((_, len))) => psn::add(p.psn, len.div_ceil(mtu.max(1)).max(1) - 1),
                    _ => p.psn,
                };
                let key = if dcp { p.dcp_msn.unwrap_or(u32::MAX) } else { end };
                if p.is_read_request() && !seen.contains(&p.psn) {
                    let n = psn::diff(p.psn, end) as u32 + 1;
                    acks.read_sent(p.psn, n);
                    strict.read_sent(p.psn, n);
                }
                if p.ends_message() && ends_set.insert(key) {
                    ends.push(key);
                }
                if !seen.insert(p.psn) {
                    v.retx.push((p.number, p.psn));
                    if !p.is_read_request() && strict.acked(p, dcp) {
                        v.resent_after_ack.push((p.number, p.psn));
                    }
                }
                // Go-back bursts (meaningful for Go-Back-N; recorded for every stack).
                if let Some(m) = max_sent {
                    let follows = prev.is_some_and(|q| p.psn == psn::add(q, 1));
                    if psn::diff(p.psn, m) >= 0 && !follows {
                        v.go_backs.push((p.number, p.psn));
                        let ok = acks.unas.contains(&p.psn);
                        if !ok {
                            let last: Vec<u32> = acks.naks.iter().rev().take(3).copied().collect();
                            v.bad_go_backs.push((p.number, p.psn, last));
                        }
                    }
                }
                if max_sent.is_none_or(|m| psn::lt(m, end)) {
                    max_sent = Some(end);
                }
                prev = Some(end);
            }
            _ => {}
        }
    }
    v.messages = ends.len() as u64;
    v.completed = done.len() as u64;
    Some(v)
}
