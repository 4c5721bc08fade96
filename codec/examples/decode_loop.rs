//! Decodes the benchmark's realistic mix N times (for `perf stat`: cycles and instructions
//! per frame, which other processes on the machine do not change):
//! `cargo build --release -p rocescope-codec --example decode_loop` then
//! `perf stat -e cycles,instructions target/release/examples/decode_loop 100000`.

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{AethRepr, RethRepr, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Value};

include!("../benches/common/mix.rs");

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let frames = realistic_mix();
    let opts = DecodeOptions { verify: false, ..Default::default() };
    let mut acc = 0u64;
    let visit = std::env::var_os("NO_VISIT").is_none();
    for _ in 0..n {
        for f in &frames {
            let mut fr = Frame::new(LinkType::Ethernet, std::hint::black_box(f));
            fr.decode(f.len(), &opts);
            if !visit {
                acc += fr.roce().map_or(0, |p| p.payload_len() as u64);
                continue;
            }
            fr.visit(|id, v, r| {
                // Touch every field: its id, its range and its value.
                acc = acc.wrapping_add(id as u64 ^ r.end as u64);
                if let Value::UInt(n) = v {
                    acc ^= n;
                }
            });
        }
    }
    println!("{} frames decoded, checksum {acc}", n * frames.len() as u64);
}
