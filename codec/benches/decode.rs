//! Full-frame decode (Ethernet → IP → UDP → BTH → extension headers, every field visited,
//! ICRC verification excluded) on a realistic RoCEv2 mix, and ICRC computation on its own.
//!
//! `cargo bench -p rocescope-codec --bench decode`; the README reports the results.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::icrc::{self, IcrcNet};
use rocescope_codec::ib::{AethRepr, RethRepr, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Value};

/// A mix like a bulk-transfer capture at the receiver: WRITE traffic of 4 KiB packets with
/// First/Middle/Last, READ requests and responses, SENDs, and the ACKs coming back, over
/// IPv4 and IPv6.
pub fn realistic_mix() -> Vec<Vec<u8>> {
    let payload = vec![0xabu8; 4096];
    let small = vec![0x11u8; 64];
    let v4 = NetRepr::ipv4([10, 0, 0, 1], [10, 0, 0, 2]);
    let v6 = NetRepr::ipv6([0xfd; 16], [0xfe; 16]);
    let mut frames = Vec::new();
    for i in 0..64u32 {
        let net = if i % 4 == 3 { v6 } else { v4 };
        let psn = 1000 + i * 4;
        let mut first = RoceRepr::new(0x06, 0x12, psn).with_payload(&payload);
        first.reth = Some(RethRepr { va: 0x7f00_0000_0000 + i as u64 * 16384, r_key: 0x1234, dma_len: 16384 });
        frames.push(FrameRepr::new(net, first).to_vec());
        frames.push(FrameRepr::new(net, RoceRepr::new(0x07, 0x12, psn + 1).with_payload(&payload)).to_vec());
        frames.push(FrameRepr::new(net, RoceRepr::new(0x07, 0x12, psn + 2).with_payload(&payload)).to_vec());
        let mut last = RoceRepr::new(0x08, 0x12, psn + 3).with_payload(&payload);
        last.bth.ack_req = true;
        frames.push(FrameRepr::new(net, last).to_vec());
        let mut ack = RoceRepr::new(0x11, 0x34, psn + 3);
        ack.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: i });
        frames.push(FrameRepr::new(net, ack).to_vec());
        if i % 8 == 0 {
            let mut rr = RoceRepr::new(0x0C, 0x12, psn);
            rr.reth = Some(RethRepr { va: 0x1000, r_key: 7, dma_len: 4096 });
            frames.push(FrameRepr::new(net, rr).to_vec());
            frames.push(FrameRepr::new(net, RoceRepr::new(0x10, 0x34, psn).with_payload(&payload)).to_vec());
            frames.push(FrameRepr::new(net, RoceRepr::new(0x04, 0x12, psn).with_payload(&small)).to_vec());
        }
    }
    frames
}

/// Decodes a frame and visits every field, folding the values so nothing is optimised away.
#[inline]
fn decode_and_visit(frame: &[u8], opts: &DecodeOptions) -> u64 {
    let mut f = Frame::new(LinkType::Ethernet, frame);
    f.decode(frame.len(), opts);
    let mut acc = 0u64;
    f.visit(|id, v, r| {
        acc = acc.wrapping_add(id as u64 + r.start as u64);
        acc ^= match v {
            Value::UInt(n) => n,
            Value::Bool(b) => b as u64,
            Value::Bytes(b) => b.len() as u64,
            Value::Str(s) => s.len() as u64,
            Value::Warning(_) => 1,
        };
    });
    acc
}

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
            let mut acc = 0usize;
            for f in &frames {
                let mut fr = Frame::new(LinkType::Ethernet, black_box(f));
                fr.decode(f.len(), &opts);
                acc += fr.roce().map_or(0, |p| p.payload_len());
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
