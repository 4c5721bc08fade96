#!/bin/sh
# The analysis path against tshark (docs/logs/bench-analysis.log keeps every run): a synthetic
# RoCEv2 capture of ~1.3 M frames (IRN, 64-way incast, 256-byte MTU, 4 KB messages, 1 % forward
# loss, receiver tap; with TEN=1 also the ~13 M-frame one, --messages 7813) is generated, then
# each of
#   tshark -n -q -z conv,udp -r FILE          (no plugin: an empty WIRESHARK_CONFIG_DIR)
#   rocescope flows FILE
#   taskset -c 0 rocescope flows FILE         (on one core: a gauge of how busy the machine is)
#   rocescope timeline -T json FILE > /dev/null
#   tshark -n -r FILE -T fields -e infiniband.bth.opcode -e …destqp -e …psn -e ip.src
#   rocescope decode --format fields -e rocescope.bth.opcode -e …destqp -e …psn -e ip.src FILE
# runs in RUNS interleaved rounds (each round runs each command once, in that order, so that a
# change in the machine's load reaches every command alike); the median wall time (read from
# the clock in nanoseconds around `/usr/bin/time`: its own %e counts in 10 ms, a tenth of
# `flows`' time), the peak RSS and the speedups over tshark on the medians are printed, with the
# range of `flows`' per-round speedup, and appended, with the date, commit, core count and CPU
# model, to the log.
# The machine may be shared: compare numbers taken back to back, not across days.
#
#   scripts/bench-analysis.sh                  # the 1 M capture
#   TEN=1 scripts/bench-analysis.sh            # and the 10 M one (~3.3 GB in $DIR)
#   DIR=/var/tmp/bench RUNS=5 scripts/bench-analysis.sh
#   BIN=/tmp/rocescope-before scripts/bench-analysis.sh   # an older build instead of this tree's
set -eu
cd "$(dirname "$0")/.."
DIR=${DIR:-/tmp/bench}
RUNS=${RUNS:-5}
LOG=${LOG:-docs/logs/bench-analysis.log}
mkdir -p "$DIR" "$(dirname "$LOG")"
if [ -n "${BIN:-}" ]; then
    # A given binary (an older build, to compare): it also generates the captures.
    REV="BIN=$BIN"
else
    # The commit measured: taken before the build (the tree may change while the script runs).
    REV="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- . ":(exclude)$LOG" 2>/dev/null || echo ' (modified)')"
    cargo build --release -q -p rocescope
    BIN=${CARGO_TARGET_DIR:-target}/release/rocescope
fi
command -v tshark >/dev/null || { echo "tshark not found" >&2; exit 1; }
WS_CONF=$(mktemp -d)
TIMES=$(mktemp)
ROUNDS=$(mktemp)
trap 'rm -rf "$WS_CONF" "$TIMES" "$ROUNDS" "$ROUNDS".*' EXIT

# capture NAME MESSAGES: writes $DIR/NAME.pcapng (atomically: other readers may have it open)
# and the simulator's summary to $DIR/NAME.synth.txt, then has the file written out to disk
# before anything is timed (else the kernel's writeback of the fresh file, a few hundred MB of
# dirty pages, runs during the first rounds, beside the commands timed).
capture() {
    "$BIN" synth --stack irn --incast 64 --mtu 256 --message-size 4096 --messages "$2" --loss 0.01 \
        --loss-dir forward --taps receiver --seed 1 -o "$DIR/$1.tmp.pcapng" >/dev/null 2>"$DIR/$1.synth.txt"
    mv "$DIR/$1.tmp.pcapng" "$DIR/$1.pcapng"
    sync "$DIR/$1.pcapng"
}

# once CMD...: runs it once (output discarded: tshark warns about running as root) and prints
# "wall_seconds peak_rss_kb". The wall time includes starting /usr/bin/time (about a
# millisecond), the same for every command. A failing run stops the script.
once() {
    start=$(date +%s%N)
    /usr/bin/time -o "$TIMES" -f '%M' "$@" >/dev/null 2>&1
    end=$(date +%s%N)
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') $(tail -1 "$TIMES")"
}

# median FILE: the median of the first column; peak FILE: the largest second column.
median() {
    cut -d' ' -f1 "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
peak() {
    cut -d' ' -f2 "$1" | sort -n | tail -1
}

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'
}

bench() {
    name=$1
    file="$DIR/$name.pcapng"
    size=$(($(wc -c <"$file") / 1048576))
    rm -f "$ROUNDS".*
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        once env WIRESHARK_CONFIG_DIR="$WS_CONF" tshark -n -q -z conv,udp -r "$file" >>"$ROUNDS.ts"
        once "$BIN" flows "$file" >>"$ROUNDS.fl"
        # The same on one core: how busy the machine is (this VM's second core is shared, and a
        # noisy hour slows flows' two threads far more than tshark's one).
        once taskset -c 0 "$BIN" flows "$file" >>"$ROUNDS.f1"
        once "$BIN" timeline -T json "$file" >>"$ROUNDS.tl"
        # Four columns, as tshark -T fields prints them (issue 11: decode --format fields >= 40x).
        once env WIRESHARK_CONFIG_DIR="$WS_CONF" tshark -n -r "$file" -T fields \
            -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e ip.src >>"$ROUNDS.tf"
        once "$BIN" decode --format fields \
            -e rocescope.bth.opcode -e rocescope.bth.destqp -e rocescope.bth.psn -e ip.src "$file" >>"$ROUNDS.df"
        i=$((i + 1))
    done
    ts=$(median "$ROUNDS.ts"); fl=$(median "$ROUNDS.fl"); f1=$(median "$ROUNDS.f1"); tl=$(median "$ROUNDS.tl")
    tf=$(median "$ROUNDS.tf"); df=$(median "$ROUNDS.df")
    # flows' speedup in each round (tshark's time that round over flows' time that round).
    per_round=$(paste -d' ' "$ROUNDS.ts" "$ROUNDS.fl" | awk '{ printf "%.1f\n", $1 / $3 }' | sort -n |
        awk '{ v[NR] = $1 } END { printf "×%s-×%s", v[1], v[NR] }')
    echo "# $name: $(tail -1 "$DIR/$name.synth.txt")"
    echo "$name ($size MiB): tshark -z conv,udp ${ts} s $(peak "$ROUNDS.ts") KB | flows ${fl} s $(peak "$ROUNDS.fl") KB ×$(ratio "$ts" "$fl") (rounds $per_round; on one core ${f1} s) | timeline -T json ${tl} s $(peak "$ROUNDS.tl") KB ×$(ratio "$ts" "$tl")"
    echo "$name ($size MiB): tshark -T fields (4) ${tf} s $(peak "$ROUNDS.tf") KB | decode --format fields (4) ${df} s $(peak "$ROUNDS.df") KB ×$(ratio "$tf" "$df")"
}

names=1m
capture 1m 781
if [ "${TEN:-0}" = 1 ]; then
    capture 10m 7813
    names="1m 10m"
fi
{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $REV"
    echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# median of $RUNS interleaved rounds (wall s, peak RSS KB, speedup over tshark on the medians); synth irn --incast 64 --mtu 256 --message-size 4096 --loss 0.01 --seed 1"
    for n in $names; do bench "$n"; done
} | tee -a "$LOG"
