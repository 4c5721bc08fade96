//! At the sender's tap, a Go-Back-N resend's trigger is a NAK when a NAK asked for its PSN or
//! a lower one (a PSN sequence error NAK names the PSN expected: the sender goes back to it and
//! resends everything after) since the latest copy of that PSN, and a timeout otherwise
//! (docs/analysis.md, "Retransmissions"). The tracker keeps the NAKs as a floor rather than
//! marking every outstanding PSN per NAK (a NAK storm over a wide window cost a NAK the
//! window's length); what it answers must be what marking answered.

use rocescope_analysis::analyze::report::Signal;
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture::{self, CaptureWriter};
use rocescope_analysis::session::Session;
use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::ib::{AethRepr, Syndrome};

#[test]
fn a_resend_is_nak_triggered_only_after_a_nak_at_or_below_its_psn() {
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let payload = [0x5a; 64];
    // The tap is at a: a's frames leave with their initial TTL, b's have crossed a hop.
    let frame = |src, dst, ttl, roce| FrameRepr::new(NetRepr::Ipv4 { src, dst, tos: 0, ttl, ident: 1 }, roce).to_vec();
    let send = |psn| frame(a, b, 64, RoceRepr::new(0x04, 0x11, psn).with_payload(&payload));
    let nak = |psn| {
        let mut r = RoceRepr::new(0x11, 0x22, psn);
        r.aeth = Some(AethRepr { syndrome: Syndrome::Nak { code: 0 }, msn: 0 });
        frame(b, a, 63, r)
    };
    let mut frames: Vec<Vec<u8>> = (0..10).map(send).collect();
    frames.push(nak(3)); // asks for 3 and everything after
    frames.extend([send(3), send(4)]); // NAK: both at or above 3
    frames.push(send(2)); // below the NAK's PSN: a timeout
    frames.push(nak(6));
    frames.push(send(4)); // its latest copy came after the first NAK; the second asks from 6
    frames.push(send(7)); // at or above 6: a NAK
    frames.push(send(3)); // latest copy after the first NAK, second asks from 6: a timeout
    frames.push(nak(2));
    frames.extend([send(9), send(2)]); // the third NAK covers both
    frames.push(send(9)); // resent just now, no NAK since: a timeout
    let path = std::env::temp_dir().join(format!("rocescope-nak-signals-{}.pcapng", std::process::id()));
    let mut w = CaptureWriter::new(std::io::BufWriter::new(std::fs::File::create(&path).unwrap()), &["tap"]).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write(0, 1_700_000_000_000_000_000 + 1_000 * i as u64, f).unwrap();
    }
    drop(w);
    let mut s =
        Session::new(capture::open(&path.display().to_string()).unwrap(), Decoder::new(DecoderOptions::default()));
    let mut an = run::analyze(&mut s, Options::default(), run::Window::default(), |_| {}).unwrap();
    let _ = std::fs::remove_file(&path);
    let t = an.timeline();
    let flow = t.flows.iter().find(|f| f.destqp == 0x11).expect("the requests' flow");
    let got: Vec<(u32, Signal)> = flow.retransmissions.iter().map(|r| (r.psn, r.trigger)).collect();
    use Signal::{Nak, Timeout};
    assert_eq!(
        got,
        [(3, Nak), (4, Nak), (2, Timeout), (4, Timeout), (7, Nak), (3, Timeout), (9, Nak), (2, Nak), (9, Timeout)]
    );
}
