//! DCP (seed 000 §4.3-4.5; wire format WIRE.md B.1): header-only-based retransmission,
//! order-tolerant reception and bitmap-free packet tracking.
//!
//! Sender (DCP-RNIC Tx): data packets carry tag 10 and a DCPETH (MSN = the message's posting
//! number, sRetryNo); every RDMA WRITE packet carries a RETH whose VA is the address of that
//! packet's payload (§4.4); SEND packets and the last packet of a WRITE with Immediate carry an
//! SSNETH (the SSN numbers the receive-WQE-consuming messages in posting order). Messages
//! `unaMSN .. unaMSN + msg_window` may be in flight. A header-only packet bounced back by the
//! receiver becomes a (MSN, PSN) entry of the retransmission queue (§4.3), and exactly that
//! packet is resent (`RetxReason::HeaderOnly`); there is no bitmap and no per-packet state. An
//! ACK (tag 01) carries the receiver's eMSN: every message below it completes, unaMSN moves up
//! and the coarse timer restarts. When the coarse timer expires the whole unaMSN message is
//! resent with sRetryNo incremented (`RetxReason::Timeout`, §4.5).
//!
//! The NIC pulls the packets ([`Requester::pull`]), one at a time when its wire is free, in the
//! order of §4.3: the RetransQ first (HO-triggered retransmissions), then a timeout round's
//! resends, then new packets. HO retransmissions are therefore paced by the NIC (and by a rate
//! limiter, when the NIC has one, §4.3 ⑥), not resent in a burst as HO packets arrive.
//!
//! Receiver (DCP-RNIC Rx): places every packet on its own, in any order (WRITE by its RETH VA,
//! SEND by SSN and its PSN offset), and keeps per message only a packet counter compared with
//! the message's packet count, PSN(Last) − PSN(First) + 1 (§4.5, WIRE.md B.1); eMSN advances
//! when the eMSN message's counter completes (and over every later message already complete),
//! delivering in order, and each advance sends an ACK (tag 01, AETH MSN = eMSN, BTH PSN = the
//! packet that completed it). A packet of the eMSN message whose sRetryNo is above rRetryNo
//! starts a new timeout round: the first such round resets that message's counter (§4.5), one
//! below is a stale copy and is not counted (but see the notes on later rounds). A packet of an
//! already completed message is answered with the current eMSN. Every
//! header-only packet is bounced back to the sender: source and destination IP (and MAC)
//! swapped, DestQP set to the sender's QPN, the rest (layout, UDP ports, tag 11) unchanged.
//!
//! Where the paper is silent (documented choices):
//! - sRetryNo counts the coarse timeouts of the unaMSN message and restarts at 0 when unaMSN
//!   moves; a packet of any other message carries 0 (it cannot have timed out), and rRetryNo
//!   likewise restarts at 0 with each eMSN advance. With one QP-wide counter, packets of later
//!   messages sent before a timeout would look stale once their message became eMSN.
//! - An HO packet carries no sRetryNo (it is cut inside the DCPETH), so after a coarse timeout
//!   an HO of an earlier round can still arrive, and the sender (which cannot tell) resends
//!   that PSN with the current sRetryNo: one PSN may then arrive twice in the same round, which
//!   plain counting would take for two packets and complete the message with one missing. The
//!   paper's sRetryNo does not cover this. The receiver therefore keeps, for the eMSN message
//!   only and only once a timeout round has begun for it (sRetryNo above rRetryNo), the set of
//!   PSNs counted since that first round's reset and counts each once. Outside timeout rounds
//!   (the normal
//!   case) tracking stays bitmap-free: every PSN arrives whole exactly once (§4.5).
//! - The receiver also answers a packet of an already completed message with an ACK (the
//!   paper ACKs only eMSN advances; without this, once the ACK of the last messages in flight
//!   is lost, nothing would ever tell the sender, and it would time out forever).
//! - A SEND packet carries no offset: one that arrives before its message's First is checked
//!   against the modelled memory when the First arrives (a digest per such packet is kept until
//!   then; WRITE packets place themselves by their RETH VA).
//! - The coarse timeout ([`Timeouts::dcp_ns`](crate::Timeouts::dcp_ns), `--dcp-timeout`): 1 ms
//!   by default (the paper gives no value), started when a packet reaches the wire and restarted
//!   when unaMSN moves; it doubles with each timeout round of the same message (up to 64×), so
//!   that rounds eventually outlast whatever keeps a message from completing (a deep incast
//!   queue) instead of restarting it for ever. sRetryNo wraps modulo 256 and is compared in
//!   serial-number arithmetic.
//! - No livelock: only the first timeout round of a message resets the receiver's counter (the
//!   packets counted before it cannot be told apart from duplicates); from then on the receiver
//!   counts each PSN of that message once, whatever round its copy belongs to (the PSN set
//!   above), so later rounds, and copies of earlier rounds still in flight, add to the progress
//!   instead of discarding it. A message thus completes once every PSN has arrived whole at
//!   least once since its first timeout, however many rounds overlap.
//! - Each timeout round resends every packet of the message (§4.5), in PSN order from a
//!   rotating start: the first round from the message's first packet, round k from offset
//!   ⌊(k−1)·n/φ⌋ mod n (φ the golden ratio), wrapping around. When a round arrives only in part
//!   (synchronised timeouts of many senders overflow a port: the head of each burst gets
//!   through, the tail is trimmed and, the control queue being full too, its HO packets are
//!   lost), rounds that all started at the first packet would bring the same packets through
//!   again and again and the message would never complete; rotated starts spread them over
//!   the message, and the receiver's union completes it.
//! - RDMA READ is not modelled (posting one fails the connection).

use std::collections::{BTreeSet, VecDeque};

use rocescope_codec::build::internet_checksum;
use rocescope_codec::ext::dcp::{tag, with_tag, TAG_ACK, TAG_DATA, TAG_HO};
use rocescope_codec::ext::Ext;
use rocescope_codec::frame::Net;
use rocescope_codec::ib::{psn, AethRepr, DcpethRepr, RocePacket, SsethRepr, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, Params, Profile};

use super::common::{classify_request, digest, expected_digest, fail, unwrap24, Rto, SendQueue, Wire};
use super::{imm_data, remote_va, Action, ConnConfig, Endpoint, Message, Nanos, Op, Requester, RetxReason, TxInfo};

/// Decodes `frame` under the DCP profile unless it already was and, when it is a RoCE packet
/// for QP `qpn`, hands it to `f` with the packet and its tag.
fn on_dcp_packet(frame: &Frame<'_>, params: Params, qpn: u32, f: impl FnOnce(&Frame<'_>, &RocePacket<'_>, Option<u8>)) {
    let for_qp = |frame: &Frame<'_>| {
        let Some(p) = frame.roce() else { return };
        if p.bth().dest_qp() == qpn {
            f(frame, p, frame.tos().map(|t| tag(t, params.dcp_tag_shift)));
        }
    };
    if matches!(frame.ext(), Ext::Dcp(_)) || frame.profile() == Profile::Dcp {
        for_qp(frame)
    } else {
        let opts = DecodeOptions { verify: false, profile: Profile::Dcp, params };
        let data = frame.data();
        for_qp(&Frame::parse(frame.link(), data, data.len(), &opts))
    }
}

/// A timeout round in progress: packets `first + (start + i) mod n` for `i` in `done .. n`.
#[derive(Clone, Copy, Debug)]
struct Round {
    first: u32,
    /// The message's packets sent so far (all of them, unless the window cut it).
    n: u32,
    start: u32,
    done: u32,
}

/// The DCP sender.
pub struct DcpRequester {
    cfg: ConnConfig,
    wire: Wire,
    /// Messages from unaMSN on, in MSN order, each with its SSN if it has one.
    sq: SendQueue<Option<u32>>,
    next_ssn: u32,
    /// unaMSN: the oldest message not acknowledged (= `sq[0]`).
    una: u64,
    /// Next new PSN to send.
    snd_max: u32,
    /// Coarse timeouts of the unaMSN message (sRetryNo, modulo 256).
    sretry: u8,
    /// The same, saturating: the timer's back-off exponent.
    backoff: u8,
    /// The same, counted: which rotation the next timeout round uses.
    rounds: u32,
    /// Retransmission entries (MSN, PSN) from HO packets, pulled before anything else.
    retransq: VecDeque<(u64, u32)>,
    /// A timeout round's resends of the unaMSN message (`sq[0]`).
    round: Option<Round>,
    rto: Rto,
    failed: bool,
}

impl DcpRequester {
    pub fn new(cfg: &ConnConfig) -> DcpRequester {
        let p = cfg.start_psn & psn::MASK;
        DcpRequester {
            cfg: cfg.clone(),
            wire: Wire::new(cfg, true),
            sq: SendQueue::new(p),
            next_ssn: 0,
            una: 0,
            snd_max: p,
            sretry: 0,
            backoff: 0,
            rounds: 0,
            retransq: VecDeque::new(),
            round: None,
            rto: Rto::new(cfg.timeouts.until_expiry),
            failed: false,
        }
    }

    fn window(&self) -> u64 {
        self.cfg.msg_window.max(1) as u64
    }

    fn find_msg(&self, m: u64) -> Option<usize> {
        let i = m.checked_sub(self.una)? as usize;
        (i < self.sq.len()).then_some(i)
    }

    /// Transmits packet `p` of message `sq[i]`.
    fn send(&mut self, i: usize, p: u32, retx: Option<RetxReason>, out: &mut Vec<Action>) {
        let w = &self.sq[i];
        let (msg, ssn) = (w.msg, w.extra);
        let sretryno = if msg.id == self.una { self.sretry } else { 0 };
        let tos = with_tag(self.cfg.tos, self.cfg.params.dcp_tag_shift, TAG_DATA);
        let frame = self.wire.request(tos, w, p, self.cfg.mtu, true, |r, pos| {
            r.dcpeth = Some(DcpethRepr { msn: msg.id as u32 & psn::MASK, sretryno });
            if r.sseth.is_some() {
                r.sseth = Some(SsethRepr { ssn: ssn.unwrap_or(0) & psn::MASK });
            }
            r.bth.ack_req = pos.ends();
        });
        out.push(Action::Transmit { frame, info: TxInfo { psn: p, msg: Some(msg.id), retx } });
    }

    /// The next new packet is inside the message window.
    fn can_send_new(&self) -> bool {
        self.snd_max != self.sq.next_psn() && self.sq.find(self.snd_max).is_some_and(|i| (i as u64) < self.window())
    }

    fn on_ack(&mut self, now: Nanos, emsn24: u32, out: &mut Vec<Action>) {
        let e = unwrap24(self.una, emsn24);
        if e <= self.una || e > self.una + self.sq.len() as u64 {
            return;
        }
        while self.una < e {
            let w = self.sq.pop_front().expect("an unacknowledged message");
            out.push(Action::Completed { msg: w.msg.id });
            self.una += 1;
        }
        self.sretry = 0;
        self.backoff = 0;
        self.rounds = 0;
        self.round = None;
        let una = self.una;
        self.retransq.retain(|&(m, _)| m >= una);
        // The coarse timer follows unaMSN: restart it for the new unaMSN message if it was sent
        // (else the pull of its first packet starts it).
        let sent = self.sq.front().is_some_and(|w| psn::lt(w.first, self.snd_max));
        self.rto.rearm_if(sent, now, self.cfg.timeouts.dcp_ns(0), out);
    }

    fn on_ho(&mut self, msn24: u32, p: u32) {
        let m = unwrap24(self.una, msn24);
        let Some(i) = self.find_msg(m) else { return };
        let w = &self.sq[i];
        let k = psn::diff(w.first, p);
        if k < 0 || k as u32 >= w.n || !psn::lt(p, self.snd_max) {
            return;
        }
        self.retransq.push_back((m, p));
    }
}

impl Endpoint for DcpRequester {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        if self.failed {
            return;
        }
        on_dcp_packet(frame, self.cfg.params, self.cfg.requester.qpn, |_, p, tag| match tag {
            Some(TAG_HO) => {
                if let Some(msn) = p.ho_msn() {
                    self.on_ho(msn, p.bth().psn());
                }
            }
            Some(TAG_ACK) if p.opcode().0 == 0x11 => {
                if let Some(aeth) = p.aeth() {
                    if let Syndrome::Ack { .. } = aeth.syndrome() {
                        self.on_ack(now, aeth.msn(), out);
                    }
                }
            }
            _ => {}
        });
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        if self.failed || !self.rto.fire(now, token, out) || self.sq.is_empty() {
            return;
        }
        // Coarse timeout (§4.5): resend every packet of the unaMSN message (that was sent), one
        // round later, from a rotating start (module notes); the NIC pulls them, and the first
        // one restarts the timer, backed off.
        self.sretry = self.sretry.wrapping_add(1);
        self.backoff = self.backoff.saturating_add(1);
        self.rounds += 1;
        let una = self.una;
        self.retransq.retain(|&(m, _)| m != una);
        let w = &self.sq[0];
        let sent = if psn::lt(w.last(), self.snd_max) { w.n } else { psn::diff(w.first, self.snd_max) as u32 };
        // ⌊(k−1)·n/φ⌋ mod n: the fractional part of (k−1)/φ in 32-bit fixed point, times n.
        let frac = ((self.rounds - 1) as u64).wrapping_mul(0x9E37_79B9) & 0xffff_ffff;
        let start = ((frac * sent as u64) >> 32) as u32;
        self.round = (sent > 0).then_some(Round { first: w.first, n: sent, start, done: 0 });
    }
}

impl Requester for DcpRequester {
    fn post(&mut self, _now: Nanos, msg: Message, out: &mut Vec<Action>) {
        if msg.op == Op::Read {
            return fail(&mut self.failed, "RDMA READ is not modelled by the DCP stack", out);
        }
        let ssn = matches!(msg.op, Op::Send | Op::WriteImm).then(|| {
            let s = self.next_ssn;
            self.next_ssn = self.next_ssn.wrapping_add(1);
            s
        });
        if self.sq.is_empty() {
            self.una = msg.id;
        }
        self.sq.push(msg, self.cfg.mtu, ssn);
    }

    fn idle(&self) -> bool {
        self.failed || self.sq.is_empty()
    }

    fn ready(&self) -> bool {
        !self.failed && (!self.retransq.is_empty() || self.round.is_some() || self.can_send_new())
    }

    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        if self.failed {
            return false;
        }
        // RetransQ entries are of unacknowledged messages (on_ack and on_timer prune the others).
        let mut ho = None;
        while ho.is_none() {
            let Some((m, p)) = self.retransq.pop_front() else { break };
            ho = self.find_msg(m).map(|i| (i, p));
        }
        if let Some((i, p)) = ho {
            self.send(i, p, Some(RetxReason::HeaderOnly), out);
        } else if let Some(r) = self.round.as_mut() {
            let p = psn::add(r.first, (r.start + r.done) % r.n);
            r.done += 1;
            if r.done == r.n {
                self.round = None;
            }
            self.send(0, p, Some(RetxReason::Timeout), out);
        } else if self.can_send_new() {
            let p = self.snd_max;
            let i = self.sq.find(p).expect("a posted PSN");
            self.send(i, p, None, out);
            self.snd_max = psn::add(p, 1);
        } else {
            return false;
        }
        self.rto.ensure(now, self.cfg.timeouts.dcp_ns(self.backoff), out);
        true
    }
}

/// A SEND packet waiting for its message's First to be placed.
#[derive(Clone, Copy, Debug)]
struct Pending {
    psn: u32,
    len: u32,
    digest: u64,
}

/// What the receiver keeps per tracked message (§4.5: a counter, plus what placing and checking
/// the packets needs).
#[derive(Clone, Debug, Default)]
struct Track {
    /// Packets counted in the current round.
    counter: u32,
    first: Option<u32>,
    last: Option<u32>,
    write: Option<bool>,
    bytes: u64,
    intact: bool,
    ssn: Option<u32>,
    dma_len: Option<u32>,
    /// Payload length of the Last/Only packet.
    last_len: Option<u32>,
    pending: Vec<Pending>,
    /// Once a timeout round began: the PSNs counted since (see the module notes).
    round: Option<BTreeSet<u32>>,
}

impl Track {
    fn new() -> Track {
        Track { intact: true, ..Default::default() }
    }

    /// Restart counting for a new timeout round (the PSN range stays known).
    fn reset(&mut self) {
        let (first, last, last_len) = (self.first, self.last, self.last_len);
        *self = Track::new();
        self.first = first;
        self.last = last;
        self.last_len = last_len;
        self.round = Some(BTreeSet::new());
    }

    fn complete(&self) -> bool {
        match (self.first, self.last) {
            (Some(f), Some(l)) => psn::diff(f, l) >= 0 && self.counter == psn::diff(f, l) as u32 + 1,
            _ => false,
        }
    }
}

/// The DCP receiver.
pub struct DcpResponder {
    cfg: ConnConfig,
    wire: Wire,
    emsn: u64,
    rretry: u8,
    /// Messages `emsn .. emsn + msg_window`.
    msgs: VecDeque<Track>,
    /// The SSN the next delivered SEND / WRITE with Immediate must carry (its receive WQE).
    next_ssn: u32,
}

impl DcpResponder {
    pub fn new(cfg: &ConnConfig) -> DcpResponder {
        DcpResponder {
            cfg: cfg.clone(),
            wire: Wire::new(cfg, false),
            emsn: 0,
            rretry: 0,
            msgs: VecDeque::new(),
            next_ssn: 0,
        }
    }

    fn ack(&mut self, p: u32, out: &mut Vec<Action>) {
        let aeth = AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: self.emsn as u32 & psn::MASK };
        let tos = with_tag(self.cfg.tos, self.cfg.params.dcp_tag_shift, TAG_ACK);
        out.push(self.wire.acknowledge(tos, p, aeth, None));
    }

    /// Sends a header-only packet back to the sender (§4.1 step 2, WIRE.md B.1).
    fn bounce(&mut self, f: &Frame<'_>, out: &mut Vec<Action>) {
        let (Some(net), Some(p)) = (f.net(), f.roce()) else { return };
        let mut b = f.data().to_vec();
        let ps = p.bth().psn();
        if b.len() < 12 {
            return;
        }
        let (dst, src) = b.split_at_mut(6);
        dst.swap_with_slice(&mut src[..6]);
        let (o, hl) = (net.offset(), net.header_len());
        match net {
            Net::Ipv4 { .. } => {
                let (s, d) = b[o + 12..o + 20].split_at_mut(4);
                s.swap_with_slice(d);
                b[o + 10..o + 12].fill(0);
                let c = internet_checksum(&[&b[o..o + hl]]);
                b[o + 10..o + 12].copy_from_slice(&c.to_be_bytes());
            }
            Net::Ipv6 { .. } => {
                let (s, d) = b[o + 8..o + 40].split_at_mut(16);
                s.swap_with_slice(d);
            }
            Net::Grh { .. } => return,
        }
        let q = f.roce_offset() + 5;
        b[q..q + 3].copy_from_slice(&self.wire.peer_qpn().to_be_bytes()[1..]);
        out.push(Action::Transmit { frame: b, info: TxInfo { psn: ps, msg: None, retx: None } });
    }

    fn on_data(&mut self, p: &RocePacket<'_>, out: &mut Vec<Action>) {
        let Some((write, pos, has_imm)) = classify_request(p.opcode().0) else { return };
        let Some(dcpeth) = p.dcpeth() else { return };
        let ps = p.bth().psn();
        let m = unwrap24(self.emsn, dcpeth.msn());
        if m < self.emsn {
            // A copy of a message already complete: tell the sender where we are.
            self.ack(ps, out);
            return;
        }
        let idx = (m - self.emsn) as usize;
        if idx >= self.cfg.msg_window.max(1) as usize {
            return; // beyond the tracked messages
        }
        if self.msgs.len() <= idx {
            self.msgs.resize_with(idx + 1, Track::new);
        }
        let s = dcpeth.sretryno();
        if idx == 0 {
            let d = s.wrapping_sub(self.rretry) as i8;
            let tracking = self.msgs[0].round.is_some();
            if d < 0 && !tracking {
                return; // a stale copy from an earlier round
            }
            if d > 0 {
                self.rretry = s;
                // Only the first timeout round restarts the count; later rounds (and late copies
                // of earlier ones) add to the PSN set instead (module notes: no livelock).
                if !tracking {
                    self.msgs[0].reset();
                }
            }
        } else if s != 0 {
            return; // only the eMSN message can be in a timeout round
        }
        let mtu = self.cfg.mtu;
        let t = &mut self.msgs[idx];
        if t.round.as_mut().is_some_and(|r| !r.insert(ps)) {
            return; // already counted in this timeout round
        }
        t.counter += 1;
        if t.write.is_some_and(|w| w != write) {
            t.intact = false;
        }
        t.write = Some(write);
        if pos.starts() {
            t.first = Some(ps);
        }
        let len = p.payload_len() as u32;
        if pos.ends() {
            t.last = Some(ps);
            t.last_len = Some(len);
        }
        let data = p.payload();
        let dg = if data.len() == len as usize { digest(data) } else { !0 };
        if !pos.ends() && len != mtu {
            t.intact = false;
        }
        t.bytes += len as u64;
        if let Some(s) = p.sseth() {
            if t.ssn.is_some_and(|x| x != s.ssn()) {
                t.intact = false;
            }
            t.ssn = Some(s.ssn());
        }
        if has_imm && p.immdt().map(|i| i.imm()) != Some(imm_data(m)) {
            t.intact = false;
        }
        if write {
            // §4.4: every WRITE packet carries a RETH with the address of its own payload.
            match p.reth() {
                Some(r) if t.dma_len.is_none_or(|l| l == r.dma_len()) => {
                    t.dma_len = Some(r.dma_len());
                    let off = r.va().wrapping_sub(remote_va(m));
                    if off > u32::MAX as u64
                        || dg != expected_digest(m, off, len)
                        || off + len as u64 > r.dma_len() as u64
                    {
                        t.intact = false;
                    }
                }
                _ => t.intact = false,
            }
        } else {
            t.pending.push(Pending { psn: ps, len, digest: dg });
        }
        // SEND packets are placed by their offset from the message's First.
        if let Some(f) = t.first {
            for q in t.pending.drain(..) {
                let k = psn::diff(f, q.psn);
                if k < 0 || q.digest != expected_digest(m, k as u64 * mtu as u64, q.len) {
                    t.intact = false;
                }
            }
        }
        if t.last.zip(t.first).is_some_and(|(l, f)| t.counter > psn::diff(f, l) as u32 + 1) {
            t.intact = false; // counted more packets than the message has
        }
        let mut advanced = false;
        while self.msgs.front().is_some_and(Track::complete) {
            let t = self.msgs.pop_front().expect("front");
            let mut intact = t.intact && t.pending.is_empty();
            // Whole packets but the last: the bytes counted must be the message's.
            if let (Some(f), Some(l), Some(ll)) = (t.first, t.last, t.last_len) {
                if t.bytes != psn::diff(f, l) as u64 * self.cfg.mtu as u64 + ll as u64 {
                    intact = false;
                }
            }
            let write = t.write == Some(true);
            let imm = write && t.ssn.is_some();
            if write && t.dma_len != Some(t.bytes as u32) {
                intact = false;
            }
            if !write || imm {
                // Receive WQEs are consumed in posting order: the SSN must be the next one.
                if t.ssn != Some(self.next_ssn & psn::MASK) {
                    intact = false;
                }
                self.next_ssn = self.next_ssn.wrapping_add(1);
            }
            out.push(Action::Delivered { msg: self.emsn, len: t.bytes as u32, intact });
            self.emsn += 1;
            self.rretry = 0;
            advanced = true;
        }
        if advanced {
            self.ack(ps, out);
        }
    }
}

impl Endpoint for DcpResponder {
    fn on_frame(&mut self, _now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        on_dcp_packet(frame, self.cfg.params, self.cfg.responder.qpn, |f, p, tag| match tag {
            Some(TAG_HO) => self.bounce(f, out),
            Some(TAG_DATA) => self.on_data(p, out),
            _ => {}
        });
    }

    fn on_timer(&mut self, _now: Nanos, _token: u64, _out: &mut Vec<Action>) {}
}
