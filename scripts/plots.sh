#!/bin/sh
# Regenerates the example plots of docs/plots/ (docs/plots/README.md shows them) with
# `rocescope timeline --svg` (pcap-tools/analysis/src/analyze/plot.rs): a lossy Go-Back-N flow
# at the sender's tap, a lossy DCP flow at the receiver's tap (trimmed, header-only packets),
# and the overview of an 8-to-1 DCP incast synthesized on the spot (same seed, same capture).
#
#   scripts/plots.sh                        # builds rocescope (debug) and writes docs/plots/
#   ROCESCOPE=path/to/rocescope scripts/plots.sh
set -eu
cd "$(dirname "$0")/.."
if [ -z "${ROCESCOPE:-}" ]; then
    cargo build -q -p rocescope
    ROCESCOPE=${CARGO_TARGET_DIR:-target}/debug/rocescope
fi
OUT=docs/plots
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$ROCESCOPE" timeline fixtures/synth-gbn-loss.pcapng --flow '10.0.0.1>10.0.1.1/512@0' --svg "$OUT/gbn-loss-sender.svg" >/dev/null
"$ROCESCOPE" timeline fixtures/synth-dcp-loss.pcapng --flow '10.0.0.1>10.0.1.1/512@1' --svg "$OUT/dcp-loss-receiver.svg" >/dev/null
"$ROCESCOPE" synth --stack dcp --incast 8 --messages 16 --message-size 65536 --seed 3 -o "$tmp/incast.pcapng" 2>/dev/null
"$ROCESCOPE" timeline "$tmp/incast.pcapng" --svg "$tmp/incast" >/dev/null
cp "$tmp/incast/overview.svg" "$OUT/incast-overview.svg"
ls -l "$OUT"/*.svg
