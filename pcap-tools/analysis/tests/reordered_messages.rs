//! A message whose packets the tap saw out of order: its Last (and Middle) before its First.
//! The First, when it comes, finds the Last recorded after it (up to the next message's
//! First), so the message has its last PSN and completes at the acknowledgement that covered
//! it. (The tracker walks the window's slots in place for it, up to a bound found once: a
//! look-up per PSN made a damaged capture's 2,000 late Firsts over 58,000 PSNs take 3 s.)

use rocescope_codec::ib::Syndrome;

#[path = "common/timeline.rs"]
mod common_timeline;
#[path = "common/hand_built.rs"]
mod hand_built;

#[test]
fn a_message_whose_last_came_before_its_first_is_whole_and_completes() {
    const MESSAGES: u32 = 30;
    let (first, middle, last) = (0x00, 0x01, 0x02);
    let mut frames = Vec::new();
    for k in 0..MESSAGES {
        let p = 3 * k;
        let mut packets = [(first, p), (middle, p + 1), (last, p + 2)];
        // In order; the Last first; the Last between the Middle and the First.
        packets.rotate_left([0, 2, 1][k as usize % 3]);
        frames.extend(packets.iter().map(|&(op, psn)| hand_built::request(op, psn, 64)));
        if k % 10 == 9 {
            frames.push(hand_built::reply(p + 2, Syndrome::Ack { credit: 31 }, k + 1, 63));
        }
    }
    let flow = hand_built::requests_timeline("reordered", &frames);
    assert_eq!(flow.messages.len(), MESSAGES as usize);
    for (k, m) in flow.messages.iter().enumerate() {
        let p = 3 * k as u32;
        assert_eq!((m.first_psn, m.last_psn), (p, Some(p + 2)), "message {k}");
        // Completed by the ACK after its group of ten: frame 31 × (group + 1).
        assert_eq!(m.complete_frame, Some(31 * (k as u64 / 10 + 1)), "message {k}");
    }
}
