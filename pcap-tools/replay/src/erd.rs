//! ERD's rules (docs/replay.md "ERD"; seed 004 §4.3-4.4). ERD's receiver records every PSN it
//! gets and, every scan period, names the ones it misses in NACKs on a TCP connection to the
//! sender; the sender resends exactly the PSNs a NACK named, and nothing else: there is no
//! acknowledgement and no timer. So:
//!
//! - at the **sender's tap**, every NACK the sender received shows arriving, so a copy of a PSN
//!   sent again when every NACK naming it was already answered by a copy is a departure
//!   (`erd.resend-unasked`: each naming is one RetryQ entry, one resend);
//! - at the **receiver's tap**, every NACK it sent shows leaving and every packet it got shows
//!   arriving: a NACK naming a PSN that had arrived whole (longer than the reaction time before
//!   the NACK left) is a departure (`erd.nack-unexpected`), and so is a copy of a PSN arriving
//!   when more copies of it have arrived than one plus the NACKs that named it before (each
//!   naming lets the sender resend once; the network loses copies, never makes them:
//!   `erd.resend-unasked`).
//!
//! NACK segments are read whole when a segment holds whole NACK messages (this project's stack
//! writes one per segment, and a resent segment repeats its bytes, so a segment the sender got
//! only as a TCP resend, after later ones, is still read); otherwise through the capture's
//! reassembly of the stream, in order. A segment whose bytes the tap could not read (a gap in
//! the stream, or messages split across segments around one) makes the sender-side rule
//! `ambiguous` from then on: the NACK that asked may be in the bytes not read. At the receiver's
//! tap segments leave in order, so one whose sequence number is not past the highest read is a
//! TCP resend and names nothing new; and only a segment read on its own is judged for
//! `erd.nack-unexpected` (messages the reassembly completes may have been written earlier).
//! Entries name the data sender's QP: a flow (keyed by destination QP) that two source QPs
//! send to is not judged, as the receiver's bitmaps are per source QP. A copy whose ICRC the
//! capture shows bad is not an arrival (the receiver drops it).
//!
//! Memory is bounded: the state of the PSNs within [`WINDOW`] of the highest one seen.

use std::collections::HashMap;

use rocescope_codec::ib::psn;

use crate::rules;
use crate::{Finding, FindingKind};

/// PSNs behind the highest one seen whose state is kept.
pub const WINDOW: i32 = 1 << 16;

/// Which end the tap is beside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Side {
    Sender,
    Receiver,
}

/// What the tap saw of one PSN.
#[derive(Clone, Copy, Debug, Default)]
struct PsnState {
    /// Copies seen (sent, at the sender's tap; arrived, at the receiver's).
    copies: u32,
    /// NACKs that named it (the receiver's tap: segments with new bytes).
    namings: u32,
    /// Namings the sender got and has not answered with a copy yet (the sender's tap).
    unanswered: u32,
    /// The first copy that arrived (the receiver's tap): frame and time.
    arrived: Option<(u64, u64)>,
}

/// One ERD connection at one end's tap.
pub(super) struct ErdJudge {
    flow: String,
    side: Side,
    reaction_ns: u64,
    psns: HashMap<u32, PsnState>,
    highest: Option<u32>,
    /// The highest NACK segment sequence number read (the receiver's tap: segments leave in
    /// order, so one at or below it is a TCP resend, naming nothing new).
    read_to: Option<u32>,
    /// The data sender's QP (the DETH source QP of its first packet here), and whether another
    /// one sent to the same destination QP (ERD keeps one bitmap per source QP: the judge would
    /// mix their PSNs, so the connection is then not judged).
    src_qp: Option<u32>,
    pub mixed: bool,
    /// Since when some NACK bytes could not be read (the sender's tap): frame.
    unread_since: Option<u64>,
    pub requests: u64,
    pub nacks: u64,
    pub findings: Vec<Finding>,
}

impl ErdJudge {
    pub fn new(flow: String, side: Side, reaction_ns: u64) -> ErdJudge {
        ErdJudge {
            flow,
            side,
            reaction_ns,
            psns: HashMap::new(),
            highest: None,
            read_to: None,
            src_qp: None,
            mixed: false,
            unread_since: None,
            requests: 0,
            nacks: 0,
            findings: Vec::new(),
        }
    }

    fn state(&mut self, p: u32) -> &mut PsnState {
        if self.highest.is_none_or(|h| psn::lt(h, p)) {
            self.highest = Some(p);
        }
        if self.psns.len() > 2 * WINDOW as usize {
            let h = self.highest.unwrap_or(p);
            self.psns.retain(|&q, _| psn::diff(q, h) < WINDOW);
        }
        self.psns.entry(p).or_default()
    }

    fn find(
        &mut self,
        kind: FindingKind,
        rule: rules::Rule,
        frames: Vec<u64>,
        now: u64,
        expected: String,
        seen: String,
    ) {
        self.findings.push(Finding::of(kind, rule, &self.flow, frames, now, expected, seen));
    }

    /// A data packet of PSN `p` at frame `number`, from the sender's QP `src_qp` (its DETH).
    pub fn data(&mut self, number: u64, now: u64, p: u32, src_qp: Option<u32>) {
        self.requests += 1;
        if let Some(q) = src_qp {
            self.mixed |= self.src_qp.is_some_and(|s| s != q);
            self.src_qp.get_or_insert(q);
        }
        let side = self.side;
        let unread = self.unread_since;
        let st = *self.state(p);
        match side {
            Side::Sender if st.copies > 0 && st.unanswered == 0 => {
                let (kind, why) = match unread {
                    None => (FindingKind::Departure, String::new()),
                    Some(f) => (
                        FindingKind::Ambiguous,
                        format!(
                            " (NACK bytes from frame {f} on could not be read here: a NACK there may have named it)"
                        ),
                    ),
                };
                let expected = format!("PSN {p} sent again only after a NACK named it (ERD resends nothing else)");
                let seen = format!(
                    "copy {} of PSN {p}, and no NACK naming it that an earlier copy did not answer{why}",
                    st.copies + 1
                );
                self.find(kind, rules::ERD_RESEND_UNASKED, vec![number], now, expected, seen);
            }
            Side::Receiver if st.copies > st.namings => {
                let expected = format!(
                    "at most one copy of PSN {p} more than the NACKs naming it that left before (each lets the sender \
                     resend once)"
                );
                let seen = format!("copy {} of PSN {p} arrived; {} NACK(s) named it before", st.copies + 1, st.namings);
                self.find(FindingKind::Departure, rules::ERD_RESEND_UNASKED, vec![number], now, expected, seen);
            }
            _ => {}
        }
        let st = self.state(p);
        st.copies += 1;
        st.unanswered = st.unanswered.saturating_sub(1);
        if side == Side::Receiver && st.arrived.is_none() {
            st.arrived = Some((number, now));
        }
    }

    /// A NACK segment at frame `number` (stream sequence number `seq`) naming `named` (each entry:
    /// the data sender's QP and the PSN). `direct`: read from this segment alone (its bytes are
    /// whole NACK messages); otherwise through the stream's reassembly, which may have completed
    /// messages begun in earlier segments, so they are counted but not judged as this segment's.
    /// `whole`: every byte of the segment could be read.
    pub fn nack(&mut self, number: u64, now: u64, seq: u32, named: &[(u32, u32)], direct: bool, whole: bool) {
        self.nacks += 1;
        if !whole && self.unread_since.is_none() {
            self.unread_since = Some(number);
        }
        let ours = |q: u32| self.src_qp.is_none_or(|s| s == q);
        let named: Vec<u32> = named.iter().filter(|&&(q, _)| ours(q)).map(|&(_, p)| p).collect();
        match self.side {
            Side::Sender => {
                for p in named {
                    let st = self.state(p);
                    st.unanswered = st.unanswered.saturating_add(1);
                }
            }
            Side::Receiver => {
                // (Segments leave the receiver in order: one not past the highest read is a
                // TCP resend.)
                if self.read_to.is_some_and(|r| (seq.wrapping_sub(r) as i32) <= 0) {
                    return;
                }
                self.read_to = Some(seq);
                for p in named {
                    let reaction = self.reaction_ns;
                    let st = self.state(p);
                    st.namings += 1;
                    let late = st.arrived.filter(|&(_, at)| now.saturating_sub(at) > reaction);
                    let Some((frame, at)) = late.filter(|_| direct) else {
                        continue;
                    };
                    let expected = format!("a NACK names only PSNs the receiver misses (PSN {p} arrived whole before)");
                    let seen = format!(
                        "PSN {p} named {} µs after it arrived whole (frame {frame})",
                        now.saturating_sub(at) / 1_000
                    );
                    let frames = vec![number, frame];
                    self.find(FindingKind::Departure, rules::ERD_NACK_UNEXPECTED, frames, now, expected, seen);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(j: &ErdJudge) -> Vec<(&'static str, FindingKind)> {
        j.findings.iter().map(|f| (f.rule, f.kind)).collect()
    }

    /// Entries of the sender's QP 0x100.
    fn named(psns: &[u32]) -> Vec<(u32, u32)> {
        psns.iter().map(|&p| (0x100, p)).collect()
    }

    #[test]
    fn the_sender_resends_only_what_a_nack_named_once_per_naming() {
        let mut j = ErdJudge::new("f".into(), Side::Sender, 5_000);
        j.data(1, 0, 10, Some(0x100));
        j.data(2, 0, 11, Some(0x100));
        j.nack(3, 10, 1, &named(&[10]), true, true);
        j.data(4, 20, 10, Some(0x100)); // asked
        assert!(j.findings.is_empty());
        j.data(5, 30, 10, Some(0x100)); // asked once, resent twice
        j.data(6, 40, 11, Some(0x100)); // never asked
        assert_eq!(rules(&j), vec![("erd.resend-unasked", FindingKind::Departure); 2]);
        // Two namings before the sender acts allow two resends (a RetryQ entry each).
        j.nack(7, 50, 2, &named(&[11]), true, true);
        j.nack(8, 51, 3, &named(&[11]), true, true);
        j.data(9, 60, 11, Some(0x100));
        j.data(10, 61, 11, Some(0x100));
        assert_eq!(j.findings.len(), 2);
        // Another source QP's entries name nothing of this flow's.
        j.nack(11, 70, 4, &[(0x999, 10)], true, true);
        j.data(12, 80, 10, Some(0x100));
        assert_eq!(j.findings.len(), 3);
        // After bytes it could not read, the same is ambiguous.
        j.nack(13, 90, 99, &[], false, false);
        j.data(14, 100, 11, Some(0x100));
        assert_eq!(j.findings[3].kind, FindingKind::Ambiguous);
        assert!(j.findings[3].seen.contains("frame 13"), "{}", j.findings[3].seen);
        assert!(!j.mixed);
        j.data(15, 110, 50, Some(0x101));
        assert!(j.mixed, "two source QPs to one destination QP");
    }

    #[test]
    fn the_receiver_names_only_what_it_misses_and_gets_no_copy_unasked() {
        let mut j = ErdJudge::new("f".into(), Side::Receiver, 5_000);
        j.data(1, 0, 10, Some(0x100));
        j.nack(2, 1_000, 1, &named(&[10, 11]), true, true); // within the reaction time: not judged
        assert!(j.findings.is_empty());
        j.nack(3, 20_000, 2, &named(&[10]), true, true);
        assert_eq!(rules(&j), vec![("erd.nack-unexpected", FindingKind::Departure)]);
        assert_eq!(j.findings[0].frames, vec![3, 1]);
        // PSN 11: named once, so one resend may arrive (the first copy was lost) …
        j.data(4, 30_000, 11, Some(0x100));
        // … and PSN 10, named twice, a second and a third copy; a fourth is one too many.
        j.data(5, 31_000, 10, Some(0x100));
        j.data(6, 32_000, 10, Some(0x100));
        assert_eq!(j.findings.len(), 1);
        // A TCP resend of segment 2 (or of any earlier one) names nothing new.
        j.nack(7, 33_000, 2, &named(&[10]), true, true);
        j.nack(8, 33_500, 1, &named(&[10]), true, true);
        j.data(9, 34_000, 10, Some(0x100));
        assert_eq!(j.findings.len(), 2);
        assert_eq!(j.findings[1].rule, "erd.resend-unasked");
        assert_eq!(j.findings[1].frames, vec![9]);
        // Entries completed through the reassembly count as namings but are not judged as the
        // segment's own (they may have been written before PSN 10 arrived).
        j.data(10, 39_000, 12, Some(0x100));
        j.nack(11, 60_000, 3, &named(&[12]), false, true);
        assert_eq!(j.findings.len(), 2);
        j.data(12, 61_000, 12, Some(0x100));
        assert_eq!(j.findings.len(), 2, "the reassembled naming allowed that copy");
    }
}
