#!/usr/bin/env python3
"""Writes the hand-laid frames of codec/tests/ext_*.rs, field by field from WIRE.md's tables,
with the IPv4 checksum and the ICRC computed here (zlib's CRC-32 over the masked bytes of
WIRE.md A.5), independently of the Rust codec. Prints one `const NAME: &str = "hex";` per frame.
"""
import os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire_helpers import MAC, icrc, ipv4, ipv6, u24

def rocev2(tos, roce, v6=False, with_icrc=True, sport=0xC000):
    body = roce + (b"" if not with_icrc else b"\0\0\0\0")
    udp = struct.pack("!HHHH", sport, 4791, 8 + len(body), 0)
    ip = ipv6(tos, 8 + len(body)) if v6 else ipv4(tos, 8 + len(body))
    if with_icrc:
        body = roce + icrc(ip, udp, roce)
    return MAC + (b"\x86\xdd" if v6 else b"\x08\x00") + ip + udp + body

def bth(op, qp, psn, se=0, m=0, pad=0, a=0, pkey=0xFFFF, byte4=0):
    return struct.pack("!BBHB", op, se << 7 | m << 6 | pad << 4, pkey, byte4) + qp.to_bytes(3, "big") + bytes([a << 7]) + psn.to_bytes(3, "big")

frames = {}
# DCP (B.1), tag at ToS bits 3..2: 10 data (ToS 0x68 = DSCP 26), 11 HO (0x6C), 01 ACK (0x64).
frames["DCP_WRITE_MIDDLE"] = rocev2(0x68, bth(0x07, 0x12, 100) + u24(5) + b"\x01"
    + struct.pack("!QII", 0x7f0000001000, 0x1234, 16384) + b"ABCDEFGH")
frames["DCP_SEND_ONLY_IMM"] = rocev2(0x68, bth(0x05, 0x12, 101, se=1, pad=1) + u24(6) + b"\x00"
    + u24(3) + b"\x00" + struct.pack("!I", 0xdeadbeef) + b"xyz" + b"\0")
frames["DCP_WRITE_ONLY_IMM"] = rocev2(0x68, bth(0x0B, 0x12, 102) + u24(7) + b"\x02"
    + struct.pack("!QII", 0x7f0000002000, 0x1234, 4) + u24(4) + b"\x00" + struct.pack("!I", 42) + b"WXYZ")
frames["DCP_SEND_ONLY_INV"] = rocev2(0x68, bth(0x17, 0x12, 103) + u24(8) + b"\x00" + u24(5) + b"\x00"
    + struct.pack("!I", 0x5555) + b"pqrs")
frames["DCP_READ_REQ"] = rocev2(0x68, bth(0x0C, 0x12, 104) + u24(9) + b"\x00" + struct.pack("!QII", 0x1000, 0x77, 8192))
# Header-only: the BTH of the original (WRITE Middle, PadCnt 2, A set) + 3 bytes of MSN, no ICRC;
# 57 bytes, then 3 bytes of Ethernet padding on the wire.
ho = rocev2(0x6C, bth(0x07, 0x12, 100, pad=2, a=1) + u24(5), with_icrc=False)
assert len(ho) == 57
frames["DCP_HO_V4"] = ho + b"\0\0\0"
ho6 = rocev2(0x6C, bth(0x08, 0x34, 0xFFFFFF) + u24(0xABCDEF), v6=True, with_icrc=False)
assert len(ho6) == 77
frames["DCP_HO_V6"] = ho6
frames["DCP_ACK"] = rocev2(0x64, bth(0x11, 0x99, 104) + b"\x1f" + u24(7))
frames["DCP_UNTAGGED_SEND"] = rocev2(0x60, bth(0x04, 0x12, 105) + b"plain!!!")
# NetRT (B.4): the worked example, an unfulfilled request, a marked data packet, malformed ones.
netrt_body = b"\x01" + u24(0x102) + b"\0" * 15 + b"\x0b"
frames["NETRT_REQUEST"] = rocev2(0x68, bth(0xC0, 0x12, 0x102) + netrt_body, sport=0xD123)
frames["NETRT_UNFULFILLED"] = rocev2(0x68, bth(0xC0, 0x12, 0x105) + b"\x02" + u24(0x105), sport=0xD123)
frames["NETRT_MARKED_DATA"] = rocev2(0x68, bth(0x07, 0x12, 0x105, byte4=1) + b"retx")
frames["NETRT_BAD_TYPE"] = rocev2(0x68, bth(0xC0, 0x12, 0x105) + b"\x03" + u24(0x105))
frames["NETRT_BAD_LEN"] = rocev2(0x68, bth(0xC0, 0x12, 0x102) + netrt_body[:12])
frames["NETRT_PSN_MISMATCH"] = rocev2(0x68, bth(0xC0, 0x12, 0x100) + netrt_body)

for name, f in frames.items():
    print(f'const {name}: &str = "{f.hex()}";')
