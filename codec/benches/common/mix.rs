// Shared by benches/decode.rs, examples/decode_loop.rs (the same code under `perf stat`) and
// examples/write_bench_capture.rs.

/// Decodes a frame and visits every field, folding the values so nothing is optimised away:
/// the work `decode/full_frame_visit_all_fields` measures per frame.
#[allow(dead_code)]
#[inline]
fn decode_and_visit(frame: &[u8], opts: &DecodeOptions) -> u64 {
    let mut f = Frame::new(LinkType::Ethernet, frame);
    f.decode(frame.len(), opts);
    let mut acc = 0u64;
    f.visit(|id, v, r| {
        // Touch every field: its id, its range and its value.
        acc = acc.wrapping_add(id as u64 ^ r.end as u64);
        if let Value::UInt(n) = v {
            acc ^= n;
        }
    });
    acc
}

/// Decodes a frame without visiting its fields (`decode/full_frame_no_visit`).
#[allow(dead_code)]
#[inline]
fn decode_only(frame: &[u8], opts: &DecodeOptions) -> u64 {
    let mut fr = Frame::new(LinkType::Ethernet, frame);
    fr.decode(frame.len(), opts);
    fr.roce().map_or(0, |p| p.payload_len() as u64)
}

/// The benchmark's frame mix.
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
