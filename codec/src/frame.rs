//! A captured frame decoded from its link header to the RoCE payload (WIRE.md A.1): link layer
//! (Ethernet with 0-2 VLAN tags, Linux cooked v1/v2, raw IP), IPv4/IPv6 and UDP through
//! etherparse's borrowed header slices, then RoCEv2 (UDP 4791 either way), RoCEv1 (EtherType
//! 0x8915 + GRH), MAC control (PAUSE/PFC) and CM MADs; or a native InfiniBand packet (link type
//! 247: LRH, GRH or not, the same transport, ICRC and VCRC; docs/link-types.md). Parsing never
//! allocates and never fails: what cannot be decoded becomes a warning, and decoding stops where
//! the captured bytes stop.

use core::ops::Range;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{Ethernet2HeaderSlice, Ipv4HeaderSlice, Ipv6HeaderSlice, SingleVlanHeaderSlice, TcpHeaderSlice, UdpHeaderSlice};

use crate::field::FieldId as F;
use crate::ib::icrc::{self, IcrcNet};
use crate::ib::{vcrc, Lrh, LrhRepr};
use crate::ib::packet::Layout;
use crate::ib::{Aeth, AtomicAckEth, AtomicEth, Bth, CmMad, Deth, Feth, Hdr, Ieth, ImmDt, Rdeth, Reth, RocePacket, Xrceth};
use crate::mac_control::{self, MacControl};
use crate::ext::{self, Ctx, Ext};
use crate::params::Params;
use crate::profile::Profile;
use crate::value::Value;
use crate::warning::{Layer, Unsupported, Warning, Warnings};

/// The RoCEv2 UDP port.
pub const ROCEV2_PORT: u16 = 4791;
/// RoCEv1 EtherType.
pub const ETHERTYPE_ROCEV1: u16 = 0x8915;
/// IPv4 EtherType.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const GRH_LEN: usize = 40;
/// IPv6 next header / GRH NxtHdr value for the IBA transport.
const NXT_HDR_IBA: u8 = 0x1b;
/// Native InfiniBand: the LRH's LNH of a local packet (the BTH follows the LRH) and of a global
/// one (a GRH follows the LRH).
pub const LNH_IBA_LOCAL: u8 = 2;
pub const LNH_IBA_GLOBAL: u8 = 3;
/// The unit of the LRH's PktLen, in bytes.
pub const PKT_LEN_UNIT: usize = 4;

/// The capture's link type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// DLT_EN10MB (1).
    Ethernet,
    /// Linux cooked capture v1 (113).
    LinuxSll,
    /// Linux cooked capture v2 (276).
    LinuxSll2,
    /// Raw IPv4/IPv6 (101; 228 IPv4 and 229 IPv6; 12 and 14, DLT_RAW's values on some
    /// systems): the IP version nibble decides.
    RawIp,
    /// Native InfiniBand as ibdump writes it (LINKTYPE_INFINIBAND, 247): the frame starts with
    /// the LRH and ends with the VCRC.
    Infiniband,
}

impl LinkType {
    /// Maps a pcap LINKTYPE_ value.
    pub fn from_linktype(v: u32) -> Option<LinkType> {
        Some(match v {
            1 => LinkType::Ethernet,
            113 => LinkType::LinuxSll,
            276 => LinkType::LinuxSll2,
            101 | 12 | 14 | 228 | 229 => LinkType::RawIp,
            247 => LinkType::Infiniband,
            _ => return None,
        })
    }
}

/// How to decode one frame.
#[derive(Clone, Copy, Debug)]
pub struct DecodeOptions {
    /// Compute and compare ICRCs (and IPv4 header checksums).
    pub verify: bool,
    /// The profile to decode with. A profile that does not apply to a packet leaves it `std`,
    /// without warnings. (Choosing the profile per flow is `crate::decoder`'s job.)
    pub profile: Profile,
    /// The transports' parameters.
    pub params: Params,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions { verify: true, profile: Profile::Std, params: Params::default() }
    }
}

impl DecodeOptions {
    /// Defaults with the given profile.
    pub fn with_profile(profile: Profile) -> Self {
        DecodeOptions { profile, ..Default::default() }
    }
}

/// The ICRC verdict (`rocescope.icrc.status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcrcStatus {
    Good,
    Bad,
    /// No ICRC by design (or a packet too short to hold one).
    Absent,
    /// The ICRC or the bytes it covers were not captured.
    Truncated,
    /// Verification was not asked for.
    Unchecked,
}

impl IcrcStatus {
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            IcrcStatus::Good => "good",
            IcrcStatus::Bad => "bad",
            IcrcStatus::Absent => "absent",
            IcrcStatus::Truncated => "truncated",
            IcrcStatus::Unchecked => return None,
        })
    }
}

const IPPROTO_TCP: u8 = 6;
/// UDP's IP protocol number.
pub const IPPROTO_UDP: u8 = 17;

/// TCP flags (header byte 13).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
    #[inline]
    pub fn fin(self) -> bool {
        self.0 & Self::FIN != 0
    }
    #[inline]
    pub fn syn(self) -> bool {
        self.0 & Self::SYN != 0
    }
    #[inline]
    pub fn rst(self) -> bool {
        self.0 & Self::RST != 0
    }
    #[inline]
    pub fn psh(self) -> bool {
        self.0 & Self::PSH != 0
    }
    #[inline]
    pub fn ack(self) -> bool {
        self.0 & Self::ACK != 0
    }
}

/// A TCP segment of a frame (ERD's NACK path): see [`Frame::tcp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpInfo<'a> {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// Offset of the TCP header in the frame.
    pub header_offset: usize,
    /// Offset of the payload in the frame.
    pub payload_offset: usize,
    /// The captured payload (shorter than `payload_len` when the snaplen cut it). Ethernet
    /// padding is not part of it: the IP length decides where the segment ends.
    pub payload: &'a [u8],
    /// The payload's length on the wire.
    pub payload_len: usize,
}

/// The network layer that carries a RoCE packet or other IP traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Net {
    Ipv4 { off: u32, hdr_len: u32 },
    Ipv6 { off: u32 },
    /// RoCEv1 Global Route Header.
    Grh { off: u32 },
}

impl Net {
    /// Offset of the network header in the frame.
    pub fn offset(self) -> usize {
        match self {
            Net::Ipv4 { off, .. } | Net::Ipv6 { off } | Net::Grh { off } => off as usize,
        }
    }
    /// Length of the network header.
    pub fn header_len(self) -> usize {
        match self {
            Net::Ipv4 { hdr_len, .. } => hdr_len as usize,
            Net::Ipv6 { .. } | Net::Grh { .. } => 40,
        }
    }
    /// The headers the ICRC covers, in `data` (the frame this was parsed from).
    pub fn icrc_net(self, data: &[u8]) -> IcrcNet<'_> {
        let (o, hl) = (self.offset(), self.header_len());
        match self {
            Net::Ipv4 { .. } => IcrcNet::Ipv4 { ip: &data[o..o + hl], udp: &data[o + hl..o + hl + 8] },
            Net::Ipv6 { .. } => IcrcNet::Ipv6 { ip: &data[o..o + hl], udp: &data[o + hl..o + hl + 8] },
            Net::Grh { .. } => IcrcNet::Grh { grh: &data[o..o + hl] },
        }
    }
}

/// A decoded frame.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    data: &'a [u8],
    link: LinkType,
    vlans: u8,
    vlan_off: [u16; 2],
    ethertype: Option<u16>,
    net: Option<Net>,
    /// Offsets in `data` (0: absent; none of these can start a frame).
    udp_off: u32,
    /// Offset of the TCP header, and where the segment ends on the wire (may lie beyond the
    /// captured bytes).
    tcp_off: u32,
    tcp_end: u32,
    roce_off: u32,
    roce: Option<RocePacket<'a>>,
    mac_ctrl_off: u32,
    /// Offset of the CM MAD.
    cm_off: u32,
    truncated: bool,
    icrc: IcrcStatus,
    /// Native InfiniBand: the LRH was captured whole (it is at offset 0).
    lrh: bool,
    /// Native InfiniBand: offset of the VCRC (0: none on the wire) and its verdict.
    vcrc_off: u32,
    vcrc: IcrcStatus,
    profile: Profile,
    /// The profile [`Frame::decode`] was asked for (`profile` is what its extension decoded).
    decoded_as: Profile,
    ext: Ext,
    /// Problems found.
    pub warnings: Warnings,
}

impl<'a> Frame<'a> {
    /// Decodes one captured frame. `orig_len` is the frame's length on the wire (the pcap
    /// record's original length); `data` may be shorter (snaplen).
    ///
    /// This returns the whole `Frame` (about 300 bytes); in a hot loop, `Frame::new` followed by
    /// [`Frame::decode`] decodes in place and saves the copy.
    #[inline]
    pub fn parse(link: LinkType, data: &'a [u8], orig_len: usize, opts: &DecodeOptions) -> Frame<'a> {
        let mut f = Frame::new(link, data);
        f.decode(orig_len, opts);
        f
    }

    /// An undecoded frame over `data`; [`Frame::decode`] fills it in.
    #[inline(always)]
    pub fn new(link: LinkType, data: &'a [u8]) -> Frame<'a> {
        Frame {
            data,
            link,
            vlans: 0,
            vlan_off: [0; 2],
            ethertype: None,
            net: None,
            udp_off: 0,
            tcp_off: 0,
            tcp_end: 0,
            roce_off: 0,
            roce: None,
            mac_ctrl_off: 0,
            cm_off: 0,
            truncated: false,
            icrc: IcrcStatus::Unchecked,
            lrh: false,
            vcrc_off: 0,
            vcrc: IcrcStatus::Unchecked,
            profile: Profile::Std,
            decoded_as: Profile::Std,
            ext: Ext::None,
            warnings: Warnings::default(),
        }
    }

    /// Decodes the frame created by [`Frame::new`] (call once).
    ///
    /// Always inlined: in a per-packet loop the frame then lives in the caller's stack frame
    /// and the call's register saves and half of `Frame::new`'s stores disappear (the decode
    /// benchmark measures 86 rather than 95 cycles per frame; `examples/decode_loop.rs`).
    #[inline(always)]
    pub fn decode(&mut self, orig_len: usize, opts: &DecodeOptions) {
        self.decoded_as = opts.profile;
        let data = self.data;
        let wire_len = orig_len.max(data.len());
        if self.link == LinkType::Infiniband {
            return self.parse_ib(wire_len, opts);
        }
        let Some((ethertype, l3)) = self.parse_link(wire_len) else {
            self.truncated = data.len() < wire_len;
            return;
        };
        self.ethertype = Some(ethertype);
        match ethertype {
            ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => self.parse_ip(l3, wire_len, opts),
            ETHERTYPE_ROCEV1 => self.parse_grh(l3, wire_len, opts),
            mac_control::ETHERTYPE => self.parse_mac_control(l3),
            _ => self.truncated = data.len() < wire_len,
        }
    }

    /// Link header: returns the EtherType and the offset of what follows.
    #[inline(always)]
    fn parse_link(&mut self, wire_len: usize) -> Option<(u16, usize)> {
        let d = self.data;
        let (mut ethertype, mut off) = match self.link {
            LinkType::Ethernet => match Ethernet2HeaderSlice::from_slice(d) {
                Ok(e) => (e.ether_type().0, 14),
                Err(_) => return self.short(Layer::Link, 14, d.len(), wire_len),
            },
            LinkType::LinuxSll => match d.get(14..16) {
                Some(p) => (u16::from_be_bytes([p[0], p[1]]), 16),
                None => return self.short(Layer::Link, 16, d.len(), wire_len),
            },
            LinkType::LinuxSll2 => match d.get(..20) {
                Some(h) => (u16::from_be_bytes([h[0], h[1]]), 20),
                None => return self.short(Layer::Link, 20, d.len(), wire_len),
            },
            LinkType::Infiniband => return None,
            LinkType::RawIp => match d.first() {
                Some(b) if b >> 4 == 4 => (ETHERTYPE_IPV4, 0),
                Some(b) if b >> 4 == 6 => (ETHERTYPE_IPV6, 0),
                Some(_) => return None,
                None => return self.short(Layer::Link, 1, 0, wire_len),
            },
        };
        while matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
            if self.vlans as usize == self.vlan_off.len() {
                self.warnings.push(Warning::Unsupported(Unsupported::VlanDepth));
                return None;
            }
            match SingleVlanHeaderSlice::from_slice(&d[off..]) {
                Ok(v) => {
                    self.vlan_off[self.vlans as usize] = off as u16;
                    self.vlans += 1;
                    ethertype = v.ether_type().0;
                    off += 4;
                }
                Err(_) => return self.short(Layer::Vlan, 4, d.len() - off, wire_len - off),
            }
        }
        Some((ethertype, off))
    }

    /// A link header or VLAN tag that does not fit: cut by the capture (`have` of `need` bytes
    /// captured, more were on the wire) or a frame that is itself too short (`on_wire` bytes).
    fn short<T>(&mut self, layer: Layer, need: usize, have: usize, on_wire: usize) -> Option<T> {
        if have < on_wire {
            self.truncated = true;
            self.warnings.push(Warning::Truncated { layer, need: need as u16, have: have as u16 });
        } else {
            self.warnings.push(Warning::LengthTooShort { layer, claimed: on_wire as u32, minimum: need as u32 });
        }
        None
    }

    /// IPv4 or IPv6, then UDP, then RoCEv2 on port 4791.
    #[inline(always)]
    fn parse_ip(&mut self, l3: usize, wire_len: usize, opts: &DecodeOptions) {
        let d = &self.data[l3..];
        let on_wire = wire_len - l3;
        let (net, hdr_len, ip_len, proto) = match d.first().map(|b| b >> 4) {
            Some(4) => {
                let need = d.first().map_or(20, |b| ((b & 0x0f) as usize * 4).max(20));
                if d.len() < need {
                    self.truncated = true;
                    return self.warnings.push(Warning::Truncated { layer: Layer::Ipv4, need: need as u16, have: d.len() as u16 });
                }
                let ip = match Ipv4HeaderSlice::from_slice(d) {
                    Ok(ip) => ip,
                    // The only error left once `need` bytes are there: an IHL below 5.
                    Err(_) => {
                        return self.warnings.push(Warning::LengthTooShort {
                            layer: Layer::Ipv4,
                            claimed: (d[0] & 0x0f) as u32 * 4,
                            minimum: 20,
                        })
                    }
                };
                if ip.is_fragmenting_payload() {
                    self.warnings.push(Warning::Unsupported(Unsupported::Ipv4Fragment));
                    return;
                }
                if opts.verify {
                    // RFC 1071 over the header as captured (every bit, the reserved flag too),
                    // with the checksum field taken as zero.
                    let h = ip.slice();
                    let computed = crate::checksum::internet_checksum(&[&h[..10], &h[12..]]);
                    if computed != ip.header_checksum() {
                        self.warnings.push(Warning::Ipv4Checksum { wire: ip.header_checksum(), computed });
                    }
                }
                let hl = ip.slice().len();
                (Net::Ipv4 { off: l3 as u32, hdr_len: hl as u32 }, hl, ip.total_len() as usize, ip.protocol().0)
            }
            Some(6) => {
                let ip = match Ipv6HeaderSlice::from_slice(d) {
                    Ok(ip) => ip,
                    Err(_) => {
                        self.truncated = true;
                        return self.warnings.push(Warning::Truncated { layer: Layer::Ipv6, need: 40, have: d.len() as u16 });
                    }
                };
                let nh = ip.next_header().0;
                if matches!(nh, 0 | 43 | 44 | 60) {
                    self.warnings.push(Warning::Unsupported(Unsupported::Ipv6ExtensionHeaders));
                }
                (Net::Ipv6 { off: l3 as u32 }, 40, 40 + ip.payload_length() as usize, nh)
            }
            Some(_) => return,
            None => {
                self.truncated = true;
                return self.warnings.push(Warning::Truncated { layer: Layer::Ipv4, need: 20, have: 0 });
            }
        };
        self.net = Some(net);
        let layer = if matches!(net, Net::Ipv4 { .. }) { Layer::Ipv4 } else { Layer::Ipv6 };
        let mut ip_len = ip_len;
        if ip_len > on_wire {
            self.warnings.push(Warning::LengthBeyondFrame { layer, claimed: ip_len as u32, available: on_wire as u32 });
            ip_len = on_wire;
        }
        self.truncated = d.len() < ip_len;
        match proto {
            IPPROTO_UDP => {}
            IPPROTO_TCP => return self.parse_tcp(l3 + hdr_len, ip_len.saturating_sub(hdr_len)),
            _ => return,
        }
        let udp_off = l3 + hdr_len;
        let udp = match UdpHeaderSlice::from_slice(&self.data[udp_off..]) {
            Ok(u) => u,
            Err(_) => {
                self.truncated = true;
                return self.warnings.push(Warning::Truncated { layer: Layer::Udp, need: 8, have: (d.len() - hdr_len) as u16 });
            }
        };
        self.udp_off = udp_off as u32;
        if udp.source_port() != ROCEV2_PORT && udp.destination_port() != ROCEV2_PORT {
            return;
        }
        let ip_payload = ip_len.saturating_sub(hdr_len);
        let udp_len = udp.length() as usize;
        let mut roce_len = udp_len.saturating_sub(8);
        if udp_len < 8 {
            self.warnings.push(Warning::LengthTooShort { layer: Layer::Udp, claimed: udp_len as u32, minimum: 8 });
        } else if udp_len != ip_payload {
            self.warnings.push(Warning::IpUdpLengthMismatch { ip_payload: ip_payload as u16, udp: udp_len as u16 });
            roce_len = roce_len.min(ip_payload.saturating_sub(8));
        }
        self.parse_roce(udp_off + 8, roce_len, opts);
    }

    /// TCP (ERD's NACK path, WIRE.md B.5): the header through etherparse's borrowed slice, and
    /// where the segment ends. `seg_len` is the IP payload length on the wire. A header the
    /// capture cuts is `truncated`; one that does not fit in the IP packet, or whose data offset
    /// is below 5, is malformed. Nothing else is decoded here (the NACK stream needs
    /// reassembly: `decoder::NackReassembler`).
    fn parse_tcp(&mut self, off: usize, seg_len: usize) {
        let captured = &self.data[off.min(self.data.len())..(off + seg_len).min(self.data.len())];
        match TcpHeaderSlice::from_slice(captured) {
            Ok(t) => {
                self.tcp_off = off as u32;
                debug_assert!(t.slice().len() <= seg_len);
                self.tcp_end = (off + seg_len) as u32;
            }
            Err(etherparse::err::tcp::HeaderSliceError::Len(e)) => {
                if seg_len < e.required_len {
                    self.warnings.push(Warning::LengthTooShort {
                        layer: Layer::Tcp,
                        claimed: seg_len as u32,
                        minimum: e.required_len as u32,
                    });
                } else {
                    self.truncated = true;
                    self.warnings.push(Warning::Truncated {
                        layer: Layer::Tcp,
                        need: e.required_len as u16,
                        have: captured.len() as u16,
                    });
                }
            }
            Err(etherparse::err::tcp::HeaderSliceError::Content(etherparse::err::tcp::HeaderError::DataOffsetTooSmall {
                data_offset,
            })) => self.warnings.push(Warning::LengthTooShort {
                layer: Layer::Tcp,
                claimed: data_offset as u32 * 4,
                minimum: 20,
            }),
        }
    }

    /// Native InfiniBand (link type 247, docs/link-types.md): the LRH, whose PktLen counts the
    /// 4-byte words from its first byte through the ICRC; the VCRC (2 bytes) follows them when
    /// the frame is that long on the wire. LNH 3: a GRH then the transport; LNH 2: the
    /// transport; LNH 0/1 (raw packets) are flagged, not decoded. The transport is decoded as
    /// RoCE's, its ICRC over the LRH (VL as ones) or, with a GRH, as RoCEv1's
    /// (`ib::icrc`); the VCRC over everything before it (`ib::vcrc`).
    fn parse_ib(&mut self, wire_len: usize, opts: &DecodeOptions) {
        let d = self.data;
        if d.len() < LrhRepr::LEN {
            self.short::<()>(Layer::Lrh, LrhRepr::LEN, d.len(), wire_len);
            return;
        }
        self.lrh = true;
        let lrh = Lrh::new_unchecked(&d[..LrhRepr::LEN]);
        let mut pkt_len = lrh.pkt_len() as usize * PKT_LEN_UNIT;
        if pkt_len < LrhRepr::LEN {
            self.truncated = d.len() < wire_len;
            self.vcrc = IcrcStatus::Absent;
            return self.warnings.push(Warning::LengthTooShort {
                layer: Layer::Lrh,
                claimed: pkt_len as u32,
                minimum: LrhRepr::LEN as u32,
            });
        }
        if pkt_len > wire_len {
            self.warnings.push(Warning::LengthBeyondFrame {
                layer: Layer::Lrh,
                claimed: pkt_len as u32,
                available: wire_len as u32,
            });
            pkt_len = wire_len;
        } else if wire_len >= pkt_len + vcrc::VCRC_LEN {
            self.vcrc_off = pkt_len as u32;
        }
        self.vcrc = match self.vcrc_off as usize {
            0 => IcrcStatus::Absent,
            o => match d.get(o..o + vcrc::VCRC_LEN) {
                None => {
                    self.truncated = true;
                    IcrcStatus::Truncated
                }
                Some(_) if !opts.verify => IcrcStatus::Unchecked,
                Some(w) => {
                    let wire = u16::from_le_bytes([w[0], w[1]]);
                    let computed = vcrc::compute(&d[..o]);
                    if wire == computed {
                        IcrcStatus::Good
                    } else {
                        self.warnings.push(Warning::VcrcMismatch { wire, computed });
                        IcrcStatus::Bad
                    }
                }
            },
        };
        match lrh.lnh() {
            LNH_IBA_LOCAL => self.parse_roce(LrhRepr::LEN, pkt_len - LrhRepr::LEN, opts),
            LNH_IBA_GLOBAL => {
                let l3 = LrhRepr::LEN;
                if pkt_len < l3 + GRH_LEN {
                    let (claimed, minimum) = (pkt_len as u32, (l3 + GRH_LEN) as u32);
                    self.truncated = d.len() < pkt_len;
                    return self.warnings.push(Warning::LengthTooShort { layer: Layer::Lrh, claimed, minimum });
                }
                let have = d.len() - l3;
                if have < GRH_LEN {
                    self.truncated = true;
                    let (need, have) = (GRH_LEN as u16, have as u16);
                    return self.warnings.push(Warning::Truncated { layer: Layer::Grh, need, have });
                }
                self.net = Some(Net::Grh { off: l3 as u32 });
                if d[l3 + 6] != NXT_HDR_IBA {
                    return self.warnings.push(Warning::Unsupported(Unsupported::GrhNextHeader));
                }
                self.parse_roce(l3 + GRH_LEN, pkt_len.saturating_sub(l3 + GRH_LEN), opts);
            }
            _ => self.warnings.push(Warning::Unsupported(Unsupported::LrhRawPacket)),
        }
    }

    /// RoCEv1: GRH (40 bytes, PayLen = bytes after it) then the IBA transport.
    fn parse_grh(&mut self, l3: usize, wire_len: usize, opts: &DecodeOptions) {
        let d = &self.data[l3..];
        if d.len() < GRH_LEN {
            self.truncated = true;
            return self.warnings.push(Warning::Truncated { layer: Layer::Grh, need: GRH_LEN as u16, have: d.len() as u16 });
        }
        self.net = Some(Net::Grh { off: l3 as u32 });
        if d[6] != NXT_HDR_IBA {
            self.warnings.push(Warning::Unsupported(Unsupported::GrhNextHeader));
            return;
        }
        let mut len = u16::from_be_bytes([d[4], d[5]]) as usize;
        let on_wire = wire_len - l3 - GRH_LEN;
        if len > on_wire {
            self.warnings.push(Warning::LengthBeyondFrame { layer: Layer::Grh, claimed: len as u32, available: on_wire as u32 });
            len = on_wire;
        }
        self.parse_roce(l3 + GRH_LEN, len, opts);
    }

    #[inline(always)]
    fn parse_roce(&mut self, off: usize, wire_len: usize, opts: &DecodeOptions) {
        self.roce_off = off as u32;
        let captured = &self.data[off.min(self.data.len())..];
        let tos = if opts.profile == Profile::Std || self.is_rocev1() { None } else { self.tos() };
        let ctx = Ctx { tos, params: &opts.params };
        let layout = match (opts.profile, captured.first()) {
            (Profile::Std, _) | (_, None) => Layout::Std,
            (profile, Some(&op)) => ext::layout(profile, &ctx, op),
        };
        let Some(p) = RocePacket::parse_with(captured, wire_len, layout, &mut self.warnings) else {
            self.truncated |= captured.len() < wire_len;
            return;
        };
        self.truncated |= p.is_truncated();
        self.roce = Some(p);
        if opts.profile != Profile::Std {
            self.ext = ext::parse(opts.profile, &ctx, &p, &mut self.warnings);
            self.profile = self.ext.profile();
        }
        self.icrc = match (p.icrc_offset(), p.icrc_bytes(), p.icrc_covered()) {
            (None, _, _) => IcrcStatus::Absent,
            (Some(_), Some(wire), Some(covered)) => {
                if opts.verify {
                    let computed = icrc::compute(self.icrc_net(), covered);
                    let wire = u32::from_le_bytes([wire[0], wire[1], wire[2], wire[3]]);
                    if computed == wire {
                        IcrcStatus::Good
                    } else {
                        self.warnings.push(Warning::IcrcMismatch { wire, computed });
                        IcrcStatus::Bad
                    }
                } else {
                    IcrcStatus::Unchecked
                }
            }
            _ => IcrcStatus::Truncated,
        };
        // CM MADs: the payload of a UD SEND Only to QP1.
        if p.opcode().0 == crate::ib::cm::OPCODE && p.bth().dest_qp() == crate::ib::cm::QP {
            match CmMad::new_checked(p.payload()) {
                Ok(_) => self.cm_off = (off + p.payload_offset()) as u32,
                Err(crate::ib::cm::CmError::Attribute(a)) => self.warnings.push(Warning::CmAttribute(a)),
                Err(crate::ib::cm::CmError::Short(n)) if p.payload().len() == p.payload_len() => {
                    self.warnings.push(Warning::LengthTooShort { layer: Layer::Cm, claimed: n as u32, minimum: CmMad::<&[u8]>::MIN_LEN as u32 })
                }
                Err(_) => {}
            }
        }
    }

    fn icrc_net(&self) -> IcrcNet<'a> {
        match self.net {
            Some(net) => net.icrc_net(self.data),
            None if self.lrh => IcrcNet::Lrh { lrh: &self.data[..LrhRepr::LEN] },
            None => IcrcNet::Grh { grh: &[] },
        }
    }

    fn parse_mac_control(&mut self, off: usize) {
        let mc = MacControl::new_unchecked(&self.data[off..]);
        match (mc.opcode(), mc.needed_len()) {
            (None, _) => {
                self.truncated = true;
                self.warnings.push(Warning::Truncated { layer: Layer::Pfc, need: 2, have: (self.data.len() - off) as u16 })
            }
            (Some(op), None) => self.warnings.push(Warning::MacControlOpcode(op)),
            (Some(_), Some(need)) if self.data.len() - off < need => {
                self.truncated = true;
                self.warnings.push(Warning::Truncated { layer: Layer::Pfc, need: need as u16, have: (self.data.len() - off) as u16 })
            }
            _ => self.mac_ctrl_off = off as u32,
        }
    }

    // ---- accessors ----

    /// The captured bytes.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    pub fn link(&self) -> LinkType {
        self.link
    }
    /// The EtherType after any VLAN tags.
    pub fn ethertype(&self) -> Option<u16> {
        self.ethertype
    }
    /// VLAN IDs of the tags present (outer first).
    pub fn vlan_ids(&self) -> impl Iterator<Item = u16> + '_ {
        self.vlan_off[..self.vlans as usize]
            .iter()
            .map(|&o| u16::from_be_bytes([self.data[o as usize], self.data[o as usize + 1]]) & 0x0fff)
    }
    pub fn net(&self) -> Option<Net> {
        self.net
    }
    /// The RoCE packet, for RoCEv2 and RoCEv1 frames.
    #[inline]
    pub fn roce(&self) -> Option<&RocePacket<'a>> {
        self.roce.as_ref()
    }
    /// Offset of the BTH in the frame.
    pub fn roce_offset(&self) -> usize {
        self.roce_off as usize
    }
    /// RoCEv1 (GRH) rather than RoCEv2 (UDP). Not native InfiniBand, whose global packets
    /// carry a GRH too.
    pub fn is_rocev1(&self) -> bool {
        matches!(self.net, Some(Net::Grh { .. })) && self.link != LinkType::Infiniband
    }
    /// Native InfiniBand: the LRH, when it was captured whole.
    pub fn lrh(&self) -> Option<Lrh<&'a [u8]>> {
        self.lrh.then(|| Lrh::new_unchecked(&self.data[..LrhRepr::LEN]))
    }
    /// Native InfiniBand: the VCRC's verdict (`Unchecked` for other link types, and for a frame
    /// whose LRH was not captured).
    pub fn vcrc_status(&self) -> IcrcStatus {
        self.vcrc
    }
    pub fn truncated(&self) -> bool {
        self.truncated
    }
    pub fn icrc_status(&self) -> IcrcStatus {
        self.icrc
    }
    pub fn profile(&self) -> Profile {
        self.profile
    }
    /// The profile the frame was decoded with ([`DecodeOptions::profile`]): decoding its bytes
    /// again with it gives the same frame (`profile` is what the extension made of them).
    pub fn decoded_as(&self) -> Profile {
        self.decoded_as
    }
    /// What the profile's extension decoded.
    pub fn ext(&self) -> &Ext {
        &self.ext
    }
    /// Source and destination addresses (IPv4, IPv6 or GRH GIDs).
    ///
    /// (Read once or twice per frame by the decoder and the analysers: the two addresses are
    /// one slice of the header, bounds-checked once.)
    #[inline]
    pub fn ip_addrs(&self) -> Option<(IpAddr, IpAddr)> {
        let net = self.net?;
        let off = net.offset();
        match net {
            Net::Ipv4 { .. } => {
                let b: &[u8; 8] = self.data.get(off + 12..off + 20)?.try_into().ok()?;
                let (s, d) = (u32::from_be_bytes([b[0], b[1], b[2], b[3]]), u32::from_be_bytes([b[4], b[5], b[6], b[7]]));
                Some((IpAddr::V4(Ipv4Addr::from_bits(s)), IpAddr::V4(Ipv4Addr::from_bits(d))))
            }
            Net::Ipv6 { .. } | Net::Grh { .. } => {
                let b: &[u8; 32] = self.data.get(off + 8..off + 40)?.try_into().ok()?;
                let (s, d) = b.split_at(16);
                let a = |x: &[u8]| IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(x).unwrap_or_default()));
                Some((a(s), a(d)))
            }
        }
    }
    /// The IPv4 ToS / IPv6 traffic-class byte (DSCP and ECN).
    pub fn tos(&self) -> Option<u8> {
        let d = self.data;
        let off = self.net?.offset();
        match self.net? {
            Net::Ipv4 { .. } => Some(d[off + 1]),
            Net::Ipv6 { .. } | Net::Grh { .. } => Some((d[off] << 4) | (d[off + 1] >> 4)),
        }
    }
    /// Offsets of the VLAN tags present (outer first), each 4 bytes.
    pub fn vlan_offsets(&self) -> impl Iterator<Item = usize> + '_ {
        self.vlan_off[..self.vlans as usize].iter().map(|&o| o as usize)
    }
    /// Offset of the UDP header (8 bytes), for a UDP frame.
    pub fn udp_offset(&self) -> Option<usize> {
        (self.udp_off != 0).then_some(self.udp_off as usize)
    }
    /// UDP source and destination ports.
    pub fn udp_ports(&self) -> Option<(u16, u16)> {
        let o = self.udp_off as usize;
        if o == 0 {
            return None;
        }
        let d = self.data;
        Some((u16::from_be_bytes([d[o], d[o + 1]]), u16::from_be_bytes([d[o + 2], d[o + 3]])))
    }
    /// The TCP segment, for a TCP frame whose header was captured whole.
    pub fn tcp(&self) -> Option<TcpInfo<'a>> {
        if self.tcp_off == 0 {
            return None;
        }
        let (o, end) = (self.tcp_off as usize, self.tcp_end as usize);
        let t = TcpHeaderSlice::from_slice(&self.data[o..]).ok()?;
        let payload_offset = o + t.slice().len();
        let d = self.data;
        Some(TcpInfo {
            src_port: t.source_port(),
            dst_port: t.destination_port(),
            seq: t.sequence_number(),
            ack: t.acknowledgment_number(),
            flags: TcpFlags(d[o + 13]),
            header_offset: o,
            payload_offset,
            payload: &d[payload_offset.min(d.len())..end.min(d.len())],
            payload_len: end - payload_offset,
        })
    }
    /// The CM MAD, for a CM message on QP1.
    #[inline]
    pub fn cm(&self) -> Option<CmMad<&'a [u8]>> {
        (self.cm_off != 0).then(|| CmMad::new_checked(&self.data[self.cm_off as usize..]).expect("checked in parse"))
    }
    /// The MAC control payload, for a PAUSE or PFC frame.
    #[inline]
    pub fn mac_control(&self) -> Option<MacControl<&'a [u8]>> {
        (self.mac_ctrl_off != 0).then(|| MacControl::new_unchecked(&self.data[self.mac_ctrl_off as usize..]))
    }
    /// The frame carries something rocescope decodes (RoCE, PAUSE/PFC, an InfiniBand LRH).
    pub fn is_decoded(&self) -> bool {
        self.roce.is_some() || self.mac_ctrl_off != 0 || self.lrh
    }

    // ---- the one walk over the fields ----

    /// Calls `f` once per field value, in header order, with the value's byte range in the
    /// frame (empty for derived values). All outputs (fields, JSON, text, the browser and the
    /// dissector's tests) are built on this walk.
    ///
    /// Always inlined (with the per-RoCE walk): each caller's closure is its own copy anyway,
    /// and inlined, the closure's state stays in registers instead of being stored per field.
    #[inline(always)]
    pub fn visit(&self, mut f: impl FnMut(F, Value<'a>, Range<usize>)) {
        if let Some(lrh) = self.lrh() {
            lrh.visit(0, &mut f);
        }
        if let Some(p) = &self.roce {
            self.visit_roce(p, &mut f);
        } else if self.lrh && self.truncated {
            f(F::Truncated, Value::Bool(true), 0..0);
        }
        if self.lrh {
            let o = self.vcrc_off as usize;
            if let Some(bytes) = self.data.get(o..o + vcrc::VCRC_LEN).filter(|_| o != 0) {
                f(F::Vcrc, Value::Bytes(bytes), o..o + vcrc::VCRC_LEN);
            }
            if let Some(name) = self.vcrc.name() {
                f(F::VcrcStatus, Value::Str(name), 0..0);
            }
        }
        if let Some(mc) = self.mac_control() {
            let base = self.mac_ctrl_off as usize;
            f(F::Truncated, Value::Bool(self.truncated), 0..0);
            if mc.class_enable().is_some() {
                // A bitmap: printed as its wire bytes (INTERFACES.md).
                f(F::PfcClassEnable, Value::Bytes(&self.data[base + 2..base + 4]), base + 2..base + 4);
            }
            for i in 0..mc.quanta_count() {
                let o = base + mc.quanta_offset(i);
                f(F::PfcQuanta, Value::UInt(mc.quanta(i) as u64), o..o + 2);
            }
        }
        if self.roce.is_none() && self.mac_ctrl_off == 0 && !self.lrh && self.truncated {
            f(F::Truncated, Value::Bool(true), 0..0);
        }
        if !self.warnings.is_empty() {
            for w in self.warnings.listed() {
                f(F::Warning, Value::Warning(w), 0..0);
            }
        }
    }

    #[inline(always)]
    fn visit_roce(&self, p: &RocePacket<'a>, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        let b = self.roce_off as usize;
        let u = |v: u64| Value::UInt(v);
        let r = |o: usize, n: usize| b + o..b + o + n;
        f(F::Profile, Value::Str(self.profile.name()), 0..0);
        f(F::Truncated, Value::Bool(self.truncated), 0..0);
        f(F::OpcodeName, Value::Str(p.opcode().name()), r(0, 1));
        let bth: &[u8; 12] = p.bytes()[..12].try_into().expect("a parsed packet holds its BTH");
        Bth::new_unchecked(bth).visit(b, f);
        // One pass over the headers present (in wire order), each read from its captured bytes
        // by its declaration's walk: one bounds check per header, none per field.
        let bytes = p.bytes();
        let offsets = p.info().map_or(&[0u8; 12], |i| &i.offsets);
        for h in p.headers().iter() {
            let o = offsets[h as usize] as usize;
            let Some(hb) = bytes.get(o..o + h.len()) else { continue };
            let at = b + o;
            match h {
                Hdr::Rdeth => Rdeth::new_unchecked(hb).visit(at, f),
                Hdr::Deth => Deth::new_unchecked(hb).visit(at, f),
                Hdr::Xrceth => Xrceth::new_unchecked(hb).visit(at, f),
                Hdr::Feth => Feth::new_unchecked(hb).visit(at, f),
                Hdr::Reth => Reth::new_unchecked(hb).visit(at, f),
                Hdr::AtomicEth => AtomicEth::new_unchecked(hb).visit(at, f),
                Hdr::Aeth => {
                    let aeth = Aeth::new_unchecked(hb);
                    aeth.visit(at, f);
                    aeth.visit_derived(at, f);
                    if let (Some(sack), Some(so)) = (p.irn_sack(), p.sack_offset()) {
                        sack.visit(b + so, f);
                    }
                }
                Hdr::AtomicAckEth => AtomicAckEth::new_unchecked(hb).visit(at, f),
                Hdr::ImmDt => ImmDt::new_unchecked(hb).visit(at, f),
                Hdr::Ieth => Ieth::new_unchecked(hb).visit(at, f),
                // The DCP headers are the extension's to walk.
                Hdr::Dcpeth | Hdr::Sseth => {}
            }
        }
        // The range covers the captured payload (it starts no later than the capture ends).
        let payload_at = p.payload_offset().min(p.bytes().len());
        f(F::PayloadLen, u(p.payload_len() as u64), r(payload_at, p.payload().len()));
        self.ext.visit(p, b, f);
        if let Some(cm) = self.cm() {
            let mb = self.cm_off as usize;
            f(F::CmMsg, Value::Str(cm.msg().name()), mb + 16..mb + 18);
            f(F::CmLocalCommId, u(cm.local_comm_id() as u64), mb + 24..mb + 28);
            if let Some(v) = cm.remote_comm_id() {
                f(F::CmRemoteCommId, u(v as u64), mb + 28..mb + 32);
            }
            if let (Some(v), Some(rg)) = (cm.local_qpn(), cm.local_qpn_range()) {
                f(F::CmLocalQpn, u(v as u64), mb + rg.start..mb + rg.end);
            }
            if let (Some(v), Some(rg)) = (cm.remote_qpn(), cm.remote_qpn_range()) {
                f(F::CmRemoteQpn, u(v as u64), mb + rg.start..mb + rg.end);
            }
            if let (Some(v), Some(rg)) = (cm.start_psn(), cm.start_psn_range()) {
                f(F::CmStartPsn, u(v as u64), mb + rg.start..mb + rg.end);
            }
        }
        if let (Some(o), Some(bytes)) = (p.icrc_offset(), p.icrc_bytes()) {
            f(F::Icrc, Value::Bytes(bytes), r(o, 4));
        }
        if let Some(name) = self.icrc.name() {
            f(F::IcrcStatus, Value::Str(name), 0..0);
        }
    }
}
