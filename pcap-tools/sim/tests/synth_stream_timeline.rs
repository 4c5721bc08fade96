//! The timeline a record at a time (`Analyzer::each_flow_streamed`, what `rocescope export`
//! writes) holds exactly the entries of the whole timeline (`rocescope timeline`), on captures
//! long enough that every kind of record goes to the analyser's spill file in many chunks: each
//! reference stack, three taps, 1 % loss. (The fixtures' comparison is in the analysis crate's
//! tests/stream_equals_timeline.rs.)

use rocescope_analysis::analyze::stream::TimelinePart;
use rocescope_analysis::analyze::{run, Analyzer, Options};
use rocescope_analysis::capture::CaptureReader;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_sim::sim::TapPoint;
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::StackKind;

mod common;

/// Per flow: head, then its messages, losses, retransmissions and capture gaps as sorted JSON.
type Entries = Vec<[Vec<String>; 5]>;

fn analyser(pcap: &[u8], spill_to_file: bool) -> Analyzer {
    let mut s = Session::new(CaptureReader::new(pcap).expect("a pcapng"), Decoder::new(DecoderOptions::default()));
    run::analyze(&mut s, Options { spill_to_file, ..Options::default() }, run::Window::default(), |_| {})
        .expect("analyse")
}

fn text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

fn sorted(mut e: Entries) -> Entries {
    for f in &mut e {
        for v in f.iter_mut() {
            v.sort();
        }
    }
    e
}

#[test]
fn every_stack_streams_its_whole_timeline() {
    for stack in [StackKind::Gbn, StackKind::Irn, StackKind::Dcp, StackKind::SdrSr, StackKind::Flor, StackKind::Erd] {
        let o = SynthOptions {
            stack,
            trim: stack == StackKind::Dcp,
            loss: 0.01,
            messages: 600,
            message_size: 8192,
            seed: 3,
            taps: vec![TapPoint::Sender, TapPoint::Receiver, TapPoint::Fabric],
            ..SynthOptions::default()
        };
        let (_, pcap) = common::run_pcap(&o, false);
        let t = analyser(&pcap, false).timeline();
        let want = sorted(
            t.flows
                .iter()
                .map(|f| {
                    [
                        vec![text(&f.head)],
                        f.messages.iter().map(text).collect(),
                        f.losses.iter().map(text).collect(),
                        f.retransmissions.iter().map(text).collect(),
                        f.capture_gaps.iter().map(text).collect(),
                    ]
                })
                .collect(),
        );
        let messages: usize = want.iter().map(|f| f[1].len()).sum();
        let events: usize = want.iter().map(|f| f[2].len() + f[3].len()).sum();
        assert!(messages >= 600 && events > 0, "{stack:?}: {messages} messages, {events} losses and retransmissions");
        for spill in [false, true] {
            let mut got: Entries = Vec::new();
            analyser(&pcap, spill)
                .each_flow_streamed(|i, part| -> std::io::Result<()> {
                    match part {
                        TimelinePart::Flow(h) => {
                            assert_eq!(i, got.len());
                            got.push([vec![text(h)], vec![], vec![], vec![], vec![]]);
                        }
                        TimelinePart::Message(m) => got[i][1].push(text(m)),
                        TimelinePart::Loss(l) => got[i][2].push(text(l)),
                        TimelinePart::Retransmission(r) => got[i][3].push(text(r)),
                        TimelinePart::CaptureGap(g) => got[i][4].push(text(g)),
                    }
                    Ok(())
                })
                .unwrap();
            assert!(sorted(got) == want, "{stack:?} (spilled to a file: {spill}): the streamed timeline differs");
        }
    }
}
