//! What the wire tests share: the runs they judge.
#![allow(dead_code)]

use rocescope_sim::sim::{LossDir, Routing, TapPoint};
use rocescope_sim::synth::{OpChoice, SynthOptions};
use rocescope_stacks::StackKind;
use rocescope_wirecheck::run::{self, Run};

/// The scenarios of the wire tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// One path, no loss.
    Clean,
    /// One path, 2 % random loss on the fabric links in both directions, every op the stack has.
    Loss,
    /// Eight sprayed paths whose delays differ by up to 3 µs, 1 % loss; a third tap on path 0.
    Spray,
    /// A 4-to-1 incast into 16 KB switch queues (DCP: trimming), RTO 500 µs.
    Incast,
}

pub const SCENARIOS: [Scenario; 4] = [Scenario::Clean, Scenario::Loss, Scenario::Spray, Scenario::Incast];

/// `stack` in `s` with `seed`: 16 messages of 16 KB, taps at the sender and the receiver.
pub fn opts(stack: StackKind, s: Scenario, seed: u64) -> SynthOptions {
    let base = SynthOptions {
        stack,
        seed,
        messages: 16,
        message_size: 16 * 1024,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        time_limit_ns: 5_000_000_000,
        ..Default::default()
    };
    match s {
        Scenario::Clean => base,
        Scenario::Loss => SynthOptions { loss: 0.02, op: OpChoice::Mix, ..base },
        // With a tap on fabric path 0 too, which sees about one packet in eight.
        Scenario::Spray => SynthOptions {
            paths: 8,
            routing: Routing::Spray,
            reorder_ns: 3000,
            loss: 0.01,
            taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
            ..base
        },
        Scenario::Incast => {
            SynthOptions { incast: 4, queue_bytes: 16_384, trim: stack == StackKind::Dcp, rto_ns: Some(500_000), ..base }
        }
    }
}

/// Forward-only loss on one path: every loss is a data packet.
pub fn forward_loss(stack: StackKind, loss: f64, seed: u64) -> SynthOptions {
    SynthOptions { loss, loss_dir: LossDir::Forward, ..opts(stack, Scenario::Clean, seed) }
}

pub fn synth(o: &SynthOptions, name: &str) -> Run {
    let dir = run::temp_dir(name);
    let r = run::synth(o, &dir, name).unwrap_or_else(|e| panic!("{}: {e}", o.command_line()));
    // (Its files live as long as the run: tests read the capture after.)
    r.in_scratch(dir)
}

/// Runs, keeps nothing on disk.
pub fn synth_once(o: &SynthOptions, name: &str) -> Run {
    let r = synth(o, name);
    let _ = std::fs::remove_file(&r.pcap);
    let _ = std::fs::remove_file(&r.truth_path);
    if let Some(d) = r.pcap.parent() {
        let _ = std::fs::remove_dir(d);
    }
    r
}
