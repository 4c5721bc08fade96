//! DCQCN's reaction point (RP): the per-QP sending rate a RoCE NIC keeps and changes on CNPs
//! (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, §3.2 and
//! its Figure of the RP algorithm). The notification point (the receiving NIC, at most one CNP
//! per flow per 50 µs) and the congestion point (ECN marking at switch queues) are the fabric's.
//!
//! The algorithm, as published:
//! - **Decrease**, on each CNP: `R_T ← R_C`, `R_C ← R_C·(1 − α/2)`, `α ← (1 − g)·α + g`; the rate
//!   increase state (timer, byte counter, both stage counters) restarts.
//! - **α decay**: every `K` without a CNP, `α ← (1 − g)·α`.
//! - **Increase events**: the timer expires every `T`, the byte counter every `B` bytes sent; each
//!   event bumps its stage counter, then: while both counters are below `F`, *fast recovery*
//!   `R_C ← (R_T + R_C)/2`; once one reaches `F`, *additive increase* `R_T ← R_T + R_AI` first;
//!   once both exceed `F`, *hyper increase* `R_T ← R_T + R_HAI` first. `R_T` and `R_C` are capped
//!   at the line rate.
//!
//! Timers are evaluated lazily: [`Dcqcn::advance`] applies every expiry due up to `now` in time
//! order, so the state machine needs no events of its own and stays a pure function of the CNP
//! and transmission times it is given. Pacing: after a packet of `L` wire bytes the QP may send
//! again `L·8/R_C` later ([`Dcqcn::next_send_at`]).

use super::Nanos;

/// DCQCN's parameters. [`DcqcnConfig::paper`] holds the published defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnConfig {
    /// The line rate, bits/s: the initial and the highest rate.
    pub line_rate_bps: f64,
    /// The lowest rate a CNP can bring the QP to, bits/s. The paper sets no floor; ours keeps a
    /// flow from stopping: 0.1 % of the line rate (our choice).
    pub min_rate_bps: f64,
    /// `g`, the gain of α's moving average: 1/256 (DCQCN §3.2 / §5 parameter table).
    pub g: f64,
    /// `K`, the α-decay period: 55 µs (DCQCN §3.2: just over the 50 µs CNP interval).
    pub alpha_period_ns: Nanos,
    /// `T`, the rate-increase timer: 55 µs (DCQCN §5 parameter table).
    pub increase_period_ns: Nanos,
    /// `B`, the byte counter: 10 MB (DCQCN §5 parameter table).
    pub byte_counter: u64,
    /// `F`, the fast-recovery steps: 5 (DCQCN §3.2).
    pub fast_recovery_steps: u32,
    /// `R_AI`, the additive-increase step: 40 Mb/s (DCQCN §5 parameter table).
    pub ai_bps: f64,
    /// `R_HAI`, the hyper-increase step. The paper makes it a multiple of `R_AI` without one
    /// value we could check on this project's machines; we use 10 × `R_AI` = 400 Mb/s (our
    /// choice, documented in docs/stacks.md).
    pub hai_bps: f64,
    /// α before the first CNP: 1 (DCQCN §3.2: the first CNP halves the rate).
    pub initial_alpha: f64,
}

impl DcqcnConfig {
    /// The published defaults at line rate `line_rate_bps`.
    pub fn paper(line_rate_bps: f64) -> DcqcnConfig {
        DcqcnConfig {
            line_rate_bps,
            min_rate_bps: line_rate_bps / 1000.0,
            g: 1.0 / 256.0,
            alpha_period_ns: 55_000,
            increase_period_ns: 55_000,
            byte_counter: 10 * 1024 * 1024,
            fast_recovery_steps: 5,
            ai_bps: 40e6,
            hai_bps: 400e6,
            initial_alpha: 1.0,
        }
    }
}

/// One QP's DCQCN reaction point.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    cfg: DcqcnConfig,
    /// `R_C`, the current rate, bits/s.
    rc: f64,
    /// `R_T`, the target rate, bits/s.
    rt: f64,
    alpha: f64,
    /// A CNP arrived in the current α period.
    cnp_in_period: bool,
    timer_stage: u32,
    byte_stage: u32,
    bytes: u64,
    next_alpha: Nanos,
    next_increase: Nanos,
    /// Before the first CNP the RP is idle: no timers run (the rate is the line rate).
    active: bool,
    next_send: Nanos,
    cnps: u64,
}

impl Dcqcn {
    /// A QP at line rate that has seen no CNP.
    pub fn new(cfg: DcqcnConfig) -> Dcqcn {
        Dcqcn {
            cfg,
            rc: cfg.line_rate_bps,
            rt: cfg.line_rate_bps,
            alpha: cfg.initial_alpha,
            cnp_in_period: false,
            timer_stage: 0,
            byte_stage: 0,
            bytes: 0,
            next_alpha: 0,
            next_increase: 0,
            active: false,
            next_send: 0,
            cnps: 0,
        }
    }

    /// The current rate `R_C`, bits/s.
    pub fn rate_bps(&self) -> f64 {
        self.rc
    }

    /// The target rate `R_T`, bits/s.
    pub fn target_bps(&self) -> f64 {
        self.rt
    }

    /// α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// CNPs taken so far.
    pub fn cnps(&self) -> u64 {
        self.cnps
    }

    /// The earliest time the QP may put its next packet on the wire.
    pub fn next_send_at(&self) -> Nanos {
        self.next_send
    }

    /// Applies every α-decay and rate-increase timer expiry due at or before `now`, in time
    /// order (an α expiry and an increase expiry at the same instant: α first).
    pub fn advance(&mut self, now: Nanos) {
        if !self.active {
            return;
        }
        loop {
            let at = self.next_alpha.min(self.next_increase);
            if at > now {
                return;
            }
            if self.next_alpha <= self.next_increase {
                if !self.cnp_in_period {
                    self.alpha *= 1.0 - self.cfg.g;
                }
                self.cnp_in_period = false;
                self.next_alpha += self.cfg.alpha_period_ns.max(1);
            } else {
                self.timer_stage = self.timer_stage.saturating_add(1);
                self.increase();
                self.next_increase += self.cfg.increase_period_ns.max(1);
            }
            if self.at_line_rate() && !self.cnp_in_period {
                // Nothing left to recover: increases are no-ops until the next CNP (which
                // restarts them), so only α's decays remain, applied in closed form.
                let k = self.cfg.alpha_period_ns.max(1);
                if self.next_alpha <= now {
                    let periods = (now - self.next_alpha) / k + 1;
                    self.alpha *= (1.0 - self.cfg.g).powi(periods.min(i32::MAX as u64) as i32);
                    self.next_alpha += periods * k;
                }
                let t = self.cfg.increase_period_ns.max(1);
                if self.next_increase <= now {
                    self.next_increase += ((now - self.next_increase) / t + 1) * t;
                }
                return;
            }
        }
    }

    /// A CNP for this QP arrived at `now`.
    pub fn on_cnp(&mut self, now: Nanos) {
        self.advance(now);
        self.cnps += 1;
        self.rt = self.rc;
        self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(self.cfg.min_rate_bps);
        self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g;
        self.cnp_in_period = true;
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.next_increase = now + self.cfg.increase_period_ns.max(1);
        if !self.active {
            // The first CNP starts the α timer.
            self.next_alpha = now + self.cfg.alpha_period_ns.max(1);
            self.active = true;
        }
    }

    /// The QP put a frame of `wire_bytes` on the wire at `now` (FCS, preamble and gap
    /// included): counts the bytes toward `B` and paces the next frame at the current rate.
    pub fn on_sent(&mut self, now: Nanos, wire_bytes: u64) {
        self.advance(now);
        let gap = (wire_bytes as f64 * 8.0 * 1e9 / self.rc).ceil() as Nanos;
        self.next_send = self.next_send.max(now) + gap;
        if !self.active {
            return;
        }
        self.bytes += wire_bytes;
        while self.bytes >= self.cfg.byte_counter.max(1) {
            self.bytes -= self.cfg.byte_counter.max(1);
            self.byte_stage = self.byte_stage.saturating_add(1);
            self.increase();
        }
    }

    fn at_line_rate(&self) -> bool {
        self.rc >= self.cfg.line_rate_bps && self.rt >= self.cfg.line_rate_bps
    }

    fn increase(&mut self) {
        let f = self.cfg.fast_recovery_steps;
        let (lo, hi) = (self.timer_stage.min(self.byte_stage), self.timer_stage.max(self.byte_stage));
        if lo > f {
            self.rt += self.cfg.hai_bps;
        } else if hi >= f {
            self.rt += self.cfg.ai_bps;
        }
        self.rt = self.rt.min(self.cfg.line_rate_bps);
        self.rc = ((self.rt + self.rc) / 2.0).min(self.cfg.line_rate_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: f64 = 100e9;

    #[test]
    fn the_first_cnp_halves_the_rate_and_alpha_stays_one() {
        let mut d = Dcqcn::new(DcqcnConfig::paper(G100));
        d.on_cnp(1_000);
        assert_eq!(d.rate_bps(), 50e9);
        assert_eq!(d.target_bps(), 100e9);
        assert_eq!(d.alpha(), 1.0);
        d.on_cnp(2_000);
        assert_eq!(d.rate_bps(), 25e9);
        assert_eq!(d.target_bps(), 50e9);
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_quiet_period() {
        let mut d = Dcqcn::new(DcqcnConfig::paper(G100));
        d.on_cnp(0);
        // The period holding the CNP leaves α alone; the next two quiet ones decay it.
        d.advance(3 * 55_000);
        let g = 1.0 / 256.0;
        assert!((d.alpha() - (1.0 - g) * (1.0 - g)).abs() < 1e-12, "{}", d.alpha());
    }

    #[test]
    fn fast_recovery_halves_the_gap_to_the_target_each_timer_period() {
        let mut d = Dcqcn::new(DcqcnConfig::paper(G100));
        d.on_cnp(0); // R_C 50 G, R_T 100 G
        d.advance(55_000);
        assert_eq!(d.rate_bps(), 75e9);
        d.advance(2 * 55_000);
        assert_eq!(d.rate_bps(), 87.5e9);
        assert_eq!(d.target_bps(), 100e9, "no additive step before F = 5 timer events");
    }

    #[test]
    fn additive_then_hyper_increase_raise_the_target() {
        let cfg = DcqcnConfig { line_rate_bps: 1e12, ..DcqcnConfig::paper(G100) };
        let mut d = Dcqcn::new(cfg);
        d.on_cnp(0); // R_C 500 G, R_T 1 T
        d.on_cnp(1); // R_C ≈ 250 G, R_T 500 G
        let rt0 = d.target_bps();
        // Timer stages 1..4: fast recovery; 5: additive (+40 M).
        d.advance(1 + 5 * 55_000);
        assert_eq!(d.target_bps(), rt0 + 40e6);
        // Timer stage 6: a second additive step (the byte stage is still 0).
        d.advance(1 + 6 * 55_000);
        assert_eq!(d.target_bps(), rt0 + 80e6);
        // Byte stages 1..5: additive (the timer stage is past F, the byte stage is not); byte
        // stage 6: both past F, a hyper step.
        for _ in 0..6 {
            d.on_sent(1 + 6 * 55_000, cfg.byte_counter);
        }
        assert_eq!(d.target_bps(), rt0 + 80e6 + 5.0 * 40e6 + 400e6);
    }

    #[test]
    fn pacing_spaces_frames_at_the_current_rate() {
        let mut d = Dcqcn::new(DcqcnConfig::paper(G100));
        d.on_sent(0, 1250); // 10,000 bits at 100 G: 100 ns
        assert_eq!(d.next_send_at(), 100);
        d.on_cnp(100); // 50 G
        d.on_sent(100, 1250);
        assert_eq!(d.next_send_at(), 300);
    }

    #[test]
    fn the_rate_never_drops_below_the_floor_and_recovers_to_line_rate() {
        let mut d = Dcqcn::new(DcqcnConfig::paper(G100));
        for t in 0..40 {
            d.on_cnp(t);
        }
        assert_eq!(d.rate_bps(), G100 / 1000.0);
        d.advance(1_000_000_000);
        assert_eq!(d.rate_bps(), G100);
        assert_eq!(d.target_bps(), G100);
    }
}
