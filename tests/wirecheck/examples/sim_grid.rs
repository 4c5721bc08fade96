//! Issue 9's grid (acceptance 2), judged from the wire: each stack × loss × paths × seed runs
//! `synth` (taps at the sender and the receiver), and `rocescope_wirecheck::verdict` checks the
//! invariants on the capture and its truth (`rocescope_wirecheck::grid`); the first seed of each
//! stack × loss × paths runs twice and must write the same bytes. One line per run, a summary
//! at the end; exits non-zero if any run broke an invariant. `scripts/sim-grid.sh` runs the
//! whole grid and logs it.
//!
//! ```text
//! cargo run --release -p rocescope-wirecheck --example sim_grid -- \
//!     [--stacks gbn,irn,dcp] [--losses 0,0.001,0.01,0.05] [--paths 1,8] [--seeds 1,2,3] \
//!     [--messages 64] [--message-size 65536] [--reorder 2000] \
//!     [--topology dumbbell,leaf-spine] [--dcp-trim] [--sdr-chunk N] [--keep DIR]
//! ```
//! `--dcp-trim`: DCP with trimming and `--loss-mode trim`, as `rocescope synth --stack dcp`
//! runs by default (its lines say `dcp+trim`); without it DCP's random losses are drops.
//! On the dumbbell `--paths 1` is one fabric path (ECMP); more paths are sprayed per packet
//! with path delays `delay + reorder·k/(paths−1)`. On the leaf-spine (3 leaves × 2 hosts, a
//! permutation: `rocescope_wirecheck::grid`) `--paths 1` is 4 spines under ECMP, more paths
//! that many spines sprayed. Leaf-spine lines start with `leaf-spine` and end their numbers
//! with `conns B/R/S/N first A>B`: connections judged at both ends, at the requester only, at
//! the responder only, not at all (the taps watch the first connection's two hosts), and that
//! first connection; their `completed/messages` counts the connections whose requester is
//! tapped, `retx/loss` the connections with both ends tapped.

use std::path::PathBuf;
use std::time::Instant;

use rocescope_stacks::StackKind;
use rocescope_wirecheck::grid::{self, Cell, Topology};
use rocescope_wirecheck::run;

fn list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn main() {
    let mut stacks = vec![StackKind::Gbn, StackKind::Irn, StackKind::Dcp];
    let (mut losses, mut paths, mut seeds) = (vec![0.0, 0.001, 0.01, 0.05], vec![1u32, 8], vec![1u64, 2, 3]);
    let (mut messages, mut size, mut reorder) = (64u32, 65536u32, 2000u64);
    let mut topologies = vec![Topology::Dumbbell];
    let mut keep: Option<PathBuf> = None;
    let mut dcp_trim = false;
    let mut sdr_chunk = 1u32;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--stacks" => stacks = v.split(',').filter_map(StackKind::from_name).collect(),
            "--losses" => losses = list(&v),
            "--paths" => paths = list(&v),
            "--seeds" => seeds = list(&v),
            "--messages" => messages = v.parse().expect("--messages N"),
            "--message-size" => size = v.parse().expect("--message-size BYTES"),
            "--reorder" => reorder = v.parse().expect("--reorder NS"),
            "--sdr-chunk" => sdr_chunk = v.parse().expect("--sdr-chunk N"),
            "--dcp-trim" => {
                dcp_trim = true;
                i += 1;
                continue;
            }
            "--topology" => {
                topologies = v.split(',').filter_map(Topology::from_name).collect();
                if topologies.is_empty() {
                    eprintln!("sim_grid: --topology takes dumbbell, leaf-spine or both (comma-separated)");
                    std::process::exit(2);
                }
            }
            "--keep" => keep = Some(PathBuf::from(v)),
            other => {
                eprintln!("sim_grid: unknown argument {other}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    // (The scratch directory, when not keeping, lives to the end and is removed then.)
    let scratch = keep.is_none().then(|| run::temp_dir("grid"));
    let dir = keep.clone().unwrap_or_else(|| scratch.as_ref().map(|d| d.to_path_buf()).unwrap_or_default());
    std::fs::create_dir_all(&dir).expect("output directory");
    println!(
        "# grid: topologies {:?} × stacks {:?} × loss {losses:?} × paths {paths:?} × seeds {seeds:?}; {messages} × {size} B per connection",
        topologies.iter().map(|t| t.name()).collect::<Vec<_>>(),
        stacks.iter().map(|s| s.name()).collect::<Vec<_>>()
    );
    if topologies.contains(&Topology::LeafSpine) {
        println!(
            "# leaf-spine: {} leaves × {} hosts, pattern {}, {} spines ECMP for paths 1, `paths` spines sprayed otherwise; taps at the first connection's two hosts",
            grid::LEAVES,
            grid::HOSTS_PER_LEAF,
            grid::LEAF_SPINE_PATTERN.name(),
            grid::ECMP_SPINES
        );
    }
    println!(
        "# stack loss paths seed | data_frames retx data_lost retx/loss resent_after_ack go_backs bad_go_backs \
         completed/messages truth_frames labels_checked replay_connections/ambiguous [conns both/requester/responder/neither first A>B] | verdict: FAIL[broken invariants]: the first"
    );
    let t0 = Instant::now();
    let (mut runs, mut failed) = (0, 0);
    for &topology in &topologies {
        let t1 = Instant::now();
        let (runs0, failed0) = (runs, failed);
        for &stack in &stacks {
            for &loss in &losses {
                for &np in &paths {
                    for (si, &seed) in seeds.iter().enumerate() {
                        let cell = Cell {
                            topology,
                            messages,
                            message_size: size,
                            reorder_ns: reorder,
                            dcp_trim,
                            sdr_chunk,
                            ..Cell::new(stack, loss, np, seed)
                        };
                        runs += 1;
                        match grid::run_cell(&cell, &dir, si == 0, keep.is_some()) {
                            Ok(v) => {
                                failed += grid::broken(&v).is_some() as u32;
                                println!("{}", grid::line(&cell, &v));
                                // The whole of what broke, on the error stream (the log keeps a line a run).
                                for e in v.all() {
                                    eprintln!("    {}", e.replace('\n', "\n    "));
                                }
                            }
                            Err(e) => {
                                failed += 1;
                                println!("{} | FAIL[synth]: {e}", cell.label());
                            }
                        }
                    }
                }
            }
        }
        println!(
            "# {}: {} runs, {} failed, {:.1} s",
            topology.name(),
            runs - runs0,
            failed - failed0,
            t1.elapsed().as_secs_f64()
        );
    }
    println!("# {runs} runs, {failed} failed, {:.1} s", t0.elapsed().as_secs_f64());
    if keep.is_none() {
        let _ = std::fs::remove_dir(&dir);
    }
    if failed > 0 {
        std::process::exit(1);
    }
}
