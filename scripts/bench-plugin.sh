#!/bin/sh
# The Wireshark plugin's cost (dissector/README.md, "Benchmark"; docs/logs/bench-plugin.log keeps
# every run): tshark over two captures, without the plugin and with it, in two output modes.
#   roce.pcapng  ~100 k RoCEv2 frames: `rocescope synth --stack gbn --messages 20000 --taps sender`
#                (RDMA WRITEs of 4 KB in 1 KB packets and their ACKs)
#   udp.pcap     200 k plain UDP/IPv4 frames (64-byte payloads, ports 40000-40006 -> 5000-5012),
#                written here with python3
# Modes:
#   summary  tshark -n -r FILE                     (one summary line per frame, no tree)
#   fields   tshark -n -r FILE -T fields -e infiniband.bth.psn [-e rocescope.bth.psn]
#            (a tree per frame; with the plugin rocescope's fields are decoded and printed too)
# Each command runs RUNS times; the least user + system CPU time is kept (the machine may be
# shared: CPU time is steadier than wall time), and the ratio to the same mode without the plugin
# is printed. tshark runs with an empty WIRESHARK_CONFIG_DIR and HOME (no personal preferences,
# no installed copy of the plugin); "with" names dissector/rocescope.lua with -X lua_script:.
#
#   scripts/bench-plugin.sh
#   DIR=/var/tmp/bench RUNS=5 scripts/bench-plugin.sh
set -eu
cd "$(dirname "$0")/.."
DIR=${DIR:-/tmp/bench-plugin}
RUNS=${RUNS:-3}
LOG=${LOG:-docs/logs/bench-plugin.log}
PLUGIN=$(pwd)/dissector/rocescope.lua
mkdir -p "$DIR/home" "$DIR/config" "$(dirname "$LOG")"
REV="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- . ":(exclude)$LOG" 2>/dev/null || echo ' (modified)')"
cargo build -q -p rocescope
BIN=${CARGO_TARGET_DIR:-target}/debug/rocescope
"$BIN" dissector | cmp -s - "$PLUGIN" || { echo "dissector/rocescope.lua is stale: regenerate it" >&2; exit 1; }

[ -f "$DIR/roce.pcapng" ] || "$BIN" synth --stack gbn --messages 20000 --taps sender -o "$DIR/roce.pcapng" >/dev/null
[ -f "$DIR/udp.pcap" ] || python3 - "$DIR/udp.pcap" <<'EOF'
import struct, sys
def checksum(b):
    s = sum((b[i] << 8) + b[i + 1] for i in range(0, len(b), 2))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(200000):
        payload = bytes((i + k) & 0xff for k in range(64))
        udp = struct.pack(">HHHH", 40000 + i % 7, 5000 + i % 13, 8 + len(payload), 0) + payload
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xffff, 0, 64, 17, 0,
                                   bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
        ip[10:12] = struct.pack(">H", checksum(bytes(ip)))
        frame = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0]) + bytes(ip) + udp
        f.write(struct.pack("<IIII", i // 1000, i % 1000 * 1000, len(frame), len(frame)))
        f.write(frame)
EOF

# cpu RUNS CMD...: the least user + system CPU seconds of RUNS runs of CMD (output discarded).
cpu() {
    python3 - "$@" <<'EOF'
import resource, subprocess, sys
best = None
for _ in range(int(sys.argv[1])):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0 or b"Lua" in r.stderr:
        sys.exit("failed: " + " ".join(sys.argv[2:]) + "\n" + r.stderr.decode())
    t = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    best = t if best is None else min(best, t)
print(f"{best:.2f}")
EOF
}

export HOME="$DIR/home" WIRESHARK_CONFIG_DIR="$DIR/config"
OUT=$(mktemp)
{
    echo "== $(date -u '+%Y-%m-%d %H:%M UTC') commit $REV, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(tshark -v | head -1)"
    echo "CPU seconds (user + system, best of $RUNS); ratio = with / without"
    printf '%-8s %-8s %9s %9s %7s\n' capture mode without with ratio
    for cap in roce.pcapng udp.pcap; do
        for mode in summary fields; do
            if [ "$mode" = summary ]; then
                base=$(cpu "$RUNS" tshark -n -r "$DIR/$cap")
                with=$(cpu "$RUNS" tshark -n -X "lua_script:$PLUGIN" -r "$DIR/$cap")
            else
                base=$(cpu "$RUNS" tshark -n -r "$DIR/$cap" -T fields -e infiniband.bth.psn)
                with=$(cpu "$RUNS" tshark -n -X "lua_script:$PLUGIN" -r "$DIR/$cap" -T fields -e infiniband.bth.psn -e rocescope.bth.psn)
            fi
            printf '%-8s %-8s %9s %9s %7s\n' "${cap%%.*}" "$mode" "$base" "$with" "$(echo "scale=2; $with / $base" | bc)"
        done
    done
    echo
} > "$OUT"
cat "$OUT"
cat "$OUT" >> "$LOG"
rm -f "$OUT"
