//! DCQCN's rate cuts, inferred at the requester's tap (docs/replay.md "Inferred parameters"):
//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015, §3.2) cuts a QP's rate on each CNP,
//! `R_C ← R_C·(1 − α/2)`, α starting at 1 (so the first cut halves it), and paces the QP's
//! packets at that rate. The tap shows the pacing: the rate of the packets the QP sent just
//! before a CNP arrived against the rate of those it sent just after is the cut, reported with
//! its evidence (a NIC with other parameters shows other cuts).

use std::collections::VecDeque;

use crate::Inferred;

/// Packets whose rate is measured on each side of a CNP (their gaps: one fewer).
const SPAN: usize = 9;

/// Bytes a frame takes on the wire beyond what a capture records: FCS, preamble and the
/// inter-frame gap (what the NIC's pacing counts).
const WIRE_EXTRA: u64 = 4 + 8 + 12;

/// One connection's rate around its CNPs.
#[derive(Default)]
pub(super) struct RateCuts {
    /// The latest request packets: time and bytes on the wire.
    recent: VecDeque<(u64, u64)>,
    /// A CNP being measured: its frame, time, and the rate before it (bits/s).
    pending: Option<(u64, u64, f64)>,
    after: Vec<(u64, u64)>,
    /// Each cut measured: the rate after over the rate before, the rates, the CNP's frame.
    cuts: Vec<(f64, f64, f64, u64)>,
}

/// The rate of `packets` (time, wire bytes): the bytes after the first over the time they took.
fn rate(packets: &[(u64, u64)]) -> Option<f64> {
    let (first, last) = (packets.first()?, packets.last()?);
    let ns = last.0.checked_sub(first.0).filter(|&d| d > 0)?;
    let bytes: u64 = packets[1..].iter().map(|p| p.1).sum();
    Some(bytes as f64 * 8.0 * 1e9 / ns as f64)
}

impl RateCuts {
    /// A request packet of `len` captured bytes leaving at `now`.
    pub fn request(&mut self, now: u64, len: u64) {
        let p = (now, len + WIRE_EXTRA);
        if self.recent.len() == SPAN {
            self.recent.pop_front();
        }
        self.recent.push_back(p);
        if let Some((frame, _, before)) = self.pending {
            self.after.push(p);
            if self.after.len() == SPAN {
                if let Some(after) = rate(&self.after) {
                    self.cuts.push((after / before, before, after, frame));
                }
                self.pending = None;
                self.after.clear();
            }
        }
    }

    /// A CNP arriving at `now` in frame `number` (one at a time: a CNP while one is measured is
    /// not).
    pub fn cnp(&mut self, number: u64, now: u64) {
        if self.pending.is_some() || self.recent.len() < SPAN {
            return;
        }
        let recent: Vec<_> = self.recent.iter().copied().collect();
        if let Some(before) = rate(&recent) {
            self.pending = Some((number, now, before));
        }
    }

    /// The first cut, with the others as evidence.
    pub fn inferred(&self) -> Option<Inferred> {
        let &(first, before, after, frame) = self.cuts.first()?;
        let lo = self.cuts.iter().map(|c| c.0).fold(f64::INFINITY, f64::min);
        let hi = self.cuts.iter().map(|c| c.0).fold(0.0, f64::max);
        Some(Inferred {
            name: "dcqcn_rate_cut",
            value: (first * 100.0).round() / 100.0,
            evidence: format!(
                "the rate {:.1} Gb/s before the CNP of frame {frame}, {:.1} Gb/s after (the packets sent on either side); \
                 {} CNP(s) measured, cuts {:.2} to {:.2} (DCQCN's first cuts the rate by α/2 with α = 1: 0.5)",
                before / 1e9,
                after / 1e9,
                self.cuts.len(),
                lo,
                hi
            ),
        })
    }
}
