//! The timeline a record at a time (`Analyzer::each_flow_streamed`, what `rocescope export`
//! writes) holds exactly the entries of the whole timeline (`Analyzer::timeline`, what
//! `rocescope timeline` prints), every field of every message, loss, retransmission and capture
//! gap, on every fixture (each transport, each tap), with the analyser's records spilled to a
//! temporary file as the export spills them and kept in memory as the timeline keeps them.

use std::path::Path;

use rocescope_analysis::analyze::report::TimelineReport;
use rocescope_analysis::analyze::stream::TimelinePart;
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};

/// Each flow's entries as sorted JSON texts (the streamed order is not the timeline's).
type Entries = Vec<(String, Vec<String>, Vec<String>, Vec<String>, Vec<String>)>;

fn analyser(path: &Path, opts: Options) -> rocescope_analysis::analyze::Analyzer {
    let reader = capture::open(&path.display().to_string()).expect("open");
    let profile = ProfileChoice::parse("auto").expect("profile");
    let decoder = Decoder::new(DecoderOptions { profile, maps: vec![], params: Default::default(), no_verify: false });
    let mut s = Session::new(reader, decoder);
    run::analyze(&mut s, opts, run::Window::default(), |_| {}).expect("analyse")
}

fn text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

fn whole(t: &TimelineReport) -> Entries {
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    t.flows
        .iter()
        .map(|f| {
            (
                text(&f.head),
                sorted(f.messages.iter().map(text).collect()),
                sorted(f.losses.iter().map(text).collect()),
                sorted(f.retransmissions.iter().map(text).collect()),
                sorted(f.capture_gaps.iter().map(text).collect()),
            )
        })
        .collect()
}

fn streamed(a: &mut rocescope_analysis::analyze::Analyzer) -> Entries {
    let mut out: Entries = Vec::new();
    a.each_flow_streamed(|i, part| -> std::io::Result<()> {
        match part {
            TimelinePart::Flow(h) => {
                assert_eq!(i, out.len());
                out.push((text(h), vec![], vec![], vec![], vec![]));
            }
            TimelinePart::Message(m) => out[i].1.push(text(m)),
            TimelinePart::Loss(l) => out[i].2.push(text(l)),
            TimelinePart::Retransmission(r) => out[i].3.push(text(r)),
            TimelinePart::CaptureGap(g) => out[i].4.push(text(g)),
        }
        Ok(())
    })
    .unwrap();
    for f in &mut out {
        f.1.sort();
        f.2.sort();
        f.3.sort();
        f.4.sort();
    }
    out
}

/// Every capture in `fixtures/`, sorted.
fn fixtures() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut fixtures: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcapng" || e == "pcap"))
        .collect();
    fixtures.sort();
    fixtures
}

#[test]
fn the_streamed_timeline_is_the_timeline_on_every_fixture() {
    let fixtures = fixtures();
    let mut compared = [0usize; 4];
    for path in &fixtures {
        let want = whole(&analyser(path, Options::default()).timeline());
        for spill in [false, true] {
            let got = streamed(&mut analyser(path, Options { spill_to_file: spill, ..Options::default() }));
            assert_eq!(got, want, "{} (spilled to a file: {spill})", path.display());
        }
        for f in &want {
            compared[0] += f.1.len();
            compared[1] += f.2.len();
            compared[2] += f.3.len();
            compared[3] += f.4.len();
        }
    }
    // Messages, losses, retransmissions and capture gaps were all compared.
    assert!(fixtures.len() >= 10 && compared.iter().all(|&n| n > 10), "{} fixtures, {compared:?}", fixtures.len());
}

/// The flow table `rocescope flows` prints (an analysis keeping no events) is the one the
/// timeline's analysis (every event kept) gives, every column of every flow, on every fixture:
/// the counts may not depend on what is listed. (The flow table counted a capture gap taken
/// back until 2026-11-29: 15 gaps where the timeline listed 13, on `synth-irn-clean`.)
#[test]
fn the_flow_table_is_the_same_with_or_without_the_events_kept() {
    let fixtures = fixtures();
    let table = |path: &Path, keep_events: bool| {
        let mut a = analyser(path, Options { keep_events, ..Options::default() });
        a.flows().flows.iter().map(text).collect::<Vec<_>>()
    };
    let mut rows = 0;
    for path in &fixtures {
        let with = table(path, true);
        assert_eq!(table(path, false), with, "{}", path.display());
        rows += with.len();
    }
    assert!(fixtures.len() >= 10 && rows > 40, "{} fixtures, {rows} flows", fixtures.len());
}
