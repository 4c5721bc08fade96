//! The ERD stack on the harness (seed 004 §4.3-4.5; WIRE.md B.5): conservation and clean
//! frames under loss both ways and reordering; every message rebuilt from packets sprayed over 8
//! paths, with no NACK when nothing is lost; each lost packet named by a NACK on the TCP info
//! path and resent once under its own PSN; a lost tail found by the stalled scan; a lost NACK
//! segment resent by the info path.

use std::collections::{BTreeMap, BTreeSet};

use rocescope_codec::ext::erd::{whole_nacks, EethRepr};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile};
use rocescope_stacks::erd::{self, ErdConfig};
use rocescope_stacks::harness::{Fate, Harness, RunEnd, Side, TestRng};
use rocescope_stacks::sdr::MsgLengths;
use rocescope_stacks::{ConnConfig, Message, Nanos, Op, RetxReason};

const DELAY: Nanos = 5_000;
const RATE: u64 = 100_000_000_000;
/// The 8 paths' extra delays are 0, 300, …, 2,100 ns.
const PATH_SKEW: Nanos = 300;

fn conn() -> ConnConfig {
    let mut c = ConnConfig::ipv4(([10, 0, 0, 1], 0x40), ([10, 0, 0, 2], 0x100));
    c.start_psn = 0xff_ffe0;
    c.mtu = 1024;
    c
}

fn harness(cfg: &ConnConfig, lens: &[u32]) -> (Harness, ErdConfig) {
    let e = ErdConfig::new(cfg, 2 * DELAY + 200, Some(MsgLengths::list(lens)));
    let (req, resp) = erd::new_pair(cfg, &e);
    let mut h = Harness::custom("erd", Profile::Erd, cfg, req, resp, DELAY).with_rate(RATE);
    for (id, &len) in lens.iter().enumerate() {
        h.post(0, Message { id: id as u64, op: Op::Send, len });
    }
    (h, e)
}

fn finish(h: &mut Harness) {
    assert_eq!(h.run(10_000_000_000), RunEnd::Idle, "the run did not finish");
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
}

/// The PSNs the receiver's NACK segments named, in order, with the segment's index in the
/// transmissions.
fn nacked(h: &Harness) -> Vec<(usize, u32)> {
    let opts = DecodeOptions { verify: false, profile: Profile::Erd, params: h.cfg.params };
    let mut out = Vec::new();
    for (i, t) in h.txs().iter().enumerate().filter(|(_, t)| t.from == Side::Responder) {
        let f = Frame::parse(LinkType::Ethernet, &t.frame, t.frame.len(), &opts);
        let tcp = f.tcp().expect("the receiver sends TCP only");
        assert_eq!(tcp.dst_port, h.cfg.params.erd_nack_port);
        for e in whole_nacks(tcp.payload).expect("whole NACK messages") {
            assert_eq!((e.src_qpn, e.dst_qpn), (h.cfg.requester.qpn, h.cfg.responder.qpn));
            out.push((i, e.psn));
        }
    }
    out
}

/// The data packets sent: (index, PSN, EETH, retransmission).
fn data(h: &Harness) -> Vec<(usize, u32, EethRepr, Option<RetxReason>)> {
    let opts = DecodeOptions { verify: true, profile: Profile::Erd, params: h.cfg.params };
    h.txs()
        .iter()
        .enumerate()
        .filter(|(_, t)| t.from == Side::Requester && t.info.msg.is_some())
        .map(|(i, t)| {
            let f = Frame::parse(LinkType::Ethernet, &t.frame, t.frame.len(), &opts);
            let p = f.roce().unwrap();
            assert_eq!(p.opcode().0, 0x64, "UD SEND Only");
            assert_eq!(p.deth().unwrap().src_qp(), h.cfg.requester.qpn);
            (i, p.bth().psn(), EethRepr::parse(p.payload()).unwrap(), t.info.retx)
        })
        .collect()
}

#[test]
fn every_message_is_delivered_under_loss_and_reordering() {
    for seed in 0..16u64 {
        let mut rng = TestRng(seed);
        let mut lens: Vec<u32> = (0..30).map(|_| rng.below(20_000) as u32).collect();
        lens[4] = 0;
        lens[9] = 1;
        let cfg = conn();
        let loss = [0.0, 0.01, 0.05, 0.15][seed as usize % 4];
        let mut frng = TestRng(seed ^ 0xe4d);
        let (h, _) = harness(&cfg, &lens);
        // Any frame may be lost (data, NACK segments, the sender's TCP ACKs); data takes one of
        // 8 paths.
        let mut h = h.with_fate(move |c| {
            if frng.chance(loss) {
                return Fate::Drop;
            }
            if c.info.msg.is_some() {
                return Fate::Delay(frng.below(8) * PATH_SKEW);
            }
            Fate::Deliver
        });
        assert_eq!(h.run(10_000_000_000), RunEnd::Idle, "seed {seed}: the run did not finish");
        h.check_conservation().unwrap_or_else(|e| panic!("seed {seed} (loss {loss}): {e}"));
        h.check_frames().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if loss == 0.0 {
            assert!(h.retransmissions(Side::Requester).is_empty(), "seed {seed}: a resend without loss");
        }
    }
}

#[test]
fn messages_are_rebuilt_from_packets_sprayed_over_8_paths() {
    // 20 messages of 10 packets, each packet on one of 8 paths of different delays: they arrive
    // out of order, and the reordering module places each by its EETH. Nothing is lost, and the
    // skew (≤ 2.1 µs) is under a scan period: no NACK, no resend.
    let lens = vec![10 * 1012; 20];
    let cfg = conn();
    let (h, _) = harness(&cfg, &lens);
    let mut rng = TestRng(7);
    let mut h =
        h.with_fate(move |c| if c.info.msg.is_some() { Fate::Delay(rng.below(8) * PATH_SKEW) } else { Fate::Deliver });
    finish(&mut h);
    let d = data(&h);
    assert_eq!(d.len(), 200);
    // The EETH: Type set (multi-packet), Msg_ID, S_Offset and S_Len placing each packet; Last on
    // the tenth.
    for (k, (_, _, e, _)) in d.iter().enumerate() {
        assert_eq!((e.ty, e.msg_id as usize, e.s_offset, e.s_len), (1, k / 10, (k % 10) as u32 * 1012, 1012));
        assert_eq!(e.last, k % 10 == 9);
    }
    let mut arrivals: Vec<(Nanos, u32)> = d.iter().map(|&(i, psn, _, _)| (h.txs()[i].arrived.unwrap(), psn)).collect();
    arrivals.sort();
    let inverted = arrivals.windows(2).filter(|w| (w[1].1.wrapping_sub(w[0].1) & 0xff_ffff) > 0x80_0000).count();
    assert!(inverted > 50, "the paths reorder ({inverted} inversions)");
    assert!(nacked(&h).is_empty(), "no loss, no NACK");
    assert!(h.retransmissions(Side::Requester).is_empty());
}

#[test]
fn each_lost_packet_is_named_by_a_nack_and_resent_once_under_its_psn() {
    // Packets 3, 17, 18 and 40 of 60 (first copies) are lost; sprayed over 8 paths.
    let lens = vec![4 * 1012; 15];
    let cfg = conn();
    let (h, _) = harness(&cfg, &lens);
    let drop: BTreeSet<usize> = [3, 17, 18, 40].into();
    let mut k = 0;
    let mut rng = TestRng(3);
    let mut h = h.with_fate(move |c| {
        if c.info.msg.is_some() && c.info.retx.is_none() {
            k += 1;
            if drop.contains(&(k - 1)) {
                return Fate::Drop;
            }
            return Fate::Delay(rng.below(8) * PATH_SKEW);
        }
        Fate::Deliver
    });
    finish(&mut h);
    let d = data(&h);
    let start = cfg.start_psn;
    let lost: BTreeSet<u32> = [3u32, 17, 18, 40].iter().map(|k| (start + k) & 0xff_ffff).collect();
    let n = nacked(&h);
    let named: BTreeSet<u32> = n.iter().map(|x| x.1).collect();
    assert_eq!(named, lost, "the NACKs name exactly the lost PSNs");
    let resends: BTreeMap<u32, Vec<usize>> = d.iter().filter(|x| x.3.is_some()).fold(BTreeMap::new(), |mut m, x| {
        m.entry(x.1).or_default().push(x.0);
        m
    });
    assert_eq!(resends.keys().copied().collect::<BTreeSet<_>>(), lost, "resent under their own PSNs");
    for (psn, at) in &resends {
        assert_eq!(at.len(), 1, "PSN {psn:#x} resent once");
        let first_nack = n.iter().find(|x| x.1 == *psn).unwrap().0;
        assert!(h.txs()[at[0]].at >= h.txs()[first_nack].arrived.unwrap(), "resent after its NACK arrived");
    }
}

#[test]
fn a_lost_tail_is_named_by_the_stalled_scan_and_a_lost_nack_segment_sent_again() {
    // The last packet of the last message is lost: no higher PSN shows the gap; the scan that
    // finds nothing arrived for a whole period names the PSNs still expected.
    let lens = vec![3000; 5];
    let cfg = conn();
    let (h, _) = harness(&cfg, &lens);
    let total = 5 * 3; // 3 packets a message
    let mut k = 0;
    let mut h = h.with_fate(move |c| {
        if c.info.msg.is_some() && c.info.retx.is_none() {
            k += 1;
            if k == total {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    finish(&mut h);
    let last = (cfg.start_psn + total as u32 - 1) & 0xff_ffff;
    assert_eq!(nacked(&h).iter().map(|x| x.1).collect::<Vec<_>>(), vec![last]);
    // A lost NACK segment: the first one is dropped; the info path's timer sends it again (or
    // the next scan names the PSN again), and the packet is still resent and delivered.
    let (h, _) = harness(&cfg, &[3000; 5]);
    let (mut k, mut dropped_nack) = (0, false);
    let mut h = h.with_fate(move |c| {
        if c.info.msg.is_some() && c.info.retx.is_none() {
            k += 1;
            if k == 4 {
                return Fate::Drop;
            }
        }
        if c.from == Side::Responder && !dropped_nack {
            dropped_nack = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    finish(&mut h);
    assert!(nacked(&h).len() >= 2, "the NACK went again");
}
