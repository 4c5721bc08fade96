//! The analysers in the page (issue 14): what `rocescope flows`, `rocescope timeline` and
//! `rocescope decode --analysis` say of a capture, computed once the index is built
//! ([`crate::index::CaptureIndex::analyze`]) so that the first rows are shown before it.
//!
//! As `decode --analysis` does, in two passes: the analysers read the capture once (the flow
//! table, every flow's timeline and plot points, and the timeline's notes by frame: which frames
//! are retransmissions, losses, acknowledgements of unseen packets, message completions), then
//! an analyser is replayed over the frames in order, each decoded again from the index, for
//! what a frame shows at once (its flow, out of order, a PSN gap, a duplicate NAK, an RTT
//! sample, CE to CNP). Per frame the index keeps the replay's answer in a few bytes
//! ([`FrameNote`]); the fields are written from it and the notes when a frame is shown, by the
//! command line's own writer ([`fields::write_value`]).

use rocescope_analysis::analyze::fields::{self, AField, EventNotes, LiveNote, ANALYSIS_FIELDS};
use rocescope_analysis::analyze::report::{FlowsReport, TimelineReport};
use rocescope_analysis::analyze::series::Series;
use serde::Serialize;

/// What the replayed analyser said of one frame, kept in the index's entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameNote {
    /// Its flow (the analyser's index), or `NONE`.
    pub flow: u32,
    /// Its message (a data packet's), or `NONE`.
    pub message: u32,
    /// [`Flag`]s.
    pub flags: u16,
}

pub const NONE: u32 = u32::MAX;

/// The per-frame flags: what colours a row of the list (as Wireshark's "Bad TCP" rule colours
/// `tcp.analysis.flags`), by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum Flag {
    Retransmission = 1,
    Loss = 2,
    OutOfOrder = 4,
    PsnGap = 8,
    DuplicateNak = 16,
    AckedUnseen = 32,
    MessageComplete = 64,
    Spurious = 128,
    /// An RTT sample or a CE-to-CNP time is kept for it (in [`Analysis::times`]).
    Timed = 256,
}

impl Flag {
    pub const ALL: [Flag; 8] = [
        Flag::Retransmission,
        Flag::Loss,
        Flag::OutOfOrder,
        Flag::PsnGap,
        Flag::DuplicateNak,
        Flag::AckedUnseen,
        Flag::MessageComplete,
        Flag::Spurious,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Flag::Retransmission => "retransmission",
            Flag::Loss => "loss",
            Flag::OutOfOrder => "out_of_order",
            Flag::PsnGap => "psn_gap",
            Flag::DuplicateNak => "duplicate_nak",
            Flag::AckedUnseen => "acked_unseen",
            Flag::MessageComplete => "message_complete",
            Flag::Spurious => "spurious",
            Flag::Timed => "timed",
        }
    }

    /// The names of the flags set in `bits`.
    pub fn names(bits: u16) -> Vec<&'static str> {
        Flag::ALL.iter().filter(|f| bits & **f as u16 != 0).map(|f| f.name()).collect()
    }
}

/// The analysers' answers for the whole capture.
pub struct Analysis {
    pub flows: FlowsReport,
    pub timeline: TimelineReport,
    /// Per flow of the timeline, its plot points.
    pub series: Vec<Option<Series>>,
    pub notes: EventNotes,
    /// Frames (numbers) with an RTT sample or a CE-to-CNP time: (frame, rtt, ce_to_cnp), in
    /// frame order.
    pub times: Vec<(u64, Option<u64>, Option<u64>)>,
}

/// An analysis field of a frame, as `decode --analysis` writes its value.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct AnalysisValue {
    pub name: &'static str,
    pub value: String,
}

impl Analysis {
    /// The flags and note of frame `number`, from the replayed analyser's `live` note.
    pub fn note(&mut self, number: u64, live: &LiveNote) -> FrameNote {
        let ev = self.notes.by_frame.get(&number);
        let mut flags = 0u16;
        let mut set = |f: Flag, on: bool| {
            if on {
                flags |= f as u16;
            }
        };
        set(Flag::Retransmission, ev.is_some_and(|e| e.retransmission.is_some()));
        set(Flag::Spurious, ev.is_some_and(|e| matches!(e.retransmission, Some((_, _, Some(true))))));
        set(Flag::Loss, ev.is_some_and(|e| e.loss.is_some()));
        set(Flag::AckedUnseen, ev.is_some_and(|e| e.acked_unseen > 0));
        set(Flag::MessageComplete, ev.is_some_and(|e| !e.message_complete.is_empty()));
        set(Flag::OutOfOrder, live.out_of_order);
        set(Flag::PsnGap, live.psn_gap);
        set(Flag::DuplicateNak, live.duplicate_nak);
        if live.ack_rtt_ns.is_some() || live.ce_to_cnp_ns.is_some() {
            flags |= Flag::Timed as u16;
            self.times.push((number, live.ack_rtt_ns, live.ce_to_cnp_ns));
        }
        let message = match (live.flow, live.data) {
            (Some(flow), Some((v, msn))) => self.notes.message(flow, v, msn).map_or(NONE, |m| m as u32),
            _ => NONE,
        };
        FrameNote { flow: live.flow.map_or(NONE, |f| f as u32), message, flags }
    }

    /// Frame `number`'s analysis fields (those it has), in the table's order, from its note.
    pub fn values(&self, number: u64, note: &FrameNote) -> Vec<AnalysisValue> {
        let (rtt, cnp) = match note.flags & Flag::Timed as u16 {
            0 => (None, None),
            _ => self
                .times
                .binary_search_by_key(&number, |t| t.0)
                .map_or((None, None), |i| (self.times[i].1, self.times[i].2)),
        };
        let has = |f: Flag| note.flags & f as u16 != 0;
        let live = LiveNote {
            flow: (note.flow != NONE).then_some(note.flow as usize),
            data: None,
            out_of_order: has(Flag::OutOfOrder),
            psn_gap: has(Flag::PsnGap),
            duplicate_nak: has(Flag::DuplicateNak),
            ack_rtt_ns: rtt,
            ce_to_cnp_ns: cnp,
        };
        let ev = self.notes.by_frame.get(&number);
        let mut out = Vec::new();
        for d in ANALYSIS_FIELDS {
            let mut value = String::new();
            if d.field == AField::Message {
                // (The message was found when the frame was replayed: `note`.)
                if note.message != NONE {
                    value = note.message.to_string();
                }
            } else {
                fields::write_value(d.field, ev, &live, &self.notes, &mut value);
            }
            if !value.is_empty() {
                out.push(AnalysisValue { name: d.name, value });
            }
        }
        out
    }
}
