//! NetRT's switch logic (NetRT paper, seed 003 §III; the messages: docs/wire.md B.4): the source
//! top-of-rack switch keeps a duplicate of every packet its hosts send into the fabric
//! ([`pool`]), the destination ToR holds out-of-order packets and asks the source ToR for the
//! missing ones ([`dst_tor`]), and the source ToR paces its resends by how much is asked
//! ([`rate`]). The end hosts are unmodified RoCE RC with Go-Back-N (`gbn`): NetRT hides
//! fabric loss from them, and falls back to their Go-Back-N when the source ToR no longer
//! holds what is missing.
//!
//! These are pure state machines over packet handles and PSNs (no clock, no frames): the fabric
//! simulator (`rocescope-sim`, `sim/netrt_tor.rs`) runs them in its leaf switches, and a judge
//! can run them over a capture.
//!
//! Where the paper is silent or inconsistent, rocescope chooses (each choice is documented where
//! it is made, and in docs/stacks.md "NetRT"):
//! - the bitmap: bit i marks PSN ePSN+1+i held (Algorithm 2 writes `&` for `|` and its two
//!   algorithms are off by one against each other);
//! - a flow's ePSN is learned from the first packet the destination ToR sees of it;
//! - re-requests every `request_interval_ns` (the paper: "at time intervals"), and after
//!   `give_up_requests` requests without progress the destination ToR acts as if told the
//!   ePSN is unfulfilled (the paper holds packets "at most one RTT");
//! - a packet beyond the 128-bit window, or beyond the reorder buffer, sends the flow to Waiting;
//! - N, the "amount of requested data" of the rate formula, is the bytes asked of the source
//!   ToR and not yet resent, per flow.

pub mod dst_tor;
pub mod pool;
pub mod rate;

use super::Nanos;

/// The NetRT switches' parameters (paper §III-E and §IV's settings where it gives them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetrtConfig {
    /// The source ToR's duplicate pool per host port, bytes ("about one BDP", §III-B; 100 KB
    /// for 100 Gbit/s and 5 µs, §III-E).
    pub pool_bytes: u64,
    /// The destination ToR's bitmap: PSNs past the ePSN it can hold (128, §III-C).
    pub window: u32,
    /// Packets the destination ToR holds per flow (at most the window).
    pub buffer_packets: u32,
    /// The destination ToR re-sends its request this often while the ePSN is missing.
    pub request_interval_ns: Nanos,
    /// A duplicate kept longer than this is evicted first, whatever its flow asked (the paper's
    /// pool keeps a duplicate "about one RTT"; LFU alone would let a flow that asked once and
    /// went quiet keep its duplicates for ever).
    pub max_age_ns: Nanos,
    /// Requests without progress after which the destination ToR gives up (Waiting).
    pub give_up_requests: u32,
    /// K_l and K_h of the rate formula, bytes (20 KB and 100 KB, §IV; the paper swaps their
    /// names once).
    pub k_low: u64,
    pub k_high: u64,
    /// R_a^max and R_a^min as fractions of the line rate (50 % and 1 %, §IV).
    pub rate_max: f64,
    pub rate_min: f64,
    /// Set the in-network retransmission mark (bit 0 of BTH byte 4) on the source ToR's resends;
    /// the destination ToR clears it before the host sees the packet.
    pub mark: bool,
}

impl NetrtConfig {
    /// The paper's settings for a fabric whose ToR-to-ToR round trip is `rtt_ns` at `rate_bps`:
    /// a pool of one BDP (at least 64 KB), requests once per round trip, three before giving up.
    pub fn paper(rate_bps: u64, rtt_ns: Nanos) -> NetrtConfig {
        let bdp = (rate_bps as u128 * rtt_ns as u128 / 8 / 1_000_000_000) as u64;
        NetrtConfig {
            pool_bytes: bdp.max(64 * 1024),
            window: 128,
            buffer_packets: 128,
            request_interval_ns: rtt_ns.max(1),
            max_age_ns: 4 * rtt_ns.max(1),
            give_up_requests: 3,
            k_low: 20_000,
            k_high: 100_000,
            rate_max: 0.5,
            rate_min: 0.01,
            mark: true,
        }
    }
}
