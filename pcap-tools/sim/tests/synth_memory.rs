//! Without the ground truth the simulator keeps a transmission's record only while its frame is
//! in flight: the records it holds are bounded by what the wire and the queues hold, not by the
//! length of the run.

use rocescope_sim::synth::{simulate, SynthOptions};
use rocescope_stacks::StackKind;

#[test]
fn without_the_truth_transmission_records_are_recycled() {
    for stack in StackKind::RC {
        let opts = SynthOptions { stack, messages: 2000, loss: 0.01, seed: 3, ..Default::default() };
        let f = simulate(&opts, None, false, None).unwrap();
        let s = f.stats;
        assert!(s.transmissions > 8000, "{stack:?}: {s:?}");
        // The window (128 packets) and the ACKs in flight, far below the transmissions.
        assert!(f.txs.len() < 1000, "{stack:?}: {} records kept for {} transmissions", f.txs.len(), s.transmissions);
        assert_eq!(f.unfinished(), vec![], "{stack:?}");
        // With the truth every record stays.
        let small = SynthOptions { messages: 200, ..opts };
        let f = simulate(&small, None, true, None).unwrap();
        assert_eq!(f.txs.len() as u64, f.stats.transmissions, "{stack:?}");
    }
}

/// Issue 9: memory bounded by live state with `--truth` too. `rocescope synth --truth` spills
/// every transmission record (once final) and every tap frame to temporary files
/// (`Keep::Disk`, docs/truth.md "Memory") and derives the truth from them. The proxy for its
/// memory, deterministic where the process's resident size is not: the records of the run's
/// own size it holds in memory — the simulator's transmission slots (what is in flight), its
/// tap frames, and Flor's WQE and ACK records; the truth's derivation holds none
/// (`TruthStats::in_memory`; Flor's index keeps its records on disk, `truth/flor.rs`). Ten times the
/// messages must stay within 1.5× of that, while the records the truth covers grow tenfold.
#[test]
fn with_the_truth_spilled_records_in_memory_do_not_grow_with_the_run() {
    use rocescope_sim::synth::{simulate_keeping, Keep};
    use rocescope_sim::truth::write_truth_stats;

    let held = |opts: &SynthOptions, keep: Keep| {
        let f = simulate_keeping(opts, None, keep, None).unwrap();
        assert_eq!(f.unfinished(), vec![], "{}", opts.command_line());
        let mut out = std::io::sink();
        let s = write_truth_stats(&f, &opts.command_line(), &opts.truth_config(&f.cfg), &mut out).unwrap();
        if keep == Keep::Disk {
            assert_eq!(s.in_memory, 0, "{}", opts.command_line());
        }
        // (Flor's records too: its WQEs as sent and as closed, its ACKs' GNs.)
        let flor = f.flor_sent.len() + f.flor_wqes.len() + f.flor_acks.len();
        (f.txs.len() as u64 + f.tap_frames.len() as u64 + flor as u64, s.records)
    };
    // (Flor's sender exchanges addresses for every message posted at once: those ADDR_REQs are
    // in flight together. Posted one every 10 µs, the run's live state is a few messages'.)
    let runs = [(StackKind::Gbn, 4096, 1000, 0), (StackKind::Dcp, 16384, 300, 0), (StackKind::Flor, 65536, 60, 10_000)];
    for (stack, size, small, post_interval_ns) in runs {
        let opts = |messages| SynthOptions {
            stack,
            messages,
            message_size: size,
            loss: 0.01,
            seed: 3,
            post_interval_ns,
            ..Default::default()
        };
        let (a, b) = (opts(small), opts(small * 10));
        let ((held_a, records_a), (held_b, records_b)) = (held(&a, Keep::Disk), held(&b, Keep::Disk));
        assert!(records_b > 9 * records_a, "{stack:?}: the truth covers {records_a} then {records_b} records");
        assert!(
            held_b * 2 <= held_a * 3,
            "{stack:?}: {held_a} records in memory for {small} messages, {held_b} for ten times as many"
        );
        // Kept in memory instead, the same proxy grows with the run: the check can fail.
        let (mem_a, mem_b) = (held(&a, Keep::Memory).0, held(&b, Keep::Memory).0);
        assert!(mem_b * 2 > mem_a * 3 && mem_a > 10 * held_a, "{stack:?}: in memory {mem_a} then {mem_b}");
    }
}
