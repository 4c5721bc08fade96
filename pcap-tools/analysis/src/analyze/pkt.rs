//! What the analysers read of one frame: a small `Copy` summary of the codec's decoding (BTH,
//! AETH, the IRN SACK, DCP's tag/MSN/eMSN, IP TTL and ECN, PFC), so the per-flow logic never
//! touches bytes and can be tested with hand-built values. Built by [`Pkt::from_decoded`] (or
//! [`Pkt::write_decoded`]) from a decoded frame, by [`Pkt::write_plain`] from the summary fast
//! path's reading (`analyze/plain.rs`);
//! frames cut by the snaplen keep every field whose bytes were captured (the headers suffice:
//! `tcpdump -s 128` captures are analysed fully).

use std::net::IpAddr;

use rocescope_codec::decoder::Decoded;
use rocescope_codec::ext::flor::{Flor, SendType};
use rocescope_codec::ext::sdr::Sdr;
use rocescope_codec::ext::Ext;
use rocescope_codec::frame::Net;
use rocescope_codec::ib::aeth::Syndrome;
use rocescope_codec::ib::opcode::Position;
use rocescope_codec::ib::RocePacket;
use rocescope_codec::Profile;

/// What a RoCE packet is, for the analysers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A request packet carrying (part of) a message: SEND, WRITE, READ Request.
    Request {
        pos: Position,
        op: ReqOp,
    },
    /// An RDMA READ response packet (data flowing back to the requester).
    ReadResponse {
        pos: Position,
    },
    /// An Acknowledge (AETH ACK syndrome).
    Ack,
    /// A NAK (AETH NAK syndrome) with its code (0: PSN sequence error).
    Nak {
        code: u8,
    },
    /// IRN's selective NAK: a PSN sequence error NAK carrying the SACKed PSN.
    Sack {
        sacked: u32,
    },
    RnrNak,
    /// A congestion notification packet (0x81, or 0x80).
    Cnp,
    /// A DCP header-only packet (a trimmed data packet, or its bounce).
    HeaderOnly {
        msn: Option<u32>,
    },
    /// A research transport's control message (NetRT request or unfulfilled request): what it
    /// says is in [`Pkt::ext`], read by the transport's analyser (`analyze/netrt.rs`, …).
    Control,
    /// Anything else carried over RoCE.
    Other,
}

/// A request's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqOp {
    Send,
    Write,
    Read,
    Other,
}

/// One frame as the analysers see it.
#[derive(Clone, Copy, Debug)]
pub struct Pkt {
    /// Frame number (from 1).
    pub frame: u64,
    /// Capture timestamp, nanoseconds since the Unix epoch.
    pub time_ns: u64,
    /// pcapng interface (0 for pcap).
    pub iface: u32,
    /// Length on the wire.
    pub len: u32,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub destqp: u32,
    pub psn: u32,
    pub opcode: u8,
    /// IPv4 TTL or IPv6 hop limit (None for RoCEv1 or when not captured).
    pub ttl: Option<u8>,
    /// ECN field is CE (11).
    pub ce: bool,
    /// ECN-capable transport (ECT(0), ECT(1) or CE).
    pub ect: bool,
    pub class: Class,
    /// Payload bytes after the headers (on the wire).
    pub payload: u32,
    pub profile: Profile,
    /// DCP: the message sequence number of a data or header-only packet.
    pub dcp_msn: Option<u32>,
    /// DCP: the receiver's eMSN carried by an ACK (tag 01).
    pub dcp_emsn: Option<u32>,
    /// What a research transport's extension adds (NetRT, ERD).
    pub ext: PktExt,
}

/// What the analysers read of a research transport's extension (WIRE.md part B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PktExt {
    #[default]
    None,
    /// A NetRT data packet carrying the in-network retransmission mark (BTH byte 4, bit 0).
    NetrtMarked,
    /// A NetRT retransmission request: ePSN and the bitmap of PSNs ePSN+1+i held (B.4), as
    /// its 16 bytes on the wire (bytes, not a `u128`: the summary stays 8-byte aligned and
    /// smaller, and every frame's summary crosses between threads).
    NetrtRequest { epsn: u32, bitmap: [u8; 16] },
    /// A NetRT unfulfilled request for `psn`.
    NetrtUnfulfilled { psn: u32 },
    /// An ERD data packet's EETH (B.5): multi-packet (`ty`), holds the message's last bytes.
    ErdData { ty: bool, last: bool, msg_id: u16, s_offset: u32 },
    /// An SDR data packet's immediate (B.2): message id, packet offset, and the message id's
    /// width in bits (the split it was read with).
    SdrData { msg_id: u32, pkt_off: u32, id_bits: u8 },
    /// An RC or UC RDMA WRITE First's RETH DMA length (a Flor chunk's bytes: its span).
    WriteFirst { dma_len: u32 },
    /// A Flor WRITE chunk's reliable number (B.3; hint masked): message id, chunk offset, and
    /// the split it was read with (ACKs echo the number whole).
    FlorWrite { mid: u32, off: u32, split: rocescope_codec::params::ImmSplit },
    /// A Flor SEND header (first or only packet): its type (`kind`, [`FlorKind`]), SEND
    /// reliable number, global number, the retransmission flag; `mid` and `off`, a WRITE_RETX's
    /// chunk (message id, first unit) or an ADDR_REQ's message id; `len`, the body's length, or
    /// an ADDR_REQ's message length (saturated at 4 GiB − 1).
    FlorSend { kind: FlorKind, retx: bool, rn: u32, gn: u64, mid: u32, off: u32, len: u32 },
}

/// A Flor SEND header's type (WIRE.md B.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlorKind {
    /// A small message.
    Data,
    /// Units of a lost WRITE chunk.
    WriteRetx,
    /// A large message's address request.
    AddrReq,
    /// An ADDR_RESP (the receiver's answer, not data of the flow's messages), or an ADDR_REQ
    /// whose body the capture cut.
    Other,
}

/// A Flor software ACK (B.3) with the frame carrying it (class [`Class::Control`]).
#[derive(Clone, Debug)]
pub struct FlorAckPkt {
    pub pkt: Pkt,
    /// The data QP acknowledged (its DestQP).
    pub qpn: u32,
    pub acked: Vec<rocescope_codec::ext::flor::Acked>,
}

/// An SDR control message (B.2) with the frame carrying it (class [`Class::Control`]).
#[derive(Clone, Debug)]
pub struct SdrCtrlPkt {
    pub pkt: Pkt,
    pub kind: rocescope_codec::ext::sdr::CtrlType,
    pub msg_seq: u32,
    /// SR_ACK: every chunk below is received.
    pub cum_ack: Option<u32>,
    /// SR_ACK: chunks its bitmap marks received.
    pub sacked: Vec<u32>,
    /// SR_ACK: chunks it shows missing (`cum_ack`, and every clear bit below the highest set
    /// one); SR_NACK: its chunk indices; EC_NACK: its data-submessage indices.
    pub missing: Vec<u32>,
    /// CTS: the bytes of the receive it posted (its send's).
    pub buf_len: Option<u64>,
}

/// An ERD NACK segment (B.5): the entries of the NACK messages it completes, from the TCP
/// connection's addresses (the data receiver sends them to the data sender).
#[derive(Clone, Debug)]
pub struct ErdNackPkt {
    pub frame: u64,
    pub time_ns: u64,
    pub iface: u32,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub ttl: Option<u8>,
    pub entries: Vec<rocescope_codec::ext::erd::NackEntry>,
}

/// A PFC frame (802.1Qbb).
#[derive(Clone, Copy, Debug)]
pub struct PfcPkt {
    pub frame: u64,
    pub time_ns: u64,
    pub iface: u32,
    /// The sender's MAC address.
    pub src_mac: [u8; 6],
    pub class_enable: u16,
    pub quanta: [u16; 8],
    /// Link speed is not in a capture: pause quanta are converted at this rate.
    pub len: u32,
}

/// What a frame is to the analysers.
#[derive(Clone, Debug)]
pub enum Seen {
    Roce(Pkt),
    Pfc(PfcPkt),
    /// The rare kinds, allocated for, behind one box: a `Seen` is as small as the common
    /// [`Pkt`], and dropping a batch of summaries (`analyze::run`, once per frame) tests one
    /// variant, inlined, where four boxed variants made it a call per summary.
    Rare(Box<Rare>),
    None,
}

impl Seen {
    /// The frame number summarised (`None` for [`Seen::None`]).
    pub fn frame(&self) -> Option<u64> {
        match self {
            Seen::Roce(p) => Some(p.frame),
            Seen::Pfc(p) => Some(p.frame),
            Seen::Rare(r) => Some(match &**r {
                Rare::ErdNack(n) => n.frame,
                Rare::SdrCtrl(c) => c.pkt.frame,
                Rare::FlorAck(f) => f.pkt.frame,
                Rare::Cm(c) => c.pkt.frame,
            }),
            Seen::None => None,
        }
    }
}

/// The summaries allocated for, each rare in a capture.
#[derive(Clone, Debug)]
pub enum Rare {
    /// ERD NACK messages (TCP).
    ErdNack(ErdNackPkt),
    /// An SDR control message (one per ACK period).
    SdrCtrl(SdrCtrlPkt),
    /// A Flor software ACK (one per ACK).
    FlorAck(FlorAckPkt),
    /// A CM REQ or REP: which QPs a connection joins (one per connection).
    Cm(CmPkt),
}

/// A CM REQ or REP (IBTA 12.6): the sender's QPN, and the communication ids that match a REP to
/// its REQ.
#[derive(Clone, Copy, Debug)]
pub struct CmPkt {
    /// The MAD's own packet (QP1), counted like any other.
    pub pkt: Pkt,
    /// A REP (else a REQ).
    pub rep: bool,
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// The sender's QPN.
    pub qpn: u32,
}

impl Pkt {
    /// Summarises a decoded frame; `None` for frames that carry no RoCE packet with addresses.
    #[inline(always)]
    pub fn from_decoded(d: &Decoded<'_, '_>, frame: u64, time_ns: u64, iface: u32, len: u32) -> Seen {
        let mut seen = Seen::None;
        Self::write_decoded(&mut seen, d, frame, time_ns, iface, len);
        seen
    }

    /// [`from_decoded`](Self::from_decoded) written into `out` (its old value dropped).
    ///
    /// Always inlined: called once per frame in the reading loops, where the common summary is
    /// then stored field by field into its place in a batch. (Returned, it was built on the
    /// stack and copied into place, some 50 instructions a frame: the several kinds returned
    /// kept the compiler from building it where it goes.)
    #[inline(always)]
    pub fn write_decoded(out: &mut Seen, d: &Decoded<'_, '_>, frame: u64, time_ns: u64, iface: u32, len: u32) {
        let f = &d.frame;
        if let Some(n) = d.nacks.as_ref().filter(|n| !n.entries().is_empty()) {
            let Some((src, dst)) = f.ip_addrs() else {
            *out = Seen::None;
            return;
        };
            let ttl = match f.net() {
                Some(Net::Ipv4 { off, .. }) => f.data().get(off as usize + 8).copied(),
                Some(Net::Ipv6 { off }) => f.data().get(off as usize + 7).copied(),
                _ => None,
            };
            *out = Seen::Rare(Box::new(Rare::ErdNack(ErdNackPkt {
                frame,
                time_ns,
                iface,
                src,
                dst,
                ttl,
                entries: n.entries().to_vec(),
            })));
            return;
        }
        let Some(p) = f.roce() else {
            if let Some(mc) = f.mac_control() {
                if let Some(class_enable) = mc.class_enable().filter(|_| mc.is_complete()) {
                    let mut quanta = [0u16; 8];
                    for (i, q) in quanta.iter_mut().enumerate() {
                        *q = mc.quanta(i);
                    }
                    let mut src_mac = [0u8; 6];
                    if let Some(b) = f.data().get(6..12) {
                        src_mac.copy_from_slice(b);
                    }
                    *out = Seen::Pfc(PfcPkt { frame, time_ns, iface, src_mac, class_enable, quanta, len });
                    return;
                }
            }
            *out = Seen::None;
            return;
        };
        let Some((src, dst)) = f.ip_addrs() else {
            *out = Seen::None;
            return;
        };
        let (ttl, ecn) = match f.net() {
            Some(Net::Ipv4 { off, .. }) => {
                (f.data().get(off as usize + 8).copied(), f.data().get(off as usize + 1).map(|b| b & 3))
            }
            Some(Net::Ipv6 { off }) => (
                f.data().get(off as usize + 7).copied(),
                f.data()
                    .get(off as usize..off as usize + 2)
                    .map(|b| ((u16::from(b[0]) << 8 | u16::from(b[1])) >> 4) as u8 & 3),
            ),
            _ => (None, None),
        };
        let at = Around { frame, time_ns, iface, len, src, dst, ttl, ecn };
        Self::write_roce(out, &p, at, f.ext(), d.profile());
        let plain = matches!(f.ext(), Ext::None);
        if plain && f.cm().is_none() {
            return;
        }
        let Seen::Roce(pkt) = *out else { return };
        if !plain {
            if let Ext::Sdr(Sdr::Ctrl(c)) = f.ext() {
                *out = Seen::Rare(Box::new(Rare::SdrCtrl(sdr_ctrl(pkt, c, p.payload()))));
                return;
            }
            if let Ext::Flor(Flor::Ack(a)) = f.ext() {
                *out = Seen::Rare(Box::new(Rare::FlorAck(FlorAckPkt {
                    pkt,
                    qpn: a.qpn,
                    acked: a.acked(p.payload()).collect(),
                })));
                return;
            }
        }
        if let Some(cm) = f.cm() {
            let msg = cm.msg();
            if matches!(msg, rocescope_codec::ib::cm::CmMsg::Req | rocescope_codec::ib::cm::CmMsg::Rep) {
                if let Some(qpn) = cm.local_qpn() {
                    *out = Seen::Rare(Box::new(Rare::Cm(CmPkt {
                        pkt,
                        rep: msg == rocescope_codec::ib::cm::CmMsg::Rep,
                        local_comm_id: cm.local_comm_id(),
                        remote_comm_id: cm.remote_comm_id().unwrap_or(0),
                        qpn,
                    })));
                }
            }
        }
    }

    /// A frame the fast path read (`analyze/plain.rs`), summarised as
    /// [`write_decoded`](Self::write_decoded) summarises its `std` decoding: by the same code.
    #[inline(always)]
    pub fn write_plain(out: &mut Seen, v: &super::plain::PlainV4<'_>, frame: u64, time_ns: u64, iface: u32, len: u32) {
        let (src, dst) = (IpAddr::V4(v.src), IpAddr::V4(v.dst));
        let at = Around { frame, time_ns, iface, len, src, dst, ttl: Some(v.ttl), ecn: Some(v.tos & 3) };
        Self::write_roce(out, &v.roce, at, &Ext::None, Profile::Std);
    }

    /// The RoCE packet's summary, written into `out`: the common part of every RoCE frame's
    /// (what follows for CM MADs and the extensions' control messages is
    /// [`write_decoded`](Self::write_decoded)'s). `x` is what the frame's profile decoded.
    #[inline(always)]
    fn write_roce(out: &mut Seen, p: &RocePacket<'_>, at: Around, x: &Ext, profile: Profile) {
        let Around { frame, time_ns, iface, len, src, dst, ttl, ecn } = at;
        let bth = p.bth();
        let opcode = p.opcode();
        // A packet without an extension (every packet of a `std` flow, nearly all of most
        // captures) skips the extension's readings: what they give for `Ext::None`.
        let plain = matches!(x, Ext::None);
        let dcp = match x {
            Ext::Dcp(x) => Some(*x),
            _ => None,
        };
        let ext = if !plain {
            ext_of(x, p)
        } else if matches!(opcode.0, 0x06 | 0x26) {
            // (An RDMA WRITE First's length: a Flor chunk's span.)
            p.reth().map_or(PktExt::None, |r| PktExt::WriteFirst { dma_len: r.dma_len() })
        } else {
            PktExt::None
        };
        let class = if opcode.0 == 0x80 || opcode.0 == 0x81 {
            Class::Cnp
        } else if !plain
            && (matches!(ext, PktExt::NetrtRequest { .. } | PktExt::NetrtUnfulfilled { .. })
                || matches!(x, Ext::Sdr(Sdr::Ctrl(_)) | Ext::Flor(Flor::Ack(_))))
        {
            Class::Control
        } else if let Some(x) = dcp.filter(|x| x.ho) {
            Class::HeaderOnly { msn: x.msn(p) }
        } else if let Some(a) =
            p.aeth().filter(|_| opcode.0 == 0x11 || (0x0D..=0x10).contains(&opcode.0) || opcode.0 == 0x12)
        {
            if (0x0D..=0x10).contains(&opcode.0) {
                Class::ReadResponse { pos: opcode.position().unwrap_or(Position::Only) }
            } else {
                match a.syndrome() {
                    Syndrome::Ack { .. } => Class::Ack,
                    Syndrome::RnrNak { .. } => Class::RnrNak,
                    Syndrome::Nak { code } => match p.irn_sack() {
                        Some(s) if code == 0 => Class::Sack { sacked: s.sack_psn() },
                        _ => Class::Nak { code },
                    },
                    Syndrome::Reserved(_) => Class::Other,
                }
            }
        } else if (0x0D..=0x10).contains(&opcode.0) {
            Class::ReadResponse { pos: opcode.position().unwrap_or(Position::Only) }
        } else if let Some(pos) = opcode.position() {
            let op = if opcode.is_send() {
                ReqOp::Send
            } else if opcode.is_write() {
                ReqOp::Write
            } else if opcode.op() == 0x0C {
                ReqOp::Read
            } else {
                ReqOp::Other
            };
            // An ERD packet is a SEND Only on the wire; its EETH places it in its message.
            let pos = match ext {
                PktExt::ErdData { ty: true, last, s_offset, .. } => match (s_offset == 0, last) {
                    (true, true) => Position::Only,
                    (true, false) => Position::First,
                    (false, true) => Position::Last,
                    (false, false) => Position::Middle,
                },
                // SDR's messages are its own (`analyze/sdr.rs`): to the PSN tracker its packets
                // belong to no message.
                PktExt::SdrData { .. } => Position::Middle,
                _ => pos,
            };
            Class::Request { pos, op }
        } else {
            Class::Other
        };
        // Written in place: the common summary (a packet without an extension, not a CM MAD)
        // is left as it stands, written once; the rare kinds below take it out again.
        *out = Seen::Roce(Pkt {
            frame,
            time_ns,
            iface,
            len,
            src,
            dst,
            destqp: bth.dest_qp(),
            psn: bth.psn(),
            opcode: opcode.0,
            ttl,
            ce: ecn == Some(3),
            ect: ecn.is_some_and(|e| e != 0),
            class,
            payload: p.payload_len() as u32,
            profile,
            dcp_msn: dcp.and_then(|x| if x.ho { None } else { x.msn(p) }).or(match class {
                Class::HeaderOnly { msn } => msn,
                _ => None,
            }),
            dcp_emsn: dcp.and_then(|x| x.emsn),
            // (Written below when there is one: built here, the extension went through the
            // stack, written a byte and copied 16 bytes at a time, and the copy waited for the
            // byte's store each frame, a fifth of this function's time.)
            ext: PktExt::None,
        });
        if !matches!(ext, PktExt::None) {
            if let Seen::Roce(pkt) = out {
                pkt.ext = ext;
            }
        }
    }

    /// Carries message data (a request packet or a READ response).
    pub fn is_data(&self) -> bool {
        matches!(self.class, Class::Request { .. } | Class::ReadResponse { .. })
    }

    /// A NetRT request or unfulfilled request: a switch's message at a flow's addresses.
    pub fn is_netrt_message(&self) -> bool {
        matches!(self.ext, PktExt::NetrtRequest { .. } | PktExt::NetrtUnfulfilled { .. })
    }
}

/// What a summary keeps of the frame around its RoCE packet.
#[derive(Clone, Copy)]
struct Around {
    frame: u64,
    time_ns: u64,
    iface: u32,
    len: u32,
    src: IpAddr,
    dst: IpAddr,
    /// IPv4 TTL or IPv6 hop limit, when captured.
    ttl: Option<u8>,
    /// The ECN bits, when captured.
    ecn: Option<u8>,
}

/// What the analysers keep of a research transport's extension.
fn ext_of(e: &Ext, p: &rocescope_codec::ib::RocePacket<'_>) -> PktExt {
    use rocescope_codec::ext::netrt::Netrt;
    match e {
        Ext::Netrt(Netrt::Data { rtx_mark: true }) => PktExt::NetrtMarked,
        Ext::Netrt(n @ Netrt::Request { epsn }) => match n.bitmap(p) {
            Some(b) => PktExt::NetrtRequest { epsn: *epsn, bitmap: *b },
            None => PktExt::None,
        },
        Ext::Netrt(Netrt::Unfulfilled { psn }) => PktExt::NetrtUnfulfilled { psn: *psn },
        Ext::Sdr(Sdr::Data(d)) => PktExt::SdrData { msg_id: d.msg_id, pkt_off: d.pkt_off, id_bits: d.split.0 },
        Ext::Flor(Flor::Write(w)) => PktExt::FlorWrite { mid: w.mid, off: w.chunk_off, split: w.split },
        Ext::Flor(Flor::Send(h)) => {
            use rocescope_codec::ext::flor::Addr;
            let (kind, mid, off, len) = match h.kind {
                SendType::Data => (FlorKind::Data, 0, 0, h.body_len),
                SendType::WriteRetx => (FlorKind::WriteRetx, h.write().mid, h.write().chunk_off, h.body_len),
                SendType::AddrReq => match h.addr(p.payload()) {
                    Some(Addr::Req { mid, msg_len }) => {
                        (FlorKind::AddrReq, mid, 0, msg_len.min(u32::MAX as u64) as u32)
                    }
                    _ => (FlorKind::Other, 0, 0, 0),
                },
                SendType::AddrResp => (FlorKind::Other, 0, 0, 0),
            };
            PktExt::FlorSend { kind, retx: h.retx(), rn: h.rn, gn: h.gn, mid, off, len }
        }
        Ext::Erd(x) => {
            let e = &x.eeth;
            PktExt::ErdData { ty: e.ty != 0, last: e.last, msg_id: e.msg_id, s_offset: e.s_offset }
        }
        _ => PktExt::None,
    }
}

/// What the analysers read of an SDR control message.
fn sdr_ctrl(pkt: Pkt, c: &rocescope_codec::ext::sdr::Ctrl, payload: &[u8]) -> SdrCtrlPkt {
    use rocescope_codec::ext::sdr::Ctrl;
    let (cum_ack, sacked, missing) = match *c {
        Ctrl::SrAck { cum_ack, .. } => {
            let sacked: Vec<u32> = c.sacked(payload).collect();
            // (The bitmap's chunks come in increasing order.)
            let top = sacked.last().copied().unwrap_or(cum_ack);
            let mut missing = Vec::new();
            let mut next = sacked.iter().peekable();
            for x in cum_ack..top {
                while next.next_if(|&&s| s < x).is_some() {}
                if next.peek() != Some(&&x) {
                    missing.push(x);
                }
            }
            (Some(cum_ack), sacked, missing)
        }
        Ctrl::SrNack { .. } | Ctrl::EcNack { .. } => (None, Vec::new(), c.indices(payload).collect()),
        _ => (None, Vec::new(), Vec::new()),
    };
    let buf_len = match *c {
        Ctrl::Cts { buf_len, .. } => Some(buf_len),
        _ => None,
    };
    SdrCtrlPkt { pkt, kind: c.kind(), msg_seq: c.msg_seq(), cum_ack, sacked, missing, buf_len }
}
