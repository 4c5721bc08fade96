//! The source ToR's retransmission rate and the pause toward the sender (NetRT paper §III-D):
//! with N bytes asked for, resend at line rate while N < K_l, else at
//! `R_r = max(R_max − (N − K_l)(R_max − R_min)/(K_h − K_l), R_min)`, and pause the sender with
//! standard PFC (802.1Qbb) while N ≥ K_l, so that the resends are not lost behind its traffic.

/// The resend rate, bits per second, for `n` bytes asked (`line_bps`: the port's rate).
pub fn resend_rate_bps(n: u64, cfg: &super::NetrtConfig, line_bps: u64) -> u64 {
    if n < cfg.k_low {
        return line_bps;
    }
    let (hi, lo) = (cfg.rate_max * line_bps as f64, cfg.rate_min * line_bps as f64);
    let span = cfg.k_high.saturating_sub(cfg.k_low).max(1) as f64;
    let r = hi - (n - cfg.k_low) as f64 * (hi - lo) / span;
    (r.max(lo) as u64).max(1)
}

/// PFC pause quanta (512 bit times of `line_bps` each) for the time `n` bytes take at `rate_bps`
/// (at least 1, at most 0xFFFF).
pub fn pause_quanta(n: u64, rate_bps: u64, line_bps: u64) -> u16 {
    // The time at `rate_bps`, in bit times of the port.
    let bit_times = (n as u128 * 8 * line_bps as u128).div_ceil(rate_bps.max(1) as u128);
    bit_times.div_ceil(512).clamp(1, 0xffff) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netrt::NetrtConfig;

    #[test]
    fn the_rate_steps_from_line_rate_to_half_and_falls_linearly_to_one_percent() {
        let cfg = NetrtConfig::paper(100_000_000_000, 5_000);
        let line = 100_000_000_000;
        assert_eq!(resend_rate_bps(19_999, &cfg, line), line);
        // At K_l: R_max = 50 %; half way (60 KB): (50 + 1) / 2 = 25.5 %; from K_h on: 1 %.
        assert_eq!(resend_rate_bps(20_000, &cfg, line), 50_000_000_000);
        assert_eq!(resend_rate_bps(60_000, &cfg, line), 25_500_000_000);
        assert_eq!(resend_rate_bps(100_000, &cfg, line), 1_000_000_000);
        assert_eq!(resend_rate_bps(1_000_000, &cfg, line), 1_000_000_000);
    }

    #[test]
    fn the_pause_lasts_as_long_as_the_asked_bytes_take() {
        // 20 KB at 50 Gbit/s on a 100 Gbit/s port: 3.2 µs; a quantum is 5.12 ns: 625 quanta.
        assert_eq!(pause_quanta(20_000, 50_000_000_000, 100_000_000_000), 625);
        assert_eq!(pause_quanta(10_000_000, 1_000_000, 100_000_000_000), 0xffff);
        assert_eq!(pause_quanta(0, 1, 100_000_000_000), 1);
    }
}
