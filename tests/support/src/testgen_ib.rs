//! Native InfiniBand test packets (link type 247, docs/link-types.md), built from the IBTA
//! layouts with the codec's builder (`rocescope_codec::build::IbFrameRepr`, which computes LNH,
//! PktLen, the ICRC and the VCRC): local (LNH 2, LRH then BTH) and global (LNH 3, LRH, GRH, BTH)
//! packets alternate over a set of RC and UD opcodes that carry every header tshark knows
//! (RETH, AETH, DETH, ImmDt, IETH), payloads that need each PadCnt 0-3, and LRH fields (VL, LVer,
//! SL, LIDs) that change from packet to packet.
//!
//! [`ib_native`] is `fixtures/ib-native.pcapng` (regenerate with
//! `cargo run -p rocescope-testsupport --example write_ib_native`; `pcap-tools/cli/tests/fixtures.rs`
//! checks the committed file against a fresh run).

use std::io;
use std::path::Path;

use rocescope_codec::build::{IbFrameRepr, IbGrhRepr, RoceRepr};
use rocescope_codec::ib::{AethRepr, DethRepr, IethRepr, ImmDtRepr, LrhRepr, RethRepr, Syndrome};

use crate::testgen::{pcapng_bytes, TestFrame};

/// LINKTYPE_INFINIBAND.
pub const LINKTYPE_INFINIBAND: u16 = 247;

/// The opcodes of the mix, in order: RC SEND Only, SEND Only with Immediate, RDMA WRITE Only,
/// RDMA WRITE Only with Immediate, RDMA READ Request, RDMA READ Response Only, Acknowledge,
/// SEND Last with Invalidate, UD SEND Only, UD SEND Only with Immediate.
pub const IB_OPCODES: &[u8] = &[0x04, 0x05, 0x0A, 0x0B, 0x0C, 0x10, 0x11, 0x17, 0x64, 0x65];

const GID_A: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x6b, 0x4b, 0x03, 0x00, 0xa1, 0xb2, 0xc3];
const GID_B: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x6b, 0x4b, 0x03, 0x00, 0xd4, 0xe5, 0xf6];

/// Every opcode of [`IB_OPCODES`] twice, once local and once global (the two alternate), each
/// with distinct LRH, BTH and extension-header values.
pub fn ib_native() -> Vec<TestFrame> {
    let payload: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
    let mut frames = Vec::new();
    for round in 0..2usize {
        for (k, &op) in IB_OPCODES.iter().enumerate() {
            let n = frames.len() as u32;
            let global = (k + round) % 2 == 1;
            let mut roce = RoceRepr::new(op, (0x0012_3400 + 0x0111 * n) & 0x00ff_ffff, (0x00ff_fff8 + 3 * n) & 0x00ff_ffff);
            roce.bth.p_key = 0xffff - n as u16;
            roce.bth.se = n % 2 == 0;
            roce.bth.ack_req = n % 3 != 0;
            roce.bth.becn = n % 4 == 1;
            roce.bth.fecn = n % 5 == 2;
            if let Some(r) = roce.reth.as_mut() {
                *r = RethRepr { va: 0x8000_1000_2000_0000 | (n as u64) << 12, r_key: 0x1000_00a0 + n, dma_len: 16 + n };
            }
            if let Some(a) = roce.aeth.as_mut() {
                let syndrome = if op == 0x11 && round == 1 { Syndrome::Nak { code: 0 } } else { Syndrome::Ack { credit: 5 + n as u8 % 20 } };
                *a = AethRepr { syndrome, msn: 0x00ab_c000 + n };
            }
            if let Some(d) = roce.deth.as_mut() {
                *d = DethRepr { q_key: 0x8001_0000 + n, src_qp: 0x0000_4400 + n };
            }
            if let Some(i) = roce.immdt.as_mut() {
                *i = ImmDtRepr { imm: 0xc0de_0000 + n };
            }
            if let Some(i) = roce.ieth.as_mut() {
                *i = IethRepr { r_key: 0x0bad_0000 + n };
            }
            let carries_payload = !matches!(op, 0x0C | 0x11);
            let len = if carries_payload { 8 + (n as usize * 5) % 29 } else { 0 };
            let roce = roce.with_payload(&payload[..len]);
            let lrh = LrhRepr {
                vl: (n % 8) as u8,
                lver: 0,
                sl: (n * 3 % 16) as u8,
                dlid: 0x0010 + n as u16,
                slid: 0x0c00 + 7 * n as u16,
                ..Default::default()
            };
            let grh = global.then_some(IbGrhRepr {
                src_gid: GID_A,
                dst_gid: GID_B,
                traffic_class: (0x20 + 8 * n) as u8,
                flow_label: 0x1_2340 + n,
                hop_limit: 64 - n as u8,
            });
            let bytes = IbFrameRepr { lrh, grh, roce }.to_vec();
            let desc = format!(
                "IB {} opcode 0x{op:02x} VL {} SL {} DLID 0x{:04x} SLID 0x{:04x} payload {len} pad {}",
                if global { "global (LNH 3)" } else { "local (LNH 2)" },
                lrh.vl,
                lrh.sl,
                lrh.dlid,
                lrh.slid,
                roce.bth.pad_cnt
            );
            frames.push(TestFrame { desc, bytes });
        }
    }
    frames
}

/// The frames as a pcapng file whose interface has link type 247. The capture writer writes
/// Ethernet interfaces only, so the Interface Description Block's LinkType (pcapng §4.2: 2 bytes
/// at offset 8 of the block, which follows the Section Header Block) is set afterwards.
pub fn pcapng_bytes_ib(frames: &[TestFrame]) -> Vec<u8> {
    let mut b = pcapng_bytes(frames);
    let shb_len = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    assert_eq!(u32::from_le_bytes([b[shb_len], b[shb_len + 1], b[shb_len + 2], b[shb_len + 3]]), 1, "an IDB follows the SHB");
    b[shb_len + 8..shb_len + 10].copy_from_slice(&LINKTYPE_INFINIBAND.to_le_bytes());
    b
}

/// Packets as an ERF file (Endace's Extensible Record Format) of records of type 21
/// (INFINIBAND): what tshark 4.0 reads the InfiniBand dissector's packets from, as its wiretap
/// refuses link type 247 ("network type 247 unknown or unsupported"). Each packet is
/// `(captured bytes, length on the wire)`; the record header is a little-endian timestamp (the
/// frame index in the low word), then type, flags (varying length), rlen (16 + captured),
/// loss counter 0 and wlen, big-endian.
pub fn erf_bytes_ib(packets: &[(Vec<u8>, usize)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (data, wire_len)) in packets.iter().enumerate() {
        out.extend_from_slice(&((0x6553_f100u64 << 32) + i as u64).to_le_bytes());
        out.extend_from_slice(&[21, 0x04]);
        out.extend_from_slice(&((16 + data.len()) as u16).to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes());
        out.extend_from_slice(&(*wire_len as u16).to_be_bytes());
        out.extend_from_slice(data);
    }
    out
}

/// A classic pcap file (microsecond timestamps, snaplen 65535) of the given link type; each
/// packet is `(captured bytes, length on the wire)`.
pub fn pcap_bytes(linktype: u32, packets: &[(Vec<u8>, usize)]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, linktype] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for (i, (data, wire_len)) in packets.iter().enumerate() {
        for v in [1_700_000_000u32, i as u32, data.len() as u32, *wire_len as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(data);
    }
    out
}

/// Writes [`pcapng_bytes_ib`] to `path`.
pub fn write_pcapng_ib(path: impl AsRef<Path>, frames: &[TestFrame]) -> io::Result<()> {
    std::fs::write(path, pcapng_bytes_ib(frames))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::{DecodeOptions, Frame, IcrcStatus, LinkType};

    #[test]
    fn every_packet_decodes_cleanly_with_good_crcs() {
        for f in ib_native() {
            let d = Frame::parse(LinkType::Infiniband, &f.bytes, f.bytes.len(), &DecodeOptions::default());
            assert!(d.warnings.is_empty(), "{}: {:?}", f.desc, d.warnings.iter().collect::<Vec<_>>());
            assert!(d.roce().is_some(), "{}", f.desc);
            assert_eq!(d.icrc_status(), IcrcStatus::Good, "{}", f.desc);
            assert_eq!(d.vcrc_status(), IcrcStatus::Good, "{}", f.desc);
        }
    }

    #[test]
    fn the_file_says_link_type_247() {
        let b = pcapng_bytes_ib(&ib_native());
        let mut r = rocescope_analysis::capture::CaptureReader::new(std::io::Cursor::new(&b[..])).unwrap();
        let rec = r.next_record().unwrap().unwrap();
        assert_eq!(rec.linktype, 247);
    }
}
