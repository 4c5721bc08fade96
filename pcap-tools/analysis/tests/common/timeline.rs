//! The one-thread analysis of a capture file into its timeline, as `rocescope timeline --profile
//! P` reads it: shared by the analysis tests (included by path).

use std::path::Path;

use rocescope_analysis::analyze::report::TimelineReport;
use rocescope_analysis::analyze::{run, Analyzer, Options};
use rocescope_analysis::capture;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};

pub fn timeline(path: &Path, profile: &str) -> TimelineReport {
    analyser(path, profile, true).timeline()
}

/// The capture analysed in one pass with `profile`, every event kept (the timeline's reading)
/// or not (the flow table's).
pub fn analyser(path: &Path, profile: &str, keep_events: bool) -> Analyzer {
    let reader = capture::open(&path.display().to_string()).expect("open");
    let profile = ProfileChoice::parse(profile).expect("profile");
    let decoder = Decoder::new(DecoderOptions { profile, maps: vec![], params: Default::default(), no_verify: false });
    let mut s = Session::new(reader, decoder);
    run::analyze(&mut s, Options { keep_events, ..Options::default() }, run::Window::default(), |_| {})
        .expect("analyse")
}
