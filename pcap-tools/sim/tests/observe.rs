//! The observable view (`docs/truth.md`, "What a tap can observe"; `rocescope_sim::observe`).
//!
//! - The `docs/truth.md` Example run, checked fact by fact against values derived by hand from
//!   its truth document and the rules (each derivation in a comment).
//! - Every fixture `fixtures/synth-*.truth.json`: every observable fact names a frame of its
//!   tap; the counts add up; at the sender and receiver taps of the clean fixtures and
//!   `gbn-loss` no retransmission is unobservable; and every value the view keeps is the one the
//!   simulator's records give (the view may only forget, never contradict). Each tap's facts,
//!   unobservable share and reasons are printed (`--nocapture`) for the docs' table.
//! - The same agreement on runs where timers fire (the fixtures have no timeout).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use rocescope_sim::observe::{view, Fact, FlowView, ObsMessage, Position, TapView, Why};
use rocescope_sim::sim::TopologyKind;
use rocescope_sim::synth::{self, simulate, OpChoice, Pattern, SynthOptions};
use rocescope_sim::truth::{Accept, Fate, Reason, Repair, RetxCause, Signal, TapName, TimeNs, Truth};
use rocescope_sim::{LossDir, LossMode, TapPoint};
use rocescope_stacks::StackKind;

/// `rocescope synth --stack gbn --messages 1 --message-size 3072 --loss 0.2 --loss-dir forward
/// --taps sender,receiver --seed 2` (docs/truth.md, Example).
fn example() -> SynthOptions {
    SynthOptions {
        messages: 1,
        message_size: 3072,
        loss: 0.2,
        loss_dir: LossDir::Forward,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        seed: 2,
        ..SynthOptions::for_stack(StackKind::Gbn)
    }
}

fn run(o: &SynthOptions) -> Truth {
    let f = simulate(o, None, true, None).expect("simulating");
    synth::truth(o, &f)
}

fn flow<'a>(v: &'a TapView, id: &str) -> &'a FlowView {
    v.flows.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("{:?}: no flow {id}", v.name))
}

const REQ: &str = "10.0.0.1>10.0.1.1/512";
const RESP: &str = "10.0.1.1>10.0.0.1/256";

#[test]
fn the_example_run_by_hand() {
    let t = run(&example());
    assert_eq!(t.command, "rocescope synth --stack gbn --messages 1 --message-size 3072 --op write --mtu 1024 --rate 100 --delay 1000 --paths 1 --reorder 0 --loss 0.2 --loss-on fabric --loss-dir forward --loss-mode drop --queue-bytes 1048576 --ecn-red 5000,200000,0.01 --cnp-interval 50000 --cc dcqcn --incast 1 --seed 2 --taps sender,receiver --fabric-tap-path 0 --local-ack-timeout 14 --dcp-timeout 1000000 --ack-every 4 --bdp-packets 128 --msg-window 8 --retry-cnt 7 --post-interval 0 --time-limit 10000000000 --watchdog 268435456");
    let v = view(&t);
    let ns = |n: u64| TimeNs(1_700_000_000_000_000_000 + n);
    // PSNs 10743542..544 are "542".."544" below. Transmissions (docs/truth.md, Example): tx0 542
    // arrives 3270, tx1 543 dropped, tx2 544 arrives 3447 (discarded), tx3 NAK 543, tx4 543
    // arrives 9735, tx5 544 arrives 9824, tx6 ACK 544. Arrivals follow sends: nothing is
    // reordered.

    // Sender tap (s0 = connection 0's sender): the source of the requests flow, the
    // destination of the responses flow. Frames 1, 2, 3 (tx0..2), 7 (NAK 543), 8 (tx4),
    // 9 (tx5), 13 (ACK 544).
    let s = &v[0];
    assert_eq!(s.name, TapName::Sender);
    let f = flow(s, REQ);
    assert_eq!(f.position, Position::Source);
    assert_eq!(flow(s, RESP).position, Position::Destination);
    // The loss of tx1 (543), "asked for": its next copy tx4 (frame 8) has trigger nak (the NAK
    // of frame 7, PSN 543 ≤ 543, recorded since tx1 left at frame 2; reason go_back) and the
    // NAK names 543 exactly, between frames 2 and 8. The tap recorded tx1: frame 2, at 90.
    assert_eq!(f.losses.len(), 1);
    let l = &f.losses[0];
    assert_eq!((l.psn, l.tx, l.frame, l.time_ns), (10743543, 1, 2, ns(90)));
    assert_eq!((l.signal, l.repair), (Some(Signal::Nak), Some(Repair::EndHost)));
    // Frame 8 (tx4, 543): copies at frames 2 (tx1), 8 (tx4), in send order; trigger nak (as
    // above); no ACK before it proves 543 (the NAK of frame 7 proves < 543), and the receiver
    // asked for it (nak, not reordered): not spurious; the loss of tx1 is observable: cause
    // loss.
    // Frame 9 (tx5, 544): copies at frames 3 (tx2), 9; the NAK of frame 7 (543 ≤ 544) arrived
    // since frame 3 and the reason is go_back: trigger nak; not spurious, as for frame 8; tx2
    // was not lost, and the tap cannot tell go_back from the timer's reason: cause null.
    let r: Vec<_> = f.retransmissions.iter().map(|r| (r.frame, r.tx, r.trigger, r.spurious, r.cause)).collect();
    assert_eq!(
        r,
        [(8, 4, Some(Signal::Nak), Some(false), Some(RetxCause::Loss)), (9, 5, Some(Signal::Nak), Some(false), None)]
    );
    assert_eq!(r.iter().map(|r| r.0).collect::<Vec<_>>(), [8, 9]);
    assert!(f.capture_gaps.is_empty());
    // Message 0: copies of its first (542, frame 1) and last PSN (544, frame 3) recorded: its
    // range is known; both its retransmissions are observable; a WRITE completes at the ACK of
    // frame 13.
    assert_eq!(f.messages.len(), 1);
    let m = &f.messages[0];
    assert_eq!((m.index, m.first_frame, m.last_frame, m.packets), (0, Some(1), Some(9), Some(3)));
    assert_eq!((m.retransmitted, m.complete_frame, m.complete_time_ns), (Some(2), Some(13), Some(ns(12845))));
    assert!(m.unknown.is_empty());
    assert!(f.unobservable.is_empty());
    assert_eq!((s.facts, s.unobservable.len(), s.share_unobservable()), (4, 0, 0.0));

    // Receiver tap (r0): the destination of the requests flow. Frames 4 (tx0 542), 5 (tx2 544),
    // 6 (NAK out), 10 (tx4 543), 11 (tx5 544), 12 (ACK 544 out).
    let r = &v[1];
    assert_eq!(r.name, TapName::Receiver);
    let f = flow(r, REQ);
    assert_eq!(f.position, Position::Destination);
    assert_eq!(flow(r, RESP).position, Position::Source);
    // The loss of tx1 by a gap: 543 not reordered; the first copy of 543 recorded is tx4
    // (frame 10), sent after tx1; tx1 is the only lost copy sent before tx4; frame 5 (544 >
    // 543, whole) came before frame 10. The tap never saw tx1: the frame is the repair's, 10,
    // at 9735; the signal is not the destination's to see; a later copy was recorded: end_host.
    assert_eq!(f.losses.len(), 1);
    let l = &f.losses[0];
    assert_eq!((l.psn, l.tx, l.frame, l.time_ns), (10743543, 1, 10, ns(9735)));
    assert_eq!((l.signal, l.repair), (None, Some(Repair::EndHost)));
    // Frame 10 (tx4, 543) is the tap's only copy of 543: no earlier copy seen, unobservable.
    // Frame 11 (tx5, 544): copies at 5 (tx2), 11, in order; the earlier copy tx2 was discarded,
    // not accepted: not spurious; no trigger at the destination, so no cause (the spec's
    // `go_back` would be right here, but a timer's go-back looks the same from this tap).
    let rx: Vec<_> = f.retransmissions.iter().map(|r| (r.frame, r.tx, r.trigger, r.spurious, r.cause)).collect();
    assert_eq!(rx, [(11, 5, None, Some(false), None)]);
    let u: Vec<_> = f.unobservable.iter().map(|u| (u.psn, u.tx, u.why)).collect();
    assert_eq!(u, [(Some(10743543), Some(4), Why::EarlierCopyNotSeen)]);
    // Message 0: copies of 542 (frame 4) and 544 (frame 5) recorded; frame 10, a retransmission
    // of it, is unobservable, so `retransmitted` is unknown; completed by the ACK of frame 12.
    let m = &f.messages[0];
    assert_eq!((m.first_frame, m.last_frame, m.packets), (Some(4), Some(11), Some(3)));
    assert_eq!((m.retransmitted, m.complete_frame, m.complete_time_ns), (None, Some(12), Some(ns(9824))));
    assert_eq!(m.unknown, ["retransmitted"]);
    // 4 facts (1 loss, 2 retransmissions, 1 message), 1 unobservable.
    assert_eq!(r.facts, 4);
    assert_eq!(r.unobservable, BTreeMap::from([(Why::EarlierCopyNotSeen, 1)]));
    assert_eq!(r.share_unobservable(), 0.25);
    // As JSON (the names the analysers' reports use).
    let j = serde_json::to_value(r).unwrap();
    assert_eq!(j["name"], "receiver");
    assert_eq!(j["unobservable"]["earlier_copy_not_seen"], 1);
    assert_eq!(j["flows"][0]["position"], "destination");
    assert_eq!(j["flows"][0]["unobservable"][0]["fact"], "retransmission");
    assert_eq!(j["flows"][0]["unobservable"][0]["why"], "earlier_copy_not_seen");
    assert_eq!(j["flows"][0]["messages"][0]["unknown"][0], "retransmitted");
    assert_eq!(j["flows"][0]["losses"][0]["time_ns"], "1700000000000009735");
    agrees_with_truth(&t, &v, "example");
}

fn fixtures() -> Vec<(String, Truth)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("fixtures/") {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_prefix("synth-").and_then(|n| n.strip_suffix(".truth.json")) {
            let t = Truth::from_json(&std::fs::read_to_string(&p).unwrap()).expect("a truth document");
            out.push((stem.to_string(), t));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(out.len(), 11, "the eleven synth fixtures");
    out
}

#[test]
fn fixtures_invariants_and_shares() {
    for (name, t) in fixtures() {
        let v = view(&t);
        assert_eq!(v.len(), t.taps.len());
        for (tap, tv) in t.taps.iter().zip(&v) {
            let ctx = format!("{name} {:?}", tap.name);
            let frames: HashMap<u64, &rocescope_sim::truth::Frame> = tap.frames.iter().map(|f| (f.frame, f)).collect();
            let conn_of = |id: &str| tap.flows.iter().find(|f| f.id == id).map(|f| f.conn);
            let mut observable = 0u64;
            // (Per truth flow: an SDR connection's data flow is viewed per data QP.)
            let mut kept_of: HashMap<(u32, bool), usize> = HashMap::new();
            for fv in &tv.flows {
                let tf = truth_flow(tap, fv);
                assert!(tf.frames > 0, "{ctx}: only flows the tap saw");
                // Losses and retransmissions name a frame of this flow at this tap; capture gaps
                // and messages a frame of its connection (the proof is in the reverse flow).
                let of_flow = |fr: u64| frames.get(&fr).is_some_and(|f| f.flow == fv.id);
                // (By the frame's transmission: an SDR data frame's flow is its QP's.)
                let of_conn = |fr: u64| {
                    frames.get(&fr).is_some_and(|f| {
                        conn_of(&f.flow).or(t.sim.transmissions.get(f.tx as usize).map(|x| x.conn)) == Some(fv.conn)
                    })
                };
                for l in &fv.losses {
                    assert!(of_flow(l.frame), "{ctx}: loss {l:?}");
                }
                for r in &fv.retransmissions {
                    assert!(of_flow(r.frame) && frames[&r.frame].tx == r.tx, "{ctx}: retransmission {r:?}");
                }
                for g in &fv.capture_gaps {
                    assert!(of_conn(g.frame), "{ctx}: gap {g:?}");
                }
                for m in &fv.messages {
                    for fr in [m.first_frame, m.last_frame, m.complete_frame].into_iter().flatten() {
                        assert!(of_conn(fr), "{ctx}: message {m:?}");
                    }
                }
                let kept = fv.losses.len() + fv.retransmissions.len() + fv.capture_gaps.len() + fv.messages.len();
                *kept_of.entry((fv.conn, fv.role == rocescope_sim::truth::Role::Requests)).or_default() +=
                    kept + fv.unobservable.len();
                observable += kept as u64;
            }
            // Per flow: each truth fact is either kept or listed unobservable.
            for ((conn, req), n) in kept_of {
                let tf = tap
                    .flows
                    .iter()
                    .find(|f| f.conn == conn && (f.role == rocescope_sim::truth::Role::Requests) == req);
                let tf = tf.unwrap();
                let all = tf.losses.len() + tf.retransmissions.len() + tf.capture_gaps.len() + message_facts(&t, tf);
                assert_eq!(n, all, "{ctx} {}", tf.id);
            }
            let unobservable: u64 = tv.unobservable.values().sum();
            assert_eq!(tv.facts, observable + unobservable, "{ctx}: facts add up");
            let facts: usize = tap
                .flows
                .iter()
                .map(|f| f.losses.len() + f.retransmissions.len() + f.capture_gaps.len() + message_facts(&t, f))
                .sum();
            assert_eq!(tv.facts, facts as u64, "{ctx}");
            // At the endpoints' taps of the clean fixtures and `gbn-loss` (no reordering that
            // matters there) no retransmission is unobservable, except, at a tap downstream of a
            // loss, the first copy it recorded of a PSN whose every earlier copy was lost on the
            // way (gbn-loss, receiver: frames 182 and 300, the resends of 11582642 and
            // 11582668, whose copies tx3, and tx23 and tx60, were dropped; found with jq:
            // `.taps[1]` retransmissions with no earlier frame of their PSN).
            let endpoint = matches!(tap.name, TapName::Sender | TapName::Receiver);
            if endpoint && (name.ends_with("-clean") || name == "gbn-loss") {
                for fv in &tv.flows {
                    for u in fv.unobservable.iter().filter(|u| u.fact == Fact::Retransmission) {
                        assert_eq!(u.why, Why::EarlierCopyNotSeen, "{ctx}: {u:?}");
                        let tx = u.tx.unwrap();
                        let psn = u.psn.unwrap();
                        let earlier = t.sim.transmissions.iter().filter(|x| {
                            x.id < tx
                                && x.conn == fv.conn
                                && x.psn == psn
                                && x.kind == t.sim.transmissions[tx as usize].kind
                        });
                        assert!(earlier.clone().count() > 0, "{ctx}: {u:?}");
                        assert!(earlier.clone().all(|x| x.fate == Fate::Dropped), "{ctx}: {u:?}");
                    }
                }
                let n =
                    tv.flows.iter().flat_map(|f| &f.unobservable).filter(|u| u.fact == Fact::Retransmission).count();
                let want = if name == "gbn-loss" && tap.name == TapName::Receiver { 2 } else { 0 };
                assert_eq!(n, want, "{ctx}: unobservable retransmissions");
            }
            eprintln!(
                "{name:10} {:8} facts {:4}  unobservable {:5.1} %  {:?}",
                format!("{:?}", tap.name).to_lowercase(),
                tv.facts,
                100.0 * tv.share_unobservable(),
                tv.unobservable
            );
        }
        agrees_with_truth(&t, &v, &name);
    }
}

/// Runs where timers fire and copies are lost both ways (the fixtures have no timeout): the
/// view keeps only values the simulator's records confirm.
#[test]
fn known_values_agree_with_the_simulator_when_timers_fire() {
    let runs = [
        // Go-Back-N with ACKs and NAKs lost too, and a short timer.
        SynthOptions {
            loss: 0.05,
            messages: 16,
            seed: 3,
            rto_ns: Some(50_000),
            ..SynthOptions::for_stack(StackKind::Gbn)
        },
        // IRN over sprayed paths with loss both ways.
        SynthOptions {
            loss: 0.05,
            messages: 16,
            seed: 4,
            paths: 4,
            routing: rocescope_sim::Routing::Spray,
            reorder_ns: 1500,
            ..SynthOptions::for_stack(StackKind::Irn)
        },
        // DCP with losses dropped whole (its coarse timeout recovers them) and trimmed ones.
        SynthOptions {
            loss: 0.05,
            messages: 16,
            seed: 5,
            loss_mode: LossMode::Drop,
            incast: 2,
            queue_bytes: 8192,
            ..SynthOptions::for_stack(StackKind::Dcp)
        },
        // Go-Back-N READs among the other operations (resent READ responses), lost both ways.
        SynthOptions {
            loss: 0.05,
            messages: 16,
            seed: 6,
            op: OpChoice::Mix,
            ..SynthOptions::for_stack(StackKind::Gbn)
        },
        // A leaf-spine permutation, sprayed: the sender tap is the source of connection 0 and
        // the destination of the connection whose responder is its host.
        SynthOptions {
            loss: 0.02,
            messages: 8,
            seed: 7,
            topology: TopologyKind::LeafSpine { leaves: 3, spines: 2, hosts_per_leaf: 2 },
            pattern: Pattern::Permutation,
            routing: rocescope_sim::Routing::Spray,
            ..SynthOptions::for_stack(StackKind::Irn)
        },
        // ERD: NACKs only, data, NACK segments and their TCP ACKs lost both ways; one path, and
        // a 2-to-1 incast sprayed over 8 (late packets: NACKs naming PSNs still on their way).
        SynthOptions {
            loss: 0.05,
            loss_dir: rocescope_sim::LossDir::Both,
            messages: 16,
            mtu: 1024,
            seed: 8,
            ..SynthOptions::for_stack(StackKind::Erd)
        },
        erd_sprayed(),
    ];
    for o in runs {
        let t = run(&o);
        let timeouts = t.sim.transmissions.iter().filter(|x| x.retx.is_some_and(|r| r.reason == Some(Reason::Timeout)));
        eprintln!("{}: {} timeouts", t.command, timeouts.count());
        let v = view(&t);
        agrees_with_truth(&t, &v, &t.command);
        // Every flow with a frame at an endpoint's tap starts or ends at its host.
        for tv in v.iter().filter(|tv| tv.name != TapName::Fabric) {
            assert!(tv.flows.iter().all(|f| f.position != Position::Middle), "{}", t.command);
        }
        if matches!(o.topology, TopologyKind::LeafSpine { .. }) {
            let s = &v[0];
            assert!(s.flows.iter().any(|f| f.conn != 0 && f.position == Position::Destination), "{:?}", s.flows);
        }
    }
}

/// ERD, a 2-to-1 incast sprayed over 8 paths, 3 % loss both ways (packets late on slow paths,
/// NACK segments lost).
fn erd_sprayed() -> SynthOptions {
    SynthOptions {
        loss: 0.03,
        loss_dir: LossDir::Both,
        messages: 16,
        mtu: 1024,
        seed: 9,
        incast: 2,
        paths: 8,
        routing: rocescope_sim::Routing::Spray,
        reorder_ns: 4_000,
        ..SynthOptions::for_stack(StackKind::Erd)
    }
}

/// Every value the view keeps is the truth's: a retransmission's `spurious` and `cause` (and
/// its `trigger` is the stack's reason), a loss's frame, `signal` and `repair`, a gap's frame,
/// a message's fields.
/// The truth's flow a view's flow is of: the same id, or (an SDR data QP's view) its
/// connection's flow of the same role.
fn truth_flow<'a>(tap: &'a rocescope_sim::truth::Tap, fv: &FlowView) -> &'a rocescope_sim::truth::Flow {
    tap.flows
        .iter()
        .find(|f| f.id == fv.id)
        .or_else(|| tap.flows.iter().find(|f| f.conn == fv.conn && f.role == fv.role))
        .unwrap_or_else(|| panic!("{:?}: no flow for {}", tap.name, fv.id))
}

fn agrees_with_truth(t: &Truth, v: &[TapView], ctx: &str) {
    let reason = |s: Signal| match s {
        Signal::Nak => Reason::GoBack,
        Signal::Sack => Reason::Sack,
        Signal::Ho => Reason::HeaderOnly,
        Signal::Timeout => Reason::Timeout,
        Signal::ErdNack => Reason::ErdNack,
        Signal::SdrBitmap => Reason::Sack,
        Signal::FlorAck => Reason::Sack,
        s => panic!("{ctx}: trigger {s:?}"),
    };
    let mut checked = HashSet::new();
    for (tap, tv) in t.taps.iter().zip(v) {
        for fv in &tv.flows {
            let tf = truth_flow(tap, fv);
            let ctx = format!("{ctx} {:?} {}", tap.name, fv.id);
            let sdr = matches!(t.config.stack, rocescope_sim::truth::Stack::SdrSr | rocescope_sim::truth::Stack::SdrEc);
            for r in &fv.retransmissions {
                let tr = tf.retransmissions.iter().find(|x| x.frame == r.frame).unwrap();
                assert_eq!((r.psn, r.tx, r.time_ns), (tr.psn, tr.tx, tr.time_ns), "{ctx}");
                if let Some(s) = r.trigger {
                    assert_eq!(Some(reason(s)), tr.reason, "{ctx}: trigger of {r:?}");
                }
                if let Some(s) = r.spurious {
                    assert_eq!(s, tr.spurious, "{ctx}: spurious of {r:?}");
                }
                if let Some(c) = r.cause {
                    assert_eq!(c, tr.cause, "{ctx}: cause of {r:?}");
                }
                checked.insert("retransmission");
            }
            for l in &fv.losses {
                let tl = tf.losses.iter().find(|x| x.tx == l.tx).unwrap();
                assert_eq!(Some(l.frame), tl.frame, "{ctx}: {l:?}");
                // The PSN is its frame's (an SDR loss seen at its repair names the repair's UC
                // PSN; elsewhere the lost copy's).
                let at = tap.frames.iter().find(|f| f.frame == l.frame).unwrap();
                assert_eq!(l.psn, if sdr { at.psn } else { tl.psn }, "{ctx}: {l:?}");
                if let Some(s) = l.signal {
                    assert_eq!(s, tl.signal, "{ctx}: signal of {l:?}");
                }
                if let Some(r) = l.repair {
                    assert_eq!(r, tl.repair, "{ctx}: repair of {l:?}");
                }
                checked.insert("loss");
            }
            for g in &fv.capture_gaps {
                let tg = tf.capture_gaps.iter().find(|x| x.psn == g.psn).unwrap();
                assert_eq!(Some(g.frame), tg.frame, "{ctx}: {g:?}");
                checked.insert("gap");
            }
            // (SDR's views number a flow's messages as the tap first saw them: the truth's is the
            // message of the view's first frame.)
            let msg_of_frame = |fr: u64| {
                let f = tap.frames.iter().find(|f| f.frame == fr).unwrap();
                t.sim.transmissions.iter().find(|x| x.id == f.tx).and_then(|x| x.msg).unwrap()
            };
            let ec = t.config.stack == rocescope_sim::truth::Stack::SdrEc;
            for m in fv.messages.iter().filter(|_| ec) {
                sdr_ec_send_agrees(t, tap, m, &ctx);
                checked.insert("message");
            }
            for m in fv.messages.iter().filter(|_| !ec) {
                // (Flor's views, too, number messages as the tap first meets them.)
                let flor = t.config.stack == rocescope_sim::truth::Stack::Flor;
                let index = if sdr || flor { msg_of_frame(m.first_frame.unwrap()) } else { m.index };
                let tm = tf.messages.iter().find(|x| x.index == index).unwrap();
                let known = |name: &str| !m.unknown.contains(&name);
                let pairs = [
                    ("first_frame", m.first_frame, tm.first_frame),
                    ("last_frame", m.last_frame, tm.last_frame),
                    ("packets", m.packets.map(u64::from), Some(tm.packets as u64)),
                    ("retransmitted", m.retransmitted, Some(tm.retransmitted)),
                    ("complete_frame", m.complete_frame, tm.complete_frame),
                    ("complete_time_ns", m.complete_time_ns.map(|x| x.0), tm.complete_time_ns.map(|x| x.0)),
                ];
                for (name, got, want) in pairs {
                    if known(name) {
                        assert_eq!(got, want, "{ctx}: message {} {name}", m.index);
                    } else {
                        assert_eq!(got, None, "{ctx}: message {} {name}", m.index);
                    }
                }
            }
        }
    }
    assert!(!checked.is_empty() || t.summary.retransmissions == 0, "{ctx}: something was checked");
}

/// A flow's message facts: a message each, but for SDR erasure coding, whose messages the view
/// and the timeline list as sends (D0, P0, D1, …): the sends of each that carried a packet (at
/// least one).
fn message_facts(t: &Truth, f: &rocescope_sim::truth::Flow) -> usize {
    if t.config.stack != rocescope_sim::truth::Stack::SdrEc {
        return f.messages.len();
    }
    let data = t.sim.transmissions.iter().filter(|x| x.conn == f.conn && x.kind == rocescope_sim::truth::Kind::Data);
    let mut sends: HashMap<u64, HashSet<u32>> = HashMap::new();
    for x in data {
        sends.entry(x.msg.unwrap()).or_default().insert(x.sdr_seq.unwrap());
    }
    f.messages.iter().map(|m| sends.get(&m.index).map_or(1, |s| s.len().max(1))).sum()
}

/// SDR erasure coding: a message of the view is one send of a message (D0, P0, D1, …; the
/// timeline's, as the wire names them): its frames, packets and retransmissions are the tap's
/// of that send, and it completes at an SR_ACK of it passing every packet, or at the EC_ACK
/// naming it (a message's D0), which is then the truth's completion of the message.
fn sdr_ec_send_agrees(t: &Truth, tap: &rocescope_sim::truth::Tap, m: &ObsMessage, ctx: &str) {
    let tx = |id: u32| &t.sim.transmissions[id as usize];
    let first = tap.frames.iter().find(|f| Some(f.frame) == m.first_frame).unwrap();
    let x = tx(first.tx);
    let (conn, seq, msg) = (x.conn, x.sdr_seq.unwrap(), x.msg.unwrap());
    let of_send = |id: u32| {
        let y = tx(id);
        y.conn == conn && y.sdr_seq == Some(seq) && y.kind == rocescope_sim::truth::Kind::Data
    };
    let frames: Vec<_> = tap.frames.iter().filter(|f| of_send(f.tx)).collect();
    let ctx = format!("{ctx}: send {seq} of message {msg}");
    assert_eq!(m.first_frame, frames.first().map(|f| f.frame), "{ctx}");
    assert_eq!(m.last_frame, frames.last().map(|f| f.frame), "{ctx}");
    let offsets: HashSet<u32> =
        t.sim.transmissions.iter().filter(|y| of_send(y.id)).map(|y| y.sdr_off.unwrap()).collect();
    if let Some(p) = m.packets {
        assert_eq!(p as usize, offsets.len(), "{ctx}: packets");
    }
    if let Some(r) = m.retransmitted {
        assert_eq!(r as usize, frames.iter().filter(|f| tx(f.tx).retx.is_some()).count(), "{ctx}: retransmitted");
    }
    let Some(c) = m.complete_frame else { return };
    let f = tap.frames.iter().find(|f| f.frame == c).unwrap();
    let ctrl = tx(f.tx).sdr_ctrl.as_ref().unwrap_or_else(|| panic!("{ctx}: completed by {f:?}"));
    assert_eq!(ctrl.msg_seq, seq, "{ctx}: completed by {ctrl:?}");
    assert_eq!(m.complete_time_ns, Some(f.time_ns), "{ctx}");
    match ctrl.kind.as_str() {
        "sr_ack" => assert!(ctrl.cum_ack.unwrap() as usize >= offsets.len(), "{ctx}: {ctrl:?}"),
        "ec_ack" => {
            let tf = tap.flows.iter().find(|tf| tf.conn == conn && tf.role == rocescope_sim::truth::Role::Requests);
            let tm = tf.unwrap().messages.iter().find(|tm| tm.index == msg).unwrap();
            assert_eq!(tm.complete_frame, Some(c), "{ctx}: the message completes at its EC_ACK");
        }
        k => panic!("{ctx}: completed by {k}"),
    }
}

/// ERD (docs/truth.md, "ERD"): the truth says what each NACK segment named, every resend
/// answers a NACK the sender had received naming its PSN (no more resends of a PSN by any time
/// than NACKs naming it had reached the sender), and the view reads losses (signal
/// `erd_nack`), triggers and message completions from the NACKs each tap recorded.
#[test]
fn erd_nacks_in_the_truth_and_the_view() {
    let t = run(&SynthOptions { message_size: 16_384, ..erd_sprayed() });
    let nacks: Vec<_> = t.sim.transmissions.iter().filter(|x| x.nack.is_some()).collect();
    let resends: Vec<_> = t.sim.transmissions.iter().filter(|x| x.retx.is_some()).collect();
    assert!(nacks.len() >= 2 && resends.len() >= 10, "{} NACK segments, {} resends", nacks.len(), resends.len());
    for x in &resends {
        assert_eq!(x.retx.unwrap().reason, Some(Reason::ErdNack), "{x:?}");
        let namings: usize = nacks
            .iter()
            .filter(|n| n.conn == x.conn && n.fate == Fate::Delivered)
            .filter(|n| n.fate_time_ns.is_some_and(|at| at <= x.time_ns))
            .map(|n| n.nack.as_ref().unwrap().psns.iter().filter(|&&p| p == x.psn).count())
            .sum();
        let resent = resends.iter().filter(|r| r.conn == x.conn && r.psn == x.psn && r.id <= x.id).count();
        assert!(resent <= namings, "resend {resent} of PSN {} at {:?}: {namings} NACKs had named it", x.psn, x.time_ns);
    }
    let v = view(&t);
    for tv in &v {
        let losses = tv.flows.iter().flat_map(|f| &f.losses).filter(|l| l.signal == Some(Signal::ErdNack)).count();
        let ambiguous: usize = tv.flows.iter().map(|f| f.ambiguous.len()).sum();
        let complete = tv.flows.iter().flat_map(|f| &f.messages).filter(|m| m.complete_frame.is_some()).count();
        eprintln!("{:?}: {losses} losses by NACK, {ambiguous} ambiguous PSNs, {complete} completions", tv.name);
        assert!(losses > 0 || tv.name == TapName::Fabric, "{:?}", tv.name);
        // Only the receiver's tap sees a message complete (every one of the 32).
        assert_eq!(complete, if tv.name == TapName::Receiver { 32 } else { 0 }, "{:?}", tv.name);
    }
    agrees_with_truth(&t, &v, "erd");
}

/// SDR selective repeat (docs/truth.md, "SDR"): a packet's copies are its (message, offset)'s,
/// numbered in send order whatever their UC PSNs; each data frame is in its channel's QP flow;
/// a resend for an SR_NACK follows an SR_NACK naming it that had reached the sender; a
/// message's completion at the sender's tap is the instant the sender completed it; and every
/// value the view keeps is the truth's.
#[test]
fn sdr_units_in_the_truth_and_the_view() {
    for nack in [false, true] {
        let mut o = SynthOptions {
            messages: 12,
            message_size: 16_384,
            mtu: 1024,
            loss: 0.03,
            loss_dir: LossDir::Both,
            incast: 2,
            taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
            seed: 4,
            ..SynthOptions::for_stack(StackKind::SdrSr)
        };
        (o.sdr.nack, o.sdr.channels) = (nack, 2);
        let ctx = format!("sdr-sr nack {nack}");
        let t = run(&o);
        // Copies by (connection, message, offset), in send order.
        let mut copies: HashMap<(u32, u64, u32), Vec<&rocescope_sim::truth::Transmission>> = HashMap::new();
        for x in t.sim.transmissions.iter().filter(|x| x.kind == rocescope_sim::truth::Kind::Data) {
            let off = x.sdr_off.unwrap_or_else(|| panic!("{ctx}: data without an offset: {x:?}"));
            copies.entry((x.conn, x.msg.unwrap(), off)).or_default().push(x);
        }
        let mut reasons = HashMap::new();
        for ((conn, msg, off), cs) in &copies {
            for (i, x) in cs.iter().enumerate() {
                assert_eq!(x.retx.map(|r| r.copy), (i > 0).then_some(i as u32), "{ctx}: {x:?}");
                let Some(r) = x.retx else { continue };
                *reasons.entry(r.reason).or_insert(0) += 1;
                if r.reason == Some(Reason::Sack) {
                    // An SR_NACK naming it reached the sender before it left.
                    let named = t.sim.transmissions.iter().any(|n| {
                        n.conn == *conn
                            && n.fate_time_ns.is_some_and(|at| at <= x.time_ns && n.fate == Fate::Delivered)
                            && n.sdr_ctrl.as_ref().is_some_and(|c| {
                                c.kind == "sr_nack" && c.msg_seq as u64 == *msg && c.indices.contains(off)
                            })
                    });
                    assert!(named, "{ctx}: resend {x:?} for an SR_NACK no SR_NACK asked for");
                }
            }
        }
        eprintln!("{ctx}: resends by reason {reasons:?}");
        assert!(reasons.get(&Some(Reason::Timeout)).is_some_and(|&n| n > 0), "{ctx}: {reasons:?}");
        assert_eq!(reasons.contains_key(&Some(Reason::Sack)), nack, "{ctx}: {reasons:?}");
        for tap in &t.taps {
            for f in tap.frames.iter().filter(|f| f.kind == rocescope_sim::truth::Kind::Data) {
                let x = t.sim.transmissions.iter().find(|x| x.id == f.tx).unwrap();
                let c = &t.connections[x.conn as usize];
                // Generation 0 (few messages), channel offset mod 2.
                let qp = c.responder.qpn + x.sdr_off.unwrap() % 2;
                assert!(f.flow.ends_with(&format!("/{qp}")), "{ctx}: {f:?}");
            }
            if tap.name == TapName::Sender {
                let fl =
                    tap.flows.iter().find(|f| f.conn == 0 && f.role == rocescope_sim::truth::Role::Requests).unwrap();
                for m in &fl.messages {
                    let sm = t.sim.messages.iter().find(|s| s.conn == 0 && s.index == m.index).unwrap();
                    assert_eq!(m.complete_time_ns, sm.completed_ns, "{ctx}: message {}", m.index);
                }
            }
        }
        let v = view(&t);
        // Every value the view keeps is the truth's, retransmissions, losses and messages alike
        // (`agrees_with_truth`, below); here, that there are enough of them, and that every
        // observable loss has its repair.
        let mut checked = 0;
        for (tap, tv) in t.taps.iter().zip(&v) {
            for fv in &tv.flows {
                let tf = tap.flows.iter().find(|f| f.conn == fv.conn && f.role == fv.role).unwrap();
                for l in &fv.losses {
                    let tl = tf.losses.iter().find(|x| x.tx == l.tx).unwrap();
                    assert_eq!(l.repair, Some(tl.repair), "{ctx}: repair of {l:?}");
                }
                checked += fv.retransmissions.len() + fv.losses.len();
            }
            let losses: Vec<_> = tv.flows.iter().flat_map(|f| &f.losses).collect();
            eprintln!("{ctx} {:?}: {} observable losses", tv.name, losses.len());
            if tv.name == TapName::Sender {
                let signal = if nack { Signal::SdrBitmap } else { Signal::Timeout };
                assert!(losses.iter().any(|l| l.signal == Some(signal)), "{ctx}: no loss signalled by {signal:?}");
            }
        }
        assert!(checked > 20, "{ctx}: {checked} facts checked");
        agrees_with_truth(&t, &v, &ctx);
    }
}

/// SDR erasure coding's packets in the truth (a first step of its ground truth, which `synth
/// --truth` still refuses): a message goes as sends D0, P0, D1, P1, … each numbering its packets
/// from 0, so a packet is its send's (`sdr_seq`) and offset, not its message's: packet 0 of a
/// parity send is no copy of packet 0 of the data send before it. Every copy number the truth
/// gives is the count of earlier transmissions of the same (send, offset); the sends of a message
/// have consecutive sequence numbers, D_j at 2j and P_j at 2j + 1 past its first.
#[test]
fn sdr_ec_packets_are_known_by_their_send_and_offset() {
    let mut o = SynthOptions {
        messages: 6,
        message_size: 16_384,
        mtu: 1024,
        loss: 0.2,
        loss_dir: LossDir::Forward,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        seed: 2,
        ..SynthOptions::for_stack(StackKind::SdrEc)
    };
    (o.sdr.k, o.sdr.m) = (4, 2);
    let t = run(&o);
    let data: Vec<_> = t.sim.transmissions.iter().filter(|x| x.kind == rocescope_sim::truth::Kind::Data).collect();
    let mut earlier: HashMap<(u32, u32, u32), u32> = HashMap::new();
    let mut sends: HashMap<u64, HashSet<u32>> = HashMap::new();
    let mut retx = 0;
    for x in &data {
        let (seq, off) = (x.sdr_seq.expect("sdr_seq"), x.sdr_off.expect("sdr_off"));
        let n = earlier.entry((x.conn, seq, off)).or_default();
        assert_eq!(x.retx.map_or(0, |r| r.copy), *n, "{x:?}");
        *n += 1;
        retx += x.retx.is_some() as u32;
        sends.entry(x.msg.unwrap()).or_default().insert(seq);
    }
    // 16 chunks of one packet, k = 4: 4 data and 4 parity sends a message, numbered in a row.
    for (m, seqs) in &sends {
        let first = *seqs.iter().min().unwrap();
        assert_eq!(*seqs, (first..first + 8).collect::<HashSet<u32>>(), "message {m}");
        assert_eq!(first as u64, m * 8, "message {m}");
    }
    // Packet 0 of D0 and of P0 are both first copies.
    let zeros = data.iter().filter(|x| x.msg == Some(0) && x.sdr_off == Some(0) && x.retx.is_none()).count();
    assert!(zeros >= 2, "{zeros}");
    // (At 20 % loss some submessage loses more than m of its k + m: EC_NACK, and its chunks go
    // again.)
    assert!(retx > 0, "{} data transmissions, no resend", data.len());
    // A lost data packet of which no copy reached the receiver before its message was delivered
    // was rebuilt from parity: repair `erasure_code`, signal `gap` (no control message names
    // it); at no tap observable. A later copy of it arrived after the delivery (or was lost),
    // and is a spurious retransmission.
    let v = view(&t);
    let mut decoded_total = 0;
    let delivered = |m: u64| t.sim.messages.iter().find(|s| s.index == m).and_then(|s| s.delivered_ns).unwrap();
    for (tap, tv) in t.taps.iter().zip(&v) {
        let losses = tap.flows.iter().flat_map(|f| &f.losses);
        let decoded: Vec<_> = losses.filter(|l| l.repair == Repair::ErasureCode).collect();
        for l in &decoded {
            let x = &t.sim.transmissions[l.tx as usize];
            let key = (x.conn, x.sdr_seq, x.sdr_off);
            let at = delivered(x.msg.unwrap());
            assert!(x.time_ns < at, "{l:?}: sent after its message's delivery");
            for y in data.iter().filter(|y| (y.conn, y.sdr_seq, y.sdr_off) == key) {
                assert_ne!(y.accept, Some(Accept::Accepted), "{l:?}: a copy arrived: {y:?}");
                if y.id > x.id && y.fate == Fate::Delivered {
                    assert!(y.fate_time_ns.unwrap() >= at, "{y:?} arrived before the delivery");
                    let r = y.retx.unwrap();
                    assert!(r.spurious && r.cause == RetxCause::Spurious, "{y:?}");
                }
            }
            let parity = (x.sdr_seq.unwrap() as u64 - x.msg.unwrap() * 8) % 2 == 1;
            assert!(!parity && l.signal == Signal::Gap, "{l:?}");
        }
        let unobservable = tv.unobservable.get(&Why::ErasureDecoded).copied().unwrap_or(0);
        assert_eq!(unobservable as usize, decoded.len(), "{:?}", tap.name);
        decoded_total += decoded.len();
        // Every fact of the truth (a message's: its sends) kept or listed unobservable.
        let kept: usize = tv
            .flows
            .iter()
            .map(|f| f.losses.len() + f.retransmissions.len() + f.capture_gaps.len() + f.messages.len())
            .sum();
        assert_eq!(tv.facts, kept as u64 + tv.unobservable.values().sum::<u64>(), "{:?}", tap.name);
    }
    eprintln!("sdr-ec: {decoded_total} losses rebuilt from parity (over the taps)");
    assert!(decoded_total > 0, "no loss rebuilt from parity");
    agrees_with_truth(&t, &v, "sdr-ec");
}

/// Flor (docs/truth.md, "Flor"): the view reads WQE copies and the ACKs listing them. Over
/// lossy runs of large messages (WRITE chunks, their WRITE_RETX pieces, ADDR_REQs) and small
/// ones (SENDs), at the sender's and the receiver's taps: every fact of the truth is kept or
/// listed unobservable, every value the view keeps is the truth's, resends for an ACK's gap are
/// observable at the sender with trigger `flor_ack`, and losses are observable downstream of
/// them (at the receiver's tap) and not at the sender's, where an ACK names the WQE, not the
/// packet.
#[test]
fn flor_wqes_and_acks_in_the_view() {
    let (mut flor_ack, mut losses_rx, mut wqe_not_packet) = (0, 0, 0);
    for (seed, size) in [(1, 100_000), (2, 8_192), (3, 300_000)] {
        let o = SynthOptions {
            messages: 12,
            message_size: size,
            mtu: 1024,
            loss: 0.03,
            loss_dir: LossDir::Both,
            taps: vec![TapPoint::Sender, TapPoint::Receiver],
            seed,
            time_limit_ns: 2_000_000_000,
            ..SynthOptions::for_stack(StackKind::Flor)
        };
        let ctx = format!("flor seed {seed} size {size}");
        let t = run(&o);
        let v = view(&t);
        for (tap, tv) in t.taps.iter().zip(&v) {
            let kept: usize = tv
                .flows
                .iter()
                .map(|f| f.losses.len() + f.retransmissions.len() + f.capture_gaps.len() + f.messages.len())
                .sum();
            assert_eq!(tv.facts, kept as u64 + tv.unobservable.values().sum::<u64>(), "{ctx} {:?}", tap.name);
            for f in &tv.flows {
                flor_ack += f.retransmissions.iter().filter(|r| r.trigger == Some(Signal::FlorAck)).count();
                if tap.name == TapName::Receiver {
                    losses_rx += f.losses.len();
                } else {
                    // (Upstream of the loss, only a one-packet WQE's loss names its packet.)
                    for l in &f.losses {
                        let gn = t.sim.transmissions[l.tx as usize].flor.as_ref().unwrap().gn;
                        let packets = t
                            .sim
                            .transmissions
                            .iter()
                            .filter(|y| y.flor.as_ref().is_some_and(|w| w.gn == gn && y.conn == f.conn))
                            .count();
                        assert_eq!(packets, 1, "{ctx}: {l:?}");
                    }
                }
            }
            wqe_not_packet += tv.unobservable.get(&Why::WqeNotPacket).copied().unwrap_or(0);
            eprintln!(
                "{ctx} {:?}: {} facts, {:.1} % unobservable {:?}",
                tap.name,
                tv.facts,
                100.0 * tv.share_unobservable(),
                tv.unobservable
            );
        }
        agrees_with_truth(&t, &v, &ctx);
    }
    eprintln!("{flor_ack} resends for an ACK's gap, {losses_rx} losses at the receiver's tap, {wqe_not_packet} WQE-not-packet");
    assert!(flor_ack > 10 && losses_rx > 5 && wqe_not_packet > 5);
}
