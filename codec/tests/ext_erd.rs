//! ERD (WIRE.md B.5; seed 004 §4.3-4.5) decoded from frames laid out by hand, field by field from
//! the spec's tables (`literals_erd.py` wrote them, with the IPv4 checksum, the ICRC and the TCP
//! checksum computed in Python, independently of this codec; scapy agrees on the TCP checksums):
//! the EETH on RD and UD SENDs, the TCP segments of a NACK stream split in awkward places, and
//! property tests of the EETH and of NACK stream reassembly.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::ops::Range;

use proptest::prelude::*;

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr, TcpFrameRepr};
use rocescope_codec::decoder::{is_nack_segment, NackBatch, NackReassembler, Segment, StreamKey};
use rocescope_codec::ext::erd::{
    self, EethRepr, NackEntry, NackRepr, EETH_LEN, NACK_MAX_LEN,
};
use rocescope_codec::ext::Ext;
use rocescope_codec::frame::TcpFlags;
use rocescope_codec::ib::{DethRepr, ImmDtRepr};
use rocescope_codec::{DecodeOptions, FieldId as F, Frame, LinkType, Profile, Value, Warning};

const RD_SEND_EETH: &str = "02000000000202000000000108004568004c00004000401126370a0000010a000002c00012b7003800004400ffff000000120000006400000abc1111111100000034800001020008000000001000455244444154412123d9464a";
const RD_SEND_IMM_EETH_LAST: &str = "02000000000202000000000108004568005000004000401126330a0000010a000002c00012b7003c000045b0ffff000000120000006500000abc1111111100000034cafebabec000010200050000000010087461696c21000000076c34d2";
const UD_SEND_EETH: &str = "020000000002020000000001080045680044000040004011263f0a0000010a000002c00012b7003000006400ffff00000022000000c88001000000000056400000070004000000000000736f6c6f45a92d7f";
const UD_SEND_IMM_EETH: &str = "02000000000202000000000108004568005000004000401126330a0000010a000002c00012b7003c00006500ffff00000022000000c980010000000000560000002a95aa0008000cbeef000100007477656c76652062797465736feda7ea";
const UD_SEND_SLEN_MISMATCH: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400006400ffff00000022000000ca8001000000000056800000090064000000000000382062797465732e7a174034";
const UD_SEND_SHORT_EETH: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800006420ffff00000022000000cb80010000000000568000000900000000a03e6553";
const RC_SEND_ONLY: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800000400ffff000000120000012c6e6f7420616e2065657468206865726512748d46";
const NACK_SYN: &str = "02000000000202000000000108004500002800014000400626cd0a0000020a0000019c4012b8fffffff0000000005002ffffecf60000000000000000";
const NACK_A: &str = "02000000000202000000000108004500002b00024000400626c90a0000020a0000019c4012b8fffffff1000000015018ffff9eda00004e0100000000";
const NACK_B: &str = "02000000000202000000000108004500003a00034000400626b90a0000020a0000019c4012b8fffffff4000000015018ffff83c50000020000010100000201000000640000010100";
const NACK_C: &str = "020000000002020000000001080045000055000440004006269d0a0000020a0000019c4012b800000006000000018018ffff24d100000101080a010203040a0b0c0d000201000000674e010001000001020000020200ffffff4e010003000001030000";
const NACK_ACK_BACK: &str = "02000000000202000000000108004500002800054000400626c90a0000010a00000212b89c4000000001000000275010ffffecb10000000000000000";
const NACK_D: &str = "02000000000202000000000108004500004600064000400626aa0a0000020a0000019c4012b800000027000000015018ffffb0020000020300000007000001030000020300000009000001040000020400123456";
const NACK_E: &str = "02000000000202000000000108004500003c00074000400626b30a0000020a0000019c4012b800000041000000015018ffff67060000001234564e010001000001050000020500000001";
const NACK_G: &str = "02000000000202000000000108004500004a00084000400626a40a0000020a0000019c4012b80000005f000000015018ffff962400000206000000020000010600000206000000034e010001000001070000020700000004";
const NACK_H: &str = "02000000000202000000000108004500004800094000400626a50a0000020a0000019c4012b800000081000000015018ffff451900004f010001000001ff000002ff000001ff4e010001000001080000020800000005";
const NACK_FIN: &str = "020000000002020000000001080045000028000a4000400626c40a0000020a0000019c4012b8000000a1000000015011ffffec360000000000000000";
const NACK_OTHER_PORT: &str = "020000000002020000000001080045000044000b4000400626a70a0000020a0000019c40001600000005000000015018ffffaa7f00004e010002000001010000020100000064000001010000020100000067";
const TCP_BAD_OFFSET: &str = "02000000000202000000000108004500002c000c4000400626be0a0000020a0000019c4012b800000001000000014010ffff280d0000616263640000";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn parse(data: &[u8], profile: Profile) -> Frame<'_> {
    Frame::parse(LinkType::Ethernet, data, data.len(), &DecodeOptions::with_profile(profile))
}

type Fields = BTreeMap<&'static str, Vec<(String, Range<usize>)>>;

/// Every field of a decoded frame: name → (value, byte range) in walk order.
fn walk(f: &Frame<'_>) -> Fields {
    let mut m: Fields = BTreeMap::new();
    f.visit(|id, v, r| m.entry(id.name()).or_default().push((v.to_string(), r)));
    m
}

fn fields(hexframe: &str, profile: Profile) -> Fields {
    let data = hex(hexframe);
    let f = parse(&data, profile);
    walk(&f)
}

fn one<'a>(m: &'a Fields, name: &str) -> &'a str {
    match m.get(name).map(|v| v.as_slice()) {
        Some([(v, _)]) => v,
        other => panic!("{name}: {other:?} in {m:#?}"),
    }
}

fn range(m: &Fields, name: &str) -> Range<usize> {
    m[name][0].1.clone()
}

fn values(m: &Fields, name: &str) -> Vec<String> {
    m.get(name).map_or(vec![], |v| v.iter().map(|(s, _)| s.clone()).collect())
}

fn assert_fields(m: &Fields, want: &[(&str, &str)]) {
    for (k, v) in want {
        assert_eq!(one(m, k), *v, "{k}");
    }
}

fn no_warnings(m: &Fields) {
    assert!(m.get("rocescope.warning").is_none(), "{:?}", m.get("rocescope.warning"));
}

fn no_erd(m: &Fields) {
    assert!(m.keys().all(|k| !k.starts_with("rocescope.erd.")), "{m:#?}");
}

// Frame offsets: Ethernet 14 + IPv4 20 + UDP 8 = BTH at 42.
const BTH: usize = 42;

// ---------------------------------------------------------------------------------------------
// EETH on data packets (B.5 "Data").

#[test]
fn rd_send_only_carries_the_eeth_after_rdeth_and_deth() {
    let m = fields(RD_SEND_EETH, Profile::Erd);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "erd"),
        ("rocescope.bth.opcode", "68"),
        ("rocescope.rdeth.eecnxt", "2748"),
        ("rocescope.deth.q_key", "286331153"),
        ("rocescope.deth.srcqp", "52"),
        ("rocescope.erd.type", "1"),
        ("rocescope.erd.last", "0"),
        ("rocescope.erd.msg_id", "258"),
        ("rocescope.erd.s_len", "8"),
        ("rocescope.erd.s_offset", "4096"),
        ("rocescope.icrc.status", "good"),
        // The EETH lives in the IBTA payload: payload_len counts it.
        ("rocescope.payload_len", "20"),
    ]);
    // BTH 12 · RDETH 4 · DETH 8: the EETH starts 24 bytes after the BTH.
    let e = BTH + 24;
    assert_eq!(range(&m, "rocescope.erd.type"), e..e + 1);
    assert_eq!(range(&m, "rocescope.erd.last"), e..e + 1);
    assert_eq!(range(&m, "rocescope.erd.msg_id"), e + 2..e + 4);
    assert_eq!(range(&m, "rocescope.erd.s_len"), e + 4..e + 6);
    assert_eq!(range(&m, "rocescope.erd.s_offset"), e + 8..e + 12);
    let data = hex(RD_SEND_EETH);
    assert_eq!(&data[e + 2..e + 4], [0x01, 0x02]);
    let f = parse(&data, Profile::Erd);
    let Ext::Erd(x) = f.ext() else { panic!("{:?}", f.ext()) };
    assert_eq!(x.eeth, EethRepr { ty: 1, last: false, msg_id: 0x102, s_len: 8, s_offset: 4096 });
    assert_eq!(x.eeth.msg_len(), None);
    assert!(erd::detect(f.roce().unwrap()));
}

#[test]
fn with_immediate_the_eeth_follows_the_immdt_and_last_gives_the_message_length() {
    let m = fields(RD_SEND_IMM_EETH_LAST, Profile::Erd);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "erd"),
        ("rocescope.immdt", &0xcafebabeu32.to_string()),
        ("rocescope.erd.type", "1"),
        ("rocescope.erd.last", "1"),
        ("rocescope.erd.msg_id", "258"),
        ("rocescope.erd.s_len", "5"),
        ("rocescope.erd.s_offset", "4104"),
        ("rocescope.bth.padcnt", "3"),
        ("rocescope.payload_len", "17"),
        ("rocescope.icrc.status", "good"),
    ]);
    let e = BTH + 12 + 4 + 8 + 4;
    assert_eq!(range(&m, "rocescope.erd.s_offset"), e + 8..e + 12);
    let data = hex(RD_SEND_IMM_EETH_LAST);
    let f = parse(&data, Profile::Erd);
    let Ext::Erd(x) = f.ext() else { panic!() };
    assert_eq!(x.eeth.msg_len(), Some(4104 + 5));
}

#[test]
fn ud_send_only_with_and_without_immediate() {
    let m = fields(UD_SEND_EETH, Profile::Erd);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "erd"),
        ("rocescope.deth.q_key", &0x80010000u32.to_string()),
        ("rocescope.deth.srcqp", "86"),
        ("rocescope.erd.type", "0"),
        ("rocescope.erd.last", "1"),
        ("rocescope.erd.msg_id", "7"),
        ("rocescope.erd.s_len", "4"),
        ("rocescope.erd.s_offset", "0"),
    ]);
    assert_eq!(range(&m, "rocescope.erd.msg_id"), BTH + 20 + 2..BTH + 20 + 4);
    // Reserved EETH bits (byte 0 bits 5..0, byte 1, bytes 6-7) are set here and ignored.
    let m = fields(UD_SEND_IMM_EETH, Profile::Erd);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "erd"),
        ("rocescope.immdt", "42"),
        ("rocescope.erd.type", "1"),
        ("rocescope.erd.last", "0"),
        ("rocescope.erd.msg_id", "8"),
        ("rocescope.erd.s_len", "12"),
        ("rocescope.erd.s_offset", "65536"),
        ("rocescope.icrc.status", "good"),
    ]);
    assert_eq!(range(&m, "rocescope.erd.s_len"), BTH + 24 + 4..BTH + 24 + 6);
}

#[test]
fn s_len_disagreeing_with_the_payload_is_a_located_warning_and_keeps_the_eeth() {
    let m = fields(UD_SEND_SLEN_MISMATCH, Profile::Erd);
    assert_eq!(values(&m, "rocescope.warning"), ["ERD header: rocescope.erd.s_len 100 disagrees with 8"]);
    assert_fields(&m, &[("rocescope.profile", "erd"), ("rocescope.erd.s_len", "100"), ("rocescope.erd.msg_id", "9")]);
    let data = hex(UD_SEND_SLEN_MISMATCH);
    let f = parse(&data, Profile::Erd);
    assert!(!erd::detect(f.roce().unwrap()), "detection needs S_Len to match");
    assert!(f.warnings.contains(|w| matches!(w, Warning::Ext { what: rocescope_codec::warning::ExtProblem::Mismatch { field: F::ErdSLen, .. }, .. })));
}

#[test]
fn half_an_eeth_is_a_warning_and_the_standard_headers_still_decode() {
    let m = fields(UD_SEND_SHORT_EETH, Profile::Erd);
    assert_eq!(values(&m, "rocescope.warning"), ["ERD header: only 6 of 12 bytes present"]);
    assert_fields(&m, &[
        ("rocescope.profile", "std"),
        ("rocescope.deth.srcqp", "86"),
        ("rocescope.bth.psn", "203"),
        ("rocescope.payload_len", "6"),
        ("rocescope.icrc.status", "good"),
    ]);
    no_erd(&m);
}

#[test]
fn erd_profile_leaves_other_packets_std_and_std_ignores_the_eeth() {
    let m = fields(RC_SEND_ONLY, Profile::Erd);
    no_warnings(&m);
    no_erd(&m);
    assert_fields(&m, &[("rocescope.profile", "std"), ("rocescope.payload_len", "16")]);
    for frame in [RD_SEND_EETH, UD_SEND_EETH, UD_SEND_SHORT_EETH, UD_SEND_SLEN_MISMATCH] {
        let m = fields(frame, Profile::Std);
        no_warnings(&m);
        no_erd(&m);
        assert_fields(&m, &[("rocescope.profile", "std")]);
    }
    // UD to QP1 is a CM MAD, never ERD data.
    let mut r = RoceRepr::new(0x64, 1, 5).with_payload(&[0u8; 24]);
    r.deth = Some(DethRepr { q_key: 0x80010000, src_qp: 1 });
    let data = FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), r).to_vec();
    let f = parse(&data, Profile::Erd);
    assert_eq!(f.profile(), Profile::Std);
    assert!(!f.warnings.iter().any(|w| w.to_string().starts_with("ERD")), "{:?}", f.warnings);
}

#[test]
fn an_eeth_cut_by_the_snaplen_is_truncated_not_misread() {
    let data = hex(RD_SEND_EETH);
    let e = BTH + 24;
    for cut in [e, e + 5, e + 11] {
        let f = Frame::parse(LinkType::Ethernet, &data[..cut], data.len(), &DecodeOptions::with_profile(Profile::Erd));
        assert!(f.truncated());
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        let m = walk(&f);
        no_erd(&m);
        assert_fields(&m, &[("rocescope.deth.srcqp", "52"), ("rocescope.icrc.status", "truncated")]);
    }
    let f = Frame::parse(LinkType::Ethernet, &data[..e + 12], data.len(), &DecodeOptions::with_profile(Profile::Erd));
    assert_fields(&walk(&f), &[("rocescope.erd.s_offset", "4096"), ("rocescope.profile", "erd")]);
}

#[test]
fn builders_write_the_hand_laid_bytes() {
    // UD SEND Only with EETH, through RoceRepr + EethRepr.
    let mut payload = EethRepr { ty: 0, last: true, msg_id: 7, s_len: 4, s_offset: 0 }.to_bytes().to_vec();
    payload.extend_from_slice(b"solo");
    let mut r = RoceRepr::new(0x64, 0x22, 200).with_payload(&payload);
    r.deth = Some(DethRepr { q_key: 0x80010000, src_qp: 0x56 });
    assert_eq!(FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), r).to_vec(), hex(UD_SEND_EETH));
    // The same with Immediate: EETH after the ImmDt.
    let mut payload = EethRepr { ty: 1, last: false, msg_id: 8, s_len: 12, s_offset: 0x10000 }.to_bytes().to_vec();
    payload.extend_from_slice(b"twelve bytes");
    let mut r = RoceRepr::new(0x65, 0x22, 201).with_payload(&payload);
    r.deth = Some(DethRepr { q_key: 0x80010000, src_qp: 0x56 });
    r.immdt = Some(ImmDtRepr { imm: 42 });
    let built = FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), r).to_vec();
    let f = parse(&built, Profile::Erd);
    assert!(f.warnings.is_empty());
    let Ext::Erd(x) = f.ext() else { panic!() };
    assert_eq!(x.eeth.s_offset, 0x10000);
    // A NACK segment through TcpFrameRepr + NackRepr: byte for byte the hand-laid one.
    let m1 = [NackEntry { src_qpn: 0x101, dst_qpn: 0x201, psn: 100 }, NackEntry { src_qpn: 0x101, dst_qpn: 0x201, psn: 103 }];
    let bytes = NackRepr::new(&m1).to_vec();
    assert_eq!(bytes.len(), 28);
    let mut t = TcpFrameRepr::new(
        NetRepr::Ipv4 { src: [10, 0, 0, 2], dst: [10, 0, 0, 1], tos: 0, ttl: 64, ident: 2 },
        40000,
        4792,
        0xfffffff1,
        &bytes[..3],
    );
    t.ack = 1;
    assert_eq!(t.to_vec(), hex(NACK_A));
    t.payload = &bytes;
    t.dst_port = 22;
    t.seq = 5;
    if let NetRepr::Ipv4 { ident, .. } = &mut t.net {
        *ident = 11;
    }
    assert_eq!(t.to_vec(), hex(NACK_OTHER_PORT));
    // IPv6 too: the checksum over the pseudo-header sums to zero.
    let t6 = TcpFrameRepr::new(NetRepr::ipv6([0xfd; 16], [0xfe; 16]), 4792, 40001, 77, &bytes);
    let v6 = t6.to_vec();
    let f = parse(&v6, Profile::Erd);
    assert!(f.warnings.is_empty());
    let tcp = f.tcp().unwrap();
    assert_eq!((tcp.src_port, tcp.dst_port, tcp.seq, tcp.payload), (4792, 40001, 77, &bytes[..]));
    let seg = &v6[14 + 40..];
    let len = (seg.len() as u32).to_be_bytes();
    assert_eq!(rocescope_codec::checksum::internet_checksum(&[&v6[22..54], &len, &[0, 0, 0, 6], seg]), 0);
}

// ---------------------------------------------------------------------------------------------
// TCP in the frame parser.

#[test]
fn tcp_segments_decode_statelessly_and_show_no_nack_fields() {
    let data = hex(NACK_A);
    assert_eq!(data.len(), 60, "3 bytes of payload, then Ethernet padding");
    let f = parse(&data, Profile::Erd);
    assert!(f.warnings.is_empty() && !f.truncated() && f.roce().is_none());
    let t = f.tcp().unwrap();
    assert_eq!((t.src_port, t.dst_port, t.seq, t.ack), (40000, 4792, 0xfffffff1, 1));
    assert_eq!(t.flags, TcpFlags(TcpFlags::PSH | TcpFlags::ACK));
    assert_eq!((t.header_offset, t.payload_offset, t.payload_len), (34, 54, 3));
    assert_eq!(t.payload, [0x4e, 0x01, 0x00], "the padding is not payload");
    assert!(is_nack_segment(&f, 4792));
    let m = walk(&f);
    assert!(m.is_empty(), "{m:#?}");
    // TCP options: a 32-byte header.
    let data = hex(NACK_C);
    let t = parse(&data, Profile::Erd).tcp().unwrap();
    assert_eq!((t.payload_offset, t.payload_len, t.seq), (66, 33, 6));
    // SYN and FIN.
    let data = hex(NACK_SYN);
    let t = parse(&data, Profile::Erd).tcp().unwrap();
    assert!(t.flags.syn() && !t.flags.ack() && t.payload.is_empty());
    let data = hex(NACK_FIN);
    assert!(parse(&data, Profile::Erd).tcp().unwrap().flags.fin());
    // Another port: TCP, not NACK, not RoCE, no warnings.
    let data = hex(NACK_OTHER_PORT);
    let f = parse(&data, Profile::Erd);
    assert!(f.warnings.is_empty() && !is_nack_segment(&f, 4792) && !f.is_decoded());
    assert_eq!(f.tcp().unwrap().dst_port, 22);
    assert!(f.udp_ports().is_none());
}

#[test]
fn malformed_and_truncated_tcp_headers_are_warnings() {
    let data = hex(TCP_BAD_OFFSET);
    let f = parse(&data, Profile::Erd);
    assert!(f.tcp().is_none());
    assert_eq!(values(&walk(&f), "rocescope.warning"), ["TCP header length 16 is below the minimum 20"]);
    let data = hex(NACK_B);
    for (cut, want) in [(34 + 10, "truncated in TCP header: 10 of 20 bytes captured"), (34 + 19, "truncated in TCP header: 19 of 20 bytes captured")] {
        let f = Frame::parse(LinkType::Ethernet, &data[..cut], data.len(), &DecodeOptions::with_profile(Profile::Erd));
        assert!(f.truncated() && f.tcp().is_none());
        let m = walk(&f);
        assert_eq!(values(&m, "rocescope.warning"), [want]);
        assert_eq!(one(&m, "rocescope.truncated"), "1");
    }
    // Options cut by the snaplen.
    let data = hex(NACK_C);
    let f = Frame::parse(LinkType::Ethernet, &data[..34 + 25], data.len(), &DecodeOptions::default());
    assert_eq!(values(&walk(&f), "rocescope.warning"), ["truncated in TCP header: 25 of 32 bytes captured"]);
    // A payload cut by the snaplen: the header is there, the payload is short.
    let data = hex(NACK_C);
    let f = Frame::parse(LinkType::Ethernet, &data[..70], data.len(), &DecodeOptions::default());
    let t = f.tcp().unwrap();
    assert!(f.truncated() && f.warnings.is_empty());
    assert_eq!((t.payload.len(), t.payload_len), (4, 33));
    // An IP packet too short for the TCP header it claims.
    let mut data = hex(NACK_A);
    data[16..18].copy_from_slice(&36u16.to_be_bytes());
    let ip = &mut data[14..34];
    ip[10] = 0;
    ip[11] = 0;
    let c = rocescope_codec::checksum::internet_checksum(&[ip]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let f = parse(&data, Profile::Erd);
    assert_eq!(values(&walk(&f), "rocescope.warning"), ["TCP header length 16 is below the minimum 20"]);
}

// ---------------------------------------------------------------------------------------------
// The NACK stream (B.5 "NACK"), through the frames.

/// Per frame: the NACK fields a batch walks (count, src_qpn, dst_qpn, psn) and its warnings.
type Row = (Vec<u64>, Vec<u64>, Vec<u64>, Vec<u64>, Vec<String>);
type Seen = Vec<(String, Row)>;

/// Pushes each frame through the reassembler; per frame: its name, the NACK fields the batch
/// walks (count, src_qpn, dst_qpn, psn) and the batch's warnings.
fn reassemble(frames: &[(&str, &str)]) -> Seen {
    let mut r = NackReassembler::new();
    let mut out = vec![];
    for (name, hx) in frames {
        let data = hex(hx);
        let f = parse(&data, Profile::Erd);
        assert!(f.warnings.is_empty(), "{name}: {:?}", f.warnings);
        let Some(b) = r.push_frame(&f, 4792) else {
            out.push((name.to_string(), (vec![], vec![], vec![], vec![], vec!["not NACK".into()])));
            continue;
        };
        let mut v: [Vec<u64>; 4] = Default::default();
        b.visit(&mut |id, val: Value<'_>, _| {
            let i = match id {
                F::ErdNackCount => 0,
                F::ErdNackSrcQpn => 1,
                F::ErdNackDstQpn => 2,
                F::ErdNackPsn => 3,
                other => panic!("{other:?}"),
            };
            v[i].push(val.as_u64().unwrap());
        });
        let [c, s, d, p] = v;
        out.push((name.to_string(), (c, s, d, p, b.warnings.iter().map(|w| w.to_string()).collect())));
    }
    out
}

#[test]
fn nack_stream_split_duplicated_gapped_and_corrupted_reassembles_on_the_frames_holding_last_bytes() {
    let seen = reassemble(&[
        ("syn", NACK_SYN),
        ("a", NACK_A),
        ("b", NACK_B),
        ("c", NACK_C),
        ("ack", NACK_ACK_BACK),
        ("c again", NACK_C),
        ("d", NACK_D),
        ("e", NACK_E),
        ("g", NACK_G),
        ("h", NACK_H),
        ("fin", NACK_FIN),
        ("other", NACK_OTHER_PORT),
    ]);
    let none = || (vec![], vec![], vec![], vec![], vec![]);
    let w = |s: &str| vec![s.to_string()];
    let expect: Vec<(&str, Row)> = vec![
        ("syn", none()),
        ("a", none()),  // 3 bytes: mid-header
        ("b", none()),  // mid-entry
        // M1 (begun in a and b) and M2 complete here.
        ("c", (vec![2, 1], vec![0x101, 0x101, 0x102], vec![0x201, 0x201, 0x202], vec![100, 103, 0xffffff], vec![])),
        ("ack", none()),
        ("c again", none()),
        ("d", (vec![3], vec![0x103, 0x103, 0x104], vec![0x203, 0x203, 0x204], vec![7, 9, 0x123456], vec![])),
        ("e", (vec![1], vec![0x105], vec![0x205], vec![1], vec![])),
        // Bytes 100..110 (the start of M5) were never captured: M5 is lost, M6 found.
        ("g", (vec![1], vec![0x107], vec![0x207], vec![4], w("ERD NACK stream: bytes missing in the NACK stream; resynchronised"))),
        ("h", (vec![1], vec![0x108], vec![0x208], vec![5], w("ERD NACK stream: magic 0x4f (expected 0x4e)"))),
        ("fin", none()),
        ("other", (vec![], vec![], vec![], vec![], w("not NACK"))),
    ];
    assert_eq!(seen.len(), expect.len());
    for (s, (name, e)) in seen.iter().zip(expect) {
        assert_eq!(s.0, name);
        assert_eq!(s.1, e, "{name}");
    }
}

#[test]
fn nack_field_ranges_point_into_the_frame_holding_them() {
    let mut r = NackReassembler::new();
    for hx in [NACK_SYN, NACK_A, NACK_B] {
        let data = hex(hx);
        let b = r.push_frame(&parse(&data, Profile::Erd), 4792).unwrap();
        assert!(b.is_empty());
    }
    let data = hex(NACK_C);
    let f = parse(&data, Profile::Erd);
    let b = r.push_frame(&f, 4792).unwrap();
    assert_eq!(b.payload_offset, 66);
    let mut seen: Vec<(F, u64, Range<usize>)> = vec![];
    b.visit(&mut |id, v: Value<'_>, rg| seen.push((id, v.as_u64().unwrap(), rg)));
    // Segment c holds stream bytes 21..54: M1 is 0..28 (its count at 2..4 was in segment a),
    // M2 28..44.
    let at = |o: usize, n: usize| 66 + o - 21..66 + o - 21 + n;
    assert_eq!(seen[0], (F::ErdNackCount, 2, 0..0));
    assert_eq!(seen[1], (F::ErdNackSrcQpn, 0x101, 0..0), "entry 0 of M1 was in segment b");
    // Entry 1 of M1 is 16..28: src 17..20 (17..20 in b: 3..21 → only byte 21.. is here).
    assert_eq!(seen[4], (F::ErdNackSrcQpn, 0x101, 0..0));
    assert_eq!(seen[5], (F::ErdNackDstQpn, 0x201, at(21, 3)), "dst 21..24 is the first bytes of c");
    assert_eq!(seen[6], (F::ErdNackPsn, 103, at(25, 3)));
    assert_eq!(seen[7], (F::ErdNackCount, 1, at(30, 2)));
    assert_eq!(seen[10], (F::ErdNackPsn, 0xffffff, at(41, 3)));
    assert_eq!(&data[at(41, 3)], [0xff, 0xff, 0xff]);
    let (m, entries) = b.iter().next().unwrap();
    assert_eq!((m.count, m.start, entries.len()), (2, -21, 2));
    // Segment b, had it been cut where a header field straddles: the range is clipped.
    let mut r = NackReassembler::new();
    let key = key(1);
    let msg = NackRepr::new(&[NackEntry { src_qpn: 1, dst_qpn: 2, psn: 3 }]).to_vec();
    assert!(r.push(key, 0, &msg[..3]).is_empty());
    let b = r.push(key, 3, &msg[3..]);
    let mut seen = vec![];
    b.visit(&mut |id, _: Value<'_>, rg| seen.push((id, rg)));
    assert_eq!(seen[0], (F::ErdNackCount, 0..1), "the count's second byte is this segment's first");
}

// ---------------------------------------------------------------------------------------------
// The reassembler directly.

fn key(n: u8) -> StreamKey {
    StreamKey {
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, n)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        src_port: 40000,
        dst_port: 4792,
        interface: 0,
    }
}

fn entries(n: u32, base: u32) -> Vec<NackEntry> {
    (0..n).map(|i| NackEntry { src_qpn: base + i, dst_qpn: 0x800000 | (base + i), psn: (base * 7 + i) & 0xffffff }).collect()
}

fn collect(b: &NackBatch<'_>) -> (Vec<Vec<NackEntry>>, Vec<String>) {
    (b.iter().map(|(_, e)| e.to_vec()).collect(), b.warnings.iter().map(|w| w.to_string()).collect())
}

#[test]
fn several_messages_in_one_segment_and_one_message_in_many() {
    let (m1, m2, m3) = (entries(1, 1), entries(3, 10), entries(0, 0));
    let mut s = NackRepr::new(&m1).to_vec();
    s.extend(NackRepr::new(&m2).to_vec());
    s.extend(NackRepr::new(&m3).to_vec());
    let mut r = NackReassembler::new();
    assert_eq!(collect(&r.push(key(2), 1000, &s)), (vec![m1.clone(), m2.clone(), m3.clone()], vec![]));
    // Byte by byte: each message on the byte that ends it.
    let mut r = NackReassembler::new();
    let mut got = vec![];
    for (i, b) in s.iter().enumerate() {
        let batch = r.push(key(2), 1000 + i as u32, std::slice::from_ref(b));
        let (msgs, w) = collect(&batch);
        assert!(w.is_empty());
        if !msgs.is_empty() {
            got.push((i, msgs));
        }
    }
    assert_eq!(got, vec![(15, vec![m1]), (15 + 40, vec![m2]), (15 + 40 + 4, vec![m3])]);
    assert_eq!(r.buffered_bytes(), 0);
}

#[test]
fn wrong_version_warns_once_and_resynchronises_on_the_next_header() {
    let good = entries(2, 5);
    let mut s = vec![0x4e, 0x02, 0x00, 0x01];
    s.extend([0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]);
    s.extend(NackRepr::new(&good).to_vec());
    let mut r = NackReassembler::new();
    let (msgs, w) = collect(&r.push(key(3), 0, &s[..10]));
    assert_eq!((msgs, w), (vec![], vec!["ERD NACK stream: version 2 (expected 1)".to_string()]));
    // While hunting, nothing more is said until the next header.
    let (msgs, w) = collect(&r.push(key(3), 10, &s[10..]));
    assert_eq!((msgs, w), (vec![good], vec![]));
}

#[test]
fn a_gap_drops_the_partial_message_and_later_gap_bytes_are_old() {
    let (m1, m2, m3) = (entries(4, 1), entries(1, 20), entries(2, 30));
    let mut s = NackRepr::new(&m1).to_vec(); // 0..52
    s.extend(NackRepr::new(&m2).to_vec()); // 52..68
    s.extend(NackRepr::new(&m3).to_vec()); // 68..96
    let mut r = NackReassembler::new();
    let k = key(4);
    assert!(r.push(k, 0, &s[..30]).is_empty());
    // 30..40 arrives late (reordering in the capture): 40..68 shows a gap.
    let (msgs, w) = collect(&r.push(k, 40, &s[40..68]));
    assert_eq!(msgs, vec![m2]);
    assert_eq!(w, ["ERD NACK stream: bytes missing in the NACK stream; resynchronised"]);
    assert_eq!(collect(&r.push(k, 30, &s[30..40])), (vec![], vec![]), "old bytes are ignored");
    assert_eq!(collect(&r.push(k, 68, &s[68..])), (vec![m3], vec![]));
}

#[test]
fn a_payload_cut_by_the_snaplen_is_a_gap_at_its_end() {
    let (m1, m2) = (entries(2, 1), entries(1, 9));
    let mut s = NackRepr::new(&m1).to_vec();
    s.extend(NackRepr::new(&m2).to_vec());
    let mut r = NackReassembler::new();
    let k = key(5);
    let seg = Segment { seq: 7, syn: false, fin: false, rst: false, payload: &s[..10], wire_len: 20 };
    let (msgs, w) = collect(&r.push_segment(k, seg));
    assert_eq!((msgs, w.len()), (vec![], 1));
    assert_eq!(collect(&r.push(k, 27, &s[20..])), (vec![m2], vec![]), "resynchronised on M2");
}

#[test]
fn fin_in_the_middle_of_a_message_warns_and_forgets_the_stream() {
    let m = NackRepr::new(&entries(2, 1)).to_vec();
    let mut r = NackReassembler::new();
    let k = key(6);
    assert!(r.push(k, 0, &m[..20]).is_empty());
    let fin = Segment { seq: 20, syn: false, fin: true, rst: false, payload: &[], wire_len: 0 };
    let (_, w) = collect(&r.push_segment(k, fin));
    assert_eq!(w, ["ERD NACK stream: only 20 of 28 bytes present"]);
    assert_eq!(r.stream_count(), 0);
    // RST forgets too; a SYN with a new ISN starts over.
    assert!(r.push(k, 100, &m[..5]).is_empty());
    let rst = Segment { seq: 105, syn: false, fin: false, rst: true, payload: &[], wire_len: 0 };
    assert!(r.push_segment(k, rst).is_empty());
    assert_eq!(r.stream_count(), 0);
    assert!(r.push(k, 100, &m[..5]).is_empty());
    let syn = Segment { seq: 5000, syn: true, fin: false, rst: false, payload: &[], wire_len: 0 };
    assert!(r.push_segment(k, syn).is_empty());
    assert_eq!(r.buffered_bytes(), 0);
    assert_eq!(collect(&r.push(k, 5001, &m)).0, vec![entries(2, 1)]);
}

#[test]
fn memory_is_bounded_by_stream_count_and_message_length() {
    let mut r = NackReassembler::with_limits(4, 4 + 12 * 10);
    for n in 0..10u8 {
        assert!(r.push(key(n), 0, &[0x4e, 0x01, 0x00]).is_empty());
        assert!(r.stream_count() <= 4);
    }
    assert_eq!(r.evicted(), 6);
    assert_eq!(r.buffered_bytes(), 4 * 3);
    // The most recent streams survive.
    assert_eq!(collect(&r.push(key(9), 3, &[0])).0, vec![vec![]]);
    // A header announcing more than the limit warns and resynchronises.
    let (msgs, w) = collect(&r.push(key(20), 0, &[0x4e, 0x01, 0x00, 11, 0, 0, 0]));
    assert!(msgs.is_empty());
    assert_eq!(w, ["ERD NACK stream: message longer than the reassembly limit; resynchronised"]);
    // The format's own ceiling: 65535 entries.
    assert_eq!(NACK_MAX_LEN, 4 + 65535 * 12);
    let big = entries(65535, 0);
    let s = NackRepr::new(&big).to_vec();
    let mut r = NackReassembler::new();
    for (i, c) in s.chunks(1460).enumerate() {
        let b = r.push(key(1), (i * 1460) as u32, c);
        assert!(b.warnings.is_empty());
        if (i + 1) * 1460 >= s.len() {
            assert_eq!(b.entries().len(), 65535);
        } else {
            assert!(b.messages().is_empty());
        }
    }
}

#[test]
fn a_stream_first_seen_mid_message_warns_and_finds_the_next_header() {
    let (m1, m2) = (entries(2, 1), entries(1, 9));
    let mut s = NackRepr::new(&m1).to_vec();
    s.extend(NackRepr::new(&m2).to_vec());
    let mut r = NackReassembler::new();
    let (msgs, w) = collect(&r.push(key(7), 1, &s[1..]));
    assert_eq!(msgs, vec![m2]);
    assert_eq!(w, ["ERD NACK stream: magic 0x01 (expected 0x4e)"]);
}

// ---------------------------------------------------------------------------------------------
// Properties.

prop_compose! {
    fn eeth_repr()(ty in 0u8..2, last in any::<bool>(), msg_id in any::<u16>(), s_len in any::<u16>(), s_offset in any::<u32>()) -> EethRepr {
        EethRepr { ty, last, msg_id, s_len, s_offset }
    }
}

fn nack_entry() -> impl Strategy<Value = NackEntry> {
    (0u32..=0xffffff, 0u32..=0xffffff, 0u32..=0xffffff).prop_map(|(src_qpn, dst_qpn, psn)| NackEntry { src_qpn, dst_qpn, psn })
}

proptest! {
    #[test]
    fn eeth_roundtrip(e in eeth_repr(), garbage in prop::collection::vec(any::<u8>(), 16), raw in prop::collection::vec(any::<u8>(), 12)) {
        let mut buf = garbage.clone();
        e.emit(&mut buf);
        prop_assert_eq!(&buf[EETH_LEN..], &garbage[EETH_LEN..]);
        prop_assert_eq!(EethRepr::parse(&buf), Some(e));
        prop_assert_eq!(EethRepr::parse(&buf[..EETH_LEN - 1]), None);
        // bytes → parse → emit keeps exactly the non-reserved bits.
        let back = EethRepr::parse(&raw).unwrap().to_bytes();
        let mask = [0xc0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff];
        for i in 0..EETH_LEN {
            prop_assert_eq!(back[i], raw[i] & mask[i]);
        }
    }

    #[test]
    fn eeth_in_a_ud_or_rd_send_decodes_back(e in eeth_repr(), op in prop::sample::select(vec![0x44u8, 0x45, 0x64, 0x65]),
                                             data in prop::collection::vec(any::<u8>(), 0..40), imm in any::<u32>(), qp in 2u32..=0xffffff) {
        let e = EethRepr { s_len: data.len() as u16, ..e };
        let mut payload = e.to_bytes().to_vec();
        payload.extend_from_slice(&data);
        let mut r = RoceRepr::new(op, qp, 9).with_payload(&payload);
        if r.immdt.is_some() {
            r.immdt = Some(ImmDtRepr { imm });
        }
        let frame = FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), r).to_vec();
        let f = parse(&frame, Profile::Erd);
        prop_assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        prop_assert_eq!(f.profile(), Profile::Erd);
        prop_assert!(erd::detect(f.roce().unwrap()));
        let Ext::Erd(x) = f.ext() else { return Err(TestCaseError::fail("no EETH")) };
        prop_assert_eq!(x.eeth, e);
    }

    /// Arbitrary message sequences, split at arbitrary points (with retransmitted overlaps),
    /// reassemble to the same entries, each message on the segment holding its last byte.
    #[test]
    fn nack_messages_split_anywhere_reassemble(
        msgs in prop::collection::vec(prop::collection::vec(nack_entry(), 0..6), 1..8),
        cuts in prop::collection::vec(0usize..400, 0..12),
        overlaps in prop::collection::vec(0usize..30, 12),
        isn in any::<u32>(),
        with_syn in any::<bool>(),
    ) {
        let mut stream = vec![];
        let mut ends = vec![];
        for m in &msgs {
            NackRepr::new(m).emit_to(&mut stream);
            ends.push(stream.len() - 1);
        }
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (stream.len() + 1)).collect();
        cuts.push(0);
        cuts.push(stream.len());
        cuts.sort_unstable();
        cuts.dedup();
        let mut r = NackReassembler::with_limits(8, NACK_MAX_LEN);
        let k = key(1);
        let data0 = if with_syn {
            let syn = Segment { seq: isn, syn: true, fin: false, rst: false, payload: &[], wire_len: 0 };
            prop_assert!(r.push_segment(k, syn).is_empty());
            isn.wrapping_add(1)
        } else {
            isn
        };
        let mut got: Vec<Vec<NackEntry>> = vec![];
        for (i, w) in cuts.windows(2).enumerate() {
            // Start some bytes early: a retransmission overlapping what was seen (not before
            // the first byte when the stream starts without a SYN).
            let lo = if i == 0 && !with_syn { w[0] } else { w[0].saturating_sub(overlaps[i % overlaps.len()]) };
            let b = r.push(k, data0.wrapping_add(lo as u32), &stream[lo..w[1]]);
            prop_assert!(b.warnings.is_empty(), "{:?}", b.warnings);
            for (m, e) in b.iter() {
                let last = ends[got.len()];
                prop_assert!(last >= w[0] && last < w[1], "message reported on the segment holding its last byte");
                prop_assert_eq!(m.start + (4 + 12 * e.len()) as i64 - 1, last as i64 - lo as i64);
                got.push(e.to_vec());
            }
            // A pure duplicate of the segment changes nothing.
            let dup = r.push(k, data0.wrapping_add(lo as u32), &stream[lo..w[1]]);
            prop_assert!(dup.is_empty());
        }
        prop_assert_eq!(got, msgs);
        prop_assert_eq!(r.buffered_bytes(), 0);
    }

    /// Whatever the bytes, the reassembler neither panics nor buffers more than one message.
    #[test]
    fn nack_reassembler_survives_garbage(segs in prop::collection::vec((any::<u32>(), prop::collection::vec(any::<u8>(), 0..64)), 0..20)) {
        let mut r = NackReassembler::with_limits(2, 64);
        for (i, (seq, bytes)) in segs.iter().enumerate() {
            let _ = r.push(key((i % 3) as u8), *seq, bytes);
            prop_assert!(r.stream_count() <= 2);
            prop_assert!(r.buffered_bytes() <= 2 * 64);
        }
    }
}

proptest! {
    /// Corrupted and cut NACK frames never panic the parser, `tcp()` or the reassembler.
    #[test]
    fn corrupted_tcp_frames_never_panic(flips in prop::collection::vec((0usize..120, any::<u8>()), 0..6), cut in 0usize..120, extra in 0usize..40) {
        let mut r = NackReassembler::with_limits(4, 256);
        for hx in [NACK_SYN, NACK_A, NACK_B, NACK_C, NACK_D, NACK_H] {
            let mut data = hex(hx);
            for (i, b) in &flips {
                if let Some(x) = data.get_mut(*i) {
                    *x ^= *b;
                }
            }
            let data = &data[..cut.min(data.len())];
            let f = Frame::parse(LinkType::Ethernet, data, data.len() + extra, &DecodeOptions::with_profile(Profile::Erd));
            f.visit(|_, _, _| {});
            if let Some(t) = f.tcp() {
                prop_assert!(t.payload.len() <= t.payload_len);
                prop_assert!(t.payload_offset <= data.len());
            }
            if let Some(b) = r.push_frame(&f, 4792) {
                b.visit(&mut |_, _: Value<'_>, rg| assert!(rg.end <= data.len()));
            }
        }
    }
}

#[test]
fn frame_stays_small() {
    use std::mem::size_of;
    eprintln!("Frame: {} bytes, Ext: {} bytes, Erd: {}", size_of::<Frame<'_>>(), size_of::<Ext>(), size_of::<erd::Erd>());
    assert!(size_of::<erd::Erd>() <= 12);
    assert!(size_of::<Warning>() <= 16);
}
