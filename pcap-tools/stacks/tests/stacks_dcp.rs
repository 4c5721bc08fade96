//! The DCP stack (seed 000 §4.2-4.5, WIRE.md B.1) on the two-node harness.

mod stacks_common;

use rocescope_stacks::harness::{Fate, Harness, RandomFate, Side};
use rocescope_stacks::{imm_data, remote_va, Action, ConnConfig, Message, Op, RetxReason, StackKind};
use rocescope_codec::ext::dcp::{tag, TAG_ACK, TAG_DATA, TAG_HO};
use rocescope_codec::ext::Ext;
use rocescope_codec::ib::psn;
use rocescope_codec::{DecodeOptions, Frame, IcrcStatus, LinkType, Profile};
use stacks_common::*;

fn decode(bytes: &[u8]) -> Frame<'_> {
    Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &DecodeOptions::with_profile(Profile::Dcp))
}

/// Acceptance 2 for DCP (§4.3-4.5): SEND, WRITE and WRITE with Immediate under loss up to 5% (dropped
/// packets, which DCP recovers by its coarse timeout), reordering, and trimming; every frame,
/// the header-only ones included, decodes under `dcp` without warnings; ICRCs verify (HO: none).
#[test]
fn conservation_under_loss_reordering_and_trimming() {
    conservation(StackKind::Dcp, &[Op::Send, Op::Write, Op::WriteImm], 80, 0.05, true);
}

/// Heavier trimming and no drops: the lossless control plane case. Every loss is a trim, every
/// trim comes back as an HO packet, so nothing ever times out (§4.3).
#[test]
fn trimming_alone_never_needs_the_timeout() {
    for seed in 0..30 {
        let cfg = conn(seed);
        let mut rng = rocescope_stacks::harness::TestRng(seed);
        let msgs = workload(&mut rng, 30, &[Op::Send, Op::Write, Op::WriteImm], 8 * cfg.mtu);
        let fate = RandomFate { seed, loss: 0.0, trim: 0.2, reorder: 0.5, jitter_ns: 3 * DELAY };
        let h = random_run(StackKind::Dcp, &cfg, &msgs, fate);
        h.check_conservation().unwrap();
        h.check_frames().unwrap();
        assert_eq!(retx(&h, RetxReason::Timeout), 0, "seed {seed}");
        assert!(retx(&h, RetxReason::HeaderOnly) > 0);
        // Exactly one copy of each PSN arrives whole (§4.5 "exactly-once").
        let mut whole = std::collections::HashMap::new();
        for t in h.txs().iter().filter(|t| t.from == Side::Requester && t.arrived.is_some() && t.trimmed.is_none()) {
            *whole.entry(t.info.psn).or_insert(0) += 1;
        }
        assert!(whole.values().all(|&n| n == 1), "seed {seed}");
    }
}

/// §4.4 and WIRE.md B.1: tag 10, DCPETH (MSN, sRetryNo) on every data packet, RETH on every
/// WRITE packet with the VA of that packet's payload, SSNETH on SENDs and on the last packet of
/// a WRITE with Immediate; ACKs are tagged 01 and carry the eMSN.
#[test]
fn data_packets_and_acks_carry_the_dcp_headers() {
    let cfg = conn(12);
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY);
    let msgs = [
        Message { id: 0, op: Op::Write, len: 3 * cfg.mtu - 5 },
        Message { id: 1, op: Op::Send, len: 2 * cfg.mtu },
        Message { id: 2, op: Op::WriteImm, len: 2 * cfg.mtu + 1 },
        Message { id: 3, op: Op::Send, len: 0 },
    ];
    for m in msgs {
        h.post(0, m);
    }
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    let mut data = vec![];
    let mut acks = vec![];
    for t in h.txs() {
        let f = decode(&t.frame);
        let Ext::Dcp(d) = *f.ext() else { panic!("not DCP") };
        let p = f.roce().unwrap();
        match t.from {
            Side::Requester => {
                assert_eq!(d.tag, TAG_DATA);
                let e = p.dcpeth().unwrap();
                data.push((
                    e.msn(),
                    e.sretryno(),
                    p.opcode().0,
                    p.reth().map(|r| r.va()),
                    p.sseth().map(|s| s.ssn()),
                    p.immdt().map(|i| i.imm()),
                ));
            }
            Side::Responder => {
                assert_eq!(d.tag, TAG_ACK);
                acks.push(d.emsn.unwrap());
            }
        }
    }
    let mtu = cfg.mtu as u64;
    assert_eq!(
        data,
        vec![
            (0, 0, 0x06, Some(remote_va(0)), None, None),
            (0, 0, 0x07, Some(remote_va(0) + mtu), None, None),
            (0, 0, 0x08, Some(remote_va(0) + 2 * mtu), None, None),
            (1, 0, 0x00, None, Some(0), None),
            (1, 0, 0x02, None, Some(0), None),
            (2, 0, 0x06, Some(remote_va(2)), None, None),
            (2, 0, 0x07, Some(remote_va(2) + mtu), None, None),
            (2, 0, 0x09, Some(remote_va(2) + 2 * mtu), Some(1), Some(imm_data(2))),
            (3, 0, 0x04, None, Some(2), None),
        ]
    );
    // One ACK per eMSN advance.
    assert_eq!(acks, vec![1, 2, 3, 4]);
}

/// §4.1 ②, §4.3: a trimmed packet reaches the receiver as an HO packet, which it bounces to the
/// sender (IPs swapped, DestQP = the sender's QPN, same layout, tag 11); the sender resends
/// exactly that PSN, once, without a timeout.
#[test]
fn a_trimmed_packet_is_bounced_and_resent_exactly() {
    let cfg = conn(13);
    let target = psn::add(cfg.start_psn, 2);
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Requester && c.info.psn == target && c.info.retx.is_none() {
            Fate::Trim
        } else {
            Fate::Deliver
        }
    });
    h.post(0, Message { id: 0, op: Op::Write, len: 5 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    let trimmed = h.txs().iter().find_map(|t| t.trimmed.clone()).unwrap();
    let bounce = h
        .txs()
        .iter()
        .find(|t| {
            t.from == Side::Responder
                && decode(&t.frame).ext() != &Ext::None
                && tag(decode(&t.frame).tos().unwrap(), 2) == TAG_HO
        })
        .unwrap();
    let (a, b) = (decode(&trimmed), decode(&bounce.frame));
    assert_eq!(trimmed.len(), 57);
    assert_eq!(bounce.frame.len(), trimmed.len());
    assert_eq!(b.icrc_status(), IcrcStatus::Absent);
    assert_eq!(a.ip_addrs().map(|(s, d)| (d, s)), b.ip_addrs());
    assert_eq!(b.roce().unwrap().bth().dest_qp(), cfg.requester.qpn);
    assert_eq!(b.roce().unwrap().bth().psn(), target);
    assert_eq!(b.roce().unwrap().ho_msn(), Some(0));
    assert_eq!(a.udp_ports(), b.udp_ports());
    let r: Vec<_> = h.retransmissions(Side::Requester).iter().map(|&(i, r)| (h.txs()[i].info.psn, r)).collect();
    assert_eq!(r, vec![(target, RetxReason::HeaderOnly)]);
}

/// §4.4-4.5: packets placed in any order, counted per message, delivered in order when eMSN
/// advances, without any retransmission however the packets are reordered.
#[test]
fn packets_in_reverse_order_are_placed_and_counted() {
    let cfg = conn(14);
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(|c| {
        if c.from == Side::Requester {
            Fate::Delay(2_000 * (20 - c.index as u64 % 20))
        } else {
            Fate::Deliver
        }
    });
    for id in 0..4 {
        h.post(0, Message { id, op: if id % 2 == 0 { Op::Send } else { Op::Write }, len: 4 * cfg.mtu + 3 });
    }
    h.run(LIMIT);
    h.check_conservation().unwrap();
    assert!(h.retransmissions(Side::Requester).is_empty());
    // The first packet to arrive is the last one sent.
    let first = h.txs().iter().filter(|t| t.from == Side::Requester).min_by_key(|t| t.arrived).unwrap();
    assert_eq!(first.info.psn, psn::add(cfg.start_psn, 19));
    // Messages 1-3 completed before message 0: eMSN jumps from 0 to 4 with one ACK.
    let acks: Vec<_> = h
        .txs()
        .iter()
        .filter(|t| t.from == Side::Responder)
        .map(|t| decode(&t.frame).roce().unwrap().aeth().unwrap().msn())
        .collect();
    assert_eq!(acks, vec![4]);
}

/// §4.5 coarse timeout: a dropped (not trimmed) data packet leaves no HO; the unaMSN timer
/// expires and the whole message is resent with sRetryNo 1.
#[test]
fn a_dropped_packet_falls_back_to_the_coarse_timeout() {
    let cfg = conn(15);
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(drop_first_tx_of(cfg.start_psn, &[1]));
    h.post(0, Message { id: 0, op: Op::Send, len: 4 * cfg.mtu });
    h.post(0, Message { id: 1, op: Op::Write, len: 2 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    let r: Vec<_> = h
        .retransmissions(Side::Requester)
        .iter()
        .map(|&(i, r)| (h.txs()[i].info.psn, r, decode(&h.txs()[i].frame).roce().unwrap().dcpeth().unwrap().sretryno()))
        .collect();
    let want: Vec<_> = (0..4).map(|k| (psn::add(cfg.start_psn, k), RetxReason::Timeout, 1)).collect();
    assert_eq!(r, want);
}

/// A connection whose DCP coarse timeout is [`RTO`], short enough for the scripted delays
/// below to straddle it.
fn short_timeout(seed: u64) -> ConnConfig {
    let mut c = conn(seed);
    c.timeouts.dcp_timeout_ns = RTO;
    c
}

/// The coarse timeout of [`short_timeout`] connections.
const RTO: u64 = 100_000;

/// Slack for serialisation in the timings below: a few frames of a few hundred bytes at
/// 100 Gbit/s take tens of ns each.
const SER_SLACK: u64 = 1_000;

/// §4.5 sRetryNo: a timeout round restarts the receiver's count. The original copy of a packet
/// arrives after the timeout round began (it was delayed, not lost): it is not counted twice.
#[test]
fn a_late_copy_from_an_earlier_round_is_not_counted_twice() {
    let cfg = short_timeout(16);
    let late = psn::add(cfg.start_psn, 2);
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Requester && c.info.psn == late && c.info.retx.is_none() {
            Fate::Delay(RTO * 3 / 2)
        } else if c.from == Side::Requester && c.info.retx.is_some() && c.info.psn == psn::add(late, 1) {
            Fate::Delay(RTO * 6 / 10) // the round-1 copy of the next packet is slow too
        } else {
            Fate::Deliver
        }
    });
    h.post(0, Message { id: 0, op: Op::Send, len: 5 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    assert_eq!(retx(&h, RetxReason::Timeout), 5);
    let done = h.events().iter().find(|e| matches!(e.action, Action::Delivered { .. })).unwrap();
    // Delivered only once the round-1 copy of PSN 3 arrived (at 1.6 RTO), not when the round-0
    // copy of PSN 2 (at 1.5 RTO) would have completed the count.
    assert!((RTO * 16 / 10 + DELAY..RTO * 16 / 10 + DELAY + SER_SLACK).contains(&done.at), "{}", done.at);
}

/// An HO packet of round 0 that reaches the sender after the coarse timeout started round 1 is
/// resent with the current sRetryNo, so its PSN arrives twice in round 1; the receiver counts it
/// once (see the `dcp` module notes: the HO carries no sRetryNo) and delivers the message only
/// when the last missing packet of the round arrives.
#[test]
fn a_stale_header_only_packet_after_a_timeout_is_not_counted_twice() {
    let cfg = short_timeout(19);
    let (p1, p3) = (psn::add(cfg.start_psn, 1), psn::add(cfg.start_psn, 3));
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| match (c.from, c.info.retx) {
        (Side::Requester, None) if c.info.psn == p1 => Fate::Trim,
        (Side::Responder, _) if c.info.psn == p1 && c.now < 50_000 => Fate::Delay(150_000), // the bounce
        (Side::Requester, Some(RetxReason::Timeout)) if c.info.psn == p3 => Fate::Delay(80_000),
        _ => Fate::Deliver,
    });
    h.post(0, Message { id: 0, op: Op::Send, len: 4 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
    let ho: Vec<_> = h
        .retransmissions(Side::Requester)
        .iter()
        .filter(|&&(_, r)| r == RetxReason::HeaderOnly)
        .map(|&(i, _)| i)
        .collect();
    assert_eq!(ho.len(), 1);
    let t = &h.txs()[ho[0]];
    assert_eq!(t.info.psn, p1);
    assert!((160_000..160_000 + SER_SLACK).contains(&t.at), "{}", t.at);
    assert_eq!(decode(&t.frame).roce().unwrap().dcpeth().unwrap().sretryno(), 1);
    let done = h.events().iter().find(|e| matches!(e.action, Action::Delivered { .. })).unwrap();
    assert!((RTO + 80_000 + DELAY..RTO + 80_000 + DELAY + SER_SLACK).contains(&done.at), "{}", done.at);
}

/// §4.2: an HO packet lost anyway (the control plane assumption violated) is recovered by the
/// coarse timeout.
#[test]
fn a_lost_header_only_packet_falls_back_to_the_timeout() {
    let cfg = conn(17);
    let target = psn::add(cfg.start_psn, 0);
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY).with_fate(move |c| {
        if c.from == Side::Requester && c.info.psn == target && c.info.retx.is_none() {
            Fate::Trim
        } else if c.from == Side::Responder && c.info.msg.is_none() && c.info.psn == target && !c.dcp_data {
            // The bounce (responder frames with the target PSN: the HO, not the ACK, comes first).
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    h.post(0, Message { id: 0, op: Op::Write, len: 3 * cfg.mtu });
    h.run(LIMIT);
    h.check_conservation().unwrap();
    assert_eq!(retx(&h, RetxReason::HeaderOnly), 0);
    assert_eq!(retx(&h, RetxReason::Timeout), 3);
}

#[test]
fn read_is_not_modelled() {
    let cfg = conn(18);
    let mut h = Harness::new(StackKind::Dcp, &cfg, DELAY);
    h.post(0, Message { id: 0, op: Op::Read, len: 10 });
    h.run(LIMIT);
    assert!(h.events().iter().any(|e| matches!(e.action, Action::Failed { .. })));
}
