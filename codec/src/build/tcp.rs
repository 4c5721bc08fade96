//! TCP frames, for ERD's NACK stream (WIRE.md B.5).

use super::frame::NetRepr;
use crate::checksum::internet_checksum;
use crate::frame::TcpFlags;

/// An Ethernet · IPv4/IPv6 · TCP frame carrying `payload` (ERD's NACK stream, WIRE.md B.5),
/// with the IP lengths, the IPv4 header checksum and the TCP checksum computed. Only IPv4 and
/// IPv6 nets are valid (a GRH carries no TCP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpFrameRepr<'p> {
    pub eth_dst: [u8; 6],
    pub eth_src: [u8; 6],
    pub net: NetRepr,
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// Header byte 13 (`crate::frame::TcpFlags` constants).
    pub flags: u8,
    pub window: u16,
    pub payload: &'p [u8],
    /// Pad frames under 60 bytes with zeros, as the wire does.
    pub pad_to_min: bool,
}

impl<'p> TcpFrameRepr<'p> {
    /// A segment with ACK and PSH set, acknowledgment number 0, window 0xFFFF, placeholder MACs
    /// and minimum-size padding.
    pub fn new(net: NetRepr, src_port: u16, dst_port: u16, seq: u32, payload: &'p [u8]) -> Self {
        TcpFrameRepr {
            eth_dst: [0x02, 0, 0, 0, 0, 2],
            eth_src: [0x02, 0, 0, 0, 0, 1],
            net,
            src_port,
            dst_port,
            seq,
            ack: 0,
            flags: TcpFlags::ACK | TcpFlags::PSH,
            window: 0xffff,
            payload,
            pad_to_min: true,
        }
    }

    /// Appends the frame to `out`; returns its length.
    pub fn emit(&self, out: &mut Vec<u8>) -> usize {
        const TCP_LEN: usize = 20;
        let start = out.len();
        out.extend_from_slice(&self.eth_dst);
        out.extend_from_slice(&self.eth_src);
        let (ethertype, net_len) = match self.net {
            NetRepr::Ipv4 { .. } => (0x0800u16, 20),
            NetRepr::Ipv6 { .. } => (0x86dd, 40),
            NetRepr::Grh { .. } => panic!("TCP needs IPv4 or IPv6"),
        };
        out.extend_from_slice(&ethertype.to_be_bytes());
        let l3 = out.len();
        let seg_len = TCP_LEN + self.payload.len();
        out.resize(l3 + net_len + seg_len, 0);
        let (net, seg) = out[l3..].split_at_mut(net_len);
        match self.net {
            NetRepr::Ipv4 { src, dst, tos, ttl, ident } => {
                net[0] = 0x45;
                net[1] = tos;
                net[2..4].copy_from_slice(&((20 + seg_len) as u16).to_be_bytes());
                net[4..6].copy_from_slice(&ident.to_be_bytes());
                net[6] = 0x40; // DF
                net[8] = ttl;
                net[9] = 6;
                net[12..16].copy_from_slice(&src);
                net[16..20].copy_from_slice(&dst);
                let c = internet_checksum(&[net]);
                net[10..12].copy_from_slice(&c.to_be_bytes());
            }
            NetRepr::Ipv6 { src, dst, traffic_class, flow_label, hop_limit } => {
                let w = 6u32 << 28 | (traffic_class as u32) << 20 | (flow_label & 0xf_ffff);
                net[0..4].copy_from_slice(&w.to_be_bytes());
                net[4..6].copy_from_slice(&(seg_len as u16).to_be_bytes());
                net[6] = 6;
                net[7] = hop_limit;
                net[8..24].copy_from_slice(&src);
                net[24..40].copy_from_slice(&dst);
            }
            NetRepr::Grh { .. } => unreachable!(),
        }
        seg[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        seg[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        seg[4..8].copy_from_slice(&self.seq.to_be_bytes());
        seg[8..12].copy_from_slice(&self.ack.to_be_bytes());
        seg[12] = (TCP_LEN as u8 / 4) << 4;
        seg[13] = self.flags;
        seg[14..16].copy_from_slice(&self.window.to_be_bytes());
        seg[TCP_LEN..].copy_from_slice(self.payload);
        let len = (seg_len as u32).to_be_bytes();
        let c = if net_len == 20 {
            internet_checksum(&[&net[12..20], &[0, 6], &len[2..4], seg])
        } else {
            internet_checksum(&[&net[8..40], &len, &[0, 0, 0, 6], seg])
        };
        seg[16..18].copy_from_slice(&c.to_be_bytes());
        if self.pad_to_min && out.len() - start < 60 {
            out.resize(start + 60, 0);
        }
        out.len() - start
    }

    /// The frame as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(80 + self.payload.len());
        self.emit(&mut v);
        v
    }
}

/// Recomputes the TCP checksum of an Ethernet · IPv4/IPv6 · TCP frame whose segment a test or a
/// fault changed afterwards (as [`super::fix_icrc`] does for RoCE). Returns false, changing
/// nothing, for a frame that is not one (or whose segment the frame cuts short).
pub fn fix_tcp_checksum(frame: &mut [u8]) -> bool {
    use crate::frame::{DecodeOptions, Frame, LinkType, Net};
    let (l3, ipv4, tcp, end) = {
        let f = Frame::parse(
            LinkType::Ethernet,
            frame,
            frame.len(),
            &DecodeOptions { verify: false, ..Default::default() },
        );
        let (Some(t), Some(net)) = (f.tcp(), f.net()) else { return false };
        let (l3, ipv4) = match net {
            Net::Ipv4 { off, .. } => (off as usize, true),
            Net::Ipv6 { off } => (off as usize, false),
            Net::Grh { .. } => return false,
        };
        if t.payload.len() != t.payload_len {
            return false;
        }
        (l3, ipv4, t.header_offset, t.payload_offset + t.payload_len)
    };
    let Some(seg) = frame.get(tcp..end) else { return false };
    let len = (seg.len() as u32).to_be_bytes();
    let mut seg = seg.to_vec();
    seg[16..18].copy_from_slice(&[0, 0]);
    let c = if ipv4 {
        internet_checksum(&[&frame[l3 + 12..l3 + 20], &[0, 6], &len[2..4], &seg])
    } else {
        internet_checksum(&[&frame[l3 + 8..l3 + 40], &len, &[0, 0, 0, 6], &seg])
    };
    frame[tcp + 16..tcp + 18].copy_from_slice(&c.to_be_bytes());
    true
}

#[cfg(test)]
mod fix_tests {
    use super::*;

    #[test]
    fn a_changed_segment_gets_the_checksum_emit_would_give() {
        for net in [
            NetRepr::Ipv4 { src: [10, 0, 1, 1], dst: [10, 0, 0, 1], tos: 0, ttl: 64, ident: 0 },
            NetRepr::Ipv6 { src: [1; 16], dst: [2; 16], traffic_class: 0, flow_label: 0, hop_limit: 64 },
        ] {
            let good = TcpFrameRepr::new(net, 4791, 4792, 7, &[0x4e, 1, 0, 1, 0, 0, 1, 0, 0, 2, 0, 0, 0, 9]).to_vec();
            // The last payload byte changed after the frame was built: the checksum is stale.
            let mut changed = good.clone();
            let i = changed.iter().rposition(|&b| b == 9).unwrap();
            changed[i] = 3;
            assert!(fix_tcp_checksum(&mut changed));
            assert_ne!(changed[..], good[..]);
            // Changed back, the fixed checksum is the one `emit` computed.
            changed[i] = 9;
            assert!(fix_tcp_checksum(&mut changed));
            assert_eq!(changed, good);
        }
        let mut not_tcp = vec![0u8; 60];
        assert!(!fix_tcp_checksum(&mut not_tcp));
    }
}
