#!/usr/bin/env python3
"""Computes the ICRC and VCRC of native InfiniBand packets (link type 247) with crcmod, an
implementation independent of rocescope's, and prints one verdict line per frame.

The CRC definitions (docs/link-types.md):
- ICRC: CRC-32, polynomial 0x04C11DB7, reflected, register initialised to ones, result
  complemented (crcmod's `crc-32`), over the packet from the LRH's first byte up to the ICRC,
  with the variant fields set to ones (IBTA Vol. 1 §7.8.1): in a local packet (LNH 2) the LRH's
  VL; in a global packet (LNH 3) the whole LRH (routers rewrite it), the GRH's traffic class,
  flow label and hop limit; in both the BTH's reserved byte 4. Stored least significant byte
  first.
- VCRC: CRC-16, polynomial 0x100B (x^16 + x^12 + x^3 + x + 1), reflected, register initialised
  to ones, result complemented, over the packet from the LRH through the ICRC, nothing masked
  (IBTA Vol. 1 §7.8.2; parameters as Endace's dagcrc.c). Stored least significant byte first.
  crcmod's `initCrc` is the register's initial value XORed with `xorOut`, hence 0 for both.

The packet ends where the LRH's PktLen (4-byte words, LRH through ICRC) says; the VCRC follows.

Usage: python3 tests/ib_crc_crcmod.py CAPTURE.pcapng
Prints `N icrc=good|bad vcrc=good|bad` per frame (frames numbered from 1).
"""

import struct
import sys

import crcmod

ICRC = crcmod.mkCrcFun(0x104C11DB7, initCrc=0, rev=True, xorOut=0xFFFFFFFF)
VCRC = crcmod.mkCrcFun(0x1100B, initCrc=0, rev=True, xorOut=0xFFFF)


def pcapng_packets(data):
    """(linktype, packet bytes) of every Enhanced Packet Block (little-endian sections only)."""
    linktypes = []
    off = 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        if btype == 0x0A0D0D0A:
            assert data[off + 8:off + 12] == b"\x4d\x3c\x2b\x1a", "little-endian pcapng only"
            linktypes = []
        elif btype == 1:
            linktypes.append(struct.unpack_from("<H", data, off + 8)[0])
        elif btype == 6:
            iface, _, _, caplen, _ = struct.unpack_from("<IIIII", data, off + 8)
            yield linktypes[iface], data[off + 28:off + 28 + caplen]
        off += blen


def verdicts(pkt):
    lnh = pkt[1] & 3
    pkt_len = 4 * (struct.unpack_from(">H", pkt, 4)[0] & 0x7FF)
    icrc_at = pkt_len - 4
    if lnh == 2:
        masked = bytearray(pkt[:icrc_at])
        masked[0] |= 0xF0  # VL
        bth = 8
    elif lnh == 3:
        masked = bytearray(b"\xff" * 8) + bytearray(pkt[8:icrc_at])
        masked[8] |= 0x0F  # traffic class (low nibble of byte 0, high of byte 1) and flow label
        masked[9:12] = b"\xff\xff\xff"
        masked[15] = 0xFF  # hop limit
        bth = 48
    else:
        raise ValueError(f"LNH {lnh}: not an IBA transport packet")
    masked[bth + 4] = 0xFF  # BTH reserved byte
    icrc_wire = struct.unpack_from("<I", pkt, icrc_at)[0]
    vcrc_wire = struct.unpack_from("<H", pkt, pkt_len)[0]
    icrc_ok = ICRC(bytes(masked)) == icrc_wire
    vcrc_ok = VCRC(bytes(pkt[:pkt_len])) == vcrc_wire
    return icrc_ok, vcrc_ok


def main():
    data = open(sys.argv[1], "rb").read()
    for n, (linktype, pkt) in enumerate(pcapng_packets(data), 1):
        assert linktype == 247, f"frame {n}: link type {linktype}, not 247"
        icrc_ok, vcrc_ok = verdicts(pkt)
        word = lambda ok: "good" if ok else "bad"
        print(f"{n} icrc={word(icrc_ok)} vcrc={word(vcrc_ok)}")


if __name__ == "__main__":
    main()
