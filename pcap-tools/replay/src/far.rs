//! What a tap can say about the end it is *not* beside (docs/replay.md "The other end"): at the
//! requester's tap, what the responder sent arrives minus what the network lost; at the
//! responder's tap, what the requester sent arrives minus the same. A loss can hide a fault but
//! cannot make one, so some faults are still proved there; the rest are `ambiguous`, with both
//! explanations.
//!
//! [`ResponderFromSender`] (at the requester's tap):
//! - a Go-Back-N responder NAKs a PSN once (its expected PSN only grows: IBTA §9.7.5), so a
//!   second NAK naming the same PSN is a departure wherever it is seen; an IRN selective NAK
//!   reports one arrival of the PSN it names, and DCP returns one header-only packet per trimmed
//!   copy, so more of them than the requester sent copies of that PSN is a departure;
//! - an ACK's MSN counts the messages complete through its PSN (IBTA §9.7.5.1.x: the MSN),
//!   which the requester knows from the message ends it sent: one higher is a departure (not
//!   judged once READs are seen, whose responses complete them);
//! - DCP's eMSN counts the messages received whole, which only the responder knows, but an ACK
//!   names the packet that completed its message (its BTH PSN): an eMSN past that message's
//!   next claims the messages between were complete before that packet arrived. Where one of
//!   them was sent whole only after that packet left, the claim needs the network to have
//!   reordered a whole message ahead of one packet: `ambiguous` (an eMSN advanced early, or
//!   such reordering);
//! - a Go-Back-N timeout after packets past the hole had been sent, with no NAK for the hole:
//!   the responder omitted its NAK, or the network lost the NAK or every packet past the hole
//!   (ambiguous; judged in `requester.rs`, which knows the timeouts).
//!
//! [`RequesterFromReceiver`] (at the responder's tap): a request packet arriving more than the
//! answer window (`--answer-window-us`, a round trip with its queues) after the first ACK the
//! tap showed leaving covered it is ambiguous: a needless resend, or that ACK (and every later
//! one) was lost on its way. The requester's go-back and timer rules are judged there (and at
//! a fabric tap) by a `RequesterJudge` at a distance (`requester::Vantage`), whose findings are
//! all `ambiguous`.

use std::collections::{HashMap, VecDeque};

use rocescope_codec::ib::opcode::Position;
use rocescope_codec::ib::psn;
use rocescope_codec::{Frame, Params};
use rocescope_stacks::StackKind;

use crate::answer::{ack_through, control_of, dcp_data_msn, Answer, Control, Rises};
use crate::rules;
use crate::{Finding, FindingKind};

/// PSNs remembered per connection (older ones are dropped).
const KEPT: usize = 1 << 16;

/// Drops what is more than 2^22 PSNs behind `highest` once `map` holds [`KEPT`] (a PSN comes
/// round again after 2^24).
fn prune<V>(map: &mut HashMap<u32, V>, highest: Option<u32>) {
    if map.len() >= KEPT {
        match highest {
            Some(h) => map.retain(|&k, _| psn::diff(k, h) < 1 << 22),
            None => map.clear(),
        }
        if map.len() >= KEPT {
            map.clear();
        }
    }
}

/// Counts per PSN, bounded.
#[derive(Default)]
struct Counts(HashMap<u32, u32>);

impl Counts {
    fn add(&mut self, psn: u32, highest: Option<u32>) -> u32 {
        prune(&mut self.0, highest);
        let n = self.0.entry(psn).or_default();
        *n += 1;
        *n
    }
    fn get(&self, psn: u32) -> u32 {
        self.0.get(&psn).copied().unwrap_or(0)
    }
}

/// The responder's rules a requester's tap can still judge.
pub(super) struct ResponderFromSender {
    kind: StackKind,
    flow: String,
    params: Params,
    /// Copies of each PSN sent.
    sent: Counts,
    /// GBN: the NAKs seen, per PSN (the first one's frame); IRN, DCP: the answers per PSN.
    answered: HashMap<u32, (u32, u64)>,
    /// Ends of messages sent (PSN of a Last or Only packet, as first shown), not yet counted.
    ends: VecDeque<u32>,
    /// The highest PSN an ACK counted the message ends through.
    counted_through: Option<u32>,
    /// Messages acknowledged complete (ends passed by an ACK), counted from the first request.
    complete: u32,
    /// The first request this tap showed began a message.
    began_message: bool,
    /// Every PSN from the first this tap showed up to this one was shown leaving (so every
    /// message end up to it is known); those shown past it, waiting for the gap to fill.
    contiguous: Option<u32>,
    ahead: std::collections::HashSet<u32>,
    /// Whether the capture shows the connection from its first message (decided at the first
    /// ACK): MSNs are judged only then.
    start: Option<bool>,
    highest: Option<u32>,
    reads: bool,
    /// DCP: each PSN's message and when it last left; when each message's last packet first
    /// left (all of it sent once: packets leave in PSN order).
    dcp_msg: HashMap<u32, (u32, u64)>,
    dcp_sent_whole: HashMap<u32, u64>,
    /// PSNs skipped by a new highest one (never shown before it), and new highest PSNs shown:
    /// a tap on one path of several skips most.
    skipped: u64,
    advanced: u64,
    pub findings: Vec<Finding>,
}

/// Messages between an ACK's own and its eMSN examined (a longer claim is judged on these).
const CLAIM_SPAN: u32 = 64;

impl ResponderFromSender {
    pub fn new(kind: StackKind, flow: String, params: Params) -> Self {
        ResponderFromSender {
            kind,
            flow,
            params,
            sent: Counts::default(),
            answered: HashMap::new(),
            ends: VecDeque::new(),
            counted_through: None,
            complete: 0,
            began_message: false,
            contiguous: None,
            ahead: Default::default(),
            start: None,
            highest: None,
            reads: false,
            dcp_msg: HashMap::new(),
            dcp_sent_whole: HashMap::new(),
            skipped: 0,
            advanced: 0,
            findings: Vec::new(),
        }
    }

    /// A request packet the requester sent, leaving (or crossing the tap) at `now`.
    pub fn request(&mut self, now: u64, frame: &Frame<'_>) {
        let Some(p) = frame.roce() else { return };
        let psn = p.bth().psn();
        if let (StackKind::Dcp, Some(m)) = (self.kind, dcp_data_msn(frame, &self.params)) {
            prune(&mut self.dcp_msg, self.highest);
            self.dcp_msg.insert(psn, (m, now));
            if matches!(p.opcode().position(), Some(Position::Last | Position::Only)) {
                if self.dcp_sent_whole.len() >= KEPT {
                    self.dcp_sent_whole.clear();
                }
                self.dcp_sent_whole.entry(m).or_insert(now);
            }
        }
        self.sent.add(psn, self.highest);
        let new = self.highest.is_none_or(|h| psn::diff(h, psn) > 0);
        if self.highest.is_none() {
            self.began_message = matches!(p.opcode().position(), Some(Position::First | Position::Only));
        }
        match self.contiguous {
            None => self.contiguous = Some(psn),
            Some(c) if psn == psn::add(c, 1) => {
                let mut c = psn;
                while self.ahead.remove(&(psn::add(c, 1))) {
                    c = psn::add(c, 1);
                }
                self.contiguous = Some(c);
            }
            Some(c) if psn::diff(c, psn) > 1 && self.ahead.len() < KEPT => {
                self.ahead.insert(psn);
            }
            _ => {}
        }
        if new {
            if let Some(h) = self.highest {
                self.skipped += (psn::diff(h, psn) - 1).max(0) as u64;
            }
            self.advanced += 1;
            self.highest = Some(psn);
        }
        // A message's end, the first time this tap shows it (a fabric tap may see only a
        // resend of it), unless an ACK already counted past it.
        let end = matches!(p.opcode().position(), Some(Position::Last | Position::Only));
        let counted = self.counted_through.is_some_and(|c| psn::diff(psn, c) >= 0);
        if end && !counted && !self.ends.contains(&psn) && self.ends.len() < KEPT {
            self.ends.push_back(psn);
        }
        // READ Request (0x0C): its responses, not the ACKs, complete it.
        self.reads |= p.opcode().0 == 0x0C;
    }

    /// Where this tap stopped showing every PSN (one never crossed it: another path, or lost
    /// before it): the counts and MSNs are judged no further. `None` when it showed them all.
    pub fn first_unseen(&self) -> Option<u32> {
        (!self.ahead.is_empty()).then(|| self.contiguous.map_or(0, |c| psn::add(c, 1)))
    }

    /// Whether the tap showed fewer than half the PSNs as they were first sent (each new highest
    /// one skipping those before it): it is on one path of several, and `(shown, skipped)`.
    pub fn one_path_of_several(&self) -> Option<(u64, u64)> {
        (self.skipped > self.advanced).then_some((self.advanced, self.skipped))
    }

    /// Whether an answer naming `psn` arrived (GBN: a NAK, which the responder sends once per
    /// PSN).
    pub fn answered(&self, psn: u32) -> bool {
        self.answered.contains_key(&psn)
    }

    /// A frame the responder sent, arriving.
    pub fn response(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        match control_of(frame, &self.params) {
            Some(Control::Answer(a, _)) => self.answer(number, now, a),
            Some(Control::Ack { psn, msn }) if self.kind != StackKind::Dcp => self.ack(number, now, psn, msn),
            Some(Control::Ack { psn, msn }) => self.dcp_ack(number, now, psn, msn),
            _ => {}
        }
    }

    fn answer(&mut self, number: u64, now: u64, a: Answer) {
        let (key, rule) = match a {
            Answer::Nak { psn } => (psn, rules::GBN_NAK_REPEATED),
            Answer::Sack { sacked, .. } => (sacked, rules::IRN_SACK_UNEXPECTED),
            Answer::Bounce { psn } => (psn, rules::DCP_HO_UNEXPECTED),
        };
        prune(&mut self.answered, self.highest);
        let e = self.answered.entry(key).or_insert((0, number));
        e.0 += 1;
        let (n, first) = *e;
        // GBN: once per PSN; the others: at most one per copy sent (not judged for a PSN this
        // tap never showed leaving: sent before the capture began).
        let allowed = if matches!(a, Answer::Nak { .. }) { 1 } else { self.sent.get(key) };
        // (And only where this tap showed every PSN up to it leaving: a fabric tap on one of
        // several paths sees some copies only.)
        let all_seen = self.contiguous.is_some_and(|c| psn::diff(key, c) >= 0);
        let counted = matches!(a, Answer::Nak { .. }) || all_seen;
        if n > allowed && allowed > 0 && counted {
            let what = match a {
                Answer::Nak { psn } => {
                    format!("one NAK naming PSN {psn}: the expected PSN only grows (frame {first} was it)")
                }
                Answer::Sack { sacked, .. } => {
                    format!("at most {allowed} selective NAK(s) reporting PSN {sacked} received: the requester sent it {allowed} time(s)")
                }
                Answer::Bounce { psn } => {
                    format!("at most {allowed} returned header-only packet(s) of PSN {psn}: the requester sent it {allowed} time(s)")
                }
            };
            let f = Finding::of(
                FindingKind::Departure,
                rule,
                &self.flow,
                vec![number],
                now,
                what,
                format!("{} (copy {n})", a.describe()),
            );
            self.findings.push(f);
        }
    }

    /// DCP: an ACK naming PSN `psn` with eMSN `emsn`: the messages between the PSN's and the
    /// eMSN were complete before that packet arrived.
    fn dcp_ack(&mut self, number: u64, now: u64, psn: u32, emsn: u32) {
        // (Only while the tap has shown every PSN: on one of several paths, the copy of a packet
        // it saw need not be the one that arrived.)
        if !self.ahead.is_empty() {
            return;
        }
        let Some(&(m, left)) = self.dcp_msg.get(&psn) else { return };
        let span = psn::diff(psn::add(m, 1), emsn);
        if span <= 0 {
            return;
        }
        let overtaking = (1..=span.min(CLAIM_SPAN as i32) as u32)
            .map(|i| psn::add(m, i))
            .find_map(|k| self.dcp_sent_whole.get(&k).filter(|&&t| t > left).map(|&t| (k, t)));
        let Some((k, whole)) = overtaking else { return };
        self.findings.push(Finding::of(
            FindingKind::Ambiguous,
            rules::DCP_EMSN_AHEAD,
            &self.flow,
            vec![number],
            now,
            format!(
                "eMSN at most {}: the ACK names PSN {psn} of message {m}, and message {k} was sent whole only {:.1} µs \
                 after that packet left",
                psn::add(m, 1),
                (whole - left) as f64 / 1e3
            ),
            format!(
                "eMSN {emsn}: either the responder advanced its eMSN early, or the network reordered every packet of \
                 message {k} ahead of PSN {psn}"
            ),
        ));
    }

    fn ack(&mut self, number: u64, now: u64, psn: u32, msn: u32) {
        if self.reads || self.highest.is_none() {
            return;
        }
        let before = self.ends.len();
        self.ends.retain(|&e| psn::diff(e, psn) < 0);
        self.complete += (before - self.ends.len()) as u32;
        if self.counted_through.is_none_or(|c| psn::diff(c, psn) > 0) {
            self.counted_through = Some(psn);
        }
        // Judged only for a capture that shows the connection from its first message: the first
        // request began a message and the first ACK counts exactly the messages it saw end.
        // (Else messages that ended before the capture would be counted by later ACKs.)
        if self.start.is_none() {
            self.start = Some(self.began_message && msn == self.complete);
        }
        // (And only up to where every PSN was shown leaving: a message that ended in a packet
        // this tap never showed would be counted by the ACK but not here.)
        if self.start != Some(true) || self.contiguous.is_none_or(|c| psn::diff(c, psn) > 0) {
            return;
        }
        let expected = self.complete & 0xff_ffff;
        if psn::diff(expected, msn) > 0 {
            let rule = if self.kind == StackKind::Irn { rules::IRN_ACK_AHEAD } else { rules::GBN_ACK_AHEAD };
            self.findings.push(Finding::of(
                FindingKind::Departure,
                rule,
                &self.flow,
                vec![number],
                now,
                format!("MSN {expected}: the messages the requester sent that end at or before PSN {psn}"),
                format!("ACK of PSN {psn}, MSN {msn}"),
            ));
        }
    }
}

/// The requester's rules a responder's tap can only suspect.
pub(super) struct RequesterFromReceiver {
    kind: StackKind,
    flow: String,
    params: Params,
    /// How long after an ACK left a packet it covers may still arrive (sent before the ACK
    /// reached the requester; a round trip with its queues): the answer window.
    window_ns: u64,
    /// The rises of what the captured ACKs acknowledge (PSN; DCP: message).
    rises: Rises,
    /// The rise a needless resend was last suspected against (one finding per rise).
    flagged: Option<u64>,
    highest: Option<u32>,
    /// A READ request arrived: Go-Back-N resends past a READ whose responses went missing (not
    /// judged).
    reads: bool,
    pub findings: Vec<Finding>,
}

impl RequesterFromReceiver {
    pub fn new(kind: StackKind, flow: String, params: Params, window_ns: u64) -> Self {
        RequesterFromReceiver {
            kind,
            flow,
            params,
            window_ns,
            rises: Rises::default(),
            flagged: None,
            highest: None,
            reads: false,
            findings: Vec::new(),
        }
    }

    /// A frame the responder sent, leaving.
    pub fn response(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        if let Some(Control::Ack { psn, msn }) = control_of(frame, &self.params) {
            self.rises.rise(ack_through(self.kind, psn, msn), number, now);
        }
    }

    /// A request packet arriving.
    pub fn request(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        let Some(p) = frame.roce() else { return };
        let psn = p.bth().psn();
        // (DCP counts messages: a data or header-only packet's MSN.)
        let msg = match frame.ext() {
            rocescope_codec::ext::Ext::Dcp(x) => x.msn(p),
            _ => None,
        };
        let read = p.opcode().0 == 0x0C;
        let resend = self.highest.is_some_and(|h| psn::diff(psn, h) >= 0);
        if !resend {
            self.highest = Some(psn);
        }
        let n = if self.kind == StackKind::Dcp { msg } else { Some(psn) };
        // The first ACK that covered it.
        let covered = n.and_then(|n| self.rises.first_covering(n)).map(|r| (r.time, r.frame));
        self.reads |= read;
        if let (Some((t, f)), Some(n), false) = (covered, n, self.reads) {
            if now > t.saturating_add(self.window_ns) && self.flagged != Some(f) {
                self.flagged = Some(f);
                let rule = rules::retx_needless(self.kind);
                let unit = if self.kind == StackKind::Dcp { format!("message {n}") } else { format!("PSN {n}") };
                self.findings.push(Finding::of(
                    FindingKind::Ambiguous,
                    rule,
                    &self.flow,
                    vec![f, number],
                    now,
                    format!("no resend of {unit}: the ACK of frame {f} left {:.1} µs before", (now - t) as f64 / 1e3),
                    format!(
                        "PSN {psn} arrived again: either the requester resent it needlessly, or that ACK and every later one \
                         were lost on their way (this tap is beside the responder)"
                    ),
                ));
            }
        }
    }
}
