//! The stateful side of decoding (WIRE.md part B, "Detection rules"): which profile each packet
//! is decoded with — chosen per capture, per traffic selector (`--map`), or detected per flow
//! (`auto`) — and what only a sequence of packets reveals. The parser ([`Frame`]) stays
//! stateless; this type keeps per-flow memory beside it, so memory grows with the number of
//! flows, never with the number of packets. Besides detection it holds the extensions' state:
//! SDR's user immediates and VA check ([`SdrTracker`], `sdr_tracker.rs`) and ERD's NACK stream
//! ([`NackReassembler`], `erd_nacks.rs`).
//!
//! Detection is single-pass: a packet is labelled with what its flow is known to be when it
//! arrives and is never relabelled. A flow becomes known when one of its packets identifies
//! itself by a rule below; before that its packets are `std`.
//!
//! | profile | rule (tried on a packet of a flow not yet known) |
//! |---|---|
//! | netrt | BTH OpCode = `--netrt-opcode` with type 1 and a 20-byte body, or type 2 and a 4-byte body (also marks the reverse direction: the messages travel against the data) |
//! | dcp | a non-zero tag on RoCEv2 and a consistent DCP layout: a header-only packet (tag 11, exactly BTH + 3 bytes), or a WRITE Middle/Last whose DCP-parsed RETH has the DMA length of the flow's DCP-parsed First and the VA that follows from it |
//! | sdr | a UC RDMA WRITE Only with Immediate whose RETH VA is the one its immediate gives (`msg_id · max_message + pkt_off · MTU`, MTU as `--sdr-mtu` or the flow's largest DMA length so far), or a UC/UD SEND Only whose payload is a well-formed SDR control message |
//! | flor | a RC/UC SEND First/Only whose payload starts with a well-formed Flor SEND header, or a UD SEND Only whose payload is a well-formed Flor ACK (24 + 4n bytes, no bitmap bit beyond entry n); then WRITE with Immediate between the same two addresses |
//! | erd | an RD or UD SEND whose payload starts with an EETH whose S_Len equals the bytes that follow it; TCP to or from `--erd-nack-port` (its NACK stream is reassembled here) |
//!
//! Ordinary RoCE traffic is usually marked DSCP 26 (ToS 0x68), whose bits 3..2 read as the DCP
//! data tag, so the tag alone never decides: a tagged flow is refuted (settled `std`, silently)
//! as soon as one of its packets cannot be DCP (a WRITE Middle/Last whose DCP reading is
//! inconsistent, a request whose DCP reading does not parse, a "header-only" packet of the
//! wrong length). When several rules match one packet, or a flow has shown the tag on
//! [`DCP_UNSURE_AFTER`] packets that neither confirm nor refute DCP (SEND-only traffic), the
//! flow stays `std` and gets one warning naming the rule. A flow no rule touches gets none.

use std::collections::HashMap;
use std::net::IpAddr;

use crate::ext::{dcp, erd, flor, netrt, sdr, Ext};
use crate::field::FieldId;
use crate::frame::{DecodeOptions, Frame, LinkType};
use crate::ib::{Opcode, Position};
use crate::params::Params;
use crate::profile::Profile;
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning};

mod erd_nacks;
mod sdr_tracker;

use crate::fxhash::FxBuild;

pub use erd_nacks::{is_nack_segment, NackBatch, NackMessage, NackReassembler, Segment, StreamKey};
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
        match (self.src, self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => h.write_u64(u64::from(s.to_bits()) << 32 | u64::from(d.to_bits())),
            (s, d) => (s, d).hash(h),
        }
        h.write_u32(self.qp);
    }
}

/// What detection remembers about a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FlowState {
    profile: Option<Profile>,
    /// A warning about this flow was already given.
    warned: bool,
    /// Tagged packets seen while DCP was neither confirmed nor refuted.
    dcp_tagged: u16,
    /// A tagged packet that cannot be DCP was seen: the tag is ordinary DSCP.
    dcp_refuted: bool,
    /// The flow's DCP-parsed WRITE First: (psn, va, dma_len, payload_len).
    dcp_first: Option<(u32, u64, u32, u32)>,
    /// Largest DMA length of the flow's 0x2B packets (SDR's default MTU).
    sdr_max_dma: u32,
}

/// Counts for the end-of-run report.
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
    /// A frame over `data` not decoded yet, for [`Decoder::decode_into`].
    #[inline(always)]
    pub fn new(link: LinkType, data: &'a [u8]) -> Self {
        Decoded { frame: Frame::new(link, data), extra: Extra::default(), nacks: None }
    }

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

/// Tagged packets after which a flow that neither confirms nor refutes DCP is reported once.
pub const DCP_UNSURE_AFTER: u16 = 8;

/// Decodes a capture packet by packet with per-flow memory.
#[derive(Debug)]
pub struct Decoder {
    opts: DecoderOptions,
    flows: HashMap<FlowKey, FlowState, FxBuild>,
    stats: DetectionStats,
    nacks: NackReassembler,
    sdr: SdrTracker,
    /// Address pairs (lower address first) known to carry Flor.
    flor_pairs: std::collections::HashSet<(IpAddr, IpAddr), FxBuild>,
    /// Checksums only where detection needs them ([`Decoder::checksums_for_detection_only`]).
    lazy_verify: bool,
    /// By BTH OpCode: whether any of the rules bound to opcodes ([`opcode_rules`]) looks further
    /// at a packet with it.
    opcode_rules: [bool; 256],
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
            flows: HashMap::default(),
            stats: DetectionStats::default(),
            nacks: NackReassembler::new(),
            sdr: SdrTracker::new(),
            flor_pairs: Default::default(),
            lazy_verify: false,
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

    fn frame_opts(&self, profile: Profile) -> DecodeOptions {
        DecodeOptions { verify: !self.opts.no_verify && !self.lazy_verify, profile, params: self.opts.params }
    }

    /// What a detection rule compares: the packet decoded with `p`, and the number of problems
    /// of its `std` decoding — both as verification would have them.
    fn candidate<'a>(&self, std: &Frame<'a>, link: LinkType, orig_len: usize, p: Profile) -> (Frame<'a>, usize) {
        if !self.lazy_verify || self.opts.no_verify {
            return (self.redecode(*std, link, orig_len, p), std.warnings.problem_count());
        }
        let verified = |profile| DecodeOptions { verify: true, profile, params: self.opts.params };
        let std = Frame::parse(link, std.data(), orig_len, &verified(Profile::Std));
        let problems = std.warnings.problem_count();
        let f = if p == Profile::Std || !std.is_decoded() { std } else { Frame::parse(link, std.data(), orig_len, &verified(p)) };
        (f, problems)
    }

    /// Decodes one frame. The frame is decoded where it is returned (a `Frame` is about 300
    /// bytes: no copies of it per packet), a second time only when its flow's profile is not
    /// `std`. (A per-packet loop saves the return's copy of the [`Decoded`], about 500 bytes,
    /// with [`decode_into`](Self::decode_into).)
    pub fn decode<'a>(&mut self, link: LinkType, data: &'a [u8], orig_len: usize) -> Decoded<'a, '_> {
        let mut out = Decoded::new(link, data);
        self.decode_into(&mut out, orig_len);
        out
    }

    /// [`decode`](Self::decode) into `out`, made by [`Decoded::new`] over the frame's captured
    /// bytes (call once per `out`).
    pub fn decode_into<'a, 'd>(&'d mut self, out: &mut Decoded<'a, 'd>, orig_len: usize) {
        let link = out.frame.link();
        out.frame.decode(orig_len, &self.frame_opts(Profile::Std));
        let mapped = self.opts.maps.iter().find(|(s, _)| s.matches(&out.frame)).map(|(_, p)| *p);
        let chosen = mapped.or(match self.opts.profile {
            ProfileChoice::Fixed(p) => Some(p),
            ProfileChoice::Auto => None,
        });
        if out.frame.tcp().is_some() {
            // ERD's NACK path: TCP to or from the NACK port, under erd or auto.
            let port = self.opts.params.erd_nack_port;
            let nacks = match chosen {
                Some(Profile::Erd) | None => self.nacks.push_frame(&out.frame, port),
                Some(_) => None,
            };
            if let Some(n) = &nacks {
                for w in n.warnings.iter() {
                    out.frame.warnings.push(*w);
                }
            }
            out.nacks = nacks;
            return;
        }
        match chosen {
            Some(p) => self.redecode_in_place(&mut out.frame, orig_len, p),
            None => out.extra = self.detect(&mut out.frame, link, orig_len),
        }
        let frame = &mut out.frame;
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
            out.extra.sdr = self.sdr.observe_frame(h.finish(), &self.opts.params, frame);
            if let Some(w) = out.extra.sdr.and_then(|a| a.problem) {
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

    /// Detection for one frame, `std` decoded in `frame`: labels it with its flow's profile
    /// (decoding it again with that profile) and updates the flow's memory.
    fn detect<'a>(&mut self, frame: &mut Frame<'a>, link: LinkType, orig_len: usize) -> Extra {
        let Some(key) = Self::flow_key(frame) else { return Extra::default() };
        let before = self.flows.get(&key).copied();
        // (Declared mutable here rather than moved into a mutable binding below: the move was
        // compiled as a copy whose reads overlapped its own just-written bytes at other widths,
        // a store-forwarding stall that cost a tenth of the decoding.)
        let mut state = before.unwrap_or_default();
        if let Some(p) = state.profile {
            self.redecode_in_place(frame, orig_len, p);
            return Extra::default();
        }
        let std: &Frame<'a> = frame;
        let mut matched: [Option<(Profile, Frame<'a>)>; 2] = [None, None];
        let mut n = 0usize;
        // Each rule in turn (written out rather than looped over: each call is then compiled
        // for its one profile, and most rules reject a packet in a compare or two).
        macro_rules! rule {
            ($p:expr) => {
                if let Some(f) = self.try_rule($p, std, link, orig_len, &mut state) {
                    if n < 2 {
                        matched[n] = Some(($p, f));
                    }
                    n += 1;
                }
            };
        }
        let by_opcode = std.roce().is_some_and(|p| self.opcode_rules[p.opcode().0 as usize]);
        if by_opcode {
            rule!(Profile::Netrt);
        }
        rule!(Profile::Dcp);
        if by_opcode {
            rule!(Profile::Sdr);
            rule!(Profile::Flor);
            rule!(Profile::Erd);
        }
        let mut extra = Extra::default();
        let out = match (n, matched[0]) {
            (1, Some((p, f))) => {
                state.profile = Some(p);
                self.stats.flows_detected += 1;
                if p == Profile::Flor {
                    if let Some((a, b)) = std.ip_addrs() {
                        self.flor_pairs.insert(if a <= b { (a, b) } else { (b, a) });
                    }
                }
                if p == Profile::Netrt {
                    // The messages travel against the data: label the served flow too.
                    let rev = FlowKey { src: key.dst, dst: key.src, qp: key.qp };
                    let e = self.flows.entry(rev).or_default();
                    if e.profile.is_none() {
                        e.profile = Some(Profile::Netrt);
                    }
                }
                Some(f)
            }
            (0, _) => {
                if state.dcp_tagged >= DCP_UNSURE_AFTER && !state.dcp_refuted && !state.warned {
                    state.warned = true;
                    self.stats.flows_unsure += 1;
                    // Every tagged packet so far (this one included) went unclassified.
                    self.stats.packets_unsure += state.dcp_tagged as u64 - 1;
                    extra.detection = Some(Warning::Ext { layer: Layer::Detection, what: ExtProblem::Other(Note::DcpUnconfirmed) });
                }
                if state.warned {
                    self.stats.packets_unsure += 1;
                }
                None
            }
            _ => {
                if !state.warned {
                    state.warned = true;
                    self.stats.flows_unsure += 1;
                    extra.detection = Some(Warning::Ext { layer: Layer::Detection, what: ExtProblem::Other(Note::DetectionAmbiguous) });
                }
                self.stats.packets_unsure += 1;
                None
            }
        };
        if let Some(f) = out {
            *frame = f;
        }
        // A flow without an entry reads as the default state: store only what changed.
        if before != Some(state) {
            self.flows.insert(key, state);
        }
        extra
    }

    /// Applies one detection rule; returns the packet decoded with `p` when it identifies
    /// itself as such.
    #[inline(always)]
    fn try_rule<'a>(&self, p: Profile, std: &Frame<'a>, link: LinkType, orig_len: usize, state: &mut FlowState) -> Option<Frame<'a>> {
        let roce = std.roce()?;
        let params = &self.opts.params;
        let opcode = roce.opcode().0;
        match p {
            Profile::Netrt => {
                if opcode != params.netrt_opcode {
                    return None;
                }
                let (f, _) = self.candidate(std, link, orig_len, p);
                let ok = matches!(f.ext(), Ext::Netrt(netrt::Netrt::Request { .. } | netrt::Netrt::Unfulfilled { .. }));
                (ok && f.warnings.problem_count() == 0).then_some(f)
            }
            Profile::Dcp => {
                if std.is_rocev1() || state.dcp_refuted {
                    return None;
                }
                let tag = dcp::tag(std.tos()?, params.dcp_tag_shift);
                if tag == dcp::TAG_NONE {
                    return None;
                }
                // Only packets that would carry DCP headers say anything: a tagged ACK or READ
                // response is as ordinary under DCP as outside it.
                if tag == dcp::TAG_ACK || (tag == dcp::TAG_DATA && !Opcode(opcode).is_dcp_request()) {
                    return None;
                }
                state.dcp_tagged = state.dcp_tagged.saturating_add(1);
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                let r = f.roce()?;
                if tag == dcp::TAG_HO {
                    let ho = r.wire_len() == 15 && f.warnings.problem_count() == 0;
                    state.dcp_refuted |= !ho;
                    return ho.then_some(f);
                }
                if f.warnings.problem_count() > std_problems {
                    // The DCP layout does not even parse: ordinary traffic with this DSCP.
                    state.dcp_refuted = true;
                    return None;
                }
                let (Some(reth), true) = (r.reth(), Opcode(opcode).is_write()) else { return None };
                let psn = r.bth().psn();
                match Opcode(opcode).position() {
                    Some(Position::First) => {
                        state.dcp_first = Some((psn, reth.va(), reth.dma_len(), r.payload_len() as u32));
                        None
                    }
                    Some(Position::Middle | Position::Last) => {
                        let (fpsn, fva, flen, fpay) = state.dcp_first?;
                        let k = crate::ib::psn::diff(fpsn, psn);
                        let want_va = fva.wrapping_add((k as i64 as u64).wrapping_mul(fpay as u64));
                        let ok = k > 0 && flen != 0 && reth.dma_len() == flen && reth.va() == want_va;
                        state.dcp_refuted |= !ok;
                        ok.then_some(f)
                    }
                    _ => None,
                }
            }
            Profile::Sdr => {
                let payload = roce.payload();
                let candidate = match opcode {
                    sdr::OPCODE_DATA => true,
                    op if sdr::is_ctrl_opcode(op) => sdr::is_ctrl(payload),
                    _ => false,
                };
                if !candidate {
                    return None;
                }
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                if f.warnings.problem_count() > std_problems {
                    return None;
                }
                match f.ext() {
                    Ext::Sdr(sdr::Sdr::Ctrl(_)) => Some(f),
                    Ext::Sdr(sdr::Sdr::Data(d)) => {
                        let reth = f.roce()?.reth()?;
                        state.sdr_max_dma = state.sdr_max_dma.max(reth.dma_len());
                        let mtu = sdr::effective_mtu(params, state.sdr_max_dma);
                        (sdr::expected_va(params, mtu, d.msg_id, d.pkt_off) == Some(reth.va())).then_some(f)
                    }
                    _ => None,
                }
            }
            Profile::Flor => {
                let payload = roce.payload();
                let wire = roce.payload_len();
                let candidate = match opcode {
                    op if flor::send_header_only(op).is_some() => {
                        flor::is_send_header(payload, wire, flor::send_header_only(op) == Some(true))
                    }
                    flor::OPCODE_ACK => flor::is_ack(payload, wire),
                    op if flor::is_write_imm(op) => {
                        let (a, b) = std.ip_addrs()?;
                        self.flor_pairs.contains(&if a <= b { (a, b) } else { (b, a) })
                    }
                    _ => false,
                };
                if !candidate {
                    return None;
                }
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                (matches!(f.ext(), Ext::Flor(_)) && f.warnings.problem_count() <= std_problems).then_some(f)
            }
            Profile::Erd => {
                if !erd::detect(roce) {
                    return None;
                }
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                (matches!(f.ext(), Ext::Erd(_)) && f.warnings.problem_count() <= std_problems).then_some(f)
            }
            _ => None,
        }
    }
}
