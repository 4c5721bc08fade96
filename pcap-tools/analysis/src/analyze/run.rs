//! The one pass behind `flows` and `timeline`: a [`Session`] over the capture, every frame
//! summarised ([`Pkt`](super::pkt::Pkt)) and fed to an [`Analyzer`], with a time window
//! applied. Memory: the session's buffer plus the analyser's per-flow state.

use std::io::Read;
use std::ops::ControlFlow;

use crate::capture::{CaptureError, Record};
use crate::session::Session;

use super::pkt::{Pkt, Seen};
use super::{Analyzer, Options};

/// Which frames to analyse: seconds from the capture's first frame (as Wireshark's
/// `frame.time_relative`), both ends inclusive.
#[derive(Clone, Copy, Debug, Default)]
pub struct Window {
    pub from_s: Option<f64>,
    pub to_s: Option<f64>,
}

/// Reads the whole capture into an analyser; `tick` is called with every record (progress).
pub fn analyze<R: Read>(
    session: &mut Session<R>,
    opts: Options,
    window: Window,
    mut tick: impl FnMut(&Record<'_>),
) -> Result<Analyzer, CaptureError> {
    let mut a = Analyzer::new(opts);
    let mut t0: Option<u64> = None;
    session.run(|rec, d| {
        tick(rec);
        let t = rec.ts_ns;
        let start = *t0.get_or_insert(t);
        let rel = t.saturating_sub(start) as f64 / 1e9;
        if window.from_s.is_some_and(|f| rel < f) {
            return ControlFlow::Continue(());
        }
        if window.to_s.is_some_and(|e| rel > e) {
            return ControlFlow::Break(());
        }
        let seen = Pkt::from_decoded(d, rec.number, t, rec.interface, rec.orig_len);
        if !matches!(seen, Seen::None) {
            a.add(&seen);
        }
        ControlFlow::Continue(())
    })?;
    Ok(a)
}
