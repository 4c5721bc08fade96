//! The requester's half of replay (docs/replay.md), at the requester's own tap: every
//! acknowledgement the tap shows arriving is what the requester knew, and every request packet
//! it shows leaving is what the requester did with it. A Go-Back-N or IRN requester resends only
//! what is not acknowledged: it goes back to a NAK's PSN or, on a timeout, to the oldest
//! unacknowledged one, never below what an ACK (or a NAK, which acknowledges the PSNs before the
//! one it names) has covered. A DCP requester never resends a packet of a message its receiver's
//! eMSN has passed (the message is complete).
//!
//! Two more rules at the same tap:
//! - Go-Back-N goes back far enough: after a NAK naming PSN e arrives, the first request packet
//!   the requester sends (once [`RequesterJudge`]'s reaction time has passed) is e (IBTA
//!   §9.7.5.2.x: the requester resends from the PSN the NAK names).
//! - A retransmission timer fires neither early nor late. A resend no answer asked for is the timer's
//!   (GBN: one that starts a go-back no NAK asked for; IRN: one that is not the next PSN loss
//!   recovery resends; DCP: one no returned header-only packet asked for). The timer started at
//!   the latest of: the acknowledgement that last made progress with packets still outstanding,
//!   the first packet sent with nothing outstanding, the previous timeout's first resend, and
//!   (IRN) the packet that took it from RTO_low to RTO_high. Only the first timeout after
//!   progress is recorded (a second one without progress would need the back-off of the
//!   stack's own state); at the end each is judged against the timer the connection's
//!   timeouts of its kind agree on, or the stack's value when `--param` sets one
//!   ([`RequesterJudge::finish`]): it
//!   departs when it fired earlier, or later, by more than the larger of 10% and 5 µs.
//!
//! The same judge runs at the responder's tap and at a fabric tap ([`Vantage`]), on the
//! requests arriving and the answers leaving (docs/replay.md "The other end"): there every
//! departure is `ambiguous` (the network may have lost, delayed or reordered what the
//! requester sent), a go-back is found at the first step back after the NAK, a timeout only
//! after a silence, and a connection whose arrivals show reordering is not judged.

use rocescope_codec::ib::psn;
use rocescope_codec::{Frame, Params};
use rocescope_stacks::{StackKind, Timeouts};

use crate::answer::{ack_through, control_of, dcp_data_msn, Answer, Control, Rise, Rises};
use crate::rules::{self, Rule};
use crate::{Finding, FindingKind};

/// Timeouts remembered per connection (more are not judged).
const SAMPLES_KEPT: usize = 1 << 16;

/// One timeout: how long after its timer started it fired, the stack's value for that timer
/// (its kind: IRN's RTO_low or RTO_high), the frames that started and ended it.
#[derive(Clone, Copy, Debug)]
struct TimerSample {
    took: u64,
    value: Option<u64>,
    start_frame: u64,
    frame: u64,
    time: u64,
    psn: u32,
    /// When the requester's host last sent any frame before this resend (its NIC idle since).
    host_idle_since: Option<u64>,
}

/// The timer a connection's timeouts of one kind agree on: the one with the most others within
/// the tolerance of it; in a tie, one within the tolerance of the reference stack's value for
/// the kind (when the NIC runs the reference's timer, the faulty timeout is the odd one), then
/// the longest (a NIC configured otherwise: a timer cannot fire late by itself, only be held).
/// A timeout on its own is the timer. Sorted once, each timeout's agreeing ones counted by
/// binary search: O(n log n).
fn inferred_timer(of_kind: &[TimerSample]) -> TimerSample {
    let mut took: Vec<u64> = of_kind.iter().map(|s| s.took).collect();
    took.sort_unstable();
    let agreeing = |t: u64| {
        let tol = rules::tolerance(t);
        took.partition_point(|&x| x <= t.saturating_add(tol)) - took.partition_point(|&x| x < t.saturating_sub(tol))
    };
    let reference = |s: &TimerSample| s.value.is_some_and(|v| s.took.abs_diff(v) <= rules::tolerance(v));
    *of_kind.iter().max_by_key(|s| (agreeing(s.took), reference(s), s.took)).expect("a sample")
}

/// IRN's loss recovery, as [`RequesterJudge`] follows it.
#[derive(Clone, Copy, Debug)]
struct Recovery {
    point: u32,
    next: u32,
}

/// Where the tap is, seen from the requester: beside it, or away from it (docs/replay.md "The
/// other end"). Away from it, what the requester did arrives minus what the network lost (and,
/// on several paths, reordered), and its timers are seen from a distance: every departure the
/// requester's rules find there is reported `ambiguous`, with both explanations, and the rules
/// the responder's own judge proves at its tap are left to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Vantage {
    /// The requester's own tap.
    Own,
    /// The responder's tap: requests arriving, answers leaving.
    Responder,
    /// A tap in the fabric: both crossing it.
    Fabric,
}

impl Vantage {
    /// Why the tap cannot prove what the requester did.
    fn caveat(self) -> &'static str {
        match self {
            Vantage::Own => "",
            Vantage::Responder => "this tap is beside the responder",
            Vantage::Fabric => "this tap is in the fabric",
        }
    }
}

/// A go-back that began above the NAK'd PSN, seen away from the requester: reported once the
/// answer window has passed without the NAK'd PSN arriving (else the resends were reordered).
#[derive(Clone, Copy, Debug)]
struct PendingShort {
    nak_psn: u32,
    nak_frame: u64,
    nak_time: u64,
    psn: u32,
    frame: u64,
    time: u64,
}

/// One connection's requester judge.
pub(super) struct RequesterJudge {
    kind: StackKind,
    flow: String,
    params: Params,
    /// How long after an acknowledgement reaches the requester it may still send a packet the
    /// acknowledgement covers (one already on its way to the wire).
    reaction_ns: u64,
    /// Each rise of what is acknowledged: through this PSN (DCP: this message), by the ACK or NAK of this frame at
    /// this time (the latest [`RISES_KEPT`]), so a packet sent again is judged against the first
    /// acknowledgement that covered it.
    rises: Rises,
    timeouts: Timeouts,
    /// The highest PSN sent (and, DCP, the highest message).
    highest: Option<u32>,
    highest_msg: Option<u32>,
    /// The first PSN sent.
    first: Option<u32>,
    /// When each PSN of the last 2^16 was last sent.
    last_sent: std::collections::HashMap<u32, u64>,
    /// DCP: returned header-only packets not yet answered by a resend, per PSN (each one asks
    /// for one resend).
    bounced: std::collections::HashMap<u32, u32>,
    /// Where the retransmission timer started (time, frame) and its value; `None` when stopped.
    timer: Option<(u64, u64, Option<u64>)>,
    /// IRN: the PSNs above the cumulative ACK that selective NAKs reported received.
    sacked: std::collections::HashSet<u32>,
    /// IRN: the expected PSNs selective NAKs have named.
    sack_named: std::collections::HashSet<u32>,
    /// An owed answer was reported missing since the last answer arrived.
    silence_reported: bool,
    /// IRN: loss recovery (IRN §3.1), as the reference keeps it: until the cumulative ACK
    /// passes `point` (the highest PSN sent when it began), selective NAKs make the requester
    /// resend, in order from `next`, each PSN below the highest reported received; a resend
    /// of anything else is the timer's.
    recovery: Option<Recovery>,
    /// IRN: the highest PSN a selective NAK reported received.
    highest_sacked: Option<u32>,
    /// IRN: one past the highest PSN resent on selective NAKs (a timeout lowers it to the
    /// cumulative ACK); a new recovery starts there.
    resent_to: Option<u32>,
    /// A timeout has been judged since the last progress.
    timeout_judged: bool,
    /// GBN: a NAK's PSN, when and in which frame it arrived, until the requester resends it.
    nak: Option<(u32, u64, u64)>,
    /// The responder's rules this tap can still judge (not fed at the responder's own tap,
    /// where its own judge proves them).
    pub far: crate::far::ResponderFromSender,
    /// GBN: when the latest NAK arrived.
    last_nak: u64,
    /// GBN: a NAK arrived that no go-back has answered yet.
    nak_asks: bool,
    /// The PSN of the latest request packet sent.
    prev_psn: Option<u32>,
    /// A READ Request was sent again: the requester's rules are no longer judged.
    reads: bool,
    /// Whether a timeout may depart (else the timer is only inferred).
    pub judge_timers: bool,
    /// Where the tap is.
    vantage: Vantage,
    /// Away from the requester: a short go-back waiting for the answer window.
    pending_short: Option<PendingShort>,
    /// DCP: a header-only packet came back on this connection (the fabric trims).
    trims: bool,
    /// Away from the requester: the PSNs an answer named (a NAK's, a selective NAK's expected
    /// PSN), when, and when a first copy of it arrived since.
    named: std::collections::HashMap<u32, (u64, Option<u64>)>,
    /// When the latest request packet left (or arrived, away from the requester).
    last_arrival: u64,
    /// That packet carried a PSN higher than any before it.
    prev_new: bool,
    /// At the requester's tap: when its host sent any frame before the one being judged (set
    /// by the driver before each request, [`RequesterJudge::host_sent_before`]).
    host_prev_tx: Option<u64>,
    /// A CNP reached the connection, or a PAUSE/PFC frame the tap's link: the NIC may have
    /// held a resend (set by the driver before [`RequesterJudge::finish`]).
    pub may_hold: bool,
    /// Away from the requester: a PSN arrived first after the answer naming it and then again
    /// (the first copy was reordered, not lost: several paths), and the frame that showed it.
    pub reordered: Option<(u32, u64, &'static str)>,
    /// The timeouts seen (the first after each progress).
    samples: Vec<TimerSample>,
    /// Timeouts since the last progress; the most of them, and the frame of the last.
    in_a_row: u32,
    most_in_a_row: Option<(u32, u64)>,
    pub requests: u64,
    pub responses: u64,
    pub findings: Vec<Finding>,
}

impl RequesterJudge {
    pub fn new(kind: StackKind, flow: String, params: Params, reaction_ns: u64, timeouts: Timeouts) -> RequesterJudge {
        let far = crate::far::ResponderFromSender::new(kind, flow.clone(), params);
        RequesterJudge {
            // NetRT's hosts are Go-Back-N (docs/replay.md): every GBN requester rule applies to
            // them (its go-backs too: judged as NetRT, a go-back's packets after the first were
            // each taken for a new timeout, and a burst an ACK interrupted for an early one).
            kind: if kind == StackKind::Netrt { StackKind::Gbn } else { kind },
            flow,
            params,
            reaction_ns,
            rises: Default::default(),
            timeouts,
            highest: None,
            highest_msg: None,
            first: None,
            last_sent: Default::default(),
            bounced: Default::default(),
            timer: None,
            sacked: Default::default(),
            sack_named: Default::default(),
            silence_reported: false,
            recovery: None,
            highest_sacked: None,
            resent_to: None,
            timeout_judged: false,
            nak: None,
            far,
            last_nak: 0,
            nak_asks: false,
            prev_psn: None,
            reads: false,
            judge_timers: true,
            vantage: Vantage::Own,
            pending_short: None,
            trims: false,
            named: Default::default(),
            reordered: None,
            last_arrival: 0,
            prev_new: false,
            host_prev_tx: None,
            may_hold: false,
            samples: Vec::new(),
            in_a_row: 0,
            most_in_a_row: None,
            requests: 0,
            responses: 0,
            findings: Vec::new(),
        }
    }

    /// A judge of the requester's rules at a tap away from it: `window_ns` (the answer window:
    /// a round trip with its queues) stands for the reaction time.
    pub fn distant(
        kind: StackKind,
        flow: String,
        params: Params,
        window_ns: u64,
        timeouts: Timeouts,
        vantage: Vantage,
    ) -> RequesterJudge {
        let mut j = RequesterJudge::new(kind, flow, params, window_ns, timeouts);
        j.vantage = vantage;
        j
    }

    /// The time the requester's host last sent a frame (any connection) before the request
    /// packet the next [`request`](Self::request) judges.
    pub fn host_sent_before(&mut self, t: Option<u64>) {
        self.host_prev_tx = t;
    }

    /// The value a timer started now runs with; `None` when the stack has none. GBN: the local
    /// ACK timeout. IRN: RTO_low while at most N packets are in flight (sent, neither
    /// acknowledged nor reported received by a selective NAK), else RTO_high. DCP: the
    /// first-round coarse timeout (only the first timeout after progress is judged, and the
    /// back-off restarts with progress).
    fn timer_value(&self) -> Option<u64> {
        match self.kind {
            StackKind::Gbn | StackKind::Netrt => self.timeouts.gbn_ns(),
            StackKind::Irn => Some(self.timeouts.irn_ns(self.in_flight())),
            StackKind::Dcp => Some(self.timeouts.dcp_ns(0)),
            // (SDR connections are listed as not judged: `connections` in lib.rs.)
            StackKind::SdrSr | StackKind::SdrEc | StackKind::Flor | StackKind::Erd => None,
        }
    }

    /// IRN's packets in flight.
    fn in_flight(&self) -> u32 {
        match (self.highest, self.una()) {
            (Some(h), Some(u)) => ((psn::diff(u, h) + 1).max(0) as usize).saturating_sub(self.sacked.len()) as u32,
            _ => 0,
        }
    }

    /// Whether a resend of `psn` is the timer's. GBN and DCP: no answer asked for it since it
    /// was last sent. IRN: it is not the next PSN loss recovery resends.
    fn by_timer(&self, psn: u32, msg: u32) -> bool {
        // A packet acknowledged is no timer's (the needless-retransmission rule judges it).
        let acked = self.rises.through().is_some_and(|a| match self.kind {
            StackKind::Dcp => psn::diff(msg, a) >= 0,
            _ => psn::diff(psn, a) >= 0,
        });
        if acked {
            return false;
        }
        if self.kind == StackKind::Dcp {
            return self.bounced.get(&psn).is_none_or(|&n| n == 0);
        }
        if self.kind == StackKind::Irn {
            let due = |r: &Recovery| {
                psn::diff(r.next, psn) >= 0 && self.highest_sacked.is_some_and(|h| psn::diff(psn, h) > 0)
            };
            return !self.recovery.as_ref().is_some_and(due);
        }
        // GBN: a NAK asks for one go-back (from its PSN, or what an ACK since has left); each
        // packet of a go-back follows the one before it; a resend that starts a go-back no NAK
        // asked for is the timer's. (Not judged once READs are seen: an ACK past a READ whose
        // responses are missing asks for it again too.)
        !self.nak_asks && !self.reads && !self.goes_on(psn)
    }

    /// GBN: `psn` continues the packets before it: the one after the previous packet, or
    /// (ahead of it) the first an ACK since has left unacknowledged.
    /// (Away from the requester, a resend may be lost on its way: any PSN past the previous
    /// one goes on; only a step back begins a go-back.)
    fn goes_on(&self, psn: u32) -> bool {
        let una = self.rises.through().map(|a| psn::add(a, 1));
        let ahead = |p: u32| psn::diff(p, psn) > 0;
        self.prev_psn.is_some_and(|p| {
            psn == psn::add(p, 1) || (una == Some(psn) && ahead(p)) || (self.vantage != Vantage::Own && ahead(p))
        })
    }

    /// The cumulative ACK: one past the PSN acknowledged through.
    fn una(&self) -> Option<u32> {
        self.rises.through().map(|a| psn::add(a, 1)).or(self.first)
    }

    fn start_timer(&mut self, now: u64, number: u64) {
        self.timer = Some((now, number, self.timer_value()));
    }

    /// Whether anything sent is not yet acknowledged (DCP: a message sent is not complete).
    fn outstanding(&self) -> bool {
        let acked = self.rises.through();
        match self.kind {
            StackKind::Dcp => match (self.highest_msg, acked) {
                (Some(h), Some(a)) => psn::diff(a, h) > 0,
                (h, _) => h.is_some(),
            },
            _ => match (self.highest, acked) {
                (Some(h), Some(a)) => psn::diff(a, h) > 0,
                (h, _) => h.is_some(),
            },
        }
    }

    /// A departure at the requester's own tap; away from it, `ambiguous`, with `otherwise` (what
    /// else the tap's view allows).
    fn finding(&mut self, rule: Rule, frames: Vec<u64>, now: u64, expected: String, seen: String, otherwise: &str) {
        let (kind, seen) = match self.vantage {
            Vantage::Own => (FindingKind::Departure, seen),
            v => (
                FindingKind::Ambiguous,
                format!("{seen}: either the requester departed, or {otherwise} ({})", v.caveat()),
            ),
        };
        self.findings.push(Finding::of(kind, rule, &self.flow, frames, now, expected, seen));
    }

    /// An acknowledgement (ACK, NAK or selective NAK) arriving at the requester.
    pub fn response(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        // (At the responder's tap its own judge judges it: the far checks would be dropped.)
        if self.vantage != Vantage::Responder {
            self.far.response(number, now, frame);
        }
        let control = control_of(frame, &self.params);
        if let Some(Control::Answer(Answer::Nak { psn: e }, _)) = control {
            self.last_nak = now;
            // (A NAK naming a PSN already acknowledged, overtaken on another path by a later
            // answer, asks for nothing: Go-Back-N ignores it, and a resend after it is not its
            // go-back. Taken for one, a timeout's resend after such a stale NAK went unjudged
            // and the next timeout measured from the timer before: 8 sprayed paths at 5 % loss.)
            let stale = self.rises.through().is_some_and(|a| psn::diff(a, e) <= 0);
            self.nak_asks |= !stale;
        }
        if let (Some(Control::Answer(Answer::Nak { psn: e } | Answer::Sack { epsn: e, .. }, _)), false) =
            (control, self.vantage == Vantage::Own)
        {
            if self.named.len() >= 1 << 16 {
                self.named.clear();
            }
            self.named.entry(e).or_insert((now, None));
        }
        if let (StackKind::Dcp, Some(Control::Answer(Answer::Bounce { psn }, _))) = (self.kind, control) {
            self.trims = true;
            if self.bounced.len() < 1 << 16 {
                *self.bounced.entry(psn).or_default() += 1;
            }
        }
        if let (StackKind::Gbn, Some(Control::Answer(Answer::Nak { psn }, _))) = (self.kind, control) {
            // A NAK inside the window (above what is acknowledged, at most the highest PSN
            // sent): the requester resends from its PSN.
            let acked = self.rises.through();
            let above = acked.is_none_or(|a| psn::diff(a, psn) > 0);
            if above && self.highest.is_some_and(|h| psn::diff(psn, h) >= 0) {
                self.nak = Some((psn, now, number));
            }
        }
        let through = match control {
            // DCP: the eMSN (every message before it is complete); the last one complete.
            Some(Control::Ack { psn, msn }) => ack_through(self.kind, psn, msn),
            _ if self.kind == StackKind::Dcp => return,
            Some(Control::Answer(Answer::Nak { psn } | Answer::Sack { epsn: psn, .. }, _)) => psn::add(psn, psn::MASK),
            // A READ response acknowledges every request before it (IBTA §9.7.5.1.3: an implied
            // acknowledgement).
            // (In order, the response itself is taken: through its PSN.)
            None => match frame.roce() {
                Some(p) if (0x0D..=0x10).contains(&p.opcode().0) => {
                    let q = p.bth().psn();
                    let in_order = self.rises.through().is_some_and(|a| psn::add(a, 1) == q);
                    if in_order {
                        q
                    } else {
                        psn::add(q, psn::MASK)
                    }
                }
                _ => return,
            },
            _ => return,
        };
        self.responses += 1;
        if self.rises.rise(through, number, now) {
            if self.kind == StackKind::Irn {
                self.sacked.retain(|&p| psn::diff(through, p) > 0);
                if self.highest_sacked.is_some_and(|h| psn::diff(through, h) <= 0) {
                    self.highest_sacked = None;
                }
                if self.recovery.as_ref().is_some_and(|r| psn::diff(r.point, through) >= 0) {
                    self.recovery = None;
                }
                let una = psn::add(through, 1);
                if let Some(r) = self.recovery.as_mut() {
                    if psn::diff(r.next, una) > 0 {
                        r.next = una;
                    }
                }
            }
            // A NAK'd PSN acknowledged since (the PSN arrived after all): the requester resumes
            // after what is acknowledged.
            if let Some((e, t, f)) = self.nak {
                if psn::diff(e, through) >= 0 {
                    let next = psn::add(through, 1);
                    let outstanding = self.highest.is_some_and(|h| psn::diff(next, h) >= 0);
                    self.nak = outstanding.then_some((next, t, f));
                }
            }
            // Progress: the timer restarts while packets are outstanding, else stops.
            if self.outstanding() {
                self.start_timer(now, number);
            } else {
                self.timer = None;
            }
            self.timeout_judged = false;
            self.in_a_row = 0;
        }
        // (After the cumulative part: a recovery it ends gives way to the one this starts.)
        if let Some(Control::Answer(..)) = control {
            self.silence_reported = false;
        }
        if let (StackKind::Irn, Some(Control::Answer(Answer::Sack { epsn, .. }, _))) = (self.kind, control) {
            if self.sack_named.len() < 1 << 16 {
                self.sack_named.insert(epsn);
            }
        }
        if let (StackKind::Irn, Some(Control::Answer(Answer::Sack { sacked, .. }, _))) = (self.kind, control) {
            if self.highest.is_some_and(|h| psn::diff(sacked, h) >= 0) && self.sacked.len() < 1 << 16 {
                self.sacked.insert(sacked);
            }
            if self.highest_sacked.is_none_or(|h| psn::diff(h, sacked) > 0) {
                self.highest_sacked = Some(sacked);
            }
            if let (None, Some(point), Some(una)) = (&self.recovery, self.highest, self.una()) {
                let next = match self.resent_to {
                    Some(r) if psn::diff(una, r) > 0 => r,
                    _ => una,
                };
                self.recovery = Some(Recovery { point, next });
            }
        }
    }

    /// A request packet leaving the requester.
    pub fn request(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        let Some(p) = frame.roce() else { return };
        if self.vantage != Vantage::Responder {
            self.far.request(now, frame);
        }
        // A READ Request sent again (responses went missing): from here the reference resends
        // from that READ on, past what the ACKs covered.
        self.reads |= p.opcode().0 == 0x0C && self.highest.is_some_and(|h| psn::diff(p.bth().psn(), h) >= 0);
        self.requests += 1;
        let psn = p.bth().psn();
        // What the acknowledgements count: PSNs, or DCP's messages (a data packet's MSN).
        let n = match self.kind {
            StackKind::Dcp => match dcp_data_msn(frame, &self.params) {
                Some(m) => m,
                None => return,
            },
            _ => psn,
        };
        self.timing(number, now, psn, n);
        // Go-Back-N resends from a READ whose responses went missing on, past what the ACKs
        // covered (the reference does; IBTA §9.7.5: an ACK past a READ implies its responses
        // were lost): once a READ is asked again, the requester's rules are not judged
        // (docs/replay.md "Known limits").
        // (Away from the requester, `far::RequesterFromReceiver` suspects needless resends: one
        // arriving late may have been sent before the ACK reached the requester.)
        if self.reads || p.opcode().0 == 0x0C || self.vantage != Vantage::Own {
            return;
        }
        let Some(Rise { through: a, frame: ack_frame, time: ack_time }) = self.rises.first_covering(n) else {
            return;
        };
        if now > ack_time.saturating_add(self.reaction_ns) {
            let rule = rules::retx_needless(self.kind);
            self.findings.push(Finding::of(
                FindingKind::Departure,
                rule,
                &self.flow,
                vec![ack_frame, number],
                now,
                match self.kind {
                    StackKind::Dcp => format!(
                        "no packet of message {a} or before: frame {ack_frame} showed them complete {} µs earlier",
                        (now - ack_time) / 1000
                    ),
                    _ => format!(
                        "no packet of PSN {a} or below: frame {ack_frame} acknowledged them {} µs earlier",
                        (now - ack_time) / 1000
                    ),
                },
                match self.kind {
                    StackKind::Dcp => format!("PSN {psn} of message {n} sent again"),
                    _ => format!("PSN {psn} sent again"),
                },
            ));
        }
    }

    /// The timeouts judged, and what they infer: each against the one its kind on the connection
    /// agrees on ([`inferred_timer`]: a NIC may be configured otherwise than the reference), or
    /// against the stack's value when `--param` gave one. Returns the inferred timers.
    /// `end`: the capture's last frame time (a short go-back still inside its answer window
    /// then is not reported).
    pub fn finish(&mut self, timers_given: bool, end: u64) -> Vec<crate::Inferred> {
        self.settle_short(None, end);
        let mut kinds: Vec<Option<u64>> = self.samples.iter().map(|s| s.value).collect();
        kinds.sort();
        kinds.dedup();
        let mut inferred = Vec::new();
        if let (StackKind::Gbn, Some((n, frame))) = (self.kind, self.most_in_a_row) {
            if n > 1 {
                inferred.push(crate::Inferred {
                    name: "retry_cnt_at_least",
                    value: n as f64,
                    evidence: format!(
                        "{n} timeouts in a row with no progress between (the last at frame {frame}): the QP resent that \
                         often before giving up or recovering (IBTA's retry_cnt, 0-7)"
                    ),
                });
            }
        }
        for kind in kinds {
            let of_kind: Vec<TimerSample> = self.samples.iter().filter(|s| s.value == kind).copied().collect();
            let nominal = inferred_timer(&of_kind);
            let shortest = of_kind.iter().min_by_key(|s| s.took).expect("a sample");
            let longest = of_kind.iter().max_by_key(|s| s.took).expect("a sample");
            let agreeing =
                of_kind.iter().filter(|s| s.took.abs_diff(nominal.took) <= rules::tolerance(nominal.took)).count();
            inferred.push(crate::Inferred {
                name: "timeout_ns",
                value: nominal.took as f64,
                evidence: format!(
                    "{} timeout(s) after progress, {:.1} µs (frame {}) to {:.1} µs (frame {}) after the timer started, \
                     {agreeing} within 10% of {:.1} µs (frame {}){}",
                    of_kind.len(),
                    shortest.took as f64 / 1e3,
                    shortest.frame,
                    longest.took as f64 / 1e3,
                    longest.frame,
                    nominal.took as f64 / 1e3,
                    nominal.frame,
                    kind.map_or(String::new(), |k| format!(" (the reference's: {:.1} µs)", k as f64 / 1e3))
                ),
            });
            let reference = match (timers_given, kind) {
                (true, Some(k)) => k,
                (true, None) => continue,
                (false, _) => nominal.took,
            };
            if !self.judge_timers {
                continue;
            }
            let slack = rules::tolerance(reference);
            let whose =
                if timers_given { "the timer --param gives" } else { "the timer this connection's timeouts agree on" };
            let (early, late) = match self.kind {
                StackKind::Gbn | StackKind::Netrt => (rules::GBN_TIMEOUT_EARLY, rules::GBN_TIMEOUT_LATE),
                StackKind::Irn | StackKind::SdrSr | StackKind::SdrEc | StackKind::Flor | StackKind::Erd => {
                    (rules::IRN_TIMEOUT_EARLY, rules::IRN_TIMEOUT_LATE)
                }
                StackKind::Dcp => (rules::DCP_TIMEOUT_EARLY, rules::DCP_TIMEOUT_LATE),
            };
            // (Away from the requester, a timer its ACK started measures a round trip long: with
            // the stack's value given, only early ones are judged there.)
            let judge_late = !(timers_given && self.vantage != Vantage::Own);
            for s in &of_kind {
                let early_by = s.took.saturating_add(slack) < reference;
                let late_by = s.took > reference + slack && judge_late;
                if !early_by && !late_by {
                    continue;
                }
                let frames = vec![s.start_frame, s.frame];
                let resent =
                    format!("PSN {} resent by the timer {:.1} µs after it started", s.psn, s.took as f64 / 1e3);
                if early_by {
                    self.finding(
                        early,
                        frames,
                        s.time,
                        format!(
                            "no timeout before {:.1} µs after frame {} started the timer ({whose}, {:.1} µs, less the larger of 10% and 5 µs)",
                            (reference - slack) as f64 / 1e3,
                            s.start_frame,
                            reference as f64 / 1e3
                        ),
                        resent,
                        "the network delayed the frame that started the timer more than the resend, by that much",
                    );
                    continue;
                }
                let expected = format!(
                    "no timeout after {:.1} µs after frame {} started the timer ({whose}, {:.1} µs, plus the larger of \
                     10% and 5 µs)",
                    (reference + slack) as f64 / 1e3,
                    s.start_frame,
                    reference as f64 / 1e3
                );
                // At the requester's tap, with no CNP for the connection (its rate at the line's)
                // and no PAUSE/PFC on the link, a NIC that sent nothing between the timer's due
                // time and the resend held nothing: a late timeout is proven there.
                let due = s.time - s.took + reference;
                let idle = s.host_idle_since.is_none_or(|t| t <= due.saturating_add(slack));
                if self.vantage == Vantage::Own && !self.may_hold && idle {
                    let seen = format!(
                        "{resent}, its NIC idle since before the timer was due, with no CNP or PAUSE to hold it"
                    );
                    self.finding(late, frames, s.time, expected, seen, "");
                    continue;
                }
                // Else a due resend can have been held (a rate limiter, a PFC pause, other frames
                // on the NIC): the tap shows when it left, not when the timer fired.
                let caveat = match self.vantage {
                    Vantage::Own => "this tap is beside the requester",
                    v => v.caveat(),
                };
                let seen = format!(
                    "{resent}: either the timer fired late, or the NIC held a due resend (its rate limiter, a PFC pause), \
                     or the resend was delayed on its way more than the frame that started the timer ({caveat})"
                );
                self.findings.push(Finding::of(
                    FindingKind::Ambiguous,
                    late,
                    &self.flow,
                    frames,
                    s.time,
                    expected,
                    seen,
                ));
            }
        }
        inferred
    }

    /// Whether a resend no answer asked for can be the timer's as this tap sees it: at the
    /// requester's own tap, always; away from it, only after a silence (nothing from the
    /// requester arrived for at least half the time since the timer started). A resend in the
    /// midst of arrivals there is as likely a packet that took a slower path, after the others.
    /// At the requester's tap, a resend within the reaction time of the timer's restart was on
    /// its way before the progress that restarted it (an ACK, ending IRN's recovery or
    /// interrupting a go-back): no timer fires that soon, so it is not a timeout. (Sprayed paths
    /// reorder ACKs: IRN resent a hole below its highest SACK 3 ns after an ACK ended the
    /// recovery that was resending it, and replay took it for a timeout 0.0 µs after the
    /// timer started.)
    fn decided_before_progress(&self, now: u64) -> bool {
        self.vantage == Vantage::Own && self.timer.is_some_and(|(start, _, _)| now.saturating_sub(start) < self.reaction_ns)
    }

    fn silent_before(&self, now: u64) -> bool {
        match (self.vantage, self.timer) {
            (Vantage::Own, _) => true,
            (_, Some((start, _, _))) => {
                let silence = now.saturating_sub(self.last_arrival);
                silence.saturating_mul(2) >= now.saturating_sub(start)
            }
            (_, None) => false,
        }
    }

    /// Away from the requester: the short go-back waiting, reported (or, its NAK'd PSN arriving
    /// within the answer window, dropped: the resends were reordered on their way).
    fn settle_short(&mut self, arriving: Option<(u32, u64)>, end: u64) {
        let Some(p) = self.pending_short else { return };
        let within = |now: u64| now <= p.time.saturating_add(self.reaction_ns);
        match arriving {
            Some((psn, now)) if psn == p.nak_psn && within(now) => self.pending_short = None,
            Some((_, now)) if within(now) => {}
            // (The capture ended inside the window: nothing to say.)
            None if within(end) => self.pending_short = None,
            _ => {
                self.pending_short = None;
                self.finding(
                    rules::GBN_GO_BACK_SHORT,
                    vec![p.nak_frame, p.frame],
                    p.time,
                    format!("PSN {} first: the NAK of frame {} names it", p.nak_psn, p.nak_frame),
                    format!(
                        "PSN {} was the first resend, {:.1} µs after the NAK, and PSN {} did not follow within the \
                         answer window",
                        p.psn,
                        p.time.saturating_sub(p.nak_time) as f64 / 1e3,
                        p.nak_psn
                    ),
                    &format!("the network lost the resend of PSN {}", p.nak_psn),
                );
            }
        }
    }

    /// The timer and Go-Back-N rules for a request packet of PSN `psn` (DCP: of message `msg`).
    fn timing(&mut self, number: u64, now: u64, psn: u32, msg: u32) {
        let resend = self.highest.is_some_and(|h| psn::diff(psn, h) >= 0);
        self.settle_short(Some((psn, now)), now);
        if let (Some((e, at, nak_frame)), false, false) = (self.nak, self.reads, self.vantage == Vantage::Own) {
            // Away from the requester, only a step back shows where the go-back began (what was
            // on its way when the NAK left keeps arriving for a round trip, new packets or an
            // earlier go-back's resends; and if the NAK was lost, after).
            if psn == e {
                self.nak = None;
            } else if resend && self.prev_psn.is_some_and(|p| psn::diff(p, psn) <= 0) {
                self.nak = None;
                if psn::diff(e, psn) > 0 {
                    let p = PendingShort { nak_psn: e, nak_frame, nak_time: at, psn, frame: number, time: now };
                    self.pending_short = Some(p);
                }
            }
        } else if let (Some((e, at, nak_frame)), false) = (self.nak, self.reads) {
            if psn == e {
                self.nak = None;
            } else if resend || now > at.saturating_add(self.reaction_ns) {
                // (Within the reaction time only new packets may still be on their way: a
                // resend there is the go-back itself.)
                self.nak = None;
                if psn::diff(e, psn) > 0 {
                    self.finding(
                        rules::GBN_GO_BACK_SHORT,
                        vec![nak_frame, number],
                        now,
                        format!("PSN {e} sent first: the NAK of frame {nak_frame} names it"),
                        format!("PSN {psn} sent first, {:.1} µs after the NAK", (now - at) as f64 / 1e3),
                        "",
                    );
                }
            }
        }
        // DCP away from the requester: a first copy below the highest PSN that no returned
        // header-only packet asked for, right after new data and with no silence before it,
        // took a slower path (DCP resends only on those, or in a coarse timeout's round, which
        // begins after a silence and goes on with resends): arrivals are reordered.
        let dcp_straggler = self.kind == StackKind::Dcp
            && self.vantage != Vantage::Own
            && resend
            && self.prev_new
            && !self.last_sent.contains_key(&psn)
            && self.bounced.get(&psn).is_none_or(|&n| n == 0)
            && !self.silent_before(now);
        self.prev_new = !resend;
        if dcp_straggler {
            self.reordered.get_or_insert((
                psn,
                number,
                "arrived below the highest PSN with no returned header-only packet asking for it and no silence \
                 before it",
            ));
        }
        if !resend {
            let idle = !self.outstanding();
            self.highest = Some(psn);
            self.first.get_or_insert(psn);
            if self.kind == StackKind::Dcp && self.highest_msg.is_none_or(|h| psn::diff(h, msg) > 0) {
                self.highest_msg = Some(msg);
            }
            if idle || self.timer.is_none() {
                self.start_timer(now, number);
            } else if let (StackKind::Irn, Some((_, _, Some(t)))) = (self.kind, self.timer) {
                // RTO_low gives way to RTO_high, from this packet, once more than N are in flight.
                if t == self.timeouts.irn_ns(0) && self.timer_value() != Some(t) {
                    self.start_timer(now, number);
                }
            }
        } else if self.by_timer(psn, msg) && self.silent_before(now) && !self.decided_before_progress(now) {
            // Timeouts in a row, no progress between (GBN's retry count: IBTA's retry_cnt
            // resends before the QP gives up).
            self.in_a_row += 1;
            if self.most_in_a_row.is_none_or(|(n, _)| self.in_a_row > n) {
                self.most_in_a_row = Some((self.in_a_row, number));
            }
            if !self.timeout_judged {
                // GBN: packets past this one left, yet no NAK came for it (docs/replay.md "The
                // other end").
                let past = self.highest.is_some_and(|h| psn::diff(psn, h) > 0);
                let sent_at = self.last_sent.get(&psn).copied();
                // (A PSN NAK'd before gets no second NAK, IBTA §9.7.5: its resend lost again
                // is the timer's to recover.)
                let naked = self.far.answered(psn);
                // (IRN: any selective NAK naming it as the expected PSN.)
                // (DCP: once the connection showed the fabric trimming, a coarse timeout with
                // packets past the message sent says a header-only packet of it did not come
                // back; `by_timer` saw none owed a resend.)
                let owed = match self.kind {
                    // (At the responder's tap its own judge proves what it owed.)
                    _ if self.vantage == Vantage::Responder => None,
                    StackKind::Gbn | StackKind::Netrt => (!naked && sent_at.is_some_and(|t| self.last_nak <= t))
                        .then_some((rules::GBN_NAK_MISSING, "NAK")),
                    StackKind::Irn => {
                        (!self.sack_named.contains(&psn)).then_some((rules::IRN_SACK_MISSING, "selective NAK"))
                    }
                    StackKind::Dcp => self.trims.then_some((rules::DCP_HO_UNANSWERED, "returned header-only packet")),
                    StackKind::SdrSr | StackKind::SdrEc | StackKind::Flor | StackKind::Erd => None,
                };
                // (One finding per silence: the timeouts that follow it, no answer between, are the
                // same story.)
                if let (true, Some((rule, what)), false) = (past, owed, self.silence_reported) {
                    self.silence_reported = true;
                    let here = match self.vantage {
                        Vantage::Own => "this tap is beside the requester",
                        v => v.caveat(),
                    };
                    let (expected, seen) = if self.kind == StackKind::Dcp {
                        (
                            format!(
                                "a {what} of message {msg} (PSN {psn} on), whose packets the fabric trimmed rather than dropped"
                            ),
                            format!(
                                "none: the requester resent message {msg} on its coarse timer, after sending packets up to PSN \
                                 {}: either the responder left a header-only packet unanswered, or the network dropped a \
                                 packet of it whole (a full queue), or the header-only packet on its way back ({here})",
                                self.highest.unwrap_or(psn)
                            ),
                        )
                    } else {
                        (
                            format!(
                                "a {what} naming PSN {psn} or one after it (the first the responder missed), once a later \
                                 packet reached it"
                            ),
                            format!(
                                "none: the requester resent PSN {psn} on its timer, after sending packets up to PSN {}: either \
                                 the responder omitted a {what} it owed, or the network lost it, every packet past PSN {psn}, \
                                 or the ACKs that would have covered them, or only the last packet was lost and the \
                                 responder, coalescing its ACKs, owed nothing for the ones before it ({here})",
                                self.highest.unwrap_or(psn)
                            ),
                        )
                    };
                    self.findings.push(Finding::of(
                        FindingKind::Ambiguous,
                        rule,
                        &self.flow,
                        vec![number],
                        now,
                        expected,
                        seen,
                    ));
                }
                // Nothing asked for it since it was last sent: the timer's. Judged at the end,
                // against the others of its kind (or the timer `--param` gives).
                if let Some((start, start_frame, value)) = self.timer {
                    let took = now - start;
                    if self.samples.len() < SAMPLES_KEPT {
                        let host_idle_since = self.host_prev_tx;
                        self.samples.push(TimerSample {
                            took,
                            value,
                            start_frame,
                            frame: number,
                            time: now,
                            psn,
                            host_idle_since,
                        });
                    }
                }
                self.timeout_judged = true;
                // The timer restarts with the timeout's first resend.
                self.start_timer(now, number);
            }
            if self.kind == StackKind::Irn {
                // IRN's RTO: recovery from the cumulative ACK on (IRN §3.1).
                self.resent_to = self.una();
                if let (None, Some(point)) = (&self.recovery, self.highest) {
                    self.recovery = Some(Recovery { point, next: psn::add(psn, 1) });
                }
            }
        } else if resend && self.kind == StackKind::Dcp {
            if let Some(n) = self.bounced.get_mut(&psn) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.bounced.remove(&psn);
                }
            }
        } else if resend && self.kind == StackKind::Irn && !self.by_timer(psn, msg) {
            let after = psn::add(psn, 1);
            if let Some(r) = self.recovery.as_mut() {
                r.next = after;
            }
            if self.resent_to.is_none_or(|r| psn::diff(r, after) > 0) {
                self.resent_to = Some(after);
            }
        }
        if self.last_sent.len() >= 1 << 16 {
            let h = self.highest.unwrap_or(psn);
            self.last_sent.retain(|&p, _| psn::diff(p, h) < 1 << 15);
        }
        let first_copy = self.last_sent.insert(psn, now).is_none();
        self.last_arrival = now;
        // Reordering: the PSN an answer named arrives first as a copy this tap never saw, then
        // again as the resend the answer asked for, within a round trip (the answer window); the
        // first copy came less than half as long after the answer as that resend, too soon to be
        // a resend itself.
        if let Some((asked, first)) = self.named.get_mut(&psn) {
            match (*first, first_copy) {
                (None, true) => *first = Some(now),
                (Some(f), false) => {
                    let (asked, f) = (*asked, f);
                    self.named.remove(&psn);
                    let resend_after = now.saturating_sub(asked);
                    if resend_after <= self.reaction_ns && f.saturating_sub(asked) * 2 < resend_after {
                        self.reordered.get_or_insert((psn, number, "arrived after the answer naming it and again"));
                    }
                }
                _ => {
                    self.named.remove(&psn);
                }
            }
        }
        // (A packet already acknowledged is no part of a go-back: the needless-retransmission
        // rule judges it.)
        let acked = self.rises.through().is_some_and(|a| psn::diff(psn, a) >= 0);
        if self.kind == StackKind::Gbn && !acked {
            if resend && !self.goes_on(psn) {
                // A go-back begins: it answers the NAK that asked for it, if any.
                self.nak_asks = false;
            }
            self.prev_psn = Some(psn);
        }
    }
}
