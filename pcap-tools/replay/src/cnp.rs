//! CNP pacing at the responder's tap (docs/replay.md "CNP pacing"): DCQCN's notification point
//! (Zhu et al., SIGCOMM 2015, §3.1: the receiver NIC) sends at most one CNP per flow (here per
//! connection: per QP) every N µs, however many CE-marked packets arrive; the paper's N is
//! 50 µs, the simulator's `--cnp-interval` default. Two CNPs of one connection closer than the
//! interval, less the larger of 10% and 5 µs, are a departure. The shortest spacing seen is
//! the inferred `cnp_interval_ns`.

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
    pub findings: Vec<Finding>,
}

impl CnpPacing {
    pub fn new(flow: String, interval_ns: u64) -> CnpPacing {
        CnpPacing { flow, interval_ns, last: None, shortest: None, count: 0, findings: Vec::new() }
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
                self.findings.push(Finding::of(FindingKind::Departure, rule, &self.flow, vec![f, number], now, format!(
                        "no CNP within {:.1} µs of the one of frame {f} (the interval, less the larger of 10% and 5 µs)",
                        (self.interval_ns - slack) as f64 / 1e3
                    ), format!("a CNP {:.1} µs after it", gap as f64 / 1e3)));
            }
        }
        self.last = Some((now, number));
    }

    /// The inferred interval, when two CNPs or more were seen.
    pub fn inferred(&self) -> Option<Inferred> {
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
