//! The requester's half of replay (docs/replay.md), at the requester's own tap: every
//! acknowledgement the tap shows arriving is what the requester knew, and every request packet
//! it shows leaving is what the requester did with it. A Go-Back-N or IRN requester resends only
//! what is not acknowledged: it goes back to a NAK's PSN or, on a timeout, to the oldest
//! unacknowledged one, never below what an ACK (or a NAK, which acknowledges the PSNs before the
//! one it names) has covered. A DCP requester never resends a packet of a message its receiver's
//! eMSN has passed (the message is complete).

use rocescope_codec::ext::{dcp, Ext};
use rocescope_codec::{Frame, Params};
use rocescope_stacks::StackKind;

use crate::answer::{control_of, diff24, Answer, Control};
use crate::rules::{self, Rule};
use crate::{Finding, FindingKind};

/// Rises of the acknowledged PSN remembered (packets sent again from further back are not judged).
const RISES_KEPT: usize = 1024;

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
    pub requests: u64,
    pub responses: u64,
    pub findings: Vec<Finding>,
}

impl RequesterJudge {
    pub fn new(kind: StackKind, flow: String, params: Params, reaction_ns: u64) -> RequesterJudge {
        RequesterJudge { kind, flow, params, reaction_ns, rises: Default::default(), requests: 0, responses: 0, findings: Vec::new() }
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
        let through = match control_of(frame, &self.params) {
            // DCP: the eMSN (every message before it is complete); the last one complete.
            Some(Control::Ack { msn, .. }) if self.kind == StackKind::Dcp => msn.wrapping_sub(1) & 0xff_ffff,
            Some(Control::Ack { psn, .. }) => psn,
            _ if self.kind == StackKind::Dcp => return,
            Some(Control::Answer(Answer::Nak { psn } | Answer::Sack { epsn: psn, .. }, _)) => psn.wrapping_sub(1) & 0xff_ffff,
            _ => return,
        };
        self.responses += 1;
        if self.rises.back().is_none_or(|&(a, _, _)| diff24(a, through) > 0) {
            if self.rises.len() == RISES_KEPT {
                self.rises.pop_front();
            }
            self.rises.push_back((through, number, now));
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
                Ext::Dcp(x) if frame.tos().is_some_and(|t| dcp::tag(t, self.params.dcp_tag_shift) == dcp::TAG_DATA) => match x.msn(&p) {
                    Some(m) => m,
                    None => return,
                },
                _ => return,
            },
            _ => psn,
        };
        let Some(&(a, ack_frame, ack_time)) = self.rises.iter().find(|&&(a, _, _)| diff24(n, a) >= 0) else { return };
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
                    StackKind::Dcp => format!("no packet of message {a} or before: frame {ack_frame} showed them complete {} µs earlier", (now - ack_time) / 1000),
                    _ => format!("no packet of PSN {a} or below: frame {ack_frame} acknowledged them {} µs earlier", (now - ack_time) / 1000),
                },
                seen: match self.kind {
                    StackKind::Dcp => format!("PSN {psn} of message {n} sent again"),
                    _ => format!("PSN {psn} sent again"),
                },
            });
        }
    }
}
