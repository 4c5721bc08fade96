//! SDR-RDMA's reference stacks, `sdr-sr` (selective repeat, with the NACK variant) and `sdr-ec`
//! (erasure coding with the selective-repeat fallback): Khalilov et al., seed 001 §3-4; the byte
//! layout is WIRE.md B.2 / notes/sdr.md §2; docs/stacks.md "SDR-RDMA" is this project's account.
//!
//! A connection is one SDR QP pair:
//! - **data path**: `G × C` UC QPs at the receiver (generation `g`, channel `c` is QPN
//!   `responder.qpn + g·C + c`). Every packet is its own UC RDMA WRITE Only with Immediate
//!   (0x2B) whose immediate names (message id, packet offset, a fragment of the user immediate)
//!   and whose RETH VA is `msg_id · max_message + pkt_off · MTU` (§3.1). Message `msg_seq` uses
//!   id `msg_seq mod 2^ID` and generation `(msg_seq >> ID) mod G`; packet `p` goes on channel
//!   `p mod C`. Each QP's UC PSN advances by one per packet (retransmissions included); SDR
//!   itself ignores PSNs.
//! - **control path**: receiver → sender UC SEND Only (0x24) on the sender's QP
//!   (`requester.qpn`), carrying CTS, SR_ACK, SR_NACK, EC_ACK, EC_NACK.
//!
//! The receiver posts receives in order (order-based matching, §3.1): [`SdrConfig::recv_window`]
//! of them ahead, each announced by a CTS carrying the buffer length; a message's sends may start
//! once their CTS has arrived. The receiver knows each message's length the way an SDR
//! application does, because it posted a receive of that length ([`SdrConfig::lengths`]).
//!
//! What the paper leaves open and this stack chooses (each also in docs/stacks.md):
//! - SR_ACK timing: on every chunk completed, coalesced to one per [`SdrConfig::ack_period_ns`]
//!   (0: at once); always at once when the message completes (the paper's receiver polls its
//!   bitmap, period unstated: §4.1.1).
//! - SR_NACK variant: the receiver names a missing chunk once, when a later chunk of the same
//!   message completes (the paper's simulation-only variant, §5, with α = 0 as the backup RTO).
//! - EC's FTO is §4.2.3's `(M + ⌈M·m/k⌉)·T_INJ + β·RTT` with β = α/2 (§4.1.2 halves α), armed
//!   at the first packet of any of the message's submessages.
//! - Late packets (of a completed message, or of another generation than the slot's) are
//!   discarded (the NULL key and the generation check, §3.1); one of a completed message the
//!   receiver still remembers is answered with the message's final ACK again, so a lost final
//!   ACK costs one RTO, not a hang.
//! - The EC sender's guard: with neither EC_ACK nor EC_NACK by `FTO + RTT + RTO` after its first
//!   packet, it falls back to selective repeat for every data chunk (the paper's "global
//!   timeout … to prevent deadlock", value unstated, §4.1.2).
//! - The control path is unreliable (the paper leaves it to the application): the receiver
//!   sends the CTS of the first receive whose send has not begun again, one RTO after its
//!   message was posted, then 2, 4, … up to 64 RTOs apart; lost ACKs and NACKs are covered by
//!   the RTOs, the answers to duplicates and late packets, and the EC guard.

pub mod code;
pub mod layout;
mod receiver;
mod sender;

use std::fmt;
use std::sync::Arc;

pub use code::Code;
pub use layout::EcShape;
pub use receiver::SdrReceiver;
pub use sender::SdrSender;

use super::{ConnConfig, Endpoint, Nanos, Requester};

/// Selective repeat or erasure coding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdrMode {
    /// `sdr-sr`: per-chunk RTO; with `nack`, the receiver also names missing chunks (SR_NACK).
    Sr { nack: bool },
    /// `sdr-ec`: `k` data and `m` parity chunks a submessage.
    Ec { k: u32, m: u32, code: Code },
}

/// The application's posted receives: message `i`'s length in bytes, `None` past the last
/// message it will receive.
#[derive(Clone)]
pub struct MsgLengths(pub Arc<dyn Fn(u64) -> Option<u32> + Send + Sync>);

impl MsgLengths {
    /// Every message `len` bytes, without end.
    pub fn fixed(len: u32) -> MsgLengths {
        MsgLengths(Arc::new(move |_| Some(len)))
    }
    /// Message `i` is `lens[i]` bytes.
    pub fn list(lens: &[u32]) -> MsgLengths {
        let lens: Arc<[u32]> = lens.into();
        MsgLengths(Arc::new(move |i| usize::try_from(i).ok().and_then(|i| lens.get(i).copied())))
    }
    pub fn of(&self, msg: u64) -> Option<u32> {
        (self.0)(msg)
    }
}

impl fmt::Debug for MsgLengths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MsgLengths(..)")
    }
}

/// What both ends of an SDR connection agree on, beyond [`ConnConfig`] (whose `mtu`, `params`
/// (the immediate split, max message size), `tos` and hosts apply).
#[derive(Clone, Debug)]
pub struct SdrConfig {
    pub mode: SdrMode,
    /// `N`: packets a chunk (the bitmap's unit, §3.1).
    pub chunk_packets: u32,
    /// `C`: channels (UC QPs a generation).
    pub channels: u32,
    /// `G`: message-id generations (§3.1, "4 internal QPs").
    pub generations: u32,
    /// The round trip the timers are set from (the paper's RTT).
    pub rtt_ns: Nanos,
    /// `α`: RTO = RTT·(1 + α) (2 in the paper's SR runs, 0 in its NACK runs, §5).
    pub alpha: f64,
    /// The sender's link rate, bit/s (T_INJ for EC's FTO).
    pub rate_bps: u64,
    /// Receives the receiver keeps posted ahead (at most 2^ID: a message id is reused only after
    /// its message completed).
    pub recv_window: u32,
    /// SR_ACK coalescing (0: an SR_ACK for every completed chunk).
    pub ack_period_ns: Nanos,
    /// The receiver's posted lengths (they must equal the posted messages' lengths).
    pub lengths: MsgLengths,
}

impl SdrConfig {
    /// Selective repeat over one channel and 4 generations, α = 2, chunks of one packet, 16
    /// receives posted ahead, an SR_ACK per chunk.
    pub fn sr(rtt_ns: Nanos, rate_bps: u64, lengths: MsgLengths) -> SdrConfig {
        SdrConfig {
            mode: SdrMode::Sr { nack: false },
            chunk_packets: 1,
            channels: 1,
            generations: 4,
            rtt_ns,
            alpha: 2.0,
            rate_bps,
            recv_window: 16,
            ack_period_ns: 0,
            lengths,
        }
    }

    /// The parameters `new_pair(kind, cfg)` runs with: `cfg.sdr` (or, without it, selective
    /// repeat with a 10 µs RTT at 100 Gbit/s and messages of any length — set `lengths` for a
    /// receiver that must know them), its mode set by `kind`: `SdrSr` keeps an SR mode (else
    /// no NACKs), `SdrEc` keeps an EC mode (else MDS EC(32, 8)).
    pub fn for_kind(kind: super::StackKind, cfg: &ConnConfig) -> SdrConfig {
        let mut s =
            cfg.sdr.clone().unwrap_or_else(|| SdrConfig::sr(10_000, 100_000_000_000, MsgLengths::fixed(cfg.mtu)));
        s.mode = match (kind, s.mode) {
            (super::StackKind::SdrEc, m @ SdrMode::Ec { .. }) => m,
            (super::StackKind::SdrEc, _) => SdrMode::Ec { k: 32, m: 8, code: Code::Mds },
            (_, m @ SdrMode::Sr { .. }) => m,
            (_, _) => SdrMode::Sr { nack: false },
        };
        s
    }

    /// The per-chunk retransmission timeout, `RTT·(1 + α)`.
    pub fn rto_ns(&self) -> Nanos {
        (self.rtt_ns as f64 * (1.0 + self.alpha)).round() as Nanos
    }

    /// The EC shape, if erasure coding.
    pub fn ec(&self) -> Option<EcShape> {
        match self.mode {
            SdrMode::Ec { k, m, .. } => Some(EcShape { k, m }),
            SdrMode::Sr { .. } => None,
        }
    }

    /// The stack's name: `sdr-sr` or `sdr-ec`.
    pub fn name(&self) -> &'static str {
        match self.mode {
            SdrMode::Sr { .. } => "sdr-sr",
            SdrMode::Ec { .. } => "sdr-ec",
        }
    }

    /// The data QPN of generation `g`, channel `c`.
    pub fn data_qpn(&self, cfg: &ConnConfig, g: u32, c: u32) -> u32 {
        (cfg.responder.qpn + g * self.channels + c) & 0xff_ffff
    }

    /// The receiver's data QPNs (every generation and channel).
    pub fn data_qpns(&self, cfg: &ConnConfig) -> Vec<u32> {
        (0..self.generations)
            .flat_map(|g| (0..self.channels).map(move |c| (g, c)))
            .map(|(g, c)| self.data_qpn(cfg, g, c))
            .collect()
    }

    /// EC's fallback timeout for a message of `chunks` data chunks (§4.2.3, our β = α/2):
    /// `(M + ⌈M·m/k⌉)·T_INJ + β·RTT`, the receiver's from the message's first packet; 0 for
    /// selective repeat.
    pub fn fto_ns(&self, mtu: u32, chunks: u64) -> Nanos {
        let SdrMode::Ec { k, m, .. } = self.mode else { return 0 };
        let chunk_bytes = self.chunk_packets as u64 * mtu as u64;
        self.inject_ns((chunks + (chunks * m as u64).div_ceil(k as u64)) * chunk_bytes)
            + (self.rtt_ns as f64 * self.alpha / 2.0).round() as Nanos
    }

    /// The EC sender's guard, from the message's first packet: the FTO, then the EC_NACK's way
    /// back and an RTO.
    pub fn guard_ns(&self, mtu: u32, chunks: u64) -> Nanos {
        self.fto_ns(mtu, chunks) + self.rtt_ns + self.rto_ns()
    }

    /// `T_INJ`-style time of `bytes` on the sender's wire (frame overheads not included).
    pub(crate) fn inject_ns(&self, bytes: u64) -> Nanos {
        (bytes as u128 * 8 * 1_000_000_000).div_ceil(self.rate_bps.max(1) as u128) as Nanos
    }
}

/// Message ids, 2^ID (the immediate split's first field).
pub(crate) fn message_ids(cfg: &ConnConfig) -> u64 {
    1u64 << (cfg.params.sdr_split.0 as u32).min(32)
}

/// The message-id and generation of message sequence number `seq` (ID bits of the split).
pub(crate) fn slot_of(cfg: &ConnConfig, sdr: &SdrConfig, seq: u64) -> (u32, u32) {
    let id_bits = cfg.params.sdr_split.0 as u32;
    let id = rocescope_codec::ext::sdr::msg_id(seq as u32, id_bits as u8);
    let gen = ((seq >> id_bits.min(63)) % sdr.generations.max(1) as u64) as u32;
    (id, gen)
}

/// One SDR connection's sender and receiver.
///
/// Panics on a configuration no SDR QP could run: MTU 0, no channel or generation, chunks of no
/// packet, a window beyond the message ids, an EC shape with `k` or `m` 0, or an MDS code over
/// chunks of an odd number of bytes.
pub fn new_pair(cfg: &ConnConfig, sdr: &SdrConfig) -> (Box<dyn Requester>, Box<dyn Endpoint>) {
    assert!(cfg.mtu > 0 && sdr.channels > 0 && sdr.generations > 0 && sdr.chunk_packets > 0);
    assert!(sdr.recv_window > 0 && sdr.recv_window as u64 <= message_ids(cfg), "recv_window beyond the message ids");
    if let SdrMode::Ec { k, m, code } = sdr.mode {
        assert!(k > 0 && m > 0, "an EC shape needs k and m");
        assert!(
            code != Code::Mds || (sdr.chunk_packets * cfg.mtu).is_multiple_of(2),
            "MDS chunks of an odd byte count"
        );
    }
    (Box::new(SdrSender::new(cfg, sdr)), Box::new(SdrReceiver::new(cfg, sdr)))
}
