//! DCQCN (Zhu et al., SIGCOMM 2015) on the simulated fabric, judged from the sender's capture:
//! after the first CNP reaches a sender, its NIC sends at a lower rate; without congestion
//! control it keeps sending at line rate.

mod common;

use common::run_captured;
use rocescope_codec::{DecodeOptions, Frame, LinkType};
use rocescope_sim::sim::{CongestionControl, TapPoint, EPOCH_NS};
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::StackKind;

/// A 2-to-1 incast whose senders are not window-limited (a window far above the BDP), with ECN
/// marking, captured at sender 0's NIC only.
fn incast(cc: CongestionControl) -> SynthOptions {
    SynthOptions {
        stack: StackKind::Irn,
        incast: 2,
        messages: 8,
        message_size: 256 * 1024,
        bdp_packets: 4096,
        ecn_threshold: Some(10_000),
        cc,
        taps: vec![TapPoint::Sender],
        ..Default::default()
    }
}

/// (time of the first CNP arriving at sender 0, request frames sender 0 sent in the `window_ns`
/// after it).
fn rate_after_first_cnp(o: &SynthOptions, window_ns: u64) -> (u64, usize, rocescope_sim::sim::RunStats) {
    let (f, frames) = run_captured(o, false);
    let (mut first_cnp, mut requests) = (None, Vec::new());
    for (_, ts, data) in &frames {
        let fr = Frame::parse(LinkType::Ethernet, data, data.len(), &DecodeOptions::default());
        let Some(p) = fr.roce() else { continue };
        let t = ts - EPOCH_NS;
        match p.opcode().0 {
            0x81 => first_cnp = first_cnp.or(Some(t)),
            op if op < 0x0D => requests.push(t),
            _ => {}
        }
    }
    let t = first_cnp.expect("a CNP reached sender 0");
    (t, requests.iter().filter(|&&s| s >= t && s < t + window_ns).count(), f.stats)
}

#[test]
fn dcqcn_lowers_the_sender_rate_after_cnps() {
    let window = 20_000;
    // 1,126-byte frames + 24 bytes of wire overhead at 100 Gb/s: 92 ns each, 217 in 20 µs.
    let line_rate_frames = (window * 100) / (1150 * 8);
    let (t_none, sent_none, s_none) = rate_after_first_cnp(&incast(CongestionControl::None), window);
    let (t_dcqcn, sent_dcqcn, s_dcqcn) = rate_after_first_cnp(&incast(CongestionControl::Dcqcn), window);
    eprintln!("first CNP at {t_none} ns; request frames in the next 20 µs: none {sent_none}, dcqcn {sent_dcqcn} (line rate {line_rate_frames}); drops {} vs {}", s_none.dropped, s_dcqcn.dropped);
    // Up to the first CNP the two runs are the same run.
    assert_eq!(t_none, t_dcqcn);
    assert_eq!(s_none.cnps_reacted, 0);
    assert!(s_dcqcn.cnps_reacted > 0);
    // Without congestion control sender 0 keeps the line rate…
    assert!(sent_none as u64 * 10 >= line_rate_frames * 9, "{sent_none} of {line_rate_frames}");
    // …with DCQCN the first CNP halves it (α = 1), and a second one lowers it further.
    assert!(sent_dcqcn * 100 <= sent_none * 60, "dcqcn {sent_dcqcn} vs none {sent_none}");
    assert!(sent_dcqcn as u64 * 100 >= line_rate_frames * 20, "still sending: {sent_dcqcn}");
    // And the bottleneck overflows less.
    assert!(s_dcqcn.dropped < s_none.dropped, "{} vs {}", s_dcqcn.dropped, s_none.dropped);
}
