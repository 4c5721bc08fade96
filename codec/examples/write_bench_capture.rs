//! Writes a large capture of the decode benchmark's realistic mix (for comparing rocescope
//! with tshark on the same file): `cargo run --release -p rocescope-codec --example
//! write_bench_capture -- OUT.pcap COPIES` writes COPIES × 344 frames as classic pcap with
//! nanosecond timestamps.

use std::io::Write;

use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{AethRepr, RethRepr, Syndrome};
use rocescope_codec::{DecodeOptions, Frame, LinkType, Value};

include!("../benches/common/mix.rs");

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "bench.pcap".into());
    let copies: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3000);
    let frames = realistic_mix();
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
    // pcap header, nanosecond magic, snaplen 65535, Ethernet.
    out.write_all(&0xa1b23c4du32.to_le_bytes())?;
    out.write_all(&2u16.to_le_bytes())?;
    out.write_all(&4u16.to_le_bytes())?;
    out.write_all(&[0u8; 8])?;
    out.write_all(&65535u32.to_le_bytes())?;
    out.write_all(&1u32.to_le_bytes())?;
    let mut t: u64 = 1_700_000_000_000_000_000;
    for _ in 0..copies {
        for f in &frames {
            t += 800;
            out.write_all(&((t / 1_000_000_000) as u32).to_le_bytes())?;
            out.write_all(&((t % 1_000_000_000) as u32).to_le_bytes())?;
            out.write_all(&(f.len() as u32).to_le_bytes())?;
            out.write_all(&(f.len() as u32).to_le_bytes())?;
            out.write_all(f)?;
        }
    }
    eprintln!("wrote {} frames to {path}", copies * frames.len() as u64);
    Ok(())
}
