//! NetRT's retransmission requests as loss signals (docs/analysis.md, "NetRT"; WIRE.md B.4;
//! seed 003 §III-B to §III-D; notes/netrt.md §3.6).
//!
//! The destination ToR asks the source ToR for the PSNs it misses (a request: ePSN and a bitmap
//! of the PSNs it holds), at the served flow's addresses reversed and its DestQP; the source ToR
//! resends them from its duplicate pool, or answers that it cannot (unfulfilled request), and the
//! end hosts' Go-Back-N takes over. Both messages are switch-to-switch, so only a fabric tap on
//! the ToR-to-ToR path sees them. Here:
//! - a request is a control flow (`serves`: the data flow it names); every PSN it asks for is
//!   recorded against the data flow ([`super::asks`]);
//! - the next copy of such a PSN is its repair: `in_network` when it carries the in-network
//!   retransmission mark, or when neither an unfulfilled request for it nor a NAK of the
//!   receiver at or below it came between the request and the copy (the notes' rule (b): only
//!   the switch resends a PSN on a request alone); `end_host` otherwise;
//! - a marked copy with no request captured is still an in-network repair of a `netrt_request`.

use rocescope_codec::ext::netrt::requested;

use super::asks::Ask;
use super::pkt::{Pkt, PktExt};
use super::report::{Repair, Signal};
use super::track::Asked;
use super::Analyzer;

impl Analyzer {
    /// A NetRT message (a [`super::pkt::Class::Control`] frame) of flow `i`.
    pub(super) fn netrt_control(&mut self, i: usize, k: &Pkt) {
        match k.ext {
            PktExt::NetrtRequest { epsn, bitmap } => {
                // From the data receiver's address to the data sender's, at the data's DestQP.
                let Some(j) = self.index.get(&super::Key(k.iface, k.dst, k.src, k.destqp)) else { return };
                if j == i {
                    return;
                }
                self.flows[i].serves = Some(j);
                let naks_then = self.flows[j].peer.map_or(0, |p| self.flows[p].naks);
                for psn in requested(epsn, &bitmap) {
                    let Some(v) = self.flows[j].data.peek(psn) else { continue };
                    let ask = Ask { signal: Signal::NetrtRequest, frame: k.frame, unfulfilled: false, naks_then };
                    self.flows[j].asks.get_or_insert_with(Default::default).ask(v, ask);
                }
            }
            PktExt::NetrtUnfulfilled { psn } => {
                // From the data sender's address to the receiver's: flow `i` is the data flow.
                let Some(v) = self.flows[i].data.peek(psn) else { return };
                if let Some(a) = self.flows[i].asks.as_mut().and_then(|a| a.get_mut(v)) {
                    a.unfulfilled = true;
                }
            }
            _ => {}
        }
    }

    /// Who resent PSN `v` of flow `i` (copy `k`), asked for by a request (`a`).
    pub(super) fn netrt_repair(&self, i: usize, k: &Pkt, v: u64, a: &Ask) -> Asked {
        let nak_since = self.flows[i].peer.is_some_and(|p| {
            let r = &self.flows[p];
            r.naks > a.naks_then && r.last_nak.and_then(|n| self.flows[i].data.peek(n)).is_some_and(|n| n <= v)
        });
        let repair = if k.ext == PktExt::NetrtMarked {
            Repair::InNetwork
        } else if a.unfulfilled || nak_since {
            Repair::EndHost
        } else {
            Repair::InNetwork
        };
        Asked { signal: Signal::NetrtRequest, repair }
    }
}
