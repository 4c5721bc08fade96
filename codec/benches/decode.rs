//! Full-frame decode (Ethernet → IP → UDP → BTH → extension headers, every field visited,
//! ICRC verification excluded) on a realistic RoCEv2 mix, and ICRC computation on its own.
//!
//! `cargo bench -p rocescope-codec --bench decode`; the README reports the results.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::icrc::{self, IcrcNet};
use rocescope_codec::ib::{AethRepr, RethRepr, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Value};

include!("common/mix.rs");

fn bench_decode(c: &mut Criterion) {
    let frames = realistic_mix();
    let opts = DecodeOptions { verify: false, ..Default::default() };
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(frames.len() as u64));
    g.bench_function("full_frame_visit_all_fields", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for f in &frames {
                acc = acc.wrapping_add(decode_and_visit(black_box(f), &opts));
            }
            acc
        })
    });
    g.bench_function("full_frame_no_visit", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for f in &frames {
                acc = acc.wrapping_add(decode_only(black_box(f), &opts));
            }
            acc
        })
    });
    let verify = DecodeOptions { verify: true, ..Default::default() };
    g.bench_function("full_frame_with_icrc_verification", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for f in &frames {
                acc = acc.wrapping_add(decode_and_visit(black_box(f), &verify));
            }
            acc
        })
    });
    g.finish();
}

fn bench_icrc(c: &mut Criterion) {
    let payload = vec![0x5au8; 4096];
    let frame = FrameRepr::new(NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]), RoceRepr::new(0x07, 1, 1).with_payload(&payload)).to_vec();
    let (ip, udp, roce) = (&frame[14..34], &frame[34..42], &frame[42..frame.len() - 4]);
    let mut g = c.benchmark_group("icrc");
    g.throughput(Throughput::Bytes(roce.len() as u64 + 36));
    g.bench_function("compute_4k_packet", |b| {
        b.iter(|| icrc::compute(IcrcNet::Ipv4 { ip: black_box(ip), udp }, black_box(roce)))
    });
    g.finish();
}

criterion_group!(benches, bench_decode, bench_icrc);
criterion_main!(benches);
