//! The NIC transmit model and the stacks' timers (issue 9), on the two-node harness: packets are
//! pulled when the wire is free, timers start when a packet reaches the wire, and each stack's
//! timeout has its real value: GBN's IBTA local ACK timeout 4.096 µs · 2^t, IRN's RTO_low /
//! RTO_high (IRN paper §3.1), DCP's coarse timeout with back-off (seed 000 §4.5 and the
//! `timeouts` module's choices).

mod stacks_common;

use rocescope_codec::ext::dcp::{tag, TAG_HO};
use rocescope_codec::ib::psn;
use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};
use rocescope_stacks::harness::{Fate, FateCtx, Harness, RunEnd, Side};
use rocescope_stacks::timeouts::local_ack_timeout_ns;
use rocescope_stacks::{Action, Message, Nanos, Op, RetxReason, StackKind};
use stacks_common::*;

/// The sRetryNo of a DCP data packet the requester sends (its timeout round).
fn data_round(c: &FateCtx<'_>) -> Option<u32> {
    if c.from != Side::Requester || c.info.msg.is_none() {
        return None;
    }
    let f = Frame::parse(LinkType::Ethernet, c.frame, c.frame.len(), &DecodeOptions::with_profile(Profile::Dcp));
    Some(f.roce()?.dcpeth()?.sretryno() as u32)
}

fn completion(h: &Harness) -> Nanos {
    h.events().iter().filter(|e| matches!(e.action, Action::Completed { .. })).map(|e| e.at).max().unwrap()
}

/// Times of the requester's retransmissions with `reason`.
fn retx_times(h: &Harness, reason: RetxReason) -> Vec<(Nanos, u32)> {
    h.retransmissions(Side::Requester)
        .iter()
        .filter(|&&(_, r)| r == reason)
        .map(|&(i, _)| (h.txs()[i].at, h.txs()[i].info.psn))
        .collect()
}

/// The harness serialises: one frame after the other on a wire, each for its wire time.
#[test]
fn the_wire_serialises_pulled_packets_back_to_back() {
    let cfg = conn(30);
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY);
    h.post(0, Message { id: 0, op: Op::Write, len: 8 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    let data: Vec<_> = h.txs().iter().filter(|t| t.from == Side::Requester).collect();
    assert_eq!(data.len(), 8);
    let mut at = 0;
    for t in &data {
        assert_eq!(t.at, at);
        at += h.ser_ns(t.frame.len());
    }
    // 256-byte payloads at 100 Gbit/s: tens of ns each, not zero.
    assert!(h.ser_ns(data[0].frame.len()) > 20);
}

/// GBN's local ACK timeout is IBTA's 4.096 µs · 2^t, counted from when the packet left: a lost
/// tail (no ACK: 3 packets < ack_every, no AckReq before the last) is resent exactly then.
#[test]
fn gbn_times_out_after_4_096_us_times_2_to_the_t() {
    for t in [10u8, 14] {
        let mut cfg = conn(31);
        cfg.timeouts.local_ack_timeout = t;
        let mut h = Harness::new(StackKind::Gbn, &cfg, DELAY).with_fate(drop_first_tx_of(cfg.start_psn, &[3]));
        h.post(0, Message { id: 0, op: Op::Write, len: 4 * cfg.mtu });
        h.run(LIMIT);
        h.check_conservation().unwrap();
        let r = retx_times(&h, RetxReason::Timeout);
        // The timer started when PSN 0 reached the wire (time 0).
        let want = 4_096u64 << t;
        assert_eq!(local_ack_timeout_ns(t), Some(want));
        assert_eq!(r[0], (want, cfg.start_psn), "t = {t}");
        assert_eq!(r.len(), 4);
    }
}

/// IBTA: t = 0 means no local ACK timeout: a lost tail is never recovered.
#[test]
fn gbn_without_a_local_ack_timeout_never_retries() {
    let mut cfg = conn(32);
    cfg.timeouts.local_ack_timeout = 0;
    let mut h = Harness::new(StackKind::Gbn, &cfg, DELAY).with_fate(drop_first_tx_of(cfg.start_psn, &[3]));
    h.post(0, Message { id: 0, op: Op::Write, len: 4 * cfg.mtu });
    assert_eq!(h.run(LIMIT), RunEnd::Idle);
    assert!(!h.requester_idle());
    assert!(h.retransmissions(Side::Requester).is_empty());
}

/// IRN §3.1: with at most N = 3 packets in flight the RTO is RTO_low (100 µs). A lost tail of a
/// message acknowledged packet by packet: the last ACK leaves one packet in flight, so the tail
/// is resent 100 µs after that ACK arrived.
#[test]
fn irn_uses_rto_low_with_few_packets_in_flight() {
    let mut cfg = conn(33);
    cfg.ack_every = 1;
    let n = 8;
    let tail = psn::add(cfg.start_psn, n - 1);
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Requester && c.info.psn == tail && c.info.retx.is_none() {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    h.post(0, Message { id: 0, op: Op::Write, len: n * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    let last_ack = h.txs().iter().filter(|t| t.from == Side::Responder).filter_map(|t| t.arrived).max().unwrap();
    let r = retx_times(&h, RetxReason::Timeout);
    assert_eq!(r.len(), 1);
    // The tail's ACK comes after its retransmission: the last ACK before it is the 7th.
    let before: Nanos = h
        .txs()
        .iter()
        .filter(|t| t.from == Side::Responder)
        .filter_map(|t| t.arrived)
        .filter(|&a| a < r[0].0)
        .max()
        .unwrap();
    assert!(last_ack > r[0].0);
    assert_eq!(r[0], (before + cfg.timeouts.irn_rto_low_ns, tail));
    assert_eq!(cfg.timeouts.irn_rto_low_ns, 100_000);
}

/// IRN §3.1: with more than N packets in flight the RTO is RTO_high (320 µs), and on expiry IRN
/// resends only the first unacknowledged packet (not every un-SACKed one). Every ACK is lost
/// for the first 600 µs: the timer, started as RTO_low with the first packet, becomes RTO_high
/// when the fourth packet leaves and expires 320 µs later; the resend restarts it (RTO_high:
/// all 32 still in flight), it expires again, and the second resend's ACK gets through.
#[test]
fn irn_uses_rto_high_with_many_packets_in_flight_and_resends_only_the_first() {
    let cfg = conn(34);
    let n = 32;
    let mut h = Harness::new(StackKind::Irn, &cfg, DELAY)
        .with_fate(|c| if c.from == Side::Responder && c.now < 600_000 { Fate::Drop } else { Fate::Deliver });
    h.post(0, Message { id: 0, op: Op::Write, len: n * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    let fourth = h.txs().iter().filter(|t| t.from == Side::Requester).nth(3).unwrap().at;
    let high = cfg.timeouts.irn_rto_high_ns;
    assert_eq!(high, 320_000);
    let r = retx_times(&h, RetxReason::Timeout);
    assert_eq!(r, vec![(fourth + high, cfg.start_psn), (fourth + 2 * high, cfg.start_psn)]);
    assert_eq!(h.retransmissions(Side::Requester).len(), 2);
}

/// DCP §4.3: the RetransQ is served before new data. The first packet is trimmed; when its HO
/// packet is back at the sender (one RTT later) new packets are still waiting to be pulled, yet
/// the next packet on the wire is the HO-triggered retransmission.
#[test]
fn dcp_pulls_retransmissions_before_new_data() {
    let cfg = conn(35);
    let first = cfg.start_psn;
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Requester && c.info.psn == first && c.info.retx.is_none() {
            Fate::Trim
        } else {
            Fate::Deliver
        }
    });
    // 8 messages of 128 packets: ~37 µs of data at 100 Gbit/s, more than an RTT.
    for id in 0..8 {
        h.post(0, Message { id, op: Op::Write, len: 128 * cfg.mtu });
    }
    h.run(LIMIT);
    h.check_conservation().unwrap();
    let opts = DecodeOptions::with_profile(Profile::Dcp);
    let ho_back = h
        .txs()
        .iter()
        .filter(|t| t.from == Side::Responder)
        .find(|t| {
            let f = Frame::parse(LinkType::Ethernet, &t.frame, t.frame.len(), &opts);
            f.tos().map(|x| tag(x, cfg.params.dcp_tag_shift)) == Some(TAG_HO)
        })
        .and_then(|t| t.arrived)
        .unwrap();
    let next = h.txs().iter().find(|t| t.from == Side::Requester && t.at >= ho_back).unwrap();
    assert_eq!((next.info.psn, next.info.retx), (first, Some(RetxReason::HeaderOnly)));
    // New data was still waiting: later requester frames are new packets.
    assert!(h.txs().iter().any(|t| t.from == Side::Requester && t.at > next.at && t.info.retx.is_none()));
    assert_eq!(retx(&h, RetxReason::Timeout), 0);
}

/// DCP's coarse timeout backs off: 1 ms for a message's first round, then 2 ms, 4 ms, … Here the
/// same packet is lost whole (its HO too: the control plane failed) in rounds 0-2, so rounds
/// 1, 2 and 3 start 1, 2 and 4 ms after the previous round's first packet left.
#[test]
fn dcp_coarse_timeout_doubles_per_round() {
    let cfg = conn(36);
    let lost = psn::add(cfg.start_psn, 2);
    let mut n = 0;
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Requester && c.info.psn == lost && n < 3 {
            n += 1;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    h.post(0, Message { id: 0, op: Op::Write, len: 4 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    // A round's resends leave back to back; rounds are milliseconds apart.
    let r = retx_times(&h, RetxReason::Timeout);
    let starts: Vec<Nanos> =
        r.iter().enumerate().filter(|&(i, &(t, _))| i == 0 || t > r[i - 1].0 + 100_000).map(|(_, &(t, _))| t).collect();
    let base = cfg.timeouts.dcp_timeout_ns;
    assert_eq!(base, 1_000_000);
    assert_eq!(starts, vec![base, 3 * base, 7 * base]);
    assert!(completion(&h) > 7 * base);
}

/// No livelock (issue 9): each timeout round loses a different packet whole (round k ≥ 1 loses
/// PSN k + 1; round 0 loses PSN 1, HO included). Restarting the count every round, as a plain
/// reading of §4.5 does, would complete the message only in the first round that loses
/// nothing (round 4); the receiver counts each PSN once from the first timeout round on, so
/// round 2's packets complete what round 1 left, and the message completes in round 2.
#[test]
fn dcp_timeout_rounds_add_up_instead_of_restarting() {
    let cfg = conn(37);
    let start = cfg.start_psn;
    let n = 6;
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| {
        let Some(round) = data_round(c) else { return Fate::Deliver };
        let k = psn::diff(start, c.info.psn) as u32;
        let doomed = if round == 0 { 1 } else { round + 1 };
        if round < 4 && k == doomed {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    h.post(0, Message { id: 0, op: Op::Write, len: n * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    assert_eq!(retx(&h, RetxReason::Timeout), 2 * n as usize, "two timeout rounds");
    // Round 2 starts at 1 ms + 2 ms; it completes one RTT (and a few frames) later.
    let base = cfg.timeouts.dcp_timeout_ns;
    assert!((3 * base..3 * base + 2 * DELAY + 2_000).contains(&completion(&h)), "{}", completion(&h));
}

/// Rounds resend from rotating starts (the `dcp` module notes): when only the head of each
/// timeout round gets through (here: its first two packets; the rest are lost whole, HO
/// packets included, as when many senders time out together and overflow a port), rounds that
/// all started at the first packet would deliver the same two packets for ever. Round k ≥ 2
/// starts at ⌊(k−1)·n/φ⌋ mod n, so the heads differ, and the receiver's union completes the
/// message.
#[test]
fn dcp_timeout_rounds_start_at_rotating_offsets() {
    let cfg = conn(38);
    let n = 8u32;
    let start = cfg.start_psn;
    let mut sent_in_round = std::collections::HashMap::new();
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| {
        let Some(round) = data_round(c) else { return Fate::Deliver };
        let k = sent_in_round.entry(round).or_insert(0u32);
        *k += 1;
        // Round 0 loses its last packet; every later round delivers only its first two.
        match round {
            0 if psn::diff(start, c.info.psn) as u32 == n - 1 => Fate::Drop,
            0 => Fate::Deliver,
            _ if *k <= 2 => Fate::Deliver,
            _ => Fate::Drop,
        }
    });
    h.post(0, Message { id: 0, op: Op::Write, len: n * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    // Each round's first PSN (offset from the message's first): 0, then ⌊(k−1)·8/φ⌋ mod 8.
    let r = retx_times(&h, RetxReason::Timeout);
    let heads: Vec<u32> = r
        .iter()
        .enumerate()
        .filter(|&(i, &(t, _))| i == 0 || t > r[i - 1].0 + 100_000)
        .map(|(_, &(_, p))| psn::diff(start, p) as u32)
        .collect();
    assert_eq!(heads, vec![0, 4, 1, 6, 3], "{heads:?}");
    // Rounds 1-4 bring PSNs {0,1} (after the reset), {4,5}, {1,2}, {6,7}; 3 is still missing, and
    // round 5 (from ⌊4·8/φ⌋ mod 8 = 3) brings it.
    assert_eq!(r.len(), 5 * n as usize);
}
