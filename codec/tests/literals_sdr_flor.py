#!/usr/bin/env python3
"""Writes the hand-laid frames of codec/tests/ext_sdr_flor.rs, field by field from WIRE.md B.2
(SDR-RDMA) and B.3 (Flor), with the IPv4 checksum and the ICRC computed here (zlib's CRC-32 over
the masked bytes of WIRE.md A.5), independently of the Rust codec. Prints one
`const NAME: &str = "hex";` per frame.
"""
import os, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire_helpers import MAC, icrc, ipv4

def rocev2(roce, tos=0x68, sport=0xC000):
    udp = struct.pack("!HHHH", sport, 4791, 8 + len(roce) + 4, 0)
    ip = ipv4(tos, 8 + len(roce) + 4)
    frame = MAC + b"\x08\x00" + ip + udp + roce + icrc(ip, udp, roce)
    return frame + b"\0" * max(0, 60 - len(frame))

def bth(op, qp, psn, pad=0, se=0, a=0, pkey=0xFFFF):
    return struct.pack("!BBHB", op, se << 7 | pad << 4, pkey, 0) + qp.to_bytes(3, "big") + bytes([a << 7]) + psn.to_bytes(3, "big")

def with_pad(op, qp, psn, headers, payload):
    """BTH (PadCnt for the payload) + headers + payload + pad bytes."""
    pad = (4 - len(payload) % 4) % 4
    return bth(op, qp, psn, pad=pad) + headers + payload + b"\0" * pad

def reth(va, rkey, dmalen): return struct.pack("!QII", va, rkey, dmalen)
def imm(v): return struct.pack("!I", v)
def deth(qkey=0x11111111, srcqp=0x22): return struct.pack("!I", qkey) + b"\0" + srcqp.to_bytes(3, "big")
def u32(*vs): return b"".join(struct.pack("!I", v) for v in vs)
def u64(*vs): return b"".join(struct.pack("!Q", v) for v in vs)

frames = {}

# ---- SDR (B.2) ---------------------------------------------------------------------------------
# Data: UC RDMA WRITE Only with Immediate (0x2B) = BTH · RETH · ImmDt · payload.
# Worked example 10·18·4: id 3, offset 5, fragment 0xA -> 0x00C0005A; VA = 3·2^18·4096 + 5·4096.
assert (3 << 22 | 5 << 4 | 0xA) == 0x00C0005A
data = bytes(range(16))
frames["SDR_DATA_WORKED"] = rocev2(with_pad(0x2B, 0x000101, 7,
    reth(3 * (1 << 18) * 4096 + 5 * 4096, 0x1000, 16) + imm(0x00C0005A), data))
# 8·22·2: id 3, offset 5, fragment 2 -> 0x03000016; VA = 3·2^22·4096 + 5·4096.
assert (3 << 24 | 5 << 2 | 2) == 0x03000016
frames["SDR_DATA_8_22_2"] = rocev2(with_pad(0x2B, 0x000101, 8,
    reth(3 * (1 << 22) * 4096 + 5 * 4096, 0x1000, 16) + imm(0x03000016), data))

def ctrl(typ, msg_seq, body, magic=0x53, version=1, flags=0):
    return bytes([magic, version, typ, flags]) + u32(msg_seq) + body

UC_SEND_ONLY, UD_SEND_ONLY = 0x24, 0x64
def uc_ctrl(payload, psn=1): return rocev2(with_pad(UC_SEND_ONLY, 0x000200, psn, b"", payload))
def ud_ctrl(payload, psn=1): return rocev2(with_pad(UD_SEND_ONLY, 0x000201, psn, deth(), payload))

# CTS: msg_seq 7, posted buffer 4 GiB.
frames["SDR_CTS"] = uc_ctrl(ctrl(1, 7, u64(1 << 32)))
# SR_ACK: msg_seq 9, cum_ack 12, 13 bits; received chunks 13, 14, 17, 21, 24 = bits 1, 2, 5, 9, 12
# (byte j/8, bit j mod 8, least significant first): 0x26 0x12.
sack = [0, 0]
for j in (1, 2, 5, 9, 12):
    sack[j // 8] |= 1 << (j % 8)
assert bytes(sack) == b"\x26\x12"
frames["SDR_SR_ACK"] = uc_ctrl(ctrl(2, 9, u32(12, 13) + bytes(sack)))
# End-of-message SR_ACK: cum_ack 64, no bitmap.
frames["SDR_SR_ACK_EMPTY"] = uc_ctrl(ctrl(2, 9, u32(64, 0)))
# SR_NACK over UD (DETH): msg_seq 10, chunks 4, 8, 15.
frames["SDR_SR_NACK"] = ud_ctrl(ctrl(3, 10, u32(3, 4, 8, 15)))
# EC_ACK: empty body.
frames["SDR_EC_ACK"] = uc_ctrl(ctrl(4, 20, b""))
# EC_NACK over UD: msg_seq 22 (D0), failed data submessages 0 and 3.
frames["SDR_EC_NACK"] = ud_ctrl(ctrl(5, 22, u32(2, 0, 3)))
# Malformed control messages.
frames["SDR_BAD_MAGIC"] = uc_ctrl(ctrl(1, 7, u64(4096), magic=0x54))
frames["SDR_BAD_VERSION"] = uc_ctrl(ctrl(1, 7, u64(4096), version=2))
frames["SDR_BAD_TYPE"] = uc_ctrl(ctrl(6, 7, u64(4096)))
frames["SDR_NACK_SHORT_LIST"] = ud_ctrl(ctrl(3, 10, u32(3, 4, 8)))          # count 3, 2 indices
frames["SDR_SACK_SHORT_MAP"] = uc_ctrl(ctrl(2, 9, u32(12, 20) + b"\xff\xff"))  # 20 bits need 3 bytes
frames["SDR_CTS_SHORT_BODY"] = uc_ctrl(ctrl(1, 7, u32(4096)))              # 4-byte body
frames["SDR_HALF_HEADER"] = uc_ctrl(b"\x53\x01\x01\x00\x00")               # 5 of 8 bytes
frames["SDR_FLAGS_SET"] = uc_ctrl(ctrl(1, 7, u64(4096), flags=0x01))
frames["SDR_SACK_TRAILING"] = uc_ctrl(ctrl(2, 9, u32(0, 3) + b"\x09"))      # bit 3 beyond 3 bits
# Not an SDR packet: RC SEND Only.
frames["SDR_RC_SEND"] = rocev2(with_pad(0x04, 0x000300, 5, b"", b"hello sdr!"))

# ---- Flor (B.3) --------------------------------------------------------------------------------
# WRITE with Immediate: hint 1 · mid 21 · chunk_off 10. Test vectors from WIRE.md.
assert (1 << 10 | 0) == 0x400 and (1 << 10 | 2) == 0x402 and (1 << 31 | 1 << 10 | 2) == 0x80000402
frames["FLOR_WRITE_ONLY_400"] = rocev2(with_pad(0x0B, 0x000400, 11,
    reth(0x7f0000000000, 0x77, 8) + imm(0x00000400), b"chunk#0!"))
frames["FLOR_UC_WRITE_LAST_402"] = rocev2(with_pad(0x29, 0x000401, 12, imm(0x00000402), b"chunk#2!"))
frames["FLOR_RC_WRITE_LAST_HINT"] = rocev2(with_pad(0x09, 0x000400, 13, imm(0x80000402), b"hinted!!"))

def send_hdr(typ, rn, gn, write_rn, body_len, flags=0, version=1, reserved=0):
    return bytes([version, typ, flags, reserved]) + u32(rn) + u64(gn) + u32(write_rn, body_len)

# DATA, RC SEND Only, hint flag, 8-byte body.
frames["FLOR_SEND_DATA"] = rocev2(with_pad(0x04, 0x000400, 14, b"",
    send_hdr(1, 1, 2, 0, 8, flags=0x80) + b"smallmsg"))
# WRITE_RETX in a UC SEND First: 40 of the 4096 body bytes in this packet; write_rn mid 1 off 0.
frames["FLOR_SEND_RETX_FIRST"] = rocev2(with_pad(0x20, 0x000401, 15, b"",
    send_hdr(2, 2, 4, 0x00000400, 4096) + bytes(range(40))))
# ADDR_REQ in an RC SEND Only with Immediate: mid 7, message length 1 MiB.
frames["FLOR_ADDR_REQ"] = rocev2(with_pad(0x05, 0x000400, 16, imm(0x1234),
    send_hdr(3, 3, 5, 0, 16) + u32(7, 0) + u64(1 << 20)))
# ADDR_RESP in a UC SEND Only: mid 7, R_Key 0xabcd, VA 0x7f0000000000, buffer 1 MiB.
frames["FLOR_ADDR_RESP"] = rocev2(with_pad(0x24, 0x000402, 17, b"",
    send_hdr(4, 1, 1, 0, 24) + u32(7, 0xabcd) + u64(0x7f0000000000, 1 << 20)))
# Software ACK on UD: QPN 0x400, least_gn 100, delay 2500 ns, 4 entries.
entries = u32(0x00000400, 0x80000402, 0, 3)
# Bitmap 0x30000000: entries 2, 3 set (bit 31 = entry 0).
frames["FLOR_ACK"] = rocev2(with_pad(0x64, 0x000500, 18, deth(), u32(0x400, 0x30000000) + u64(100, 2500) + entries))
# The paper's example bitmap 0xC0000000 (entries 0, 1 set).
frames["FLOR_ACK_PAPER"] = rocev2(with_pad(0x64, 0x000500, 19, deth(), u32(0x400, 0xC0000000) + u64(100, 2500) + entries))
# Not a Flor mark: RC SEND Middle.
frames["FLOR_SEND_MIDDLE"] = rocev2(with_pad(0x01, 0x000400, 20, b"", b"\x02\x09middle"))
# Malformed.
frames["FLOR_BAD_VERSION"] = rocev2(with_pad(0x04, 0x000400, 21, b"", send_hdr(1, 1, 2, 0, 4, version=2) + b"abcd"))
frames["FLOR_BAD_TYPE"] = rocev2(with_pad(0x24, 0x000400, 22, b"", send_hdr(5, 1, 2, 0, 4) + b"abcd"))
frames["FLOR_BODY_LEN_MISMATCH"] = rocev2(with_pad(0x04, 0x000400, 23, b"", send_hdr(1, 1, 2, 0, 12) + b"8 bytes!"))
frames["FLOR_HALF_HEADER"] = rocev2(with_pad(0x04, 0x000400, 24, b"", send_hdr(1, 1, 2, 0, 0)[:10]))
frames["FLOR_WRITE_RN_ON_DATA"] = rocev2(with_pad(0x04, 0x000400, 25, b"", send_hdr(1, 1, 2, 0x402, 4) + b"abcd"))
frames["FLOR_ADDR_BAD_LEN"] = rocev2(with_pad(0x04, 0x000400, 26, b"", send_hdr(3, 3, 5, 0, 8) + u32(7, 0)))
frames["FLOR_RESERVED_FLAGS"] = rocev2(with_pad(0x04, 0x000400, 27, b"", send_hdr(1, 1, 2, 0, 4, flags=0x81) + b"abcd"))
frames["FLOR_ACK_BITS_BEYOND"] = rocev2(with_pad(0x64, 0x000500, 28, deth(), u32(0x400, 0x20000000) + u64(100, 2500) + u32(1, 2)))
frames["FLOR_ACK_BAD_LEN"] = rocev2(with_pad(0x64, 0x000500, 29, deth(), u32(0x400, 0x80000000) + u64(100, 2500) + b"\0\0\0\0\0\0"))

for name, f in frames.items():
    print(f'const {name}: &str = "{f.hex()}";')
print("const ALL: &[&str] = &[" + ", ".join(frames) + "];")
