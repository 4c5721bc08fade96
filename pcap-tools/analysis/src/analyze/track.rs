//! The data tracker: one flow's data packets (requests, or READ responses) as one tap saw them,
//! with the acknowledgements and loss signals of the reverse flow applied in capture order.
//! It finds retransmissions (repeats of a PSN), losses, capture gaps and message completions by
//! the rules of docs/analysis.md, which follow docs/truth.md's "What a tap can observe": a fact
//! the tap cannot establish is reported unknown, never guessed.
//!
//! Memory: a window of per-PSN slots from the oldest PSN not yet acknowledged (plus a margin)
//! to the highest seen; slots behind it are dropped, so state is bounded by the flow's window,
//! not by the capture. Events and messages that can no longer change leave as encoded records
//! (`out`, which the analyser moves to its spill) and come back for the report.

use std::collections::{BTreeMap, HashMap, VecDeque};

use rocescope_codec::ib::opcode::Position;

use super::pkt::{Class, Pkt, ReqOp};
use super::psn::{self, Unwrap};
pub use super::records::Drained;
use super::records::{
    decode_all, decode_gap, decode_loss, decode_msg, decode_retx, encode_gap, encode_loss, encode_msg, encode_retx,
};
use super::report::{Cause, Evidence, Loss, Ns, Repair, Signal, Transport};

/// Where the tap is, relative to the flow being tracked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At the NIC that sends the flow.
    Source,
    /// At the NIC the flow is addressed to.
    Destination,
    /// Neither (a fabric tap), or not known.
    Middle,
}

/// Acknowledged PSNs kept behind the oldest unacknowledged one (late duplicates still find
/// their slot).
const KEEP_BEHIND: u64 = 1024;
/// A flow without acknowledgements at this tap keeps at most this many slots.
const MAX_SLOTS: usize = 1 << 16;
/// Capture gaps listed at most from one run of PSNs found never recorded at once
/// ([`Tracker::gaps_from_history`]); the rest of the run is counted in the flow table's
/// `capture_gaps`, not listed. No NIC keeps as many PSNs of a QP in flight: a longer run is a
/// capture that missed a long stretch of the flow, or PSNs that jump about (a damaged capture),
/// and a record for each PSN would take memory in proportion to the jump (fuzzing found a
/// 13 KB capture whose jumps listed 8 million gaps, 450 MB).
const MAX_GAP_RUN: u64 = 1 << 16;

/// What the tap knows of one PSN.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// Copies the tap recorded (whole or header-only).
    copies: u16,
    /// Copies recorded whole.
    whole: u16,
    /// A copy was accepted in sequence (Go-Back-N's rule, tracked at the destination).
    accepted_in_order: bool,
    /// Copies proven trimmed (header-only form or bounce seen).
    proven_trimmed: u16,
    /// The latest copy is proven trimmed.
    last_proven: bool,
    first_time: u64,
    first_frame: u64,
    last_frame: u64,
    last_time: u64,
    /// Position in its message of the first copy recorded (0 none, 1 First, 2 Middle, 3 Last,
    /// 4 Only).
    pos: u8,
    /// Signals recorded since the latest copy (source tap): NAKs (the flow's NAK count then: a
    /// NAK with PSN ≤ this one since, [`Tracker::nak_le`]), a NAK of exactly this one, a SACK, a
    /// bounce of this one.
    nak_seen: u32,
    nak_exact: bool,
    /// The flow's SACK count when the latest copy was recorded (a SACK since: the count grew).
    sack_seen: u32,
    bounce: bool,
    /// A loss is recorded for the latest copy (index in `losses`).
    loss_of_last: Option<u32>,
    /// A loss is recorded for some copy.
    any_loss: bool,
    /// Internal message id + 1 (0: none).
    msg: u32,
    /// A READ response's PSN: the requests flow carries no packet with it.
    read_range: bool,
    /// Counted as a capture gap (an acknowledgement covered it, no copy recorded): taken back
    /// if a copy shows up after all, whether or not the gap is listed (`keep_events`).
    gap: bool,
    payload: u32,
}

/// One message as the tap saw it.
#[derive(Clone, Debug)]
pub struct MsgState {
    pub op: &'static str,
    pub first_psn: u64,
    pub last_psn: Option<u64>,
    pub dcp_msn: Option<u64>,
    pub first_frame: u64,
    pub first_time: u64,
    pub last_frame: u64,
    pub complete_frame: Option<u64>,
    pub complete_time: Option<u64>,
    pub retransmitted: u64,
    pub bytes: u64,
    /// Its frames were gathered from the slots (its PSN range is settled); later frames of it
    /// are counted as they come.
    pub finalized: bool,
}

/// A retransmission before its message's index is known.
#[derive(Clone, Debug)]
pub struct RetxEvent {
    /// Unwrapped PSN and MSN, to find the message once the report is made.
    pub v: u64,
    pub msn: Option<u64>,
    pub psn: u32,
    pub frame: u64,
    pub time_ns: u64,
    pub spurious: Option<bool>,
    pub cause: Cause,
    pub trigger: Signal,
    pub copy: u32,
    pub msg: u32,
}

/// The tracker of one flow's data.
///
/// Laid out in declaration order (`repr(C)`), the fields a data packet or an acknowledgement
/// reads first, together: the analyser visits a flow every hundred or so frames (many flows
/// interleave), so its state is usually out of the cache, and the default layout (by alignment)
/// spread those fields over more cache lines than they fill.
#[derive(Debug, Default)]
#[repr(C)]
pub struct Tracker {
    unwrap: Unwrap,
    base: u64,
    /// Highest PSN recorded (any form) and recorded whole, + 1.
    high: u64,
    high_whole: u64,
    /// Everything below is acknowledged (exclusive bound), as the tap saw.
    cover: u64,
    /// Capture gaps are reported below this.
    gaps_done: u64,
    slots: VecDeque<Slot>,
    /// `by_psn`'s last entry (first PSN, message id), kept beside it: most data packets
    /// belong to the newest message, found here without a descent of the tree.
    newest: Option<(u64, u32)>,
    /// Live messages, ids from `msg_base` on (older ones are retired: in `out`).
    msgs: VecDeque<MsgState>,
    msg_base: u32,
    /// SACKs recorded so far.
    sacks: u32,
    /// NAKs recorded that asked for an outstanding PSN (numbered from 1).
    naks: u32,
    /// The NAKs that are the lowest of all those after them, as (number, unwrapped PSN), PSNs
    /// ascending: the first with a number above a slot's `nak_seen` has the lowest PSN any NAK
    /// since its latest copy asked for ([`Self::nak_le`]). Those below the window are folded
    /// into the last of them, so this holds at most one entry per PSN in the window. (Marking
    /// every outstanding slot per NAK instead cost a NAK the window's length: 262,144 PSNs on
    /// a damaged capture, for each of a NAK storm's NAKs.)
    nak_floor: VecDeque<(u32, u64)>,
    /// What the last frame fed showed at once (the per-packet analysis fields).
    pub last: TrackNote,
    /// Go-Back-N's expected PSN at the destination.
    epsn: Option<u64>,
    /// DCP: messages below this MSN are acknowledged (eMSN), and the frame that said so first.
    emsn: Option<u64>,
    /// Set by a research transport's analyser just before it feeds a copy the receiver side
    /// asked for (`analyze/netrt.rs`, `erd.rs`); taken by [`Self::on_data`].
    pub asked: Option<Asked>,
    /// Keep events (the timeline); `false` keeps only counts (the flow table).
    pub keep_events: bool,
    pub stats: TrackStats,
    /// Capture gaps still open to retraction: (PSN, proof frame, unwrapped PSN).
    gaps: VecDeque<(u32, u64, u64)>,
    /// Messages not complete yet, oldest first.
    open: BTreeMap<u64, u32>,
    /// Each step of `cover` (new bound, frame, time), recent ones: a message whose last PSN
    /// becomes known late completes at the first that passed it.
    cover_log: VecDeque<(u64, u64, u64)>,
    /// Losses still open to change (their PSN's slot is live), with their unwrapped PSN and
    /// the message id + 1 known when found; index `loss_base` + position.
    losses: VecDeque<(Loss, u64, u32)>,
    loss_base: u32,
    /// Message ids by first PSN (Go-Back-N, IRN) and by MSN (DCP).
    by_psn: BTreeMap<u64, u32>,
    msn_unwrap: Unwrap,
    by_msn: HashMap<u64, u32>,
    /// Acknowledgement history above `high` (exclusive bound, frame), for capture gaps found
    /// once higher PSNs show up.
    covers: VecDeque<(u64, u64)>,
    /// Records done with (retransmissions, capture gaps, losses, messages), encoded
    /// ([`super::spill`]), for the analyser to move to its spill.
    pub out: [Vec<u8>; 4],
}

/// A copy asked for by a research transport's signal, and who resent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asked {
    pub signal: Signal,
    pub repair: Repair,
}

/// What one data packet or acknowledgement showed at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct TrackNote {
    /// Unwrapped PSN and MSN of the data packet.
    pub v: u64,
    pub msn: Option<u64>,
    pub out_of_order: bool,
    pub psn_gap: bool,
    /// RTT sample of an acknowledgement.
    pub rtt: Option<u64>,
}

/// Counts for the flow table (those every data packet or acknowledgement adds to first: see
/// [`Tracker`]'s layout).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct TrackStats {
    pub data_frames: u64,
    pub data_bytes: u64,
    pub unique_bytes: u64,
    pub rtt: Welford,
    pub header_only: u64,
    pub out_of_order: u64,
    pub retransmitted: u64,
    pub spurious: u64,
    pub timeouts: u64,
    pub max_retries: u32,
    pub losses: u64,
    pub capture_gaps: u64,
    pub messages: u64,
    pub completed: u64,
    pub latency: Welford,
    pub last_complete: Option<u64>,
}

/// Running min/mean/max/variance.
#[derive(Clone, Copy, Debug, Default)]
pub struct Welford {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    mean: f64,
    m2: f64,
}

impl Welford {
    pub fn add(&mut self, x: u64) {
        if self.n == 0 || x < self.min {
            self.min = x;
        }
        self.max = self.max.max(x);
        self.n += 1;
        let d = x as f64 - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x as f64 - self.mean);
    }
    pub fn spread(&self) -> super::report::Spread {
        if self.n == 0 {
            return super::report::Spread::default();
        }
        super::report::Spread {
            samples: self.n,
            min_ns: Some(self.min),
            avg_ns: Some(self.mean.round() as u64),
            max_ns: Some(self.max),
            stdev_ns: Some(if self.n > 1 { (self.m2 / (self.n - 1) as f64).sqrt().round() as u64 } else { 0 }),
        }
    }
}

fn op_name(op: ReqOp, opcode: u8) -> &'static str {
    match op {
        ReqOp::Send => "send",
        ReqOp::Write if matches!(opcode & 0x1f, 0x09 | 0x0B) => "write_imm",
        ReqOp::Write => "write",
        ReqOp::Read => "read",
        ReqOp::Other => "other",
    }
}

impl Tracker {
    pub fn new(keep_events: bool) -> Tracker {
        Tracker { keep_events, ..Tracker::default() }
    }

    fn slot(&mut self, v: u64) -> Option<&mut Slot> {
        if self.slots.is_empty() {
            self.base = v;
        }
        if v < self.base {
            // Before the window: grow backwards only a little (a flow's first packets
            // arriving late), else it is a PSN long acknowledged.
            let back = self.base - v;
            if back > 4096 || self.slots.len() + back as usize > MAX_SLOTS {
                return None;
            }
            for _ in 0..back {
                self.slots.push_front(Slot::default());
            }
            self.base = v;
        }
        let i = (v - self.base) as usize;
        if i >= self.slots.len() {
            if i >= MAX_SLOTS * 4 {
                return None;
            }
            // (Mostly the next PSN: one slot pushed, without `resize`'s general loop.)
            if i == self.slots.len() {
                self.slots.push_back(Slot::default());
            } else {
                self.slots.resize(i + 1, Slot::default());
            }
        }
        self.slots.get_mut(i)
    }

    /// Asks for the two slots this flow touches first when its next packets come, which are
    /// the ones least likely to be in the cache (a window's ends, last written a lap of the
    /// ring ago): the one the next PSN is pushed into, and the oldest, which the next
    /// acknowledgement drops. The flow's next frame is usually a hundred or more frames away
    /// (many flows interleave), ample time for them to arrive.
    #[inline]
    fn prefetch_ends(&self) {
        use crate::prefetch::prefetch;
        let (a, b) = self.slots.as_slices();
        // The next push goes after the back's last slot (or wraps to the buffer's start: the
        // hint is then for a slot nearby, harmless).
        let tail = if b.is_empty() { a.as_ptr_range().end } else { b.as_ptr_range().end };
        let last_byte = |p: *const Slot| p.cast::<u8>().wrapping_add(std::mem::size_of::<Slot>() - 1);
        prefetch(tail);
        prefetch(last_byte(tail));
        if let Some(front) = a.first() {
            prefetch(front);
            prefetch(last_byte(front));
        }
    }

    fn get(&self, v: u64) -> Option<&Slot> {
        v.checked_sub(self.base).and_then(|i| self.slots.get(i as usize))
    }

    /// The unwrapped value of a PSN without moving the reference.
    pub fn peek(&self, p: u32) -> Option<u64> {
        self.unwrap.peek(p)
    }

    /// Distance of a PSN from the flow's highest (None before the first packet).
    pub fn distance(&self, p: u32) -> Option<i64> {
        self.unwrap.distance(p)
    }

    fn prune(&mut self) {
        let keep_from = self.cover.saturating_sub(KEEP_BEHIND);
        // The slots below `gaps_done` (their capture gaps settled) go whatever they hold: dropped
        // at once, without reading them. They were written a window ago and are out of the
        // cache: reading each one's `copies` first cost the analysing thread a cache miss per
        // PSN (most of its misses after the flows' own state).
        let settled = keep_from.min(self.gaps_done);
        if self.base < settled {
            let n = usize::try_from(settled - self.base).unwrap_or(usize::MAX).min(self.slots.len());
            self.slots.drain(..n);
            self.base += n as u64;
        }
        while self.base < keep_from && self.slots.front().is_some_and(|s| s.copies > 0 || self.base < self.gaps_done) {
            self.slots.pop_front();
            self.base += 1;
        }
        while self.slots.len() > MAX_SLOTS {
            self.slots.pop_front();
            self.base += 1;
        }
        self.retire();
    }

    fn msg(&self, id: u32) -> Option<&MsgState> {
        id.checked_sub(self.msg_base).and_then(|i| self.msgs.get(i as usize))
    }

    fn msg_mut(&mut self, id: u32) -> Option<&mut MsgState> {
        id.checked_sub(self.msg_base).and_then(|i| self.msgs.get_mut(i as usize))
    }

    /// Moves what can no longer change out of memory: losses and capture gaps whose PSN left
    /// the window, messages complete (or given up) and far behind the acknowledgements.
    fn retire(&mut self) {
        while self.losses.front().is_some_and(|(_, v, _)| *v < self.base) {
            let (l, v, m) = self.losses.pop_front().expect("front");
            self.loss_base += 1;
            if self.keep_events {
                encode_loss(&mut self.out[2], &l, v, m);
            }
        }
        while self.gaps.front().is_some_and(|&(_, _, v)| v < self.base) {
            let (psn, frame, _) = self.gaps.pop_front().expect("front");
            if self.keep_events {
                encode_gap(&mut self.out[1], psn, frame);
            }
        }
        let behind = self.cover.saturating_sub(KEEP_BEHIND);
        while let Some(m) = self.msgs.front() {
            let end = m.last_psn.unwrap_or(m.first_psn);
            let done = m.complete_frame.is_some() || !self.open.contains_key(&m.dcp_msn.unwrap_or(m.first_psn));
            if !(m.finalized && done && end < behind) {
                break;
            }
            let m = self.msgs.pop_front().expect("front");
            let id = self.msg_base;
            self.msg_base += 1;
            self.by_psn.remove(&m.first_psn);
            if self.newest.is_some_and(|(f, _)| f == m.first_psn) {
                self.newest = self.by_psn.last_key_value().map(|(&f, &id)| (f, id));
            }
            if let Some(n) = m.dcp_msn {
                self.by_msn.remove(&n);
            }
            if self.keep_events {
                encode_msg(&mut self.out[3], id, &m);
            }
        }
    }

    /// Everything the tracker holds for the report: the records it spilled (`spilled`, per
    /// kind, in the order written), then what is still in `out` and in memory.
    pub fn report(&mut self, spilled: [Vec<u8>; 4]) -> Drained {
        self.finalize_all();
        let [r, g, l, m] = spilled;
        let mut d = Drained {
            retx: decode_all(r, &mut self.out[0], decode_retx),
            gaps: decode_all(g, &mut self.out[1], decode_gap),
            losses: decode_all(l, &mut self.out[2], decode_loss),
            msgs: decode_all(m, &mut self.out[3], decode_msg),
        };
        d.gaps.extend(self.gaps.iter().map(|&(p, f, _)| (p, f)));
        d.losses.extend(self.losses.iter().cloned());
        d.msgs.extend(self.msgs.iter().enumerate().map(|(i, m)| (self.msg_base + i as u32, m.clone())));
        d
    }

    /// The messages still in memory, with their ids (what [`Self::report`] adds after the
    /// records).
    pub(crate) fn live_msgs(&self) -> impl Iterator<Item = (u32, &MsgState)> {
        self.msgs.iter().enumerate().map(|(i, m)| (self.msg_base + i as u32, m))
    }

    /// The capture gaps still in memory.
    pub(crate) fn live_gaps(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.gaps.iter().map(|&(p, f, _)| (p, f))
    }

    /// The losses still in memory, with their unwrapped PSN and message id + 1.
    pub(crate) fn live_losses(&self) -> impl Iterator<Item = &(Loss, u64, u32)> {
        self.losses.iter()
    }

    fn msg_of_psn(&self, v: u64, dcp_msn: Option<u64>) -> Option<u32> {
        if let Some(m) = dcp_msn {
            return self.by_msn.get(&m).copied();
        }
        // Most packets belong to the newest message: look there before the map.
        let (first, id) = match self.newest {
            Some((f, id)) if f <= v => (f, id),
            _ => self.by_psn.range(..=v).next_back().map(|(&f, &id)| (f, id))?,
        };
        holds(first, self.msg(id)?.last_psn, v).then_some(id)
    }

    /// A data packet of this flow (a request, its header-only form, or a READ response).
    pub fn on_data(&mut self, k: &Pkt, place: Place, transport: Transport) {
        let v = self.unwrap.unwrap(k.psn);
        let asked_by = self.asked.take();
        let ho = matches!(k.class, Class::HeaderOnly { .. });
        let whole = !ho;
        self.stats.data_frames += 1;
        self.stats.data_bytes += k.payload as u64;
        if ho {
            self.stats.header_only += 1;
        }
        let msn = k.dcp_msn.map(|m| self.msn_unwrap.unwrap(m));
        self.last = TrackNote { v, msn, ..TrackNote::default() };
        // The message, on the first copy of its packets.
        let msg = self.place_in_message(k, v, msn);
        let covered_before = self.covered(v, msn);
        let high_whole = self.high_whole;
        let keep = self.keep_events;
        // The next PSN after the window (most data packets): its slot is a new one, appended
        // when written below rather than appended blank here and copied out (`slot`'s bound
        // on the window's growth still applies).
        let fresh =
            !self.slots.is_empty() && self.slots.len() < MAX_SLOTS * 4 && v == self.base + self.slots.len() as u64;
        let slot = if fresh {
            Slot::default()
        } else {
            let Some(slot) = self.slot(v).copied() else {
                return;
            };
            slot
        };
        // Where the slot is: nothing below moves the window or reads the slots until the copy
        // is written back.
        let at = (v - self.base) as usize;
        let prior = slot.copies;
        let mut s = slot;
        // A DCP packet names its message; a Go-Back-N or IRN packet's message is settled when
        // the message's range is (`finalize`), since a packet may arrive before its First.
        if msn.is_some() && msg.is_some() {
            s.msg = msg.map_or(0, |m| m + 1);
        }
        let mut new_losses: Vec<Loss> = Vec::new();
        if prior > 0 {
            // A repeat: a retransmission.
            let sack_since = self.sacks != s.sack_seen;
            let nak_le = self.nak_le(&s, v);
            let asked_evidence = match transport {
                Transport::Gbn | Transport::Rc => nak_le || s.bounce,
                Transport::Irn => s.nak_exact,
                Transport::Dcp => s.bounce,
                Transport::Erd => false,
            };
            let trigger = if let Some(a) = asked_by {
                a.signal
            } else if place == Place::Source {
                match transport {
                    Transport::Gbn if nak_le => Signal::Nak,
                    Transport::Irn if sack_since => Signal::Sack,
                    Transport::Dcp if s.bounce => Signal::Ho,
                    Transport::Rc if s.bounce => Signal::Ho,
                    Transport::Rc if nak_le => Signal::Nak,
                    Transport::Rc if sack_since => Signal::Sack,
                    _ => Signal::Timeout,
                }
            } else {
                Signal::Unknown
            };
            // A loss found for the previous copy (header-only evidence) is repaired by this one;
            // at the sender, what made it resend is this copy's trigger.
            if let Some(li) = s.loss_of_last {
                if let Some((l, _, _)) = li.checked_sub(self.loss_base).and_then(|i| self.losses.get_mut(i as usize)) {
                    l.repair = asked_by.map_or(Repair::EndHost, |a| a.repair);
                    if place == Place::Source || asked_by.is_some() {
                        l.signal = trigger;
                    }
                }
            }
            // The receiver asked for exactly this packet: its previous copy was lost.
            let asked = s.loss_of_last.is_none()
                && (asked_by.is_some()
                    || (place == Place::Source && matches!(trigger, Signal::Sack | Signal::Nak) && s.nak_exact));
            if asked {
                new_losses.push(Loss {
                    psn: k.psn,
                    frame: s.last_frame,
                    time_ns: Ns(s.last_time),
                    signal: trigger,
                    repair: asked_by.map_or(Repair::EndHost, |a| a.repair),
                    evidence: Evidence::AskedFor,
                    message: None,
                });
                s.any_loss = true;
            }
            let accepted = match transport {
                Transport::Gbn | Transport::Rc => s.accepted_in_order,
                Transport::Irn | Transport::Dcp | Transport::Erd => s.whole > 0,
            };
            let spurious = match place {
                Place::Destination => Some(accepted),
                _ if covered_before => Some(true),
                // The receiver side named this PSN as missing (a research transport's signal).
                _ if asked_by.is_some() => Some(false),
                // The receiver asked for it since its previous copy left, whatever moved the
                // sender: Go-Back-N, a NAK at or below it; IRN, a NAK or SACK naming it as
                // expected (a SACK asks for what it does not cover, which may only mean the SACKs
                // covering it were lost); DCP, a bounce of it.
                Place::Source if asked_evidence => Some(false),
                // Every earlier copy seen trimmed — at the sender's tap, which sees every copy (a
                // fabric tap may miss a copy that went another way and arrived).
                Place::Source if s.proven_trimmed == prior => Some(false),
                _ => None,
            };
            let cause = match spurious {
                Some(true) => Cause::Spurious,
                Some(false) if trigger == Signal::Timeout => Cause::Timeout,
                Some(false)
                    if s.any_loss
                        && matches!(
                            trigger,
                            Signal::Nak
                                | Signal::Sack
                                | Signal::Ho
                                | Signal::NetrtRequest
                                | Signal::ErdNack
                                | Signal::SdrBitmap
                                | Signal::FlorAck
                        ) =>
                {
                    Cause::Loss
                }
                _ => Cause::Unknown,
            };
            self.stats.retransmitted += 1;
            if spurious == Some(true) {
                self.stats.spurious += 1;
            }
            if trigger == Signal::Timeout {
                self.stats.timeouts += 1;
            }
            self.stats.max_retries = self.stats.max_retries.max(prior as u32);
            if let Some(mm) = msg.or(s.msg.checked_sub(1)).and_then(|m| self.msg_mut(m)) {
                if mm.finalized {
                    mm.retransmitted += 1;
                }
            }
            if keep {
                let e = RetxEvent {
                    v,
                    msn,
                    psn: k.psn,
                    frame: k.frame,
                    time_ns: k.time_ns,
                    spurious,
                    cause,
                    trigger,
                    copy: prior as u32,
                    msg: s.msg,
                };
                encode_retx(&mut self.out[0], &e);
            }
        } else {
            // A PSN reported missed by the capture shows up after all (a later copy): it was
            // not missed.
            // (The gaps ascend by unwrapped PSN: a search, not a walk over them all; none to
            // search when the newest is below this PSN, as for nearly every packet.)
            let listed = if self.gaps.back().is_some_and(|&(_, _, last)| last >= v) {
                self.gaps.binary_search_by_key(&v, |&(_, _, g)| g).ok()
            } else {
                None
            };
            if let Some(i) = listed {
                self.gaps.remove(i);
            }
            if listed.is_some() || s.gap {
                s.gap = false;
                self.stats.capture_gaps -= 1;
            }
            self.stats.unique_bytes += k.payload as u64;
            if v < self.high {
                self.stats.out_of_order += 1;
                self.last.out_of_order = true;
            }
            if self.high != 0 && v > self.high {
                self.last.psn_gap = true;
            }
            s.first_time = k.time_ns;
            s.first_frame = k.frame;
            s.payload = k.payload;
            s.pos = match packet_position(k) {
                Some(Position::First) => 1,
                Some(Position::Middle) => 2,
                Some(Position::Last) => 3,
                Some(Position::Only) => 4,
                None => 0,
            };
            // First seen at the destination after higher PSNs arrived: its earlier copy was lost.
            // (ERD sprays every packet over any path and resends under the same PSN: a late
            // first copy is a loss only when a NACK asked for it.)
            // (SDR resends under a new UC PSN: a late PSN is one that took a slower path, never a
            // repair; SDR's own rules find its losses, `sdr.rs`.)
            let sdr = matches!(k.ext, super::pkt::PktExt::SdrData { .. });
            let late_is_loss = (transport != Transport::Erd || asked_by.is_some()) && !sdr;
            if place == Place::Destination && whole && high_whole > v && late_is_loss {
                new_losses.push(Loss {
                    psn: k.psn,
                    frame: k.frame,
                    time_ns: Ns(k.time_ns),
                    signal: asked_by.map_or(Signal::Unknown, |a| a.signal),
                    repair: asked_by.map_or(Repair::EndHost, |a| a.repair),
                    evidence: Evidence::Gap,
                    message: None,
                });
                s.any_loss = true;
            } else if let Some(a) = asked_by.filter(|_| whole) {
                // Asked for before the tap saw any copy: the earlier copies were lost upstream
                // of the tap; this copy is the repair.
                new_losses.push(Loss {
                    psn: k.psn,
                    frame: k.frame,
                    time_ns: Ns(k.time_ns),
                    signal: a.signal,
                    repair: a.repair,
                    evidence: Evidence::AskedFor,
                    message: None,
                });
                s.any_loss = true;
            }
            if let Some(mm) = msg.and_then(|m| self.msg_mut(m)) {
                if mm.finalized {
                    mm.bytes += k.payload as u64;
                }
            }
        }
        // This copy.
        s.copies = s.copies.saturating_add(1);
        s.last_frame = k.frame;
        s.last_time = k.time_ns;
        s.nak_seen = self.naks;
        s.nak_exact = false;
        s.sack_seen = self.sacks;
        s.bounce = false;
        s.loss_of_last = None;
        s.last_proven = false;
        if whole {
            s.whole = s.whole.saturating_add(1);
            self.accept_in_order(k, v, &mut s);
        } else {
            // The header-only form: this copy was trimmed.
            s.last_proven = true;
            s.proven_trimmed += 1;
            s.any_loss = true;
            new_losses.push(Loss {
                psn: k.psn,
                frame: k.frame,
                time_ns: Ns(k.time_ns),
                signal: Signal::Unknown,
                repair: if place == Place::Source { Repair::None } else { Repair::Unknown },
                evidence: Evidence::HeaderOnly,
                message: None,
            });
        }
        let mut last_loss = None;
        for l in new_losses {
            self.stats.losses += 1;
            if keep {
                last_loss = Some(self.loss_base + self.losses.len() as u32);
                self.losses.push_back((l, v, s.msg));
            }
        }
        if !whole {
            s.loss_of_last = last_loss.or(Some(u32::MAX));
        }
        if fresh {
            self.slots.push_back(s);
        } else if let Some(slot) = self.slots.get_mut(at) {
            *slot = s;
        }
        // Capture gaps between the old high and this PSN that acknowledgements already covered.
        if v >= self.high {
            let old_high = self.high;
            if old_high != 0 && v > old_high {
                self.gaps_from_history(old_high, v);
            }
            self.high = v + 1;
        }
        if whole && v >= self.high_whole {
            self.high_whole = v + 1;
        }
        // A flow without acknowledgements (UC, UD: SDR, Flor, ERD) keeps its last MAX_SLOTS.
        if self.slots.len() > MAX_SLOTS {
            self.prune();
        }
        if let Some(mm) = msg.or(s.msg.checked_sub(1)).and_then(|m| self.msg_mut(m)) {
            if mm.finalized {
                mm.last_frame = mm.last_frame.max(k.frame);
            }
        }
        // A First packet arriving after later packets of its message: their Last may be here.
        if let Some(m) = msg {
            if self.msg(m).is_some_and(|mm| mm.last_psn.is_none() && mm.dcp_msn.is_none()) && s.pos != 0 {
                self.find_last(m, v);
            }
        }
        self.prefetch_ends();
    }

    /// Looks forward from a message's first PSN for a recorded Last packet (reordering), up
    /// to the next message's first PSN or a recorded First. (The slots walked in place, up to
    /// a bound found once: a look-up per PSN made a damaged capture's late Firsts, each
    /// walking the window, take seconds.)
    fn find_last(&mut self, id: u32, from: u64) {
        if from < self.base {
            return;
        }
        let end = self.by_psn.range(from + 1..).next().map_or(self.high, |(&next, _)| next.min(self.high));
        let lo = (from - self.base) as usize;
        let hi = usize::try_from(end - self.base).unwrap_or(usize::MAX).min(self.slots.len()).max(lo);
        let mut last = None;
        for (v, s) in (from..).zip(self.slots.range(lo..hi)) {
            if s.copies == 0 {
                continue;
            }
            if v > from && (s.pos == 1 || s.pos == 4) {
                return;
            }
            if s.pos == 3 || s.pos == 4 {
                last = Some(v);
                break;
            }
        }
        let Some(v) = last else { return };
        if let Some(m) = self.msg_mut(id).filter(|m| m.op != "read") {
            m.last_psn = Some(v);
            self.complete_psn();
        }
    }

    /// Gathers a message's frames from its PSNs' slots, once its range is settled.
    fn finalize(&mut self, id: u32) {
        let Some(m) = self.msg(id) else { return };
        if m.finalized {
            return;
        }
        let (lo, hi) = match (m.dcp_msn, m.last_psn) {
            (Some(_), Some(l)) => (m.first_psn, l + 1),
            (Some(_), None) => (m.first_psn, self.high),
            (None, Some(l)) => (m.first_psn, l + 1),
            (None, None) => (m.first_psn, m.first_psn + 1),
        };
        let dcp = m.dcp_msn.is_some();
        let (mut first, mut last, mut retx, mut bytes) = (u64::MAX, 0u64, 0u64, 0u64);
        // The range's slots still in the window, walked in place (one pass over the ring
        // rather than two indexed look-ups per PSN: this runs once per message, over all its
        // PSNs).
        let from = lo.max(self.base) - self.base;
        let to = hi.saturating_sub(self.base).min(self.slots.len() as u64);
        if from < to {
            for s in self.slots.range_mut(from as usize..to as usize) {
                if s.copies == 0 || (dcp && s.msg != id + 1) {
                    continue;
                }
                first = first.min(s.first_frame);
                last = last.max(s.last_frame);
                retx += s.copies as u64 - 1;
                bytes += s.payload as u64;
                if !dcp {
                    s.msg = id + 1;
                }
            }
        }
        let Some(m) = self.msg_mut(id) else { return };
        if first != u64::MAX {
            m.first_frame = m.first_frame.min(first);
            m.last_frame = m.last_frame.max(last);
        }
        m.retransmitted += retx;
        m.bytes += bytes;
        m.finalized = true;
    }

    /// Settles every message (the end of the capture).
    pub fn finalize_all(&mut self) {
        for id in self.msg_base..self.msg_base + self.msgs.len() as u32 {
            self.finalize(id);
        }
    }

    /// Go-Back-N's acceptance at the destination: in sequence only.
    fn accept_in_order(&mut self, k: &Pkt, v: u64, s: &mut Slot) {
        if self.epsn.is_none() && matches!(k.class, Class::Request { pos: Position::First | Position::Only, .. }) {
            self.epsn = Some(v);
        }
        if self.epsn == Some(v) {
            s.accepted_in_order = true;
            self.epsn = Some(v + 1);
        }
    }

    /// The destination's own acknowledgement says what it expects next.
    pub fn resync_expected(&mut self, next: u64) {
        self.epsn = Some(next);
    }

    fn place_in_message(&mut self, k: &Pkt, v: u64, msn: Option<u64>) -> Option<u32> {
        let (pos, op) = match k.class {
            Class::Request { pos, op } => (Some(pos), op_name(op, k.opcode)),
            // A trimmed packet keeps its BTH: its opcode still says where it stands.
            Class::HeaderOnly { .. } => (packet_position(k), "other"),
            _ => return None,
        };
        let id = if let Some(m) = msn {
            match self.by_msn.get(&m) {
                Some(&id) => id,
                None => {
                    let id = self.new_msg(op, v, k, Some(m));
                    self.by_msn.insert(m, id);
                    id
                }
            }
        } else {
            match pos {
                Some(Position::First | Position::Only) if !self.by_psn.contains_key(&v) => {
                    // A Last taken for the previous message's may have been a later message's
                    // (its First unseen then): a message ends before the next one starts.
                    if let Some((_, &prev)) = self.by_psn.range(..v).next_back() {
                        if let Some(m) = self.msg_mut(prev) {
                            if m.last_psn.is_some_and(|l| l >= v) && !m.finalized {
                                m.last_psn = None;
                            }
                        }
                    }
                    let id = self.new_msg(op, v, k, None);
                    self.by_psn.insert(v, id);
                    if self.newest.is_none_or(|(f, _)| v > f) {
                        self.newest = Some((v, id));
                    }
                    self.open.insert(v, id);
                    id
                }
                // A Last packet ends the nearest message whose end is not known yet.
                Some(Position::Last) => match self.msg_of_psn(v, None) {
                    Some(id) => id,
                    None => {
                        let (_, &id) = self.by_psn.range(..=v).next_back()?;
                        if self.msg(id)?.last_psn.is_some() {
                            return None;
                        }
                        id
                    }
                },
                _ => self.msg_of_psn(v, None)?,
            }
        };
        let cover = self.cover;
        let mut late = false;
        let m = self.msg_mut(id)?;
        if msn.is_some() {
            if v < m.first_psn {
                m.first_psn = v;
            }
            if matches!(pos, Some(Position::Last | Position::Only)) {
                m.last_psn = Some(v);
            }
            if m.op == "other" && op != "other" {
                m.op = op;
            }
        } else if matches!(pos, Some(Position::Last | Position::Only)) && op != "read" {
            // (A READ's last PSN is its last response's, known when that arrives.)
            late = m.last_psn.is_none() && v < cover;
            m.last_psn = Some(v);
        }
        if k.frame < m.first_frame {
            m.first_frame = k.frame;
            m.first_time = k.time_ns;
        }
        if late {
            self.complete_psn();
        }
        Some(id)
    }

    fn new_msg(&mut self, op: &'static str, v: u64, k: &Pkt, msn: Option<u64>) -> u32 {
        let id = self.msg_base + self.msgs.len() as u32;
        self.stats.messages += 1;
        if let Some(m) = msn {
            self.open.insert(m, id);
        }
        self.msgs.push_back(MsgState {
            op,
            first_psn: v,
            last_psn: None,
            dcp_msn: msn,
            first_frame: k.frame,
            first_time: k.time_ns,
            last_frame: k.frame,
            complete_frame: None,
            complete_time: None,
            retransmitted: 0,
            bytes: 0,
            finalized: false,
        });
        id
    }

    fn covered(&self, v: u64, msn: Option<u64>) -> bool {
        if v < self.cover {
            return true;
        }
        match (msn, self.emsn) {
            (Some(m), Some(e)) => m < e,
            _ => false,
        }
    }

    /// An acknowledgement: everything below `psn` (a 24-bit PSN, exclusive) was received.
    pub fn on_cover(&mut self, psn: u32, frame: u64, time_ns: u64) {
        self.last = TrackNote::default();
        let Some(c) = self.unwrap.peek(psn) else { return };
        if c <= self.cover {
            return;
        }
        // Karn: an RTT sample from the newest packet this acknowledgement covers, unless that
        // PSN was sent more than once.
        self.last = TrackNote::default();
        if let Some(s) = self.get(c - 1).copied() {
            if s.copies == 1 && time_ns >= s.first_time {
                self.stats.rtt.add(time_ns - s.first_time);
                self.last.rtt = Some(time_ns - s.first_time);
            }
        }
        self.cover = c;
        // Capture gaps: PSNs below it the tap never recorded, between recorded ones (those
        // in the window: past it no PSN has a slot to say so).
        let upto = c.min(self.high);
        let from = self.gaps_done.max(self.base);
        for v in from..upto.min(self.base + self.slots.len() as u64) {
            if self.get(v).is_some_and(|s| s.copies == 0 && !s.read_range) {
                self.gap(v, frame);
            }
        }
        self.gaps_done = self.gaps_done.max(upto);
        if c > self.high {
            self.covers.push_back((c, frame));
        }
        self.cover_log.push_back((c, frame, time_ns));
        // Only a message not yet complete can need an older step: keep the steps above the
        // oldest such message's first PSN (and at most 8,192).
        let oldest = self.open.iter().next().and_then(|(_, &id)| self.msg(id)).map_or(c, |m| m.first_psn);
        while self.cover_log.len() > 1 && (self.cover_log.len() > 8192 || self.cover_log[1].0 <= oldest) {
            self.cover_log.pop_front();
        }
        self.complete_psn();
        self.prune();
        self.prefetch_ends();
    }

    /// How many PSNs of [from, to) [`Self::gaps_from_history`] would find gaps: those below
    /// the last acknowledgement step, but for the window's slots of a READ's range.
    fn gaps_in(&self, from: u64, to: u64) -> u64 {
        let end = to.min(self.covers.back().map_or(from, |&(c, _)| c)).max(from);
        let window_end = end.min(self.base + self.slots.len() as u64).max(from);
        let read = (from..window_end).filter(|&w| self.get(w).is_some_and(|s| s.read_range)).count() as u64;
        end - from - read
    }

    fn gap(&mut self, v: u64, frame: u64) {
        self.stats.capture_gaps += 1;
        if let Some(s) = v.checked_sub(self.base).and_then(|i| self.slots.get_mut(i as usize)) {
            s.gap = true;
        }
        if self.keep_events {
            // In ascending unwrapped PSN, as a retraction's search needs: most come in order,
            // a DCP message's (`on_emsn`) may come after higher ones.
            let e = (psn::wire(v), frame, v);
            if self.gaps.back().is_none_or(|&(_, _, last)| last <= v) {
                self.gaps.push_back(e);
            } else {
                let at = self.gaps.partition_point(|&(_, _, g)| g <= v);
                self.gaps.insert(at, e);
            }
        }
    }

    fn gaps_from_history(&mut self, from: u64, to: u64) {
        // PSNs in [from, to) were never recorded; each is a gap if an acknowledgement covered
        // it (the covered ones are a prefix); the others wait for one. The acknowledgement
        // that covered it first is the first of `covers` above it (they ascend). At most
        // MAX_GAP_RUN are listed; the rest are counted.
        let to = to.min(self.cover);
        let mut step = 0;
        let mut listed = 0u64;
        let mut v = from.max(self.gaps_done);
        while v < to {
            if self.get(v).is_some_and(|s| s.read_range) {
                v += 1;
                continue;
            }
            while self.covers.get(step).is_some_and(|&(c, _)| c <= v) {
                step += 1;
            }
            let Some(&(_, frame)) = self.covers.get(step) else { break };
            if listed == MAX_GAP_RUN {
                self.stats.capture_gaps += self.gaps_in(v, to);
                break;
            }
            self.gap(v, frame);
            listed += 1;
            v += 1;
        }
        self.gaps_done = self.gaps_done.max(to);
        while self.covers.front().is_some_and(|(c, _)| *c <= to) {
            self.covers.pop_front();
        }
    }

    /// Messages whose last PSN is acknowledged complete at the first acknowledgement that
    /// covered it. A message whose last PSN is not known yet waits (it may become known when a
    /// late Last packet shows up); one far behind the acknowledgements is given up.
    fn complete_psn(&mut self) {
        let c = self.cover;
        let mut done = Vec::new();
        let mut give_up = Vec::new();
        // (Walked from the start, the lowest first: `range(..c)` would search the tree for its
        // end, once per acknowledgement.)
        for (&first, &id) in self.open.iter().take_while(|(&first, _)| first < c) {
            let Some(m) = self.msg(id) else { continue };
            if m.dcp_msn.is_some() {
                break;
            }
            match m.last_psn {
                Some(l) if l < c => {
                    let (frame, time) =
                        self.cover_log.iter().find(|(u, _, _)| *u > l).map_or((0, 0), |&(_, f, t)| (f, t));
                    done.push((first, id, frame, time));
                }
                None if first + KEEP_BEHIND < c => give_up.push(first),
                _ => {}
            }
        }
        for (first, id, frame, time) in done {
            self.open.remove(&first);
            if frame != 0 {
                self.complete(id, frame, time);
            }
        }
        for first in give_up {
            self.open.remove(&first);
        }
    }

    fn complete(&mut self, id: u32, frame: u64, time_ns: u64) {
        self.finalize(id);
        let Some(m) = self.msg_mut(id) else { return };
        if m.complete_frame.is_some() {
            return;
        }
        m.complete_frame = Some(frame);
        m.complete_time = Some(time_ns);
        let first = m.first_time;
        self.stats.completed += 1;
        self.stats.latency.add(time_ns.saturating_sub(first));
        self.stats.last_complete = Some(time_ns);
    }

    /// A DCP ACK: messages below `emsn` are complete.
    pub fn on_emsn(&mut self, emsn: u32, frame: u64, time_ns: u64) {
        let e = match self.msn_unwrap.peek(emsn) {
            Some(e) => e,
            None => return,
        };
        if self.emsn.is_some_and(|old| e <= old) {
            return;
        }
        self.emsn = Some(e);
        let done: Vec<(u64, u32)> = self.open.range(..e).map(|(&m, &id)| (m, id)).collect();
        for (m, id) in done {
            self.open.remove(&m);
            // Capture gaps inside the message: PSNs between its recorded ones.
            let (lo, hi) = self.msg_span(id);
            for v in lo..hi {
                if self.get(v).is_some_and(|s| s.copies == 0) {
                    self.gap(v, frame);
                }
            }
            self.complete(id, frame, time_ns);
        }
    }

    /// The lowest and highest+1 PSN recorded of a message (DCP).
    fn msg_span(&self, id: u32) -> (u64, u64) {
        let Some(m) = self.msg(id) else { return (0, 0) };
        let lo = m.first_psn.max(self.base);
        let mut hi = lo;
        let mut v = lo;
        while let Some(s) = self.get(v) {
            if s.copies > 0 {
                if s.msg == id + 1 {
                    hi = v + 1;
                } else {
                    break;
                }
            }
            v += 1;
        }
        (lo, hi)
    }

    /// A NAK with PSN `psn` (the receiver expects it): recorded against the outstanding PSNs.
    pub fn on_nak(&mut self, psn: u32) {
        let Some(e) = self.unwrap.peek(psn) else { return };
        if e.max(self.base) >= self.high {
            // Nothing outstanding at or above it.
            return;
        }
        self.naks = self.naks.wrapping_add(1);
        while self.nak_floor.back().is_some_and(|&(_, f)| f >= e) {
            self.nak_floor.pop_back();
        }
        self.nak_floor.push_back((self.naks, e));
        // Below the window every live PSN is above them: the last of them says as much.
        while self.nak_floor.len() > 1 && self.nak_floor[1].1 < self.base {
            self.nak_floor.pop_front();
        }
        if e >= self.base {
            if let Some(s) = self.slot(e) {
                s.nak_exact = true;
            }
        }
    }

    /// Whether a NAK with a PSN at or below `v` (outstanding then) came since the latest copy
    /// of `v` (in `s`, its slot).
    fn nak_le(&self, s: &Slot, v: u64) -> bool {
        if s.nak_seen == self.naks {
            return false;
        }
        let i = self.nak_floor.partition_point(|&(n, _)| n <= s.nak_seen);
        self.nak_floor.get(i).is_some_and(|&(_, e)| e <= v)
    }

    /// A SACK (IRN) whose expected PSN is `psn`: counted (every outstanding PSN has had a SACK
    /// since its latest copy), and the expected PSN is asked for.
    pub fn on_sack(&mut self, psn: u32) {
        self.sacks = self.sacks.wrapping_add(1);
        if let Some(e) = self.unwrap.peek(psn) {
            if e >= self.cover.max(self.base) && e < self.high {
                if let Some(s) = self.slot(e) {
                    s.nak_exact = true;
                }
            }
        }
    }

    /// A header-only packet bounced back to the sender for PSN `psn` (DCP): the latest copy of
    /// that PSN was trimmed.
    pub fn on_bounce(&mut self, psn: u32, place: Place) {
        let Some(v) = self.unwrap.peek(psn) else { return };
        let keep = self.keep_events;
        let Some(s) = self.slot(v) else { return };
        if s.copies == 0 {
            return;
        }
        s.bounce = true;
        // Away from the sender, a bounce may answer a copy that went another way: only the
        // sender's tap, which sees every copy, can tell which one was trimmed.
        if s.last_proven || place != Place::Source {
            return;
        }
        s.last_proven = true;
        s.proven_trimmed += 1;
        s.any_loss = true;
        let loss = Loss {
            psn,
            frame: s.last_frame,
            time_ns: Ns(s.last_time),
            signal: Signal::Unknown,
            repair: if place == Place::Source { Repair::None } else { Repair::Unknown },
            evidence: Evidence::HeaderOnly,
            message: None,
        };
        let msg = s.msg;
        self.stats.losses += 1;
        let idx = if keep {
            self.losses.push_back((loss, v, msg));
            self.loss_base + self.losses.len() as u32 - 1
        } else {
            u32::MAX
        };
        if let Some(s) = self.slot(v) {
            s.loss_of_last = Some(idx);
        }
    }

    /// A READ response for one of this flow's READ requests (the requests flow's tracker keeps
    /// the messages): extends the message's frames, and its last response completes it.
    pub fn on_read_response(&mut self, k: &Pkt, pos: Position) {
        let Some(v) = self.unwrap.peek(k.psn) else { return };
        let Some((_, &id)) = self.by_psn.range(..=v).next_back() else { return };
        if self.msg(id).is_none_or(|m| m.op != "read") {
            return;
        }
        if let Some(s) = self.slot(v) {
            s.read_range = true;
        }
        let Some(m) = self.msg_mut(id) else { return };
        m.last_frame = m.last_frame.max(k.frame);
        if matches!(pos, Position::Last | Position::Only) && m.last_psn.is_none() {
            m.last_psn = Some(v);
        }
        if m.last_psn == Some(v) && m.complete_frame.is_none() {
            let first = m.first_psn;
            self.open.remove(&first);
            self.complete(id, k.frame, k.time_ns);
        }
    }

    /// A transport without acknowledgements (ERD), at the receiver's tap: the message holding
    /// PSN `v` is complete at `frame` once every PSN of its range was seen whole.
    pub fn complete_if_whole(&mut self, v: u64, frame: u64, time_ns: u64) {
        let Some(id) = self.msg_of_psn(v, None) else { return };
        let Some(m) = self.msg(id) else { return };
        let (first, Some(last)) = (m.first_psn, m.last_psn) else { return };
        if m.complete_frame.is_some() || (first..=last).any(|u| self.get(u).is_none_or(|s| s.whole == 0)) {
            return;
        }
        // At the frame that brought its last missing piece: this one, unless every piece had
        // come before (this copy a duplicate: the message was whole before the tap knew it is
        // the receiver's).
        let (frame, time_ns) = (first..=last)
            .filter_map(|u| self.get(u).map(|s| (s.first_frame, s.first_time)))
            .max()
            .map_or((frame, time_ns), |a| a.min((frame, time_ns)));
        self.open.remove(&first);
        self.complete(id, frame, time_ns);
    }

    /// A transport nothing acknowledges (ERD), at a tap found to be the receiver's only after
    /// some of its messages went by (a NACK shows it): completes every open message whose
    /// packets all arrived whole, at the frame that brought its last missing piece.
    pub fn complete_whole_open(&mut self) {
        let open: Vec<(u64, u32)> = self.open.iter().map(|(&f, &id)| (f, id)).collect();
        for (first, id) in open {
            let Some(m) = self.msg(id) else { continue };
            let (Some(last), None) = (m.last_psn, m.complete_frame) else { continue };
            let mut at: Option<(u64, u64)> = Some((0, 0));
            for u in first..=last {
                match (self.get(u), at) {
                    (Some(s), Some(a)) if s.whole > 0 => at = Some(a.max((s.first_frame, s.first_time))),
                    _ => at = None,
                }
            }
            if let Some((frame, time)) = at.filter(|a| a.0 > 0) {
                self.open.remove(&first);
                self.complete(id, frame, time);
            }
        }
    }

    /// Copies of a PSN the tap recorded (0 when unknown or never).
    pub fn copies_of(&self, p: u32) -> u16 {
        self.unwrap.peek(p).and_then(|v| self.get(v)).map_or(0, |s| s.copies)
    }
}

/// Where a data packet stands in its message (a header-only packet keeps its opcode).
fn packet_position(k: &Pkt) -> Option<Position> {
    match k.class {
        Class::Request { pos, .. } => Some(pos),
        Class::HeaderOnly { .. } => rocescope_codec::ib::opcode::Opcode(k.opcode).position(),
        _ => None,
    }
}

/// A message's PSNs, as far as known: from its first to its last, or only its first while its
/// last is not known (a packet that came before its message's First cannot be placed).
/// (`v` is at or after `first`.)
fn holds(first: u64, last: Option<u64>, v: u64) -> bool {
    match last {
        Some(l) => v <= l,
        None => v == first,
    }
}

/// Each message's index, by its first PSN and range (Go-Back-N, IRN) or its MSN (DCP), as the
/// timeline numbers them: what the per-packet `message` field reads. Sorted vectors (about 24
/// bytes a message), built by [`Ranks::new`].
#[derive(Clone, Debug, Default)]
pub struct MessageTable {
    /// (first PSN (unwrapped), last PSN, index), by first PSN.
    ranges: Vec<(u64, Option<u64>, u64)>,
    /// (MSN (unwrapped), index), by MSN.
    msns: Vec<(u64, u64)>,
}

impl MessageTable {
    /// Sorts what was pushed, keeping the last of each key (as a map's inserts would).
    fn seal(&mut self) {
        fn keep_last<T: Copy>(v: &mut Vec<T>, key: impl Fn(&T) -> u64) {
            // (Stable: among equal keys, the order pushed.)
            v.sort_by_key(&key);
            let mut out: Vec<T> = Vec::with_capacity(v.len());
            for x in v.drain(..) {
                match out.last_mut() {
                    Some(l) if key(l) == key(&x) => *l = x,
                    _ => out.push(x),
                }
            }
            *v = out;
        }
        keep_last(&mut self.ranges, |r| r.0);
        keep_last(&mut self.msns, |m| m.0);
    }

    /// The index of the message holding unwrapped PSN `v` (or, DCP, of MSN `msn`).
    pub fn index(&self, v: u64, msn: Option<u64>) -> Option<u64> {
        if let Some(m) = msn {
            let k = self.msns.binary_search_by_key(&m, |x| x.0).ok()?;
            return Some(self.msns[k].1);
        }
        let k = self.ranges.partition_point(|r| r.0 <= v).checked_sub(1)?;
        let (first, last, index) = self.ranges[k];
        holds(first, last, v).then_some(index)
    }
}

/// A tracker's message as [`Ranks::new`] ranks it: (MSN or 0, first PSN, id), its last PSN,
/// whether it has an MSN.
pub type RankKey = (u64, u64, u32, Option<u64>, bool);

/// Message `id`'s [`RankKey`].
pub fn rank_key(id: u32, m: &MsgState) -> RankKey {
    (m.dcp_msn.unwrap_or(0), m.first_psn, id, m.last_psn, m.dcp_msn.is_some())
}

/// A flow's messages numbered as the timeline numbers them: the tracker's ranked by MSN (DCP)
/// or first PSN from 0 (ties in id order), then SDR's (and Flor's) after them; with the table
/// that finds a PSN's message. About 28 bytes a message.
#[derive(Clone, Debug, Default)]
pub struct Ranks {
    /// Message id → index (`u32::MAX`: no such id).
    rank_of: Vec<u32>,
    pub table: MessageTable,
    /// The tracker's messages (SDR's indices follow them).
    pub tracked: u64,
}

impl Ranks {
    /// The ranks of the tracker's messages `keys` ([`rank_key`]) and SDR's PSN runs
    /// `sdr_ranges` (first, last, SDR index).
    pub fn new(mut keys: Vec<RankKey>, sdr_ranges: &[(u64, u64, u64)]) -> Ranks {
        keys.sort_unstable();
        let ids_end = keys.iter().map(|k| k.2 as usize + 1).max().unwrap_or(0);
        let mut r =
            Ranks { rank_of: vec![u32::MAX; ids_end], table: MessageTable::default(), tracked: keys.len() as u64 };
        for (rank, &(msn, first, id, last, dcp)) in keys.iter().enumerate() {
            r.rank_of[id as usize] = rank as u32;
            if dcp {
                r.table.msns.push((msn, rank as u64));
            } else {
                r.table.ranges.push((first, last, rank as u64));
            }
        }
        for &(first, last, index) in sdr_ranges {
            r.table.ranges.push((first, Some(last), r.tracked + index));
        }
        r.table.seal();
        r
    }

    /// Message `id`'s index.
    pub fn of_id(&self, id: u32) -> Option<u64> {
        self.rank_of.get(id as usize).filter(|&&r| r != u32::MAX).map(|&r| u64::from(r))
    }

    /// The message of an event: the one holding its PSN `v` (or MSN), else the id + 1 the tracker
    /// knew when it found the event (`hint`, 0: none).
    pub fn lookup(&self, v: u64, msn: Option<u64>, hint: u32) -> Option<u64> {
        self.table.index(v, msn).or_else(|| hint.checked_sub(1).and_then(|id| self.of_id(id)))
    }

    /// The message of an SDR (or Flor) event: its own SDR message `m`, else the tracker's
    /// message of its PSN in `data`.
    pub fn of_sdr_event(&self, m: Option<u64>, psn: u32, data: &Tracker) -> Option<u64> {
        m.map(|m| self.tracked + m).or_else(|| data.peek(psn).and_then(|v| self.lookup(v, None, 0)))
    }
}
