//! Times the two halves of `rocescope flows`' pipeline (`analyze::run::analyze_threaded`) apart,
//! each alone on one core, so a change to either is measured without the other thread's noise:
//! (A) read, decode and summarise every frame of a capture file (and its parts: reading alone;
//! reading and decoding); (B) feed the summaries to the analyser (the flow table). Each runs
//! `RUNS` times; the fastest run is printed (the least disturbed by whatever else the machine
//! does). Under `valgrind --tool=callgrind` with RUNS=1, the inclusive costs of `half_a` and
//! `half_b` count each half's instructions.
//!
//! `cargo run --release -p rocescope-analysis --example split_bench -- FILE [RUNS]`

use std::ops::ControlFlow;
use std::time::Instant;

use rocescope_analysis::analyze::pkt::Seen;
use rocescope_analysis::analyze::run::write_summary;
use rocescope_analysis::analyze::{Analyzer, Options};
use rocescope_analysis::capture;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};

fn session(file: &str) -> Session<Box<dyn std::io::Read + Send>> {
    let reader = capture::open(file).expect("a capture");
    Session::new(reader, Decoder::new(DecoderOptions::default()).checksums_for_detection_only())
}

/// Reads the records only.
#[inline(never)]
fn read_only(file: &str) {
    let mut reader = capture::open(file).expect("a capture");
    while let Ok(Some(r)) = &reader.next_record() {
        std::hint::black_box(r);
    }
}

/// Reads and decodes.
#[inline(never)]
fn read_decode(file: &str) {
    session(file)
        .run(|rec, d| {
            std::hint::black_box((rec, d));
            ControlFlow::Continue(())
        })
        .expect("readable");
}

/// The reading thread's work: reads, decodes and summarises (keeping the summaries in `keep`).
#[inline(never)]
fn half_a(file: &str, mut keep: Option<&mut Vec<Seen>>) {
    // As the reading thread does: summaries written in place into a batch, handed on when full
    // (here dropped, or kept in `keep`).
    let mut batch: Vec<Seen> = Vec::with_capacity(4096);
    session(file)
        .run_summarised(|rec, given| {
            batch.push(Seen::None);
            if let Some(slot) = batch.last_mut() {
                write_summary(slot, rec, rec.ts_ns, given);
                if matches!(slot, Seen::None) {
                    batch.pop();
                }
            }
            if batch.len() >= 4096 {
                match keep.as_mut() {
                    Some(v) => v.append(&mut batch),
                    None => batch.clear(),
                }
            }
            ControlFlow::Continue(())
        })
        .expect("readable");
    if let Some(v) = keep {
        v.append(&mut batch);
    }
}

/// The analysing thread's work.
#[inline(never)]
fn half_b(seen: &[Seen]) -> Analyzer {
    let mut a = Analyzer::new(Options { keep_events: false, ..Options::default() });
    for s in seen {
        a.add(s);
    }
    a
}

fn best(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args.next().expect("usage: split_bench FILE [RUNS]");
    let runs: usize = args.next().map_or(5, |n| n.parse().expect("RUNS is a number"));
    let mut seen: Vec<Seen> = Vec::new();
    half_a(&file, Some(&mut seen));
    let read = best(runs, || read_only(&file));
    let decode = best(runs, || read_decode(&file));
    let a = best(runs, || half_a(&file, None));
    let b = best(runs, || {
        std::hint::black_box(half_b(&seen).flows());
    });
    println!("A {a:.1} ms (read {read:.1}, read+decode {decode:.1})   B {b:.1} ms   {} summaries", seen.len());
}
