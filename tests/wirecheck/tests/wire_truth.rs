//! The ground truth and the stacks judged from the capture (issue 9: "count every
//! retransmission from decoded frame bytes, rebuild delivered payloads from the frames"): for
//! GBN, IRN and DCP, without loss, under random loss, and sprayed over 8 paths, the truth's
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
    for stack in StackKind::ALL {
        for s in SCENARIOS {
            let (mut retx, mut losses, mut frames) = (0, 0, 0);
            for seed in SEEDS {
                let o = opts(stack, s, seed);
                let r = synth_once(&o, "truth");
                let v = judge(&r);
                if let Err(e) = v.ok_but_resends() {
                    panic!("{}:\n{e}", o.command_line());
                }
                assert_eq!(v.numbers.messages_rebuilt, 16, "{}", o.command_line());
                assert_eq!(v.numbers.completed_on_wire, 16, "{}", o.command_line());
                retx += v.numbers.compared.retx;
                losses += v.numbers.compared.losses;
                frames += v.numbers.compared.frames;
            }
            eprintln!("{} {s:?}: {frames} frames, {retx} retransmissions, {losses} losses compared", stack.name());
            // The comparisons were not vacuous.
            if s != Scenario::Clean {
                assert!(losses > 0, "{} {s:?}: no loss to compare", stack.name());
                assert!(retx > 0, "{} {s:?}: no retransmission to compare", stack.name());
            } else {
                assert_eq!((retx, losses), (0, 0), "{} {s:?}", stack.name());
            }
        }
    }
}

#[test]
fn on_one_path_no_stack_resends_an_acknowledged_psn() {
    for stack in StackKind::ALL {
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
#[ignore = "issue 9: retransmissions decided when a frame enters the unbounded NIC queue, not when it reaches the wire; fixed by the helper-A branch (pull-based NIC)"]
fn sprayed_no_stack_resends_an_acknowledged_psn() {
    let mut bad = Vec::new();
    for stack in StackKind::ALL {
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
