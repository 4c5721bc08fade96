//! A capture as a set of taps and connections: which tap sits at which host (so a frame there
//! is going out or coming in), and which IP pairs are connections, with their requests and
//! responses flows told apart by what the frames carry (the side sending request opcodes is the
//! requester).
//!
//! Only the tap layout is taken from outside the capture (a tap's pcapng interface and the host
//! whose NIC it sits at; `None` for a tap inside the fabric): everything else is the frames.

use std::collections::BTreeMap;
use std::net::IpAddr;

use rocescope_codec::{Params, Profile};

use super::packet::{self, Pkt, PktKind};

/// Where a tap sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapSpec {
    pub interface: u32,
    pub name: String,
    /// The host whose NIC the tap sits at (`None`: inside the fabric).
    pub host: Option<IpAddr>,
}

/// Whether a frame leaves or enters the tapped host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Out,
    In,
    /// A tap inside the fabric.
    Through,
}

/// One RC connection seen on the wire (one QP pair between two hosts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conn {
    pub requester: IpAddr,
    pub responder: IpAddr,
    /// DestQP of the requests flow (the responder's QPN).
    pub responder_qpn: u32,
    /// DestQP of the responses flow, when any response was captured.
    pub requester_qpn: Option<u32>,
}

impl Conn {
    pub fn requests_flow(&self) -> String {
        format!("{}>{}/{}", self.requester, self.responder, self.responder_qpn)
    }
    pub fn responses_flow(&self) -> Option<String> {
        self.requester_qpn.map(|q| format!("{}>{}/{}", self.responder, self.requester, q))
    }
    /// Whether `p` belongs to this connection's requests direction.
    pub fn is_request(&self, p: &Pkt) -> bool {
        p.src == self.requester && p.dst == self.responder
    }
    pub fn is_response(&self, p: &Pkt) -> bool {
        p.src == self.responder && p.dst == self.requester
    }
}

/// A decoded capture with its tap layout.
#[derive(Clone, Debug)]
pub struct Wire {
    pub taps: Vec<TapSpec>,
    /// Every RoCE frame, in file order.
    pub pkts: Vec<Pkt>,
    pub conns: Vec<Conn>,
    pub profile: Profile,
}

impl Wire {
    /// Reads `path` under `profile`.
    pub fn read(path: &std::path::Path, taps: Vec<TapSpec>, profile: Profile, params: Params) -> Result<Wire, String> {
        Ok(Wire::new(packet::read(path, profile, params)?, taps, profile))
    }

    pub fn new(pkts: Vec<Pkt>, taps: Vec<TapSpec>, profile: Profile) -> Wire {
        // The requester of an IP pair is the side that sends request packets (data, whole).
        let mut conns: BTreeMap<(IpAddr, IpAddr), Conn> = BTreeMap::new();
        for p in pkts.iter().filter(|p| p.kind == PktKind::Data) {
            conns.entry((p.src, p.dst)).or_insert(Conn {
                requester: p.src,
                responder: p.dst,
                responder_qpn: p.destqp,
                requester_qpn: None,
            });
        }
        for p in &pkts {
            if let Some(c) = conns.get_mut(&(p.dst, p.src)) {
                if c.requester_qpn.is_none() && p.kind != PktKind::Cnp {
                    c.requester_qpn = Some(p.destqp);
                }
            }
        }
        Wire { taps, pkts, conns: conns.into_values().collect(), profile }
    }

    pub fn tap(&self, name: &str) -> Option<&TapSpec> {
        self.taps.iter().find(|t| t.name == name)
    }

    /// The tap at `host`'s NIC.
    pub fn tap_at(&self, host: IpAddr) -> Option<&TapSpec> {
        self.taps.iter().find(|t| t.host == Some(host))
    }

    pub fn dir(&self, p: &Pkt) -> Dir {
        match self.taps.iter().find(|t| t.interface == p.interface).and_then(|t| t.host) {
            Some(h) if p.src == h => Dir::Out,
            Some(h) if p.dst == h => Dir::In,
            _ => Dir::Through,
        }
    }

    /// The frames captured on `interface`, in file order.
    pub fn at(&self, interface: u32) -> impl Iterator<Item = &Pkt> {
        self.pkts.iter().filter(move |p| p.interface == interface)
    }
}
