//! `--loss-mode`: random loss as the DCP paper makes it (seed 000 §6.1 Fig. 10, §6.3 Fig. 17:
//! at the switches, which trim DCP data) against loss on the wire. Each run is checked from the
//! capture's own bytes: the header-only frames the receiver tap recorded are exactly the trims
//! the ground truth reports, PSN by PSN, and the data frames it recorded are exactly the copies
//! the truth says arrived whole.

use std::collections::BTreeMap;

use rocescope_analysis::capture::CaptureReader;
use rocescope_codec::ext::dcp::{self, TAG_HO};
use rocescope_codec::{DecodeOptions, Frame, LinkType};
use rocescope_sim::sim::{LossDir, LossMode, TapPoint};
use rocescope_sim::synth::{self, simulate, SynthOptions};
use rocescope_sim::truth::{self, Truth};
use rocescope_stacks::StackKind;

/// Runs `opts`, returning the truth and, per tap interface, the requester-to-responder data
/// frames it recorded as (frame number, PSN, header-only).
fn run(opts: &SynthOptions) -> (Truth, Vec<Vec<(u64, u32, bool)>>) {
    let mut pcap = Vec::new();
    let t = {
        let f = simulate(opts, Some(Box::new(&mut pcap)), true, None).unwrap();
        synth::truth(opts, &f)
    };
    let mut rd = CaptureReader::new(&pcap[..]).unwrap();
    let dec = DecodeOptions::with_profile(opts.stack.profile());
    let mut per_tap = vec![Vec::new(); opts.taps.len()];
    let responder_qpns: Vec<u32> = t.connections.iter().map(|c| c.responder.qpn).collect();
    while let Some(rec) = rd.next_record().unwrap() {
        let f = Frame::parse(LinkType::Ethernet, rec.data, rec.orig_len as usize, &dec);
        let Some(p) = f.roce() else { continue };
        // Requests: SEND/WRITE opcodes to a responder QP.
        if !responder_qpns.contains(&p.bth().dest_qp()) || p.opcode().0 > 0x0C {
            continue;
        }
        let ho = f.tos().map(|t| dcp::tag(t, opts.dcp_tag_shift)) == Some(TAG_HO);
        per_tap[rec.interface as usize].push((rec.number, p.bth().psn(), ho));
    }
    (t, per_tap)
}

fn dcp(loss_mode: LossMode, seed: u64) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Dcp,
        trim: true,
        loss_mode,
        loss: 0.05,
        loss_dir: LossDir::Forward,
        messages: 16,
        message_size: 65536,
        seed,
        taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
        ..Default::default()
    }
}

/// PSN → how many times, of `frames` that satisfy `pick`.
fn psn_counts(frames: &[(u64, u32, bool)], pick: impl Fn(bool) -> bool) -> BTreeMap<u32, u32> {
    let mut m = BTreeMap::new();
    for &(_, psn, ho) in frames {
        if pick(ho) {
            *m.entry(psn).or_insert(0) += 1;
        }
    }
    m
}

#[test]
fn dcp_data_chosen_for_loss_at_a_switch_is_trimmed_not_dropped() {
    for seed in 1..=3 {
        let (t, taps) = run(&dcp(LossMode::Trim, seed));
        let s = &t.summary;
        let ctx = &t.command;
        let data_packets = 16 * 64;
        // 5 % of the data copies (and of their resends) are trimmed, none dropped.
        assert!(s.trimmed >= data_packets * 3 / 100 && s.trimmed <= data_packets * 8 / 100, "{ctx}: {s:?}");
        assert_eq!(s.dropped, 0, "{ctx}: {s:?}");
        assert_eq!((s.completed, s.delivered_once), (16, 16), "{ctx}");
        // Every trim is recovered by the header-only packet, never by a timeout.
        let mut reasons = BTreeMap::new();
        for tx in t.sim.transmissions.iter().filter(|x| x.retx.is_some()) {
            *reasons.entry(format!("{:?}", tx.retx.unwrap().reason)).or_insert(0) += 1;
        }
        assert_eq!(reasons.keys().cloned().collect::<Vec<_>>(), vec!["Some(HeaderOnly)".to_string()], "{ctx}");
        assert_eq!(reasons["Some(HeaderOnly)"], s.trimmed, "{ctx}: one resend per trim");
        // The truth's trims are where the switch chose them: sw0's fabric port.
        for tx in t.sim.transmissions.iter().filter(|x| x.trim.is_some()) {
            assert_eq!(tx.trim.as_ref().unwrap().place.as_deref(), Some("sw0>sw1#0 (random)"), "{ctx}");
            assert_eq!(tx.fate, truth::Fate::Trimmed);
        }
        // The capture: the receiver tap's header-only frames are the trimmed PSNs, one for one;
        // the fabric tap, on the link the trimming port feeds, records them trimmed too, and
        // the sender tap records every copy whole.
        let trimmed = {
            let mut m = BTreeMap::new();
            for tx in t.sim.transmissions.iter().filter(|x| x.trim.is_some()) {
                *m.entry(tx.psn).or_insert(0u32) += 1;
            }
            m
        };
        let (sender, receiver, fabric) = (&taps[0], &taps[1], &taps[2]);
        assert_eq!(psn_counts(receiver, |ho| ho), trimmed, "{ctx}: receiver tap's header-only PSNs");
        assert_eq!(psn_counts(fabric, |ho| ho), trimmed, "{ctx}: fabric tap's header-only PSNs");
        assert!(sender.iter().all(|x| !x.2), "{ctx}");
        // Whole copies at the receiver = copies sent − trimmed; each PSN accepted once.
        let sent = psn_counts(sender, |_| true);
        let mut whole = sent.clone();
        for (psn, n) in &trimmed {
            *whole.get_mut(psn).unwrap() -= n;
        }
        whole.retain(|_, n| *n > 0);
        assert_eq!(psn_counts(receiver, |ho| !ho), whole, "{ctx}");
        // And the truth's per-tap losses say the same, frame by frame.
        let rx = &t.taps[1];
        let lost: BTreeMap<u64, u32> = rx
            .flows
            .iter()
            .flat_map(|f| f.losses.iter())
            .filter(|l| l.cause == truth::LossCause::Trimmed)
            .map(|l| (l.frame.expect("the receiver tap saw the header-only form"), l.psn))
            .collect();
        let ho_frames: BTreeMap<u64, u32> = receiver.iter().filter(|x| x.2).map(|x| (x.0, x.1)).collect();
        assert_eq!(lost, ho_frames, "{ctx}");
    }
}

#[test]
fn the_same_loss_on_the_wire_drops_dcp_data_whole() {
    let (t, taps) = run(&dcp(LossMode::Drop, 1));
    let s = &t.summary;
    assert_eq!(s.trimmed, 0, "{s:?}");
    assert!(s.dropped > 16 * 64 * 3 / 100, "{s:?}");
    // Dropped on the link: the fabric tap (before the link) saw them, the receiver did not.
    let dropped: Vec<_> = t.sim.transmissions.iter().filter(|x| x.fate == truth::Fate::Dropped).collect();
    assert!(dropped.iter().all(|x| x.drop.as_ref().unwrap().cause == truth::DropCause::Link));
    assert_eq!(taps[0].len(), taps[2].len(), "the fabric tap sees every data copy");
    assert_eq!(taps[1].len() + dropped.len(), taps[2].len());
    assert!(taps[1].iter().all(|x| !x.2));
}

#[test]
fn other_packets_chosen_at_a_switch_are_dropped_there_and_never_reach_the_link() {
    // GBN under --loss-mode trim: dropped at sw0's port, so the fabric tap on that link never
    // records them (on the wire it would).
    let o = SynthOptions {
        stack: StackKind::Gbn,
        loss_mode: LossMode::Trim,
        loss: 0.05,
        loss_dir: LossDir::Forward,
        messages: 16,
        message_size: 65536,
        seed: 2,
        taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
        ..Default::default()
    };
    let (t, taps) = run(&o);
    assert_eq!(t.summary.trimmed, 0);
    let dropped: Vec<_> = t.sim.transmissions.iter().filter(|x| x.fate == truth::Fate::Dropped).collect();
    assert!(dropped.len() > 16 * 64 * 3 / 100);
    for x in &dropped {
        let d = x.drop.as_ref().unwrap();
        assert_eq!((d.cause, d.place.as_deref()), (truth::DropCause::Switch, Some("sw0>sw1#0 (random)")));
    }
    assert_eq!(taps[2].len() + dropped.len(), taps[0].len(), "the fabric tap misses the switch's drops");
    assert_eq!(taps[1].len(), taps[2].len());
    assert_eq!((t.summary.completed, t.summary.delivered_once), (16, 16));
}

#[test]
fn a_host_uplinks_loss_is_made_by_the_switch_it_enters() {
    // Loss on s0's own link, forward: sw0 trims the chosen DCP packets at the port they take.
    let o = SynthOptions { loss_on: rocescope_sim::LossPlace::Sender, ..dcp(LossMode::Trim, 4) };
    let (t, taps) = run(&o);
    assert!(t.summary.trimmed > 0 && t.summary.dropped == 0, "{:?}", t.summary);
    for tx in t.sim.transmissions.iter().filter(|x| x.trim.is_some()) {
        assert_eq!(tx.trim.as_ref().unwrap().place.as_deref(), Some("sw0>sw1#0 (random)"));
    }
    // The sender tap, upstream, records every copy whole.
    assert!(taps[0].iter().all(|x| !x.2));
    assert_eq!(psn_counts(&taps[1], |ho| ho).values().sum::<u32>() as u64, t.summary.trimmed);
}
