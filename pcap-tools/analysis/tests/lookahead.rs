//! The session's look-ahead for `auto` detection (docs/profiles.md, "Detection looks ahead"):
//! held-back frames come out in file order with their flow's final profile when the deciding
//! packet is within the bound, as `std` (counted in `packets_early`) when it is not; a detection
//! pass decides regardless of distance; a capture that turns out unusable gives out the frames
//! held before its error.

use std::ops::ControlFlow;

use rocescope_analysis::capture::{CaptureReader, CaptureWriter};
use rocescope_analysis::session::Session;
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::ib::{DcpethRepr, RethRepr};
use rocescope_codec::Profile;

/// A DCP WRITE First (DestQP 0x12), `gap` untagged SENDs of other flows, then the WRITE's Middle
/// and Last: the Middle decides the flow.
fn capture(gap: usize) -> Vec<u8> {
    let net = |tos: u8| NetRepr::Ipv4 { src: [10, 0, 0, 1], dst: [10, 0, 0, 2], tos, ttl: 64, ident: 0 };
    let payload = [0x5a; 256];
    let dcp = |i: u32| {
        let mut r = RoceRepr::new_dcp([0x06, 0x07, 0x08][i as usize], 0x12, 100 + i).with_payload(&payload);
        r.dcpeth = Some(DcpethRepr { msn: 0, sretryno: 0 });
        r.reth = Some(RethRepr { va: 0x4000 + 256 * i as u64, r_key: 9, dma_len: 3 * 256 });
        FrameRepr::new(net(0x68), r).to_vec()
    };
    let mut w = CaptureWriter::new(Vec::new(), &["eth0"]).unwrap();
    let mut t = 1_700_000_000_000_000_000u64;
    let mut put = |w: &mut CaptureWriter<Vec<u8>>, f: &[u8]| {
        t += 1000;
        w.write(0, t, f).unwrap();
    };
    put(&mut w, &dcp(0));
    for k in 0..gap {
        let other = FrameRepr::new(net(0), RoceRepr::new(0x04, 0x100 + k as u32, 0).with_payload(&[1; 32])).to_vec();
        put(&mut w, &other);
    }
    put(&mut w, &dcp(1));
    put(&mut w, &dcp(2));
    w.into_inner()
}

/// (frame number, profile) of every RoCE frame given out, and the decoder's early count.
fn run<'a>(
    bytes: &'a [u8],
    session: impl FnOnce(CaptureReader<&'a [u8]>) -> Session<&'a [u8]>,
) -> (Vec<(u64, Profile)>, u64, bool) {
    let mut s = session(CaptureReader::new(bytes).unwrap());
    let mut out = Vec::new();
    let r = s.run(|rec, d| {
        if d.frame.roce().is_some() {
            out.push((rec.number, d.profile()));
        }
        ControlFlow::Continue(())
    });
    (out, s.decoder().stats().packets_early, r.is_ok())
}

fn auto() -> Decoder {
    Decoder::new(DecoderOptions::default())
}

#[test]
fn a_held_first_packet_comes_out_as_dcp_in_file_order() {
    let bytes = capture(50);
    let (out, early, ok) = run(&bytes, |r| Session::new(r, auto()));
    assert!(ok);
    assert_eq!(out.len(), 53);
    assert!(out.windows(2).all(|w| w[0].0 + 1 == w[1].0), "file order kept");
    assert_eq!((out[0], out[51], out[52]), ((1, Profile::Dcp), (52, Profile::Dcp), (53, Profile::Dcp)));
    assert!(out[1..51].iter().all(|&(_, p)| p == Profile::Std));
    assert_eq!(early, 0);
}

#[test]
fn beyond_the_bound_the_first_packet_goes_out_std_and_is_counted() {
    let bytes = capture(50);
    let (out, early, _) = run(&bytes, |r| Session::new(r, auto()).with_lookahead(10, 1 << 20));
    assert_eq!(out[0], (1, Profile::Std));
    assert_eq!(early, 1);
    assert!(out.windows(2).all(|w| w[0].0 + 1 == w[1].0));
    // The byte bound too: 2 KB hold fewer than the 50 frames between First and Middle.
    let (out, early, _) = run(&bytes, |r| Session::new(r, auto()).with_lookahead(1000, 2048));
    assert_eq!((out[0], early), ((1, Profile::Std), 1));
}

#[test]
fn a_detection_pass_decides_however_far_the_deciding_packet_is() {
    let bytes = capture(500);
    let (out, early, _) = run(&bytes, |r| {
        Session::new(r, auto()).with_lookahead(10, 1 << 20).with_detection_pass(CaptureReader::new(&bytes[..]).unwrap())
    });
    assert_eq!((out[0], out[501], early), ((1, Profile::Dcp), (502, Profile::Dcp), 0));
}

#[test]
fn a_capture_unusable_part_way_gives_out_what_was_held_then_the_error() {
    let whole = capture(5);
    // Cut inside the Middle's record (the Last's record, about 370 bytes, is gone whole): the
    // First and the five others were read, held for a decision that never comes.
    let cut = &whole[..whole.len() - 600];
    let mut s = Session::new(CaptureReader::new(cut).unwrap(), auto());
    let mut numbers = Vec::new();
    let r = s.run(|rec, _| {
        numbers.push(rec.number);
        ControlFlow::Continue(())
    });
    assert!(r.is_err(), "the cut record is reported");
    assert_eq!(numbers, (1..=6).collect::<Vec<u64>>());
}
