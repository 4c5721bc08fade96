#!/bin/sh
# `rocescope export` against tshark (issue 15, acceptance 3; docs/logs/bench-export.log keeps
# every run): the page benchmark's 1 M-frame capture (Go-Back-N, 4 KB messages, three taps,
# 128 bytes a frame: scripts/bench-page.sh makes it) exported to Parquet (every table: packets
# with every registry column, flows, messages, events), against `tshark -T fields` writing the
# same capture's 23 standard fields (frame, IP, UDP, BTH, RETH, AETH, ImmDt) as CSV, with no
# plugin. Median wall time of RUNS runs each under /usr/bin/time, peak RSS, and the Parquet
# size against the pcap's; then the export's peak RSS on a capture 5.2 times as long (the
# page benchmark's whole 5.2 M-frame capture, LONG), which should be the same. The machine may
# be shared: compare numbers taken back to back.
#
#   scripts/bench-export.sh
#   RUNS=5 FILE=/tmp/bench-page/f1000000.pcapng scripts/bench-export.sh
set -eu
cd "$(dirname "$0")/.."
FILE=${FILE:-/tmp/bench-page/f1000000.pcapng}
LONG=${LONG:-/tmp/bench-page/all.pcapng}
RUNS=${RUNS:-3}
LOG=${LOG:-docs/logs/bench-export.log}
OUT=${OUT:-/tmp/bench-export}
[ -f "$FILE" ] || FRAMES=1000000 sh scripts/bench-page.sh >/dev/null
REV="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- . ":(exclude)$LOG" 2>/dev/null || echo ' (modified)')"
cargo build --release -q -p rocescope
BIN=${CARGO_TARGET_DIR:-target}/release/rocescope
empty=$(mktemp -d)
fields="-e frame.number -e frame.time_epoch -e frame.len -e frame.cap_len -e ip.src -e ip.dst -e udp.srcport -e udp.dstport"
for f in opcode se m padcnt tver p_key destqp a psn; do fields="$fields -e infiniband.bth.$f"; done
fields="$fields -e infiniband.reth.va -e infiniband.reth.r_key -e infiniband.reth.dmalen -e infiniband.aeth.syndrome -e infiniband.aeth.msn -e infiniband.immdt"
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
run() { # name, command…: prints "seconds rss_kb" per run
    name=$1; shift
    for i in $(seq "$RUNS"); do
        /usr/bin/time -f "%e %M" -o /tmp/bench-export.time "$@" >/dev/null 2>&1
        cat /tmp/bench-export.time
    done > "/tmp/bench-export.$name"
}
run tshark env WIRESHARK_CONFIG_DIR="$empty" sh -c "tshark -n -r '$FILE' -T fields -E separator=, $fields > '$OUT.csv'"
run export sh -c "rm -rf '$OUT' && '$BIN' export '$FILE' -o '$OUT'"
t_sh=$(cut -d' ' -f1 /tmp/bench-export.tshark | median); m_sh=$(cut -d' ' -f2 /tmp/bench-export.tshark | median)
t_ex=$(cut -d' ' -f1 /tmp/bench-export.export | median); m_ex=$(cut -d' ' -f2 /tmp/bench-export.export | median)
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $REV, $(nproc) cores, median of $RUNS, $(basename "$FILE") ($(du -m "$FILE" | cut -f1) MB)"
    echo "tshark -T fields (23 standard fields) to CSV: ${t_sh} s, ${m_sh} KB peak RSS, CSV $(du -m "$OUT.csv" | cut -f1) MB"
    echo "rocescope export (packets with every registry column and the analysis fields, flows, messages, events): ${t_ex} s, ${m_ex} KB peak RSS, Parquet $(du -sm "$OUT" | cut -f1) MB (packets $(du -sm "$OUT/packets" | cut -f1) MB) against the pcap's $(du -m "$FILE" | cut -f1) MB"
    echo "speed-up: $(echo "$t_sh $t_ex" | awk '{ printf "%.1f", $1 / $2 }')x"
    if [ -f "$LONG" ]; then
        rm -rf "$OUT"
        /usr/bin/time -f "%e %M" -o /tmp/bench-export.time "$BIN" export "$LONG" -o "$OUT" >/dev/null 2>&1
        read -r t_long m_long < /tmp/bench-export.time
        echo "memory against length: $(basename "$LONG") ($(du -m "$LONG" | cut -f1) MB): ${t_long} s, ${m_long} KB peak RSS (${m_ex} KB for $(basename "$FILE")), Parquet $(du -sm "$OUT" | cut -f1) MB"
    fi
} | tee -a "$LOG"
rm -rf "$empty"
