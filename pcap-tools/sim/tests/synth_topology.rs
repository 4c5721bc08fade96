//! The leaf-spine fabric, PFC's lossless mode and link failure, judged from the captures the
//! runs write (frames decoded with the codec), not from the simulator's own counters alone.

mod common;

use std::collections::HashMap;

use common::{run_captured, Captured};
use rocescope_codec::{DecodeOptions, Frame, LinkType};
use rocescope_sim::sim::{TapPoint, TopologyKind};
use rocescope_sim::synth::{simulate, Pattern, SynthOptions};
use rocescope_stacks::StackKind;

/// A run written to memory; its capture's frames as (interface, time ns, bytes).
fn run(o: &SynthOptions) -> (rocescope_sim::Fabric<'static>, Vec<Captured>) {
    run_captured(o, false)
}

/// PFC frames pausing priority 3 (pause time > 0) in `frames`, per interface.
fn pauses(frames: &[Captured]) -> HashMap<u32, usize> {
    let mut n = HashMap::new();
    for (i, _, b) in frames {
        let f = Frame::parse(LinkType::Ethernet, b, b.len(), &DecodeOptions::default());
        if let Some(m) = f.mac_control() {
            if m.class_enable().is_some_and(|c| c & 1 << 3 != 0) && m.quanta(3) > 0 {
                *n.entry(*i).or_default() += 1;
            }
        }
    }
    n
}

/// Per (DestQP, PSN) of RoCE requests (opcodes below 0x0D) seen on interface `tap`: copies.
fn request_psns(frames: &[Captured], tap: u32) -> HashMap<(u32, u32), usize> {
    let mut n = HashMap::new();
    for (i, _, b) in frames.iter().filter(|f| f.0 == tap) {
        let _ = i;
        let f = Frame::parse(LinkType::Ethernet, b, b.len(), &DecodeOptions::default());
        if let Some(p) = f.roce() {
            if p.opcode().0 < 0x0D {
                *n.entry((p.bth().dest_qp(), p.bth().psn())).or_default() += 1;
            }
        }
    }
    n
}

fn incast(pfc: bool) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Gbn,
        incast: 8,
        // A shallow buffer, which the incast overflows without PFC.
        queue_bytes: 256 * 1024,
        messages: 16,
        message_size: 65_536,
        pfc,
        taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
        ..Default::default()
    }
}

#[test]
fn pfc_pause_frames_appear_in_a_lossless_capture_and_no_data_frame_is_lost() {
    let (f, frames) = run(&incast(true));
    let p = pauses(&frames);
    // sw1 pauses sw0's fabric port: the fabric tap (interface 2) sees the pauses arrive.
    assert!(p.get(&2).copied().unwrap_or(0) > 0, "pause frames in the capture: {p:?}");
    assert_eq!(f.stats.dropped, 0, "{:?}", f.stats);
    // From the wire: at the receiver every request PSN of every connection arrives exactly
    // once (no loss, hence no Go-Back-N resend), 16 × 64 per connection.
    let at_receiver = request_psns(&frames, 1);
    assert_eq!(at_receiver.len(), 8 * 16 * 64);
    assert!(at_receiver.values().all(|&n| n == 1));
    for c in &f.conns {
        assert!(c.messages.iter().all(|m| m.completed.len() == 1 && m.delivered.iter().all(|d| d.2)));
    }
    // The same incast without PFC overflows the receiver's switch port: the test can fail.
    let (lossy, frames) = run(&incast(false));
    assert!(lossy.stats.dropped > 1000, "{:?}", lossy.stats);
    assert!(pauses(&frames).is_empty());
    assert!(request_psns(&frames, 1).values().any(|&n| n > 1), "lost PSNs are resent");
}

fn leaf_spine(pattern: Pattern) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Gbn,
        topology: TopologyKind::LeafSpine { leaves: 4, spines: 4, hosts_per_leaf: 4 },
        pattern,
        messages: 8,
        message_size: 16_384,
        ..Default::default()
    }
}

#[test]
fn every_leaf_spine_pattern_completes_between_the_right_hosts() {
    // All-to-all with 4 KB messages: without congestion control a 15-to-1 incast at every
    // host of 64 KB messages collapses (GBN gives up after its retries).
    for (pattern, conns) in [(Pattern::Incast, 1), (Pattern::Permutation, 16), (Pattern::AllToAll, 16 * 15)] {
        let size = if pattern == Pattern::AllToAll { 4096 } else { 16_384 };
        let o = SynthOptions { incast: 1, message_size: size, ..leaf_spine(pattern) };
        let (f, frames) = run(&o);
        assert_eq!(f.conns.len(), conns, "{pattern:?}");
        let mut senders = std::collections::HashSet::new();
        for c in &f.conns {
            assert_ne!(c.sender, c.receiver);
            senders.insert(c.sender);
            assert_eq!(f.host(c.sender).1, c.cfg.requester.ip);
            assert_eq!(f.host(c.receiver).1, c.cfg.responder.ip);
            assert!(c.failed.is_none(), "{pattern:?}: {:?}", c.failed);
            assert!(c.messages.iter().all(|m| m.completed.len() == 1 && m.delivered.len() == 1 && m.delivered[0].2));
        }
        if pattern != Pattern::Incast {
            assert_eq!(senders.len(), 16, "every host sends");
        }
        // The first connection crosses the fabric: its requests appear on the fabric tap (the
        // sender's leaf's uplink to spine 0) only when ECMP picked spine 0, but always at the
        // receiver's NIC.
        let first = &f.conns[0].cfg;
        let at_receiver = request_psns(&frames, 1);
        assert!(at_receiver.keys().any(|&(qp, _)| qp == first.responder.qpn));
    }
}

#[test]
fn an_incast_across_the_spines_comes_from_other_leaves() {
    let o = SynthOptions { incast: 6, ..leaf_spine(Pattern::Incast) };
    let pairs = o.pairs();
    assert_eq!(pairs.len(), 6);
    // Hosts 4.. are on leaves 1, 2, …; the receiver h0.0 is host 0.
    assert!(pairs.iter().all(|&(s, d)| d == 0 && s >= 4));
    let (f, _) = run(&o);
    assert!(f.conns.iter().all(|c| c.messages.iter().all(|m| m.completed.len() == 1)));
}

#[test]
fn a_leaf_spine_run_with_a_failed_link_completes_and_nothing_crosses_the_link_after() {
    let fail_at = 20_000;
    let o = SynthOptions {
        pattern: Pattern::Permutation,
        messages: 16,
        message_size: 65_536,
        // Tap the failing link: the fabric tap watches leaf l's uplink to spine 1, where l is
        // the first connection's sender's leaf.
        fabric_tap_path: 1,
        ..leaf_spine(Pattern::Permutation)
    };
    let sender_leaf = o.pairs()[0].0 / 4;
    let link = format!("leaf{sender_leaf}>spine1");
    let o = SynthOptions { link_failures: vec![(link.clone(), fail_at)], ..o };
    let (f, frames) = run(&o);
    assert_eq!(f.stats.failed_links, 1);
    for c in &f.conns {
        assert!(c.failed.is_none());
        assert!(c.messages.iter().all(|m| m.completed.len() == 1 && m.delivered[0].2), "every message completes");
    }
    let on_link: Vec<u64> = frames.iter().filter(|fr| fr.0 == 2).map(|fr| fr.1 - rocescope_sim::sim::EPOCH_NS).collect();
    assert!(on_link.iter().any(|&t| t < fail_at), "the link carried traffic before it failed");
    assert!(on_link.iter().all(|&t| t < fail_at), "nothing crosses {link} after {fail_at} ns");
    // The same run without the failure uses the link after that time: the check can fail.
    let (_, frames) = run(&SynthOptions { link_failures: vec![], ..o });
    assert!(frames.iter().any(|fr| fr.0 == 2 && fr.1 - rocescope_sim::sim::EPOCH_NS > fail_at));
}

#[test]
fn an_unknown_link_is_a_clear_error() {
    let o = SynthOptions { link_failures: vec![("leaf9>spine9".into(), 1)], ..leaf_spine(Pattern::Permutation) };
    let e = simulate(&o, None, false, None).err().expect("an error");
    assert!(e.to_string().contains("no such link"), "{e}");
}
