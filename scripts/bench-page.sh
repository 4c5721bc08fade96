#!/bin/sh
# The inspector page at capture scale (issue 14, acceptance 2; docs/logs/page-bench.log keeps
# every run): captures of 1 M and 5 M frames are made (Go-Back-N, 4 KB messages, 0.1 % loss,
# three taps, cut to 128 bytes a frame with editcap -s, as a snaplen-limited capture is; then
# editcap -r takes the first N frames), and wasm/test/page_bench.mjs opens each in Debian's
# headless chromium through the page's file input, measuring the first rows, row clicks, filter
# keystrokes and the page's memory. The machine may be shared: compare numbers taken back to
# back.
#
#   scripts/bench-page.sh                     # 1 M and 5 M frames (about 0.9 GB in $DIR)
#   FRAMES="1000000" scripts/bench-page.sh    # only 1 M
set -eu
cd "$(dirname "$0")/.."
DIR=${DIR:-/tmp/bench-page}
FRAMES=${FRAMES:-"1000000 5000000"}
LOG=${LOG:-docs/logs/page-bench.log}
mkdir -p "$DIR" "$(dirname "$LOG")"
REV="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- . ":(exclude)$LOG" 2>/dev/null || echo ' (modified)')"
cargo build --release -q -p rocescope
bash wasm/build.sh
[ -f pcap-tools/cli/tests/chromium/node_modules/playwright-core/package.json ] ||
    npm ci --prefix pcap-tools/cli/tests/chromium --no-audit --no-fund
BIN=${CARGO_TARGET_DIR:-target}/release/rocescope
if [ ! -f "$DIR/all.pcapng" ]; then
    # 330,000 messages: about 5.2 M frames over the three taps.
    "$BIN" synth --stack gbn --messages 330000 --message-size 4096 --loss 0.001 -o "$DIR/full.pcapng"
    editcap -s 128 "$DIR/full.pcapng" "$DIR/all.pcapng"
    rm -f "$DIR/full.pcapng"
fi
files=""
for n in $FRAMES; do
    [ -f "$DIR/f$n.pcapng" ] || editcap -r "$DIR/all.pcapng" "$DIR/f$n.pcapng" "1-$n"
    files="$files $DIR/f$n.pcapng"
done
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $REV, $(nproc) cores, $(chromium --version 2>/dev/null | head -1)"
    # shellcheck disable=SC2086
    node wasm/test/page_bench.mjs $files
} 2>&1 | tee -a "$LOG"
