//! SDR-RDMA's analytical completion-time model (Khalilov et al., SDR-RDMA, §4.2 and
//! Appendices A-B; docs/stacks.md "SDR's model"): the oracle the `sdr-sr` and `sdr-ec` stacks are
//! checked against where the model is exact (independent chunk drops, no queueing, the first
//! pass over before the RTO).
//!
//! Selective repeat (§4.2.1): chunk `i` (1..=M) finishes its first injection at
//! `t_start(i) = i·T_INJ`; it takes `Y_i ~ Geom(1 − p)` transmissions, one every
//! `O = RTO + T_INJ`, so it arrives by `X_i = t_start(i) + O·(Y_i − 1)`; the message completes
//! one round trip after the last: `T_SR(M) ≥ max_i X_i + RTT`, with equality while the first pass
//! ends before the RTO (`M·T_INJ ≤ RTO`: no retransmission waits for another). Appendix A gives
//! its expectation as the tail sum of `P(max X_i ≥ q)`. [`sr_mean_ns`] integrates that step
//! function exactly: it changes only where one chunk's transmission count passes `j`, at
//! `t_start(i) + j·O`, so a sweep over those points (in order) keeps the product of
//! `1 − p^{j_i}` as a running sum of logarithms.
//!
//! Erasure coding (§4.2.3, Appendix B): `L = ⌈M/k⌉` data submessages of `k` chunks, each with `m`
//! parity chunks. A submessage is recoverable with probability `P_EC`: for an MDS code, at most
//! `m` of its `k + m` chunks lost; for XOR (parity `r` over the data chunks `j ≡ r mod m`), at
//! most one lost in each of the `m` groups of `k/m + 1`. The message falls back to selective
//! repeat with probability `1 − P_EC^L`; the mean completion time is at least
//! `(M + ⌈M·m/k⌉)·T_INJ + P_fallback·(RTT + β·RTT) + E[T_SR(round(L·(1 − P_EC)·k))]`.

/// The parameters of one message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SrModel {
    /// `M`: chunks in the message.
    pub chunks: u64,
    /// `T_INJ`: one chunk's injection time, ns (chunk bits over the link rate).
    pub t_inj_ns: f64,
    /// The round trip, ns.
    pub rtt_ns: f64,
    /// `RTO = RTT + α·RTT`: the paper's SR RTO runs use α = 2, its NACK runs α = 0.
    pub alpha: f64,
    /// `p`: a chunk's drop probability, independent per transmission.
    pub p_drop: f64,
}

impl SrModel {
    /// `RTO = RTT·(1 + α)`.
    pub fn rto_ns(&self) -> f64 {
        self.rtt_ns * (1.0 + self.alpha)
    }

    /// Whether the model is exact: the first pass ends before the RTO (§4.2.1).
    pub fn exact(&self) -> bool {
        self.chunks as f64 * self.t_inj_ns <= self.rto_ns()
    }
}

/// Transmission counts past which `p^j` is taken as 0 (below 1e-18 of the whole).
fn rounds(p: f64) -> u32 {
    if p <= 0.0 {
        return 0;
    }
    ((1e-18f64).ln() / p.ln()).ceil().clamp(1.0, 10_000.0) as u32
}

/// One chunk's next change: from `at` on, chunk `i` has had `j + 1` transmissions.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Step {
    at: f64,
    j: u32,
    i: u64,
}

impl Eq for Step {}

impl Ord for Step {
    /// The earliest first (a min-heap through [`std::collections::BinaryHeap`]'s max).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.at.total_cmp(&self.at).then(other.i.cmp(&self.i))
    }
}

impl PartialOrd for Step {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// `E[T_SR(M)]`, ns (Appendix A): exact for the model's assumptions; a lower bound when the
/// first pass outlasts the RTO. Infinite when a chunk is always dropped (`p ≥ 1`). Memory: one
/// pending step per chunk (a heap), whatever the drop rate.
pub fn sr_mean_ns(m: &SrModel) -> f64 {
    let chunks = m.chunks;
    if chunks == 0 {
        return m.rtt_ns;
    }
    let (t, o, p) = (m.t_inj_ns, m.rto_ns() + m.t_inj_ns, m.p_drop);
    let first_pass = chunks as f64 * t;
    if p <= 0.0 {
        return first_pass + m.rtt_ns;
    }
    if p >= 1.0 || o <= 0.0 {
        // (Never delivered; or resent with no time between, which the model does not cover.)
        return f64::INFINITY;
    }
    let jmax = rounds(p);
    // ln(1 − p^j) for j = 0..=jmax (j = 0: the chunk not yet sent, never reached here).
    let ln1m: Vec<f64> = (0..=jmax).map(|j| (-(p.powi(j as i32))).ln_1p()).collect();
    // Just past the first pass, chunk i has had j_i = ⌈(q − i·T)/O⌉ rounds (at least 1).
    let mut log_all = 0.0f64;
    let mut steps = std::collections::BinaryHeap::with_capacity(chunks.min(1 << 24) as usize);
    for i in 1..=chunks {
        let start = i as f64 * t;
        let j0 = (((first_pass - start) / o).floor() as u32 + 1).min(jmax);
        log_all += ln1m[j0 as usize];
        if j0 < jmax {
            steps.push(Step { at: start + j0 as f64 * o, j: j0, i });
        }
    }
    // ∫ P(max X ≥ q) dq: 1 over the first pass, then 1 − ∏(1 − p^{j_i}) between steps, in order.
    let mut sum = first_pass;
    let mut at = first_pass;
    while let Some(Step { at: q, j, i }) = steps.pop() {
        if q > at {
            sum += (q - at) * -log_all.exp_m1();
            at = q;
        }
        log_all += ln1m[j as usize + 1] - ln1m[j as usize];
        if j + 1 < jmax {
            steps.push(Step { at: i as f64 * t + (j + 1) as f64 * o, j: j + 1, i });
        }
    }
    // (Past the last step every chunk's p^j is below the cut: nothing left to add.)
    sum + m.rtt_ns
}

/// An erasure code over `k` data and `m` parity chunks per submessage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// Any `m` of the `k + m` chunks may be lost (Reed-Solomon).
    Mds { k: u32, m: u32 },
    /// Parity `r` is the XOR of the data chunks `j ≡ r (mod m)`: one loss per group of
    /// `k/m + 1` (k a multiple of m, m > 0; otherwise its probabilities are NaN).
    Xor { k: u32, m: u32 },
}

impl Code {
    pub fn k(self) -> u32 {
        match self {
            Code::Mds { k, .. } | Code::Xor { k, .. } => k,
        }
    }

    pub fn m(self) -> u32 {
        match self {
            Code::Mds { m, .. } | Code::Xor { m, .. } => m,
        }
    }

    /// `1 − P_EC`: a submessage is not recoverable when each chunk is lost with probability
    /// `p` (Appendix B; the MDS tail summed directly, not as 1 − the head, to keep its digits).
    pub fn p_fail(self, p: f64) -> f64 {
        match self {
            Code::Mds { k, m } => {
                let n = k + m;
                (m + 1..=n).map(|i| binomial(n, i) * p.powi(i as i32) * (1.0 - p).powi((n - i) as i32)).sum()
            }
            Code::Xor { k, m } => {
                // (Groups of k/m + 1 need k to be a multiple of m.)
                if m == 0 || k % m != 0 {
                    return f64::NAN;
                }
                let n = (k / m + 1) as i32;
                let group_ok = (1.0 - p).powi(n) + n as f64 * p * (1.0 - p).powi(n - 1);
                1.0 - group_ok.powi(m as i32)
            }
        }
    }

    /// `P_EC`: a submessage is recoverable.
    pub fn p_ok(self, p: f64) -> f64 {
        1.0 - self.p_fail(p)
    }
}

/// `C(n, i)` as a float.
fn binomial(n: u32, i: u32) -> f64 {
    let i = i.min(n - i);
    (0..i).fold(1.0, |c, j| c * (n - j) as f64 / (j + 1) as f64)
}

/// One erasure-coded message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcModel {
    /// The message as selective repeat would send it (its `alpha` is the fallback's RTO).
    pub sr: SrModel,
    pub code: Code,
    /// `β`: the fallback timeout's share of the round trip. The paper leaves it undefined; its
    /// §4.1.2 form of the fallback timeout reads as `β = α/2`.
    pub beta: f64,
}

impl EcModel {
    /// `L = ⌈M/k⌉` data submessages.
    pub fn submessages(&self) -> u64 {
        self.sr.chunks.div_ceil(self.code.k() as u64)
    }

    /// `P_fallback = 1 − P_EC^L`: some submessage cannot be recovered.
    pub fn p_fallback(&self) -> f64 {
        let l = self.submessages() as f64;
        // 1 − (1 − f)^L, kept exact for small f.
        -(l * (-self.code.p_fail(self.sr.p_drop)).ln_1p()).exp_m1()
    }

    /// Submessages expected to fail, `L·(1 − P_EC)`.
    pub fn expected_failures(&self) -> f64 {
        self.submessages() as f64 * self.code.p_fail(self.sr.p_drop)
    }

    /// The lower bound on `E[T_EC(M)]`, ns (§4.2.3). Parity counted as the paper does,
    /// `⌈M/R⌉ = ⌈M·m/k⌉` chunks (a short last submessage, padded for encoding, sends its m parity
    /// chunks all the same: the bound stays a bound), each failed submessage resent as k chunks.
    pub fn mean_lower_bound_ns(&self) -> f64 {
        let (k, m) = (self.code.k() as u64, self.code.m() as u64);
        let parity = (self.sr.chunks * m).div_ceil(k);
        let inject = (self.sr.chunks + parity) as f64 * self.sr.t_inj_ns;
        let resent = (self.expected_failures() * k as f64).round() as u64;
        let fallback = SrModel { chunks: resent, ..self.sr };
        inject + self.p_fallback() * (self.sr.rtt_ns + self.beta * self.sr.rtt_ns) + sr_mean_ns(&fallback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's long-haul case (§5): 400 Gbit/s, 25 ms RTT, a 128 MiB message in 64 KiB
    /// chunks (M = 2048, T_INJ = 1.31072 µs).
    fn long_haul(p: f64, alpha: f64) -> SrModel {
        SrModel { chunks: 2048, t_inj_ns: 65_536.0 * 8.0 / 400.0, rtt_ns: 25e6, alpha, p_drop: p }
    }

    fn close(got: f64, want: f64, rel: f64) -> bool {
        (got - want).abs() <= want.abs() * rel
    }

    #[test]
    fn with_no_drop_the_message_takes_its_injection_and_one_round_trip() {
        let m = long_haul(0.0, 2.0);
        assert!(close(sr_mean_ns(&m), 2048.0 * 1310.72 + 25e6, 1e-12));
        assert_eq!(sr_mean_ns(&SrModel { chunks: 0, ..m }), 25e6);
    }

    #[test]
    fn the_sr_mean_agrees_with_the_independently_evaluated_values() {
        // (Values of Appendix A's sum worked out separately in the project's reading of the
        // paper, to the microsecond.)
        for (p, alpha, want_ms) in [
            (1e-5, 2.0, 29.178),
            (1e-4, 2.0, 41.336),
            (1e-3, 2.0, 92.379),
            (1e-2, 2.0, 116.384),
            (1e-5, 0.0, 28.164),
            (1e-4, 0.0, 32.075),
            (1e-3, 0.0, 48.719),
            (1e-2, 0.0, 57.021),
        ] {
            let got = sr_mean_ns(&long_haul(p, alpha)) / 1e6;
            assert!((got - want_ms).abs() < 0.0015, "p {p} α {alpha}: {got} ms, want {want_ms}");
        }
        // 4 KiB chunks: M = 32768, T_INJ = 81.92 ns.
        for (p, alpha, want_ms) in [(1e-4, 2.0, 99.191), (1e-2, 2.0, 176.585), (1e-4, 0.0, 51.062), (1e-2, 0.0, 76.844)]
        {
            let m = SrModel { chunks: 32768, t_inj_ns: 81.92, ..long_haul(p, alpha) };
            let got = sr_mean_ns(&m) / 1e6;
            assert!((got - want_ms).abs() < 0.0015, "4 KiB p {p} α {alpha}: {got} ms, want {want_ms}");
        }
    }

    #[test]
    fn the_sr_mean_is_the_mean_of_a_monte_carlo_of_the_same_model() {
        // Chunk i arrives at i·T + O·(Y_i − 1), Y_i geometric; the message one RTT after the
        // last. A small message where the model is exact, 20,000 samples.
        let m = SrModel { chunks: 64, t_inj_ns: 1000.0, rtt_ns: 30_000.0, alpha: 2.0, p_drop: 0.05 };
        assert!(m.exact());
        let mut rng = crate::rng::Rng::new(7, 0);
        let o = m.rto_ns() + m.t_inj_ns;
        let n = 20_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let mut last = 0.0f64;
            for i in 1..=m.chunks {
                let mut y = 1.0;
                while rng.chance(m.p_drop) {
                    y += 1.0;
                }
                last = last.max(i as f64 * m.t_inj_ns + o * (y - 1.0));
            }
            sum += last + m.rtt_ns;
        }
        let mc = sum / n as f64;
        let exact = sr_mean_ns(&m);
        assert!(close(mc, exact, 0.01), "Monte Carlo {mc} ns, Appendix A {exact} ns");
    }

    #[test]
    fn odd_inputs_give_no_number_rather_than_a_wrong_one() {
        assert_eq!(sr_mean_ns(&long_haul(1.0, 2.0)), f64::INFINITY);
        let none = SrModel { chunks: 4, t_inj_ns: 0.0, rtt_ns: 0.0, alpha: 2.0, p_drop: 0.5 };
        assert_eq!(sr_mean_ns(&none), f64::INFINITY);
        assert!(Code::Xor { k: 32, m: 0 }.p_fail(0.01).is_nan());
        assert!(Code::Xor { k: 30, m: 8 }.p_fail(0.01).is_nan());
        // A high drop rate over many chunks: one pending step per chunk, not one per round.
        let many = SrModel { chunks: 100_000, t_inj_ns: 10.0, rtt_ns: 1e6, alpha: 0.0, p_drop: 0.5 };
        assert!(sr_mean_ns(&many).is_finite());
    }

    #[test]
    fn the_codes_fail_as_appendix_b_says() {
        let mds = Code::Mds { k: 32, m: 8 };
        let xor = Code::Xor { k: 32, m: 8 };
        assert!(close(mds.p_ok(1e-2), 0.999999999793, 1e-12));
        assert!(close(mds.p_ok(1e-1), 0.984504694586, 1e-11));
        assert!(close(xor.p_ok(1e-3), 0.999920162669, 1e-11));
        assert!(close(xor.p_ok(1e-2), 0.992185649944, 1e-11));
        // 128 MiB in 64 KiB chunks, k = 32: L = 64 submessages.
        let ec = |code, p| EcModel { sr: long_haul(p, 2.0), code, beta: 1.0 };
        assert_eq!(ec(xor, 1e-3).submessages(), 64);
        assert!(close(ec(xor, 1e-3).p_fallback(), 5.10e-3, 0.01));
        assert!(close(ec(xor, 1e-2).p_fallback(), 0.395, 0.01));
        assert!(close(ec(mds, 1e-2).p_fallback(), 1.32e-8, 0.01));
        assert!(close(ec(mds, 5e-2).p_fallback(), 8.26e-3, 0.01));
    }

    #[test]
    fn the_ec_bound_is_injection_and_a_round_trip_while_nothing_falls_back() {
        let mds = Code::Mds { k: 32, m: 8 };
        for p in [1e-4, 1e-3, 1e-2] {
            let e = EcModel { sr: long_haul(p, 2.0), code: mds, beta: 1.0 };
            // (2048 + 512) chunks injected, then the ACK's round trip.
            assert!((e.mean_lower_bound_ns() / 1e6 - 28.355).abs() < 0.001, "p {p}");
        }
        let e = EcModel { sr: long_haul(1e-1, 2.0), code: mds, beta: 1.0 };
        assert!((e.mean_lower_bound_ns() / 1e6 - 155.66).abs() < 0.01, "{}", e.mean_lower_bound_ns() / 1e6);
    }
}
