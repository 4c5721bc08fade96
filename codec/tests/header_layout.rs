//! The fixed-layout headers' declarations (`codec/src/layout`) against the decoder: for every
//! opcode of the table, with random bytes in every header (reserved bits included), each field a
//! declaration gives a registry entry is walked once, in declaration order, with the value its
//! declared bytes and bits hold and those bytes as its range; and each header's layout table
//! (what the Lua plugin reads) says the same. A field added to a declaration is checked here
//! without further work.

use proptest::prelude::*;

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{layouts, BthRepr, Hdr, HeaderLayout, LrhRepr, Opcode};
use rocescope_codec::{DecodeOptions, FieldId, Frame, LinkType};

/// Ethernet + IPv4 + UDP in front of the BTH.
const ROCE_OFF: usize = 14 + 20 + 8;

fn known_opcodes() -> Vec<u8> {
    (0..=255u8).filter(|&o| Opcode(o).info().is_some()).collect()
}

/// The walk's entries for the fields of `h` (at `at` in `frame`): (id, value, range).
fn expected(h: &HeaderLayout, frame: &[u8], at: usize) -> Vec<(FieldId, u64, std::ops::Range<usize>)> {
    h.fields
        .iter()
        .filter_map(|f| {
            let r = f.bytes();
            Some((f.field?, f.read(&frame[at..at + h.len]), at + r.start..at + r.end))
        })
        .collect()
}

proptest! {
    #[test]
    fn every_declared_field_is_walked_from_its_bytes(
        opcode in prop::sample::select(known_opcodes()),
        noise in prop::collection::vec(any::<u8>(), 80),
    ) {
        let info = Opcode(opcode).info().unwrap();
        let payload = [0x5au8; 8];
        let mut r = RoceRepr::new(opcode, 0x12, 5);
        if info.payload {
            r = r.with_payload(&payload);
        }
        let mut frame = FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), r).to_vec();
        // Random bytes in the BTH (but its OpCode and PadCnt, which decide the layout) and in
        // every extension header.
        let bth = ROCE_OFF;
        frame[bth + 2..bth + 12].copy_from_slice(&noise[2..12]);
        frame[bth + 1] = (noise[1] & !0x30) | (frame[bth + 1] & 0x30);
        for h in info.headers.iter() {
            let o = bth + info.offsets[h as usize] as usize;
            for i in 0..h.len() {
                frame[o + i] = noise[info.offsets[h as usize] as usize + i];
            }
        }
        let opts = DecodeOptions { verify: false, ..Default::default() };
        let f = Frame::parse(LinkType::Ethernet, &frame, frame.len(), &opts);
        let mut walked = Vec::new();
        f.visit(|id, v, range| walked.push((id, v.as_u64(), range)));

        let mut want = expected(&BthRepr::LAYOUT, &frame, bth);
        for h in info.headers.iter().filter(|h| !matches!(h, Hdr::Dcpeth | Hdr::Sseth)) {
            want.extend(expected(h.layout(), &frame, bth + info.offsets[h as usize] as usize));
        }
        let declared: Vec<FieldId> = want.iter().map(|w| w.0).collect();
        let got: Vec<(FieldId, u64, std::ops::Range<usize>)> = walked
            .into_iter()
            .filter(|(id, _, _)| declared.contains(id))
            .map(|(id, v, r)| (id, v.expect("a declared field is a number"), r))
            .collect();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    /// Native InfiniBand's LRH (docs/link-types.md): random bytes but for LNH (2) and PktLen,
    /// which decide where the rest lies.
    #[test]
    fn every_lrh_field_is_walked_from_its_bytes(noise in prop::collection::vec(any::<u8>(), 8)) {
        use rocescope_codec::build::IbFrameRepr;
        let r = RoceRepr::new(0x04, 0x12, 5).with_payload(&[1, 2, 3, 4]);
        let mut frame = IbFrameRepr { lrh: LrhRepr::default(), grh: None, roce: r }.to_vec();
        frame[0] = noise[0];
        frame[1] = (noise[1] & !3) | 2;
        frame[2..4].copy_from_slice(&noise[2..4]);
        frame[4] = (noise[4] & 0xf8) | (frame[4] & 7);
        frame[6..8].copy_from_slice(&noise[6..8]);
        let f = Frame::parse(LinkType::Infiniband, &frame, frame.len(), &DecodeOptions { verify: false, ..Default::default() });
        let mut walked = Vec::new();
        f.visit(|id, v, range| walked.push((id, v.as_u64(), range)));
        let want = expected(&LrhRepr::LAYOUT, &frame, 0);
        let got: Vec<(FieldId, u64, std::ops::Range<usize>)> =
            walked.into_iter().take(want.len()).map(|(id, v, r)| (id, v.expect("a number"), r)).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn layout_tables_cover_every_header_once() {
    let names: Vec<&str> = layouts().map(|h| h.name).collect();
    assert_eq!(
        names,
        ["lrh", "bth", "rdeth", "deth", "xrceth", "dcpeth", "feth", "reth", "atomiceth", "aeth", "atomicacketh", "sseth", "immdt", "ieth", "irn_sack"]
    );
    for h in Hdr::ALL {
        assert_eq!(h.layout().len, h.len());
    }
    // Each registry field comes from at most one declaration.
    let mut ids: Vec<FieldId> = layouts().flat_map(|h| h.fields.iter().filter_map(|f| f.field)).collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n);
}
