#!/bin/sh
# Issue 10's acceptance 1 at grid scale: the timeline against the truth's observable view on
# every stack × loss 0, 1e-3, 1e-2, 5e-2 × one path and 4 sprayed paths × 1 and 4 senders × 5
# seeds, three taps, on the dumbbell and the leaf-spine (tests/wirecheck/examples/timeline_grid.rs;
# CI runs a slice: tests/wirecheck/tests/timeline_grid.rs). Logs to docs/logs/timeline-grid.log:
# date, commit, one line per run, the unobservable shares per tap, the totals, the wall time.
# Then SDR's two stacks again with chunks of 4 packets (`--sdr-chunk 4`: the control messages'
# bitmaps and NACKs name chunks), on both fabrics.
#
#   scripts/timeline-grid.sh                 # dumbbell and leaf-spine
#   SEEDS=1,2 MESSAGES=16 scripts/timeline-grid.sh
set -eu
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-1,2,3,4,5}
MESSAGES=${MESSAGES:-32}
LOG=${LOG:-docs/logs/timeline-grid.log}
mkdir -p "$(dirname "$LOG")"
cargo build --release -q -p rocescope-wirecheck --example timeline_grid
BIN=${CARGO_TARGET_DIR:-target}/release/examples/timeline_grid
start=$(date +%s)
status=0
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "# scripts/timeline-grid.sh: timeline_grid --seeds $SEEDS --messages $MESSAGES (dumbbell, then --leaf-spine; then --only sdr --sdr-chunk 4 on both)"
    "$BIN" --seeds "$SEEDS" --messages "$MESSAGES" || status=1
    "$BIN" --seeds "$SEEDS" --messages "$MESSAGES" --leaf-spine || status=1
    "$BIN" --seeds "$SEEDS" --messages "$MESSAGES" --only sdr --sdr-chunk 4 || status=1
    "$BIN" --seeds "$SEEDS" --messages "$MESSAGES" --only sdr --sdr-chunk 4 --leaf-spine || status=1
    echo "# wall time $(( $(date +%s) - start )) s"
    exit $status
} 2>&1 | tee "$LOG"
# All four parts' totals must show no run with mismatches.
[ "$(grep -c '^# [0-9]* runs, 0 with mismatches' "$LOG")" = 4 ]
