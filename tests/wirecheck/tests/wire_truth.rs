//! The ground truth and the stacks judged from the capture (issue 9: "count every
//! retransmission from decoded frame bytes, rebuild delivered payloads from the frames"): for
//! GBN, IRN and DCP, without loss, under random loss, sprayed over 8 paths, and in a 4-to-1
//! incast (DCP trimming), the truth's
//! frames, per-tap retransmissions and losses are what the frames show, every message is
//! rebuilt intact from the bytes that reached the receiver and acknowledged at the sender's tap,
//! Go-Back-N goes back exactly to its NAKs, and (one path) no stack resends a PSN it already saw
//! acknowledged.

mod common;

use common::*;
use rocescope_stacks::StackKind;
use rocescope_wirecheck::verdict::judge;

const SEEDS: std::ops::RangeInclusive<u64> = 1..=4;

#[test]
fn truth_and_delivery_agree_with_the_capture_for_every_stack_and_scenario() {
    for stack in StackKind::RC {
        for s in SCENARIOS {
            let (mut retx, mut losses, mut frames, mut labels, mut gaps) = (0, 0, 0, 0, 0);
            for seed in SEEDS {
                let o = opts(stack, s, seed);
                let r = synth_once(&o, "truth");
                let v = judge(&r);
                // READ responses' labels: see the ignored test below.
                let res = [&v.truth, &v.labels, &v.delivery, &v.go_back, &v.errors];
                if let Some(e) = res.iter().find(|e| !e.is_empty()) {
                    panic!("{}:\n{}", o.command_line(), e.join("\n"));
                }
                // The receiver's tap sees every connection's requests; the sender's, s0's.
                assert_eq!(v.numbers.messages_rebuilt, 16 * o.incast as u64, "{}", o.command_line());
                assert_eq!(v.numbers.completed_on_wire, 16, "{}", o.command_line());
                retx += v.numbers.compared.retx;
                labels += v.numbers.labels_checked;
                gaps += v.numbers.compared.gaps;
                losses += v.numbers.compared.losses;
                frames += v.numbers.compared.frames;
            }
            eprintln!(
                "{} {s:?}: {frames} frames, {retx} retransmissions, {losses} losses, {labels} spurious labels, {gaps} capture gaps compared",
                stack.name()
            );
            // The comparisons were not vacuous.
            if s != Scenario::Clean {
                assert!(losses > 0, "{} {s:?}: no loss to compare", stack.name());
                assert!(retx > 0, "{} {s:?}: no retransmission to compare", stack.name());
            } else {
                assert_eq!((retx, losses), (0, 0), "{} {s:?}", stack.name());
            }
            if s == Scenario::Spray {
                assert!(gaps > 10, "{} {s:?}: the fabric tap's capture gaps were not exercised", stack.name());
            }
        }
    }
}

#[test]
fn on_one_path_no_stack_resends_an_acknowledged_psn() {
    for stack in StackKind::RC {
        for s in [Scenario::Clean, Scenario::Loss] {
            for seed in SEEDS {
                let o = opts(stack, s, seed);
                let v = judge(&synth_once(&o, "resends"));
                assert!(v.resends.is_empty(), "{}:\n{}", o.command_line(), v.resends.join("\n"));
            }
        }
    }
}

/// Sprayed, the sender hands a burst of frames to its NIC queue at once (GBN's go-back, IRN's
/// SACK-driven resends queued behind new data), and the ACKs that make them useless arrive
/// while they wait: today they leave anyway. Measured (16 × 16 KB, 8 paths, 1 % loss; resent
/// after their ACK / all retransmissions, seeds 1-4): GBN 8452/20258, 8648/18762, 8046/19115,
/// 10021/20135; IRN 191/213, 173/213, 117/206, 146/214; DCP 0.
#[test]
fn sprayed_no_stack_resends_an_acknowledged_psn() {
    let mut bad = Vec::new();
    for stack in StackKind::RC {
        for seed in SEEDS {
            let o = opts(stack, Scenario::Spray, seed);
            let v = judge(&synth_once(&o, "spray-resends"));
            if !v.resends.is_empty() {
                bad.push(format!(
                    "{} seed {seed}: {} of {} retransmissions",
                    stack.name(),
                    v.numbers.resent_after_ack,
                    v.numbers.retx
                ));
            }
        }
    }
    assert!(bad.is_empty(), "resent after acknowledgement:\n{}", bad.join("\n"));
}

/// Issue 9's READ truth bug: the truth keeps Go-Back-N READ responses' acceptance per message,
/// but the requester accepts them in PSN order across messages, so a resend the requester
/// needed is labelled spurious. The issue's example, and `--op mix` under 2 % loss (seeds
/// 1-4), judged from the requester's tap (which accepts each of the example's 300 response
/// PSNs exactly once, in order). Measured today: in the issue's example the labels of 1,569 of
/// its 1,817 retransmissions disagree with the wire; in the mix runs, seed 2: 40 of 521.
#[test]
fn read_responses_needed_by_the_requester_are_not_labelled_spurious() {
    let issue = rocescope_sim::synth::SynthOptions {
        op: rocescope_sim::synth::OpChoice::One(rocescope_stacks::Op::Read),
        loss: 0.05,
        messages: 30,
        message_size: 10_000,
        seed: 162618,
        ..opts(StackKind::Gbn, Scenario::Clean, 162618)
    };
    let mut bad = Vec::new();
    for o in std::iter::once(issue).chain(SEEDS.map(|s| opts(StackKind::Gbn, Scenario::Loss, s))) {
        let v = judge(&synth_once(&o, "read-labels"));
        if !v.read_labels.is_empty() {
            bad.push(format!("{}: {}", o.command_line(), v.read_labels.join("; ")));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
