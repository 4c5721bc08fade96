//! The one-thread analysis of a capture file into its timeline, as `rocescope timeline --profile
//! P` reads it: shared by the analysis tests (included by path).

use std::path::Path;

use rocescope_analysis::analyze::report::TimelineReport;
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};

pub fn timeline(path: &Path, profile: &str) -> TimelineReport {
    let reader = capture::open(&path.display().to_string()).expect("open");
    let profile = ProfileChoice::parse(profile).expect("profile");
    let decoder = Decoder::new(DecoderOptions { profile, maps: vec![], params: Default::default(), no_verify: false });
    let mut s = Session::new(reader, decoder);
    let mut a = run::analyze(&mut s, Options::default(), run::Window::default(), |_| {}).expect("analyse");
    a.timeline()
}
