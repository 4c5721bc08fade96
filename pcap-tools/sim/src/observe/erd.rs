//! ERD's rules of the observable view (docs/truth.md, "What a tap can observe", ERD). ERD sends
//! no acknowledgement: the receiver names the PSNs it misses in NACKs on a TCP connection
//! (seed 004 §4.3-4.4), and the sender resends exactly those. A tap learns from a NACK it
//! recorded that the receiver asked for a PSN, and nothing from the order packets arrive in
//! (every packet may take any path). So at every tap, the evidence of a loss, what moved the
//! sender and whether a resend was needed all read the NACKs the tap recorded:
//!
//! - **Which NACKs a tap reads** ([`erd_asks`]): a capture reassembles the NACK stream from the
//!   segments it recorded, in frame order, and reads a segment's NACKs only when its bytes are
//!   new (its sequence number above every segment read before: a resent segment, or one the tap
//!   saw after a later one, is old), and only once it has recorded a data frame of the flow the
//!   NACK names (it knows the flow).
//! - A **lost** copy c of p is observable when the tap recorded the next copy k of p it records
//!   after c, the tap read a NACK naming p since the copy of p it recorded before k (or since
//!   the flow's start), and either the tap recorded c (frame: c's) or it recorded no copy of p
//!   before k and c is the only lost copy of p sent before k (frame: k's, the repair). Signal
//!   `erd_nack`; repair `end_host`.
//! - A **retransmission** k's `trigger` is `erd_nack` at any tap that read a NACK naming p since
//!   the previous copy of p it recorded, else `null`; away from the destination it is then not
//!   spurious.
//! - **Ambiguous PSNs** ([`erd_ambiguous`]): a NACK the tap read, naming p, with k the next copy
//!   of p it recorded, when a copy of p sent before k arrived whole, or none sent before k was
//!   lost. The tap reads such a NACK as asking for the copy before k, which it did not: the
//!   receiver named p before a copy on its way arrived, a stalled scan named a PSN not sent yet,
//!   or two NACKs naming p came back to back (a TCP resend of both, after the first was lost)
//!   and the sender resent p twice.
//! - A **message** completes at the receiver's tap at the arrival that brought its last missing
//!   piece; a capture knows that tap is the receiver's once it recorded a frame the receiver
//!   sent (a NACK segment, a CNP), and nothing elsewhere shows a completion.

use super::{is_lost, Cx, Fact, Fate, Frame, ObsLoss, Position, Repair, Signal, Unobservable, Why};
use crate::truth::Kind;
use std::collections::HashSet;

/// The PSNs the NACKs the tap read name for a requests flow, with the frame of the segment that
/// carried each, in frame order (see the module's doc).
pub(super) fn erd_asks(cx: &Cx<'_, '_>) -> Vec<(u64, u32)> {
    let first_data = cx.frames.iter().find(|f| f.kind == Kind::Data).map(|f| f.frame);
    let mut read_to: Option<u32> = None;
    let mut out = Vec::new();
    for f in cx.reverse {
        let Some(n) = cx.run.tx(f.tx).and_then(|x| x.nack.as_ref()) else { continue };
        let new = read_to.is_none_or(|r| (n.seq.wrapping_sub(r) as i32) > 0);
        if !new {
            continue;
        }
        read_to = Some(n.seq);
        if first_data.is_some_and(|d| d < f.frame) {
            out.extend(n.psns.iter().map(|&p| (f.frame, p)));
        }
    }
    out
}

/// The PSNs about which a NACK the tap read misleads it (see the module's doc).
pub(super) fn erd_ambiguous(cx: &Cx<'_, '_>) -> HashSet<u32> {
    let mut out = HashSet::new();
    for &(f, p) in &cx.erd_asks {
        if out.contains(&p) {
            continue;
        }
        let Some(k) = cx.recorded_copies(p).find(|c| c.frame > f) else { continue };
        let (before, _) = cx.run.around(cx.key, p, k.tx);
        let whole = before.iter().filter_map(|&c| cx.run.tx(c)).any(|c| c.fate == Fate::Delivered);
        let lost = before.iter().filter_map(|&c| cx.run.tx(c)).any(is_lost);
        if whole || !lost {
            out.insert(p);
        }
    }
    out
}

impl Cx<'_, '_> {
    /// ERD: the tap read a NACK naming `p` after frame `after` (if any) and before frame `before`.
    pub(super) fn erd_asked(&self, p: u32, after: Option<u64>, before: u64) -> bool {
        self.erd_asks.iter().any(|&(f, q)| q == p && f < before && after.is_none_or(|a| f > a))
    }

    /// The frame of the copy of `p` the tap recorded last before frame `at`.
    pub(super) fn recorded_before(&self, p: u32, at: u64) -> Option<u64> {
        self.recorded_copies(p).map(|f| f.frame).take_while(|&f| f < at).last()
    }

    /// ERD: what moved the sender to send copy `id` of `p` (recorded at `at`): a NACK the tap
    /// read since the copy of p it recorded before.
    pub(super) fn erd_trigger(&self, p: u32, at: u64) -> Option<Signal> {
        self.erd_asked(p, self.recorded_before(p, at), at).then_some(Signal::ErdNack)
    }

    /// ERD, away from the destination: a resend the tap saw asked for is not spurious (unless a
    /// NACK named its PSN while a copy was on its way: then the tap cannot tell).
    pub(super) fn erd_spurious(&self, p: u32, at: u64) -> Option<bool> {
        (self.erd_trigger(p, at).is_some() && !self.erd_ambiguous.contains(&p)).then_some(false)
    }
}

/// ERD: the flow's losses, each observable by a NACK the tap read (see the module's doc).
pub(super) fn erd_losses(cx: &Cx<'_, '_>, unobs: &mut Vec<Unobservable>) -> Vec<ObsLoss> {
    let mut out = Vec::new();
    for l in &cx.flow.losses {
        let why = |why| Unobservable { fact: Fact::Loss, psn: Some(l.psn), index: None, tx: Some(l.tx), why };
        if l.kind != Kind::Data {
            unobs.push(why(Why::NotData));
            continue;
        }
        let (c, p) = (l.tx, l.psn);
        let copies: Vec<&Frame> = cx.recorded_copies(p).collect();
        let own = cx.frame_of(c);
        // The next copy the tap recorded after c (by send order), and the one before it.
        let Some(k) = copies.iter().copied().find(|f| f.tx > c) else {
            unobs.push(why(Why::NoEvidence));
            continue;
        };
        let prior = copies.iter().map(|f| f.frame).take_while(|&f| f < k.frame).last();
        let asked = cx.erd_asked(p, prior, k.frame);
        let frame = match own {
            // The copy the tap recorded just before k is c itself.
            Some(fc) if prior == Some(fc.frame) && asked => Some(fc),
            None if prior.is_none() && asked && only_lost_before(cx, c, p, k.tx) => Some(k),
            _ => None,
        };
        let Some(fr) = frame else {
            unobs.push(why(Why::NoEvidence));
            continue;
        };
        out.push(ObsLoss {
            psn: p,
            tx: c,
            frame: fr.frame,
            time_ns: fr.time_ns,
            signal: Some(Signal::ErdNack),
            repair: Some(Repair::EndHost),
        });
    }
    out.sort_by_key(|l| l.frame);
    out
}

/// `c` is the only lost copy of `p` sent before copy `k`.
fn only_lost_before(cx: &Cx<'_, '_>, c: u32, p: u32, k: u32) -> bool {
    let (before, _) = cx.run.around(cx.key, p, k);
    let lost: HashSet<u32> = before.iter().copied().filter(|&x| cx.run.tx(x).is_some_and(is_lost)).collect();
    lost.len() == 1 && lost.contains(&c)
}

/// ERD: a message's completion is observable at the destination's tap once a capture knows it is
/// there (it recorded a frame its host sent).
pub(super) fn erd_complete_known(cx: &Cx<'_, '_>) -> bool {
    cx.position == Position::Destination && cx.ix.first_out.is_some()
}
