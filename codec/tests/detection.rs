//! Profile choice (WIRE.md part B, "Detection rules"): `auto` decides a flow when one of its
//! packets identifies itself; `decode` alone labels each packet with what is known when it
//! arrives, a detection pass (`observe` + `settle`) or held-back frames (`decode_step`) label
//! every packet with its flow's final profile; ordinary traffic marked DSCP 26 is not taken for
//! DCP; `--map` selectors and fixed profiles decide without detection.

use rocescope_codec::build::{header_only, FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice, Selector, PATIENCE};
use rocescope_codec::ib::{DcpethRepr, RethRepr};
use rocescope_codec::{IcrcStatus, LinkType, Profile};

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

fn net(tos: u8) -> NetRepr {
    NetRepr::Ipv4 { src: A, dst: B, tos, ttl: 64, ident: 0 }
}

/// A 3-packet RDMA WRITE (First, Middle, Last) of `len`-byte packets, standard layout.
fn std_write(tos: u8, qp: u32, psn: u32, payload: &[u8]) -> Vec<Vec<u8>> {
    let mut first = RoceRepr::new(0x06, qp, psn).with_payload(payload);
    first.reth = Some(RethRepr { va: 0x10000, r_key: 5, dma_len: 3 * payload.len() as u32 });
    vec![
        FrameRepr::new(net(tos), first).to_vec(),
        FrameRepr::new(net(tos), RoceRepr::new(0x07, qp, psn + 1).with_payload(payload)).to_vec(),
        FrameRepr::new(net(tos), RoceRepr::new(0x08, qp, psn + 2).with_payload(payload)).to_vec(),
    ]
}

/// The same WRITE as DCP sends it: DCPETH and a RETH (with that packet's VA) in every packet.
fn dcp_write(qp: u32, psn: u32, msn: u32, payload: &[u8]) -> Vec<Vec<u8>> {
    (0..3u32)
        .map(|i| {
            let mut r = RoceRepr::new_dcp([0x06, 0x07, 0x08][i as usize], qp, psn + i).with_payload(payload);
            r.dcpeth = Some(DcpethRepr { msn, sretryno: 0 });
            r.reth = Some(RethRepr { va: 0x10000 + (i * payload.len() as u32) as u64, r_key: 5, dma_len: 3 * payload.len() as u32 });
            FrameRepr::new(net(0x68), r).to_vec()
        })
        .collect()
}

fn run(d: &mut Decoder, frames: &[Vec<u8>]) -> Vec<(Profile, usize)> {
    frames
        .iter()
        .map(|f| {
            let x = d.decode(LinkType::Ethernet, f, f.len());
            (x.frame.profile(), x.warning_count())
        })
        .collect()
}

fn auto() -> Decoder {
    Decoder::new(DecoderOptions::default())
}

#[test]
fn ordinary_dscp26_write_traffic_is_never_dcp_and_raises_no_warning() {
    let mut d = auto();
    let mut frames = vec![];
    for (i, payload) in [vec![0u8; 1024], vec![0xa5; 1024], (0..=255u8).cycle().take(1024).collect()].iter().enumerate() {
        frames.extend(std_write(0x68, 0x100 + i as u32, 1000, payload));
        frames.extend(std_write(0x6c, 0x200 + i as u32, 1000, payload)); // DSCP 27
    }
    for (p, w) in run(&mut d, &frames) {
        assert_eq!((p, w), (Profile::Std, 0));
    }
    assert_eq!(d.stats().flows_unsure, 0);
}

#[test]
fn dcp_write_is_detected_at_its_middle_packet_and_never_relabelled_before() {
    let mut d = auto();
    let mut frames = dcp_write(0x12, 50, 7, &[0x11; 512]);
    frames.extend(dcp_write(0x12, 53, 8, &[0x22; 512]));
    let got = run(&mut d, &frames);
    assert_eq!(got[0], (Profile::Std, 0), "the First arrives before anything confirms DCP");
    assert!(got[1..].iter().all(|&g| g == (Profile::Dcp, 0)), "{got:?}");
    assert_eq!(d.stats().flows_detected, 1);
}

#[test]
fn a_header_only_packet_identifies_dcp_at_once() {
    let mut d = auto();
    let data = dcp_write(0x12, 50, 7, &[0x11; 512]);
    let ho = header_only(LinkType::Ethernet, &data[1], 2).unwrap();
    assert_eq!(ho.len(), 57);
    let got = run(&mut d, &[ho, data[2].clone()]);
    assert_eq!(got, [(Profile::Dcp, 0), (Profile::Dcp, 0)]);
}

#[test]
fn checksums_for_detection_only_labels_as_full_verification_does() {
    // A header-only packet (BTH + 3 bytes, no ICRC) identifies DCP only without problems: with
    // its IPv4 header checksum (Ethernet 14 + IPv4 offset 10) corrupted it is no evidence, and
    // the Last that follows (no First seen) none either.
    let data = dcp_write(0x12, 50, 7, &[0x11; 512]);
    let mut bad_ho = header_only(LinkType::Ethernet, &data[1], 2).unwrap();
    bad_ho[24] ^= 0xff;
    let good_ho = header_only(LinkType::Ethernet, &data[1], 2).unwrap();
    let profiles = |d: &mut Decoder, frames: &[Vec<u8>]| run(d, frames).into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    let bad = [bad_ho, data[2].clone()];
    let good = [good_ho, data[2].clone()];
    assert_eq!(profiles(&mut auto(), &bad), [Profile::Std, Profile::Std]);
    assert_eq!(profiles(&mut auto().checksums_for_detection_only(), &bad), [Profile::Std, Profile::Std]);
    assert_eq!(profiles(&mut auto(), &good), [Profile::Dcp, Profile::Dcp]);
    assert_eq!(profiles(&mut auto().checksums_for_detection_only(), &good), [Profile::Dcp, Profile::Dcp]);
    // Packets no rule compares are not verified: the corrupted ICRC goes unnoticed.
    let mut plain = std_write(0, 0x40, 9, &[0x22; 256]).remove(0);
    *plain.last_mut().unwrap() ^= 0xff;
    let mut lazy = auto().checksums_for_detection_only();
    let x = lazy.decode(LinkType::Ethernet, &plain, plain.len());
    assert_eq!((x.frame.icrc_status(), x.warning_count()), (IcrcStatus::Unchecked, 0));
    let mut full = auto();
    let x = full.decode(LinkType::Ethernet, &plain, plain.len());
    assert_eq!((x.frame.icrc_status(), x.warning_count()), (IcrcStatus::Bad, 1));
}

/// A NetRT retransmission request (B.4) from B for QP 0x12's PSN 0x102, with `tos`.
fn netrt_request(tos: u8) -> Vec<u8> {
    let mut body = vec![1u8, 0, 1, 2];
    body.extend([0u8; 15]);
    body.push(0x0b);
    let mut req = RoceRepr::new(0xc0, 0x12, 0x102);
    req.payload = &body;
    FrameRepr::new(NetRepr::Ipv4 { src: B, dst: A, tos, ttl: 64, ident: 0 }, req).to_vec()
}

#[test]
fn a_netrt_request_labels_the_flow_it_serves() {
    let mut d = auto();
    let data = FrameRepr::new(net(0x68), RoceRepr::new(0x07, 0x12, 0x102).with_payload(&[1; 64])).to_vec();
    let got = run(&mut d, &[data.clone(), netrt_request(0x68), data]);
    assert_eq!(got, [(Profile::Std, 0), (Profile::Netrt, 0), (Profile::Netrt, 0)]);
}

#[test]
fn a_plain_flow_labelled_from_the_other_side_is_given_out_with_its_label() {
    // Untagged data (ToS 0): no rule looks at it, and while every flow's state is plain the
    // decoder gives such a frame out without looking its flow up. A NetRT request from the
    // other side labels the flow: from then on its frames are looked up, and NetRT.
    let mut d = auto();
    let data = FrameRepr::new(net(0), RoceRepr::new(0x07, 0x12, 0x102).with_payload(&[1; 64])).to_vec();
    let got = run(&mut d, &[data.clone(), data.clone(), netrt_request(0), data.clone(), data]);
    let (std, netrt) = ((Profile::Std, 0), (Profile::Netrt, 0));
    assert_eq!(got, [std, std, netrt, netrt, netrt]);
}

#[test]
fn send_only_dscp26_flows_are_reported_once_when_nothing_decides() {
    let mut d = auto();
    let frames: Vec<Vec<u8>> = (0..PATIENCE as u32 + 20)
        .map(|i| FrameRepr::new(net(0x68), RoceRepr::new(0x04, 0x33, i).with_payload(&[9; 100])).to_vec())
        .collect();
    let got = run(&mut d, &frames);
    let warned: Vec<usize> = got.iter().enumerate().filter(|(_, g)| g.1 > 0).map(|(i, _)| i).collect();
    assert_eq!(warned, [PATIENCE as usize - 1], "in one pass, once the flow is given up on");
    assert!(got.iter().all(|g| g.0 == Profile::Std));
    assert_eq!(d.stats().flows_unsure, 1);
}

#[test]
fn maps_and_fixed_profiles_decide_without_detection() {
    let frames = dcp_write(0x12, 50, 7, &[0x11; 512]);
    let mut d = Decoder::new(DecoderOptions {
        maps: vec![(Selector::parse("qpn=0x12").unwrap(), Profile::Dcp)],
        ..Default::default()
    });
    assert_eq!(run(&mut d, &frames), [(Profile::Dcp, 0); 3]);
    let mut d = Decoder::new(DecoderOptions { profile: ProfileChoice::Fixed(Profile::Dcp), ..Default::default() });
    assert_eq!(run(&mut d, &frames), [(Profile::Dcp, 0); 3]);
    // A fixed profile leaves packets it does not apply to std, without warnings.
    let plain = std_write(0x60, 0x40, 1, &[3; 100]);
    assert_eq!(run(&mut d, &plain), [(Profile::Std, 0); 3]);
    let mut d = Decoder::new(DecoderOptions {
        maps: vec![(Selector::parse("ip=10.0.0.2-10.0.0.1").unwrap(), Profile::Dcp)],
        profile: ProfileChoice::Fixed(Profile::Std),
        ..Default::default()
    });
    assert_eq!(run(&mut d, &frames), [(Profile::Dcp, 0); 3]);
}

#[test]
fn selectors_parse_as_documented() {
    assert_eq!(Selector::parse("qpn=0x12"), Ok(Selector::Qpn(0x12)));
    assert_eq!(Selector::parse("qpn=18"), Ok(Selector::Qpn(18)));
    assert_eq!(Selector::parse("udp=4791"), Ok(Selector::UdpPort(4791)));
    assert!(Selector::parse("qpn=0x1000000").is_err());
    assert!(Selector::parse("mac=1").is_err());
    assert!(Selector::parse("ip=10.0.0.1").is_err());
}

#[test]
fn erd_data_and_its_nack_stream_are_detected_and_reassembled() {
    use rocescope_codec::build::TcpFrameRepr;
    use rocescope_codec::ext::erd::{EethRepr, NackEntry, NackRepr};
    use rocescope_codec::ib::DethRepr;
    let mut d = auto();
    // A UD SEND Only whose payload starts with an EETH whose S_Len matches.
    let mut payload = EethRepr { ty: 1, last: true, msg_id: 9, s_len: 100, s_offset: 4096 }.to_bytes().to_vec();
    payload.extend([7u8; 100]);
    let mut ud = RoceRepr::new(0x64, 0x77, 5).with_payload(&payload);
    ud.deth = Some(DethRepr { q_key: 0x1111, src_qp: 0x66 });
    let data = FrameRepr::new(net(0x60), ud).to_vec();
    let x = d.decode(LinkType::Ethernet, &data, data.len());
    assert_eq!((x.frame.profile(), x.warning_count()), (Profile::Erd, 0));
    // Two NACK messages sent as two segments cut in the middle of the second message's entry.
    let e1 = [NackEntry { src_qpn: 0x66, dst_qpn: 0x77, psn: 5 }];
    let e2 = [NackEntry { src_qpn: 0x66, dst_qpn: 0x77, psn: 8 }, NackEntry { src_qpn: 0x66, dst_qpn: 0x77, psn: 9 }];
    let mut stream = NackRepr::new(&e1).to_vec();
    stream.extend(NackRepr::new(&e2).to_vec());
    let cut = 16 + 4 + 6;
    let seg = |seq: u32, bytes: &[u8]| TcpFrameRepr::new(NetRepr::ipv4(B, A), 40000, 4792, seq, bytes).to_vec();
    let s1 = seg(1000, &stream[..cut]);
    let s2 = seg(1000 + cut as u32, &stream[cut..]);
    let mut fields = |frame: &[u8]| {
        let x = d.decode(LinkType::Ethernet, frame, frame.len());
        let mut v: Vec<(String, String)> = vec![];
        x.visit(|id, val, _| {
            if id.name().starts_with("rocescope.erd") || id.name() == "rocescope.profile" || id.name() == "rocescope.warning" {
                v.push((id.name().to_string(), val.to_string()));
            }
        });
        v
    };
    let f1 = fields(&s1);
    let f2 = fields(&s2);
    let psns = |v: &[(String, String)]| v.iter().filter(|(k, _)| k == "rocescope.erd.nack.psn").map(|(_, x)| x.clone()).collect::<Vec<_>>();
    assert_eq!(psns(&f1), ["5"], "the first message ends in the first segment: {f1:?}");
    assert_eq!(psns(&f2), ["8", "9"], "the second ends in the second: {f2:?}");
    assert!(f2.contains(&("rocescope.erd.nack.count".into(), "2".into())));
    assert!(f1.contains(&("rocescope.profile".into(), "erd".into())));
    assert!(!f1.iter().chain(&f2).any(|(k, _)| k == "rocescope.warning"));
}

// ---- look-ahead (WIRE.md B: "Detection may look ahead") ----

/// Every frame through a detection pass, then decoded: (profile, warnings) per frame.
fn two_pass(d: &mut Decoder, frames: &[Vec<u8>]) -> Vec<(Profile, usize)> {
    for f in frames {
        d.observe(LinkType::Ethernet, f, f.len());
    }
    d.settle();
    run(d, frames)
}

#[test]
fn a_detection_pass_labels_a_dcp_flow_from_its_first_packet() {
    let mut frames = dcp_write(0x12, 50, 7, &[0x11; 512]);
    frames.extend(dcp_write(0x12, 53, 8, &[0x22; 512]));
    let mut d = auto();
    assert_eq!(two_pass(&mut d, &frames), [(Profile::Dcp, 0); 6]);
    let s = d.stats();
    assert_eq!((s.flows_detected, s.packets[Profile::Dcp as usize], s.packets_early), (1, 6, 0), "counts are of the second pass");
    // Single pass: the First goes out std, and is counted as given out before its flow was known.
    let mut d = auto();
    assert_eq!(run(&mut d, &frames)[0], (Profile::Std, 0));
    assert_eq!(d.stats().packets_early, 1);
}

#[test]
fn decode_step_holds_the_first_packet_until_the_middle_decides() {
    let frames = dcp_write(0x12, 50, 7, &[0x11; 512]);
    let mut d = auto();
    let Err(flow) = d.decode_step(LinkType::Ethernet, &frames[0], frames[0].len(), |_| ()) else { panic!("the First is held") };
    assert!(d.is_pending(flow));
    assert_eq!(d.observe(LinkType::Ethernet, &frames[1], frames[1].len()), None, "the Middle decides: nothing to wait for");
    assert!(!d.is_pending(flow));
    let x = d.emit(LinkType::Ethernet, &frames[0], frames[0].len());
    assert_eq!((x.frame.profile(), x.frame.roce().unwrap().reth().unwrap().dma_len()), (Profile::Dcp, 3 * 512));
    // The Middle, already observed, is given out with emit too.
    assert_eq!(d.emit(LinkType::Ethernet, &frames[1], frames[1].len()).frame.profile(), Profile::Dcp);
    // Once decided, frames are Ready at once.
    assert_eq!(d.decode_step(LinkType::Ethernet, &frames[2], frames[2].len(), |x| x.frame.profile()), Ok(Profile::Dcp));
}

#[test]
fn a_detection_pass_flags_an_undecided_flow_on_its_first_packet_and_a_few_tags_not_at_all() {
    let sends = |qp: u32, n: u32| -> Vec<Vec<u8>> {
        (0..n).map(|i| FrameRepr::new(net(0x68), RoceRepr::new(0x04, qp, i).with_payload(&[9; 100])).to_vec()).collect()
    };
    // 20 tagged SEND Only packets: nothing confirms or refutes DCP; flagged once, on the first.
    let mut d = auto();
    let got = two_pass(&mut d, &sends(0x33, 20));
    assert_eq!(got[0], (Profile::Std, 1));
    assert!(got[1..].iter().all(|&g| g == (Profile::Std, 0)));
    assert_eq!((d.stats().flows_unsure, d.stats().packets_unsure), (1, 20));
    // 3 such packets are too little evidence to flag (ordinary RoCE is marked DSCP 26).
    let mut d = auto();
    assert_eq!(two_pass(&mut d, &sends(0x34, 3)), [(Profile::Std, 0); 3]);
    assert_eq!(d.stats().flows_unsure, 0);
    // In one pass with held frames, the same: the held packets are released when the flow is
    // concluded at the end.
    let mut d = auto();
    let f = sends(0x34, 3);
    assert!(d.decode_step(LinkType::Ethernet, &f[0], f[0].len(), |_| ()).is_err());
    assert!(d.observe(LinkType::Ethernet, &f[1], f[1].len()).is_some());
    d.give_up_pending();
    assert_eq!(d.emit(LinkType::Ethernet, &f[0], f[0].len()).warning_count(), 0);
}

/// A UD SEND Only between A and B (or back) with `payload`.
fn ud_send(from_a: bool, qp: u32, psn: u32, payload: &[u8]) -> Vec<u8> {
    let (src, dst) = if from_a { (A, B) } else { (B, A) };
    let n = NetRepr::Ipv4 { src, dst, tos: 0, ttl: 64, ident: 0 };
    FrameRepr::new(n, RoceRepr::new(0x64, qp, psn).with_payload(payload)).to_vec()
}

#[test]
fn an_erd_datagram_shaped_like_a_flor_ack_is_erd_unless_the_hosts_exchange_write_with_immediate() {
    use rocescope_codec::ext::{erd, flor};
    // An EETH-led payload of 24 + 4n bytes that is also a well-formed Flor ACK (WIRE.md B.3's
    // layout: QPN top byte 0, no bitmap bit beyond entry n).
    let payload = (1..=32usize)
        .map(|n| {
            let s_len = (12 + 4 * n) as u16;
            let mut p = erd::EethRepr { ty: 0, last: false, msg_id: 0, s_len, s_offset: 0 }.to_bytes().to_vec();
            p.resize(24 + 4 * n, 0);
            p
        })
        .find(|p| flor::is_ack(p, p.len()))
        .expect("some ERD datagram is ACK-shaped");
    let dgram = ud_send(true, 0x600, 20, &payload);
    let pkt = rocescope_codec::Frame::parse(LinkType::Ethernet, &dgram, dgram.len(), &Default::default());
    assert!(erd::detect(pkt.roce().unwrap()), "the ERD rule matches it");
    // Only ERD between the two hosts: it is ERD, with no ambiguity warning.
    let frames = vec![dgram.clone(), ud_send(true, 0x600, 21, &payload)];
    assert_eq!(two_pass(&mut auto(), &frames), [(Profile::Erd, 0); 2]);
    // Once the two hosts exchange RDMA WRITE with Immediate, an ACK-shaped datagram (on another
    // QP) matches the Flor ACK rule too: ambiguous, std, flagged.
    let mut w = RoceRepr::new(0x0b, 0x700, 5).with_payload(&[1; 64]);
    w.reth = Some(RethRepr { va: 0x1000, r_key: 1, dma_len: 64 });
    let write_imm = FrameRepr::new(net(0), w).to_vec();
    let frames = vec![write_imm, ud_send(false, 0x601, 1, &payload)];
    let got = two_pass(&mut auto(), &frames);
    assert_eq!(got[1], (Profile::Std, 1), "{got:?}");
}

#[test]
fn a_dcp_ack_is_dcp_once_its_data_flow_is() {
    // The responder's RC Acknowledge, tagged 01 (ToS bits 3..2), its AETH MSN the eMSN.
    let ack = |tos: u8| {
        let back = NetRepr::Ipv4 { src: B, dst: A, tos, ttl: 64, ident: 0 };
        FrameRepr::new(back, RoceRepr::new(0x11, 0x99, 52)).to_vec()
    };
    let mut frames = dcp_write(0x12, 50, 7, &[0x11; 512]);
    frames.push(ack(0x04));
    let got = two_pass(&mut auto(), &frames);
    assert_eq!(got, [(Profile::Dcp, 0); 4]);
    let mut d = auto();
    for f in &frames {
        d.observe(LinkType::Ethernet, f, f.len());
    }
    d.settle();
    let x = d.decode(LinkType::Ethernet, &frames[3], frames[3].len());
    let mut emsn = None;
    x.visit(|id, v, _| {
        if id.name() == "rocescope.dcp.emsn" {
            emsn = Some(v.to_string());
        }
    });
    assert_eq!(emsn.as_deref(), Some("0"), "the AETH MSN read as the eMSN");
    // Without DCP data the other way, an ACK tag alone decides nothing.
    assert_eq!(two_pass(&mut auto(), &[ack(0x04)]), [(Profile::Std, 0)]);
}
