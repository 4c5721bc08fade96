//! ERD's NACKs as loss signals (docs/analysis.md, "ERD"; WIRE.md B.5; seed 004 §4.3-4.5).
//!
//! The receiver scans its per-(source IP, source QPN, destination QPN) bitmap every T and sends
//! the PSNs it misses to the sender over TCP (the retransmission info path); the sender resends
//! them. ERD sends no acknowledgement. Here:
//! - every NACK entry is recorded against the data flow (sender → receiver, its destination QPN)
//!   ([`super::asks`]); the next copy of the PSN is its repair (`end_host`), the copy before it
//!   is lost (`erd_nack`);
//! - a NACK sent with an initial IP TTL shows the receiver is tapped (as RoCE frames do);
//! - messages: the EETH places each packet in its message (First, Middle, Last: `pkt.rs`); at
//!   the receiver's tap a message completes at the frame that brings its last missing piece
//!   (`asks.rs`, [`super::track::Tracker::complete_if_whole`]); elsewhere its completion is
//!   unknown (nothing acknowledges it).

use super::asks::Ask;
use super::pkt::ErdNackPkt;
use super::report::Signal;
use super::{initial_ttl, Analyzer};

impl Analyzer {
    /// Before a report: an ERD flow whose tap turned out to be the receiver's only after some of
    /// its messages went by (its first NACK) completes those that arrived whole.
    pub(super) fn erd_settle(&mut self) {
        for i in 0..self.flows.len() {
            if self.flows[i].transport == super::report::Transport::Erd
                && self.place(i) == super::track::Place::Destination
            {
                self.flows[i].data.complete_whole_open();
            }
        }
    }

    /// A segment completing ERD NACK messages.
    pub(super) fn erd_nack(&mut self, n: &ErdNackPkt) {
        self.last_time = self.last_time.max(n.time_ns);
        if n.ttl.is_some_and(initial_ttl) && self.local.entry(n.iface).or_default().insert(n.src) {
            self.local_version += 1;
        }
        for e in &n.entries {
            // The NACK goes from the data receiver to the data sender.
            let Some(j) = self.index.get(&super::Key(n.iface, n.dst, n.src, e.dst_qpn)) else { continue };
            let Some(v) = self.flows[j].data.peek(e.psn) else { continue };
            let ask = Ask { signal: Signal::ErdNack, frame: n.frame, unfulfilled: false, naks_then: 0 };
            self.flows[j].asks.get_or_insert_with(Default::default).ask(v, ask);
        }
    }
}
