//! The responder's half of replay (docs/replay.md): the requests a connection's responder
//! received, as its own tap saw them arrive, drive the reference responder of the chosen stack
//! (`rocescope-stacks`, the same state machine the simulator runs as an endpoint); what the
//! reference sends back is compared with what the captured responder sent.
//!
//! What is compared, and what is not (legal variation):
//! - NAKs, IRN's selective NAKs and DCP's returned header-only packets are compared one for one:
//!   each the reference sends must be seen within the answer window after the request that
//!   caused it, and each one seen must have been sent by the reference.
//! - ACKs may be coalesced as the NIC likes: the reference acknowledges every packet, and an ACK
//!   seen is judged only for acknowledging more than the reference had received in order at
//!   that moment (PSN or MSN; DCP's eMSN), or for going back.

use std::collections::VecDeque;

use rocescope_codec::ib::psn;
use rocescope_codec::ext::dcp;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params};
use rocescope_stacks::{Action, ConnConfig, Endpoint, Host, StackKind, Timeouts};

use crate::answer::{control_of, Answer, Control};
use crate::rules::{self, Rule};
use crate::{Finding, FindingKind};

/// What the first pass learnt of a connection, for setting up its reference responder.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The lowest PSN among the requests flow's first packets (they may arrive reordered).
    pub first_psn: Option<u32>,
    /// The path MTU: the largest payload of a First or Middle packet (request or READ
    /// response), which are full by definition.
    pub mtu: u32,
}

/// An answer the reference sent, waiting for its twin in the capture.
struct Pending {
    answer: Answer,
    /// Its place among everything the reference sent (the NIC sends its control packets in
    /// the order it makes them).
    seq: u64,
    /// The request frame that caused it, and its time.
    frame: u64,
    time: u64,
}

/// What an answer no request called for was expected to be.
const NOT_CALLED_FOR: &str = "no such answer: no request arrived that calls for it";

/// Request frames kept for a restarted reference, and how much of each (its headers: the
/// reference reads a frame cut there as a capture cut by its snaplen, which the stacks accept).
const HISTORY: usize = 256;
const HISTORY_BYTES: usize = 128;

/// Request PSNs remembered as seen at the tap.
const SEEN_KEPT: usize = 1 << 16;

/// An answer found missing: a departure, unless the requester then resends the PSN it names
/// within [`Suspect::deadline`], as the answer would make it (then the answer was most likely sent
/// and not captured: ambiguous).
struct Suspect {
    p: Pending,
    seen: String,
    deadline: u64,
}

/// The reference's ACKs kept for placing captured ones (far more than a NIC coalesces).
const MAX_ACKS_KEPT: usize = 4096;

/// Answers matched recently (a second copy of one is a repeat).
const RECENT: usize = 64;

/// One connection's responder judge.
pub(super) struct ResponderJudge {
    kind: StackKind,
    flow: String,
    params: Params,
    window_ns: u64,
    reference: Option<Box<dyn Endpoint>>,
    /// The reference's set-up (kept to start it again past a capture gap).
    cfg: Option<ConnConfig>,
    /// Added to the reference's MSNs once it was started again mid-connection.
    msn_offset: u32,
    /// The reference's MSNs were matched to the responder's: a captured ACK of the PSN the
    /// reference had last acknowledged gave their difference (a capture that begins mid-
    /// connection starts the responder's count past 0). Until then MSNs are not judged.
    msn_matched: bool,
    /// DCP: a capture gap made the reference's eMSN meaningless; its rules are not judged on.
    emsn_unjudged: bool,
    /// The first request seen began a message (First or Only): the reference's message count
    /// (MSN, eMSN) starts where the responder's did. Otherwise the capture began mid-message.
    start_known: Option<bool>,
    /// The highest request PSN seen.
    max_psn: Option<u32>,
    /// PSNs of the requests this tap showed (the latest [`SEEN_KEPT`]).
    /// PSN → the latest arrival's time and frame number, and whether it ever came whole (not
    /// as DCP's header-only form).
    seen: rocescope_codec::fxhash::FxHashMap<u32, (u64, u64, bool)>,
    /// The latest request frames (link type, time, length on the wire, their first
    /// [`HISTORY_BYTES`]: the headers), to give a restarted reference what had already arrived
    /// past its new start (IRN and DCP keep out-of-order packets).
    history: VecDeque<(LinkType, u64, usize, Vec<u8>)>,
    seen_order: VecDeque<u32>,
    /// Answers found missing, waiting to see whether the requester acted as if it had them.
    suspects: Vec<Suspect>,
    /// The latest missing-answer departure (its place in `findings`, how many it counts) and the
    /// PSN its answer names.
    missing_run: Option<(usize, u32)>,
    missing_psn: Option<u32>,
    /// The requester's rules this tap can only suspect.
    pub far: crate::far::RequesterFromReceiver,
    /// READ responses: the PSN the next Middle or Last one must carry (the one after the last
    /// sent), and that one's frame.
    read_next: Option<(u32, u64)>,
    actions: Vec<Action>,
    /// The reference's latest ACK: PSN acknowledged through, MSN (eMSN for DCP).
    ref_ack: Option<(u32, u32)>,
    pending: VecDeque<Pending>,
    /// The reference's ACKs not yet passed by a captured one: PSN and place.
    ref_ack_seqs: VecDeque<(u32, u64)>,
    /// Control packets the reference has sent.
    seq: u64,
    recent: VecDeque<Answer>,
    /// The captured responder's latest ACK (PSN, MSN, frame).
    last_ack: Option<(u32, u32, u64)>,
    pub requests: u64,
    pub responses: u64,
    pub acks: u64,
    /// ACKs the reference sent (one per packet it received in order or as a duplicate).
    pub ref_acks: u64,
    pub findings: Vec<Finding>,
}

impl ResponderJudge {
    pub fn new(kind: StackKind, flow: String, params: Params, window_ns: u64) -> ResponderJudge {
        let far = crate::far::RequesterFromReceiver::new(kind, flow.clone(), params, window_ns);
        ResponderJudge {
            kind,
            flow,
            params,
            window_ns,
            reference: None,
            cfg: None,
            msn_offset: 0,
            msn_matched: false,
            emsn_unjudged: false,
            start_known: None,
            max_psn: None,
            seen: Default::default(),
            history: VecDeque::new(),
            seen_order: VecDeque::new(),
            suspects: Vec::new(),
            missing_run: None,
            missing_psn: None,
            far,
            read_next: None,
            actions: Vec::new(),
            ref_ack: None,
            pending: VecDeque::new(),
            ref_ack_seqs: VecDeque::new(),
            seq: 0,
            recent: VecDeque::new(),
            last_ack: None,
            requests: 0,
            responses: 0,
            acks: 0,
            ref_acks: 0,
            findings: Vec::new(),
        }
    }

    fn finding(&mut self, rule: Rule, frames: Vec<u64>, time_ns: u64, expected: String, seen: String) {
        self.found(FindingKind::Departure, rule, frames, time_ns, expected, seen);
    }

    fn found(&mut self, kind: FindingKind, rule: Rule, frames: Vec<u64>, time_ns: u64, expected: String, seen: String) {
        self.findings.push(Finding::of(kind, rule, &self.flow, frames, time_ns, expected, seen));
    }

    /// A READ response leaving (IBTA §9.7.5: a READ's responses go out in PSN order, First (or
    /// Only) at the READ's PSN, then each the next PSN): a Middle or Last one behind the PSN after
    /// the response before it is a departure; ahead of it, ambiguous (the capture may have missed
    /// the ones between). (A First or Only one starts a READ, or a READ asked again.)
    fn read_response(&mut self, number: u64, now: u64, opcode: u8, psn: u32) {
        let middle_or_last = matches!(opcode, 0x0E | 0x0F);
        if let (true, Some((want, prev))) = (middle_or_last, self.read_next) {
            if psn != want {
                // Ahead: the responses between may be a capture gap. Behind: no capture makes that.
                let ahead = psn::diff(want, psn) > 0;
                let kind = if ahead { FindingKind::Ambiguous } else { FindingKind::Departure };
                let what = if opcode == 0x0E { "Middle" } else { "Last" };
                let seen = if ahead {
                    format!(
                        "READ response {what} of PSN {psn}: either the capture missed the responses between (a capture \
                         gap), or the responder skipped or reordered them"
                    )
                } else {
                    format!("READ response {what} of PSN {psn}, behind it")
                };
                let expected = format!("the READ response of PSN {want} next (frame {prev} sent the one before)");
                self.found(kind, rules::GBN_READ_ORDER, vec![prev, number], now, expected, seen);
            }
        }
        // The next one follows the highest sent (a response sent back out of place does not
        // undo those already past it).
        let next = psn::add(psn, 1);
        let next = match self.read_next {
            Some((want, _)) if middle_or_last && psn::diff(next, want) > 0 => want,
            _ => next,
        };
        self.read_next = matches!(opcode, 0x0D | 0x0E).then_some((next, number));
    }

    /// Answers the reference sent more than the answer window before `now` and the capture has
    /// not shown: missing.
    fn expire(&mut self, now: u64) {
        // (Answers found missing first: one whose requester's deadline has passed too is a
        // departure now.)
        while self.pending.front().is_some_and(|p| p.time.saturating_add(self.window_ns) < now) {
            let p = self.pending.pop_front().expect("a pending answer");
            self.missing(p, format!("none within {} µs", self.window_ns / 1000));
        }
        // Suspects whose requester never acted on the missing answer: departures.
        let mut i = 0;
        while i < self.suspects.len() {
            if self.suspects[i].deadline < now {
                let x = self.suspects.remove(i);
                let (rule, _) = x.p.answer.rules();
                let psn = x.p.answer.resend_psn();
                // IRN's selective NAKs of one loss all name its PSN: the ones missing after the
                // first are one departure with it (one loss never NAK'd), counted there.
                if let Some((at, n)) = self.missing_run.filter(|&(at, _)| {
                    let f = &self.findings[at];
                    matches!(x.p.answer, Answer::Sack { .. }) && f.rule == rule.id && f.kind == FindingKind::Departure
                        && self.missing_psn == Some(psn)
                }) {
                    self.missing_run = Some((at, n + 1));
                    let f = &mut self.findings[at];
                    let base = f.seen.split("; and ").next().unwrap_or_default().to_string();
                    f.seen = format!(
                        "{base}; and {n} more selective NAK(s) naming PSN {psn} missing, the last due after frame {}",
                        x.p.frame
                    );
                } else {
                    let expected = format!("{} after frame {}", x.p.answer.describe(), x.p.frame);
                    self.finding(rule, vec![x.p.frame], x.p.time, expected, x.seen);
                    self.missing_run = Some((self.findings.len() - 1, 1));
                    self.missing_psn = Some(psn);
                }
            } else {
                i += 1;
            }
        }
    }

    /// The captured responder sent what the reference made as its `seq`-th control packet:
    /// answers the reference made before it and the capture has not shown are missing (a
    /// responder sends its control packets in the order it makes them).
    fn passed(&mut self, seq: u64, number: u64) {
        while self.pending.front().is_some_and(|p| p.seq < seq) {
            let p = self.pending.pop_front().expect("a pending answer");
            self.missing(p, format!("none before frame {number}, which the responder made after it"));
        }
    }

    fn missing(&mut self, p: Pending, seen: String) {
        let deadline = p.time.saturating_add(2 * self.window_ns);
        let psn = p.answer.resend_psn();
        self.suspects.push(Suspect { p, seen, deadline });
        // The requester may have acted on it already.
        if let Some(&(t, number, _)) = self.seen.get(&psn) {
            self.resent(number, t, psn);
        }
    }

    /// A request of PSN `psn` arrived within the requester's deadline: a suspect whose answer
    /// names it is a capture gap as likely as a fault.
    fn resent(&mut self, number: u64, now: u64, psn: u32) {
        while let Some(i) = self
            .suspects
            .iter()
            .position(|x| x.p.answer.resend_psn() == psn && x.p.time < now && now <= x.deadline)
        {
            let x = self.suspects.remove(i);
            let (rule, _) = x.p.answer.rules();
            let after = (now - x.p.time) / 1000;
            self.found(
                FindingKind::Ambiguous,
                rule,
                vec![x.p.frame, number],
                x.p.time,
                format!("{} after frame {}", x.p.answer.describe(), x.p.frame),
                format!(
                    "{}; but the requester sent PSN {psn} again at frame {number}, {after} µs later, as that answer makes it do: \
                     either the answer was sent and the capture missed it (a capture gap), or the responder never sent it and the \
                     requester resent on its own",
                    x.seen
                ),
            );
        }
    }

    /// What the reference has taken in order: PSN through, MSN. Before its first ACK, nothing:
    /// "through" the PSN before the first.
    fn in_order(&self) -> (u32, u32) {
        let start = self.cfg.as_ref().map_or(0, |c| c.start_psn);
        self.ref_ack.unwrap_or((psn::add(start, psn::MASK), self.msn_offset))
    }

    /// Records that the tap showed a request of PSN `psn`.
    fn saw(&mut self, psn: u32, now: u64, number: u64, whole: bool) {
        let whole = whole || self.seen.get(&psn).is_some_and(|s| s.2);
        if self.seen.insert(psn, (now, number, whole)).is_none() {
            self.seen_order.push_back(psn);
            if self.seen_order.len() > SEEN_KEPT {
                let old = self.seen_order.pop_front().expect("a PSN");
                self.seen.remove(&old);
            }
        }
    }

    /// Whether the tap showed every PSN after `from` up to `to`, whole.
    fn saw_all(&self, from: u32, to: u32) -> bool {
        let n = psn::diff(from, to);
        (1..=n.min(SEEN_KEPT as i32)).all(|k| self.seen.get(&(psn::add(from, k as u32))).is_some_and(|s| s.2))
    }

    /// The captured responder acknowledged through `psn` (MSN `msn`) PSNs this tap never
    /// showed: the reference starts again after them, and what it still expected is dropped.
    fn resync(&mut self, psn: u32, msn: u32) {
        let start = psn::add(psn, 1);
        self.msn_offset = msn;
        self.msn_matched = true;
        self.ref_ack = Some((psn, msn));
        if let Some(cfg) = &mut self.cfg {
            cfg.start_psn = start;
            let mut r = rocescope_stacks::new_pair(self.kind, cfg).1;
            // What already arrived past the new start (out of order) is given to it again.
            let opts = DecodeOptions { verify: false, profile: self.kind.profile(), params: self.params };
            let mut out = Vec::new();
            for (link, t, len, bytes) in &self.history {
                let f = Frame::parse(*link, bytes, *len, &opts);
                if f.roce().is_some_and(|p| psn::diff(start, p.bth().psn()) >= 0) {
                    r.on_frame(*t, &f, &mut out);
                }
            }
            for a in out {
                let Action::Transmit { frame: bytes, .. } = a else { continue };
                let sent = Frame::parse(LinkType::Ethernet, &bytes, bytes.len(), &opts);
                if let Some(Control::Ack { psn, msn }) = control_of(&sent, &self.params) {
                    self.ref_ack = Some((psn, psn::add(msn, self.msn_offset)));
                }
            }
            self.reference = Some(r);
        }
        self.pending.clear();
        self.ref_ack_seqs.clear();
    }

    /// A request packet arriving at the responder (its tap's view): the reference receives it.
    /// `shape`: what the flow table's pass learnt of the connection (its first PSN and MTU).
    pub fn request(&mut self, number: u64, now: u64, frame: &Frame<'_>, requester: Host, responder: Host, shape: Shape) {
        self.expire(now);
        self.requests += 1;
        if let Some(p) = frame.roce() {
            let psn = p.bth().psn();
            self.far.request(number, now, frame);
            self.resent(number, now, psn);
            let ho = frame.tos().is_some_and(|t| dcp::tag(t, self.params.dcp_tag_shift) == dcp::TAG_HO) && self.kind == StackKind::Dcp;
            self.saw(psn, now, number, !ho);
            if self.max_psn.is_none_or(|m| psn::diff(m, psn) > 0) {
                self.max_psn = Some(psn);
            }
        }
        let mut buf = if self.history.len() == HISTORY { self.history.pop_front().map(|h| h.3).unwrap_or_default() } else { Vec::new() };
        buf.clear();
        let data = frame.data();
        buf.extend_from_slice(&data[..data.len().min(HISTORY_BYTES)]);
        self.history.push_back((frame.link(), now, data.len(), buf));
        if self.start_known.is_none() {
            use rocescope_codec::ib::opcode::Position;
            let pos = frame.roce().and_then(|p| p.opcode().position());
            self.start_known = Some(matches!(pos, Some(Position::First | Position::Only)));
        }
        let kind = self.kind;
        let params = self.params;
        let cfg_slot = &mut self.cfg;
        let reference = self.reference.get_or_insert_with(|| {
            // The reference expects the connection's first PSN; it acknowledges every packet
            // (the captured responder may coalesce: ACKs are judged against it, not matched).
            let cfg = ConnConfig {
                requester,
                responder,
                start_psn: shape.first_psn.unwrap_or_else(|| frame.roce().map_or(0, |p| p.bth().psn())),
                mtu: shape.mtu,
                udp_sport: 0xC000,
                tos: 0,
                params,
                timeouts: Timeouts::default(),
                retry_cnt: 7,
                ack_every: 1,
                bdp_packets: 1 << 16,
                msg_window: 8,
                sdr: None,
                flor: None,
                erd: None,
            };
            let r = rocescope_stacks::new_pair(kind, &cfg).1;
            *cfg_slot = Some(cfg);
            r
        });
        self.actions.clear();
        reference.on_frame(now, frame, &mut self.actions);
        let opts = DecodeOptions { verify: false, profile: kind.profile(), params };
        for a in std::mem::take(&mut self.actions) {
            let Action::Transmit { frame: bytes, .. } = a else { continue };
            let sent = Frame::parse(LinkType::Ethernet, &bytes, bytes.len(), &opts);
            match control_of(&sent, &params) {
                Some(Control::Ack { psn, msn }) => {
                    let msn = psn::add(msn, self.msn_offset);
                    self.ref_ack = Some((psn, msn));
                    self.ref_acks += 1;
                    self.seq += 1;
                    if self.ref_ack_seqs.len() == MAX_ACKS_KEPT {
                        self.ref_ack_seqs.pop_front();
                    }
                    self.ref_ack_seqs.push_back((psn, self.seq));
                }
                Some(Control::Answer(answer, _)) => {
                    self.seq += 1;
                    self.pending.push_back(Pending { answer, seq: self.seq, frame: number, time: now });
                }
                None => {}
            }
        }
    }

    /// A frame the captured responder sent on the connection.
    pub fn response(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        self.expire(now);
        self.far.response(number, now, frame);
        if let Some(p) = frame.roce().filter(|p| (0x0D..=0x10).contains(&p.opcode().0)) {
            self.read_response(number, now, p.opcode().0, p.bth().psn());
            return;
        }
        let Some(c) = control_of(frame, &self.params) else { return };
        self.responses += 1;
        match c {
            Control::Ack { psn, msn } => {
                self.acks += 1;
                self.ack(number, now, psn, msn);
            }
            Control::Answer(answer, msn) => self.answer(number, now, answer, msn),
        }
    }

    fn ack(&mut self, number: u64, now: u64, psn: u32, msn: u32) {
        // The reference ACK it is (a coalesced ACK is one of them): the first not yet passed.
        if let Some(i) = self.ref_ack_seqs.iter().position(|&(p, _)| p == psn) {
            let seq = self.ref_ack_seqs[i].1;
            self.ref_ack_seqs.drain(..=i);
            self.passed(seq, number);
        }
        let (ahead, regressed) = match self.kind {
            StackKind::Dcp => (rules::DCP_EMSN_AHEAD, rules::DCP_EMSN_REGRESSED),
            // (SDR connections are listed as not judged: `connections` in lib.rs.)
            StackKind::Irn | StackKind::SdrSr | StackKind::SdrEc | StackKind::Flor | StackKind::Erd => {
                (rules::IRN_ACK_AHEAD, rules::IRN_ACK_REGRESSED)
            }
            // NetRT's hosts are Go-Back-N (its repairs are the switches').
            StackKind::Gbn | StackKind::Netrt => (rules::GBN_ACK_AHEAD, rules::GBN_ACK_REGRESSED),
        };
        let is_dcp = self.kind == StackKind::Dcp;
        let Some(cfg) = &self.cfg else {
            // An ACK before any request this tap showed (the capture began between a request
            // and its ACK): nothing to judge it against.
            self.last_ack = Some((psn, msn, number));
            return;
        };
        let start = cfg.start_psn;
        if !self.msn_matched {
            if let Some((rp, rm)) = self.ref_ack.filter(|&(rp, _)| rp == psn) {
                let shift = msn.wrapping_sub(rm) & 0xff_ffff;
                self.msn_offset = psn::add(self.msn_offset, shift);
                self.ref_ack = Some((rp, msn));
                self.msn_matched = true;
            }
        }
        let (rp, rm) = self.ref_ack.unwrap_or((psn::add(start, psn::MASK), self.msn_offset));
        // DCP acknowledges per packet; its eMSN is what it promises. RC: PSN and MSN.
        let psn_ahead = !is_dcp && psn::diff(rp, psn) > 0;
        let msn_ahead = self.msn_matched && !(is_dcp && self.emsn_unjudged) && psn::diff(rm, msn) > 0;
        if psn_ahead || msn_ahead {
            // Were the PSNs it covers all shown by this tap? (DCP: the packets of the messages
            // its eMSN passes, which arrive in any order: every PSN up to the highest seen, the
            // last 1024 at most.)
            let to = if is_dcp { self.max_psn.unwrap_or(psn) } else { psn };
            let from = if is_dcp { to.wrapping_sub(1024.min(psn::diff(start, to).max(0) as u32 + 1)) & 0xff_ffff } else { rp };
            let what = if is_dcp { "eMSN" } else { "PSN/MSN" };
            let expected = format!("{what} at most {} (received in order: PSN {rp}, MSN {rm})", if is_dcp { rm } else { rp });
            let seen = format!("ACK of PSN {psn}, {} {msn}", if is_dcp { "eMSN" } else { "MSN" });
            // Only the message count ahead, and the capture began mid-message: the messages
            // before may have been missed.
            let counts_unknown = !psn_ahead && self.start_known == Some(false);
            if self.saw_all(from, to) && !counts_unknown {
                self.finding(ahead, vec![number], now, expected, seen);
                // Later ACKs are held to what the responder had, not to this one's claim (one
                // fault, one departure: coming back to the truth is no regression).
                let lp = if psn_ahead { rp } else { psn };
                let lm = if msn_ahead { rm } else { msn };
                self.last_ack = Some((lp, lm, number));
                return;
            } else {
                let seen = format!(
                    "{seen}; this tap never showed some of the packets it covers: either the capture missed them (a capture gap), \
                     or the responder acknowledged what it never received (judging goes on from this ACK)"
                );
                self.found(FindingKind::Ambiguous, ahead, vec![number], now, expected, seen);
                if is_dcp {
                    self.emsn_unjudged = true;
                } else {
                    self.resync(psn, msn);
                }
            }
        }
        if let Some((lp, lm, lf)) = self.last_ack {
            if (!is_dcp && psn::diff(lp, psn) < 0) || psn::diff(lm, msn) < 0 {
                self.finding(
                    regressed,
                    vec![lf, number],
                    now,
                    format!("at least PSN {lp}, MSN {lm} (frame {lf})"),
                    format!("ACK of PSN {psn}, MSN {msn}"),
                );
            }
        }
        self.last_ack = Some((psn, msn, number));
    }

    fn answer(&mut self, number: u64, now: u64, answer: Answer, msn: u32) {
        if let Some(i) = self.pending.iter().position(|p| p.answer == answer) {
            let seq = self.pending[i].seq;
            self.pending.remove(i);
            self.passed(seq, number);
            if self.recent.len() == RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(answer);
            return;
        }
        let (_, unexpected) = answer.rules();
        // A copy of one already matched.
        let repeated = self.recent.contains(&answer);
        // A NAK or selective NAK whose expected PSN is past PSNs this tap never showed: the
        // responder got them (a capture gap), or it is wrong; judging goes on from there.
        if let Answer::Nak { psn: e } | Answer::Sack { epsn: e, .. } = answer {
            let (rp, _) = self.in_order();
            let through = psn::add(e, psn::MASK);
            if psn::diff(rp, through) > 0 && !self.saw_all(rp, through) && !repeated {
                self.found(
                    FindingKind::Ambiguous,
                    unexpected,
                    vec![number],
                    now,
                    format!("an answer naming PSN {} at most (received in order: PSN {rp})", psn::add(rp, 1)),
                    format!(
                        "{}; this tap never showed some of the PSNs before it: either the capture missed them (a capture gap), or \
                         the responder is wrong (judging goes on from this answer)",
                        answer.describe()
                    ),
                );
                self.resync(through, msn);
                return;
            }
        }
        // The packet that calls for it never shown by this tap: the capture may have missed it.
        let cause_unseen = match answer {
            Answer::Sack { sacked: psn, .. } | Answer::Bounce { psn } => !self.seen.contains_key(&psn),
            Answer::Nak { psn } => !(1..=64u32).any(|k| self.seen.contains_key(&(psn::add(psn, k)))),
        };
        if cause_unseen && !repeated {
            self.found(
                FindingKind::Ambiguous,
                unexpected,
                vec![number],
                now,
                NOT_CALLED_FOR.into(),
                format!(
                    "{}; the packet that would call for it was never shown by this tap: either the capture missed it (a capture \
                     gap), or the responder is wrong",
                    answer.describe()
                ),
            );
            return;
        }
        let rule = if matches!(answer, Answer::Nak { .. }) && repeated { rules::GBN_NAK_REPEATED } else { unexpected };
        let expected = if repeated { "no second copy" } else { NOT_CALLED_FOR }.to_string();
        self.finding(rule, vec![number], now, expected, answer.describe());
    }

    /// The capture ended at `end`: answers still awaited for a full window are missing; those
    /// the capture ended too early to tell are not judged.
    pub fn finish(&mut self, end: u64) {
        self.expire(end);
        self.pending.clear();
    }
}
