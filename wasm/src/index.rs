//! A capture indexed in one pass and decoded again on demand: what the inspector page holds
//! instead of one document for the whole capture (issue 14).
//!
//! [`CaptureIndex::build`] reads the capture once as `rocescope decode` does (a detection pass,
//! then every frame given out with its flow's final profile: [`rocescope_analysis::session`]),
//! and keeps per frame only where its bytes are, its times and lengths, the profile it was
//! decoded with ([`Frame::decoded_as`]), a few flags and what the analysers say of it ([`Entry`], 48 bytes). What the
//! decoder's memory of *other* frames added to a frame (an SDR message's rebuilt immediate and
//! its problems, the ERD NACK messages a TCP segment completed, the detection warning on a
//! flow's first packet) cannot be decoded again from the frame alone: it is kept, for the frames
//! that have any ([`Stateful`]). [`CaptureIndex::with_frame`] then rebuilds a frame's
//! [`Decoded`] exactly as the pass gave it out — [`Decoder::decode_as`] plus what was kept — so
//! every output built on a `Decoded` (the field walk, the summary line, display filters) is the
//! command line's. `tests/index_parity.rs` checks every frame of every fixture against the
//! whole-capture decoding ([`crate::inspect`]).
//!
//! Memory: the file, 48 bytes a frame, and for frames with stateful additions (SDR data,
//! ERD NACK segments) their [`Extra`] and, when those added warnings, the frame's warnings.

use std::ops::ControlFlow;
use std::rc::Rc;

use rocescope_analysis::capture::{CaptureError, CaptureReader, Record};
use rocescope_analysis::filter::Filter;
use rocescope_analysis::flows::FlowTable;
use rocescope_analysis::output::{Clock, Times};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoded, Decoder, Extra, NackBatchBuf};
use rocescope_codec::frame::{Frame, LinkType};
use rocescope_codec::{Profile, Warnings};

use rocescope_analysis::analyze::fields::EventNotes;
use rocescope_analysis::analyze::pkt::{Pkt, Seen};
use rocescope_analysis::analyze::{Analyzer, Options as AOptions};

use crate::analysis::{self, Analysis, AnalysisValue, FrameNote};
use crate::{options, ErrorInfo, FlowInfo, Stats};

/// One frame of the index.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Where its captured bytes are in the file.
    data_offset: u64,
    ts_ns: u64,
    orig_len: u32,
    cap_len: u32,
    interface: u32,
    /// Its place in [`CaptureIndex::stateful`], or `NONE`.
    stateful: u32,
    /// pcap LINKTYPE_ (as read; frames of other link types are listed, not decoded).
    linktype: u16,
    /// [`Frame::decoded_as`], as an index into [`Profile::ALL`].
    decoded_as: u8,
    flags: u8,
    /// What the analysers say of it, once [`CaptureIndex::analyze`] ran.
    note: FrameNote,
}

const NONE: u32 = u32::MAX;
/// [`Entry::flags`]: the frame has warnings.
const WARNED: u8 = 1;
/// [`Entry::flags`]: a RoCE packet or an ERD NACK segment (the list shows its profile).
const PROFILED: u8 = 2;

/// What the decoder's memory of other frames added to a frame.
#[derive(Clone, Debug)]
struct Stateful {
    extra: Extra,
    /// The frame's warnings, when the decoder's memory appended some to its own.
    warnings: Option<Box<Warnings>>,
    nacks: Option<Box<NackBatchBuf>>,
}

/// How far [`CaptureIndex::build`] has read: the byte the frames given out so far end at, and
/// those frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub bytes: u64,
    pub frames: u64,
}

/// Frames given out between two progress reports.
const REPORT_EVERY: u64 = 1 << 16;

/// A capture, indexed.
pub struct CaptureIndex {
    /// (Shared with the analysers' reader while they run: [`SharedFile`].)
    bytes: Rc<Vec<u8>>,
    /// The decoder after the pass: its options decode frames again ([`Decoder::decode_as`]).
    decoder: Decoder,
    frames: Vec<Entry>,
    stateful: Vec<Stateful>,
    flows: Vec<FlowInfo>,
    pub stats: Stats,
    /// Why the capture could not be read to its end (the frames before are indexed), or why
    /// the options are wrong (nothing is).
    pub error: Option<ErrorInfo>,
    /// The decoder's options as given (the analysers read the capture with them).
    options: Option<options::Options>,
    /// The analysers' answers, once [`Self::analyze`] ran.
    pub analysis: Option<Analysis>,
    /// The analysers while [`Self::analyze_step`] runs them.
    job: Option<AnalysisJob>,
}

/// The analysers part-way: the first pass's analyser and its session over the file (until it
/// has read it), then the replayed analyser with the first pass's answers; frames given to the
/// pass under way.
struct AnalysisJob {
    first: Analyzer,
    session: Option<Session<SharedFile>>,
    replay: Option<(Analyzer, Analysis)>,
    next: usize,
}

/// The file read by the analysers' session, shared with the index (a session borrowing the
/// index's bytes could not live beside them).
struct SharedFile {
    bytes: Rc<Vec<u8>>,
    at: usize,
}

impl std::io::Read for SharedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = self.bytes.get(self.at..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

impl CaptureIndex {
    /// Reads `bytes` (a pcap or pcapng file) with the options (`options.rs`), calling `progress`
    /// every [`REPORT_EVERY`] frames given out.
    pub fn build(bytes: Vec<u8>, options_json: &str, mut progress: impl FnMut(Progress)) -> CaptureIndex {
        let mut ix = CaptureIndex {
            bytes: Rc::new(Vec::new()),
            decoder: Decoder::new(Default::default()),
            frames: Vec::new(),
            stateful: Vec::new(),
            flows: Vec::new(),
            stats: Stats::default(),
            error: None,
            options: None,
            analysis: None,
            job: None,
        };
        let opts = match options::parse(options_json) {
            Ok(o) => o,
            Err(message) => {
                ix.error = Some(ErrorInfo { offset: None, text: format!("options: {message}"), message });
                ix.bytes = Rc::new(bytes);
                return ix;
            }
        };
        let error = |e: CaptureError| ErrorInfo { offset: Some(e.offset), text: e.to_string(), message: e.message };
        let reader = match CaptureReader::new(&bytes[..]) {
            Ok(r) => r,
            Err(e) => {
                ix.error = Some(error(e));
                ix.bytes = Rc::new(bytes);
                return ix;
            }
        };
        // (Decodes frames alone, as `decode_as` will: what the pass's decoder appended to a
        // frame's warnings is what this one's decoding lacks.)
        let alone = Decoder::new(opts.decoder.clone());
        let mut session = Session::new(reader, Decoder::new(opts.decoder.clone()));
        if let Ok(again) = CaptureReader::new(&bytes[..]) {
            session = session.with_detection_pass(again);
        }
        let mut flows = FlowTable::default();
        let (frames, stateful, stats) = (&mut ix.frames, &mut ix.stateful, &mut ix.stats);
        let r = session.run(|rec, d| {
            if opts.count.is_some_and(|c| rec.number > c) {
                return ControlFlow::Break(());
            }
            debug_assert_eq!(rec.number, frames.len() as u64 + 1, "frames numbered from 1");
            let roce = d.frame.roce().is_some();
            flows.add(d, rec.orig_len, rec.number);
            stats.frames += 1;
            stats.roce += roce as u64;
            let mut e = Entry {
                data_offset: rec.data_offset,
                ts_ns: rec.ts_ns,
                orig_len: rec.orig_len,
                cap_len: rec.data.len() as u32,
                interface: rec.interface,
                stateful: NONE,
                linktype: rec.linktype as u16,
                decoded_as: d.frame.decoded_as() as u8,
                flags: 0,
                note: FrameNote { flow: analysis::NONE, message: analysis::NONE, flags: 0 },
            };
            if d.warning_count() > 0 {
                e.flags |= WARNED;
            }
            if crate::listed_profile(d).is_some() {
                e.flags |= PROFILED;
            }
            let added = d.nacks.is_some() || d.extra.sdr.is_some() || d.extra.detection.is_some();
            if let (true, Some(lt)) = (added, rocescope_analysis::link_type(rec.linktype)) {
                let own = alone.decode_as(lt, rec.data, rec.orig_len as usize, d.frame.decoded_as()).warnings;
                let appended = !own.listed().eq(d.frame.warnings.listed());
                e.stateful = stateful.len() as u32;
                stateful.push(Stateful {
                    extra: d.extra,
                    warnings: appended.then(|| Box::new(d.frame.warnings)),
                    nacks: d.nacks.map(|n| Box::new(n.to_buf())),
                });
            }
            frames.push(e);
            if rec.number % REPORT_EVERY == 0 {
                progress(Progress { bytes: rec.data_offset + rec.data.len() as u64, frames: rec.number });
            }
            ControlFlow::Continue(())
        });
        if let Err(e) = r {
            ix.error = Some(error(e));
        }
        let decoder = session.into_decoder();
        ix.stats.add_detection(&decoder);
        ix.flows = flows.flows().iter().map(FlowInfo::from).collect();
        ix.decoder = decoder;
        ix.options = Some(opts);
        ix.bytes = Rc::new(bytes);
        progress(Progress { bytes: ix.bytes.len() as u64, frames: ix.frames.len() as u64 });
        ix
    }

    /// The file, taken out (the index is left empty of it), to index it again with other
    /// options without a second copy.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        // (The analysers' reader, if they are running, lets go of it first.)
        self.job = None;
        let bytes = std::mem::take(&mut self.bytes);
        Rc::try_unwrap(bytes).unwrap_or_else(|shared| shared.as_ref().clone())
    }

    /// The file's length in bytes.
    pub fn file_len(&self) -> usize {
        self.bytes.len()
    }

    /// Frames indexed.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Frames for which the decoder's memory of other frames is kept.
    pub fn stateful_frames(&self) -> usize {
        self.stateful.len()
    }

    /// The flows, in order of first packet.
    pub fn flows(&self) -> &[FlowInfo] {
        &self.flows
    }

    /// The captured bytes of frame `i` (from 0).
    pub fn frame_bytes(&self, i: usize) -> &[u8] {
        let e = &self.frames[i];
        &self.bytes[e.data_offset as usize..][..e.cap_len as usize]
    }

    /// Whether frame `i` has warnings, and whether it is RoCE (or an ERD NACK segment), without
    /// decoding it.
    pub fn flags(&self, i: usize) -> (bool, bool) {
        let f = self.frames[i].flags;
        (f & WARNED != 0, f & PROFILED != 0)
    }

    /// Frame `i`'s timestamp, nanoseconds since the epoch.
    pub fn ts_ns(&self, i: usize) -> u64 {
        self.frames[i].ts_ns
    }

    /// Calls `f` with frame `i`'s record and its decoding, as the pass gave them out.
    pub fn with_frame<R>(&self, i: usize, f: impl FnOnce(&Record<'_>, &Decoded<'_, '_>) -> R) -> R {
        let e = self.frames[i];
        let data = self.frame_bytes(i);
        let rec = Record {
            number: i as u64 + 1,
            linktype: e.linktype as u32,
            ts_ns: e.ts_ns,
            orig_len: e.orig_len,
            data,
            offset: 0,
            data_offset: e.data_offset,
            interface: e.interface,
            options: &[],
            big_endian: false,
        };
        let Some(lt) = rocescope_analysis::link_type(rec.linktype) else {
            let d = Decoded { frame: Frame::new(LinkType::RawIp, &[]), extra: Extra::default(), nacks: None };
            return f(&rec, &d);
        };
        let profile = Profile::ALL[e.decoded_as as usize];
        let frame = self.decoder.decode_as(lt, data, e.orig_len as usize, profile);
        let mut d = Decoded { frame, extra: Extra::default(), nacks: None };
        let st = self.stateful.get(e.stateful as usize);
        if let Some(s) = st {
            d.extra = s.extra;
            if let Some(w) = &s.warnings {
                d.frame.warnings = **w;
            }
        }
        let nacks = st.and_then(|s| s.nacks.as_deref());
        let d = Decoded { nacks: nacks.map(NackBatchBuf::batch), ..d };
        f(&rec, &d)
    }

    /// Runs the analysers (`analysis.rs`) to the end: [`Self::analyze_step`] until done,
    /// `progress` called with the share done (0 to 1).
    pub fn analyze(&mut self, mut progress: impl FnMut(f64)) {
        loop {
            let done = self.analyze_step(REPORT_EVERY as usize);
            progress(done);
            if done >= 1.0 {
                return;
            }
        }
    }

    /// Runs the analysers over up to `budget` more frames; answers the share done (1 when the
    /// analysis is complete, [`Self::analysis`] then set), a slice at a time so that the page's
    /// worker answers between slices. As `decode --analysis` does, in two passes: the
    /// analysers read the capture as `rocescope flows` and `timeline` read it (a session with
    /// the bounded look-ahead, no detection pass; checksums only where detection compares
    /// decodings) for the flow table, the timeline, the plots and the timeline's notes by
    /// frame; then an analyser is replayed over the indexed frames (each decoded again as the
    /// index gives it out, as `decode` gives it) for what each frame shows at once.
    pub fn analyze_step(&mut self, budget: usize) -> f64 {
        let Some(opts) = self.options.clone().filter(|_| self.analysis.is_none()) else { return 1.0 };
        let params = opts.decoder.params;
        let budget = budget.max(1);
        let n = self.frames.len();
        let mut job = match self.job.take() {
            Some(j) => j,
            None => {
                let decoder = Decoder::new(opts.decoder.clone()).checksums_for_detection_only();
                let file = SharedFile { bytes: Rc::clone(&self.bytes), at: 0 };
                let a_opts = AOptions { keep_events: true, plot: true, ..AOptions::default() };
                AnalysisJob {
                    first: Analyzer::new(AOptions::with_params(a_opts, &params)),
                    session: CaptureReader::new(file).ok().map(|r| Session::new(r, decoder)),
                    replay: None,
                    next: 0,
                }
            }
        };
        if job.replay.is_none() {
            let (first, mut given) = (&mut job.first, 0usize);
            let mut finished = true;
            if let Some(session) = job.session.as_mut() {
                let r = session.run(|rec, d| {
                    if opts.count.is_some_and(|c| rec.number > c) {
                        return ControlFlow::Break(());
                    }
                    let seen = Pkt::from_decoded(d, rec.number, rec.ts_ns, rec.interface, rec.orig_len);
                    if !matches!(seen, Seen::None) {
                        first.add(&seen);
                    }
                    given += 1;
                    if given == budget {
                        finished = false;
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                });
                // (A damaged file: the frames before the damage are analysed.)
                finished |= r.is_err() || opts.count.is_some_and(|c| job.next as u64 + given as u64 >= c);
            }
            job.next += given;
            if finished {
                job.session = None;
                let a = &mut job.first;
                let flows = a.flows();
                let (timeline, messages) = a.timeline_and_messages();
                let series = a.series().into_iter().map(|s| s.cloned()).collect();
                let notes = EventNotes::new(&timeline, messages);
                let an = Analysis { flows, timeline, series, notes, times: Vec::new() };
                let live_opts = AOptions::with_params(AOptions { keep_events: false, ..AOptions::default() }, &params);
                job.replay = Some((Analyzer::new(live_opts), an));
                job.next = 0;
            }
        } else if let Some((live, an)) = job.replay.as_mut() {
            let end = job.next.saturating_add(budget).min(n);
            for i in job.next..end {
                let note = self.with_frame(i, |rec, d| {
                    let l = live.add_noted(&Pkt::from_decoded(d, rec.number, rec.ts_ns, rec.interface, rec.orig_len));
                    an.note(rec.number, &l)
                });
                self.frames[i].note = note;
            }
            job.next = end;
            if end == n {
                self.analysis = job.replay.map(|(_, an)| an);
                return 1.0;
            }
        }
        let share = (job.next.min(n) as f64 / n.max(1) as f64 + job.replay.is_some() as u8 as f64) / 2.0;
        self.job = Some(job);
        share.min(0.999)
    }

    /// Frame `i`'s analysis flags ([`analysis::Flag`]; 0 before [`Self::analyze`]).
    pub fn analysis_flags(&self, i: usize) -> u16 {
        self.frames[i].note.flags
    }

    /// Frame `i`'s analysis fields, as `decode --analysis` writes them (none before
    /// [`Self::analyze`]).
    pub fn analysis_values(&self, i: usize) -> Vec<AnalysisValue> {
        self.analysis.as_ref().map_or(Vec::new(), |a| a.values(i as u64 + 1, &self.frames[i].note))
    }

    /// Runs `filter` over frames `from..` (at most `budget` of them), appending the matches to
    /// `out`; `clock` carries the times across calls (start with the default, at frame 0).
    /// Returns where to go on from (`len()` when done).
    pub fn filter_from(
        &self,
        filter: &mut Filter,
        clock: &mut Clock,
        from: usize,
        budget: usize,
        out: &mut Vec<u32>,
    ) -> usize {
        let end = from.saturating_add(budget).min(self.len());
        for i in from..end {
            let times: Times = clock.read(self.frames[i].ts_ns);
            if self.with_frame(i, |rec, d| filter.matches(rec, &times, d)) {
                clock.displayed(&times);
                out.push(i as u32);
            }
        }
        end
    }
}

/// How big [`Entry`] is (the page's memory budget counts it).
pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_48_bytes() {
        assert_eq!(ENTRY_BYTES, 48);
    }
}
