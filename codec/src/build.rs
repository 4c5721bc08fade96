//! Builders that emit byte-exact frames: Ethernet (0-2 VLAN tags) · IPv4/IPv6 · UDP 4791 · BTH ·
//! extension headers · payload · pad · ICRC (RoCEv2), or Ethernet · GRH · BTH … (RoCEv1), with
//! IP/UDP lengths, the IPv4 header checksum, the UDP checksum (always for IPv6, optional for
//! IPv4, where NICs send 0) and the ICRC computed. Used by tests, fuzz seeds and the simulator.
//! Header fields are written as given, so tests can also build malformed packets.

use crate::frame::{ETHERTYPE_ROCEV1, ROCEV2_PORT};
use crate::ib::icrc::{self, IcrcNet};
use crate::ib::*;
use crate::mac_control::{self, MacControlRepr};

/// The transport part of a RoCE packet: BTH, the extension headers that are `Some` (emitted in
/// wire order), the payload and the pad (`bth.pad_cnt` zero bytes); the ICRC follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoceRepr<'p> {
    pub bth: BthRepr,
    pub rdeth: Option<RdethRepr>,
    pub deth: Option<DethRepr>,
    pub xrceth: Option<XrcethRepr>,
    /// DCP data packets (WIRE.md B.1).
    pub dcpeth: Option<DcpethRepr>,
    pub feth: Option<FethRepr>,
    pub reth: Option<RethRepr>,
    pub atomic_eth: Option<AtomicEthRepr>,
    pub aeth: Option<AethRepr>,
    pub atomic_ack_eth: Option<AtomicAckEthRepr>,
    /// DCP SEND packets and the last packet of a WRITE with Immediate.
    pub sseth: Option<SsethRepr>,
    pub immdt: Option<ImmDtRepr>,
    pub ieth: Option<IethRepr>,
    /// IRN's selective NAK tail after the AETH.
    pub irn_sack: Option<IrnSackRepr>,
    /// Everything after the headers and before the pad (for a CNP, its 16 reserved bytes).
    pub payload: &'p [u8],
}

/// The 16 reserved bytes of a CNP.
pub static CNP_RESERVED: [u8; 16] = [0; 16];

impl<'p> RoceRepr<'p> {
    /// A packet with the given opcode, DestQP and PSN, P_Key 0xFFFF, and every extension header
    /// the opcode table calls for set to zero values (fill them in afterwards).
    pub fn new(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        Self::from_info(opcode, dest_qp, psn, Opcode(opcode).info())
    }

    /// A DCP data packet (tag 10, WIRE.md B.1): as [`Self::new`] with the DCPETH, RETH and
    /// SSNETH the DCP table adds.
    pub fn new_dcp(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        Self::from_info(opcode, dest_qp, psn, Opcode(opcode).info_dcp())
    }

    fn from_info(opcode: u8, dest_qp: u32, psn: u32, info: Option<&OpInfo>) -> Self {
        let mut r = RoceRepr {
            bth: BthRepr { opcode, p_key: 0xffff, dest_qp, psn, ..Default::default() },
            ..Default::default()
        };
        if let Some(info) = info {
            for h in info.headers.iter() {
                match h {
                    Hdr::Rdeth => r.rdeth = Some(Default::default()),
                    Hdr::Deth => r.deth = Some(Default::default()),
                    Hdr::Xrceth => r.xrceth = Some(Default::default()),
                    Hdr::Dcpeth => r.dcpeth = Some(Default::default()),
                    Hdr::Feth => r.feth = Some(Default::default()),
                    Hdr::Reth => r.reth = Some(Default::default()),
                    Hdr::AtomicEth => r.atomic_eth = Some(Default::default()),
                    Hdr::Aeth => r.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: 0 }),
                    Hdr::AtomicAckEth => r.atomic_ack_eth = Some(Default::default()),
                    Hdr::Sseth => r.sseth = Some(Default::default()),
                    Hdr::ImmDt => r.immdt = Some(Default::default()),
                    Hdr::Ieth => r.ieth = Some(Default::default()),
                }
            }
            if info.cnp {
                r.payload = &CNP_RESERVED;
            }
        }
        r
    }

    /// Sets the payload and the PadCnt that brings it to a multiple of four bytes.
    pub fn with_payload(mut self, payload: &'p [u8]) -> Self {
        self.payload = payload;
        self.bth.pad_cnt = ((4 - payload.len() % 4) % 4) as u8;
        self
    }

    /// Bytes of the extension headers.
    pub fn headers_len(&self) -> usize {
        [
            self.rdeth.map(|_| RdethRepr::LEN),
            self.deth.map(|_| DethRepr::LEN),
            self.xrceth.map(|_| XrcethRepr::LEN),
            self.dcpeth.map(|_| DcpethRepr::LEN),
            self.feth.map(|_| FethRepr::LEN),
            self.reth.map(|_| RethRepr::LEN),
            self.atomic_eth.map(|_| AtomicEthRepr::LEN),
            self.aeth.map(|_| AethRepr::LEN),
            self.irn_sack.map(|_| IrnSackRepr::LEN),
            self.atomic_ack_eth.map(|_| AtomicAckEthRepr::LEN),
            self.sseth.map(|_| SsethRepr::LEN),
            self.immdt.map(|_| ImmDtRepr::LEN),
            self.ieth.map(|_| IethRepr::LEN),
        ]
        .iter()
        .flatten()
        .sum()
    }

    /// Length from the BTH to the ICRC inclusive.
    pub fn buffer_len(&self) -> usize {
        BthRepr::LEN + self.headers_len() + self.payload.len() + self.bth.pad_cnt as usize + 4
    }

    /// Writes BTH … pad into `buf` (at least `buffer_len() - 4` bytes); the ICRC is not written.
    pub fn emit(&self, buf: &mut [u8]) {
        self.bth.emit(&mut buf[..BthRepr::LEN]);
        let mut off = BthRepr::LEN;
        let mut put = |len: usize, f: &dyn Fn(&mut [u8])| {
            f(&mut buf[off..off + len]);
            off += len;
        };
        if let Some(h) = self.rdeth {
            put(RdethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.deth {
            put(DethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.xrceth {
            put(XrcethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.dcpeth {
            put(DcpethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.feth {
            put(FethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.reth {
            put(RethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.atomic_eth {
            put(AtomicEthRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.aeth {
            put(AethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.irn_sack {
            put(IrnSackRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.atomic_ack_eth {
            put(AtomicAckEthRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.sseth {
            put(SsethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.immdt {
            put(ImmDtRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.ieth {
            put(IethRepr::LEN, &|b| h.emit(b));
        }
        let payload = self.payload;
        put(payload.len(), &|b| b.copy_from_slice(payload));
        put(self.bth.pad_cnt as usize, &|b| b.fill(0));
    }

    /// Reads every header of a parsed packet back into a `Repr` (the inverse of [`Self::emit`]).
    pub fn parse(p: &RocePacket<'p>) -> Self {
        RoceRepr {
            bth: BthRepr::parse(&p.bth()),
            rdeth: p.rdeth().map(|v| RdethRepr::parse(&v)),
            deth: p.deth().map(|v| DethRepr::parse(&v)),
            xrceth: p.xrceth().map(|v| XrcethRepr::parse(&v)),
            dcpeth: p.dcpeth().map(|v| DcpethRepr::parse(&v)),
            feth: p.feth().map(|v| FethRepr::parse(&v)),
            reth: p.reth().map(|v| RethRepr::parse(&v)),
            atomic_eth: p.atomic_eth().map(|v| AtomicEthRepr::parse(&v)),
            aeth: p.aeth().map(|v| AethRepr::parse(&v)),
            atomic_ack_eth: p.atomic_ack_eth().map(|v| AtomicAckEthRepr::parse(&v)),
            sseth: p.sseth().map(|v| SsethRepr::parse(&v)),
            immdt: p.immdt().map(|v| ImmDtRepr::parse(&v)),
            ieth: p.ieth().map(|v| IethRepr::parse(&v)),
            irn_sack: p.irn_sack().map(|v| IrnSackRepr::parse(&v)),
            payload: if p.info().is_some_and(|i| i.cnp) {
                // A CNP has no extension header: its reserved bytes follow the BTH (fewer than 16
                // when the UDP length is short).
                p.bytes().get(BthRepr::LEN..p.payload_offset()).unwrap_or(&[])
            } else {
                p.payload()
            },
        }
    }
}

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

/// Appends an Ethernet PAUSE or PFC frame (destination 01-80-C2-00-00-01), padded to 60 bytes.
pub fn mac_control_frame(src: [u8; 6], repr: &MacControlRepr, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 1]);
    out.extend_from_slice(&src);
    out.extend_from_slice(&mac_control::ETHERTYPE.to_be_bytes());
    let o = out.len();
    out.resize(o + repr.len(), 0);
    repr.emit(&mut out[o..]);
    if out.len() - start < 60 {
        out.resize(start + 60, 0);
    }
    out.len() - start
}

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
            flags: crate::frame::TcpFlags::ACK | crate::frame::TcpFlags::PSH,
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

/// RFC 1071 one's-complement sum over the concatenated chunks (each of even length but the last).
pub fn internet_checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum = 0u32;
    let mut odd: Option<u8> = None;
    for c in chunks {
        for &b in c.iter() {
            match odd.take() {
                Some(hi) => sum += u16::from_be_bytes([hi, b]) as u32,
                None => odd = Some(b),
            }
        }
    }
    if let Some(hi) = odd {
        sum += (hi as u32) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// UDP checksum with the IPv4 or IPv6 pseudo-header; 0 is sent as 0xFFFF.
fn udp_checksum(ip: &[u8], udp: &[u8], payload: &[u8]) -> u16 {
    let len = ((udp.len() + payload.len()) as u32).to_be_bytes();
    let mut hdr = [0u8; 8];
    hdr[..6].copy_from_slice(&udp[..6]);
    let c = if ip.len() == 20 {
        let pseudo = [&ip[12..20], &[0, 17], &len[2..4]].concat();
        internet_checksum(&[&pseudo, &hdr, payload])
    } else {
        let pseudo = [&ip[8..40], &len[..], &[0, 0, 0, 17]].concat();
        internet_checksum(&[&pseudo, &hdr, payload])
    };
    if c == 0 {
        0xffff
    } else {
        c
    }
}

/// Recomputes the ICRC of an already built RoCE frame in place (after a test mutated it).
/// Returns false when the frame is not a complete RoCE packet.
pub fn fix_icrc(link: crate::frame::LinkType, frame: &mut [u8]) -> bool {
    let opts = crate::frame::DecodeOptions { verify: false, ..Default::default() };
    let (off, at, crc) = {
        let f = crate::frame::Frame::parse(link, frame, frame.len(), &opts);
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

/// Trims a DCP data frame to its header-only form, as a DCP switch does (WIRE.md B.1): keeps the
/// L2-L4 headers, the BTH and the first 3 bytes of the DCPETH (the MSN), rewrites the IP length
/// (and the IPv4 header checksum) and the UDP length, zeroes the UDP checksum and sets the tag
/// to 11. Returns `None` for a frame that is not RoCEv2 over IPv4 or IPv6.
pub fn header_only(link: crate::frame::LinkType, frame: &[u8], tag_shift: u8) -> Option<Vec<u8>> {
    use crate::frame::{DecodeOptions, Frame, Net};
    let f = Frame::parse(link, frame, frame.len(), &DecodeOptions { verify: false, ..Default::default() });
    let net = f.net()?;
    f.udp_ports()?;
    let keep = f.roce_offset() + BthRepr::LEN + crate::ib::packet::HO_MSN_LEN;
    if frame.len() < keep {
        return None;
    }
    let mut out = frame[..keep].to_vec();
    let (ip, hl) = (net.offset(), net.header_len());
    let udp_len = (keep - ip - hl) as u16;
    match net {
        Net::Ipv4 { .. } => {
            out[ip + 1] = crate::ext::dcp::with_tag(out[ip + 1], tag_shift, crate::ext::dcp::TAG_HO);
            out[ip + 2..ip + 4].copy_from_slice(&((keep - ip) as u16).to_be_bytes());
            out[ip + 10..ip + 12].fill(0);
            let c = internet_checksum(&[&out[ip..ip + hl]]);
            out[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
        }
        Net::Ipv6 { .. } => {
            let tc = (out[ip] << 4) | (out[ip + 1] >> 4);
            let tc = crate::ext::dcp::with_tag(tc, tag_shift, crate::ext::dcp::TAG_HO);
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
