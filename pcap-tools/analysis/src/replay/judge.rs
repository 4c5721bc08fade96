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

use rocescope_codec::ext::dcp;
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params};
use rocescope_stacks::{Action, ConnConfig, Endpoint, Host, StackKind, Timeouts};

use super::rules::{self, Rule};
use super::{Finding, FindingKind};

/// A control packet a responder sends, as the judge compares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// A PSN sequence error NAK naming the expected PSN.
    Nak { psn: u32 },
    /// IRN's selective NAK: the expected PSN and the PSN that arrived out of order.
    Sack { epsn: u32, sacked: u32 },
    /// DCP: a header-only packet returned to the sender.
    Bounce { psn: u32 },
}

impl Answer {
    fn describe(self) -> String {
        match self {
            Answer::Nak { psn } => format!("NAK (PSN sequence error) naming PSN {psn}"),
            Answer::Sack { epsn, sacked } => format!("selective NAK: expected PSN {epsn}, PSN {sacked} received"),
            Answer::Bounce { psn } => format!("header-only packet of PSN {psn} returned to the sender"),
        }
    }

    /// The rules for a missing answer and for an answer nobody asked for.
    fn rules(self) -> (Rule, Rule) {
        match self {
            Answer::Nak { .. } => (rules::GBN_NAK_MISSING, rules::GBN_NAK_UNEXPECTED),
            Answer::Sack { .. } => (rules::IRN_SACK_MISSING, rules::IRN_SACK_UNEXPECTED),
            Answer::Bounce { .. } => (rules::DCP_HO_UNANSWERED, rules::DCP_HO_UNEXPECTED),
        }
    }
}

/// What a frame sent by a responder is to the judge.
#[derive(Clone, Copy, Debug)]
enum Control {
    /// An ACK: the PSN acknowledged through, the MSN (DCP's ACK, tagged 01: the eMSN).
    Ack { psn: u32, msn: u32 },
    Answer(Answer),
}

/// Reads a responder's frame: ACK, NAK, selective NAK or returned header-only packet.
fn control_of(f: &Frame<'_>, params: &Params) -> Option<Control> {
    let p = f.roce()?;
    let psn = p.bth().psn();
    let tag = f.tos().map(|t| dcp::tag(t, params.dcp_tag_shift));
    if tag == Some(dcp::TAG_HO) && p.opcode().0 != 0x11 {
        return Some(Control::Answer(Answer::Bounce { psn }));
    }
    if p.opcode().0 != 0x11 {
        return None;
    }
    let a = p.aeth()?;
    match a.syndrome() {
        Syndrome::Ack { .. } => Some(Control::Ack { psn, msn: a.msn() }),
        Syndrome::Nak { code: 0 } => Some(Control::Answer(match p.irn_sack() {
            Some(s) => Answer::Sack { epsn: psn, sacked: s.sack_psn() },
            None => Answer::Nak { psn },
        })),
        _ => None,
    }
}

/// 24-bit serial difference `b - a` (PSNs and MSNs wrap).
pub(super) fn diff24(a: u32, b: u32) -> i32 {
    ((b.wrapping_sub(a) << 8) as i32) >> 8
}

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
        ResponderJudge {
            kind,
            flow,
            params,
            window_ns,
            reference: None,
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
        self.findings.push(Finding {
            kind: FindingKind::Departure,
            rule: rule.id,
            source: rule.source,
            flow: self.flow.clone(),
            frames,
            time_ns,
            expected,
            seen,
        });
    }

    /// Answers the reference sent more than the answer window before `now` and the capture has
    /// not shown: missing.
    fn expire(&mut self, now: u64) {
        while self.pending.front().is_some_and(|p| p.time.saturating_add(self.window_ns) < now) {
            let p = self.pending.pop_front().expect("a pending answer");
            self.missing(p, format!("none within {} µs", self.window_ns / 1000));
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
        let (rule, _) = p.answer.rules();
        self.finding(rule, vec![p.frame], p.time, format!("{} after frame {}", p.answer.describe(), p.frame), seen);
    }

    /// A request packet arriving at the responder (its tap's view): the reference receives it.
    /// `shape`: what the flow table's pass learnt of the connection (its first PSN and MTU).
    pub fn request(&mut self, number: u64, now: u64, frame: &Frame<'_>, requester: Host, responder: Host, shape: Shape) {
        self.expire(now);
        self.requests += 1;
        let kind = self.kind;
        let params = self.params;
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
            };
            rocescope_stacks::new_pair(kind, &cfg).1
        });
        self.actions.clear();
        reference.on_frame(now, frame, &mut self.actions);
        let opts = DecodeOptions { verify: false, profile: kind.profile(), params };
        for a in std::mem::take(&mut self.actions) {
            let Action::Transmit { frame: bytes, .. } = a else { continue };
            let sent = Frame::parse(LinkType::Ethernet, &bytes, bytes.len(), &opts);
            match control_of(&sent, &params) {
                Some(Control::Ack { psn, msn }) => {
                    self.ref_ack = Some((psn, msn));
                    self.ref_acks += 1;
                    self.seq += 1;
                    if self.ref_ack_seqs.len() == MAX_ACKS_KEPT {
                        self.ref_ack_seqs.pop_front();
                    }
                    self.ref_ack_seqs.push_back((psn, self.seq));
                }
                Some(Control::Answer(answer)) => {
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
        let Some(c) = control_of(frame, &self.params) else { return };
        self.responses += 1;
        match c {
            Control::Ack { psn, msn } => {
                self.acks += 1;
                self.ack(number, now, psn, msn);
            }
            Control::Answer(answer) => self.answer(number, now, answer),
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
            StackKind::Irn => (rules::IRN_ACK_AHEAD, rules::IRN_ACK_REGRESSED),
            StackKind::Gbn => (rules::GBN_ACK_AHEAD, rules::GBN_ACK_REGRESSED),
        };
        let is_dcp = self.kind == StackKind::Dcp;
        match self.ref_ack {
            None => self.finding(ahead, vec![number], now, "no ACK: nothing received in order yet".into(), format!("ACK of PSN {psn}, MSN {msn}")),
            Some((rp, rm)) => {
                // DCP acknowledges per packet; its eMSN is what it promises. RC: PSN and MSN.
                let psn_ahead = !is_dcp && diff24(rp, psn) > 0;
                if psn_ahead || diff24(rm, msn) > 0 {
                    let what = if is_dcp { "eMSN" } else { "PSN/MSN" };
                    self.finding(
                        ahead,
                        vec![number],
                        now,
                        format!("{what} at most {} (received in order: PSN {rp}, MSN {rm})", if is_dcp { rm } else { rp }),
                        format!("ACK of PSN {psn}, {} {msn}", if is_dcp { "eMSN" } else { "MSN" }),
                    );
                }
            }
        }
        if let Some((lp, lm, lf)) = self.last_ack {
            if (!is_dcp && diff24(lp, psn) < 0) || diff24(lm, msn) < 0 {
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

    fn answer(&mut self, number: u64, now: u64, answer: Answer) {
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
        let rule = if matches!(answer, Answer::Nak { .. }) && self.recent.contains(&answer) { rules::GBN_NAK_REPEATED } else { unexpected };
        let expected = if self.recent.contains(&answer) { "no second copy".to_string() } else { "no such answer: no request arrived that calls for it".to_string() };
        self.finding(rule, vec![number], now, expected, answer.describe());
    }

    /// The capture ended at `end`: answers still awaited for a full window are missing; those
    /// the capture ended too early to tell are not judged.
    pub fn finish(&mut self, end: u64) {
        self.expire(end);
        self.pending.clear();
    }
}
