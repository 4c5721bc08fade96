//! DCP header-only packets (WIRE.md B.1), as a DCP switch trims them.

use crate::checksum::internet_checksum;
use crate::ext::dcp;
use crate::frame::{DecodeOptions, Frame, LinkType, Net};
use crate::ib::packet::HO_MSN_LEN;
use crate::ib::BthRepr;

/// Trims a DCP data frame to its header-only form, as a DCP switch does (WIRE.md B.1): keeps the
/// L2-L4 headers, the BTH and the first 3 bytes of the DCPETH (the MSN), rewrites the IP length
/// (and the IPv4 header checksum) and the UDP length, zeroes the UDP checksum and sets the tag
/// to 11. Returns `None` for a frame that is not RoCEv2 over IPv4 or IPv6.
pub fn header_only(link: LinkType, frame: &[u8], tag_shift: u8) -> Option<Vec<u8>> {
    let f = Frame::parse(link, frame, frame.len(), &DecodeOptions { verify: false, ..Default::default() });
    let net = f.net()?;
    f.udp_ports()?;
    let keep = f.roce_offset() + BthRepr::LEN + HO_MSN_LEN;
    if frame.len() < keep {
        return None;
    }
    let mut out = frame[..keep].to_vec();
    let (ip, hl) = (net.offset(), net.header_len());
    let udp_len = (keep - ip - hl) as u16;
    match net {
        Net::Ipv4 { .. } => {
            out[ip + 1] = dcp::with_tag(out[ip + 1], tag_shift, dcp::TAG_HO);
            out[ip + 2..ip + 4].copy_from_slice(&((keep - ip) as u16).to_be_bytes());
            out[ip + 10..ip + 12].fill(0);
            let c = internet_checksum(&[&out[ip..ip + hl]]);
            out[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
        }
        Net::Ipv6 { .. } => {
            let tc = (out[ip] << 4) | (out[ip + 1] >> 4);
            let tc = dcp::with_tag(tc, tag_shift, dcp::TAG_HO);
            out[ip] = (out[ip] & 0xf0) | (tc >> 4);
            out[ip + 1] = (out[ip + 1] & 0x0f) | (tc << 4);
            out[ip + 4..ip + 6].copy_from_slice(&udp_len.to_be_bytes());
        }
        Net::Grh { .. } => return None,
    }
    let u = ip + hl;
    out[u + 4..u + 6].copy_from_slice(&udp_len.to_be_bytes());
    out[u + 6..u + 8].fill(0);
    Some(out)
}
