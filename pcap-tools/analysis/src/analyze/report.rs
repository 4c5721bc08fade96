//! What the analysers report, as plain serde data: the timeline (INTERFACES.md "The timeline's
//! JSON", docs/analysis.md) and the flow table's rows. Unknown values — what the capture cannot
//! tell (docs/truth.md, "What a tap can observe") — are `"unknown"` for the enumerations and
//! `null` for booleans and numbers. 64-bit times are strings of decimal digits in JSON.

use serde::{Serialize, Serializer};

/// A capture timestamp in nanoseconds since the Unix epoch; JSON: a string of digits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ns(pub u64);

impl Serialize for Ns {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// Where the capture was taken, relative to a flow's connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tap {
    /// At the requester's NIC.
    Sender,
    /// At the responder's NIC.
    Receiver,
    /// Between them.
    Fabric,
    Unknown,
}

/// Which direction of a connection a flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Carries request packets (the messages).
    Requests,
    /// Carries acknowledgements and READ responses.
    Responses,
    /// Neither seen yet (e.g. only CNPs).
    Unknown,
}

/// The transport a flow's signals identify.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// IBTA RC with Go-Back-N recovery (NAK sequence errors, no SACK).
    Gbn,
    /// IRN: RC NAKs carrying a SACKed PSN.
    Irn,
    /// DCP (its ToS tag).
    Dcp,
    /// ERD (profile `erd`): datagrams with an EETH, NACKs over TCP.
    Erd,
    /// Not told apart yet (no loss signal seen).
    Rc,
}

/// How a loss was signalled to the sender (what made it resend).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    Gap,
    Nak,
    Sack,
    Ho,
    Timeout,
    SdrBitmap,
    FlorAck,
    NetrtRequest,
    ErdNack,
    Unknown,
}

/// What told the analyser about a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The header-only form of the packet, or its bounce (DCP).
    HeaderOnly,
    /// The receiver asked for exactly this packet and the sender resent it (source tap).
    AskedFor,
    /// The packet first arrived after higher PSNs of its flow (destination tap).
    Gap,
}

/// Who repaired a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    EndHost,
    InNetwork,
    ErasureCode,
    None,
    /// Away from the sender, no later copy seen: it may have gone another way.
    Unknown,
}

/// Why a packet was sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Loss,
    GoBack,
    Timeout,
    Spurious,
    Unknown,
}

/// One lost transmission.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Loss {
    pub psn: u32,
    /// The frame of the lost transmission where the tap saw it, else of its repair.
    pub frame: u64,
    /// That frame's time (the instant of a drop is never in a capture).
    pub time_ns: Ns,
    pub signal: Signal,
    pub repair: Repair,
    pub evidence: Evidence,
    /// Index of the message it belongs to, when known.
    pub message: Option<u64>,
}

/// A packet the capture missed but the network delivered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaptureGap {
    pub psn: u32,
    /// The frame proving it delivered (the acknowledgement covering it).
    pub frame: u64,
}

/// A transmission of a PSN after its first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Retransmission {
    pub psn: u32,
    pub frame: u64,
    pub time_ns: Ns,
    /// `null` when the capture cannot tell.
    pub spurious: Option<bool>,
    pub cause: Cause,
    /// What made the sender resend it, as seen at the sender (`unknown` elsewhere).
    pub trigger: Signal,
    /// How many copies of this PSN the tap saw before this one.
    pub copy: u32,
    pub message: Option<u64>,
}

/// One message (requests flows).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message {
    pub index: u64,
    /// `send`, `write`, `read`, `write_imm`, …
    pub op: &'static str,
    pub first_psn: u32,
    /// `null` while its last packet was not seen.
    pub last_psn: Option<u32>,
    pub first_frame: u64,
    pub last_frame: u64,
    pub complete_frame: Option<u64>,
    pub complete_time_ns: Option<Ns>,
    /// PSNs it spans (`null` while its last packet was not seen).
    pub packets: Option<u32>,
    /// The tap's frames of it that are retransmissions.
    pub retransmitted: u64,
    /// Payload bytes of its first copies seen.
    pub bytes: u64,
    /// From its first frame to the frame completing it.
    pub latency_ns: Option<u64>,
}

/// What names and places a flow: the first columns of `flows` and the first keys of each
/// timeline flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowHead {
    pub id: String,
    pub src: String,
    pub dst: String,
    pub destqp: u32,
    pub interface: u32,
    pub profile: &'static str,
    pub transport: Transport,
    pub role: Role,
    pub tap: Tap,
    /// The id of the flow carrying the other direction of the connection.
    pub peer: Option<String>,
    /// A control flow (NetRT requests): the id of the data flow it serves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serves: Option<String>,
}

/// A flow's timeline (INTERFACES.md).
#[derive(Clone, Debug, Serialize)]
pub struct FlowTimeline {
    #[serde(flatten)]
    pub head: FlowHead,
    pub losses: Vec<Loss>,
    pub capture_gaps: Vec<CaptureGap>,
    pub retransmissions: Vec<Retransmission>,
    pub messages: Vec<Message>,
}

/// `rocescope timeline --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct TimelineReport {
    pub flows: Vec<FlowTimeline>,
}

/// Summary statistics of one series of durations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    pub samples: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub stdev_ns: Option<u64>,
}

/// One row of `rocescope flows`.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRow {
    #[serde(flatten)]
    pub head: FlowHead,
    pub frames: u64,
    pub bytes: u64,
    pub data_frames: u64,
    /// Payload bytes of data frames, every copy.
    pub data_bytes: u64,
    /// Payload bytes of the first copy of each PSN.
    pub unique_bytes: u64,
    pub retransmitted: u64,
    pub spurious: u64,
    pub max_retries: u32,
    pub timeouts: u64,
    pub losses: u64,
    pub capture_gaps: u64,
    /// Data frames whose PSN is below one seen earlier, first copies only (reordering or repair).
    pub out_of_order: u64,
    /// NAKs with the PSN sequence error code (and SACKs) this flow's receiver sent.
    pub sequence_errors: u64,
    pub acks: u64,
    pub naks: u64,
    pub sacks: u64,
    pub rnr_naks: u64,
    pub cnps: u64,
    pub ecn_ce: u64,
    pub header_only: u64,
    pub messages: u64,
    pub messages_completed: u64,
    /// Messages seen but not completed by the end of the capture.
    pub messages_failed: u64,
    /// From the flow's first frame to the last message completion.
    pub fct_ns: Option<u64>,
    pub message_latency: Spread,
    /// Data frame → first acknowledgement covering it, never for a retransmitted PSN (Karn).
    pub rtt: Spread,
    pub first_time_ns: Ns,
    pub last_time_ns: Ns,
    /// Unique payload bits per second between the first and last frame.
    pub goodput_bps: Option<f64>,
    /// Longest time between two consecutive frames of the flow.
    pub idle_max_ns: u64,
    /// Time the flow's priority was paused by PFC on its interface while the flow was active.
    pub pfc_paused_ns: u64,
}

/// PFC pauses per interface, sender and priority.
#[derive(Clone, Debug, Serialize)]
pub struct PauseRow {
    pub interface: u32,
    /// The MAC address that sent the pause frames.
    pub src_mac: String,
    pub priority: u8,
    pub frames: u64,
    /// Total paused time (quanta converted at the link rate given).
    pub paused_ns: u64,
    pub longest_ns: u64,
    /// Pauses that lasted longer than the storm threshold.
    pub storms: u64,
    /// Flows of the interface that sent or received frames while paused.
    pub flows_affected: Vec<String>,
}

/// `rocescope flows --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct FlowsReport {
    pub flows: Vec<FlowRow>,
    pub pauses: Vec<PauseRow>,
}

impl std::ops::Deref for FlowTimeline {
    type Target = FlowHead;
    fn deref(&self) -> &FlowHead {
        &self.head
    }
}

impl std::ops::Deref for FlowRow {
    type Target = FlowHead;
    fn deref(&self) -> &FlowHead {
        &self.head
    }
}

impl Signal {
    /// The name JSON and the fields print.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Gap => "gap",
            Signal::Nak => "nak",
            Signal::Sack => "sack",
            Signal::Ho => "ho",
            Signal::Timeout => "timeout",
            Signal::SdrBitmap => "sdr_bitmap",
            Signal::FlorAck => "flor_ack",
            Signal::NetrtRequest => "netrt_request",
            Signal::ErdNack => "erd_nack",
            Signal::Unknown => "unknown",
        }
    }
}

impl Cause {
    /// The name JSON and the fields print.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Loss => "loss",
            Cause::GoBack => "go_back",
            Cause::Timeout => "timeout",
            Cause::Spurious => "spurious",
            Cause::Unknown => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name()` is the serde name (JSON and the per-packet fields print the same words).
    #[test]
    fn names_are_the_json_names() {
        let json = |v: &dyn erased::Ser| v.json();
        for s in [Signal::Gap, Signal::Nak, Signal::Sack, Signal::Ho, Signal::Timeout, Signal::SdrBitmap, Signal::FlorAck, Signal::NetrtRequest, Signal::ErdNack, Signal::Unknown] {
            assert_eq!(json(&s), format!("\"{}\"", s.name()));
        }
        for c in [Cause::Loss, Cause::GoBack, Cause::Timeout, Cause::Spurious, Cause::Unknown] {
            assert_eq!(json(&c), format!("\"{}\"", c.name()));
        }
    }

    mod erased {
        pub trait Ser {
            fn json(&self) -> String;
        }
        impl<T: serde::Serialize> Ser for T {
            fn json(&self) -> String {
                serde_json::to_string(self).expect("serialises")
            }
        }
    }
}
