//! At the sender's tap, a Go-Back-N resend's trigger is a NAK when a NAK asked for its PSN or
//! a lower one (a PSN sequence error NAK names the PSN expected: the sender goes back to it and
//! resends everything after) since the latest copy of that PSN, and a timeout otherwise
//! (docs/analysis.md, "Retransmissions"). The tracker keeps the NAKs as a floor rather than
//! marking every outstanding PSN per NAK (a NAK storm over a wide window cost a NAK the
//! window's length); what it answers must be what marking answered.

use rocescope_analysis::analyze::report::Signal;
use rocescope_codec::ib::Syndrome;

#[path = "common/timeline.rs"]
mod common_timeline;
#[path = "common/hand_built.rs"]
mod hand_built;

#[test]
fn a_resend_is_nak_triggered_only_after_a_nak_at_or_below_its_psn() {
    // The tap is at A: A's frames leave with their initial TTL, B's have crossed a hop.
    let send = |psn| hand_built::send_only(psn, 64);
    let nak = |psn| hand_built::reply(psn, Syndrome::Nak { code: 0 }, 0, 63);
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
    let flow = hand_built::requests_timeline("nak-signals", &frames);
    let got: Vec<(u32, Signal)> = flow.retransmissions.iter().map(|r| (r.psn, r.trigger)).collect();
    use Signal::{Nak, Timeout};
    assert_eq!(
        got,
        [(3, Nak), (4, Nak), (2, Timeout), (4, Timeout), (7, Nak), (3, Timeout), (9, Nak), (2, Nak), (9, Timeout)]
    );
}
