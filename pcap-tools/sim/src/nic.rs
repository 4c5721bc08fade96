//! A host NIC's transmit scheduler (the NIC transmit model of `rocescope_stacks`): when the
//! host's wire is free the NIC sends its queued control frames first (ACKs, NAKs, SACKs, CNPs,
//! bounced header-only packets, READ responses: every immediate `Action::Transmit`, in FIFO
//! order), then picks, round robin from the QP after the one it served last, the first
//! requester QP that is allowed to send now and has a packet ready (`Requester::ready`), and
//! pulls exactly one packet from it (`Requester::pull`). A stack thus learns that a packet left
//! when it reaches the wire, which is when its retransmission timer starts.
//!
//! Rate limiting hook: each QP has a `next_allowed` time before which the scheduler skips it
//! (0 unless congestion control holds it back). The per-QP rate limiter (DCQCN, Zhu et al.
//! SIGCOMM 2015; `Fabric::pace`) sets it after each pull from the QP's current rate and the packet's length
//! ([`NicSched::hold`]); when every ready QP is held back the scheduler says until when
//! ([`Pick::Wait`]) so the NIC can wake up then.

use rocescope_stacks::Nanos;

/// One requester QP of the host.
#[derive(Clone, Copy, Debug)]
struct QpSlot {
    /// The simulator's endpoint number of the requester.
    ep: u32,
    /// The QP may not send before this time (a rate limiter's decision).
    next_allowed: Nanos,
}

/// What the scheduler chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    /// Pull one packet from this endpoint.
    Qp(u32),
    /// Some QP has a packet ready but may send only from this time on: wake the NIC then
    /// (said once per time).
    Wait(Nanos),
    /// No QP has anything to send.
    Idle,
}

/// The requester QPs of one host, served round robin.
#[derive(Clone, Debug, Default)]
pub(crate) struct NicSched {
    qps: Vec<QpSlot>,
    /// The slot to look at first.
    next: usize,
    /// The wake-up the NIC last asked for (so it asks once per time).
    wake: Option<Nanos>,
}

impl NicSched {
    /// Adds a requester (in connection order, which fixes the round-robin order).
    pub(crate) fn add(&mut self, ep: u32) {
        self.qps.push(QpSlot { ep, next_allowed: 0 });
    }

    /// The next QP to pull from at `now` among those `ready` says have a packet.
    pub(crate) fn pick(&mut self, now: Nanos, mut ready: impl FnMut(u32) -> bool) -> Pick {
        let n = self.qps.len();
        let mut wait: Option<Nanos> = None;
        for k in 0..n {
            let i = (self.next + k) % n;
            let q = self.qps[i];
            if !ready(q.ep) {
                continue;
            }
            if q.next_allowed > now {
                wait = Some(wait.map_or(q.next_allowed, |w| w.min(q.next_allowed)));
                continue;
            }
            self.next = (i + 1) % n;
            return Pick::Qp(q.ep);
        }
        match wait {
            Some(at) if self.wake != Some(at) => {
                self.wake = Some(at);
                Pick::Wait(at)
            }
            // A wake-up at that time is already due: nothing to ask for.
            _ => Pick::Idle,
        }
    }

    /// The rate limiter's hook: `ep` may not send again before `at`.
    pub(crate) fn hold(&mut self, ep: u32, at: Nanos) {
        if let Some(q) = self.qps.iter_mut().find(|q| q.ep == ep) {
            q.next_allowed = at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_over_ready_qps() {
        let mut s = NicSched::default();
        for ep in [0, 2, 4] {
            s.add(ep);
        }
        let all = |_| true;
        let picks: Vec<Pick> = (0..4).map(|_| s.pick(0, all)).collect();
        assert_eq!(picks, [Pick::Qp(0), Pick::Qp(2), Pick::Qp(4), Pick::Qp(0)]);
        // Only 4 ready: it is picked whatever the cursor.
        assert_eq!(s.pick(0, |ep| ep == 4), Pick::Qp(4));
        assert_eq!(s.pick(0, |_| false), Pick::Idle);
    }

    #[test]
    fn a_held_qp_waits() {
        let mut s = NicSched::default();
        s.add(0);
        s.add(2);
        s.hold(0, 500);
        assert_eq!(s.pick(100, |_| true), Pick::Qp(2));
        assert_eq!(s.pick(100, |ep| ep == 0), Pick::Wait(500));
        assert_eq!(s.pick(200, |ep| ep == 0), Pick::Idle, "the wake-up is already asked for");
        assert_eq!(s.pick(500, |ep| ep == 0), Pick::Qp(0));
    }
}
