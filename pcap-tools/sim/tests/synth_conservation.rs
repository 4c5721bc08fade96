//! Conservation on the simulated fabric (issue 4, acceptance 2): for each reference stack and
//! many seeds, under random and bursty loss up to 5 %, packet spraying across 8 paths with
//! different delays, and (DCP) trimming under an incast, every message posted is delivered
//! exactly once with the right bytes and completes exactly once; nothing is delivered twice and
//! no connection gives up; the ground truth's summary and messages say so too.

use rocescope_sim::sim::{Fabric, LossDir, LossMode, Routing, TapPoint};
use rocescope_sim::synth::{self, simulate, OpChoice, SynthOptions};
use rocescope_stacks::StackKind;

/// Seeds per scenario (ROCESCOPE_SYNTH_SEEDS overrides, for longer soak runs).
fn seeds() -> u64 {
    std::env::var("ROCESCOPE_SYNTH_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(12)
}

fn check(label: &str, opts: &SynthOptions) -> Fabric<'static> {
    let f = simulate(opts, None, false, None).unwrap();
    let ctx = || format!("{label}: {}", opts.command_line());
    assert!(!f.stats.timed_out, "{}: time limit reached", ctx());
    for (ci, c) in f.conns.iter().enumerate() {
        assert!(c.failed.is_none(), "{}: connection {ci} failed: {:?}", ctx(), c.failed);
        assert_eq!(c.messages.len(), opts.messages as usize);
        for (mi, m) in c.messages.iter().enumerate() {
            assert_eq!(m.delivered.len(), 1, "{}: conn {ci} message {mi} delivered {} times", ctx(), m.delivered.len());
            let (_, len, intact) = m.delivered[0];
            assert!(intact, "{}: conn {ci} message {mi} delivered with wrong bytes", ctx());
            assert_eq!(len, m.msg.len, "{}: conn {ci} message {mi} length", ctx());
            assert_eq!(m.completed.len(), 1, "{}: conn {ci} message {mi} completed {} times", ctx(), m.completed.len());
            let (d, c) = (m.delivered[0].0, m.completed[0]);
            if m.msg.op != rocescope_stacks::Op::Read {
                assert!(d <= c, "{}: conn {ci} message {mi} completed before it was delivered", ctx());
            }
        }
        // The responder delivers in order (RC semantics; READ data arrives at the other end).
        let times: Vec<u64> =
            c.messages.iter().filter(|m| m.msg.op != rocescope_stacks::Op::Read).map(|m| m.delivered[0].0).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{}: conn {ci} delivered out of order", ctx());
    }
    // The ground truth (typed, `rocescope_sim::truth::Truth`) says the same.
    let t = synth::truth(opts, &f);
    let n = (opts.incast * opts.messages) as u64;
    let s = &t.summary;
    assert_eq!((s.messages, s.delivered_once, s.completed, s.failed_connections), (n, n, n, 0), "{}", ctx());
    for m in &t.sim.messages {
        assert!(m.deliveries == 1 && m.intact && m.completions == 1, "{}: truth: {m:?}", ctx());
    }
    f
}

fn base(stack: StackKind, seed: u64) -> SynthOptions {
    SynthOptions {
        stack,
        seed,
        messages: 12,
        message_size: 6000,
        taps: vec![TapPoint::Sender],
        time_limit_ns: 2_000_000_000,
        ..Default::default()
    }
}

fn each_stack(mut f: impl FnMut(StackKind, u64)) {
    for stack in StackKind::RC {
        for seed in 1..=seeds() {
            f(stack, seed);
        }
    }
}

#[test]
fn random_loss_up_to_5_percent() {
    each_stack(|stack, seed| {
        for loss in [0.01, 0.05] {
            let o = SynthOptions { loss, op: OpChoice::Mix, ..base(stack, seed) };
            check("random loss", &o);
        }
    });
}

#[test]
fn bursty_loss() {
    each_stack(|stack, seed| {
        let o = SynthOptions { burst_loss: Some((0.01, 0.3)), loss: 0.005, ..base(stack, seed) };
        check("bursty loss", &o);
    });
}

#[test]
fn loss_of_acks_only_and_at_the_edges() {
    each_stack(|stack, seed| {
        let o = SynthOptions { loss: 0.05, loss_dir: LossDir::Reverse, ..base(stack, seed) };
        check("reverse-path loss", &o);
        let o = SynthOptions { loss: 0.03, loss_on: rocescope_sim::LossPlace::Receiver, ..base(stack, seed) };
        check("receiver-link loss", &o);
    });
}

#[test]
fn spraying_across_8_paths_with_reordering_and_loss() {
    each_stack(|stack, seed| {
        for (loss, routing) in [(0.0, Routing::Spray), (0.05, Routing::Spray), (0.02, Routing::Adaptive)] {
            let o = SynthOptions { paths: 8, reorder_ns: 3000, routing, loss, op: OpChoice::Mix, ..base(stack, seed) };
            check("spraying", &o);
        }
    });
}

#[test]
fn dcp_trimming_under_incast_with_loss_and_spraying() {
    for seed in 1..=seeds() {
        let o = SynthOptions {
            incast: 4,
            trim: true,
            queue_bytes: 16_384,
            paths: 8,
            reorder_ns: 2000,
            routing: Routing::Spray,
            loss: if seed % 2 == 0 { 0.02 } else { 0.0 },
            op: OpChoice::Mix,
            rto_ns: Some(500_000),
            ..base(StackKind::Dcp, seed)
        };
        let f = check("trimming", &o);
        assert!(f.stats.trimmed > 0, "seed {seed}: nothing trimmed");
    }
}

#[test]
fn gbn_and_irn_under_incast_drops() {
    for stack in [StackKind::Gbn, StackKind::Irn] {
        for seed in 1..=seeds() / 2 {
            let o = SynthOptions { incast: 4, queue_bytes: 16_384, rto_ns: Some(500_000), ..base(stack, seed) };
            let f = check("incast drops", &o);
            assert!(f.stats.dropped > 0, "{}: seed {seed}: nothing dropped", stack.name());
        }
    }
}

#[test]
fn dcp_under_the_papers_switch_loss_and_on_the_wire() {
    // `--loss-mode trim` (the default for dcp: loss made at the switch trims DCP data, seed 000
    // §6.1/§6.3) and `drop` (wire loss), with trimming on as `synth --stack dcp` has it.
    let modes = [(LossMode::Trim, 0.01), (LossMode::Trim, 0.05), (LossMode::Drop, 0.05)];
    let mut trimmed = [0u64; 3];
    for seed in 1..=seeds() {
        for (k, &(loss_mode, loss)) in modes.iter().enumerate() {
            let o = SynthOptions { trim: true, loss_mode, loss, op: OpChoice::Mix, ..base(StackKind::Dcp, seed) };
            trimmed[k] += check("dcp loss mode", &o).stats.trimmed;
        }
    }
    // Without congestion only the switch's random loss trims.
    assert!(trimmed[0] > 0 && trimmed[1] > trimmed[0] && trimmed[2] == 0, "{trimmed:?}");
}
