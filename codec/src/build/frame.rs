//! Whole RoCE frames (WIRE.md A.1, A.5): Ethernet (0-2 VLAN tags) · IPv4/IPv6 · UDP 4791 · the
//! RoCE packet · ICRC (RoCEv2), or Ethernet · GRH · the RoCE packet · ICRC (RoCEv1), lengths and
//! checksums computed; and [`fix_icrc`] for a frame a test changed afterwards.

use super::roce::RoceRepr;
use crate::checksum::{internet_checksum, udp_checksum};
use crate::frame::{DecodeOptions, Frame, LinkType, ETHERTYPE_ROCEV1, ROCEV2_PORT};
use crate::ib::icrc::{self, IcrcNet};

/// The network header of a RoCE frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetRepr {
    Ipv4 { src: [u8; 4], dst: [u8; 4], tos: u8, ttl: u8, ident: u16 },
    Ipv6 { src: [u8; 16], dst: [u8; 16], traffic_class: u8, flow_label: u32, hop_limit: u8 },
    /// RoCEv1: a GRH (source and destination GIDs) directly after the Ethernet header.
    Grh { src: [u8; 16], dst: [u8; 16], traffic_class: u8, flow_label: u32, hop_limit: u8 },
}

impl NetRepr {
    /// IPv4 with the usual RoCE defaults (DSCP 26 = ToS 0x68, TTL 64, DF set).
    pub fn ipv4(src: [u8; 4], dst: [u8; 4]) -> Self {
        NetRepr::Ipv4 { src, dst, tos: 0x68, ttl: 64, ident: 0 }
    }
    pub fn ipv6(src: [u8; 16], dst: [u8; 16]) -> Self {
        NetRepr::Ipv6 { src, dst, traffic_class: 0x68, flow_label: 0, hop_limit: 64 }
    }
}

/// A whole Ethernet frame carrying a RoCE packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRepr<'p> {
    pub eth_dst: [u8; 6],
    pub eth_src: [u8; 6],
    /// 802.1Q tag control (PCP, DEI, VID) of up to two tags, outer first.
    pub vlans: [Option<u16>; 2],
    pub net: NetRepr,
    pub udp_src: u16,
    pub udp_dst: u16,
    /// Compute the UDP checksum over IPv4 too (IPv6 always gets one).
    pub udp_checksum: bool,
    pub roce: RoceRepr<'p>,
    /// Pad frames under 60 bytes with zeros, as the wire does.
    pub pad_to_min: bool,
}

impl<'p> FrameRepr<'p> {
    /// A RoCEv2 frame with placeholder MACs, UDP source port 0xC000 and minimum-size padding.
    pub fn new(net: NetRepr, roce: RoceRepr<'p>) -> Self {
        FrameRepr {
            eth_dst: [0x02, 0, 0, 0, 0, 2],
            eth_src: [0x02, 0, 0, 0, 0, 1],
            vlans: [None, None],
            net,
            udp_src: 0xc000,
            udp_dst: ROCEV2_PORT,
            udp_checksum: false,
            roce,
            pad_to_min: true,
        }
    }

    /// Appends the frame to `out`; returns its length.
    pub fn emit(&self, out: &mut Vec<u8>) -> usize {
        let start = out.len();
        out.extend_from_slice(&self.eth_dst);
        out.extend_from_slice(&self.eth_src);
        let ethertype = match self.net {
            NetRepr::Ipv4 { .. } => 0x0800u16,
            NetRepr::Ipv6 { .. } => 0x86dd,
            NetRepr::Grh { .. } => ETHERTYPE_ROCEV1,
        };
        let tags: Vec<u16> = self.vlans.iter().flatten().copied().collect();
        for (i, tci) in tags.iter().enumerate() {
            out.extend_from_slice(&(if i == 0 && tags.len() == 2 { 0x88a8u16 } else { 0x8100 }).to_be_bytes());
            out.extend_from_slice(&tci.to_be_bytes());
        }
        out.extend_from_slice(&ethertype.to_be_bytes());
        let l3 = out.len();
        let roce_len = self.roce.buffer_len();
        let (net_len, udp) = match self.net {
            NetRepr::Ipv4 { .. } => (20, true),
            NetRepr::Ipv6 { .. } => (40, true),
            NetRepr::Grh { .. } => (40, false),
        };
        let udp_len = if udp { 8 } else { 0 };
        out.resize(l3 + net_len + udp_len + roce_len, 0);
        let (net, rest) = out[l3..].split_at_mut(net_len);
        let (udp_hdr, roce) = rest.split_at_mut(udp_len);
        match self.net {
            NetRepr::Ipv4 { src, dst, tos, ttl, ident } => {
                net[0] = 0x45;
                net[1] = tos;
                net[2..4].copy_from_slice(&((20 + 8 + roce_len) as u16).to_be_bytes());
                net[4..6].copy_from_slice(&ident.to_be_bytes());
                net[6] = 0x40; // DF
                net[8] = ttl;
                net[9] = 17;
                net[12..16].copy_from_slice(&src);
                net[16..20].copy_from_slice(&dst);
                let c = internet_checksum(&[net]);
                net[10..12].copy_from_slice(&c.to_be_bytes());
            }
            NetRepr::Ipv6 { src, dst, traffic_class, flow_label, hop_limit }
            | NetRepr::Grh { src, dst, traffic_class, flow_label, hop_limit } => {
                let w = 6u32 << 28 | (traffic_class as u32) << 20 | (flow_label & 0xf_ffff);
                net[0..4].copy_from_slice(&w.to_be_bytes());
                net[4..6].copy_from_slice(&((udp_len + roce_len) as u16).to_be_bytes());
                net[6] = if udp { 17 } else { 0x1b };
                net[7] = hop_limit;
                net[8..24].copy_from_slice(&src);
                net[24..40].copy_from_slice(&dst);
            }
        }
        self.roce.emit(roce);
        if udp {
            udp_hdr[0..2].copy_from_slice(&self.udp_src.to_be_bytes());
            udp_hdr[2..4].copy_from_slice(&self.udp_dst.to_be_bytes());
            udp_hdr[4..6].copy_from_slice(&((8 + roce_len) as u16).to_be_bytes());
        }
        let covered = roce_len - 4;
        let icrc_net = match self.net {
            NetRepr::Ipv4 { .. } => IcrcNet::Ipv4 { ip: net, udp: udp_hdr },
            NetRepr::Ipv6 { .. } => IcrcNet::Ipv6 { ip: net, udp: udp_hdr },
            NetRepr::Grh { .. } => IcrcNet::Grh { grh: net },
        };
        let crc = icrc::compute(icrc_net, &roce[..covered]);
        roce[covered..].copy_from_slice(&crc.to_le_bytes());
        if udp && (self.udp_checksum || matches!(self.net, NetRepr::Ipv6 { .. })) {
            let c = udp_checksum(net, udp_hdr, roce);
            udp_hdr[6..8].copy_from_slice(&c.to_be_bytes());
        }
        if self.pad_to_min && out.len() - start < 60 {
            out.resize(start + 60, 0);
        }
        out.len() - start
    }

    /// The frame as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(128 + self.roce.payload.len());
        self.emit(&mut v);
        v
    }
}

/// Recomputes the ICRC of an already built RoCE frame in place (after a test mutated it).
/// Returns false when the frame is not a complete RoCE packet.
pub fn fix_icrc(link: LinkType, frame: &mut [u8]) -> bool {
    let opts = DecodeOptions { verify: false, ..Default::default() };
    let (off, at, crc) = {
        let f = Frame::parse(link, frame, frame.len(), &opts);
        let Some(p) = f.roce() else { return false };
        let (Some(at), Some(covered)) = (p.icrc_offset(), p.icrc_covered()) else { return false };
        if p.icrc_bytes().is_none() {
            return false;
        }
        let Some(n) = f.net() else { return false };
        let net = n.icrc_net(frame);
        (f.roce_offset(), at, icrc::compute(net, covered))
    };
    frame[off + at..off + at + 4].copy_from_slice(&crc.to_le_bytes());
    true
}
