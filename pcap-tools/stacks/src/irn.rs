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
//! is resent once per recovery (`RetxReason::Sack`), ahead of new packets. A retransmission that
//! is lost again, or a lost tail (nothing after it to be SACKed), is recovered by the RTO
//! (`RetxReason::Timeout`), which resends every outstanding PSN not SACKed.
//!
//! The wire is standard RoCE plus the SACK NAK (WIRE.md A.3): IRN's own header extensions for
//! placing out-of-order packets (a RETH in every WRITE packet, …) are not on it, so instead of
//! writing an out-of-order packet to memory at once the receiver keeps its record (above) and
//! places it when the packets before it have arrived. What the wire shows is the same.
//!
//! Not modelled: RDMA READ (posting one fails the connection; see `StackKind::supports`), IRN's
//! two RTO values (one `rto_ns` is used), congestion control.

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
    highest_sacked: Option<u32>,
    recovery: Option<Recovery>,
    rto: Rto,
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
            highest_sacked: None,
            recovery: None,
            rto: Rto::default(),
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

    /// New packets, as far as BDP flow control allows.
    fn pump(&mut self, now: Nanos, out: &mut Vec<Action>) {
        while !self.failed
            && self.snd_max != self.sq.next_psn()
            && (psn::diff(self.snd_una, self.snd_max) as u32) < self.bdp()
        {
            let p = self.snd_max;
            self.send(p, None, out);
            self.sacked.push_back(false);
            self.snd_max = psn::add(p, 1);
            self.rto.ensure(now, self.cfg.rto_ns, out);
        }
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
            self.sacked.pop_front();
        }
        self.snd_una = e;
        while let Some(w) = self.sq.pop_acked(self.snd_una) {
            out.push(Action::Completed { msg: w.msg.id });
        }
        if self.highest_sacked.is_some_and(|h| psn::lt(h, self.snd_una)) {
            self.highest_sacked = None;
        }
        // Recovery ends when the cumulative ACK passes the highest PSN outstanding at entry.
        if self.recovery.is_some_and(|r| psn::lt(r.point, self.snd_una)) {
            self.recovery = None;
        }
        self.rto.rearm_if(psn::lt(self.snd_una, self.snd_max), now, self.cfg.rto_ns, out);
    }

    fn on_sack(&mut self, s: u32) {
        let d = psn::diff(self.snd_una, s);
        if d < 0 || !psn::lt(s, self.snd_max) {
            return;
        }
        self.sacked[d as usize] = true;
        if self.highest_sacked.is_none_or(|h| psn::lt(h, s)) {
            self.highest_sacked = Some(s);
        }
        if self.recovery.is_none() {
            self.recovery = Some(Recovery { point: psn::add(self.snd_max, psn::MASK), next: self.snd_una });
        }
    }

    /// In recovery: resend, once each, the PSNs below the highest SACKed one that were not
    /// SACKed.
    fn retransmit_lost(&mut self, out: &mut Vec<Action>) {
        let (Some(mut rec), Some(h)) = (self.recovery, self.highest_sacked) else { return };
        if psn::lt(rec.next, self.snd_una) {
            rec.next = self.snd_una;
        }
        while psn::lt(rec.next, h) {
            let p = rec.next;
            if !self.is_sacked(p) {
                self.send(p, Some(RetxReason::Sack), out);
            }
            rec.next = psn::add(p, 1);
        }
        self.recovery = Some(rec);
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
        self.retransmit_lost(out);
        self.pump(now, out);
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        if self.failed || !self.rto.fire(now, token, out) || !psn::lt(self.snd_una, self.snd_max) {
            return;
        }
        // RTO: every outstanding PSN not SACKed is taken as lost and resent; recovery (entered
        // if it was not) now covers everything sent.
        let mut p = self.snd_una;
        while psn::lt(p, self.snd_max) {
            if !self.is_sacked(p) {
                self.send(p, Some(RetxReason::Timeout), out);
            }
            p = psn::add(p, 1);
        }
        let point = psn::add(self.snd_max, psn::MASK);
        self.recovery = Some(Recovery { point, next: self.snd_max });
        self.rto.arm(now, self.cfg.rto_ns, out);
    }
}

impl Requester for IrnRequester {
    fn post(&mut self, now: Nanos, msg: Message, out: &mut Vec<Action>) {
        if msg.op == Op::Read {
            return fail(&mut self.failed, "RDMA READ is not modelled by the IRN stack", out);
        }
        self.sq.push(msg, self.cfg.mtu, ());
        self.pump(now, out);
    }

    fn idle(&self) -> bool {
        self.failed || self.sq.is_empty()
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
        if self.slots.len() <= d {
            self.slots.resize(d + 1, None);
        }
        if self.slots[d].is_none() {
            self.slots[d] = Some((Incoming::from_packet(p), p.bth().ack_req()));
        }
        if d > 0 {
            self.sack(ps, out);
            return;
        }
        let mut taken = 0u32;
        let mut ack_req = false;
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
