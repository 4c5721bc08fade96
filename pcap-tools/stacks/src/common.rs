//! Pieces the three stacks share: the send queue of posted messages, framing with the codec's
//! builders (request packets, acknowledgements), segmentation, the modelled memory check, a
//! lazily re-armed one-shot timer and the in-order message assembler of an RC responder.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::ops::{Index, IndexMut};

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{psn, AethRepr, ImmDtRepr, IrnSackRepr, RethRepr};

use super::{imm_data, message_u64_at, remote_va, Words, Action, ConnConfig, Host, Message, Nanos, Op, TxInfo, R_KEY};

/// Packets of a message of `len` bytes (a zero-length message is one packet).
#[inline]
pub(crate) fn npkts(len: u32, mtu: u32) -> u32 {
    if len == 0 {
        1
    } else {
        len.div_ceil(mtu)
    }
}

/// Payload bytes of packet `k` of a message of `len` bytes.
#[inline]
pub(crate) fn seg_len(len: u32, mtu: u32, k: u32) -> u32 {
    let off = k as u64 * mtu as u64;
    (len as u64).saturating_sub(off).min(mtu as u64) as u32
}

/// Bytes `off .. off + len` of message `msg`.
pub(crate) fn payload(msg: u64, off: u64, len: u32) -> Vec<u8> {
    let mut out = vec![0u8; len as usize];
    let mut chunks = out.chunks_exact_mut(8);
    let mut at = off;
    if off.is_multiple_of(8) {
        // Aligned (every packet of an MTU that is a multiple of 8): whole words in a row.
        let mut words = Words::new(msg, off / 8);
        for c in &mut chunks {
            c.copy_from_slice(&words.next_word().to_le_bytes());
            at += 8;
        }
    } else {
        for c in &mut chunks {
            c.copy_from_slice(&message_u64_at(msg, at).to_le_bytes());
            at += 8;
        }
    }
    let tail = chunks.into_remainder();
    let n = tail.len();
    tail.copy_from_slice(&message_u64_at(msg, at).to_le_bytes()[..n]);
    out
}

/// One step of [`digest`]: a word into one lane.
#[inline(always)]
fn digest_step(h: u64, word: u64) -> u64 {
    (h ^ word).wrapping_mul(0x9FB2_1C65_1E98_DF25).rotate_left(29)
}

/// Four lanes, each fed every fourth word, so the multiplications run side by side.
#[inline(always)]
fn digest_start(len: usize) -> [u64; 4] {
    let s = 0xcbf2_9ce4_8422_2325u64 ^ len as u64;
    [s, s ^ 0x9E37_79B9_7F4A_7C15, s ^ 0xD6E8_FEB8_6659_FD93, s ^ 0xA076_1D64_78BD_642F]
}

#[inline(always)]
fn digest_finish(l: [u64; 4]) -> u64 {
    let h = digest_step(digest_step(digest_step(l[0], l[1]), l[2]), l[3]);
    let h = h ^ (h >> 32);
    h.wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ (h >> 29)
}

/// A 64-bit digest of `bytes` (8 bytes per step over four independent lanes, the length mixed
/// in): lets a receiver that cannot yet tell where a packet belongs (IRN's out-of-order
/// packets, DCP SENDs before their First) check it later without keeping it. Not
/// cryptographic: it tells corrupted or misplaced modelled contents from the right ones.
pub(crate) fn digest(bytes: &[u8]) -> u64 {
    let mut l = digest_start(bytes.len());
    let mut quads = bytes.chunks_exact(32);
    for q in &mut quads {
        for (k, lane) in l.iter_mut().enumerate() {
            *lane = digest_step(*lane, u64::from_le_bytes(q[8 * k..8 * k + 8].try_into().expect("8 bytes")));
        }
    }
    let rest = quads.remainder();
    let mut words = rest.chunks_exact(8);
    let mut k = 0;
    for c in &mut words {
        l[k] = digest_step(l[k], u64::from_le_bytes(c.try_into().expect("8 bytes")));
        k += 1;
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut w = [0u8; 8];
        w[..tail.len()].copy_from_slice(tail);
        l[k] = digest_step(l[k], u64::from_le_bytes(w));
    }
    digest_finish(l)
}

/// The digest bytes `off .. off + len` of message `msg` should have, computed from the
/// modelled contents without building them.
pub(crate) fn expected_digest(msg: u64, off: u64, len: u32) -> u64 {
    let mut l = digest_start(len as usize);
    let end = off + len as u64;
    let mut i = off;
    let aligned = off.is_multiple_of(8);
    let mut words = Words::new(msg, off / 8);
    // The eight bytes from `i`; aligned, the words come in order from `words` (every call below
    // asks for the next `i`, 8 bytes on).
    let mut word_at = |i: u64| if aligned { words.next_word() } else { message_u64_at(msg, i) };
    while i + 32 <= end {
        for (k, lane) in l.iter_mut().enumerate() {
            *lane = digest_step(*lane, word_at(i + 8 * k as u64));
        }
        i += 32;
    }
    let mut k = 0;
    while i + 8 <= end {
        l[k] = digest_step(l[k], word_at(i));
        i += 8;
        k += 1;
    }
    if i < end {
        let keep = 8 * (end - i) as u32;
        l[k] = digest_step(l[k], word_at(i) & (u64::MAX >> (64 - keep)));
    }
    digest_finish(l)
}

/// A u64 sequence number from its low 24 bits, taken as the one nearest `base`.
#[inline]
pub(crate) fn unwrap24(base: u64, low: u32) -> u64 {
    let d = psn::diff(base as u32 & psn::MASK, low & psn::MASK) as i64;
    (base as i64 + d).max(0) as u64
}

/// Where a packet stands in its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pos {
    First,
    Middle,
    Last,
    Only,
}

impl Pos {
    pub(crate) fn of(k: u32, n: u32) -> Pos {
        match (k == 0, k + 1 == n) {
            (true, true) => Pos::Only,
            (true, false) => Pos::First,
            (false, true) => Pos::Last,
            (false, false) => Pos::Middle,
        }
    }
    pub(crate) fn starts(self) -> bool {
        matches!(self, Pos::First | Pos::Only)
    }
    pub(crate) fn ends(self) -> bool {
        matches!(self, Pos::Last | Pos::Only)
    }
}

/// The request opcode of packet position `pos` of an `op` message (RC).
pub(crate) fn request_opcode(op: Op, pos: Pos) -> u8 {
    match (op, pos) {
        (Op::Send, Pos::First) => 0x00,
        (Op::Send, Pos::Middle) => 0x01,
        (Op::Send, Pos::Last) => 0x02,
        (Op::Send, Pos::Only) => 0x04,
        (Op::Write | Op::WriteImm, Pos::First) => 0x06,
        (Op::Write | Op::WriteImm, Pos::Middle) => 0x07,
        (Op::Write, Pos::Last) => 0x08,
        (Op::WriteImm, Pos::Last) => 0x09,
        (Op::Write, Pos::Only) => 0x0A,
        (Op::WriteImm, Pos::Only) => 0x0B,
        (Op::Read, _) => 0x0C,
    }
}

/// What a SEND/WRITE request opcode is: (is a WRITE, position, carries ImmDt).
pub(crate) fn classify_request(opcode: u8) -> Option<(bool, Pos, bool)> {
    Some(match opcode {
        0x00 => (false, Pos::First, false),
        0x01 => (false, Pos::Middle, false),
        0x02 => (false, Pos::Last, false),
        0x04 => (false, Pos::Only, false),
        0x06 => (true, Pos::First, false),
        0x07 => (true, Pos::Middle, false),
        0x08 => (true, Pos::Last, false),
        0x09 => (true, Pos::Last, true),
        0x0A => (true, Pos::Only, false),
        0x0B => (true, Pos::Only, true),
        _ => return None,
    })
}

/// READ Response opcode of a position.
pub(crate) fn read_response_opcode(pos: Pos) -> u8 {
    match pos {
        Pos::First => 0x0D,
        Pos::Middle => 0x0E,
        Pos::Last => 0x0F,
        Pos::Only => 0x10,
    }
}

/// A posted message and its PSNs, with what a stack keeps besides about it (`extra`).
#[derive(Clone, Debug)]
pub(crate) struct Wqe<X = ()> {
    pub msg: Message,
    /// Its first PSN.
    pub first: u32,
    /// Its PSNs (packets; a READ: its response packets).
    pub n: u32,
    pub extra: X,
}

impl<X> Wqe<X> {
    /// Its last PSN.
    pub(crate) fn last(&self) -> u32 {
        psn::add(self.first, self.n - 1)
    }
}

/// A requester's send queue: the messages posted and not yet completed, in posting (= PSN)
/// order, each numbered with the PSNs after those of the message before it.
#[derive(Clone, Debug)]
pub(crate) struct SendQueue<X = ()> {
    q: VecDeque<Wqe<X>>,
    next_psn: u32,
}

impl<X> SendQueue<X> {
    /// An empty queue whose first message starts at `start_psn`.
    pub(crate) fn new(start_psn: u32) -> SendQueue<X> {
        SendQueue { q: VecDeque::new(), next_psn: start_psn & psn::MASK }
    }

    /// Appends a posted message of `npkts(msg.len, mtu)` PSNs.
    pub(crate) fn push(&mut self, msg: Message, mtu: u32, extra: X) {
        let n = npkts(msg.len, mtu);
        self.q.push_back(Wqe { msg, first: self.next_psn, n, extra });
        self.next_psn = psn::add(self.next_psn, n);
    }

    /// First PSN of the next posted message (one past the last PSN queued).
    pub(crate) fn next_psn(&self) -> u32 {
        self.next_psn
    }

    /// Index of the message holding PSN `p`.
    pub(crate) fn find(&self, p: u32) -> Option<usize> {
        let base = self.q.front()?.first;
        let at = psn::diff(base, p);
        if at < 0 {
            return None;
        }
        let i = self.q.partition_point(|w| psn::diff(base, w.first) <= at).checked_sub(1)?;
        let w = &self.q[i];
        ((psn::diff(w.first, p) as u32) < w.n).then_some(i)
    }

    /// Takes the oldest message if every PSN of it precedes `una`.
    pub(crate) fn pop_acked(&mut self, una: u32) -> Option<Wqe<X>> {
        self.q.front().filter(|w| psn::lt(w.last(), una))?;
        self.q.pop_front()
    }

    pub(crate) fn front(&self) -> Option<&Wqe<X>> {
        self.q.front()
    }
    pub(crate) fn pop_front(&mut self) -> Option<Wqe<X>> {
        self.q.pop_front()
    }
    pub(crate) fn len(&self) -> usize {
        self.q.len()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

impl<X> Index<usize> for SendQueue<X> {
    type Output = Wqe<X>;
    fn index(&self, i: usize) -> &Wqe<X> {
        &self.q[i]
    }
}

impl<X> IndexMut<usize> for SendQueue<X> {
    fn index_mut(&mut self, i: usize) -> &mut Wqe<X> {
        &mut self.q[i]
    }
}

/// AckReq on an RC request (GBN, IRN): on the last packet of every message and on every
/// `window / 4`-th packet; `since` counts the SEND/WRITE packets sent since the last one.
pub(crate) fn ack_req_due(since: &mut u32, pos: Pos, window: u32) -> bool {
    *since += 1;
    if pos.ends() || *since >= (window / 4).max(1) {
        *since = 0;
        true
    } else {
        false
    }
}

/// Puts the QP in error: sets `failed` and reports `reason`, unless it already was.
pub(crate) fn fail(failed: &mut bool, reason: &'static str, out: &mut Vec<Action>) {
    if !*failed {
        *failed = true;
        out.push(Action::Failed { reason });
    }
}

/// Builds the frames one end sends to the other.
#[derive(Clone, Debug)]
pub(crate) struct Wire {
    src: Host,
    dst: Host,
    udp_sport: u16,
    ident: u16,
}

impl Wire {
    /// Frames from the requester (`true`) or from the responder.
    pub(crate) fn new(cfg: &ConnConfig, from_requester: bool) -> Wire {
        let (src, dst) = if from_requester { (cfg.requester, cfg.responder) } else { (cfg.responder, cfg.requester) };
        Wire { src, dst, udp_sport: cfg.udp_sport, ident: 0 }
    }

    /// The peer's QPN (the DestQP of everything this end sends).
    pub(crate) fn peer_qpn(&self) -> u32 {
        self.dst.qpn
    }

    /// An Ethernet · IP (ToS `tos`) · UDP · `roce` frame to the peer.
    pub(crate) fn frame(&mut self, tos: u8, roce: RoceRepr<'_>) -> Vec<u8> {
        let net = match (self.src.ip, self.dst.ip) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                self.ident = self.ident.wrapping_add(1);
                NetRepr::Ipv4 { src: s.octets(), dst: d.octets(), tos, ttl: 64, ident: self.ident }
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                NetRepr::Ipv6 { src: s.octets(), dst: d.octets(), traffic_class: tos, flow_label: 0, hop_limit: 64 }
            }
            _ => panic!("hosts of different IP families"),
        };
        let mut f = FrameRepr::new(net, roce);
        f.eth_src = self.src.mac;
        f.eth_dst = self.dst.mac;
        f.udp_src = self.udp_sport;
        f.to_vec()
    }

    /// Request packet `p` of `w` (a SEND, WRITE or WRITE with Immediate) with the opcode of its
    /// position and its bytes of the message; a RETH where the layout has one (RC: WRITE
    /// First/Only; DCP: every WRITE packet, §4.4) holding the address of the packet's own payload
    /// and the message's length; the ImmDt of a WRITE with Immediate. `dcp` picks the DCP layout;
    /// `edit` sets what the stack adds (AckReq, the DCPETH, …), knowing the packet's position.
    pub(crate) fn request<X>(
        &mut self,
        tos: u8,
        w: &Wqe<X>,
        p: u32,
        mtu: u32,
        dcp: bool,
        edit: impl FnOnce(&mut RoceRepr<'_>, Pos),
    ) -> Vec<u8> {
        let (msg, k) = (w.msg, psn::diff(w.first, p) as u32);
        let pos = Pos::of(k, w.n);
        let off = k as u64 * mtu as u64;
        let data = payload(msg.id, off, seg_len(msg.len, mtu, k));
        let opcode = request_opcode(msg.op, pos);
        let r =
            if dcp { RoceRepr::new_dcp(opcode, self.peer_qpn(), p) } else { RoceRepr::new(opcode, self.peer_qpn(), p) };
        let mut r = r.with_payload(&data);
        if r.reth.is_some() {
            r.reth = Some(RethRepr { va: remote_va(msg.id) + off, r_key: R_KEY, dma_len: msg.len });
        }
        if r.immdt.is_some() {
            r.immdt = Some(ImmDtRepr { imm: imm_data(msg.id) });
        }
        edit(&mut r, pos);
        self.frame(tos, r)
    }

    /// An Acknowledge of PSN `p` carrying `aeth` (and, for IRN's SACK NAK, the SACK PSN), to
    /// transmit.
    pub(crate) fn acknowledge(&mut self, tos: u8, p: u32, aeth: AethRepr, sack_psn: Option<u32>) -> Action {
        let mut r = RoceRepr::new(0x11, self.peer_qpn(), p);
        r.aeth = Some(aeth);
        r.irn_sack = sack_psn.map(|sack_psn| IrnSackRepr { sack_psn });
        let frame = self.frame(tos, r);
        Action::Transmit { frame, info: TxInfo { psn: p, msg: None, retx: None } }
    }
}

/// A one-shot retransmission timer over [`Action::Timer`], which cannot be cancelled: one timer
/// is live; moving the deadline later costs nothing (the early timer fires and re-schedules
/// itself for the deadline), moving it earlier schedules a new timer (the old one's token goes
/// stale), disarming leaves the outstanding timer to fire idly.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rto {
    deadline: Option<Nanos>,
    /// The outstanding timer: when it fires and its token.
    pending: Option<(Nanos, u64)>,
    next_token: u64,
    /// A fault on purpose ([`crate::Timeouts::until_expiry`]): every value is changed until the
    /// timer first expires.
    fault: crate::timeouts::TimerFault,
}

impl Rto {
    /// A stopped timer; `fault`: [`crate::Timeouts::until_expiry`].
    pub(crate) fn new(fault: crate::timeouts::TimerFault) -> Rto {
        Rto { fault, ..Rto::default() }
    }

    /// (Re)starts the timer: it expires `rto` after `now`.
    pub(crate) fn arm(&mut self, now: Nanos, rto: Nanos, out: &mut Vec<Action>) {
        let rto = self.fault.apply(rto);
        let at = now.saturating_add(rto.max(1));
        self.deadline = Some(at);
        // A deadline earlier than the outstanding timer needs its own (the old one fires idly).
        if self.pending.is_none_or(|(p, _)| at < p) {
            self.schedule(at, out);
        }
    }

    /// Whether the timer is running.
    pub(crate) fn running(&self) -> bool {
        self.deadline.is_some()
    }

    /// Starts the timer unless it is running.
    pub(crate) fn ensure(&mut self, now: Nanos, rto: Nanos, out: &mut Vec<Action>) {
        if self.deadline.is_none() {
            self.arm(now, rto, out);
        }
    }

    pub(crate) fn disarm(&mut self) {
        self.deadline = None;
    }

    /// After an acknowledgement: restarts the timer while something is `outstanding`, else
    /// stops it.
    pub(crate) fn rearm_if(&mut self, outstanding: bool, now: Nanos, rto: Nanos, out: &mut Vec<Action>) {
        if outstanding {
            self.arm(now, rto, out);
        } else {
            self.disarm();
        }
    }

    fn schedule(&mut self, at: Nanos, out: &mut Vec<Action>) {
        let token = self.next_token;
        self.next_token += 1;
        self.pending = Some((at, token));
        out.push(Action::Timer { at, token });
    }

    /// A timer fired: true when the deadline has passed (the timer is then stopped).
    pub(crate) fn fire(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) -> bool {
        if self.pending.map(|p| p.1) != Some(token) {
            return false;
        }
        self.pending = None;
        match self.deadline {
            None => false,
            Some(d) if now < d => {
                self.schedule(d, out);
                false
            }
            Some(_) => {
                self.deadline = None;
                self.fault = crate::timeouts::TimerFault::None;
                true
            }
        }
    }
}

/// One SEND/WRITE request packet as an in-order responder consumes it: enough to check it
/// against the modelled memory without keeping its payload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Incoming {
    pub opcode: u8,
    pub len: u32,
    pub digest: u64,
    /// RETH VA and DMA length (WRITE First/Only).
    pub reth: Option<(u64, u32)>,
    pub imm: Option<u32>,
}

impl Incoming {
    pub(crate) fn from_packet(p: &rocescope_codec::ib::RocePacket<'_>) -> Incoming {
        let payload = p.payload();
        Incoming {
            digest: if payload.len() == p.payload_len() { digest(payload) } else { !0 },
            ..Incoming::headers(p)
        }
    }

    /// The packet's headers, without the digest (for a receiver that checks the bytes at once).
    fn headers(p: &rocescope_codec::ib::RocePacket<'_>) -> Incoming {
        Incoming {
            opcode: p.opcode().0,
            len: p.payload_len() as u32,
            digest: 0,
            reth: p.reth().map(|r| (r.va(), r.dma_len())),
            imm: p.immdt().map(|i| i.imm()),
        }
    }
}

/// Whether `bytes` are bytes `off ..` of message `msg` (compared a word at a time).
pub(crate) fn is_content(msg: u64, off: u64, bytes: &[u8]) -> bool {
    if !off.is_multiple_of(8) {
        return payload(msg, off, bytes.len() as u32) == bytes;
    }
    let mut words = Words::new(msg, off / 8);
    let mut chunks = bytes.chunks_exact(8);
    let whole = chunks.all(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) == words.next_word());
    let tail = chunks.remainder();
    whole && (tail.is_empty() || tail == &words.next_word().to_le_bytes()[..tail.len()])
}

#[derive(Clone, Debug)]
struct Current {
    msg: u64,
    write: bool,
    off: u64,
    intact: bool,
    dma_len: Option<u32>,
}

/// An RC responder's message assembly for packets taken in PSN order: numbers messages in
/// arrival order (the posting order), checks each packet's opcode sequence, placement and bytes,
/// reports a message when its Last/Only packet is taken, and counts the messages completed.
#[derive(Clone, Debug)]
pub(crate) struct Assembler {
    mtu: u32,
    next_msg: u64,
    /// Messages completed (SEND, WRITE and READ), modulo 2^24.
    msn: u32,
    cur: Option<Current>,
}

impl Assembler {
    pub(crate) fn new(mtu: u32) -> Assembler {
        Assembler { mtu, next_msg: 0, msn: 0, cur: None }
    }

    /// Messages numbered so far.
    pub(crate) fn numbered(&self) -> u64 {
        self.next_msg
    }

    /// Messages completed, modulo 2^24: the AETH MSN.
    pub(crate) fn msn(&self) -> u32 {
        self.msn
    }

    /// A READ Request was executed: it takes the next message number and completes.
    pub(crate) fn take_read(&mut self) -> u64 {
        let m = self.next_msg;
        self.next_msg += 1;
        self.msn = (self.msn + 1) & psn::MASK;
        m
    }

    /// Takes the next in-order SEND/WRITE packet; returns the message delivered, if it ends one.
    pub(crate) fn take(&mut self, p: &Incoming) -> Option<Action> {
        self.take_checked(p, |msg, off, len| p.digest == expected_digest(msg, off, len))
    }

    /// [`Self::take`] for a packet taken the moment it arrives: its bytes are compared with the
    /// modelled memory directly, with no digest to compute.
    pub(crate) fn take_packet(&mut self, p: &rocescope_codec::ib::RocePacket<'_>) -> Option<Action> {
        let inc = Incoming::headers(p);
        let bytes = p.payload();
        let whole = bytes.len() == p.payload_len();
        self.take_checked(&inc, |msg, off, _| whole && is_content(msg, off, bytes))
    }

    /// Takes a packet whose bytes `content_ok(msg, offset, len)` checks.
    fn take_checked(&mut self, p: &Incoming, content_ok: impl FnOnce(u64, u64, u32) -> bool) -> Option<Action> {
        let (write, pos, has_imm) = classify_request(p.opcode)?;
        if pos.starts() || self.cur.is_none() {
            let ok = pos.starts() && self.cur.is_none();
            let msg = self.next_msg;
            self.next_msg += 1;
            self.cur = Some(Current { msg, write, off: 0, intact: ok, dma_len: None });
        }
        let cur = self.cur.as_mut().expect("a message in progress");
        if cur.write != write {
            cur.intact = false;
        }
        if pos.starts() && write {
            match p.reth {
                Some((va, len)) if va == remote_va(cur.msg) => cur.dma_len = Some(len),
                _ => cur.intact = false,
            }
        }
        if !pos.ends() && p.len != self.mtu {
            cur.intact = false;
        }
        if p.len > self.mtu || !content_ok(cur.msg, cur.off, p.len) {
            cur.intact = false;
        }
        cur.off += p.len as u64;
        if !pos.ends() {
            return None;
        }
        let cur = self.cur.take().expect("a message in progress");
        let mut intact = cur.intact;
        if write && cur.dma_len != Some(cur.off as u32) {
            intact = false;
        }
        if has_imm && p.imm != Some(imm_data(cur.msg)) {
            intact = false;
        }
        self.msn = (self.msn + 1) & psn::MASK;
        Some(Action::Delivered { msg: cur.msg, len: cur.off as u32, intact })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segmentation() {
        assert_eq!((npkts(0, 1024), npkts(1, 1024), npkts(1024, 1024), npkts(1025, 1024)), (1, 1, 1, 2));
        assert_eq!((seg_len(1025, 1024, 0), seg_len(1025, 1024, 1), seg_len(0, 1024, 0)), (1024, 1, 0));
        assert_eq!(
            [Pos::of(0, 1), Pos::of(0, 3), Pos::of(1, 3), Pos::of(2, 3)],
            [Pos::Only, Pos::First, Pos::Middle, Pos::Last]
        );
        for op in [Op::Send, Op::Write, Op::WriteImm] {
            for pos in [Pos::First, Pos::Middle, Pos::Last, Pos::Only] {
                let (w, p, imm) = classify_request(request_opcode(op, pos)).unwrap();
                assert_eq!((w, p, imm), (op != Op::Send, pos, op == Op::WriteImm && pos.ends()));
            }
        }
    }

    #[test]
    fn unwrap24_takes_the_nearest() {
        assert_eq!(unwrap24(5, 7), 7);
        assert_eq!(unwrap24(0x100_0002, 0xff_ffff), 0xff_ffff);
        assert_eq!(unwrap24(0xff_fffe, 1), 0x100_0001);
        assert_eq!(unwrap24(3, 0xff_fff0), 0);
    }

    #[test]
    fn digests_match_the_modelled_memory() {
        let p = payload(9, 100, 50);
        assert_eq!(digest(&p), expected_digest(9, 100, 50));
        assert_ne!(digest(&p), expected_digest(9, 101, 50));
        assert_ne!(digest(&p), expected_digest(8, 100, 50));
        assert_ne!(digest(&p), expected_digest(9, 100, 49));
        // Every alignment and tail length, and one flipped bit anywhere changes the digest.
        for off in 0..17u64 {
            for len in [0u32, 1, 7, 8, 9, 15, 16, 63, 1024, 1029] {
                let p = payload(3, off, len);
                assert_eq!(p, (0..len as u64).map(|i| crate::message_byte(3, off + i)).collect::<Vec<_>>());
                assert_eq!(digest(&p), expected_digest(3, off, len), "off {off} len {len}");
                for bit in [0, 7, 8 * len as usize / 2, (8 * len as usize).saturating_sub(1)] {
                    if len == 0 {
                        continue;
                    }
                    let mut q = p.clone();
                    q[bit / 8] ^= 1 << (bit % 8);
                    assert_ne!(digest(&q), digest(&p), "off {off} len {len} bit {bit}");
                }
            }
        }
    }

    #[test]
    fn content_checks_match_the_modelled_memory_a_word_at_a_time() {
        for off in [0u64, 8, 1024, 3, 13] {
            for len in [0u32, 5, 8, 64, 1021, 1024] {
                let p = payload(11, off, len);
                assert!(is_content(11, off, &p), "off {off} len {len}");
                assert!(len == 0 || !is_content(12, off, &p), "another message, off {off} len {len}");
                if len > 0 {
                    for at in [0, len as usize / 2, len as usize - 1] {
                        let mut q = p.clone();
                        q[at] ^= 0x40;
                        assert!(!is_content(11, off, &q), "off {off} len {len} byte {at}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_timer_moves_without_new_timers_and_fires_once() {
        let mut t = Rto::default();
        let mut out = vec![];
        t.arm(0, 100, &mut out);
        t.arm(50, 100, &mut out); // later deadline: no second timer
        assert_eq!(out, vec![Action::Timer { at: 100, token: 0 }]);
        out.clear();
        assert!(!t.fire(100, 0, &mut out)); // early: re-scheduled for the deadline
        assert_eq!(out, vec![Action::Timer { at: 150, token: 1 }]);
        assert!(!t.fire(150, 0, &mut out)); // a stale token
        out.clear();
        assert!(t.fire(150, 1, &mut out));
        assert!(out.is_empty());
        t.arm(200, 100, &mut out);
        t.disarm();
        assert!(!t.fire(300, 2, &mut out));
    }

    #[test]
    fn the_assembler_checks_order_placement_and_bytes() {
        let mtu = 8;
        let pkt = |msg: u64, opcode: u8, off: u64, len: u32| Incoming {
            opcode,
            len,
            digest: expected_digest(msg, off, len),
            reth: matches!(opcode, 0x06 | 0x0A | 0x0B).then_some((remote_va(msg), 12)),
            imm: matches!(opcode, 0x09 | 0x0B).then_some(imm_data(msg)),
        };
        let mut a = Assembler::new(mtu);
        assert_eq!(a.take(&pkt(0, 0x06, 0, 8)), None);
        assert_eq!(a.take(&pkt(0, 0x09, 8, 4)), Some(Action::Delivered { msg: 0, len: 12, intact: true }));
        assert_eq!(a.take_read(), 1);
        assert_eq!(a.take(&pkt(2, 0x04, 0, 3)), Some(Action::Delivered { msg: 2, len: 3, intact: true }));
        // Wrong bytes, then a Middle without a First.
        assert_eq!(a.take(&pkt(9, 0x04, 0, 3)), Some(Action::Delivered { msg: 3, len: 3, intact: false }));
        assert_eq!(a.take(&pkt(4, 0x02, 0, 3)), Some(Action::Delivered { msg: 4, len: 3, intact: false }));
    }
}
