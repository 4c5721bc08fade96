//! Shared helpers of the `stacks_*` tests: connections, workloads and runs on
//! `rocescope_stacks::harness`.
#![allow(dead_code)]

use rocescope_stacks::harness::{Fate, FateCtx, Harness, RandomFate, RunEnd, Side, TestRng};
use rocescope_stacks::{ConnConfig, Message, Nanos, Op, RetxReason, StackKind};

/// One-way link delay of the tests (5 µs: a 10 µs RTT, the paper's intra-DC setting, §4.5).
pub const DELAY: Nanos = 5_000;
/// Simulated-time limit of a run.
pub const LIMIT: Nanos = 2_000_000_000;

/// A connection with a start PSN near the 2^24 wrap, so every run crosses it.
pub fn conn(seed: u64) -> ConnConfig {
    let mut c = ConnConfig::ipv4(([10, 0, 0, 1], 0x11), ([10, 0, 0, 2], 0x22));
    c.start_psn = 0xff_ff00 + (seed % 200) as u32;
    c.mtu = 256;
    c.bdp_packets = 32;
    c.timeouts = rocescope_stacks::Timeouts::default();
    c
}

/// `n` messages of the given ops, lengths 0 ..= `max_len`.
pub fn workload(rng: &mut TestRng, n: u64, ops: &[Op], max_len: u32) -> Vec<Message> {
    (0..n)
        .map(|id| {
            let op = ops[rng.below(ops.len() as u64) as usize];
            let len = match rng.below(8) {
                0 => 0,
                1 => 1 + rng.below(16) as u32,
                _ => rng.below(max_len as u64 + 1) as u32,
            };
            Message { id, op, len }
        })
        .collect()
}

/// Posts `msgs` (a few at time 0, the rest spread over the first `spread` ns) and runs.
pub fn run(mut h: Harness, msgs: &[Message], spread: Nanos, rng: &mut TestRng) -> Harness {
    let mut at = 0;
    for (i, m) in msgs.iter().enumerate() {
        if i > 4 && spread > 0 {
            at += rng.below(2 * spread / msgs.len().max(1) as u64 + 1);
        }
        h.post(at, *m);
    }
    let end = h.run(LIMIT);
    assert_eq!(end, RunEnd::Idle, "run did not finish");
    wire_check(&h);
    h
}

/// The run judged from its frames (`rocescope_wirecheck::harness_wire`: every message rebuilt
/// from the bytes and acknowledged, no resend of an acknowledged PSN, Go-Back-N's go-back
/// points), not from the stacks' labels.
pub fn wire_check(h: &Harness) {
    if let Err(e) = rocescope_wirecheck::harness_wire::check(h) {
        panic!("{}: wire: {e}", h.name);
    }
}

/// A run of `kind` over `msgs` with a random fate.
pub fn random_run(kind: StackKind, cfg: &ConnConfig, msgs: &[Message], fate: RandomFate) -> Harness {
    let mut rng = TestRng(fate.seed ^ 0xabcd);
    let h = Harness::new(kind, cfg, DELAY).with_fate(fate.into_fn());
    run(h, msgs, 50_000, &mut rng)
}

/// Conservation and frame checks (and, in `run`, the wire checks) over `seeds` random runs (loss up to `max_loss`, random
/// reordering, and trimming for DCP).
pub fn conservation(kind: StackKind, ops: &[Op], seeds: u64, max_loss: f64, trim: bool) {
    let mut stats = (0usize, 0usize, 0usize, 0usize);
    for seed in 0..seeds {
        let mut rng = TestRng(seed.wrapping_mul(0x51_7cc1_b727_220a) ^ kind as u64);
        let cfg = conn(seed);
        let n = 12 + rng.below(30);
        let msgs = workload(&mut rng, n, ops, 6 * cfg.mtu + 7);
        let loss = max_loss * (seed % 6) as f64 / 5.0;
        let fate = RandomFate {
            seed,
            loss,
            trim: if trim { 0.05 * (seed % 3) as f64 } else { 0.0 },
            reorder: if seed % 4 == 0 { 0.0 } else { 0.3 },
            jitter_ns: 4 * DELAY,
        };
        let h = random_run(kind, &cfg, &msgs, fate);
        if let Err(e) = h.check_conservation() {
            panic!("{} seed {seed} (loss {loss}): {e}", kind.name());
        }
        if let Err(e) = h.check_frames() {
            panic!("{} seed {seed}: {e}", kind.name());
        }
        stats.0 += h.txs().len();
        stats.1 += h.txs().iter().filter(|t| t.info.retx.is_some()).count();
        stats.2 += h.posted().len();
        stats.3 += h.count_retx(Side::Requester, RetxReason::Timeout);
    }
    eprintln!(
        "{}: {seeds} runs, {} messages, {} frames, {} retransmissions ({} on timeout)",
        kind.name(),
        stats.2,
        stats.0,
        stats.1,
        stats.3
    );
    assert!(stats.1 > 0, "{}: no retransmission in any run: the loss was not exercised", kind.name());
}

/// Drops the first transmission of the given requester PSNs (by PSN offset from the start).
pub fn drop_first_tx_of(start_psn: u32, offsets: &'static [u32]) -> impl FnMut(&FateCtx<'_>) -> Fate {
    let mut done = std::collections::HashSet::new();
    move |ctx| {
        if ctx.from == Side::Requester && ctx.info.retx.is_none() && ctx.info.msg.is_some() {
            let off = ctx.info.psn.wrapping_sub(start_psn) & 0xff_ffff;
            if offsets.contains(&off) && done.insert(off) {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    }
}

/// Requester retransmissions with `reason`.
pub fn retx(h: &Harness, reason: RetxReason) -> usize {
    h.count_retx(Side::Requester, reason)
}
