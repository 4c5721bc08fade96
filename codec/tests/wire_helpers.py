"""Byte-level helpers of the literal generators (literals*.py): addresses, the RFC 1071 checksum,
IPv4/IPv6 headers and the ICRC of WIRE.md A.5 (zlib's CRC-32 over the masked bytes), written
from the RFCs and the spec, independently of the Rust codec.
"""
import struct, zlib

MAC = bytes.fromhex("020000000002" "020000000001")
A = b"\x0a\x00\x00\x01"  # 10.0.0.1
B = b"\x0a\x00\x00\x02"  # 10.0.0.2
UDP, TCP = 17, 6

def csum(b):
    """RFC 1071 ones' complement sum (odd lengths padded with a zero byte)."""
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF

def ipv4(tos, payload_len, src=A, dst=B, proto=UDP, ident=0):
    """An IPv4 header (DF set, TTL 64) with its checksum."""
    h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + payload_len, ident, 0x4000, 64, proto, 0, src, dst))
    h[10:12] = struct.pack("!H", csum(bytes(h)))
    return bytes(h)

def ipv6(tc, payload_len):
    """An IPv6 header fd00::1 -> fd00::2 carrying UDP."""
    w = (6 << 28) | (tc << 20)
    return struct.pack("!IHBB", w, payload_len, UDP, 64) + bytes([0xfd] + [0] * 14 + [1]) + bytes([0xfd] + [0] * 14 + [2])

def icrc(ip, udp, roce):
    """WIRE.md A.5: CRC-32 over 8 bytes of 0xFF, the IP header with ToS/TTL/checksum (IPv4) or
    traffic class/flow label/hop limit (IPv6) masked, the UDP header with its checksum masked and
    the RoCE bytes with the BTH's byte 4 masked; little-endian on the wire."""
    m = bytearray(ip)
    if ip[0] >> 4 == 4:
        m[1] = 0xff; m[8] = 0xff; m[10] = 0xff; m[11] = 0xff
    else:
        m[0] |= 0x0f; m[1:4] = b"\xff\xff\xff"; m[7] = 0xff
    u = bytearray(udp); u[6] = u[7] = 0xff
    r = bytearray(roce); r[4] = 0xff
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(m) + bytes(u) + bytes(r)))

def pad60(frame):
    """Ethernet's minimum frame (without FCS)."""
    return frame + b"\0" * max(0, 60 - len(frame))

def u24(v):
    return v.to_bytes(3, "big")
