//! The truth's `spurious` labels against what the receiver's tap shows it accepted
//! (`docs/truth.md`: a retransmission is spurious "when the receiver had accepted, or would
//! accept, an earlier copy").
//!
//! Which copy of a PSN the receiver accepted is read from the frames at its tap:
//! - Go-Back-N requests: the responder accepts only its expected PSN, so the accepted copy is
//!   the first to arrive in sequence (the expected PSN starts at the flow's first PSN and
//!   advances by one per accepted packet, by a READ Request's response count for a READ);
//! - Go-Back-N READ responses: the requester accepts them in PSN order across messages, after
//!   the requests before them were acknowledged (the requester's state of [`crate::judge`]);
//! - IRN and DCP accept out of order: every copy that arrives whole counts ("an earlier copy
//!   arrived whole at any time").
//!
//! A transmission's copy number is its place among the departures of its PSN at the flow's
//! origin tap; the truth's `tx` numbers (which frame at one tap is which frame at the other) only
//! link an arrival to its departure. Copy `j > 0` must be labelled spurious exactly when a copy
//! numbered below `j` was accepted (Go-Back-N: the accepted one; IRN, DCP: any whole arrival).

use std::collections::{BTreeMap, HashMap};

use rocescope_codec::ib::psn;
use rocescope_sim::truth::{Stack, Truth};

use super::packet::{Pkt, PktKind};
use super::wire::{Dir, Wire};

/// A retransmission whose label disagrees with the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mislabel {
    /// The frame at the origin tap.
    pub frame: u64,
    pub psn: u32,
    /// Its copy number (1: the first retransmission).
    pub copy: u32,
    pub truth_spurious: bool,
    /// The copy number the receiver accepted (`None`: none arrived).
    pub accepted_copy: Option<u32>,
    /// A READ response (the responses flow), not a request.
    pub read_response: bool,
}

/// Checks every labelled retransmission of connections with both ends tapped; returns the
/// mislabelled ones and how many were checked.
pub fn check(t: &Truth, w: &Wire) -> (Vec<Mislabel>, u64) {
    // frame number -> (tx, spurious label if a retransmission)
    let mut frames: HashMap<u64, (u32, Option<bool>)> = HashMap::new();
    for tap in &t.taps {
        for f in &tap.frames {
            frames.insert(f.frame, (f.tx, f.retx.map(|r| r.spurious)));
        }
    }
    // (NetRT's hosts are Go-Back-N. A switch's resend never left the requester's tap: arriving,
    // it counts as the copy whose bytes it repeats, `copy_of`.)
    let in_order = matches!(t.config.stack, Stack::Gbn | Stack::Netrt);
    let stands_for: HashMap<u32, u32> =
        t.sim.transmissions.iter().filter_map(|x| x.copy_of.map(|c| (x.id, c))).collect();
    let mtu = t.config.mtu.max(1);
    let (mut bad, mut checked) = (Vec::new(), 0u64);
    for c in &w.conns {
        for (from, to, data) in
            [(c.requester, c.responder, PktKind::Data), (c.responder, c.requester, PktKind::ReadResponse)]
        {
            let (Some(o), Some(d)) = (w.tap_at(from), w.tap_at(to)) else {
                continue;
            };
            let requests = data == PktKind::Data;
            let is_flow = |p: &Pkt| p.kind == data && if requests { c.is_request(p) } else { c.is_response(p) };
            // Departures: copy numbers per tx.
            let mut copies: HashMap<u32, u32> = HashMap::new();
            let mut departures: Vec<(&Pkt, u32)> = Vec::new();
            let mut tx_copy: HashMap<u32, u32> = HashMap::new();
            for p in w.at(o.interface).filter(|p| is_flow(p) && w.dir(p) == Dir::Out) {
                let k = copies.entry(p.psn).or_default();
                if let Some(&(tx, _)) = frames.get(&p.number) {
                    tx_copy.insert(tx, *k);
                }
                departures.push((p, *k));
                *k += 1;
            }
            // Accepted copies per PSN (Go-Back-N: the one; IRN, DCP: the lowest arrived).
            let mut accepted: BTreeMap<u32, u32> = BTreeMap::new();
            let arrivals: Vec<&Pkt> = w.at(d.interface).filter(|p| is_flow(p) && w.dir(p) == Dir::In).collect();
            let copy_of = |p: &Pkt| {
                frames.get(&p.number).and_then(|(tx, _)| tx_copy.get(stands_for.get(tx).unwrap_or(tx)).copied())
            };
            if !in_order {
                for p in &arrivals {
                    if let Some(k) = copy_of(p) {
                        let e = accepted.entry(p.psn).or_insert(k);
                        *e = (*e).min(k);
                    }
                }
            } else if data == PktKind::Data {
                let mut expected = departures.first().map(|(p, _)| p.psn);
                for p in &arrivals {
                    if Some(p.psn) != expected {
                        continue;
                    }
                    if let Some(k) = copy_of(p) {
                        accepted.entry(p.psn).or_insert(k);
                    }
                    let span = match (p.is_read_request(), p.reth) {
                        (true, Some((_, len))) => len.div_ceil(mtu).max(1),
                        _ => 1,
                    };
                    expected = Some(psn::add(p.psn, span));
                }
            } else {
                // READ responses at the requester: its state as judge keeps it.
                let una = super::judge::response_acceptance(w, c, mtu);
                for p in &arrivals {
                    if una.get(&p.number) == Some(&true) {
                        if let Some(k) = copy_of(p) {
                            accepted.entry(p.psn).or_insert(k);
                        }
                    }
                }
            }
            for (p, k) in departures.iter().filter(|(_, k)| *k > 0) {
                let Some(&(_, Some(label))) = frames.get(&p.number) else {
                    continue;
                };
                checked += 1;
                let acc = accepted.get(&p.psn).copied();
                let want = acc.is_some_and(|a| a < *k);
                if want != label {
                    bad.push(Mislabel {
                        frame: p.number,
                        psn: p.psn,
                        copy: *k,
                        truth_spurious: label,
                        accepted_copy: acc,
                        read_response: data == PktKind::ReadResponse,
                    });
                }
            }
        }
    }
    (bad, checked)
}
