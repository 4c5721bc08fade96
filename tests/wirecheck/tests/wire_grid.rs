//! The slice of issue 9's grid CI runs (acceptance 2; the whole grid is `scripts/sim-grid.sh`,
//! logged in `docs/logs/sim-grid.log`): cells of 64 messages of 64 KB per connection, seed 1
//! (the leaf-spine's also seed 2), each judged by every wire check and run twice for the same
//! bytes, on the dumbbell and on the grid's leaf-spine (`rocescope_wirecheck::grid`).

use rocescope_stacks::StackKind;
use rocescope_wirecheck::grid::{judge_cells, Cell};

/// Every stack without loss and under random loss on one path, DCP also sprayed over 8 paths.
#[test]
fn grid_slice() {
    use StackKind::*;
    let cells: Vec<Cell> = [
        (Gbn, 0.0, 1),
        (Gbn, 0.01, 1),
        (Gbn, 0.05, 1),
        (Irn, 0.0, 1),
        (Irn, 0.001, 1),
        (Dcp, 0.0, 1),
        (Dcp, 0.01, 1),
        (Dcp, 0.0, 8),
        (Dcp, 0.01, 8),
    ]
    .into_iter()
    .map(|(s, loss, paths)| Cell::new(s, loss, paths, 1))
    .collect();
    judge_cells(&cells);
}

/// The cells of the same slice that broke the no-resend-after-acknowledgement invariant before
/// the pull-based NIC transmit model (`sim/src/nic.rs`; before it, frames queued before the ACKs
/// that made them useless left anyway):
/// GBN 1 % sprayed over 8 paths 252,728 resent after their ACK among 319,132 retransmissions;
/// IRN 1 % on one path 1 / 62; IRN 1 % over 8 paths 2,993 / 3,175 (seed 1). Now none (the
/// whole grid, `docs/logs/sim-grid.log`).
#[test]
fn grid_slice_once_resending_acknowledged_psns() {
    use StackKind::*;
    let cells: Vec<Cell> =
        [(Gbn, 0.01, 8), (Irn, 0.01, 1), (Irn, 0.01, 8)].into_iter().map(|(s, l, p)| Cell::new(s, l, p, 1)).collect();
    judge_cells(&cells);
}

/// The grid's leaf-spine (3 leaves × 2 hosts, permutation; 4 ECMP spines or 8 sprayed ones),
/// judged at the first connection's two hosts, which are on different leaves for these seeds:
/// GBN and DCP under loss, IRN under loss and sprayed without loss (its reordering
/// retransmissions, labelled spurious), and DCP with trimming (`--dcp-trim`: each random loss a
/// header-only packet, resent once). About 5 s together on an idle machine.
#[test]
fn grid_slice_leaf_spine() {
    use StackKind::*;
    let cells: Vec<Cell> = [(Gbn, 0.01, 1, 3), (Irn, 0.0, 8, 1), (Irn, 0.05, 8, 2), (Dcp, 0.01, 8, 1)]
        .into_iter()
        .map(|(s, loss, paths, seed)| Cell::leaf_spine(s, loss, paths, seed))
        .chain([Cell { dcp_trim: true, ..Cell::leaf_spine(Dcp, 0.05, 8, 1) }])
        .collect();
    judge_cells(&cells);
}

/// Every cell above is also replayed (`rocescope_wirecheck::replayed`: no departure on an
/// unmodified capture). This cell made replay report one before: on 8 sprayed paths ACKs come
/// back reordered, and IRN resent a hole below its highest SACK 3 ns after an ACK ended the
/// recovery that was resending it; replay took the resend for a timeout 0.0 µs after the timer
/// started (`irn.timeout-early`). A resend within the reaction time of the timer's restart is
/// no timeout now.
#[test]
fn grid_slice_once_replayed_as_early_timeouts() {
    judge_cells(&[Cell { messages: 16, ..Cell::new(StackKind::Irn, 0.01, 8, 2) }]);
}

/// And this one: on 8 sprayed paths a NAK can arrive after a later one (here NAK 6591628 after
/// NAK 6591629, which had acknowledged through 6591628). Replay took the stale NAK as asking for
/// a go-back, so the timeout's resend that followed was its go-back, not a timeout: the timer
/// was not restarted there, and the next timeout, 67 ms later, measured 134 ms from the one
/// before (`gbn.timeout-late`). A NAK naming an acknowledged PSN asks for nothing now.
#[test]
fn grid_slice_once_replayed_with_a_stale_nak() {
    judge_cells(&[Cell { messages: 16, ..Cell::new(StackKind::Gbn, 0.05, 8, 3) }]);
}

