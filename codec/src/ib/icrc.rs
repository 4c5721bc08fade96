//! Invariant CRC (WIRE.md A.5; IBTA A17.8): CRC-32 (Ethernet polynomial, reflected, init
//! 0xFFFFFFFF, final complement) over 8 bytes of 0xFF, the network header with its variant
//! fields set to ones, the UDP header with checksum 0xFFFF (RoCEv2 only), the BTH with byte 4 set
//! to 0xFF, and everything after the BTH up to the ICRC. The result is stored least significant
//! byte first.
//!
//! Native InfiniBand (link type 247, docs/link-types.md; IBTA Vol. 1 §7.8.1) computes the same
//! CRC over the same fields, with one difference: a local packet (LNH 2, no GRH) has its real LRH
//! covered, its VL nibble set to ones ([`IcrcNet::Lrh`]). A global packet (LNH 3) covers the GRH
//! and not the LRH, which routers rewrite: its LRH counts as 8 bytes of ones, exactly as in
//! RoCEv1, so it is computed as [`IcrcNet::Grh`].
//!
//! `crc32fast` is used because it computes exactly this CRC with SIMD (PCLMULQDQ) acceleration,
//! several times faster than a table-driven loop.

use crc32fast::Hasher;

/// The network header an ICRC covers.
#[derive(Clone, Copy, Debug)]
pub enum IcrcNet<'a> {
    /// RoCEv2 over IPv4: the IPv4 header (with options) and the UDP header.
    Ipv4 { ip: &'a [u8], udp: &'a [u8] },
    /// RoCEv2 over IPv6: the 40-byte IPv6 header and the UDP header.
    Ipv6 { ip: &'a [u8], udp: &'a [u8] },
    /// RoCEv1, or a global native InfiniBand packet: the 40-byte GRH.
    Grh { grh: &'a [u8] },
    /// A local native InfiniBand packet: its 8-byte LRH (no GRH).
    Lrh { lrh: &'a [u8] },
}

/// Computes the ICRC of a RoCE packet. `roce` runs from the BTH to just before the ICRC.
/// Returns the value whose little-endian bytes appear on the wire.
pub fn compute(net: IcrcNet<'_>, roce: &[u8]) -> u32 {
    let mut h = Hasher::new();
    match net {
        IcrcNet::Lrh { lrh } => {
            let mut hdr = [0u8; 8];
            let n = lrh.len().min(8);
            hdr[..n].copy_from_slice(&lrh[..n]);
            hdr[0] |= 0xf0; // VL
            h.update(&hdr[..n]);
        }
        _ => h.update(&[0xff; 8]),
    }
    match net {
        IcrcNet::Ipv4 { ip, udp } => {
            let mut hdr = [0u8; 60];
            let n = ip.len().min(60);
            hdr[..n].copy_from_slice(&ip[..n]);
            hdr[1] = 0xff; // Type of Service
            hdr[8] = 0xff; // TTL
            hdr[10] = 0xff; // header checksum
            hdr[11] = 0xff;
            h.update(&hdr[..n]);
            update_udp(&mut h, udp);
        }
        IcrcNet::Ipv6 { ip, udp } => {
            update_v6(&mut h, ip);
            update_udp(&mut h, udp);
        }
        IcrcNet::Grh { grh } => update_v6(&mut h, grh),
        IcrcNet::Lrh { .. } => {}
    }
    let n = roce.len().min(12);
    let mut bth = [0u8; 12];
    bth[..n].copy_from_slice(&roce[..n]);
    if n > 4 {
        bth[4] = 0xff;
    }
    h.update(&bth[..n]);
    if roce.len() > 12 {
        h.update(&roce[12..]);
    }
    h.finalize()
}

fn update_v6(h: &mut Hasher, ip: &[u8]) {
    let mut hdr = [0u8; 40];
    let n = ip.len().min(40);
    hdr[..n].copy_from_slice(&ip[..n]);
    hdr[0] |= 0x0f; // traffic class (low nibble of byte 0, high of byte 1) and flow label
    hdr[1] = 0xff;
    hdr[2] = 0xff;
    hdr[3] = 0xff;
    hdr[7] = 0xff; // hop limit
    h.update(&hdr[..n]);
}

fn update_udp(h: &mut Hasher, udp: &[u8]) {
    let mut hdr = [0u8; 8];
    let n = udp.len().min(8);
    hdr[..n].copy_from_slice(&udp[..n]);
    hdr[6] = 0xff;
    hdr[7] = 0xff;
    h.update(&hdr[..n]);
}
