//! Issue 10, acceptance 1, over a larger grid than CI's slice (`tests/timeline_grid.rs`): the
//! timeline against the truth's observable view on every stack (DCP trimmed, as `synth --stack
//! dcp` runs by default, and with drops) × loss × paths × senders × seed, taps at the sender,
//! the receiver and in the fabric, on the dumbbell and (`--leaf-spine`) the issue-9 grid's
//! leaf-spine; and ERD (issue 13), its loss in both directions (its NACKs are TCP segments
//! that may be lost too). (NetRT has its own grid in CI's slice: it needs a leaf-spine's ToRs.) One line per run (facts compared, mismatches), then per tap the share of facts it
//! cannot observe and of observable retransmissions whose cause it cannot tell. Exits non-zero
//! on any mismatch. `scripts/timeline-grid.sh` runs it and logs to docs/logs/timeline-grid.log.
//!
//! ```text
//! cargo run --release -p rocescope-wirecheck --example timeline_grid -- [--seeds 1,2,3,4,5] [--messages 32] [--leaf-spine] [--only LABEL-PART] [--sdr-chunk N]
//! ```
//! `ROCESCOPE_KEEP=1` keeps the capture and truth of a run with mismatches (its path is printed).
//! ```text
//! ```

use std::collections::BTreeMap;

use rocescope_sim::sim::TopologyKind;
use rocescope_stacks::StackKind;
use rocescope_wirecheck::{grid, run, timeline_cmp};

fn main() {
    let mut seeds: Vec<u64> = vec![1, 2, 3, 4, 5];
    let mut messages = 32u32;
    let mut message_size: Option<u32> = None;
    let mut leaf_spine = false;
    let mut only: Option<String> = None;
    let mut sdr_chunk = 1u32;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seeds" => seeds = args.next().unwrap_or_default().split(',').filter_map(|x| x.parse().ok()).collect(),
            "--messages" => messages = args.next().and_then(|x| x.parse().ok()).unwrap_or(messages),
            "--message-size" => message_size = args.next().and_then(|x| x.parse().ok()),
            "--leaf-spine" => leaf_spine = true,
            "--only" => only = args.next(),
            "--sdr-chunk" => sdr_chunk = args.next().and_then(|x| x.parse().ok()).unwrap_or(1),
            _ => {
                eprintln!(
                    "usage: timeline_grid [--seeds 1,2,3] [--messages N] [--message-size BYTES] [--leaf-spine] [--only TEXT] [--sdr-chunk N]"
                );
                std::process::exit(2);
            }
        }
    }
    let dir = run::temp_dir("timeline-grid");
    let mut shares = BTreeMap::new();
    let (mut runs, mut bad_runs, mut equal) = (0, 0, 0u64);
    let stacks = [
        (StackKind::Gbn, false),
        (StackKind::Irn, false),
        (StackKind::Dcp, true),
        (StackKind::Dcp, false),
        (StackKind::Erd, false),
        (StackKind::SdrSr, false),
        (StackKind::SdrEc, false),
        (StackKind::Flor, false),
    ];
    for (stack, trim) in stacks {
        for loss in [0.0, 0.001, 0.01, 0.05] {
            for paths in [1u32, 4] {
                for incast in [1u32, 4] {
                    for &seed in &seeds {
                        let mut o = timeline_cmp::grid_options(stack, trim, loss, paths, incast, messages, seed);
                        o.message_size = message_size.unwrap_or(o.message_size);
                        if stack == StackKind::Erd {
                            o.loss_dir = rocescope_sim::LossDir::Both;
                        }
                        // SDR: loss both ways; two channels on odd seeds, the SR_NACK variant
                        // with more than one sender.
                        if stack == StackKind::SdrSr {
                            o.loss_dir = rocescope_sim::LossDir::Both;
                            o.sdr.channels = 1 + (seed % 2) as u32;
                            o.sdr.nack = incast > 1;
                        }
                        // SDR-EC: loss both ways; XOR(4, 1) with one channel on odd seeds (a
                        // second loss in a submessage falls back), MDS(8, 2) with two on even.
                        // `--sdr-chunk N`: SDR's chunks of N packets (its bitmaps and NACKs name
                        // chunks).
                        o.sdr.chunk_packets = sdr_chunk;
                        if stack == StackKind::SdrEc {
                            use rocescope_stacks::sdr::Code;
                            o.loss_dir = rocescope_sim::LossDir::Both;
                            (o.sdr.code, o.sdr.k, o.sdr.m, o.sdr.channels) =
                                if seed % 2 == 1 { (Code::Xor, 4, 1, 1) } else { (Code::Mds, 8, 2, 2) };
                        }
                        // Flor: loss both ways (its ACKs are lost too); large messages (WRITE
                        // chunks, WRITE_RETX pieces, ADDR_REQs) on odd seeds, small ones (SENDs)
                        // on even; UC wants a QP's packets in order: more than one path is
                        // ECMP, not sprayed.
                        if stack == StackKind::Flor {
                            o.loss_dir = rocescope_sim::LossDir::Both;
                            o.routing = rocescope_sim::Routing::Ecmp;
                            o.mtu = 1024;
                            o.message_size = message_size.unwrap_or(if seed % 2 == 1 { 100_000 } else { 8_192 });
                        }
                        if leaf_spine {
                            o.topology = TopologyKind::LeafSpine {
                                leaves: grid::LEAVES,
                                spines: if paths > 1 { paths } else { grid::ECMP_SPINES },
                                hosts_per_leaf: grid::HOSTS_PER_LEAF,
                            };
                            o.pattern = grid::LEAF_SPINE_PATTERN;
                            // Its paths are its spines (sprayed when more than one path).
                            o.paths = 1;
                            o.reorder_ns = 0;
                        }
                        let label = format!(
                            "{}{}{}{} loss {loss} paths {paths} incast {incast} seed {seed}",
                            if leaf_spine { "leaf-spine " } else { "" },
                            stack.name(),
                            if trim { "+trim" } else { "" },
                            if stack.is_sdr() && sdr_chunk > 1 { format!(" chunk {sdr_chunk}") } else { String::new() }
                        );
                        if only.as_ref().is_some_and(|o| !label.contains(o.as_str())) {
                            continue;
                        }
                        runs += 1;
                        match timeline_cmp::judge_synth(&o, &dir, "run", &mut shares) {
                            Ok(c) => {
                                equal += c.equal;
                                println!("{label}: {} facts equal, {} mismatches", c.equal, c.mismatches.len());
                                let show = std::env::var("SHOW").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
                                for m in c.mismatches.iter().take(show) {
                                    println!("  {m}");
                                }
                                if !c.mismatches.is_empty() {
                                    bad_runs += 1;
                                }
                            }
                            Err(e) => {
                                bad_runs += 1;
                                println!("{label}: {e}");
                            }
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir(&dir);
    for (tap, s) in &shares {
        println!("# {}", s.line(tap));
    }
    println!("# {runs} runs, {bad_runs} with mismatches, {equal} facts equal");
    std::process::exit(if bad_runs == 0 { 0 } else { 1 });
}
