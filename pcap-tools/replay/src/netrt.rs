//! NetRT's switches as a tap between the ToRs sees them (docs/replay.md "NetRT"; NetRT paper,
//! seed 003 §III-B): the source ToR resends from its pool only what a retransmission request
//! asked for, and answers with an unfulfilled request only for a PSN a request asked for.
//!
//! Requests travel from the destination ToR to the source ToR. A request lists every hole below
//! the highest PSN it says is held, so a resend (or an unfulfilled request) of a PSN below the
//! latest request's highest held one that no request seen asked for is a departure, whatever
//! path other requests took (a fabric that sprays may send some past another tap). Until the
//! tap has seen a request of the flow nothing is judged. A tap on one of several paths (the
//! flow's data did not all cross it: a sprayed fabric) may miss requests too, and a switch that
//! gave up and dropped what it held asks again for PSNs below an earlier request's highest held
//! one: there what the rules find is ambiguous. The hosts' Go-Back-N is judged as `gbn`'s; the
//! switches' messages and their marked resends are kept from those judges (a marked copy is the
//! source ToR's, not the requester's).

use std::collections::BTreeSet;

use rocescope_codec::ib::psn;

use crate::rules;
use crate::{Finding, FindingKind};

/// One connection's NetRT traffic at one tap.
pub(super) struct NetrtSwitches {
    flow: String,
    /// PSNs the requests seen asked for, at or above the latest request's ePSN (below it the
    /// source ToR frees its duplicates); at most a bitmap's worth past it.
    asked: BTreeSet<u32>,
    epsn: Option<u32>,
    /// The highest PSN the latest request (the one with the latest ePSN) says is held: every
    /// hole below it was asked for in that request, whatever path the other requests took.
    top: Option<u32>,
    pub requests: u64,
    pub resends: u64,
    pub unfulfilled: u64,
    pub findings: Vec<Finding>,
}

impl NetrtSwitches {
    pub fn new(flow: String) -> NetrtSwitches {
        NetrtSwitches {
            flow,
            asked: BTreeSet::new(),
            epsn: None,
            top: None,
            requests: 0,
            resends: 0,
            unfulfilled: 0,
            findings: Vec::new(),
        }
    }

    /// A retransmission request asking for `asked` (its ePSN first) whose highest held PSN is
    /// `top` (`None`: an empty bitmap).
    pub fn request(&mut self, epsn: u32, top: Option<u32>, asked: impl Iterator<Item = u32>) {
        self.requests += 1;
        if self.epsn.is_none_or(|e| !psn::lt(epsn, e)) {
            self.epsn = Some(epsn);
            self.top = top;
            self.asked.retain(|&p| !psn::lt(p, epsn));
        }
        self.asked.extend(asked);
    }

    fn asked_for(&self, p: u32) -> bool {
        self.asked.contains(&p) || self.epsn.is_some_and(|e| psn::lt(p, e) && psn::diff(p, e) < 1 << 20)
    }

    /// A marked copy of PSN `p` (the source ToR's resend).
    pub fn resend(&mut self, number: u64, now: u64, p: u32) {
        self.resends += 1;
        let seen = format!(
            "PSN {p} resent with the in-network mark; the requests seen (which pass this tap) asked for {}",
            describe(&self.asked)
        );
        self.unless_asked(rules::NETRT_RESEND_UNASKED, number, now, p, "a resend", seen);
    }

    /// An unfulfilled request for PSN `u`.
    pub fn unfulfilled(&mut self, number: u64, now: u64, u: u32) {
        self.unfulfilled += 1;
        let seen = format!("one for PSN {u}; the requests seen asked for {}", describe(&self.asked));
        self.unless_asked(rules::NETRT_UNFULFILLED_UNASKED, number, now, u, "an unfulfilled request", seen);
    }

    /// The tap is on one of several paths (the flow's data did not all cross it): a request that
    /// asked may have taken another, so what the rules found is ambiguous, not a departure.
    pub fn one_of_several_paths(&mut self) {
        for f in &mut self.findings {
            f.kind = FindingKind::Ambiguous;
            f.seen.push_str(" (this tap is on one of several paths: a request that asked may have crossed another)");
        }
    }

    /// A departure of `rule` at frame `number` when this tap has seen the flow's requests and
    /// none asked for `p` (`what` the source ToR sent for it).
    fn unless_asked(&mut self, rule: rules::Rule, number: u64, now: u64, p: u32, what: &str, seen: String) {
        // (Only below the latest request's highest held PSN: a hole above it may have been
        // asked for by a request that took another path, when the fabric sprays.)
        let below_top = self.top.is_some_and(|t| psn::lt(p, t));
        if self.requests == 0 || !below_top || self.asked_for(p) {
            return;
        }
        let expected = format!("{what} for PSN {p} only after a retransmission request asking for it");
        self.findings.push(Finding::of(FindingKind::Departure, rule, &self.flow, vec![number], now, expected, seen));
    }
}

/// A few PSNs of a set, for a message.
fn describe(s: &BTreeSet<u32>) -> String {
    let mut v: Vec<String> = s.iter().take(6).map(|p| p.to_string()).collect();
    if s.len() > 6 {
        v.push(format!("… ({} in all)", s.len()));
    }
    if v.is_empty() {
        "none at or past the latest ePSN".into()
    } else {
        v.join(", ")
    }
}
