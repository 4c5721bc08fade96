//! Flor's receiver at its own tap (docs/replay.md "Flor"; seed 002 §5.1, Appendix A.1; notes on
//! the ACK triggers in docs/stacks.md "Flor"). The receiver acknowledges every WQE it receives in
//! a coalesced software ACK: at once on the 32nd WQE, at 32 KiB, on a WQE with the hint or an
//! out-of-order reliable number, and otherwise when the 120 µs timer armed at the batch's first
//! WQE fires. So every WQE it received is in an ACK that leaves within 120 µs of it; one that is
//! not, by more than the larger of 10 % and 5 µs, is a departure (`flor.ack-late`).
//!
//! The tap beside the receiver sees what its UC QP got: packets in PSN order form WQEs (First …
//! Last, or Only); a packet behind the expected PSN is discarded, and a gap loses the WQE being
//! received (UC), so only a WQE whose packets all arrived in sequence is owed an ACK. A WRITE
//! chunk is acknowledged by its immediate (its reliable number, echoed), a SEND by its global
//! number (its first packet's header); an ADDR_RESP (the receiver's answer, on the reverse data
//! QP) is owed none. A WQE still waiting when the capture ends is not judged unless its time ran
//! out before the end. Memory: the WQEs awaiting an ACK (at most what
//! arrives in 120 µs, bounded by [`PENDING`]).

use std::collections::VecDeque;

use rocescope_codec::ext::flor::{Acked, Flor, SendType};
use rocescope_codec::ib::psn;

use crate::rules;
use crate::{Finding, FindingKind};

/// The ACK timer (seed 002 §5.1: 120 µs).
pub const ACK_TIMER_NS: u64 = 120_000;
/// WQEs awaiting an ACK kept at most (the oldest are judged first).
pub const PENDING: usize = 1 << 16;

/// What an ACK names a WQE by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Write(u32),
    Send(u64),
}

/// One Flor data QP at its receiver's tap.
pub(super) struct FlorAckJudge {
    flow: String,
    /// The PSN UC expects next.
    epsn: Option<u32>,
    /// The WQE being received: a SEND's global number (from its first packet), or a WRITE.
    wqe: Option<Option<u64>>,
    /// WQEs received and not yet acknowledged: key, frame of their last packet, time.
    pending: VecDeque<(Key, u64, u64)>,
    pub requests: u64,
    pub acks: u64,
    pub findings: Vec<Finding>,
}

impl FlorAckJudge {
    pub fn new(flow: String) -> FlorAckJudge {
        FlorAckJudge {
            flow,
            epsn: None,
            wqe: None,
            pending: VecDeque::new(),
            requests: 0,
            acks: 0,
            findings: Vec::new(),
        }
    }

    /// Judges every WQE whose time ran out before `now`.
    fn expire(&mut self, now: u64) {
        let limit = ACK_TIMER_NS + rules::tolerance(ACK_TIMER_NS);
        while let Some(&(key, frame, at)) = self.pending.front() {
            if now.saturating_sub(at) <= limit {
                break;
            }
            self.pending.pop_front();
            let what = match key {
                Key::Write(rn) => format!("the WRITE chunk with reliable number {rn:#x}"),
                Key::Send(gn) => format!("the SEND with global number {gn}"),
            };
            let expected = format!(
                "every WQE received acknowledged within the ACK timer ({} µs, plus the larger of 10 % and 5 µs)",
                ACK_TIMER_NS / 1000
            );
            let seen = format!("{what}, received whole at frame {frame}, in no ACK {} µs later", limit / 1000);
            self.findings.push(Finding::of(
                FindingKind::Departure,
                rules::FLOR_ACK_LATE,
                &self.flow,
                vec![frame],
                at + limit,
                expected,
                seen,
            ));
        }
    }

    /// A data packet of the QP: its PSN, opcode and Flor part.
    pub fn data(&mut self, number: u64, now: u64, n: u32, opcode: u8, flor: Option<&Flor>, whole: bool) {
        self.requests += 1;
        self.expire(now);
        if let Some(e) = self.epsn {
            let d = psn::diff(e, n);
            if d < 0 {
                return; // behind: discarded
            }
            if d > 0 {
                self.wqe = None; // a gap loses the WQE being received
            }
        }
        self.epsn = Some(psn::add(n, 1));
        if !whole {
            self.wqe = None;
            return;
        }
        // (SEND First/Middle/Last/Only; WRITE First/Middle/Last-with-immediate/Only-with-immediate.)
        let (starts, ends, send) = match opcode & 0x1f {
            0x00 => (true, false, true),
            0x01 => (false, false, true),
            0x02 | 0x03 => (false, true, true),
            0x04 | 0x05 => (true, true, true),
            0x06 => (true, false, false),
            0x07 => (false, false, false),
            0x08 | 0x09 => (false, true, false),
            0x0A | 0x0B => (true, true, false),
            _ => return,
        };
        if starts {
            // (An ADDR_RESP, which the receiver sends the sender on its data QP, is not
            // acknowledged: the address exchange is acknowledged only by the ADDR_REQ's ACK.)
            let gn = match flor {
                Some(Flor::Send(h)) if h.kind != SendType::AddrResp => Some(h.gn),
                _ => None,
            };
            self.wqe = Some(gn);
        } else if self.wqe.is_none() {
            return; // a Middle or Last with no WQE begun: discarded
        }
        if !ends {
            return;
        }
        let key = match (self.wqe.take(), flor) {
            (Some(Some(gn)), _) if send => Key::Send(gn),
            (Some(_), Some(Flor::Write(rn))) if !send => Key::Write(rn.imm()),
            _ => return, // a SEND without a Flor header, a WRITE without an immediate: no ACK owed
        };
        if self.pending.len() >= PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back((key, number, now));
    }

    /// A software ACK leaving the receiver at `now`, listing `acked`.
    pub fn ack(&mut self, now: u64, acked: &[Acked]) {
        self.acks += 1;
        self.expire(now);
        for a in acked {
            let key = match *a {
                Acked::Write { rn } => Key::Write(rn),
                Acked::Send { gn } => Key::Send(gn),
            };
            if let Some(i) = self.pending.iter().position(|&(k, _, _)| k == key) {
                self.pending.remove(i);
            }
        }
    }

    /// The capture ended at `end`.
    pub fn finish(&mut self, end: u64) {
        self.expire(end);
    }
}
