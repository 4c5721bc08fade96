//! Faults injected on purpose (`rocescope synth --fault`, docs/replay.md "Faults"): one end of
//! one connection misbehaves once, in a way the transport's rules forbid, so `rocescope replay`
//! can be tested against a capture whose one departure is known.
//!
//! A fault wraps a reference end ([`inject`]): the wrapper passes everything through except,
//! at the `nth` occasion the fault waits for, the one thing it changes. What it changed is
//! appended to a [`FaultLog`] (the simulator writes it into the truth, `faults`).
//!
//! Responder faults (the answers of IBTA §9.7.5, IRN §3, DCP §4.1/§4.5):
//! - `omit-nak`: the `nth` negative answer (GBN NAK, DCP returned header-only packet) is never
//!   sent; IRN, which sends a selective NAK for every out-of-order packet, all naming the PSN
//!   it expects, withholds every one naming the `nth`'s PSN (the loss is never NAK'd: one
//!   withheld among others would look like a capture gap at any tap).
//! - `double-nak`: the `nth` negative answer is sent twice.
//! - `early-msn`: the `nth` ACK carries an MSN (DCP: eMSN) one higher than the responder's.
//! - `false-nack` (ERD, whose receiver answers with NACKs only, seed 004 §4.3): the `nth` NACK
//!   segment names, in place of its first entry, the PSN of the latest data packet the
//!   receiver got at least 20 µs before (which it holds). The PSN it replaced is named again by
//!   a later scan. (The info path keeps the segment's original bytes: a TCP resend of it names
//!   the original PSN, under the same sequence number.)
//!   SDR selective repeat with SR_NACKs (`--sdr-nack`, seed 001 §4.1): the `nth` SR_NACK names,
//!   in place of its first chunk, a chunk of the same message the receiver got at least 20 µs
//!   before (the chunk it replaced is named again by a later SR_NACK or recovered by its timer).
//!   (The three above have nothing to change in an ERD receiver.)
//!
//! Requester faults:
//! - `needless-retx`: 200 µs after the `nth` message completes, its last packet is sent again
//!   (it was acknowledged: never lost); SDR erasure coding: its first packet (D0's packet 0,
//!   the send its EC_ACK names).
//! - `late-go-back` (GBN): after the `nth` NAK, the requester resumes one packet past the PSN
//!   the NAK names (that packet is skipped; the local ACK timeout recovers it later).
//! - `early-timeout`: the retransmission timer runs at half its value until it first expires
//!   ([`crate::Timeouts::until_expiry`]), so the first timeout of the run fires early.
//! - `late-timeout`: the same at one and a half times its value: the first timeout fires late.

use std::sync::{Arc, Mutex};

use rocescope_codec::build::{fix_icrc, fix_tcp_checksum};
use rocescope_codec::ext::{dcp, sdr};
use rocescope_codec::ext::erd::{parse_nack, NACK_ENTRY_LEN, NACK_HEADER_LEN};
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params};

use crate::{Action, ConnConfig, Endpoint, Message, Nanos, Requester, RetxReason, StackKind, TxInfo};

/// What goes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    OmitNak,
    DoubleNak,
    EarlyMsn,
    FalseNack,
    NeedlessRetx,
    LateGoBack,
    EarlyTimeout,
    LateTimeout,
}

impl Fault {
    pub const ALL: [Fault; 8] = [
        Fault::OmitNak,
        Fault::DoubleNak,
        Fault::EarlyMsn,
        Fault::FalseNack,
        Fault::NeedlessRetx,
        Fault::LateGoBack,
        Fault::EarlyTimeout,
        Fault::LateTimeout,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::OmitNak => "omit-nak",
            Fault::DoubleNak => "double-nak",
            Fault::EarlyMsn => "early-msn",
            Fault::FalseNack => "false-nack",
            Fault::NeedlessRetx => "needless-retx",
            Fault::LateGoBack => "late-go-back",
            Fault::EarlyTimeout => "early-timeout",
            Fault::LateTimeout => "late-timeout",
        }
    }

    pub fn from_name(s: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Whether the responder misbehaves (else the requester).
    pub fn at_responder(self) -> bool {
        matches!(self, Fault::OmitNak | Fault::DoubleNak | Fault::EarlyMsn | Fault::FalseNack)
    }

    /// Whether `kind` has what the fault changes (Go-Back-N only goes back; the faults are
    /// RC's, of SDR's `needless-retx` applies, and `false-nack` to selective repeat; an ERD receiver sends
    /// no NAK or ACK, only NACKs).
    pub fn applies_to(self, kind: StackKind) -> bool {
        match self {
            Fault::FalseNack => matches!(kind, StackKind::Erd | StackKind::SdrSr),
            // (ERD has no timer either.)
            Fault::OmitNak | Fault::DoubleNak | Fault::EarlyMsn | Fault::EarlyTimeout | Fault::LateTimeout
                if kind == StackKind::Erd =>
            {
                false
            }
            // (SDR's sender can resend a packet of a message it had completed; its other faults
            // are RC's.)
            Fault::NeedlessRetx if kind.is_sdr() => true,
            _ => !kind.is_sdr() && (self != Fault::LateGoBack || kind == StackKind::Gbn),
        }
    }
}

/// A fault and the occasion it waits for (1: the first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultSpec {
    pub fault: Fault,
    pub nth: u32,
}

/// What a fault did, when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    pub fault: Fault,
    pub time: Nanos,
    /// The PSN of the frame changed, sent, skipped or not sent.
    pub psn: u32,
    pub detail: String,
}

/// Where the faults of a run are written down (shared by the wrappers and their driver).
pub type FaultLog = Arc<Mutex<Vec<Applied>>>;

/// Wraps the end of `pair` that `spec` makes misbehave. `cfg` is the connection's (for
/// `early-timeout` and `late-timeout`, make the pair from [`ConnConfig`] with
/// [`crate::Timeouts::until_expiry`] set: [`config_for`] does).
pub fn inject(
    kind: StackKind,
    cfg: &ConnConfig,
    spec: FaultSpec,
    log: FaultLog,
    pair: (Box<dyn Requester>, Box<dyn Endpoint>),
) -> (Box<dyn Requester>, Box<dyn Endpoint>) {
    let (req, resp) = pair;
    let sdr_chunk = cfg.sdr.as_ref().map_or(1, |s| s.chunk_packets.max(1));
    let state = State { spec, seen: 0, done: false, log, kind, params: cfg.params, sdr_chunk };
    if spec.fault.at_responder() {
        (req, Box::new(FaultyResponder {
            inner: resp,
            st: state,
            buf: Vec::new(),
            silenced: None,
            held: Default::default(),
            sdr_held: Default::default(),
        }))
    } else {
        let r = FaultyRequester {
            inner: req,
            st: state,
            buf: Vec::new(),
            sent: Vec::new(),
            firsts: Default::default(),
            due: None,
            resend: None,
            skip: None,
        };
        (Box::new(r), resp)
    }
}

/// The connection's configuration with what `spec` needs of the stack itself.
pub fn config_for(cfg: &ConnConfig, spec: FaultSpec) -> ConnConfig {
    let mut c = cfg.clone();
    match spec.fault {
        Fault::EarlyTimeout => c.timeouts.until_expiry = crate::TimerFault::Half,
        Fault::LateTimeout => c.timeouts.until_expiry = crate::TimerFault::OneAndHalf,
        _ => {}
    }
    c
}

struct State {
    spec: FaultSpec,
    /// Occasions seen so far.
    seen: u32,
    done: bool,
    log: FaultLog,
    kind: StackKind,
    params: Params,
    /// SDR: packets a chunk.
    sdr_chunk: u32,
}

impl State {
    /// One more occasion: true when it is the one the fault waits for.
    fn occasion(&mut self) -> bool {
        if self.done {
            return false;
        }
        self.seen += 1;
        self.seen == self.spec.nth
    }

    fn applied(&mut self, time: Nanos, psn: u32, detail: String) {
        self.done = true;
        if let Ok(mut l) = self.log.lock() {
            l.push(Applied { fault: self.spec.fault, time, psn, detail });
        }
    }

    fn opts(&self) -> DecodeOptions {
        DecodeOptions { verify: false, profile: self.kind.profile(), params: self.params }
    }
}

/// What a responder's frame is, to a fault.
enum Sent {
    /// An ACK: where its AETH's MSN is, and the MSN.
    Ack {
        msn_at: usize,
        msn: u32,
    },
    /// A NAK, selective NAK or returned header-only packet.
    Negative,
    /// An ERD NACK segment (whole NACK messages): where its first entry's PSN is.
    Nack {
        first_psn_at: usize,
    },
    /// An SDR SR_NACK naming at least one chunk: where its first index is, and its message
    /// sequence number.
    SdrNack {
        index_at: usize,
        msg_seq: u32,
    },
    Other,
}

fn sent_kind(frame: &[u8], st: &State) -> (Sent, u32) {
    let f = Frame::parse(LinkType::Ethernet, frame, frame.len(), &st.opts());
    if let Some(t) = f.tcp().filter(|_| st.kind == StackKind::Erd) {
        // (Header: 4 bytes; an entry's PSN is its bytes 9-11.)
        let one = t.payload.len() >= NACK_HEADER_LEN + NACK_ENTRY_LEN && parse_nack(t.payload).is_ok();
        if one {
            return (Sent::Nack { first_psn_at: t.payload_offset + NACK_HEADER_LEN + 9 }, 0);
        }
        return (Sent::Other, 0);
    }
    let Some(p) = f.roce() else { return (Sent::Other, 0) };
    let psn = p.bth().psn();
    if st.kind.is_sdr() {
        let payload = p.payload();
        let c = sdr::Ctrl::parse(payload, p.payload_len(), &mut rocescope_codec::Warnings::default());
        if let Some(sdr::Ctrl::SrNack { msg_seq, count }) = c.filter(|_| p.opcode().0 == 0x24) {
            if count > 0 && payload.len() >= sdr::ctrl_field::INDEX.end {
                let index_at = f.roce_offset() + p.payload_offset() + sdr::ctrl_field::INDEX.start;
                return (Sent::SdrNack { index_at, msg_seq }, psn);
            }
        }
        return (Sent::Other, psn);
    }
    let tag = f.tos().map(|t| dcp::tag(t, st.params.dcp_tag_shift));
    if st.kind == StackKind::Dcp && tag == Some(dcp::TAG_HO) && p.opcode().0 != 0x11 {
        return (Sent::Negative, psn);
    }
    if p.opcode().0 != 0x11 {
        return (Sent::Other, psn);
    }
    let Some(a) = p.aeth() else { return (Sent::Other, psn) };
    match a.syndrome() {
        // The AETH follows the 12-byte BTH; its MSN is bytes 1-3.
        Syndrome::Ack { .. } => (Sent::Ack { msn_at: f.roce_offset() + 12 + 1, msn: a.msn() }, psn),
        Syndrome::Nak { code: 0 } => (Sent::Negative, psn),
        _ => (Sent::Other, psn),
    }
}

/// A responder with a fault.
struct FaultyResponder {
    inner: Box<dyn Endpoint>,
    st: State,
    buf: Vec<Action>,
    /// IRN `omit-nak`: the expected PSN whose selective NAKs are all withheld.
    silenced: Option<u32>,
    /// ERD `false-nack`: the latest data packets that reached the receiver (PSN, when), newest
    /// last (a few: the one named must have arrived well before the NACK).
    held: std::collections::VecDeque<(u32, Nanos)>,
    /// SDR `false-nack`: the latest data packets that reached the receiver (message id, packet
    /// offset, when), newest last.
    sdr_held: std::collections::VecDeque<(u32, u32, Nanos)>,
}

/// ERD `false-nack`: data packets remembered, and how long before the NACK the PSN it names
/// must have arrived (well past `replay`'s reaction time, 5 µs, so that a tap beside the
/// receiver can prove it held the packet).
const HELD: usize = 64;
/// SDR `false-nack`: data packets remembered (one-packet chunks at line rate: a few hundred
/// arrive in 20 µs).
const SDR_HELD: usize = 1024;
const HELD_FOR_NS: Nanos = 20_000;

/// The latest PSN that reached the receiver at least [`HELD_FOR_NS`] before `now`.
fn held_before(held: &std::collections::VecDeque<(u32, Nanos)>, now: Nanos) -> Option<u32> {
    held.iter().rev().find(|&&(_, at)| now.saturating_sub(at) >= HELD_FOR_NS).map(|&(p, _)| p)
}

/// SDR: a chunk of message sequence number `msg_seq` whose last packet reached the receiver at
/// least [`HELD_FOR_NS`] before `now` (of `held`, newest first): (message id, chunk).
fn sdr_held_before(
    held: &std::collections::VecDeque<(u32, u32, Nanos)>,
    st: &State,
    msg_seq: u32,
    now: Nanos,
) -> Option<(u32, u32)> {
    let id = sdr::msg_id(msg_seq, st.params.sdr_split.0);
    let n = st.sdr_chunk;
    held.iter()
        .rev()
        .find(|&&(m, off, at)| m == id && now.saturating_sub(at) >= HELD_FOR_NS && off % n == n - 1)
        .map(|&(m, off, _)| (m, off / n))
}

impl FaultyResponder {
    fn pass(&mut self, now: Nanos, out: &mut Vec<Action>) {
        for a in self.buf.drain(..) {
            let Action::Transmit { mut frame, info } = a else {
                out.push(a);
                continue;
            };
            if self.st.done && self.silenced.is_none() {
                out.push(Action::Transmit { frame, info });
                continue;
            }
            let (kind, psn) = sent_kind(&frame, &self.st);
            if let (Some(e), Sent::Negative) = (self.silenced, &kind) {
                if psn == e {
                    continue; // IRN: every selective NAK of the episode withheld
                }
            }
            if self.st.done {
                out.push(Action::Transmit { frame, info });
                continue;
            }
            match (self.st.spec.fault, kind) {
                (Fault::OmitNak, Sent::Negative) if self.st.occasion() => {
                    if self.st.kind == StackKind::Irn {
                        // IRN sends one per out-of-order packet, all naming the expected PSN: a
                        // responder that omits the NAK of a loss omits them all.
                        self.silenced = Some(psn);
                        let what =
                            format!("selective NAKs naming PSN {psn} not sent (every one while it was expected)");
                        self.st.applied(now, psn, what);
                    } else {
                        self.st.applied(now, psn, format!("negative answer naming PSN {psn} not sent"));
                    }
                }
                (Fault::DoubleNak, Sent::Negative) if self.st.occasion() => {
                    self.st.applied(now, psn, format!("negative answer naming PSN {psn} sent twice"));
                    out.push(Action::Transmit { frame: frame.clone(), info });
                    out.push(Action::Transmit { frame, info });
                }
                (Fault::FalseNack, Sent::Nack { first_psn_at })
                    if held_before(&self.held, now).is_some() && self.st.occasion() =>
                {
                    let held = held_before(&self.held, now).unwrap_or_default();
                    let was =
                        u32::from_be_bytes([0, frame[first_psn_at], frame[first_psn_at + 1], frame[first_psn_at + 2]]);
                    frame[first_psn_at..first_psn_at + 3].copy_from_slice(&held.to_be_bytes()[1..]);
                    fix_tcp_checksum(&mut frame);
                    self.st.applied(
                        now,
                        held,
                        format!("NACK names PSN {held}, which the receiver holds, instead of {was}"),
                    );
                    out.push(Action::Transmit { frame, info });
                }
                (Fault::FalseNack, Sent::SdrNack { index_at, msg_seq }) => {
                    let Some((id, chunk)) = sdr_held_before(&self.sdr_held, &self.st, msg_seq, now) else {
                        out.push(Action::Transmit { frame, info });
                        continue;
                    };
                    if !self.st.occasion() {
                        out.push(Action::Transmit { frame, info });
                        continue;
                    }
                    let was = u32::from_be_bytes([
                        frame[index_at],
                        frame[index_at + 1],
                        frame[index_at + 2],
                        frame[index_at + 3],
                    ]);
                    frame[index_at..index_at + 4].copy_from_slice(&chunk.to_be_bytes());
                    fix_icrc(LinkType::Ethernet, &mut frame);
                    let what =
                        format!("SR_NACK of message {id} names chunk {chunk}, which the receiver holds, instead of {was}");
                    self.st.applied(now, psn, what);
                    out.push(Action::Transmit { frame, info });
                }
                (Fault::EarlyMsn, Sent::Ack { msn_at, msn }) if self.st.occasion() => {
                    let bumped = (msn + 1) & 0xff_ffff;
                    frame[msn_at..msn_at + 3].copy_from_slice(&bumped.to_be_bytes()[1..]);
                    fix_icrc(LinkType::Ethernet, &mut frame);
                    self.st.applied(now, psn, format!("ACK of PSN {psn} carries MSN {bumped} instead of {msn}"));
                    out.push(Action::Transmit { frame, info });
                }
                _ => out.push(Action::Transmit { frame, info }),
            }
        }
    }
}

impl Endpoint for FaultyResponder {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        if self.st.spec.fault == Fault::FalseNack && self.st.kind.is_sdr() {
            // (A UC WRITE Only with Immediate: an SDR data packet, named by its immediate.)
            let imm = frame.roce().filter(|p| p.opcode().0 == 0x2B).and_then(|p| p.immdt()).map(|i| i.imm());
            if let Some(imm) = imm {
                let d = sdr::Data::from_imm(self.st.params.sdr_split, imm);
                self.sdr_held.push_back((d.msg_id, d.pkt_off, now));
                if self.sdr_held.len() > SDR_HELD {
                    self.sdr_held.pop_front();
                }
            }
        } else if self.st.spec.fault == Fault::FalseNack {
            if let Some(p) = frame.roce().filter(|p| p.opcode().0 == 0x64) {
                self.held.push_back((p.bth().psn(), now));
                if self.held.len() > HELD {
                    self.held.pop_front();
                }
            }
        }
        self.inner.on_frame(now, frame, &mut self.buf);
        self.pass(now, out);
    }
    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        self.inner.on_timer(now, token, &mut self.buf);
        self.pass(now, out);
    }
    // (An end that acts unprompted, SDR's receiver with its first CTSes, starts through it.)
    fn start(&mut self, now: Nanos, out: &mut Vec<Action>) {
        self.inner.start(now, &mut self.buf);
        self.pass(now, out);
    }
}

/// `needless-retx` resends this long after the completion: well after the acknowledgement that
/// covered the packet reached the requester (a tap beside it proves the resend needless), and
/// more than a round trip with its queues after it left the responder (`replay`'s answer
/// window, 100 µs: a tap there finds it ambiguous, as it would a lost ACK).
const RESEND_AFTER_NS: Nanos = 200_000;

/// The wrapper's own timer (the stacks number theirs from 0).
const FAULT_TOKEN: u64 = u64::MAX;

/// Request packets kept for `needless-retx` (the latest; a completed message's last packet is
/// among them unless the window is wider).
const KEPT: usize = 256;

/// A requester with a fault.
struct FaultyRequester {
    inner: Box<dyn Requester>,
    st: State,
    buf: Vec<Action>,
    /// `needless-retx`: the latest request packets sent, with their message.
    sent: Vec<(u64, u32, Vec<u8>)>,
    /// `needless-retx`, SDR erasure coding: each live message's first packet (D0's packet 0).
    firsts: std::collections::HashMap<u64, (u32, Vec<u8>)>,
    /// `needless-retx`: the packet to send again once its timer fires.
    due: Option<(Vec<u8>, TxInfo)>,
    /// `needless-retx`: the packet to send again at the next pull.
    resend: Option<(Vec<u8>, TxInfo)>,
    /// `late-go-back`: the PSN the NAK named, to be skipped when it is resent.
    skip: Option<u32>,
}

impl FaultyRequester {
    /// Passes the inner end's actions on, noting what the fault waits for.
    fn pass(&mut self, now: Nanos, out: &mut Vec<Action>) {
        for a in self.buf.drain(..) {
            match &a {
                Action::Completed { msg } if self.st.spec.fault == Fault::NeedlessRetx && self.st.occasion() => {
                    // (SDR erasure coding: the message's first packet, D0's packet 0, which its
                    // EC_ACK names; its last is parity, of another send.)
                    let last = if self.st.kind == StackKind::SdrEc {
                        self.firsts.remove(msg).map(|(psn, f)| (*msg, psn, f))
                    } else {
                        self.sent.iter().filter(|(m, _, _)| m == msg).max_by_key(|(_, psn, _)| *psn).cloned()
                    };
                    match last {
                        Some((m, psn, f)) => {
                            let info = TxInfo { psn, msg: Some(m), retx: Some(natural_reason(self.st.kind)) };
                            self.due = Some((f, info));
                            out.push(Action::Timer { at: now + RESEND_AFTER_NS, token: FAULT_TOKEN });
                        }
                        // Not kept (a message wider than the kept packets): wait for the next.
                        None => self.st.spec.nth += 1,
                    }
                }
                // (Not the occasion: a completed message's first packet is not needed.)
                Action::Completed { msg } => {
                    self.firsts.remove(msg);
                }
                Action::Transmit { frame, info } => {
                    if self.st.spec.fault == Fault::NeedlessRetx && !self.st.done {
                        if let Some(m) = info.msg {
                            if self.st.kind == StackKind::SdrEc {
                                self.firsts.entry(m).or_insert_with(|| (info.psn, frame.clone()));
                            } else {
                                if self.sent.len() == KEPT {
                                    self.sent.remove(0);
                                }
                                self.sent.push((m, info.psn, frame.clone()));
                            }
                        }
                    }
                    let timer = match self.st.spec.fault {
                        Fault::EarlyTimeout => Some("half"),
                        Fault::LateTimeout => Some("one and a half times"),
                        _ => None,
                    };
                    if let (Some(how), false, Some(RetxReason::Timeout)) = (timer, self.st.done, info.retx) {
                        self.st.applied(
                            now,
                            info.psn,
                            format!("timeout retransmission of PSN {} (timer at {how} its value)", info.psn),
                        );
                    }
                }
                _ => {}
            }
            out.push(a);
        }
    }
}

/// The reason a stack gives its own retransmissions most often (a needless resend is recorded
/// with it; the truth's `faults` names what it was).
fn natural_reason(kind: StackKind) -> RetxReason {
    match kind {
        StackKind::Gbn | StackKind::Netrt => RetxReason::GoBack,
        StackKind::Irn => RetxReason::Sack,
        StackKind::Dcp => RetxReason::HeaderOnly,
        StackKind::SdrSr | StackKind::SdrEc => RetxReason::Timeout,
        StackKind::Flor => RetxReason::Sack,
        StackKind::Erd => RetxReason::Nack,
    }
}

impl Endpoint for FaultyRequester {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        if self.st.spec.fault == Fault::LateGoBack && !self.st.done && self.skip.is_none() {
            if let Some(p) = frame.roce() {
                let nak = p.opcode().0 == 0x11
                    && p.aeth().is_some_and(|a| matches!(a.syndrome(), Syndrome::Nak { code: 0 }))
                    && p.irn_sack().is_none();
                if nak && self.st.occasion() {
                    self.skip = Some(p.bth().psn());
                }
            }
        }
        self.inner.on_frame(now, frame, &mut self.buf);
        self.pass(now, out);
    }
    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        if token == FAULT_TOKEN {
            self.resend = self.due.take();
            return;
        }
        self.inner.on_timer(now, token, &mut self.buf);
        self.pass(now, out);
    }
    fn start(&mut self, now: Nanos, out: &mut Vec<Action>) {
        self.inner.start(now, &mut self.buf);
        self.pass(now, out);
    }
}

impl Requester for FaultyRequester {
    fn post(&mut self, now: Nanos, msg: Message, out: &mut Vec<Action>) {
        self.inner.post(now, msg, &mut self.buf);
        self.pass(now, out);
    }
    fn idle(&self) -> bool {
        self.due.is_none() && self.resend.is_none() && self.inner.idle()
    }
    fn ready(&self) -> bool {
        self.resend.is_some() || self.inner.ready()
    }
    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        if let Some((frame, info)) = self.resend.take() {
            self.st.applied(now, info.psn, format!("PSN {} sent again after its message completed", info.psn));
            out.push(Action::Transmit { frame, info });
            return true;
        }
        if !self.inner.pull(now, &mut self.buf) {
            return false;
        }
        if let Some(e) = self.skip {
            let skipped = self
                .buf
                .iter()
                .any(|a| matches!(a, Action::Transmit { info, .. } if info.psn == e && info.retx.is_some()));
            if skipped && self.inner.ready() {
                // The resend of the NAK'd PSN never leaves; the next packet goes in its place.
                self.buf.retain(|a| !matches!(a, Action::Transmit { .. }));
                self.inner.pull(now, &mut self.buf);
                self.skip = None;
                self.st.applied(
                    now,
                    e,
                    format!("go-back after the NAK of PSN {e} resumed at PSN {}", (e + 1) & 0xff_ffff),
                );
            } else if skipped {
                self.skip = None; // nothing after it to resume at: wait for the next NAK
                self.st.spec.nth += 1;
            }
        }
        self.pass(now, out);
        true
    }
}
