#!/bin/sh
# Issue 9's grid (acceptance 2), judged from the wire: dumbbell and leaf-spine × every stack ×
# loss 0, 1e-3, 1e-2, 5e-2 × one path and 8 sprayed paths × 3 seeds, 64 messages of 64 KB per
# connection, each run's capture and truth checked by tests/wirecheck (examples/sim_grid.rs:
# the truth agrees with the capture per tap, every message rebuilt intact from the receiver's
# frames and acknowledged at the sender's, no resend of an acknowledged PSN, Go-Back-N's
# go-back points, same seed → same bytes). The leaf-spine is 3 leaves × 2 hosts in a random
# permutation, 4 spines under ECMP for one path, 8 sprayed spines for 8 paths
# (tests/wirecheck/src/grid.rs says why); its connections are judged at the tapped ends (the
# taps watch the first connection's two hosts). The log goes to docs/logs/sim-grid.log (and the
# terminal): date, commit, command, one line per run, totals per topology and the wall time.
#
#   scripts/sim-grid.sh                          # the whole grid, both topologies
#   TOPOLOGY=leaf-spine scripts/sim-grid.sh      # one topology
#   MESSAGES=16 SIZE=16384 scripts/sim-grid.sh   # a smaller one
#   EXTRA="--stacks dcp --losses 0.05" scripts/sim-grid.sh
#   # DCP with trimming (its `synth` defaults; the grid above drops DCP's losses):
#   LOG=docs/logs/sim-grid-dcp-trim.log EXTRA="--stacks dcp --dcp-trim" scripts/sim-grid.sh
#   # The research transports (issue 13; SDR, Flor and ERD by tests/wirecheck/src/research,
#   # NetRT's Go-Back-N ends by the checks above; Flor's 8-path cells hash onto one path):
#   LOG=docs/logs/sim-grid-research.log EXTRA="--stacks sdr-sr,sdr-ec,flor,erd,netrt" scripts/sim-grid.sh
#   # SDR with chunks of 4 packets (bitmaps and NACKs name chunks):
#   LOG=docs/logs/sim-grid-sdr-chunk4.log EXTRA="--stacks sdr-sr,sdr-ec --sdr-chunk 4" scripts/sim-grid.sh
set -eu
cd "$(dirname "$0")/.."
TOPOLOGY=${TOPOLOGY:-dumbbell,leaf-spine}
MESSAGES=${MESSAGES:-64}
SIZE=${SIZE:-65536}
SEEDS=${SEEDS:-1,2,3}
LOG=${LOG:-docs/logs/sim-grid.log}
mkdir -p "$(dirname "$LOG")"
cargo build --release -q -p rocescope-wirecheck --example sim_grid
BIN=${CARGO_TARGET_DIR:-target}/release/examples/sim_grid
start=$(date +%s)
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "# scripts/sim-grid.sh: sim_grid --topology $TOPOLOGY --messages $MESSAGES --message-size $SIZE --seeds $SEEDS ${EXTRA:-}"
    # shellcheck disable=SC2086
    "$BIN" --topology "$TOPOLOGY" --messages "$MESSAGES" --message-size "$SIZE" --seeds "$SEEDS" ${EXTRA:-} || true
    echo "# wall time $(( $(date +%s) - start )) s"
} 2>&1 | tee "$LOG"
# The exit status of the grid, not of tee: its summary line.
grep -q "^# [0-9]* runs, 0 failed," "$LOG"
