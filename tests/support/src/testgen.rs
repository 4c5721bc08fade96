//! Deterministic test captures built with the codec's builders (`rocescope_codec::build`).
//!
//! [`standard_mix`] is the "std" baseline of WIRE.md part A in one capture: every standard opcode
//! of the A.4 table for RC, UC, RD, UD and XRC (FLUSH 0x1C and ATOMIC WRITE 0x1D included), CNP
//! 0x81, an IRN selective NAK (A.3), the CM MADs REQ/REP/RTU/DREQ/DREP/REJ/MRA on QP1 (A.6), and a
//! PFC and an 802.3x PAUSE frame. Every payload-carrying opcode appears once with each PadCnt
//! 0-3 (the payload length chosen to need that pad); encapsulations cycle through IPv4 and IPv6,
//! untagged, one 802.1Q tag and two tags (802.1ad outer); every header field holds a non-zero,
//! distinctive value that changes from frame to frame (PSNs near and across 2^24, 64-bit VAs and
//! atomic operands with the top bit set, every AETH kind and NAK code, every BTH flag in both
//! states), so a field read from the wrong offset or with the wrong width shows.
//!
//! Nothing here is random: the same code gives the same bytes, and [`pcapng_bytes`] uses fixed
//! timestamps ([`BASE_TS_NS`] + frame index × [`TS_STEP_NS`]), so the bundled
//! `fixtures/std-mix.pcapng` can be checked byte for byte against a fresh run (see
//! `pcap-tools/cli/tests/fixtures.rs`; regenerate with `cargo run -p rocescope-testsupport --example write_std_mix`).
//! Each frame carries its description as a pcapng packet comment (`frame.comment` in Wireshark).

use std::io;
use std::path::Path;

use rocescope_codec::build::{mac_control_frame, FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, CmMsg, CmRepr, DethRepr, FethRepr, IethRepr, ImmDtRepr, IrnSackRepr,
    Opcode, RdethRepr, RethRepr, Syndrome, XrcethRepr,
};
use rocescope_codec::mac_control::MacControlRepr;

use rocescope_analysis::capture::CaptureWriter;

/// One generated frame and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestFrame {
    /// One line: opcode name, encapsulation, pad count, payload length, notable values.
    pub desc: String,
    /// The Ethernet frame.
    pub bytes: Vec<u8>,
}

/// Timestamp of the first frame (2023-11-14 22:13:20 UTC), in nanoseconds since the epoch.
pub const BASE_TS_NS: u64 = 1_700_000_000_000_000_000;
/// Frames are this many nanoseconds apart.
pub const TS_STEP_NS: u64 = 1_000;

/// Timestamp of frame `index` (0-based) in the captures written here.
pub fn timestamp_ns(index: usize) -> u64 {
    BASE_TS_NS + index as u64 * TS_STEP_NS
}

/// The standard opcodes of WIRE.md A.4, per transport, written out from the spec (not taken from
/// the codec's table, so a table that lost an opcode would still be exercised).
pub const RC_OPCODES: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12,
    0x13, 0x14, 0x16, 0x17, 0x1C, 0x1D,
];
/// UC: SEND and RDMA WRITE, 0x20-0x2B.
pub const UC_OPCODES: &[u8] = &[0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B];
/// RD: 0x40-0x54 and RESYNC 0x55.
pub const RD_OPCODES: &[u8] = &[
    0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x4F, 0x50, 0x51, 0x52,
    0x53, 0x54, 0x55,
];
/// UD: SEND Only, SEND Only with Immediate.
pub const UD_OPCODES: &[u8] = &[0x64, 0x65];
/// XRC: like RC 0x00-0x17 without 0x15.
pub const XRC_OPCODES: &[u8] = &[
    0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xAF, 0xB0, 0xB1, 0xB2,
    0xB3, 0xB4, 0xB6, 0xB7,
];
/// The CNP opcode hardware sends.
pub const CNP_OPCODE: u8 = 0x81;

/// The CM messages of WIRE.md A.6, in the order a connection's life uses them (then REJ, MRA).
pub const CM_MSGS: [CmMsg; 7] = [CmMsg::Req, CmMsg::Rep, CmMsg::Rtu, CmMsg::Dreq, CmMsg::Drep, CmMsg::Rej, CmMsg::Mra];

/// AETH syndromes cycled through by the opcodes that carry an AETH, and all sent as RC
/// Acknowledges: ACK (credit counts, 31 = invalid), RNR NAK (timers), NAK codes 0-4.
pub const AETH_VARIANTS: [Syndrome; 11] = [
    Syndrome::Ack { credit: 0x0A },
    Syndrome::RnrNak { timer: 0x12 },
    Syndrome::Nak { code: 0 },
    Syndrome::Nak { code: 1 },
    Syndrome::Nak { code: 2 },
    Syndrome::Nak { code: 3 },
    Syndrome::Nak { code: 4 },
    Syndrome::Ack { credit: 31 },
    Syndrome::RnrNak { timer: 1 },
    Syndrome::Ack { credit: 0x15 },
    Syndrome::RnrNak { timer: 31 },
];

/// An encapsulation: IP version and number of VLAN tags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encap {
    pub ipv6: bool,
    pub vlans: u8,
}

/// Cycled through frame by frame, so with the pad cycle of four every opcode meets several.
pub const ENCAPS: [Encap; 6] = [
    Encap { ipv6: false, vlans: 0 },
    Encap { ipv6: true, vlans: 1 },
    Encap { ipv6: false, vlans: 2 },
    Encap { ipv6: true, vlans: 0 },
    Encap { ipv6: false, vlans: 1 },
    Encap { ipv6: true, vlans: 2 },
];

const HOST_A_V4: [u8; 4] = [192, 168, 77, 10];
const HOST_B_V4: [u8; 4] = [192, 168, 77, 20];
const HOST_A_V6: [u8; 16] = [0xfd, 0x00, 0x5c, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a];
const HOST_B_V6: [u8; 16] = [0xfd, 0x00, 0x5c, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x14];
const MAC_A: [u8; 6] = [0x02, 0x5c, 0x0e, 0x00, 0x00, 0x0a];
const MAC_B: [u8; 6] = [0x02, 0x5c, 0x0e, 0x00, 0x00, 0x14];
/// VLAN TCIs: outer PCP 3 VID 100, inner PCP 1 VID 200.
const VLAN_OUTER: u16 = 0x6000 | 100;
const VLAN_INNER: u16 = 0x2000 | 200;

/// Builds the frames, numbering them as it goes (the number seeds every field value).
struct Gen {
    frames: Vec<TestFrame>,
}

impl Gen {
    fn n(&self) -> u32 {
        self.frames.len() as u32
    }

    /// Fills every field the opcode's headers have with values derived from the frame number.
    fn fill(&self, r: &mut RoceRepr<'_>, aeth_variant: usize) {
        let n = self.n();
        let b = &mut r.bth;
        b.se = n % 2 == 1;
        b.mig_req = n % 3 == 1;
        b.ack_req = !n.is_multiple_of(5);
        b.fecn = n % 7 == 3;
        b.becn = n % 4 == 2;
        b.p_key = 0x8000 | ((0x1234 + 0x0101 * n) & 0x7fff) as u16;
        b.dest_qp = (0x00A5_0000 + 0x0123 * n) & 0x00ff_ffff;
        b.psn = if n.is_multiple_of(2) { 0x00ff_ffff - n } else { (0x00ff_f000 + 0x10 * n) & 0x00ff_ffff };
        if let Some(h) = &mut r.rdeth {
            *h = RdethRepr { eecnxt: 0x00EE_0000 | (0x35 * n + 7) };
        }
        if let Some(h) = &mut r.deth {
            *h = DethRepr { q_key: 0x1BAD_0000 + n, src_qp: 0x00C0_FF00 ^ n };
        }
        if let Some(h) = &mut r.xrceth {
            *h = XrcethRepr { xrc_srq: 0x005A_5A00 + n };
        }
        if let Some(h) = &mut r.feth {
            *h = FethRepr { sel: 1 + (n % 3) as u8, plt: 1 + (n % 2) as u8 };
        }
        if let Some(h) = &mut r.reth {
            *h = RethRepr {
                va: 0xFEDC_BA98_7654_3210 - n as u64 * 0x0001_0001_0001_0001,
                r_key: 0xDEAD_0000 | n,
                dma_len: 0x0001_0000 + 0x111 * n,
            };
        }
        if let Some(h) = &mut r.atomic_eth {
            *h = AtomicEthRepr {
                va: 0x8000_7FFF_0000_0008 + 8 * n as u64,
                r_key: 0xA70E_0000 | n,
                swap_add: 0x1111_2222_3333_4444 + n as u64,
                compare: 0x9999_AAAA_BBBB_CCCC ^ n as u64,
            };
        }
        if let Some(h) = &mut r.aeth {
            *h = AethRepr { syndrome: AETH_VARIANTS[aeth_variant % AETH_VARIANTS.len()], msn: 0x00AB_CDEF - n };
        }
        if let Some(h) = &mut r.atomic_ack_eth {
            *h = AtomicAckEthRepr { orig_rem_data: 0x8A0B_0C0D_0E0F_1011 + n as u64 };
        }
        if let Some(h) = &mut r.immdt {
            *h = ImmDtRepr { imm: 0xC0DE_0000 + n };
        }
        if let Some(h) = &mut r.ieth {
            *h = IethRepr { r_key: 0x1E7B_0000 + n };
        }
    }

    /// Wraps a RoCE packet in the given encapsulation (host A to host B unless `reverse`).
    fn push_roce(&mut self, desc: String, roce: RoceRepr<'_>, encap: Encap, reverse: bool) {
        let n = self.n();
        let (a4, b4, a6, b6) = if reverse {
            (HOST_B_V4, HOST_A_V4, HOST_B_V6, HOST_A_V6)
        } else {
            (HOST_A_V4, HOST_B_V4, HOST_A_V6, HOST_B_V6)
        };
        let net = if encap.ipv6 {
            NetRepr::Ipv6 { src: a6, dst: b6, traffic_class: 0x68, flow_label: 0x5_0000 | n, hop_limit: 64 }
        } else {
            NetRepr::Ipv4 { src: a4, dst: b4, tos: 0x68, ttl: 64, ident: 0x4000 + n as u16 }
        };
        let mut f = FrameRepr::new(net, roce);
        (f.eth_src, f.eth_dst) = if reverse { (MAC_B, MAC_A) } else { (MAC_A, MAC_B) };
        f.vlans = match encap.vlans {
            0 => [None, None],
            1 => [Some(VLAN_OUTER), None],
            _ => [Some(VLAN_OUTER), Some(VLAN_INNER)],
        };
        f.udp_src = 0xC000 | ((0x3b * n) & 0x3fff) as u16;
        f.udp_checksum = n.is_multiple_of(2);
        let tags = match encap.vlans {
            0 => "untagged",
            1 => "1 VLAN",
            _ => "2 VLANs",
        };
        let ip = if encap.ipv6 { "IPv6" } else { "IPv4" };
        self.frames.push(TestFrame { desc: format!("{desc} · {ip} · {tags}"), bytes: f.to_vec() });
    }

    /// One frame of `opcode`: with `pad` Some(p), a payload needing PadCnt p.
    fn opcode_frame(&mut self, opcode: u8, pad: Option<u8>, aeth_variant: usize) {
        let n = self.n();
        let payload: Vec<u8> = match pad {
            // ATOMIC WRITE carries exactly 8 bytes.
            _ if opcode & 0x1f == 0x1D => (0..8).map(|i| 0xA0 ^ (i * 7 + n) as u8).collect(),
            Some(p) => {
                let len = 8 + 4 * (n % 3) + (4 - p as u32) % 4;
                (0..len).map(|i| 0xA0 ^ (i * 7 + n) as u8).collect()
            }
            None => Vec::new(),
        };
        let mut r = RoceRepr::new(opcode, 0, 0).with_payload(&payload);
        self.fill(&mut r, aeth_variant);
        let mut desc = format!("{} (0x{opcode:02X})", Opcode(opcode).name());
        if !payload.is_empty() || pad.is_some() {
            desc += &format!(" · pad {} · {}-byte payload", r.bth.pad_cnt, payload.len());
        }
        if let Some(a) = r.aeth {
            desc += &format!(" · AETH {:?}", a.syndrome);
        }
        self.push_roce(desc, r, ENCAPS[n as usize % ENCAPS.len()], false);
    }
}

/// Does the opcode carry a payload (and so take every pad count)?
fn carries_payload(opcode: u8) -> bool {
    Opcode(opcode).info().is_some_and(|i| i.payload)
}

/// The standard-profile mix described in the module documentation, in a fixed order: RC, UC, RD,
/// UD, XRC opcodes (payload-carrying ones with pads 0, 1, 2, 3), RC Acknowledges with every AETH
/// variant, an IRN SACK NAK, an empty SEND Only (Ethernet-padded to 60 bytes), a CNP, the CM
/// MADs, PFC and PAUSE.
pub fn standard_mix() -> Vec<TestFrame> {
    let mut g = Gen { frames: Vec::new() };
    let mut aeth_variant = 0;
    for &op in [RC_OPCODES, UC_OPCODES, RD_OPCODES, UD_OPCODES, XRC_OPCODES].concat().iter() {
        let has_aeth = Opcode(op).info().is_some_and(|i| i.headers.contains(rocescope_codec::ib::Hdr::Aeth));
        if carries_payload(op) && op & 0x1f != 0x1D {
            for pad in 0..4 {
                g.opcode_frame(op, Some(pad), aeth_variant);
                aeth_variant += has_aeth as usize;
            }
        } else {
            g.opcode_frame(op, None, aeth_variant);
            aeth_variant += has_aeth as usize;
        }
    }

    // Every AETH variant on an RC Acknowledge.
    for v in 0..AETH_VARIANTS.len() {
        g.opcode_frame(0x11, None, v);
    }

    // IRN selective NAK (WIRE.md A.3): NAK code 0, BTH PSN = expected PSN, then reserved 8 ·
    // SACK PSN 24. The SACK PSN is a little ahead of the expected PSN, across the 2^24 wrap.
    {
        let n = g.n();
        let mut r = RoceRepr::new(0x11, 0, 0);
        g.fill(&mut r, 2);
        r.bth.psn = 0x00ff_fffd;
        r.aeth = Some(AethRepr { syndrome: Syndrome::Nak { code: 0 }, msn: 0x0012_3456 + n });
        r.irn_sack = Some(IrnSackRepr { sack_psn: 0x0000_0002 });
        g.push_roce(
            "RC Acknowledge (0x11) · IRN SACK NAK: expected PSN 0xFFFFFD, SACK PSN 0x000002".into(),
            r,
            ENCAPS[n as usize % 6],
            true,
        );
    }

    // An empty SEND Only: 58 bytes, padded to 60 on the wire (WIRE.md A.1).
    {
        let mut r = RoceRepr::new(0x04, 0, 0).with_payload(&[]);
        g.fill(&mut r, 0);
        g.push_roce("RC SEND Only (0x04) · empty payload, Ethernet-padded to 60 bytes".into(), r, ENCAPS[0], false);
    }

    // CNP (0x81): BECN set, 16 reserved bytes; P_Key and DestQP of the flow it throttles.
    {
        let n = g.n();
        let mut r = RoceRepr::new(CNP_OPCODE, 0, 0);
        g.fill(&mut r, 0);
        (r.bth.se, r.bth.mig_req, r.bth.ack_req, r.bth.fecn, r.bth.becn, r.bth.psn) =
            (false, false, false, false, true, 0);
        g.push_roce(format!("CNP (0x{CNP_OPCODE:02X}) · BECN"), r, ENCAPS[n as usize % 6], true);
    }

    // CM MADs on QP1: a connection's REQ/REP/RTU/DREQ/DREP, then a REJ and an MRA.
    let (qpn_a, qpn_b) = (0x00AB_CD01u32, 0x00DC_BA02u32);
    let (psn_a, psn_b) = (0x00FF_FFF0u32, 0x0012_3456u32);
    let (comm_a, comm_b) = (0x1A2B_3C4Du32, 0x5D6E_7F80u32);
    for (i, msg) in CM_MSGS.iter().enumerate() {
        // B sends REP, DREP and the MRA; A the rest.
        let from_b = matches!(msg, CmMsg::Rep | CmMsg::Drep | CmMsg::Mra);
        let (local, remote) = if from_b { (comm_b, comm_a) } else { (comm_a, comm_b) };
        let cm = CmRepr {
            msg: *msg,
            transaction_id: 0x0000_1234_5678_9A00 + i as u64,
            local_comm_id: local + i as u32 * 0x100,
            remote_comm_id: remote,
            qpn: match msg {
                CmMsg::Req => qpn_a,
                CmMsg::Rep | CmMsg::Dreq => qpn_b,
                _ => 0,
            },
            start_psn: match msg {
                CmMsg::Req => psn_a,
                CmMsg::Rep => psn_b,
                _ => 0,
            },
        };
        let mut mad = [0u8; CmRepr::LEN];
        cm.emit(&mut mad);
        let mut r = RoceRepr::new(0x64, 1, 0).with_payload(&mad);
        r.bth.p_key = 0xffff;
        r.bth.psn = 0x00ff_fff0 + i as u32;
        r.bth.ack_req = false;
        r.deth = Some(DethRepr { q_key: 0x8001_0000, src_qp: 1 });
        let detail = match msg {
            CmMsg::Req => format!(" · local QPN 0x{qpn_a:06X}, start PSN 0x{psn_a:06X}"),
            CmMsg::Rep => format!(" · local QPN 0x{qpn_b:06X}, start PSN 0x{psn_b:06X}"),
            CmMsg::Dreq => format!(" · remote QPN 0x{qpn_b:06X}"),
            _ => String::new(),
        };
        let desc = format!("UD SEND Only (0x64) to QP1 · CM {}{detail}", msg.name().to_uppercase());
        g.push_roce(desc, r, Encap { ipv6: i % 2 == 1, vlans: (i % 3) as u8 }, from_b);
    }

    // PFC (802.1Qbb) and PAUSE (802.3x).
    let mut pfc = Vec::new();
    mac_control_frame(
        MAC_A,
        &MacControlRepr::Pfc {
            class_enable: 0x00A5,
            quanta: [0xFFFF, 0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0x7777],
        },
        &mut pfc,
    );
    g.frames
        .push(TestFrame { desc: "PFC · classes 0, 2, 5, 7 enabled · eight distinct pause times".into(), bytes: pfc });
    let mut pause = Vec::new();
    mac_control_frame(MAC_B, &MacControlRepr::Pause { quanta: 0xBEEF }, &mut pause);
    g.frames.push(TestFrame { desc: "802.3x PAUSE · pause time 0xBEEF".into(), bytes: pause });

    for (i, f) in g.frames.iter_mut().enumerate() {
        f.desc = format!("#{} {}", i + 1, f.desc);
    }
    g.frames
}

/// The frames of [`standard_mix`] without their descriptions.
pub fn standard_mix_frames() -> Vec<Vec<u8>> {
    standard_mix().into_iter().map(|f| f.bytes).collect()
}

/// A pcapng file (one Ethernet interface named "testgen", nanosecond timestamps
/// [`timestamp_ns`], each frame's description as its packet comment).
pub fn pcapng_bytes(frames: &[TestFrame]) -> Vec<u8> {
    let mut w = CaptureWriter::new(Vec::new(), &["testgen"]).expect("writing to memory");
    for (i, f) in frames.iter().enumerate() {
        w.write_with_comment(0, timestamp_ns(i), &f.bytes, &f.desc).expect("writing to memory");
    }
    w.into_inner()
}

/// Writes [`pcapng_bytes`] to `path`.
pub fn write_pcapng(path: impl AsRef<Path>, frames: &[TestFrame]) -> io::Result<()> {
    std::fs::write(path, pcapng_bytes(frames))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::{DecodeOptions, Frame, IcrcStatus, LinkType};

    #[test]
    fn covers_every_standard_opcode_and_decodes_cleanly() {
        let frames = standard_mix();
        let mut seen = std::collections::BTreeSet::new();
        let mut pads = std::collections::BTreeSet::new();
        let mut encaps = std::collections::BTreeSet::new();
        for f in &frames {
            let d = Frame::parse(LinkType::Ethernet, &f.bytes, f.bytes.len(), &DecodeOptions::default());
            assert!(d.warnings.is_empty(), "{}: {:?}", f.desc, d.warnings.iter().collect::<Vec<_>>());
            assert!(d.is_decoded(), "{}", f.desc);
            if let Some(p) = d.roce() {
                assert_eq!(d.icrc_status(), IcrcStatus::Good, "{}", f.desc);
                seen.insert(p.opcode().0);
                pads.insert(p.bth().pad_cnt());
                encaps.insert((d.ip_addrs().unwrap().0.is_ipv6(), d.vlan_ids().count()));
            }
        }
        let want: std::collections::BTreeSet<u8> =
            [RC_OPCODES, UC_OPCODES, RD_OPCODES, UD_OPCODES, XRC_OPCODES, &[CNP_OPCODE]].concat().into_iter().collect();
        assert_eq!(seen, want);
        // The spec's list and the codec's table agree (0x80 is the CNP alias).
        let table: std::collections::BTreeSet<u8> =
            (0..=255u8).filter(|&o| o != 0x80 && Opcode(o).info().is_some()).collect();
        assert_eq!(table, want);
        assert_eq!(pads.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(encaps.len(), 6);
    }

    #[test]
    fn is_deterministic() {
        assert_eq!(pcapng_bytes(&standard_mix()), pcapng_bytes(&standard_mix()));
    }
}
