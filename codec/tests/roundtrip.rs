//! Property tests of the codec (WIRE.md part A).
//!
//! - Every header `Repr`: random field values within their bit widths → emit → view → parse gives
//!   the original back; emit ignores what the buffer held and writes nothing past the header;
//!   bytes → parse → emit keeps exactly the non-reserved bits; a short buffer is refused.
//! - Every opcode of the table (0..=255 with `Opcode(o).info().is_some()`), with random header
//!   values, payloads of 0..=64 bytes and the matching pad, in a whole frame (IPv4, IPv6 or RoCEv1
//!   GRH; Ethernet with 0-2 VLAN tags, Linux cooked v1/v2 or raw IP; trailing bytes after the
//!   packet): `Frame::parse` reports no warning, a good ICRC and no truncation,
//!   `RoceRepr::parse` gives the built `RoceRepr` back, `payload_len` is the payload's length and
//!   the field walk yields exactly the header values, with byte ranges that hold them.
//! - Robustness: every prefix of a valid frame decodes without panicking, reports truncated, and
//!   yields the same values for every header still fully captured (and none for the others);
//!   random byte flips and random bytes never panic; the ICRC ignores exactly its variant fields
//!   and catches any single corrupted byte it covers.
//!
//! The per-opcode properties run `PROPTEST_CASES / 8` cases (at least 4) for each opcode, so
//! that every opcode is covered on every run.

use std::net::IpAddr;
use std::ops::Range;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use rocescope_codec::build::{fix_icrc, mac_control_frame, FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::checksum::internet_checksum;
use rocescope_codec::ib::bytes::Short;
use rocescope_codec::ib::cm::{CmMad, CmMsg, CmRepr};
use rocescope_codec::ib::*;
use rocescope_codec::mac_control::MacControlRepr;
use rocescope_codec::{DecodeOptions, FieldId as F, Frame, IcrcStatus, Layer, LinkType, Warning};

// ---------------------------------------------------------------------------------------------
// Strategies for the header Reprs.

fn u24() -> impl Strategy<Value = u32> {
    0u32..=0x00ff_ffff
}

prop_compose! {
    fn bth_repr()(
        opcode in any::<u8>(), se in any::<bool>(), mig_req in any::<bool>(), pad_cnt in 0u8..4,
        tver in 0u8..16, p_key in any::<u16>(), fecn in any::<bool>(), becn in any::<bool>(),
        resv6 in 0u8..64, dest_qp in u24(), ack_req in any::<bool>(), psn in u24(),
    ) -> BthRepr {
        BthRepr { opcode, se, mig_req, pad_cnt, tver, p_key, fecn, becn, resv6, dest_qp, ack_req, psn }
    }
}

fn rdeth_repr() -> impl Strategy<Value = RdethRepr> {
    u24().prop_map(|eecnxt| RdethRepr { eecnxt })
}
fn deth_repr() -> impl Strategy<Value = DethRepr> {
    (any::<u32>(), u24()).prop_map(|(q_key, src_qp)| DethRepr { q_key, src_qp })
}
fn xrceth_repr() -> impl Strategy<Value = XrcethRepr> {
    u24().prop_map(|xrc_srq| XrcethRepr { xrc_srq })
}
fn feth_repr() -> impl Strategy<Value = FethRepr> {
    (0u8..4, 0u8..16).prop_map(|(sel, plt)| FethRepr { sel, plt })
}
fn reth_repr() -> impl Strategy<Value = RethRepr> {
    (any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(va, r_key, dma_len)| RethRepr { va, r_key, dma_len })
}
fn atomic_eth_repr() -> impl Strategy<Value = AtomicEthRepr> {
    (any::<u64>(), any::<u32>(), any::<u64>(), any::<u64>())
        .prop_map(|(va, r_key, swap_add, compare)| AtomicEthRepr { va, r_key, swap_add, compare })
}
/// A syndrome of the three defined kinds.
fn defined_syndrome() -> impl Strategy<Value = Syndrome> {
    prop_oneof![
        (0u8..32).prop_map(|credit| Syndrome::Ack { credit }),
        (0u8..32).prop_map(|timer| Syndrome::RnrNak { timer }),
        (0u8..32).prop_map(|code| Syndrome::Nak { code }),
    ]
}
/// Any syndrome, reserved ones included (bit 7 set, or bits 6..5 = 10).
fn syndrome() -> impl Strategy<Value = Syndrome> {
    prop_oneof![
        3 => defined_syndrome(),
        1 => prop_oneof![0x80u8..=0xff, 0x40u8..=0x5f].prop_map(Syndrome::Reserved),
    ]
}
fn aeth_repr_with(s: impl Strategy<Value = Syndrome>) -> impl Strategy<Value = AethRepr> {
    (s, u24()).prop_map(|(syndrome, msn)| AethRepr { syndrome, msn })
}
fn atomic_ack_eth_repr() -> impl Strategy<Value = AtomicAckEthRepr> {
    any::<u64>().prop_map(|orig_rem_data| AtomicAckEthRepr { orig_rem_data })
}
fn immdt_repr() -> impl Strategy<Value = ImmDtRepr> {
    any::<u32>().prop_map(|imm| ImmDtRepr { imm })
}
fn ieth_repr() -> impl Strategy<Value = IethRepr> {
    any::<u32>().prop_map(|r_key| IethRepr { r_key })
}
fn irn_sack_repr() -> impl Strategy<Value = IrnSackRepr> {
    u24().prop_map(|sack_psn| IrnSackRepr { sack_psn })
}

// ---------------------------------------------------------------------------------------------
// 1. Header Reprs.

/// emit → view → parse is the identity; emit writes exactly the header's bytes whatever the
/// buffer held; bytes → parse → emit keeps exactly the bits of `mask`; short buffers are refused.
macro_rules! header_roundtrip {
    ($name:ident, $view:ident, $repr:ident, $layer:ident, $strat:expr, $mask:expr) => {
        proptest! {
            #[test]
            fn $name(repr in $strat, garbage in prop::collection::vec(any::<u8>(), 64)) {
                const LEN: usize = $repr::LEN;
                prop_assert_eq!($view::<&[u8]>::LEN, LEN);
                let mut buf = garbage.clone();
                repr.emit(&mut buf[..LEN]);
                prop_assert_eq!(&buf[LEN..], &garbage[LEN..]);
                let view = $view::new_checked(&buf[..LEN]).expect("long enough");
                prop_assert_eq!($repr::parse(&view), repr);
                // A longer buffer parses the same.
                prop_assert_eq!($repr::parse(&$view::new_checked(&buf[..]).unwrap()), repr);

                let mut zeroed = [0u8; LEN];
                repr.emit(&mut zeroed);
                prop_assert_eq!(&zeroed[..], &buf[..LEN], "emit depends on the buffer's old content");

                let short = $view::new_checked(&buf[..LEN - 1]).unwrap_err();
                prop_assert_eq!(short, Short { layer: Layer::$layer, need: LEN, have: LEN - 1 });

                let raw = &garbage[..LEN];
                let mut back = [0u8; LEN];
                $repr::parse(&$view::new_checked(raw).unwrap()).emit(&mut back);
                let mask: [u8; LEN] = $mask;
                for i in 0..LEN {
                    prop_assert_eq!(back[i], raw[i] & mask[i], "byte {} of {:02x?}", i, raw);
                }
            }
        }
    };
}

const FF4: [u8; 4] = [0xff; 4];
const FF8: [u8; 8] = [0xff; 8];
header_roundtrip!(bth_roundtrip, Bth, BthRepr, Bth, bth_repr(),
    [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0xff, 0xff, 0xff]);
header_roundtrip!(rdeth_roundtrip, Rdeth, RdethRepr, Rdeth, rdeth_repr(), [0, 0xff, 0xff, 0xff]);
header_roundtrip!(deth_roundtrip, Deth, DethRepr, Deth, deth_repr(), [0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0xff]);
header_roundtrip!(xrceth_roundtrip, Xrceth, XrcethRepr, Xrceth, xrceth_repr(), [0, 0xff, 0xff, 0xff]);
header_roundtrip!(feth_roundtrip, Feth, FethRepr, Feth, feth_repr(), [0, 0, 0, 0x3f]);
header_roundtrip!(reth_roundtrip, Reth, RethRepr, Reth, reth_repr(), [0xff; 16]);
header_roundtrip!(atomic_eth_roundtrip, AtomicEth, AtomicEthRepr, AtomicEth, atomic_eth_repr(), [0xff; 28]);
header_roundtrip!(aeth_roundtrip, Aeth, AethRepr, Aeth, aeth_repr_with(syndrome()), FF4);
header_roundtrip!(atomic_ack_eth_roundtrip, AtomicAckEth, AtomicAckEthRepr, AtomicAckEth, atomic_ack_eth_repr(), FF8);
header_roundtrip!(immdt_roundtrip, ImmDt, ImmDtRepr, ImmDt, immdt_repr(), FF4);
header_roundtrip!(ieth_roundtrip, Ieth, IethRepr, Ieth, ieth_repr(), FF4);
header_roundtrip!(irn_sack_roundtrip, IrnSack, IrnSackRepr, IrnSack, irn_sack_repr(), [0, 0xff, 0xff, 0xff]);

#[test]
fn syndrome_byte_is_a_bijection() {
    for b in 0..=255u8 {
        let s = Syndrome::from_byte(b);
        assert_eq!(s.to_byte(), b, "{s:?}");
        let reserved = b & 0x80 != 0 || (b >> 5) & 3 == 2;
        assert_eq!(matches!(s, Syndrome::Reserved(_)), reserved, "0x{b:02x}");
        assert_eq!(s.kind_name(), ["ack", "rnr_nak", "reserved", "nak"][if reserved { 2 } else { (b >> 5) as usize & 3 }]);
    }
}

fn cm_msg() -> impl Strategy<Value = CmMsg> {
    prop::sample::select(vec![CmMsg::Req, CmMsg::Mra, CmMsg::Rej, CmMsg::Rep, CmMsg::Rtu, CmMsg::Dreq, CmMsg::Drep])
}

prop_compose! {
    fn cm_repr()(msg in cm_msg(), transaction_id in any::<u64>(), local_comm_id in any::<u32>(),
                 remote_comm_id in any::<u32>(), qpn in u24(), start_psn in u24()) -> CmRepr {
        CmRepr { msg, transaction_id, local_comm_id, remote_comm_id, qpn, start_psn }
    }
}

/// What a CM view reads back from an emitted `CmRepr`.
fn check_cm_view<T: AsRef<[u8]>>(v: &CmMad<T>, r: &CmRepr) -> Result<(), TestCaseError> {
    let (req_rep, dreq) = (matches!(r.msg, CmMsg::Req | CmMsg::Rep), r.msg == CmMsg::Dreq);
    prop_assert_eq!(v.msg(), r.msg);
    prop_assert_eq!(v.attribute_id(), r.msg.attribute_id());
    prop_assert_eq!(CmMsg::from_attribute_id(r.msg.attribute_id()), Some(r.msg));
    prop_assert_eq!(v.local_comm_id(), r.local_comm_id);
    prop_assert_eq!(v.remote_comm_id(), (r.msg != CmMsg::Req).then_some(r.remote_comm_id));
    prop_assert_eq!(v.local_qpn(), req_rep.then_some(r.qpn));
    prop_assert_eq!(v.remote_qpn(), dreq.then_some(r.qpn));
    prop_assert_eq!(v.start_psn(), req_rep.then_some(r.start_psn));
    Ok(())
}

proptest! {
    #[test]
    fn cm_roundtrip(r in cm_repr(), garbage in prop::collection::vec(any::<u8>(), CmRepr::LEN + 8)) {
        let mut buf = garbage.clone();
        r.emit(&mut buf);
        prop_assert_eq!(&buf[CmRepr::LEN..], &garbage[CmRepr::LEN..]);
        let mut zeroed = vec![0u8; CmRepr::LEN];
        r.emit(&mut zeroed);
        prop_assert_eq!(&zeroed[..], &buf[..CmRepr::LEN]);
        prop_assert_eq!(&buf[8..16], &r.transaction_id.to_be_bytes()[..]);
        let v = CmMad::new_checked(&buf[..CmRepr::LEN]).expect("a CM MAD");
        check_cm_view(&v, &r)?;
        // Cut to the shortest length the view accepts, it still reads the same (and never reads
        // past what `new_checked` checked).
        let min = (0..=CmRepr::LEN).find(|&n| CmMad::new_checked(&buf[..n]).is_ok()).unwrap();
        prop_assert!(min <= CmMad::<&[u8]>::MIN_LEN);
        check_cm_view(&CmMad::new_checked(&buf[..min]).unwrap(), &r)?;
    }

    /// A CM message in a UD SEND Only to QP1, through a whole frame and the field walk.
    #[test]
    fn cm_in_a_frame(r in cm_repr(), net in net_repr_v2(), psn in u24()) {
        let mut mad = vec![0u8; CmRepr::LEN];
        r.emit(&mut mad);
        let roce = RoceRepr::new(0x64, 1, psn).with_payload(&mad);
        let bytes = FrameRepr::new(net, roce).to_vec();
        let f = Frame::parse(LinkType::Ethernet, &bytes, bytes.len(), &DecodeOptions::default());
        prop_assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        prop_assert_eq!(f.icrc_status(), IcrcStatus::Good);
        check_cm_view(&f.cm().expect("CM decoded"), &r)?;
        let seen = walk(&f);
        let one = |id: F| seen.iter().filter(|s| s.id == id).map(|s| s.text.clone()).collect::<Vec<_>>();
        prop_assert_eq!(one(F::CmMsg), vec![r.msg.name().to_string()]);
        prop_assert_eq!(one(F::CmLocalCommId), vec![r.local_comm_id.to_string()]);
        let req_rep = matches!(r.msg, CmMsg::Req | CmMsg::Rep);
        let opt = |c: bool, v: u32| if c { vec![v.to_string()] } else { vec![] };
        prop_assert_eq!(one(F::CmRemoteCommId), opt(r.msg != CmMsg::Req, r.remote_comm_id));
        prop_assert_eq!(one(F::CmLocalQpn), opt(req_rep, r.qpn));
        prop_assert_eq!(one(F::CmStartPsn), opt(req_rep, r.start_psn));
        prop_assert_eq!(one(F::CmRemoteQpn), opt(r.msg == CmMsg::Dreq, r.qpn));
        check_ranges(&f, &seen)?;
    }

    /// PAUSE and PFC frames through the builder, the decoder and the field walk.
    #[test]
    fn mac_control_roundtrip(
        src in any::<[u8; 6]>(),
        repr in prop_oneof![
            any::<u16>().prop_map(|quanta| MacControlRepr::Pause { quanta }),
            (any::<u16>(), any::<[u16; 8]>()).prop_map(|(class_enable, quanta)| MacControlRepr::Pfc { class_enable, quanta }),
        ],
    ) {
        let mut bytes = Vec::new();
        let n = mac_control_frame(src, &repr, &mut bytes);
        prop_assert_eq!(n, 60);
        prop_assert_eq!(bytes.len(), 60);
        let f = Frame::parse(LinkType::Ethernet, &bytes, bytes.len(), &DecodeOptions::default());
        prop_assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        prop_assert!(!f.truncated());
        prop_assert!(f.roce().is_none() && f.mac_control().is_some());
        let seen = walk(&f);
        let vals = |id: F| seen.iter().filter(|s| s.id == id).map(|s| s.num.unwrap()).collect::<Vec<_>>();
        let texts = |id: F| seen.iter().filter(|s| s.id == id).map(|s| s.text.clone()).collect::<Vec<_>>();
        match repr {
            MacControlRepr::Pause { quanta } => {
                prop_assert_eq!(texts(F::PfcClassEnable), Vec::<String>::new());
                prop_assert_eq!(vals(F::PfcQuanta), vec![quanta as u64]);
            }
            MacControlRepr::Pfc { class_enable, quanta } => {
                // A bitmap: its two wire bytes in hex.
                prop_assert_eq!(texts(F::PfcClassEnable), vec![format!("{class_enable:04x}")]);
                prop_assert_eq!(vals(F::PfcQuanta), quanta.iter().map(|&q| q as u64).collect::<Vec<_>>());
            }
        }
        check_ranges(&f, &seen)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Whole frames, for every opcode.

fn known_opcodes() -> Vec<u8> {
    (0..=255u8).filter(|&o| Opcode(o).info().is_some()).collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Ethernet,
    Sll,
    Sll2,
    RawIp,
}

impl Link {
    fn link_type(self) -> LinkType {
        match self {
            Link::Ethernet => LinkType::Ethernet,
            Link::Sll => LinkType::LinuxSll,
            Link::Sll2 => LinkType::LinuxSll2,
            Link::RawIp => LinkType::RawIp,
        }
    }
}

/// Random values for every extension header; the opcode picks the ones it carries.
#[derive(Clone, Debug)]
struct Hdrs {
    rdeth: RdethRepr,
    deth: DethRepr,
    xrceth: XrcethRepr,
    feth: FethRepr,
    reth: RethRepr,
    atomic_eth: AtomicEthRepr,
    aeth: AethRepr,
    atomic_ack_eth: AtomicAckEthRepr,
    immdt: ImmDtRepr,
    ieth: IethRepr,
    /// For an RC Acknowledge: make it an IRN selective NAK.
    irn: Option<IrnSackRepr>,
}

fn hdrs() -> impl Strategy<Value = Hdrs> {
    (
        (rdeth_repr(), deth_repr(), xrceth_repr(), feth_repr(), reth_repr(), atomic_eth_repr()),
        (aeth_repr_with(defined_syndrome()), atomic_ack_eth_repr(), immdt_repr(), ieth_repr()),
        prop::option::weighted(0.3, irn_sack_repr()),
    )
        .prop_map(|((rdeth, deth, xrceth, feth, reth, atomic_eth), (aeth, atomic_ack_eth, immdt, ieth), irn)| Hdrs {
            rdeth,
            deth,
            xrceth,
            feth,
            reth,
            atomic_eth,
            aeth,
            atomic_ack_eth,
            immdt,
            ieth,
            irn,
        })
}

fn net_repr_v2() -> impl Strategy<Value = NetRepr> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<[u8; 4]>(), any::<u8>(), any::<u8>(), any::<u16>())
            .prop_map(|(src, dst, tos, ttl, ident)| NetRepr::Ipv4 { src, dst, tos, ttl, ident }),
        (any::<[u8; 16]>(), any::<[u8; 16]>(), any::<u8>(), 0u32..1 << 20, any::<u8>()).prop_map(
            |(src, dst, traffic_class, flow_label, hop_limit)| NetRepr::Ipv6 { src, dst, traffic_class, flow_label, hop_limit }
        ),
    ]
}

fn net_repr() -> impl Strategy<Value = NetRepr> {
    prop_oneof![
        2 => net_repr_v2(),
        1 => (any::<[u8; 16]>(), any::<[u8; 16]>(), any::<u8>(), 0u32..1 << 20, any::<u8>()).prop_map(
            |(src, dst, traffic_class, flow_label, hop_limit)| NetRepr::Grh { src, dst, traffic_class, flow_label, hop_limit }
        ),
    ]
}

/// One random frame for one opcode.
#[derive(Clone, Debug)]
struct Case {
    bth: BthRepr,
    hdrs: Hdrs,
    payload: Vec<u8>,
    net: NetRepr,
    link: Link,
    vlans: [Option<u16>; 2],
    eth_dst: [u8; 6],
    eth_src: [u8; 6],
    udp_src: u16,
    udp_checksum: bool,
    pad_to_min: bool,
    /// Bytes after the frame (a captured FCS, junk), which the decoder must ignore.
    trailer: Vec<u8>,
}

fn case(opcode: u8) -> impl Strategy<Value = Case> {
    let info = Opcode(opcode).info().expect("an opcode of the table");
    let payload_len = if info.cnp {
        16..=16 // the CNP's reserved bytes (random here: they must round-trip too)
    } else if opcode == 0x1d {
        8..=8 // ATOMIC WRITE
    } else if info.payload {
        0..=64
    } else {
        0..=0
    };
    (
        (any::<bool>(), any::<bool>(), any::<u16>(), any::<bool>(), any::<bool>(), 0u8..64, u24(), any::<bool>(), u24()),
        hdrs(),
        prop::collection::vec(any::<u8>(), payload_len),
        net_repr(),
        (prop::sample::select(vec![Link::Ethernet, Link::Ethernet, Link::Ethernet, Link::Sll, Link::Sll2, Link::RawIp]), 0usize..=2, any::<[u16; 2]>()),
        (any::<[u8; 6]>(), any::<[u8; 6]>(), any::<u16>(), any::<bool>(), any::<bool>()),
        prop::collection::vec(any::<u8>(), 0..=8),
    )
        .prop_map(
            move |(
                (se, mig_req, p_key, fecn, becn, resv6, mut dest_qp, ack_req, psn),
                hdrs,
                payload,
                net,
                (mut link, nvlans, tcis),
                (eth_dst, eth_src, udp_src, udp_checksum, pad_to_min),
                trailer,
            )| {
                if opcode == 0x64 && dest_qp == 1 {
                    dest_qp = 2; // QP1 carries CM MADs: tested on its own
                }
                if link == Link::RawIp && matches!(net, NetRepr::Grh { .. }) {
                    link = Link::Ethernet; // RoCEv1 has no IP header
                }
                let nvlans = if link == Link::Ethernet { nvlans } else { 0 };
                let vlans = [(nvlans > 0).then_some(tcis[0]), (nvlans > 1).then_some(tcis[1])];
                Case {
                    bth: BthRepr { opcode, se, mig_req, pad_cnt: 0, tver: 0, p_key, fecn, becn, resv6, dest_qp, ack_req, psn },
                    hdrs,
                    payload,
                    net,
                    link,
                    vlans,
                    eth_dst,
                    eth_src,
                    udp_src,
                    udp_checksum,
                    pad_to_min,
                    trailer,
                }
            },
        )
}

impl Case {
    fn roce(&self) -> RoceRepr<'_> {
        let h = &self.hdrs;
        let mut r = RoceRepr::new(self.bth.opcode, 0, 0);
        r.bth = self.bth;
        macro_rules! fill {
            ($($f:ident),*) => { $( if r.$f.is_some() { r.$f = Some(h.$f); } )* };
        }
        fill!(rdeth, deth, xrceth, feth, reth, atomic_eth, aeth, atomic_ack_eth, immdt, ieth);
        if self.bth.opcode == 0x11 {
            if let Some(sack) = h.irn {
                r.aeth = Some(AethRepr { syndrome: Syndrome::Nak { code: 0 }, msn: h.aeth.msn });
                r.irn_sack = Some(sack);
            }
        }
        r.with_payload(&self.payload)
    }

    fn frame_repr(&self) -> FrameRepr<'_> {
        let mut f = FrameRepr::new(self.net, self.roce());
        f.eth_dst = self.eth_dst;
        f.eth_src = self.eth_src;
        f.vlans = self.vlans;
        f.udp_src = self.udp_src;
        f.udp_checksum = self.udp_checksum;
        f.pad_to_min = self.pad_to_min;
        f
    }

    /// The captured frame in its link type.
    fn bytes(&self) -> Vec<u8> {
        let eth = self.frame_repr().to_vec();
        let (ethertype, rest) = (&eth[12..14], &eth[14..]);
        let mut out = match self.link {
            Link::Ethernet => eth.clone(),
            Link::Sll => [&[0, 0, 0, 1, 0, 6][..], &self.eth_src, &[0, 0], ethertype, rest].concat(),
            Link::Sll2 => [ethertype, &[0, 0, 0, 0, 0, 7, 0, 1, 0, 6], &self.eth_src, &[0, 0], rest].concat(),
            Link::RawIp => rest.to_vec(),
        };
        out.extend_from_slice(&self.trailer);
        out
    }

    /// Offset of the BTH in [`Self::bytes`].
    fn roce_offset(&self) -> usize {
        let l2 = match self.link {
            Link::Ethernet => 14 + 4 * self.vlans.iter().flatten().count(),
            Link::Sll => 16,
            Link::Sll2 => 20,
            Link::RawIp => 0,
        };
        l2 + match self.net {
            NetRepr::Ipv4 { .. } => 20 + 8,
            NetRepr::Ipv6 { .. } => 40 + 8,
            NetRepr::Grh { .. } => 40,
        }
    }

    /// Offset just after the ICRC.
    fn roce_end(&self) -> usize {
        self.roce_offset() + self.roce().buffer_len()
    }
}

/// One value of the field walk, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    id: F,
    num: Option<u64>,
    text: String,
    range: Range<usize>,
}

fn walk(f: &Frame<'_>) -> Vec<Seen> {
    let mut v = Vec::new();
    f.visit(|id, val, range| v.push(Seen { id, num: val.as_u64(), text: val.to_string(), range }));
    v
}

/// Which header a field is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    Bth,
    Ext(Hdr),
    Sack,
}

fn owner(id: F) -> Option<Owner> {
    use Owner::*;
    Some(match id {
        F::OpcodeName | F::BthOpcode | F::BthSe | F::BthM | F::BthPadcnt | F::BthTver | F::BthPKey | F::BthFecn
        | F::BthBecn | F::BthDestqp | F::BthA | F::BthPsn => Bth,
        F::RdethEecnxt => Ext(Hdr::Rdeth),
        F::DethQKey | F::DethSrcqp => Ext(Hdr::Deth),
        F::XrcethXrcsrq => Ext(Hdr::Xrceth),
        F::FethSel | F::FethPlt => Ext(Hdr::Feth),
        F::RethVa | F::RethRKey | F::RethDmalen => Ext(Hdr::Reth),
        F::AtomicethVa | F::AtomicethRKey | F::AtomicethSwapdt | F::AtomicethCmpdt => Ext(Hdr::AtomicEth),
        F::AethSyndrome | F::AethMsn | F::AethKind | F::AethCredit | F::AethRnrTimer | F::AethNakCode => Ext(Hdr::Aeth),
        F::AtomicackethOrigremdt => Ext(Hdr::AtomicAckEth),
        F::Immdt => Ext(Hdr::ImmDt),
        F::IethRKey => Ext(Hdr::Ieth),
        F::IrnSackPsn => Sack,
        _ => return None,
    })
}

/// The numeric header fields a RoceRepr should produce, in no particular order.
fn expected_fields(r: &RoceRepr<'_>) -> Vec<(F, u64)> {
    let b = &r.bth;
    let mut v = vec![
        (F::BthOpcode, b.opcode as u64),
        (F::BthSe, b.se as u64),
        (F::BthM, b.mig_req as u64),
        (F::BthPadcnt, b.pad_cnt as u64),
        (F::BthTver, b.tver as u64),
        (F::BthPKey, b.p_key as u64),
        (F::BthFecn, b.fecn as u64),
        (F::BthBecn, b.becn as u64),
        (F::BthDestqp, b.dest_qp as u64),
        (F::BthA, b.ack_req as u64),
        (F::BthPsn, b.psn as u64),
    ];
    if let Some(h) = r.rdeth {
        v.push((F::RdethEecnxt, h.eecnxt as u64));
    }
    if let Some(h) = r.deth {
        v.extend([(F::DethQKey, h.q_key as u64), (F::DethSrcqp, h.src_qp as u64)]);
    }
    if let Some(h) = r.xrceth {
        v.push((F::XrcethXrcsrq, h.xrc_srq as u64));
    }
    if let Some(h) = r.feth {
        v.extend([(F::FethSel, h.sel as u64), (F::FethPlt, h.plt as u64)]);
    }
    if let Some(h) = r.reth {
        v.extend([(F::RethVa, h.va), (F::RethRKey, h.r_key as u64), (F::RethDmalen, h.dma_len as u64)]);
    }
    if let Some(h) = r.atomic_eth {
        v.extend([
            (F::AtomicethVa, h.va),
            (F::AtomicethRKey, h.r_key as u64),
            (F::AtomicethSwapdt, h.swap_add),
            (F::AtomicethCmpdt, h.compare),
        ]);
    }
    if let Some(h) = r.aeth {
        v.extend([(F::AethSyndrome, h.syndrome.to_byte() as u64), (F::AethMsn, h.msn as u64)]);
        match h.syndrome {
            Syndrome::Ack { credit } => v.push((F::AethCredit, credit as u64)),
            Syndrome::RnrNak { timer } => v.push((F::AethRnrTimer, timer as u64)),
            Syndrome::Nak { code } => v.push((F::AethNakCode, code as u64)),
            Syndrome::Reserved(_) => {}
        }
    }
    if let Some(h) = r.irn_sack {
        v.push((F::IrnSackPsn, h.sack_psn as u64));
    }
    if let Some(h) = r.atomic_ack_eth {
        v.push((F::AtomicackethOrigremdt, h.orig_rem_data));
    }
    if let Some(h) = r.immdt {
        v.push((F::Immdt, h.imm as u64));
    }
    if let Some(h) = r.ieth {
        v.push((F::IethRKey, h.r_key as u64));
    }
    v.sort();
    v
}

/// Every field's byte range lies in the frame, and a whole-byte integer field's bytes hold its
/// value big-endian.
fn check_ranges(f: &Frame<'_>, seen: &[Seen]) -> Result<(), TestCaseError> {
    let d = f.data();
    for s in seen {
        prop_assert!(s.range.start <= s.range.end && s.range.end <= d.len(), "{:?} outside the frame", s);
        if let (rocescope_codec::FieldType::UInt(bits @ (16 | 24 | 32 | 64)), Some(n)) = (s.id.def().ty, s.num) {
            if s.range.len() * 8 == bits as usize && s.id != F::PayloadLen {
                let be = d[s.range.clone()].iter().fold(0u64, |a, &b| a << 8 | b as u64);
                prop_assert_eq!(be, n, "{:?}", s);
            }
        }
    }
    Ok(())
}

fn opts() -> DecodeOptions {
    DecodeOptions::default()
}

/// The main property: a built frame decodes back to what was built.
fn check_roundtrip(c: &Case) -> Result<(), TestCaseError> {
    let roce = c.roce();
    let bytes = c.bytes();
    let link = c.link.link_type();
    let f = Frame::parse(link, &bytes, bytes.len(), &opts());
    let info = Opcode(c.bth.opcode).info().unwrap();

    let expected_warnings: Vec<Warning> = if c.bth.opcode == 0x80 { vec![Warning::CnpOpcode0x80] } else { vec![] };
    prop_assert_eq!(f.warnings.iter().copied().collect::<Vec<_>>(), expected_warnings);
    prop_assert_eq!(f.icrc_status(), IcrcStatus::Good);
    prop_assert!(!f.truncated());
    prop_assert_eq!(f.is_rocev1(), matches!(c.net, NetRepr::Grh { .. }));
    prop_assert_eq!(f.roce_offset(), c.roce_offset());
    prop_assert_eq!(f.vlan_ids().collect::<Vec<_>>(), c.vlans.iter().flatten().map(|t| t & 0xfff).collect::<Vec<_>>());
    let p = f.roce().expect("a RoCE packet");
    prop_assert_eq!(p.wire_len(), roce.buffer_len());
    prop_assert_eq!(RoceRepr::parse(p), roce);
    prop_assert_eq!(p.payload_len(), if info.cnp { 0 } else { c.payload.len() });
    if !info.cnp {
        prop_assert_eq!(p.payload(), &c.payload[..]);
    }
    prop_assert_eq!(p.headers(), info.headers);
    prop_assert_eq!(p.icrc_bytes(), Some(&bytes[c.roce_end() - 4..c.roce_end()]));

    // The field walk.
    let seen = walk(&f);
    check_ranges(&f, &seen)?;
    let mut got: Vec<(F, u64)> =
        seen.iter().filter(|s| owner(s.id).is_some() && s.id != F::OpcodeName && s.id != F::AethKind).map(|s| (s.id, s.num.unwrap())).collect();
    got.sort();
    prop_assert_eq!(got, expected_fields(&roce));
    let text = |id: F| seen.iter().filter(|s| s.id == id).map(|s| s.text.clone()).collect::<Vec<_>>();
    prop_assert_eq!(text(F::Profile), vec!["std"]);
    prop_assert_eq!(text(F::Truncated), vec!["0"]);
    prop_assert_eq!(text(F::OpcodeName), vec![info.name]);
    prop_assert_eq!(text(F::PayloadLen), vec![p.payload_len().to_string()]);
    prop_assert_eq!(text(F::IcrcStatus), vec!["good"]);
    let icrc_hex: String = bytes[c.roce_end() - 4..c.roce_end()].iter().map(|b| format!("{b:02x}")).collect();
    prop_assert_eq!(text(F::Icrc), vec![icrc_hex]);
    prop_assert_eq!(text(F::AethKind), roce.aeth.map(|a| a.syndrome.kind_name().to_string()).into_iter().collect::<Vec<_>>());
    prop_assert!(text(F::CmMsg).is_empty());

    // Addresses and ports as built.
    match c.net {
        NetRepr::Ipv4 { src, dst, tos, .. } => {
            prop_assert_eq!(f.ip_addrs(), Some((IpAddr::from(src), IpAddr::from(dst))));
            prop_assert_eq!(f.tos(), Some(tos));
        }
        NetRepr::Ipv6 { src, dst, traffic_class, .. } | NetRepr::Grh { src, dst, traffic_class, .. } => {
            prop_assert_eq!(f.ip_addrs(), Some((IpAddr::from(src), IpAddr::from(dst))));
            prop_assert_eq!(f.tos(), Some(traffic_class));
        }
    }
    if matches!(c.net, NetRepr::Grh { .. }) {
        prop_assert_eq!(f.udp_ports(), None);
    } else {
        prop_assert_eq!(f.udp_ports(), Some((c.udp_src, 4791)));
        // The UDP checksum: 0 over IPv4 unless asked for, else it verifies.
        let l3 = c.roce_offset() - 8 - if matches!(c.net, NetRepr::Ipv4 { .. }) { 20 } else { 40 };
        let ip = &bytes[l3..c.roce_offset() - 8];
        let udp = &bytes[c.roce_offset() - 8..c.roce_end()];
        let stored = u16::from_be_bytes([udp[6], udp[7]]);
        let len = (udp.len() as u32).to_be_bytes();
        let pseudo = if ip.len() == 20 {
            [&ip[12..20], &[0, 17], &len[2..4]].concat()
        } else {
            [&ip[8..40], &len[..], &[0, 0, 0, 17]].concat()
        };
        if ip.len() == 20 && !c.udp_checksum {
            prop_assert_eq!(stored, 0);
        } else {
            prop_assert_ne!(stored, 0);
            prop_assert_eq!(internet_checksum(&[&pseudo, udp]), 0, "UDP checksum {:04x} does not verify", stored);
        }
    }
    // Frame length: padded to 60 only when asked.
    let built = c.frame_repr().to_vec().len();
    let unpadded = c.roce_end() - c.roce_offset() + match c.net {
        NetRepr::Ipv4 { .. } => 28,
        _ => 48,
    } + 14 + 4 * c.vlans.iter().flatten().count();
    let unpadded = if matches!(c.net, NetRepr::Grh { .. }) { unpadded - 8 } else { unpadded };
    prop_assert_eq!(built, if c.pad_to_min { unpadded.max(60) } else { unpadded });
    Ok(())
}

/// Runs a property for every opcode of the table.
fn for_every_opcode<S: Strategy>(
    what: &str,
    divisor: u32,
    strategy: impl Fn(u8) -> S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let cases = (Config::default().cases / divisor).max(4);
    let opcodes = known_opcodes();
    assert_eq!(opcodes.len(), 25 + 12 + 22 + 2 + 2 + 23, "the opcode table changed size");
    for o in opcodes {
        let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
        if let Err(e) = runner.run(&strategy(o), &test) {
            panic!("{what}, opcode 0x{o:02x} ({}): {e}", Opcode(o).name());
        }
    }
}

#[test]
fn every_opcode_roundtrips_through_a_frame() {
    for_every_opcode("round trip", 8, case, |c| check_roundtrip(&c));
}

// ---------------------------------------------------------------------------------------------
// 3. Robustness.

/// Decodes and walks everything, through every accessor; the point is not to panic.
fn exercise(link: LinkType, data: &[u8], orig_len: usize) -> Result<(), TestCaseError> {
    for verify in [true, false] {
        let f = Frame::parse(link, data, orig_len, &DecodeOptions { verify, ..Default::default() });
        let seen = walk(&f);
        check_ranges(&f, &seen)?;
        let _ = (f.ip_addrs(), f.tos(), f.udp_ports(), f.vlan_ids().count(), f.ethertype(), f.net());
        let _ = (f.is_decoded(), f.is_rocev1(), f.truncated(), f.icrc_status().name(), f.profile().name());
        let _ = f.cm().map(|c| (c.msg(), c.local_comm_id(), c.remote_comm_id(), c.local_qpn(), c.remote_qpn(), c.start_psn()));
        if let Some(mc) = f.mac_control() {
            let _ = (mc.class_enable(), (0..mc.quanta_count()).map(|i| mc.quanta(i)).collect::<Vec<_>>());
        }
        if let Some(p) = f.roce() {
            let _ = RoceRepr::parse(p);
            let _ = (p.payload(), p.payload_len(), p.icrc_bytes(), p.icrc_covered(), p.headers(), p.irn_sack());
            let _ = (p.opcode().name(), p.opcode().position(), p.is_truncated(), p.bth().psn());
            prop_assert!(p.bytes().len() <= p.wire_len());
            prop_assert!(f.roce_offset() + p.bytes().len() <= data.len());
        }
        for w in f.warnings.iter() {
            let _ = w.to_string();
        }
    }
    // fix_icrc either declines or leaves a frame whose ICRC verifies.
    let mut copy = data.to_vec();
    if fix_icrc(link, &mut copy) {
        let g = Frame::parse(link, &copy, copy.len(), &opts());
        prop_assert_eq!(g.icrc_status(), IcrcStatus::Good, "after fix_icrc: {:?}", g.warnings);
    }
    Ok(())
}

fn check_prefixes(c: &Case) -> Result<(), TestCaseError> {
    let full = c.bytes();
    let link = c.link.link_type();
    let f = Frame::parse(link, &full, full.len(), &opts());
    let p = *f.roce().expect("a RoCE packet");
    let full_seen = walk(&f);
    let (off, end) = (c.roce_offset(), c.roce_end());
    let owner_end = |o: Owner| match o {
        Owner::Bth => off + 12,
        Owner::Ext(h) => off + p.header_offset(h).unwrap() + h.len(),
        Owner::Sack => off + p.sack_offset().unwrap() + 4,
    };
    for cut in 0..=full.len() {
        let data = &full[..cut];
        exercise(link, data, full.len())?;
        let t = Frame::parse(link, data, full.len(), &opts());
        let seen = walk(&t);
        if cut >= end {
            prop_assert!(!t.truncated(), "cut {}", cut);
            prop_assert_eq!(&seen, &full_seen, "cut {} (after the packet)", cut);
            continue;
        }
        prop_assert!(t.truncated(), "cut {} of {} not reported truncated", cut, full.len());
        for w in t.warnings.iter() {
            prop_assert!(matches!(w, Warning::Truncated { .. } | Warning::CnpOpcode0x80), "cut {}: {}", cut, w);
        }
        let hdr_seen: Vec<&Seen> = seen.iter().filter(|s| owner(s.id).is_some()).collect();
        let want: Vec<&Seen> = full_seen.iter().filter(|s| owner(s.id).is_some_and(|o| owner_end(o) <= cut)).collect();
        prop_assert_eq!(hdr_seen, want, "cut {}", cut);
        match t.roce() {
            Some(tp) => {
                prop_assert!(cut >= off + 12);
                prop_assert_eq!(tp.payload_len(), p.payload_len());
                prop_assert_eq!(tp.wire_len(), p.wire_len());
                prop_assert_eq!(t.icrc_status(), IcrcStatus::Truncated);
                let text = |id: F| seen.iter().filter(|s| s.id == id).map(|s| s.text.clone()).collect::<Vec<_>>();
                prop_assert_eq!(text(F::Truncated), vec!["1"]);
                prop_assert_eq!(text(F::IcrcStatus), vec!["truncated"]);
                prop_assert!(text(F::Icrc).is_empty());
                prop_assert_eq!(tp.payload(), &p.payload()[..tp.payload().len()]);
            }
            None => prop_assert!(cut < off + 12, "cut {}: BTH captured but no RoCE packet", cut),
        }
    }
    Ok(())
}

#[test]
fn every_prefix_of_a_frame_decodes_as_truncated() {
    for_every_opcode("prefix truncation", 32, case, |c| check_prefixes(&c));
}

fn flips() -> impl Strategy<Value = Vec<(usize, u8)>> {
    prop::collection::vec((any::<usize>(), 1u8..=255), 1..=8)
}

#[test]
fn byte_flips_never_panic() {
    for_every_opcode(
        "byte flips",
        16,
        |o| (case(o), flips(), prop::option::of(0usize..256)),
        |(c, flips, orig_len)| {
            let mut bytes = c.bytes();
            for (i, x) in flips {
                let n = bytes.len();
                bytes[i % n] ^= x;
            }
            let link = c.link.link_type();
            exercise(link, &bytes, orig_len.unwrap_or(bytes.len()))?;
            // Under the other link types too.
            for other in [LinkType::Ethernet, LinkType::LinuxSll, LinkType::LinuxSll2, LinkType::RawIp] {
                exercise(other, &bytes, bytes.len())?;
            }
            Ok(())
        },
    );
}

proptest! {
    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..160), extra in 0usize..64) {
        for link in [LinkType::Ethernet, LinkType::LinuxSll, LinkType::LinuxSll2, LinkType::RawIp] {
            exercise(link, &data, data.len() + extra)?;
        }
    }

    /// Random bytes after a plausible Ethernet/IP/UDP 4791 prefix reach the RoCE decoder.
    #[test]
    fn random_roce_bytes_never_panic(net in net_repr(), roce in prop::collection::vec(any::<u8>(), 0..96), extra in 0usize..16) {
        let mut bytes = FrameRepr { pad_to_min: false, ..FrameRepr::new(net, RoceRepr::new(0x04, 0, 0)) }.to_vec();
        let off = bytes.len() - 16;
        bytes.truncate(off);
        bytes.extend_from_slice(&roce);
        exercise(LinkType::Ethernet, &bytes, bytes.len() + extra)?;
    }
}

/// The ICRC ignores its variant fields and catches any one corrupted byte it covers.
#[test]
fn icrc_covers_exactly_the_invariant_fields() {
    for_every_opcode(
        "ICRC coverage",
        16,
        |o| (case(o), any::<prop::sample::Index>(), 1u8..=255, 0usize..8),
        |(c, at, x, variant)| {
            let link = c.link.link_type();
            let (off, end) = (c.roce_offset(), c.roce_end());
            let bth_end = off + 12;
            let p_off = off + c.roce().buffer_len() - 4 - c.roce().payload.len() - c.bth.pad_cnt as usize;

            // One byte in the PSN, the payload, the pad or the ICRC itself: bad.
            let mut covered: Vec<usize> = (off + 9..bth_end).collect();
            covered.extend(p_off..end);
            let i = covered[at.index(covered.len())];
            let mut bytes = c.bytes();
            bytes[i] ^= x;
            let f = Frame::parse(link, &bytes, bytes.len(), &opts());
            prop_assert_eq!(f.icrc_status(), IcrcStatus::Bad, "byte {} (BTH at {})", i, off);
            let mismatch = f.warnings.contains(|w| matches!(w, Warning::IcrcMismatch { .. }));
            prop_assert!(mismatch, "{:?}", f.warnings);

            // A variant field: still good.
            let l3 = match c.net {
                NetRepr::Ipv4 { .. } => off - 28,
                NetRepr::Ipv6 { .. } => off - 48,
                NetRepr::Grh { .. } => off - 40,
            };
            let variant_bytes: Vec<(usize, u8)> = match c.net {
                // ToS, TTL, header checksum; UDP checksum.
                NetRepr::Ipv4 { .. } => vec![(l3 + 1, 0xff), (l3 + 8, 0xff), (l3 + 10, 0xff), (l3 + 11, 0xff), (off - 2, 0xff), (off - 1, 0xff)],
                // Traffic class, flow label, hop limit; UDP checksum.
                NetRepr::Ipv6 { .. } => vec![(l3, 0x0f), (l3 + 1, 0xff), (l3 + 2, 0xff), (l3 + 3, 0xff), (l3 + 7, 0xff), (off - 2, 0xff), (off - 1, 0xff)],
                NetRepr::Grh { .. } => vec![(l3, 0x0f), (l3 + 1, 0xff), (l3 + 2, 0xff), (l3 + 3, 0xff), (l3 + 7, 0xff)],
            };
            let mut bytes = c.bytes();
            let (i, mask) = variant_bytes[variant % variant_bytes.len()];
            bytes[i] ^= x & mask;
            bytes[off + 4] ^= x; // BTH byte 4: FECN, BECN, reserved
            let f = Frame::parse(link, &bytes, bytes.len(), &opts());
            prop_assert_eq!(f.icrc_status(), IcrcStatus::Good, "variant byte {} ^ {:02x}: {:?}", i, x & mask, f.warnings);
            Ok(())
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Regressions found by the properties above.

/// A CNP whose UDP length leaves fewer than 4 of its 16 reserved bytes: `RoceRepr::parse` used
/// to subtract past the start of the packet.
#[test]
fn short_cnp_parses_without_underflow() {
    for extra in 0..=20usize {
        let payload = vec![0xa5u8; extra];
        let mut roce = RoceRepr::new(0x81, 7, 9);
        roce.payload = &payload;
        let bytes = FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), roce).to_vec();
        let f = Frame::parse(LinkType::Ethernet, &bytes, bytes.len(), &opts());
        let p = f.roce().expect("a RoCE packet");
        let r = RoceRepr::parse(p);
        assert_eq!(r.payload, &payload[..extra.min(16)], "{extra} bytes after the BTH");
        assert_eq!(f.icrc_status(), IcrcStatus::Good);
        assert_eq!(f.warnings.is_empty(), extra == 16, "{extra}: {:?}", f.warnings);
    }
}
