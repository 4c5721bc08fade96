//! The summary fast path: a frame that is nothing but Ethernet II, IPv4 (no options, not a
//! fragment), UDP to or from port 4791 and a RoCEv2 packet, captured whole, with lengths that
//! agree, is summarised from its bytes without the codec's [`Frame`](rocescope_codec::Frame)
//! and [`Decoded`](rocescope_codec::decoder::Decoded): nearly every frame of an ordinary
//! capture is one. The RoCE packet itself is still parsed by the codec's
//! [`RocePacket::parse`], as the frame's `std` decoding parses it, and the summary is written
//! by the code that writes every summary ([`Pkt::write_plain`](super::pkt::Pkt::write_plain));
//! the decoder still sees the frame, and the fast path is taken only when the decoder would
//! give the frame out `std`, its flow plain ([`Decoder::give_out_plain_v4`]). Anything else
//! (a VLAN tag, IPv6, IPv4 options, a length that disagrees, a frame cut by the snaplen, a UD
//! SEND Only to QP1, where CM MADs travel) goes the long way, decoded by the codec
//! ([`Decoder::decode_step`], inside [`Session::run_summarised`]): the fast path only ever
//! answers what that way answers. `tests/support/tests/plain_fast_path.rs` checks the two
//! equal on every fixture and on mutated frames, and the fuzz harnesses on every input.
//!
//! [`Decoder::decode_step`]: rocescope_codec::decoder::Decoder::decode_step
//! [`Session::run_summarised`]: crate::session::Session::run_summarised
//!
//! [`Decoder::give_out_plain_v4`]: rocescope_codec::decoder::Decoder::give_out_plain_v4

use std::net::Ipv4Addr;

use rocescope_codec::frame::{ETHERTYPE_IPV4, IPPROTO_UDP, ROCEV2_PORT};
use rocescope_codec::ib::RocePacket;
use rocescope_codec::warning::Warnings;

/// Ethernet II header length.
const ETH_LEN: usize = 14;
/// IPv4 header length without options (IHL 5).
const IPV4_LEN: usize = 20;
/// UDP header length.
const UDP_LEN: usize = 8;

/// A frame the fast path reads: its RoCE packet and what the summary keeps of its IPv4 header.
#[derive(Clone, Copy, Debug)]
pub struct PlainV4<'a> {
    pub roce: RocePacket<'a>,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// The IPv4 ToS byte (DSCP and ECN).
    pub tos: u8,
    pub ttl: u8,
}

impl<'a> PlainV4<'a> {
    /// Reads an Ethernet frame's bytes (`orig_len` long on the wire); `None` for any frame that
    /// is not plainly Ethernet II · IPv4 · UDP 4791 · a RoCE packet whose BTH was captured,
    /// whole and with agreeing lengths (the long way decodes those), and for every UD SEND Only
    /// to QP1 (a CM MAD, or one that does not parse: decoded, either way).
    #[inline(always)]
    pub fn parse(data: &'a [u8], orig_len: usize) -> Option<Self> {
        // Captured whole (a frame cut by the snaplen is flagged truncated by the long way).
        if data.len() != orig_len {
            return None;
        }
        let eth_ip_udp: &[u8; ETH_LEN + IPV4_LEN + UDP_LEN] =
            data.get(..ETH_LEN + IPV4_LEN + UDP_LEN)?.try_into().ok()?;
        let (eth, rest) = eth_ip_udp.split_at(ETH_LEN);
        let (ip, udp) = rest.split_at(IPV4_LEN);
        // EtherType IPv4 (no VLAN tag); version 4 with IHL 5; neither More Fragments nor a
        // fragment offset; UDP.
        if u16::from_be_bytes([eth[12], eth[13]]) != ETHERTYPE_IPV4
            || ip[0] != 0x45
            || (u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff) != 0
            || ip[9] != IPPROTO_UDP
        {
            return None;
        }
        // The IPv4 total length within the frame and the UDP length equal to its payload: no
        // length warning, no clamping.
        let ip_len = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        let udp_len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
        if ip_len > data.len() - ETH_LEN || ip_len < IPV4_LEN + UDP_LEN || udp_len != ip_len - IPV4_LEN {
            return None;
        }
        let (sport, dport) = (u16::from_be_bytes([udp[0], udp[1]]), u16::from_be_bytes([udp[2], udp[3]]));
        if sport != ROCEV2_PORT && dport != ROCEV2_PORT {
            return None;
        }
        // (What the packet's parse warns of is not summarised.)
        let mut warnings = Warnings::default();
        let roce = RocePacket::parse(&data[ETH_LEN + IPV4_LEN + UDP_LEN..], udp_len - UDP_LEN, &mut warnings)?;
        if roce.opcode().0 == rocescope_codec::ib::cm::OPCODE && roce.bth().dest_qp() == rocescope_codec::ib::cm::QP {
            return None;
        }
        Some(PlainV4 {
            roce,
            src: Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]),
            dst: Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]),
            tos: ip[1],
            ttl: ip[8],
        })
    }
}
