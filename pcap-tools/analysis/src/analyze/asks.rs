//! PSNs a research transport's receiver side asked for and the tap has not seen resent yet
//! (docs/analysis.md, "Research transports"): a NetRT retransmission request's PSNs, an ERD
//! NACK's. The next copy of such a PSN is fed to the flow's [`Tracker`](super::track::Tracker)
//! with what asked for it ([`Asked`]), so it reports the earlier copy's loss with the transport's
//! signal and who repaired it. Bounded: the oldest asks go first beyond [`MAX_ASKS`].

use std::collections::BTreeMap;

use super::report::Signal;

/// Asks kept per flow at most.
pub const MAX_ASKS: usize = 1 << 16;

/// One PSN asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ask {
    pub signal: Signal,
    /// The frame that asked (first time).
    pub frame: u64,
    /// The switch said it cannot resend it (NetRT unfulfilled request).
    pub unfulfilled: bool,
    /// The reverse flow's NAK count when asked (NetRT: a NAK since means an end-host resend).
    pub naks_then: u64,
}

/// One flow's outstanding asks, by unwrapped PSN.
#[derive(Clone, Debug, Default)]
pub struct Asks {
    by_psn: BTreeMap<u64, Ask>,
}

impl Asks {
    /// Records an ask for `v` (an earlier, still open ask keeps its frame).
    pub fn ask(&mut self, v: u64, a: Ask) {
        self.by_psn.entry(v).or_insert(a);
        while self.by_psn.len() > MAX_ASKS {
            self.by_psn.pop_first();
        }
    }

    /// The open ask for `v`, if any.
    pub fn get_mut(&mut self, v: u64) -> Option<&mut Ask> {
        self.by_psn.get_mut(&v)
    }

    /// Takes the open ask for `v` (a copy of it is being fed).
    pub fn take(&mut self, v: u64) -> Option<Ask> {
        self.by_psn.remove(&v)
    }
}

use super::pkt::{Pkt, PktExt};
use super::track::{Asked, Place};
use super::Analyzer;
use rocescope_codec::Profile;

impl Analyzer {
    /// Before a data packet of flow `i` is fed to its tracker: tells the tracker whether the
    /// receiver side asked for this copy, and who resent it.
    pub(super) fn research_before_data(&mut self, i: usize, k: &Pkt) {
        let f = &mut self.flows[i];
        if k.profile == Profile::Erd {
            f.transport = super::report::Transport::Erd;
        }
        // Nothing asked for on this flow and no mark: nothing to tell (the tracker's `asked` is
        // already clear: it is taken by every data packet, and cleared after it).
        if f.asks.is_none() && k.ext != PktExt::NetrtMarked {
            return;
        }
        let Some(v) = self.flows[i].data.peek(k.psn) else { return };
        let ask = self.flows[i].asks.as_mut().and_then(|a| a.take(v));
        let asked = match ask {
            Some(a) if a.signal == Signal::NetrtRequest => Some(self.netrt_repair(i, k, v, &a)),
            Some(a) => Some(Asked { signal: a.signal, repair: super::report::Repair::EndHost }),
            // A copy carrying NetRT's in-network retransmission mark: the source ToR resent it,
            // which it does only on a request (not captured here).
            None if k.ext == PktExt::NetrtMarked => {
                Some(Asked { signal: Signal::NetrtRequest, repair: super::report::Repair::InNetwork })
            }
            None => None,
        };
        self.flows[i].data.asked = asked;
    }

    /// After a data packet of flow `i` was fed: SDR's and Flor's own tracking ([`super::sdr`],
    /// [`super::flor`]); ERD, which
    /// sends no acknowledgement, completes a message at its receiver's tap once every piece of
    /// it arrived.
    pub(super) fn research_after_data(&mut self, i: usize, k: &Pkt, place: Place) {
        let f = &mut self.flows[i];
        f.data.asked = None;
        // Neither SDR's nor Flor's (most packets): only ERD's rule can apply, on this flow. (A
        // Flor flow's WRITE First/Middle decodes as `std`: the flow's profile says it is Flor's.)
        if !matches!(k.ext, PktExt::SdrData { .. }) && k.profile != Profile::Flor && f.profile != Profile::Flor {
            if f.transport == super::report::Transport::Erd && place == Place::Destination {
                let Some(v) = f.data.peek(k.psn) else { return };
                f.data.complete_if_whole(v, k.frame, k.time_ns);
            }
            return;
        }
        if matches!(k.ext, PktExt::SdrData { .. }) {
            self.sdr_data(i, k, place);
        }
        // (By the flow's profile: a WRITE Middle, or a chunk's first packet, carries nothing of
        // Flor's and decodes as `std`, but its bytes count in its chunk's units.)
        if k.profile == Profile::Flor || self.flows[i].profile == Profile::Flor {
            self.flor_data(i, k, place);
        }
        if self.flows[i].transport == super::report::Transport::Erd && place == Place::Destination {
            let Some(v) = self.flows[i].data.peek(k.psn) else { return };
            self.flows[i].data.complete_if_whole(v, k.frame, k.time_ns);
        }
    }
}
