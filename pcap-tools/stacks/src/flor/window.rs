//! Flor's congestion window and chunk size (seed 002 §4.1, Algorithm 1; notes/flor.md §3.5).
//!
//! - **Window** (Swift-like, §4.1 "RTT-based ... similar to Swift"; the constants are the
//!   paper's gap, pinned in notes/flor.md §3.5): below the target delay the window grows by one
//!   unit per window of bytes acknowledged (additive increase of one unit per RTT); above it,
//!   it shrinks by `max(1 − 0.8·(rtt − target)/rtt, 0.5)`, at most once per RTT; a loss halves
//!   it, at most once per RTT (§4.1: "cut its size by a half upon a packet loss"). Never below
//!   one unit.
//! - **RTT averages**: a short `rtt_s` (EWMA weight 1/4) and a long `rtt_l` (1/64).
//! - **Chunk size** (Algorithm 1, whose printed formula is garbled; the text of §4.1 gives
//!   `size = size_max·(β_max·rtt_l − rtt_s)/((β_max − β_min)·rtt_l)` with β_min = 1, β_max = 2):
//!   `size_max` while the short RTT is at the long one, shrinking linearly to one unit as it
//!   reaches twice the long one; then `min(size, acwnd)`, in whole units, at least one unit.

use crate::Nanos;

const ALPHA_S: f64 = 0.25;
const ALPHA_L: f64 = 1.0 / 64.0;
const BETA_MIN: f64 = 1.0;
const BETA_MAX: f64 = 2.0;

/// A sender's window and RTT state.
#[derive(Clone, Debug)]
pub struct Window {
    cwnd: f64,
    unit: u32,
    chunk_max: u32,
    target: Nanos,
    rtt_s: Option<f64>,
    rtt_l: Option<f64>,
    /// When the window was last decreased (delay or loss).
    last_decrease: Option<Nanos>,
}

impl Window {
    pub fn new(initial: u64, unit: u32, chunk_max: u32, target: Nanos) -> Window {
        Window {
            cwnd: initial.max(unit as u64) as f64,
            unit: unit.max(1),
            chunk_max: chunk_max.max(unit),
            target,
            rtt_s: None,
            rtt_l: None,
            last_decrease: None,
        }
    }

    /// The window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd as u64
    }

    /// The long RTT average, once there is a sample.
    pub fn rtt_l(&self) -> Option<Nanos> {
        self.rtt_l.map(|r| r.round() as Nanos)
    }

    /// The short RTT average, once there is a sample.
    pub fn rtt_s(&self) -> Option<Nanos> {
        self.rtt_s.map(|r| r.round() as Nanos)
    }

    fn may_decrease(&self, now: Nanos) -> bool {
        let rtt = self.rtt_s.unwrap_or(0.0) as Nanos;
        self.last_decrease.is_none_or(|t| now >= t + rtt)
    }

    /// An RTT sample `rtt` from an ACK that acknowledged `acked` bytes.
    pub fn on_rtt(&mut self, now: Nanos, rtt: Nanos, acked: u64) {
        let r = rtt as f64;
        self.rtt_s = Some(self.rtt_s.map_or(r, |s| s + ALPHA_S * (r - s)));
        self.rtt_l = Some(self.rtt_l.map_or(r, |l| l + ALPHA_L * (r - l)));
        if rtt <= self.target {
            self.cwnd += self.unit as f64 * acked as f64 / self.cwnd;
        } else if self.may_decrease(now) {
            let f = (1.0 - 0.8 * (rtt - self.target) as f64 / r).max(0.5);
            self.cwnd = (self.cwnd * f).max(self.unit as f64);
            self.last_decrease = Some(now);
        }
    }

    /// A WQE was found lost.
    pub fn on_loss(&mut self, now: Nanos) {
        if self.may_decrease(now) {
            self.cwnd = (self.cwnd / 2.0).max(self.unit as f64);
            self.last_decrease = Some(now);
        }
    }

    /// Algorithm 1's RTT-based size (before the window's limit), whole units.
    pub fn rtt_size(&self) -> u32 {
        let max = self.chunk_max as f64;
        let size = match (self.rtt_s, self.rtt_l) {
            (Some(s), Some(l)) if l > 0.0 => max * (BETA_MAX * l - s) / ((BETA_MAX - BETA_MIN) * l),
            _ => max,
        };
        self.units(size.clamp(self.unit as f64, max) as u64)
    }

    /// The next chunk's size with `acwnd` bytes of window left: `min(rtt_size, acwnd)` in whole
    /// units, at least one unit.
    pub fn chunk_size(&self, acwnd: u64) -> u32 {
        self.units(acwnd.min(self.rtt_size() as u64))
    }

    fn units(&self, bytes: u64) -> u32 {
        let u = self.unit as u64;
        ((bytes / u).max(1) * u).min(u32::MAX as u64) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_1_size_falls_from_size_max_to_a_unit() {
        let mut w = Window::new(1 << 20, 4096, 65536, 100_000);
        assert_eq!(w.rtt_size(), 65536, "no sample: size_max");
        w.on_rtt(0, 10_000, 0);
        assert_eq!((w.rtt_s(), w.rtt_l()), (Some(10_000), Some(10_000)));
        assert_eq!(w.rtt_size(), 65536, "rtt_s = rtt_l: size_max");
        // rtt_s moves a quarter of the way, rtt_l 1/64: 20 000 → s = 12 500, l = 10 156.25;
        // size = 65536·(2·10156.25 − 12500)/10156.25 = 50 412 → 12 units.
        w.on_rtt(1, 20_000, 0);
        assert_eq!(w.rtt_size(), 12 * 4096);
        assert_eq!(w.chunk_size(10_000), 2 * 4096, "the window's limit, whole units");
        assert_eq!(w.chunk_size(100), 4096, "at least one unit");
    }

    #[test]
    fn window_grows_below_target_and_halves_on_loss_once_per_rtt() {
        let mut w = Window::new(40_960, 4096, 65536, 30_000);
        w.on_rtt(0, 10_000, 40_960);
        assert_eq!(w.cwnd(), 40_960 + 4096, "one unit per window acknowledged");
        w.on_loss(20_000);
        assert_eq!(w.cwnd(), 22_528);
        w.on_loss(25_000);
        assert_eq!(w.cwnd(), 22_528, "a second loss within the RTT");
        w.on_loss(30_000);
        assert_eq!(w.cwnd(), 11_264);
        // Above the target: ×max(1 − 0.8·(60 − 30)/60, 0.5) = ×0.6.
        w.on_rtt(100_000, 60_000, 4096);
        assert_eq!(w.cwnd(), 6758);
        for t in 0..10 {
            w.on_loss(1_000_000 * (t + 1));
        }
        assert_eq!(w.cwnd(), 4096, "never below a unit");
    }
}
