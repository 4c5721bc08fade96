//! Native InfiniBand (link type 247, docs/link-types.md): the LRH's fields, the transport behind
//! it, the ICRC and the VCRC, on packets written out byte by byte from the IBTA layouts (the
//! CRC values computed with Python's crcmod as `tests/ib_crc_crcmod.py` defines them, not by the
//! code under test); the warnings for cut, short and raw packets; the raw IP link types.

use rocescope_codec::warning::{Layer, Unsupported};
use rocescope_codec::{DecodeOptions, FieldId as F, Frame, IcrcStatus, LinkType, Value, Warning};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// A local packet (LNH 2): LRH VL 5 · LVer 1 · SL 9 · LNH 2 · DLID 0x1234 · PktLen 7 · SLID
/// 0xBEEF; BTH RC SEND Only (SE, PadCnt 1, P_Key 0x8001, BECN, DestQP 0xABC, A, PSN 0x123456);
/// payload de ad be + one pad byte; ICRC 0e bd f1 3f; VCRC 3c bd.
const LOCAL: &str = "519212340007beef0490800140000abc80123456deadbe003ff1bd0e3cbd";
/// A global packet (LNH 3): LRH VL 15 · LVer 0 · SL 0 · LNH 3 · DLID 1 · PktLen 17 · SLID 2; GRH
/// (traffic class 0xAB, flow label 0x12345, PayLen 16, NxtHdr 0x1B, HopLmt 7, GIDs 10..1f and
/// 20..2f); BTH RC Acknowledge (DestQP 7, PSN 42); AETH ACK credit 31, MSN 5; ICRC 2b 74 3b 42;
/// VCRC c3 a3.
const GLOBAL: &str = "f0030001001100026ab1234500101b07101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f1100ffff000000070000002a1f0000052b743b42c3a3";

/// The walk as (name, value as text, byte range).
fn walk(f: &Frame<'_>) -> Vec<(&'static str, String, std::ops::Range<usize>)> {
    let mut v = Vec::new();
    f.visit(|id, val, r| {
        let s = match val {
            Value::UInt(n) => n.to_string(),
            Value::Bool(b) => (b as u8).to_string(),
            Value::Bytes(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
            Value::Str(s) => s.to_string(),
            other => format!("{other:?}"),
        };
        v.push((id.name(), s, r));
    });
    v
}

fn get(w: &[(&'static str, String, std::ops::Range<usize>)], name: &str) -> Option<(String, std::ops::Range<usize>)> {
    w.iter().find(|(n, _, _)| *n == name).map(|(_, v, r)| (v.clone(), r.clone()))
}

fn parse(bytes: &[u8], orig_len: usize) -> Frame<'_> {
    Frame::parse(LinkType::Infiniband, bytes, orig_len, &DecodeOptions::default())
}

#[test]
fn link_types_map() {
    assert_eq!(LinkType::from_linktype(247), Some(LinkType::Infiniband));
    for raw in [12, 14, 101, 228, 229] {
        assert_eq!(LinkType::from_linktype(raw), Some(LinkType::RawIp), "{raw}");
    }
}

#[test]
fn local_packet_fields_and_crcs() {
    let b = hex(LOCAL);
    let f = parse(&b, b.len());
    assert!(f.warnings.is_empty(), "{:?}", f.warnings.iter().collect::<Vec<_>>());
    let w = walk(&f);
    let want: &[(&str, &str, std::ops::Range<usize>)] = &[
        ("rocescope.lrh.vl", "5", 0..1),
        ("rocescope.lrh.lver", "1", 0..1),
        ("rocescope.lrh.sl", "9", 1..2),
        ("rocescope.lrh.lnh", "2", 1..2),
        ("rocescope.lrh.dlid", "4660", 2..4),
        ("rocescope.lrh.pktlen", "7", 4..6),
        ("rocescope.lrh.slid", "48879", 6..8),
        ("rocescope.bth.opcode", "4", 8..9),
        ("rocescope.bth.se", "1", 9..10),
        ("rocescope.bth.padcnt", "1", 9..10),
        ("rocescope.bth.p_key", "32769", 10..12),
        ("rocescope.bth.becn", "1", 12..13),
        ("rocescope.bth.destqp", "2748", 13..16),
        ("rocescope.bth.a", "1", 16..17),
        ("rocescope.bth.psn", "1193046", 17..20),
        ("rocescope.payload_len", "3", 20..23),
        ("rocescope.icrc", "3ff1bd0e", 24..28),
        ("rocescope.icrc.status", "good", 0..0),
        ("rocescope.vcrc", "3cbd", 28..30),
        ("rocescope.vcrc.status", "good", 0..0),
    ];
    for (name, value, range) in want {
        assert_eq!(get(&w, name), Some((value.to_string(), range.clone())), "{name}");
    }
    // The LRH comes first in the walk, the VCRC last.
    assert_eq!(w[0].0, "rocescope.lrh.vl");
    assert_eq!(w.last().unwrap().0, "rocescope.vcrc.status");
    assert!(!f.is_rocev1() && f.net().is_none() && f.ip_addrs().is_none());
}

#[test]
fn global_packet_fields_and_crcs() {
    let b = hex(GLOBAL);
    let f = parse(&b, b.len());
    assert!(f.warnings.is_empty(), "{:?}", f.warnings.iter().collect::<Vec<_>>());
    let w = walk(&f);
    let want: &[(&str, &str, std::ops::Range<usize>)] = &[
        ("rocescope.lrh.vl", "15", 0..1),
        ("rocescope.lrh.lnh", "3", 1..2),
        ("rocescope.lrh.dlid", "1", 2..4),
        ("rocescope.lrh.pktlen", "17", 4..6),
        ("rocescope.lrh.slid", "2", 6..8),
        ("rocescope.bth.opcode", "17", 48..49),
        ("rocescope.bth.destqp", "7", 53..56),
        ("rocescope.bth.psn", "42", 57..60),
        ("rocescope.aeth.syndrome", "31", 60..61),
        ("rocescope.aeth.msn", "5", 61..64),
        ("rocescope.aeth.kind", "ack", 60..61),
        ("rocescope.icrc", "2b743b42", 64..68),
        ("rocescope.icrc.status", "good", 0..0),
        ("rocescope.vcrc", "c3a3", 68..70),
        ("rocescope.vcrc.status", "good", 0..0),
    ];
    for (name, value, range) in want {
        assert_eq!(get(&w, name), Some((value.to_string(), range.clone())), "{name}");
    }
    let (src, dst) = f.ip_addrs().unwrap();
    assert_eq!(src.to_string(), "1011:1213:1415:1617:1819:1a1b:1c1d:1e1f");
    assert_eq!(dst.to_string(), "2021:2223:2425:2627:2829:2a2b:2c2d:2e2f");
    assert!(!f.is_rocev1());
}

/// The ICRC's variant fields (IBTA §7.8.1) may change in flight, the VCRC covers them: a
/// changed VL leaves a local packet's ICRC good; in a global packet the whole LRH, the GRH's
/// traffic class, flow label and hop limit and the BTH's byte 4 do too. Any other byte breaks
/// both.
#[test]
fn variant_fields_break_only_the_vcrc() {
    let local = hex(LOCAL);
    let global = hex(GLOBAL);
    let cases: &[(&[u8], usize, u8)] = &[
        (&local, 0, 0x30),  // VL
        (&local, 12, 0x01), // BTH byte 4
        (&global, 1, 0x40), // SL
        (&global, 3, 0x01), // DLID
        (&global, 7, 0x08), // SLID
        (&global, 9, 0x0f), // traffic class / flow label
        (&global, 11, 0x01), // flow label
        (&global, 15, 0x01), // hop limit
        (&global, 52, 0x80), // BTH byte 4 (FECN)
    ];
    for &(pkt, at, flip) in cases {
        let mut b = pkt.to_vec();
        b[at] ^= flip;
        let f = parse(&b, b.len());
        assert_eq!((f.icrc_status(), f.vcrc_status()), (IcrcStatus::Good, IcrcStatus::Bad), "byte {at}");
        assert!(f.warnings.iter().any(|w| matches!(w, Warning::VcrcMismatch { .. })));
    }
    // The SL of a local packet, payload bytes, a GID, the MSN.
    for (pkt, at, flip) in [(&local, 1usize, 0x10u8), (&local, 21, 0x02), (&global, 20, 0x02), (&global, 62, 0x02)] {
        let mut b = pkt.clone();
        b[at] ^= flip;
        let f = parse(&b, b.len());
        assert_eq!((f.icrc_status(), f.vcrc_status()), (IcrcStatus::Bad, IcrcStatus::Bad), "byte {at}");
    }
    // Without verification: unchecked, and no status field.
    let b = hex(LOCAL);
    let f = Frame::parse(LinkType::Infiniband, &b, b.len(), &DecodeOptions { verify: false, ..Default::default() });
    assert_eq!(f.vcrc_status(), IcrcStatus::Unchecked);
    assert!(get(&walk(&f), "rocescope.vcrc.status").is_none());
}

#[test]
fn cut_and_short_packets_are_flagged_where_they_stop() {
    for pkt in [hex(LOCAL), hex(GLOBAL)] {
        for cut in 0..pkt.len() {
            let f = parse(&pkt[..cut], pkt.len());
            assert!(f.truncated(), "cut at {cut}");
            let _ = walk(&f);
        }
    }
    let b = hex(LOCAL);
    let f = parse(&b[..5], b.len());
    assert_eq!(f.warnings.iter().next(), Some(&Warning::Truncated { layer: Layer::Lrh, need: 8, have: 5 }));
    // A frame that is itself 5 bytes long.
    let f = parse(&b[..5], 5);
    assert_eq!(f.warnings.iter().next(), Some(&Warning::LengthTooShort { layer: Layer::Lrh, claimed: 5, minimum: 8 }));
    // Cut inside the VCRC: the transport is whole, the VCRC truncated.
    let f = parse(&b[..29], b.len());
    assert_eq!((f.icrc_status(), f.vcrc_status()), (IcrcStatus::Good, IcrcStatus::Truncated));
    // A global packet cut inside its GRH.
    let g = hex(GLOBAL);
    let f = parse(&g[..30], g.len());
    assert_eq!(f.warnings.iter().next(), Some(&Warning::Truncated { layer: Layer::Grh, need: 40, have: 22 }));
    // PktLen beyond the frame: flagged, the rest decoded from what is there.
    let mut long = b.clone();
    long[5] = 9;
    let f = parse(&long, long.len());
    assert!(f.warnings.iter().any(|w| *w == Warning::LengthBeyondFrame { layer: Layer::Lrh, claimed: 36, available: 30 }));
    // A PktLen below the LRH's own 8 bytes.
    let mut tiny = b.clone();
    tiny[5] = 1;
    let f = parse(&tiny, tiny.len());
    assert_eq!(f.warnings.iter().next(), Some(&Warning::LengthTooShort { layer: Layer::Lrh, claimed: 4, minimum: 8 }));
    assert_eq!(f.vcrc_status(), IcrcStatus::Absent);
    // No VCRC on the wire (the frame ends with the ICRC): absent.
    let f = parse(&b[..28], 28);
    assert_eq!((f.icrc_status(), f.vcrc_status()), (IcrcStatus::Good, IcrcStatus::Absent));
}

#[test]
fn raw_packets_are_flagged_not_guessed() {
    let mut b = hex(LOCAL);
    for lnh in [0u8, 1] {
        b[1] = (b[1] & !3) | lnh;
        let f = parse(&b, b.len());
        assert!(f.roce().is_none());
        assert!(f.warnings.iter().any(|w| *w == Warning::Unsupported(Unsupported::LrhRawPacket)));
        let w = walk(&f);
        assert_eq!(get(&w, "rocescope.lrh.lnh").map(|v| v.0), Some(lnh.to_string()));
        // The VCRC covers whatever the packet is: changed LNH, so bad.
        assert_eq!(get(&w, "rocescope.vcrc.status").map(|v| v.0), Some("bad".to_string()));
        assert!(get(&w, F::BthOpcode.name()).is_none());
    }
}

/// The same RoCEv2 packet over raw IP decodes alike under every raw IP link type.
#[test]
fn raw_ip_link_types_decode_rocev2() {
    use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
    for (linktype, net) in [(228u32, NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2])), (229, NetRepr::ipv6([1; 16], [2; 16]))] {
        let eth = FrameRepr { pad_to_min: false, ..FrameRepr::new(net, RoceRepr::new(0x04, 9, 10).with_payload(&[1, 2, 3, 4])) }.to_vec();
        let ip = &eth[14..];
        let f = Frame::parse(LinkType::from_linktype(linktype).unwrap(), ip, ip.len(), &DecodeOptions::default());
        assert!(f.warnings.is_empty());
        assert_eq!(f.icrc_status(), IcrcStatus::Good);
        assert_eq!(f.roce().unwrap().bth().psn(), 10);
    }
}

proptest::proptest! {
    /// Any bytes, on any wire length, decode and walk without a panic, and a frame the capture
    /// kept whole is never flagged truncated.
    #[test]
    fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..140), extra in 0usize..64) {
        for opts in [DecodeOptions::default(), DecodeOptions::with_profile(rocescope_codec::Profile::Dcp)] {
            let f = Frame::parse(LinkType::Infiniband, &bytes, bytes.len() + extra, &opts);
            let _ = walk(&f);
            if extra == 0 {
                proptest::prop_assert!(!f.truncated());
            }
        }
    }
}
