//! The discrete-event engine: hosts, switches, links, queues, taps.
//!
//! # Topology
//! A two-tier "dumbbell" like the DCP testbed (seed 000 §6.1): the sender hosts `s0 … s{n-1}`
//! hang off switch `sw0`, the receiver host `r0` off switch `sw1`, and the two switches are
//! joined by `paths` parallel fabric links (`sw0>sw1#k` one way, `sw1>sw0#k` the other). Every
//! link is a pair of one-way links; each one-way link belongs to the egress port that feeds it
//! and has a rate, a propagation delay and optionally a loss process. Fabric link `k` has the
//! propagation delay `delay + reorder·k/(paths−1)`, so packets sprayed over different paths
//! overtake each other. Unless told otherwise the fabric links run at `rate·⌈senders/paths⌉`
//! (a non-blocking core), so under an incast the bottleneck is `sw1`'s port to the receiver.
//! A two-tier leaf-spine is the other shape (`topology.rs`: nodes, links and routes as data;
//! docs/truth.md describes both), and links can fail during a run.
//!
//! # Ports and queues
//! Each switch egress port has a data queue with a drop threshold (bytes) and, when trimming is
//! on, a control queue for header-only packets served by weighted round robin against the data
//! queue (by bytes: the control queue gets `w/(1+w)` of the port when both are backlogged). A
//! packet that would take the data queue past the threshold is dropped, or, if it is a DCP data
//! packet (tag 10) and trimming is on, cut to its header-only form (`codec::build::header_only`,
//! padded to 60 bytes as the wire does) and put in the control queue (which has its own size
//! limit and drops when full). ECN: a packet entering a data queue longer than the marking
//! threshold gets CE if it is ECN-capable. In lossless mode (`pfc.rs`) switch ports pause
//! their upstream neighbours with PFC frames instead of letting queues overflow. Switches
//! decrement the IP TTL (neither the ToS nor the TTL is covered by the ICRC).
//!
//! # Host NICs
//! A host's egress port is its NIC (`nic.rs`, the NIC transmit model of `rocescope_stacks`):
//! when the wire is free it sends the oldest frame of its control FIFO (every immediate
//! `Action::Transmit`: ACKs, NAKs, SACKs, CNPs, bounced HO packets, READ responses; unbounded),
//! else it pulls one request packet from the next ready requester QP, round robin. Request
//! packets thus never wait in a host queue: a stack hands one over when it can leave, and its
//! retransmission timer starts then. Each QP has a `next_allowed` time set by its rate limiter
//! (DCQCN, `--cc`); a NIC paused by PFC pulls nothing.
//!
//! # Time
//! A frame of `L` bytes occupies a link for `(max(L,60) + 24)·8/rate` (FCS, preamble and
//! inter-frame gap are the 24 bytes) and arrives `delay` after its last bit left. Taps stamp an
//! outgoing frame when its first bit leaves and an incoming frame when its last bit arrives.
//! Events at the same instant run in the order they were scheduled, so a run is a pure
//! function of the configuration and the seed.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::net::IpAddr;

use rocescope_codec::build::{header_only, FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ext::dcp;
use rocescope_codec::ib::{psn, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params, Profile};

use rocescope_stacks::rng::{mix64, Rng};
use rocescope_analysis::capture::CaptureWriter;
use rocescope_stacks::events::EventQueue;
use rocescope_stacks::dcqcn::{Dcqcn, DcqcnConfig};
use rocescope_stacks::sdr::layout::send_count;
use rocescope_stacks::{Action, ConnConfig, Endpoint, Message, Nanos, Op, Requester, RetxReason};

use rocescope_codec::fxhash::{FxHashMap, FxHashSet};
use super::counters::CounterState;
use super::nic::{NicSched, Pick};
use super::pfc::{self, EgressPause, IngressMeter, PfcConfig, PfcSignal};
use super::topology::{LinkRole, NodeKind, Shape, Topology};

mod erd_nack_names;
pub mod flor_judge;
pub mod flor_sent;
mod netrt_tor;
mod sdr_ctrl_names;
pub use erd_nack_names::NackNames;
pub use sdr_ctrl_names::{CtrlNames as SdrCtrlNames, Marks as SdrMarks};

/// Capture timestamps are `EPOCH_NS + simulated time`.
pub const EPOCH_NS: u64 = 1_700_000_000_000_000_000;
/// Bytes a frame costs on the wire beyond its captured bytes: FCS 4, preamble and SFD 8,
/// inter-frame gap 12.
pub const WIRE_OVERHEAD: u64 = 24;
/// The shortest Ethernet frame without its FCS.
pub const MIN_FRAME: usize = 60;
/// RoCEv2 CNP opcode.
pub const CNP_OPCODE: u8 = 0x81;

/// How a switch picks among equal-cost paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// Per-flow hash (IP addresses, UDP source port, DestQP): no reordering.
    Ecmp,
    /// A uniformly random path per packet.
    Spray,
    /// The path whose egress queue holds the fewest bytes (ties broken at random).
    Adaptive,
}

impl Routing {
    pub fn name(self) -> &'static str {
        match self {
            Routing::Ecmp => "ecmp",
            Routing::Spray => "spray",
            Routing::Adaptive => "adaptive",
        }
    }
}

/// Where the capture taps sit (each one pcapng interface, in the order given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TapPoint {
    /// At the NIC of sender `s0`.
    Sender,
    /// At the NIC of the receiver `r0`.
    Receiver,
    /// At `sw0`'s port onto fabric link `fabric_tap_path`.
    Fabric,
}

impl TapPoint {
    pub fn name(self) -> &'static str {
        match self {
            TapPoint::Sender => "sender",
            TapPoint::Receiver => "receiver",
            TapPoint::Fabric => "fabric",
        }
    }
    pub fn from_name(s: &str) -> Option<TapPoint> {
        [TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric].into_iter().find(|t| t.name() == s)
    }
}

/// Which links lose packets at random.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossPlace {
    /// Every fabric link.
    Fabric,
    /// The access link of sender `s0`.
    Sender,
    /// The receiver's access link.
    Receiver,
}

impl LossPlace {
    pub fn name(self) -> &'static str {
        match self {
            LossPlace::Fabric => "fabric",
            LossPlace::Sender => "sender",
            LossPlace::Receiver => "receiver",
        }
    }
    pub fn from_name(s: &str) -> Option<LossPlace> {
        [LossPlace::Fabric, LossPlace::Sender, LossPlace::Receiver].into_iter().find(|p| p.name() == s)
    }
}

/// Which directions of the lossy links lose packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossDir {
    Both,
    /// Towards the receiver only (data, not ACKs).
    Forward,
    /// Towards the senders only.
    Reverse,
}

impl LossDir {
    pub fn name(self) -> &'static str {
        match self {
            LossDir::Both => "both",
            LossDir::Forward => "forward",
            LossDir::Reverse => "reverse",
        }
    }
    pub fn from_name(s: &str) -> Option<LossDir> {
        [LossDir::Both, LossDir::Forward, LossDir::Reverse].into_iter().find(|d| d.name() == s)
    }
}

/// Where a frame chosen by the random loss process (`--loss`, `--burst-loss`) is lost.
///
/// The DCP paper measures loss recovery with loss made at the switches (seed 000 §6.1, Fig. 10:
/// "the P4 switch executes the packet trimming module for DCP traffic, while it simply drops
/// packets for CX5 traffic"; §6.3, Fig. 17: "packet loss rates artificially enforced at
/// switches"), so a DCP data packet chosen for loss reaches the receiver as a header-only
/// packet. A frame corrupted on the wire is lost whole whatever the transport: that is
/// [`LossMode::Drop`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossMode {
    /// The switch egress port feeding a lossy link chooses: a DCP data packet (tag 10) chosen
    /// for loss is trimmed to its header-only form into the port's control queue, as the
    /// threshold trimming does (when trimming is on); any other packet chosen for loss
    /// (header-only packets, ACKs, every packet of GBN and IRN, DCP data without trimming) is
    /// dropped at the port and never reaches the link. A lossy link fed by a host NIC (`s0`'s
    /// uplink, the receiver's uplink) has no such port: its loss process is applied by the
    /// switch the link enters, at the egress port the packet then takes (the paper's testbed
    /// sender hangs directly off the lossy P4 switch).
    Trim,
    /// Lost on the wire (corruption): the frame occupies the link and vanishes whole.
    Drop,
}

impl LossMode {
    pub fn name(self) -> &'static str {
        match self {
            LossMode::Trim => "trim",
            LossMode::Drop => "drop",
        }
    }
    pub fn from_name(s: &str) -> Option<LossMode> {
        [LossMode::Trim, LossMode::Drop].into_iter().find(|m| m.name() == s)
    }
}

/// Random loss on a link: Bernoulli with probability `p` per frame, optionally modulated by a
/// Gilbert-Elliott chain (`burst = (p_gb, p_bg)`): before each frame the chain moves Good→Bad
/// with `p_gb` and Bad→Good with `p_bg`; in Bad every frame is lost, in Good a frame is lost
/// with `p`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossModel {
    pub p: f64,
    pub burst: Option<(f64, f64)>,
}

impl LossModel {
    pub fn is_none(&self) -> bool {
        self.p <= 0.0 && self.burst.is_none_or(|(gb, _)| gb <= 0.0)
    }
}

/// How the receiver decides it has accepted a data packet, for the ground truth (whether a
/// retransmission was spurious): Go-Back-N accepts only the expected PSN, the others accept
/// the first intact copy of every PSN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcceptModel {
    InOrder,
    AnyOrder,
}

/// Everything about the fabric.
#[derive(Clone, Debug)]
pub struct FabricConfig {
    /// Sender hosts (1, or N for an N-to-1 incast).
    pub senders: usize,
    /// Host link rate, bits per second.
    pub rate_bps: u64,
    /// Fabric link rate (default: `rate_bps · ⌈senders/paths⌉`).
    pub fabric_rate_bps: Option<u64>,
    /// Propagation delay of every link, ns.
    pub delay_ns: u64,
    /// Parallel fabric links between the two switches.
    pub paths: u32,
    /// Extra propagation delay of the slowest path over the fastest, ns.
    pub reorder_ns: u64,
    pub routing: Routing,
    /// Data queue drop (or trim) threshold of every switch port, bytes.
    pub queue_bytes: u64,
    /// DCP trimming with a control queue.
    pub trim: bool,
    /// WRR weight of the control queue against the data queue; `None`: seed §4.2's
    /// `(N−1)/(r−N+1)`.
    pub wrr_weight: Option<f64>,
    /// The switch radix `N` for the §4.2 weight (default: senders + 1, the worst incast this
    /// fabric can produce at the receiver's port).
    pub radix: Option<u32>,
    /// Control queue size of every switch port, bytes.
    pub control_queue_bytes: u64,
    /// ECN marking at one threshold (bytes of data queue): every ECN-capable packet entering a
    /// longer queue gets CE. Overrides `ecn_red`.
    pub ecn_threshold: Option<u64>,
    /// ECN marking by RED (the default: [`Red::DCQCN`]); `None` with no threshold: no marking.
    pub ecn_red: Option<Red>,
    /// The receiver NIC sends at most one CNP per QP per this interval.
    pub cnp_interval_ns: u64,
    /// DCQCN's rate-increase timer `T` at the requesters' NICs (the paper's 55 µs).
    pub dcqcn_timer_ns: u64,
    pub loss: LossModel,
    pub loss_place: LossPlace,
    pub loss_dir: LossDir,
    /// Where a frame chosen for random loss is lost.
    pub loss_mode: LossMode,
    pub taps: Vec<TapPoint>,
    /// The fabric link the fabric tap watches.
    pub fabric_tap_path: u32,
    pub seed: u64,
    /// Simulated time after which the run stops, ns.
    pub time_limit_ns: u64,
    /// The no-progress watchdog, ns (0: off): the run stops when, for this long, work is
    /// outstanding and no message was posted, completed or delivered and no receiver accepted
    /// a data PSN for the first time ([`Fabric::run`]).
    pub watchdog_ns: u64,
    /// How endpoints decode frames.
    pub profile: Profile,
    pub params: Params,
    /// Largest DCP data frame (bytes, without FCS) for the §4.2 weight's `r`.
    pub data_frame_bytes: u32,
    pub accept: AcceptModel,
    /// Congestion control of the requesters' NICs.
    pub cc: CongestionControl,
    /// The fabric's shape: `Dumbbell` (its `senders` and `paths` are taken from the fields
    /// above) or a leaf-spine.
    pub topology: TopologyKind,
    /// The hosts the `sender`/`receiver` taps and loss places name: (requester host,
    /// responder host) of the first connection. `None`: sender 0 and the receiver (dumbbell).
    pub focus: Option<(usize, usize)>,
    /// Lossless mode: switches send PFC pause frames (`pfc.rs`) and never fill their queues.
    pub pfc: bool,
    /// Links that fail during the run: (link name as in the truth's places, e.g.
    /// `leaf0>spine1`, either direction naming the link; time, ns).
    pub link_failures: Vec<(String, Nanos)>,
    /// Frames lost on purpose: (one-way link as the truth's places name it, e.g. `leaf1>spine0`
    /// or `s0>sw0`; N): the Nth frame (from 1, PFC frames not counted) that link's sending port
    /// puts on the wire is lost on it, whatever the loss model (`--drop-frame`).
    pub frame_drops: Vec<(String, u64)>,
    /// NetRT in the switches that have hosts (the ToRs: a leaf-spine's leaves, the dumbbell's
    /// two switches): duplicate pools, reordering, requests (`netrt_tor.rs`).
    pub netrt: Option<rocescope_stacks::netrt::NetrtConfig>,
}

/// What a sending NIC does with the CNPs it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionControl {
    /// Nothing: CNPs end at the NIC.
    None,
    /// DCQCN's reaction point per requester QP (`rocescope_stacks::dcqcn`, the published
    /// parameters): each CNP lowers the QP's rate, which recovers by its timers and byte
    /// counter; the NIC paces the QP's packets at that rate. CNPs need ECN marking
    /// (`ecn_red`, on by default, or `ecn_threshold`).
    Dcqcn,
}

impl CongestionControl {
    pub fn name(self) -> &'static str {
        match self {
            CongestionControl::None => "none",
            CongestionControl::Dcqcn => "dcqcn",
        }
    }
    pub fn from_name(s: &str) -> Option<CongestionControl> {
        [CongestionControl::None, CongestionControl::Dcqcn].into_iter().find(|c| c.name() == s)
    }
}

/// RED-style ECN marking at a switch's data queue: a packet entering a queue of `q` bytes gets
/// CE with probability 0 below `kmin`, `pmax·(q−kmin)/(kmax−kmin)` between, 1 above `kmax`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Red {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

impl Red {
    /// The DCQCN paper's switch setting (Zhu et al., SIGCOMM 2015, §5): K_min 5 KB, K_max
    /// 200 KB, P_max 1 %.
    pub const DCQCN: Red = Red { kmin: 5_000, kmax: 200_000, pmax: 0.01 };

    /// Whether a packet entering a queue of `q` bytes is marked; `draw` gives a uniform number
    /// in [0, 1) and is called only between `kmin` and `kmax`, so runs whose queues stay short
    /// draw nothing.
    pub fn marks(&self, q: u64, draw: impl FnOnce() -> f64) -> bool {
        if q > self.kmax {
            true
        } else if q > self.kmin {
            draw() < self.pmax * (q - self.kmin) as f64 / (self.kmax - self.kmin).max(1) as f64
        } else {
            false
        }
    }
}

/// The fabric's shape (`topology.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyKind {
    Dumbbell,
    LeafSpine { leaves: u32, spines: u32, hosts_per_leaf: u32 },
}

impl Default for FabricConfig {
    fn default() -> Self {
        FabricConfig {
            senders: 1,
            rate_bps: 100_000_000_000,
            fabric_rate_bps: None,
            delay_ns: 1000,
            paths: 1,
            reorder_ns: 0,
            routing: Routing::Ecmp,
            queue_bytes: 1024 * 1024,
            trim: false,
            wrr_weight: None,
            radix: None,
            control_queue_bytes: 64 * 1024,
            ecn_threshold: None,
            ecn_red: Some(Red::DCQCN),
            cnp_interval_ns: 50_000,
            dcqcn_timer_ns: 55_000,
            loss: LossModel::default(),
            loss_place: LossPlace::Fabric,
            loss_dir: LossDir::Both,
            loss_mode: LossMode::Drop,
            taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
            fabric_tap_path: 0,
            seed: 1,
            time_limit_ns: 10_000_000_000,
            watchdog_ns: 0,
            profile: Profile::Std,
            params: Params::default(),
            data_frame_bytes: 78 + 1024,
            accept: AcceptModel::AnyOrder,
            cc: CongestionControl::Dcqcn,
            topology: TopologyKind::Dumbbell,
            focus: None,
            pfc: false,
            link_failures: Vec::new(),
            frame_drops: Vec::new(),
            netrt: None,
        }
    }
}

/// Bytes a frame of `len` captured bytes costs on the wire.
#[inline]
pub fn wire_bytes(len: usize) -> u64 {
    len.max(MIN_FRAME) as u64 + WIRE_OVERHEAD
}

impl FabricConfig {
    /// The WRR weight in force: the configured one, or seed 000 §4.2's `w = (N−1)/(r−N+1)`,
    /// with `N` the switch radix and `r` the ratio of a full data frame to a header-only frame
    /// on the wire (so that an (N−1)-to-1 incast of trimmed packets, `B·(N−1)/r` of header-only
    /// traffic, drains at `B·w/(1+w)`).
    ///
    /// The formula holds only for `r > N−1`. For `r ≤ N−1` §4.2 gives no weight ("we cannot
    /// theoretically guarantee lossless HO packet transmission by simply configuring the
    /// weight"), and §6.3 instead designs for an `N` below the radix (22 and 16 with 4 KB
    /// frames, i.e. weights below 1) and finds that such a small weight handles 128- and
    /// 255-to-1 incasts. We then design for `N−1 = ⌊r/2⌋`: a weight of about 1 (0.81 at the
    /// default 1024-byte MTU, where `r ≈ 13.4`), which keeps an incast of up to `⌊r/2⌋` senders
    /// lossless for header-only packets and leaves the data queue about half the port under a
    /// header-only flood. (The largest `N` the formula supports, `N−1 = ⌈r⌉−1`, gives `w ≈ 32`
    /// there: measured, a 16-to-1 DCP incast of 16 × 64 KB then takes 3.8 M transmissions and a
    /// 64-to-1 one does not finish in 120 s of wall time, while with `w ≈ 1` both complete, in
    /// 0.27 M and 0.62 M transmissions.) Where a data frame is no longer than two header-only
    /// ones (`r < 2`; the paper is silent) the queues share the port equally (`w = 1`). Strict
    /// priority is still available as `wrr_weight = ∞`.
    pub fn effective_wrr_weight(&self) -> f64 {
        if let Some(w) = self.wrr_weight {
            return w;
        }
        let n = self.radix.unwrap_or(self.senders as u32 + 1).max(2) as f64;
        let r = wire_bytes(self.data_frame_bytes as usize) as f64 / wire_bytes(MIN_FRAME) as f64;
        let n_minus_1 = if r > n - 1.0 { n - 1.0 } else { (r / 2.0).floor() };
        if n_minus_1 >= 1.0 {
            n_minus_1 / (r - n_minus_1)
        } else {
            1.0
        }
    }

    /// The rate of the links between switches: the configured one, or a non-blocking core:
    /// dumbbell `rate·⌈senders/paths⌉`, leaf-spine `rate·⌈hosts_per_leaf/spines⌉`.
    pub fn effective_fabric_rate(&self) -> u64 {
        self.fabric_rate_bps.unwrap_or_else(|| match self.topology {
            TopologyKind::Dumbbell => {
                let paths = self.paths.max(1) as u64;
                self.rate_bps * (self.senders as u64).div_ceil(paths).max(1)
            }
            TopologyKind::LeafSpine { spines, hosts_per_leaf, .. } => {
                self.rate_bps * (hosts_per_leaf.max(1) as u64).div_ceil(spines.max(1) as u64).max(1)
            }
        })
    }

    /// The topology this configuration builds.
    pub fn shape(&self) -> Shape {
        match self.topology {
            TopologyKind::Dumbbell => Shape::Dumbbell { senders: self.senders.max(1), paths: self.paths.max(1) },
            TopologyKind::LeafSpine { leaves, spines, hosts_per_leaf } => {
                Shape::LeafSpine { leaves, spines, hosts_per_leaf }
            }
        }
    }
}

/// Who put a transmission on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Requester,
    Responder,
    /// The receiving NIC's congestion notification (CNP).
    Nic,
    /// A switch (NetRT: the source ToR's resends from its pool, and the ToRs' messages).
    Switch,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::Requester => "requester",
            Origin::Responder => "responder",
            Origin::Nic => "nic",
            Origin::Switch => "switch",
        }
    }
}

/// What a transmission is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A request packet (SEND, WRITE, READ Request).
    Data,
    /// A READ response packet.
    ReadResp,
    Ack,
    Nak,
    /// IRN's selective NAK.
    Sack,
    /// A header-only packet bounced by the receiver to the sender (DCP).
    HoBounce,
    Cnp,
    Other,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Data => "data",
            Kind::ReadResp => "read_response",
            Kind::Ack => "ack",
            Kind::Nak => "nak",
            Kind::Sack => "sack",
            Kind::HoBounce => "ho_bounce",
            Kind::Cnp => "cnp",
            Kind::Other => "other",
        }
    }
    /// Carries message data (or a READ request): its PSNs are what retransmission is about.
    pub fn is_data(self) -> bool {
        matches!(self, Kind::Data | Kind::ReadResp)
    }
}

/// What an acknowledgement proves, read from the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cover {
    None,
    /// Every request PSN up to and including this one (an ACK).
    PsnLe(u32),
    /// Every request PSN before this one (a NAK, an IRN SACK, a READ response).
    PsnLt(u32),
    /// Every message whose DCP MSN precedes this eMSN (a DCP ACK).
    MsnLt(u32),
}

/// Why a packet did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The data queue was over its threshold.
    Queue,
    /// The control queue was full (a header-only packet lost).
    ControlQueue,
    /// Lost on a link at random.
    Link,
    /// Chosen for random loss at a switch egress port and dropped there ([`LossMode::Trim`]).
    Switch,
    /// No QP at the destination.
    NoEndpoint,
    /// NetRT's destination ToR dropped it: flushed from its reordering buffer on giving up, or
    /// a marked copy of a PSN it had already passed on (`netrt_tor.rs`).
    Reorder,
}

impl DropCause {
    pub fn name(self) -> &'static str {
        match self {
            DropCause::Queue => "queue",
            DropCause::ControlQueue => "control_queue",
            DropCause::Link => "link",
            DropCause::Switch => "switch",
            DropCause::NoEndpoint => "no_endpoint",
            DropCause::Reorder => "reorder",
        }
    }
}

/// Where a transmission ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    InFlight,
    /// Reached the destination NIC (intact, or as a header-only packet if `trimmed`).
    Delivered {
        at: Nanos,
    },
    Dropped {
        at: Nanos,
        cause: DropCause,
        place: u32,
    },
}

/// The receiver's verdict on an intact data packet (per [`AcceptModel`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    Accepted,
    /// A copy of this PSN was already accepted.
    Duplicate,
    /// Out of sequence (Go-Back-N).
    Discarded,
}

impl Accept {
    pub fn name(self) -> &'static str {
        match self {
            Accept::Accepted => "accepted",
            Accept::Duplicate => "duplicate",
            Accept::Discarded => "discarded",
        }
    }
}

/// One frame put on the wire by an endpoint or a NIC.
#[derive(Clone, Debug)]
pub struct TxRec {
    pub id: u32,
    pub conn: u32,
    pub origin: Origin,
    pub kind: Kind,
    pub psn: u32,
    pub msg: Option<u64>,
    pub reason: Option<RetxReason>,
    /// Towards the requester (else towards the responder).
    pub to_requester: bool,
    pub sent: Nanos,
    pub len: u32,
    pub fate: Fate,
    /// Trimmed to header-only (when, where).
    pub trimmed: Option<(Nanos, u32)>,
    pub accept: Option<Accept>,
    pub cover: Cover,
    /// The DCPETH MSN of a DCP data packet.
    pub dcp_msn: Option<u32>,
    /// NetRT: the transmission (its [`TxRec::id`]) whose bytes a switch resent.
    pub copy_of: Option<u32>,
    /// The BTH destination QP (0 for a frame that is not RoCE).
    pub qpn: u32,
    /// SDR: a data packet's offset in its send, from its immediate (docs/truth.md, "SDR").
    pub sdr_off: Option<u32>,
    /// SDR: the message sequence number of a data packet's send (its message's first send's
    /// plus the send's place: selective repeat sends a message once, erasure coding as
    /// D0, P0, D1, P1, …; the immediate names it modulo 2^ID).
    pub sdr_seq: Option<u32>,
}

/// One frame a tap recorded.
#[derive(Clone, Copy, Debug)]
pub struct TapFrame {
    /// pcapng frame number, from 1, over the whole file.
    pub frame: u64,
    /// Interface (index into `FabricConfig::taps`).
    pub tap: u8,
    pub time: Nanos,
    pub tx: u32,
    /// Incoming at the tapped port (else outgoing).
    pub incoming: bool,
    pub trimmed: bool,
    pub ce: bool,
}

/// A posted message and what happened to it.
#[derive(Clone, Debug)]
pub struct MsgRec {
    pub msg: Message,
    pub posted: Option<Nanos>,
    /// Every `Delivered` action: (time, len, intact).
    pub delivered: Vec<(Nanos, u32, bool)>,
    /// Every `Completed` action.
    pub completed: Vec<Nanos>,
    /// The transmission whose arrival made the requester complete the message.
    pub completed_by: Option<u32>,
    /// The transmission whose arrival made the responder deliver it (first delivery; for a
    /// READ the requester's).
    pub delivered_by: Option<u32>,
    /// Distinct data PSNs of it the receiver accepted (a READ's: responses the requester
    /// accepted), per the truth's acceptance model.
    pub accepted_packets: u32,
}

impl MsgRec {
    /// Its data packets (a READ's: responses) at `mtu` bytes a packet.
    pub fn packets(&self, mtu: u32) -> u32 {
        self.msg.len.div_ceil(mtu.max(1)).max(1)
    }
}

/// A message a run left unfinished ([`Fabric::unfinished`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfinished {
    pub conn: u32,
    pub msg: u64,
    pub op: Op,
    pub len: u32,
    /// Posted by the time the run ended.
    pub posted: bool,
    /// Data packets the receiver accepted, of `packets`.
    pub accepted_packets: u32,
    pub packets: u32,
    /// Bytes delivered to the application (whole deliveries only).
    pub delivered_bytes: u64,
    /// Its connection gave up: why.
    pub failed: Option<&'static str>,
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "connection {} message {} ({} of {} bytes): ", self.conn, self.msg, self.op.name(), self.len)?;
        if !self.posted {
            return write!(f, "not posted yet");
        }
        write!(
            f,
            "{}/{} packets accepted by the receiver, {} bytes delivered, not completed",
            self.accepted_packets, self.packets, self.delivered_bytes
        )?;
        if let Some(r) = self.failed {
            write!(f, " (connection failed: {r})")?;
        }
        Ok(())
    }
}

/// One connection.
pub struct ConnRec {
    pub cfg: ConnConfig,
    /// The requester's host (index into the topology's hosts).
    pub sender: usize,
    /// The responder's host.
    pub receiver: usize,
    pub messages: Vec<MsgRec>,
    pub failed: Option<(Nanos, &'static str)>,
}

/// Progress of a run, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub now: Nanos,
    pub events: u64,
    pub completed: u64,
    pub messages: u64,
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStats {
    pub events: u64,
    /// Frames put on a link by any port (each hop counts).
    pub link_frames: u64,
    /// Frames the endpoints and NICs transmitted.
    pub transmissions: u64,
    /// Frames the taps recorded.
    pub captured: u64,
    pub end_ns: Nanos,
    pub timed_out: bool,
    /// The no-progress watchdog ended the run ([`FabricConfig::watchdog_ns`]).
    pub watchdog: bool,
    /// Nothing was left to happen (no event) while messages were unfinished: the stacks are
    /// waiting for something that will never come.
    pub stuck: bool,
    pub trimmed: u64,
    pub dropped: u64,
    /// Packets chosen for random loss and dropped at a switch port ([`LossMode::Trim`]).
    pub random_dropped: u64,
    /// Header-only packets lost in a full control queue.
    pub ho_dropped: u64,
    pub ce_marked: u64,
    pub cnps: u64,
    /// CNPs a requester's DCQCN reacted to.
    pub cnps_reacted: u64,
    /// The most bytes any control queue held.
    pub max_control_queue_bytes: u64,
    /// PFC frames sent by switches: pauses (and renewals), resumes.
    pub pause_frames: u64,
    pub resume_frames: u64,
    /// Pause frames that reached a port (and paused it).
    pub pauses_received: u64,
    /// Lossless mode: switch ports whose link needs more headroom than the buffer has.
    pub pfc_short_headroom_ports: u64,
    /// Links that failed during the run.
    pub failed_links: u64,
    /// NetRT (`netrt_tor.rs`): what its ToRs did.
    pub netrt: NetrtStats,
}

/// What NetRT's ToRs did during a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetrtStats {
    /// Retransmission requests the destination ToRs sent.
    pub requests: u64,
    /// Unfulfilled request notifications the source ToRs sent.
    pub unfulfilled: u64,
    /// Packets the source ToRs resent from their pools.
    pub resends: u64,
    /// Flows a destination ToR sent to Waiting (the hosts' Go-Back-N takes over).
    pub waiting: u64,
    /// Packets a destination ToR held out of order (each once).
    pub held: u64,
    /// Packets a destination ToR dropped: flushed on giving up, or late duplicates.
    pub dropped: u64,
    /// Duplicates a full pool evicted.
    pub evicted: u64,
    /// PFC pauses (and resumes) a source ToR sent its sender while resending.
    pub pauses: u64,
    pub resumes: u64,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    PortDone(u32),
    /// A port paused by PFC may send again.
    PortWake(u32),
    /// Renew a PFC pause this port sent, if still needed.
    PfcRefresh(u32),
    /// Link `n` of the topology fails.
    LinkDown(u32),
    Arrive { port: u32, pkt: u32 },
    Timer { ep: u32, token: u64 },
    Post { conn: u32, idx: u32 },
    /// Time 0: an endpoint that acts unprompted starts ([`Endpoint::start`]: SDR's receiver
    /// posts its receives and sends their CTS).
    Start { ep: u32 },
    /// A host NIC's rate-limited QP may send again (`nic.rs`).
    NicWake(u32),
    /// NetRT: a destination ToR's request timer for a flow (`netrt_tor.rs`).
    NetrtRequest { sw: u16, conn: u32 },
    /// NetRT: a source ToR's next paced resend.
    NetrtResend { sw: u16 },
}

struct Packet {
    bytes: Vec<u8>,
    tx: u32,
    dst_host: u16,
    flow: u64,
    trimmed: bool,
    /// Going to the requester (a response, an ACK): what `--loss-dir` filters on.
    to_requester: bool,
    /// At a switch: the port it came in through (PFC's ingress accounting), else `NO_PORT`.
    ingress: u32,
    /// Chosen for random loss on a host-fed link ([`LossMode::Trim`]): the switch it enters
    /// loses (trims or drops) it at its egress port.
    doomed: bool,
}

/// No port.
const NO_PORT: u32 = u32::MAX;
/// The transmission of a frame no endpoint sent (a switch's PFC frame).
const NO_TX: u32 = u32::MAX;

struct LossState {
    rng: Rng,
    model: LossModel,
    bad: bool,
    /// Which packets the loss process sees: all (`Both`: the dumbbell, whose lossy ports carry
    /// one direction), or only those towards the responder (`Forward`) or the requester.
    dir: LossDir,
}

impl LossState {
    /// Whether a packet going towards the requester (or not) is subject to this loss.
    fn applies(&self, to_requester: bool) -> bool {
        match self.dir {
            LossDir::Both => true,
            LossDir::Forward => !to_requester,
            LossDir::Reverse => to_requester,
        }
    }

    fn lose(&mut self) -> bool {
        if let Some((gb, bg)) = self.model.burst {
            if self.bad {
                if self.rng.chance(bg) {
                    self.bad = false;
                }
            } else if self.rng.chance(gb) {
                self.bad = true;
            }
            if self.bad {
                return true;
            }
        }
        self.rng.chance(self.model.p)
    }
}

struct Port {
    node: u16,
    peer: u32,
    rate_bps: u64,
    delay_ns: u64,
    loss: Option<LossState>,
    name: String,
    data: VecDeque<u32>,
    data_bytes: u64,
    ctrl: VecDeque<u32>,
    ctrl_bytes: u64,
    /// NetRT's high-priority queue (switches): the source ToR's resends and the ToRs' messages,
    /// served before the control and data queues (`netrt_tor.rs`).
    prio: VecDeque<u32>,
    /// The frame on the wire occupies the port until then.
    busy_until: Nanos,
    /// A `PortDone` event is scheduled (at `busy_until`). Switch ports schedule one only when
    /// something waits behind the frame on the wire: an idle hop costs one event, not two.
    done_pending: bool,
    v_data: u128,
    v_ctrl: u128,
    tap: Option<u8>,
    is_switch: bool,
    /// PFC frames to send (served before anything else, never paused).
    mac_ctrl: VecDeque<u32>,
    /// Frames put on the wire (PFC frames not counted), and which of them are lost on purpose
    /// ([`FabricConfig::frame_drops`]).
    sent: u64,
    drop_nth: Vec<u64>,
    /// Pause set by PFC frames received on this port (`pfc.rs`).
    pause: EgressPause,
    /// Switches: the bytes that came in through this port and still wait in an egress queue.
    meter: IngressMeter,
    /// The link failed (`link_failures`).
    down: bool,
    /// Lossless mode: this switch port's PFC thresholds as an ingress port.
    pfc: Option<PfcConfig>,
    /// RED marking's draws (its own stream, so marking changes no other randomness).
    ecn_rng: Rng,
}

/// A node: a host (with its QPs) or a switch.
struct Node {
    name: String,
    ports: Vec<u32>,
    /// Hosts: QPN → endpoint.
    qps: FxHashMap<u32, u32>,
    /// Hosts: TCP (source port, destination port) → endpoint (ERD's NACK path: each
    /// connection's receiver has a port of its own, the senders share the NACK port).
    tcp: FxHashMap<(u16, u16), u32>,
    ip: Option<IpAddr>,
    mac: [u8; 6],
    /// Switches: per destination host, the candidate egress ports.
    routes: Vec<Vec<u32>>,
    rng: Rng,
    /// Hosts: the NIC's transmit scheduler over the host's requester QPs.
    nic: NicSched,
}

enum EpBox {
    Req(Box<dyn Requester>),
    Resp(Box<dyn Endpoint>),
}

/// Per connection and direction, the receiver's acceptance state (for the truth).
#[derive(Default)]
struct AcceptState {
    expected: Option<u32>,
    /// Any-order acceptance: every PSN before `floor` was accepted, and `seen` holds those
    /// accepted at or after it (the out-of-order window, so it stays as small as the window).
    floor: Option<u32>,
    seen: FxHashSet<u32>,
    /// Go-Back-N READ responses: the (message, PSN) the requester accepts next; the PSN is
    /// `None` until that message's READ Request has been sent.
    resp_next: Option<(u64, Option<u32>)>,
    /// SDR: the packets (immediates) accepted of each message not yet delivered (a packet is
    /// known by its message and immediate, not by its UC PSN).
    units: FxHashMap<u64, FxHashSet<u32>>,
}

/// The simulator.
pub struct Fabric<'w> {
    pub cfg: FabricConfig,
    ports: Vec<Port>,
    nodes: Vec<Node>,
    eps: Vec<EpBox>,
    /// Endpoint → (connection, is requester).
    ep_conn: Vec<(u32, bool)>,
    pub conns: Vec<ConnRec>,
    pub txs: Vec<TxRec>,
    pub tap_frames: Vec<TapFrame>,
    /// Names of the places where packets are dropped or trimmed.
    pub places: Vec<String>,
    place_ids: HashMap<String, u32>,
    accept: Vec<[AcceptState; 2]>,
    /// Per connection, its requester QP's DCQCN state (with `CongestionControl::Dcqcn`).
    dcqcn: Vec<Option<Dcqcn>>,
    /// First PSN of each READ as the requester sent it.
    msg_first_psn: Vec<FxHashMap<u64, u32>>,
    queue: EventQueue<Ev>,
    now: Nanos,
    packets: Vec<Option<Packet>>,
    free: Vec<u32>,
    actions: Vec<Action>,
    writer: Option<CaptureWriter<Box<dyn Write + 'w>>>,
    write_error: Option<std::io::Error>,
    frames_written: u64,
    last_cnp: FxHashMap<(u16, u32), Nanos>,
    pub stats: RunStats,
    /// What the run's fault (`--fault`) did, written by the faulty end
    /// (`rocescope_stacks::faults`); empty without one.
    pub faults: rocescope_stacks::faults::FaultLog,
    /// The connection the fault's end belongs to.
    pub fault_connection: u32,
    /// Keep [`Self::tap_frames`] (the truth needs them; a capture alone does not).
    pub keep_tap_frames: bool,
    /// Keep every transmission's record in [`Self::txs`] for the whole run (the truth needs
    /// them). Off, a record is recycled once its frame is delivered or lost, so `txs` holds
    /// only what is in flight and a record's `id` is its slot, reused.
    pub keep_txs: bool,
    /// ERD: what each NACK segment named, in transmission order, with [`Self::keep_txs`] (with
    /// [`Self::spill_truth`], in [`Self::spilled`] instead).
    pub erd_nacks: Vec<NackNames>,
    /// SDR: what each control message said, in transmission order (kept like [`Self::erd_nacks`]).
    pub sdr_ctrls: Vec<SdrCtrlNames>,
    /// Flor: per connection, its data receiver as judged ([`flor_judge`]; `None` for the other
    /// stacks), and each WQE transmission that reached it, closed in arrival order, with its
    /// connection (kept like [`Self::erd_nacks`]).
    flor_judges: Vec<Option<flor_judge::FlorJudge>>,
    pub flor_wqes: Vec<(u32, flor_judge::Closed)>,
    /// Flor: each WQE transmission the senders put on the wire, in transmission order (kept like
    /// [`Self::erd_nacks`]), and per connection how many so far (the sender's GN).
    pub flor_sent: Vec<flor_sent::SentWqe>,
    flor_gns: Vec<u64>,
    /// Flor: per connection, the GN of each WRITE chunk sent and not yet listed by an ACK, by
    /// reliable number (MID, chunk offset); and what each receiver ACK listed, in transmission
    /// order (kept like [`Self::erd_nacks`]).
    flor_chunk_gns: Vec<HashMap<(u32, u32), u64>>,
    pub flor_acks: Vec<flor_sent::AckGns>,
    /// SDR: per connection, each message's first send's sequence number (as far as asked).
    sdr_send_bases: Vec<Vec<u64>>,
    /// SDR: per (connection, message sequence number), the chunks its SR_ACKs so far mark past
    /// their cumulative ACK (live: a message's entry goes once nothing is marked past it).
    sdr_marks: FxHashMap<(u32, u32), sdr_ctrl_names::Marks>,
    /// Recycled slots of [`Self::txs`] (without [`Self::keep_txs`]).
    free_txs: Vec<u32>,
    /// The truth's records on disk ([`Self::spill_truth`]); `None` otherwise.
    pub spilled: Option<crate::spill::Spilled>,
    /// Transmission ids handed out when spilling (unique: [`TxRec::id`] is then not the slot).
    next_tx_id: u32,
    posts_pending: u64,
    completed: u64,
    /// When the run last made progress (for the watchdog).
    last_progress: Nanos,
    total_messages: u64,
    wrr: (u128, u128),
    decode: DecodeOptions,
    /// A host NIC is pulling: the requester's frame goes to [`Self::pulled`], not a queue.
    pulling: bool,
    pulled: Option<u32>,
    /// Nodes, links and routes as built (`topology.rs`); routes change when a link fails.
    topo: Topology,
    /// Per topology link, its two ports (a's egress, b's egress).
    link_ports: Vec<(u32, u32)>,
    /// The NIC counters each host would show (`counters.rs`).
    pub counters: CounterState,
    /// NetRT's ToR state ([`FabricConfig::netrt`]).
    netrt: Option<Box<netrt_tor::Tors>>,
}

impl<'w> Fabric<'w> {
    /// Builds the topology. Frames the taps record go to `writer` (one interface per tap, in
    /// the order of `cfg.taps`), if given.
    pub fn new(cfg: FabricConfig, writer: Option<CaptureWriter<Box<dyn Write + 'w>>>) -> Fabric<'w> {
        let mut f = Fabric {
            ports: Vec::new(),
            nodes: Vec::new(),
            eps: Vec::new(),
            ep_conn: Vec::new(),
            conns: Vec::new(),
            txs: Vec::new(),
            tap_frames: Vec::new(),
            places: Vec::new(),
            place_ids: HashMap::new(),
            accept: Vec::new(),
            dcqcn: Vec::new(),
            msg_first_psn: Vec::new(),
            queue: EventQueue::default(),
            now: 0,
            packets: Vec::new(),
            free: Vec::new(),
            actions: Vec::new(),
            writer,
            write_error: None,
            frames_written: 0,
            last_cnp: FxHashMap::default(),
            stats: RunStats::default(),
            faults: Default::default(),
            fault_connection: 0,
            keep_tap_frames: true,
            keep_txs: true,
            erd_nacks: Vec::new(),
            sdr_ctrls: Vec::new(),
            flor_judges: Vec::new(),
            flor_wqes: Vec::new(),
            flor_sent: Vec::new(),
            flor_gns: Vec::new(),
            flor_chunk_gns: Vec::new(),
            flor_acks: Vec::new(),
            sdr_send_bases: Vec::new(),
            sdr_marks: FxHashMap::default(),
            free_txs: Vec::new(),
            spilled: None,
            next_tx_id: 0,
            posts_pending: 0,
            completed: 0,
            last_progress: 0,
            total_messages: 0,
            wrr: weight_ratio(cfg.effective_wrr_weight()),
            decode: DecodeOptions { verify: false, profile: cfg.profile, params: cfg.params },
            pulling: false,
            pulled: None,
            topo: Topology::new(cfg.shape()),
            link_ports: Vec::new(),
            counters: CounterState::default(),
            netrt: cfg.netrt.map(|c| Box::new(netrt_tor::Tors::new(c))),
            cfg,
        };
        // Nodes, in the topology's order (hosts, then switches). The random streams of the
        // dumbbell's nodes and links are those of the first captures (fixtures keep their bytes).
        let topo = f.topo.clone();
        let dumbbell = matches!(topo.shape, Shape::Dumbbell { .. });
        let mut switch_no = 0u64;
        for (i, n) in topo.nodes.iter().enumerate() {
            let (ip, stream) = match n.kind {
                NodeKind::Host { ip } => {
                    let is_receiver = dumbbell && i == topo.hosts.len() - 1;
                    (Some(ip), if is_receiver { 99 } else { 100 + i as u64 })
                }
                NodeKind::Switch => {
                    switch_no += 1;
                    (None, switch_no)
                }
            };
            f.add_node(n.name.clone(), ip, n.mac, stream);
        }
        let (rate, frate, delay) = (f.cfg.rate_bps, f.cfg.effective_fabric_rate(), f.cfg.delay_ns);
        let seed = f.cfg.seed;
        let (focus_src, focus_dst) = f.focus();
        let lossy = |place: LossPlace, forward: bool, cfg: &FabricConfig| -> bool {
            !cfg.loss.is_none()
                && cfg.loss_place == place
                && match cfg.loss_dir {
                    LossDir::Both => true,
                    LossDir::Forward => forward,
                    LossDir::Reverse => !forward,
                }
        };
        let (paths, spines) = match topo.shape {
            Shape::Dumbbell { paths, .. } => (paths, 1),
            Shape::LeafSpine { spines, .. } => (1, spines),
        };
        let mut access_no = 0u64;
        for (li, l) in topo.links.iter().enumerate() {
            let (a, b) = (l.a as u16, l.b as u16);
            let ports = match l.role {
                LinkRole::Access => {
                    // a is the host. Towards the focus receiver is "forward".
                    let h = topo.hosts.iter().position(|&n| n == l.a).expect("an access link starts at a host");
                    let (lo, li_) = if h == focus_src {
                        (lossy(LossPlace::Sender, true, &f.cfg), lossy(LossPlace::Sender, false, &f.cfg))
                    } else if h == focus_dst {
                        (lossy(LossPlace::Receiver, false, &f.cfg), lossy(LossPlace::Receiver, true, &f.cfg))
                    } else {
                        (false, false)
                    };
                    let stream = if dumbbell && h == topo.hosts.len() - 1 {
                        900
                    } else {
                        let s = 1000 + 2 * access_no;
                        access_no += 1;
                        s
                    };
                    f.link(a, b, rate, delay, lo, li_, seed, stream)
                }
                LinkRole::Path(k) => {
                    let extra = if paths > 1 { f.cfg.reorder_ns * k as u64 / (paths as u64 - 1) } else { 0 };
                    let (lo, li_) = (lossy(LossPlace::Fabric, true, &f.cfg), lossy(LossPlace::Fabric, false, &f.cfg));
                    f.link(a, b, frate, delay + extra, lo, li_, seed, 2000 + 2 * k as u64)
                }
                LinkRole::Uplink { leaf, spine } => {
                    // Both directions of every uplink carry both directions of traffic: the
                    // direction filter of --loss-dir applies per packet (`LossState::dir`).
                    let on = lossy(LossPlace::Fabric, true, &f.cfg) || lossy(LossPlace::Fabric, false, &f.cfg);
                    let stream = 2000 + 2 * (leaf as u64 * spines as u64 + spine as u64);
                    let (p0, p1) = f.link(a, b, frate, delay, on, on, seed, stream);
                    for p in [p0, p1] {
                        if let Some(l) = f.ports[p as usize].loss.as_mut() {
                            l.dir = f.cfg.loss_dir;
                        }
                    }
                    (p0, p1)
                }
            };
            debug_assert_eq!(f.link_ports.len(), li);
            let (ab, ba) = topo.link_names(li);
            f.ports[ports.0 as usize].name = ab;
            f.ports[ports.1 as usize].name = ba;
            f.link_ports.push(ports);
        }
        f.install_routes();
        // Taps.
        let taps = f.cfg.taps.clone();
        for (t, tap) in taps.iter().enumerate() {
            let port = match tap {
                TapPoint::Sender => f.nodes[topo.hosts[focus_src]].ports[0],
                TapPoint::Receiver => f.nodes[topo.hosts[focus_dst]].ports[0],
                TapPoint::Fabric => {
                    let k = f.cfg.fabric_tap_path;
                    let leaf = topo.leaf_of(focus_src);
                    let links: Vec<usize> = (0..topo.links.len())
                        .filter(|&l| topo.links[l].a == leaf && !matches!(topo.links[l].role, LinkRole::Access))
                        .collect();
                    let l = links[(k as usize).min(links.len().saturating_sub(1))];
                    f.link_ports[l].0
                }
            };
            f.ports[port as usize].tap = Some(t as u8);
        }
        for (name, n) in f.cfg.frame_drops.clone() {
            if let Some(p) = f.ports.iter_mut().find(|p| p.name == name) {
                p.drop_nth.push(n);
            }
        }
        for (name, at) in f.cfg.link_failures.clone() {
            if let Some(l) = f.link_by_name(&name) {
                f.queue.push(at, Ev::LinkDown(l as u32));
            }
        }
        if f.cfg.pfc {
            // Each switch port's ingress share of the buffer is `queue_bytes`; its XOFF leaves
            // the headroom of its own link. A link too fast or long for the buffer gets a best
            // effort: XOFF at a quarter of it (losses then remain possible and are counted).
            let max_frame = wire_bytes(f.cfg.data_frame_bytes as usize);
            for p in 0..f.ports.len() {
                if !f.ports[p].is_switch {
                    continue;
                }
                let (rate, delay) = (f.ports[p].rate_bps, f.ports[p].delay_ns);
                let q = f.cfg.queue_bytes;
                f.ports[p].pfc = Some(PfcConfig::for_buffer(q, rate, delay, max_frame).unwrap_or_else(|| {
                    f.stats.pfc_short_headroom_ports += 1;
                    PfcConfig { xoff_bytes: q / 4, xon_bytes: q / 8, priority: pfc::ROCE_PRIORITY }
                }));
            }
        }
        f
    }

    /// The topology link one of whose ports is named `name` ([`Topology::link_by_name`]).
    pub fn link_by_name(&self, name: &str) -> Option<usize> {
        self.topo.link_by_name(name)
    }

    /// (sender host, receiver host) the taps and loss places name.
    fn focus(&self) -> (usize, usize) {
        self.cfg.focus.unwrap_or((0, self.topo.hosts.len() - 1))
    }

    /// Each switch's candidate egress ports per destination host, from the topology's routes.
    fn install_routes(&mut self) {
        for n in 0..self.topo.nodes.len() {
            if matches!(self.topo.nodes[n].kind, NodeKind::Host { .. }) {
                continue;
            }
            let routes = self.topo.routes[n]
                .iter()
                .map(|hops| {
                    hops.iter()
                        .map(|h| if h.forward { self.link_ports[h.link].0 } else { self.link_ports[h.link].1 })
                        .collect()
                })
                .collect();
            self.nodes[n].routes = routes;
        }
    }

    fn add_node(&mut self, name: String, ip: Option<IpAddr>, mac: [u8; 6], stream: u64) -> u16 {
        self.nodes.push(Node {
            name,
            ports: Vec::new(),
            qps: FxHashMap::default(),
            tcp: FxHashMap::default(),
            ip,
            mac,
            routes: Vec::new(),
            rng: Rng::new(self.cfg.seed, stream),
            nic: NicSched::default(),
        });
        (self.nodes.len() - 1) as u16
    }

    /// A duplex link between `a` and `b`; returns (a's port, b's port).
    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        a: u16,
        b: u16,
        rate: u64,
        delay: u64,
        lossy_ab: bool,
        lossy_ba: bool,
        seed: u64,
        stream: u64,
    ) -> (u32, u32) {
        let pa = self.ports.len() as u32;
        let pb = pa + 1;
        let model = self.cfg.loss;
        for (node, peer, lossy, s) in [(a, pb, lossy_ab, stream), (b, pa, lossy_ba, stream + 1)] {
            let is_switch = self.nodes[node as usize].ip.is_none();
            self.ports.push(Port {
                node,
                peer,
                rate_bps: rate,
                delay_ns: delay,
                loss: lossy.then(|| LossState { rng: Rng::new(seed, s), model, bad: false, dir: LossDir::Both }),
                name: String::new(), // the topology's name for it, set by `new`
                data: VecDeque::new(),
                data_bytes: 0,
                ctrl: VecDeque::new(),
                ctrl_bytes: 0,
                prio: VecDeque::new(),
                busy_until: 0,
                done_pending: false,
                v_data: 0,
                v_ctrl: 0,
                tap: None,
                is_switch,
                mac_ctrl: VecDeque::new(),
                sent: 0,
                drop_nth: Vec::new(),
                pause: EgressPause::default(),
                meter: IngressMeter::default(),
                down: false,
                pfc: None,
                ecn_rng: Rng::new(seed, 50_000 + s),
            });
        }
        self.nodes[a as usize].ports.push(pa);
        self.nodes[b as usize].ports.push(pb);
        (pa, pb)
    }

    /// Host `i`'s (MAC, IP) (hosts in the topology's order: on the dumbbell, the senders then
    /// the receiver).
    pub fn host(&self, i: usize) -> ([u8; 6], IpAddr) {
        let n = &self.nodes[self.topo.hosts[i]];
        (n.mac, n.ip.expect("hosts have addresses"))
    }

    /// Host `i`'s name (`s0`, `r0`, `h1.2`, …).
    pub fn host_name(&self, i: usize) -> &str {
        &self.nodes[self.topo.hosts[i]].name
    }

    /// The host whose NIC `tap` watches (`None` for the fabric tap).
    pub fn tap_host(&self, tap: TapPoint) -> Option<usize> {
        match tap {
            TapPoint::Sender => Some(self.focus().0),
            TapPoint::Receiver => Some(self.focus().1),
            TapPoint::Fabric => None,
        }
    }

    /// Hosts in the topology.
    pub fn hosts(&self) -> usize {
        self.topo.hosts.len()
    }

    /// Adds a connection from sender `sender` to the dumbbell's receiver.
    pub fn add_connection(
        &mut self,
        sender: usize,
        cfg: ConnConfig,
        req: Box<dyn Requester>,
        resp: Box<dyn Endpoint>,
    ) -> u32 {
        let receiver = self.hosts() - 1;
        self.add_connection_between(sender, receiver, cfg, req, resp)
    }

    /// Adds a connection whose requester is on host `src` and responder on host `dst`. `cfg`
    /// must use the hosts' addresses ([`Self::host`]).
    pub fn add_connection_between(
        &mut self,
        src: usize,
        dst: usize,
        cfg: ConnConfig,
        req: Box<dyn Requester>,
        resp: Box<dyn Endpoint>,
    ) -> u32 {
        let c = self.conns.len() as u32;
        let e = self.eps.len() as u32;
        self.eps.push(EpBox::Req(req));
        self.eps.push(EpBox::Resp(resp));
        self.ep_conn.push((c, true));
        self.ep_conn.push((c, false));
        let (src_node, dst_node) = (self.topo.hosts[src], self.topo.hosts[dst]);
        self.nodes[src_node].qps.insert(cfg.requester.qpn, e);
        self.nodes[src_node].nic.add(e);
        self.nodes[dst_node].qps.insert(cfg.responder.qpn, e + 1);
        if let Some(sdr) = &cfg.sdr {
            // SDR: every generation's and channel's data QP; both ends start at time 0 (the
            // receiver's first CTSes). Only SDR connections queue these: the other stacks' runs
            // keep their events, and outputs, as they were.
            for q in sdr.data_qpns(&cfg) {
                self.nodes[dst_node].qps.insert(q, e + 1);
            }
            self.queue.push(0, Ev::Start { ep: e + 1 });
            self.queue.push(0, Ev::Start { ep: e });
        }
        if let Some(flor) = &cfg.flor {
            // Flor: the sender's UD ACK QP.
            self.nodes[src_node].qps.insert(flor.sender_ack_qpn, e);
        }
        if let Some(erd) = &cfg.erd {
            // ERD: the NACK path's segments (from the receiver's port) reach the sender, its
            // ACKs (from the NACK port) the receiver.
            let nack = cfg.params.erd_nack_port;
            self.nodes[src_node].tcp.insert((erd.info_port, nack), e);
            self.nodes[dst_node].tcp.insert((nack, erd.info_port), e + 1);
        }
        let unit = cfg.params.flor_unit_size;
        let flor_judge = cfg
            .flor
            .as_ref()
            .map(|f| flor_judge::FlorJudge::new(cfg.start_psn, unit, cfg.params.flor_split, f.send_max));
        self.flor_judges.push(flor_judge);
        self.flor_gns.push(0);
        self.flor_chunk_gns.push(HashMap::new());
        self.conns.push(ConnRec { cfg, sender: src, receiver: dst, messages: Vec::new(), failed: None });
        self.sdr_send_bases.push(Vec::new());
        self.accept.push([AcceptState::default(), AcceptState::default()]);
        let line = self.cfg.rate_bps as f64;
        let dcqcn = DcqcnConfig { increase_period_ns: self.cfg.dcqcn_timer_ns, ..DcqcnConfig::paper(line) };
        self.dcqcn.push((self.cfg.cc == CongestionControl::Dcqcn).then(|| Dcqcn::new(dcqcn)));
        self.msg_first_psn.push(FxHashMap::default());
        c
    }

    /// Posts `msg` on connection `conn` at time `at`. Messages must be posted with ids 0, 1, …
    pub fn post(&mut self, conn: u32, at: Nanos, msg: Message) {
        let c = &mut self.conns[conn as usize];
        let idx = c.messages.len() as u32;
        c.messages.push(MsgRec {
            msg,
            posted: None,
            delivered: Vec::new(),
            completed: Vec::new(),
            completed_by: None,
            delivered_by: None,
            accepted_packets: 0,
        });
        self.posts_pending += 1;
        self.total_messages += 1;
        self.queue.push(at, Ev::Post { conn, idx });
    }

    fn place(&mut self, name: String) -> u32 {
        if let Some(&id) = self.place_ids.get(&name) {
            return id;
        }
        let id = self.places.len() as u32;
        self.places.push(name.clone());
        self.place_ids.insert(name, id);
        id
    }

    /// Every posted message completed (or its connection failed).
    pub fn done(&self) -> bool {
        self.posts_pending == 0
            && self.eps.iter().all(|e| match e {
                EpBox::Req(r) => r.idle(),
                EpBox::Resp(_) => true,
            })
    }

    /// Runs to completion (every requester idle and nothing left on the wire), to the time
    /// limit, or until the watchdog sees no progress for [`FabricConfig::watchdog_ns`]: a
    /// message posted, completed or delivered, or a data PSN accepted for the first time
    /// (the DCP paper and the stacks' own retry limits bound recovery, but a stack caught in
    /// a retransmission loop would otherwise run to the time limit, its capture growing all
    /// the while). `progress` is called every 2^16 events.
    pub fn run(&mut self, mut progress: Option<&mut dyn FnMut(&Progress)>) -> std::io::Result<RunStats> {
        let mut finished = false;
        let watchdog = self.cfg.watchdog_ns;
        while let Some((time, ev)) = self.queue.pop() {
            if time > self.cfg.time_limit_ns {
                self.stats.timed_out = true;
                break;
            }
            let outstanding = self.completed + self.posts_pending < self.total_messages;
            if !finished && watchdog > 0 && outstanding && time > self.last_progress + watchdog {
                self.now = self.last_progress + watchdog;
                self.stats.watchdog = true;
                break;
            }
            if finished && matches!(ev, Ev::Timer { .. }) {
                continue;
            }
            self.now = time;
            self.stats.events += 1;
            if self.stats.events & 0xffff == 0 {
                if let Some(p) = progress.as_mut() {
                    p(&Progress {
                        now: self.now,
                        events: self.stats.events,
                        completed: self.completed,
                        messages: self.total_messages,
                    });
                }
            }
            match ev {
                Ev::PortDone(p) => self.port_done(p),
                Ev::NicWake(p) => self.kick(p),
                Ev::PortWake(p) => self.port_wake(p),
                Ev::PfcRefresh(p) => self.pfc_refresh(p),
                Ev::LinkDown(l) => self.fail_link(l as usize),
                Ev::Arrive { port, pkt } => self.arrive(port, pkt),
                Ev::NetrtRequest { sw, conn } => {
                    if !finished {
                        self.netrt_request_timer(sw, conn)
                    }
                }
                Ev::NetrtResend { sw } => self.netrt_resend(sw),
                Ev::Timer { ep, token } => {
                    if !finished {
                        let mut actions = std::mem::take(&mut self.actions);
                        let is_req = match &mut self.eps[ep as usize] {
                            EpBox::Req(r) => {
                                r.on_timer(self.now, token, &mut actions);
                                true
                            }
                            EpBox::Resp(r) => {
                                r.on_timer(self.now, token, &mut actions);
                                false
                            }
                        };
                        // An expiry (not a timer that only moves itself on): its first
                        // timeout-tagged packet counts (`counters.rs`).
                        if is_req && !actions.iter().any(|a| matches!(a, Action::Timer { .. })) {
                            self.counters.timer_fired(ep as usize);
                        }
                        self.run_actions(ep, &mut actions, None);
                        self.actions = actions;
                    }
                }
                Ev::Start { ep } => {
                    if !finished {
                        let mut actions = std::mem::take(&mut self.actions);
                        match &mut self.eps[ep as usize] {
                            EpBox::Req(r) => r.start(self.now, &mut actions),
                            EpBox::Resp(r) => r.start(self.now, &mut actions),
                        }
                        self.run_actions(ep, &mut actions, None);
                        self.actions = actions;
                    }
                }
                Ev::Post { conn, idx } => {
                    let ep = conn * 2;
                    let m = &mut self.conns[conn as usize].messages[idx as usize];
                    m.posted = Some(self.now);
                    let msg = m.msg;
                    self.posts_pending -= 1;
                    self.last_progress = self.now;
                    let mut actions = std::mem::take(&mut self.actions);
                    if let EpBox::Req(r) = &mut self.eps[ep as usize] {
                        r.post(self.now, msg, &mut actions);
                    }
                    self.run_actions(ep, &mut actions, None);
                    self.actions = actions;
                }
            }
            if !finished && self.done() {
                // From now on only what is already on the wire plays out: timers are ignored.
                finished = true;
            }
            if finished && self.packets.len() == self.free.len() && !self.ports.iter().any(|p| p.busy_until > self.now) {
                break;
            }
        }
        if !finished && !self.stats.timed_out && !self.stats.watchdog && !self.done() {
            self.stats.stuck = true;
        }
        self.stats.end_ns = self.now;
        self.finish_flor();
        self.stats.captured = self.frames_written;
        if let Some(e) = self.write_error.take() {
            return Err(e);
        }
        Ok(self.stats)
    }

    /// Takes the capture writer back (after [`Self::run`]).
    pub fn take_writer(&mut self) -> Option<CaptureWriter<Box<dyn Write + 'w>>> {
        self.writer.take()
    }

    fn run_actions(&mut self, ep: u32, actions: &mut Vec<Action>, trigger: Option<u32>) {
        let (conn, is_req) = self.ep_conn[ep as usize];
        for a in actions.drain(..) {
            match a {
                Action::Transmit { frame, info } => {
                    let origin = if is_req { Origin::Requester } else { Origin::Responder };
                    if is_req {
                        let h = self.conns[conn as usize].sender;
                        let timeout = info.retx == Some(RetxReason::Timeout);
                        let other = matches!(info.retx, None | Some(RetxReason::GoBack));
                        self.counters.requester_sent(ep as usize, h, timeout, other);
                    }
                    self.transmit(conn, origin, frame, info.psn, info.msg, info.retx);
                }
                Action::Timer { at, token } => {
                    let at = at.max(self.now);
                    self.queue.push(at, Ev::Timer { ep, token });
                }
                Action::Delivered { msg, len, intact } => {
                    let now = self.now;
                    self.accept[conn as usize][0].units.remove(&msg);
                    if let Some(m) = self.conns[conn as usize].messages.get_mut(msg as usize) {
                        // One delivery is the rule: room for one, not Vec's default four.
                        m.delivered.reserve_exact(1);
                        m.delivered.push((now, len, intact));
                        m.delivered_by = m.delivered_by.or(trigger);
                        self.last_progress = now;
                    }
                }
                Action::Completed { msg } => {
                    let now = self.now;
                    if let Some(m) = self.conns[conn as usize].messages.get_mut(msg as usize) {
                        if m.completed.is_empty() {
                            self.completed += 1;
                            self.last_progress = now;
                        }
                        m.completed.reserve_exact(1);
                        m.completed.push(now);
                        m.completed_by = m.completed_by.or(trigger);
                    }
                }
                Action::Failed { reason } => {
                    let c = &mut self.conns[conn as usize];
                    c.failed = c.failed.or(Some((self.now, reason)));
                }
            }
        }
        // The requester may have a packet ready now: a free NIC pulls it.
        if is_req && !self.pulling {
            let host = self.topo.hosts[self.conns[conn as usize].sender];
            let port = self.nodes[host].ports[0];
            self.kick(port);
        }
    }

    /// A free host NIC with no control frame queued pulls one packet from its next ready QP
    /// (`nic.rs`) into the port's data queue.
    fn pull(&mut self, port: u32) {
        let host = self.ports[port as usize].node as usize;
        let (now, eps) = (self.now, &self.eps);
        let ready = |ep: u32| matches!(&eps[ep as usize], EpBox::Req(r) if r.ready());
        let ep = match self.nodes[host].nic.pick(now, ready) {
            Pick::Qp(ep) => ep,
            Pick::Wait(at) => return self.queue.push(at, Ev::NicWake(port)),
            Pick::Idle => return,
        };
        let mut actions = std::mem::take(&mut self.actions);
        if let EpBox::Req(r) = &mut self.eps[ep as usize] {
            r.pull(now, &mut actions);
        }
        self.pulling = true;
        self.run_actions(ep, &mut actions, None);
        self.pulling = false;
        self.actions = actions;
        if let Some(pkt) = self.pulled.take() {
            let len = self.pkt(pkt).bytes.len() as u64;
            self.pace(host, ep, len);
            let p = &mut self.ports[port as usize];
            p.data.push_back(pkt);
            p.data_bytes += len;
        }
    }

    /// DCQCN: the QP of requester `ep` put a frame of `len` bytes on the wire; below line rate
    /// it may send its next one only at its current rate.
    fn pace(&mut self, host: usize, ep: u32, len: u64) {
        let (conn, _) = self.ep_conn[ep as usize];
        let Some(d) = self.dcqcn[conn as usize].as_mut() else { return };
        d.on_sent(self.now, wire_bytes(len as usize));
        // At line rate the wire itself paces the QP (and the NIC's timing stays exactly that of
        // a run without congestion control).
        if d.rate_bps() < self.cfg.rate_bps as f64 {
            let at = d.next_send_at();
            self.nodes[host].nic.hold(ep, at);
        }
    }

    /// Records a transmission and queues it at the sending host's NIC; returns its record's
    /// slot in [`Self::txs`].
    fn transmit(
        &mut self,
        conn: u32,
        origin: Origin,
        bytes: Vec<u8>,
        psn: u32,
        msg: Option<u64>,
        reason: Option<RetxReason>,
    ) -> u32 {
        let (slot_id, to_requester, pkt) = self.new_tx(conn, origin, bytes, psn, msg, reason);
        let (sender, receiver) = (self.conns[conn as usize].sender as u16, self.conns[conn as usize].receiver as u16);
        let src_host = match origin {
            Origin::Requester => sender,
            Origin::Responder => receiver,
            // The CNP leaves the host that saw the CE mark: the other end of `dst`.
            Origin::Nic | Origin::Switch => {
                if to_requester {
                    receiver
                } else {
                    sender
                }
            }
        };
        if self.pulling && origin == Origin::Requester && self.pulled.is_none() {
            self.pulled = Some(pkt);
        } else {
            let port = self.nodes[self.topo.hosts[src_host as usize]].ports[0];
            self.enqueue_nic_ctrl(port, pkt);
        }
        slot_id
    }

    /// SDR: the message sequence number of the send of message `m` whose id is `id` (`bits`
    /// wide): its message's first send's (the sends of the messages before it, in posting
    /// order) plus the send's place, which the id gives modulo 2^bits (`synth` refuses a
    /// message of more sends than ids).
    fn sdr_send_seq(&mut self, conn: u32, m: u64, id: u32, bits: u8) -> u32 {
        let c = &self.conns[conn as usize];
        let Some(sdr) = c.cfg.sdr.as_ref() else { return 0 };
        let (mtu, n, ec) = (c.cfg.mtu, sdr.chunk_packets, sdr.ec());
        let bases = &mut self.sdr_send_bases[conn as usize];
        while bases.len() <= m as usize {
            let i = bases.len();
            let next = match i.checked_sub(1) {
                None => 0,
                Some(p) => {
                    let sends = c.messages.get(p).map_or(1, |r| send_count(r.msg.len, mtu, n, ec));
                    bases[p] + sends as u64
                }
            };
            bases.push(next);
        }
        let base = bases[m as usize] as u32;
        // (The send's place: how far the id is past the message's first send's, modulo 2^ID.)
        base.wrapping_add(rocescope_codec::ext::sdr::msg_id(id.wrapping_sub(base), bits))
    }

    /// Records a transmission of connection `conn` and makes its packet: (its record's slot in
    /// [`Self::txs`], whether it goes to the requester, the packet).
    fn new_tx(
        &mut self,
        conn: u32,
        origin: Origin,
        bytes: Vec<u8>,
        psn: u32,
        msg: Option<u64>,
        reason: Option<RetxReason>,
    ) -> (u32, bool, u32) {
        let slot = if self.keep_txs { None } else { self.free_txs.pop() };
        let slot_id = slot.unwrap_or(self.txs.len() as u32);
        // Spilling, ids are unique and slots recycled; otherwise the id is the slot.
        let id = if self.spilled.is_some() {
            self.next_tx_id += 1;
            self.next_tx_id - 1
        } else {
            slot_id
        };
        let sdr_split = {
            let c = &self.conns[conn as usize].cfg;
            c.sdr.as_ref().map(|_| c.params.sdr_split)
        };
        let (kind, cover, dcp_msn, dst, flow, qpn, sdr_data) = {
            let f =
                Frame::parse(LinkType::Ethernet, &bytes, bytes.len(), &DecodeOptions { verify: false, ..self.decode });
            let (kind, cover, dcp_msn, dst, flow) =
                classify(&f, msg, self.cfg.params.dcp_tag_shift, self.cfg.profile == Profile::Dcp, &self.topo);
            let roce = f.roce();
            let qpn = roce.as_ref().map_or(0, |p| p.bth().dest_qp());
            // (SDR names a data packet by its immediate: message id and packet offset.)
            let imm = roce.as_ref().and_then(|p| p.immdt()).map(|i| i.imm());
            let sdr_data = match (sdr_split, imm) {
                (Some(split), Some(imm)) if kind.is_data() => {
                    let d = rocescope_codec::ext::sdr::Data::from_imm(split, imm);
                    Some((d.msg_id, d.pkt_off, split.0))
                }
                _ => None,
            };
            (kind, cover, dcp_msn, dst, flow, qpn, sdr_data)
        };
        let sdr_off = sdr_data.map(|d| d.1);
        let sdr_seq = match (sdr_data, msg) {
            (Some((id, _, bits)), Some(m)) => Some(self.sdr_send_seq(conn, m, id, bits)),
            _ => None,
        };
        let sender = self.conns[conn as usize].sender as u16;
        let to_requester = dst == Some(sender);
        if kind.is_data() && origin == Origin::Requester {
            // Only READs' are looked up (`judge_read_response`): a map of every message would
            // grow with the run.
            let c = &self.conns[conn as usize];
            if let Some(m) = msg.filter(|&m| c.messages.get(m as usize).is_some_and(|r| r.msg.op == Op::Read)) {
                self.msg_first_psn[conn as usize].entry(m).or_insert(psn);
            }
        }
        let rec = TxRec {
            id,
            conn,
            origin,
            kind,
            psn,
            msg,
            reason,
            to_requester,
            sent: self.now,
            len: bytes.len() as u32,
            fate: Fate::InFlight,
            trimmed: None,
            accept: None,
            cover,
            dcp_msn,
            copy_of: None,
            qpn,
            sdr_off,
            sdr_seq,
        };
        match slot {
            Some(i) => self.txs[i as usize] = rec,
            None => self.txs.push(rec),
        }
        // A receiver's control frame (ERD's NACK segments, SDR's control messages): what it says,
        // for the truth, when the run keeps one.
        let ctrl_for_truth =
            kind == Kind::Other && origin == Origin::Responder && (self.keep_txs || self.spilled.is_some());
        let erd = self.conns[conn as usize].cfg.erd.is_some();
        if erd && ctrl_for_truth {
            if let Some((seq, psns)) = erd_nack_names::read(&bytes) {
                let r = NackNames { tx: id, seq, psns };
                match &self.spilled {
                    Some(s) => s.erd_nacks.push(&r),
                    None => self.erd_nacks.push(r),
                }
            }
        }
        if self.conns[conn as usize].cfg.flor.is_some() {
            if kind.is_data() && origin == Origin::Requester {
                self.note_flor_sent(conn, id, psn, &bytes);
            } else if ctrl_for_truth {
                self.note_flor_ack(conn, id, &bytes);
            }
        }
        if sdr_split.is_some() && ctrl_for_truth {
            if let Some(r) = sdr_ctrl_names::read(&bytes) {
                // (Only what this SR_ACK adds to the message's marks: `sdr_ctrl_names.rs`.)
                let key = (conn, r.msg_seq);
                let marks = self.sdr_marks.entry(key).or_default();
                let newly_sacked = r.cum_ack.map(|cum| marks.add(cum, &r.sacked)).unwrap_or_default();
                if marks.is_empty() {
                    self.sdr_marks.remove(&key);
                }
                let (kind, msg_seq, cum_ack, sack_bits, indices) = (r.kind, r.msg_seq, r.cum_ack, r.sack_bits, r.indices);
                let r = SdrCtrlNames { tx: id, kind, msg_seq, cum_ack, sack_bits, newly_sacked, indices };
                match &self.spilled {
                    Some(s) => s.sdr_ctrls.push(&r),
                    None => self.sdr_ctrls.push(r),
                }
            }
        }
        self.stats.transmissions += 1;
        let dst_host = dst.unwrap_or(u16::MAX);
        let pkt = self.alloc(Packet {
            bytes,
            // Packets name their record's slot.
            tx: slot_id,
            dst_host,
            flow,
            trimmed: false,
            to_requester,
            ingress: NO_PORT,
            doomed: false,
        });
        (slot_id, to_requester, pkt)
    }

    fn alloc(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.packets[i as usize] = Some(p);
                i
            }
            None => {
                self.packets.push(Some(p));
                (self.packets.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.packets[i as usize].take().expect("live packet")
    }

    fn pkt(&self, i: u32) -> &Packet {
        self.packets[i as usize].as_ref().expect("live packet")
    }

    fn drop_packet(&mut self, pkt: u32, cause: DropCause, place: String) {
        let p = self.take(pkt);
        if p.ingress != NO_PORT {
            self.ingress_left(p.ingress, p.bytes.len() as u64);
        }
        let place = self.place(place);
        let t = &mut self.txs[p.tx as usize];
        t.fate = Fate::Dropped { at: self.now, cause, place };
        self.stats.dropped += 1;
        if cause == DropCause::ControlQueue {
            self.stats.ho_dropped += 1;
        }
        self.release_tx(p.tx);
    }

    /// A transmission's fate is final: without [`Self::keep_txs`] its record's slot is reused.
    fn release_tx(&mut self, tx: u32) {
        if let Some(s) = &self.spilled {
            let t = &self.txs[tx as usize];
            s.txs.set(t.id as u64, t);
        }
        if !self.keep_txs {
            self.free_txs.push(tx);
        }
    }

    /// Makes the run spill what its truth needs to disk (`spill.rs`) instead of keeping it:
    /// every transmission's record once its fate is final (its slot is then reused, as
    /// without [`Self::keep_txs`]), every tap frame, and what the receivers' control frames
    /// name ([`Self::erd_nacks`], [`Self::sdr_ctrls`], and Flor's WQEs and ACKs:
    /// [`Self::flor_sent`], [`Self::flor_wqes`], [`Self::flor_acks`]). Call before the run; after it,
    /// [`Self::finish_spill`]. Fails if the temporary files cannot be made.
    pub fn spill_truth(&mut self) -> std::io::Result<()> {
        self.spilled = Some(crate::spill::Spilled::new()?);
        self.keep_txs = false;
        self.keep_tap_frames = false;
        Ok(())
    }

    /// After the run: spills the records still in flight.
    pub fn finish_spill(&mut self) {
        let Some(s) = &self.spilled else { return };
        let mut free = vec![false; self.txs.len()];
        for &i in &self.free_txs {
            free[i as usize] = true;
        }
        for (t, _) in self.txs.iter().zip(&free).filter(|(_, f)| !**f) {
            s.txs.set(t.id as u64, t);
        }
    }

    /// Host NIC egress: the control FIFO (unbounded), served before pulled packets.
    fn enqueue_nic_ctrl(&mut self, port: u32, pkt: u32) {
        let len = self.pkt(pkt).bytes.len() as u64;
        let p = &mut self.ports[port as usize];
        p.ctrl.push_back(pkt);
        p.ctrl_bytes += len;
        self.kick(port);
    }

    /// Switch egress: thresholds, trimming, ECN, the control queue.
    fn enqueue_switch(&mut self, port: u32, pkt: u32) {
        let (len, tag, ect, is_roce) = {
            let b = &self.pkt(pkt).bytes;
            let h = Hdr::of(b);
            (
                b.len() as u64,
                h.map(|h| dcp::tag(h.tos(b), self.cfg.params.dcp_tag_shift)),
                h.is_some_and(|h| h.tos(b) & 3 != 0),
                h.is_some_and(|h| h.roce),
            )
        };
        let trim = self.cfg.trim;
        if trim && is_roce && tag == Some(dcp::TAG_HO) {
            // The control plane is lossless by design (seed 000 §4.2): random switch loss
            // spares header-only packets, which only a full control queue can lose.
            return self.enqueue_ctrl(port, pkt);
        }
        // Random loss at this port (LossMode::Trim): the packet was chosen upstream on a
        // host-fed link, or this port's own loss process chooses it now.
        let mut doomed = std::mem::take(&mut self.packets[pkt as usize].as_mut().expect("live packet").doomed);
        if self.cfg.loss_mode == LossMode::Trim {
            let to_requester = self.pkt(pkt).to_requester;
            if let Some(l) = self.ports[port as usize].loss.as_mut() {
                doomed = (l.applies(to_requester) && l.lose()) || doomed;
            }
        }
        if doomed {
            let name = format!("{} (random)", self.ports[port as usize].name);
            if trim && is_roce && tag == Some(dcp::TAG_DATA) && self.trim_packet(pkt, name.clone()) {
                return self.enqueue_ctrl(port, pkt);
            }
            self.stats.random_dropped += 1;
            return self.drop_packet(pkt, DropCause::Switch, name);
        }
        let p = &self.ports[port as usize];
        // Lossless mode: the switch's buffer is one `queue_bytes` share per ingress port, and
        // any egress queue may use all of it (PFC keeps each share from overflowing).
        let limit = if self.cfg.pfc {
            self.cfg.queue_bytes * self.nodes[p.node as usize].ports.len() as u64
        } else {
            self.cfg.queue_bytes
        };
        if p.data_bytes + len > limit {
            if trim && is_roce && tag == Some(dcp::TAG_DATA) && self.trim_packet(pkt, self.ports[port as usize].name.clone())
            {
                return self.enqueue_ctrl(port, pkt);
            }
            let name = format!("{} queue", self.ports[port as usize].name);
            return self.drop_packet(pkt, DropCause::Queue, name);
        }
        let q = p.data_bytes;
        let mark = ect
            && match (self.cfg.ecn_threshold, self.cfg.ecn_red) {
                (Some(th), _) => q > th,
                (None, Some(red)) => red.marks(q, || self.ports[port as usize].ecn_rng.next_f64()),
                (None, None) => false,
            };
        if mark {
            let b = &mut self.packets[pkt as usize].as_mut().expect("live packet").bytes;
            if let Some(h) = Hdr::of(b) {
                let tos = h.tos(b) | 3;
                h.set_tos(b, tos);
                self.stats.ce_marked += 1;
            }
        }
        let p = &mut self.ports[port as usize];
        if p.data.is_empty() {
            p.v_data = p.v_data.max(p.v_ctrl);
        }
        p.data.push_back(pkt);
        p.data_bytes += len;
        self.kick(port);
    }

    /// Cuts a DCP data packet to its header-only form (`codec::build::header_only`, padded to
    /// the shortest frame), recording the trim at `place`; false if it has no such form.
    fn trim_packet(&mut self, pkt: u32, place: String) -> bool {
        let place = self.place(place);
        let shift = self.cfg.params.dcp_tag_shift;
        let packet = self.packets[pkt as usize].as_mut().expect("live packet");
        let Some(mut ho) = header_only(LinkType::Ethernet, &packet.bytes, shift) else { return false };
        if ho.len() < MIN_FRAME {
            ho.resize(MIN_FRAME, 0);
        }
        packet.bytes = ho;
        packet.trimmed = true;
        let tx = packet.tx;
        self.txs[tx as usize].trimmed = Some((self.now, place));
        self.stats.trimmed += 1;
        true
    }

    fn enqueue_ctrl(&mut self, port: u32, pkt: u32) {
        let len = self.pkt(pkt).bytes.len() as u64;
        let p = &mut self.ports[port as usize];
        if p.ctrl_bytes + len > self.cfg.control_queue_bytes {
            let name = format!("{} control queue", p.name);
            return self.drop_packet(pkt, DropCause::ControlQueue, name);
        }
        if p.ctrl.is_empty() {
            p.v_ctrl = p.v_ctrl.max(p.v_data);
        }
        p.ctrl.push_back(pkt);
        p.ctrl_bytes += len;
        self.stats.max_control_queue_bytes = self.stats.max_control_queue_bytes.max(p.ctrl_bytes);
        self.kick(port);
    }

    /// Starts serializing the next packet of `port`: a PFC frame first, then (unless PFC has
    /// paused the port) NetRT's high-priority queue, then WRR between the control and data
    /// queues; a host NIC: its control FIFO, else a pulled packet.
    fn start(&mut self, port: u32) {
        let now = self.now;
        let p = &self.ports[port as usize];
        if p.down || p.busy_until > now {
            return;
        }
        if !p.is_switch && p.ctrl.is_empty() && p.data.is_empty() && !p.pause.paused(now) {
            self.pull(port);
        }
        let (wn, wd) = self.wrr;
        let p = &mut self.ports[port as usize];
        let (pkt, from_ctrl, mac, prio) = if let Some(pkt) = p.mac_ctrl.pop_front() {
            (pkt, false, true, false)
        } else {
            if p.pause.paused(now) && !(p.ctrl.is_empty() && p.data.is_empty() && p.prio.is_empty()) {
                // Paused: wake when the pause runs out (a resume frame wakes it earlier).
                let at = p.pause.until();
                self.queue.push(at, Ev::PortWake(port));
                return;
            }
            if let Some(pkt) = p.prio.pop_front() {
                // (Not counted in the data or control bytes: `from_ctrl` and `mac` stay false
                // and the accounting below is skipped by `prio`.)
                (pkt, false, false, true)
            } else {
                let from_ctrl = match (p.ctrl.is_empty(), p.data.is_empty()) {
                    (true, true) => return,
                    (false, true) => true,
                    (true, false) => false,
                    (false, false) => p.v_ctrl <= p.v_data,
                };
                let pkt = if from_ctrl { p.ctrl.pop_front() } else { p.data.pop_front() }.expect("non-empty");
                (pkt, from_ctrl, false, false)
            }
        };
        let (len, trimmed, tx, to_requester, ingress) = {
            let pk = self.packets[pkt as usize].as_ref().expect("live packet");
            (pk.bytes.len(), pk.trimmed, pk.tx, pk.to_requester, pk.ingress)
        };
        let p = &mut self.ports[port as usize];
        if !mac && !prio {
            if from_ctrl {
                p.ctrl_bytes -= len as u64;
                if p.is_switch {
                    p.v_ctrl += len as u128 * wd;
                }
            } else {
                p.data_bytes -= len as u64;
                if p.is_switch {
                    p.v_data += len as u128 * wn;
                }
            }
        }
        let ser = ser_ns(wire_bytes(len), p.rate_bps);
        p.busy_until = now + ser;
        let (delay, peer, tap) = (p.delay_ns, p.peer, p.tap);
        let (is_switch, node) = (p.is_switch, p.node);
        let wire_loss = self.cfg.loss_mode == LossMode::Drop;
        let lost = !mac && wire_loss && p.loss.as_mut().is_some_and(|l| l.applies(to_requester) && l.lose());
        p.sent += !mac as u64;
        let forced = !mac && !p.drop_nth.is_empty() && p.drop_nth.contains(&p.sent);
        self.stats.link_frames += 1;
        if ingress != NO_PORT {
            self.packets[pkt as usize].as_mut().expect("live packet").ingress = NO_PORT;
            self.ingress_left(ingress, len as u64);
        }
        if !is_switch && !mac && tx != NO_TX {
            // A host NIC puts a RoCE frame on its wire.
            let is_cnp = self.txs[tx as usize].kind == Kind::Cnp;
            let h = self.counters.host(node as usize);
            h.tx_vport_rdma_unicast_packets += 1;
            h.np_cnp_sent += is_cnp as u64;
        }
        if let Some(t) = tap {
            if tx == NO_TX || self.is_switch_message(tx) {
                self.record_untracked(t, pkt);
            } else {
                let pk = &self.pkt(pkt).bytes;
                let ce = Hdr::of(pk).is_some_and(|h| h.tos(pk) & 3 == 3);
                self.record(t, pkt, tx, false, trimmed, ce);
            }
        }
        let p = &mut self.ports[port as usize];
        // A host NIC looks again when the wire frees (it may pull the next packet); a switch
        // port only if something waits.
        if !(p.is_switch && p.mac_ctrl.is_empty() && p.prio.is_empty() && p.ctrl.is_empty() && p.data.is_empty()) {
            p.done_pending = true;
            self.queue.push(now + ser, Ev::PortDone(port));
        }
        if lost || forced {
            let name =
                format!("link {}{}", self.ports[port as usize].name, if forced { " (--drop-frame)" } else { "" });
            self.drop_packet(pkt, DropCause::Link, name);
        } else {
            self.queue.push(now + ser + delay, Ev::Arrive { port: peer, pkt });
        }
    }

    /// A packet that came in through switch port `ingress` left its egress queue: PFC's
    /// accounting may resume the upstream port.
    fn ingress_left(&mut self, ingress: u32, len: u64) {
        let Some(cfg) = self.ports[ingress as usize].pfc else { return };
        if self.ports[ingress as usize].meter.on_dequeued(&cfg, len) == Some(PfcSignal::Resume) {
            self.send_pfc(ingress, 0);
        }
    }

    /// A packet came in through switch port `ingress` and is about to be queued: PFC's
    /// accounting may pause the upstream port. (Whether it is then queued, dropped or sent at
    /// once, it leaves through [`Self::start`] or [`Self::drop_packet`], which give the bytes
    /// back.)
    fn ingress_queued(&mut self, ingress: u32, pkt: u32, len: u64) {
        let Some(cfg) = self.ports[ingress as usize].pfc else { return };
        self.packets[pkt as usize].as_mut().expect("live packet").ingress = ingress;
        if self.ports[ingress as usize].meter.on_queued(&cfg, len) == Some(PfcSignal::Pause) {
            self.send_pfc(ingress, pfc::MAX_QUANTA);
        }
    }

    /// Sends a PFC frame for RoCE's priority out of `port` (towards the upstream node):
    /// `quanta` 0 resumes.
    fn send_pfc(&mut self, port: u32, quanta: u16) {
        let node = self.ports[port as usize].node as usize;
        let bytes = pfc::pfc_frame(self.nodes[node].mac, pfc::ROCE_PRIORITY, quanta);
        let dur = pfc::quanta_ns(quanta, self.ports[port as usize].rate_bps);
        self.ports[port as usize].meter.pause_sent(self.now, dur);
        if quanta > 0 {
            self.stats.pause_frames += 1;
            // Renew the pause before it runs out if the queue is still above XON.
            self.queue.push(self.now + dur.saturating_sub(dur / 8).max(1), Ev::PfcRefresh(port));
        } else {
            self.stats.resume_frames += 1;
        }
        self.queue_mac_control(port, bytes);
    }

    /// Queues a MAC control frame (no transmission record) ahead of everything at `port`.
    fn queue_mac_control(&mut self, port: u32, bytes: Vec<u8>) {
        let pkt = self.alloc(Packet {
            bytes,
            tx: NO_TX,
            dst_host: u16::MAX,
            flow: 0,
            trimmed: false,
            to_requester: false,
            ingress: NO_PORT,
            doomed: false,
        });
        let p = &mut self.ports[port as usize];
        p.mac_ctrl.push_back(pkt);
        self.kick(port);
    }

    /// A pause this port sent may be about to run out.
    fn pfc_refresh(&mut self, port: u32) {
        let margin = pfc::quanta_ns(pfc::MAX_QUANTA, self.ports[port as usize].rate_bps) / 8;
        if self.ports[port as usize].meter.refresh_due(self.now, margin) {
            self.send_pfc(port, pfc::MAX_QUANTA);
        }
    }

    /// A link fails: both its ports stop, what they hold and what is on the wire is lost, and
    /// routing reconverges around it at once.
    fn fail_link(&mut self, link: usize) {
        let (pa, pb) = self.link_ports[link];
        for port in [pa, pb] {
            self.ports[port as usize].down = true;
            let name = format!("link {} (down)", self.ports[port as usize].name);
            let p = &mut self.ports[port as usize];
            let queued: Vec<u32> =
                p.mac_ctrl.drain(..).chain(p.prio.drain(..)).chain(p.ctrl.drain(..)).chain(p.data.drain(..)).collect();
            p.ctrl_bytes = 0;
            p.data_bytes = 0;
            for pkt in queued {
                self.discard(pkt, DropCause::Link, name.clone());
            }
        }
        self.topo.fail_link(link);
        self.install_routes();
        self.stats.failed_links += 1;
    }

    /// Drops a packet that may be a PFC frame (no transmission record).
    fn discard(&mut self, pkt: u32, cause: DropCause, place: String) {
        if self.pkt(pkt).tx == NO_TX {
            self.take(pkt);
        } else {
            self.drop_packet(pkt, cause, place);
        }
    }

    fn port_done(&mut self, port: u32) {
        self.ports[port as usize].done_pending = false;
        self.start(port);
    }

    /// A paused port's pause may have run out.
    fn port_wake(&mut self, port: u32) {
        self.kick(port);
    }

    /// Something was queued at `port`: start it if the wire is free, else make sure the port
    /// looks again when its frame is done.
    fn kick(&mut self, port: u32) {
        let now = self.now;
        let p = &mut self.ports[port as usize];
        if p.busy_until <= now {
            self.start(port);
        } else if !p.done_pending {
            p.done_pending = true;
            let at = p.busy_until;
            self.queue.push(at, Ev::PortDone(port));
        }
    }

    fn record(&mut self, tap: u8, pkt: u32, tx: u32, incoming: bool, trimmed: bool, ce: bool) {
        self.frames_written += 1;
        if let Some(s) = &self.spilled {
            let tx = self.txs[tx as usize].id;
            s.frames.push(&TapFrame { frame: self.frames_written, tap, time: self.now, tx, incoming, trimmed, ce });
        }
        if self.keep_tap_frames {
            self.tap_frames.push(TapFrame {
                frame: self.frames_written,
                tap,
                time: self.now,
                tx,
                incoming,
                trimmed,
                ce,
            });
        }
        if let Some(w) = self.writer.as_mut() {
            if self.write_error.is_none() {
                let bytes = &self.packets[pkt as usize].as_ref().expect("live packet").bytes;
                if let Err(e) = w.write(tap as u32, EPOCH_NS + self.now, bytes) {
                    self.write_error = Some(e);
                }
            }
        }
    }

    /// Whether transmission `tx` is a NetRT switch's message (a request or an unfulfilled
    /// request): like a PFC frame, a switch's control frame the truth does not follow.
    fn is_switch_message(&self, tx: u32) -> bool {
        tx != NO_TX && self.txs[tx as usize].origin == Origin::Switch && self.txs[tx as usize].kind == Kind::Other
    }

    /// A frame the truth does not follow (a PFC frame, a NetRT message): written to the
    /// capture only (its frame number is skipped in the truth's frame lists).
    fn record_untracked(&mut self, tap: u8, pkt: u32) {
        self.frames_written += 1;
        if let Some(w) = self.writer.as_mut() {
            if self.write_error.is_none() {
                let bytes = &self.packets[pkt as usize].as_ref().expect("live packet").bytes;
                if let Err(e) = w.write(tap as u32, EPOCH_NS + self.now, bytes) {
                    self.write_error = Some(e);
                }
            }
        }
    }

    fn arrive(&mut self, port: u32, pkt: u32) {
        let (node, tap) = (self.ports[port as usize].node, self.ports[port as usize].tap);
        if self.ports[port as usize].down {
            // The link failed while the frame was on it.
            let name = format!("link {} (down)", self.ports[self.ports[port as usize].peer as usize].name);
            return self.discard(pkt, DropCause::Link, name);
        }
        if self.pkt(pkt).tx == NO_TX {
            // A PFC frame: it pauses (or resumes) this port's own egress towards its sender.
            if let Some(t) = tap {
                self.record_untracked(t, pkt);
            }
            let p = self.take(pkt);
            let quanta = {
                let f = Frame::parse(LinkType::Ethernet, &p.bytes, p.bytes.len(), &self.decode);
                f.mac_control().filter(|m| m.class_enable().is_some_and(|c| c & (1 << pfc::ROCE_PRIORITY) != 0))
                    .map(|m| m.quanta(pfc::ROCE_PRIORITY as usize))
            };
            if let Some(q) = quanta {
                let rate = self.ports[port as usize].rate_bps;
                self.ports[port as usize].pause.on_frame(self.now, q, rate);
                self.stats.pauses_received += (q > 0) as u64;
                if q == 0 {
                    self.kick(port);
                }
            }
            return;
        }
        if let Some(t) = tap {
            if self.is_switch_message(self.pkt(pkt).tx) {
                self.record_untracked(t, pkt);
            } else {
                let pk = self.pkt(pkt);
                let ce = Hdr::of(&pk.bytes).is_some_and(|h| h.tos(&pk.bytes) & 3 == 3);
                let (tx, trimmed) = (pk.tx, pk.trimmed);
                self.record(t, pkt, tx, true, trimmed, ce);
            }
        }
        if self.ports[port as usize].is_switch {
            // A host-fed lossy link's loss process runs at the switch it enters (LossMode::Trim).
            let from = self.ports[port as usize].peer as usize;
            if self.cfg.loss_mode == LossMode::Trim && !self.ports[from].is_switch {
                let to_requester = self.pkt(pkt).to_requester;
                if let Some(l) = self.ports[from].loss.as_mut() {
                    if l.applies(to_requester) && l.lose() {
                        self.packets[pkt as usize].as_mut().expect("live packet").doomed = true;
                    }
                }
            }
            self.forward(node, pkt, port)
        } else {
            self.deliver(node, pkt)
        }
    }

    fn forward(&mut self, sw: u16, pkt: u32, in_port: u32) {
        let (dst, flow) = {
            let p = self.packets[pkt as usize].as_mut().expect("live packet");
            if let Some(h) = Hdr::of(&p.bytes) {
                h.decrement_ttl(&mut p.bytes);
            }
            (p.dst_host, p.flow)
        };
        if self.netrt.is_some() && self.netrt_intercept(sw, pkt, in_port) {
            return;
        }
        let Some(port) = self.route(sw, dst, flow) else {
            let name = format!("{} (no route)", self.nodes[sw as usize].name);
            return self.drop_packet(pkt, DropCause::NoEndpoint, name);
        };
        let len = self.pkt(pkt).bytes.len() as u64;
        self.ingress_queued(in_port, pkt, len);
        self.enqueue_switch(port, pkt);
    }

    /// Switch `sw`'s egress port towards host `dst` for a packet of `flow`: the one candidate,
    /// or one of the equal-cost candidates as [`FabricConfig::routing`] picks; `None` without a
    /// route.
    fn route(&mut self, sw: u16, dst: u16, flow: u64) -> Option<u32> {
        let node = &mut self.nodes[sw as usize];
        let cands = node.routes.get(dst as usize).filter(|c| !c.is_empty())?;
        Some(if cands.len() == 1 {
            cands[0]
        } else {
            match self.cfg.routing {
                Routing::Ecmp => cands[(flow % cands.len() as u64) as usize],
                Routing::Spray => cands[node.rng.below(cands.len() as u64) as usize],
                Routing::Adaptive => {
                    let load = |p: u32| self.ports[p as usize].data_bytes + self.ports[p as usize].ctrl_bytes;
                    let min = cands.iter().map(|&p| load(p)).min().unwrap_or(0);
                    let best: Vec<u32> = cands.iter().copied().filter(|&p| load(p) == min).collect();
                    best[node.rng.below(best.len() as u64) as usize]
                }
            }
        })
    }

    /// A frame reached a host's NIC: CNPs end there, the rest go to the QP they name.
    fn deliver(&mut self, host: u16, pkt: u32) {
        let tx = self.pkt(pkt).tx;
        self.deliver_to_qp(host, pkt);
        self.release_tx(tx);
    }

    fn deliver_to_qp(&mut self, host: u16, pkt: u32) {
        let p = self.take(pkt);
        let tx = p.tx as usize;
        let f = Frame::parse(LinkType::Ethernet, &p.bytes, p.bytes.len(), &self.decode);
        let Some(roce) = f.roce() else {
            // ERD's NACK path (TCP), to the endpoint its ports name.
            if let Some(&ep) = f.tcp().and_then(|t| self.nodes[host as usize].tcp.get(&(t.src_port, t.dst_port))) {
                self.txs[tx].fate = Fate::Delivered { at: self.now };
                return self.hand_to(ep, &f, tx);
            }
            self.txs[tx].fate = Fate::Dropped { at: self.now, cause: DropCause::NoEndpoint, place: 0 };
            return;
        };
        let (opcode, qpn) = (roce.opcode().0, roce.bth().dest_qp());
        self.txs[tx].fate = Fate::Delivered { at: self.now };
        {
            let ce = f.tos().is_some_and(|t| t & 3 == 3);
            let h = self.counters.host(host as usize);
            h.rx_vport_rdma_unicast_packets += 1;
            h.np_ecn_marked_roce_packets += ce as u64;
        }
        if opcode == CNP_OPCODE || opcode == 0x80 {
            // DCQCN's reaction point: a CNP for one of this host's requester QPs.
            let mut handled = false;
            if let Some(&ep) = self.nodes[host as usize].qps.get(&qpn) {
                let (conn, is_req) = self.ep_conn[ep as usize];
                if let (true, Some(d)) = (is_req, self.dcqcn[conn as usize].as_mut()) {
                    d.on_cnp(self.now);
                    self.stats.cnps_reacted += 1;
                    handled = true;
                }
            }
            let h = self.counters.host(host as usize);
            if handled {
                h.rp_cnp_handled += 1;
            } else {
                h.rp_cnp_ignored += 1;
            }
            return;
        }
        let Some(&ep) = self.nodes[host as usize].qps.get(&qpn) else {
            let name = format!("{} (no QP {qpn:#x})", self.nodes[host as usize].name);
            let place = self.place(name);
            self.txs[tx].fate = Fate::Dropped { at: self.now, cause: DropCause::NoEndpoint, place };
            return;
        };
        if self.ep_conn[ep as usize].1 {
            self.count_requester_rx(host, tx, p.trimmed);
        }
        // (Flor's data is judged per WQE, `flor_judge`: its units are not PSNs.)
        let flor = self.conns[self.txs[tx].conn as usize].cfg.flor.is_some();
        let keep = self.keep_txs || self.spilled.is_some();
        if flor && keep && !p.trimmed && self.txs[tx].kind.is_data() && !self.ep_conn[ep as usize].1 {
            self.judge_flor(tx, roce);
        }
        if !p.trimmed && self.txs[tx].kind.is_data() && !flor {
            match (&self.conns[self.txs[tx].conn as usize].cfg.sdr, roce.immdt()) {
                (Some(_), Some(imm)) => self.judge_sdr(tx, imm.imm()),
                _ => self.judge(tx),
            }
        }
        let ce = f.tos().is_some_and(|t| t & 3 == 3);
        self.hand_to(ep, &f, tx);
        if ce {
            self.send_cnp(host, ep, qpn);
        }
    }

    /// Gives endpoint `ep` the frame of transmission `tx` and carries out what it asks.
    fn hand_to(&mut self, ep: u32, f: &Frame<'_>, tx: usize) {
        let mut actions = std::mem::take(&mut self.actions);
        match &mut self.eps[ep as usize] {
            EpBox::Req(r) => r.on_frame(self.now, f, &mut actions),
            EpBox::Resp(r) => r.on_frame(self.now, f, &mut actions),
        }
        let trigger = self.txs[tx].id;
        self.run_actions(ep, &mut actions, Some(trigger));
        self.actions = actions;
    }

    /// The receiving NIC answers a CE-marked packet with a CNP, at most one per QP per interval.
    fn send_cnp(&mut self, host: u16, ep: u32, qpn: u32) {
        let key = (host, qpn);
        if let Some(&t) = self.last_cnp.get(&key) {
            if self.now < t + self.cfg.cnp_interval_ns {
                return;
            }
        }
        self.last_cnp.insert(key, self.now);
        let (conn, is_req) = self.ep_conn[ep as usize];
        let c = &self.conns[conn as usize].cfg;
        let (me, peer) = if is_req { (c.requester, c.responder) } else { (c.responder, c.requester) };
        let (IpAddr::V4(src), IpAddr::V4(dst)) = (me.ip, peer.ip) else { return };
        let mut r = RoceRepr::new(CNP_OPCODE, peer.qpn, 0);
        r.bth.becn = true;
        let mut fr =
            FrameRepr::new(NetRepr::Ipv4 { src: src.octets(), dst: dst.octets(), tos: 0xc0, ttl: 64, ident: 0 }, r);
        fr.eth_src = me.mac;
        fr.eth_dst = peer.mac;
        fr.udp_src = c.udp_sport;
        let bytes = fr.to_vec();
        self.stats.cnps += 1;
        self.transmit(conn, Origin::Nic, bytes, 0, None, None);
    }

    /// Flor: data packet `tx` reached the receiver's QP whole: the WQEs it closes, kept for the
    /// truth ([`flor_judge`]; only a run that keeps its truth judges).
    fn judge_flor(&mut self, tx: usize, p: &rocescope_codec::ib::RocePacket<'_>) {
        let (conn, id) = (self.txs[tx].conn, self.txs[tx].id);
        let Some(j) = self.flor_judges.get_mut(conn as usize).and_then(Option::as_mut) else { return };
        let mut closed = Vec::new();
        j.arrive(self.now, id, p, &mut closed);
        self.keep_flor_closed(conn, closed);
    }

    /// Flor: WQEs a receiver closed, kept for the truth (in memory, or spilled).
    fn keep_flor_closed(&mut self, conn: u32, closed: Vec<flor_judge::Closed>) {
        match &self.spilled {
            Some(s) => closed.into_iter().for_each(|c| s.flor_wqes.push(&(conn, c))),
            None => self.flor_wqes.extend(closed.into_iter().map(|c| (conn, c))),
        }
    }

    /// Flor: data packet `bytes` (transmission `id`, PSN `psn`) left a sender: when it is a
    /// WQE's first, the WQE ([`flor_sent`]), kept for the truth when the run keeps one.
    fn note_flor_sent(&mut self, conn: u32, id: u32, psn: u32, bytes: &[u8]) {
        if !(self.keep_txs || self.spilled.is_some()) {
            return;
        }
        let c = &self.conns[conn as usize].cfg;
        let (unit, mtu, split) = (c.params.flor_unit_size, c.mtu, c.params.flor_split);
        let f = Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &DecodeOptions { verify: false, ..self.decode });
        let Some(p) = f.roce() else { return };
        let keep = self.keep_txs || self.spilled.is_some();
        if let Some(rn) = flor_sent::chunk_rn(p, split).filter(|_| keep) {
            let gn = self.flor_gns[conn as usize];
            self.flor_chunk_gns[conn as usize].insert(rn, gn);
        }
        let Some((kind, off, units, packets)) = flor_sent::read(p, unit, mtu, split) else { return };
        let gn = &mut self.flor_gns[conn as usize];
        *gn += 1;
        if kind == flor_sent::WqeKind::Chunk && packets == 1 && keep {
            // (A WRITE Only: its reliable number is in this packet, read above under the
            // previous GN.)
            let gn = *gn;
            if let Some(rn) = flor_sent::chunk_rn(p, split) {
                self.flor_chunk_gns[conn as usize].insert(rn, gn);
            }
        }
        if keep {
            let (first_tx, first_psn, gn) = (id, psn, *gn);
            let w = flor_sent::SentWqe { conn, first_tx, first_psn, packets, gn, kind, off, units };
            match &self.spilled {
                Some(s) => s.flor_sent.push(&w),
                None => self.flor_sent.push(w),
            }
        }
    }

    /// Flor: a receiver's frame `bytes` (transmission `id`): when it is an ACK, the GNs it
    /// lists, for the truth.
    fn note_flor_ack(&mut self, conn: u32, id: u32, bytes: &[u8]) {
        let c = &self.conns[conn as usize].cfg;
        let (set_means, split) = (c.params.flor_ack_set_means, c.params.flor_split);
        let f = Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &DecodeOptions { verify: false, ..self.decode });
        let chunk_gns = &mut self.flor_chunk_gns[conn as usize];
        if let Some(gns) = f.roce().and_then(|p| flor_sent::ack_gns(p, set_means, split, chunk_gns)) {
            let r = flor_sent::AckGns { tx: id, gns };
            match &self.spilled {
                Some(s) => s.flor_acks.push(&r),
                None => self.flor_acks.push(r),
            }
        }
    }

    /// Flor: the run ended; WQEs still being received never completed.
    fn finish_flor(&mut self) {
        let keep = self.keep_txs || self.spilled.is_some();
        for conn in 0..self.flor_judges.len() {
            let mut closed = Vec::new();
            if let Some(j) = self.flor_judges[conn].as_mut() {
                j.finish(self.now, &mut closed);
            }
            if keep {
                self.keep_flor_closed(conn as u32, closed);
            }
        }
    }

    /// The SDR receiver's verdict on an intact data packet whose immediate is `imm` (ground
    /// truth only): its first copy is accepted, a later one, or one of a message already
    /// delivered, is a duplicate (the receiver writes every copy in place; the NULL key takes
    /// those of completed messages).
    fn judge_sdr(&mut self, tx: usize, imm: u32) {
        let t = &self.txs[tx];
        let (conn, msg) = (t.conn as usize, t.msg.unwrap_or(u64::MAX));
        let delivered = self.conns[conn].messages.get(msg as usize).is_some_and(|m| !m.delivered.is_empty());
        let fresh = !delivered && self.accept[conn][0].units.entry(msg).or_default().insert(imm);
        let verdict = if fresh { Accept::Accepted } else { Accept::Duplicate };
        self.txs[tx].accept = Some(verdict);
        if fresh {
            self.last_progress = self.now;
            if let Some(m) = self.conns[conn].messages.get_mut(msg as usize) {
                m.accepted_packets += 1;
            }
        } else {
            self.counters.host(self.conns[conn].receiver).duplicate_request += 1;
        }
    }

    /// The receiver's verdict on an intact data packet (ground truth only).
    fn judge(&mut self, tx: usize) {
        let t = &self.txs[tx];
        let (conn, psn, msg) = (t.conn as usize, t.psn, t.msg);
        // (Towards the responder: request packets, a requester's or a switch's resend of one.)
        let dir = t.to_requester as usize;
        let model = self.cfg.accept;
        let start = self.conns[conn].cfg.start_psn;
        let mtu = self.conns[conn].cfg.mtu.max(1);
        let span = msg
            .and_then(|m| self.conns[conn].messages.get(m as usize))
            .map(|m| if m.msg.op == Op::Read { m.msg.len.div_ceil(mtu).max(1) } else { 1 })
            .unwrap_or(1);
        let floor_before = self.accept[conn][dir].floor.unwrap_or(start);
        let verdict = match model {
            AcceptModel::AnyOrder => {
                let st = &mut self.accept[conn][dir];
                let floor = *st.floor.get_or_insert(start);
                if psn_lt(psn, floor) || !st.seen.insert(psn) {
                    Accept::Duplicate
                } else {
                    let mut f = floor;
                    while st.seen.remove(&f) {
                        f = psn::add(f, 1);
                    }
                    st.floor = Some(f);
                    Accept::Accepted
                }
            }
            AcceptModel::InOrder if dir == 0 => {
                let st = &mut self.accept[conn][dir];
                let e = *st.expected.get_or_insert(start);
                if psn == e {
                    st.expected = Some(psn::add(e, span));
                    Accept::Accepted
                } else if psn_lt(psn, e) {
                    Accept::Duplicate
                } else {
                    Accept::Discarded
                }
            }
            AcceptModel::InOrder => self.judge_read_response(conn, msg, psn),
        };
        self.txs[tx].accept = Some(verdict);
        if dir == 0 {
            // At the responder's NIC: a duplicate, or a PSN beyond the one expected next.
            let h = self.counters.host(self.conns[conn].receiver);
            match verdict {
                Accept::Duplicate => h.duplicate_request += 1,
                Accept::Discarded => h.out_of_sequence += 1,
                Accept::Accepted if model == AcceptModel::AnyOrder && psn != floor_before => h.out_of_sequence += 1,
                Accept::Accepted => {}
            }
        }
        if verdict == Accept::Accepted {
            self.last_progress = self.now;
            if let Some(m) = msg.and_then(|m| self.conns[conn].messages.get_mut(m as usize)) {
                // A READ's packets are its responses (its request is one PSN of the requests).
                if (m.msg.op == Op::Read) == (dir == 1) {
                    m.accepted_packets += 1;
                }
            }
        }
    }

    /// A frame (transmission `tx`, `trimmed` or whole) reached a requester QP of `host`: the
    /// requester's counters (`counters.rs`): NAKs, and ACKs or READ responses that pass the READ
    /// response it expects next.
    fn count_requester_rx(&mut self, host: u16, tx: usize, trimmed: bool) {
        let t = &self.txs[tx];
        let (conn, kind, psn) = (t.conn as usize, t.kind, t.psn);
        if matches!(kind, Kind::Nak | Kind::Sack) {
            self.counters.host(host as usize).packet_seq_err += 1;
            return;
        }
        if trimmed || !matches!(kind, Kind::Ack | Kind::ReadResp) || self.cfg.accept != AcceptModel::InOrder {
            return;
        }
        let Some(want) = self.read_cursor(conn).1 else { return };
        let passes = if kind == Kind::Ack { !psn_lt(psn, want) } else { psn_lt(want, psn) };
        if passes {
            self.counters.implied_nak(conn, host as usize, want);
        }
    }

    /// The READ whose response connection `conn`'s requester takes next: its message, and the
    /// PSN it takes next once that READ's request has been sent (the state `resp_next` keeps;
    /// `(u64::MAX, None)` once no READ follows, so the messages are looked through once).
    fn read_cursor(&mut self, conn: usize) -> (u64, Option<u32>) {
        let messages = &self.conns[conn].messages;
        let first_psn = &self.msg_first_psn[conn];
        let st = &mut self.accept[conn][1];
        let cur = match st.resp_next {
            None => (0..messages.len())
                .find(|&i| messages[i].msg.op == Op::Read)
                .map_or((u64::MAX, None), |i| (i as u64, first_psn.get(&(i as u64)).copied())),
            Some((i, None)) => (i, first_psn.get(&i).copied()),
            Some(c) => c,
        };
        st.resp_next = Some(cur);
        cur
    }

    /// The messages not completed when the run ended, by connection then id.
    pub fn unfinished(&self) -> Vec<Unfinished> {
        let mut out = Vec::new();
        for (ci, c) in self.conns.iter().enumerate() {
            for m in c.messages.iter().filter(|m| m.completed.is_empty()) {
                out.push(Unfinished {
                    conn: ci as u32,
                    msg: m.msg.id,
                    op: m.msg.op,
                    len: m.msg.len,
                    posted: m.posted.is_some(),
                    accepted_packets: m.accepted_packets,
                    packets: m.packets(c.cfg.mtu),
                    delivered_bytes: m.delivered.iter().filter(|d| d.2).map(|d| d.1 as u64).sum(),
                    failed: c.failed.map(|f| f.1),
                });
            }
        }
        out
    }

    /// A Go-Back-N requester's verdict on a READ response (RC, IBTA C9-151): responses are
    /// accepted in one PSN sequence across the connection's READs — the response the requester
    /// needs next is the oldest READ's first missing response PSN (the PSNs of SENDs and WRITEs
    /// between two READs are not responses and are skipped: a response implicitly acknowledges
    /// every request before it). A response past it is discarded, one before it a duplicate.
    fn judge_read_response(&mut self, conn: usize, msg: Option<u64>, psn: u32) -> Accept {
        let Some(m) = msg else { return Accept::Discarded };
        let cur = self.read_cursor(conn);
        let mtu = self.conns[conn].cfg.mtu.max(1);
        let messages = &self.conns[conn].messages;
        let first_psn = &self.msg_first_psn[conn];
        // The next READ at or after message `from`, with its first PSN once sent.
        let next_read = |from: u64| -> Option<(u64, Option<u32>)> {
            let i = (from as usize..messages.len()).find(|&i| messages[i].msg.op == Op::Read)? as u64;
            Some((i, first_psn.get(&i).copied()))
        };
        let st = &mut self.accept[conn][1];
        let (want_msg, Some(want_psn)) = cur else {
            // No READ is waiting for a response (every one is complete): a late copy.
            return Accept::Duplicate;
        };
        if m == want_msg && psn == want_psn {
            let len = messages[m as usize].msg.len;
            let first = first_psn.get(&m).copied().unwrap_or(psn);
            let last = psn::add(first, len.div_ceil(mtu).max(1) - 1);
            st.resp_next = if psn == last { next_read(m + 1) } else { Some((m, Some(psn::add(psn, 1)))) };
            // A finished sequence leaves `None` only when no READ follows; remember that.
            if st.resp_next.is_none() {
                st.resp_next = Some((u64::MAX, None));
            }
            Accept::Accepted
        } else if m < want_msg || (m == want_msg && psn_lt(psn, want_psn)) {
            Accept::Duplicate
        } else {
            Accept::Discarded
        }
    }

    /// Names of the taps, in interface order.
    pub fn tap_names(&self) -> Vec<&'static str> {
        self.cfg.taps.iter().map(|t| t.name()).collect()
    }

    /// The WRR weight in force.
    pub fn wrr_weight(&self) -> f64 {
        self.cfg.effective_wrr_weight()
    }
}

fn weight_ratio(w: f64) -> (u128, u128) {
    if w.is_infinite() {
        (1, 0)
    } else if w <= 0.0 {
        (0, 1)
    } else {
        ((w * 1_000_000.0).round().max(1.0) as u128, 1_000_000)
    }
}

/// Time to serialize `bytes` at `rate` bits/s, ns (rounded up).
#[inline]
pub fn ser_ns(bytes: u64, rate: u64) -> u64 {
    ((bytes as u128 * 8 * 1_000_000_000).div_ceil(rate.max(1) as u128)) as u64
}

/// `a` precedes `b` modulo 2^24 (the codec's serial-number order of PSNs).
pub use rocescope_codec::ib::psn::lt as psn_lt;

/// Kind, coverage, DCP MSN, destination host and flow hash of a frame an endpoint transmits.
fn classify(
    f: &Frame<'_>,
    msg: Option<u64>,
    tag_shift: u8,
    dcp_stack: bool,
    topo: &Topology,
) -> (Kind, Cover, Option<u32>, Option<u16>, u64) {
    let (src, dst) = f.ip_addrs().unwrap_or((IpAddr::from([0u8; 4]), IpAddr::from([0u8; 4])));
    let dst_host = topo.host_of(dst).map(|h| h as u16);
    let sport = f.udp_ports().map_or(0, |p| p.0);
    let ip = |a: IpAddr| match a {
        IpAddr::V4(v) => u32::from(v) as u64,
        IpAddr::V6(v) => (u128::from(v) as u64) ^ ((u128::from(v) >> 64) as u64),
    };
    let Some(p) = f.roce() else { return (Kind::Other, Cover::None, None, dst_host, 0) };
    let flow = mix64(ip(src) ^ ip(dst).rotate_left(32) ^ (sport as u64) << 16 ^ (p.bth().dest_qp() as u64) << 40);
    let opcode = p.opcode().0;
    let psn = p.bth().psn();
    let tag = f.tos().map(|t| dcp::tag(t, tag_shift));
    let is_dcp = f.profile() == Profile::Dcp;
    if opcode == CNP_OPCODE || opcode == 0x80 {
        return (Kind::Cnp, Cover::None, None, dst_host, flow);
    }
    if is_dcp && tag == Some(dcp::TAG_HO) {
        return (Kind::HoBounce, Cover::None, None, dst_host, flow);
    }
    let is_resp = (0x0D..=0x10).contains(&opcode);
    if msg.is_some() {
        let dcp_msn = p.dcpeth().map(|d| d.msn());
        return if is_resp {
            (Kind::ReadResp, if dcp_stack { Cover::None } else { Cover::PsnLt(psn) }, None, dst_host, flow)
        } else {
            (Kind::Data, Cover::None, dcp_msn, dst_host, flow)
        };
    }
    if let Some(a) = p.aeth() {
        let syn = a.syndrome();
        let kind = match syn {
            Syndrome::Ack { .. } => Kind::Ack,
            Syndrome::Nak { .. } if p.irn_sack().is_some() => Kind::Sack,
            _ => Kind::Nak,
        };
        let cover = if is_dcp && opcode == 0x11 && tag == Some(dcp::TAG_ACK) {
            if matches!(syn, Syndrome::Ack { .. }) {
                Cover::MsnLt(a.msn())
            } else {
                Cover::None
            }
        } else if dcp_stack {
            Cover::None
        } else if is_resp {
            Cover::PsnLt(psn)
        } else {
            match syn {
                Syndrome::Ack { .. } if opcode == 0x11 => Cover::PsnLe(psn),
                Syndrome::Nak { code: 0 } => Cover::PsnLt(psn),
                _ => Cover::None,
            }
        };
        let kind = if is_resp { Kind::ReadResp } else { kind };
        return (kind, cover, None, dst_host, flow);
    }
    (Kind::Other, Cover::None, None, dst_host, flow)
}

/// Where the IP header of an Ethernet frame is, and what it is.
#[derive(Clone, Copy)]
struct Hdr {
    ip: usize,
    v4: bool,
    roce: bool,
}

impl Hdr {
    fn of(b: &[u8]) -> Option<Hdr> {
        let mut off = 12;
        let mut et = u16::from_be_bytes([*b.get(off)?, *b.get(off + 1)?]);
        while et == 0x8100 || et == 0x88a8 {
            off += 4;
            et = u16::from_be_bytes([*b.get(off)?, *b.get(off + 1)?]);
        }
        let ip = off + 2;
        let (v4, udp) = match et {
            0x0800 => {
                let ihl = (*b.get(ip)? & 0x0f) as usize * 4;
                (true, (b.get(ip + 9) == Some(&17)).then_some(ip + ihl))
            }
            0x86dd => (false, (b.get(ip + 6) == Some(&17)).then_some(ip + 40)),
            _ => return None,
        };
        let roce = udp.and_then(|u| b.get(u + 2..u + 4)).is_some_and(|d| d == 4791u16.to_be_bytes());
        Some(Hdr { ip, v4, roce })
    }
    fn tos(&self, b: &[u8]) -> u8 {
        if self.v4 {
            b[self.ip + 1]
        } else {
            (b[self.ip] << 4) | (b[self.ip + 1] >> 4)
        }
    }
    fn set_tos(&self, b: &mut [u8], tos: u8) {
        if self.v4 {
            b[self.ip + 1] = tos;
            self.fix_checksum(b);
        } else {
            b[self.ip] = (b[self.ip] & 0xf0) | (tos >> 4);
            b[self.ip + 1] = (b[self.ip + 1] & 0x0f) | (tos << 4);
        }
    }
    fn decrement_ttl(&self, b: &mut [u8]) {
        let at = if self.v4 { self.ip + 8 } else { self.ip + 7 };
        if b[at] > 1 {
            if self.v4 {
                // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the TTL/protocol word.
                let old = u16::from_be_bytes([b[at], b[at + 1]]);
                b[at] -= 1;
                let new = u16::from_be_bytes([b[at], b[at + 1]]);
                let hc = u16::from_be_bytes([b[self.ip + 10], b[self.ip + 11]]);
                let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
                sum = (sum & 0xffff) + (sum >> 16);
                sum = (sum & 0xffff) + (sum >> 16);
                b[self.ip + 10..self.ip + 12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
            } else {
                b[at] -= 1;
            }
        }
    }
    fn fix_checksum(&self, b: &mut [u8]) {
        let ihl = (b[self.ip] & 0x0f) as usize * 4;
        b[self.ip + 10] = 0;
        b[self.ip + 11] = 0;
        let c = rocescope_codec::build::internet_checksum(&[&b[self.ip..self.ip + ihl]]);
        b[self.ip + 10..self.ip + 12].copy_from_slice(&c.to_be_bytes());
    }
}

#[cfg(test)]
mod ttl_tests {
    use super::*;

    /// The incremental checksum update (RFC 1624) equals a full recomputation, whatever the
    /// header's other words.
    #[test]
    fn decrementing_the_ttl_keeps_the_ipv4_checksum_right() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (tos, ttl, ident) = (x as u8, 2 + (x >> 8) as u8 % 254, (x >> 16) as u16);
            let src = [(x >> 24) as u8, (x >> 32) as u8, (x >> 40) as u8, (x >> 48) as u8];
            let net = NetRepr::Ipv4 { src, dst: [10, 0, 1, 1], tos, ttl, ident };
            let mut b = FrameRepr::new(net, RoceRepr::new(0x04, 1, 1)).to_vec();
            let h = Hdr::of(&b).unwrap();
            h.decrement_ttl(&mut b);
            let mut full = b.clone();
            h.fix_checksum(&mut full);
            assert_eq!(b, full, "ttl {ttl} tos {tos} ident {ident}");
            assert_eq!(b[h.ip + 8], ttl - 1);
        }
    }
}
