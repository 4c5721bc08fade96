#!/usr/bin/env python3
"""Cross-checks rocescope's ICRC (WIRE.md A.5) against scapy's `scapy.contrib.roce`.

scapy fills in the BTH `icrc` field when it builds a packet (BTH.post_build → compute_icrc, for a
UDP over IPv4 or IPv6 underlayer), so it is an independent implementation to compare with:

1. scapy → rocescope. Random RoCEv2 packets, IPv4 (random ToS/TTL/id/DF, sometimes IP options,
   sometimes UDP checksum 0) and IPv6 (random traffic class, flow label, hop limit), 0-2 VLAN
   tags, every opcode of the A.4 table but 0x80 (RC, UC, RD, UD, CNP 0x81, XRC; IRN selective
   NAKs), random header values, payloads and pad bytes, Ethernet padding and trailing FCS-like
   bytes now and then. Each packet also gets a twin whose ICRC-variant fields (IPv4 ToS, TTL and
   header checksum; IPv6 traffic class, flow label and hop limit; UDP checksum; BTH byte 4) are
   changed while the ICRC is kept. Written to a pcap: `rocescope check` must exit 0, and
   `rocescope decode --format fields` must print, per frame, scapy's ICRC, status `good`, the
   BTH opcode/PSN/DestQP, the payload length and no warning. The twins' ICRC must also be what
   scapy computes for them (scapy masks the same fields).
2. Corrupted packets: one byte of the BTH (but byte 4) … ICRC changed in each → every frame
   `bad`, `rocescope check` exits 1 listing each.
3. rocescope → scapy. Random frames from the codec's builder (`codec/examples/icrc_frames.rs`,
   every opcode of the table, IPv4/IPv6, VLANs, padding, UDP checksum on/off): scapy's
   `compute_icrc` must equal the ICRC on the wire, and rocescope must decode them as good.
4. The two scapy test vectors of WIRE.md A.5 (UC SEND Only over IPv4 with PadCnt 2; a
   ConnectX-4 Lx CNP): scapy and rocescope both give the listed ICRC.

scapy's `compute_icrc` on a dissected frame counts Ethernet padding as payload, so frames are cut
at the end of their IP packet before scapy is asked (see `dissect`).
5. If `fixtures/std-mix.pcapng` exists, scapy verifies every RoCEv2 frame in it.

Usage: python3 tests/icrc_scapy.py [--count N] [--seed S] [--rocescope BIN]
                                   [--builder-frames FILE] [--keep DIR]

Without --rocescope (or $ROCESCOPE_BIN) the CLI runs through `cargo run -q -p rocescope`; without
--builder-frames the builder's frames come from `cargo run -q -p rocescope-codec --example
icrc_frames`. Exits 0 when every check passed, 1 on any mismatch, 2 when scapy or the tools are
missing. The last line reads "N passed, M failed".
"""

import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import logging

    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, IPv6, Raw, rdpcap, raw, wrpcap
    from scapy.layers.inet import IPOption_NOP, IPOption_Router_Alert, IPOption_RR
    from scapy.contrib.roce import AETH, BTH, CNPPadding
except ImportError as e:  # pragma: no cover
    print(f"icrc_scapy: scapy is not available ({e}); install it with `pip install scapy`", file=sys.stderr)
    sys.exit(2)

# --------------------------------------------------------------------------------------------
# The opcode table of WIRE.md A.4.

HDR_LEN = {
    "RDETH": 4, "DETH": 8, "XRCETH": 4, "FETH": 4, "RETH": 16, "AtomicETH": 28,
    "AETH": 4, "AtomicAckETH": 8, "ImmDt": 4, "IETH": 4,
}
WIRE_ORDER = ["RDETH", "DETH", "XRCETH", "FETH", "RETH", "AtomicETH", "AETH", "AtomicAckETH", "ImmDt", "IETH"]

RC_OPS = {
    0x00: ([], True), 0x01: ([], True), 0x02: ([], True), 0x03: (["ImmDt"], True),
    0x04: ([], True), 0x05: (["ImmDt"], True), 0x06: (["RETH"], True), 0x07: ([], True),
    0x08: ([], True), 0x09: (["ImmDt"], True), 0x0A: (["RETH"], True), 0x0B: (["RETH", "ImmDt"], True),
    0x0C: (["RETH"], False), 0x0D: (["AETH"], True), 0x0E: ([], True), 0x0F: (["AETH"], True),
    0x10: (["AETH"], True), 0x11: (["AETH"], False), 0x12: (["AETH", "AtomicAckETH"], False),
    0x13: (["AtomicETH"], False), 0x14: (["AtomicETH"], False), 0x16: (["IETH"], True),
    0x17: (["IETH"], True), 0x1C: (["FETH", "RETH"], False), 0x1D: (["RETH"], True),
}


def is_response(op):
    return 0x0D <= op <= 0x12


def opcode_table():
    """opcode → (headers in wire order, carries a payload, is a CNP)."""
    t = {}
    for op, (h, p) in RC_OPS.items():
        t[op] = (h, p, False)
        if op <= 0x0B:
            t[0x20 | op] = (h, p, False)
        if op <= 0x14:
            base = ["RDETH"] if is_response(op) else ["RDETH", "DETH"]
            t[0x40 | op] = (base + h, p, False)
        if op <= 0x17:
            t[0xA0 | op] = (h if is_response(op) else ["XRCETH"] + h, p, False)
    t[0x55] = (["RDETH", "DETH"], False, False)
    t[0x64] = (["DETH"], True, False)
    t[0x65] = (["DETH", "ImmDt"], True, False)
    t[0x81] = ([], False, True)  # 0x80 decodes as a CNP too, with a note: `check` would flag it
    for op, (h, _, _) in t.items():
        assert h == sorted(h, key=WIRE_ORDER.index), hex(op)
    return t


OPCODES = opcode_table()
assert len(OPCODES) == 85, len(OPCODES)

# --------------------------------------------------------------------------------------------
# Results.


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.shown = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            if self.shown < 40:
                print(f"FAILED {what}")
            self.shown += 1
        return ok

    def group(self, name, before):
        p, f = self.passed - before[0], self.failed - before[1]
        print(f"{'PASSED' if f == 0 else 'FAILED'} {name}: {p} passed, {f} failed")


# --------------------------------------------------------------------------------------------
# Running rocescope.


class Tool:
    def __init__(self, binary):
        self.binary = binary

    def cmd(self, *args):
        if self.binary:
            return [self.binary, *args]
        return ["cargo", "run", "-q", "-p", "rocescope", "--", *args]

    def run(self, *args):
        return subprocess.run(self.cmd(*args), cwd=ROOT, capture_output=True, text=True)

    def fields(self, pcap, names):
        args = ["decode", pcap, "--format", "fields"]
        for n in names:
            args += ["-e", n]
        r = self.run(*args)
        if r.returncode != 0:
            raise RuntimeError(f"rocescope decode exited {r.returncode}: {r.stderr.strip()}")
        return [line.split("\t") for line in r.stdout.splitlines()]


FIELDS = [
    "frame.number", "rocescope.icrc", "rocescope.icrc.status", "rocescope.bth.opcode",
    "rocescope.bth.psn", "rocescope.bth.destqp", "rocescope.payload_len", "rocescope.warning",
]

# --------------------------------------------------------------------------------------------
# scapy packets.


def rand_mac(rng):
    return ":".join(f"{rng.randrange(256):02x}" for _ in range(6))


def rand_ipv4(rng):
    return ".".join(str(rng.randrange(256)) for _ in range(4))


def rand_ipv6(rng):
    return ":".join(f"{rng.randrange(65536):x}" for _ in range(8))


def ip_options(rng):
    k = rng.randrange(6)
    if k == 0:
        return [IPOption_Router_Alert()]
    if k == 1:
        return [IPOption_NOP()] * rng.choice([4, 8])
    if k == 2:
        return [IPOption_RR(routers=[rand_ipv4(rng) for _ in range(rng.randrange(1, 5))])]
    return []


def header_bytes(rng, name, op):
    n = HDR_LEN[name]
    if name == "AETH":
        if op == 0x11 and rng.random() < 0.25:
            return None  # filled in by the caller: IRN selective NAK
        kind = rng.choice([0x00, 0x20, 0x60])  # ACK, RNR NAK, NAK; never a reserved pattern
        return bytes([kind | rng.randrange(32)]) + rng.randbytes(3)
    return rng.randbytes(n)


def dissect(wire):
    """scapy's view of a frame, cut at the end of its IP packet.

    scapy's `compute_icrc` on a dissected frame hashes whatever follows the BTH, Ethernet
    minimum-size padding included (e.g. an empty SEND Only over IPv4, 58 bytes padded to 60), so
    the padding and any captured FCS are cut off first.
    """
    p = Ether(wire)
    ip = p.getlayer(IP) or p.getlayer(IPv6)
    if ip is None:
        return p
    l3 = len(wire) - len(ip.original) if ip.original else 0
    end = l3 + (ip.len if isinstance(ip, IP) else 40 + ip.plen)
    return Ether(wire[:end]) if end < len(wire) else p


class Built:
    """A scapy packet, its bytes and what rocescope should print for it."""

    def __init__(self, pkt, wire, op, payload_len, v6):
        self.pkt = pkt
        self.wire = wire
        self.op = op
        self.payload_len = payload_len
        self.v6 = v6
        d = dissect(wire)
        self.bth = d[BTH]
        self.icrc = struct.pack("!I", self.bth.icrc)
        self.psn = self.bth.psn
        self.dqpn = self.bth.dqpn
        # Where the BTH and the ICRC are in `wire`.
        self.bth_off = self._bth_offset(d)
        self.end = self.bth_off + d[UDP].len - 8

    @staticmethod
    def _bth_offset(d):
        off = 14
        layer = d.payload
        while isinstance(layer, (Dot1Q, Dot1AD)):
            off += 4
            layer = layer.payload
        off += layer.ihl * 4 if isinstance(layer, IP) else 40
        return off + 8


def scapy_packet(rng, op, v6):
    headers, has_payload, is_cnp = OPCODES[op]
    eth = Ether(src=rand_mac(rng), dst=rand_mac(rng))
    tags = rng.randrange(3)
    if tags == 2:
        eth = eth / Dot1AD(prio=rng.randrange(8), vlan=rng.randrange(4096)) / Dot1Q(prio=rng.randrange(8), vlan=rng.randrange(4096))
    elif tags == 1:
        eth = eth / Dot1Q(prio=rng.randrange(8), id=rng.randrange(2), vlan=rng.randrange(4096))
    if v6:
        l3 = IPv6(src=rand_ipv6(rng), dst=rand_ipv6(rng), tc=rng.randrange(256), fl=rng.randrange(1 << 20), hlim=rng.randrange(256))
    else:
        l3 = IP(src=rand_ipv4(rng), dst=rand_ipv4(rng), tos=rng.randrange(256), ttl=rng.randrange(256),
                id=rng.randrange(65536), flags=rng.choice([0, "DF"]), options=ip_options(rng) if rng.random() < 0.3 else [])
    # Source ports from the range NICs use (0xC000 up): scapy would dissect a well-known source
    # port such as 520 as that protocol rather than as a BTH.
    udp = UDP(sport=rng.randrange(0xC000, 0x10000), dport=4791)
    if not v6 and rng.random() < 0.3:
        udp.chksum = 0
    dqpn = rng.randrange(1 << 24)
    if op == 0x64 and dqpn == 1:
        dqpn = 2  # QP1 carries CM MADs
    if is_cnp:
        payload, pad = b"", 0
    elif op == 0x1D:
        payload, pad = rng.randbytes(8), 0
    elif has_payload:
        n = rng.randrange(1025) if rng.random() < 0.1 else rng.randrange(65)
        payload, pad = rng.randbytes(n), (-n) % 4
    else:
        payload, pad = b"", 0
    bth = BTH(opcode=op, solicited=rng.randrange(2), migreq=rng.randrange(2), padcount=pad, version=0,
              pkey=rng.randrange(65536), fecn=rng.randrange(2), becn=rng.randrange(2), resv6=rng.randrange(64),
              dqpn=dqpn, ackreq=rng.randrange(2), resv7=rng.randrange(128), psn=rng.randrange(1 << 24))
    pkt = eth / l3 / udp / bth
    if is_cnp:
        pkt = pkt / CNPPadding(reserved1=rng.getrandbits(64), reserved2=rng.getrandbits(64))
    else:
        body = b""
        for h in headers:
            hb = header_bytes(rng, h, op)
            if hb is None:  # IRN: NAK(PSN sequence error) and a SACK PSN
                pkt = pkt / AETH(syndrome=0x60, msn=rng.randrange(1 << 24))
                body += b"\x00" + rng.randbytes(3)
            elif h == "AETH" and op in (0x11, 0x51) and not body:
                pkt = pkt / AETH(syndrome=hb[0], msn=int.from_bytes(hb[1:], "big"))
            else:
                body += hb
        body += payload + rng.randbytes(pad)
        if body:
            pkt = pkt / Raw(body)
    wire = raw(pkt)
    if rng.random() < 0.3 and len(wire) < 60:
        wire += bytes(60 - len(wire))  # Ethernet minimum-size padding
    if rng.random() < 0.2:
        wire += rng.randbytes(4)  # a captured FCS
    return Built(pkt, wire, op, len(payload), v6)


def variant_twin(rng, b):
    """`b` with its ICRC-variant fields changed and its ICRC kept."""
    p = b.pkt.copy()
    p[BTH].icrc = b.bth.icrc
    p[BTH].fecn, p[BTH].becn, p[BTH].resv6 = rng.randrange(2), rng.randrange(2), rng.randrange(64)
    p[UDP].chksum = rng.randrange(65536)
    if b.v6:
        p[IPv6].tc, p[IPv6].fl, p[IPv6].hlim = rng.randrange(256), rng.randrange(1 << 20), rng.randrange(256)
    else:
        p[IP].tos, p[IP].ttl, p[IP].chksum = rng.randrange(256), rng.randrange(256), None
    return Built(p, raw(p), b.op, b.payload_len, b.v6)


# --------------------------------------------------------------------------------------------
# The checks.

VECTORS = [
    ("UC SEND Only, IPv4, PadCnt 2",
     "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca2"
     "2460ffff000000d300cf17104630818be28935d90e9a95505401be885e50000078f353f3", "78f353f3"),
    ("CNP (0x81), IPv4, BECN set (ConnectX-4 Lx)",
     "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a0012010000"
     "12b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a", "82fd002a"),
]


def compare_decode(res, tool, pcap, expected, status, label):
    """`rocescope decode` prints the expected ICRC, status and fields for every frame."""
    rows = tool.fields(pcap, FIELDS)
    res.check(len(rows) == len(expected), f"{label}: {len(rows)} lines for {len(expected)} frames")
    for row, (desc, icrc, want) in zip(rows, expected):
        num, got_icrc, got_status, opcode, psn, dqpn, plen, warning = row
        where = f"{label}: frame {num} ({desc})"
        res.check(got_icrc == icrc, f"{where}: rocescope ICRC {got_icrc}, scapy {icrc}")
        res.check(got_status == status, f"{where}: status {got_status!r}, expected {status!r} ({warning})")
        if want is not None:
            got = (int(opcode), int(psn), int(dqpn), int(plen))
            res.check(got == want, f"{where}: opcode/psn/destqp/payload_len {got}, expected {want}")
            res.check(warning == "", f"{where}: warnings {warning!r}")


def scapy_to_rocescope(res, tool, rng, count, tmp):
    before = (res.passed, res.failed)
    ops = sorted(OPCODES)
    built, twins = [], []
    for i in range(count):
        # Every opcode in turn, first over IPv4 then over IPv6 (at random when too few packets).
        v6 = (i // len(ops)) % 2 == 1 if count >= 2 * len(ops) else rng.random() < 0.5
        b = scapy_packet(rng, ops[i % len(ops)], v6)
        built.append(b)
        t = variant_twin(rng, b)
        twins.append(t)
        # scapy masks the same variant fields: the twin's ICRC computes to the kept value.
        res.check(t.bth.compute_icrc(None) == b.icrc,
                  f"scapy: variant twin of frame {i + 1} computes {t.bth.compute_icrc(None).hex()}, not {b.icrc.hex()}")
    pcap = os.path.join(tmp, "scapy_random.pcap")
    wires = [b.wire for b in built] + [t.wire for t in twins] + [bytes.fromhex(h) for _, h, _ in VECTORS]
    wrpcap(pcap, [Ether(w) for w in wires], linktype=1)
    # wrpcap re-serialises packets; make sure the bytes on file are ours.
    on_file = [raw(p) for p in rdpcap(pcap)]
    res.check(on_file == wires, "pcap written by scapy holds the packets byte for byte")
    expected = []
    for k, b in enumerate(built + twins):
        kind = "twin " if k >= len(built) else ""
        desc = f"{kind}opcode 0x{b.op:02x} {'IPv6' if b.v6 else 'IPv4'}"
        expected.append((desc, b.icrc.hex(), (b.op, b.psn, b.dqpn, b.payload_len)))
    for name, _, icrc in VECTORS:
        expected.append((name, icrc, None))
    r = tool.run("check", pcap)
    res.check(r.returncode == 0, f"rocescope check {pcap}: exit {r.returncode}: {r.stdout.strip()[:2000]} {r.stderr.strip()}")
    compare_decode(res, tool, pcap, expected, "good", "scapy→rocescope")
    res.group(f"scapy → rocescope, {len(built)} random packets + {len(twins)} variant twins + {len(VECTORS)} vectors", before)
    return built


def corrupted(res, tool, rng, built, tmp):
    before = (res.passed, res.failed)
    wires, expected = [], []
    for b in built:
        w = bytearray(b.wire)
        i = rng.choice([k for k in range(b.bth_off, b.end) if k != b.bth_off + 4])
        w[i] ^= rng.randrange(1, 256)
        icrc = bytes(w[b.end - 4:b.end]).hex()
        wires.append(bytes(w))
        expected.append((f"opcode 0x{b.op:02x}, byte {i - b.bth_off} after the BTH changed", icrc, None))
    pcap = os.path.join(tmp, "scapy_corrupted.pcap")
    wrpcap(pcap, [Ether(w) for w in wires], linktype=1)
    r = tool.run("check", pcap)
    res.check(r.returncode == 1, f"rocescope check on corrupted packets: exit {r.returncode}, expected 1")
    lines = [line for line in r.stdout.splitlines() if "ICRC mismatch" in line]
    res.check(len(lines) == len(wires), f"rocescope check lists {len(lines)} ICRC mismatches for {len(wires)} corrupted packets")
    compare_decode(res, tool, pcap, expected, "bad", "corrupted")
    res.group(f"corrupted packets flagged bad, {len(wires)} packets", before)


def builder_frames(args, seed):
    if args.builder_frames:
        with open(args.builder_frames) as f:
            return [bytes.fromhex(line.strip()) for line in f if line.strip()]
    cmd = ["cargo", "run", "-q", "-p", "rocescope-codec", "--example", "icrc_frames", "--", str(seed), str(args.count)]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return [bytes.fromhex(line) for line in r.stdout.split()]


def rocescope_to_scapy(res, tool, frames, tmp):
    before = (res.passed, res.failed)
    expected = []
    for n, w in enumerate(frames, 1):
        p = dissect(w)
        bth = p.getlayer(BTH)
        if not res.check(bth is not None, f"builder frame {n}: scapy finds no BTH in {p.summary()}"):
            continue
        wire = struct.pack("!I", bth.icrc)
        computed = bth.compute_icrc(None)
        v = "IPv6" if p.haslayer(IPv6) else "IPv4"
        res.check(wire == computed,
                  f"builder frame {n} (opcode 0x{bth.opcode:02x}, {v}): ICRC on the wire {wire.hex()}, scapy computes {computed.hex()}")
        expected.append((f"builder opcode 0x{bth.opcode:02x} {v}", wire.hex(), None))
    pcap = os.path.join(tmp, "builder.pcap")
    wrpcap(pcap, [Ether(w) for w in frames], linktype=1)
    r = tool.run("check", pcap)
    res.check(r.returncode == 0, f"rocescope check on builder frames: exit {r.returncode}: {r.stdout.strip()[:2000]}")
    compare_decode(res, tool, pcap, expected, "good", "builder")
    res.group(f"rocescope builder → scapy compute_icrc, {len(frames)} frames", before)


def vectors(res):
    before = (res.passed, res.failed)
    for name, h, icrc in VECTORS:
        p = Ether(bytes.fromhex(h))
        res.check(struct.pack("!I", p[BTH].icrc).hex() == icrc, f"vector {name}: wire ICRC")
        res.check(p[BTH].compute_icrc(None).hex() == icrc, f"vector {name}: scapy computes {p[BTH].compute_icrc(None).hex()}")
        q = p.copy()
        q[BTH].icrc = None
        res.check(raw(q).hex() == h, f"vector {name}: scapy rebuilds it byte for byte")
    res.group("WIRE.md A.5 test vectors in scapy (rocescope: see scapy → rocescope)", before)


def std_mix(res):
    path = os.path.join(ROOT, "fixtures", "std-mix.pcapng")
    if not os.path.exists(path):
        print(f"SKIPPED {os.path.relpath(path, ROOT)}: not present")
        return
    before = (res.passed, res.failed)
    for n, p in enumerate(rdpcap(path), 1):
        p = dissect(raw(p))
        bth = p.getlayer(BTH)
        if bth is None or not p.haslayer(UDP):
            continue
        res.check(struct.pack("!I", bth.icrc) == bth.compute_icrc(None), f"std-mix frame {n}: scapy disagrees with its ICRC")
    res.group("fixtures/std-mix.pcapng RoCEv2 frames verified by scapy", before)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=int(os.environ.get("ICRC_SCAPY_COUNT", "340")),
                    help="random packets per direction (default 340: every opcode four times)")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    ap.add_argument("--rocescope", default=os.environ.get("ROCESCOPE_BIN"), help="the rocescope binary (default: cargo run)")
    ap.add_argument("--builder-frames", help="hex frames from the builder, one per line (default: run the icrc_frames example)")
    ap.add_argument("--keep", help="write the pcaps to this directory and keep them")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    print(f"icrc_scapy: seed {seed} (rerun with --seed {seed}), {args.count} packets per direction")
    rng = random.Random(seed)
    tool = Tool(args.rocescope)
    res = Results()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = args.keep or tmp
            os.makedirs(out, exist_ok=True)
            vectors(res)
            built = scapy_to_rocescope(res, tool, rng, args.count, out)
            corrupted(res, tool, rng, built, out)
            rocescope_to_scapy(res, tool, builder_frames(args, seed), out)
            std_mix(res)
    except (RuntimeError, OSError) as e:
        print(f"icrc_scapy: {e}", file=sys.stderr)
        print(f"{res.passed} passed, {res.failed} failed, 1 error")
        return 2
    print(f"{res.passed} passed, {res.failed} failed")
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
