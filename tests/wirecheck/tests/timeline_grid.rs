//! Issue 10, acceptance 1, over a grid of simulated runs: gbn, irn and dcp (dcp trimmed, as
//! `synth --stack dcp` runs by default, and with its losses dropped on the wire); 1 and 3 % loss
//! on the fabric in both directions; one path and 4 sprayed paths of different delays; one
//! sender and a 4-to-1 incast; two seeds; taps at the sender, the receiver and in the fabric.
//! The timeline must equal the truth's observable view exactly; the share of facts each tap
//! cannot observe is printed (run with --nocapture).

use std::collections::BTreeMap;

use rocescope_sim::synth::SynthOptions;
use rocescope_sim::{LossMode, Routing, TapPoint};
use rocescope_stacks::StackKind;
use rocescope_wirecheck::{run, timeline_cmp};

fn options(stack: StackKind, loss: f64, paths: u32, incast: u32, seed: u64, trim: bool) -> SynthOptions {
    let base = if trim { SynthOptions::for_stack(stack) } else { SynthOptions::default() };
    SynthOptions {
        stack,
        loss,
        paths,
        reorder_ns: if paths > 1 { 1500 } else { 0 },
        routing: if paths > 1 { Routing::Spray } else { Routing::Ecmp },
        incast,
        messages: 12,
        message_size: 16_384,
        seed,
        taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
        loss_mode: if trim { base.loss_mode } else { LossMode::Drop },
        ..base
    }
}

#[test]
fn timeline_equals_the_observable_view_over_a_grid() {
    let dir = run::temp_dir("timeline-grid");
    let mut shares = BTreeMap::new();
    let mut bad = Vec::new();
    let (mut runs, mut equal) = (0, 0);
    for (stack, trim) in [(StackKind::Gbn, false), (StackKind::Irn, false), (StackKind::Dcp, true), (StackKind::Dcp, false)] {
        for loss in [0.01, 0.03] {
            for paths in [1, 4] {
                for incast in [1, 4] {
                    for seed in [1, 2] {
                        let o = options(stack, loss, paths, incast, seed, trim);
                        let label = format!("{}{} loss {loss} paths {paths} incast {incast} seed {seed}", stack.name(), if trim { "+trim" } else { "" });
                        let c = timeline_cmp::judge_synth(&o, &dir, "run", &mut shares).unwrap_or_else(|e| panic!("{label}: {e}"));
                        runs += 1;
                        equal += c.equal;
                        if !c.mismatches.is_empty() {
                            eprintln!("{label}: {} mismatches", c.mismatches.len());
                        }
                        bad.extend(c.mismatches.into_iter().take(5).map(|m| format!("{label}: {m}")));
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir(&dir);
    for (tap, s) in &shares {
        eprintln!("{}", s.line(tap));
    }
    eprintln!("{runs} runs, {equal} facts equal, {} mismatches shown", bad.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
