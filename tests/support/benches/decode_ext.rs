//! Extension-heavy decode (issue 3): the six-profile mix of `rocescope_testsupport::testgen_ext` decoded
//! (a) statelessly with each frame's own profile, every field visited, and (b) through the
//! stateful `Decoder` in `auto` mode (detection, SDR fragment tracking, ERD reassembly).
//! ICRC verification is excluded, as in the codec's `decode` benchmark.
//!
//! `cargo bench -p rocescope-testsupport --bench decode_ext`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rocescope_testsupport::testgen_ext::extension_mix;
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Value};

fn fold(acc: &mut u64, v: Value<'_>) {
    *acc ^= match v {
        Value::UInt(n) => n,
        Value::Bool(b) => b as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::Str(s) => s.len() as u64,
        Value::Warning(_) => 1,
    };
}

fn bench(c: &mut Criterion) {
    let mix = extension_mix();
    let mut g = c.benchmark_group("decode_ext");
    g.throughput(Throughput::Elements(mix.len() as u64));
    let opts: Vec<DecodeOptions> =
        mix.iter().map(|f| DecodeOptions { verify: false, ..DecodeOptions::with_profile(f.expect) }).collect();
    g.bench_function("stateless_own_profile_visit_all", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for (f, o) in mix.iter().zip(&opts) {
                let mut fr = Frame::new(LinkType::Ethernet, black_box(&f.bytes));
                fr.decode(f.bytes.len(), o);
                fr.visit(|id, v, r| {
                    acc = acc.wrapping_add(id as u64 + r.start as u64);
                    fold(&mut acc, v);
                });
            }
            acc
        })
    });
    g.bench_function("decoder_auto_visit_all", |b| {
        b.iter(|| {
            let mut d = Decoder::new(DecoderOptions { no_verify: true, ..Default::default() });
            let mut acc = 0u64;
            for f in &mix {
                let x = d.decode(LinkType::Ethernet, black_box(&f.bytes), f.bytes.len());
                x.visit(|id, v, r| {
                    acc = acc.wrapping_add(id as u64 + r.start as u64);
                    fold(&mut acc, v);
                });
            }
            acc
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
