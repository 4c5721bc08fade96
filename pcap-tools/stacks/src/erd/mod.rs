//! ERD's reference stack, `erd` (seed 004 §4.3-4.5; the byte layout is WIRE.md B.5;
//! docs/stacks.md "ERD" is this project's account).
//!
//! ERD sends every packet as its own datagram and makes it reliable with NACKs only:
//! - **data** (§4.5): UD SEND Only (0x64: BTH · DETH) from `requester.qpn` to `responder.qpn`,
//!   whose payload starts with the 12-byte EETH (Type: part of a multi-packet message; Last;
//!   Msg_ID; S_Len; S_Offset). A message's packets take consecutive PSNs; a resend keeps its PSN
//!   (the send buffer re-issues the WQE named by QPN and PSN, §4.4). Packets may take any path:
//!   the receiver places each by its EETH (the reordering module, §4.5) and delivers a message
//!   when it holds all its bytes.
//! - **NACKs** (§4.3): the receiver records each PSN in a bitmap per (source address, source QPN,
//!   destination QPN) and scans it every `T`; the PSNs it misses go to the sender as one NACK
//!   message per scan, on the retransmission info path, a TCP connection to the sender's NACK
//!   port (`Params::erd_nack_port`). The sender resends them from its RetryQ, ahead of new
//!   packets. Nothing acknowledges what arrived.
//!
//! What the paper leaves open and this stack chooses (each also in docs/stacks.md):
//! - **Which missing PSNs a scan names.** A PSN is named when a higher one had arrived by the
//!   previous scan, so a packet still on a slower path gets one scan period. A lost tail has no
//!   higher PSN. The receiver knows the messages its application posted
//!   ([`ErdConfig::lengths`]), so it knows the PSNs they take. When a whole scan period passes
//!   with nothing arriving, it names the expected PSNs after the highest received, at most
//!   [`TAIL_NACK`] of them. A missing PSN is named again every other scan until it arrives
//!   (the resend a NACK asked for takes up to a round trip, which is T), so a lost resend costs
//!   two scans.
//! - **Completion at the sender.** With no acknowledgement, the sender completes a message once
//!   all its packets have left and [`ErdConfig::quiet_ns`] has passed since its last packet
//!   (first copy or resend) with no NACK naming it. Until then it keeps the packets for
//!   resending. A NACK after that finds nothing to resend; the quiet time (8 scans and two
//!   round trips by default, from the largest round trip) makes that rare.
//! - **The info path is TCP, modelled minimally** ([`info`]): segments in order, cumulative
//!   ACKs, one retransmission timer going back to the oldest unacknowledged segment; no
//!   handshake, no congestion control.
//! - **Msg_ID** is the message id modulo 2^16. The receiver unwraps it near the messages it
//!   expects.
//! - **T.** The scan period is the largest end-to-end round trip (§4.3: the RTT Detector gives
//!   the Timeout Clock "the maximum end-to-end RTT"; the NACK processing budget η is not
//!   modelled). A caller that knows the path gives the round trip with every queue on it full.
//!   A shorter T would name packets still queued, and their resends would be spurious.

pub mod info;
mod receiver;
mod sender;

pub use receiver::ErdReceiver;
pub use sender::ErdSender;

use super::sdr::MsgLengths;
use super::{ConnConfig, Endpoint, Nanos, Requester};

/// The Q_Key of ERD's data packets (the paper gives none).
pub const Q_KEY: u32 = 0x0000_E4D0;

/// Expected PSNs past the highest received a stalled scan names (the lost tail).
pub const TAIL_NACK: u32 = 64;

/// What both ends of an ERD connection agree on, beyond [`ConnConfig`] (whose hosts, `mtu`,
/// `tos`, `start_psn` and `params.erd_nack_port` apply).
#[derive(Clone, Debug)]
pub struct ErdConfig {
    /// The bitmap scan period `T`.
    pub scan_ns: Nanos,
    /// The sender completes a message this long after its last packet left with no NACK naming
    /// it.
    pub quiet_ns: Nanos,
    /// The info path's retransmission timeout.
    pub info_rto_ns: Nanos,
    /// The receiver's TCP source port (the sender's is the NACK port).
    pub info_port: u16,
    /// The receiver's posted messages' lengths (the PSNs it expects, for a lost tail).
    pub lengths: Option<MsgLengths>,
}

impl ErdConfig {
    /// Defaults from the largest round trip `max_rtt_ns` (with the queues full): `T` = that
    /// RTT, quiet time 8 T + 2 RTT, info-path RTO 2 RTT (at least 10 µs); the receiver's TCP
    /// port `0xC000 | (responder QPN & 0x3fff)`.
    pub fn new(cfg: &ConnConfig, max_rtt_ns: Nanos, lengths: Option<MsgLengths>) -> ErdConfig {
        let rtt = max_rtt_ns.max(1);
        ErdConfig {
            scan_ns: rtt,
            quiet_ns: 8 * rtt + 2 * rtt,
            info_rto_ns: (2 * rtt).max(10_000),
            info_port: 0xC000 | (cfg.responder.qpn & 0x3fff) as u16,
            lengths,
        }
    }

    /// `cfg.erd`, or [`Self::new`] with a 10 µs round trip and no posted lengths.
    pub fn for_conn(cfg: &ConnConfig) -> ErdConfig {
        cfg.erd.clone().unwrap_or_else(|| ErdConfig::new(cfg, 10_000, None))
    }
}

/// Payload bytes a packet carries after its EETH.
pub fn per_packet(mtu: u32) -> u32 {
    mtu.saturating_sub(rocescope_codec::ext::erd::EETH_LEN as u32).max(1)
}

/// Packets of a message of `len` bytes.
pub fn packets(len: u32, mtu: u32) -> u32 {
    len.div_ceil(per_packet(mtu)).max(1)
}

/// One ERD connection's sender and receiver.
///
/// Panics when the MTU leaves no room after the EETH.
pub fn new_pair(cfg: &ConnConfig, erd: &ErdConfig) -> (Box<dyn Requester>, Box<dyn Endpoint>) {
    assert!(cfg.mtu as usize > rocescope_codec::ext::erd::EETH_LEN, "the MTU must hold the EETH");
    (Box::new(ErdSender::new(cfg, erd)), Box::new(ErdReceiver::new(cfg, erd)))
}
