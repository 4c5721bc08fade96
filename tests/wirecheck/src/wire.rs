//! A capture as a set of taps and connections: which tap sits at which host (so a frame there
//! is going out or coming in), and which IP pairs are connections, with their requests and
//! responses flows told apart by what the frames carry (the side sending request opcodes is the
//! requester).
//!
//! Only the tap layout is taken from outside the capture (a tap's pcapng interface and the host
//! whose NIC it sits at; `None` for a tap inside the fabric): everything else is the frames.
//!
//! A connection is its requests flow: requester IP, responder IP and the DestQP its requests
//! carry (the responder's QPN). Every frame of one direction of a connection carries the QPN of
//! the end it goes to (requests, and CNPs for READ responses: the responder's; ACKs, NAKs,
//! SACKs, READ responses, bounced header-only packets, CNPs for requests: the requester's), so
//! several connections between the same hosts, or in both directions between two hosts (a
//! leaf-spine's permutation or all-to-all, where a host is requester of one connection and
//! responder of another), are told apart by DestQP. The requester's QPN is read from the first
//! frame coming back that is neither a request (whole, or trimmed to its header-only form: the
//! requests of a connection the other way to its responder's QPN) nor a CNP; when two
//! connections run the same way between the same hosts that first frame could be the other's
//! (not the case in any pattern `synth` makes: one connection per ordered host pair).
//!
//! A tap sits at one host (`rocescope synth` taps the first connection's two hosts): a
//! connection whose ends are not both tapped is judged only at the end that is ([`Coverage`]).

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
        p.src == self.requester && p.dst == self.responder && p.destqp == self.responder_qpn
    }
    /// Whether `p` belongs to its responses direction (before any response was captured: every
    /// frame from the responder to the requester).
    pub fn is_response(&self, p: &Pkt) -> bool {
        p.src == self.responder && p.dst == self.requester && self.requester_qpn.is_none_or(|q| p.destqp == q)
    }
}

/// Which ends of a connection a capture's taps sit at: what can be judged about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Coverage {
    /// Both: everything (retransmissions, losses, delivery, completions, labels).
    Both,
    /// The requester's NIC only: its transmissions, retransmissions, resends after
    /// acknowledgement, go-back points and completions; not losses, labels or delivery.
    Requester,
    /// The responder's NIC only: the messages rebuilt from what arrived; not retransmissions
    /// (counted where a flow leaves), losses, labels or completions.
    Responder,
    /// Neither: not judged in this capture (it may still cross a tap inside the fabric, whose
    /// frames the truth comparison checks).
    Neither,
}

impl Coverage {
    pub fn name(self) -> &'static str {
        match self {
            Coverage::Both => "both ends",
            Coverage::Requester => "requester only",
            Coverage::Responder => "responder only",
            Coverage::Neither => "neither end",
        }
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
        // A connection: the requests flow (data, whole) of requester, responder and DestQP.
        let mut conns: BTreeMap<(IpAddr, IpAddr, u32), Conn> = BTreeMap::new();
        for p in pkts.iter().filter(|p| p.kind == PktKind::Data) {
            conns.entry((p.src, p.dst, p.destqp)).or_insert(Conn {
                requester: p.src,
                responder: p.dst,
                responder_qpn: p.destqp,
                requester_qpn: None,
            });
        }
        // A frame the same way as another connection's requests, to that connection's
        // responder QPN, is that connection's (a DCP data packet trimmed to its header-only form
        // on the way, a CNP for its READ responses).
        let requests: std::collections::BTreeSet<(IpAddr, IpAddr, u32)> = conns.keys().copied().collect();
        for p in pkts.iter().filter(|p| {
            !matches!(p.kind, PktKind::Data | PktKind::Cnp) && !requests.contains(&(p.src, p.dst, p.destqp))
        }) {
            if let Some(c) = conns
                .range_mut((p.dst, p.src, 0)..=(p.dst, p.src, u32::MAX))
                .map(|(_, c)| c)
                .find(|c| c.requester_qpn.is_none())
            {
                c.requester_qpn = Some(p.destqp);
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

    /// Which ends of the connection from `requester` to `responder` are tapped.
    pub fn coverage(&self, requester: IpAddr, responder: IpAddr) -> Coverage {
        match (self.tap_at(requester).is_some(), self.tap_at(responder).is_some()) {
            (true, true) => Coverage::Both,
            (true, false) => Coverage::Requester,
            (false, true) => Coverage::Responder,
            (false, false) => Coverage::Neither,
        }
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
