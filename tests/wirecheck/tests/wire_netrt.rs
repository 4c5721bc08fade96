//! The wire checks (issue 9's invariants: the truth agrees with the capture, every message
//! arrives whole and is acknowledged, no resend of what was acknowledged, Go-Back-N's bursts
//! where its rule puts them) on NetRT runs (issue 13, acceptance 1): Go-Back-N hosts behind
//! ToRs that repair fabric loss, on the grid's leaf-spine with ECMP and sprayed over 4 spines,
//! at 1 % and 3 % loss, two seeds.

use rocescope_stacks::StackKind;
use rocescope_wirecheck::grid::{self, Cell};
use rocescope_wirecheck::run;

#[test]
fn netrt_runs_keep_the_wire_invariants_on_a_leaf_spine() {
    let dir = run::temp_dir("wire-netrt");
    let mut judged = 0;
    for paths in [1, 4] {
        for loss in [0.01, 0.03] {
            for seed in [1, 2] {
                let cell = Cell {
                    messages: 16,
                    message_size: 16_384,
                    ..Cell::leaf_spine(StackKind::Netrt, loss, paths, seed)
                };
                let v = grid::run_cell(&cell, &dir, false, false).expect("synth");
                if let Err(e) = v.ok() {
                    panic!("{}:\n{e}", cell.options().command_line());
                }
                judged += v.numbers.messages_judged;
            }
        }
    }
    let _ = std::fs::remove_dir(&dir);
    assert!(judged > 0);
}
