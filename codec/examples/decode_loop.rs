//! Runs the decode benchmark's per-frame work (`benches/common/mix.rs`: the same functions
//! criterion measures) over the realistic mix N times, for `perf stat`: cycles and instructions
//! per frame, which other processes on the machine do not change.
//! `cargo build --release -p rocescope-codec --example decode_loop` then
//! `perf stat -e cycles,instructions target/release/examples/decode_loop 100000`
//! (`NO_VISIT=1` for decode alone). Each run prints frames decoded, to divide by.

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{AethRepr, RethRepr, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Value};

include!("../benches/common/mix.rs");

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let frames = realistic_mix();
    let opts = DecodeOptions { verify: false, ..Default::default() };
    let visit = std::env::var_os("NO_VISIT").is_none();
    let mut acc = 0u64;
    // Two loops, as in the benchmark, so each runs one function per frame.
    if visit {
        for _ in 0..n {
            for f in &frames {
                acc = acc.wrapping_add(decode_and_visit(std::hint::black_box(f), &opts));
            }
        }
    } else {
        for _ in 0..n {
            for f in &frames {
                acc = acc.wrapping_add(decode_only(std::hint::black_box(f), &opts));
            }
        }
    }
    println!("{} frames decoded, checksum {acc}", n * frames.len() as u64);
}
