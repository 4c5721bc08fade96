//! Round trips of the DCP (WIRE.md B.1) and NetRT (B.4) extension packets through the builders
//! and the parser, with random values: every field comes back, with no warning.

use proptest::prelude::*;
use rocescope_codec::build::{header_only, FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ext::netrt::{requested, NetrtRepr};
use rocescope_codec::ext::{dcp, netrt, Ext};
use rocescope_codec::ib::{DcpethRepr, RethRepr, SsethRepr};
use rocescope_codec::{DecodeOptions, Frame, IcrcStatus, LinkType, Profile};

/// The RC requests that carry DCP headers.
const DCP_OPS: [u8; 15] = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x16, 0x17];

fn net(v6: bool, tos: u8) -> NetRepr {
    if v6 {
        NetRepr::Ipv6 { src: [0xfd; 16], dst: [0xfe; 16], traffic_class: tos, flow_label: 7, hop_limit: 9 }
    } else {
        NetRepr::Ipv4 { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], tos, ttl: 64, ident: 3 }
    }
}

proptest! {
    #[test]
    fn dcp_data_packets_round_trip(
        op in prop::sample::select(DCP_OPS.to_vec()),
        v6 in any::<bool>(), shift in 0u8..7, qp in 0u32..0x100_0000, psn in 0u32..0x100_0000,
        msn in 0u32..0x100_0000, sretry in any::<u8>(), ssn in 0u32..0x100_0000,
        va in any::<u64>(), r_key in any::<u32>(), dma in any::<u32>(),
        payload in prop::collection::vec(any::<u8>(), 0..80),
    ) {
        let tos = dcp::with_tag(0x02, shift, dcp::TAG_DATA);
        let mut r = RoceRepr::new_dcp(op, qp, psn);
        if rocescope_codec::ib::Opcode(op).info().is_some_and(|i| i.payload) {
            r = r.with_payload(&payload);
        }
        r.dcpeth = Some(DcpethRepr { msn, sretryno: sretry });
        if let Some(s) = r.sseth.as_mut() { *s = SsethRepr { ssn }; }
        if let Some(h) = r.reth.as_mut() { *h = RethRepr { va, r_key, dma_len: dma }; }
        let frame = FrameRepr::new(net(v6, tos), r).to_vec();
        let mut o = DecodeOptions::with_profile(Profile::Dcp);
        o.params.dcp_tag_shift = shift;
        let f = Frame::parse(LinkType::Ethernet, &frame, frame.len(), &o);
        prop_assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        prop_assert_eq!(f.icrc_status(), IcrcStatus::Good);
        prop_assert_eq!(f.profile(), Profile::Dcp);
        prop_assert_eq!(RoceRepr::parse(f.roce().unwrap()), r);
        prop_assert_eq!(*f.ext(), Ext::Dcp(dcp::Dcp { tag: dcp::TAG_DATA, ho: false, emsn: None }));

        // Its header-only form keeps the BTH and the MSN, has no ICRC and raises no warning.
        let ho = header_only(LinkType::Ethernet, &frame, shift).unwrap();
        let h = Frame::parse(LinkType::Ethernet, &ho, ho.len(), &o);
        prop_assert!(h.warnings.is_empty(), "{:?}", h.warnings);
        prop_assert_eq!(h.icrc_status(), IcrcStatus::Absent);
        let p = h.roce().unwrap();
        prop_assert_eq!(p.ho_msn(), Some(msn));
        prop_assert_eq!(p.bth().psn(), psn);
        prop_assert_eq!(p.bth().opcode(), op);
        prop_assert_eq!(ho.len(), if v6 { 77 } else { 57 });
    }

    #[test]
    fn netrt_messages_round_trip(
        request in any::<bool>(), psn in 0u32..0x100_0000, bitmap in any::<u128>(),
        qp in 0u32..0x100_0000, p_key in any::<u16>(), opcode in 0xc0u8..=0xff, tos in any::<u8>(),
    ) {
        let m = if request { NetrtRepr::Request { epsn: psn, bitmap } } else { NetrtRepr::Unfulfilled { psn } };
        let body = m.to_vec();
        let frame = FrameRepr::new(net(false, tos), m.roce(opcode, qp, p_key, &body)).to_vec();
        let mut o = DecodeOptions::with_profile(Profile::Netrt);
        o.params.netrt_opcode = opcode;
        let f = Frame::parse(LinkType::Ethernet, &frame, frame.len(), &o);
        prop_assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        prop_assert_eq!(f.icrc_status(), IcrcStatus::Good);
        let want = if request { netrt::Netrt::Request { epsn: psn } } else { netrt::Netrt::Unfulfilled { psn } };
        prop_assert_eq!(*f.ext(), Ext::Netrt(want));
        let p = f.roce().unwrap();
        prop_assert_eq!((p.bth().dest_qp(), p.bth().p_key(), p.bth().psn()), (qp, p_key, psn));
        if request {
            let Ext::Netrt(n) = *f.ext() else { unreachable!() };
            let bm = n.bitmap(p).unwrap();
            prop_assert_eq!(u128::from_be_bytes(*bm), bitmap);
            // The PSNs asked for: ePSN, then every clear bit below the highest set one.
            let asked: Vec<u32> = requested(psn, bm).collect();
            let top = 128 - bitmap.leading_zeros();
            prop_assert_eq!(asked.len() as u32, 1 + top - bitmap.count_ones());
        }
    }
}
