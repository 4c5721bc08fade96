//! Flor's sender (the requester): WQEs in posting order within the window, the address
//! exchange, ACK handling (selective, by GN and WRITE reliable number), loss by ACK gap and by
//! RTO, and resends by SEND (module docs of [`super`]; seed 002 §4-5, Appendix A.1).

use std::collections::{BTreeMap, HashMap, VecDeque};

use rocescope_codec::build::RoceRepr;
use rocescope_codec::ext::flor::{self as wire, Acked, Addr, AddrRepr, SendRepr, SendType, FLAG_RETX, OPCODE_ACK};
use rocescope_codec::ib::{psn, ImmDtRepr, RethRepr};
use rocescope_codec::{Frame, Warnings};

use super::window::Window;
use super::FlorConfig;
use crate::common::{npkts, payload, seg_len, Pos, Wire};
use crate::{Action, ConnConfig, Endpoint, Message, Nanos, Op, Requester, RetxReason, TxInfo};

/// What a WQE carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    /// A small message's SEND (DATA), by its SEND reliable number.
    Data { msg: u64, rn: u32 },
    /// A WRITE-with-Immediate chunk: `len` bytes from unit `off` of message `msg` (MID `mid`).
    Chunk { msg: u64, mid: u32, off: u32, len: u32 },
    /// A SEND resending units of a lost chunk (WRITE_RETX), by its SEND reliable number.
    Piece { msg: u64, mid: u32, off: u32, len: u32, rn: u32 },
    /// A large message's ADDR_REQ.
    AddrReq { msg: u64, mid: u32, rn: u32 },
}

impl What {
    fn msg(&self) -> u64 {
        match *self {
            What::Data { msg, .. } | What::Chunk { msg, .. } | What::Piece { msg, .. } | What::AddrReq { msg, .. } => {
                msg
            }
        }
    }
}

/// A WQE transmission (one GN).
#[derive(Clone, Copy, Debug)]
struct Sent {
    what: What,
    /// Payload bytes on the wire (the window's unit of account).
    bytes: u64,
    /// When its last packet left (T1), once it has.
    t1: Option<Nanos>,
    /// Counted in the window's bytes in flight (a data WQE not yet acknowledged nor found lost).
    counted: bool,
    /// Found lost (kept until acknowledged or its message completes: a late ACK of it still
    /// acknowledges its units).
    lost: bool,
}

/// A WQE to send again.
#[derive(Clone, Copy, Debug)]
struct Resend {
    what: What,
    reason: RetxReason,
    /// It is a SEND sent before (the header's retransmission flag); a piece sliced from a lost
    /// chunk is not.
    again: bool,
}

/// A large message's address exchange.
#[derive(Clone, Copy, Debug)]
struct Large {
    mid: u32,
    /// The ADDR_REQ's SEND reliable number.
    req_rn: u32,
    /// The receiver's buffer (ADDR_RESP).
    va: Option<u64>,
    r_key: u32,
    /// An ADDR_REQ copy is queued.
    req_queued: bool,
}

/// A posted message.
#[derive(Debug)]
struct OutMsg {
    msg: Message,
    large: Option<Large>,
    /// Units (a small message: one) acknowledged.
    acked: Vec<bool>,
    acked_count: usize,
    /// First pass: bytes handed to WQEs so far; `first_done` once all were.
    next: u64,
    first_done: bool,
    done: bool,
}

/// The WQE whose packets the NIC is pulling.
#[derive(Debug)]
struct Inject {
    gn: u64,
    what: What,
    /// A SEND's whole message (header and body); empty for a WRITE chunk.
    send: Vec<u8>,
    k: u32,
    n: u32,
    hint: bool,
    retx: Option<RetxReason>,
}

#[derive(Clone, Copy, Debug)]
enum Job {
    /// The RTO of WQE transmission `gn`.
    Wqe { gn: u64 },
    /// No ADDR_RESP yet for message `msg`.
    Addr { msg: u64 },
}

/// Flor's sender.
pub struct FlorSender {
    cfg: ConnConfig,
    flor: FlorConfig,
    unit: u32,
    wire: Wire,
    psn: u32,
    next_gn: u64,
    next_send_rn: u32,
    msgs: VecDeque<OutMsg>,
    /// Every WQE transmission not yet acknowledged whose message is not complete, by GN.
    sent: BTreeMap<u64, Sent>,
    /// WRITE chunks by reliable number (hint bit clear) → GN.
    by_rn: HashMap<u32, u64>,
    inflight: u64,
    window: Window,
    /// ADDR_REQs to send (first copies, and repeats with their reason).
    ctrl: VecDeque<(What, Option<RetxReason>)>,
    /// WQEs to resend, oldest first.
    retx: VecDeque<Resend>,
    cur: Option<Inject>,
    timers: HashMap<u64, Job>,
    next_token: u64,
    failed: bool,
}

impl FlorSender {
    pub fn new(cfg: &ConnConfig, flor: &FlorConfig) -> FlorSender {
        let unit = cfg.params.flor_unit_size.max(1);
        FlorSender {
            cfg: cfg.clone(),
            flor: flor.clone(),
            unit,
            wire: Wire::new(cfg, true),
            psn: cfg.start_psn & psn::MASK,
            next_gn: 1,
            next_send_rn: 1,
            msgs: VecDeque::new(),
            sent: BTreeMap::new(),
            by_rn: HashMap::new(),
            inflight: 0,
            window: Window::new(flor.initial_window(unit), unit, flor.chunk_max, flor.target_ns),
            ctrl: VecDeque::new(),
            retx: VecDeque::new(),
            cur: None,
            timers: HashMap::new(),
            next_token: 0,
            failed: false,
        }
    }

    /// The RTO: `max(rto_min, 2·rtt_l + ack_timer)`.
    pub fn rto_ns(&self) -> Nanos {
        let rtt = self.window.rtt_l().unwrap_or(self.flor.base_rtt_ns);
        self.flor.rto_min_ns.max(2 * rtt + self.flor.ack_timer_ns)
    }

    /// The congestion window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.window.cwnd()
    }

    fn index(&self, msg: u64) -> Option<usize> {
        let base = self.msgs.front()?.msg.id;
        let i = usize::try_from(msg.checked_sub(base)?).ok()?;
        (i < self.msgs.len()).then_some(i)
    }

    fn timer(&mut self, at: Nanos, job: Job, out: &mut Vec<Action>) {
        let token = self.next_token;
        self.next_token += 1;
        self.timers.insert(token, job);
        out.push(Action::Timer { at, token });
    }

    fn mid_mask(&self) -> u32 {
        super::mid_mask(&self.cfg)
    }

    fn units_of(&self, len: u32) -> u32 {
        len.div_ceil(self.unit).max(1)
    }

    /// The units `[off, off + n)` a chunk or piece of `len` bytes from unit `off` covers.
    fn span(&self, off: u32, len: u32) -> std::ops::Range<usize> {
        off as usize..(off + self.units_of(len)) as usize
    }

    /// Whether every unit `what` carries is acknowledged (or its message is complete/gone).
    fn settled(&self, what: &What) -> bool {
        let Some(i) = self.index(what.msg()) else { return true };
        let m = &self.msgs[i];
        m.done
            || match *what {
                What::Data { .. } => m.acked[0],
                What::Chunk { off, len, .. } | What::Piece { off, len, .. } => {
                    self.span(off, len).all(|u| m.acked.get(u).copied().unwrap_or(true))
                }
                What::AddrReq { .. } => m.large.is_some_and(|l| l.va.is_some()),
            }
    }

    /// The next first-pass WQE, if the window and the address exchange allow: (what, bytes).
    fn next_first_pass(&self) -> Option<(What, u64)> {
        let m = self.msgs.iter().find(|m| !m.first_done)?;
        let room = self.window.cwnd().saturating_sub(self.inflight);
        if room == 0 {
            return None;
        }
        match m.large {
            None => Some((What::Data { msg: m.msg.id, rn: 0 }, wire::SEND_HEADER_LEN as u64 + m.msg.len as u64)),
            Some(l) => {
                l.va?;
                let size = self.window.chunk_size(room) as u64;
                let len = (m.msg.len as u64 - m.next).min(size) as u32;
                let off = (m.next / self.unit as u64) as u32;
                Some((What::Chunk { msg: m.msg.id, mid: l.mid, off, len }, len as u64))
            }
        }
    }

    /// Starts the next WQE: ADDR_REQs, then resends, then the first pass.
    fn start_next(&mut self) -> bool {
        while let Some((what, retx)) = self.ctrl.pop_front() {
            if let What::AddrReq { msg, .. } = what {
                if let Some(i) = self.index(msg) {
                    if let Some(l) = self.msgs[i].large.as_mut() {
                        l.req_queued = false;
                    }
                }
            }
            if !self.settled(&what) {
                self.begin(what, retx, retx.is_some());
                return true;
            }
        }
        while let Some(Resend { what, reason, again }) = self.retx.pop_front() {
            if self.settled(&what) {
                continue;
            }
            let piece = self.window.chunk_size(self.window.cwnd()).max(self.unit);
            // A lost WRITE chunk goes again as WRITE_RETX SENDs, sliced into pieces of the chunk
            // size in force (Figure 14), each unacknowledged piece with its own SEND reliable
            // number; so does a lost piece longer than that size, re-sliced as the chunk size
            // shrinks (§4.2): a piece resent whole at the size it was cut at may never get
            // through a lossy path (at 10 % packet loss a 48-packet SEND arrives whole once in
            // 150 tries), the window halving on each loss while the piece stays as long.
            let slice = match what {
                What::Chunk { msg, mid, off, len } => Some((msg, mid, off, len)),
                What::Piece { msg, mid, off, len, .. } if len > piece => Some((msg, mid, off, len)),
                _ => None,
            };
            if let Some((msg, mid, off, len)) = slice {
                let mut pieces = Vec::new();
                let (mut at, end) = (off as u64 * self.unit as u64, off as u64 * self.unit as u64 + len as u64);
                while at < end {
                    let plen = (end - at).min(piece as u64) as u32;
                    let poff = (at / self.unit as u64) as u32;
                    // (Its SEND reliable number is taken when it is sent.)
                    let what = What::Piece { msg, mid, off: poff, len: plen, rn: 0 };
                    if !self.settled(&what) {
                        pieces.push(Resend { what, reason, again: false });
                    }
                    at += plen as u64;
                }
                for p in pieces.into_iter().rev() {
                    self.retx.push_front(p);
                }
                continue;
            }
            self.begin(what, Some(reason), again);
            return true;
        }
        let Some((what, _)) = self.next_first_pass() else { return false };
        let i = self.index(what.msg()).expect("a live message");
        let what = match what {
            What::Data { msg, .. } => {
                self.msgs[i].first_done = true;
                What::Data { msg, rn: self.take_send_rn() }
            }
            w @ What::Chunk { len, .. } => {
                let m = &mut self.msgs[i];
                m.next += len as u64;
                m.first_done = m.next >= m.msg.len as u64;
                w
            }
            _ => unreachable!("first passes are DATA or chunks"),
        };
        self.begin(what, None, false);
        true
    }

    fn take_send_rn(&mut self) -> u32 {
        let rn = self.next_send_rn;
        self.next_send_rn = self.next_send_rn.wrapping_add(1);
        rn
    }

    /// Gives `what` a GN and makes it the WQE being sent; `again`: a SEND sent before.
    fn begin(&mut self, what: What, retx: Option<RetxReason>, again: bool) {
        let what = match what {
            What::Piece { msg, mid, off, len, rn: 0 } => What::Piece { msg, mid, off, len, rn: self.take_send_rn() },
            w => w,
        };
        let gn = self.next_gn;
        self.next_gn += 1;
        let control = matches!(what, What::AddrReq { .. });
        let mut send = Vec::new();
        let bytes = match what {
            What::Chunk { len, .. } => len as u64,
            _ => {
                send = self.send_message(what, gn, again);
                send.len() as u64
            }
        };
        // The hint marks the last WQE the window holds (Appendix A.1.1).
        let hint = !control && self.inflight + bytes + self.unit as u64 > self.window.cwnd();
        if hint && !send.is_empty() {
            send[2] |= wire::FLAG_HINT;
        }
        if !control {
            self.inflight += bytes;
        }
        self.sent.insert(gn, Sent { what, bytes, t1: None, counted: !control, lost: false });
        if let What::Chunk { mid, off, .. } = what {
            self.by_rn.insert(wire::imm(self.cfg.params.flor_split, false, mid, off), gn);
        }
        let n = match what {
            What::Chunk { len, .. } => npkts(len, self.cfg.mtu),
            _ => npkts(send.len() as u32, self.cfg.mtu),
        };
        self.cur = Some(Inject { gn, what, send, k: 0, n, hint, retx });
    }

    /// A SEND WQE's whole message: the 24-byte header (hint clear) and its body; `again` sets
    /// the retransmission flag.
    fn send_message(&self, what: What, gn: u64, again: bool) -> Vec<u8> {
        let mut v = match what {
            What::Data { msg, rn } => {
                let m = &self.msgs[self.index(msg).expect("live")].msg;
                SendRepr::data(rn, gn, false, &payload(m.id, 0, m.len)).to_vec()
            }
            What::Piece { msg, mid, off, len, rn } => {
                let body = payload(msg, off as u64 * self.unit as u64, len);
                let write_rn = wire::imm(self.cfg.params.flor_split, false, mid, off);
                SendRepr::write_retx(rn, gn, write_rn, &body).to_vec()
            }
            What::AddrReq { msg, mid, rn } => {
                let len = self.msgs[self.index(msg).expect("live")].msg.len;
                SendRepr::addr(rn, gn, AddrRepr::Req { mid, msg_len: len as u64 }).to_vec()
            }
            What::Chunk { .. } => unreachable!("a chunk is a WRITE"),
        };
        if again {
            v[2] |= FLAG_RETX;
        }
        v
    }

    /// Packet `k` of the WQE being sent.
    fn packet(&mut self, inj: &Inject) -> (Vec<u8>, u32) {
        let psn = self.psn;
        self.psn = psn::add(psn, 1);
        let pos = Pos::of(inj.k, inj.n);
        let mtu = self.cfg.mtu;
        let dst = self.wire.peer_qpn();
        let frame = match inj.what {
            What::Chunk { msg, mid, off, len } => {
                let opcode = 0x20 | crate::common::request_opcode(Op::WriteImm, pos);
                let base = off as u64 * self.unit as u64;
                let data = payload(msg, base + inj.k as u64 * mtu as u64, seg_len(len, mtu, inj.k));
                let mut r = RoceRepr::new(opcode, dst, psn).with_payload(&data);
                let i = self.index(msg).expect("live");
                let l = self.msgs[i].large.expect("a large message");
                if r.reth.is_some() {
                    r.reth = Some(RethRepr { va: l.va.expect("an address") + base, r_key: l.r_key, dma_len: len });
                }
                if r.immdt.is_some() {
                    r.immdt = Some(ImmDtRepr { imm: wire::imm(self.cfg.params.flor_split, inj.hint, mid, off) });
                }
                self.wire.frame(self.cfg.tos, r)
            }
            _ => {
                let opcode = 0x20 | crate::common::request_opcode(Op::Send, pos);
                let at = (inj.k as usize * mtu as usize).min(inj.send.len());
                let end = (at + mtu as usize).min(inj.send.len());
                let r = RoceRepr::new(opcode, dst, psn).with_payload(&inj.send[at..end]);
                self.wire.frame(self.cfg.tos, r)
            }
        };
        (frame, psn)
    }

    /// Marks `what`'s units acknowledged; completes its message when all are.
    fn acknowledge(&mut self, what: What, out: &mut Vec<Action>) {
        let span = match what {
            What::Data { .. } => 0..1,
            What::Chunk { off, len, .. } | What::Piece { off, len, .. } => self.span(off, len),
            What::AddrReq { .. } => return,
        };
        let Some(i) = self.index(what.msg()) else { return };
        let m = &mut self.msgs[i];
        for u in span {
            if let Some(a) = m.acked.get_mut(u) {
                if !*a {
                    *a = true;
                    m.acked_count += 1;
                }
            }
        }
        if !m.done && m.acked_count == m.acked.len() {
            m.done = true;
            m.first_done = true;
            let id = m.msg.id;
            out.push(Action::Completed { msg: id });
            // Its transmissions are settled: forget them.
            let split = self.cfg.params.flor_split;
            let mut gone = Vec::new();
            self.sent.retain(|_, s| {
                let keep = s.what.msg() != id;
                if !keep {
                    gone.push(s.what);
                }
                keep
            });
            for w in gone {
                if let What::Chunk { mid, off, .. } = w {
                    self.by_rn.remove(&wire::imm(split, false, mid, off));
                }
            }
            self.recount_inflight();
            while self.msgs.front().is_some_and(|m| m.done) {
                self.msgs.pop_front();
            }
        }
    }

    fn recount_inflight(&mut self) {
        self.inflight = self.sent.values().filter(|s| s.counted).map(|s| s.bytes).sum();
    }

    /// Transmission `gn` is lost: its WQE goes to the resend queue.
    fn lose(&mut self, now: Nanos, gn: u64, reason: RetxReason) {
        let Some(s) = self.sent.get_mut(&gn) else { return };
        if s.lost {
            return;
        }
        s.lost = true;
        if s.counted {
            s.counted = false;
            self.inflight = self.inflight.saturating_sub(s.bytes);
        }
        let what = s.what;
        self.window.on_loss(now);
        if self.settled(&what) {
            return;
        }
        match what {
            What::AddrReq { msg, .. } => self.queue_addr_req(msg, Some(reason)),
            // A lost chunk is sliced into pieces when its turn comes; anything else is a SEND
            // sent before.
            _ => self.retx.push_back(Resend { what, reason, again: !matches!(what, What::Chunk { .. }) }),
        }
    }

    fn queue_addr_req(&mut self, msg: u64, retx: Option<RetxReason>) {
        let Some(i) = self.index(msg) else { return };
        let Some(l) = self.msgs[i].large.as_mut() else { return };
        if l.va.is_some() || l.req_queued {
            return;
        }
        l.req_queued = true;
        let what = What::AddrReq { msg, mid: l.mid, rn: l.req_rn };
        self.ctrl.push_back((what, retx));
    }

    fn on_ack(&mut self, now: Nanos, ack: &wire::Ack, body: &[u8], out: &mut Vec<Action>) {
        let split = self.cfg.params.flor_split;
        let gns: Vec<Option<u64>> = ack
            .acked(body)
            .map(|a| match a {
                Acked::Send { gn } => Some(gn),
                Acked::Write { rn } => {
                    let r = wire::WriteRn::from_imm(split, rn);
                    self.by_rn.get(&wire::imm(split, false, r.mid, r.chunk_off)).copied()
                }
            })
            .collect();
        let last = gns.last().copied().flatten();
        let mut newest: Option<u64> = None;
        let (mut acked_bytes, mut last_t1) = (0, None);
        for gn in gns.into_iter().flatten() {
            newest = newest.max(Some(gn));
            let Some(s) = self.sent.remove(&gn) else { continue };
            if s.counted {
                self.inflight = self.inflight.saturating_sub(s.bytes);
                acked_bytes += s.bytes;
            }
            if let What::Chunk { mid, off, .. } = s.what {
                self.by_rn.remove(&wire::imm(split, false, mid, off));
            }
            if Some(gn) == last {
                last_t1 = s.t1;
            }
            self.acknowledge(s.what, out);
        }
        // The RTT of the last entry (the WQE that arrived last): (T4 − T1) − (T3′ − T2), §4.2.
        if let Some(t1) = last_t1 {
            let rtt = now.saturating_sub(t1).saturating_sub(ack.delay_ns);
            if rtt > 0 {
                self.window.on_rtt(now, rtt, acked_bytes);
            }
        }
        // Loss by gap: a transmission sent before one this ACK lists, and not listed (§5).
        if let Some(newest) = newest {
            let lost: Vec<u64> =
                self.sent.range(..newest).filter(|(_, s)| s.t1.is_some() && !s.lost).map(|(&g, _)| g).collect();
            for gn in lost {
                self.lose(now, gn, RetxReason::Sack);
            }
        }
    }

    fn on_addr_resp(&mut self, mid: u32, r_key: u32, va: u64, buf_len: u64, out: &mut Vec<Action>) {
        let Some(m) = self.msgs.iter_mut().find(|m| m.large.is_some_and(|l| l.mid == mid && l.va.is_none())) else {
            return;
        };
        if buf_len < m.msg.len as u64 {
            return crate::common::fail(&mut self.failed, "Flor receiver's buffer shorter than the message", out);
        }
        let l = m.large.as_mut().expect("large");
        l.va = Some(va);
        l.r_key = r_key;
    }
}

impl Endpoint for FlorSender {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        let (op, dst) = (p.opcode().0, p.bth().dest_qp());
        let mut w = Warnings::default();
        if op == OPCODE_ACK && dst == self.flor.sender_ack_qpn {
            let body = p.payload();
            if let Some(ack) = wire::Ack::parse(body, p.payload_len(), self.cfg.params.flor_ack_set_means, &mut w) {
                if ack.qpn == self.cfg.responder.qpn {
                    self.on_ack(now, &ack, body, out);
                }
            }
        } else if op == 0x24 && dst == self.cfg.requester.qpn {
            let body = p.payload();
            let Some(h) = wire::SendHeader::parse(body, p.payload_len(), true, self.cfg.params.flor_split, &mut w)
            else {
                return;
            };
            if let (SendType::AddrResp, Some(Addr::Resp { mid, r_key, va, buf_len })) = (h.kind, h.addr(body)) {
                self.on_addr_resp(mid, r_key, va, buf_len, out);
            }
        }
    }

    fn on_timer(&mut self, now: Nanos, token: u64, _out: &mut Vec<Action>) {
        let Some(job) = self.timers.remove(&token) else { return };
        match job {
            Job::Wqe { gn } => self.lose(now, gn, RetxReason::Timeout),
            Job::Addr { msg } => self.queue_addr_req(msg, Some(RetxReason::Timeout)),
        }
    }
}

impl Requester for FlorSender {
    fn post(&mut self, _now: Nanos, msg: Message, out: &mut Vec<Action>) {
        if self.failed {
            return;
        }
        if msg.op == Op::Read {
            return crate::common::fail(&mut self.failed, "Flor models no RDMA READ", out);
        }
        if self.flor.lengths.as_ref().is_some_and(|l| l.of(msg.id) != Some(msg.len)) {
            return crate::common::fail(
                &mut self.failed,
                "Flor message longer or shorter than its posted receive",
                out,
            );
        }
        let large = msg.len > self.flor.send_max;
        if large && msg.len as u64 > FlorConfig::max_message(&self.cfg) {
            return crate::common::fail(&mut self.failed, "Flor message beyond the chunk offsets' reach", out);
        }
        let large = large.then(|| Large {
            mid: (msg.id.wrapping_add(1) as u32) & self.mid_mask(),
            req_rn: 0,
            va: None,
            r_key: 0,
            req_queued: false,
        });
        let units = if large.is_some() { self.units_of(msg.len) as usize } else { 1 };
        self.msgs.push_back(OutMsg {
            msg,
            large,
            acked: vec![false; units],
            acked_count: 0,
            next: 0,
            first_done: false,
            done: false,
        });
        if let Some(l) = large {
            // The ADDR_REQ takes its SEND reliable number now (its repeats keep it).
            let rn = self.take_send_rn();
            let i = self.msgs.len() - 1;
            self.msgs[i].large = Some(Large { req_rn: rn, ..l });
            self.queue_addr_req(msg.id, None);
        }
    }

    fn idle(&self) -> bool {
        self.failed || self.msgs.iter().all(|m| m.done)
    }

    fn ready(&self) -> bool {
        !self.failed
            && (self.cur.is_some()
                || !self.ctrl.is_empty()
                || self.retx.iter().any(|r| !self.settled(&r.what))
                || self.next_first_pass().is_some())
    }

    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        if self.failed || (self.cur.is_none() && !self.start_next()) {
            return false;
        }
        let inj = self.cur.take().expect("a WQE being sent");
        let (frame, psn) = self.packet(&inj);
        out.push(Action::Transmit { frame, info: TxInfo { psn, msg: Some(inj.what.msg()), retx: inj.retx } });
        let inj = Inject { k: inj.k + 1, ..inj };
        if inj.k < inj.n {
            self.cur = Some(inj);
            return true;
        }
        // Its last packet left: T1, and its timers.
        if let Some(s) = self.sent.get_mut(&inj.gn) {
            s.t1 = Some(now);
        }
        let rto = self.rto_ns();
        self.timer(now + rto, Job::Wqe { gn: inj.gn }, out);
        if let What::AddrReq { msg, .. } = inj.what {
            self.timer(now + rto, Job::Addr { msg }, out);
        }
        true
    }
}
