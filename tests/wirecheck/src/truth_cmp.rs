//! The ground truth (`docs/truth.md`, `rocescope_sim::truth::Truth`) against the capture it
//! describes: every claim the truth makes about what a tap saw must be what the frames show.
//!
//! - `taps[].frames[]`: each record's frame number exists on that tap's interface with that
//!   PSN, flow and kind (`ho: true` ↔ a header-only packet), and nothing else was captured.
//! - `flows[].retransmissions[]` at the flow's origin tap (the NIC it leaves) are exactly the
//!   frames whose PSN left that tap before ([`crate::ledger::sent`]); at the destination's tap
//!   and taps inside the fabric each PSN's count is the copies seen there (whole or
//!   header-only), or one fewer (whether the tap saw the first copy is not on
//!   the wire when it may have been lost upstream).
//! - `flows[].capture_gaps[]`: the PSNs that reached the destination's tap whole of which the
//!   tap saw no copy (whole or header-only), when the destination has a tap.
//! - `flows[].losses[]`, per PSN, equal what left the origin tap and never reached the
//!   destination tap whole ([`crate::ledger::lost`]), when both ends have a tap; each
//!   header-only form that arrived is a loss the truth says was trimmed.

use std::collections::{BTreeMap, BTreeSet};

use rocescope_sim::truth::{Fate, Kind, LossCause, Origin, TapName, Truth};

use super::ledger;
use super::packet::{Pkt, PktKind};
use super::wire::{Dir, TapSpec, Wire};

/// The tap layout a truth document records (`taps[]`: name and interface; the sender and
/// receiver taps sit at the first connection's requester and responder, `docs/truth.md`: `s0`
/// and `r0` on the dumbbell, the first pair of `--pattern` on a leaf-spine, whose first
/// requester need not be host 0; the fabric tap inside).
pub fn taps(t: &Truth) -> Vec<TapSpec> {
    let s0 = t.connections.first().map(|c| c.requester.ip);
    let r0 = t.connections.first().map(|c| c.responder.ip);
    t.taps
        .iter()
        .map(|tap| {
            let (name, host) = match tap.name {
                TapName::Sender => ("sender", s0),
                TapName::Receiver => ("receiver", r0),
                TapName::Fabric => ("fabric", None),
            };
            TapSpec { interface: tap.interface, name: name.into(), host }
        })
        .collect()
}

fn kind_matches(k: Kind, ho: bool, p: &Pkt) -> bool {
    match (k, p.kind) {
        (Kind::Data, PktKind::HeaderOnly) => ho,
        (Kind::HoBounce, PktKind::HeaderOnly) => true,
        (Kind::Data, PktKind::Data) => !ho,
        (Kind::ReadResponse, PktKind::ReadResponse)
        | (Kind::Ack, PktKind::Ack)
        | (Kind::Nak, PktKind::Nak)
        | (Kind::Sack, PktKind::Sack)
        | (Kind::Cnp, PktKind::Cnp) => true,
        (Kind::Other, _) => true,
        _ => false,
    }
}

/// What a comparison counted (for the tests' and the grid's logs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub frames: u64,
    /// Retransmissions compared at origin taps.
    pub retx: u64,
    /// Losses compared (per PSN, both directions, connections with both ends tapped).
    pub losses: u64,
    /// Capture gaps compared (PSNs that arrived of which a tap saw no copy).
    pub gaps: u64,
}

/// Compares; the first disagreements found, or what was compared.
pub fn compare(t: &Truth, w: &Wire) -> Result<Counts, String> {
    let mut errs: Vec<String> = Vec::new();
    let mut n = Counts::default();
    let by_number: BTreeMap<u64, &Pkt> = w.pkts.iter().map(|p| (p.number, p)).collect();
    // NetRT: the switch's resends, and the host copies a delivered resend stood in for.
    let stood_in: BTreeSet<u32> = t
        .sim
        .transmissions
        .iter()
        .filter(|x| x.origin == Origin::Switch && x.fate == Fate::Delivered)
        .filter_map(|x| x.copy_of)
        .collect();
    let delivered: BTreeSet<u32> =
        t.sim.transmissions.iter().filter(|x| x.fate == Fate::Delivered).map(|x| x.id).collect();
    let switch_txs: BTreeSet<u32> =
        t.sim.transmissions.iter().filter(|x| x.origin == Origin::Switch).map(|x| x.id).collect();
    // Frames.
    let mut truth_frames = 0u64;
    for tap in &t.taps {
        for f in &tap.frames {
            truth_frames += 1;
            match by_number.get(&f.frame) {
                None => errs.push(format!("truth frame {} ({:?}) is not a RoCE frame of the capture", f.frame, f.kind)),
                Some(p) => {
                    if p.interface != tap.interface
                        || p.psn != f.psn
                        || p.flow_id() != f.flow
                        || !kind_matches(f.kind, f.ho, p)
                    {
                        errs.push(format!(
                            "frame {}: truth says {:?} psn {} flow {} on interface {}, the wire {:?} psn {} flow {} on {}",
                            f.frame,
                            f.kind,
                            f.psn,
                            f.flow,
                            tap.interface,
                            p.kind,
                            p.psn,
                            p.flow_id(),
                            p.interface
                        ));
                    }
                }
            }
        }
    }
    n.frames = truth_frames;
    if truth_frames != w.pkts.len() as u64 {
        errs.push(format!("truth lists {truth_frames} frames, the capture has {} RoCE frames", w.pkts.len()));
    }
    // Retransmissions and losses, per connection seen on the wire.
    for c in &w.conns {
        let flows = [
            (c.requests_flow(), c.requester, c.responder, PktKind::Data, true),
            (c.responses_flow().unwrap_or_default(), c.responder, c.requester, PktKind::ReadResponse, false),
        ];
        for (id, from, to, data_kind, requests) in flows {
            if id.is_empty() {
                continue;
            }
            let is_flow = |p: &Pkt| {
                if requests {
                    c.is_request(p)
                } else {
                    c.is_response(p)
                }
            };
            for tap in &t.taps {
                let Some(spec) = w.taps.iter().find(|s| s.interface == tap.interface) else {
                    continue;
                };
                let Some(flow) = tap.flows.iter().find(|f| f.id == id) else {
                    continue;
                };
                let truth_retx: Vec<(u64, u32)> = flow.retransmissions.iter().map(|r| (r.frame, r.psn)).collect();
                if spec.host == Some(from) {
                    let s = ledger::sent(w, spec.interface, is_flow, data_kind);
                    n.retx += s.retx.len() as u64;
                    if s.retx != truth_retx {
                        errs.push(format!(
                            "{} tap, flow {id}: the wire shows {} retransmissions, the truth {} (first differing: wire {:?}, truth {:?})",
                            spec.name,
                            s.retx.len(),
                            truth_retx.len(),
                            s.retx.iter().zip(&truth_retx).find(|(a, b)| a != b).map(|x| *x.0).or(s.retx.get(truth_retx.len()).copied()),
                            s.retx.iter().zip(&truth_retx).find(|(a, b)| a != b).map(|x| *x.1).or(truth_retx.get(s.retx.len()).copied()),
                        ));
                    }
                } else if spec.host == Some(to) || spec.host.is_none() {
                    // The destination's tap, or one inside the fabric.
                    let mut copies: BTreeMap<u32, u32> = BTreeMap::new();
                    // Whole copies, and header-only forms of trimmed ones (the truth lists those too).
                    let copy =
                        |p: &Pkt| p.kind == data_kind || (p.kind == PktKind::HeaderOnly && data_kind == PktKind::Data);
                    for p in w.at(spec.interface).filter(|p| is_flow(p) && w.dir(p) != Dir::Out && copy(p)) {
                        *copies.entry(p.psn).or_default() += 1;
                    }
                    let mut tr: BTreeMap<u32, u32> = BTreeMap::new();
                    for &(_, psn) in &truth_retx {
                        *tr.entry(psn).or_default() += 1;
                    }
                    for (psn, k) in tr {
                        let c = copies.get(&psn).copied().unwrap_or(0);
                        if k > c || k + 1 < c {
                            errs.push(format!(
                                "{} tap, flow {id}: PSN {psn} arrived {c} times, the truth counts {k} retransmissions",
                                spec.name
                            ));
                        }
                    }
                }
            }
            // Capture gaps: PSNs that reached the destination whole, of which a tap saw no copy.
            if let Some(dest) = w.tap_at(to) {
                let arrived: BTreeSet<u32> = w
                    .at(dest.interface)
                    .filter(|p| is_flow(p) && w.dir(p) == Dir::In && p.kind == data_kind)
                    .map(|p| p.psn)
                    .collect();
                for tap in &t.taps {
                    let Some(flow) = tap.flows.iter().find(|f| f.id == id) else {
                        continue;
                    };
                    let seen: BTreeSet<u32> = w
                        .at(tap.interface)
                        .filter(|p| is_flow(p) && (p.kind == data_kind || p.kind == PktKind::HeaderOnly))
                        .map(|p| p.psn)
                        .collect();
                    let gaps: BTreeSet<u32> = arrived.difference(&seen).copied().collect();
                    let truth_gaps: BTreeSet<u32> = flow.capture_gaps.iter().map(|g| g.psn).collect();
                    n.gaps += gaps.len() as u64;
                    if gaps != truth_gaps {
                        errs.push(format!(
                            "{:?} tap, flow {id}: {} capture gaps on the wire, {} in the truth (first differing: {:?})",
                            tap.name,
                            gaps.len(),
                            truth_gaps.len(),
                            gaps.symmetric_difference(&truth_gaps).next()
                        ));
                    }
                }
            }
            // Losses: both ends tapped.
            let Some(l) = ledger::lost(w, from, to, is_flow) else {
                continue;
            };
            let Some(flow) = t.taps.iter().flat_map(|tap| &tap.flows).find(|f| f.id == id) else {
                errs.push(format!("flow {id} is on the wire, not in the truth"));
                continue;
            };
            // NetRT over sprayed paths: the source ToR may resend a copy it kept while that copy
            // is late, not lost; both arrive, one more than left the host. Each such switch
            // copy the truth delivers explains one arrival of its PSN.
            let mut extra: BTreeMap<u32, usize> = BTreeMap::new();
            for x in t.sim.transmissions.iter().filter(|x| {
                x.origin == Origin::Switch
                    && x.fate == Fate::Delivered
                    && x.conn == flow.conn
                    && x.copy_of.is_some_and(|c| delivered.contains(&c))
            }) {
                *extra.entry(x.psn).or_default() += 1;
            }
            let unexplained: Vec<u64> = l
                .unexplained
                .iter()
                .copied()
                .filter(|f| {
                    let Some(e) = by_number.get(f).and_then(|p| extra.get_mut(&p.psn)).filter(|e| **e > 0) else {
                        return true;
                    };
                    *e -= 1;
                    false
                })
                .collect();
            if !unexplained.is_empty() {
                errs.push(format!("flow {id}: frames {:?} arrived but never left", &unexplained[..unexplained.len().min(5)]));
            }
            // Between the hosts' taps a copy shows as lost when it left the one and did not
            // arrive at the other. NetRT's source ToR resends the bytes of a copy it kept: one that
            // arrives stands in for that copy, whose loss never showed; its own never left a host.
            let mut tl: BTreeMap<u32, u32> = BTreeMap::new();
            for x in flow.losses.iter().filter(|x| !switch_txs.contains(&x.tx) && !stood_in.contains(&x.tx)) {
                *tl.entry(x.psn).or_default() += 1;
            }
            n.losses += l.total();
            let wl: BTreeMap<u32, u32> = l.per_psn.iter().filter(|(_, &n)| n > 0).map(|(&k, &n)| (k, n)).collect();
            if tl != wl {
                let diff: Vec<_> = tl
                    .keys()
                    .chain(wl.keys())
                    .filter(|k| tl.get(k) != wl.get(k))
                    .take(5)
                    .map(|k| (*k, tl.get(k).copied().unwrap_or(0), wl.get(k).copied().unwrap_or(0)))
                    .collect();
                errs.push(format!(
                    "flow {id}: the truth lists {} losses, the wire shows {} (psn, truth, wire): {diff:?}",
                    flow.losses.len(),
                    l.total()
                ));
            }
            let trimmed: u64 =
                flow.losses.iter().filter(|x| x.ho_lost.is_none() && x.cause == LossCause::Trimmed).count() as u64;
            let ho: u64 = l.ho_arrived.values().map(|&v| v as u64).sum();
            if trimmed != ho {
                errs.push(format!("flow {id}: {ho} header-only forms arrived, the truth has {trimmed} trimmed losses whose header-only form got through"));
            }
        }
    }
    if errs.is_empty() {
        Ok(n)
    } else {
        errs.truncate(10);
        Err(errs.join("\n"))
    }
}
