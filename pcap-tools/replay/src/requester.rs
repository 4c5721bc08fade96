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
//! - A retransmission timer never fires early. A retransmission no answer asked for (GBN: no
//!   ACK or NAK arrived since the packet was last sent; IRN: no NAK or selective NAK; DCP: no
//!   returned header-only packet) is the timer's. The timer started at the latest of: the
//!   acknowledgement that last made progress with packets still outstanding, the first packet
//!   sent with nothing outstanding, and the previous timeout's first resend (every stack here
//!   restarts it so; IRN's switch from RTO_low to RTO_high and DCP's back-off only move the
//!   deadline later). It departs when it fired earlier than the stack's shortest timer (GBN's
//!   local ACK timeout, IRN's RTO_low, DCP's first-round coarse timeout) by more than the
//!   larger of 10% and 5 µs. Only the first timeout after progress is judged (a second one
//!   without progress would need the back-off of the stack's own state); a late timeout is not
//!   judged (a NIC's rate limiter may hold a due resend: the tap sees when it left, not when
//!   the timer fired). Every timeout judged is also evidence for the inferred `timeout_ns`.

use rocescope_codec::ext::{dcp, Ext};
use rocescope_codec::{Frame, Params};
use rocescope_stacks::{StackKind, Timeouts};

use crate::answer::{control_of, diff24, Answer, Control};
use crate::rules::{self, Rule};
use crate::{Finding, FindingKind};

/// Rises of the acknowledged PSN remembered (packets sent again from further back are not judged).
const RISES_KEPT: usize = 1024;

/// IRN's loss recovery, as [`RequesterJudge`] follows it.
#[derive(Clone, Copy, Debug)]
struct Recovery {
    point: u32,
    next: u32,
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
    rises: std::collections::VecDeque<(u32, u64, u64)>,
    timeouts: Timeouts,
    /// The highest PSN sent (and, DCP, the highest message).
    highest: Option<u32>,
    highest_msg: Option<u32>,
    /// The first PSN sent.
    first: Option<u32>,
    /// When each PSN of the last 2^16 was last sent.
    last_sent: std::collections::HashMap<u32, u64>,
    /// When the latest answer that asks for a resend arrived (GBN: any ACK or NAK).
    last_ask: u64,
    /// DCP: returned header-only packets not yet answered by a resend, per PSN (each one asks
    /// for one resend).
    bounced: std::collections::HashMap<u32, u32>,
    /// Where the retransmission timer started (time, frame) and its value; `None` when stopped.
    timer: Option<(u64, u64, Option<u64>)>,
    /// IRN: the PSNs above the cumulative ACK that selective NAKs reported received.
    sacked: std::collections::HashSet<u32>,
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
    /// Timeouts seen: the shortest and longest (time from the timer's start, frame), and how many.
    pub timeouts_seen: Option<((u64, u64), (u64, u64), u64)>,
    pub requests: u64,
    pub responses: u64,
    pub findings: Vec<Finding>,
}

impl RequesterJudge {
    pub fn new(kind: StackKind, flow: String, params: Params, reaction_ns: u64, timeouts: Timeouts) -> RequesterJudge {
        RequesterJudge {
            kind,
            flow,
            params,
            reaction_ns,
            rises: Default::default(),
            timeouts,
            highest: None,
            highest_msg: None,
            first: None,
            last_sent: Default::default(),
            last_ask: 0,
            bounced: Default::default(),
            timer: None,
            sacked: Default::default(),
            recovery: None,
            highest_sacked: None,
            resent_to: None,
            timeout_judged: false,
            nak: None,
            timeouts_seen: None,
            requests: 0,
            responses: 0,
            findings: Vec::new(),
        }
    }

    /// The value a timer started now runs with; `None` when the stack has none. GBN: the local
    /// ACK timeout. IRN: RTO_low while at most N packets are in flight (sent, neither
    /// acknowledged nor reported received by a selective NAK), else RTO_high. DCP: the
    /// first-round coarse timeout (only the first timeout after progress is judged, and the
    /// back-off restarts with progress).
    fn timer_value(&self) -> Option<u64> {
        match self.kind {
            StackKind::Gbn => self.timeouts.gbn_ns(),
            StackKind::Irn => Some(self.timeouts.irn_ns(self.in_flight())),
            StackKind::Dcp => Some(self.timeouts.dcp_ns(0)),
        }
    }

    /// IRN's packets in flight.
    fn in_flight(&self) -> u32 {
        match (self.highest, self.una()) {
            (Some(h), Some(u)) => ((diff24(u, h) + 1).max(0) as usize).saturating_sub(self.sacked.len()) as u32,
            _ => 0,
        }
    }

    /// Whether a resend of `psn` is the timer's. GBN and DCP: no answer asked for it since it
    /// was last sent. IRN: it is not the next PSN loss recovery resends.
    fn by_timer(&self, psn: u32, msg: u32) -> bool {
        // A packet acknowledged is no timer's (the needless-retransmission rule judges it).
        let acked = self.rises.back().is_some_and(|&(a, _, _)| match self.kind {
            StackKind::Dcp => diff24(msg, a) >= 0,
            _ => diff24(psn, a) >= 0,
        });
        if acked {
            return false;
        }
        if self.kind == StackKind::Dcp {
            return self.bounced.get(&psn).is_none_or(|&n| n == 0);
        }
        if self.kind == StackKind::Irn {
            let due =
                |r: &Recovery| diff24(r.next, psn) >= 0 && self.highest_sacked.is_some_and(|h| diff24(psn, h) > 0);
            return !self.recovery.as_ref().is_some_and(due);
        }
        self.last_sent.get(&psn).is_some_and(|&t| self.last_ask <= t)
    }

    /// The cumulative ACK: one past the PSN acknowledged through.
    fn una(&self) -> Option<u32> {
        self.rises.back().map(|r| (r.0 + 1) & 0xff_ffff).or(self.first)
    }

    fn start_timer(&mut self, now: u64, number: u64) {
        self.timer = Some((now, number, self.timer_value()));
    }

    /// Whether anything sent is not yet acknowledged (DCP: a message sent is not complete).
    fn outstanding(&self) -> bool {
        let acked = self.rises.back().map(|r| r.0);
        match self.kind {
            StackKind::Dcp => match (self.highest_msg, acked) {
                (Some(h), Some(a)) => diff24(a, h) > 0,
                (h, _) => h.is_some(),
            },
            _ => match (self.highest, acked) {
                (Some(h), Some(a)) => diff24(a, h) > 0,
                (h, _) => h.is_some(),
            },
        }
    }

    fn finding(&mut self, rule: Rule, frames: Vec<u64>, now: u64, expected: String, seen: String) {
        self.findings.push(Finding {
            kind: FindingKind::Departure,
            rule: rule.id,
            source: rule.source,
            flow: self.flow.clone(),
            frames,
            time_ns: now,
            expected,
            seen,
        });
    }

    fn rule(&self) -> Rule {
        match self.kind {
            StackKind::Irn => rules::IRN_RETX_NEEDLESS,
            StackKind::Dcp => rules::DCP_RETX_NEEDLESS,
            StackKind::Gbn => rules::GBN_RETX_NEEDLESS,
        }
    }

    /// An acknowledgement (ACK, NAK or selective NAK) arriving at the requester.
    pub fn response(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        let control = control_of(frame, &self.params);
        if let (StackKind::Dcp, Some(Control::Answer(Answer::Bounce { psn }, _))) = (self.kind, control) {
            if self.bounced.len() < 1 << 16 {
                *self.bounced.entry(psn).or_default() += 1;
            }
        }
        match control {
            Some(Control::Answer(..)) => self.last_ask = now,
            Some(Control::Ack { .. }) if self.kind == StackKind::Gbn => self.last_ask = now,
            _ => {}
        }
        if let (StackKind::Gbn, Some(Control::Answer(Answer::Nak { psn }, _))) = (self.kind, control) {
            // A NAK inside the window (above what is acknowledged, at most the highest PSN
            // sent): the requester resends from its PSN.
            let acked = self.rises.back().map(|r| r.0);
            let above = acked.is_none_or(|a| diff24(a, psn) > 0);
            if above && self.highest.is_some_and(|h| diff24(psn, h) >= 0) {
                self.nak = Some((psn, now, number));
            }
        }
        let through = match control {
            // DCP: the eMSN (every message before it is complete); the last one complete.
            Some(Control::Ack { msn, .. }) if self.kind == StackKind::Dcp => msn.wrapping_sub(1) & 0xff_ffff,
            Some(Control::Ack { psn, .. }) => psn,
            _ if self.kind == StackKind::Dcp => return,
            Some(Control::Answer(Answer::Nak { psn } | Answer::Sack { epsn: psn, .. }, _)) => {
                psn.wrapping_sub(1) & 0xff_ffff
            }
            _ => return,
        };
        self.responses += 1;
        if self.rises.back().is_none_or(|&(a, _, _)| diff24(a, through) > 0) {
            if self.rises.len() == RISES_KEPT {
                self.rises.pop_front();
            }
            self.rises.push_back((through, number, now));
            if self.kind == StackKind::Irn {
                self.sacked.retain(|&p| diff24(through, p) > 0);
                if self.highest_sacked.is_some_and(|h| diff24(through, h) <= 0) {
                    self.highest_sacked = None;
                }
                if self.recovery.as_ref().is_some_and(|r| diff24(r.point, through) >= 0) {
                    self.recovery = None;
                }
                let una = (through + 1) & 0xff_ffff;
                if let Some(r) = self.recovery.as_mut() {
                    if diff24(r.next, una) > 0 {
                        r.next = una;
                    }
                }
            }
            // Progress: the timer restarts while packets are outstanding, else stops.
            if self.outstanding() {
                self.start_timer(now, number);
            } else {
                self.timer = None;
            }
            self.timeout_judged = false;
        }
        // (After the cumulative part: a recovery it ends gives way to the one this starts.)
        if let (StackKind::Irn, Some(Control::Answer(Answer::Sack { sacked, .. }, _))) = (self.kind, control) {
            if self.highest.is_some_and(|h| diff24(sacked, h) >= 0) && self.sacked.len() < 1 << 16 {
                self.sacked.insert(sacked);
            }
            if self.highest_sacked.is_none_or(|h| diff24(h, sacked) > 0) {
                self.highest_sacked = Some(sacked);
            }
            if let (None, Some(point), Some(una)) = (&self.recovery, self.highest, self.una()) {
                let next = match self.resent_to {
                    Some(r) if diff24(una, r) > 0 => r,
                    _ => una,
                };
                self.recovery = Some(Recovery { point, next });
            }
        }
    }

    /// A request packet leaving the requester.
    pub fn request(&mut self, number: u64, now: u64, frame: &Frame<'_>) {
        let Some(p) = frame.roce() else { return };
        self.requests += 1;
        let psn = p.bth().psn();
        // What the acknowledgements count: PSNs, or DCP's messages (a data packet's MSN).
        let n = match self.kind {
            StackKind::Dcp => match frame.ext() {
                Ext::Dcp(x)
                    if frame
                        .tos()
                        .is_some_and(|t| dcp::tag(t, self.params.dcp_tag_shift) == dcp::TAG_DATA) =>
                {
                    match x.msn(&p) {
                        Some(m) => m,
                        None => return,
                    }
                }
                _ => return,
            },
            _ => psn,
        };
        self.timing(number, now, psn, n);
        let Some(&(a, ack_frame, ack_time)) = self.rises.iter().find(|&&(a, _, _)| diff24(n, a) >= 0) else {
            return;
        };
        if now > ack_time.saturating_add(self.reaction_ns) {
            let rule = self.rule();
            self.findings.push(Finding {
                kind: FindingKind::Departure,
                rule: rule.id,
                source: rule.source,
                flow: self.flow.clone(),
                frames: vec![ack_frame, number],
                time_ns: now,
                expected: match self.kind {
                    StackKind::Dcp => format!(
                        "no packet of message {a} or before: frame {ack_frame} showed them complete {} µs earlier",
                        (now - ack_time) / 1000
                    ),
                    _ => format!(
                        "no packet of PSN {a} or below: frame {ack_frame} acknowledged them {} µs earlier",
                        (now - ack_time) / 1000
                    ),
                },
                seen: match self.kind {
                    StackKind::Dcp => format!("PSN {psn} of message {n} sent again"),
                    _ => format!("PSN {psn} sent again"),
                },
            });
        }
    }

    /// The timer and Go-Back-N rules for a request packet of PSN `psn` (DCP: of message `msg`).
    fn timing(&mut self, number: u64, now: u64, psn: u32, msg: u32) {
        let resend = self.highest.is_some_and(|h| diff24(psn, h) >= 0);
        if let Some((e, at, nak_frame)) = self.nak {
            if psn == e {
                self.nak = None;
            } else if resend || now > at.saturating_add(self.reaction_ns) {
                // (Within the reaction time only new packets may still be on their way: a
                // resend there is the go-back itself.)
                self.nak = None;
                if diff24(e, psn) > 0 {
                    self.finding(
                        rules::GBN_GO_BACK_SHORT,
                        vec![nak_frame, number],
                        now,
                        format!("PSN {e} sent first: the NAK of frame {nak_frame} names it"),
                        format!("PSN {psn} sent first, {:.1} µs after the NAK", (now - at) as f64 / 1e3),
                    );
                }
            }
        }
        if !resend {
            let idle = !self.outstanding();
            self.highest = Some(psn);
            self.first.get_or_insert(psn);
            if self.kind == StackKind::Dcp && self.highest_msg.is_none_or(|h| diff24(h, msg) > 0) {
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
        } else if self.by_timer(psn, msg) {
            if !self.timeout_judged {
                // Nothing asked for it since it was last sent: the timer's.
                if let Some((start, start_frame, value)) = self.timer {
                    let took = now - start;
                    let seen = self.timeouts_seen.get_or_insert(((took, number), (took, number), 0));
                    if took < seen.0 .0 {
                        seen.0 = (took, number);
                    }
                    if took > seen.1 .0 {
                        seen.1 = (took, number);
                    }
                    seen.2 += 1;
                    if let Some(t) = value {
                        let slack = (t / 10).max(5_000);
                        if took.saturating_add(slack) < t {
                            let rule = match self.kind {
                                StackKind::Gbn => rules::GBN_TIMEOUT_EARLY,
                                StackKind::Irn => rules::IRN_TIMEOUT_EARLY,
                                StackKind::Dcp => rules::DCP_TIMEOUT_EARLY,
                            };
                            self.finding(
                            rule,
                            vec![start_frame, number],
                            now,
                            format!("no timeout before {} µs (the timer, less the larger of 10% and 5 µs) after frame {start_frame} started it", (t - slack) as f64 / 1e3),
                            format!("PSN {psn} resent by the timer {:.1} µs after it started", took as f64 / 1e3),
                        );
                        }
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
                    self.recovery = Some(Recovery {
                        point,
                        next: (psn + 1) & 0xff_ffff,
                    });
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
            let after = (psn + 1) & 0xff_ffff;
            if let Some(r) = self.recovery.as_mut() {
                r.next = after;
            }
            if self.resent_to.is_none_or(|r| diff24(r, after) > 0) {
                self.resent_to = Some(after);
            }
        }
        if self.last_sent.len() >= 1 << 16 {
            let h = self.highest.unwrap_or(psn);
            self.last_sent.retain(|&p, _| diff24(p, h) < 1 << 15);
        }
        self.last_sent.insert(psn, now);
    }
}
