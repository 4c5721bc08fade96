//! Flor's stack (`flor`) on the simulated fabric (issue 13): conservation under loss in both
//! directions (data, resends, ADDR exchange and ACKs may all be lost), ECMP paths and incast, with
//! every captured frame decoding cleanly under the Flor profile; and the analyser, reading the
//! sender's tap, counting as retransmitted exactly the frames the stack sent as resends.

mod common;

use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::CaptureReader;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::{IcrcStatus, Profile};
use rocescope_sim::sim::{LossDir, Routing, TapFrame, TapPoint, TxRec};
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::StackKind;

/// Runs `opts` keeping what the truth would (its transmissions and tap frames), checks every
/// message was delivered intact once and completed once, and every frame decodes under the Flor
/// profile with no warning and a good ICRC; returns the fabric's records and the capture.
fn run_checked(label: &str, opts: &SynthOptions) -> (Vec<TxRec>, Vec<TapFrame>, Vec<u8>) {
    let (f, pcap) = common::run_conserved(label, opts);
    let ctx = || format!("{label}: {}", opts.command_line());
    let (txs, taps, params) = (f.txs.clone(), f.tap_frames.clone(), f.cfg.params);
    drop(f);
    let (mut writes, mut sends, mut acks) = (0u64, 0u64, 0u64);
    common::decode_each(&pcap, Profile::Flor, params, |number, f| {
        let Some(p) = f.roce() else { return };
        assert!(f.warnings.is_empty(), "{}: frame {number}: {:?}", ctx(), f.warnings.iter().collect::<Vec<_>>());
        assert_eq!(f.icrc_status(), IcrcStatus::Good, "{}: frame {number}", ctx());
        match p.opcode().0 {
            0x26 | 0x27 | 0x29 | 0x2b => writes += 1,
            0x20..=0x22 | 0x24 => sends += 1,
            0x64 => acks += 1,
            0x81 => {} // CNP
            op => panic!("{}: frame {number}: opcode {op:#x} in a Flor run", ctx()),
        }
    });
    assert!(sends > 0 && acks > 0, "{}", ctx());
    assert_eq!(writes > 0, opts.message_size > 32 << 10, "{}: WRITE chunks for large messages only", ctx());
    (txs, taps, pcap)
}

fn flor(seed: u64) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Flor,
        seed,
        messages: 12,
        message_size: 100_000,
        mtu: 1024,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        time_limit_ns: 2_000_000_000,
        ..Default::default()
    }
}

#[test]
fn flor_delivers_under_loss_ecmp_and_incast() {
    for seed in 1..=4 {
        // Large messages (address exchange and WRITE chunks) and small ones (one SEND each).
        for size in [100_000, 3_000] {
            let lossy =
                SynthOptions { loss: 0.02, loss_dir: LossDir::Both, incast: 3, message_size: size, ..flor(seed) };
            run_checked("loss both ways, 3-to-1", &lossy);
            // (Per-flow ECMP: UC needs a QP's packets in order, and `synth` refuses --spray.)
            let ecmp = SynthOptions {
                paths: 4,
                routing: Routing::Ecmp,
                incast: 4,
                loss: 0.01,
                message_size: size,
                ..flor(seed)
            };
            run_checked("ECMP over 4 paths, 4-to-1", &ecmp);
        }
    }
}

#[test]
fn the_sender_taps_retransmissions_are_the_stacks_resends() {
    for seed in 1..=6 {
        let o = SynthOptions { loss: 0.02, ..flor(seed) };
        let (txs, taps, pcap) = run_checked("loss", &o);
        // The stack's resends (WRITE_RETX pieces and repeated SENDs) as the sender's tap (tap
        // 0) recorded them leaving: the analyser counts every packet of a resend (each of them
        // carries units sent before), as the truth does.
        let resent = taps
            .iter()
            .filter(|t| t.tap == 0 && !t.incoming)
            .filter(|t| txs[t.tx as usize].reason.is_some() && txs[t.tx as usize].msg.is_some())
            .count() as u64;
        assert!(resent > 0, "seed {seed}: no loss to repair");
        let dec = Decoder::new(DecoderOptions::default());
        let mut s = Session::new(CaptureReader::new(&pcap[..]).unwrap(), dec);
        let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |_| {}).unwrap();
        let flows = a.flows();
        let data = flows
            .flows
            .iter()
            .find(|r| r.head.interface == 0 && r.head.profile == "flor" && r.data_frames > 100)
            .expect("the data flow at the sender's tap");
        assert_eq!(data.retransmitted, resent, "seed {seed}: retransmitted frames at the sender's tap");
    }
}

/// The truth's judge of Flor's receiver (`sim/flor_judge.rs`: UC reception, WQE by WQE) against
/// the stack's receiver: under loss both ways, small and large messages (SENDs, WRITE chunks,
/// their WRITE_RETX pieces, ADDR_REQs), every data packet that reached the receiver closes in
/// exactly one WQE record, each message is completed by exactly one WQE, at the instant the
/// stack's receiver delivered it, and the lost packets abort WQEs (UC: a gap loses the WQE
/// being received); and the receiver's ACKs list only WQEs that arrived whole, each once.
#[test]
fn the_flor_judge_delivers_what_the_receiver_delivers() {
    use rocescope_sim::sim::flor_judge::Verdict;
    use rocescope_sim::sim::{Fate, Origin};
    use std::collections::HashSet;
    let (mut aborted, mut old, mut wqes) = (0, 0, 0);
    for (seed, size) in [(1, 100_000), (2, 8_192), (3, 300_000), (4, 40_000)] {
        let o = SynthOptions { message_size: size, loss: 0.02, loss_dir: LossDir::Both, incast: 2, ..flor(seed) };
        let label = format!("flor judge seed {seed} size {size}");
        let (f, _) = common::run_conserved(&label, &o);
        // The requesters' data packets that reached a receiver, by (connection, PSN).
        let arrived: HashSet<(u32, u32)> = f
            .txs
            .iter()
            .filter(|t| t.origin == Origin::Requester && t.kind.is_data() && !t.to_requester)
            .filter(|t| matches!(t.fate, Fate::Delivered { .. }))
            .map(|t| (t.conn, t.psn))
            .collect();
        let mut closed = HashSet::new();
        for (conn, c) in &f.flor_wqes {
            for k in 0..c.packets {
                let p = (c.first_psn + k) & 0xff_ffff;
                assert!(closed.insert((*conn, p)), "{label}: PSN {p} of connection {conn} in two WQEs");
            }
            wqes += 1;
            aborted += (c.verdict == Verdict::Aborted) as u32;
            old += (c.verdict == Verdict::Old) as u32;
        }
        assert_eq!(closed, arrived, "{label}");
        // Each ACK lists GNs of WQEs that reached the receiver whole, each GN once over the run.
        let whole: HashSet<(u32, u64)> = f
            .flor_wqes
            .iter()
            .filter(|(_, w)| w.verdict != Verdict::Aborted)
            .filter_map(|(conn, w)| f.flor_sent.iter().find(|s| s.first_tx == w.first_tx).map(|s| (*conn, s.gn)))
            .collect();
        let mut listed = HashSet::new();
        for a in &f.flor_acks {
            let (tx, gns) = (a.tx, &a.gns);
            let conn = f.txs.iter().find(|t| t.id == tx).unwrap().conn;
            for &gn in gns {
                assert!(whole.contains(&(conn, gn)), "{label}: ACK tx {tx} lists GN {gn}, not received whole");
                assert!(listed.insert((conn, gn)), "{label}: GN {gn} listed twice");
            }
        }
        assert!(listed.len() * 10 >= whole.len() * 9, "{label}: {} of {} listed", listed.len(), whole.len());
        // Each message completed by one WQE, when the receiver delivered it.
        let msg_of = |tx: u32| f.txs.iter().find(|t| t.id == tx).and_then(|t| t.msg);
        for (ci, c) in f.conns.iter().enumerate() {
            for m in &c.messages {
                let by: Vec<_> = f
                    .flor_wqes
                    .iter()
                    .filter(|(conn, w)| *conn == ci as u32 && w.delivers && msg_of(w.first_tx) == Some(m.msg.id))
                    .collect();
                assert_eq!(by.len(), 1, "{label}: message {} of connection {ci}: {by:?}", m.msg.id);
                assert_eq!(Some(by[0].1.at), m.delivered.first().map(|d| d.0), "{label}: message {}", m.msg.id);
            }
        }
    }
    eprintln!("{wqes} WQEs closed: {aborted} aborted, {old} whole but redundant");
    assert!(aborted > 5 && old > 0, "{aborted} aborted, {old} redundant");
}

/// What the truth reads of each WQE a Flor sender transmits (`sim/flor_sent.rs`): every data
/// packet a sender sent is in exactly one WQE's PSN range; chunks are never resent as WRITEs
/// (a resend is a SEND: WRITE_RETX pieces, DATA, ADDR_REQ); a piece covers units of its
/// message an earlier chunk covered; every WQE's packets are its message's; GNs count WQEs from
/// 1 per connection.
#[test]
fn flor_wqes_are_read_from_their_first_packets() {
    use rocescope_sim::sim::flor_sent::WqeKind;
    use rocescope_sim::sim::Origin;
    use std::collections::HashMap;
    let mut pieces = 0;
    for (seed, size) in [(1, 100_000), (2, 8_192), (3, 300_000)] {
        let o = SynthOptions { message_size: size, loss: 0.03, loss_dir: LossDir::Both, incast: 2, ..flor(seed) };
        let label = format!("flor sent seed {seed} size {size}");
        let (f, _) = common::run_conserved(&label, &o);
        let by_id: HashMap<u32, &TxRec> = f.txs.iter().map(|t| (t.id, t)).collect();
        let mut of_wqe: HashMap<(u32, u32), u64> = HashMap::new();
        let mut gns: HashMap<u32, u64> = HashMap::new();
        for w in &f.flor_sent {
            let gn = gns.entry(w.conn).or_default();
            *gn += 1;
            assert_eq!(w.gn, *gn, "{label}: {w:?}");
            let first = by_id[&w.first_tx];
            for k in 0..w.packets {
                assert!(of_wqe.insert((w.conn, (w.first_psn + k) & 0xff_ffff), w.gn).is_none(), "{label}: {w:?}");
            }
            match w.kind {
                WqeKind::Chunk => assert!(first.reason.is_none(), "{label}: a chunk resent as a WRITE: {w:?}"),
                WqeKind::Piece { .. } => {
                    pieces += 1;
                    let chunk = f.flor_sent.iter().find(|c| {
                        c.conn == w.conn
                            && c.kind == WqeKind::Chunk
                            && c.first_tx < w.first_tx
                            && by_id[&c.first_tx].msg == first.msg
                            && c.covers(w.off)
                    });
                    assert!(chunk.is_some_and(|c| c.covers(w.off + w.units - 1)), "{label}: {w:?}");
                }
                _ => {}
            }
        }
        for t in f.txs.iter().filter(|t| t.origin == Origin::Requester && t.kind.is_data()) {
            let gn = of_wqe.get(&(t.conn, t.psn)).unwrap_or_else(|| panic!("{label}: {t:?} in no WQE"));
            let w = f.flor_sent.iter().find(|w| w.conn == t.conn && w.gn == *gn).unwrap();
            assert_eq!(t.msg, by_id[&w.first_tx].msg, "{label}: {t:?}");
        }
        assert_eq!(of_wqe.len(), f.txs.iter().filter(|t| t.origin == Origin::Requester && t.kind.is_data()).count());
    }
    assert!(pieces > 3, "{pieces} WRITE_RETX pieces");
}

/// Flor's truth (a first step: `synth --truth` still refuses Flor, whose view and analyser are
/// to come): a packet is its WQE transmission's (`sim.transmissions[].flor`), a copy of every
/// unit the WQE covers. Every packet of a resend WQE, and only those, is a retransmission, its
/// reason the sender's; a lost packet's repair is a later WQE of its message covering its unit,
/// signal `flor_ack` when the sender resent for an ACK's gap, else `timeout`; a packet's
/// acceptance is its WQE's (UC: the arrived packets of a WQE the receive lost are discarded);
/// and at the sender's tap each message completes at the ACK after which every unit of it was
/// listed, the instant the sender completed it.
#[test]
fn flor_truth_follows_wqes_and_units() {
    use rocescope_sim::synth::{simulate, truth};
    use rocescope_sim::truth::{Accept, Kind, Reason, Repair, Signal, TapName};
    let (mut retx, mut pieces_lost, mut flor_ack) = (0, 0, 0);
    for (seed, size) in [(1, 100_000), (2, 8_192), (3, 300_000), (5, 200_000)] {
        let o = SynthOptions { message_size: size, loss: 0.03, loss_dir: LossDir::Both, incast: 2, ..flor(seed) };
        let label = format!("flor truth seed {seed} size {size}");
        let f = simulate(&o, None, true, None).expect("simulating");
        let t = truth(&o, &f);
        let tx = |id: u32| &t.sim.transmissions[id as usize];
        for x in t.sim.transmissions.iter().filter(|x| x.kind == Kind::Data) {
            let w = x.flor.as_ref().unwrap_or_else(|| panic!("{label}: data without its WQE: {x:?}"));
            let sent = f.txs.iter().find(|r| r.id == x.id).unwrap();
            // (The sender tags every packet of a resend WQE with its reason.)
            assert_eq!(x.retx.is_some(), sent.reason.is_some(), "{label}: {x:?}");
            if let Some(r) = x.retx {
                retx += 1;
                assert!(r.copy >= 1 && w.wqe != "chunk", "{label}: {x:?}");
            }
            if matches!(x.fate, rocescope_sim::truth::Fate::Delivered) {
                assert!(x.accept.is_some() || f.flor_wqes.is_empty(), "{label}: {x:?}");
            }
        }
        for tap in &t.taps {
            for l in
                tap.flows.iter().filter(|fl| fl.role == rocescope_sim::truth::Role::Requests).flat_map(|fl| &fl.losses)
            {
                let lost = tx(l.tx);
                let Some(w) = lost.flor.as_ref() else { continue };
                if l.repair == Repair::None {
                    continue;
                }
                assert_eq!(l.repair, Repair::EndHost, "{label}: {l:?}");
                // The repair: the next WQE of the message covering the unit of the lost packet's
                // first byte (4 KiB units, 1 KiB packets; a SEND's first 24 bytes its header).
                let k = t
                    .sim
                    .transmissions
                    .iter()
                    .filter(|y| y.conn == lost.conn && y.flor.as_ref().is_some_and(|v| v.gn == w.gn) && y.id < l.tx)
                    .count() as u32;
                let unit = match w.wqe.as_str() {
                    "chunk" => w.off + k * 1024 / 4096,
                    "piece" => w.off + (k * 1024).saturating_sub(24) / 4096,
                    _ => 0,
                };
                let rep = t.sim.transmissions.iter().find(|y| {
                    y.id > l.tx
                        && y.conn == lost.conn
                        && y.msg == lost.msg
                        && y.flor.as_ref().is_some_and(|v| {
                            v.gn != w.gn
                                && (v.wqe == "data") == (w.wqe == "data")
                                && (v.wqe == "addr_req") == (w.wqe == "addr_req")
                                && v.off <= unit
                                && unit < v.off + v.units
                        })
                });
                let rep = rep.unwrap_or_else(|| panic!("{label}: no repair of {lost:?}"));
                let want =
                    if rep.retx.unwrap().reason == Some(Reason::Sack) { Signal::FlorAck } else { Signal::Timeout };
                flor_ack += (want == Signal::FlorAck) as u32;
                if w.wqe == "chunk" {
                    pieces_lost += 1;
                }
                assert_eq!(l.signal, want, "{label}: {l:?}");
            }
            if tap.name != TapName::Sender {
                continue;
            }
            // (The sender's tap is the first sender's link: connection 0.)
            for fl in tap.flows.iter().filter(|fl| fl.role == rocescope_sim::truth::Role::Requests && fl.conn == 0) {
                for m in &fl.messages {
                    let s = t.sim.messages.iter().find(|s| s.conn == fl.conn && s.index == m.index).unwrap();
                    assert_eq!(m.complete_time_ns, s.completed_ns, "{label}: message {} of {}", m.index, fl.conn);
                }
            }
        }
        // A WQE the UC receive lost: its arrived packets are discarded.
        let discarded = t.sim.transmissions.iter().filter(|x| x.accept == Some(Accept::Discarded)).count();
        assert!(discarded > 0 || o.loss == 0.0, "{label}");
    }
    eprintln!("{retx} retransmitted packets; {pieces_lost} lost chunk packets repaired; {flor_ack} by an ACK's gap");
    assert!(retx > 50 && pieces_lost > 3 && flor_ack > 3);
}

/// Flor's ACKs travel on a UD QP of their own: in the truth their tap frames are in that QP's
/// flow (`SRC>DST/ACKQPN`, as an analyser keys flows), the ADDR_RESPs in the responses flow.
#[test]
fn flor_acks_are_in_their_own_qps_flow() {
    use rocescope_sim::synth::{simulate, truth};
    let o = SynthOptions { message_size: 100_000, loss: 0.01, ..flor(1) };
    let f = simulate(&o, None, true, None).expect("simulating");
    let t = truth(&o, &f);
    let (mut acks, mut resps) = (0, 0);
    for fr in &t.taps[0].frames {
        let x = &t.sim.transmissions[fr.tx as usize];
        if x.flor_ack.is_some() {
            acks += 1;
            assert_eq!(fr.flow, format!("10.0.1.1>10.0.0.1/{}", 256 | 0x40_0000), "{fr:?}");
        } else if x.origin == rocescope_sim::truth::Origin::Responder {
            resps += 1;
            assert_eq!(fr.flow, "10.0.1.1>10.0.0.1/256", "{fr:?}");
        }
    }
    assert!(acks > 5 && resps > 5, "{acks} ACKs, {resps} ADDR_RESPs");
}
