//! The Flor stack on the harness (seed 002 §4-5, Appendix A.1; WIRE.md B.3): conservation and
//! clean frames under loss both ways, the wire (WRITE-with-Immediate chunks named by their
//! reliable number, the address exchange, UD software ACKs), a lost WRITE chunk resent as
//! WRITE_RETX SENDs (Figure 14's re-slicing), each of the ACK's four triggers and its timer, and
//! recovery by RTO.

use rocescope_codec::ext::flor::{self as wire, Acked, Addr, SendType, OPCODE_ACK};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Profile, Warnings};
use rocescope_stacks::flor::{self, FlorConfig};
use rocescope_stacks::harness::{Fate, Harness, RunEnd, Side, TestRng};
use rocescope_stacks::sdr::MsgLengths;
use rocescope_stacks::{Action, ConnConfig, Message, Nanos, Op, RetxReason};

const DELAY: Nanos = 5_000;
const RATE: u64 = 100_000_000_000;
const UNIT: u64 = 4096;

fn conn() -> ConnConfig {
    let mut c = ConnConfig::ipv4(([10, 0, 0, 1], 0x40), ([10, 0, 0, 2], 0x100));
    c.start_psn = 0xff_fff0;
    c.mtu = 1024;
    c
}

fn config(cfg: &ConnConfig, lens: &[u32]) -> FlorConfig {
    FlorConfig::new(cfg, 2 * DELAY, RATE, Some(MsgLengths::list(lens)))
}

/// A harness over `lens` messages (WRITEs; Flor picks SEND or WRITE chunks by size), all
/// posted at 0.
fn harness(cfg: &ConnConfig, f: &FlorConfig, lens: &[u32]) -> Harness {
    let (req, resp) = flor::new_pair(cfg, f);
    let mut h = Harness::custom("flor", Profile::Flor, cfg, req, resp, DELAY).with_rate(RATE);
    for (id, &len) in lens.iter().enumerate() {
        h.post(0, Message { id: id as u64, op: Op::Write, len });
    }
    h
}

fn finish(h: &mut Harness) {
    assert_eq!(h.run(10_000_000_000), RunEnd::Idle, "the run did not finish");
    h.check_conservation().unwrap();
    h.check_frames().unwrap();
}

/// What one frame is, decoded.
#[derive(Clone, Debug, PartialEq)]
enum Wqe {
    /// A WRITE packet; on the last one, its immediate (hint, MID, offset).
    Write { psn: u32, va: Option<u64>, imm: Option<(bool, u32, u32)> },
    /// A SEND packet; on the first, its header.
    Send { psn: u32, header: Option<(SendType, u8, u32, u64, u32, u32)>, addr: Option<Addr> },
    /// A software ACK: entries (SEND by GN, WRITE by immediate), delay.
    Ack { qpn: u32, acked: Vec<Acked>, delay_ns: u64, src_qp: u32 },
}

fn decode(h: &Harness, frame: &[u8]) -> Wqe {
    let opts = DecodeOptions { verify: true, profile: Profile::Flor, params: h.cfg.params };
    let f = Frame::parse(LinkType::Ethernet, frame, frame.len(), &opts);
    let p = f.roce().expect("RoCE");
    let (op, psn) = (p.opcode().0, p.bth().psn());
    let split = h.cfg.params.flor_split;
    let mut w = Warnings::default();
    match op {
        OPCODE_ACK => {
            let a = wire::Ack::parse(p.payload(), p.payload_len(), h.cfg.params.flor_ack_set_means, &mut w).unwrap();
            Wqe::Ack {
                qpn: a.qpn,
                acked: a.acked(p.payload()).collect(),
                delay_ns: a.delay_ns,
                src_qp: p.deth().unwrap().src_qp(),
            }
        }
        0x26..=0x2B => Wqe::Write {
            psn,
            va: p.reth().map(|r| r.va()),
            imm: p.immdt().map(|i| {
                let r = wire::WriteRn::from_imm(split, i.imm());
                (r.hint, r.mid, r.chunk_off)
            }),
        },
        0x20..=0x24 => {
            let first = matches!(op, 0x20 | 0x24);
            let h2 = first
                .then(|| wire::SendHeader::parse(p.payload(), p.payload_len(), op == 0x24, split, &mut w))
                .flatten();
            Wqe::Send {
                psn,
                header: h2.map(|x| (x.kind, x.flags, x.rn, x.gn, x.write_rn, x.body_len)),
                addr: h2.and_then(|x| x.addr(p.payload())),
            }
        }
        _ => panic!("unexpected opcode {op:#x}"),
    }
}

fn acks(h: &Harness) -> Vec<(Nanos, Vec<Acked>, u64)> {
    h.txs()
        .iter()
        .filter(|t| t.from == Side::Responder)
        .filter_map(|t| match decode(h, &t.frame) {
            Wqe::Ack { acked, delay_ns, .. } => Some((t.at, acked, delay_ns)),
            _ => None,
        })
        .collect()
}

#[test]
fn small_and_large_messages_are_delivered_under_loss_both_ways() {
    for seed in 0..16u64 {
        let mut rng = TestRng(seed);
        let mut lens: Vec<u32> =
            (0..24).map(|_| if rng.chance(0.5) { rng.below(32 << 10) } else { rng.below(300_000) } as u32).collect();
        lens[2] = 0;
        lens[5] = 3;
        let cfg = conn();
        let f = config(&cfg, &lens);
        let loss = [0.0, 0.01, 0.05, 0.15][seed as usize % 4];
        let mut frng = TestRng(seed ^ 0x5eed);
        let mut h =
            harness(&cfg, &f, &lens).with_fate(move |_| if frng.chance(loss) { Fate::Drop } else { Fate::Deliver });
        assert_eq!(h.run(60_000_000_000), RunEnd::Idle, "seed {seed}: the run did not finish");
        h.check_conservation().unwrap_or_else(|e| panic!("seed {seed} (loss {loss}): {e}"));
        h.check_frames().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if loss == 0.0 {
            assert!(h.retransmissions(Side::Requester).is_empty(), "seed {seed}: a resend without loss");
        }
    }
}

#[test]
fn the_wire_follows_wire_md_b3() {
    // Message 0: 100 KiB (large: ADDR_REQ, ADDR_RESP, WRITE chunks); message 1: 2000 bytes (a
    // SEND); message 2: 40 KiB (large).
    let lens = [100 << 10, 2000, 40 << 10];
    let cfg = conn();
    let f = config(&cfg, &lens);
    let mut h = harness(&cfg, &f, &lens);
    finish(&mut h);
    let mut psns = Vec::new();
    let mut chunks = Vec::new();
    let mut reqs = Vec::new();
    for t in h.txs().iter().filter(|t| t.from == Side::Requester) {
        match decode(&h, &t.frame) {
            Wqe::Write { psn, va, imm } => {
                psns.push(psn);
                if let Some(va) = va {
                    chunks.push((t.info.msg.unwrap(), va));
                }
                if let Some((_, mid, off)) = imm {
                    // MID = message id + 1 (Figure 14's first message is MID 1).
                    assert_eq!(mid as u64, t.info.msg.unwrap() + 1);
                    let va = chunks.last().unwrap().1;
                    assert_eq!(
                        va,
                        rocescope_stacks::remote_va(t.info.msg.unwrap()) + off as u64 * UNIT,
                        "VA = buffer + OFF·UNIT"
                    );
                }
            }
            Wqe::Send { psn, header, addr } => {
                psns.push(psn);
                if let Some((kind, _, rn, gn, _, body)) = header {
                    if kind == SendType::AddrReq {
                        let Some(Addr::Req { mid, msg_len }) = addr else { panic!("an ADDR_REQ body") };
                        reqs.push((mid, msg_len, rn, gn));
                    }
                    if kind == SendType::Data {
                        assert_eq!(body, 2000);
                    }
                }
            }
            Wqe::Ack { .. } => panic!("the sender sends no ACK"),
        }
    }
    for w in psns.windows(2) {
        assert_eq!(w[1], (w[0] + 1) & 0xff_ffff, "UC PSNs advance by one per packet, across the wrap");
    }
    assert_eq!(reqs.len(), 2, "one ADDR_REQ per large message");
    assert_eq!((reqs[0].0, reqs[0].1), (1, 100 << 10));
    assert_eq!((reqs[1].0, reqs[1].1), (3, 40 << 10));
    // The receiver answers on its data QP with ADDR_RESPs naming the modelled buffers, and
    // acknowledges on its UD ACK QP, naming the data QP.
    let mut resps = Vec::new();
    for t in h.txs().iter().filter(|t| t.from == Side::Responder) {
        match decode(&h, &t.frame) {
            Wqe::Send { addr: Some(Addr::Resp { mid, va, buf_len, .. }), .. } => resps.push((mid, va, buf_len)),
            Wqe::Ack { qpn, src_qp, .. } => {
                assert_eq!(qpn, cfg.responder.qpn);
                assert_eq!(src_qp, f.receiver_ack_qpn);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        resps,
        vec![(1, rocescope_stacks::remote_va(0), 100 << 10), (3, rocescope_stacks::remote_va(2), 40 << 10)]
    );
    // Chunks: unit-aligned, at most 64 KiB.
    assert!(chunks.iter().all(|&(m, va)| (va - rocescope_stacks::remote_va(m)).is_multiple_of(UNIT)));
}

#[test]
fn a_lost_write_chunk_is_resent_as_write_retx_sends() {
    // One 64 KiB chunk (a 96 KiB message: chunks of 64 and 32 KiB) loses its third packet; UC
    // drops the whole chunk; the next chunk's ACK shows the gap; the chunk's 16 units are resent
    // by SEND (pieces of the chunk size then in force), each naming its units' offset.
    let lens = [96 << 10];
    let cfg = conn();
    let f = config(&cfg, &lens);
    let mut data = 0;
    let mut h = harness(&cfg, &f, &lens).with_fate(move |c| {
        if c.from == Side::Requester && c.info.msg.is_some() && c.frame.len() > 1000 {
            data += 1;
            if data == 3 {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    finish(&mut h);
    let resends: Vec<_> = h.txs().iter().filter(|t| t.from == Side::Requester && t.info.retx.is_some()).collect();
    assert!(!resends.is_empty());
    let mut units = std::collections::BTreeSet::new();
    for t in &resends {
        match decode(&h, &t.frame) {
            Wqe::Send { header: Some((SendType::WriteRetx, _, _, _, write_rn, body)), .. } => {
                let r = wire::WriteRn::from_imm(cfg.params.flor_split, write_rn);
                assert_eq!(r.mid, 1);
                for u in r.chunk_off..r.chunk_off + body.div_ceil(UNIT as u32) {
                    units.insert(u);
                }
                assert_eq!(t.info.retx, Some(RetxReason::Sack), "found by the ACK's gap");
            }
            Wqe::Send { header: None, .. } => {}
            other => panic!("a WRITE chunk is resent by SEND only, got {other:?}"),
        }
    }
    assert_eq!(units, (0..16).collect(), "the lost chunk's 16 units, each once");
}

/// Posts `n` small messages of `len` bytes at 0 under `f` and returns the ACKs.
fn small_run(
    f: impl Fn(&mut FlorConfig),
    n: usize,
    len: u32,
    drop: Option<usize>,
) -> (Harness, Vec<(Nanos, Vec<Acked>, u64)>) {
    let lens = vec![len; n];
    let cfg = conn();
    let mut fc = config(&cfg, &lens);
    f(&mut fc);
    let mut k = 0;
    let mut h = harness(&cfg, &fc, &lens).with_fate(move |c| {
        if c.from == Side::Requester {
            k += 1;
            if Some(k - 1) == drop {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    finish(&mut h);
    let a = acks(&h);
    (h, a)
}

#[test]
fn acks_fire_on_32_wqes() {
    // 40 SENDs of 64 bytes in a window that never fills (no hint), in order, 2.5 KB in all:
    // the first ACK lists 32 WQEs at once, the last 8 wait for the timer.
    let (h, a) = small_run(|_| {}, 40, 64, None);
    assert_eq!(a[0].1.len(), 32);
    assert_eq!(a[0].2, 0, "sent as the 32nd WQE arrived");
    assert_eq!(a[1].1.len(), 8);
    // The timer runs from the batch's first WQE (the 33rd); the delay field counts from its
    // last (the 40th): T3′ − T2.
    let arrived: Vec<Nanos> =
        h.txs().iter().filter(|t| t.from == Side::Requester).map(|t| t.arrived.unwrap()).collect();
    assert_eq!(a[1].0, arrived[32] + 120_000);
    assert_eq!(a[1].2, a[1].0 - arrived[39]);
}

#[test]
fn acks_fire_on_32_kib() {
    // 8 KiB SENDs (8216 bytes with the header): the 4th brings the bytes past 32 KiB.
    let (_, a) = small_run(|_| {}, 8, 8 << 10, None);
    assert_eq!(a.iter().map(|x| x.1.len()).collect::<Vec<_>>(), vec![4, 4]);
    assert!(a.iter().all(|x| x.2 == 0));
}

#[test]
fn acks_fire_on_the_hint() {
    // A 6 KiB window (base RTT 480 ns at 100 Gbit/s): 1000-byte SENDs fill it after two;
    // the WQE that fills it carries the hint and is acknowledged at once.
    let (h, a) = small_run(|f| f.base_rtt_ns = 480, 6, 1000, None);
    let first = &a[0];
    assert!(first.1.len() < 32 && first.2 == 0);
    let Acked::Send { gn } = *first.1.last().unwrap() else { panic!("SEND entries") };
    let hinted = h.txs().iter().find_map(|t| match decode(&h, &t.frame) {
        Wqe::Send { header: Some((_, flags, _, g, _, _)), .. } if g == gn => Some(flags & wire::FLAG_HINT != 0),
        _ => None,
    });
    assert_eq!(hinted, Some(true), "the ACK's last WQE has the hint");
}

#[test]
fn acks_fire_on_an_out_of_order_number() {
    // SENDs 1, 2 arrive, 3 is lost, 4 arrives out of order: an ACK of 1, 2, 4 at once.
    let (_, a) = small_run(|_| {}, 6, 64, Some(2));
    assert_eq!(a[0].1.len(), 3);
    assert_eq!(a[0].2, 0);
    let gns: Vec<u64> = a[0].1.iter().map(|x| x.value()).collect();
    assert_eq!(gns, vec![1, 2, 4]);
}

#[test]
fn a_lone_wqe_is_acknowledged_by_the_timer_and_a_lost_tail_by_the_rto() {
    let (h, a) = small_run(|_| {}, 1, 64, None);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].2, 120_000);
    let data = h.txs().iter().find(|t| t.from == Side::Requester).unwrap();
    assert_eq!(a[0].0, data.arrived.unwrap() + 120_000);
    // The only SEND lost: nothing shows a gap; the RTO (500 µs floor) resends it.
    let (h, _) = small_run(|_| {}, 1, 64, Some(0));
    let r = h.retransmissions(Side::Requester);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].1, RetxReason::Timeout);
    assert_eq!(h.txs()[r[0].0].at, 500_000 + h.txs()[0].at, "the RTO's floor");
    let Wqe::Send { header: Some((_, flags, rn, gn, _, _)), .. } = decode(&h, &h.txs()[r[0].0].frame) else { panic!() };
    assert_eq!((rn, gn), (1, 2), "the same SEND number, a new GN");
    assert_ne!(flags & wire::FLAG_RETX, 0);
    let completed: Vec<_> = h.events().iter().filter(|e| matches!(e.action, Action::Completed { .. })).collect();
    assert_eq!(completed.len(), 1);
}
