//! DCP (WIRE.md B.1) and NetRT (B.4) decoded from frames laid out by hand, field by field from
//! the spec's tables (`literals.py` wrote them, with the IPv4 checksum and ICRC computed in
//! Python, independently of this codec).

use std::collections::BTreeMap;

use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};

const DCP_WRITE_MIDDLE: &str = "020000000002020000000001080045680048000040004011263b0a0000010a000002c00012b7003400000700ffff00000012000000640000050100007f000000100000001234000040004142434445464748a1b2ca3b";
const DCP_SEND_ONLY_IMM: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800000590ffff00000012000000650000060000000300deadbeef78797a00dc1bd84a";
const DCP_WRITE_ONLY_IMM: &str = "02000000000202000000000108004568004c00004000401126370a0000010a000002c00012b7003800000b00ffff00000012000000660000070200007f00000020000000123400000004000004000000002a5758595afda08a78";
const DCP_SEND_ONLY_INV: &str = "02000000000202000000000108004568003c00004000401126470a0000010a000002c00012b7002800001700ffff000000120000006700000800000005000000555570717273a5807a59";
const DCP_READ_REQ: &str = "02000000000202000000000108004568004000004000401126430a0000010a000002c00012b7002c00000c00ffff000000120000006800000900000000000000100000000077000020000993e0ac";
const DCP_HO_V4: &str = "0200000000020200000000010800456c002b00004000401126540a0000010a000002c00012b7001700000720ffff0000001280000064000005000000";
const DCP_HO_V6: &str = "02000000000202000000000186dd66c0000000171140fd000000000000000000000000000001fd000000000000000000000000000002c00012b7001700000800ffff0000003400ffffffabcdef";
const DCP_ACK: &str = "02000000000202000000000108004564003000004000401126570a0000010a000002c00012b7001c00001100ffff00000099000000681f0000077937f2ad";
const DCP_UNTAGGED_SEND: &str = "02000000000202000000000108004560003400004000401126570a0000010a000002c00012b7002000000400ffff0000001200000069706c61696e21212125816061";
const NETRT_REQUEST: &str = "02000000000202000000000108004568004000004000401126430a0000010a000002d12312b7002c0000c000ffff0000001200000102010001020000000000000000000000000000000b87e3b233";
const NETRT_UNFULFILLED: &str = "02000000000202000000000108004568003000004000401126530a0000010a000002d12312b7001c0000c000ffff000000120000010502000105238de806";
const NETRT_MARKED_DATA: &str = "02000000000202000000000108004568003000004000401126530a0000010a000002c00012b7001c00000700ffff0100001200000105726574788268035a";
const NETRT_BAD_TYPE: &str = "02000000000202000000000108004568003000004000401126530a0000010a000002c00012b7001c0000c000ffff000000120000010503000105f9c51a34";
const NETRT_BAD_LEN: &str = "020000000002020000000001080045680038000040004011264b0a0000010a000002c00012b700240000c000ffff0000001200000102010001020000000000000000faec1e99";
const NETRT_PSN_MISMATCH: &str = "02000000000202000000000108004568004000004000401126430a0000010a000002c00012b7002c0000c000ffff0000001200000100010001020000000000000000000000000000000b94312338";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Every field of a frame decoded with `profile`: name → values.
fn fields(hexframe: &str, profile: Profile) -> BTreeMap<&'static str, Vec<String>> {
    let data = hex(hexframe);
    let f = Frame::parse(LinkType::Ethernet, &data, data.len(), &DecodeOptions::with_profile(profile));
    let mut m: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    f.visit(|id, v, _| m.entry(id.name()).or_default().push(v.to_string()));
    m
}

fn one<'a>(m: &'a BTreeMap<&'static str, Vec<String>>, name: &str) -> &'a str {
    match m.get(name).map(|v| v.as_slice()) {
        Some([v]) => v,
        other => panic!("{name}: {other:?} in {m:#?}"),
    }
}

fn assert_fields(m: &BTreeMap<&'static str, Vec<String>>, want: &[(&str, &str)]) {
    for (k, v) in want {
        assert_eq!(one(m, k), *v, "{k}");
    }
}

fn no_warnings(m: &BTreeMap<&'static str, Vec<String>>) {
    assert!(m.get("rocescope.warning").is_none(), "{:?}", m.get("rocescope.warning"));
}

#[test]
fn dcp_write_middle_carries_dcpeth_and_a_reth() {
    let m = fields(DCP_WRITE_MIDDLE, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "dcp"),
        ("rocescope.dcp.tag", "2"),
        ("rocescope.dcp.ho", "0"),
        ("rocescope.dcp.msn", "5"),
        ("rocescope.dcp.sretryno", "1"),
        ("rocescope.reth.va", &0x7f0000001000u64.to_string()),
        ("rocescope.reth.r_key", "4660"),
        ("rocescope.reth.dmalen", "16384"),
        ("rocescope.payload_len", "8"),
        ("rocescope.bth.psn", "100"),
        ("rocescope.icrc.status", "good"),
    ]);
    assert!(m.get("rocescope.dcp.ssn").is_none());
    // Under std the same bytes are a WRITE Middle whose "payload" starts with the DCPETH.
    let s = fields(DCP_WRITE_MIDDLE, Profile::Std);
    assert_fields(&s, &[("rocescope.profile", "std"), ("rocescope.payload_len", "28")]);
    assert!(s.get("rocescope.reth.va").is_none() && s.get("rocescope.dcp.tag").is_none());
}

#[test]
fn dcp_send_and_write_with_immediate_carry_the_ssneth_before_the_immdt() {
    let m = fields(DCP_SEND_ONLY_IMM, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.dcp.msn", "6"),
        ("rocescope.dcp.sretryno", "0"),
        ("rocescope.dcp.ssn", "3"),
        ("rocescope.immdt", &0xdeadbeefu32.to_string()),
        ("rocescope.payload_len", "3"),
        ("rocescope.bth.padcnt", "1"),
        ("rocescope.bth.se", "1"),
    ]);
    let m = fields(DCP_WRITE_ONLY_IMM, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.dcp.msn", "7"),
        ("rocescope.dcp.sretryno", "2"),
        ("rocescope.dcp.ssn", "4"),
        ("rocescope.reth.va", &0x7f0000002000u64.to_string()),
        ("rocescope.reth.dmalen", "4"),
        ("rocescope.immdt", "42"),
        ("rocescope.payload_len", "4"),
    ]);
    let m = fields(DCP_SEND_ONLY_INV, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.dcp.msn", "8"), ("rocescope.dcp.ssn", "5"), ("rocescope.ieth.r_key", "21845"), ("rocescope.payload_len", "4")]);
    let m = fields(DCP_READ_REQ, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.dcp.msn", "9"), ("rocescope.reth.dmalen", "8192"), ("rocescope.reth.r_key", "119")]);
}

#[test]
fn dcp_header_only_packets_have_msn_and_no_icrc_nor_warnings() {
    let m = fields(DCP_HO_V4, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.dcp.tag", "3"),
        ("rocescope.dcp.ho", "1"),
        ("rocescope.dcp.msn", "5"),
        ("rocescope.bth.opcode", "7"),
        ("rocescope.bth.padcnt", "2"),
        ("rocescope.bth.a", "1"),
        ("rocescope.bth.psn", "100"),
        ("rocescope.icrc.status", "absent"),
        ("rocescope.truncated", "0"),
    ]);
    assert!(m.get("rocescope.icrc").is_none());
    let m = fields(DCP_HO_V6, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.dcp.ho", "1"),
        ("rocescope.dcp.msn", &0xabcdefu32.to_string()),
        ("rocescope.bth.destqp", "52"),
        ("rocescope.bth.psn", "16777215"),
        ("rocescope.icrc.status", "absent"),
    ]);
}

#[test]
fn dcp_ack_reports_the_emsn() {
    let m = fields(DCP_ACK, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.dcp.tag", "1"), ("rocescope.dcp.emsn", "7"), ("rocescope.aeth.msn", "7"), ("rocescope.aeth.kind", "ack")]);
}

#[test]
fn dcp_profile_leaves_untagged_packets_std_without_warnings() {
    let m = fields(DCP_UNTAGGED_SEND, Profile::Dcp);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.profile", "std"), ("rocescope.payload_len", "8")]);
    assert!(m.get("rocescope.dcp.tag").is_none());
}

#[test]
fn dcp_tag_position_is_configurable() {
    // With the tag in bits 1..0 (shift 0), ToS 0x68 reads as tag 00: plain std.
    let data = hex(DCP_WRITE_MIDDLE);
    let mut o = DecodeOptions::with_profile(Profile::Dcp);
    o.params.dcp_tag_shift = 0;
    let f = Frame::parse(LinkType::Ethernet, &data, data.len(), &o);
    assert_eq!(f.profile(), Profile::Std);
    assert!(f.warnings.is_empty());
}

#[test]
fn netrt_request_decodes_the_worked_example() {
    let m = fields(NETRT_REQUEST, Profile::Netrt);
    no_warnings(&m);
    assert_fields(&m, &[
        ("rocescope.profile", "netrt"),
        ("rocescope.netrt.type", "request"),
        ("rocescope.netrt.epsn", "258"),
        ("rocescope.netrt.bitmap", "0000000000000000000000000000000b"),
        ("rocescope.bth.opcode", "192"),
        ("rocescope.icrc.status", "good"),
    ]);
    assert_eq!(m["rocescope.netrt.requested"], ["258", "261"]);
    // Under std the vendor opcode is opaque and flagged.
    let s = fields(NETRT_REQUEST, Profile::Std);
    assert!(s["rocescope.warning"][0].contains("unknown opcode 0xc0"));
}

#[test]
fn netrt_unfulfilled_and_marked_data() {
    let m = fields(NETRT_UNFULFILLED, Profile::Netrt);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.netrt.type", "unfulfilled"), ("rocescope.netrt.unfulfilled_psn", "261")]);
    let m = fields(NETRT_MARKED_DATA, Profile::Netrt);
    no_warnings(&m);
    assert_fields(&m, &[("rocescope.netrt.rtx_mark", "1"), ("rocescope.payload_len", "4"), ("rocescope.icrc.status", "good")]);
}

#[test]
fn netrt_malformed_messages_are_located_warnings_and_keep_the_standard_headers() {
    let m = fields(NETRT_BAD_TYPE, Profile::Netrt);
    assert_eq!(m["rocescope.warning"], ["NetRT message: unknown type 3"]);
    assert_fields(&m, &[("rocescope.bth.psn", "261"), ("rocescope.profile", "std")]);
    let m = fields(NETRT_BAD_LEN, Profile::Netrt);
    assert_eq!(m["rocescope.warning"], ["NetRT message: body of 12 bytes where its type needs 20"]);
    let m = fields(NETRT_PSN_MISMATCH, Profile::Netrt);
    assert_eq!(m["rocescope.warning"], ["NetRT message: rocescope.netrt.epsn 258 disagrees with 256"]);
    assert_fields(&m, &[("rocescope.netrt.epsn", "258")]);
}
