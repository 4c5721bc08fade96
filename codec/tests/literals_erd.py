#!/usr/bin/env python3
"""Writes the hand-laid frames of codec/tests/ext_erd.rs (ERD, WIRE.md B.5), field by field from
WIRE.md's tables: RoCEv2 frames with the IPv4 checksum and the ICRC (A.5) computed here, and
Ethernet/IPv4/TCP frames of a NACK stream with the IPv4 and TCP checksums computed here,
independently of the Rust codec. Prints one `const NAME: &str = "hex";` per frame.

Run: python3 codec/tests/literals_erd.py
"""
import os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire_helpers import A, B, MAC, TCP, csum, icrc, ipv4, pad60, u24

def rocev2(roce):
    udp = struct.pack("!HHHH", 0xC000, 4791, 8 + len(roce) + 4, 0)
    ip = ipv4(0x68, 8 + len(roce) + 4)
    return pad60(MAC + b"\x08\x00" + ip + udp + roce + icrc(ip, udp, roce))

def bth(op, qp, psn, se=0, pad=0, a=0, pkey=0xFFFF):
    return struct.pack("!BBHB", op, se << 7 | pad << 4, pkey, 0) + qp.to_bytes(3, "big") + bytes([a << 7]) + psn.to_bytes(3, "big")


def rdeth(eec): return b"\0" + u24(eec)
def deth(qkey, srcqp): return struct.pack("!I", qkey) + b"\0" + u24(srcqp)

# EETH (B.5): byte 0 bit 7 Type, bit 6 Last, bits 5..0 reserved; byte 1 reserved; 2-3 Msg_ID;
# 4-5 S_Len; 6-7 reserved; 8-11 S_Offset.
def eeth(ty, last, msg_id, s_len, s_offset, rsv0=0, rsv1=0, rsv67=0):
    return bytes([ty << 7 | last << 6 | rsv0, rsv1]) + struct.pack("!HHHI", msg_id, s_len, rsv67, s_offset)

def padded(payload):
    n = (4 - len(payload) % 4) % 4
    return payload + b"\0" * n, n

frames = {}
# RD SEND Only (0x44): BTH · RDETH · DETH · EETH · data.
pl, n = padded(eeth(1, 0, 0x0102, 8, 4096) + b"ERDDATA!")
frames["RD_SEND_EETH"] = rocev2(bth(0x44, 0x12, 100, pad=n) + rdeth(0xABC) + deth(0x11111111, 0x34) + pl)
# RD SEND Only with Immediate (0x45): BTH · RDETH · DETH · ImmDt · EETH · data, the last piece.
pl, n = padded(eeth(1, 1, 0x0102, 5, 4104) + b"tail!")
frames["RD_SEND_IMM_EETH_LAST"] = rocev2(bth(0x45, 0x12, 101, se=1, pad=n) + rdeth(0xABC) + deth(0x11111111, 0x34)
    + struct.pack("!I", 0xCAFEBABE) + pl)
# UD SEND Only (0x64): BTH · DETH · EETH · data; a single-packet message (Type 0, Last).
pl, n = padded(eeth(0, 1, 7, 4, 0) + b"solo")
frames["UD_SEND_EETH"] = rocev2(bth(0x64, 0x22, 200, pad=n) + deth(0x80010000, 0x56) + pl)
# UD SEND Only with Immediate (0x65), reserved EETH bits set (ignored).
pl, n = padded(eeth(1, 0, 8, 12, 0x10000, rsv0=0x15, rsv1=0xAA, rsv67=0xBEEF) + b"twelve bytes")
frames["UD_SEND_IMM_EETH"] = rocev2(bth(0x65, 0x22, 201, pad=n) + deth(0x80010000, 0x56) + struct.pack("!I", 42) + pl)
# S_Len says 100, 8 bytes follow.
pl, n = padded(eeth(1, 0, 9, 100, 0) + b"8 bytes.")
frames["UD_SEND_SLEN_MISMATCH"] = rocev2(bth(0x64, 0x22, 202, pad=n) + deth(0x80010000, 0x56) + pl)
# Half an EETH: 6 payload bytes (PadCnt 2).
pl, n = padded(eeth(1, 0, 9, 0, 0)[:6])
frames["UD_SEND_SHORT_EETH"] = rocev2(bth(0x64, 0x22, 203, pad=n) + deth(0x80010000, 0x56) + pl)
# An RC SEND Only: ERD does not apply.
frames["RC_SEND_ONLY"] = rocev2(bth(0x04, 0x12, 300) + b"not an eeth here")

# ---- NACK stream (B.5): messages `magic 0x4E · version 1 · count 16` + count × 12-byte entries
# `reserved 8 · src QPN 24 · reserved 8 · dst QPN 24 · reserved 8 · lost PSN 24`, over TCP
# 10.0.0.2:40000 -> 10.0.0.1:4792, ISN close to the wrap.
def nack(entries, magic=0x4E, version=1):
    return bytes([magic, version]) + struct.pack("!H", len(entries)) + b"".join(
        b"\0" + u24(s) + b"\0" + u24(d) + b"\0" + u24(p) for s, d, p in entries)

M = [
    [(0x101, 0x201, 100), (0x101, 0x201, 103)],                       # M1   0..28
    [(0x102, 0x202, 0xFFFFFF)],                                       # M2  28..44
    [(0x103, 0x203, 7), (0x103, 0x203, 9), (0x104, 0x204, 0x123456)], # M3  44..84
    [(0x105, 0x205, 1)],                                              # M4  84..100
    [(0x106, 0x206, 2), (0x106, 0x206, 3)],                           # M5 100..128 (partly lost)
    [(0x107, 0x207, 4)],                                              # M6 128..144
]
stream = b"".join(nack(m) for m in M)
stream += nack([(0x1FF, 0x2FF, 0x1FF)], magic=0x4F)                  # bad magic 144..160
stream += nack([(0x108, 0x208, 5)])                                   # M7 160..176
assert len(stream) == 176
ISN = 0xFFFFFFF0
FIN, SYN, PSH, ACK = 0x01, 0x02, 0x08, 0x10

def tcp_frame(src, dst, sport, dport, seq, ack, flags, payload, opts=b"", ident=0):
    hl = 20 + len(opts)
    assert hl % 4 == 0
    ip = ipv4(0, hl + len(payload), src=src, dst=dst, proto=TCP, ident=ident)
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack, (hl // 4) << 4, flags, 0xFFFF, 0, 0) + opts
    pseudo = src + dst + struct.pack("!BBH", 0, 6, hl + len(payload))
    c = csum(pseudo + hdr + payload)
    hdr = hdr[:16] + struct.pack("!H", c) + hdr[18:]
    return pad60(MAC + b"\x08\x00" + ip + hdr + payload)

def seg(lo, hi, flags=PSH | ACK, opts=b"", ident=0):
    return tcp_frame(B, A, 40000, 4792, ISN + 1 + lo, 1, flags, stream[lo:hi], opts, ident)

TS = b"\x01\x01\x08\x0a" + struct.pack("!II", 0x01020304, 0x0A0B0C0D)
frames["NACK_SYN"] = tcp_frame(B, A, 40000, 4792, ISN, 0, SYN, b"", ident=1)
frames["NACK_A"] = seg(0, 3, ident=2)             # mid-header
frames["NACK_B"] = seg(3, 21, ident=3)            # mid-entry
frames["NACK_C"] = seg(21, 54, opts=TS, ident=4)  # completes M1 and M2; TCP options
frames["NACK_ACK_BACK"] = tcp_frame(A, B, 4792, 40000, 1, (ISN + 1 + 54) & 0xFFFFFFFF, ACK, b"", ident=5)
frames["NACK_D"] = seg(54, 84, ident=6)           # completes M3
frames["NACK_E"] = seg(80, 100, ident=7)          # overlaps 4 bytes, completes M4
frames["NACK_G"] = seg(110, 144, ident=8)         # bytes 100..110 never captured: gap; M6
frames["NACK_H"] = seg(144, 176, ident=9)         # wrong magic, then M7
frames["NACK_FIN"] = seg(176, 176, flags=FIN | ACK, ident=10)
frames["NACK_OTHER_PORT"] = tcp_frame(B, A, 40000, 22, 5, 1, PSH | ACK, nack(M[0]), ident=11)
# A TCP header whose data offset is 4 (16 bytes: malformed).
bad = bytearray(tcp_frame(B, A, 40000, 4792, 1, 1, ACK, b"abcd", ident=12))
bad[14 + 20 + 12] = 4 << 4
frames["TCP_BAD_OFFSET"] = bytes(bad)

for name, f in frames.items():
    print(f'const {name}: &str = "{f.hex()}";')
