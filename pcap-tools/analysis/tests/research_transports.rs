//! The research transports' loss signals in the timeline (docs/analysis.md, "Research
//! transports"): small captures built frame by frame with the codec's builders, each with a few
//! messages, losses, the transport's signal and the repairs; every expected value below is
//! derived by hand from the frames written (frame numbers count from 1, frame n is written at
//! `T0 + n µs`).

use std::path::PathBuf;

use rocescope_analysis::analyze::report::{Evidence, FlowTimeline, Repair, Signal, Tap, TimelineReport};
use rocescope_analysis::capture::CaptureWriter;
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr, TcpFrameRepr};
use rocescope_codec::ext::erd::{EethRepr, NackEntry, NackRepr};
use rocescope_codec::ib::{AethRepr, DethRepr, Syndrome};

#[path = "common/timeline.rs"]
mod common_timeline;
use common_timeline::timeline;

const T0: u64 = 1_700_000_000_000_000_000;

fn t(frame: u64) -> u64 {
    T0 + frame * 1000
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rocescope-research-{}-{name}.pcapng", std::process::id()))
}

/// Writes `frames` (frame n at `t(n)`) on one interface and returns the timeline under `profile`.
fn timeline_of(name: &str, frames: &[Vec<u8>], profile: &str) -> TimelineReport {
    let path = tmp(name);
    {
        let out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        let mut w = CaptureWriter::new(out, &["tap"]).expect("writer");
        for (n, f) in frames.iter().enumerate() {
            w.write(0, t(n as u64 + 1), f).expect("write");
        }
    }
    let t = timeline(&path, profile);
    std::fs::remove_file(&path).ok();
    t
}


fn flow<'a>(t: &'a TimelineReport, id: &str) -> &'a FlowTimeline {
    let ids: Vec<&String> = t.flows.iter().map(|f| &f.id).collect();
    t.flows.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("flow {id} in {ids:?}"))
}

fn v4(src: u8, dst: u8, ttl: u8) -> NetRepr {
    NetRepr::Ipv4 { src: [10, 0, 0, src], dst: [10, 0, 0, dst], tos: 0x68, ttl, ident: 0 }
}

/// (psn, frame, signal, repair, evidence, message) of each loss.
type LossRow = (u32, u64, Signal, Repair, Evidence, Option<u64>);

fn losses(f: &FlowTimeline) -> Vec<LossRow> {
    f.losses.iter().map(|l| (l.psn, l.frame, l.signal, l.repair, l.evidence, l.message)).collect()
}

fn loss_times_match(f: &FlowTimeline) {
    for l in &f.losses {
        assert_eq!(l.time_ns.0, t(l.frame), "loss of {} at frame {}", l.psn, l.frame);
    }
}

/// NetRT at a fabric tap (every frame routed: TTL 62, so no host is tapped). The sender
/// 10.0.0.1 sends SENDs to 10.0.0.2 on DestQP 17; the receiver acknowledges on DestQP 34; the
/// destination ToR's requests travel 10.0.0.2 → 10.0.0.1 at DestQP 17, the source ToR's
/// unfulfilled request 10.0.0.1 → 10.0.0.2. The frames are listed, numbered, in the test.
#[test]
fn netrt_requests_are_losses_repaired_in_network_or_by_the_end_host() {
    let payload = [0x21u8; 256];
    let data = |op: u8, psn: u32, mark: bool| {
        let mut r = RoceRepr::new(op, 17, psn).with_payload(&payload);
        r.bth.resv6 = mark as u8;
        FrameRepr::new(v4(1, 2, 62), r).to_vec()
    };
    let request = |epsn: u32, bitmap: u8| {
        let mut body = vec![1u8, (epsn >> 16) as u8, (epsn >> 8) as u8, epsn as u8];
        body.extend([0u8; 15]);
        body.push(bitmap);
        let mut r = RoceRepr::new(0xc0, 17, epsn);
        r.payload = &body;
        FrameRepr::new(v4(2, 1, 62), r).to_vec()
    };
    let ack = |psn: u32, syndrome: Syndrome| {
        let mut r = RoceRepr::new(0x11, 34, psn);
        r.aeth = Some(AethRepr { syndrome, msn: 0 });
        FrameRepr::new(v4(2, 1, 62), r).to_vec()
    };
    let unfulfilled = |psn: u32| {
        let body = [2u8, (psn >> 16) as u8, (psn >> 8) as u8, psn as u8];
        let mut r = RoceRepr::new(0xc0, 17, psn);
        r.payload = &body;
        FrameRepr::new(v4(1, 2, 62), r).to_vec()
    };
    let frames = vec![
        data(0x04, 100, false),                     // 1  message 0
        data(0x00, 101, false),                     // 2  message 1
        data(0x01, 102, false),                     // 3  lost after the tap
        data(0x02, 103, false),                     // 4
        data(0x04, 105, false),                     // 5  message 3 (104 lost before the tap)
        request(102, 0b101),                        // 6  asks for 102 and 104
        data(0x01, 102, false),                     // 7  the switch's copy (unmarked)
        data(0x04, 104, true),                      // 8  the switch's copy (marked), message 2
        ack(105, Syndrome::Ack { credit: 31 }),     // 9  covers 100-105
        data(0x04, 106, false),                     // 10 message 4, lost after the tap
        data(0x04, 107, false),                     // 11 message 5
        request(106, 0b1),                          // 12 asks for 106
        unfulfilled(106),                           // 13 the source ToR cannot
        ack(106, Syndrome::Nak { code: 0 }),        // 14 the receiver's Go-Back-N NAK
        data(0x04, 106, false),                     // 15 the sender's copy
        data(0x04, 107, false),                     // 16 Go-Back-N resends 107 too
        ack(107, Syndrome::Ack { credit: 31 }),     // 17 covers 106-107
    ];
    let tl = timeline_of("netrt", &frames, "netrt");
    let d = flow(&tl, "10.0.0.1>10.0.0.2/17");
    assert_eq!(d.tap, Tap::Fabric);
    assert_eq!(d.peer.as_deref(), Some("10.0.0.2>10.0.0.1/34"));
    let use_ = (Signal::NetrtRequest, Evidence::AskedFor);
    assert_eq!(
        losses(d),
        vec![
            // 102: its copy at frame 3 was lost after the tap; the request asked for it and the
            // next copy (7) came with no unfulfilled request or NAK between: the switch's.
            (102, 3, use_.0, Repair::InNetwork, use_.1, Some(1)),
            // 104: never seen before its marked copy (8): lost before the tap.
            (104, 8, use_.0, Repair::InNetwork, use_.1, Some(2)),
            // 106: copy 10 lost; unfulfilled (13) and a NAK (14) before the copy 15: the host's.
            (106, 10, use_.0, Repair::EndHost, use_.1, Some(4)),
        ]
    );
    loss_times_match(d);
    let retx: Vec<_> =
        d.retransmissions.iter().map(|r| (r.psn, r.frame, r.trigger, r.spurious, r.cause, r.copy, r.message)).collect();
    use rocescope_analysis::analyze::report::Cause;
    assert_eq!(
        retx,
        vec![
            (102, 7, Signal::NetrtRequest, Some(false), Cause::Loss, 1, Some(1)),
            (106, 15, Signal::NetrtRequest, Some(false), Cause::Loss, 1, Some(4)),
            // Go-Back-N's resend of 107 (seen at frame 11): nothing asked for it; at a fabric
            // tap its trigger and whether it was needed are unknown.
            (107, 16, Signal::Unknown, None, Cause::Unknown, 1, Some(5)),
        ]
    );
    for r in &d.retransmissions {
        assert_eq!(r.time_ns.0, t(r.frame));
    }
    let msgs: Vec<_> = d
        .messages
        .iter()
        .map(|m| (m.index, m.first_psn, m.last_psn, m.first_frame, m.last_frame, m.complete_frame, m.retransmitted))
        .collect();
    assert_eq!(
        msgs,
        vec![
            (0, 100, Some(100), 1, 1, Some(9), 0),
            (1, 101, Some(103), 2, 7, Some(9), 1),
            (2, 104, Some(104), 8, 8, Some(9), 0),
            (3, 105, Some(105), 5, 5, Some(9), 0),
            (4, 106, Some(106), 10, 15, Some(17), 1),
            (5, 107, Some(107), 11, 16, Some(17), 1),
        ]
    );
    assert_eq!(d.messages[1].latency_ns, Some(t(9) - t(2)));
    assert_eq!(d.messages[1].complete_time_ns.map(|n| n.0), Some(t(9)));
    // The requests are a control flow serving the data flow.
    let c = flow(&tl, "10.0.0.2>10.0.0.1/17");
    assert_eq!(c.serves.as_deref(), Some("10.0.0.1>10.0.0.2/17"));
    assert!(c.losses.is_empty() && c.messages.is_empty() && c.retransmissions.is_empty());
    assert_eq!(tl.flows.len(), 3);
}

/// An ERD data packet: UD SEND Only from 10.0.0.3 (source QPN 0x44) to 10.0.0.4's QPN 0x33,
/// 512 bytes of a message after its 12-byte EETH.
fn erd_data(psn: u32, msg_id: u16, piece: u32, last: bool, ttl: u8) -> Vec<u8> {
    let mut payload = EethRepr { ty: 1, last, msg_id, s_len: 512, s_offset: piece * 512 }.to_bytes().to_vec();
    payload.extend([0x44u8; 512]);
    let mut r = RoceRepr::new(0x64, 0x33, psn).with_payload(&payload);
    r.deth = Some(DethRepr { q_key: 0x1111, src_qp: 0x44 });
    FrameRepr::new(v4(3, 4, ttl), r).to_vec()
}

/// A NACK message naming `psns` of that pair, sent by the receiver 10.0.0.4 to the sender's
/// NACK port 4792 over TCP (`seq`: the stream's position).
fn erd_nack(psns: &[u32], seq: u32, ttl: u8) -> (Vec<u8>, u32) {
    let entries: Vec<NackEntry> = psns.iter().map(|&psn| NackEntry { src_qpn: 0x44, dst_qpn: 0x33, psn }).collect();
    let stream = NackRepr::new(&entries).to_vec();
    let net = NetRepr::Ipv4 { src: [10, 0, 0, 4], dst: [10, 0, 0, 3], tos: 0, ttl, ident: 0 };
    (TcpFrameRepr::new(net, 50000, 4792, seq, &stream).to_vec(), seq + stream.len() as u32)
}

/// ERD at the sender's tap (its data leave with TTL 64; the NACKs arrive routed, TTL 62).
/// Message 1 is PSNs 10-12, message 2 PSNs 13-14.
#[test]
fn erd_nacks_at_the_sender_are_losses_repaired_by_the_end_host() {
    let (nack1, seq) = erd_nack(&[11, 14], 1, 62);
    let (nack2, _) = erd_nack(&[14], seq, 62);
    let frames = vec![
        erd_data(10, 1, 0, false, 64), // 1  message 0
        erd_data(11, 1, 1, false, 64), // 2  lost
        erd_data(12, 1, 2, true, 64),  // 3
        erd_data(13, 2, 0, false, 64), // 4  message 1
        erd_data(14, 2, 1, true, 64),  // 5  lost
        nack1,                         // 6  NACK 11, 14
        erd_data(11, 1, 1, false, 64), // 7  resent
        erd_data(14, 2, 1, true, 64),  // 8  resent, lost again
        nack2,                         // 9  NACK 14
        erd_data(14, 2, 1, true, 64),  // 10 resent
    ];
    let tl = timeline_of("erd-sender", &frames, "erd");
    assert_eq!(tl.flows.len(), 1, "the NACKs are no RoCE flow");
    let d = flow(&tl, "10.0.0.3>10.0.0.4/51");
    assert_eq!(d.tap, Tap::Sender);
    assert_eq!(d.profile, "erd");
    let e = (Signal::ErdNack, Repair::EndHost, Evidence::AskedFor);
    assert_eq!(
        losses(d),
        vec![(11, 2, e.0, e.1, e.2, Some(0)), (14, 5, e.0, e.1, e.2, Some(1)), (14, 8, e.0, e.1, e.2, Some(1))]
    );
    loss_times_match(d);
    use rocescope_analysis::analyze::report::Cause;
    let retx: Vec<_> =
        d.retransmissions.iter().map(|r| (r.psn, r.frame, r.trigger, r.spurious, r.cause, r.copy)).collect();
    assert_eq!(
        retx,
        vec![
            (11, 7, Signal::ErdNack, Some(false), Cause::Loss, 1),
            (14, 8, Signal::ErdNack, Some(false), Cause::Loss, 1),
            (14, 10, Signal::ErdNack, Some(false), Cause::Loss, 2),
        ]
    );
    // Messages from the EETH (First, Middle, Last); nothing acknowledges them at the sender.
    let msgs: Vec<_> = d
        .messages
        .iter()
        .map(|m| {
            (m.index, m.op, m.first_psn, m.last_psn, m.first_frame, m.last_frame, m.packets, m.retransmitted, m.bytes)
        })
        .collect();
    assert_eq!(
        msgs,
        vec![
            (0, "send", 10, Some(12), 1, 7, Some(3), 1, 3 * (12 + 512)),
            (1, "send", 13, Some(14), 4, 10, Some(2), 2, 2 * (12 + 512)),
        ]
    );
    assert!(d.messages.iter().all(|m| m.complete_frame.is_none() && m.latency_ns.is_none()));
}

/// ERD at the receiver's tap: its NACKs leave with TTL 64 (it is the tapped host), the data
/// arrive routed (TTL 62). 11 and 14 were lost upstream: the tap sees them only once resent.
#[test]
fn erd_at_the_receiver_completes_messages_at_their_last_missing_piece() {
    let (nack, _) = erd_nack(&[11, 14], 1, 64);
    let frames = vec![
        erd_data(10, 1, 0, false, 62), // 1  message 0
        erd_data(12, 1, 2, true, 62),  // 2
        erd_data(13, 2, 0, false, 62), // 3  message 1
        nack,                          // 4  NACK 11, 14
        erd_data(11, 1, 1, false, 62), // 5  message 0 whole
        erd_data(14, 2, 1, true, 62),  // 6  message 1 whole
    ];
    let tl = timeline_of("erd-receiver", &frames, "erd");
    let d = flow(&tl, "10.0.0.3>10.0.0.4/51");
    assert_eq!(d.tap, Tap::Receiver);
    assert_eq!(
        losses(d),
        vec![
            // 11 arrived after 12 and 13: a gap, which the NACK named.
            (11, 5, Signal::ErdNack, Repair::EndHost, Evidence::Gap, Some(0)),
            // 14 arrived above everything seen: the NACK is the only evidence.
            (14, 6, Signal::ErdNack, Repair::EndHost, Evidence::AskedFor, Some(1)),
        ]
    );
    loss_times_match(d);
    assert!(d.retransmissions.is_empty());
    let row = |m: &rocescope_analysis::analyze::report::Message| {
        (m.index, m.first_psn, m.last_psn, m.first_frame, m.last_frame, m.complete_frame)
    };
    let msgs: Vec<_> = d.messages.iter().map(row).collect();
    assert_eq!(msgs, vec![(0, 10, Some(12), 1, 5, Some(5)), (1, 13, Some(14), 3, 6, Some(6))]);
    assert_eq!(d.messages[0].latency_ns, Some(t(5) - t(1)));
    assert_eq!(d.messages[1].complete_time_ns.map(|n| n.0), Some(t(6)));
}

/// SDR at the sender's tap: 10.0.0.5 writes to 10.0.0.6 over two channel QPs (0x200 for even
/// packet offsets, 0x201 for odd ones; each QP's UC PSNs count from 0), 1024-byte packets; the
/// receiver's control messages come back on QP 0x300 (routed: TTL 62).
#[test]
fn sdr_bitmaps_are_losses_repaired_by_the_sender_and_acks_complete_messages() {
    use rocescope_analysis::analyze::report::Cause;
    use rocescope_codec::ext::sdr::{CtrlRepr, DataRepr};
    let params = rocescope_codec::Params::default();
    let payload = [0x33u8; 1024];
    let data = |msg_id: u32, off: u32, qp: u32, psn: u32| {
        let r = DataRepr::new(params.sdr_split, msg_id, off, 0).roce(&params, 1024, qp, psn, &payload);
        FrameRepr::new(v4(5, 6, 64), r).to_vec()
    };
    let ctrl = |c: CtrlRepr<'_>, psn: u32| {
        let body = c.to_vec();
        FrameRepr::new(v4(6, 5, 62), RoceRepr::new(0x24, 0x300, psn).with_payload(&body)).to_vec()
    };
    let frames = vec![
        data(5, 0, 0x200, 0),                                                          // 1  message 5
        data(5, 1, 0x201, 0),                                                          // 2  lost
        data(5, 2, 0x200, 1),                                                          // 3
        data(5, 3, 0x201, 1),                                                          // 4
        ctrl(CtrlRepr::SrAck { msg_seq: 5, cum_ack: 1, sack_bits: 8, sack: &[0b110] }, 0), // 5  2, 3 held: 1 missing
        data(5, 1, 0x201, 2),                                                          // 6  resent (timer)
        ctrl(CtrlRepr::SrAck { msg_seq: 5, cum_ack: 4, sack_bits: 0, sack: &[] }, 1),  // 7  all 4: complete
        data(6, 0, 0x200, 2),                                                          // 8  message 6
        data(6, 1, 0x201, 3),                                                          // 9  lost
        ctrl(CtrlRepr::SrNack { msg_seq: 6, indices: &[1] }, 2),                       // 10 chunk 1 missing
        data(6, 1, 0x200, 3),                                                          // 11 resent, other channel
        data(6, 0, 0x201, 4),                                                          // 12 resent by a timer
        ctrl(CtrlRepr::SrAck { msg_seq: 6, cum_ack: 2, sack_bits: 0, sack: &[] }, 3),  // 13 complete
        data(7, 0, 0x200, 4),                                                          // 14 message 7
        ctrl(CtrlRepr::EcAck { msg_seq: 7 }, 4),                                       // 15 complete
    ];
    let tl = timeline_of("sdr", &frames, "sdr");
    let (a, b) = (flow(&tl, "10.0.0.5>10.0.0.6/512"), flow(&tl, "10.0.0.5>10.0.0.6/513"));
    assert_eq!((a.tap, b.tap), (Tap::Sender, Tap::Sender));
    assert_eq!(flow(&tl, "10.0.0.6>10.0.0.5/768").serves.as_deref(), Some("10.0.0.5>10.0.0.6/512"));
    assert!(flow(&tl, "10.0.0.6>10.0.0.5/768").messages.is_empty(), "control messages are no messages");
    // Each event is in the flow (QP) of its frame; a message in the flow of its first frame
    // (QP 0x200), so events on QP 0x201 name no message.
    // A loss's signal is what made the sender resend it: frame 5's hole does not (selective
    // repeat's timer resends frame 2's packet, at this, the sender's tap: `timeout`); frame
    // 10's SR_NACK does (`sdr_bitmap`).
    let e = (Repair::EndHost, Evidence::AskedFor);
    assert!(losses(a).is_empty());
    assert_eq!(losses(b), vec![(0, 2, Signal::Timeout, e.0, e.1, None), (3, 9, Signal::SdrBitmap, e.0, e.1, None)]);
    loss_times_match(b);
    let retx = |f: &FlowTimeline| -> Vec<_> {
        f.retransmissions.iter().map(|r| (r.psn, r.frame, r.trigger, r.spurious, r.cause, r.copy, r.message)).collect()
    };
    assert_eq!(retx(a), vec![(3, 11, Signal::SdrBitmap, Some(false), Cause::Loss, 1, Some(1))]);
    assert_eq!(
        retx(b),
        vec![
            // Asked for by frame 5's hole (not spurious), resent by the timer.
            (2, 6, Signal::Timeout, Some(false), Cause::Timeout, 1, None),
            // Nothing asked for offset 0 of message 6: the sender's timer.
            (4, 12, Signal::Timeout, None, Cause::Unknown, 1, None),
        ]
    );
    let msgs: Vec<_> = a
        .messages
        .iter()
        .map(|m| {
            let done = m.complete_frame;
            (m.index, m.op, m.first_psn, m.first_frame, m.last_frame, done, m.packets, m.retransmitted, m.bytes)
        })
        .collect();
    assert_eq!(
        msgs,
        vec![
            (0, "write_imm", 0, 1, 6, Some(7), Some(4), 1, 4096),
            (1, "write_imm", 2, 8, 12, Some(13), Some(2), 2, 2048),
            (2, "write_imm", 4, 14, 14, Some(15), Some(1), 0, 1024),
        ]
    );
    assert_eq!(a.messages[0].latency_ns, Some(t(7) - t(1)));
    assert_eq!(a.messages[2].complete_time_ns.map(|n| n.0), Some(t(15)));
    assert!(b.messages.is_empty());
}

/// Flor at the sender's tap: 10.0.0.7 sends a large message's ADDR_REQ (message id 3, 12,288
/// bytes: three units), its UC WRITE chunks (with Immediate: offsets 0-2, 4096 bytes each) and
/// small SENDs to 10.0.0.8's QP 0x400 (PSNs 0-10, one per frame); the receiver's software ACKs
/// come back on UD QP 0x402 (routed: TTL 62). Every copy is one packet, so an ACK's gap names
/// its packet; messages are the user's: the large one (ADDR_REQ, chunks and the chunk's
/// WRITE_RETX) and each small one with its resend, in the order the tap met them.
#[test]
fn flor_ack_gaps_are_losses_and_acks_complete_messages() {
    use rocescope_analysis::analyze::report::Cause;
    use rocescope_codec::ext::flor::{ack_bitmap, imm, AckRepr, AddrRepr, SendRepr};
    use rocescope_codec::ib::{ImmDtRepr, RethRepr};
    let params = rocescope_codec::Params::default();
    let chunk = [0x77u8; 4096];
    let write = |psn: u32, off: u32, hint: bool| {
        let mut r = RoceRepr::new(0x2b, 0x400, psn).with_payload(&chunk);
        r.reth = Some(RethRepr { va: 0x7000_0000 + off as u64 * 4096, r_key: 0x99, dma_len: 4096 });
        r.immdt = Some(ImmDtRepr { imm: imm(params.flor_split, hint, 3, off) });
        FrameRepr::new(v4(7, 8, 64), r).to_vec()
    };
    let send = |psn: u32, s: SendRepr<'_>| {
        let body = s.to_vec();
        FrameRepr::new(v4(7, 8, 64), RoceRepr::new(0x24, 0x400, psn).with_payload(&body)).to_vec()
    };
    let resend = |psn: u32, rn: u32, gn: u64, body: &[u8]| {
        let mut s = SendRepr::data(rn, gn, false, body);
        s.header.flags |= 0x40; // retransmission of a SEND
        send(psn, s)
    };
    // `entries`: (value, is a SEND's global number offset from `least_gn`).
    let ack = |least_gn: u64, entries: &[(u32, bool)]| {
        let values: Vec<u32> = entries.iter().map(|e| e.0).collect();
        let bitmap = ack_bitmap(entries.iter().map(|e| e.1), params.flor_ack_set_means);
        let body = AckRepr { qpn: 0x400, bitmap, least_gn, delay_ns: 1000, entries: &values }.to_vec();
        let mut r = RoceRepr::new(0x64, 0x402, 1).with_payload(&body);
        r.deth = Some(DethRepr { q_key: 0x1234, src_qp: 0x403 });
        FrameRepr::new(v4(8, 7, 62), r).to_vec()
    };
    let rn = |off: u32, hint: bool| imm(params.flor_split, hint, 3, off);
    let frames = vec![
        send(0, SendRepr::addr(0, 0, AddrRepr::Req { mid: 3, msg_len: 12_288 })), // 1 message 0 (MID 3, GN 0)
        write(1, 0, false),                                                       // 2
        write(2, 1, false),                                                       // 3  lost
        write(3, 2, true),                                                        // 4
        send(4, SendRepr::data(1, 1, false, b"hello")),                           // 5  message 1 (RN 1, GN 1)
        ack(0, &[(rn(0, false), false), (rn(2, true), false), (0, true), (1, true)]), // 6 not chunk 1
        send(5, SendRepr::write_retx(2, 2, rn(1, false), &chunk)),                // 7  chunk 1 again (GN 2)
        send(6, SendRepr::data(3, 3, false, b"second")),                          // 8  message 2 (RN 3), lost
        send(7, SendRepr::data(4, 4, false, b"third")),                           // 9  message 3 (RN 4)
        ack(2, &[(0, true), (2, true)]),                                          // 10 GN 2, GN 4: not GN 3
        resend(8, 3, 5, b"second"),                                               // 11 RN 3 again (GN 5)
        send(9, SendRepr::data(5, 6, false, b"fourth")),                          // 12 message 4 (RN 5)
        resend(10, 5, 7, b"fourth"),                                              // 13 RN 5 again, no gap
        ack(5, &[(0, true), (2, true)]),                                          // 14 GN 5, GN 7
    ];
    let tl = timeline_of("flor", &frames, "flor");
    let d = flow(&tl, "10.0.0.7>10.0.0.8/1024");
    assert_eq!(d.tap, Tap::Sender);
    assert_eq!(flow(&tl, "10.0.0.8>10.0.0.7/1026").serves.as_deref(), Some("10.0.0.7>10.0.0.8/1024"));
    let e = (Signal::FlorAck, Repair::EndHost, Evidence::AskedFor);
    // (One-packet copies: a loss at the lost copy's own frame.)
    assert_eq!(losses(d), vec![(2, 3, e.0, e.1, e.2, Some(0)), (6, 8, e.0, e.1, e.2, Some(2))]);
    loss_times_match(d);
    let retx: Vec<_> =
        d.retransmissions.iter().map(|r| (r.psn, r.frame, r.trigger, r.spurious, r.cause, r.copy, r.message)).collect();
    assert_eq!(
        retx,
        vec![
            (5, 7, Signal::FlorAck, Some(false), Cause::Loss, 1, Some(0)),
            (8, 11, Signal::FlorAck, Some(false), Cause::Loss, 1, Some(2)),
            // No ACK listed a later copy before it: the sender's timer.
            (10, 13, Signal::Timeout, None, Cause::Unknown, 1, Some(4)),
        ]
    );
    let msgs: Vec<_> = d
        .messages
        .iter()
        .map(|m| (m.index, m.op, m.first_psn, m.first_frame, m.complete_frame, m.packets, m.retransmitted))
        .collect();
    assert_eq!(
        msgs,
        vec![
            // Its three units listed once the ACK at frame 10 lists the WRITE_RETX of unit 1.
            (0, "write_imm", 0, 1, Some(10), Some(4), 1),
            (1, "send", 4, 5, Some(6), Some(1), 0),
            (2, "send", 6, 8, Some(14), Some(1), 1),
            (3, "send", 7, 9, Some(10), Some(1), 0),
            (4, "send", 9, 12, Some(14), Some(1), 1),
        ]
    );
    assert_eq!(d.messages[0].latency_ns, Some(t(10) - t(1)));
    assert!(flow(&tl, "10.0.0.8>10.0.0.7/1026").messages.is_empty());
}

/// The same message with the ADDR_REQ missing from the capture: the message's length is not
/// known, so its units listed by ACKs do not complete it.
#[test]
fn a_flor_message_without_its_addr_req_never_completes() {
    use rocescope_codec::ext::flor::{ack_bitmap, imm, AckRepr};
    use rocescope_codec::ib::{ImmDtRepr, RethRepr};
    let params = rocescope_codec::Params::default();
    let chunk = [0x77u8; 4096];
    let write = |psn: u32, off: u32| {
        let mut r = RoceRepr::new(0x2b, 0x400, psn).with_payload(&chunk);
        r.reth = Some(RethRepr { va: 0x7000_0000 + off as u64 * 4096, r_key: 0x99, dma_len: 4096 });
        r.immdt = Some(ImmDtRepr { imm: imm(params.flor_split, false, 3, off) });
        FrameRepr::new(v4(7, 8, 64), r).to_vec()
    };
    let values: Vec<u32> = (0..3).map(|off| imm(params.flor_split, false, 3, off)).collect();
    let bitmap = ack_bitmap([false; 3].into_iter(), params.flor_ack_set_means);
    let body = AckRepr { qpn: 0x400, bitmap, least_gn: 0, delay_ns: 1000, entries: &values }.to_vec();
    let mut r = RoceRepr::new(0x64, 0x402, 1).with_payload(&body);
    r.deth = Some(DethRepr { q_key: 0x1234, src_qp: 0x403 });
    let frames = vec![write(1, 0), write(2, 1), write(3, 2), FrameRepr::new(v4(8, 7, 62), r).to_vec()];
    let tl = timeline_of("flor-no-addr", &frames, "flor");
    let d = flow(&tl, "10.0.0.7>10.0.0.8/1024");
    let msgs: Vec<_> = d.messages.iter().map(|m| (m.index, m.first_frame, m.complete_frame, m.packets)).collect();
    assert_eq!(msgs, vec![(0, 1, None, Some(3))]);
}

/// A flow nothing acknowledges (ERD here; SDR and Flor over UC too) is tracked past the PSN
/// tracker's window (2^16 slots, at most 2^18 ahead of its base): 300,000 one-packet ERD
/// messages at the sender's tap (PSN p at frame p + 1), then a NACK for PSN 299,998 (frame
/// 300,001) and its resend (frame 300,002).
#[test]
fn a_flow_without_acknowledgements_is_tracked_past_its_window() {
    let n = 300_000u32;
    let datagram = |psn: u32| {
        let mut payload = EethRepr { ty: 0, last: true, msg_id: psn as u16, s_len: 4, s_offset: 0 }.to_bytes().to_vec();
        payload.extend([1u8; 4]);
        let mut r = RoceRepr::new(0x64, 0x33, psn).with_payload(&payload);
        r.deth = Some(DethRepr { q_key: 0x1111, src_qp: 0x44 });
        FrameRepr::new(v4(3, 4, 64), r).to_vec()
    };
    let mut frames: Vec<Vec<u8>> = (0..n).map(datagram).collect();
    frames.push(erd_nack(&[n - 2], 1, 62).0);
    frames.push(datagram(n - 2));
    let tl = timeline_of("erd-long", &frames, "erd");
    let d = flow(&tl, "10.0.0.3>10.0.0.4/51");
    let e = (Signal::ErdNack, Repair::EndHost, Evidence::AskedFor);
    assert_eq!(losses(d), vec![(n - 2, u64::from(n - 1), e.0, e.1, e.2, Some(u64::from(n - 2)))]);
    loss_times_match(d);
    let retx: Vec<_> = d.retransmissions.iter().map(|r| (r.psn, r.frame, r.trigger, r.copy)).collect();
    assert_eq!(retx, vec![(n - 2, u64::from(n) + 2, Signal::ErdNack, 1)]);
    assert_eq!(d.messages.len(), n as usize);
}
