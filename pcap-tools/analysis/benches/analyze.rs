//! The analysis path behind `rocescope flows` and `timeline` (docs/cli.md), on captures held in
//! memory so the disk is out of the measurement: the bundled simulator captures with loss
//! (IRN with SACKs, Go-Back-N), each (a) read and decoded only, as the analysers' decoder does it
//! (checksums only where detection needs them), (b) analysed into the flow table, (c) analysed
//! into the timeline. Throughput is in frames. `scripts/bench-analysis.sh` measures the whole
//! command against tshark on a 1.3 M-frame capture.
//!
//! `cargo bench -p rocescope-analysis --bench analyze`

use std::ops::ControlFlow;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::CaptureReader;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions};

fn session(bytes: &[u8]) -> Session<&[u8]> {
    let reader = CaptureReader::new(bytes).expect("a bundled capture");
    Session::new(reader, Decoder::new(DecoderOptions::default()).checksums_for_detection_only())
}

fn bench(c: &mut Criterion) {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
    for name in ["synth-irn-loss", "synth-gbn-loss"] {
        let bytes = std::fs::read(format!("{fixtures}/{name}.pcapng")).expect("fixture");
        let mut frames = 0u64;
        session(&bytes)
            .run(|_, _| {
                frames += 1;
                ControlFlow::Continue(())
            })
            .unwrap();
        let mut g = c.benchmark_group(format!("analyze/{name}"));
        g.throughput(Throughput::Elements(frames));
        g.bench_function("read_decode", |b| {
            b.iter(|| {
                let mut acc = 0u64;
                session(black_box(&bytes))
                    .run(|rec, d| {
                        acc = acc.wrapping_add(rec.ts_ns ^ d.frame.profile() as u64);
                        ControlFlow::Continue(())
                    })
                    .unwrap();
                acc
            })
        });
        g.bench_function("flows", |b| {
            b.iter(|| {
                let opts = Options { keep_events: false, ..Options::default() };
                let mut a = run::analyze(&mut session(black_box(&bytes)), opts, run::Window::default(), |_| {}).unwrap();
                a.flows().flows.len()
            })
        });
        g.bench_function("timeline", |b| {
            b.iter(|| {
                let mut a = run::analyze(&mut session(black_box(&bytes)), Options::default(), run::Window::default(), |_| {})
                    .unwrap();
                a.timeline().flows.len()
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
