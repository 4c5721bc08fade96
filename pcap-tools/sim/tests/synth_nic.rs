//! The host NIC's transmit model and the stacks' own timers on the simulated fabric (issue 9):
//! request packets are pulled when the wire is free, so a stack's timer starts when its packet
//! leaves, and long messages no longer time out while they wait in an unbounded host queue;
//! DCP's coarse timeout cannot livelock an incast.

use rocescope_sim::sim::{ser_ns, wire_bytes, Kind, Origin, TapPoint};
use rocescope_sim::synth::{conn_config, simulate, SynthOptions};
use rocescope_sim::{Fabric, FabricConfig};
use rocescope_stacks::rng::Rng;
use rocescope_stacks::{RetxReason, StackKind};

fn opts(stack: StackKind) -> SynthOptions {
    SynthOptions { stack, taps: vec![TapPoint::Receiver], ..Default::default() }
}

/// `synth --stack dcp --trim --messages 4 --message-size 2097152`: 8,192 packets, no loss. Each
/// message takes ≈ 185 µs to serialise at 100 Gbit/s; with the timer armed when a frame entered
/// the host FIFO (all 8,192 at time 0) and a 100 µs timeout the run sent 24,580 frames. Now
/// every data packet is sent exactly once, and the run takes the 8,192 packets' wire time.
#[test]
fn a_long_dcp_message_without_loss_is_sent_once() {
    let o = SynthOptions { trim: true, messages: 4, message_size: 2 * 1024 * 1024, ..opts(StackKind::Dcp) };
    let f = simulate(&o, None, true, None).unwrap();
    let data: Vec<_> = f.txs.iter().filter(|t| t.kind == Kind::Data).collect();
    assert_eq!(data.len(), 8192);
    assert!(data.iter().all(|t| t.reason.is_none()));
    assert_eq!(f.stats.transmissions, 8192 + 4, "one ACK per message");
    assert!(f.conns[0].messages.iter().all(|m| m.completed.len() == 1));
    // 8,192 frames of 1,102 + 24 bytes at 100 Gbit/s, back to back: ≈ 738 µs, plus an RTT.
    let wire = 8192 * 1126 * 8 / 100;
    assert!((wire..wire + 20_000).contains(&f.stats.end_ns), "{}", f.stats.end_ns);
}

/// Packets leave the sender back to back, one per wire time: the NIC pulls one when the wire is
/// free, so the TxRec time (when the stack let it go) is when its first bit left.
#[test]
fn pulled_packets_leave_back_to_back() {
    let o = SynthOptions { messages: 2, message_size: 16 * 1024, ..opts(StackKind::Irn) };
    let f = simulate(&o, None, true, None).unwrap();
    let sent: Vec<_> = f.txs.iter().filter(|t| t.origin == Origin::Requester).collect();
    assert_eq!(sent.len(), 32);
    for (k, w) in sent.windows(2).enumerate() {
        let ser = ser_ns(wire_bytes(w[0].len as usize), 100_000_000_000);
        assert!(ser > 80, "a full frame takes ≈ 90 ns");
        assert_eq!(w[1].sent - w[0].sent, ser, "packet {k}");
    }
}

/// `synth --stack dcp --trim --incast 8 --messages 16 --message-size 65536`: before, the first
/// message timed out every 100 µs and each round reset the receiver's count, completing 0 of
/// 128 messages (3.4 M transmissions). With the timers armed on the wire, DCP's 1 ms coarse
/// timeout and HO retransmissions pulled before new data, all 128 complete, without a single
/// timeout: every retransmission is HO-triggered.
#[test]
fn a_dcp_incast_of_8_completes_every_message() {
    let o = SynthOptions { trim: true, incast: 8, messages: 16, message_size: 65536, ..opts(StackKind::Dcp) };
    let f = simulate(&o, None, true, None).unwrap();
    assert!(!f.stats.timed_out);
    let done = f.conns.iter().flat_map(|c| &c.messages).filter(|m| m.completed.len() == 1).count();
    assert_eq!(done, 128);
    assert!(f.stats.trimmed > 0, "the incast trims");
    assert!(f.txs.iter().all(|t| t.reason != Some(RetxReason::Timeout)));
    let retx = f.txs.iter().filter(|t| t.reason.is_some()).count() as u64;
    assert_eq!(retx, f.stats.trimmed, "one resend per trimmed packet");
}

/// The timer flags reach the stacks: `--local-ack-timeout`, `--dcp-timeout`, and `--rto` as an
/// override of every stack's own.
#[test]
fn timer_options_reach_the_connections() {
    let fabric = Fabric::new(FabricConfig::default(), None);
    let cfg = |o: &SynthOptions| conn_config(o, &fabric, 0, &mut Rng::new(1, 7)).timeouts;
    let t = cfg(&SynthOptions { local_ack_timeout: 10, dcp_timeout_ns: 3_000_000, ..Default::default() });
    assert_eq!(t.gbn_ns(), Some(4_096 << 10));
    assert_eq!(t.dcp_ns(0), 3_000_000);
    assert_eq!((t.irn_ns(1), t.irn_ns(100)), (100_000, 320_000));
    let d = cfg(&SynthOptions::default());
    assert_eq!(d.gbn_ns(), Some(4_096 << 14));
    assert_eq!(d.dcp_ns(0), 1_000_000);
    let r = cfg(&SynthOptions { rto_ns: Some(250_000), ..Default::default() });
    assert_eq!((r.gbn_ns(), r.irn_ns(1), r.irn_ns(100), r.dcp_ns(3)), (Some(250_000), 250_000, 250_000, 250_000));
    assert!(SynthOptions { local_ack_timeout: 32, ..Default::default() }.validate().is_err());
}

/// A 64→1 DCP incast whose control queue loses HO packets (a small WRR weight, 0.1): every
/// sender's first message times out at the same moment, and each timeout round overflows the
/// port again. Rounds that all resent from the message's first packet brought the same head
/// of each message through every time: 0 of 128 messages completed in 1 s. With rounds that
/// add up at the receiver and start at rotating offsets (the `dcp` stack's notes), all
/// complete, in ≈ 16 ms.
#[test]
fn a_dcp_incast_of_64_that_loses_header_only_packets_still_completes() {
    let o = SynthOptions {
        trim: true,
        incast: 64,
        wrr_weight: Some(0.1),
        messages: 2,
        message_size: 65536,
        ..opts(StackKind::Dcp)
    };
    let f = simulate(&o, None, true, None).unwrap();
    assert!(f.stats.ho_dropped > 1000, "HO packets are lost: {:?}", f.stats);
    assert!(f.txs.iter().any(|t| t.reason == Some(RetxReason::Timeout)), "the coarse timeout recovers them");
    assert!(!f.stats.timed_out);
    let done = f.conns.iter().flat_map(|c| &c.messages).filter(|m| m.completed.len() == 1).count();
    assert_eq!(done, 128);
    assert!(f.stats.end_ns < 100_000_000, "{}", f.stats.end_ns);
}
