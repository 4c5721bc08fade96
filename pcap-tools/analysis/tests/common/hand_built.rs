//! Hand-built flows for the analysers' tests: SEND requests from [`A`] to [`B`]'s QP 0x11
//! (64 bytes each), answered (ACK, NAK) to A's QP 0x22, written as one tap's capture
//! (frames 1 µs apart) and analysed in one pass (`common/timeline.rs`, which the test crate
//! includes too). (Each test uses some of it.)
#![allow(dead_code)]

use std::path::Path;

use rocescope_analysis::analyze::report::FlowTimeline;
use rocescope_analysis::capture::CaptureWriter;
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::ib::{AethRepr, Syndrome};

pub const A: [u8; 4] = [10, 0, 0, 1];
pub const B: [u8; 4] = [10, 0, 0, 2];

/// An IPv4 frame with `ttl` (64 leaves a host: the tap is at it; fewer have crossed hops).
pub fn frame(src: [u8; 4], dst: [u8; 4], ttl: u8, roce: RoceRepr<'_>) -> Vec<u8> {
    FrameRepr::new(NetRepr::Ipv4 { src, dst, tos: 0, ttl, ident: 1 }, roce).to_vec()
}

/// A's SEND Only with `psn`.
pub fn send_only(psn: u32, ttl: u8) -> Vec<u8> {
    request(0x04, psn, ttl)
}

/// A's request packet with `opcode` (one without extension headers: SEND First, Middle,
/// Last, Only) and `psn`.
pub fn request(opcode: u8, psn: u32, ttl: u8) -> Vec<u8> {
    frame(A, B, ttl, RoceRepr::new(opcode, 0x11, psn).with_payload(&[0x5a; 64]))
}

/// B's Acknowledge (AETH `syndrome`, `msn`) with `psn`.
pub fn reply(psn: u32, syndrome: Syndrome, msn: u32, ttl: u8) -> Vec<u8> {
    let mut r = RoceRepr::new(0x11, 0x22, psn);
    r.aeth = Some(AethRepr { syndrome, msn });
    frame(B, A, ttl, r)
}

/// `frames` as one tap's pcapng at `path`.
pub fn write_capture(path: &Path, frames: &[Vec<u8>]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = CaptureWriter::new(file, &["tap"]).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write(0, 1_700_000_000_000_000_000 + 1_000 * i as u64, f).unwrap();
    }
}

/// The timeline of A's requests flow in `frames` (written to a temporary capture named after
/// `name`, analysed with every event kept, removed).
pub fn requests_timeline(name: &str, frames: &[Vec<u8>]) -> FlowTimeline {
    let path = std::env::temp_dir().join(format!("rocescope-{name}-{}.pcapng", std::process::id()));
    write_capture(&path, frames);
    let t = crate::common_timeline::timeline(&path, "auto");
    let _ = std::fs::remove_file(&path);
    t.flows.into_iter().find(|f| f.destqp == 0x11).expect("the requests' flow")
}
