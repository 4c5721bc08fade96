//! Per-packet analysis fields, the RoCE analogue of Wireshark's `tcp.analysis.*`: a second
//! table in the codec registry's vocabulary (a name, a [`FieldType`], a description, an enum's
//! values), which the codec — free of flows — does not hold. `rocescope decode -e NAME` selects
//! them and `--analysis` adds them to the JSON; `rocescope fields` lists them after the codec's.
//!
//! Their values come from two places, so that every field set on a frame has its timeline entry
//! and every timeline entry its frame's field (issue 10, acceptance 3):
//! - the timeline itself (a first pass): retransmissions, losses, capture gaps' proofs,
//!   message completions and each data frame's message ([`EventNotes`]);
//! - the analyser replayed in step with the decoding (the second pass): what a frame shows at
//!   once — its flow, out of order, a PSN gap, a duplicate NAK, an RTT sample, CE to CNP
//!   ([`LiveNote`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rocescope_codec::FieldType;

use super::report::{Cause, Signal, TimelineReport};
use super::track::MessageTable;

/// An analysis field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AField {
    Flow,
    Retransmission,
    RetransmissionCause,
    RetransmissionTrigger,
    Spurious,
    Loss,
    LossSignal,
    OutOfOrder,
    PsnGap,
    AckedUnseen,
    DuplicateNak,
    AckRttNs,
    Message,
    MessageComplete,
    CeToCnpNs,
}

/// One entry of the table.
#[derive(Clone, Copy, Debug)]
pub struct AnalysisFieldDef {
    pub field: AField,
    pub name: &'static str,
    pub ty: FieldType,
    pub desc: &'static str,
    pub values: &'static [&'static str],
}

const CAUSES: &[&str] = &["loss", "go_back", "timeout", "spurious", "unknown"];
const SIGNALS: &[&str] = &["gap", "nak", "sack", "ho", "timeout", "sdr_bitmap", "flor_ack", "netrt_request", "erd_nack", "unknown"];

macro_rules! def {
    ($f:ident, $name:literal, $ty:expr, $desc:literal) => {
        AnalysisFieldDef { field: AField::$f, name: $name, ty: $ty, desc: $desc, values: &[] }
    };
    ($f:ident, $name:literal, $ty:expr, $desc:literal, $values:expr) => {
        AnalysisFieldDef { field: AField::$f, name: $name, ty: $ty, desc: $desc, values: $values }
    };
}

/// Every analysis field (docs/analysis.md).
pub const ANALYSIS_FIELDS: &[AnalysisFieldDef] = &[
    def!(Flow, "rocescope.analysis.flow", FieldType::Text, "Analysis: the frame's flow (SRC>DST/DESTQP[@IF][#N], as `flows` and `timeline` name it)"),
    def!(Retransmission, "rocescope.analysis.retransmission", FieldType::Bool, "Analysis: a transmission of a PSN the tap saw before (set on retransmissions only)"),
    def!(RetransmissionCause, "rocescope.analysis.retransmission.cause", FieldType::Enum, "Analysis: why it was sent again, as far as this tap can tell", CAUSES),
    def!(RetransmissionTrigger, "rocescope.analysis.retransmission.trigger", FieldType::Enum, "Analysis: what made the sender resend it (known at the sender's tap)", SIGNALS),
    def!(Spurious, "rocescope.analysis.spurious", FieldType::Bool, "Analysis: the receiver already had this PSN (absent when the tap cannot tell)"),
    def!(Loss, "rocescope.analysis.loss", FieldType::Bool, "Analysis: the timeline's loss entry names this frame (the lost transmission, or its repair when the tap never saw it)"),
    def!(LossSignal, "rocescope.analysis.loss.signal", FieldType::Enum, "Analysis: how the loss was signalled to the sender", SIGNALS),
    def!(OutOfOrder, "rocescope.analysis.out_of_order", FieldType::Bool, "Analysis: the first copy of a PSN below one the tap saw earlier"),
    def!(PsnGap, "rocescope.analysis.psn_gap", FieldType::Bool, "Analysis: PSNs between the highest seen and this one were not seen (not captured, or lost)"),
    def!(AckedUnseen, "rocescope.analysis.acked_unseen", FieldType::UInt(32), "Analysis: how many PSNs this acknowledgement covers that the capture never saw (capture gaps)"),
    def!(DuplicateNak, "rocescope.analysis.duplicate_nak", FieldType::Bool, "Analysis: a NAK with the same PSN as the flow's previous NAK"),
    def!(AckRttNs, "rocescope.analysis.ack_rtt_ns", FieldType::UInt(64), "Analysis: time from the data packet this acknowledgement newly covers to it (not for a retransmitted PSN: Karn)"),
    def!(Message, "rocescope.analysis.message", FieldType::UInt(32), "Analysis: index of the message this data packet belongs to, from 0 per flow"),
    def!(MessageComplete, "rocescope.analysis.message_complete", FieldType::UInt(32), "Analysis: the messages this frame proves complete (repeated)"),
    def!(CeToCnpNs, "rocescope.analysis.ce_to_cnp_ns", FieldType::UInt(64), "Analysis: time from the last CE-marked data packet of the flow this CNP reports to the CNP"),
];

impl AField {
    pub fn from_name(name: &str) -> Option<AField> {
        ANALYSIS_FIELDS.iter().find(|d| d.name == name).map(|d| d.field)
    }
    pub fn def(self) -> &'static AnalysisFieldDef {
        ANALYSIS_FIELDS.iter().find(|d| d.field == self).expect("every field is in the table")
    }
}

/// What the timeline says about one frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventNote {
    pub retransmission: Option<(Cause, Signal, Option<bool>)>,
    pub loss: Option<Signal>,
    pub acked_unseen: u32,
    pub message_complete: Vec<u64>,
}

/// The first pass's products: notes by frame, the flows' ids in the analyser's order, and per
/// flow its messages' indices.
#[derive(Clone, Debug, Default)]
pub struct EventNotes {
    pub by_frame: BTreeMap<u64, EventNote>,
    pub ids: Vec<String>,
    pub messages: Vec<MessageTable>,
}

impl EventNotes {
    pub fn new(t: &TimelineReport, messages: Vec<MessageTable>) -> EventNotes {
        let mut by_frame: BTreeMap<u64, EventNote> = BTreeMap::new();
        for f in &t.flows {
            for r in &f.retransmissions {
                by_frame.entry(r.frame).or_default().retransmission = Some((r.cause, r.trigger, r.spurious));
            }
            for l in &f.losses {
                by_frame.entry(l.frame).or_default().loss = Some(l.signal);
            }
            for g in &f.capture_gaps {
                by_frame.entry(g.frame).or_default().acked_unseen += 1;
            }
            for m in &f.messages {
                if let Some(c) = m.complete_frame {
                    by_frame.entry(c).or_default().message_complete.push(m.index);
                }
            }
        }
        EventNotes { by_frame, ids: t.flows.iter().map(|f| f.id.clone()).collect(), messages }
    }

    /// The message index of a data packet of flow `flow` (unwrapped PSN, DCP MSN).
    pub fn message(&self, flow: usize, v: u64, msn: Option<u64>) -> Option<u64> {
        self.messages.get(flow)?.index(v, msn)
    }
}

/// What the analyser, replayed in step, says about the frame just fed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveNote {
    pub flow: Option<usize>,
    /// A data packet: unwrapped PSN and MSN, to find its message.
    pub data: Option<(u64, Option<u64>)>,
    pub out_of_order: bool,
    pub psn_gap: bool,
    pub duplicate_nak: bool,
    pub ack_rtt_ns: Option<u64>,
    pub ce_to_cnp_ns: Option<u64>,
}


/// A field's value on a frame, written as `decode` writes values (INTERFACES.md: booleans 0/1,
/// integers in decimal, repeated values joined by commas); nothing when absent.
pub fn write_value(f: AField, ev: Option<&EventNote>, live: &LiveNote, notes: &EventNotes, out: &mut String) {
    let w = |out: &mut String, v: &dyn std::fmt::Display| {
        let _ = write!(out, "{v}");
    };
    match f {
        AField::Flow => {
            if let Some(id) = live.flow.and_then(|i| notes.ids.get(i)) {
                out.push_str(id);
            }
        }
        AField::Retransmission => {
            if ev.is_some_and(|e| e.retransmission.is_some()) {
                out.push('1');
            }
        }
        AField::RetransmissionCause => {
            if let Some((c, _, _)) = ev.and_then(|e| e.retransmission) {
                out.push_str(c.name());
            }
        }
        AField::RetransmissionTrigger => {
            if let Some((_, t, _)) = ev.and_then(|e| e.retransmission) {
                out.push_str(t.name());
            }
        }
        AField::Spurious => {
            if let Some((_, _, Some(s))) = ev.and_then(|e| e.retransmission) {
                out.push(if s { '1' } else { '0' });
            }
        }
        AField::Loss => {
            if ev.is_some_and(|e| e.loss.is_some()) {
                out.push('1');
            }
        }
        AField::LossSignal => {
            if let Some(s) = ev.and_then(|e| e.loss) {
                out.push_str(s.name());
            }
        }
        AField::OutOfOrder => {
            if live.out_of_order {
                out.push('1');
            }
        }
        AField::PsnGap => {
            if live.psn_gap {
                out.push('1');
            }
        }
        AField::AckedUnseen => {
            if let Some(n) = ev.map(|e| e.acked_unseen).filter(|&n| n > 0) {
                w(out, &n);
            }
        }
        AField::DuplicateNak => {
            if live.duplicate_nak {
                out.push('1');
            }
        }
        AField::AckRttNs => {
            if let Some(r) = live.ack_rtt_ns {
                w(out, &r);
            }
        }
        AField::Message => {
            if let (Some(flow), Some((v, msn))) = (live.flow, live.data) {
                if let Some(i) = notes.message(flow, v, msn) {
                    w(out, &i);
                }
            }
        }
        AField::MessageComplete => {
            if let Some(e) = ev {
                for (i, m) in e.message_complete.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    w(out, m);
                }
            }
        }
        AField::CeToCnpNs => {
            if let Some(d) = live.ce_to_cnp_ns {
                w(out, &d);
            }
        }
    }
}
