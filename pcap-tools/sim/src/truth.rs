//! The ground truth of a run (`docs/truth.md`): per tap, what that tap can observe (its frames,
//! and per flow the losses, capture gaps, retransmissions and message completions), and the
//! simulator's own view (every message and every transmission with its fate).
//!
//! The document is [`Truth`], one typed struct per record kind; `rocescope synth --truth`
//! writes it through them ([`write_truth`], streaming, from the run's records spilled to disk:
//! `spill.rs`, `docs/truth.md` "Memory") and [`Truth::from_json`] reads it back.
//! The file is compact JSON with every connection, frame, flow, message and transmission on a
//! line of its own ([`Truth::write`]); without those line breaks it is exactly
//! `serde_json::to_string(&truth)`. Within a record the keys come in the order its struct
//! declares them: alphabetical (the order the format has always had), except in [`Truth`],
//! [`Tap`], [`Flow`] and [`Sim`], whose order `docs/truth.md` lists; the layout writer writes
//! those four key by key and must follow the same order (the tests compare its output with the
//! derived serialisation).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};
use std::net::IpAddr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::sim::{self, AcceptModel, ConnRec, Cover, Fabric, TapFrame, TxRec, EPOCH_NS};
use super::spill::{Dec, DiskVec, Enc, Record};
use super::spill_var::{DiskVarVec, VarRecord};
use rocescope_stacks::{self as stacks, RetxReason};

// ---------------------------------------------------------------------------------------------
// The schema.

/// A capture timestamp: nanoseconds since the Unix epoch (simulated time 0 is
/// [`EPOCH_NS`], 2023-11-14T22:13:20Z), written as a JSON string of decimal digits (a JSON
/// number would lose precision above 2^53), as pcapng timestamps read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeNs(pub u64);

impl TimeNs {
    /// The timestamp of simulated time `t` (ns).
    pub fn from_sim(t: u64) -> TimeNs {
        TimeNs(EPOCH_NS + t)
    }
}

impl fmt::Display for TimeNs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for TimeNs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        dec_u64::serialize(&self.0, s)
    }
}

impl<'de> Deserialize<'de> for TimeNs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TimeNs, D::Error> {
        dec_u64::deserialize(d).map(TimeNs)
    }
}

mod flor;

/// A `u64` as a JSON string of decimal digits.
mod dec_u64 {
    use serde::de::{Error, Unexpected};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| s.parse().ok())
            .flatten()
            .ok_or_else(|| D::Error::invalid_value(Unexpected::Str(&s), &"a string of decimal digits (u64)"))
    }
}

/// Deserialises a key that is always written, `null` or not: unlike a plain `Option` field, a
/// missing key is an error.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::deserialize(d)
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn one() -> u32 {
    1
}

fn default_unit() -> u32 {
    rocescope_codec::Params::default().flor_unit_size
}

fn is_default_unit(n: &u32) -> bool {
    *n == default_unit()
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Floats read back exactly. serde_json's own float parsing (without its `float_roundtrip`
/// feature) can be one ULP off for 17-digit values, so these take the number's text and parse
/// it with `str::parse`, which rounds correctly: a document read back writes the same bytes.
mod exact {
    use serde::de::{Error, Unexpected};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::value::RawValue;

    fn number<E: Error>(raw: &RawValue) -> Result<f64, E> {
        let s = raw.get();
        let json_number = s.starts_with(|c: char| c == '-' || c.is_ascii_digit());
        json_number
            .then(|| s.parse().ok())
            .flatten()
            .ok_or_else(|| E::invalid_value(Unexpected::Other(s), &"a JSON number"))
    }

    pub fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        number(&<Box<RawValue>>::deserialize(d)?)
    }

    /// `[a, b]` or `null`.
    pub fn pair<'de, D: Deserializer<'de>>(d: D) -> Result<Option<[f64; 2]>, D::Error> {
        match <Option<[Box<RawValue>; 2]>>::deserialize(d)? {
            Some([a, b]) => Ok(Some([number(&a)?, number(&b)?])),
            None => Ok(None),
        }
    }

    /// The WRR weight of `config`: a number, the string `"inf"` (strict priority), or `null`.
    pub mod weight {
        use super::*;

        pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(w) if !w.is_finite() => "inf".serialize(s),
                v => v.serialize(s),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
            match <Option<Box<RawValue>>>::deserialize(d)? {
                Some(raw) if raw.get() == "\"inf\"" => Ok(Some(f64::INFINITY)),
                Some(raw) => number(&raw).map(Some),
                None => Ok(None),
            }
        }
    }
}

/// The whole truth document of one run (`docs/truth.md`, "The truth document").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Truth {
    /// Always `"rocescope-synth-truth"`.
    pub format: Format,
    /// The layout's version: 1.
    pub version: u32,
    /// The canonical command line (every option explicit, no file names) that reproduces the run.
    pub command: String,
    /// The options as values, with the effective fabric rate and WRR weight.
    pub config: Config,
    /// The timestamp of simulated time 0.
    pub epoch_ns: TimeNs,
    pub summary: Summary,
    /// One per connection (sender), in order.
    pub connections: Vec<Connection>,
    /// One per capture tap, in pcapng interface order: what that tap observes.
    pub taps: Vec<Tap>,
    /// The simulator's own view.
    pub sim: Sim,
    /// Per host, in the topology's order: the NIC counters it would show (`counters.rs`).
    /// (Absent from truths written before the counters were: read as none.)
    #[serde(default)]
    pub counters: Vec<HostCounters>,
}

/// One host's NIC counters over the run (`counters[]`): what `ethtool -S` would show it gain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCounters {
    /// The host's name (`s0`, `r0`, `h1.2`).
    pub host: String,
    pub ip: String,
    /// The tap at this host's NIC (`sender`, `receiver`) when the run has one, else `null`.
    #[serde(deserialize_with = "nullable")]
    pub tap: Option<TapName>,
    /// Counter name (mlx5's) → its change over the run.
    pub values: std::collections::BTreeMap<String, u64>,
}

/// The `format` tag of a truth document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    #[serde(rename = "rocescope-synth-truth")]
    RocescopeSynthTruth,
}

/// The options of the run (`config`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The responder ACKs at least every this many packets.
    pub ack_every: u32,
    /// GBN/IRN window (packets).
    pub bdp_packets: u32,
    /// Gilbert-Elliott transition probabilities `[good→bad, bad→good]` per frame, or `null`.
    #[serde(deserialize_with = "exact::pair")]
    pub burst_loss: Option<[f64; 2]>,
    /// Congestion control of the requesters' NICs (`--cc`).
    pub cc: Cc,
    /// Minimum gap between two CNPs to one QP (ns).
    pub cnp_interval_ns: u64,
    /// Control queue size (bytes); `null` without trimming.
    #[serde(deserialize_with = "nullable")]
    pub control_queue_bytes: Option<u64>,
    /// Bit position of the DCP tag in the ToS byte.
    pub dcp_tag_shift: u8,
    /// DCP's coarse timeout of a message's first round (ns; doubled per round).
    pub dcp_timeout_ns: u64,
    /// Propagation delay of every link (ns).
    pub delay_ns: u64,
    /// RED CE marking of the data queues (`{kmin, kmax, pmax}`), or `null` (none, or a single
    /// threshold).
    #[serde(deserialize_with = "nullable")]
    pub ecn_red: Option<EcnRed>,
    /// CE-marking threshold of the data queues (bytes), or `null`.
    #[serde(deserialize_with = "nullable")]
    pub ecn_threshold: Option<u64>,
    /// Effective rate of each fabric link (bit/s).
    pub fabric_rate_bps: u64,
    /// The fabric link the fabric tap watches.
    pub fabric_tap_path: u32,
    /// Flor's UNIT_SIZE, bytes (`--flor-unit-size`); written only when not the default 4096.
    #[serde(default = "default_unit", skip_serializing_if = "is_default_unit")]
    pub flor_unit_size: u32,
    /// GBN's local ACK timeout exponent t (4.096 µs · 2^t; 0: none).
    pub local_ack_timeout: u8,
    /// Bernoulli loss probability per frame on the lossy links.
    #[serde(deserialize_with = "exact::f64")]
    pub loss: f64,
    pub loss_dir: LossDir,
    /// Where frames chosen for random loss are lost: `trim` (at the switch port, DCP data
    /// trimmed) or `drop` (on the wire).
    pub loss_mode: LossMode,
    pub loss_on: LossOn,
    /// Bytes per message.
    pub message_size: u32,
    /// Messages per connection.
    pub messages: u32,
    /// DCP window (messages).
    pub msg_window: u32,
    /// Payload bytes per full packet.
    pub mtu: u32,
    pub op: ConfigOp,
    /// Parallel fabric links.
    pub paths: u32,
    /// Gap between two posts on a connection (ns; 0: all at time 0).
    pub post_interval_ns: u64,
    /// The codec profile the stack's packets follow.
    pub profile: Profile,
    /// Data queue threshold (bytes).
    pub queue_bytes: u64,
    /// Rate of each host link (bit/s).
    pub rate_bps: u64,
    /// Delay spread across the paths (ns).
    pub reorder_ns: u64,
    /// GBN retries before the QP errors out.
    pub retry_cnt: u8,
    pub routing: Routing,
    /// One retransmission timeout for every stack (`--rto`, ns), or `null`: each stack's own.
    #[serde(deserialize_with = "nullable")]
    pub rto_ns: Option<u64>,
    /// SDR's packets a chunk (`--sdr-chunk`); written only when not 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub sdr_chunk_packets: u32,
    /// The random seed, as a string of decimal digits.
    #[serde(with = "dec_u64")]
    pub seed: u64,
    /// Connections (the incast's N).
    pub senders: u32,
    pub stack: Stack,
    /// The taps, in pcapng interface order.
    pub taps: Vec<TapName>,
    /// Simulated time limit (ns).
    pub time_limit_ns: u64,
    /// Header-only trimming (DCP).
    pub trim: bool,
    /// The no-progress watchdog (ns; 0: off).
    pub watchdog_ns: u64,
    /// The control queue's WRR weight in force (`"inf"`: strict priority); `null` without
    /// trimming.
    #[serde(with = "exact::weight")]
    pub wrr_weight: Option<f64>,
}

/// A reference stack (`--stack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    Gbn,
    Irn,
    Dcp,
    #[serde(rename = "sdr-sr")]
    SdrSr,
    #[serde(rename = "sdr-ec")]
    SdrEc,
    Flor,
    Erd,
    Netrt,
}

/// A codec profile, by its name (`rocescope_codec::Profile::name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Std,
    Dcp,
    Sdr,
    Flor,
    Netrt,
    Erd,
}

/// `--op`: one operation, or `mix` (cycle through those the stack supports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigOp {
    Send,
    Write,
    Read,
    WriteImm,
    Mix,
}

/// A message's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Send,
    Write,
    Read,
    WriteImm,
}

/// How switches pick among the paths (`--spray`, `--adaptive`, else per-flow hash).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Routing {
    Ecmp,
    Spray,
    Adaptive,
}

/// RED ECN marking (`--ecn-red`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnRed {
    pub kmin: u64,
    pub kmax: u64,
    #[serde(deserialize_with = "exact::f64")]
    pub pmax: f64,
}

/// Congestion control (`--cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cc {
    None,
    Dcqcn,
}

impl From<sim::CongestionControl> for Cc {
    fn from(c: sim::CongestionControl) -> Cc {
        match c {
            sim::CongestionControl::None => Cc::None,
            sim::CongestionControl::Dcqcn => Cc::Dcqcn,
        }
    }
}

/// Which links lose frames at random (`--loss-on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossOn {
    Fabric,
    Sender,
    Receiver,
}

/// Where frames chosen for random loss are lost (`--loss-mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossMode {
    Trim,
    Drop,
}

impl From<sim::LossMode> for LossMode {
    fn from(m: sim::LossMode) -> LossMode {
        match m {
            sim::LossMode::Trim => LossMode::Trim,
            sim::LossMode::Drop => LossMode::Drop,
        }
    }
}

/// In which directions (`--loss-dir`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossDir {
    Both,
    Forward,
    Reverse,
}

/// A capture tap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TapName {
    Sender,
    Receiver,
    Fabric,
}

/// Counts over the whole run (`summary`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Frames the taps recorded (the capture's frames).
    pub captured_frames: u64,
    /// Packets CE-marked by a switch.
    pub ce_marked: u64,
    /// CNPs the NICs sent.
    pub cnps: u64,
    /// CNPs a requester's congestion control reacted to (DCQCN).
    pub cnps_reacted: u64,
    /// Messages the requester completed at least once.
    pub completed: u64,
    /// Messages delivered exactly once, whole and with the right bytes.
    pub delivered_once: u64,
    /// Packets lost (dropped by a queue or a link, or with no endpoint).
    pub dropped: u64,
    /// When the run ended.
    pub end_time_ns: TimeNs,
    /// Simulator events processed.
    pub events: u64,
    /// Connections that gave up.
    pub failed_connections: u64,
    /// Links that failed during the run (`--fail-link`).
    pub failed_links: u64,
    /// What the fault injected on purpose (`--fault`) did, in order (absent without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultRecord>,
    /// Header-only packets lost in a full control queue.
    pub ho_dropped: u64,
    /// Frames put on any link (a simulated packet per hop).
    pub link_frames: u64,
    /// The most bytes any control queue held.
    pub max_control_queue_bytes: u64,
    /// Messages posted.
    pub messages: u64,
    /// PFC pause frames the switches sent (lossless mode; they are in the capture but in no
    /// tap's `frames`, which skip their frame numbers).
    pub pause_frames: u64,
    /// Transmissions that are retransmissions (see [`Retx`]).
    pub retransmissions: u64,
    /// Of which spurious.
    pub spurious_retransmissions: u64,
    /// The run hit `--time-limit`.
    pub timed_out: bool,
    /// Frames the endpoints and NICs sent.
    pub transmissions: u64,
    /// Data packets trimmed to header-only.
    pub trimmed: u64,
    /// The no-progress watchdog (`--watchdog`) ended the run.
    pub watchdog: bool,
}

/// One thing a fault injected on purpose did (`summary.faults[]`, `--fault`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRecord {
    /// The fault's name (`omit-nak`, `double-nak`, `early-msn`, `false-nack`, `needless-retx`,
    /// `late-go-back`, `early-timeout`, `late-timeout`).
    pub fault: String,
    /// The connection (from 0) whose end misbehaved.
    pub connection: u32,
    /// Which end: `requester` or `responder`.
    pub end: String,
    /// When (the faulty end's time: the frame it concerns left, or would have, then).
    pub time_ns: TimeNs,
    /// The PSN of the frame changed, sent, skipped or not sent.
    pub psn: u32,
    pub detail: String,
}

/// One connection (`connections[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    /// When and why the connection gave up, or `null`.
    #[serde(deserialize_with = "nullable")]
    pub failed: Option<Failure>,
    /// Its index (= `conn` elsewhere).
    pub index: u32,
    /// Payload bytes per full packet.
    pub mtu: u32,
    /// The responder's host, indexed the same way (dumbbell: the receiver `r0`, index
    /// `senders`).
    pub receiver: u32,
    pub requester: Host,
    pub responder: Host,
    /// The requester's base retransmission timeout (ns): GBN's local ACK timeout (0: none),
    /// IRN's RTO_high, DCP's first-round coarse timeout.
    pub rto_ns: u64,
    /// The requester's host: its index among the topology's hosts (dumbbell: `s<sender>`;
    /// leaf-spine: hosts leaf by leaf, `h<l>.<j>` is `l·hosts_per_leaf + j`).
    pub sender: u32,
    /// The requester's first PSN.
    pub start_psn: u32,
    /// IPv4 ToS of data packets.
    pub tos: u8,
    /// UDP source port of the connection's packets.
    pub udp_sport: u16,
}

/// One end of a connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub ip: IpAddr,
    /// `02:00:00:00:00:01`: six lowercase hex bytes.
    pub mac: String,
    /// This end's QP number.
    pub qpn: u32,
}

/// Why a connection gave up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// The stack's reason, e.g. `retry count exceeded`.
    pub reason: String,
    pub time_ns: TimeNs,
}

/// What one tap observes (`taps[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tap {
    pub name: TapName,
    /// pcapng interface index.
    pub interface: u32,
    /// Every frame the tap recorded, in file order.
    pub frames: Vec<Frame>,
    /// Per connection, its requests flow then its responses flow.
    pub flows: Vec<Flow>,
}

/// One frame a tap recorded (`taps[].frames[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Frame {
    /// CE-marked here (the key is written only when true).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ce: bool,
    pub direction: Direction,
    /// Its flow's `id`.
    pub flow: String,
    /// pcapng frame number (from 1, over the whole file).
    pub frame: u64,
    /// This copy is the trimmed, header-only form of a data packet (written only when true).
    #[serde(default, skip_serializing_if = "is_false")]
    pub ho: bool,
    pub kind: Kind,
    /// The transmission did not reach its destination whole (written only when true).
    #[serde(default, skip_serializing_if = "is_false")]
    pub lost: bool,
    /// Message index on the connection; `null` for ACKs, NAKs, CNPs, bounces.
    #[serde(deserialize_with = "nullable")]
    pub msg: Option<u64>,
    pub origin: Origin,
    /// BTH PSN.
    pub psn: u32,
    /// For a retransmission only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retx: Option<Retx>,
    pub time_ns: TimeNs,
    /// The transmission (`sim.transmissions[].id`).
    pub tx: u32,
}

/// Out of or into the tapped port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    In,
    Out,
}

/// Who put a transmission on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Requester,
    Responder,
    /// The receiving NIC (a CNP).
    Nic,
    /// A switch: NetRT's source ToR resending from its duplicate pool, or a NetRT message.
    Switch,
}

/// What a transmission is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A SEND, WRITE or READ request packet.
    Data,
    ReadResponse,
    Ack,
    Nak,
    /// IRN's selective NAK.
    Sack,
    /// A header-only packet the receiver returns to the sender (DCP).
    HoBounce,
    Cnp,
    Other,
}

/// What makes a transmission a retransmission (`retx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retx {
    pub cause: RetxCause,
    /// Which retransmission of its PSN (1: the first).
    pub copy: u32,
    /// The stack's own reason, or `null`.
    #[serde(deserialize_with = "nullable")]
    pub reason: Option<Reason>,
    /// The receiver had accepted, or would accept, an earlier copy.
    pub spurious: bool,
}

/// Why a retransmission happened, as the truth judges it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetxCause {
    /// An earlier copy was lost (dropped or trimmed).
    Loss,
    /// Every earlier copy arrived but was discarded out of sequence.
    GoBack,
    /// The stack's timer expired.
    Timeout,
    /// An earlier copy was, or would have been, accepted.
    Spurious,
}

/// Why the stack retransmitted (its own view: `rocescope_stacks::RetxReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    GoBack,
    Sack,
    HeaderOnly,
    Timeout,
    /// ERD: a NACK named it.
    ErdNack,
}

/// One direction of one QP as a tap sees it (`taps[].flows[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// `SRC>DST/DESTQP`.
    pub id: String,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// Destination QP number.
    pub destqp: u32,
    /// The connection.
    pub conn: u32,
    pub role: Role,
    pub profile: Profile,
    /// The tap's name.
    pub tap: TapName,
    /// How many of the tap's frames belong to the flow.
    pub frames: u64,
    /// Every transmission of the flow the network failed to deliver whole, seen here or not.
    pub losses: Vec<Loss>,
    /// PSNs the receiver accepted of which this tap saw no copy.
    pub capture_gaps: Vec<CaptureGap>,
    /// The tap's frames of the flow that are retransmissions.
    pub retransmissions: Vec<Retransmission>,
    /// Per message (requests flows only; empty for responses).
    pub messages: Vec<FlowMessage>,
}

/// Which direction of the connection a flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The requester's direction (holds the messages).
    Requests,
    Responses,
}

/// A transmission the network failed to deliver whole (`flows[].losses[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Loss {
    pub cause: LossCause,
    /// Where this tap saw it, else the tap's frame of the next copy of the PSN (the repair),
    /// else `null`.
    #[serde(deserialize_with = "nullable")]
    pub frame: Option<u64>,
    /// A trimmed packet whose header-only form was lost too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ho_lost: Option<HoLoss>,
    pub kind: Kind,
    #[serde(deserialize_with = "nullable")]
    pub msg: Option<u64>,
    pub psn: u32,
    pub repair: Repair,
    /// This tap recorded it (upstream of the loss).
    pub seen: bool,
    /// How this tap saw it (only when `seen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_as: Option<SeenAs>,
    pub signal: Signal,
    /// When it was lost (trimmed).
    pub time_ns: TimeNs,
    pub tx: u32,
    /// Where: e.g. `link sw0>sw1#2`, `sw1>r0 queue`, `sw1>r0 control queue`.
    #[serde(rename = "where", deserialize_with = "nullable")]
    pub place: Option<String>,
}

/// How a packet was lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossCause {
    Link,
    /// Chosen for random loss at a switch port and dropped there (`--loss-mode trim`).
    Switch,
    Queue,
    ControlQueue,
    /// Cut to its header-only form by a switch.
    Trimmed,
    NoEndpoint,
    /// Dropped by NetRT's destination ToR (flushed, or a late duplicate).
    Reorder,
}

/// Why a packet (or a trimmed packet's header-only form) did not arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropCause {
    /// The data queue was over its threshold.
    Queue,
    /// The control queue was full.
    ControlQueue,
    /// Lost on a link at random.
    Link,
    /// Chosen for random loss at a switch port and dropped there (`--loss-mode trim`).
    Switch,
    /// No QP at the destination.
    NoEndpoint,
    /// Dropped by NetRT's destination ToR: flushed from its reordering buffer, or a late copy
    /// of a PSN it had already passed on.
    Reorder,
}

/// The loss of a trimmed packet's header-only form (`losses[].ho_lost`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoLoss {
    pub cause: DropCause,
    pub time_ns: TimeNs,
    #[serde(rename = "where", deserialize_with = "nullable")]
    pub place: Option<String>,
}

/// Whether a later copy of a lost packet was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    EndHost,
    /// NetRT: the source ToR resent it from its pool.
    InNetwork,
    /// SDR erasure coding: never resent, its data submessage rebuilt from parity (the message
    /// was delivered).
    ErasureCode,
    None,
}

/// The form in which a tap saw a lost packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeenAs {
    Data,
    Ho,
}

/// What made the sender resend a lost packet (from the next copy's reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signal {
    Nak,
    Sack,
    /// A header-only packet (DCP).
    Ho,
    Timeout,
    /// NetRT: the destination ToR's retransmission request (the source ToR resent it).
    #[serde(rename = "netrt_request")]
    NetrtRequest,
    /// ERD: a NACK of the receiver named it (its retransmission info path).
    #[serde(rename = "erd_nack")]
    ErdNack,
    /// SDR: the receiver's SR_NACK named its chunk (the SR_NACK variant of selective repeat).
    #[serde(rename = "sdr_bitmap")]
    SdrBitmap,
    /// Flor: an ACK listed a WQE sent after its copy, not its copy (a gap).
    #[serde(rename = "flor_ack")]
    FlorAck,
    /// Resent without a reason from the stack, or never resent.
    Gap,
    /// Not data: nobody resends it.
    None,
}

/// A PSN the receiver accepted of which the tap saw no copy (`flows[].capture_gaps[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureGap {
    /// The tap's first frame that proves the PSN received, or `null`.
    #[serde(deserialize_with = "nullable")]
    pub frame: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub msg: Option<u64>,
    pub psn: u32,
    /// The accepted copy.
    pub tx: u32,
}

/// One of the tap's frames of the flow that is a retransmission (`flows[].retransmissions[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retransmission {
    pub cause: RetxCause,
    pub frame: u64,
    #[serde(deserialize_with = "nullable")]
    pub msg: Option<u64>,
    pub psn: u32,
    #[serde(deserialize_with = "nullable")]
    pub reason: Option<Reason>,
    pub spurious: bool,
    pub time_ns: TimeNs,
    pub tx: u32,
}

/// One message as a tap sees it (`flows[].messages[]`, requests flows).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowMessage {
    /// The tap's first frame that proves the message complete, or `null`.
    #[serde(deserialize_with = "nullable")]
    pub complete_frame: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub complete_time_ns: Option<TimeNs>,
    /// The tap's first frame carrying the message's data (either direction), or `null`.
    #[serde(deserialize_with = "nullable")]
    pub first_frame: Option<u64>,
    /// Over every data transmission of it (a READ's: its responses').
    #[serde(deserialize_with = "nullable")]
    pub first_psn: Option<u32>,
    pub index: u64,
    #[serde(deserialize_with = "nullable")]
    pub last_frame: Option<u64>,
    #[serde(deserialize_with = "nullable")]
    pub last_psn: Option<u32>,
    /// Bytes.
    pub len: u32,
    pub op: Op,
    /// Distinct PSNs of its data.
    pub packets: u32,
    /// How many of the tap's frames of it are retransmissions.
    pub retransmitted: u64,
}

/// The simulator's view (`sim`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sim {
    /// Every message, by connection then index.
    pub messages: Vec<SimMessage>,
    /// Every transmission, in the order the endpoints and NICs sent them (`id` order).
    pub transmissions: Vec<Transmission>,
}

/// One message as the simulator saw it (`sim.messages[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimMessage {
    /// The transmission whose arrival completed it.
    #[serde(deserialize_with = "nullable")]
    pub completed_by_tx: Option<u32>,
    /// The requester's (first) work completion.
    #[serde(deserialize_with = "nullable")]
    pub completed_ns: Option<TimeNs>,
    pub completions: u64,
    pub conn: u32,
    /// The DCPETH MSN of its first packet (DCP).
    #[serde(deserialize_with = "nullable")]
    pub dcp_msn: Option<u32>,
    /// The first delivery at the application (the responder's, or the requester's for a READ).
    #[serde(deserialize_with = "nullable")]
    pub delivered_ns: Option<TimeNs>,
    /// How many times it was delivered (1 when all is well).
    pub deliveries: u64,
    #[serde(deserialize_with = "nullable")]
    pub first_psn: Option<u32>,
    pub index: u64,
    /// Every delivery had the right length and bytes (and there was one).
    pub intact: bool,
    #[serde(deserialize_with = "nullable")]
    pub last_psn: Option<u32>,
    /// Bytes.
    pub len: u32,
    pub op: Op,
    #[serde(deserialize_with = "nullable")]
    pub posted_ns: Option<TimeNs>,
}

/// One frame an endpoint or NIC sent (`sim.transmissions[]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transmission {
    /// The receiver's verdict, for data that arrived whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<Accept>,
    pub conn: u32,
    /// NetRT: the transmission whose bytes the source ToR kept and resent (origin `switch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<u32>,
    /// How it was lost (`dropped`, or a trimmed packet's header-only form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<Dropped>,
    pub fate: Fate,
    /// Flor: the WQE transmission a data packet belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flor: Option<FlorWqe>,
    /// Flor: the GNs a receiver's ACK lists (a WRITE chunk's reliable number as its chunk's GN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flor_ack: Option<Vec<u64>>,
    /// Arrival at the destination NIC, or the loss (absent while in flight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fate_time_ns: Option<TimeNs>,
    pub id: u32,
    pub kind: Kind,
    /// Bytes as sent.
    pub len: u32,
    #[serde(deserialize_with = "nullable")]
    pub msg: Option<u64>,
    /// ERD: the NACK segment's TCP sequence number and the PSNs its NACK messages name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nack: Option<NackSegment>,
    pub origin: Origin,
    pub psn: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retx: Option<Retx>,
    /// SDR: what a control message says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdr_ctrl: Option<SdrCtrl>,
    /// SDR: a data packet's offset in its send (its immediate's packet offset); its copies are
    /// those with the same `sdr_seq` and `sdr_off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdr_off: Option<u32>,
    /// SDR: the message sequence number of a data packet's send (selective repeat: its
    /// message's index; erasure coding: each of D0, P0, D1, P1, … has its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdr_seq: Option<u32>,
    /// When the stack handed it to its NIC.
    pub time_ns: TimeNs,
    /// Where it was trimmed to header-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<Trim>,
}

/// Flor: the WQE transmission a data packet belongs to (`sim.transmissions[].flor`): its global
/// number, what it carries, and the units of its message it covers (a DATA or ADDR_REQ: one,
/// `off` 0).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlorWqe {
    pub gn: u64,
    pub off: u32,
    pub units: u32,
    /// `chunk` (a WRITE), `piece` (a WRITE_RETX SEND), `data` or `addr_req`.
    pub wqe: String,
}

/// What an ERD NACK segment (a TCP segment of the retransmission info path) carries
/// (`sim.transmissions[].nack`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NackSegment {
    /// TCP sequence number of its first byte (a resent segment keeps it).
    pub seq: u32,
    /// The PSNs its NACK messages name, in order (all of the connection's requests flow).
    pub psns: Vec<u32>,
}

/// What an SDR control message says (`sim.transmissions[].sdr_ctrl`; WIRE.md B.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SdrCtrl {
    /// SR_ACK: every chunk below it is received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cum_ack: Option<u32>,
    /// SR_NACK: the chunks it names; EC_NACK: the data submessages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indices: Vec<u32>,
    pub msg_seq: u32,
    /// SR_ACK: the chunks its bitmap marks that no earlier SR_ACK of its message still marked
    /// (its bitmap is those of its message's SR_ACKs so far, within its window:
    /// `rocescope_sim::sim::SdrMarks::sacked`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub newly_sacked: Vec<u32>,
    /// SR_ACK: its bitmap's width (chunks from the cumulative ACK).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack_bits: Option<u32>,
    /// `cts`, `sr_ack`, `sr_nack`, `ec_ack` or `ec_nack`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// The receiver's verdict on an intact data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accept {
    Accepted,
    /// A copy of this PSN was already accepted.
    Duplicate,
    /// Out of sequence (Go-Back-N).
    Discarded,
}

/// Where a transmission ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    Delivered,
    Dropped,
    /// Trimmed to header-only (whose own fate `fate_time_ns` and `drop` tell).
    Trimmed,
    /// Cut by the time limit.
    InFlight,
}

/// How a transmission was lost (`drop`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dropped {
    pub cause: DropCause,
    #[serde(rename = "where", deserialize_with = "nullable")]
    pub place: Option<String>,
}

/// Where and when a transmission was trimmed (`trim`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trim {
    pub time_ns: TimeNs,
    /// The port that trimmed it.
    #[serde(rename = "where", deserialize_with = "nullable")]
    pub place: Option<String>,
}

impl Truth {
    /// Parses a truth document (any whitespace).
    pub fn from_json(s: &str) -> serde_json::Result<Truth> {
        serde_json::from_str(s)
    }

    /// Writes the document in the layout `rocescope synth --truth` writes: compact, with every
    /// connection, frame, flow, message and transmission on a line of its own.
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        let mut o = Out { w };
        o.head(self.format, self.version, &self.command, &self.config, self.epoch_ns, &self.summary)?;
        o.connections(&self.connections)?;
        o.begin_taps()?;
        for (i, t) in self.taps.iter().enumerate() {
            o.tap(i == 0, t.name, t.interface, &t.frames, &t.flows)?;
        }
        o.end_taps()?;
        o.sim(&self.sim.messages, &self.sim.transmissions)?;
        o.counters(&self.counters)
    }

    /// [`Truth::write`] into a string.
    pub fn to_json(&self) -> String {
        let mut buf = Vec::new();
        self.write(&mut buf).expect("writing to memory");
        String::from_utf8(buf).expect("JSON is UTF-8")
    }
}

// Conversions from the simulator's and the stacks' own types.

impl From<stacks::StackKind> for Stack {
    fn from(k: stacks::StackKind) -> Stack {
        match k {
            stacks::StackKind::Gbn => Stack::Gbn,
            stacks::StackKind::Irn => Stack::Irn,
            stacks::StackKind::Dcp => Stack::Dcp,
            stacks::StackKind::SdrSr => Stack::SdrSr,
            stacks::StackKind::SdrEc => Stack::SdrEc,
            stacks::StackKind::Flor => Stack::Flor,
            stacks::StackKind::Erd => Stack::Erd,
            stacks::StackKind::Netrt => Stack::Netrt,
        }
    }
}

impl From<Stack> for stacks::StackKind {
    fn from(k: Stack) -> stacks::StackKind {
        match k {
            Stack::Gbn => stacks::StackKind::Gbn,
            Stack::Irn => stacks::StackKind::Irn,
            Stack::Dcp => stacks::StackKind::Dcp,
            Stack::SdrSr => stacks::StackKind::SdrSr,
            Stack::SdrEc => stacks::StackKind::SdrEc,
            Stack::Flor => stacks::StackKind::Flor,
            Stack::Erd => stacks::StackKind::Erd,
            Stack::Netrt => stacks::StackKind::Netrt,
        }
    }
}

impl From<rocescope_codec::Profile> for Profile {
    fn from(p: rocescope_codec::Profile) -> Profile {
        use rocescope_codec::Profile as P;
        match p {
            P::Std => Profile::Std,
            P::Dcp => Profile::Dcp,
            P::Sdr => Profile::Sdr,
            P::Flor => Profile::Flor,
            P::Netrt => Profile::Netrt,
            P::Erd => Profile::Erd,
        }
    }
}

impl From<stacks::Op> for Op {
    fn from(op: stacks::Op) -> Op {
        match op {
            stacks::Op::Send => Op::Send,
            stacks::Op::Write => Op::Write,
            stacks::Op::Read => Op::Read,
            stacks::Op::WriteImm => Op::WriteImm,
        }
    }
}

impl From<Op> for ConfigOp {
    fn from(op: Op) -> ConfigOp {
        match op {
            Op::Send => ConfigOp::Send,
            Op::Write => ConfigOp::Write,
            Op::Read => ConfigOp::Read,
            Op::WriteImm => ConfigOp::WriteImm,
        }
    }
}

impl From<sim::Routing> for Routing {
    fn from(r: sim::Routing) -> Routing {
        match r {
            sim::Routing::Ecmp => Routing::Ecmp,
            sim::Routing::Spray => Routing::Spray,
            sim::Routing::Adaptive => Routing::Adaptive,
        }
    }
}

impl From<sim::LossPlace> for LossOn {
    fn from(p: sim::LossPlace) -> LossOn {
        match p {
            sim::LossPlace::Fabric => LossOn::Fabric,
            sim::LossPlace::Sender => LossOn::Sender,
            sim::LossPlace::Receiver => LossOn::Receiver,
        }
    }
}

impl From<sim::LossDir> for LossDir {
    fn from(d: sim::LossDir) -> LossDir {
        match d {
            sim::LossDir::Both => LossDir::Both,
            sim::LossDir::Forward => LossDir::Forward,
            sim::LossDir::Reverse => LossDir::Reverse,
        }
    }
}

impl From<sim::TapPoint> for TapName {
    fn from(t: sim::TapPoint) -> TapName {
        match t {
            sim::TapPoint::Sender => TapName::Sender,
            sim::TapPoint::Receiver => TapName::Receiver,
            sim::TapPoint::Fabric => TapName::Fabric,
        }
    }
}

impl From<sim::Origin> for Origin {
    fn from(o: sim::Origin) -> Origin {
        match o {
            sim::Origin::Requester => Origin::Requester,
            sim::Origin::Responder => Origin::Responder,
            sim::Origin::Nic => Origin::Nic,
            sim::Origin::Switch => Origin::Switch,
        }
    }
}

impl From<sim::Kind> for Kind {
    fn from(k: sim::Kind) -> Kind {
        match k {
            sim::Kind::Data => Kind::Data,
            sim::Kind::ReadResp => Kind::ReadResponse,
            sim::Kind::Ack => Kind::Ack,
            sim::Kind::Nak => Kind::Nak,
            sim::Kind::Sack => Kind::Sack,
            sim::Kind::HoBounce => Kind::HoBounce,
            sim::Kind::Cnp => Kind::Cnp,
            sim::Kind::Other => Kind::Other,
        }
    }
}

impl From<RetxReason> for Reason {
    fn from(r: RetxReason) -> Reason {
        match r {
            RetxReason::GoBack => Reason::GoBack,
            RetxReason::Sack => Reason::Sack,
            RetxReason::HeaderOnly => Reason::HeaderOnly,
            RetxReason::Timeout => Reason::Timeout,
            RetxReason::Nack => Reason::ErdNack,
        }
    }
}

impl From<sim::DropCause> for DropCause {
    fn from(c: sim::DropCause) -> DropCause {
        match c {
            sim::DropCause::Queue => DropCause::Queue,
            sim::DropCause::ControlQueue => DropCause::ControlQueue,
            sim::DropCause::Link => DropCause::Link,
            sim::DropCause::Switch => DropCause::Switch,
            sim::DropCause::NoEndpoint => DropCause::NoEndpoint,
            sim::DropCause::Reorder => DropCause::Reorder,
        }
    }
}

impl From<DropCause> for LossCause {
    fn from(c: DropCause) -> LossCause {
        match c {
            DropCause::Queue => LossCause::Queue,
            DropCause::ControlQueue => LossCause::ControlQueue,
            DropCause::Link => LossCause::Link,
            DropCause::Switch => LossCause::Switch,
            DropCause::NoEndpoint => LossCause::NoEndpoint,
            DropCause::Reorder => LossCause::Reorder,
        }
    }
}

impl From<sim::Accept> for Accept {
    fn from(a: sim::Accept) -> Accept {
        match a {
            sim::Accept::Accepted => Accept::Accepted,
            sim::Accept::Duplicate => Accept::Duplicate,
            sim::Accept::Discarded => Accept::Discarded,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Deriving the truth from a finished run.

/// The loss signal a retransmission reason stands for.
fn signal_of(r: Option<RetxReason>) -> Signal {
    match r {
        Some(RetxReason::GoBack) => Signal::Nak,
        Some(RetxReason::Sack) => Signal::Sack,
        Some(RetxReason::HeaderOnly) => Signal::Ho,
        Some(RetxReason::Timeout) => Signal::Timeout,
        Some(RetxReason::Nack) => Signal::ErdNack,
        None => Signal::Gap,
    }
}

/// A retransmission's cause: `spurious` when an earlier copy had reached the receiver; else
/// `timeout` when the stack's reason is its timer; else `loss` when an earlier copy was lost;
/// else `go_back` (every earlier copy discarded, resent for a signal).
fn retx_cause(spurious: bool, reason: Option<RetxReason>, any_lost: bool) -> RetxCause {
    if spurious {
        RetxCause::Spurious
    } else if reason == Some(RetxReason::Timeout) {
        RetxCause::Timeout
    } else if any_lost {
        RetxCause::Loss
    } else {
        RetxCause::GoBack
    }
}

/// What the truth derives about each transmission.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxTruth {
    /// Index among the transmissions of its PSN (0: the original).
    pub copy: u32,
    pub spurious: bool,
    /// Why it was sent again (retransmissions only).
    pub cause: Option<RetxCause>,
    /// For a lost transmission: the next transmission of the same PSN.
    pub repaired_by: Option<u32>,
}

/// Per-transmission derivations: which frames are retransmissions, spurious or not, and why.
pub fn derive(f: &Fabric<'_>) -> Vec<TxTruth> {
    let mut out = vec![TxTruth::default(); f.txs.len()];
    let mut groups: HashMap<(u32, bool, u32), Vec<u32>> = HashMap::new();
    for t in &f.txs {
        if t.kind.is_data() {
            groups.entry((t.conn, t.to_requester, t.psn)).or_default().push(t.id);
        }
    }
    let useful = |t: &TxRec| match f.cfg.accept {
        AcceptModel::InOrder => t.accept == Some(sim::Accept::Accepted),
        AcceptModel::AnyOrder => matches!(t.accept, Some(sim::Accept::Accepted | sim::Accept::Duplicate)),
    };
    for ids in groups.values() {
        for (i, &id) in ids.iter().enumerate() {
            let t = &f.txs[id as usize];
            out[id as usize].copy = i as u32;
            if lost(t) {
                out[id as usize].repaired_by = ids.get(i + 1).copied();
            }
            if i == 0 {
                continue;
            }
            let earlier = &ids[..i];
            let spurious = earlier.iter().any(|&e| useful(&f.txs[e as usize]));
            let any_lost = earlier.iter().any(|&e| lost(&f.txs[e as usize]));
            let cause = retx_cause(spurious, t.reason, any_lost);
            out[id as usize].spurious = spurious;
            out[id as usize].cause = Some(cause);
        }
    }
    out
}

/// SDR: per connection, where each message and send starts ([`sdr_bases`]). Empty for the
/// other stacks' connections.
#[derive(Clone, Debug, Default)]
struct SdrBases {
    /// Per message, the sequence number of its first send (selective repeat: the message's
    /// index; erasure coding: its D0's, after the sends of the messages before it).
    msg_seq: Vec<u64>,
    /// Per send (by sequence number), the unit number of its first packet: an SDR packet's
    /// copies are those of its (send, offset), numbered densely per connection like PSNs.
    send_unit: Vec<u32>,
}

/// Per connection, its [`SdrBases`]: selective repeat sends a message once; erasure coding as
/// D0, P0, D1, P1, … (`sdr::layout::sends`), each send numbering its packets from 0.
fn sdr_bases(f: &Fabric<'_>) -> Vec<SdrBases> {
    f.conns
        .iter()
        .map(|c| {
            let Some(sdr) = c.cfg.sdr.as_ref() else { return SdrBases::default() };
            let (mtu, n, ec) = (c.cfg.mtu, sdr.chunk_packets, sdr.ec());
            let (mut unit, mut out) = (0u32, SdrBases::default());
            for m in &c.messages {
                out.msg_seq.push(out.send_unit.len() as u64);
                for send in stacks::sdr::layout::sends(m.msg.len, mtu, n, ec) {
                    out.send_unit.push(unit);
                    unit = unit.wrapping_add(send.packets);
                }
            }
            out
        })
        .collect()
}

/// SDR: a data transmission's unit number ([`SdrBases::send_unit`]).
fn sdr_unit(bases: &[SdrBases], t: &TxRec) -> Option<u32> {
    let base = bases.get(t.conn as usize)?.send_unit.get(t.sdr_seq? as usize)?;
    Some(base.wrapping_add(t.sdr_off?))
}

/// The network failed to deliver it whole (dropped, or trimmed to header-only).
pub fn lost(t: &TxRec) -> bool {
    t.trimmed.is_some() || matches!(t.fate, sim::Fate::Dropped { .. })
}

/// Flow number of a transmission: 2·conn for requests, 2·conn+1 for the responder's direction.
fn flow_of(t: &TxRec) -> usize {
    t.conn as usize * 2 + t.to_requester as usize
}

/// Per connection: each message's first and last PSN (over every data transmission of it) and
/// its DCP MSN (on disk: the zeroed record is a message with none).
#[derive(Clone, Copy, Debug, Default)]
struct MsgPsns {
    first: Option<u32>,
    last: Option<u32>,
    dcp_msn: Option<u32>,
    packets: u32,
}

fn put_opt(o: &mut Enc<'_>, v: Option<u32>) {
    o.u8(v.is_some() as u8);
    o.u32(v.unwrap_or(0));
}

fn get_opt(i: &mut Dec<'_>) -> Option<u32> {
    let (has, v) = (i.bool(), i.u32());
    has.then_some(v)
}

impl Record for MsgPsns {
    const SIZE: usize = 3 * 5 + 4;
    fn encode(&self, o: &mut Enc<'_>) {
        put_opt(o, self.first);
        put_opt(o, self.last);
        put_opt(o, self.dcp_msn);
        o.u32(self.packets);
    }
    fn decode(i: &mut Dec<'_>) -> MsgPsns {
        MsgPsns { first: get_opt(i), last: get_opt(i), dcp_msn: get_opt(i), packets: i.u32() }
    }
}

/// Per message, what one tap saw of it in its connection's flows (frame numbers count from 1:
/// 0 is none).
#[derive(Clone, Copy, Debug, Default)]
struct MsgFrames {
    first: u64,
    last: u64,
    /// Its frames that are retransmissions.
    retx: u32,
    /// The accepted READ response that completes it: its index among the tap frames + 1.
    read_last: u64,
}

impl Record for MsgFrames {
    const SIZE: usize = 8 + 8 + 4 + 8;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u64(self.first);
        o.u64(self.last);
        o.u32(self.retx);
        o.u64(self.read_last);
    }
    fn decode(i: &mut Dec<'_>) -> MsgFrames {
        MsgFrames { first: i.u64(), last: i.u64(), retx: i.u32(), read_last: i.u64() }
    }
}

/// Offset of `psn` from the connection's first PSN (PSNs before it count as 0).
fn psn_off(c: &ConnRec, psn: u32) -> u64 {
    let d = psn.wrapping_sub(c.cfg.start_psn) & 0xff_ffff;
    if d >= 1 << 23 {
        0
    } else {
        d as u64
    }
}

/// How much of the request stream a cover proves: request PSN offsets below the first value,
/// DCP messages below the second (relative to message 0's MSN).
fn cover_amount(c: &ConnRec, base_msn: Option<u32>, cover: Cover) -> (u64, u64) {
    match cover {
        Cover::None => (0, 0),
        Cover::PsnLe(p) => (psn_off(c, p) + 1, 0),
        Cover::PsnLt(p) => (psn_off(c, p), 0),
        Cover::MsnLt(e) => {
            let b = base_msn.unwrap_or(0);
            let d = e.wrapping_sub(b) & 0xff_ffff;
            (0, if d >= 1 << 23 { 0 } else { d as u64 })
        }
    }
}

// The derivation keeps what grows with the run on disk (`spill.rs`): the transmissions and
// tap frames themselves, what is derived per transmission, the per-PSN state that links the
// copies of a PSN, and the links that chain each flow's transmissions and each tap's frames of
// a flow. In memory it keeps what grows with the messages (their PSNs and, per flow while it is
// written, their frames) and with the connections.

/// A reference to a record: its index + 1, 0 for none (so that a hole reads as none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Link(u32);

impl Link {
    fn to(i: u64) -> Link {
        Link(i as u32 + 1)
    }
    fn get(self) -> Option<u64> {
        (self.0 != 0).then(|| self.0 as u64 - 1)
    }
}

impl Record for Link {
    const SIZE: usize = 4;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u32(self.0);
    }
    fn decode(i: &mut Dec<'_>) -> Link {
        Link(i.u32())
    }
}

/// What the truth derives about one transmission from its PSN's earlier copies.
#[derive(Clone, Copy, Debug, Default)]
struct Derived {
    /// Index among the transmissions of its PSN (0: the original).
    copy: u32,
    spurious: bool,
    cause: Option<RetxCause>,
    /// The first transmission of its PSN (data only; else itself).
    first: u32,
    /// Flor: the receiver's verdict, from its WQE's (the simulator judges Flor per WQE).
    accept: Option<sim::Accept>,
}

impl Record for Derived {
    const SIZE: usize = 4 + 1 + 1 + 4 + 1;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u32(self.copy);
        o.u8(self.spurious as u8);
        o.u8(match self.cause {
            None => 0,
            Some(RetxCause::Loss) => 1,
            Some(RetxCause::GoBack) => 2,
            Some(RetxCause::Timeout) => 3,
            Some(RetxCause::Spurious) => 4,
        });
        o.u32(self.first);
        o.u8(match self.accept {
            None => 0,
            Some(sim::Accept::Accepted) => 1,
            Some(sim::Accept::Duplicate) => 2,
            Some(sim::Accept::Discarded) => 3,
        });
    }
    fn decode(i: &mut Dec<'_>) -> Derived {
        let copy = i.u32();
        let spurious = i.bool();
        let cause = match i.u8() {
            1 => Some(RetxCause::Loss),
            2 => Some(RetxCause::GoBack),
            3 => Some(RetxCause::Timeout),
            4 => Some(RetxCause::Spurious),
            _ => None,
        };
        let first = i.u32();
        let accept = match i.u8() {
            1 => Some(sim::Accept::Accepted),
            2 => Some(sim::Accept::Duplicate),
            3 => Some(sim::Accept::Discarded),
            _ => None,
        };
        Derived { copy, spurious, cause, first, accept }
    }
}

/// The copies of one PSN of one flow sent so far (`copies == 0`: none).
#[derive(Clone, Copy, Debug, Default)]
struct PsnState {
    copies: u32,
    /// An earlier copy was, or would have been, accepted.
    useful: bool,
    any_lost: bool,
    first: u32,
    last: u32,
}

impl Record for PsnState {
    const SIZE: usize = 4 + 1 + 1 + 4 + 4;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u32(self.copies);
        o.u8(self.useful as u8);
        o.u8(self.any_lost as u8);
        o.u32(self.first);
        o.u32(self.last);
    }
    fn decode(i: &mut Dec<'_>) -> PsnState {
        PsnState { copies: i.u32(), useful: i.bool(), any_lost: i.bool(), first: i.u32(), last: i.u32() }
    }
}

/// Per-PSN state of every flow on disk: a flow's 2^24 PSNs (by offset from the connection's
/// first PSN) in chunks of [`PsnStates::CHUNK`], allocated as the run reaches them.
struct PsnStates {
    chunks: HashMap<(u32, u32), u32>,
    states: DiskVec<PsnState>,
}

impl PsnStates {
    const CHUNK: u32 = 4096;
    fn slot(&mut self, flow: usize, off: u32) -> u64 {
        let n = self.chunks.len() as u32;
        let chunk = *self.chunks.entry((flow as u32, off / Self::CHUNK)).or_insert(n);
        chunk as u64 * Self::CHUNK as u64 + (off % Self::CHUNK) as u64
    }
}

/// A tap frame with its flow.
#[derive(Clone, Copy, Debug)]
struct FrameRec {
    fr: TapFrame,
    flow: u32,
}

impl Record for FrameRec {
    const SIZE: usize = TapFrame::SIZE + 4;
    fn encode(&self, o: &mut Enc<'_>) {
        self.fr.encode(o);
        o.u32(self.flow);
    }
    fn decode(i: &mut Dec<'_>) -> FrameRec {
        FrameRec { fr: TapFrame::decode(i), flow: i.u32() }
    }
}

/// A coverage frame of a responses flow at a tap with the running maxima of what the frames up
/// to it cover.
#[derive(Clone, Copy, Debug)]
struct CovRec {
    frame: u64,
    psn: u64,
    msg: u64,
}

impl Record for CovRec {
    const SIZE: usize = 24;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u64(self.frame);
        o.u64(self.psn);
        o.u64(self.msg);
    }
    fn decode(i: &mut Dec<'_>) -> CovRec {
        CovRec { frame: i.u64(), psn: i.u64(), msg: i.u64() }
    }
}

/// The run's transmissions or tap frames: in memory ([`Fabric::txs`], [`Fabric::tap_frames`])
/// or spilled ([`Fabric::spilled`]).
enum Src<'a, T: Record> {
    Mem(&'a [T]),
    Disk(&'a DiskVec<T>),
}

impl<T: Record + Clone> Src<'_, T> {
    fn len(&self) -> u64 {
        match self {
            Src::Mem(v) => v.len() as u64,
            Src::Disk(d) => d.len(),
        }
    }
    fn get(&self, i: u64) -> T {
        match self {
            Src::Mem(v) => v[i as usize].clone(),
            Src::Disk(d) => d.get(i),
        }
    }
    fn iter(&self) -> Box<dyn Iterator<Item = T> + '_> {
        match self {
            Src::Mem(v) => Box::new(v.iter().cloned()),
            Src::Disk(d) => Box::new(d.iter()),
        }
    }
}

/// What the run's control frames named ([`Fabric::erd_nacks`], [`Fabric::sdr_ctrls`]): in
/// memory or spilled ([`Fabric::spilled`], `spill_var.rs`); in transmission order either way.
enum VarSrc<'a, T: VarRecord> {
    Mem(&'a [T]),
    Disk(&'a DiskVarVec<T>),
}

impl<T: VarRecord + Clone> VarSrc<'_, T> {
    /// The record of transmission `tx`, if there is one.
    fn find(&self, tx: u32) -> Option<T> {
        match self {
            VarSrc::Mem(v) => v.binary_search_by_key(&tx, |r| r.tx()).ok().map(|i| v[i].clone()),
            VarSrc::Disk(d) => d.find(tx),
        }
    }
}

/// A message's first and last PSN (over every data transmission of it), its DCP MSN and how
/// many PSNs it has (`first_copy`: `t` is its PSN's first copy).
fn message_psns(f: &Fabric<'_>, psns: &Messages<MsgPsns>, t: &TxRec, first_copy: bool) {
    let Some(m) = t.msg else { return };
    let Some(mut e) = psns.get(t.conn as usize, m) else { return };
    let read = f.conns[t.conn as usize].messages[m as usize].msg.op == stacks::Op::Read;
    if t.origin == sim::Origin::Requester {
        e.first = Some(e.first.unwrap_or(t.psn));
        e.dcp_msn = e.dcp_msn.or(t.dcp_msn);
    }
    // A READ's packets are its responses; other messages' are the requester's. A PSN of a
    // flow belongs to one message, so its first copy counts it.
    let counts = if read { t.kind == sim::Kind::ReadResp } else { t.origin == sim::Origin::Requester };
    if counts {
        if first_copy {
            e.packets += 1;
        }
        e.last = Some(match e.last {
            Some(l) if sim::psn_lt(t.psn, l) => l,
            _ => t.psn,
        });
    }
    psns.set(t.conn as usize, m, &e);
}

/// Per-message records of every connection, on disk: connection `c`'s message `m` at
/// `base[c] + m`.
struct Messages<T: Record> {
    base: Vec<u64>,
    recs: DiskVec<T>,
}

impl<T: Record> Messages<T> {
    fn new(f: &Fabric<'_>) -> Messages<T> {
        let mut base = Vec::with_capacity(f.conns.len() + 1);
        let mut at = 0u64;
        for c in &f.conns {
            base.push(at);
            at += c.messages.len() as u64;
        }
        base.push(at);
        Messages { base, recs: DiskVec::new() }
    }
    /// Connection `c`'s message `m`, if it has one.
    fn get(&self, c: usize, m: u64) -> Option<T> {
        let i = self.base[c] + m;
        (i < self.base[c + 1]).then(|| self.recs.get(i))
    }
    fn set(&self, c: usize, m: u64, v: &T) {
        let i = self.base[c] + m;
        if i < self.base[c + 1] {
            self.recs.set(i, v);
        }
    }
}

/// The records of a finished run, derived once and produced one at a time (so that
/// [`write_truth`] can stream them).
struct Gen<'f, 'w> {
    f: &'f Fabric<'w>,
    txs: Src<'f, TxRec>,
    /// ERD: what each NACK segment named; SDR: what each control message said.
    erd_nacks: VarSrc<'f, sim::NackNames>,
    sdr_ctrls: VarSrc<'f, sim::SdrCtrlNames>,
    flor_acks: VarSrc<'f, sim::flor_sent::AckGns>,
    /// Per transmission (by id).
    derived: DiskVec<Derived>,
    /// Per transmission: the next copy of its PSN; the next transmission of its flow.
    next_copy: DiskVec<Link>,
    next_in_flow: DiskVec<Link>,
    /// Per flow: its first transmission.
    flow_first_tx: Vec<Link>,
    /// Every tap frame, in file order, and per frame the next frame of its flow at its tap.
    frames: DiskVec<FrameRec>,
    next_frame: DiskVec<Link>,
    /// Per tap, per flow: its first frame there and how many.
    flow_first_frame: Vec<Vec<Link>>,
    flow_frames: Vec<Vec<u64>>,
    /// Per tap, per transmission: its frame there.
    seen: Vec<DiskVec<Link>>,
    psns: Messages<MsgPsns>,
    /// The current requests flow's [`MsgFrames`] (by message).
    msg_frames: DiskVec<MsgFrames>,
    retransmissions: u64,
    spurious: u64,
    /// The current flow's coverage frames ([`FlowGen::cov`]).
    cov: DiskVec<CovRec>,
    /// What the derivation holds where.
    stats: std::cell::Cell<TruthStats>,
    /// The per-PSN store's I/O error (the store is gone after [`Gen::derive_txs`]).
    psn_error: std::cell::RefCell<Option<io::Error>>,
    /// SDR: per connection, where each message and send starts ([`sdr_bases`]).
    sdr_base: Vec<SdrBases>,
    /// Flor's records, indexed (`None` without a Flor connection).
    flor: Option<flor::FlorIndex>,
}

/// What deriving the truth held in memory: the test of `docs/truth.md`'s memory bound counts
/// these instead of measuring the process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TruthStats {
    /// Transmissions and tap frames derived from (kept on disk).
    pub records: u64,
    /// Of those, held in memory ([`Fabric::txs`], [`Fabric::tap_frames`]): 0 when spilled.
    pub in_memory: u64,
    /// Chunks of per-PSN state (their table is in memory).
    pub psn_chunks: u64,
}

fn ts(t: u64) -> TimeNs {
    TimeNs::from_sim(t)
}

impl<'f, 'w> Gen<'f, 'w> {
    fn new(f: &'f Fabric<'w>) -> Gen<'f, 'w> {
        let (txs, frames_src) = match &f.spilled {
            Some(s) => (Src::Disk(&s.txs), Src::Disk(&s.frames)),
            None => (Src::Mem(&f.txs[..]), Src::Mem(&f.tap_frames[..])),
        };
        let (erd_nacks, sdr_ctrls, flor_acks) = match &f.spilled {
            Some(s) => (VarSrc::Disk(&s.erd_nacks), VarSrc::Disk(&s.sdr_ctrls), VarSrc::Disk(&s.flor_acks)),
            None => (VarSrc::Mem(&f.erd_nacks[..]), VarSrc::Mem(&f.sdr_ctrls[..]), VarSrc::Mem(&f.flor_acks[..])),
        };
        let nflows = f.conns.len() * 2;
        let ntaps = f.cfg.taps.len();
        let flor =
            f.conns.iter().any(|c| c.cfg.flor.is_some()).then(|| flor::FlorIndex::new(f, |id| txs.get(id as u64)));
        let mut g = Gen {
            f,
            txs,
            erd_nacks,
            sdr_ctrls,
            flor_acks,
            derived: DiskVec::new(),
            next_copy: DiskVec::new(),
            next_in_flow: DiskVec::new(),
            flow_first_tx: vec![Link(0); nflows],
            frames: DiskVec::new(),
            next_frame: DiskVec::new(),
            flow_first_frame: vec![vec![Link(0); nflows]; ntaps],
            flow_frames: vec![vec![0; nflows]; ntaps],
            seen: (0..ntaps).map(|_| DiskVec::new()).collect(),
            psns: Messages::new(f),
            msg_frames: DiskVec::new(),
            retransmissions: 0,
            spurious: 0,
            cov: DiskVec::new(),
            stats: Default::default(),
            psn_error: Default::default(),
            sdr_base: sdr_bases(f),
            flor,
        };
        g.derive_txs();
        g.index_frames(frames_src);
        let mut s = g.stats.get();
        s.records = g.txs.len() + g.frames.len();
        s.in_memory = if f.spilled.is_some() { 0 } else { s.records };
        g.stats.set(s);
        g
    }

    /// One pass over the transmissions in id order: each one's copy, cause and spuriousness
    /// from its PSN's earlier copies (whose fates are final), the links between copies and
    /// along each flow, and each message's PSNs.
    fn derive_txs(&mut self) {
        let f = self.f;
        let mut psn = PsnStates { chunks: HashMap::new(), states: DiskVec::new() };
        let mut flow_last: Vec<Option<u32>> = vec![None; f.conns.len() * 2];
        // (Taken while the derivation borrows `self`; put back at its end.)
        let sdr_base = std::mem::take(&mut self.sdr_base);
        let ec_late = |t: &TxRec| {
            let c = &f.conns[t.conn as usize];
            let arrived = match t.fate {
                sim::Fate::Delivered { at } | sim::Fate::Dropped { at, .. } => at,
                sim::Fate::InFlight => return false,
            };
            c.cfg.sdr.as_ref().is_some_and(|s| s.ec().is_some())
                && t.msg.and_then(|m| c.messages.get(m as usize)).is_some_and(|m| {
                    m.delivered_by != Some(t.id) && m.delivered.first().is_some_and(|d| d.0 <= arrived)
                })
        };
        // Flor: per connection, what the WQE being sent derived at its first packet.
        let mut flor_cur: Vec<Derived> = vec![Derived::default(); f.conns.len()];
        let useful = |t: &TxRec| match f.cfg.accept {
            AcceptModel::InOrder => t.accept == Some(sim::Accept::Accepted),
            AcceptModel::AnyOrder => matches!(t.accept, Some(sim::Accept::Accepted | sim::Accept::Duplicate)),
        };
        for t in self.txs.iter() {
            let flow = flow_of(&t);
            match flow_last[flow].replace(t.id) {
                Some(p) => self.next_in_flow.set(p as u64, &Link::to(t.id as u64)),
                None => self.flow_first_tx[flow] = Link::to(t.id as u64),
            }
            let mut d = Derived { first: t.id, ..Default::default() };
            // (Flor: a packet is its WQE transmission's, a copy of every unit the WQE covers.)
            let flor_wqe =
                self.flor.as_ref().filter(|_| t.kind.is_data()).and_then(|x| x.wqe(&t));
            if let Some((w, msg)) = flor_wqe {
                let fl = self.flor.as_ref().expect("a Flor index");
                if t.id == w.first_tx {
                    let keys = fl.unit_keys(t.conn, &w, msg);
                    let whole = fl.whole(t.conn, &w);
                    let mut wd = Derived { first: t.id, ..Default::default() };
                    let mut all_useful = !keys.is_empty();
                    let mut any_lost = false;
                    for (i, key) in keys.clone().enumerate() {
                        let slot = psn.slot(flow, key);
                        let mut st = psn.states.get(slot);
                        if i == 0 {
                            wd.copy = st.copies;
                            if st.copies > 0 {
                                wd.first = st.first;
                            }
                        }
                        all_useful &= st.useful;
                        any_lost |= st.any_lost;
                        if st.copies == 0 {
                            st.first = t.id;
                        }
                        st.copies += 1;
                        st.useful |= whole;
                        st.any_lost |= !whole;
                        st.last = t.id;
                        psn.states.set(slot, &st);
                    }
                    if wd.copy > 0 {
                        wd.spurious = all_useful;
                        wd.cause = Some(retx_cause(all_useful, t.reason, any_lost));
                    }
                    flor_cur[t.conn as usize] = wd;
                }
                let wd = flor_cur[t.conn as usize];
                d = Derived { accept: fl.accept(&t), ..wd };
                if d.copy > 0 {
                    self.retransmissions += 1;
                    self.spurious += d.spurious as u64;
                }
                message_psns(f, &self.psns, &t, d.copy == 0);
            } else if t.kind.is_data() {
                let start = f.conns[t.conn as usize].cfg.start_psn;
                // (An SDR packet is its send's and offset's, whatever its UC PSN: its unit
                // number, which does not wrap at 2^24 as PSN offsets do.)
                let key = match sdr_unit(&sdr_base, &t) {
                    Some(u) => u,
                    None => t.psn.wrapping_sub(start) & 0xff_ffff,
                };
                let slot = psn.slot(flow, key);
                let mut st = psn.states.get(slot);
                if st.copies == 0 {
                    st.first = t.id;
                } else {
                    self.next_copy.set(st.last as u64, &Link::to(t.id as u64));
                    // (SDR erasure coding: a copy reaching the receiver after its message was
                    // delivered, decoded from parity, was needless too.)
                    let spurious = st.useful || ec_late(&t);
                    let cause = retx_cause(spurious, t.reason, st.any_lost);
                    d.spurious = spurious;
                    d.cause = Some(cause);
                    self.retransmissions += 1;
                    self.spurious += spurious as u64;
                }
                d.copy = st.copies;
                d.first = st.first;
                st.copies += 1;
                st.useful |= useful(&t);
                st.any_lost |= lost(&t);
                st.last = t.id;
                psn.states.set(slot, &st);
                message_psns(f, &self.psns, &t, d.copy == 0);
            }
            self.derived.set(t.id as u64, &d);
        }
        self.sdr_base = sdr_base;
        let mut s = self.stats.get();
        s.psn_chunks = psn.chunks.len() as u64;
        self.stats.set(s);
        if let Err(e) = psn.states.check() {
            *self.psn_error.borrow_mut() = Some(e);
        }
    }

    /// One pass over the tap frames: each with its flow, chained per tap and flow, and each
    /// transmission's frame at each tap.
    fn index_frames(&mut self, src: Src<'_, TapFrame>) {
        let ntaps = self.f.cfg.taps.len();
        let mut last: Vec<Vec<Option<u64>>> = vec![vec![None; self.f.conns.len() * 2]; ntaps];
        for (i, fr) in src.iter().enumerate() {
            let i = i as u64;
            let t = self.txs.get(fr.tx as u64);
            let flow = flow_of(&t);
            let tap = fr.tap as usize;
            self.frames.push(&FrameRec { fr, flow: flow as u32 });
            if let Some(s) = self.seen.get(tap) {
                s.set(fr.tx as u64, &Link::to(i));
            }
            let Some(l) = last.get_mut(tap) else { continue };
            match l[flow].replace(i) {
                Some(p) => self.next_frame.set(p, &Link::to(i)),
                None => self.flow_first_frame[tap][flow] = Link::to(i),
            }
            self.flow_frames[tap][flow] += 1;
        }
    }

    /// The first I/O error of the stores, if any.
    fn check(&self) -> io::Result<()> {
        if let Some(e) = self.psn_error.borrow_mut().take() {
            return Err(e);
        }
        self.derived.check()?;
        self.cov.check()?;
        self.next_copy.check()?;
        self.next_in_flow.check()?;
        self.frames.check()?;
        self.next_frame.check()?;
        for s in &self.seen {
            s.check()?;
        }
        if let Some(s) = &self.f.spilled {
            s.check()?;
        }
        if let Some(fl) = &self.flor {
            fl.check()?;
        }
        Ok(())
    }

    fn tx(&self, id: u32) -> TxRec {
        self.txs.get(id as u64)
    }

    fn frame_at(&self, i: u64) -> TapFrame {
        self.frames.get(i).fr
    }

    /// Transmission `tx`'s frame at tap `tap`.
    fn seen(&self, tap: usize, tx: u32) -> Option<TapFrame> {
        self.seen[tap].get(tx as u64).get().map(|i| self.frame_at(i))
    }

    /// The transmissions of flow `flow`, in id order.
    fn flow_txs(&self, flow: usize) -> impl Iterator<Item = TxRec> + '_ {
        let mut next = self.flow_first_tx[flow].get();
        std::iter::from_fn(move || {
            let id = next?;
            next = self.next_in_flow.get(id).get();
            Some(self.txs.get(id))
        })
    }

    /// Tap `tap`'s frames of flow `flow`, in file order: (index, frame).
    fn flow_frames(&self, tap: usize, flow: usize) -> impl Iterator<Item = (u64, TapFrame)> + '_ {
        let mut next = self.flow_first_frame[tap][flow].get();
        std::iter::from_fn(move || {
            let i = next?;
            next = self.next_frame.get(i).get();
            Some((i, self.frame_at(i)))
        })
    }

    /// The copies of transmission `t`'s PSN, from the first, in id order.
    fn copies(&self, d: &Derived) -> impl Iterator<Item = u32> + '_ {
        let mut next = Some(d.first as u64);
        std::iter::from_fn(move || {
            let id = next?;
            next = self.next_copy.get(id).get();
            Some(id as u32)
        })
    }

    fn place(&self, id: u32) -> Option<String> {
        self.f.places.get(id as usize).cloned()
    }

    fn retx(&self, t: &TxRec, dt: &Derived) -> Option<Retx> {
        dt.cause.map(|cause| Retx { cause, copy: dt.copy, reason: t.reason.map(Reason::from), spurious: dt.spurious })
    }

    fn summary(&self) -> Summary {
        let f = self.f;
        let s = &f.stats;
        let msgs = || f.conns.iter().flat_map(|c| c.messages.iter());
        Summary {
            captured_frames: s.captured,
            ce_marked: s.ce_marked,
            cnps: s.cnps,
            cnps_reacted: s.cnps_reacted,
            completed: msgs().filter(|m| !m.completed.is_empty()).count() as u64,
            delivered_once: msgs()
                .filter(|m| m.delivered.len() == 1 && m.delivered[0].2 && m.delivered[0].1 == m.msg.len)
                .count() as u64,
            dropped: s.dropped,
            end_time_ns: ts(s.end_ns),
            events: s.events,
            failed_connections: f.conns.iter().filter(|c| c.failed.is_some()).count() as u64,
            ho_dropped: s.ho_dropped,
            link_frames: s.link_frames,
            max_control_queue_bytes: s.max_control_queue_bytes,
            messages: msgs().count() as u64,
            pause_frames: s.pause_frames + s.resume_frames,
            failed_links: s.failed_links,
            faults: f
                .faults
                .lock()
                .map(|l| {
                    l.iter()
                        .map(|a| FaultRecord {
                            fault: a.fault.name().to_string(),
                            connection: f.fault_connection,
                            end: if a.fault.at_responder() { "responder" } else { "requester" }.to_string(),
                            time_ns: ts(a.time),
                            psn: a.psn,
                            detail: a.detail.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            retransmissions: self.retransmissions,
            spurious_retransmissions: self.spurious,
            timed_out: s.timed_out,
            transmissions: s.transmissions,
            trimmed: s.trimmed,
            watchdog: s.watchdog,
        }
    }

    fn connections(&self, stack: Stack) -> impl Iterator<Item = Connection> + 'f {
        let stack = stacks::StackKind::from(stack);
        let host = |h: stacks::Host| Host {
            ip: h.ip,
            mac: h.mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":"),
            qpn: h.qpn,
        };
        self.f.conns.iter().enumerate().map(move |(i, c)| Connection {
            failed: c.failed.map(|(t, r)| Failure { reason: r.to_string(), time_ns: ts(t) }),
            index: i as u32,
            mtu: c.cfg.mtu,
            requester: host(c.cfg.requester),
            responder: host(c.cfg.responder),
            rto_ns: c.cfg.timeouts.base_ns(stack),
            sender: c.sender as u32,
            receiver: c.receiver as u32,
            start_psn: c.cfg.start_psn,
            tos: c.cfg.tos,
            udp_sport: c.cfg.udp_sport,
        })
    }

    /// (id, src, dst, destqp) of a flow.
    fn flow_id(&self, flow: usize) -> (String, IpAddr, IpAddr, u32) {
        let c = &self.f.conns[flow / 2].cfg;
        let (src, dst) = if flow.is_multiple_of(2) { (c.requester, c.responder) } else { (c.responder, c.requester) };
        (format!("{}>{}/{}", src.ip, dst.ip, dst.qpn), src.ip, dst.ip, dst.qpn)
    }

    /// The flow id of a frame: its flow's, except that an SDR data packet is in the flow of the
    /// data QP it went to (a connection has one per generation and channel), and a Flor ACK in
    /// the flow of the ACK QP it went to.
    fn frame_flow_id(&self, t: &TxRec) -> String {
        let (id, src, dst, qpn) = self.flow_id(flow_of(t));
        // (SDR's data QPs; Flor's ACK QPs: a flow of their own, as an analyser keys flows.)
        let flor = self.f.conns[t.conn as usize].cfg.flor.is_some();
        if (t.sdr_off.is_some() || flor) && t.qpn != qpn && t.qpn != 0 {
            return format!("{src}>{dst}/{}", t.qpn);
        }
        id
    }

    fn frame(&self, fr: &TapFrame) -> Frame {
        let t = self.tx(fr.tx);
        let dt = self.derived.get(fr.tx as u64);
        Frame {
            ce: fr.ce,
            direction: if fr.incoming { Direction::In } else { Direction::Out },
            flow: self.frame_flow_id(&t),
            frame: fr.frame,
            ho: fr.trimmed,
            kind: t.kind.into(),
            lost: lost(&t),
            msg: t.msg,
            origin: t.origin.into(),
            psn: t.psn,
            retx: self.retx(&t, &dt),
            time_ns: ts(fr.time),
            tx: t.id,
        }
    }

    /// Tap `tap`'s frames, in file order.
    fn frames(&self, tap: usize) -> impl Iterator<Item = Frame> + '_ {
        self.frames.iter().filter(move |r| r.fr.tap as usize == tap).map(move |r| self.frame(&r.fr))
    }

    /// Connection `ci`'s flow (`dir` 0: requests, 1: responses) as tap `tap` sees it, ready to
    /// produce its sections one record at a time.
    fn flow_gen(&self, tap: usize, ci: usize, dir: usize) -> FlowGen<'_, 'f, 'w> {
        let c = &self.f.conns[ci];
        let base_msn = self.psns.get(ci, 0).and_then(|m| m.dcp_msn);
        // Coverage frames at this tap (the responder's direction), with running maxima.
        let cov = &self.cov;
        cov.clear();
        let mut best = (0u64, 0u64);
        for (i, fr) in self.flow_frames(tap, ci * 2 + 1) {
            let t = self.tx(fr.tx);
            if t.cover == Cover::None || fr.trimmed {
                continue;
            }
            let a = cover_amount(c, base_msn, t.cover);
            best = (best.0.max(a.0), best.1.max(a.1));
            cov.push(&CovRec { frame: i, psn: best.0, msg: best.1 });
        }
        FlowGen { g: self, tap, ci, dir, flow: ci * 2 + dir, base_msn, cov }
    }

    /// The flow in memory (for [`build`]).
    fn flow(&self, tap: usize, ci: usize, dir: usize) -> Flow {
        let fg = self.flow_gen(tap, ci, dir);
        let mut fl = fg.head();
        fl.losses = fg.losses().collect();
        fl.capture_gaps = fg.capture_gaps().collect();
        fl.retransmissions = fg.retransmissions().collect();
        fl.messages = fg.messages().collect();
        fl
    }

    /// Every flow of the run as tap `tap` sees it: per connection, requests then responses.
    fn flows(&self, tap: usize) -> impl Iterator<Item = Flow> + '_ {
        (0..self.f.conns.len()).flat_map(move |ci| (0..2).map(move |dir| self.flow(tap, ci, dir)))
    }

    fn sim_messages(&self) -> impl Iterator<Item = SimMessage> + '_ {
        self.f.conns.iter().enumerate().flat_map(move |(ci, c)| {
            c.messages.iter().enumerate().map(move |(mi, m)| {
                let p = self.psns.get(ci, mi as u64).unwrap_or_default();
                SimMessage {
                    completed_by_tx: m.completed_by,
                    completed_ns: m.completed.first().map(|&t| ts(t)),
                    completions: m.completed.len() as u64,
                    conn: ci as u32,
                    dcp_msn: p.dcp_msn,
                    delivered_ns: m.delivered.first().map(|x| ts(x.0)),
                    deliveries: m.delivered.len() as u64,
                    first_psn: p.first,
                    index: mi as u64,
                    intact: m.delivered.iter().all(|x| x.2 && x.1 == m.msg.len) && !m.delivered.is_empty(),
                    last_psn: p.last,
                    len: m.msg.len,
                    op: m.msg.op.into(),
                    posted_ns: m.posted.map(ts),
                }
            })
        })
    }

    fn transmission(&self, t: &TxRec, dt: &Derived) -> Transmission {
        let trimmed = t.trimmed.is_some();
        let (fate, fate_time_ns, drop) = match t.fate {
            sim::Fate::Delivered { at } => (if trimmed { Fate::Trimmed } else { Fate::Delivered }, Some(ts(at)), None),
            sim::Fate::Dropped { at, cause, place: p } => (
                if trimmed { Fate::Trimmed } else { Fate::Dropped },
                Some(ts(at)),
                Some(Dropped { cause: cause.into(), place: self.place(p) }),
            ),
            sim::Fate::InFlight => (Fate::InFlight, None, None),
        };
        Transmission {
            accept: dt.accept.or(t.accept).map(Accept::from),
            conn: t.conn,
            copy_of: t.copy_of,
            drop,
            fate,
            flor: self.flor_wqe_of(t),
            flor_ack: self.flor_ack_of(t.id),
            fate_time_ns,
            id: t.id,
            kind: t.kind.into(),
            len: t.len,
            msg: t.msg,
            nack: self.nack_of(t.id),
            origin: t.origin.into(),
            psn: t.psn,
            retx: self.retx(t, dt),
            sdr_ctrl: self.sdr_ctrl_of(t.id),
            sdr_off: t.sdr_off,
            sdr_seq: t.sdr_seq,
            time_ns: ts(t.sent),
            trim: t.trimmed.map(|(at, p)| Trim { time_ns: ts(at), place: self.place(p) }),
        }
    }

    /// Flor: the WQE transmission data packet `t` belongs to.
    fn flor_wqe_of(&self, t: &TxRec) -> Option<FlorWqe> {
        use sim::flor_sent::WqeKind;
        let (w, _) = self.flor.as_ref().filter(|_| t.kind.is_data())?.wqe(t)?;
        let wqe = match w.kind {
            WqeKind::Chunk => "chunk",
            WqeKind::Piece { .. } => "piece",
            WqeKind::Data { .. } => "data",
            WqeKind::AddrReq { .. } => "addr_req",
        };
        Some(FlorWqe { gn: w.gn, off: w.off, units: w.units, wqe: wqe.to_string() })
    }

    /// Flor: the GNs the receiver's ACK `id` lists (the records are in id order).
    fn flor_ack_of(&self, id: u32) -> Option<Vec<u64>> {
        self.flor_acks.find(id).map(|r| r.gns)
    }

    /// SDR: what the control message `id` said (the records are in id order).
    fn sdr_ctrl_of(&self, id: u32) -> Option<SdrCtrl> {
        let r = self.sdr_ctrls.find(id)?;
        Some(SdrCtrl {
            cum_ack: r.cum_ack,
            indices: r.indices,
            msg_seq: r.msg_seq,
            newly_sacked: r.newly_sacked,
            sack_bits: r.cum_ack.map(|_| r.sack_bits),
            kind: r.kind.name().to_string(),
        })
    }

    /// ERD: what the NACK segment `id` named (the records are in id order).
    fn nack_of(&self, id: u32) -> Option<NackSegment> {
        let r = self.erd_nacks.find(id)?;
        Some(NackSegment { seq: r.seq, psns: r.psns })
    }

    fn transmissions(&self) -> impl Iterator<Item = Transmission> + '_ {
        self.txs.iter().zip(self.derived.iter()).map(|(t, dt)| self.transmission(&t, &dt))
    }

    fn tap_name(&self, tap: usize) -> TapName {
        self.f.cfg.taps[tap].into()
    }
}

/// One flow as one tap sees it (`taps[].flows[]`), its sections produced one record at a time
/// in the order of the file.
struct FlowGen<'g, 'f, 'w> {
    g: &'g Gen<'f, 'w>,
    tap: usize,
    ci: usize,
    dir: usize,
    flow: usize,
    base_msn: Option<u32>,
    /// The coverage frames of the connection's responses flow at this tap.
    cov: &'g DiskVec<CovRec>,
}

impl FlowGen<'_, '_, '_> {
    fn conn(&self) -> &ConnRec {
        &self.g.f.conns[self.ci]
    }

    fn dcp(&self) -> bool {
        self.g.f.cfg.profile == rocescope_codec::Profile::Dcp
    }

    /// The flow's keys, with its sections empty.
    fn head(&self) -> Flow {
        let (id, src, dst, destqp) = self.g.flow_id(self.flow);
        Flow {
            id,
            src,
            dst,
            destqp,
            conn: self.ci as u32,
            role: if self.dir == 0 { Role::Requests } else { Role::Responses },
            profile: self.g.f.cfg.profile.into(),
            tap: self.g.tap_name(self.tap),
            frames: self.g.flow_frames[self.tap][self.flow],
            losses: Vec::new(),
            capture_gaps: Vec::new(),
            retransmissions: Vec::new(),
            messages: Vec::new(),
        }
    }

    /// The first frame covering request-PSN offset `need_psn` (or DCP message offset
    /// `need_msg`): the running maxima grow, so a binary search finds it.
    fn first_cover(&self, need_psn: Option<u64>, need_msg: Option<u64>) -> Option<TapFrame> {
        let covers = |r: &CovRec| need_psn.is_some_and(|n| r.psn > n) || need_msg.is_some_and(|n| r.msg > n);
        let (mut lo, mut hi) = (0, self.cov.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if covers(&self.cov.get(mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        (lo < self.cov.len()).then(|| self.g.frame_at(self.cov.get(lo).frame))
    }

    /// Message `m`'s offset from message 0's DCP MSN.
    fn msg_off(&self, m: &MsgPsns) -> Option<u64> {
        let (b, x) = (self.base_msn?, m.dcp_msn?);
        let d = x.wrapping_sub(b) & 0xff_ffff;
        (d < 1 << 23).then_some(d as u64)
    }

    /// SDR: per message, the tap's first control frame proving it received whole: selective
    /// repeat, an SR_ACK of its send whose cumulative ACK passes its every chunk (one packet
    /// each); erasure coding, the EC_ACK naming its first send (an SR_ACK after a fallback
    /// proves one data submessage; a CTS the sender takes for proof, no tap is told).
    fn sdr_acked_whole(&self) -> HashMap<u64, TapFrame> {
        let (g, c) = (self.g, self.conn());
        let ec = c.cfg.sdr.as_ref().is_some_and(|s| s.ec().is_some());
        let bases = g.sdr_base.get(self.ci).map_or(&[][..], |b| &b.msg_seq[..]);
        let mut out = HashMap::new();
        for (_, fr) in g.flow_frames(self.tap, self.ci * 2 + 1) {
            let Some(r) = g.sdr_ctrls.find(fr.tx) else { continue };
            // (The sequence number is the wire's 32 bits: runs stay far below 2^32 sends.)
            let Ok(m) = bases.binary_search(&(r.msg_seq as u64)) else { continue };
            let Some(msg) = c.messages.get(m) else { continue };
            let whole = match r.kind {
                rocescope_codec::ext::sdr::CtrlType::SrAck if !ec => {
                    r.cum_ack.is_some_and(|a| a >= msg.packets(c.cfg.mtu))
                }
                rocescope_codec::ext::sdr::CtrlType::EcAck => true,
                _ => false,
            };
            if whole {
                out.entry(m as u64).or_insert(fr);
            }
        }
        out
    }

    /// SDR erasure coding: lost copy `t`, of a data submessage's packet, was rebuilt from parity:
    /// no copy of it reached the receiver before its message was delivered (a later one is a
    /// duplicate), and the message was delivered after `t` left.
    fn decoded(&self, t: &TxRec) -> bool {
        let (g, c) = (self.g, self.conn());
        if c.cfg.sdr.as_ref().is_none_or(|s| s.ec().is_none()) {
            return false;
        }
        let (Some(seq), Some(m)) = (t.sdr_seq, t.msg) else { return false };
        let Some(&base) = g.sdr_base.get(self.ci).and_then(|b| b.msg_seq.get(m as usize)) else { return false };
        let data_send = (seq as u64).wrapping_sub(base) % 2 == 0;
        let delivered_after =
            c.messages.get(m as usize).and_then(|r| r.delivered.first()).is_some_and(|d| d.0 > t.sent);
        let none_arrived = g.copies(&g.derived.get(t.id as u64)).all(|x| g.tx(x).accept != Some(sim::Accept::Accepted));
        data_send && delivered_after && none_arrived
    }

    /// Flor: per message, the tap's first ACK after which the ACKs it recorded list copies of
    /// every unit of the message (the sender's rule: it completes a message when all its units
    /// are acknowledged).
    fn flor_acked_whole(&self) -> HashMap<u64, TapFrame> {
        let (g, ci) = (self.g, self.ci as u32);
        let mut out = HashMap::new();
        let Some(fl) = g.flor.as_ref() else { return out };
        let mut covered = HashMap::new();
        for (_, fr) in g.flow_frames(self.tap, self.ci * 2 + 1) {
            let Some(ack) = g.flor_acks.find(fr.tx) else { continue };
            for m in fl.ack_covers(ci, &ack.gns, &mut covered) {
                out.entry(m).or_insert(fr);
            }
        }
        out
    }

    /// Every transmission of the flow the network failed to deliver whole, in id order.
    fn losses(&self) -> impl Iterator<Item = Loss> + '_ {
        let (g, tap) = (self.g, self.tap);
        // (A NetRT switch's message, like a PFC frame, belongs to no flow's losses.)
        let switch_message = |t: &TxRec| t.origin == sim::Origin::Switch && t.kind == sim::Kind::Other;
        g.flow_txs(self.flow).filter(move |t| lost(t) && !switch_message(t)).filter_map(move |t| {
            let seen = g.seen(tap, t.id);
            let flor = g.f.conns[t.conn as usize].cfg.flor.is_some();
            let repair = match &g.flor {
                // (Flor: the next WQE transmission covering the lost packet's unit.)
                Some(fl) if flor && t.kind.is_data() => fl.repair(&t).map(u64::from),
                _ if t.kind.is_data() => g.next_copy.get(t.id as u64).get(),
                _ => None,
            };
            let evidence = repair.and_then(|r| g.seen(tap, r as u32)).map(|fr| fr.frame);
            let (when, cause, place) = match (t.trimmed, t.fate) {
                (Some((at, p)), _) => (at, LossCause::Trimmed, g.place(p)),
                (None, sim::Fate::Dropped { at, cause, place: p }) => (at, DropCause::from(cause).into(), g.place(p)),
                _ => return None,
            };
            let decoded = self.decoded(&t);
            let ho_lost = match (t.trimmed, t.fate) {
                (Some(_), sim::Fate::Dropped { at, cause, place: p }) => {
                    Some(HoLoss { cause: cause.into(), time_ns: ts(at), place: g.place(p) })
                }
                _ => None,
            };
            Some(Loss {
                cause,
                frame: seen.map(|s| s.frame).or(evidence),
                ho_lost,
                kind: t.kind.into(),
                msg: t.msg,
                psn: t.psn,
                // (Rebuilt from parity before any later copy arrived: a later copy, if any, was
                // needless.)
                repair: match repair.map(|r| g.tx(r as u32).origin) {
                    _ if decoded => Repair::ErasureCode,
                    Some(sim::Origin::Switch) => Repair::InNetwork,
                    Some(_) => Repair::EndHost,
                    None => Repair::None,
                },
                seen: seen.is_some(),
                seen_as: seen.map(|s| if s.trimmed { SeenAs::Ho } else { SeenAs::Data }),
                signal: if t.kind.is_data() && !decoded {
                    match repair.map(|r| g.tx(r as u32)) {
                        Some(r) if r.origin == sim::Origin::Switch => Signal::NetrtRequest,
                        // (SDR resends at once only what an SR_NACK named.)
                        Some(r) if r.sdr_off.is_some() && r.reason == Some(RetxReason::Sack) => Signal::SdrBitmap,
                        // (Flor resends at once what an ACK's gap showed lost.)
                        Some(r) if flor && r.reason == Some(RetxReason::Sack) => Signal::FlorAck,
                        r => signal_of(r.and_then(|r| r.reason)),
                    }
                } else if decoded {
                    Signal::Gap
                } else {
                    Signal::None
                },
                time_ns: ts(when),
                tx: t.id,
                place,
            })
        })
    }

    /// PSNs the receiver accepted of which this tap saw no copy, at their first accepted copy.
    fn capture_gaps(&self) -> impl Iterator<Item = CaptureGap> + '_ {
        let (g, tap) = (self.g, self.tap);
        let ci = self.ci;
        g.flow_txs(self.flow).filter(|t| t.kind.is_data() && t.accept == Some(sim::Accept::Accepted)).filter_map(
            move |t| {
                let d = g.derived.get(t.id as u64);
                for copy in g.copies(&d) {
                    let earlier_accepted = copy < t.id && g.tx(copy).accept == Some(sim::Accept::Accepted);
                    if earlier_accepted || g.seen[tap].get(copy as u64).get().is_some() {
                        return None;
                    }
                }
                let evidence = if self.dir != 0 {
                    None
                } else if self.dcp() {
                    t.msg.and_then(|m| g.psns.get(ci, m)).and_then(|p| self.first_cover(None, self.msg_off(&p)))
                } else {
                    self.first_cover(Some(psn_off(self.conn(), t.psn)), None)
                };
                Some(CaptureGap { frame: evidence.map(|e| e.frame), msg: t.msg, psn: t.psn, tx: t.id })
            },
        )
    }

    /// The tap's frames of the flow that are retransmissions.
    fn retransmissions(&self) -> impl Iterator<Item = Retransmission> + '_ {
        let g = self.g;
        g.flow_frames(self.tap, self.flow).filter_map(move |(_, fr)| {
            let t = g.tx(fr.tx);
            let dt = g.derived.get(fr.tx as u64);
            dt.cause.map(|cause| Retransmission {
                cause,
                frame: fr.frame,
                msg: t.msg,
                psn: t.psn,
                reason: t.reason.map(Reason::from),
                spurious: dt.spurious,
                time_ns: ts(fr.time),
                tx: t.id,
            })
        })
    }

    /// Per message (requests flows; none for responses), from what the tap saw of each
    /// ([`MsgFrames`], on disk).
    fn messages(&self) -> impl Iterator<Item = FlowMessage> + '_ {
        let (g, tap, ci) = (self.g, self.tap, self.ci);
        let c = self.conn();
        let n = if self.dir == 0 { c.messages.len() } else { 0 };
        let mf = &g.msg_frames;
        mf.clear();
        for fl in [ci * 2, ci * 2 + 1].into_iter().filter(|_| n > 0) {
            for (i, fr) in g.flow_frames(tap, fl) {
                let t = g.tx(fr.tx);
                let Some(m) = t.msg.filter(|&m| (m as usize) < n && t.kind.is_data()) else { continue };
                let mut r = mf.get(m);
                r.first = if r.first == 0 { fr.frame } else { r.first.min(fr.frame) };
                r.last = r.last.max(fr.frame);
                if g.derived.get(fr.tx as u64).cause.is_some() {
                    r.retx += 1;
                }
                if t.kind == sim::Kind::ReadResp
                    && r.read_last == 0
                    && t.accept == Some(sim::Accept::Accepted)
                    && Some(t.psn) == g.psns.get(ci, m).and_then(|p| p.last)
                {
                    r.read_last = i + 1;
                }
                mf.set(m, &r);
            }
        }
        // RC completes in order: a message is proven complete once it and every message
        // before it are.
        let nz = |v: u64| (v != 0).then_some(v);
        let mut proof: Option<TapFrame> = None;
        let erd = c.cfg.erd.is_some();
        let sdr = c.cfg.sdr.is_some();
        let sdr_done = if sdr && n > 0 { self.sdr_acked_whole() } else { HashMap::new() };
        let flor = c.cfg.flor.is_some();
        let flor_done = if flor && n > 0 { self.flor_acked_whole() } else { HashMap::new() };
        let at_receiver = g.f.tap_host(g.f.cfg.taps[tap]) == Some(c.receiver);
        c.messages.iter().take(n).enumerate().map(move |(mi, m)| {
            let p = g.psns.get(ci, mi as u64).unwrap_or_default();
            let r = mf.get(mi as u64);
            let own = if m.msg.op == stacks::Op::Read {
                m.completed_by.and_then(|t| g.seen(tap, t)).or(nz(r.read_last).map(|i| g.frame_at(i - 1)))
            } else if erd {
                // Nothing acknowledges an ERD message: only the receiver's tap sees it complete,
                // at the arrival that brought its last missing piece.
                m.delivered_by.filter(|_| at_receiver).and_then(|t| g.seen(tap, t))
            } else if sdr {
                sdr_done.get(&(mi as u64)).copied()
            } else if flor {
                flor_done.get(&(mi as u64)).copied()
            } else if self.dcp() {
                self.first_cover(None, self.msg_off(&p))
            } else {
                p.last.and_then(|l| self.first_cover(Some(psn_off(c, l)), None))
            };
            proof = match (proof, own) {
                (Some(a), Some(b)) => Some(if a.frame > b.frame { a } else { b }),
                (a, b) => b.or(a),
            };
            // (ERD's, SDR's and Flor's messages complete in any order.)
            let comp = if erd || sdr || flor { own } else { own.and(proof) };
            FlowMessage {
                complete_frame: comp.map(|c| c.frame),
                complete_time_ns: comp.map(|c| ts(c.time)),
                first_frame: nz(r.first),
                first_psn: p.first,
                index: mi as u64,
                last_frame: nz(r.last),
                last_psn: p.last,
                len: m.msg.len,
                op: m.msg.op.into(),
                packets: p.packets,
                retransmitted: r.retx as u64,
            }
        })
    }
}

/// The truth document of a finished run, in memory. `command` and `config` say how the run
/// was made (`synth::SynthOptions::command_line`, `synth::SynthOptions::truth_config`).
pub fn build(f: &Fabric<'_>, command: String, config: Config) -> Truth {
    let g = Gen::new(f);
    let stack = config.stack;
    let taps = (0..f.cfg.taps.len())
        .map(|ti| Tap {
            name: g.tap_name(ti),
            interface: ti as u32,
            frames: g.frames(ti).collect(),
            flows: g.flows(ti).collect(),
        })
        .collect();
    Truth {
        format: Format::RocescopeSynthTruth,
        version: 1,
        command,
        config,
        epoch_ns: ts(0),
        summary: g.summary(),
        connections: g.connections(stack).collect(),
        taps,
        sim: Sim { messages: g.sim_messages().collect(), transmissions: g.transmissions().collect() },
        counters: host_counters(f),
    }
}

/// Every host's NIC counters (`counters[]`).
pub fn host_counters(f: &Fabric<'_>) -> Vec<HostCounters> {
    (0..f.hosts())
        .map(|h| HostCounters {
            host: f.host_name(h).to_string(),
            ip: f.host(h).1.to_string(),
            tap: f.cfg.taps.iter().copied().find(|&t| f.tap_host(t) == Some(h)).map(TapName::from),
            values: f.counters.hosts.get(h).copied().unwrap_or_default().values(),
        })
        .collect()
}

/// Writes the truth document of a finished run to `w`, as [`build`]`(…).`[`write`](Truth::write)
/// would, streaming every section (only a flow's per-message records are held); with the run's records spilled
/// ([`Fabric::spill_truth`]) nothing that grows with the transmissions or frames is in memory
/// (`docs/truth.md`, "Memory").
pub fn write_truth(f: &Fabric<'_>, command: &str, config: &Config, w: &mut impl Write) -> io::Result<()> {
    write_truth_stats(f, command, config, w).map(|_| ())
}

/// [`write_truth`], saying what the derivation held where.
pub fn write_truth_stats(f: &Fabric<'_>, command: &str, config: &Config, w: &mut impl Write) -> io::Result<TruthStats> {
    let g = Gen::new(f);
    let mut o = Out { w };
    o.head(Format::RocescopeSynthTruth, 1, command, config, ts(0), &g.summary())?;
    o.connections(g.connections(config.stack))?;
    o.begin_taps()?;
    for ti in 0..f.cfg.taps.len() {
        // Each flow's sections go out as they are derived, never held whole.
        o.tap_head(ti == 0, g.tap_name(ti), ti as u32, g.frames(ti))?;
        let mut first = true;
        for ci in 0..f.conns.len() {
            for dir in 0..2 {
                let fg = g.flow_gen(ti, ci, dir);
                o.flow_sep(first)?;
                first = false;
                o.flow(&fg.head(), fg.losses(), fg.capture_gaps(), fg.retransmissions(), fg.messages())?;
            }
        }
        o.tap_end()?;
    }
    o.end_taps()?;
    o.sim(g.sim_messages(), g.transmissions())?;
    o.counters(&host_counters(f))?;
    g.check()?;
    Ok(g.stats.get())
}

// ---------------------------------------------------------------------------------------------
// The file layout.

/// Writes the truth layout: compact JSON whose arrays of records hold one record per line. The
/// keys it writes itself (the top level, taps, flows, `sim`) are those of [`Truth`], [`Tap`],
/// [`Flow`] and [`Sim`] in their declared order; every other record is serialised whole.
struct Out<'w, W: Write> {
    w: &'w mut W,
}

impl<W: Write> Out<'_, W> {
    fn raw(&mut self, s: &str) -> io::Result<()> {
        self.w.write_all(s.as_bytes())
    }
    /// `"k":`, after a comma unless first.
    fn key(&mut self, first: bool, k: &str) -> io::Result<()> {
        if !first {
            self.raw(",")?;
        }
        serde_json::to_writer(&mut *self.w, k)?;
        self.raw(":")
    }
    /// `,` newline `"k":`.
    fn key_line(&mut self, k: &str) -> io::Result<()> {
        self.raw(",\n")?;
        self.key(true, k)
    }
    fn value<T: Serialize + ?Sized>(&mut self, v: &T) -> io::Result<()> {
        serde_json::to_writer(&mut *self.w, v).map_err(io::Error::other)
    }
    /// `[` newline, one element per line, `]`.
    fn array<I: IntoIterator>(&mut self, items: I) -> io::Result<()>
    where
        I::Item: Serialize,
    {
        self.raw("[")?;
        let mut first = true;
        for v in items {
            self.raw(if first { "\n" } else { ",\n" })?;
            first = false;
            self.value(&v)?;
        }
        self.raw(if first { "]" } else { "\n]" })
    }
    fn head(
        &mut self,
        format: Format,
        version: u32,
        command: &str,
        config: &Config,
        epoch_ns: TimeNs,
        summary: &Summary,
    ) -> io::Result<()> {
        self.raw("{")?;
        self.key(true, "format")?;
        self.value(&format)?;
        self.key(false, "version")?;
        self.value(&version)?;
        self.key_line("command")?;
        self.value(command)?;
        self.key_line("config")?;
        self.value(config)?;
        self.key_line("epoch_ns")?;
        self.value(&epoch_ns)?;
        self.key_line("summary")?;
        self.value(summary)
    }
    fn connections<I: IntoIterator>(&mut self, items: I) -> io::Result<()>
    where
        I::Item: Serialize,
    {
        self.key_line("connections")?;
        self.array(items)
    }
    fn begin_taps(&mut self) -> io::Result<()> {
        self.key_line("taps")?;
        self.raw("[")
    }
    fn tap<F, L>(&mut self, first: bool, name: TapName, interface: u32, frames: F, flows: L) -> io::Result<()>
    where
        F: IntoIterator,
        F::Item: Serialize,
        L: IntoIterator,
        L::Item: Borrow<Flow>,
    {
        self.tap_head(first, name, interface, frames)?;
        for (i, fl) in flows.into_iter().enumerate() {
            let fl = fl.borrow();
            self.flow_sep(i == 0)?;
            self.flow(fl, &fl.losses, &fl.capture_gaps, &fl.retransmissions, &fl.messages)?;
        }
        self.tap_end()
    }
    /// A tap up to its `flows` array's opening bracket.
    fn tap_head<F>(&mut self, first: bool, name: TapName, interface: u32, frames: F) -> io::Result<()>
    where
        F: IntoIterator,
        F::Item: Serialize,
    {
        self.raw(if first { "\n{" } else { ",\n{" })?;
        self.key(true, "name")?;
        self.value(&name)?;
        self.key(false, "interface")?;
        self.value(&interface)?;
        self.key(false, "frames")?;
        self.array(frames)?;
        self.key_line("flows")?;
        self.raw("[")
    }
    fn flow_sep(&mut self, first: bool) -> io::Result<()> {
        self.raw(if first { "\n" } else { ",\n" })
    }
    fn tap_end(&mut self) -> io::Result<()> {
        self.raw("\n]}")
    }
    /// A flow: `fl`'s keys, and its sections from the iterators (`fl`'s own are not used).
    fn flow<A, B, C, D>(
        &mut self,
        fl: &Flow,
        losses: A,
        capture_gaps: B,
        retransmissions: C,
        messages: D,
    ) -> io::Result<()>
    where
        A: IntoIterator,
        A::Item: Serialize,
        B: IntoIterator,
        B::Item: Serialize,
        C: IntoIterator,
        C::Item: Serialize,
        D: IntoIterator,
        D::Item: Serialize,
    {
        self.raw("{")?;
        self.key(true, "id")?;
        self.value(&fl.id)?;
        self.key(false, "src")?;
        self.value(&fl.src)?;
        self.key(false, "dst")?;
        self.value(&fl.dst)?;
        self.key(false, "destqp")?;
        self.value(&fl.destqp)?;
        self.key(false, "conn")?;
        self.value(&fl.conn)?;
        self.key(false, "role")?;
        self.value(&fl.role)?;
        self.key(false, "profile")?;
        self.value(&fl.profile)?;
        self.key(false, "tap")?;
        self.value(&fl.tap)?;
        self.key(false, "frames")?;
        self.value(&fl.frames)?;
        self.key_line("losses")?;
        self.array(losses)?;
        self.key_line("capture_gaps")?;
        self.array(capture_gaps)?;
        self.key_line("retransmissions")?;
        self.array(retransmissions)?;
        self.key_line("messages")?;
        self.array(messages)?;
        self.raw("}")
    }
    fn end_taps(&mut self) -> io::Result<()> {
        self.raw("\n]")
    }
    fn sim<M, T>(&mut self, messages: M, transmissions: T) -> io::Result<()>
    where
        M: IntoIterator,
        M::Item: Serialize,
        T: IntoIterator,
        T::Item: Serialize,
    {
        self.key_line("sim")?;
        self.raw("{")?;
        self.key(true, "messages")?;
        self.array(messages)?;
        self.key_line("transmissions")?;
        self.array(transmissions)?;
        self.raw("}")
    }
    /// `counters`, one host per line, and the document's end.
    fn counters(&mut self, hosts: &[HostCounters]) -> io::Result<()> {
        self.key_line("counters")?;
        self.array(hosts)?;
        self.raw("\n}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{self, simulate, OpChoice, SynthOptions};
    use rocescope_stacks::StackKind;
    use std::collections::HashSet;

    /// Small runs that between them produce every optional key and every kind of record.
    fn runs() -> Vec<SynthOptions> {
        let base = SynthOptions { messages: 4, ..Default::default() };
        vec![
            // Trimming, header-only losses, ECN and CNPs, adaptive routing.
            SynthOptions {
                stack: StackKind::Dcp,
                incast: 4,
                trim: true,
                queue_bytes: 8192,
                control_queue_bytes: 1024,
                wrr_weight: Some(0.05),
                paths: 4,
                routing: sim::Routing::Adaptive,
                reorder_ns: 1000,
                loss: 0.02,
                ecn_red: None,
                ecn_threshold: Some(4000),
                cnp_interval_ns: 2000,
                op: OpChoice::Mix,
                rto_ns: Some(500_000),
                seed: 3,
                ..base.clone()
            },
            // READs and bursty loss; a connection that gives up.
            SynthOptions { op: OpChoice::Mix, loss: 0.05, burst_loss: Some((0.01, 0.3)), seed: 9, ..base.clone() },
            SynthOptions { loss: 0.5, retry_cnt: 1, seed: 3, ..base.clone() },
            // Cut by the time limit (in-flight transmissions); strict priority (`"inf"`).
            SynthOptions { stack: StackKind::Irn, messages: 20, time_limit_ns: 5000, ..base.clone() },
            SynthOptions {
                stack: StackKind::Dcp,
                trim: true,
                incast: 40,
                mtu: 256,
                messages: 1,
                wrr_weight: Some(f64::INFINITY),
                ..base
            },
        ]
    }

    #[test]
    fn streamed_built_serialised_and_parsed_back_agree() {
        for opts in runs() {
            let f = simulate(&opts, None, true, None).unwrap();
            let mut streamed = Vec::new();
            synth::write_truth(&opts, &f, &mut streamed).unwrap();
            let streamed = String::from_utf8(streamed).unwrap();
            let built = synth::truth(&opts, &f);
            let ctx = opts.command_line();
            // The layout is the derived serialisation with line breaks (none inside strings).
            assert_eq!(built.to_json(), streamed, "{ctx}");
            assert_eq!(serde_json::to_string(&built).unwrap(), streamed.replace('\n', ""), "{ctx}");
            let back = Truth::from_json(&streamed).unwrap();
            assert!(back == built, "{ctx}: parsed back differs");
            let from_reader: Truth = serde_json::from_reader(streamed.as_bytes()).unwrap();
            assert!(from_reader == built);
            // Spilled to disk during the run, the same bytes.
            let spilled = synth::simulate_keeping(&opts, None, synth::Keep::Disk, None).unwrap();
            assert!(spilled.txs.len() < f.txs.len() || f.txs.len() < 50, "{ctx}: records recycled");
            assert!(spilled.tap_frames.is_empty(), "{ctx}");
            let mut from_disk = Vec::new();
            let stats = write_truth_stats(&spilled, &ctx, &opts.truth_config(&spilled.cfg), &mut from_disk).unwrap();
            assert_eq!(String::from_utf8(from_disk).unwrap(), streamed, "{ctx}: spilled");
            assert_eq!(stats.in_memory, 0, "{ctx}");
            assert_eq!(stats.records, f.txs.len() as u64 + f.tap_frames.len() as u64, "{ctx}");
        }
    }

    #[test]
    fn spilled_and_kept_runs_write_the_same_truth_over_many_flows() {
        // Many connections (their flows and PSN chunks interleaved on disk), PFC, a failed
        // link, IRN's spurious resends over sprayed paths, a wrapping start PSN space.
        let leaf_spine = SynthOptions {
            topology: sim::TopologyKind::LeafSpine { leaves: 2, spines: 2, hosts_per_leaf: 2 },
            pattern: synth::Pattern::AllToAll,
            messages: 3,
            message_size: 8192,
            op: OpChoice::Mix,
            loss: 0.02,
            seed: 4,
            ..Default::default()
        };
        let runs = [
            SynthOptions { pfc: true, link_failures: vec![("leaf0>spine1".into(), 5_000)], ..leaf_spine.clone() },
            SynthOptions { stack: StackKind::Irn, ..leaf_spine },
            SynthOptions {
                stack: StackKind::Irn,
                incast: 3,
                paths: 4,
                routing: sim::Routing::Spray,
                reorder_ns: 1500,
                messages: 30,
                loss: 0.03,
                seed: 8,
                ..Default::default()
            },
        ];
        for opts in runs {
            let ctx = opts.command_line();
            let kept = simulate(&opts, None, true, None).unwrap();
            let spilled = synth::simulate_keeping(&opts, None, synth::Keep::Disk, None).unwrap();
            assert!(kept.conns.len() > 2, "{ctx}");
            same_truth_with_repairs(&opts, &kept, &spilled);
        }
    }

    #[test]
    fn spilled_and_kept_control_frames_write_the_same_truth() {
        // ERD's NACK segments and SDR's control messages (selective repeat with NACKs, erasure
        // coding), lost both ways: spilled (`spill_var.rs`), the same bytes as kept in memory.
        let lossy = SynthOptions { messages: 20, message_size: 20_000, mtu: 1024, loss: 0.05, ..Default::default() };
        let lossy = SynthOptions { loss_dir: sim::LossDir::Both, seed: 5, ..lossy };
        let runs = [
            SynthOptions {
                stack: StackKind::Erd,
                messages: 100,
                paths: 4,
                routing: sim::Routing::Spray,
                ..lossy.clone()
            },
            SynthOptions {
                stack: StackKind::SdrSr,
                sdr: synth::SdrOptions { nack: true, ..Default::default() },
                ..lossy.clone()
            },
            SynthOptions { stack: StackKind::SdrEc, ..lossy },
        ];
        for opts in runs {
            let ctx = opts.command_line();
            let kept = simulate(&opts, None, true, None).unwrap();
            let spilled = synth::simulate_keeping(&opts, None, synth::Keep::Disk, None).unwrap();
            let s = spilled.spilled.as_ref().unwrap();
            assert!(spilled.erd_nacks.is_empty() && spilled.sdr_ctrls.is_empty(), "{ctx}: kept in memory");
            let n = if opts.stack == StackKind::Erd { kept.erd_nacks.len() } else { kept.sdr_ctrls.len() };
            // (ERD's receiver sends few NACK segments, each naming many PSNs.)
            assert!(n >= 2, "{ctx}: {n} control records");
            assert_eq!(s.erd_nacks.len() + s.sdr_ctrls.len(), n as u64, "{ctx}: spilled");
            let (mut a, mut b) = (Vec::new(), Vec::new());
            synth::write_truth(&opts, &kept, &mut a).unwrap();
            synth::write_truth(&opts, &spilled, &mut b).unwrap();
            assert!(a == b, "{ctx}: the spilled run's truth differs");
        }
    }

    /// Flor's records (its WQEs as sent and as closed, its ACKs' GNs), lost both ways, on a
    /// sprayed fabric whose late packets the UC receive discards one by one (closed out of
    /// send order), with more WQEs than the index sorts in one run (`spill_sort.rs`, 256 in these tests): spilled,
    /// the same truth as kept in memory.
    #[test]
    fn spilled_and_kept_flor_records_write_the_same_truth() {
        let opts = SynthOptions {
            stack: StackKind::Flor,
            messages: 300,
            message_size: 65_536,
            mtu: 1024,
            loss: 0.03,
            loss_dir: sim::LossDir::Both,
            paths: 4,
            routing: sim::Routing::Spray,
            incast: 2,
            seed: 7,
            ..Default::default()
        };
        let ctx = opts.command_line();
        let kept = simulate(&opts, None, true, None).unwrap();
        let spilled = synth::simulate_keeping(&opts, None, synth::Keep::Disk, None).unwrap();
        let s = spilled.spilled.as_ref().unwrap();
        let in_memory = spilled.flor_sent.len() + spilled.flor_wqes.len() + spilled.flor_acks.len();
        assert_eq!(in_memory, 0, "{ctx}: kept in memory");
        assert_eq!(s.flor_sent.len(), kept.flor_sent.len() as u64, "{ctx}");
        assert_eq!(s.flor_wqes.len(), kept.flor_wqes.len() as u64, "{ctx}");
        assert_eq!(s.flor_acks.len(), kept.flor_acks.len() as u64, "{ctx}");
        assert!(s.flor_sent.len() > crate::spill_sort::RUN, "{ctx}: {} WQEs, one sorted run", s.flor_sent.len());
        let unsorted = kept.flor_wqes.windows(2).any(|w| w[0].0 == w[1].0 && w[0].1.first_tx > w[1].1.first_tx);
        assert!(unsorted, "{ctx}: every WQE closed in send order");
        same_truth_with_repairs(&opts, &kept, &spilled);
    }

    /// The run kept in memory and the run spilled write the same truth, which has
    /// retransmissions.
    fn same_truth_with_repairs(opts: &SynthOptions, kept: &Fabric<'_>, spilled: &Fabric<'_>) {
        let ctx = opts.command_line();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        synth::write_truth(opts, kept, &mut a).unwrap();
        synth::write_truth(opts, spilled, &mut b).unwrap();
        assert!(a == b, "{ctx}: the spilled run's truth differs");
        let t = Truth::from_json(std::str::from_utf8(&b).unwrap()).unwrap();
        assert!(t.summary.retransmissions > 0, "{ctx}");
    }

    #[test]
    fn the_runs_cover_every_optional_key() {
        let mut seen: HashSet<&str> = HashSet::new();
        for opts in runs() {
            let t = synth::truth(&opts, &simulate(&opts, None, true, None).unwrap());
            let mut see = |k, b: bool| {
                if b {
                    seen.insert(k);
                }
            };
            see("failed", t.connections.iter().any(|c| c.failed.is_some()));
            see("burst_loss", t.config.burst_loss.is_some());
            see("wrr_weight inf", t.config.wrr_weight == Some(f64::INFINITY));
            for tap in &t.taps {
                for fr in &tap.frames {
                    see("ce", fr.ce);
                    see("ho", fr.ho);
                    see("lost", fr.lost);
                    see("retx", fr.retx.is_some());
                }
                for fl in &tap.flows {
                    see("ho_lost", fl.losses.iter().any(|l| l.ho_lost.is_some()));
                    see("seen_as", fl.losses.iter().any(|l| l.seen_as.is_some()));
                    see("capture_gaps", !fl.capture_gaps.is_empty());
                }
            }
            for tx in &t.sim.transmissions {
                see("in_flight", tx.fate == Fate::InFlight);
                see("drop", tx.drop.is_some());
                see("trim", tx.trim.is_some());
                see("accept", tx.accept.is_some());
            }
        }
        let want = [
            "failed",
            "burst_loss",
            "wrr_weight inf",
            "ce",
            "ho",
            "lost",
            "retx",
            "ho_lost",
            "seen_as",
            "capture_gaps",
            "in_flight",
            "drop",
            "trim",
            "accept",
        ];
        let missing: Vec<_> = want.iter().filter(|k| !seen.contains(*k)).collect();
        assert!(missing.is_empty(), "no run has {missing:?}");
    }

    #[test]
    fn floats_read_back_exactly() {
        // Doubles serde_json's default float parsing reads one ULP off.
        let (a, b) = (2.5976397732906826, 0.10494035463009499);
        assert!(serde_json::from_str::<f64>(&serde_json::to_string(&a).unwrap()).unwrap() != a);
        let opts = SynthOptions { stack: StackKind::Dcp, trim: true, messages: 1, ..Default::default() };
        let mut t = synth::truth(&opts, &simulate(&opts, None, true, None).unwrap());
        for (w, loss, burst) in [(Some(a), b, Some([b, a])), (Some(f64::INFINITY), 0.0, None), (None, 1.0, None)] {
            (t.config.wrr_weight, t.config.loss, t.config.burst_loss) = (w, loss, burst);
            let back = Truth::from_json(&t.to_json()).unwrap();
            assert_eq!(back.config, t.config);
            assert_eq!(back.to_json(), t.to_json());
            let via_value: Truth = serde_json::from_value(serde_json::to_value(&t).unwrap()).unwrap();
            assert_eq!(via_value.config, t.config);
        }
        let mut v = serde_json::to_value(&t).unwrap();
        v["config"]["loss"] = "0.5".into();
        assert!(serde_json::from_value::<Truth>(v).is_err(), "a string for a number");
    }

    #[test]
    fn unknown_or_missing_keys_are_rejected() {
        let opts = SynthOptions { messages: 1, loss: 0.2, seed: 2, ..Default::default() };
        let t = synth::truth(&opts, &simulate(&opts, None, true, None).unwrap());
        let good = serde_json::to_value(&t).unwrap();
        assert!(serde_json::from_value::<Truth>(good.clone()).is_ok());
        type Edit = fn(&mut serde_json::Value);
        let edits: [(&str, Edit); 6] = [
            ("an unknown top-level key", |v| v["extra"] = 1.into()),
            ("an unknown frame key", |v| v["taps"][0]["frames"][0]["extra"] = true.into()),
            ("a missing null key", |v| {
                v["taps"][0]["frames"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|f| f["msg"].is_null())
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove("msg");
            }),
            ("an unknown enum value", |v| v["taps"][0]["frames"][0]["kind"] = "datagram".into()),
            ("a numeric timestamp", |v| v["epoch_ns"] = 1_700_000_000_000_000_000u64.into()),
            ("another format", |v| v["format"] = "something-else".into()),
        ];
        for (what, edit) in edits {
            let mut v = good.clone();
            edit(&mut v);
            assert!(serde_json::from_value::<Truth>(v).is_err(), "{what} was accepted");
        }
        // (Except the NIC counters, added to the document later: a truth without them loads,
        // with none.)
        let mut v = good.clone();
        v.as_object_mut().unwrap().remove("counters");
        assert!(serde_json::from_value::<Truth>(v).unwrap().counters.is_empty());
    }
}
