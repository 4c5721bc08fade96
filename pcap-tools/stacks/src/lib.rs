//! Reference transport stacks: each transport is a requester (sender) and a responder
//! (receiver) written as pure state machines, driven only by frame arrivals and timers, with no
//! clock, socket or randomness inside. The fabric simulator (`rocescope-sim`) drives them as
//! endpoints to produce captures and their ground truth; [`harness`] drives one pair over a
//! scripted link for the stacks' own tests. Stacks build every frame with the codec's builders
//! and read frames through the codec's views.
//!
//! Conventions shared by every stack:
//! - Messages on a connection are numbered from 0 in posting order (`Message::id`); the
//!   responder numbers what it delivers the same way (RC delivers in order).
//! - Message contents are [`message_byte`]: both sides can check the bytes without storing
//!   the message.
//! - Timers are one-shot: `Action::Timer { at, token }` asks for `on_timer(at, token)`; a stack
//!   that no longer needs a timer ignores its token when it fires (there is no cancel).
//! - The NIC transmit model: a requester's request packets are pulled by its driver (the NIC),
//!   one at a time, when the wire is free ([`Requester::ready`], [`Requester::pull`]); a stack
//!   arms its retransmission timer when a packet is pulled, i.e. when it reaches the wire, never
//!   when it is merely due. Everything else an endpoint sends (ACKs, NAKs, IRN SACKs, DCP ACKs
//!   and bounced header-only packets, GBN READ responses) is an immediate [`Action::Transmit`]:
//!   the NIC queues those in a FIFO it serves before pulling request packets. READ responses
//!   are immediate by choice: no timer depends on when they leave (the requester's timer, armed
//!   when its READ Request left, covers them), and in the drivers here a host runs either
//!   requesters or responders, so they never compete with pulled request packets.
//! - Every transmitted frame comes with a [`TxInfo`] saying which PSN and message it carries
//!   and, for a retransmission, the stack's own reason. The simulator turns these into ground
//!   truth; whether a retransmission was spurious is decided by the truth, not the sender.
//! - Memory: remote memory is modelled, not stored: byte `i` of message `m` lives at
//!   [`remote_va`]`(m) + i` and equals [`message_byte`]`(m, i)`, so a responder serving a READ and
//!   a receiver checking a WRITE both compute it. A stack's state is bounded by its window
//!   (`bdp_packets` PSNs for GBN and IRN, `msg_window` messages for DCP) plus the messages posted
//!   and not yet completed, never by the length of the run. Receivers check every byte against
//!   [`message_byte`] and report the result as `Delivered { intact }`.
//!
//! The stacks: [`gbn`] (standard RoCE RC, Go-Back-N), [`irn`] (IRN selective repeat with the SACK
//! NAK of WIRE.md A.3), [`dcp`] (DCP, seed 000 §4.3-4.5, WIRE.md B.1). [`new_pair`] makes one
//! connection's two ends; [`harness`] is a small deterministic two-node driver for tests; both it
//! and the fabric simulator run on the event queue of `events`.
//!
//! Additions to the interface as first written (all additive):
//! - [`Op::WriteImm`] (RDMA WRITE with Immediate: the SSNETH-carrying WRITE of DCP §4.4), with
//!   [`Op::ALL`], [`Op::name`], [`Op::from_name`]; the immediate is [`imm_data`]`(msg)`.
//! - [`ConnConfig::msg_window`] (DCP: messages tracked per QP, 8 in the paper, §4.5).
//! - [`remote_va`], [`R_KEY`]: the RETH contents every stack uses.
//! - [`StackKind::ALL`], [`StackKind::profile`] (the decode profile of the stack's frames),
//!   [`StackKind::supports`] (which [`Op`]s a stack models: READ is GBN only).
//! - [`new_pair`].
//! - [`Requester::ready`] and [`Requester::pull`] (the NIC transmit model, above): request
//!   packets are no longer pushed as [`Action::Transmit`] from `post`/`on_frame`/`on_timer`, and
//!   a requester serves its retransmissions before new data. Drivers must pull.
//! - [`ConnConfig::timeouts`] ([`Timeouts`]) replaces the single `rto_ns`: each stack's own
//!   timer (GBN's local ACK timeout 4.096 µs·2^t, IRN's RTO_low/RTO_high, DCP's coarse timeout
//!   with back-off), with an optional override of all three.

use std::net::IpAddr;

use rocescope_codec::{Frame, Params, Profile};

mod common;
pub mod dcp;
pub mod dcqcn;
pub mod erd;
pub mod events;
pub mod faults;
pub mod flor;
pub mod gbn;
pub mod harness;
pub mod irn;
pub mod netrt;
pub mod rng;
pub mod sdr;
pub mod sdr_model;
pub mod timeouts;

pub use timeouts::{TimerFault, Timeouts};

/// Simulated time in nanoseconds.
pub type Nanos = u64;

/// One end of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    pub mac: [u8; 6],
    pub ip: IpAddr,
    /// This end's QP number.
    pub qpn: u32,
}

/// What both ends of one RC-style connection agree on.
#[derive(Clone, Debug)]
pub struct ConnConfig {
    /// Sends requests (SEND/WRITE/READ Request), receives ACKs/NAKs and READ responses.
    pub requester: Host,
    /// Receives requests, sends ACKs/NAKs and READ responses.
    pub responder: Host,
    /// First PSN of the requester's send queue (READ responses use the request's PSNs).
    pub start_psn: u32,
    /// Payload bytes per full packet (the path MTU).
    pub mtu: u32,
    /// UDP source port of the connection's packets (its ECMP entropy).
    pub udp_sport: u16,
    /// IPv4 ToS / IPv6 traffic class of data packets (the DCP stack sets its tag bits in it).
    pub tos: u8,
    /// Codec parameters (DCP tag position, …).
    pub params: Params,
    /// The requesters' retransmission timers (GBN's local ACK timeout, IRN's RTO_low/RTO_high,
    /// DCP's coarse timeout).
    pub timeouts: Timeouts,
    /// GBN: retries before the QP errors out (IBTA retry_cnt, 0-7).
    pub retry_cnt: u8,
    /// ACK coalescing: the responder ACKs at least every this many packets (and on AckReq).
    pub ack_every: u32,
    /// IRN: the bitmap / window size in packets (BDP-sized). GBN uses it as its window of
    /// outstanding PSNs too.
    pub bdp_packets: u32,
    /// DCP: how many messages past unaMSN may be in flight, i.e. how many message counters the
    /// receiver keeps per QP (8 in the paper, §4.5: NCCL's outstanding messages per QP).
    pub msg_window: u32,
    /// SDR: the connection's SDR parameters (`None`: [`sdr::SdrConfig::for_kind`]'s defaults).
    pub sdr: Option<sdr::SdrConfig>,
    /// Flor: the connection's Flor parameters (`None`: [`flor::FlorConfig::for_conn`]'s defaults).
    pub flor: Option<flor::FlorConfig>,
    /// ERD: the connection's ERD parameters (`None`: [`erd::ErdConfig::for_conn`]'s defaults).
    pub erd: Option<erd::ErdConfig>,
}

impl ConnConfig {
    /// A connection between two IPv4 hosts with common defaults (MTU 1024, each stack's own
    /// timers ([`Timeouts::default`]), retry count 7, ACK every 4 packets, BDP 128 packets, DCP message window 8, ToS 0x68 = DSCP 26).
    pub fn ipv4(requester: ([u8; 4], u32), responder: ([u8; 4], u32)) -> ConnConfig {
        let host = |(ip, qpn): ([u8; 4], u32), last: u8| Host { mac: [0x02, 0, 0, 0, 0, last], ip: IpAddr::from(ip), qpn };
        ConnConfig {
            requester: host(requester, requester.0[3]),
            responder: host(responder, responder.0[3]),
            start_psn: 0,
            mtu: 1024,
            udp_sport: 0xC000,
            tos: 0x68,
            params: Params::default(),
            timeouts: Timeouts::default(),
            retry_cnt: 7,
            ack_every: 4,
            bdp_packets: 128,
            msg_window: 8,
            sdr: None,
            flor: None,
            erd: None,
        }
    }
}

/// The operations a requester can post.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Send,
    Write,
    Read,
    /// RDMA WRITE with Immediate: consumes a receive WQE (DCP gives it an SSN, §4.4) and carries
    /// [`imm_data`]`(msg)` in its last packet.
    WriteImm,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Send, Op::Write, Op::Read, Op::WriteImm];

    pub fn name(self) -> &'static str {
        match self {
            Op::Send => "send",
            Op::Write => "write",
            Op::Read => "read",
            Op::WriteImm => "write_imm",
        }
    }
    pub fn from_name(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// A message posted to a requester.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Message {
    /// Posting order on this connection, from 0.
    pub id: u64,
    pub op: Op,
    /// Bytes (0 allowed).
    pub len: u32,
}

/// Bytes `8w .. 8w + 8` of message `msg`, little-endian: message contents are made 8 bytes at
/// a time (one multiply per word), so building and checking payloads costs little next to the
/// rest of a simulated packet.
#[inline]
pub fn message_word(msg: u64, w: u64) -> u64 {
    Words::new(msg, w).next_word()
}

/// Multiplier of the word index in [`message_word`].
const WORD_MUL: u64 = 0xD6E8_FEB8_6659_FD93;

/// The words of a message from word `w` on, one per call: `w · WORD_MUL` grows by one addition
/// per word, so a run of words costs no multiplication at all.
#[derive(Clone, Copy, Debug)]
pub struct Words {
    msg_mix: u64,
    w_mix: u64,
}

impl Words {
    #[inline]
    pub fn new(msg: u64, w: u64) -> Words {
        Words { msg_mix: msg.wrapping_mul(0x9E37_79B9_7F4A_7C15), w_mix: w.wrapping_mul(WORD_MUL) }
    }
    /// The next word (little-endian bytes `8w .. 8w + 8`).
    #[inline]
    pub fn next_word(&mut self) -> u64 {
        let x = self.msg_mix ^ self.w_mix;
        self.w_mix = self.w_mix.wrapping_add(WORD_MUL);
        x ^ (x >> 29)
    }
}

/// The message whose first eight bytes are `word` (little-endian): [`message_word`]`(msg, 0)`
/// is a bijection of `msg`, so a receiver can tell which message a buffer holds from its start
/// (the way an application names its messages in their bytes; Flor's receiver uses it to match
/// small SENDs to its posted receives).
pub fn message_of_first_word(word: u64) -> u64 {
    // Undo x ^ (x >> 29), then the multiplication by an odd constant (its inverse mod 2^64 by
    // Newton's iteration).
    let x = word ^ (word >> 29) ^ (word >> 58);
    const M: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut inv: u64 = M;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(M.wrapping_mul(inv)));
    }
    x.wrapping_mul(inv)
}

/// Byte `i` of message `msg`: deterministic contents that either end can check (byte `i % 8`
/// of [`message_word`]`(msg, i / 8)`).
#[inline]
pub fn message_byte(msg: u64, i: u64) -> u8 {
    (message_word(msg, i / 8) >> (8 * (i % 8))) as u8
}

/// The eight bytes of message `msg` from byte `i`, as a little-endian word.
#[inline]
pub fn message_u64_at(msg: u64, i: u64) -> u64 {
    let (w, s) = (i / 8, (i % 8) as u32);
    if s == 0 {
        message_word(msg, w)
    } else {
        (message_word(msg, w) >> (8 * s)) | (message_word(msg, w + 1) << (64 - 8 * s))
    }
}

/// Base of the modelled remote buffers: message `m` is written to (or read from)
/// `remote_va(m)`; the VA names the message modulo 2^24, like an MSN.
pub const VA_BASE: u64 = 0x7f00_0000_0000_0000;

/// The R_Key every RETH carries.
pub const R_KEY: u32 = 0x0000_1234;

/// The remote address of message `msg`'s first byte (RETH VA of a WRITE First/Only or a READ
/// Request; DCP WRITE packets carry `remote_va(msg) + offset`).
#[inline]
pub fn remote_va(msg: u64) -> u64 {
    VA_BASE + ((msg & 0xff_ffff) << 32)
}

/// The immediate data of a WRITE with Immediate.
#[inline]
pub fn imm_data(msg: u64) -> u32 {
    (msg as u32).wrapping_mul(0x9E37_79B1) ^ 0x1a2b_3c4d
}

/// Why a stack retransmits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetxReason {
    /// GBN: a NAK (PSN sequence error) or a duplicate/out-of-window ACK made it resend from there.
    GoBack,
    /// IRN: the SACK bitmap marks this packet lost (a higher PSN was SACKed).
    Sack,
    /// DCP: a header-only packet named this packet.
    HeaderOnly,
    /// A timer expired (GBN local ACK timeout, IRN RTO, DCP coarse timeout).
    Timeout,
    /// ERD: a NACK on the retransmission info path named this packet (seed 004 §4.3-4.4).
    Nack,
}

/// What a transmitted frame is, as the stack knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxInfo {
    /// The BTH PSN.
    pub psn: u32,
    /// The message the packet belongs to (None for ACKs, NAKs, CNPs and bounced HO packets).
    pub msg: Option<u64>,
    /// Set on every transmission of a PSN after its first.
    pub retx: Option<RetxReason>,
}

/// What a stack asks of its driver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send this Ethernet frame: from [`Requester::pull`], the request packet that leaves now;
    /// otherwise a control frame (ACK, NAK, SACK, bounced HO, READ response) for the NIC's FIFO,
    /// which leaves as soon as the wire is free.
    Transmit { frame: Vec<u8>, info: TxInfo },
    /// Call `on_timer(at, token)` at time `at`.
    Timer { at: Nanos, token: u64 },
    /// Responder (or requester, for READ data): message `msg` was delivered to the application,
    /// `intact` when every byte matched [`message_byte`].
    Delivered { msg: u64, len: u32, intact: bool },
    /// Requester: the work completion of message `msg`.
    Completed { msg: u64 },
    /// The connection gave up (retry count exhausted): the QP is in error.
    Failed { reason: &'static str },
}

/// An endpoint driven by frames and timers.
pub trait Endpoint {
    /// A frame addressed to this endpoint arrived at `now`.
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>);
    /// A timer this endpoint asked for fired.
    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>);
    /// The run begins (time 0, before any post or frame): what an end does unprompted (an SDR
    /// receiver posts its first receives and sends their clear-to-send). Nothing by default.
    fn start(&mut self, _now: Nanos, _out: &mut Vec<Action>) {}
}

/// The sending side of a connection.
pub trait Requester: Endpoint {
    /// The application posts a message.
    fn post(&mut self, now: Nanos, msg: Message, out: &mut Vec<Action>);
    /// Every posted message has completed (or the connection failed).
    fn idle(&self) -> bool;
    /// The NIC may pull a request packet now: a retransmission is due, or a new packet the
    /// stack's window allows. A driver asks again after anything it hands the requester
    /// (`post`, `on_frame`, `on_timer`) and after each pull.
    fn ready(&self) -> bool;
    /// The NIC's wire is free and its scheduler chose this QP: pushes the one request packet
    /// that leaves now (one [`Action::Transmit`]; retransmissions before new data) and what its
    /// departure arms (a retransmission timer counts from `now`, the time the packet reaches the
    /// wire). Returns false, pushing no frame, when not [`ready`](Self::ready).
    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool;
}

/// The transports with reference stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackKind {
    /// Standard RoCE RC: Go-Back-N.
    Gbn,
    /// IRN: selective repeat with SACK NAKs.
    Irn,
    /// DCP: header-only-based retransmission.
    Dcp,
    /// SDR-RDMA, selective repeat (per-chunk RTO; the NACK variant with [`sdr::SdrMode::Sr`]).
    SdrSr,
    /// SDR-RDMA, erasure coding with the selective-repeat fallback.
    SdrEc,
    /// Flor: software reliability per WQE over UC, resends by SEND, coalesced software ACKs.
    Flor,
    /// ERD: datagrams with the EETH, NACKs over TCP from a scanned bitmap, reordering by offset.
    Erd,
    /// NetRT: Go-Back-N hosts behind ToR switches that resend fabric losses themselves
    /// ([`netrt`]: the switches' logic, which the fabric runs in its leaves).
    Netrt,
}

impl StackKind {
    pub const ALL: [StackKind; 8] = [
        StackKind::Gbn,
        StackKind::Irn,
        StackKind::Dcp,
        StackKind::SdrSr,
        StackKind::SdrEc,
        StackKind::Flor,
        StackKind::Erd,
        StackKind::Netrt,
    ];
    /// The RC-style stacks: one data QP each way, a packet known by its PSN (what the fabric's
    /// truth, the wire checks and `replay` judge so far).
    pub const RC: [StackKind; 3] = [StackKind::Gbn, StackKind::Irn, StackKind::Dcp];

    /// The decode profile of the stack's frames (IRN's SACK NAK decodes under `std`).
    pub fn profile(self) -> Profile {
        match self {
            StackKind::Dcp => Profile::Dcp,
            StackKind::Gbn | StackKind::Irn => Profile::Std,
            StackKind::SdrSr | StackKind::SdrEc => Profile::Sdr,
            StackKind::Flor => Profile::Flor,
            StackKind::Erd => Profile::Erd,
            StackKind::Netrt => Profile::Netrt,
        }
    }

    /// Whether the stack is SDR's (packets known by (message, offset), several data QPs).
    pub fn is_sdr(self) -> bool {
        matches!(self, StackKind::SdrSr | StackKind::SdrEc)
    }

    /// Whether the stack models `op`. RDMA READ is modelled by GBN only (the DCP paper's
    /// order-tolerant reception covers Send, Write and Write with Immediate, §4.4; SDR sends are
    /// UC writes; NetRT's switches sequence request PSNs, and the paper does not say how a READ
    /// Request's span of response PSNs counts); posting an unsupported op puts the connection in
    /// error ([`Action::Failed`]).
    pub fn supports(self, op: Op) -> bool {
        op != Op::Read || self == StackKind::Gbn
    }

    pub fn name(self) -> &'static str {
        match self {
            StackKind::Gbn => "gbn",
            StackKind::Irn => "irn",
            StackKind::Dcp => "dcp",
            StackKind::SdrSr => "sdr-sr",
            StackKind::SdrEc => "sdr-ec",
            StackKind::Flor => "flor",
            StackKind::Erd => "erd",
            StackKind::Netrt => "netrt",
        }
    }
    pub fn from_name(s: &str) -> Option<StackKind> {
        StackKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// One connection's requester and responder for `kind`. Frames given to either end should be
/// decoded with `kind.profile()` and `cfg.params` (the DCP stack re-decodes anything else). The
/// SDR stacks take their parameters from `cfg.sdr` ([`sdr::SdrConfig::for_kind`] when `None`),
/// with `kind` choosing selective repeat or erasure coding.
///
/// Panics when the two hosts are not of the same IP family, or `cfg.mtu` is 0.
pub fn new_pair(kind: StackKind, cfg: &ConnConfig) -> (Box<dyn Requester>, Box<dyn Endpoint>) {
    assert!(cfg.mtu > 0, "MTU must be positive");
    assert_eq!(cfg.requester.ip.is_ipv4(), cfg.responder.ip.is_ipv4(), "hosts of different IP families");
    match kind {
        StackKind::Gbn => (Box::new(gbn::GbnRequester::new(cfg)), Box::new(gbn::GbnResponder::new(cfg))),
        StackKind::Irn => (Box::new(irn::IrnRequester::new(cfg)), Box::new(irn::IrnResponder::new(cfg))),
        StackKind::Dcp => (Box::new(dcp::DcpRequester::new(cfg)), Box::new(dcp::DcpResponder::new(cfg))),
        StackKind::SdrSr | StackKind::SdrEc => sdr::new_pair(cfg, &sdr::SdrConfig::for_kind(kind, cfg)),
        StackKind::Flor => flor::new_pair(cfg, &flor::FlorConfig::for_conn(cfg)),
        StackKind::Erd => erd::new_pair(cfg, &erd::ErdConfig::for_conn(cfg)),
        // NetRT changes the switches, not the hosts.
        StackKind::Netrt => (Box::new(gbn::GbnRequester::new(cfg)), Box::new(gbn::GbnResponder::new(cfg))),
    }
}
