//! The destination ToR's per-flow ternary state machine (NetRT paper §III-C, Algorithms 1 and 2,
//! Fig. 4): Ordered, ReTx and Waiting over an expected PSN (ePSN), a 128-bit bitmap of the PSNs
//! held past it and the reordering buffer that holds them.
//!
//! The normalised algorithm (the paper's Algorithm 2 sets bits with `&` and indexes them one
//! off from Algorithm 1; here bit i always marks PSN ePSN+1+i):
//! - PSN = ePSN: forward it; in ReTx, release every held packet that now follows in order
//!   (Algorithm 1); an empty bitmap returns to Ordered; in Waiting, return to Ordered.
//! - PSN > ePSN, not Waiting: hold it, set its bit, and on entering ReTx send a request (then
//!   one every request interval, and one at once whenever a packet opens a new gap past the
//!   highest held: the paper asks "at time intervals", but the source ToR's pool keeps a packet
//!   only about one round trip). Beyond the window or the buffer: Waiting.
//! - PSN > ePSN in Waiting: forward it ("does not block out-of-order packets", §III-C).
//! - PSN < ePSN: a duplicate. A marked one is the source ToR's resend arriving late: dropped.
//!   An unmarked one is the sender's (Go-Back-N) resend: forwarded, the receiver re-ACKs it.
//! - An unfulfilled request for the ePSN in ReTx, or `give_up_requests` requests without
//!   progress: Waiting — forward the smallest held packet (the receiver's Go-Back-N sees the
//!   gap and NAKs) and drop the rest (§III-C, Algorithm 2 lines 9-12).

use std::collections::VecDeque;

use rocescope_codec::ib::psn;

/// The flow's state (the paper's 2 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Ordered,
    ReTx,
    Waiting,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Ordered => "ordered",
            State::ReTx => "retx",
            State::Waiting => "waiting",
        }
    }
}

/// Why the destination ToR dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropWhy {
    /// A second copy of a PSN it holds, or a marked copy of one it already forwarded.
    Duplicate,
    /// Held, then flushed on entering Waiting.
    Flushed,
}

/// What the destination ToR does (in order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DstAction<P> {
    /// Send the packet on to the host.
    Forward(P),
    Drop(P, DropWhy),
    /// Send a retransmission request to the source ToR and arm the request timer.
    Request {
        epsn: u32,
        bitmap: u128,
    },
    /// The flow entered this state.
    State(State),
}

/// One flow at the destination ToR. `P` is the caller's packet handle.
#[derive(Clone, Debug)]
pub struct DstFlow<P> {
    /// `None` until the first packet (its PSN + 1 is learned).
    epsn: Option<u32>,
    bitmap: u128,
    /// `held[i]` is the packet of PSN ePSN+1+i (bit i); shorter when the tail is empty.
    held: VecDeque<Option<P>>,
    held_count: u32,
    state: State,
    /// Requests sent since the ePSN last moved.
    unanswered: u32,
    window: u32,
    buffer_packets: u32,
    give_up: u32,
}

impl<P: Copy> DstFlow<P> {
    pub fn new(cfg: &super::NetrtConfig) -> DstFlow<P> {
        DstFlow {
            epsn: None,
            bitmap: 0,
            held: VecDeque::new(),
            held_count: 0,
            state: State::Ordered,
            unanswered: 0,
            window: cfg.window.clamp(1, 128),
            buffer_packets: cfg.buffer_packets.max(1),
            give_up: cfg.give_up_requests.max(1),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn epsn(&self) -> Option<u32> {
        self.epsn
    }
    pub fn bitmap(&self) -> u128 {
        self.bitmap
    }
    /// Packets held in the reordering buffer.
    pub fn held(&self) -> u32 {
        self.held_count
    }

    /// A data packet of the flow (`marked`: it carries the in-network retransmission mark).
    pub fn on_data(&mut self, psn_: u32, marked: bool, p: P, out: &mut Vec<DstAction<P>>) {
        let Some(epsn) = self.epsn else {
            self.epsn = Some(psn::add(psn_, 1));
            out.push(DstAction::Forward(p));
            return;
        };
        let off = psn::diff(epsn, psn_);
        if off == 0 {
            out.push(DstAction::Forward(p));
            self.advance(out);
        } else if off < 0 {
            out.push(if marked { DstAction::Drop(p, DropWhy::Duplicate) } else { DstAction::Forward(p) });
        } else if self.state == State::Waiting {
            out.push(DstAction::Forward(p));
        } else {
            let i = (off - 1) as u32;
            if i < self.window && self.bitmap >> i & 1 == 1 {
                out.push(DstAction::Drop(p, DropWhy::Duplicate));
            } else if i >= self.window || self.held_count >= self.buffer_packets {
                self.enter_waiting(Some(p), out);
            } else {
                // A new gap: this packet lies more than one past the highest held (or the ePSN).
                let top = 128 - self.bitmap.leading_zeros();
                let new_gap = i > top;
                self.bitmap |= 1 << i;
                while self.held.len() <= i as usize {
                    self.held.push_back(None);
                }
                self.held[i as usize] = Some(p);
                self.held_count += 1;
                if self.state == State::Ordered {
                    self.state = State::ReTx;
                    self.unanswered = 1;
                    out.push(DstAction::State(State::ReTx));
                    out.push(DstAction::Request { epsn, bitmap: self.bitmap });
                } else if new_gap {
                    // Asked at once, not at the next interval: by then the source ToR's pool
                    // (one BDP) may have let the missing packet go. (Not a request the
                    // give-up counts: it asks for news, the timer's re-ask for old holes.)
                    out.push(DstAction::Request { epsn, bitmap: self.bitmap });
                }
            }
        }
    }

    /// The ePSN arrived (and was forwarded): Algorithm 1.
    fn advance(&mut self, out: &mut Vec<DstAction<P>>) {
        let mut epsn = psn::add(self.epsn.unwrap_or(0), 1);
        self.unanswered = 0;
        match self.state {
            State::Ordered => {}
            State::Waiting => {
                self.state = State::Ordered;
                out.push(DstAction::State(State::Ordered));
            }
            State::ReTx => {
                // Bit 0 and `held[0]` are now the new ePSN's: release while it is held.
                loop {
                    let bit = self.bitmap & 1;
                    self.bitmap >>= 1;
                    let slot = self.held.pop_front().flatten();
                    if bit == 0 {
                        break;
                    }
                    if let Some(q) = slot {
                        self.held_count -= 1;
                        out.push(DstAction::Forward(q));
                    }
                    epsn = psn::add(epsn, 1);
                }
                if self.bitmap == 0 {
                    self.state = State::Ordered;
                    self.held.clear();
                    out.push(DstAction::State(State::Ordered));
                }
            }
        }
        self.epsn = Some(epsn);
    }

    /// The request timer fired: in ReTx, re-request, or give up after `give_up` requests
    /// without progress.
    pub fn on_timer(&mut self, out: &mut Vec<DstAction<P>>) {
        if self.state != State::ReTx {
            return;
        }
        if self.unanswered >= self.give_up {
            return self.enter_waiting(None, out);
        }
        self.unanswered += 1;
        out.push(DstAction::Request { epsn: self.epsn.unwrap_or(0), bitmap: self.bitmap });
    }

    /// The source ToR cannot resend `psn`: acted on only for the ePSN in ReTx (Algorithm 2).
    pub fn on_unfulfilled(&mut self, psn_: u32, out: &mut Vec<DstAction<P>>) {
        if self.state == State::ReTx && self.epsn == Some(psn_) {
            self.enter_waiting(None, out);
        }
    }

    /// Waiting: forward the smallest held packet (else `extra`) so the receiver's Go-Back-N
    /// sees the gap, drop the rest.
    fn enter_waiting(&mut self, extra: Option<P>, out: &mut Vec<DstAction<P>>) {
        self.state = State::Waiting;
        out.push(DstAction::State(State::Waiting));
        let mut first = true;
        for q in self.held.drain(..).flatten() {
            out.push(if first { DstAction::Forward(q) } else { DstAction::Drop(q, DropWhy::Flushed) });
            first = false;
        }
        if let Some(q) = extra {
            out.push(if first { DstAction::Forward(q) } else { DstAction::Drop(q, DropWhy::Flushed) });
        }
        self.held_count = 0;
        self.bitmap = 0;
        self.unanswered = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netrt::NetrtConfig;

    fn flow() -> DstFlow<u32> {
        DstFlow::new(&NetrtConfig::paper(100_000_000_000, 5_000))
    }

    fn fwd(out: &[DstAction<u32>]) -> Vec<u32> {
        out.iter().filter_map(|a| if let DstAction::Forward(p) = a { Some(*p) } else { None }).collect()
    }

    #[test]
    fn a_hole_is_held_requested_and_released_in_order() {
        let mut f = flow();
        let mut out = Vec::new();
        f.on_data(100, false, 100, &mut out); // learns ePSN 101
        f.on_data(101, false, 101, &mut out);
        assert_eq!(fwd(&out), [100, 101]);
        out.clear();
        // 102 lost: 103, 104 and 106 held; the first one sends the request, 106 (a new gap at
        // 105) another.
        for p in [103, 104, 106] {
            f.on_data(p, false, p, &mut out);
        }
        assert_eq!(fwd(&out), Vec::<u32>::new());
        assert_eq!(f.state(), State::ReTx);
        let requests: Vec<_> = out.iter().filter(|a| matches!(a, DstAction::Request { .. })).collect();
        assert_eq!(
            requests,
            [&DstAction::Request { epsn: 102, bitmap: 0b1 }, &DstAction::Request { epsn: 102, bitmap: 0b1011 }]
        );
        // The paper's WIRE example: ePSN 0x102, bitmap 0x0B holds 0x103, 0x104, 0x106.
        assert_eq!(f.bitmap(), 0b1011);
        out.clear();
        f.on_timer(&mut out);
        assert_eq!(out, [DstAction::Request { epsn: 102, bitmap: 0b1011 }]);
        out.clear();
        // The resend of 102 releases 103 and 104; 105 is still missing.
        f.on_data(102, true, 1102, &mut out);
        assert_eq!(fwd(&out), [1102, 103, 104]);
        assert_eq!((f.epsn(), f.bitmap(), f.state()), (Some(105), 0b1, State::ReTx));
        out.clear();
        f.on_data(105, true, 1105, &mut out);
        assert_eq!(fwd(&out), [1105, 106]);
        assert_eq!((f.epsn(), f.bitmap(), f.state(), f.held()), (Some(107), 0, State::Ordered, 0));
        out.clear();
        // A late marked copy is dropped; the sender's own resend is forwarded.
        f.on_data(103, true, 2103, &mut out);
        f.on_data(103, false, 3103, &mut out);
        assert_eq!(out, [DstAction::Drop(2103, DropWhy::Duplicate), DstAction::Forward(3103)]);
    }

    #[test]
    fn unfulfilled_for_the_epsn_sends_the_flow_to_waiting_and_gbn_brings_it_back() {
        let mut f = flow();
        let mut out = Vec::new();
        f.on_data(0, false, 0, &mut out);
        for p in [2, 3, 4] {
            f.on_data(p, false, p, &mut out);
        }
        out.clear();
        // An unfulfilled request for another PSN is ignored.
        f.on_unfulfilled(3, &mut out);
        assert!(out.is_empty());
        f.on_unfulfilled(1, &mut out);
        assert_eq!(
            out,
            [
                DstAction::State(State::Waiting),
                DstAction::Forward(2),
                DstAction::Drop(3, DropWhy::Flushed),
                DstAction::Drop(4, DropWhy::Flushed)
            ]
        );
        out.clear();
        // Waiting forwards out-of-order packets; the sender's resend of the ePSN ends it.
        f.on_data(5, false, 5, &mut out);
        f.on_data(1, false, 1, &mut out);
        f.on_data(2, false, 12, &mut out);
        assert_eq!(fwd(&out), [5, 1, 12]);
        assert_eq!((f.state(), f.epsn()), (State::Ordered, Some(3)));
    }

    #[test]
    fn requests_without_progress_give_up_and_the_window_bounds_the_hold() {
        let mut f = flow();
        let mut out = Vec::new();
        f.on_data(0, false, 0, &mut out);
        f.on_data(2, false, 2, &mut out); // request 1
        f.on_timer(&mut out); // 2
        f.on_timer(&mut out); // 3
        assert_eq!(out.iter().filter(|a| matches!(a, DstAction::Request { .. })).count(), 3);
        out.clear();
        f.on_timer(&mut out);
        assert_eq!(out, [DstAction::State(State::Waiting), DstAction::Forward(2)]);
        // Wrap-around and the window: PSN ePSN+129 does not fit the 128-bit bitmap.
        let mut g = flow();
        out.clear();
        g.on_data(0xfffffe, false, 0, &mut out);
        g.on_data(0, false, 1, &mut out); // ePSN 0xffffff missing, 0 held in bit 0
        assert_eq!((g.epsn(), g.bitmap()), (Some(0xffffff), 1));
        out.clear();
        g.on_data(129, false, 2, &mut out);
        assert_eq!(
            out,
            [DstAction::State(State::Waiting), DstAction::Forward(1), DstAction::Drop(2, DropWhy::Flushed)]
        );
    }
}
