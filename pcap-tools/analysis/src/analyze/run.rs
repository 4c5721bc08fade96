//! The one pass behind `flows` and `timeline`: a [`Session`] over the capture, every frame
//! summarised ([`Pkt`](super::pkt::Pkt)) and fed to an [`Analyzer`], with a time window
//! applied. Memory: the session's buffer plus the analyser's per-flow state.

use std::io::Read;
use std::ops::ControlFlow;

use crate::capture::{CaptureError, Record};
use crate::session::{Given, Session};

#[cfg(not(target_arch = "wasm32"))]
use super::fields::LiveNote;
use super::pkt::{Pkt, Seen};
use super::{Analyzer, Options};

/// Which frames to analyse: seconds from the capture's first frame (as Wireshark's
/// `frame.time_relative`), both ends inclusive.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window {
    pub from_s: Option<f64>,
    pub to_s: Option<f64>,
}

impl Window {
    /// Whether any frame can be left out (the reading loops skip [`Self::admits`] otherwise).
    fn limits(&self) -> bool {
        self.from_s.is_some() || self.to_s.is_some()
    }

    /// A frame `t` ns into the capture (the first frame's time is `start`): `Continue(true)` to
    /// analyse it, `Continue(false)` to skip it, `Break` when the window is over.
    #[inline]
    fn admits(&self, start: u64, t: u64) -> ControlFlow<(), bool> {
        // (No window, the common case: no division per frame.)
        if !self.limits() {
            return ControlFlow::Continue(true);
        }
        let rel = t.saturating_sub(start) as f64 / 1e9;
        if self.to_s.is_some_and(|e| rel > e) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(!self.from_s.is_some_and(|f| rel < f))
    }
}

/// Reads the whole capture into an analyser; `tick` is called with every record (progress).
pub fn analyze<R: Read>(
    session: &mut Session<R>,
    opts: Options,
    window: Window,
    mut tick: impl FnMut(&Record<'_>),
) -> Result<Analyzer, CaptureError> {
    let opts = Options::with_params(opts, &session.decoder().options().params);
    let mut a = Analyzer::new(opts);
    let mut t0: Option<u64> = None;
    let limits = window.limits();
    session.run_summarised(|rec, given| {
        tick(rec);
        let t = rec.ts_ns;
        if limits && !window.admits(*t0.get_or_insert(t), t)? {
            return ControlFlow::Continue(());
        }
        let mut seen = Seen::None;
        write_summary(&mut seen, rec, t, given);
        if !matches!(seen, Seen::None) {
            a.add(&seen);
        }
        ControlFlow::Continue(())
    })?;
    Ok(a)
}

/// A frame's summary (`t`: its time), written into `out`: read by the fast path or decoded.
#[inline(always)]
pub fn write_summary(out: &mut Seen, rec: &Record<'_>, t: u64, given: Given<'_, '_, '_>) {
    match given {
        Given::Plain(v) => Pkt::write_plain(out, v, rec.number, t, rec.interface, rec.orig_len),
        Given::Decoded(d) => Pkt::write_decoded(out, d, rec.number, t, rec.interface, rec.orig_len),
    }
}

/// Frames summarised per batch handed from the reading thread to the analysing one. (A batch
/// is about 150 KB: the few in flight and the ones handed back stay in the caches, where 4,096
/// frames a batch churned through 2.5 MB; fewer frames a batch and the hand-overs cost more.)
#[cfg(not(target_arch = "wasm32"))]
const BATCH: usize = 1024;

/// [`analyze`] on two threads (the command line; the browser has one): one reads and decodes
/// the capture and summarises each frame, the other analyses the summaries in file order, so
/// the two halves of the work overlap. The same frames reach the analyser in the same order:
/// the result is the same. `tick` is called with (frame number, file offset) once per batch.
/// A capture that turns out unusable part-way still gives the analysis of the frames before
/// the error, with the error.
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_threaded<R: Read + Send + 'static>(
    session: Session<R>,
    opts: Options,
    window: Window,
    tick: impl FnMut(u64, u64),
) -> (Analyzer, Result<(), CaptureError>) {
    analyze_threaded_with(session, opts, window, tick, None::<fn(&Seen, &LiveNote)>)
}

/// [`analyze_threaded`], and for every frame the analyser is given, what it showed at once
/// ([`Analyzer::add_noted`]): `noted(summary, note)`, in file order, on the analysing thread
/// (`rocescope export` keeps them for the `packets` table's analysis columns).
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_threaded_noted<R: Read + Send + 'static>(
    session: Session<R>,
    opts: Options,
    window: Window,
    tick: impl FnMut(u64, u64),
    noted: impl FnMut(&Seen, &LiveNote),
) -> (Analyzer, Result<(), CaptureError>) {
    analyze_threaded_with(session, opts, window, tick, Some(noted))
}

#[cfg(not(target_arch = "wasm32"))]
fn analyze_threaded_with<R: Read + Send + 'static>(
    mut session: Session<R>,
    opts: Options,
    window: Window,
    mut tick: impl FnMut(u64, u64),
    mut noted: Option<impl FnMut(&Seen, &LiveNote)>,
) -> (Analyzer, Result<(), CaptureError>) {
    use std::sync::mpsc;
    let opts = Options::with_params(opts, &session.decoder().options().params);
    type Batch = (Vec<Seen>, u64, u64);
    let (full_tx, full_rx) = mpsc::sync_channel::<Batch>(4);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<Seen>>();
    // The mapped capture's windows (`capture/mapped.rs`) go to the reading thread's
    // [`Windows`], which has whichever thread would otherwise wait do the kernel's work on them:
    // faulting in ahead of the reader, and unmapping those it has left.
    let (windows_tx, windows_rx) = mpsc::channel::<crate::capture::Window>();
    let (shared_tx, shared_rx) = mpsc::channel::<crate::capture::Window>();
    session.send_windows_to(windows_tx);
    let reader = std::thread::spawn(move || -> Result<(), CaptureError> {
        let mut windows =
            Windows { from: windows_rx, to_analyser: shared_tx, ahead: Default::default(), left: Default::default() };
        let mut t0: Option<u64> = None;
        let mut batch: Vec<Seen> = Vec::with_capacity(BATCH);
        let mut at = (0u64, 0u64);
        let mut closed = false;
        // (Without a window, as `flows` mostly runs, the loop does not look at times at all.)
        let limits = window.limits();
        let r = session.run_summarised(|rec, given| {
            let t = rec.ts_ns;
            at = (rec.number, rec.offset);
            if limits && !window.admits(*t0.get_or_insert(t), t)? {
                return ControlFlow::Continue(());
            }
            // Written into the batch's next element in place (`write_decoded`: returned and
            // assigned, the summary was built on the stack and copied in).
            batch.push(Seen::None);
            if let Some(slot) = batch.last_mut() {
                write_summary(slot, rec, t, given);
                if matches!(slot, Seen::None) {
                    batch.pop();
                }
            }
            if batch.len() >= BATCH {
                let next = empty_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                if windows.hand_over(&full_tx, (std::mem::replace(&mut batch, next), at.0, at.1)).is_err() {
                    closed = true;
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        if !closed {
            let _ = full_tx.send((batch, at.0, at.1));
        }
        r
    });
    let mut a = Analyzer::new(opts);
    // The window the reader is in and the one mapped after it, while they may have pages left
    // to fault in; the file offset of the last record the reader handed over.
    let mut ahead: std::collections::VecDeque<crate::capture::Window> = std::collections::VecDeque::new();
    let mut reader_at = 0u64;
    loop {
        let (mut batch, number, offset) = match full_rx.try_recv() {
            Ok(b) => b,
            Err(mpsc::TryRecvError::Disconnected) => break,
            Err(mpsc::TryRecvError::Empty) => {
                // No batch yet: the reader's next pages faulted in meanwhile, one fault at a
                // time (a few microseconds), then a look for a batch again; nothing left to
                // fault in, a wait.
                take_windows(&shared_rx, &mut ahead);
                if ahead.iter_mut().any(|w| w.fault_in_ahead(reader_at)) {
                    continue;
                }
                match full_rx.recv() {
                    Ok(b) => b,
                    Err(_) => break,
                }
            }
        };
        for (i, seen) in batch.iter().enumerate() {
            // The summaries were written by the other core: ask for a few ahead.
            if let Some(next) = batch.get(i + 4) {
                let p: *const Seen = next;
                crate::prefetch::prefetch(p);
                crate::prefetch::prefetch(p.cast::<u8>().wrapping_add(std::mem::size_of::<Seen>() - 1));
            }
            match noted.as_mut() {
                Some(f) => {
                    let n = a.add_noted(seen);
                    f(seen, &n);
                }
                None => a.add(seen),
            }
        }
        tick(number, offset);
        reader_at = offset;
        batch.clear();
        let _ = empty_tx.send(batch);
        take_windows(&shared_rx, &mut ahead);
    }
    let r =
        reader.join().unwrap_or_else(|_| Err(CaptureError { offset: 0, message: "the reading thread failed".into() }));
    (a, r)
}

/// The mapped capture's windows, as the reading thread of [`analyze_threaded`] sees them, so
/// that the kernel's work on them is done by whichever thread would otherwise wait. Unmapping
/// a window (8 MiB: about 0.75 ms; in `flows` on a 312 MiB capture, 39 of them, some 29 ms of
/// the analysing thread's time when it did them all) is done by the reading thread while the channel of batches is full (the
/// analysing thread then has four batches of work ahead); a window left that has waited
/// [`LEFT_WAITS`] hand-overs for that goes to the analysing thread, unmapped there between
/// batches. Both threads fault the windows mapped in ahead of the reader: the reading thread
/// while the channel is full, the analysing one while it is empty (each window is shared with
/// it when mapped).
#[cfg(not(target_arch = "wasm32"))]
struct Windows {
    from: std::sync::mpsc::Receiver<crate::capture::Window>,
    to_analyser: std::sync::mpsc::Sender<crate::capture::Window>,
    /// The window the reader is in and the one mapped after it.
    ahead: std::collections::VecDeque<crate::capture::Window>,
    /// Windows the reader has left, still mapped, with the batches handed over since.
    left: std::collections::VecDeque<(crate::capture::Window, u32)>,
}

/// Batches handed over at most while a window left waits for the channel to fill before it
/// goes to the analysing thread to be unmapped there: the reading thread found it full about
/// one hand-over in five, and a window left still counts (about 8 MiB) in the process's
/// resident size.
#[cfg(not(target_arch = "wasm32"))]
const LEFT_WAITS: u32 = 8;

#[cfg(not(target_arch = "wasm32"))]
impl Windows {
    /// Sends `batch` (its last record's file offset last) to the analysing thread; while the
    /// channel is full, unmaps the windows left and faults in the reader's next pages, then
    /// waits. `Err` when the analysing thread is gone.
    fn hand_over<T>(
        &mut self,
        to: &std::sync::mpsc::SyncSender<(T, u64, u64)>,
        batch: (T, u64, u64),
    ) -> Result<(), ()> {
        use std::sync::mpsc::TrySendError;
        let reader_at = batch.2;
        while let Ok(w) = self.from.try_recv() {
            if w.ahead() {
                let _ = self.to_analyser.send(w.share());
                self.ahead.push_back(w);
                if self.ahead.len() > 2 {
                    self.ahead.pop_front();
                }
            } else {
                self.left.push_back((w, 0));
            }
        }
        let mut batch = batch;
        loop {
            match to.try_send(batch) {
                Ok(()) => {
                    for (_, waited) in &mut self.left {
                        *waited += 1;
                    }
                    while self.left.front().is_some_and(|(_, waited)| *waited > LEFT_WAITS) {
                        if let Some((w, _)) = self.left.pop_front() {
                            // (Should the analysing thread be gone, the window is dropped here.)
                            let _ = self.to_analyser.send(w);
                        }
                    }
                    return Ok(());
                }
                Err(TrySendError::Disconnected(_)) => return Err(()),
                Err(TrySendError::Full(b)) => {
                    batch = b;
                    if self.left.pop_front().is_some() {
                        continue;
                    }
                    if self.ahead.iter_mut().any(|w| w.fault_in_ahead(reader_at)) {
                        continue;
                    }
                    return to.send(batch).map_err(|_| ());
                }
            }
        }
    }
}

/// Takes the windows the reading thread has sent since the last look: those it has mapped join
/// `ahead`, which keeps the last two (the one it reads and the one mapped after it: those
/// before, it has left); the ones it has left behind are dropped, unmapped here.
#[cfg(not(target_arch = "wasm32"))]
fn take_windows(
    from: &std::sync::mpsc::Receiver<crate::capture::Window>,
    ahead: &mut std::collections::VecDeque<crate::capture::Window>,
) {
    while let Ok(w) = from.try_recv() {
        if w.ahead() {
            ahead.push_back(w);
            if ahead.len() > 2 {
                ahead.pop_front();
            }
        }
    }
}
