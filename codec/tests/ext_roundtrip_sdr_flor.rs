//! Property tests of the SDR (WIRE.md B.2) and Flor (B.3) builders through the parser:
//!
//! - every builder (`sdr::DataRepr`, `sdr::CtrlRepr`, `flor::imm`, `flor::SendRepr`,
//!   `flor::AckRepr`) with random field values, carried in a whole frame on every opcode the
//!   extension accepts, decodes under its profile without warnings to the values it was built
//!   from, and the field walk yields them with byte ranges that hold them;
//! - a message cut short on the wire (any shorter SEND payload) is a warning, never a guess; a
//!   message cut short by the snaplen is never a format warning;
//! - the SDR tracker rebuilds the user immediate of any message of at least F packets, in any
//!   order, and agrees with the VA the builder wrote.

use std::collections::BTreeMap;
use std::ops::Range;

use proptest::prelude::*;

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ext::flor::{self, Acked, AckRepr, AddrRepr, Flor, SendHeaderRepr, SendRepr, SendType};
use rocescope_codec::decoder::SdrTracker;
use rocescope_codec::ext::sdr::{self, CtrlRepr, CtrlType, DataRepr, Sdr};
use rocescope_codec::ext::Ext;
use rocescope_codec::ib::{DethRepr, ImmDtRepr};
use rocescope_codec::warning::Warnings;
use rocescope_codec::{DecodeOptions, FlorAckSetMeans, Frame, ImmSplit, LinkType, Params, Profile};

/// A decoded frame's fields: name → (value text, byte range) in walk order.
type Walk = BTreeMap<&'static str, Vec<(String, Range<usize>)>>;

struct Decoded {
    ext: Ext,
    warnings: Vec<String>,
    walk: Walk,
    data: Vec<u8>,
}

fn decode(data: Vec<u8>, opts: &DecodeOptions) -> Decoded {
    let f = Frame::parse(LinkType::Ethernet, &data, data.len(), opts);
    let mut walk: Walk = BTreeMap::new();
    f.visit(|id, v, r| walk.entry(id.name()).or_default().push((v.to_string(), r)));
    let ext = *f.ext();
    let warnings = f.warnings.iter().map(|w| w.to_string()).collect();
    Decoded { ext, warnings, walk, data }
}

impl Decoded {
    fn values(&self, name: &str) -> Vec<String> {
        self.walk.get(name).map(|v| v.iter().map(|(s, _)| s.clone()).collect()).unwrap_or_default()
    }
    fn one(&self, name: &str) -> String {
        let v = self.values(name);
        assert_eq!(v.len(), 1, "{name}: {v:?}");
        v[0].clone()
    }
    /// Every value of a byte-aligned integer field is what its range holds (big-endian).
    fn ranges_hold(&self, name: &str) {
        for (v, r) in self.walk.get(name).into_iter().flatten() {
            let held = self.data[r.clone()].iter().fold(0u128, |a, &b| a << 8 | b as u128);
            assert_eq!(held.to_string(), *v, "{name} at {r:?}");
        }
    }
}

fn frame(roce: RoceRepr<'_>) -> Vec<u8> {
    FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), roce).to_vec()
}

fn opts(profile: Profile, params: Params) -> DecodeOptions {
    let mut o = DecodeOptions::with_profile(profile);
    o.params = params;
    o
}

fn mask(bits: u8) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// A valid SDR split: FR in {0, 1, 2, 4, 8}, ID + OFF + FR = 32.
fn sdr_split() -> impl Strategy<Value = ImmSplit> {
    prop_oneof![Just(0u8), Just(1u8), Just(2u8), Just(4u8), Just(8u8)]
        .prop_flat_map(|fr| (0..=(32 - fr)).prop_map(move |id| ImmSplit(id, 32 - fr - id, fr)))
}

// ---------------------------------------------------------------------------------------------
// SDR data.

proptest! {
    #[test]
    fn sdr_data_round_trips(
        split in sdr_split(), id in any::<u32>(), off in any::<u32>(), user_imm in any::<u32>(),
        mtu in prop_oneof![Just(256u32), Just(1024u32), Just(4096u32)], r_key in any::<u32>(),
        payload in proptest::collection::vec(any::<u8>(), 0..48), qp in 0u32..0x100_0000, psn in 0u32..0x100_0000,
    ) {
        let (id, off) = (id & mask(split.0), off & mask(split.1));
        let mut params = Params { sdr_split: split, sdr_mtu: Some(mtu), ..Params::default() };
        let mut repr = DataRepr::new(split, id, off, user_imm);
        repr.r_key = r_key;
        prop_assert_eq!(repr.frag, sdr::fragment(split, user_imm, off));
        let d = decode(frame(repr.roce(&params, mtu, qp, psn, &payload)), &opts(Profile::Sdr, params));
        prop_assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let Ext::Sdr(Sdr::Data(got)) = d.ext else { panic!("{:?}", d.ext) };
        prop_assert_eq!((got.msg_id, got.pkt_off, got.frag, got.imm()), (id, off, repr.frag, repr.imm(split)));
        prop_assert_eq!(d.one("rocescope.sdr.msg_id"), id.to_string());
        prop_assert_eq!(d.one("rocescope.sdr.pkt_off"), off.to_string());
        prop_assert_eq!(d.values("rocescope.sdr.imm_frag"), if split.2 == 0 { vec![] } else { vec![repr.frag.to_string()] });
        prop_assert_eq!(d.one("rocescope.reth.va"), repr.va(&params, mtu).to_string());
        prop_assert_eq!(d.one("rocescope.reth.dmalen"), payload.len().to_string());
        prop_assert_eq!(d.one("rocescope.reth.r_key"), r_key.to_string());
        // Every field range lies in the ImmDt.
        let imm_range = d.walk["rocescope.immdt"][0].1.clone();
        for name in ["rocescope.sdr.msg_id", "rocescope.sdr.pkt_off", "rocescope.sdr.imm_frag"] {
            for (_, r) in d.walk.get(name).into_iter().flatten() {
                prop_assert!(imm_range.start <= r.start && r.end <= imm_range.end && (r.start < r.end || r.is_empty()));
            }
        }
        // The tracker agrees with the VA the builder wrote (configured MTU).
        let mut t = SdrTracker::new();
        let a = t.observe(1, &params, (id, off, repr.frag), (repr.va(&params, mtu), payload.len() as u32), payload.len());
        prop_assert_eq!(a.va_ok, Some(true));
        prop_assert_eq!(a.problem, None);
        // A configured maximum message size moves the message start.
        params.sdr_max_message = Some(1 << 20);
        let a = t.observe(2, &params, (id, off, repr.frag), (repr.va(&params, mtu), payload.len() as u32), payload.len());
        prop_assert_eq!(a.va_ok, Some(true));
    }

    #[test]
    fn sdr_tracker_rebuilds_any_message_of_at_least_f_packets(
        split in sdr_split().prop_filter("fragments", |s| s.2 != 0 && s.0 <= 16),
        id in any::<u32>(), user_imm in any::<u32>(), extra in 0u32..6, seed in any::<u64>(),
        mtu in prop_oneof![Just(256u32), Just(512u32)],
    ) {
        let f = 32 / split.2 as u32;
        let id = id & mask(split.0);
        let n = (f + extra).min(mask(split.1).saturating_add(1).max(1));
        // Offsets 0..n in a shuffled order (the channels reorder).
        let mut offs: Vec<u32> = (0..n).collect();
        let mut s = seed | 1;
        for i in (1..offs.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            offs.swap(i, (s % (i as u64 + 1)) as usize);
        }
        // No configured MTU: every packet full-size, so the flow's DMA length is the MTU.
        let params = Params { sdr_split: split, ..Params::default() };
        let payload = vec![0u8; mtu as usize];
        let mut t = SdrTracker::new();
        let mut seen = std::collections::HashSet::new();
        for (k, &off) in offs.iter().enumerate() {
            let repr = DataRepr::new(split, id, off, user_imm);
            let d = decode(frame(repr.roce(&params, mtu, 0x10, k as u32, &payload)), &opts(Profile::Sdr, params));
            let Ext::Sdr(Sdr::Data(_)) = d.ext else { panic!() };
            let fr = Frame::parse(LinkType::Ethernet, &d.data, d.data.len(), &opts(Profile::Sdr, params));
            let a = t.observe_frame(9, &params, &fr).unwrap();
            seen.insert(off % f);
            prop_assert_eq!(a.user_imm, (seen.len() as u32 == f).then_some(user_imm), "packet {} of {:?}", k, offs);
            prop_assert_eq!(a.va_ok, Some(true));
            prop_assert_eq!(a.problem, None);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SDR control messages.

#[derive(Clone, Debug)]
enum Ctl {
    Cts(u32, u64),
    SrAck(u32, u32, u32, Vec<u8>),
    SrNack(u32, Vec<u32>),
    EcAck(u32),
    EcNack(u32, Vec<u32>),
}

impl Ctl {
    fn repr(&self) -> CtrlRepr<'_> {
        match self {
            Ctl::Cts(s, b) => CtrlRepr::Cts { msg_seq: *s, buf_len: *b },
            Ctl::SrAck(s, c, bits, map) => CtrlRepr::SrAck { msg_seq: *s, cum_ack: *c, sack_bits: *bits, sack: map },
            Ctl::SrNack(s, i) => CtrlRepr::SrNack { msg_seq: *s, indices: i },
            Ctl::EcAck(s) => CtrlRepr::EcAck { msg_seq: *s },
            Ctl::EcNack(s, i) => CtrlRepr::EcNack { msg_seq: *s, indices: i },
        }
    }
}

fn ctl() -> impl Strategy<Value = Ctl> {
    let idx = || proptest::collection::vec(any::<u32>(), 0..40);
    prop_oneof![
        (any::<u32>(), any::<u64>()).prop_map(|(s, b)| Ctl::Cts(s, b)),
        (any::<u32>(), any::<u32>(), 0u32..300, any::<u64>()).prop_map(|(s, c, bits, seed)| {
            let mut map = vec![0u8; sdr::sack_len(bits)];
            sdr::sack_bitmap(c, bits, |chunk| (chunk as u64).wrapping_mul(seed | 1) >> 7 & 1 == 1, &mut map);
            Ctl::SrAck(s, c, bits, map)
        }),
        (any::<u32>(), idx()).prop_map(|(s, i)| Ctl::SrNack(s, i)),
        any::<u32>().prop_map(Ctl::EcAck),
        (any::<u32>(), idx()).prop_map(|(s, i)| Ctl::EcNack(s, i)),
    ]
}

proptest! {
    #[test]
    fn sdr_control_messages_round_trip(c in ctl(), ud in any::<bool>(), q_key in any::<u32>(), src_qp in 0u32..0x100_0000) {
        let repr = c.repr();
        let bytes = repr.to_vec();
        prop_assert_eq!(bytes.len(), repr.buffer_len());
        let mut r = RoceRepr::new(if ud { 0x64 } else { 0x24 }, 0x33, 5).with_payload(&bytes);
        if ud {
            r.deth = Some(DethRepr { q_key, src_qp });
        }
        let d = decode(frame(r), &DecodeOptions::with_profile(Profile::Sdr));
        prop_assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let Ext::Sdr(Sdr::Ctrl(got)) = d.ext else { panic!("{:?}", d.ext) };
        prop_assert_eq!(got.kind(), repr.kind());
        prop_assert_eq!(got.msg_seq(), repr.msg_seq());
        prop_assert_eq!(d.one("rocescope.sdr.ctrl.type"), repr.kind().name());
        prop_assert_eq!(d.one("rocescope.sdr.ctrl.msg_seq"), repr.msg_seq().to_string());
        match &c {
            Ctl::Cts(_, b) => prop_assert_eq!(d.one("rocescope.sdr.ctrl.buf_len"), b.to_string()),
            Ctl::SrAck(_, cum, bits, map) => {
                prop_assert_eq!(d.one("rocescope.sdr.ctrl.cum_ack"), cum.to_string());
                prop_assert_eq!(d.one("rocescope.sdr.ctrl.sack_bits"), bits.to_string());
                let hexmap: String = map.iter().map(|b| format!("{b:02x}")).collect();
                prop_assert_eq!(d.one("rocescope.sdr.ctrl.sack"), hexmap);
                let (_, r) = &d.walk["rocescope.sdr.ctrl.sack"][0];
                prop_assert_eq!(&d.data[r.clone()], &map[..]);
                let payload = &bytes[..];
                let want: Vec<u32> = (0..*bits).filter(|j| map[(j / 8) as usize] >> (j % 8) & 1 == 1).map(|j| cum.wrapping_add(j)).collect();
                prop_assert_eq!(got.sacked(payload).collect::<Vec<_>>(), want);
            }
            Ctl::SrNack(_, idx) | Ctl::EcNack(_, idx) => {
                prop_assert_eq!(d.one("rocescope.sdr.ctrl.count"), idx.len().to_string());
                prop_assert_eq!(d.values("rocescope.sdr.ctrl.indices"), idx.iter().map(|i| i.to_string()).collect::<Vec<_>>());
            }
            Ctl::EcAck(_) => prop_assert!(d.walk.keys().filter(|k| k.starts_with("rocescope.sdr.ctrl.")).count() == 2),
        }
        for name in ["rocescope.sdr.ctrl.msg_seq", "rocescope.sdr.ctrl.buf_len", "rocescope.sdr.ctrl.cum_ack",
                     "rocescope.sdr.ctrl.sack_bits", "rocescope.sdr.ctrl.count", "rocescope.sdr.ctrl.indices"] {
            d.ranges_hold(name);
        }
        // A shorter message on the wire is always a warning; a snaplen cut never is.
        for k in 0..bytes.len() {
            let mut w = Warnings::default();
            prop_assert!(sdr::Ctrl::parse(&bytes[..k], k, &mut w).is_none(), "prefix {}", k);
            prop_assert_eq!(w.len(), 1, "prefix {}", k);
            let mut w = Warnings::default();
            let cut = sdr::Ctrl::parse(&bytes[..k], bytes.len(), &mut w);
            prop_assert!(w.is_empty(), "cut {}: {:?}", k, w.iter().collect::<Vec<_>>());
            if let Some(cut) = cut {
                prop_assert_eq!(cut, got);
            }
        }
        let mut w = Warnings::default();
        prop_assert_eq!(sdr::Ctrl::parse(&bytes, bytes.len(), &mut w), Some(got));
    }
}

#[test]
fn ctrl_type_codes_and_names() {
    for (code, name) in (1..=5).zip(["cts", "sr_ack", "sr_nack", "ec_ack", "ec_nack"]) {
        let t = CtrlType::from_code(code).unwrap();
        assert_eq!((t.code(), t.name()), (code, name));
    }
    assert_eq!(CtrlType::from_code(0), None);
    assert_eq!(CtrlType::from_code(6), None);
}

// ---------------------------------------------------------------------------------------------
// Flor.

fn flor_split() -> impl Strategy<Value = ImmSplit> {
    (0u8..=1, 1u8..=20).prop_map(|(h, o)| ImmSplit(h, 32 - h - o, o))
}

proptest! {
    #[test]
    fn flor_write_immediates_round_trip(
        split in flor_split(), hint in any::<bool>(), mid in any::<u32>(), off in any::<u32>(),
        op in prop_oneof![Just(0x09u8), Just(0x0b), Just(0x29), Just(0x2b)],
        payload in proptest::collection::vec(any::<u8>(), 0..32),
    ) {
        let hint = hint && split.0 == 1;
        let (mid, off) = (mid & mask(split.1), off & mask(split.2));
        let imm = flor::imm(split, hint, mid, off);
        let mut r = RoceRepr::new(op, 0x44, 9).with_payload(&payload);
        r.immdt = Some(ImmDtRepr { imm });
        let params = Params { flor_split: split, ..Params::default() };
        let d = decode(frame(r), &opts(Profile::Flor, params));
        prop_assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let Ext::Flor(Flor::Write(w)) = d.ext else { panic!("{:?}", d.ext) };
        prop_assert_eq!((w.hint, w.mid, w.chunk_off, w.imm()), (hint, mid, off, imm));
        prop_assert_eq!(d.values("rocescope.flor.hint"), if split.0 == 0 { vec![] } else { vec![(hint as u8).to_string()] });
        prop_assert_eq!(d.one("rocescope.flor.mid"), mid.to_string());
        prop_assert_eq!(d.one("rocescope.flor.chunk_off"), off.to_string());
        prop_assert_eq!(d.one("rocescope.profile"), "flor");
    }
}

#[derive(Clone, Debug)]
enum Msg {
    Data { hint: bool, retx: bool, body: Vec<u8> },
    Retx { write_rn: u32, body: Vec<u8> },
    Addr(AddrRepr),
}

fn msg() -> impl Strategy<Value = Msg> {
    let body = || proptest::collection::vec(any::<u8>(), 0..64);
    prop_oneof![
        (any::<bool>(), any::<bool>(), body()).prop_map(|(hint, retx, body)| Msg::Data { hint, retx, body }),
        (any::<u32>(), body()).prop_map(|(write_rn, body)| Msg::Retx { write_rn, body }),
        (any::<u32>(), any::<u64>()).prop_map(|(mid, msg_len)| Msg::Addr(AddrRepr::Req { mid, msg_len })),
        (any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>())
            .prop_map(|(mid, r_key, va, buf_len)| Msg::Addr(AddrRepr::Resp { mid, r_key, va, buf_len })),
    ]
}

proptest! {
    #[test]
    fn flor_send_messages_round_trip(
        m in msg(), rn in any::<u32>(), gn in any::<u64>(),
        op in prop_oneof![Just(0x04u8), Just(0x05), Just(0x24), Just(0x25)], imm in any::<u32>(),
        first_cut in any::<prop::sample::Index>(),
    ) {
        let repr = match &m {
            Msg::Data { hint, retx, body } => {
                let mut s = SendRepr::data(rn, gn, *hint, body);
                if *retx {
                    s.header.flags |= flor::FLAG_RETX;
                }
                s
            }
            Msg::Retx { write_rn, body } => SendRepr::write_retx(rn, gn, *write_rn, body),
            Msg::Addr(a) => SendRepr::addr(rn, gn, *a),
        };
        let bytes = repr.to_vec();
        prop_assert_eq!(bytes.len(), repr.buffer_len());
        let mut r = RoceRepr::new(op, 0x45, 10).with_payload(&bytes);
        if op & 1 == 1 {
            r.immdt = Some(ImmDtRepr { imm });
        }
        let d = decode(frame(r), &DecodeOptions::with_profile(Profile::Flor));
        prop_assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let Ext::Flor(Flor::Send(h)) = d.ext else { panic!("{:?}", d.ext) };
        let hr: SendHeaderRepr = repr.header;
        prop_assert_eq!((h.kind.code(), h.flags, h.rn, h.gn, h.write_rn, h.body_len), (hr.kind, hr.flags, rn, gn, hr.write_rn, hr.body_len));
        prop_assert_eq!(d.one("rocescope.flor.send.type"), h.kind.name());
        prop_assert_eq!(d.one("rocescope.flor.hint"), (hr.flags >> 7).to_string());
        prop_assert_eq!(d.one("rocescope.flor.send.body_len"), (bytes.len() - 24).to_string());
        match &m {
            Msg::Data { .. } => prop_assert_eq!(h.kind, SendType::Data),
            Msg::Retx { write_rn, .. } => {
                prop_assert_eq!(h.kind, SendType::WriteRetx);
                let w = flor::WriteRn::from_imm(ImmSplit(1, 21, 10), *write_rn);
                prop_assert_eq!(d.one("rocescope.flor.mid"), w.mid.to_string());
                prop_assert_eq!(d.one("rocescope.flor.chunk_off"), w.chunk_off.to_string());
            }
            Msg::Addr(AddrRepr::Req { mid, msg_len }) => {
                prop_assert_eq!(h.addr(&bytes), Some(flor::Addr::Req { mid: *mid, msg_len: *msg_len }));
                prop_assert_eq!(d.one("rocescope.flor.addr.mid"), mid.to_string());
                prop_assert_eq!(d.one("rocescope.flor.addr.msg_len"), msg_len.to_string());
            }
            Msg::Addr(AddrRepr::Resp { mid, r_key, va, buf_len }) => {
                prop_assert_eq!(h.addr(&bytes), Some(flor::Addr::Resp { mid: *mid, r_key: *r_key, va: *va, buf_len: *buf_len }));
                prop_assert_eq!(d.one("rocescope.flor.addr.r_key"), r_key.to_string());
                prop_assert_eq!(d.one("rocescope.flor.addr.va"), va.to_string());
                prop_assert_eq!(d.one("rocescope.flor.addr.buf_len"), buf_len.to_string());
            }
        }
        for name in ["rocescope.flor.send.flags", "rocescope.flor.send.rn", "rocescope.flor.send.gn", "rocescope.flor.send.write_rn",
                     "rocescope.flor.send.body_len", "rocescope.flor.addr.mid", "rocescope.flor.addr.msg_len",
                     "rocescope.flor.addr.r_key", "rocescope.flor.addr.va", "rocescope.flor.addr.buf_len"] {
            d.ranges_hold(name);
        }
        // The first packet of a longer message (SEND First): the same header, no warning.
        if bytes.len() > 24 {
            let k = 24 + first_cut.index(bytes.len() - 24);
            let first = if op < 0x20 { 0x00 } else { 0x20 };
            let d = decode(frame(RoceRepr::new(first, 0x45, 10).with_payload(&bytes[..k])), &DecodeOptions::with_profile(Profile::Flor));
            prop_assert!(d.warnings.is_empty(), "{:?}", d.warnings);
            let Ext::Flor(Flor::Send(h2)) = d.ext else { panic!("{:?}", d.ext) };
            prop_assert_eq!((h2.kind, h2.rn, h2.gn, h2.body_len), (h.kind, h.rn, h.gn, h.body_len));
        }
        // A SEND Only holding less than the message is a warning; a snaplen cut is not.
        for k in 0..bytes.len() {
            let mut w = Warnings::default();
            let _ = flor::SendHeader::parse(&bytes[..k], k, true, ImmSplit(1, 21, 10), &mut w);
            prop_assert!(!w.is_empty(), "prefix {}", k);
            let mut w = Warnings::default();
            let _ = flor::SendHeader::parse(&bytes[..k], bytes.len(), true, ImmSplit(1, 21, 10), &mut w);
            prop_assert!(w.is_empty(), "cut {}", k);
        }
    }

    #[test]
    fn flor_acks_round_trip(
        entries in proptest::collection::vec(any::<u32>(), 1..=32), kinds in any::<u32>(),
        qpn in 0u32..0x100_0000, least_gn in any::<u64>(), delay_ns in any::<u64>(), write_polarity in any::<bool>(),
        q_key in any::<u32>(),
    ) {
        let set_means = if write_polarity { FlorAckSetMeans::Write } else { FlorAckSetMeans::Send };
        let is_send: Vec<bool> = (0..entries.len()).map(|i| kinds >> i & 1 == 1).collect();
        let bitmap = flor::ack_bitmap(is_send.iter().copied(), set_means);
        let repr = AckRepr { qpn, bitmap, least_gn, delay_ns, entries: &entries };
        let bytes = repr.to_vec();
        prop_assert_eq!(bytes.len(), 24 + 4 * entries.len());
        let mut r = RoceRepr::new(flor::OPCODE_ACK, 0x46, 11).with_payload(&bytes);
        r.deth = Some(DethRepr { q_key, src_qp: 0x47 });
        let params = Params { flor_ack_set_means: set_means, ..Params::default() };
        let d = decode(frame(r), &opts(Profile::Flor, params));
        prop_assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        let Ext::Flor(Flor::Ack(a)) = d.ext else { panic!("{:?}", d.ext) };
        prop_assert_eq!((a.qpn, a.bitmap, a.least_gn, a.delay_ns, a.count as usize), (qpn, bitmap, least_gn, delay_ns, entries.len()));
        let want: Vec<Acked> = entries.iter().zip(&is_send).map(|(&e, &s)| {
            if s { Acked::Send { gn: least_gn.wrapping_add(e as u64) } } else { Acked::Write { rn: e } }
        }).collect();
        prop_assert_eq!(a.acked(&bytes).collect::<Vec<_>>(), want.clone());
        prop_assert_eq!(d.values("rocescope.flor.ack.acked"), want.iter().map(|x| x.value().to_string()).collect::<Vec<_>>());
        prop_assert_eq!(d.one("rocescope.flor.ack.bitmap"), format!("{bitmap:08x}"));
        prop_assert_eq!(d.one("rocescope.flor.ack.count"), entries.len().to_string());
        for name in ["rocescope.flor.ack.qpn", "rocescope.flor.ack.least_gn", "rocescope.flor.ack.delay_ns"] {
            d.ranges_hold(name);
        }
        // WRITE entries are held verbatim in their ranges.
        for ((v, r), s) in d.walk["rocescope.flor.ack.acked"].iter().zip(&is_send) {
            if !s {
                let held = d.data[r.clone()].iter().fold(0u64, |a, &b| a << 8 | b as u64);
                prop_assert_eq!(held.to_string(), v.clone());
            }
        }
        // Any other length is a warning.
        for extra in [1usize, 2, 3] {
            let mut w = Warnings::default();
            let mut longer = bytes.clone();
            longer.extend(std::iter::repeat_n(0, extra));
            prop_assert!(flor::Ack::parse(&longer, longer.len(), set_means, &mut w).is_none());
            prop_assert_eq!(w.len(), 1);
        }
    }
}

#[test]
fn flor_ack_lengths_outside_1_to_32_entries_are_warnings() {
    for n in [0usize, 33, 40] {
        let entries = vec![0u32; n];
        let bytes = AckRepr { qpn: 1, bitmap: 0, least_gn: 0, delay_ns: 0, entries: &entries }.to_vec();
        let mut w = Warnings::default();
        assert!(flor::Ack::parse(&bytes, bytes.len(), FlorAckSetMeans::Send, &mut w).is_none());
        assert_eq!(w.iter().map(|w| w.to_string()).collect::<Vec<_>>(), ["Flor ACK: payload is not 24 + 4n bytes with 1 <= n <= 32"]);
    }
}

#[test]
fn send_type_codes_and_names() {
    for (code, name) in (1..=4).zip(["data", "write_retx", "addr_req", "addr_resp"]) {
        let t = SendType::from_code(code).unwrap();
        assert_eq!((t.code(), t.name()), (code, name));
    }
    assert_eq!(SendType::from_code(5), None);
}

// ---------------------------------------------------------------------------------------------
// Robustness.

proptest! {
    /// Random payloads on every opcode SDR or Flor reads, any split (even one that does not add
    /// up to 32), cut anywhere: no panic, and every field range lies within the captured frame.
    #[test]
    fn random_bytes_never_panic_and_ranges_stay_in_the_frame(
        op in prop_oneof![Just(0x00u8), Just(0x04), Just(0x05), Just(0x09), Just(0x0b), Just(0x20), Just(0x24),
                          Just(0x25), Just(0x29), Just(0x2b), Just(0x64)],
        head in prop_oneof![Just(vec![0x53u8, 1]), Just(vec![1u8]), Just(vec![])],
        kind in 0u8..7, body in proptest::collection::vec(any::<u8>(), 0..80),
        splits in (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()),
        cut in any::<prop::sample::Index>(), sdr_profile in any::<bool>(),
    ) {
        let mut payload = head.clone();
        payload.push(kind);
        payload.extend(&body);
        let mut r = RoceRepr::new(op, 0x48, 12).with_payload(&payload);
        if let Some(i) = r.immdt.as_mut() {
            i.imm = u32::from_be_bytes([body.first().copied().unwrap_or(0), kind, 3, 4]);
        }
        let data = frame(r);
        let (a, b, c, d, e, f) = splits;
        let params = Params { sdr_split: ImmSplit(a % 40, b % 40, c % 40), flor_split: ImmSplit(d % 40, e % 40, f % 40), ..Params::default() };
        let o = opts(if sdr_profile { Profile::Sdr } else { Profile::Flor }, params);
        let k = 54 + cut.index(data.len() - 53);
        let fr = Frame::parse(LinkType::Ethernet, &data[..k], data.len(), &o);
        fr.visit(|_, _, r| assert!(r.end <= k && r.start <= r.end, "{r:?} beyond {k}"));
        let mut t = SdrTracker::new();
        let _ = t.observe_frame(1, &params, &fr);
    }
}
