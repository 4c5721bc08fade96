//! The stateful side of decoding (WIRE.md part B, "Detection rules"): which profile each packet
//! is decoded with — chosen per capture, per traffic selector (`--map`), or detected per flow
//! (`auto`) — and what only a sequence of packets reveals. The parser ([`Frame`]) stays
//! stateless; this type keeps per-flow memory beside it, so memory grows with the number of
//! flows, never with the number of packets. Besides detection it holds the extensions' state:
//! SDR's user immediates and VA check ([`SdrTracker`], `sdr_tracker.rs`) and ERD's NACK stream
//! ([`NackReassembler`], `erd_nacks.rs`).
//!
//! Detection looks ahead (WIRE.md B): a packet is labelled with what its flow is shown to be by
//! the flow's packets before and after it, so no packet is given out under a profile its flow
//! later turns out not to have. Three ways to drive it:
//! - a detection pass over the whole capture ([`Decoder::observe`] on every frame, then
//!   [`Decoder::settle`]), then the capture from its start ([`Decoder::decode`]): every flow is
//!   final before its first packet is given out (files: `decode`, `check`, the browser page);
//! - one pass with held-back frames ([`Decoder::decode_step`]): a frame whose flow has evidence
//!   but no decision yet is held, with every frame after it, until the flow is decided or given
//!   up on ([`PATIENCE`] packets of evidence that cannot decide; the caller bounds the frames
//!   it holds) —
//!   standard input and the analysers (`pcap-tools/analysis/src/session.rs`);
//! - [`Decoder::decode`] alone: single-pass, a packet labelled with what its flow is known to be
//!   when it arrives (an undecided flow's packets are `std`; those of flows decided later are
//!   counted in [`DetectionStats::packets_early`]).
//!
//! A flow becomes known when one of its packets identifies itself by a rule below (`rules.rs`).
//!
//! | profile | rule (tried on a packet of a flow not yet known) |
//! |---|---|
//! | netrt | BTH OpCode = `--netrt-opcode` with type 1 and a 20-byte body, or type 2 and a 4-byte body (also marks the reverse direction: the messages travel against the data) |
//! | dcp | a non-zero tag on RoCEv2 and a consistent DCP layout: a header-only packet (tag 11, exactly BTH + 3 bytes), or a WRITE Middle/Last whose DCP-parsed RETH has the DMA length of the flow's DCP-parsed First and the VA that follows from it; an RC Acknowledge tagged 01 (a DCP ACK, its AETH MSN the eMSN) towards the source of a flow detected as DCP |
//! | sdr | a UC RDMA WRITE Only with Immediate whose RETH VA is the one its immediate gives (`msg_id · max_message + pkt_off · MTU`, MTU as `--sdr-mtu` or the flow's largest DMA length so far), or a UC/UD SEND Only whose payload is a well-formed SDR control message |
//! | flor | a RC/UC SEND First/Only whose payload starts with a well-formed Flor SEND header; a UD SEND Only whose payload is a well-formed Flor ACK (24 + 4n bytes, no bitmap bit beyond entry n) between two addresses that carried RC/UC WRITE with Immediate earlier (or a Flor SEND header); then WRITE with Immediate between the same two addresses |
//! | erd | an RD or UD SEND whose payload starts with an EETH whose S_Len equals the bytes that follow it; TCP to or from `--erd-nack-port` (its NACK stream is reassembled here) |
//!
//! Ordinary RoCE traffic is usually marked DSCP 26 (ToS 0x68), whose bits 3..2 read as the DCP
//! data tag, so the tag alone never decides: a tagged flow is refuted (settled `std`, silently)
//! as soon as one of its packets cannot be DCP (a WRITE Middle/Last whose DCP reading is
//! inconsistent, a request whose DCP reading does not parse, a "header-only" packet of the
//! wrong length). A flow with evidence that nothing decides is `std`; it is flagged — its first
//! packet given out carries one warning naming the rule, its packets are counted as
//! unclassified — when rules matched in conflict on one of its packets, or it showed the tag on
//! [`UNSURE_AFTER`] packets that neither confirm nor refute DCP (SEND-only traffic). A flow
//! with fewer tagged packets and nothing else is plain `std`, silently, like a flow no rule
//! touches: a few DSCP-26 packets are no evidence worth a warning.

use std::net::{IpAddr, Ipv4Addr};

use crate::ext::{erd, flor, sdr, Ext};
use crate::field::FieldId;
use crate::frame::{DecodeOptions, Frame, LinkType};
use crate::params::Params;
use crate::profile::Profile;
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning};

mod erd_nacks;
mod rules;
mod sdr_tracker;

use crate::fxhash::FxBuild;
use crate::recent_map::RecentMap;

pub use erd_nacks::{is_nack_segment, NackBatch, NackBatchBuf, NackMessage, NackReassembler, Segment, StreamKey};
pub use sdr_tracker::{SdrAnnotation, SdrTracker};

/// Which packets a `--map` entry applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Selector {
    /// BTH DestQP.
    Qpn(u32),
    /// UDP source or destination port.
    UdpPort(u16),
    /// Packets between these two addresses, either direction.
    IpPair(IpAddr, IpAddr),
}

impl Selector {
    /// Parses `qpn=0x12`, `qpn=18`, `udp=4791`, `ip=10.0.0.1-10.0.0.2`.
    pub fn parse(s: &str) -> Result<Selector, String> {
        let (kind, v) = s.split_once('=').ok_or_else(|| format!("selector '{s}' needs KIND=VALUE"))?;
        let num = |v: &str| crate::params::parse_uint(v).ok_or_else(|| format!("'{v}' is not a number"));
        match kind {
            "qpn" => {
                let n = num(v)?;
                if n > 0xff_ffff {
                    return Err(format!("QPN {v} exceeds 24 bits"));
                }
                Ok(Selector::Qpn(n as u32))
            }
            "udp" => u16::try_from(num(v)?).map(Selector::UdpPort).map_err(|_| format!("UDP port {v} out of range")),
            "ip" => {
                let (a, b) = v.split_once('-').ok_or_else(|| format!("'{v}' needs ADDR-ADDR"))?;
                let p = |x: &str| x.parse::<IpAddr>().map_err(|_| format!("'{x}' is not an IP address"));
                Ok(Selector::IpPair(p(a)?, p(b)?))
            }
            _ => Err(format!("unknown selector kind '{kind}' (qpn, udp, ip)")),
        }
    }

    fn matches(&self, f: &Frame<'_>) -> bool {
        match *self {
            Selector::Qpn(q) => f.roce().is_some_and(|p| p.bth().dest_qp() == q),
            Selector::UdpPort(port) => f.udp_ports().is_some_and(|(s, d)| s == port || d == port),
            Selector::IpPair(a, b) => f.ip_addrs().is_some_and(|(s, d)| (s == a && d == b) || (s == b && d == a)),
        }
    }
}

/// Parses one `--map` entry, `SELECTOR=PROFILE` (`qpn=0x12=flor`).
pub fn parse_map(s: &str) -> Result<(Selector, Profile), String> {
    let (sel, prof) = s.rsplit_once('=').ok_or_else(|| format!("'{s}' needs SELECTOR=PROFILE"))?;
    let p = Profile::from_name(prof).ok_or_else(|| format!("unknown profile '{prof}' in '{s}'"))?;
    Ok((Selector::parse(sel)?, p))
}

/// How the profile of a packet is chosen when no `--map` entry applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProfileChoice {
    /// Detect per flow.
    #[default]
    Auto,
    /// Decode everything with this profile.
    Fixed(Profile),
}

impl ProfileChoice {
    pub fn parse(s: &str) -> Option<ProfileChoice> {
        if s == "auto" {
            Some(ProfileChoice::Auto)
        } else {
            Profile::from_name(s).map(ProfileChoice::Fixed)
        }
    }
}

/// Everything a [`Decoder`] is configured with.
#[derive(Clone, Debug, Default)]
pub struct DecoderOptions {
    pub profile: ProfileChoice,
    /// `--map SELECTOR=PROFILE` entries; the first that matches a packet decides.
    pub maps: Vec<(Selector, Profile)>,
    pub params: Params,
    /// Skip ICRC verification (it is on by default).
    pub no_verify: bool,
}

/// A flow as detection sees it: one direction of one QP between two addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FlowKey {
    src: IpAddr,
    dst: IpAddr,
    qp: u32,
}

/// Looked up once per frame: two IPv4 addresses hash as one word (equal keys still hash equal,
/// as `Eq` needs).
impl std::hash::Hash for FlowKey {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match (&self.src, &self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => h.write_u64(u64::from(s.to_bits()) << 32 | u64::from(d.to_bits())),
            (s, d) => (s, d).hash(h),
        }
        h.write_u32(self.qp);
    }
}

/// A flow whose packets are being held back until detection decides it (from
/// [`Decoder::decode_step`]): the handle [`Decoder::is_pending`] takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRef(u32);

/// What detection remembers about a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FlowState {
    profile: Option<Profile>,
    /// Tagged packets seen while DCP was neither confirmed nor refuted.
    dcp_tagged: u16,
    /// Of those, the SEND and READ requests: packets that can never confirm DCP by its layout
    /// (only a header-only packet could). A one-pass reader stops waiting after [`PATIENCE`]
    /// of them; WRITE packets keep it waiting, as the next one may decide (a
    /// sprayed flow's Middles can all come before its First).
    dcp_idle: u16,
    /// A tagged packet that cannot be DCP was seen: the tag is ordinary DSCP.
    dcp_refuted: bool,
    /// The flow's DCP-parsed WRITE First: (psn, va, dma_len, payload_len).
    dcp_first: Option<(u32, u64, u32, u32)>,
    /// Largest DMA length of the flow's 0x2B packets (SDR's default MTU).
    sdr_max_dma: u32,
    /// Packets on which several rules matched.
    ambiguous: u16,
    /// Detection gave up on the flow: it has evidence (an unconfirmed DCP tag, rules in
    /// conflict) but nothing decided it — after the whole file ([`Decoder::settle`]) or after
    /// [`PATIENCE`] packets that cannot decide in one pass. Its packets are `std` and flagged.
    unsure: bool,
    /// Detection stopped waiting for the flow, with too little evidence to flag it (a few DCP
    /// tags, which ordinary RoCE traffic marked DSCP 26 shows too): its packets are plain `std`.
    closed: bool,
    /// The detection warning was given (on the flow's first packet given out once unsure).
    warned: bool,
    /// A packet of the flow was given out with its detected profile (counted once).
    counted: bool,
    /// Packets given out as `std` while the flow was still undecided (look-ahead exceeded).
    early: u32,
}

impl FlowState {
    /// Something suggests a profile, but nothing has decided it yet.
    fn evidence(&self) -> bool {
        self.ambiguous > 0 || (self.dcp_tagged > 0 && !self.dcp_refuted)
    }

    /// Nothing suggests a profile: its packets go out `std`, only counted (what a flow's first
    /// packet finds). [`Decoder`]'s `unplain` counts the flows whose state is not.
    fn plain(&self) -> bool {
        self.profile.is_none() && !self.unsure && !self.evidence()
    }

    /// Its packets should wait for a decision.
    fn pending(&self) -> bool {
        self.profile.is_none() && !self.unsure && !self.closed && self.evidence()
    }

    /// Undecided with enough evidence to flag: rules in conflict, or [`UNSURE_AFTER`] DCP tags
    /// that no layout confirmed or refuted.
    fn doubtful(&self) -> bool {
        let unconfirmed = if self.dcp_refuted { 0 } else { self.dcp_tagged };
        self.profile.is_none() && (self.ambiguous > 0 || unconfirmed >= UNSURE_AFTER)
    }

    /// No more waiting: flagged when doubtful, plain `std` otherwise.
    fn conclude(&mut self) {
        if self.profile.is_none() {
            self.unsure |= self.doubtful();
            self.closed = true;
        }
    }
}

/// Counts for the end-of-run report, of the packets given out (printed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetectionStats {
    /// RoCE packets decoded per profile, in [`Profile::ALL`] order.
    pub packets: [u64; 6],
    /// Flows whose profile was detected.
    pub flows_detected: u64,
    /// Flows left `std` with a warning (ambiguous or unconfirmed evidence).
    pub flows_unsure: u64,
    /// Packets of those flows.
    pub packets_unsure: u64,
    /// Packets given out as `std` before their flow was detected as something else: the
    /// look-ahead's bound was exceeded ([`Decoder::decode`] alone has none).
    pub packets_early: u64,
}

/// What the decoder adds to a frame from its memory of earlier packets.
#[derive(Clone, Copy, Debug, Default)]
pub struct Extra {
    /// Detection's warning for this packet's flow (given once per flow).
    pub detection: Option<Warning>,
    /// SDR: the rebuilt user immediate and the VA check (its problem is in the frame's
    /// warnings).
    pub sdr: Option<SdrAnnotation>,
}

/// A frame with what the decoder's memory adds to it. It borrows the decoder (`'d`) for the
/// ERD NACK messages this frame completes.
#[derive(Clone, Copy, Debug)]
pub struct Decoded<'a, 'd> {
    pub frame: Frame<'a>,
    pub extra: Extra,
    /// ERD NACK messages completed by this TCP segment (its warnings are in `frame.warnings`).
    pub nacks: Option<NackBatch<'d>>,
}

impl<'a> Decoded<'a, '_> {
    /// Every field: the frame's walk, then the stateful additions.
    pub fn visit(&self, mut f: impl FnMut(FieldId, Value<'a>, core::ops::Range<usize>)) {
        if self.nacks.is_some() {
            f(FieldId::Profile, Value::Str(Profile::Erd.name()), 0..0);
        }
        self.frame.visit(&mut f);
        if let Some(n) = &self.nacks {
            n.visit(&mut f);
        }
        if let Some(a) = &self.extra.sdr {
            a.visit(&mut f);
        }
        if let Some(w) = self.extra.detection {
            f(FieldId::Warning, Value::Warning(w), 0..0);
        }
    }

    /// Number of warnings, the frame's and the decoder's.
    pub fn warning_count(&self) -> usize {
        self.frame.warnings.len() + self.extra.detection.is_some() as usize
    }

    /// The profile the packet was decoded with (`erd` for a NACK stream segment).
    pub fn profile(&self) -> Profile {
        if self.nacks.is_some() {
            Profile::Erd
        } else {
            self.frame.profile()
        }
    }
}

/// Tagged packets that neither confirm nor refute DCP after which an undecided flow is flagged
/// (fewer are ordinary DSCP-26 traffic, not worth a warning).
pub const UNSURE_AFTER: u16 = 8;

/// Packets of a flow that cannot decide it (tagged SEND or READ requests, packets on which rules
/// conflict) after which a one-pass reader stops holding the flow's packets back: they go out
/// as `std` (flagged when [`UNSURE_AFTER`] is reached too). Long enough for a multi-packet SEND
/// before a flow's first WRITE; short enough that ordinary SEND traffic marked DSCP 26 is not
/// held for the whole look-ahead.
pub const PATIENCE: u16 = 256;

/// What arriving told about a packet, for giving it out.
#[derive(Clone, Copy)]
enum Arrival {
    /// A `--map` entry or a fixed profile decides.
    Chosen(Profile),
    /// TCP: ERD's NACK stream, perhaps.
    Tcp { erd: bool },
    /// A RoCE packet of a flow detection keeps: the flow's slot ([`Decoder::slot`]), its state
    /// already updated by the rules. (The slot alone, not a copy of the state: read and written
    /// in place, the per-frame path copies no state.)
    Flow { slot: u32 },
    /// Not something detection keeps (not RoCE, no addresses).
    Other,
}

/// Where an arriving RoCE packet's flow stands before the rules ([`Decoder::before_rules`]).
enum Before {
    /// Not a flow detection keeps, or a plain flow's packet no rule looks at.
    Other,
    /// The flow's slot; no rule to try on this packet.
    Flow { slot: u32 },
    /// The flow's slot and key: the rules may learn from this packet.
    Rules { slot: u32, key: FlowKey },
}

/// Decodes a capture packet by packet with per-flow memory.
#[derive(Debug)]
pub struct Decoder {
    opts: DecoderOptions,
    /// Detection's memory of each flow: its slot in `flow_states` (a frame's flow is looked up
    /// once, recent flows in a direct-mapped table first; its state is read and written back
    /// by slot).
    flows: RecentMap<FlowKey, u32>,
    flow_states: Vec<FlowState>,
    stats: DetectionStats,
    nacks: NackReassembler,
    /// The capture interface of the frames being decoded ([`Decoder::set_interface`]).
    interface: u32,
    sdr: SdrTracker,
    /// Address pairs (lower address first) known to carry Flor.
    flor_pairs: std::collections::HashSet<(IpAddr, IpAddr), FxBuild>,
    /// (source, destination) of flows detected as DCP: their peers' ACKs are DCP ACKs.
    dcp_senders: std::collections::HashSet<(IpAddr, IpAddr), FxBuild>,
    /// Address pairs (lower address first) that carried RC/UC RDMA WRITE with Immediate.
    write_imm_pairs: std::collections::HashSet<(IpAddr, IpAddr), FxBuild>,
    /// Checksums only where detection needs them ([`Decoder::checksums_for_detection_only`]).
    lazy_verify: bool,
    /// A detection pass over the whole capture ran ([`Decoder::settle`]): flows are final.
    settled: bool,
    /// By BTH OpCode: whether any of the rules bound to opcodes ([`opcode_rules`]) looks further
    /// at a packet with it.
    opcode_rules: [bool; 256],
    /// How many flows' states are not [plain](FlowState::plain). While none is (an ordinary
    /// capture's flows are plain nearly all along: a DSCP-26 flow from its second packet), a
    /// frame the rules would not look at in a flow's first state arrives as
    /// [`Arrival::Other`], its flow not looked up: a plain flow's frame is given out exactly
    /// as that (counted, and SDR's tracker fed), and its flow's state could not change. Its
    /// flow gets its slot at the first frame that needs one.
    unplain: u32,
}

/// The OpCodes the netrt, sdr, flor and erd rules look at (each of them rejects any other
/// opcode at its first test, so for those they are not tried at all): NetRT's message opcode;
/// SDR's data and control opcodes; Flor's SEND First/Only, its ACK and WRITE with Immediate;
/// ERD's EETH-carrying SENDs. (The dcp rule looks at the ToS: it is always tried.)
fn opcode_rules(params: &Params) -> [bool; 256] {
    let mut t = [false; 256];
    for (op, applies) in (0..=255u8).zip(t.iter_mut()) {
        *applies = op == params.netrt_opcode
            || op == sdr::OPCODE_DATA
            || sdr::is_ctrl_opcode(op)
            || flor::send_header_only(op).is_some()
            || op == flor::OPCODE_ACK
            || flor::is_write_imm(op)
            || erd::carries_eeth(op);
    }
    t
}

impl Decoder {
    pub fn new(opts: DecoderOptions) -> Decoder {
        Decoder {
            opcode_rules: opcode_rules(&opts.params),
            opts,
            flows: RecentMap::default(),
            flow_states: Vec::new(),
            stats: DetectionStats::default(),
            nacks: NackReassembler::new(),
            interface: 0,
            sdr: SdrTracker::new(),
            flor_pairs: Default::default(),
            dcp_senders: Default::default(),
            write_imm_pairs: Default::default(),
            lazy_verify: false,
            settled: false,
            unplain: 0,
        }
    }

    /// For readers that never look at checksums (the analysers): frames are decoded without
    /// verifying the ICRC or the IPv4 header checksum (their status reads `Unchecked`, with no
    /// checksum warnings), except the decodings a detection rule compares, which are verified as
    /// always: every packet is labelled with the profile it gets with verification. A decoder
    /// made with `no_verify` verifies nothing either way.
    pub fn checksums_for_detection_only(mut self) -> Decoder {
        self.lazy_verify = true;
        self
    }

    pub fn options(&self) -> &DecoderOptions {
        &self.opts
    }

    pub fn stats(&self) -> DetectionStats {
        self.stats
    }

    /// Whether detection runs at all (`auto` with packets no `--map` entry covers).
    pub fn detects(&self) -> bool {
        self.opts.profile == ProfileChoice::Auto
    }

    /// A frame decoded `std` (the start of every path: detection and giving out read it).
    #[inline(always)]
    fn std_decoded<'a, 'd>(&self, link: LinkType, data: &'a [u8], orig_len: usize) -> Decoded<'a, 'd> {
        let mut out = Decoded { frame: Frame::new(link, data), extra: Extra::default(), nacks: None };
        out.frame.decode(orig_len, &self.frame_opts(Profile::Std));
        out
    }

    /// Decodes one frame as `profile` with the decoder's options and nothing else: no
    /// detection, no memory of other frames. For a frame an earlier pass gave out
    /// ([`Decoded::frame`]) and `profile` its [`Frame::decoded_as`], this is the same frame
    /// but for the warnings the decoder's memory appended to its own (an SDR fragment's problem,
    /// an ERD NACK stream's: only frames given an [`Extra::sdr`] or [`Decoded::nacks`] have
    /// any): what decodes a capture's frames on demand, after one pass over it, needs.
    pub fn decode_as<'a>(&self, link: LinkType, data: &'a [u8], orig_len: usize, profile: Profile) -> Frame<'a> {
        let mut frame = Frame::new(link, data);
        frame.decode(orig_len, &self.frame_opts(profile));
        frame
    }

    fn frame_opts(&self, profile: Profile) -> DecodeOptions {
        DecodeOptions { verify: !self.opts.no_verify && !self.lazy_verify, profile, params: self.opts.params }
    }

    /// The capture interface the next frames come from (pcapng interface id): ERD's NACK
    /// streams are reassembled per interface, since each tap of a multi-tap capture sees its own
    /// copy of the stream. 0 until set.
    pub fn set_interface(&mut self, interface: u32) {
        self.interface = interface;
    }

    /// Decodes one frame in a single pass: the packet is labelled with what its flow is known
    /// to be when it arrives and never relabelled (a flow still undecided gives `std`, counted
    /// in [`DetectionStats::packets_early`] if it is decided later). Readers that can look ahead
    /// use [`decode_step`](Self::decode_step) or a detection pass ([`observe`](Self::observe),
    /// then [`settle`](Self::settle)) instead. The frame is decoded where it is returned (a
    /// `Frame` is about 300 bytes: no copies of it per packet), a second time only when its
    /// flow's profile is not `std`.
    pub fn decode<'a>(&mut self, link: LinkType, data: &'a [u8], orig_len: usize) -> Decoded<'a, '_> {
        let mut out = self.std_decoded(link, data, orig_len);
        let arrival = self.arrive(&out.frame, link, orig_len);
        self.give_out(&mut out, orig_len, arrival);
        out
    }

    /// Decodes one frame with look-ahead. When its flow is decided (or there is nothing to
    /// decide), the decoded frame is passed to `f` where it was decoded (a [`Decoded`] is about
    /// 500 bytes: returned, it would be copied per packet) and `f`'s result is returned; when
    /// the caller should hold the frame back until its flow is decided, `Err` with the flow to
    /// wait for ([`is_pending`](Self::is_pending)). Once something is held, later frames go
    /// through [`observe`](Self::observe) and are given out in order with [`emit`](Self::emit).
    #[inline]
    pub fn decode_step<'a, R>(
        &mut self,
        link: LinkType,
        data: &'a [u8],
        orig_len: usize,
        f: impl FnOnce(&Decoded<'a, '_>) -> R,
    ) -> Result<R, FlowRef> {
        // `std_decoded`'s body, written out: through the helper, the returned `Decoded` is copied
        // into place (six more 528-byte copies in the release build's reading loops).
        let mut out = Decoded { frame: Frame::new(link, data), extra: Extra::default(), nacks: None };
        out.frame.decode(orig_len, &self.frame_opts(Profile::Std));
        let arrival = self.arrive(&out.frame, link, orig_len);
        if let Arrival::Flow { slot } = arrival {
            if self.is_pending(FlowRef(slot)) {
                return Err(FlowRef(slot));
            }
        }
        self.give_out(&mut out, orig_len, arrival);
        Ok(f(&out))
    }

    /// The decoder's part in a frame that a reader summarised without a [`Frame`] (the
    /// analysers' fast path, `pcap-tools/analysis/src/analyze/plain.rs`): a RoCEv2 packet over
    /// IPv4 from `src` to `dst` for QP `qp` with this BTH OpCode and IPv4 ToS, which
    /// [`decode_step`](Self::decode_step) would give out `std`, undetected and counted, its
    /// flow plain. Then it is counted as that would count it and `true` is returned; otherwise
    /// (a `--map`, a fixed profile, a flow with evidence or a profile, a frame a rule would look
    /// at) nothing is changed but the flow's slot, made as `decode_step` makes it, and `false`
    /// says to decode the frame with `decode_step` after all. Only for frames that are not held
    /// back, decoded in file order, and whose std decoding carries no extension and no CM MAD
    /// (the caller checks: QP1's UD SEND Only is not given here); `interface` is the record's.
    #[inline(always)]
    pub fn give_out_plain_v4(
        &mut self,
        interface: u32,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        qp: u32,
        opcode: u8,
        tos: u8,
    ) -> bool {
        // (`without_detection`'s usual case, where a frame that is not TCP goes on to the rules.)
        if !self.auto_without_maps() {
            return false;
        }
        let key = || Some(FlowKey { src: IpAddr::V4(src), dst: IpAddr::V4(dst), qp });
        match self.before_rules(opcode, false, Some(tos), key) {
            Before::Other => {}
            // (A plain state is never pending; `give_out`'s short way is for plain states.)
            Before::Flow { slot } if self.flow_states[slot as usize].plain() => {}
            // A flow with a profile or evidence, or rules to try: the long way.
            Before::Flow { .. } | Before::Rules { .. } => return false,
        }
        self.interface = interface;
        self.stats.packets[Profile::Std as usize] += 1;
        true
    }

    /// The detection half of a frame's decoding, for a frame that is held back or for a
    /// detection pass: updates the flow's memory; nothing is given out or counted. Returns the
    /// frame's flow when it is pending.
    pub fn observe(&mut self, link: LinkType, data: &[u8], orig_len: usize) -> Option<FlowRef> {
        // Nothing is given out: checksums only where a rule compares decodings (as
        // `checksums_for_detection_only`), which labels every flow as full verification does.
        let lazy = std::mem::replace(&mut self.lazy_verify, true);
        let frame = self.std_decoded(link, data, orig_len).frame;
        let arrival = self.arrive(&frame, link, orig_len);
        self.lazy_verify = lazy;
        match arrival {
            Arrival::Flow { slot } => self.is_pending(FlowRef(slot)).then_some(FlowRef(slot)),
            _ => None,
        }
    }

    /// Whether a held frame's flow is still undecided.
    pub fn is_pending(&self, flow: FlowRef) -> bool {
        self.flow_states.get(flow.0 as usize).is_some_and(|s| s.pending())
    }

    /// Gives out a frame that went through [`observe`](Self::observe) (held back): decoded with
    /// what its flow is known to be now, its detection run already.
    pub fn emit<'a>(&mut self, link: LinkType, data: &'a [u8], orig_len: usize) -> Decoded<'a, '_> {
        let mut out = self.std_decoded(link, data, orig_len);
        let arrival = self.known(&out.frame);
        self.give_out(&mut out, orig_len, arrival);
        out
    }

    /// Ends a detection pass over the whole capture (every frame given to
    /// [`observe`](Self::observe)): every flow is final — undecided flows are `std`, flagged on
    /// their first packet when the evidence was conflicting or strong (see the module
    /// documentation) — and the decoder is ready to give the
    /// capture out from its start: per-packet state (SDR, ERD NACKs, counts) starts afresh and
    /// no rule is tried again.
    pub fn settle(&mut self) {
        for s in &mut self.flow_states {
            s.conclude();
            s.early = 0;
        }
        self.stats = DetectionStats::default();
        self.nacks = NackReassembler::new();
        self.sdr = SdrTracker::new();
        self.settled = true;
        self.count_unplain();
    }

    /// The end of the capture in look-ahead mode: flows still pending are concluded as
    /// [`settle`](Self::settle) concludes them, so the frames still held go out as `std`.
    pub fn give_up_pending(&mut self) {
        for s in &mut self.flow_states {
            if s.pending() {
                s.conclude();
            }
        }
        self.count_unplain();
    }

    /// Counts the flows that are not plain anew (after concluding them all).
    fn count_unplain(&mut self) {
        self.unplain = self.flow_states.iter().filter(|s| !s.plain()).count() as u32;
    }

    /// A flow's slot in `flow_states`, made (with the default state) on the flow's first packet.
    #[inline]
    fn slot(&mut self, key: FlowKey) -> u32 {
        let next = self.flow_states.len() as u32;
        let states = &mut self.flow_states;
        self.flows.get_or_insert_with(key, || {
            states.push(FlowState::default());
            next
        })
    }

    #[inline]
    fn store(&mut self, slot: u32, state: FlowState) {
        let was = self.flow_states[slot as usize].plain();
        self.unplain = self.unplain + u32::from(was) - u32::from(state.plain());
        self.flow_states[slot as usize] = state;
    }

    /// `auto` detection without `--map` (the usual case): every flow's profile is detected.
    #[inline(always)]
    fn auto_without_maps(&self) -> bool {
        self.opts.maps.is_empty() && self.opts.profile == ProfileChoice::Auto
    }

    /// A frame detection has nothing to do with: TCP (ERD's NACK stream under `erd` or
    /// `auto`), or one a `--map` entry or the fixed profile decides.
    /// (Always inlined: called for every frame, it costs as much again as a call.)
    #[inline(always)]
    fn without_detection(&self, frame: &Frame<'_>) -> Option<Arrival> {
        if self.auto_without_maps() {
            // `auto` without `--map`, the usual case (every frame comes here): what the general
            // path below gives then, without walking it.
            return frame.tcp().is_some().then_some(Arrival::Tcp { erd: true });
        }
        let mapped = self.opts.maps.iter().find(|(s, _)| s.matches(frame)).map(|(_, p)| *p);
        let chosen = mapped.or(match self.opts.profile {
            ProfileChoice::Fixed(p) => Some(p),
            ProfileChoice::Auto => None,
        });
        if frame.tcp().is_some() {
            return Some(Arrival::Tcp { erd: matches!(chosen, Some(Profile::Erd) | None) });
        }
        chosen.map(Arrival::Chosen)
    }

    /// What the decoder knows of an arriving frame's flow, after trying the rules on it (when
    /// the flow is undecided and no detection pass settled it).
    fn arrive(&mut self, frame: &Frame<'_>, link: LinkType, orig_len: usize) -> Arrival {
        if let Some(a) = self.without_detection(frame) {
            return a;
        }
        let Some(roce) = frame.roce() else { return Arrival::Other };
        match self.before_rules(roce.opcode().0, frame.is_rocev1(), frame.tos(), || Self::flow_key(frame)) {
            Before::Other => Arrival::Other,
            Before::Flow { slot } => Arrival::Flow { slot },
            Before::Rules { slot, key } => {
                let mut state = self.flow_states[slot as usize];
                self.detect(frame, link, orig_len, key, &mut state);
                self.store(slot, state);
                Arrival::Flow { slot }
            }
        }
    }

    /// An arriving RoCE packet's flow, up to the rules (what [`arrive`](Self::arrive) does
    /// before [`detect`](Self::detect), and all the summary fast path's frames need,
    /// [`give_out_plain_v4`](Self::give_out_plain_v4)), from the packet's BTH OpCode, RoCEv1 or
    /// not, its IP ToS and its flow's key (`key`, read only when the flow is looked up; `None`
    /// without addresses). While every flow is plain, a packet the rules would not look at in
    /// a flow's first state is [`Before::Other`], its flow not looked up (see `unplain`).
    #[inline(always)]
    fn before_rules(
        &mut self,
        opcode: u8,
        rocev1: bool,
        tos: Option<u8>,
        key: impl FnOnce() -> Option<FlowKey>,
    ) -> Before {
        if self.unplain == 0 && !self.rules_may_look(opcode, rocev1, tos, false) {
            return Before::Other;
        }
        let Some(key) = key() else { return Before::Other };
        let slot = self.slot(key);
        let state = &self.flow_states[slot as usize];
        if !self.settled && state.profile.is_none() && self.rules_may_look(opcode, rocev1, tos, state.dcp_refuted) {
            return Before::Rules { slot, key };
        }
        Before::Flow { slot }
    }

    /// Whether [`detect`](Self::detect) could learn anything from a frame of an undecided flow
    /// whose DCP tag is refuted or not: false only when every rule would return at its first
    /// tests, changing nothing — an opcode none of the opcode-bound rules looks at ([`opcode_rules`]), and no
    /// DCP tag the dcp rule (`rules.rs`) goes on with (none; a refuted flow; RoCEv1; the data
    /// tag on a packet that would carry no DCP header, such as every ACK of a DSCP-26 flow).
    /// `detect`'s own ending changes nothing then either: its one-pass bound is checked after
    /// every frame that could move it. Skipping these frames (nearly all of an ordinary
    /// capture's, whose flows stay undecided to the end) spares a copy of the flow's state
    /// each way and the rules' tests: the same state, the same output. (Of the flow's state it
    /// reads only whether its DCP tag is refuted: [`before_rules`](Self::before_rules) asks with
    /// `false`, a flow's first state, while every flow is plain. Of the packet, its BTH OpCode,
    /// whether it is RoCEv1, its IP ToS or traffic class.)
    #[inline(always)]
    fn rules_may_look(&self, opcode: u8, rocev1: bool, tos: Option<u8>, dcp_refuted: bool) -> bool {
        if self.opcode_rules[opcode as usize] {
            return true;
        }
        if rocev1 || dcp_refuted {
            return false;
        }
        match tos.map(|t| crate::ext::dcp::tag(t, self.opts.params.dcp_tag_shift)) {
            None | Some(crate::ext::dcp::TAG_NONE) => false,
            Some(crate::ext::dcp::TAG_DATA) => crate::ib::opcode::Opcode(opcode).is_dcp_request(),
            Some(_) => true,
        }
    }

    /// The arrival of a frame already observed: its flow as known now, no rule tried.
    fn known(&mut self, frame: &Frame<'_>) -> Arrival {
        if let Some(a) = self.without_detection(frame) {
            return a;
        }
        match Self::flow_key(frame) {
            Some(key) => Arrival::Flow { slot: self.slot(key) },
            None => Arrival::Other,
        }
    }

    /// The output half: the frame decoded with its profile, the flow's flags and the counts,
    /// the SDR tracker and the ERD NACK stream (in the order frames are given out).
    #[inline(always)]
    fn give_out<'a, 's>(&'s mut self, out: &mut Decoded<'a, 's>, orig_len: usize, arrival: Arrival) {
        // The common case in line: a frame of an undecided flow without evidence (nearly every
        // frame of an ordinary capture) is given out `std` as decoded, only counted — what
        // `give_out_any` does for it, with no call.
        if let Arrival::Flow { slot } = arrival {
            if let Some(state) = self.flow_states.get(slot as usize) {
                if state.plain() && !matches!(out.frame.ext(), Ext::Sdr(_)) {
                    if out.frame.roce().is_some() {
                        self.stats.packets[out.frame.profile() as usize] += 1;
                    }
                    return;
                }
            }
        }
        self.give_out_any(out, orig_len, arrival);
    }

    /// [`give_out`](Self::give_out) for any frame.
    fn give_out_any<'a, 's>(&'s mut self, out: &mut Decoded<'a, 's>, orig_len: usize, arrival: Arrival) {
        let (frame, extra) = (&mut out.frame, &mut out.extra);
        match arrival {
            Arrival::Tcp { erd } => {
                let nacks = if erd {
                    self.nacks.push_frame_on(frame, self.opts.params.erd_nack_port, self.interface)
                } else {
                    None
                };
                if let Some(n) = &nacks {
                    for w in n.warnings.iter() {
                        frame.warnings.push(*w);
                    }
                }
                out.nacks = nacks;
                return;
            }
            Arrival::Chosen(p) => self.redecode_in_place(frame, orig_len, p),
            Arrival::Flow { slot } => {
                if let Some(p) = self.flow_states[slot as usize].profile {
                    self.redecode_in_place(frame, orig_len, p);
                }
                let stats = &mut self.stats;
                let state = &mut self.flow_states[slot as usize];
                match state.profile {
                    Some(_) if !state.counted => {
                        state.counted = true;
                        stats.flows_detected += 1;
                    }
                    Some(_) => {}
                    None if state.unsure => {
                        if !state.warned {
                            state.warned = true;
                            stats.flows_unsure += 1;
                            let note =
                                if state.ambiguous > 0 { Note::DetectionAmbiguous } else { Note::DcpUnconfirmed };
                            extra.detection =
                                Some(Warning::Ext { layer: Layer::Detection, what: ExtProblem::Other(note) });
                        }
                        stats.packets_unsure += 1;
                    }
                    // Undecided with evidence: counted, in case a later packet decides it.
                    None if state.evidence() => state.early = state.early.saturating_add(1),
                    None => {}
                }
            }
            Arrival::Other => {}
        }
        if frame.roce().is_some() {
            self.stats.packets[frame.profile() as usize] += 1;
        }
        // (The addresses are read only for SDR frames.)
        if let Some((a, b)) = matches!(frame.ext(), Ext::Sdr(_)).then(|| frame.ip_addrs()).flatten() {
            // SDR spreads a message over several QPs (channels, generations): key by the
            // address pair so every fragment of a message meets in one place.
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (a, b).hash(&mut h);
            extra.sdr = self.sdr.observe_frame(h.finish(), &self.opts.params, frame);
            if let Some(w) = extra.sdr.and_then(|a| a.problem) {
                frame.warnings.push(w);
            }
        }
    }

    fn redecode<'a>(&self, std: Frame<'a>, link: LinkType, orig_len: usize, p: Profile) -> Frame<'a> {
        if p == Profile::Std || !std.is_decoded() {
            std
        } else {
            Frame::parse(link, std.data(), orig_len, &self.frame_opts(p))
        }
    }

    /// [`redecode`](Self::redecode) over the `std` decoding in place.
    #[inline]
    fn redecode_in_place(&self, frame: &mut Frame<'_>, orig_len: usize, p: Profile) {
        if p != Profile::Std && frame.is_decoded() {
            *frame = Frame::new(frame.link(), frame.data());
            frame.decode(orig_len, &self.frame_opts(p));
        }
    }

    fn flow_key(f: &Frame<'_>) -> Option<FlowKey> {
        let (src, dst) = f.ip_addrs()?;
        let qp = f.roce()?.bth().dest_qp();
        Some(FlowKey { src, dst, qp })
    }

    /// Tries the rules on a `std`-decoded frame of an undecided flow, updating the flow's
    /// memory (`state`) and the decoder's address-pair sets. The frame is left as it is: giving
    /// out decodes it with the flow's profile.
    fn detect(&mut self, frame: &Frame<'_>, link: LinkType, orig_len: usize, key: FlowKey, state: &mut FlowState) {
        let pair = |f: &Frame<'_>| f.ip_addrs().map(|(a, b)| if a <= b { (a, b) } else { (b, a) });
        let Some(roce) = frame.roce() else { return };
        if flor::is_write_imm(roce.opcode().0) {
            if let Some(p) = pair(frame) {
                if !self.write_imm_pairs.contains(&p) {
                    self.write_imm_pairs.insert(p);
                }
            }
        }
        let mut first: Option<Profile> = None;
        let mut n = 0usize;
        // Each rule in turn (written out rather than looped over: each call is then compiled for
        // its one profile, and most rules reject a packet in a compare or two); the rules bound to
        // opcodes only for the opcodes they look at.
        macro_rules! rule {
            ($p:expr) => {
                if self.try_rule($p, frame, link, orig_len, state).is_some() {
                    first.get_or_insert($p);
                    n += 1;
                }
            };
        }
        let by_opcode = self.opcode_rules[roce.opcode().0 as usize];
        if by_opcode {
            rule!(Profile::Netrt);
        }
        rule!(Profile::Dcp);
        if by_opcode {
            rule!(Profile::Sdr);
            rule!(Profile::Flor);
            rule!(Profile::Erd);
        }
        match (n, first) {
            (1, Some(p)) => {
                state.profile = Some(p);
                self.stats.packets_early += state.early as u64;
                state.early = 0;
                if p == Profile::Flor {
                    if let Some(pr) = pair(frame) {
                        self.flor_pairs.insert(pr);
                    }
                }
                if p == Profile::Dcp {
                    self.dcp_senders.insert((key.src, key.dst));
                }
                if p == Profile::Netrt {
                    // The messages travel against the data: label the served flow too.
                    let rev = FlowKey { src: key.dst, dst: key.src, qp: key.qp };
                    let rev = self.slot(rev);
                    let e = &mut self.flow_states[rev as usize];
                    if e.profile.is_none() {
                        self.unplain += u32::from(e.plain());
                        e.profile = Some(Profile::Netrt);
                    }
                }
            }
            (0, _) => {}
            _ => state.ambiguous = state.ambiguous.saturating_add(1),
        }
        let idle = if state.dcp_refuted { 0 } else { state.dcp_idle };
        if state.pending() && state.ambiguous.saturating_add(idle) >= PATIENCE {
            // Waited long enough in one pass (ambiguity counts towards the bound too).
            state.conclude();
            if state.unsure {
                // Its packets given out so far were `std` and are now known unclassified.
                self.stats.packets_unsure += state.early as u64;
                state.early = 0;
            }
        }
    }
}
