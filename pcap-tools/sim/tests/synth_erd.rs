//! ERD's stack (`erd`) on the simulated fabric (issue 13): conservation under loss in both
//! directions (data, NACK segments and the sender's TCP ACKs may all be lost) and packets
//! sprayed over 8 paths, with every RoCE frame decoding cleanly under the ERD profile and every
//! NACK segment carrying well-formed NACKs; and the analyser, at the sender's and the receiver's
//! taps, finding exactly the losses the stack repaired and every message complete at the
//! receiver.

mod common;

use std::collections::BTreeSet;

use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::CaptureReader;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::{IcrcStatus, Profile};
use rocescope_sim::sim::{LossDir, Routing, TapFrame, TapPoint, TxRec};
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::StackKind;

/// Runs `opts` keeping its transmissions and tap frames, checks every message was delivered
/// intact once and completed once after its delivery, and every frame decodes under the ERD
/// profile with no warning (RoCE frames: a good ICRC too); returns the records and the capture.
fn run_checked(label: &str, opts: &SynthOptions) -> (Vec<TxRec>, Vec<TapFrame>, Vec<u8>) {
    let (f, pcap) = common::run_conserved(label, opts);
    let ctx = || format!("{label}: {}", opts.command_line());
    let (txs, taps, params) = (f.txs.clone(), f.tap_frames.clone(), f.cfg.params);
    drop(f);
    let (mut data, mut tcp) = (0u64, 0u64);
    common::decode_each(&pcap, Profile::Erd, params, |number, f| {
        // (A NACK segment lost before a tap shows there as a gap in its stream: TCP's resend
        // fills it, out of order.)
        let gap = |w: &rocescope_codec::Warning| format!("{w:?}").contains("ErdStreamGap");
        assert!(f.warnings.iter().all(gap), "{}: frame {number}: {:?}", ctx(), f.warnings.iter().collect::<Vec<_>>());
        match f.roce() {
            Some(p) => {
                assert_eq!(f.icrc_status(), IcrcStatus::Good, "{}: frame {number}", ctx());
                match p.opcode().0 {
                    0x64 => data += 1,
                    0x81 => {} // CNP
                    op => panic!("{}: frame {number}: opcode {op:#x} in an ERD run", ctx()),
                }
            }
            None => {
                assert!(f.tcp().is_some(), "{}: frame {number}: neither RoCE nor TCP", ctx());
                tcp += 1;
            }
        }
    });
    assert!(data > 0, "{}", ctx());
    let _ = tcp;
    (txs, taps, pcap)
}

fn erd(seed: u64) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Erd,
        seed,
        messages: 20,
        message_size: 30_000,
        mtu: 1024,
        taps: vec![TapPoint::Sender, TapPoint::Receiver],
        time_limit_ns: 2_000_000_000,
        ..Default::default()
    }
}

#[test]
fn erd_delivers_under_loss_both_ways_spraying_and_incast() {
    for seed in 1..=4 {
        for size in [30_000, 700] {
            let lossy =
                SynthOptions { loss: 0.03, loss_dir: LossDir::Both, incast: 3, message_size: size, ..erd(seed) };
            run_checked("loss both ways, 3-to-1", &lossy);
            let sprayed = SynthOptions {
                paths: 8,
                routing: Routing::Spray,
                reorder_ns: 2_000,
                loss: 0.02,
                loss_dir: LossDir::Both,
                message_size: size,
                ..erd(seed)
            };
            run_checked("sprayed over 8 paths", &sprayed);
        }
    }
}

#[test]
fn the_analyser_finds_the_losses_erd_repaired_at_both_taps() {
    for seed in 1..=6 {
        let o = SynthOptions { loss: 0.02, ..erd(seed) };
        let (txs, taps, pcap) = run_checked("loss", &o);
        // The PSNs the stack resent (each named by a NACK: no reordering on one path).
        let resent: BTreeSet<u32> =
            txs.iter().filter(|t| t.msg.is_some() && t.reason.is_some()).map(|t| t.psn).collect();
        let resends_at_sender =
            taps.iter().filter(|t| t.tap == 0 && !t.incoming && txs[t.tx as usize].reason.is_some()).count();
        assert!(!resent.is_empty(), "seed {seed}: no loss to repair");
        let mut s = Session::new(CaptureReader::new(&pcap[..]).unwrap(), Decoder::new(DecoderOptions::default()));
        let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |_| {}).unwrap();
        let tl = a.timeline();
        let flow = |iface: u32| {
            tl.flows
                .iter()
                .find(|f| f.head.interface == iface && f.head.profile == "erd" && !f.messages.is_empty())
                .unwrap()
        };
        let (snd, rcv) = (flow(0), flow(1));
        assert_eq!(snd.retransmissions.len(), resends_at_sender, "seed {seed}: resends at the sender's tap");
        let lost = |f: &rocescope_analysis::analyze::report::FlowTimeline| -> BTreeSet<u32> {
            f.losses.iter().map(|l| l.psn).collect()
        };
        assert_eq!(lost(snd), resent, "seed {seed}: losses at the sender's tap");
        assert_eq!(lost(rcv), resent, "seed {seed}: losses at the receiver's tap");
        assert!(rcv.losses.iter().all(|l| format!("{:?}", l.signal) == "ErdNack"), "seed {seed}: signal");
        assert_eq!(rcv.messages.iter().filter(|m| m.complete_frame.is_some()).count(), 20, "seed {seed}: completions");
    }
}
