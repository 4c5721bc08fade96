//! IRN (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018), as the DCP paper
//! describes it (seed 000 §2.2) and with the SACK NAK pinned in WIRE.md A.3: selective repeat
//! with BDP-sized bitmaps.
//!
//! Receiver: accepts any PSN within `bdp_packets` of the expected PSN and keeps, per PSN of that
//! window, what the packet was (opcode, length, a digest of its payload, RETH/ImmDt) until the
//! packets before it arrive; then takes them in order (RC semantics: in-order delivery). Every
//! out-of-order arrival is answered with a SACK NAK: RC Acknowledge whose AETH is NAK code 0,
//! BTH PSN the expected PSN (the cumulative acknowledgement), SACK PSN the arriving packet.
//! In-order arrivals are acknowledged cumulatively (every `ack_every` packets, on AckReq, and at
//! once when a hole fills); duplicates are re-acknowledged at once.
//!
//! Sender: keeps a bitmap of SACKed PSNs over its window (`bdp_packets`). A SACK (or an RTO)
//! puts it in loss recovery, which it enters only once and leaves when the cumulative
//! acknowledgement passes the highest PSN outstanding when it entered (§2.2 issue #2). In
//! recovery a PSN counts as lost only if a higher PSN was SACKed (§2.2 issue #1); each lost PSN
//! is resent once per recovery (`RetxReason::Sack`). The NIC pulls the packets
//! ([`Requester::pull`]): retransmissions first, then new packets as BDP flow control allows.
//!
//! Timeout (IRN paper, Mittal et al. SIGCOMM 2018, §3.1): the timer runs while packets are
//! outstanding, starts when a packet reaches the wire and restarts on every cumulative
//! acknowledgement that makes progress; its value is RTO_low (100 µs) when at most N = 3
//! packets are in flight (sent, neither acknowledged nor SACKed), else RTO_high (320 µs)
//! ([`Timeouts::irn_ns`](crate::Timeouts::irn_ns)). A timer started as RTO_low is pushed to
//! RTO_high (from the pull that makes it so) once more than N packets are in flight. On
//! expiry the sender retransmits the first unacknowledged packet (`RetxReason::Timeout`) and
//! enters loss recovery if it was not in it; it does not resend the other un-SACKed PSNs (those
//! below the highest SACK are resent by recovery, once; the rest wait for SACKs or the next
//! RTO). A retransmission lost again, or a lost tail, is recovered this way.
//!
//! The wire is standard RoCE plus the SACK NAK (WIRE.md A.3): IRN's own header extensions for
//! placing out-of-order packets (a RETH in every WRITE packet, …) are not on it, so instead of
//! writing an out-of-order packet to memory at once the receiver keeps its record (above) and
//! places it when the packets before it have arrived. What the wire shows is the same.
//!
//! Not modelled: RDMA READ (posting one fails the connection; see `StackKind::supports`),
//! congestion control.

use std::collections::VecDeque;

use rocescope_codec::ib::{psn, AethRepr, Syndrome};
use rocescope_codec::Frame;

use super::common::{ack_req_due, fail, Assembler, Incoming, Rto, SendQueue, Wire};
use super::{Action, ConnConfig, Endpoint, Message, Nanos, Op, Requester, RetxReason, TxInfo};

#[derive(Clone, Copy, Debug)]
struct Recovery {
    /// The highest PSN outstanding when recovery began.
    point: u32,
    /// PSNs below this were already considered for retransmission in this recovery.
    next: u32,
}

/// The IRN sender.
pub struct IrnRequester {
    cfg: ConnConfig,
    wire: Wire,
    sq: SendQueue,
    /// Cumulatively acknowledged up to here (exclusive).
    snd_una: u32,
    /// Next new PSN (IRN never goes back: everything below was sent).
    snd_max: u32,
    /// SACK bits for `snd_una .. snd_max`.
    sacked: VecDeque<bool>,
    /// How many of `sacked` are set.
    n_sacked: u32,
    highest_sacked: Option<u32>,
    recovery: Option<Recovery>,
    /// Every PSN below this was already resent once by a recovery: a later recovery does not
    /// resend it again (its resend is received, in flight, or lost, and a lost retransmission
    /// is the RTO's to recover, IRN §3.1). An RTO lowers it to the first unacknowledged PSN.
    resent_to: u32,
    /// The RTO fired: this PSN (the first unacknowledged) is to be resent.
    rto_resend: Option<u32>,
    rto: Rto,
    /// The running timer was started with RTO_low.
    rto_low: bool,
    failed: bool,
    since_ackreq: u32,
}

impl IrnRequester {
    pub fn new(cfg: &ConnConfig) -> IrnRequester {
        let p = cfg.start_psn & psn::MASK;
        IrnRequester {
            cfg: cfg.clone(),
            wire: Wire::new(cfg, true),
            sq: SendQueue::new(p),
            snd_una: p,
            snd_max: p,
            sacked: VecDeque::new(),
            n_sacked: 0,
            highest_sacked: None,
            recovery: None,
            resent_to: p,
            rto_resend: None,
            rto: Rto::new(cfg.timeouts.until_expiry),
            rto_low: false,
            failed: false,
            since_ackreq: 0,
        }
    }

    fn bdp(&self) -> u32 {
        self.cfg.bdp_packets.max(1)
    }

    fn send(&mut self, p: u32, retx: Option<RetxReason>, out: &mut Vec<Action>) {
        let i = self.sq.find(p).expect("PSN of a posted message");
        let (bdp, tos, mtu) = (self.bdp(), self.cfg.tos, self.cfg.mtu);
        let w = &self.sq[i];
        let since = &mut self.since_ackreq;
        let frame = self.wire.request(tos, w, p, mtu, false, |r, pos| r.bth.ack_req = ack_req_due(since, pos, bdp));
        out.push(Action::Transmit { frame, info: TxInfo { psn: p, msg: Some(w.msg.id), retx } });
    }

    /// Packets sent and neither cumulatively acknowledged nor SACKed.
    fn in_flight(&self) -> u32 {
        psn::diff(self.snd_una, self.snd_max) as u32 - self.n_sacked
    }

    /// (Re)starts the RTO with the value for the packets now in flight; without `restart`, only
    /// starts it if it is not running, or moves an RTO_low deadline to RTO_high once more than N
    /// packets are in flight.
    fn arm(&mut self, now: Nanos, restart: bool, out: &mut Vec<Action>) {
        let n = self.in_flight();
        let t = self.cfg.timeouts;
        if restart || !self.rto.running() || (self.rto_low && !t.irn_is_low(n)) {
            self.rto.arm(now, t.irn_ns(n), out);
            self.rto_low = t.irn_is_low(n);
        }
    }

    /// New packets may go: BDP flow control.
    fn can_send_new(&self) -> bool {
        self.snd_max != self.sq.next_psn() && (psn::diff(self.snd_una, self.snd_max) as u32) < self.bdp()
    }

    /// The next PSN recovery resends: not SACKed, below the highest SACK, not yet resent in this
    /// recovery.
    fn lost_due(&self) -> Option<u32> {
        let (rec, h) = (self.recovery?, self.highest_sacked?);
        psn::lt(rec.next, h).then_some(rec.next)
    }

    /// Moves recovery's cursor to the next PSN to resend (past SACKed ones).
    fn skip_sacked(&mut self) {
        let (Some(mut rec), Some(h)) = (self.recovery, self.highest_sacked) else { return };
        if psn::lt(rec.next, self.snd_una) {
            rec.next = self.snd_una;
        }
        while psn::lt(rec.next, h) && self.is_sacked(rec.next) {
            rec.next = psn::add(rec.next, 1);
        }
        self.recovery = Some(rec);
    }

    fn is_sacked(&self, p: u32) -> bool {
        let d = psn::diff(self.snd_una, p);
        d < 0 || self.sacked.get(d as usize).copied().unwrap_or(false)
    }

    /// Cumulative acknowledgement of every PSN before `e`.
    fn cumulative(&mut self, now: Nanos, e: u32, out: &mut Vec<Action>) {
        let d = psn::diff(self.snd_una, e);
        if d <= 0 || psn::lt(self.snd_max, e) {
            return;
        }
        for _ in 0..d {
            if self.sacked.pop_front() == Some(true) {
                self.n_sacked -= 1;
            }
        }
        self.snd_una = e;
        while let Some(w) = self.sq.pop_acked(self.snd_una) {
            out.push(Action::Completed { msg: w.msg.id });
        }
        if self.highest_sacked.is_some_and(|h| psn::lt(h, self.snd_una)) {
            self.highest_sacked = None;
        }
        if self.rto_resend.is_some_and(|p| psn::lt(p, self.snd_una)) {
            self.rto_resend = None;
        }
        // Recovery ends when the cumulative ACK passes the highest PSN outstanding at entry.
        if self.recovery.is_some_and(|r| psn::lt(r.point, self.snd_una)) {
            self.recovery = None;
        }
        if psn::lt(self.snd_una, self.snd_max) {
            self.arm(now, true, out);
        } else {
            self.rto.disarm();
        }
    }

    fn on_sack(&mut self, s: u32) {
        let d = psn::diff(self.snd_una, s);
        if d < 0 || !psn::lt(s, self.snd_max) {
            return;
        }
        if !self.sacked[d as usize] {
            self.sacked[d as usize] = true;
            self.n_sacked += 1;
        }
        if self.highest_sacked.is_none_or(|h| psn::lt(h, s)) {
            self.highest_sacked = Some(s);
        }
        if self.recovery.is_none() {
            // A recovery that ended (its point acknowledged) may have resent PSNs above its
            // point, whose acknowledgements are still to come: start after them.
            let next = if psn::lt(self.snd_una, self.resent_to) { self.resent_to } else { self.snd_una };
            self.recovery = Some(Recovery { point: psn::add(self.snd_max, psn::MASK), next });
        }
    }
}

impl Endpoint for IrnRequester {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        if self.failed || p.opcode().0 != 0x11 || p.bth().dest_qp() != self.cfg.requester.qpn {
            return;
        }
        let Some(aeth) = p.aeth() else { return };
        let ps = p.bth().psn();
        match aeth.syndrome() {
            Syndrome::Ack { .. } => self.cumulative(now, psn::add(ps, 1), out),
            Syndrome::Nak { code: 0 } => {
                self.cumulative(now, ps, out);
                if let Some(s) = p.irn_sack() {
                    self.on_sack(s.sack_psn());
                }
            }
            Syndrome::Nak { .. } => return fail(&mut self.failed, "remote NAK", out),
            Syndrome::RnrNak { .. } | Syndrome::Reserved(_) => return,
        }
        self.skip_sacked();
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        if self.failed || !self.rto.fire(now, token, out) || !psn::lt(self.snd_una, self.snd_max) {
            return;
        }
        // RTO (IRN §3.1): resend the first unacknowledged packet and enter loss recovery. The
        // timer restarts when that packet reaches the wire.
        self.rto_resend = Some(self.snd_una);
        self.resent_to = self.snd_una;
        if self.recovery.is_none() {
            let point = psn::add(self.snd_max, psn::MASK);
            self.recovery = Some(Recovery { point, next: psn::add(self.snd_una, 1) });
            self.skip_sacked();
        }
    }
}

impl Requester for IrnRequester {
    fn post(&mut self, _now: Nanos, msg: Message, out: &mut Vec<Action>) {
        if msg.op == Op::Read {
            return fail(&mut self.failed, "RDMA READ is not modelled by the IRN stack", out);
        }
        self.sq.push(msg, self.cfg.mtu, ());
    }

    fn idle(&self) -> bool {
        self.failed || self.sq.is_empty()
    }

    fn ready(&self) -> bool {
        !self.failed && (self.rto_resend.is_some() || self.lost_due().is_some() || self.can_send_new())
    }

    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        if !self.ready() {
            return false;
        }
        if let Some(p) = self.rto_resend.take() {
            self.send(p, Some(RetxReason::Timeout), out);
            if self.recovery.is_some_and(|r| r.next == p) {
                self.recovery.as_mut().expect("recovery").next = psn::add(p, 1);
                self.skip_sacked();
            }
        } else if let Some(p) = self.lost_due() {
            self.send(p, Some(RetxReason::Sack), out);
            if !psn::lt(psn::add(p, 1), self.resent_to) {
                self.resent_to = psn::add(p, 1);
            }
            self.recovery.as_mut().expect("recovery").next = psn::add(p, 1);
            self.skip_sacked();
        } else {
            let p = self.snd_max;
            self.send(p, None, out);
            self.sacked.push_back(false);
            self.snd_max = psn::add(p, 1);
        }
        self.arm(now, false, out);
        true
    }
}

/// The IRN receiver.
pub struct IrnResponder {
    cfg: ConnConfig,
    wire: Wire,
    epsn: u32,
    asm: Assembler,
    /// What arrived at `epsn + i` (the BDP-sized bitmap, with what in-order placement needs).
    slots: VecDeque<Option<(Incoming, bool)>>,
    unacked: u32,
}

impl IrnResponder {
    pub fn new(cfg: &ConnConfig) -> IrnResponder {
        IrnResponder {
            cfg: cfg.clone(),
            wire: Wire::new(cfg, false),
            epsn: cfg.start_psn & psn::MASK,
            asm: Assembler::new(cfg.mtu),
            slots: VecDeque::new(),
            unacked: 0,
        }
    }

    fn ack(&mut self, out: &mut Vec<Action>) {
        let aeth = AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: self.asm.msn() };
        out.push(self.wire.acknowledge(self.cfg.tos, psn::add(self.epsn, psn::MASK), aeth, None));
        self.unacked = 0;
    }

    /// WIRE.md A.3: Acknowledge, AETH NAK code 0, BTH PSN = expected PSN, SACK PSN = `s`.
    fn sack(&mut self, s: u32, out: &mut Vec<Action>) {
        let aeth = AethRepr { syndrome: Syndrome::Nak { code: 0 }, msn: self.asm.msn() };
        out.push(self.wire.acknowledge(self.cfg.tos, self.epsn, aeth, Some(s)));
    }
}

impl Endpoint for IrnResponder {
    fn on_frame(&mut self, _now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        let opcode = p.opcode().0;
        if super::common::classify_request(opcode).is_none() || p.bth().dest_qp() != self.cfg.responder.qpn {
            return;
        }
        let ps = p.bth().psn();
        let d = psn::diff(self.epsn, ps);
        if d < 0 {
            self.ack(out);
            return;
        }
        let d = d as usize;
        if d >= self.cfg.bdp_packets.max(1) as usize {
            return; // beyond the bitmap
        }
        if d > 0 {
            if self.slots.len() <= d {
                self.slots.resize(d + 1, None);
            }
            if self.slots[d].is_none() {
                self.slots[d] = Some((Incoming::from_packet(p), p.bth().ack_req()));
            }
            self.sack(ps, out);
            return;
        }
        // The expected PSN: taken at once, its bytes compared with the modelled memory (no
        // digest), then whatever waited behind it.
        out.extend(self.asm.take_packet(p));
        self.epsn = psn::add(self.epsn, 1);
        self.slots.pop_front();
        let mut taken = 1u32;
        let mut ack_req = p.bth().ack_req();
        while let Some(Some((inc, a))) = self.slots.front().copied() {
            self.slots.pop_front();
            out.extend(self.asm.take(&inc));
            self.epsn = psn::add(self.epsn, 1);
            taken += 1;
            ack_req |= a;
        }
        self.unacked += taken;
        if taken > 1 || ack_req || self.unacked >= self.cfg.ack_every.max(1) {
            self.ack(out);
        }
    }

    fn on_timer(&mut self, _now: Nanos, _token: u64, _out: &mut Vec<Action>) {}
}
