//! The wire checks can fail: a capture or a truth altered in one place breaks the invariant
//! that covers it (the mutation tests in `wire_mutants.rs` do the same for faulty stacks).

mod common;

use common::*;
use rocescope_stacks::StackKind;
use rocescope_wirecheck::packet::PktKind;
use rocescope_wirecheck::verdict::judge_wire;
use rocescope_wirecheck::wire::Dir;

#[test]
fn a_corrupted_byte_a_missing_frame_and_a_forgotten_loss_are_each_reported() {
    for stack in StackKind::RC {
        let o = opts(stack, Scenario::Loss, 3);
        let r = synth_once(&o, "can-fail");
        assert!(judge_wire(&r.truth, &r.wire).ok().is_ok(), "{}", o.command_line());
        let receiver = r.wire.tap("receiver").unwrap().interface;
        let arriving = |w: &rocescope_wirecheck::wire::Wire, i: usize| {
            let p = &w.pkts[i];
            p.interface == receiver && w.dir(p) == Dir::In && p.kind == PktKind::Data && !p.payload.is_empty()
        };
        // One payload byte of every copy of one packet.
        let mut w = r.wire.clone();
        let i = (0..w.pkts.len()).find(|&i| arriving(&w, i)).unwrap();
        let psn = w.pkts[i].psn;
        for p in w.pkts.iter_mut().filter(|p| p.interface == receiver && p.psn == psn && p.kind == PktKind::Data) {
            p.payload[0] ^= 1;
        }
        let v = judge_wire(&r.truth, &w);
        assert!(!v.delivery.is_empty(), "{}: corrupted byte not reported", stack.name());
        // Every copy of one packet gone from the receiver's tap.
        let mut w = r.wire.clone();
        w.pkts.retain(|p| !(p.interface == receiver && p.psn == psn && p.kind == PktKind::Data));
        let v = judge_wire(&r.truth, &w);
        assert!(!v.delivery.is_empty() && !v.truth.is_empty(), "{}: missing frame not reported", stack.name());
        // A loss the truth forgets.
        let mut t = r.truth.clone();
        let flow = t.taps.iter_mut().flat_map(|tap| tap.flows.iter_mut()).find(|f| !f.losses.is_empty()).unwrap();
        flow.losses.pop();
        let v = judge_wire(&t, &r.wire);
        assert!(!v.truth.is_empty(), "{}: forgotten loss not reported", stack.name());
    }
}
