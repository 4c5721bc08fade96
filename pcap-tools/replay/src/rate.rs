//! DCQCN's rate cuts, inferred at the requester's tap (docs/replay.md "Inferred parameters"):
//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015, §3.2) cuts a QP's rate on each CNP,
//! `R_C ← R_C·(1 − α/2)`, α starting at 1 (so the first cut halves it), and paces the QP's
//! packets at that rate. The tap shows the pacing: the rate of the packets the QP sent just
//! before a CNP arrived against the rate of those it sent just after is the cut, reported with
//! its evidence (a NIC with other parameters shows other cuts).
//!
//! The rate then climbs back in steps (§3.2): every `T` (55 µs) after the CNP with no CNP
//! since, the rate increase timer fires and, in fast recovery, `R_C ← (R_T + R_C)/2`, `R_T`
//! being the rate before the cut. The first step after a CNP shows as the first packet gaps,
//! three in a row, shorter than the cut rate's by more than 5%: when it came after the CNP is
//! the inferred `dcqcn_increase_period_ns`, and how far it took the rate back towards the rate
//! before the cut is `dcqcn_recovery_step` (fast recovery: 0.5). A CNP before the step leaves
//! that one unmeasured, as does a QP with nothing to send then (its gaps are not its pacing).

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
    /// A cut measured, waiting for the first increase: the CNP's frame and time, the rates
    /// before and after the cut, the packets since whose gaps were shorter than the cut's rate
    /// allows (frame time, wire bytes) and the packet before them.
    recovering: Option<Recovering>,
    /// Each first increase measured: how long after its CNP, the share of the cut it took back,
    /// the CNP's frame and the increase's first packet time.
    steps: Vec<(u64, f64, u64)>,
    /// The latest request packet (time, wire bytes).
    last: Option<(u64, u64)>,
    /// The pacing rate before the CNP being measured ([`pace`]).
    paced_before: Option<f64>,
    /// A CNP came while a cut was being measured.
    cnp_while_measuring: bool,
}

/// Cuts and increases kept per connection (the inferred values are of these).
const KEPT: usize = 1024;

/// A QP between a cut and the first increase after it.
#[derive(Clone, Debug)]
struct Recovering {
    cnp_frame: u64,
    cnp_time: u64,
    before: f64,
    cut: f64,
    /// Packets since the first of a run of faster gaps (the packet that began it first).
    faster: Vec<(u64, u64)>,
}

/// Gaps in a row, faster than the cut rate by more than 5%, that make an increase.
const STEP_GAPS: usize = 3;

/// The rate of `packets` (time, wire bytes): the bytes after the first over the time they took.
fn rate(packets: &[(u64, u64)]) -> Option<f64> {
    let (first, last) = (packets.first()?, packets.last()?);
    let ns = last.0.checked_sub(first.0).filter(|&d| d > 0)?;
    let bytes: u64 = packets[1..].iter().map(|p| p.1).sum();
    Some(bytes as f64 * 8.0 * 1e9 / ns as f64)
}

/// The pacing rate of `packets`: the median of the rates their gaps show (a packet's wire bytes
/// over the gap after it), so that a QP that waits between bursts (a full window) still shows
/// the rate it is paced at.
fn pace(packets: &[(u64, u64)]) -> Option<f64> {
    let mut r: Vec<f64> = packets
        .windows(2)
        .filter_map(|w| w[1].0.checked_sub(w[0].0).filter(|&g| g > 0).map(|g| w[0].1 as f64 * 8.0 * 1e9 / g as f64))
        .collect();
    if r.is_empty() {
        return None;
    }
    r.sort_by(f64::total_cmp);
    Some(r[r.len() / 2])
}

impl RateCuts {
    /// A request packet of `len` captured bytes leaving at `now`.
    pub fn request(&mut self, now: u64, len: u64) {
        let p = (now, len + WIRE_EXTRA);
        let prev = self.last.replace(p);
        self.recover(prev, p);
        if self.recent.len() == SPAN {
            self.recent.pop_front();
        }
        self.recent.push_back(p);
        if let Some((frame, _, before)) = self.pending {
            self.after.push(p);
            if self.after.len() == SPAN {
                if let Some(after) = rate(&self.after) {
                    if self.cuts.len() < KEPT {
                        self.cuts.push((after / before, before, after, frame));
                    }
                }
                let (cnp_frame, cnp_time, _) = self.pending.expect("a CNP measured");
                let clean = !std::mem::take(&mut self.cnp_while_measuring);
                if let (Some(before), Some(cut), true) = (self.paced_before, pace(&self.after), clean) {
                    if cut < before * 0.95 {
                        self.recovering = Some(Recovering { cnp_frame, cnp_time, before, cut, faster: Vec::new() });
                    }
                }
                self.pending = None;
                self.after.clear();
            }
        }
    }

    /// A CNP arriving at `now` in frame `number` (one at a time: a CNP while one is measured is
    /// not).
    pub fn cnp(&mut self, number: u64, now: u64) {
        // (A CNP before the first increase restarts DCQCN's timer: that one is not measured;
        // nor, from a CNP that came while a cut was being measured, the recovery after it.)
        self.recovering = None;
        if self.pending.is_some() {
            self.cnp_while_measuring = true;
        }
        if self.pending.is_some() || self.recent.len() < SPAN {
            return;
        }
        let recent: Vec<_> = self.recent.iter().copied().collect();
        if let Some(before) = rate(&recent) {
            self.pending = Some((number, now, before));
            self.paced_before = pace(&recent);
        }
    }

    /// After a cut, the packet `p` following `prev`: looks for the first increase.
    fn recover(&mut self, prev: Option<(u64, u64)>, p: (u64, u64)) {
        let (Some(r), Some(prev)) = (self.recovering.as_mut(), prev) else { return };
        let gap = p.0.saturating_sub(prev.0).max(1);
        let inst = prev.1 as f64 * 8.0 * 1e9 / gap as f64;
        if inst <= r.cut * 1.05 {
            r.faster.clear();
            return;
        }
        if r.faster.is_empty() {
            r.faster.push(prev);
        }
        r.faster.push(p);
        if r.faster.len() > STEP_GAPS {
            if let Some(now_rate) = rate(&r.faster) {
                let back = (now_rate - r.cut) / (r.before - r.cut);
                let after = r.faster[0].0.saturating_sub(r.cnp_time);
                if self.steps.len() < KEPT {
                    self.steps.push((after, back, r.cnp_frame));
                }
            }
            self.recovering = None;
        }
    }

    /// The first increase after a cut, in the median over the cuts measured.
    pub fn increases(&self) -> Vec<Inferred> {
        if self.steps.is_empty() {
            return Vec::new();
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[(v.len() - 1) / 2]
        };
        let period = median(self.steps.iter().map(|s| s.0 as f64).collect());
        let back = median(self.steps.iter().map(|s| s.1).collect());
        let (first_after, first_back, frame) = self.steps[0];
        vec![
            Inferred {
                name: "dcqcn_increase_period_ns",
                value: period.round(),
                evidence: format!(
                    "the median of {} cut(s) followed by an increase before the next CNP (the first: the rate rose {:.1} \
                     µs after the CNP of frame {frame}); DCQCN's T: 55 µs",
                    self.steps.len(),
                    first_after as f64 / 1e3
                ),
            },
            Inferred {
                name: "dcqcn_recovery_step",
                value: (back * 100.0).round() / 100.0,
                evidence: format!(
                    "the median of {} first increases (the first took back {:.2} of the cut after the CNP of frame \
                     {frame}); DCQCN's fast recovery, R_C <- (R_T + R_C)/2: 0.5",
                    self.steps.len(),
                    first_back
                ),
            },
        ]
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
