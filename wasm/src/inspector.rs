//! The page's handle on one capture (issue 14): an [`Inspector`] lives in the page's Web Worker
//! (`www/worker.js`), holds the file and its [`CaptureIndex`], and answers what the page shows —
//! a window of rows of the packet list, one frame's fields and bytes, the flows — each decoded
//! when asked for, and runs display filters (the command line's `-Y` language,
//! [`rocescope_analysis::filter`]) a slice at a time, so that the worker can answer between
//! slices and a newer filter replaces an older one.
//!
//! Every method answers JSON or bytes; [`Inspector::open`] is the same without JavaScript, for
//! the native tests.

use rocescope_analysis::capture::Record;
use rocescope_analysis::filter::Filter;
use rocescope_analysis::output::{self, Clock};
use rocescope_codec::decoder::Decoded;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::index::{CaptureIndex, Progress, ENTRY_BYTES};
use crate::{ErrorInfo, FlowInfo, FrameInfo, Stats};

#[wasm_bindgen]
extern "C" {
    /// Where [`Inspector::new`] reports its progress: a JavaScript object with a
    /// `report(bytes, frames)` method (the worker posts it to the page).
    pub type ProgressSink;
    #[wasm_bindgen(method)]
    fn report(this: &ProgressSink, bytes: f64, frames: f64);
}

/// One row of the packet list.
#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Row {
    pub number: u64,
    /// Seconds since the first frame, 9 decimals.
    pub time: String,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub protocol: &'static str,
    pub profile: Option<&'static str>,
    pub summary: String,
    pub warnings: Vec<String>,
    /// The analysis flags set on it (`analysis.rs`: `retransmission`, `loss`, …), once the
    /// analysers ran.
    pub flags: Vec<&'static str>,
}

impl Row {
    fn of(rec: &Record<'_>, d: &Decoded<'_, '_>, t0: u64) -> Row {
        let addrs = d.frame.ip_addrs();
        let mut time = String::new();
        let _ = output::write_seconds(&mut time, (rec.ts_ns as i64).saturating_sub(t0 as i64));
        Row {
            number: rec.number,
            time,
            src: addrs.map(|(s, _)| s.to_string()),
            dst: addrs.map(|(_, d)| d.to_string()),
            protocol: output::protocol_name(d),
            profile: crate::listed_profile(d),
            summary: output::summary_info(d),
            warnings: crate::warning_texts(d),
            flags: Vec::new(),
        }
    }
}

/// What [`Inspector::analysis`] answers: the flow table of `rocescope flows`, and per flow of
/// the timeline its head and how many events it has (a flow's events: [`Inspector::flow_timeline`]).
#[derive(Serialize, Debug)]
struct AnalysisSummary<'a> {
    flows: &'a rocescope_analysis::analyze::report::FlowsReport,
    timeline: Vec<TimelineHead<'a>>,
}

#[derive(Serialize, Debug)]
struct TimelineHead<'a> {
    #[serde(flatten)]
    head: &'a rocescope_analysis::analyze::report::FlowHead,
    losses: usize,
    retransmissions: usize,
    capture_gaps: usize,
    messages: usize,
    /// Whether it has a plot (data packets or retransmissions).
    plot: bool,
}

/// What [`Inspector::summary`] answers.
#[derive(Serialize, Debug)]
pub struct Summary<'a> {
    pub version: &'static str,
    pub frames: usize,
    pub file_bytes: usize,
    /// Bytes the index holds per frame (the page reports its memory).
    pub entry_bytes: usize,
    pub stats: &'a Stats,
    pub flows: &'a [FlowInfo],
    pub error: &'a Option<ErrorInfo>,
}

/// A display filter's syntax error: its message and the byte range of the text it is about.
#[derive(Serialize, Debug)]
struct FilterProblem {
    message: String,
    start: usize,
    end: usize,
}

/// Frames the filter has not yet looked at, and what it found so far.
struct Filtering {
    filter: Filter,
    clock: Clock,
    next: usize,
}

/// A capture in the page.
#[wasm_bindgen]
pub struct Inspector {
    ix: CaptureIndex,
    /// The frames shown (indices from 0), when a filter is set; all of them otherwise.
    view: Option<Vec<u32>>,
    filtering: Option<Filtering>,
}

#[wasm_bindgen]
impl Inspector {
    /// Indexes `bytes` with the options (`options.rs`), reporting progress to `progress`.
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: Vec<u8>, options_json: &str, progress: &ProgressSink) -> Inspector {
        Inspector::open(bytes, options_json, |p| progress.report(p.bytes as f64, p.frames as f64))
    }

    /// Indexes the same file again with other options (the page's profile, maps and
    /// parameters), reporting progress to `progress`; any filter is dropped. Options that do
    /// not parse (a maps box still being typed) change nothing: the answer is their error's
    /// text (`""` when the file was indexed again).
    pub fn reindex(&mut self, options_json: &str, progress: &ProgressSink) -> String {
        self.reopen(options_json, |p| progress.report(p.bytes as f64, p.frames as f64))
    }

    /// Runs the analysers (`analysis.rs`) over up to `budget` more frames; answers the share
    /// done (1 when complete). The worker calls it until done, answering the page between
    /// calls.
    pub fn analyze_step(&mut self, budget: u32) -> f64 {
        self.ix.analyze_step(budget as usize)
    }

    /// The analysers' flow table and timeline heads as JSON, or `null` before [`Self::analyze`].
    pub fn analysis(&self) -> String {
        let Some(a) = &self.ix.analysis else { return "null".into() };
        let empty = rocescope_analysis::analyze::series::Series::default();
        let timeline = a
            .timeline
            .flows
            .iter()
            .zip(&a.series)
            .map(|(f, s)| TimelineHead {
                head: &f.head,
                losses: f.losses.len(),
                retransmissions: f.retransmissions.len(),
                capture_gaps: f.capture_gaps.len(),
                messages: f.messages.len(),
                plot: !(s.as_ref().unwrap_or(&empty).originals.is_empty() && f.retransmissions.is_empty()),
            })
            .collect();
        serde_json::to_string(&AnalysisSummary { flows: &a.flows, timeline }).expect("serialising to a String")
    }

    /// Flow `i` of the timeline as JSON (`rocescope timeline --format json`'s flow), or `null`.
    pub fn flow_timeline(&self, i: u32) -> String {
        let f = self.ix.analysis.as_ref().and_then(|a| a.timeline.flows.get(i as usize));
        serde_json::to_string(&f).expect("serialising to a String")
    }

    /// Flow `i`'s plot (`rocescope timeline --svg`'s: PSN against time, each loss,
    /// retransmission and message completion a mark with its `data-frame`), or `""`.
    pub fn flow_plot(&self, i: u32) -> String {
        let Some(a) = &self.ix.analysis else { return String::new() };
        let Some(f) = a.timeline.flows.get(i as usize) else { return String::new() };
        let empty = rocescope_analysis::analyze::series::Series::default();
        let series = a.series.get(i as usize).and_then(Option::as_ref).unwrap_or(&empty);
        rocescope_analysis::analyze::plot::flow_svg(f, series)
    }

    /// The frames, statistics, flows and error (or `null`), as JSON ([`Summary`]).
    pub fn summary(&self) -> String {
        let s = Summary {
            version: env!("CARGO_PKG_VERSION"),
            frames: self.ix.len(),
            file_bytes: self.ix.file_len(),
            entry_bytes: ENTRY_BYTES,
            stats: &self.ix.stats,
            flows: self.ix.flows(),
            error: &self.ix.error,
        };
        serde_json::to_string(&s).expect("serialising to a String")
    }

    /// Rows shown (all frames, or those the filter matched so far).
    pub fn shown(&self) -> u32 {
        self.view.as_ref().map_or(self.ix.len(), Vec::len) as u32
    }

    /// Shown rows `first..first + count` as a JSON array of [`Row`]s.
    pub fn rows(&self, first: u32, count: u32) -> String {
        serde_json::to_string(&self.rows_of(first as usize, count as usize)).expect("serialising to a String")
    }

    /// Frame `number` (from 1) whole, as JSON ([`FrameInfo`]), or `null` when there is none.
    pub fn frame(&self, number: u32) -> String {
        serde_json::to_string(&self.frame_info(number as u64)).expect("serialising to a String")
    }

    /// Frame `number`'s captured bytes (empty when there is none).
    pub fn frame_bytes(&self, number: u32) -> Vec<u8> {
        let i = number as usize;
        if i == 0 || i > self.ix.len() {
            return Vec::new();
        }
        self.ix.frame_bytes(i - 1).to_vec()
    }

    /// The row at which frame `number` is shown, or -1.
    pub fn row_of(&self, number: u32) -> i32 {
        let i = number.wrapping_sub(1);
        match &self.view {
            None => {
                if (i as usize) < self.ix.len() {
                    i as i32
                } else {
                    -1
                }
            }
            Some(v) => v.binary_search(&i).map_or(-1, |r| r as i32),
        }
    }

    /// Starts showing only the frames `text` matches (the command line's `-Y` filter; empty:
    /// every frame). Answers `""`, or the syntax error as JSON `{message, start, end}` (the
    /// shown rows do not change then). Until [`Self::filter_step`] says it is done, the rows
    /// are those matched so far.
    pub fn set_filter(&mut self, text: &str) -> String {
        if text.trim().is_empty() {
            self.view = None;
            self.filtering = None;
            return String::new();
        }
        match Filter::parse(text) {
            Ok(filter) => {
                self.view = Some(Vec::new());
                self.filtering = Some(Filtering { filter, clock: Clock::default(), next: 0 });
                String::new()
            }
            Err(e) => {
                let p = FilterProblem { message: e.message.clone(), start: e.span.start, end: e.span.end };
                serde_json::to_string(&p).expect("serialising to a String")
            }
        }
    }

    /// Runs the filter over up to `budget` more frames; answers the share of the capture
    /// looked at (1 when done, or without a filter).
    pub fn filter_step(&mut self, budget: u32) -> f64 {
        let (Some(f), Some(view)) = (self.filtering.as_mut(), self.view.as_mut()) else { return 1.0 };
        f.next = self.ix.filter_from(&mut f.filter, &mut f.clock, f.next, budget as usize, view);
        let done = f.next as f64 / self.ix.len().max(1) as f64;
        if f.next >= self.ix.len() {
            self.filtering = None;
            return 1.0;
        }
        done
    }
}

impl Inspector {
    /// [`Inspector::new`] without JavaScript.
    pub fn open(bytes: Vec<u8>, options_json: &str, progress: impl FnMut(Progress)) -> Inspector {
        Inspector { ix: CaptureIndex::build(bytes, options_json, progress), view: None, filtering: None }
    }

    /// [`Inspector::reindex`] without JavaScript.
    pub fn reopen(&mut self, options_json: &str, progress: impl FnMut(Progress)) -> String {
        if let Err(message) = crate::options::parse(options_json) {
            return format!("options: {message}");
        }
        let bytes = self.ix.take_bytes();
        *self = Inspector::open(bytes, options_json, progress);
        String::new()
    }

    /// The index.
    pub fn index(&self) -> &CaptureIndex {
        &self.ix
    }

    /// The index, to run its analysers ([`CaptureIndex::analyze`]) without JavaScript.
    pub fn index_mut(&mut self) -> &mut CaptureIndex {
        &mut self.ix
    }

    /// Shown rows `first..first + count`.
    pub fn rows_of(&self, first: usize, count: usize) -> Vec<Row> {
        let t0 = if self.ix.is_empty() { 0 } else { self.ix.ts_ns(0) };
        let shown = self.shown() as usize;
        (first.min(shown)..first.saturating_add(count).min(shown))
            .map(|r| self.view.as_ref().map_or(r, |v| v[r] as usize))
            .map(|i| {
                let mut r = self.ix.with_frame(i, |rec, d| Row::of(rec, d, t0));
                r.flags = crate::analysis::Flag::names(self.ix.analysis_flags(i));
                r
            })
            .collect()
    }

    /// Frame `number` (from 1) whole.
    pub fn frame_info(&self, number: u64) -> Option<FrameInfo> {
        let i = (number as usize).checked_sub(1).filter(|&i| i < self.ix.len())?;
        let mut f = self.ix.with_frame(i, FrameInfo::of);
        f.analysis = self.ix.analysis_values(i);
        Some(f)
    }
}
