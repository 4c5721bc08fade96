//! The one read → decode loop. Every front end that walks a capture (`rocescope decode` and
//! `check`, the analysers, the browser page) runs it: records come from [`CaptureReader`] in
//! file order, each is decoded by the codec's stateful [`Decoder`] (per-flow `auto` detection,
//! `--map`, the SDR tracker and ERD NACK reassembly live there), and the caller sees the record
//! and its decoding, in file order.
//!
//! `auto` detection looks ahead (WIRE.md B, docs/profiles.md "Detection looks ahead"), in one of
//! two ways:
//! - **a detection pass** ([`Session::with_detection_pass`], given a second reader over the same
//!   capture): every frame is first shown to detection only, then the capture is read again and
//!   given out; every flow is decided before its first packet is. `decode` and `check` on a file
//!   and the browser page do this.
//! - **held-back frames** (the default, and the only way on standard input): a frame whose flow
//!   has evidence of an extension but no decision (a DCP WRITE First before its Middle) is held
//!   back, with every frame after it (file order is kept), until its flow is decided or given up
//!   on (the codec's `UNSURE_AFTER` packets of evidence). At most [`LOOKAHEAD_FRAMES`] frames or
//!   [`LOOKAHEAD_BYTES`] captured bytes are held; past that the oldest goes out as its flow is
//!   known then (`std`), and is counted in the decoder's `packets_early`. The analysers read this
//!   way (one pass over the file); the frames of flows already decided or without evidence cost
//!   nothing extra, a held frame one copy and a second decoding.
//!
//! Memory is the reader's buffer, the decoder's per-flow state and the held frames (bounded):
//! nothing grows with the capture.

use std::collections::VecDeque;
use std::io::Read;
use std::ops::{ControlFlow, Range};

use rocescope_codec::decoder::{Decoded, Decoder, Extra, FlowRef};
use rocescope_codec::{Frame, LinkType};

use crate::analyze::plain::PlainV4;
use crate::capture::{CaptureError, CaptureReader, Record};

/// Frames held back at most while `auto` detection waits for a flow's decision.
pub const LOOKAHEAD_FRAMES: usize = 100_000;
/// Captured bytes held back at most (the frames' data).
pub const LOOKAHEAD_BYTES: usize = 64 << 20;

/// A frame as [`Session::run_summarised`] gives it.
pub enum Given<'r, 'a, 's> {
    /// Read by the summary fast path.
    Plain(&'r PlainV4<'a>),
    /// Decoded.
    Decoded(&'r Decoded<'a, 's>),
}

/// A capture being read and decoded.
pub struct Session<R: Read> {
    reader: CaptureReader<R>,
    decoder: Decoder,
    /// The reader of the detection pass, until it has run.
    first_pass: Option<CaptureReader<R>>,
    held: Held,
    limits: (usize, usize),
}

/// Frames held back, oldest first: their records (without data) and their bytes in one buffer.
#[derive(Default)]
struct Held {
    frames: VecDeque<HeldFrame>,
    bytes: Vec<u8>,
    /// Bytes at the start of `bytes` that belong to frames already given out.
    spent: usize,
}

struct HeldFrame {
    rec: Record<'static>,
    data: Range<usize>,
    /// Its pcapng options (packet comments), after its data in `bytes`.
    options: Range<usize>,
    /// The frame's flow when it was held for it: it waits while the flow is pending.
    waits_for: Option<FlowRef>,
}

impl Held {
    fn push(&mut self, rec: &Record<'_>, waits_for: Option<FlowRef>) {
        if self.frames.is_empty() {
            self.bytes.clear();
            self.spent = 0;
        } else if self.spent > self.bytes.len() / 2 && self.spent > (1 << 20) {
            // Given-out bytes dominate: move the held ones to the front.
            self.bytes.drain(..self.spent);
            for h in &mut self.frames {
                h.data = h.data.start - self.spent..h.data.end - self.spent;
                h.options = h.options.start - self.spent..h.options.end - self.spent;
            }
            self.spent = 0;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(rec.data);
        let data = start..self.bytes.len();
        self.bytes.extend_from_slice(rec.options);
        let options = data.end..self.bytes.len();
        self.frames.push_back(HeldFrame { rec: Record { data: &[], options: &[], ..*rec }, data, options, waits_for });
    }

    fn held_bytes(&self) -> usize {
        self.bytes.len() - self.spent
    }
}

impl<R: Read> Session<R> {
    /// A session that looks ahead by holding frames back (see the module documentation).
    pub fn new(reader: CaptureReader<R>, decoder: Decoder) -> Self {
        Session {
            reader,
            decoder,
            first_pass: None,
            held: Held::default(),
            limits: (LOOKAHEAD_FRAMES, LOOKAHEAD_BYTES),
        }
    }

    /// Runs a detection pass over `again` (a second reader over the same capture) before giving
    /// the capture out: every flow is decided before its first packet. Skipped when the decoder
    /// detects nothing (a fixed profile). The pass stops quietly where the capture turns out
    /// unusable; the second reading reports it there.
    pub fn with_detection_pass(mut self, again: CaptureReader<R>) -> Self {
        self.first_pass = Some(again);
        self
    }

    /// Runs the detection pass now, if [`Self::with_detection_pass`] asked for one and it has
    /// not run ([`Self::run`] runs it first otherwise): a caller with a core to spare runs it
    /// on another thread while it does something else.
    pub fn detect(&mut self) {
        if let Some(mut again) = self.first_pass.take() {
            if self.decoder.detects() {
                while let Ok(Some(rec)) = again.next_record() {
                    if let Some(lt) = crate::link_type(rec.linktype) {
                        self.decoder.observe(lt, rec.data, rec.orig_len as usize);
                    }
                }
                self.decoder.settle();
            }
        }
    }

    /// Other bounds for the held-back frames (tests).
    pub fn with_lookahead(mut self, frames: usize, bytes: usize) -> Self {
        self.limits = (frames.max(1), bytes);
        self
    }

    /// Calls `f` with every record and its decoding, in file order, until the capture ends, `f`
    /// breaks, or the file turns out unusable (the error names the byte offset; the records
    /// before it were seen). A record of a link type rocescope does not decode is passed with an
    /// empty, undecoded frame: listed, not decoded.
    pub fn run(&mut self, mut f: impl FnMut(&Record<'_>, &Decoded<'_, '_>) -> ControlFlow<()>) -> Result<(), CaptureError> {
        self.run_with::<false>(|rec, given| match given {
            Given::Decoded(d) => f(rec, d),
            // (Not given without the fast path.)
            Given::Plain(_) => ControlFlow::Continue(()),
        })
    }

    /// [`run`](Self::run) for a reader of summaries (the analysers): a frame the summary fast
    /// path reads ([`PlainV4`], `analyze/plain.rs`), which the decoder would give out `std`, its
    /// flow plain, is given as [`Given::Plain`] without being decoded (the decoder counts it as
    /// it counts it decoded); every other frame is decoded, as `run` decodes it.
    pub fn run_summarised(
        &mut self,
        f: impl FnMut(&Record<'_>, Given<'_, '_, '_>) -> ControlFlow<()>,
    ) -> Result<(), CaptureError> {
        self.run_with::<true>(f)
    }

    /// [`run`](Self::run), with the fast path when `FAST`.
    #[inline(always)]
    fn run_with<const FAST: bool>(
        &mut self,
        mut f: impl FnMut(&Record<'_>, Given<'_, '_, '_>) -> ControlFlow<()>,
    ) -> Result<(), CaptureError> {
        self.detect();
        let Session { reader, decoder, held, limits, .. } = self;
        loop {
            // (The record is used where the reader returned it, by reference: moved out of the
            // `Result`, it was copied in wide pieces over the narrower writes that had just
            // filled it in, a store-forwarding stall per frame.)
            let next = reader.next_record();
            let rec = match &next {
                Ok(Some(rec)) => rec,
                Ok(None) => break,
                Err(e) => {
                    let e = e.clone();
                    // The frames before the error are given out first.
                    decoder.give_up_pending();
                    return match release(decoder, held, (0, 0), &mut f) {
                        ControlFlow::Break(()) => Ok(()),
                        ControlFlow::Continue(()) => Err(e),
                    };
                }
            };
            let link = crate::link_type(rec.linktype);
            if held.frames.is_empty() {
                if FAST && link == Some(LinkType::Ethernet) {
                    if let Some(v) = PlainV4::parse(rec.data, rec.orig_len as usize) {
                        let (qp, opcode) = (v.roce.bth().dest_qp(), v.roce.opcode().0);
                        if decoder.give_out_plain_v4(rec.interface, v.src, v.dst, qp, opcode, v.tos) {
                            if f(rec, Given::Plain(&v)).is_break() {
                                return Ok(());
                            }
                            continue;
                        }
                    }
                }
                let step = match link {
                    Some(lt) => {
                        decoder.set_interface(rec.interface);
                        decoder.decode_step(lt, rec.data, rec.orig_len as usize, |d| f(rec, Given::Decoded(d)))
                    }
                    None => Ok(f(rec, Given::Decoded(&undecoded()))),
                };
                match step {
                    Ok(ControlFlow::Break(())) => return Ok(()),
                    Ok(ControlFlow::Continue(())) => {}
                    Err(flow) => held.push(rec, Some(flow)),
                }
                continue;
            }
            let waits_for = link.and_then(|lt| decoder.observe(lt, rec.data, rec.orig_len as usize));
            held.push(rec, waits_for);
            if release(decoder, held, *limits, &mut f).is_break() {
                return Ok(());
            }
        }
        decoder.give_up_pending();
        let _ = release(decoder, held, (0, 0), &mut f);
        Ok(())
    }

    /// Has the capture's mapped windows sent to `to`, to be faulted in ahead of the reader and,
    /// once read, unmapped by its receiver ([`CaptureReader::send_windows_to`]).
    pub fn send_windows_to(&mut self, to: std::sync::mpsc::Sender<crate::capture::Window>) {
        self.reader.send_windows_to(to);
    }

    /// The decoder, for its detection statistics once the run is over.
    pub fn decoder(&self) -> &Decoder {
        &self.decoder
    }

    /// The decoder, kept once the run is over: its flows' profiles are final, and
    /// [`Decoder::decode_as`] decodes the capture's frames again on demand.
    pub fn into_decoder(self) -> Decoder {
        self.decoder
    }
}

/// The decoding of a record of a link type rocescope does not decode: empty.
fn undecoded() -> Decoded<'static, 'static> {
    Decoded { frame: Frame::new(LinkType::RawIp, &[]), extra: Extra::default(), nacks: None }
}

/// Gives out the held frames from the oldest while its flow is no longer pending, or while more
/// than `limits` (frames, bytes) are held.
fn release(
    decoder: &mut Decoder,
    held: &mut Held,
    limits: (usize, usize),
    f: &mut impl FnMut(&Record<'_>, Given<'_, '_, '_>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    while let Some(h) = held.frames.front() {
        let over = held.frames.len() > limits.0 || held.held_bytes() > limits.1;
        if !over && h.waits_for.is_some_and(|flow| decoder.is_pending(flow)) {
            break;
        }
        let h = held.frames.pop_front().expect("a front frame");
        let data = &held.bytes[h.data.clone()];
        held.spent = h.options.end;
        let rec = Record { data, options: &held.bytes[h.options.clone()], ..h.rec };
        let r = match crate::link_type(rec.linktype) {
            Some(lt) => {
                decoder.set_interface(rec.interface);
                f(&rec, Given::Decoded(&decoder.emit(lt, data, rec.orig_len as usize)))
            }
            None => f(&rec, Given::Decoded(&undecoded())),
        };
        r?;
    }
    ControlFlow::Continue(())
}
