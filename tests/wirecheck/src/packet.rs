//! One captured frame as the wire shows it: read from a pcapng and decoded with the codec
//! (`rocescope_codec::Frame`), never from what the simulator or a stack says it sent.
//!
//! A packet's [`PktKind`] comes from its bytes only: the BTH opcode, the AETH syndrome, the IRN
//! SACK NAK's extra four bytes (WIRE.md A.3) and, under the `dcp` profile, the DCP tag of the
//! ToS byte (WIRE.md B.1: 10 data, 11 header-only, 01 ACK).

use std::net::IpAddr;

use rocescope_analysis::capture::{self, CaptureReader};
use rocescope_codec::ext::dcp::{tag, TAG_HO};
use rocescope_codec::ext::Ext;
use rocescope_codec::ib::Syndrome;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Params, Profile};

/// What a RoCE packet is, from its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PktKind {
    /// A request packet carrying (or asking for) message data: SEND, RDMA WRITE, READ Request.
    Data,
    /// An RDMA READ response (First/Middle/Last/Only).
    ReadResponse,
    /// RC Acknowledge with an ACK syndrome (for DCP: tag 01, the AETH MSN is the eMSN).
    Ack,
    /// RC Acknowledge with a NAK syndrome and no SACK (PSN sequence error and others).
    Nak,
    /// IRN's SACK NAK: cumulative expected PSN in the BTH, the SACKed PSN after the AETH.
    Sack,
    /// A DCP header-only packet (tag 11): a trimmed data packet or its bounce.
    HeaderOnly,
    /// A congestion notification packet.
    Cnp,
    /// Any other RoCE packet.
    Other,
}

/// One decoded RoCE frame of a capture.
#[derive(Clone, Debug)]
pub struct Pkt {
    /// The pcapng frame number (from 1, over the whole file).
    pub number: u64,
    pub interface: u32,
    pub ts_ns: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub destqp: u32,
    pub opcode: u8,
    pub psn: u32,
    pub kind: PktKind,
    /// The AETH syndrome's NAK code, for `Nak`/`Sack`.
    pub nak_code: Option<u8>,
    /// The AETH MSN (for a DCP ACK: the eMSN).
    pub aeth_msn: Option<u32>,
    /// The SACKed PSN of an IRN SACK NAK.
    pub sack_psn: Option<u32>,
    /// The DCP MSN: from the DCPETH of a data packet, or the 3 bytes of a header-only packet.
    pub dcp_msn: Option<u32>,
    /// The DCPETH sRetryNo of a DCP data packet.
    pub sretryno: Option<u8>,
    /// RETH (VA, DMA length).
    pub reth: Option<(u64, u32)>,
    pub immdt: Option<u32>,
    /// The payload bytes (empty when none).
    pub payload: Vec<u8>,
    /// The frame's bytes with what switches may change zeroed (IP TTL/hop limit, IPv4 header
    /// checksum, ECN bits), so copies of one transmission on both sides of a switch compare equal.
    pub normalized: Vec<u8>,
}

impl Pkt {
    /// `src>dst/destqp`, the flow id of `docs/truth.md`.
    pub fn flow_id(&self) -> String {
        format!("{}>{}/{}", self.src, self.dst, self.destqp)
    }
    /// BTH opcode position: SEND/WRITE/READ response First (or Only).
    pub fn starts_message(&self) -> bool {
        matches!(self.opcode & 0x1f, 0x00 | 0x04 | 0x05 | 0x06 | 0x0A | 0x0B | 0x0C | 0x0D | 0x10)
    }
    /// Last or Only packet of a message (a READ Request counts as the whole request).
    pub fn ends_message(&self) -> bool {
        matches!(self.opcode & 0x1f, 0x02..=0x05 | 0x08..=0x0C | 0x0F | 0x10)
    }
    pub fn is_read_request(&self) -> bool {
        self.opcode == 0x0C
    }
}

/// The frame bytes with the fields switches rewrite zeroed (untagged Ethernet; IPv4 TTL and
/// header checksum and ToS ECN bits, IPv6 hop limit and traffic-class ECN bits).
pub fn normalize(bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    if b.len() < 14 + 40 {
        return b;
    }
    match u16::from_be_bytes([b[12], b[13]]) {
        0x0800 => {
            b[15] &= !0x03;
            b[22] = 0;
            b[24] = 0;
            b[25] = 0;
        }
        0x86DD => {
            b[15] &= !0x30;
            b[21] = 0;
        }
        _ => {}
    }
    b
}

/// Decodes one Ethernet frame; `None` for what is not RoCEv2 over IP.
pub fn decode(number: u64, interface: u32, ts_ns: u64, bytes: &[u8], profile: Profile, params: Params) -> Option<Pkt> {
    let opts = DecodeOptions { verify: false, profile, params };
    let f = Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &opts);
    let p = f.roce()?;
    let (src, dst) = f.ip_addrs()?;
    let bth = p.bth();
    let opcode = p.opcode().0;
    let dcp_tag = match f.ext() {
        Ext::Dcp(d) => Some(d.tag),
        _ => None,
    };
    let ho = dcp_tag == Some(TAG_HO)
        || (profile == Profile::Dcp && f.tos().map(|t| tag(t, params.dcp_tag_shift)) == Some(TAG_HO));
    let aeth = p.aeth();
    let sack = p.irn_sack().map(|s| s.sack_psn());
    let mut nak_code = None;
    let kind = if ho {
        PktKind::HeaderOnly
    } else if opcode == 0x80 || opcode == 0x81 {
        PktKind::Cnp
    } else if opcode == 0x11 {
        match aeth.map(|a| a.syndrome()) {
            Some(Syndrome::Ack { .. }) => PktKind::Ack,
            Some(Syndrome::Nak { code }) => {
                nak_code = Some(code);
                if sack.is_some() {
                    PktKind::Sack
                } else {
                    PktKind::Nak
                }
            }
            _ => PktKind::Other,
        }
    } else if (0x0D..=0x10).contains(&opcode) {
        PktKind::ReadResponse
    } else if opcode <= 0x0C || opcode == 0x16 || opcode == 0x17 {
        PktKind::Data
    } else {
        PktKind::Other
    };
    let dcp_msn = match f.ext() {
        Ext::Dcp(d) => d.msn(p),
        _ => None,
    };
    Some(Pkt {
        number,
        interface,
        ts_ns,
        src,
        dst,
        destqp: bth.dest_qp(),
        opcode,
        psn: bth.psn(),
        kind,
        nak_code,
        aeth_msn: aeth.map(|a| a.msn()),
        sack_psn: sack,
        dcp_msn: if ho { p.ho_msn() } else { dcp_msn },
        sretryno: if ho { None } else { p.dcpeth().map(|d| d.sretryno()) },
        reth: if ho { None } else { p.reth().map(|r| (r.va(), r.dma_len())) },
        immdt: if ho { None } else { p.immdt().map(|i| i.imm()) },
        payload: if ho { Vec::new() } else { p.payload().to_vec() },
        normalized: normalize(bytes),
    })
}

/// Calls `each(frame number, interface, time, bytes)` for every Ethernet frame of a pcap/pcapng
/// file.
pub fn each_frame(path: &std::path::Path, mut each: impl FnMut(u64, u32, u64, &[u8])) -> Result<(), String> {
    let mut r: CaptureReader<Box<dyn std::io::Read + Send>> =
        capture::open(&path.display().to_string()).map_err(|e| format!("{}: {e}", path.display()))?;
    while let Some(rec) = r.next_record().map_err(|e| format!("{}: {e}", path.display()))? {
        if rec.linktype == 1 {
            each(rec.number, rec.interface, rec.ts_ns, rec.data);
        }
    }
    Ok(())
}

/// Reads every frame of a pcap/pcapng file and decodes the RoCE ones under `profile`.
pub fn read(path: &std::path::Path, profile: Profile, params: Params) -> Result<Vec<Pkt>, String> {
    let mut out = Vec::new();
    each_frame(path, |number, interface, ts, bytes| {
        out.extend(decode(number, interface, ts, bytes, profile, params));
    })?;
    Ok(out)
}
