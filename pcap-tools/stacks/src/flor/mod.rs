//! Flor's reference stack, `flor` (Li et al., OSDI'23, seed 002 §4-5 and Appendix A.1; the byte
//! layout is WIRE.md B.3 / notes/flor.md §1; docs/stacks.md "Flor" is this project's account).
//!
//! Flor keeps the NIC's data path standard and runs reliability and congestion control in
//! software, per WQE ("chunk"), on an unreliable connection:
//! - **data QP** (UC, `requester.qpn` → `responder.qpn`, one PSN per packet, retransmissions
//!   included): a message of at most [`FlorConfig::send_max`] bytes is one SEND WQE (`DATA`,
//!   §4: "SEND for small messages"); a larger one first asks for the receiver's buffer
//!   (`ADDR_REQ` → `ADDR_RESP`, the "extra round trip", §4), then goes as WRITE-with-Immediate
//!   chunks whose immediate is the chunk's reliable number (hint · message id · chunk offset in
//!   UNIT_SIZE units, Appendix A.1.1) and whose RETH VA is the buffer's address plus the offset.
//! - **lost WQEs are resent by SEND** (§5): a lost chunk as `WRITE_RETX` SENDs naming its units
//!   (re-sliced into pieces of the chunk size in force, each with its own offset, Figure 14), a
//!   lost SEND as a SEND with the same SEND reliable number; every transmission of a WQE gets a
//!   new global number (GN), so ACKs and RTT samples are unambiguous.
//! - **software ACKs** on a UD QP of their own (`receiver_ack_qpn` → `sender_ack_qpn`, §4.3):
//!   coalesced lists of up to 32 WQEs received (WRITE chunks by reliable number, SENDs by GN),
//!   sent at once on any of the four triggers (32 WQEs, 32 KB, a WQE with the hint bit, an
//!   out-of-order reliable number) or when the 120 µs timer fires (§5), carrying the ACK delay
//!   `T3′ − T2` for the RTT `(T4 − T1) − (T3′ − T2)` (§4.2).
//! - **congestion control** (§4.1, Algorithm 1): a Swift-like delay-based window in bytes and
//!   the RTT-based chunk size ([`window`]).
//!
//! What the paper leaves open and this stack chooses (each also in docs/stacks.md):
//! - Loss: a WQE not listed while an ACK lists one sent after it (UC keeps a QP's order on the
//!   wire: duplicate threshold 1, §5 "out-of-order delivery from an ACK"), or not acknowledged
//!   within the RTO `max(rto_min, 2·rtt_l + ack_timer)` (notes/flor.md §3.3).
//! - The receiver is UC hardware plus Flor's software (§2.2, §5): a packet behind the expected
//!   PSN is discarded, a PSN gap aborts the WQE being received, and a WQE counts once its last
//!   packet arrived.
//! - Delivery: a large message when every unit is covered (by its chunks or their resends,
//!   Appendix A.1.1), a small one when its SEND arrives; resends are discarded by SEND reliable
//!   number and by message.
//! - Message ids: message `m`, when large, is MID `m + 1` (mod 2^21; Figure 14's first message
//!   is MID 1), so the receiver knows which message a MID names; its buffer is the modelled
//!   memory of that message ([`crate::remote_va`]). A small message is recognised by its bytes
//!   (the modelled contents name their message, [`crate::message_of_first_word`], as an
//!   application's RPC id would), checked against the posted length when
//!   [`FlorConfig::lengths`] is given.
//! - The address exchange is unacknowledged beyond Flor's own ACK of the ADDR_REQ WQE: the
//!   sender asks again (same SEND reliable number, a new GN) when no ADDR_RESP came within an
//!   RTO; the receiver answers every copy.
//! - ADDR_REQs are sent ahead of data, outside the window (they are 40-byte SENDs).

mod receiver;
mod sender;
pub mod window;

pub use receiver::FlorReceiver;
pub use sender::FlorSender;

use super::sdr::MsgLengths;
use super::{ConnConfig, Endpoint, Nanos, Requester};

/// The Q_Key of Flor's ACK QPs (any fixed value: the paper does not give one).
pub const ACK_Q_KEY: u32 = 0x0F10_7ACC;

/// The QPN bit that makes an end's ACK QP from its data QP (`synth`'s choice; any distinct QPN
/// works).
pub const ACK_QPN_BIT: u32 = 0x40_0000;

/// What both ends of a Flor connection agree on, beyond [`ConnConfig`] (whose hosts, `mtu`, `tos`
/// and `params` — the immediate split `flor_split`, `flor_unit_size` and the ACK bitmap's
/// polarity — apply).
#[derive(Clone, Debug)]
pub struct FlorConfig {
    /// The largest message sent as one SEND (§4: "e.g., ≤32KB").
    pub send_max: u32,
    /// The largest chunk, `size_max` (64 KiB, §6.1).
    pub chunk_max: u32,
    /// The idle round trip (the initial window is its bandwidth-delay product).
    pub base_rtt_ns: Nanos,
    /// Swift's target delay: the window grows below it and shrinks above.
    pub target_ns: Nanos,
    /// The sender's link rate, bit/s.
    pub rate_bps: u64,
    /// ACK triggers: WQEs and bytes received since the last ACK (32 and 32 KiB, §5).
    pub ack_wqes: u32,
    pub ack_bytes: u32,
    /// The ACK timer (120 µs, §5).
    pub ack_timer_ns: Nanos,
    /// The RTO's floor.
    pub rto_min_ns: Nanos,
    /// The sender's and the receiver's ACK QPs.
    pub sender_ack_qpn: u32,
    pub receiver_ack_qpn: u32,
    /// The receiver's posted messages' lengths, when known (the sender then refuses a message
    /// of another length, and the receiver checks small messages' lengths).
    pub lengths: Option<MsgLengths>,
}

impl FlorConfig {
    /// The paper's settings (§6.1: 32 KiB SENDs, 64 KiB chunks, ACKs at 32 WQEs / 32 KiB /
    /// 120 µs; target delay `base_rtt + 25 µs`; RTO floor 500 µs), ACK QPNs [`ACK_QPN_BIT`] over
    /// each end's data QPN.
    pub fn new(cfg: &ConnConfig, base_rtt_ns: Nanos, rate_bps: u64, lengths: Option<MsgLengths>) -> FlorConfig {
        FlorConfig {
            send_max: 32 << 10,
            chunk_max: 64 << 10,
            base_rtt_ns,
            target_ns: base_rtt_ns + 25_000,
            rate_bps,
            ack_wqes: 32,
            ack_bytes: 32 << 10,
            ack_timer_ns: 120_000,
            rto_min_ns: 500_000,
            sender_ack_qpn: (cfg.requester.qpn | ACK_QPN_BIT) & 0xff_ffff,
            receiver_ack_qpn: (cfg.responder.qpn | ACK_QPN_BIT) & 0xff_ffff,
            lengths,
        }
    }

    /// `cfg.flor`, or [`Self::new`] with a 10 µs round trip at 100 Gbit/s and messages of any
    /// length.
    pub fn for_conn(cfg: &ConnConfig) -> FlorConfig {
        cfg.flor.clone().unwrap_or_else(|| FlorConfig::new(cfg, 10_000, 100_000_000_000, None))
    }

    /// The initial window: the bandwidth-delay product, at least one unit.
    pub fn initial_window(&self, unit: u32) -> u64 {
        ((self.base_rtt_ns as u128 * self.rate_bps as u128 / 8_000_000_000) as u64).max(unit as u64)
    }

    /// Largest message the immediate's chunk offsets can address: `2^off_bits` units.
    pub fn max_message(cfg: &ConnConfig) -> u64 {
        (1u64 << cfg.params.flor_split.2.min(32)) * cfg.params.flor_unit_size.max(1) as u64
    }
}

/// The message-id field's mask (the immediate split's second width).
pub(crate) fn mid_mask(cfg: &ConnConfig) -> u32 {
    let b = cfg.params.flor_split.1 as u32;
    if b >= 32 {
        u32::MAX
    } else {
        (1u32 << b) - 1
    }
}

/// One Flor connection's sender and receiver.
///
/// Panics on a configuration no Flor QP could run: MTU 0, a unit size of 0, `ack_wqes` outside
/// 1-32, or a chunk or SEND bound below one unit.
pub fn new_pair(cfg: &ConnConfig, flor: &FlorConfig) -> (Box<dyn Requester>, Box<dyn Endpoint>) {
    let unit = cfg.params.flor_unit_size;
    assert!(cfg.mtu > 0 && unit > 0, "MTU and UNIT_SIZE must be positive");
    assert!((1..=32).contains(&flor.ack_wqes), "an ACK lists 1 to 32 WQEs");
    assert!(flor.chunk_max >= unit, "chunks of at least one unit");
    (Box::new(FlorSender::new(cfg, flor)), Box::new(FlorReceiver::new(cfg, flor)))
}
