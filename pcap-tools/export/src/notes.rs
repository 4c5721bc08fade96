//! The per-packet analysis fields (`rocescope.analysis.*`, docs/analysis.md) on their way from
//! the analysis pass to the `packets` table, kept on disk, not in memory, so that an export's
//! memory does not grow with the capture:
//! - [`LiveLog`]: what the analyser showed at once for each frame (its flow, out of order, a
//!   PSN gap, a duplicate NAK, an RTT sample, CE to CNP), written in frame order as the pass
//!   goes;
//! - [`EventLog`]: what the timeline says of frames (retransmissions, losses, capture gaps'
//!   proofs, message completions), written as the timeline gives them, sorted by frame a run
//!   of [`RUN_RECORDS`] at a time, and read back merged across runs in frame order.
//!
//! Both are unnamed temporary files (created in the system's temporary directory and unlinked
//! at once where the system allows it). Memory: a buffer per file, one run being sorted, and
//! per run a small read buffer while merging.

use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};

use rocescope_analysis::analyze::fields::{AField, LiveNote};
use rocescope_analysis::analyze::spill::unnamed_temp_file;
use rocescope_analysis::analyze::stream::TimelinePart;

/// No value (a flow index, a time).
const NONE: u64 = u64::MAX;

/// One frame's live note on disk: frame, flow, flags, RTT, CE to CNP.
const LIVE_LEN: usize = 8 + 4 + 1 + 8 + 8;

/// What the analyser showed of a frame at once, as the packets table keeps it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Live {
    pub flow: Option<u32>,
    pub out_of_order: bool,
    pub psn_gap: bool,
    pub duplicate_nak: bool,
    pub ack_rtt_ns: Option<u64>,
    pub ce_to_cnp_ns: Option<u64>,
}

impl Live {
    pub fn of(n: &LiveNote) -> Live {
        Live {
            flow: n.flow.map(|f| f as u32),
            out_of_order: n.out_of_order,
            psn_gap: n.psn_gap,
            duplicate_nak: n.duplicate_nak,
            ack_rtt_ns: n.ack_rtt_ns,
            ce_to_cnp_ns: n.ce_to_cnp_ns,
        }
    }
}

/// The live notes of a capture, in frame order.
pub struct LiveLog {
    out: BufWriter<File>,
    pub written: u64,
}

impl LiveLog {
    pub fn new() -> io::Result<LiveLog> {
        Ok(LiveLog { out: BufWriter::with_capacity(1 << 16, unnamed_temp_file("export-live")?), written: 0 })
    }

    /// Frame `frame`'s note (frames in increasing order; a frame with nothing to say is left out).
    pub fn push(&mut self, frame: u64, l: &Live) -> io::Result<()> {
        if *l == Live::default() {
            return Ok(());
        }
        let mut r = [0u8; LIVE_LEN];
        r[..8].copy_from_slice(&frame.to_le_bytes());
        r[8..12].copy_from_slice(&l.flow.unwrap_or(u32::MAX).to_le_bytes());
        r[12] = l.out_of_order as u8 | (l.psn_gap as u8) << 1 | (l.duplicate_nak as u8) << 2;
        r[13..21].copy_from_slice(&l.ack_rtt_ns.unwrap_or(NONE).to_le_bytes());
        r[21..29].copy_from_slice(&l.ce_to_cnp_ns.unwrap_or(NONE).to_le_bytes());
        self.written += 1;
        self.out.write_all(&r)
    }

    /// The notes read back, in frame order.
    pub fn reader(self) -> io::Result<LiveReader> {
        let mut f = self.out.into_inner().map_err(|e| e.into_error())?;
        f.seek(io::SeekFrom::Start(0))?;
        Ok(LiveReader { input: BufReader::with_capacity(1 << 16, f), next: None, left: self.written })
    }
}

/// Reads a [`LiveLog`] back, frame by frame.
pub struct LiveReader {
    input: BufReader<File>,
    next: Option<(u64, Live)>,
    left: u64,
}

impl LiveReader {
    fn read_one(&mut self) -> io::Result<Option<(u64, Live)>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut r = [0u8; LIVE_LEN];
        self.input.read_exact(&mut r)?;
        let u64_at = |i: usize| u64::from_le_bytes(r[i..i + 8].try_into().expect("8 bytes"));
        let flow = u32::from_le_bytes(r[8..12].try_into().expect("4 bytes"));
        let opt = |v: u64| (v != NONE).then_some(v);
        Ok(Some((
            u64_at(0),
            Live {
                flow: (flow != u32::MAX).then_some(flow),
                out_of_order: r[12] & 1 != 0,
                psn_gap: r[12] & 2 != 0,
                duplicate_nak: r[12] & 4 != 0,
                ack_rtt_ns: opt(u64_at(13)),
                ce_to_cnp_ns: opt(u64_at(21)),
            },
        )))
    }

    /// Frame `frame`'s note (asked in increasing frame order).
    pub fn of(&mut self, frame: u64) -> io::Result<Live> {
        loop {
            if self.next.is_none() {
                self.next = self.read_one()?;
            }
            match self.next {
                Some((f, l)) if f == frame => {
                    self.next = None;
                    return Ok(l);
                }
                Some((f, _)) if f < frame => self.next = None,
                _ => return Ok(Live::default()),
            }
        }
    }
}

/// One timeline entry naming a frame, on disk: frame, kind, three small values, one large.
const EVENT_LEN: usize = 8 + 1 + 3 + 8;

/// The kinds of [`EventLog`] records.
const RETRANSMISSION: u8 = 1;
const LOSS: u8 = 2;
const CAPTURE_GAP: u8 = 3;
const MESSAGE_COMPLETE: u8 = 4;

/// An enumeration value's index in its analysis field's list of values.
fn value_index(f: AField, name: &str) -> u8 {
    f.def().values.iter().position(|v| *v == name).unwrap_or(0) as u8
}

/// What the timeline says of one frame, as the packets table keeps it: enumerations as indices
/// in their field's values ([`AField::def`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Events {
    /// Cause, trigger, spurious (0 no, 1 yes, 2 unknown).
    pub retransmission: Option<(u8, u8, u8)>,
    pub loss: Option<u8>,
    pub acked_unseen: u32,
    pub message_complete: Vec<u64>,
}

/// Records of the timeline held before they are sorted and written as a run: the runs are
/// merged when read, so memory holds one run, whatever the capture's length.
const RUN_RECORDS: usize = 64 * 1024;

/// The timeline's entries that name frames, as they come (a flow at a time, in any order
/// within it), sorted by frame a run at a time.
pub struct EventLog {
    out: BufWriter<File>,
    /// Per run: its first record and its length.
    runs: Vec<(u64, u64)>,
    records: u64,
    pending: Vec<[u8; EVENT_LEN]>,
}

impl EventLog {
    pub fn new() -> io::Result<EventLog> {
        Ok(EventLog {
            out: BufWriter::with_capacity(1 << 16, unnamed_temp_file("export-events")?),
            runs: Vec::new(),
            records: 0,
            pending: Vec::new(),
        })
    }

    /// One timeline entry (as `decode`'s notes take them: `fields::EventNotes`): a
    /// retransmission, a loss, a capture gap's proof, a message's completion.
    pub fn push_part(&mut self, part: &TimelinePart<'_>) -> io::Result<()> {
        let rec = |frame: u64, kind: u8, small: [u8; 3], large: u64| {
            let mut r = [0u8; EVENT_LEN];
            r[..8].copy_from_slice(&frame.to_le_bytes());
            r[8] = kind;
            r[9..12].copy_from_slice(&small);
            r[12..20].copy_from_slice(&large.to_le_bytes());
            r
        };
        let r = match part {
            TimelinePart::Retransmission(r) => {
                let c = value_index(AField::RetransmissionCause, r.cause.name());
                let g = value_index(AField::RetransmissionTrigger, r.trigger.name());
                rec(r.frame, RETRANSMISSION, [c, g, r.spurious.map_or(2, u8::from)], 0)
            }
            TimelinePart::Loss(l) => rec(l.frame, LOSS, [value_index(AField::LossSignal, l.signal.name()), 0, 0], 0),
            TimelinePart::CaptureGap(g) => rec(g.frame, CAPTURE_GAP, [0; 3], 0),
            TimelinePart::Message(m) => match m.complete_frame {
                Some(c) => rec(c, MESSAGE_COMPLETE, [0; 3], m.index),
                None => return Ok(()),
            },
            TimelinePart::Flow(_) => return Ok(()),
        };
        self.pending.push(r);
        if self.pending.len() == RUN_RECORDS {
            self.end_run()?;
        }
        Ok(())
    }

    /// Sorts the records held by frame (stably: a frame's entries keep the order they came
    /// in) and writes them as a run.
    fn end_run(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.pending.sort_by_key(|r| u64::from_le_bytes(r[..8].try_into().expect("8 bytes")));
        self.runs.push((self.records, self.pending.len() as u64));
        self.records += self.pending.len() as u64;
        for r in &self.pending {
            self.out.write_all(r)?;
        }
        self.pending.clear();
        Ok(())
    }

    /// The entries read back merged in frame order.
    pub fn reader(mut self) -> io::Result<EventReader> {
        self.end_run()?;
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        let mut r = EventReader { file, cursors: Vec::new(), heap: BinaryHeap::new() };
        for (i, &(first, len)) in self.runs.iter().enumerate() {
            r.cursors.push(Cursor { at: first, end: first + len, buf: Vec::new(), pos: 0 });
            if let Some(frame) = r.peek(i)? {
                r.heap.push(std::cmp::Reverse((frame, i)));
            }
        }
        Ok(r)
    }
}

/// Records a merge cursor reads at a time.
const CURSOR_RECORDS: u64 = 64;

struct Cursor {
    /// The next record to read from the file, and the run's end.
    at: u64,
    end: u64,
    buf: Vec<u8>,
    pos: usize,
}

/// Reads an [`EventLog`] back, frame by frame.
pub struct EventReader {
    file: File,
    cursors: Vec<Cursor>,
    /// Each run's next frame, smallest first (ties by run: the flows' order).
    heap: BinaryHeap<std::cmp::Reverse<(u64, usize)>>,
}

impl EventReader {
    /// Run `i`'s next record's frame, reading its next records when its buffer is spent.
    fn peek(&mut self, i: usize) -> io::Result<Option<u64>> {
        let c = &mut self.cursors[i];
        if c.pos >= c.buf.len() {
            if c.at >= c.end {
                c.buf = Vec::new();
                return Ok(None);
            }
            let n = (c.end - c.at).min(CURSOR_RECORDS);
            c.buf.resize(n as usize * EVENT_LEN, 0);
            self.file.seek(io::SeekFrom::Start(c.at * EVENT_LEN as u64))?;
            self.file.read_exact(&mut c.buf)?;
            c.at += n;
            c.pos = 0;
        }
        Ok(Some(u64::from_le_bytes(c.buf[c.pos..c.pos + 8].try_into().expect("8 bytes"))))
    }

    /// Frame `frame`'s entries (asked in increasing frame order).
    pub fn of(&mut self, frame: u64) -> io::Result<Events> {
        let mut e = Events::default();
        while let Some(&std::cmp::Reverse((f, i))) = self.heap.peek() {
            if f > frame {
                break;
            }
            self.heap.pop();
            let c = &mut self.cursors[i];
            let r = &c.buf[c.pos..c.pos + EVENT_LEN];
            c.pos += EVENT_LEN;
            if f == frame {
                match r[8] {
                    RETRANSMISSION => e.retransmission = Some((r[9], r[10], r[11])),
                    LOSS => e.loss = Some(r[9]),
                    CAPTURE_GAP => e.acked_unseen += 1,
                    _ => e.message_complete.push(u64::from_le_bytes(r[12..20].try_into().expect("8 bytes"))),
                }
            }
            if let Some(next) = self.peek(i)? {
                self.heap.push(std::cmp::Reverse((next, i)));
            }
        }
        // (As the timeline lists a frame's completions: by index. A frame completes messages
        // of one flow.)
        e.message_complete.sort_unstable();
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_notes_come_back_by_frame_and_frames_without_one_are_empty() {
        let mut log = LiveLog::new().unwrap();
        let a = Live { flow: Some(3), psn_gap: true, ack_rtt_ns: Some(1234), ..Live::default() };
        let b =
            Live { flow: Some(0), out_of_order: true, duplicate_nak: true, ce_to_cnp_ns: Some(0), ..Live::default() };
        log.push(2, &a).unwrap();
        log.push(3, &Live::default()).unwrap();
        log.push(7, &b).unwrap();
        assert_eq!(log.written, 2);
        let mut r = log.reader().unwrap();
        assert_eq!(r.of(1).unwrap(), Live::default());
        assert_eq!(r.of(2).unwrap(), a);
        assert_eq!(r.of(3).unwrap(), Live::default());
        assert_eq!(r.of(7).unwrap(), b);
        assert_eq!(r.of(8).unwrap(), Live::default());
    }

    #[test]
    fn events_of_many_runs_merge_in_frame_order() {
        use rocescope_analysis::analyze::report::CaptureGap;
        // Three flows' capture gaps at interleaved frames, given backwards: more than two runs,
        // more than one read buffer each.
        let mut log = EventLog::new().unwrap();
        let mut expected = std::collections::BTreeMap::<u64, u32>::new();
        let n = RUN_RECORDS as u64;
        for flow in 0..3u64 {
            for k in (0..n).rev() {
                let frame = k * 3 + flow + if k % 7 == 0 { 0 } else { 1 };
                log.push_part(&TimelinePart::CaptureGap(&CaptureGap { psn: k as u32, frame })).unwrap();
                *expected.entry(frame).or_default() += 1;
            }
        }
        assert_eq!(log.runs.len(), 3);
        let mut r = log.reader().unwrap();
        for frame in 0..3 * n + 3 {
            assert_eq!(r.of(frame).unwrap().acked_unseen, expected.get(&frame).copied().unwrap_or(0), "frame {frame}");
        }
    }
}
