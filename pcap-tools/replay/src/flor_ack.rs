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
//!
//! Two of the four triggers are the WQE's own: its hint, and a reliable number out of order (a
//! SEND's not one past the highest SEND number received; a WRITE chunk's neither continuing
//! the previous chunk nor a new message's first, in `flor_unit_size` units). A WQE with either
//! must be in an ACK that leaves within the reaction time (`flor.ack-slow`), and is then not
//! judged again by the timer. The order test needs a previous SEND (chunk) of the capture, so
//! the first of each kind is not judged by it. The other two triggers (the 32nd WQE, 32 KiB)
//! depend on which WQEs the receiver had put in its batch when an ACK was already on its way
//! out, which a tap beside it cannot always tell: they are left to the timer's rule.

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

/// The SEND being received: its global and reliable numbers and hint (its first packet's
/// header), or `None` (a WRITE, or a SEND without a Flor header).
type SendInfo = Option<(u64, u32, bool)>;

fn describe(key: Key) -> String {
    match key {
        Key::Write(rn) => format!("the WRITE chunk with reliable number {rn:#x}"),
        Key::Send(gn) => format!("the SEND with global number {gn}"),
    }
}

/// One Flor data QP at its receiver's tap.
pub(super) struct FlorAckJudge {
    flow: String,
    reaction_ns: u64,
    /// `flor_unit_size`: a WRITE chunk's offsets and lengths are in these units.
    unit: u32,
    /// The PSN UC expects next.
    epsn: Option<u32>,
    /// The WQE being received, and its payload bytes so far.
    wqe: Option<SendInfo>,
    bytes: u64,
    /// The highest SEND reliable number received; the last WRITE chunk's message and end.
    max_send_rn: Option<u32>,
    last_write: Option<(u32, u32)>,
    /// WQEs received and not yet acknowledged: key, frame of their last packet, time.
    pending: VecDeque<(Key, u64, u64)>,
    /// Of those, the ones owed an ACK at once, and why.
    at_once: VecDeque<(Key, u64, u64, &'static str)>,
    pub requests: u64,
    pub acks: u64,
    pub findings: Vec<Finding>,
}

impl FlorAckJudge {
    pub fn new(flow: String, reaction_ns: u64, unit: u32) -> FlorAckJudge {
        FlorAckJudge {
            flow,
            reaction_ns,
            unit: unit.max(1),
            epsn: None,
            wqe: None,
            bytes: 0,
            max_send_rn: None,
            last_write: None,
            pending: VecDeque::new(),
            at_once: VecDeque::new(),
            requests: 0,
            acks: 0,
            findings: Vec::new(),
        }
    }

    /// Judges every WQE whose time ran out before `now`.
    fn expire(&mut self, now: u64) {
        while let Some(&(key, frame, at, why)) = self.at_once.front() {
            if now.saturating_sub(at) <= self.reaction_ns {
                break;
            }
            self.at_once.pop_front();
            // (Judged here, not again by the timer.)
            self.pending.retain(|&(k, _, _)| k != key);
            let expected = "an ACK at once (within the reaction time) on a WQE with the hint or an out-of-order \
                            reliable number"
                .to_string();
            let seen = format!(
                "{}, received whole at frame {frame} ({why}), in no ACK {} µs later",
                describe(key),
                self.reaction_ns as f64 / 1000.0
            );
            self.findings.push(Finding::of(
                FindingKind::Departure,
                rules::FLOR_ACK_SLOW,
                &self.flow,
                vec![frame],
                at + self.reaction_ns,
                expected,
                seen,
            ));
        }
        let limit = ACK_TIMER_NS + rules::tolerance(ACK_TIMER_NS);
        while let Some(&(key, frame, at)) = self.pending.front() {
            if now.saturating_sub(at) <= limit {
                break;
            }
            self.pending.pop_front();
            let what = describe(key);
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

    /// A data packet of the QP: its PSN, opcode, Flor part and payload bytes.
    pub fn data(&mut self, number: u64, now: u64, n: u32, opcode: u8, flor: Option<&Flor>, whole: bool, len: usize) {
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
            let info = match flor {
                Some(Flor::Send(h)) if h.kind != SendType::AddrResp => Some((h.gn, h.rn, h.hint())),
                _ => None,
            };
            self.wqe = Some(info);
            self.bytes = 0;
        } else if self.wqe.is_none() {
            return; // a Middle or Last with no WQE begun: discarded
        }
        self.bytes += len as u64;
        if !ends {
            return;
        }
        let (key, why) = match (self.wqe.take(), flor) {
            (Some(Some((gn, rn, hint))), _) if send => (Key::Send(gn), self.send_trigger(rn, hint)),
            (Some(_), Some(Flor::Write(rn))) if !send => (Key::Write(rn.imm()), self.write_trigger(rn)),
            _ => return, // a SEND without a Flor header, a WRITE without an immediate: no ACK owed
        };
        if self.pending.len() >= PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back((key, number, now));
        if let Some(why) = why {
            if self.at_once.len() >= PENDING {
                self.at_once.pop_front();
            }
            self.at_once.push_back((key, number, now, why));
        }
    }

    /// Whether a SEND with reliable number `rn` triggers an ACK at once, and why.
    fn send_trigger(&mut self, rn: u32, hint: bool) -> Option<&'static str> {
        let ooo = self.max_send_rn.map(|m| rn != m.wrapping_add(1));
        if self.max_send_rn.is_none_or(|m| (rn.wrapping_sub(m) as i32) > 0) {
            self.max_send_rn = Some(rn);
        }
        if hint {
            Some("its hint")
        } else if ooo == Some(true) {
            Some("its SEND number out of order")
        } else {
            None
        }
    }

    /// Whether a WRITE chunk `rn` of the WQE's bytes triggers an ACK at once, and why.
    fn write_trigger(&mut self, rn: &rocescope_codec::ext::flor::WriteRn) -> Option<&'static str> {
        let ooo = self
            .last_write
            .map(|(mid, end)| !((rn.mid == mid && rn.chunk_off == end) || (rn.mid != mid && rn.chunk_off == 0)));
        let units = self.bytes.div_ceil(self.unit as u64).max(1) as u32;
        self.last_write = Some((rn.mid, rn.chunk_off.wrapping_add(units)));
        if rn.hint {
            Some("its hint")
        } else if ooo == Some(true) {
            Some("its chunk out of order")
        } else {
            None
        }
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
            if let Some(i) = self.at_once.iter().position(|&(k, _, _, _)| k == key) {
                self.at_once.remove(i);
            }
        }
    }

    /// The capture ended at `end`.
    pub fn finish(&mut self, end: u64) {
        self.expire(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::ext::flor::WriteRn;
    use rocescope_codec::ImmSplit;

    fn chunk(hint: bool, mid: u32, chunk_off: u32) -> Flor {
        Flor::Write(WriteRn { hint, mid, chunk_off, split: ImmSplit(1, 21, 10) })
    }

    #[test]
    fn a_hinted_or_out_of_order_chunk_is_owed_an_ack_at_once() {
        let mut j = FlorAckJudge::new("f".into(), 5_000, 4096);
        // WRITE Only with Immediate (0x0B): chunk 0 of message 1, 8 KiB (2 units), no hint: the
        // first of its kind, not judged by the order test; no ACK is owed at once.
        let c0 = chunk(false, 1, 0);
        j.data(1, 0, 100, 0x0B, Some(&c0), true, 8192);
        // Chunk 2 continues it (offset 2): in order, no hint.
        let c1 = chunk(false, 1, 2);
        j.data(2, 1_000, 101, 0x0B, Some(&c1), true, 4096);
        // Chunk 5 skips offsets 3-4: out of order; its ACK comes 2 µs later: fine.
        let c2 = chunk(false, 1, 5);
        j.data(3, 2_000, 102, 0x0B, Some(&c2), true, 4096);
        let rn = |c: &Flor| match c {
            Flor::Write(r) => Acked::Write { rn: r.imm() },
            _ => unreachable!(),
        };
        j.ack(4_000, &[rn(&c0), rn(&c1), rn(&c2)]);
        // A hinted chunk whose ACK comes 9 µs later: a departure at its frame.
        let c3 = chunk(true, 1, 6);
        j.data(4, 10_000, 103, 0x0B, Some(&c3), true, 4096);
        j.ack(19_000, &[rn(&c3)]);
        assert_eq!(j.findings.len(), 1, "{:?}", j.findings.iter().map(|f| &f.seen).collect::<Vec<_>>());
        assert_eq!((j.findings[0].rule, j.findings[0].frames.clone()), ("flor.ack-slow", vec![4]));
        assert!(j.findings[0].seen.contains("its hint"), "{}", j.findings[0].seen);
        // Out of order and never acknowledged: one finding (slow), not a second one at the timer.
        let c4 = chunk(false, 2, 3);
        j.data(5, 20_000, 104, 0x0B, Some(&c4), true, 4096);
        j.finish(400_000);
        assert_eq!(j.findings.len(), 2);
        assert!(j.findings[1].seen.contains("out of order"), "{}", j.findings[1].seen);
    }
}
