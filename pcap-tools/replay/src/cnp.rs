//! CNP pacing at the responder's tap (docs/replay.md "CNP pacing"): DCQCN's notification point
//! (Zhu et al., SIGCOMM 2015, §3.1: the receiver NIC) sends at most one CNP per flow (here per
//! connection: per QP) every N µs, however many CE-marked packets arrive; the paper's N is
//! 50 µs, the simulator's `--cnp-interval` default. Two CNPs of one connection closer than the
//! interval, less the larger of 10% and 5 µs, are a departure. The shortest spacing seen is
//! the inferred `cnp_interval_ns`.
//!
//! At the requester's tap and at a fabric tap the CNPs arrive (or cross) after the network: a
//! loss only spreads them, but a queue that delayed one more than the next brings them closer,
//! so two closer than the interval are `ambiguous` there, and nothing is inferred.

use crate::rules;
use crate::{Finding, FindingKind, Inferred};

/// One connection's CNPs, as its responder's NIC sent them.
pub(super) struct CnpPacing {
    flow: String,
    interval_ns: u64,
    last: Option<(u64, u64)>,
    /// The shortest spacing seen and its two frames; how many CNPs.
    shortest: Option<(u64, u64, u64)>,
    count: u64,
    /// Where the tap is: `None` beside the responder's NIC, else why it cannot prove it.
    away: Option<&'static str>,
    pub findings: Vec<Finding>,
}

impl CnpPacing {
    /// `away`: `None` at the responder's tap, else the caveat of the tap (e.g. "this tap is
    /// beside the requester").
    pub fn new(flow: String, interval_ns: u64, away: Option<&'static str>) -> CnpPacing {
        CnpPacing { flow, interval_ns, last: None, shortest: None, count: 0, away, findings: Vec::new() }
    }

    /// A CNP leaving the responder's NIC for this connection.
    pub fn cnp(&mut self, number: u64, now: u64) {
        self.count += 1;
        if let Some((t, f)) = self.last {
            let gap = now.saturating_sub(t);
            if self.shortest.is_none_or(|s| gap < s.0) {
                self.shortest = Some((gap, f, number));
            }
            let slack = rules::tolerance(self.interval_ns);
            if gap.saturating_add(slack) < self.interval_ns {
                let rule = rules::DCQCN_CNP_FAST;
                let seen = format!("a CNP {:.1} µs after it", gap as f64 / 1e3);
                let (kind, seen) = match self.away {
                    None => (FindingKind::Departure, seen),
                    Some(here) => (
                        FindingKind::Ambiguous,
                        format!(
                            "{seen}: either the responder's NIC sent them too close, or the network delayed the first \
                             more than the second ({here})"
                        ),
                    ),
                };
                let expected = format!(
                    "no CNP within {:.1} µs of the one of frame {f} (the interval, less the larger of 10% and 5 µs)",
                    (self.interval_ns - slack) as f64 / 1e3
                );
                self.findings.push(Finding::of(kind, rule, &self.flow, vec![f, number], now, expected, seen));
            }
        }
        self.last = Some((now, number));
    }

    /// The inferred interval, when two CNPs or more were seen.
    pub fn inferred(&self) -> Option<Inferred> {
        if self.away.is_some() {
            return None;
        }
        let (gap, a, b) = self.shortest?;
        Some(Inferred {
            name: "cnp_interval_ns",
            value: gap as f64,
            evidence: format!(
                "{} CNPs; the closest two {:.1} µs apart (frames {a}, {b})",
                self.count,
                gap as f64 / 1e3
            ),
        })
    }
}
