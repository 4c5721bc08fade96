//! Per-PSN accounting of one flow from the frames alone.
//!
//! - **Transmissions and retransmissions** are counted at the tap on the NIC the flow leaves
//!   (its origin: the requester's tap for a requests flow, the responder's for READ responses),
//!   which sees every copy the NIC sent: a retransmission is a data-carrying frame (request
//!   packet, or READ response) whose PSN this tap already saw leave on this flow. This is
//!   `docs/truth.md`'s definition ("every transmission of a data PSN after its first").
//! - **Losses** are what left the origin tap and never reached the destination tap whole: the
//!   multiset difference of the frames' normalized bytes ([`crate::packet::normalize`]: TTL,
//!   checksum and ECN bits zeroed) out at the origin and in at the destination. A DCP packet
//!   trimmed on the way arrives as its header-only form, which matches nothing sent: it counts
//!   as a loss of the original (as the truth counts it) and as a header-only arrival.

use std::collections::{BTreeMap, HashMap};

use super::packet::{Pkt, PktKind};
use super::wire::{Conn, Dir, Wire};

/// What the origin tap of a flow saw leave.
#[derive(Clone, Debug, Default)]
pub struct Sent {
    /// Data-carrying frames (request packets or READ responses) per PSN.
    pub copies: BTreeMap<u32, u32>,
    /// Frame numbers of the retransmissions (every copy of a PSN after the first), with PSNs.
    pub retx: Vec<(u64, u32)>,
    /// All frames of the flow that left (any kind).
    pub frames: u64,
}

impl Sent {
    pub fn data_frames(&self) -> u64 {
        self.copies.values().map(|&n| n as u64).sum()
    }
}

/// Frames of `flow` leaving the tap on `interface`, counted per PSN.
pub fn sent(w: &Wire, interface: u32, is_flow: impl Fn(&Pkt) -> bool, data_kind: PktKind) -> Sent {
    let mut s = Sent::default();
    for p in w.at(interface).filter(|p| is_flow(p) && w.dir(p) == Dir::Out) {
        s.frames += 1;
        if p.kind != data_kind {
            continue;
        }
        let n = s.copies.entry(p.psn).or_default();
        if *n > 0 {
            s.retx.push((p.number, p.psn));
        }
        *n += 1;
    }
    s
}

/// The requests flow of `c` at the requester's tap.
pub fn requests_sent(w: &Wire, c: &Conn) -> Option<Sent> {
    let t = w.tap_at(c.requester)?;
    Some(sent(w, t.interface, |p| c.is_request(p), PktKind::Data))
}

/// The READ responses of `c` at the responder's tap.
pub fn responses_sent(w: &Wire, c: &Conn) -> Option<Sent> {
    let t = w.tap_at(c.responder)?;
    Some(sent(w, t.interface, |p| c.is_response(p), PktKind::ReadResponse))
}

/// What was lost between the origin and the destination tap of one direction of a connection.
#[derive(Clone, Debug, Default)]
pub struct Lost {
    /// Frames that left the origin and never arrived whole, per PSN (every kind).
    pub per_psn: BTreeMap<u32, u32>,
    /// The same restricted to data-carrying frames (requests / READ responses).
    pub data_per_psn: BTreeMap<u32, u32>,
    /// Header-only forms that arrived instead (trimmed on the way), per PSN.
    pub ho_arrived: BTreeMap<u32, u32>,
    /// Frames that arrived whole without having left the origin tap: must be empty.
    pub unexplained: Vec<u64>,
}

impl Lost {
    pub fn total(&self) -> u64 {
        self.per_psn.values().map(|&n| n as u64).sum()
    }
    pub fn data_total(&self) -> u64 {
        self.data_per_psn.values().map(|&n| n as u64).sum()
    }
}

/// Losses of the direction `is_flow` (from the tap at its source host to the tap at its
/// destination host); `None` when either host has no tap.
pub fn lost(w: &Wire, from: std::net::IpAddr, to: std::net::IpAddr, is_flow: impl Fn(&Pkt) -> bool) -> Option<Lost> {
    let (o, d) = (w.tap_at(from)?.interface, w.tap_at(to)?.interface);
    let mut pending: HashMap<&[u8], Vec<&Pkt>> = HashMap::new();
    for p in w.at(o).filter(|p| is_flow(p) && w.dir(p) == Dir::Out) {
        pending.entry(&p.normalized).or_default().push(p);
    }
    let mut l = Lost::default();
    for p in w.at(d).filter(|p| is_flow(p) && w.dir(p) == Dir::In) {
        match pending.get_mut(p.normalized.as_slice()).and_then(|v| (!v.is_empty()).then(|| v.remove(0))) {
            Some(_) => {}
            None if p.kind == PktKind::HeaderOnly => *l.ho_arrived.entry(p.psn).or_default() += 1,
            None => l.unexplained.push(p.number),
        }
    }
    for p in pending.into_values().flatten() {
        *l.per_psn.entry(p.psn).or_default() += 1;
        if matches!(p.kind, PktKind::Data | PktKind::ReadResponse) {
            *l.data_per_psn.entry(p.psn).or_default() += 1;
        }
    }
    Some(l)
}

/// Losses of `c`'s requests direction.
pub fn requests_lost(w: &Wire, c: &Conn) -> Option<Lost> {
    lost(w, c.requester, c.responder, |p| c.is_request(p))
}

/// Losses of `c`'s responses direction.
pub fn responses_lost(w: &Wire, c: &Conn) -> Option<Lost> {
    lost(w, c.responder, c.requester, |p| c.is_response(p))
}
