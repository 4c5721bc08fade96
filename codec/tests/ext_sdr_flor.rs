//! SDR-RDMA (WIRE.md B.2) and Flor (B.3) decoded from frames laid out by hand, field by field
//! from the spec's tables (`literals_sdr_flor.py` wrote them, with the IPv4 checksum and ICRC
//! computed in Python, independently of this codec).

#![allow(clippy::single_range_in_vec_init)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::ops::Range;

use rocescope_codec::decoder::SdrTracker;
use rocescope_codec::ext::sdr::{Ctrl, Sdr};
use rocescope_codec::ext::Ext;
use rocescope_codec::{DecodeOptions, FlorAckSetMeans, Frame, ImmSplit, LinkType, Profile};

const SDR_DATA_WORKED: &str = "02000000000202000000000108004568005000004000401126330a0000010a000002c00012b7003c00002b00ffff000001010000000700000000c0005000000010000000001000c0005a000102030405060708090a0b0c0d0e0f78342c3f";
const SDR_DATA_8_22_2: &str = "02000000000202000000000108004568005000004000401126330a0000010a000002c00012b7003c00002b00ffff00000101000000080000000c00005000000010000000001003000016000102030405060708090a0b0c0d0e0f378ad74f";
const SDR_CTS: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800002400ffff0000020000000001530101000000000700000001000000001058482c";
const SDR_SR_ACK: &str = "02000000000202000000000108004568004000004000401126430a0000010a000002c00012b7002c00002420ffff000002000000000153010200000000090000000c0000000d26120000985840dc";
const SDR_SR_ACK_EMPTY: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800002400ffff000002000000000153010200000000090000004000000000a0d778fd";
const SDR_SR_NACK: &str = "02000000000202000000000108004568004c00004000401126370a0000010a000002c00012b7003800006400ffff00000201000000011111111100000022530103000000000a0000000300000004000000080000000f8fb2341e";
const SDR_EC_ACK: &str = "020000000002020000000001080045680034000040004011264f0a0000010a000002c00012b7002000002400ffff00000200000000015301040000000014cc9bcbc0";
const SDR_EC_NACK: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400006400ffff00000201000000011111111100000022530105000000001600000002000000000000000335d24db8";
const SDR_BAD_MAGIC: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800002400ffff000002000000000154010100000000070000000000001000849b13a6";
const SDR_BAD_VERSION: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800002400ffff0000020000000001530201000000000700000000000010008809974a";
const SDR_BAD_TYPE: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800002400ffff00000200000000015301060000000007000000000000100031c9273e";
const SDR_NACK_SHORT_LIST: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400006400ffff00000201000000011111111100000022530103000000000a0000000300000004000000089a1aa5ed";
const SDR_SACK_SHORT_MAP: &str = "02000000000202000000000108004568004000004000401126430a0000010a000002c00012b7002c00002420ffff000002000000000153010200000000090000000c00000014ffff00008b18d64b";
const SDR_CTS_SHORT_BODY: &str = "020000000002020000000001080045680038000040004011264b0a0000010a000002c00012b7002400002400ffff000002000000000153010100000000070000100015910d44";
const SDR_HALF_HEADER: &str = "020000000002020000000001080045680034000040004011264f0a0000010a000002c00012b7002000002430ffff000002000000000153010100000000001c931abf";
const SDR_FLAGS_SET: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800002400ffff00000200000000015301010100000007000000000000100074ba7c86";
const SDR_SACK_TRAILING: &str = "02000000000202000000000108004568004000004000401126430a0000010a000002c00012b7002c00002430ffff000002000000000153010200000000090000000000000003090000008b50c98c";
const SDR_RC_SEND: &str = "020000000002020000000001080045680038000040004011264b0a0000010a000002c00012b7002400000420ffff000003000000000568656c6c6f20736472210000a89a04ab";
const FLOR_WRITE_ONLY_400: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400000b00ffff000004000000000b00007f00000000000000007700000008000004006368756e6b233021b4b31b4c";
const FLOR_UC_WRITE_LAST_402: &str = "020000000002020000000001080045680038000040004011264b0a0000010a000002c00012b7002400002900ffff000004010000000c000004026368756e6b233221c40766e6";
const FLOR_RC_WRITE_LAST_HINT: &str = "020000000002020000000001080045680038000040004011264b0a0000010a000002c00012b7002400000900ffff000004000000000d8000040268696e7465642121e543fe6e";
const FLOR_SEND_DATA: &str = "02000000000202000000000108004568004c00004000401126370a0000010a000002c00012b7003800000400ffff000004000000000e010180000000000100000000000000020000000000000008736d616c6c6d7367db5494c7";
const FLOR_SEND_RETX_FIRST: &str = "02000000000202000000000108004568006c00004000401126170a0000010a000002c00012b7005800002000ffff000004010000000f010200000000000200000000000000040000040000001000000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627c993814f";
const FLOR_ADDR_REQ: &str = "020000000002020000000001080045680058000040004011262b0a0000010a000002c00012b7004400000500ffff00000400000000100000123401030000000000030000000000000005000000000000001000000007000000000000000000100000ca9d945a";
const FLOR_ADDR_RESP: &str = "02000000000202000000000108004568005c00004000401126270a0000010a000002c00012b7004800002400ffff0000040200000011010400000000000100000000000000010000000000000018000000070000abcd00007f000000000000000000001000003f12a71f";
const FLOR_ACK: &str = "02000000000202000000000108004568005c00004000401126270a0000010a000002c00012b7004800006400ffff000005000000001211111111000000220000040030000000000000000000006400000000000009c400000400800004020000000000000003909fad34";
const FLOR_ACK_PAPER: &str = "02000000000202000000000108004568005c00004000401126270a0000010a000002c00012b7004800006400ffff0000050000000013111111110000002200000400c0000000000000000000006400000000000009c400000400800004020000000000000003309e6f17";
const FLOR_SEND_MIDDLE: &str = "020000000002020000000001080045680034000040004011264f0a0000010a000002c00012b7002000000100ffff000004000000001402096d6964646c6568c742eb";
const FLOR_BAD_VERSION: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400000400ffff0000040000000015020100000000000100000000000000020000000000000004616263648c7fad7b";
const FLOR_BAD_TYPE: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400002400ffff0000040000000016010500000000000100000000000000020000000000000004616263643f79858f";
const FLOR_BODY_LEN_MISMATCH: &str = "02000000000202000000000108004568004c00004000401126370a0000010a000002c00012b7003800000400ffff000004000000001701010000000000010000000000000002000000000000000c3820627974657321ee919953";
const FLOR_HALF_HEADER: &str = "020000000002020000000001080045680038000040004011264b0a0000010a000002c00012b7002400000420ffff00000400000000180101000000000001000000001c3bd07f";
const FLOR_WRITE_RN_ON_DATA: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400000400ffff0000040000000019010100000000000100000000000000020000040200000004616263642457dca7";
const FLOR_ADDR_BAD_LEN: &str = "02000000000202000000000108004568004c00004000401126370a0000010a000002c00012b7003800000400ffff000004000000001a0103000000000003000000000000000500000000000000080000000700000000709ce25a";
const FLOR_RESERVED_FLAGS: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400000400ffff000004000000001b01018100000000010000000000000002000000000000000461626364000316f3";
const FLOR_ACK_BITS_BEYOND: &str = "020000000002020000000001080045680054000040004011262f0a0000010a000002c00012b7004000006400ffff000005000000001c11111111000000220000040020000000000000000000006400000000000009c40000000100000002ac8b10a0";
const FLOR_ACK_BAD_LEN: &str = "020000000002020000000001080045680054000040004011262f0a0000010a000002c00012b7004000006420ffff000005000000001d11111111000000220000040080000000000000000000006400000000000009c40000000000000000477dc05c";
const ALL: &[&str] = &[SDR_DATA_WORKED, SDR_DATA_8_22_2, SDR_CTS, SDR_SR_ACK, SDR_SR_ACK_EMPTY, SDR_SR_NACK, SDR_EC_ACK, SDR_EC_NACK, SDR_BAD_MAGIC, SDR_BAD_VERSION, SDR_BAD_TYPE, SDR_NACK_SHORT_LIST, SDR_SACK_SHORT_MAP, SDR_CTS_SHORT_BODY, SDR_HALF_HEADER, SDR_FLAGS_SET, SDR_SACK_TRAILING, SDR_RC_SEND, FLOR_WRITE_ONLY_400, FLOR_UC_WRITE_LAST_402, FLOR_RC_WRITE_LAST_HINT, FLOR_SEND_DATA, FLOR_SEND_RETX_FIRST, FLOR_ADDR_REQ, FLOR_ADDR_RESP, FLOR_ACK, FLOR_ACK_PAPER, FLOR_SEND_MIDDLE, FLOR_BAD_VERSION, FLOR_BAD_TYPE, FLOR_BODY_LEN_MISMATCH, FLOR_HALF_HEADER, FLOR_WRITE_RN_ON_DATA, FLOR_ADDR_BAD_LEN, FLOR_RESERVED_FLAGS, FLOR_ACK_BITS_BEYOND, FLOR_ACK_BAD_LEN];

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

type Fields = BTreeMap<&'static str, Vec<String>>;

/// Every field of a frame decoded with `opts`: name → values.
fn fields_with(hexframe: &str, opts: &DecodeOptions) -> Fields {
    let data = hex(hexframe);
    let f = Frame::parse(LinkType::Ethernet, &data, data.len(), opts);
    let mut m: Fields = BTreeMap::new();
    f.visit(|id, v, _| m.entry(id.name()).or_default().push(v.to_string()));
    m
}

fn fields(hexframe: &str, profile: Profile) -> Fields {
    fields_with(hexframe, &DecodeOptions::with_profile(profile))
}

/// The byte ranges of each field.
fn ranges(hexframe: &str, opts: &DecodeOptions) -> BTreeMap<&'static str, Vec<Range<usize>>> {
    let data = hex(hexframe);
    let f = Frame::parse(LinkType::Ethernet, &data, data.len(), opts);
    let mut m: BTreeMap<&'static str, Vec<Range<usize>>> = BTreeMap::new();
    f.visit(|id, _, r| m.entry(id.name()).or_default().push(r));
    m
}

fn one<'a>(m: &'a Fields, name: &str) -> &'a str {
    match m.get(name).map(|v| v.as_slice()) {
        Some([v]) => v,
        other => panic!("{name}: {other:?} in {m:#?}"),
    }
}

fn assert_fields(m: &Fields, want: &[(&str, &str)]) {
    for (k, v) in want {
        assert_eq!(one(m, k), *v, "{k}");
    }
}

fn all<'a>(m: &'a Fields, name: &str) -> Vec<&'a str> {
    m.get(name).map(|v| v.iter().map(|s| s.as_str()).collect()).unwrap_or_default()
}

fn no_warnings(m: &Fields) {
    assert!(!m.contains_key("rocescope.warning"), "{:?}", m.get("rocescope.warning"));
}

fn none_of(m: &Fields, prefix: &str) {
    let found: Vec<_> = m.keys().filter(|k| k.starts_with(prefix)).collect();
    assert!(found.is_empty(), "{found:?}");
}

/// A malformed message: exactly this warning, `std`, no extension field, and the standard headers
/// (BTH, a good ICRC) still decoded.
fn malformed(hexframe: &str, profile: Profile, warning: &str, psn: u32) {
    let m = fields(hexframe, profile);
    assert_eq!(all(&m, "rocescope.warning"), [warning]);
    assert_fields(&m, &[("rocescope.profile", "std"), ("rocescope.bth.psn", &psn.to_string()), ("rocescope.icrc.status", "good")]);
    none_of(&m, "rocescope.sdr");
    none_of(&m, "rocescope.flor");
}

// ---- SDR data ---------------------------------------------------------------------------------

#[test]
fn sdr_data_splits_the_wire_md_worked_example() {
    let m = fields(SDR_DATA_WORKED, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "sdr"),
        ("rocescope.opcode_name", "UC RDMA WRITE Only with Immediate"),
        ("rocescope.immdt", &0x00C0_005Au32.to_string()),
        ("rocescope.sdr.msg_id", "3"),
        ("rocescope.sdr.pkt_off", "5"),
        ("rocescope.sdr.imm_frag", "10"),
        ("rocescope.reth.va", &(3u64 * (1 << 18) * 4096 + 5 * 4096).to_string()),
        ("rocescope.reth.dmalen", "16"),
        ("rocescope.payload_len", "16"),
        ("rocescope.icrc.status", "good"),
    ]);
    // Stateful fields are the tracker's, not the parser's.
    assert!(!m.contains_key("rocescope.sdr.user_imm") && !m.contains_key("rocescope.sdr.va_ok"));
    // Byte ranges: the ImmDt is at 14 + 20 + 8 + 12 + 16 = 70; id = bits 31..22, offset 21..4,
    // fragment 3..0.
    let r = ranges(SDR_DATA_WORKED, &DecodeOptions::with_profile(Profile::Sdr));
    assert_eq!(r["rocescope.immdt"], [70..74]);
    assert_eq!(r["rocescope.sdr.msg_id"], [70..72]);
    assert_eq!(r["rocescope.sdr.pkt_off"], [71..74]);
    assert_eq!(r["rocescope.sdr.imm_frag"], [73..74]);
    // Under std the same packet has no SDR field.
    let s = fields(SDR_DATA_WORKED, Profile::Std);
    no_warnings(&s);
    none_of(&s, "rocescope.sdr");
    assert_fields(&s, &[("rocescope.profile", "std")]);
}

#[test]
fn sdr_split_is_configurable() {
    let mut o = DecodeOptions::with_profile(Profile::Sdr);
    o.params.sdr_split = ImmSplit(8, 22, 2);
    let m = fields_with(SDR_DATA_8_22_2, &o);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.immdt", &0x0300_0016u32.to_string()),
        ("rocescope.sdr.msg_id", "3"),
        ("rocescope.sdr.pkt_off", "5"),
        ("rocescope.sdr.imm_frag", "2"),
    ]);
    // Read with the default split the same immediate says something else.
    let m = fields(SDR_DATA_8_22_2, Profile::Sdr);
    assert_fields(&m, &[("rocescope.sdr.msg_id", "12"), ("rocescope.sdr.pkt_off", "1"), ("rocescope.sdr.imm_frag", "6")]);
    // No fragment bits: no fragment field.
    o.params.sdr_split = ImmSplit(12, 20, 0);
    let m = fields_with(SDR_DATA_WORKED, &o);
    assert_fields(&m, &[("rocescope.sdr.msg_id", "12"), ("rocescope.sdr.pkt_off", "90")]);
    assert!(!m.contains_key("rocescope.sdr.imm_frag"));
}

#[test]
fn sdr_tracker_checks_the_va_of_a_decoded_frame() {
    let data = hex(SDR_DATA_WORKED);
    let mut o = DecodeOptions::with_profile(Profile::Sdr);
    let f = Frame::parse(LinkType::Ethernet, &data, data.len(), &o);
    // Without a configured MTU the flow's largest DMA length (16) is the MTU: VA disagrees.
    let mut t = SdrTracker::new();
    let a = t.observe_frame(1, &o.params, &f).unwrap();
    assert_eq!(a.va_ok, Some(false));
    assert_eq!(a.user_imm, None); // one packet of a message: immediate not ready
    assert_eq!(a.problem.unwrap().to_string(), "SDR data packet: RETH VA does not match the immediate's message id and offset");
    // With --sdr-mtu 4096 it agrees.
    o.params.sdr_mtu = Some(4096);
    let mut t = SdrTracker::new();
    let a = t.observe_frame(1, &o.params, &f).unwrap();
    assert_eq!((a.va_ok, a.problem), (Some(true), None));
    let mut m: Fields = BTreeMap::new();
    a.visit(&mut |id, v, _| m.entry(id.name()).or_default().push(v.to_string()));
    assert_fields(&m, &[("rocescope.sdr.va_ok", "1")]);
    // A control message is not a data packet.
    let d = hex(SDR_CTS);
    let f = Frame::parse(LinkType::Ethernet, &d, d.len(), &o);
    assert!(t.observe_frame(1, &o.params, &f).is_none());
}

// ---- SDR control messages -----------------------------------------------------------------------

#[test]
fn sdr_cts() {
    let m = fields(SDR_CTS, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "sdr"),
        ("rocescope.sdr.ctrl.type", "cts"),
        ("rocescope.sdr.ctrl.msg_seq", "7"),
        ("rocescope.sdr.ctrl.buf_len", &(1u64 << 32).to_string()),
        ("rocescope.payload_len", "16"),
    ]);
    let r = ranges(SDR_CTS, &DecodeOptions::with_profile(Profile::Sdr));
    // Payload at 14 + 20 + 8 + 12 = 54.
    assert_eq!(r["rocescope.sdr.ctrl.type"], [56..57]);
    assert_eq!(r["rocescope.sdr.ctrl.msg_seq"], [58..62]);
    assert_eq!(r["rocescope.sdr.ctrl.buf_len"], [62..70]);
}

#[test]
fn sdr_sr_ack_with_its_bitmap() {
    let m = fields(SDR_SR_ACK, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.sdr.ctrl.type", "sr_ack"),
        ("rocescope.sdr.ctrl.msg_seq", "9"),
        ("rocescope.sdr.ctrl.cum_ack", "12"),
        ("rocescope.sdr.ctrl.sack_bits", "13"),
        ("rocescope.sdr.ctrl.sack", "2612"),
        ("rocescope.payload_len", "18"),
        ("rocescope.bth.padcnt", "2"),
    ]);
    // The chunks it marks: cum_ack + j for bits 1, 2, 5, 9, 12.
    let data = hex(SDR_SR_ACK);
    let f = Frame::parse(LinkType::Ethernet, &data, data.len(), &DecodeOptions::with_profile(Profile::Sdr));
    let Ext::Sdr(Sdr::Ctrl(c)) = *f.ext() else { panic!("{:?}", f.ext()) };
    let payload = f.roce().unwrap().payload();
    assert_eq!(c.sacked(payload).collect::<Vec<_>>(), [13, 14, 17, 21, 24]);
    assert_eq!(c, Ctrl::SrAck { msg_seq: 9, cum_ack: 12, sack_bits: 13 });
    // An end-of-message SR_ACK: no bitmap bytes, an empty bitmap field.
    let m = fields(SDR_SR_ACK_EMPTY, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.sdr.ctrl.cum_ack", "64"), ("rocescope.sdr.ctrl.sack_bits", "0"), ("rocescope.sdr.ctrl.sack", "")]);
}

#[test]
fn sdr_nacks_and_ec_ack_over_uc_and_ud() {
    let m = fields(SDR_SR_NACK, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.opcode_name", "UD SEND Only"),
        ("rocescope.deth.srcqp", "34"),
        ("rocescope.sdr.ctrl.type", "sr_nack"),
        ("rocescope.sdr.ctrl.msg_seq", "10"),
        ("rocescope.sdr.ctrl.count", "3"),
    ]);
    assert_eq!(all(&m, "rocescope.sdr.ctrl.indices"), ["4", "8", "15"]);
    let m = fields(SDR_EC_ACK, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.sdr.ctrl.type", "ec_ack"), ("rocescope.sdr.ctrl.msg_seq", "20"), ("rocescope.payload_len", "8")]);
    none_of(&m, "rocescope.sdr.ctrl.count");
    let m = fields(SDR_EC_NACK, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.sdr.ctrl.type", "ec_nack"), ("rocescope.sdr.ctrl.msg_seq", "22"), ("rocescope.sdr.ctrl.count", "2")]);
    assert_eq!(all(&m, "rocescope.sdr.ctrl.indices"), ["0", "3"]);
}

#[test]
fn sdr_malformed_control_messages_are_located_warnings_not_guesses() {
    malformed(SDR_BAD_MAGIC, Profile::Sdr, "SDR control message: magic 0x54 (expected 0x53)", 1);
    malformed(SDR_BAD_VERSION, Profile::Sdr, "SDR control message: version 2 (expected 1)", 1);
    malformed(SDR_BAD_TYPE, Profile::Sdr, "SDR control message: unknown type 6", 1);
    malformed(SDR_NACK_SHORT_LIST, Profile::Sdr, "SDR control message: body of 12 bytes where its type needs 16", 1);
    malformed(SDR_SACK_SHORT_MAP, Profile::Sdr, "SDR control message: body of 10 bytes where its type needs 11", 1);
    malformed(SDR_CTS_SHORT_BODY, Profile::Sdr, "SDR control message: body of 4 bytes where its type needs 8", 1);
    malformed(SDR_HALF_HEADER, Profile::Sdr, "SDR control message: only 5 of 8 bytes present", 1);
    // Problems that leave the message readable: decoded, with the warning.
    let m = fields(SDR_FLAGS_SET, Profile::Sdr);
    assert_eq!(all(&m, "rocescope.warning"), ["SDR control message: flags byte is not 0"]);
    assert_fields(&m, &[("rocescope.profile", "sdr"), ("rocescope.sdr.ctrl.type", "cts"), ("rocescope.sdr.ctrl.buf_len", "4096")]);
    let m = fields(SDR_SACK_TRAILING, Profile::Sdr);
    assert_eq!(all(&m, "rocescope.warning"), ["SDR control message: bitmap bits beyond sack_bits are not 0"]);
    assert_fields(&m, &[("rocescope.sdr.ctrl.sack_bits", "3"), ("rocescope.sdr.ctrl.sack", "09")]);
}

#[test]
fn sdr_profile_leaves_other_packets_std_and_a_snaplen_cut_is_not_a_format_error() {
    let m = fields(SDR_RC_SEND, Profile::Sdr);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.profile", "std"), ("rocescope.payload_len", "10")]);
    // A Flor ACK (UD SEND Only) under flor, an SDR control message under std: no SDR reading.
    none_of(&fields(SDR_SR_NACK, Profile::Std), "rocescope.sdr");
    none_of(&fields(SDR_SR_NACK, Profile::Flor), "rocescope.sdr");
    // SR_NACK cut by the snaplen inside its last index: the captured indices, no SDR warning.
    let data = hex(SDR_SR_NACK);
    let cut = data.len() - 6;
    let f = Frame::parse(LinkType::Ethernet, &data[..cut], data.len(), &DecodeOptions::with_profile(Profile::Sdr));
    let mut m: Fields = BTreeMap::new();
    f.visit(|id, v, _| m.entry(id.name()).or_default().push(v.to_string()));
    assert_fields(&m, &[("rocescope.truncated", "1"), ("rocescope.sdr.ctrl.count", "3"), ("rocescope.profile", "sdr")]);
    assert_eq!(all(&m, "rocescope.sdr.ctrl.indices"), ["4", "8"]);
    assert!(all(&m, "rocescope.warning").iter().all(|w| !w.starts_with("SDR")), "{m:?}");
    // Cut inside the control header: nothing SDR, no SDR warning.
    let f = Frame::parse(LinkType::Ethernet, &data[..66], data.len(), &DecodeOptions::with_profile(Profile::Sdr));
    assert_eq!(f.profile(), Profile::Std);
    assert!(f.warnings.iter().all(|w| !w.to_string().starts_with("SDR")));
}

// ---- Flor ---------------------------------------------------------------------------------------

#[test]
fn flor_write_immediates_are_the_wire_md_test_vectors() {
    for (frame, op, imm, hint, mid, off) in [
        (FLOR_WRITE_ONLY_400, "RC RDMA WRITE Only with Immediate", 0x400u32, "0", "1", "0"),
        (FLOR_UC_WRITE_LAST_402, "UC RDMA WRITE Last with Immediate", 0x402, "0", "1", "2"),
        (FLOR_RC_WRITE_LAST_HINT, "RC RDMA WRITE Last with Immediate", 0x8000_0402, "1", "1", "2"),
    ] {
        let m = fields(frame, Profile::Flor);
        no_warnings(&m);
        assert_fields(&m, &[
            ("rocescope.profile", "flor"),
            ("rocescope.opcode_name", op),
            ("rocescope.immdt", &imm.to_string()),
            ("rocescope.flor.hint", hint),
            ("rocescope.flor.mid", mid),
            ("rocescope.flor.chunk_off", off),
            ("rocescope.payload_len", "8"),
        ]);
    }
    // UC 0x2B is SDR under sdr and Flor under flor.
    let m = fields(SDR_DATA_WORKED, Profile::Flor);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.profile", "flor"), ("rocescope.flor.hint", "0"), ("rocescope.flor.mid", "12288"), ("rocescope.flor.chunk_off", "90")]);
    none_of(&m, "rocescope.sdr");
    none_of(&fields(FLOR_WRITE_ONLY_400, Profile::Sdr), "rocescope.flor");
    // Byte ranges of the UC WRITE Last's immediate (at 54): hint bit 31, mid 30..10, offset 9..0.
    let r = ranges(FLOR_UC_WRITE_LAST_402, &DecodeOptions::with_profile(Profile::Flor));
    assert_eq!(r["rocescope.flor.hint"], [54..55]);
    assert_eq!(r["rocescope.flor.mid"], [54..57]);
    assert_eq!(r["rocescope.flor.chunk_off"], [56..58]);
    // The split is configurable.
    let mut o = DecodeOptions::with_profile(Profile::Flor);
    o.params.flor_split = ImmSplit(1, 19, 12);
    assert_fields(&fields_with(FLOR_RC_WRITE_LAST_HINT, &o), &[("rocescope.flor.mid", "0"), ("rocescope.flor.chunk_off", "1026")]);
}

#[test]
fn flor_send_header_of_each_type() {
    let m = fields(FLOR_SEND_DATA, Profile::Flor);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "flor"),
        ("rocescope.flor.send.type", "data"),
        ("rocescope.flor.send.flags", "128"),
        ("rocescope.flor.hint", "1"),
        ("rocescope.flor.send.rn", "1"),
        ("rocescope.flor.send.gn", "2"),
        ("rocescope.flor.send.write_rn", "0"),
        ("rocescope.flor.send.body_len", "8"),
        ("rocescope.payload_len", "32"),
    ]);
    none_of(&m, "rocescope.flor.addr");
    assert!(!m.contains_key("rocescope.flor.mid"));

    let m = fields(FLOR_SEND_RETX_FIRST, Profile::Flor);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.opcode_name", "UC SEND First"),
        ("rocescope.flor.send.type", "write_retx"),
        ("rocescope.flor.send.flags", "0"),
        ("rocescope.flor.hint", "0"),
        ("rocescope.flor.send.rn", "2"),
        ("rocescope.flor.send.gn", "4"),
        ("rocescope.flor.send.write_rn", "1024"),
        ("rocescope.flor.send.body_len", "4096"),
        // The WRITE chunk it carries, read like an immediate.
        ("rocescope.flor.mid", "1"),
        ("rocescope.flor.chunk_off", "0"),
        ("rocescope.payload_len", "64"),
    ]);

    let m = fields(FLOR_ADDR_REQ, Profile::Flor);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.opcode_name", "RC SEND Only with Immediate"),
        ("rocescope.immdt", "4660"),
        ("rocescope.flor.send.type", "addr_req"),
        ("rocescope.flor.send.rn", "3"),
        ("rocescope.flor.send.gn", "5"),
        ("rocescope.flor.send.body_len", "16"),
        ("rocescope.flor.addr.mid", "7"),
        ("rocescope.flor.addr.msg_len", "1048576"),
    ]);
    assert!(!m.contains_key("rocescope.flor.addr.r_key"));

    let m = fields(FLOR_ADDR_RESP, Profile::Flor);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.flor.send.type", "addr_resp"),
        ("rocescope.flor.send.body_len", "24"),
        ("rocescope.flor.addr.mid", "7"),
        ("rocescope.flor.addr.r_key", "43981"),
        ("rocescope.flor.addr.va", &0x7f00_0000_0000u64.to_string()),
        ("rocescope.flor.addr.buf_len", "1048576"),
    ]);
    // Payload at 54: mid at 78, R_Key 82, VA 86, buffer length 94.
    let r = ranges(FLOR_ADDR_RESP, &DecodeOptions::with_profile(Profile::Flor));
    assert_eq!(r["rocescope.flor.send.gn"], [62..70]);
    assert_eq!(r["rocescope.flor.addr.mid"], [78..82]);
    assert_eq!(r["rocescope.flor.addr.va"], [86..94]);
    assert_eq!(r["rocescope.flor.addr.buf_len"], [94..102]);
    // A SEND Middle carries no header: std, no warning.
    let m = fields(FLOR_SEND_MIDDLE, Profile::Flor);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.profile", "std")]);
}

#[test]
fn flor_ack_with_mixed_entries_under_both_polarities() {
    // Bitmap 0x30000000: entries 2 and 3 set. Set = SEND (default): entries 0, 1 are WRITE
    // reliable numbers echoed verbatim, 2 and 3 are least_gn + entry.
    let m = fields(FLOR_ACK, Profile::Flor);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "flor"),
        ("rocescope.flor.ack.qpn", "1024"),
        ("rocescope.flor.ack.bitmap", "30000000"),
        ("rocescope.flor.ack.least_gn", "100"),
        ("rocescope.flor.ack.delay_ns", "2500"),
        ("rocescope.flor.ack.count", "4"),
    ]);
    assert_eq!(all(&m, "rocescope.flor.ack.acked"), ["1024", "2147484674", "100", "103"]);
    // Set = WRITE: the other way round.
    let mut o = DecodeOptions::with_profile(Profile::Flor);
    o.params.flor_ack_set_means = FlorAckSetMeans::Write;
    let m = fields_with(FLOR_ACK, &o);
    no_warnings(&m);
    assert_eq!(all(&m, "rocescope.flor.ack.acked"), ["1124", "2147484774", "0", "3"]);
    // The paper's example (0xC0000000: "the first 2 acknowledge WRITE") under set = WRITE reads
    // like 0x30000000 under set = SEND.
    let m = fields_with(FLOR_ACK_PAPER, &o);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.flor.ack.bitmap", "c0000000")]);
    assert_eq!(all(&m, "rocescope.flor.ack.acked"), ["1024", "2147484674", "100", "103"]);
    let r = ranges(FLOR_ACK, &o);
    // Payload after BTH + DETH: 62; entries from 86.
    assert_eq!(r["rocescope.flor.ack.qpn"], [62..66]);
    assert_eq!(r["rocescope.flor.ack.acked"], [86..90, 90..94, 94..98, 98..102]);
}

#[test]
fn flor_malformed_headers_and_acks_are_located_warnings() {
    malformed(FLOR_BAD_VERSION, Profile::Flor, "Flor header: version 2 (expected 1)", 21);
    malformed(FLOR_BAD_TYPE, Profile::Flor, "Flor header: unknown type 5", 22);
    malformed(FLOR_HALF_HEADER, Profile::Flor, "Flor header: only 10 of 24 bytes present", 24);
    malformed(FLOR_ACK_BAD_LEN, Profile::Flor, "Flor ACK: payload is not 24 + 4n bytes with 1 <= n <= 32", 29);
    // A complete header that contradicts itself: decoded, with the warning.
    let m = fields(FLOR_BODY_LEN_MISMATCH, Profile::Flor);
    assert_eq!(all(&m, "rocescope.warning"), ["Flor header: rocescope.flor.send.body_len 12 disagrees with 8"]);
    assert_fields(&m, &[("rocescope.profile", "flor"), ("rocescope.flor.send.type", "data"), ("rocescope.flor.send.body_len", "12")]);
    let m = fields(FLOR_WRITE_RN_ON_DATA, Profile::Flor);
    assert_eq!(all(&m, "rocescope.warning"), ["Flor header: write_rn is not 0 on a header that is not WRITE_RETX"]);
    assert_fields(&m, &[("rocescope.flor.send.write_rn", "1026")]);
    assert!(!m.contains_key("rocescope.flor.mid"));
    let m = fields(FLOR_ADDR_BAD_LEN, Profile::Flor);
    assert_eq!(all(&m, "rocescope.warning"), ["Flor header: body of 8 bytes where its type needs 16"]);
    assert_fields(&m, &[("rocescope.flor.send.type", "addr_req")]);
    none_of(&m, "rocescope.flor.addr");
    let m = fields(FLOR_RESERVED_FLAGS, Profile::Flor);
    assert_eq!(all(&m, "rocescope.warning"), ["Flor header: reserved flag bits or reserved byte are not 0"]);
    assert_fields(&m, &[("rocescope.flor.send.flags", "129"), ("rocescope.flor.hint", "1")]);
    let m = fields(FLOR_ACK_BITS_BEYOND, Profile::Flor);
    assert_eq!(all(&m, "rocescope.warning"), ["Flor ACK: bitmap marks entries beyond the last one"]);
    assert_fields(&m, &[("rocescope.flor.ack.count", "2"), ("rocescope.bth.psn", "28")]);
    assert_eq!(all(&m, "rocescope.flor.ack.acked"), ["1", "2"]);
    // Standard headers of every malformed frame still decode.
    for frame in [FLOR_BODY_LEN_MISMATCH, FLOR_WRITE_RN_ON_DATA, FLOR_ADDR_BAD_LEN, FLOR_ACK_BITS_BEYOND] {
        assert_fields(&fields(frame, Profile::Flor), &[("rocescope.icrc.status", "good"), ("rocescope.bth.p_key", "65535")]);
    }
}

// ---- No allocation ------------------------------------------------------------------------------

/// Counts this thread's allocations (other tests run on other threads).
struct Counting;
thread_local! {
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn decoding_sdr_and_flor_frames_does_not_allocate() {
    let frames: Vec<Vec<u8>> = ALL.iter().map(|h| hex(h)).collect();
    let mut optss = vec![DecodeOptions::with_profile(Profile::Sdr), DecodeOptions::with_profile(Profile::Flor)];
    let mut w = DecodeOptions::with_profile(Profile::Flor);
    w.params.flor_ack_set_means = FlorAckSetMeans::Write;
    optss.push(w);
    let before = ALLOCS.with(|c| c.get());
    let mut n = 0usize;
    for o in &optss {
        for f in &frames {
            for cut in [f.len(), 70, 62] {
                let frame = Frame::parse(LinkType::Ethernet, &f[..cut.min(f.len())], f.len(), o);
                frame.visit(|_, v, _| {
                    n += 1;
                    // Formatting a value writes into a stack buffer only.
                    let _ = core::fmt::write(&mut Sink, format_args!("{v}"));
                });
            }
        }
    }
    let after = ALLOCS.with(|c| c.get());
    assert!(n > frames.len() * 20);
    assert_eq!(after - before, 0);
}

struct Sink;
impl core::fmt::Write for Sink {
    fn write_str(&mut self, _: &str) -> core::fmt::Result {
        Ok(())
    }
}
