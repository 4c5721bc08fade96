//! rocescope-replay: `rocescope replay` (docs/replay.md), a capture judged against the
//! reference stacks. Its own crate, so the analysis library and the browser build stay free of
//! the stacks (docs/ARCHITECTURE.md); the command line calls [`replay`].
//!
//! Two passes over the capture: the analysers' flow table first (which flows are a
//! connection's two directions, which transport each shows, where the tap is), then the frames
//! again, each connection's requests driving a reference responder ([`judge`]) whose answers
//! (read by `answer.rs`) are compared with the captured ones. Findings name their frames, the rule ([`rules`]) with
//! its source, what was expected and what was seen. What the tap cannot judge is listed with
//! the reason, not guessed at.
//!
//! Judged: the responder's rules (NAKs, IRN's selective NAKs, DCP's returned header-only
//! packets, ACK progress, READ response order) at the responder's tap ([`judge`]); the
//! requester's (needless retransmissions, Go-Back-N's go-back, early timeouts, with the inferred
//! timer) at the requester's tap (`requester.rs`); what a tap can still say of the end it is not
//! beside, and a fabric tap of both (`far.rs`); CNP pacing (`cnp.rs`); with `--counters`, two
//! `ethtool -S` snapshots of the NIC at a host-side tap reconciled with what the capture shows of
//! that host ([`counters`], [`replay_counters`]). What comes next: docs/replay.md "Not yet
//! judged".

mod answer;
mod cnp;
pub mod counters;
mod erd;
mod far;
mod flor;
mod flor_ack;
pub mod judge;
mod netrt;
mod rate;
mod recent;
mod requester;
pub mod rules;
mod sdr;

use std::collections::HashMap;
use std::io::Read;
use std::net::IpAddr;
use std::ops::ControlFlow;

use serde::Serialize;

use rocescope_analysis::analyze::pkt::{Class, Pkt, Seen};
use rocescope_analysis::analyze::report::{FlowRow, Role, Tap, Transport};
use rocescope_analysis::analyze::{Analyzer, Options as AnalyzeOptions};
use rocescope_analysis::capture::CaptureError;
use rocescope_analysis::session::Session;
use rocescope_codec::ext::erd::whole_nacks;
use rocescope_codec::ext::flor::Flor;
use rocescope_codec::ext::netrt::Netrt;
use rocescope_codec::ext::Ext;
use rocescope_codec::ib::opcode::Position;
use rocescope_codec::ib::psn;
use rocescope_codec::Params;
use rocescope_stacks::{Host, StackKind, Timeouts};

use counters::{CounterRow, CountersHost, CountersInput, Verdict};
use judge::{ResponderJudge, Shape};
use requester::{RequesterJudge, Vantage};

/// Which reference stack judges a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackChoice {
    /// Per connection, by the transport its packets show: `dcp` for DCP, `irn` when its
    /// responder sends IRN's selective NAKs, else `gbn` (what RoCE NICs do).
    Auto,
    Fixed(StackKind),
}

impl StackChoice {
    pub fn parse(s: &str) -> Option<StackChoice> {
        if s == "auto" {
            return Some(StackChoice::Auto);
        }
        StackKind::from_name(s).map(StackChoice::Fixed)
    }

    /// The stack for a connection whose requests flow shows `t`; `None` when no reference
    /// stack exists for it yet.
    fn for_transport(self, t: Transport) -> Option<StackKind> {
        match (self, t) {
            (StackChoice::Fixed(k), _) => Some(k),
            (StackChoice::Auto, Transport::Dcp) => Some(StackKind::Dcp),
            (StackChoice::Auto, Transport::Irn) => Some(StackKind::Irn),
            (StackChoice::Auto, Transport::Gbn | Transport::Rc) => Some(StackKind::Gbn),
            (StackChoice::Auto, Transport::Erd) => Some(StackKind::Erd),
        }
    }
}

/// What replay is asked.
#[derive(Clone, Debug)]
pub struct Options {
    pub stack: StackChoice,
    /// How long after the request that calls for it an answer (NAK, selective NAK, returned
    /// header-only packet) may take to show at the responder's tap.
    pub answer_window_ns: u64,
    /// How long after an acknowledgement reaches the requester it may still send a packet the
    /// acknowledgement covers (already on its way to the wire).
    pub reaction_ns: u64,
    pub params: Params,
    /// The requesters' timers the reference runs with (`--param`).
    pub timeouts: Timeouts,
    /// Whether `--param` set a timer: timeouts are then judged against it, else against the
    /// one their kind on their connection agrees on (the inferred timer).
    pub timers_given: bool,
    /// The responder NIC's CNP interval (`--param cnp_interval_ns`; DCQCN's N, 50 µs).
    pub cnp_interval_ns: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            stack: StackChoice::Auto,
            answer_window_ns: 100_000,
            reaction_ns: 5_000,
            params: Params::default(),
            timeouts: Timeouts::default(),
            timers_given: false,
            cnp_interval_ns: 50_000,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingKind {
    /// The captured behaviour departs from the reference's.
    Departure,
    /// The tap cannot tell a departure from a capture gap or a network loss (both explanations
    /// are given).
    Ambiguous,
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub rule: &'static str,
    pub source: &'static str,
    /// The flow (`flows`' id) whose rule it is: the connection's requests flow.
    pub flow: String,
    /// The frames it is about (the cause first).
    pub frames: Vec<u64>,
    pub time_ns: u64,
    pub expected: String,
    pub seen: String,
}

/// A connection judged.
#[derive(Clone, Debug, Serialize)]
pub struct Connection {
    /// The requests flow, and the responses flow.
    pub flow: String,
    pub peer: String,
    pub interface: u32,
    pub stack: &'static str,
    pub tap: Tap,
    pub requests: u64,
    pub responses: u64,
    pub departures: u64,
    /// Parameters the capture shows, with their evidence.
    pub inferred: Vec<Inferred>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Inferred {
    pub name: &'static str,
    pub value: f64,
    pub evidence: String,
}

/// A flow, or a stretch of one, that replay could not judge, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Unjudged {
    pub flow: String,
    pub interface: u32,
    pub reason: String,
}

/// `rocescope replay`'s report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub stack: String,
    pub connections: Vec<Connection>,
    pub findings: Vec<Finding>,
    pub unjudged: Vec<Unjudged>,
    /// With `--counters`: the host and tap the snapshots are of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters_host: Option<CountersHost>,
    /// With `--counters`: every counter reconciled (`counters.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counters: Option<Vec<CounterRow>>,
}

impl Finding {
    /// A finding of `rule` on `flow`.
    pub(crate) fn of(
        kind: FindingKind,
        rule: rules::Rule,
        flow: &str,
        frames: Vec<u64>,
        time_ns: u64,
        expected: String,
        seen: String,
    ) -> Finding {
        Finding { kind, rule: rule.id, source: rule.source, flow: flow.to_string(), frames, time_ns, expected, seen }
    }
}

impl Report {
    pub fn departures(&self) -> usize {
        self.findings.iter().filter(|f| f.kind == FindingKind::Departure).count()
    }
    /// Counters whose change disagrees with the capture.
    pub fn counter_disagreements(&self) -> usize {
        self.counters.iter().flatten().filter(|c| c.verdict == Verdict::Disagree).count()
    }
}

/// Why replay with `--counters` could not run.
#[derive(Debug)]
pub enum ReplayError {
    /// The capture is unusable.
    Capture(CaptureError),
    /// The counters' host cannot be settled (which tap is it?).
    Counters(String),
}

/// The findings naming each frame, as `rocescope annotate` writes them into the frames'
/// packet comments (docs/annotate.md): a finding is attached to every frame it names, with its
/// first frame as the cause; a frame's findings in the report's order.
pub fn notes_by_frame(
    r: &Report,
) -> std::collections::BTreeMap<u64, Vec<rocescope_analysis::annotation::FindingNote<'_>>> {
    use rocescope_analysis::annotation::{FindingKind as Kind, FindingNote};
    let mut m: std::collections::BTreeMap<u64, Vec<FindingNote<'_>>> = std::collections::BTreeMap::new();
    for f in &r.findings {
        let stack = r.connections.iter().find(|c| c.flow == f.flow).map_or("", |c| c.stack);
        let note = FindingNote {
            kind: match f.kind {
                FindingKind::Departure => Kind::Departure,
                FindingKind::Ambiguous => Kind::Ambiguous,
            },
            rule: f.rule,
            source: f.source,
            stack,
            flow: &f.flow,
            cause: f.frames.first().copied().unwrap_or(0),
            expected: &f.expected,
            seen: &f.seen,
        };
        let mut frames = f.frames.clone();
        frames.sort_unstable();
        frames.dedup();
        for fr in frames {
            m.entry(fr).or_default().push(note.clone());
        }
    }
    m
}

/// A connection replay judges: its two directions' keys and its judge.
struct Conn {
    row: usize,
    peer: String,
    iface: u32,
    requester: IpAddr,
    responder: IpAddr,
    requester_qpn: u32,
    responder_qpn: u32,
    stack: StackKind,
    tap: Tap,
    shape: Shape,
    judge: Judge,
    /// The CNPs the responder's NIC sent the connection (at the other taps: as they arrived).
    cnp: cnp::CnpPacing,
    /// At the requester's tap: its rate around the CNPs it got.
    rate: Option<rate::RateCuts>,
    /// NetRT's switch messages and resends of the connection seen here.
    netrt: netrt::NetrtSwitches,
}

impl Conn {
    /// Its requester and responder are `requester` and `responder`, on interface `iface`.
    fn between(&self, iface: u32, requester: IpAddr, responder: IpAddr) -> bool {
        self.iface == iface && self.requester == requester && self.responder == responder
    }
}

/// What a tap lets replay judge of a connection.
enum Judge {
    /// At the responder's tap: the responder, and what the requester's rules suspect there.
    Responder(ResponderJudge, Box<RequesterJudge>),
    /// At the requester's tap: the requester.
    Requester(RequesterJudge),
    /// At a fabric tap: what any tap can prove of the responder, and suspect of the requester
    /// (docs/replay.md "The other end").
    Fabric(Box<FabricJudge>),
    /// ERD, at either end's tap (`erd.rs`).
    Erd(erd::ErdJudge),
    /// Flor, at the sender's tap (`flor.rs`).
    Flor(flor::FlorJudge),
    /// Flor, at the receiver's tap (`flor_ack.rs`).
    FlorAck(flor_ack::FlorAckJudge),
    /// SDR-RDMA, at the sender's tap: every data QP of a connection and its control QP (`sdr.rs`).
    Sdr(sdr::SdrJudge),
}

impl Judge {
    /// Why the capture turned out not to let this judge decide (the connection is then listed
    /// as not judged, its findings dropped), once every frame was read.
    fn not_judged(&self, opts: &Options) -> Option<String> {
        match self {
            Judge::Erd(j) if j.mixed => Some(
                "ERD: several source QPs send to this destination QP (the receiver keeps a bitmap per source QP; \
                 a flow keyed by destination QP mixes their PSNs): not judged"
                    .into(),
            ),
            Judge::Sdr(j) if !j.chunks_agree() => Some(format!(
                "SDR-RDMA: its SR_ACKs name far fewer chunks than packets were sent: chunks of more than {} \
                 packet(s) (synth --sdr-chunk), which the judge cannot place: not judged (give the sender's chunk \
                 size: --sdr-chunk-packets N)",
                opts.params.sdr_chunk_packets.max(1)
            )),
            _ => None,
        }
    }
}

/// A fabric tap's judge: the two far-end checks, each for the end it is not beside, and the
/// requester's rules at a distance (whose `far` is the responder's check).
struct FabricJudge {
    side: RequesterJudge,
    requester: far::RequesterFromReceiver,
    requests: u64,
    responses: u64,
}

/// Request packets of a flow whose lowest PSN is taken as the connection's first.
const FIRST_PACKETS: u32 = 64;
/// The MTU assumed when no packet shows it (every message fits in one packet).
const DEFAULT_MTU: u32 = 4096;

/// What the first pass gathers per flow.
#[derive(Clone, Copy, Debug, Default)]
struct FlowShape {
    seen: u32,
    first_psn: Option<u32>,
    /// Answers (ACKs, NAKs) seen of the first [`FIRST_PACKETS`], and the lowest PSN they name.
    answers: u32,
    first_answered: Option<u32>,
    mtu: u32,
}

/// Which connection a frame belongs to, and as what.
#[derive(Clone, Copy)]
enum Part {
    Request(usize),
    Response(usize),
}

/// Runs replay: `first` for the flow table, `second` (a second reader of the same capture)
/// for the judging pass. A capture unusable part-way is an error (exit 2 on the command line).
pub fn replay<R: Read>(first: Session<R>, second: Session<R>, opts: &Options) -> Result<Report, CaptureError> {
    match replay_partial(first, second, opts, None) {
        Ok((_, Some(e))) | Err(ReplayError::Capture(e)) => Err(e),
        Ok((r, None)) => Ok(r),
        Err(ReplayError::Counters(why)) => unreachable!("no counters given: {why}"),
    }
}

/// [`replay`], and with `counters` the two `ethtool -S` snapshots reconciled with what the
/// capture shows of their host (docs/replay.md "Counter reconciliation").
pub fn replay_counters<R: Read>(
    first: Session<R>,
    second: Session<R>,
    opts: &Options,
    counters: Option<&CountersInput>,
) -> Result<Report, ReplayError> {
    match replay_partial(first, second, opts, counters)? {
        (_, Some(e)) => Err(ReplayError::Capture(e)),
        (r, None) => Ok(r),
    }
}

/// [`replay_counters`], which on a capture unusable part-way still judges the frames before
/// the error: the report of those, and the error (the command line prints the report, then the
/// located error, and exits 2, as `flows` does).
pub fn replay_partial<R: Read>(
    mut first: Session<R>,
    mut second: Session<R>,
    opts: &Options,
    counters: Option<&CountersInput>,
) -> Result<(Report, Option<CaptureError>), ReplayError> {
    // The flow table, and each flow's first PSNs and full-packet size.
    let mut a = Analyzer::new(AnalyzeOptions { keep_events: false, ..AnalyzeOptions::default() });
    let mut shapes: HashMap<(u32, IpAddr, IpAddr, u32), FlowShape> = HashMap::new();
    let first_error = first
        .run(|rec, d| {
            let seen = Pkt::from_decoded(d, rec.number, rec.ts_ns, rec.interface, rec.orig_len);
            if let Seen::Roce(k) = &seen {
                let s = shapes.entry((k.iface, k.src, k.dst, k.destqp)).or_default();
                let full = |pos| matches!(pos, Position::First | Position::Middle);
                match k.class {
                    Class::Request { pos, .. } => {
                        if s.seen < FIRST_PACKETS {
                            s.seen += 1;
                            s.first_psn =
                                Some(s.first_psn.map_or(k.psn, |f| if psn::diff(f, k.psn) < 0 { k.psn } else { f }));
                        }
                        if full(pos) {
                            s.mtu = s.mtu.max(k.payload);
                        }
                    }
                    Class::ReadResponse { pos } if full(pos) => s.mtu = s.mtu.max(k.payload),
                    // An ACK's PSN was received, a NAK's is the one expected: the connection's
                    // first PSN is at most either (its first packet may have been lost, and resent
                    // only after the first requests the tap saw).
                    Class::Ack | Class::Nak { code: 0 } | Class::Sack { .. }
                        if k.profile != rocescope_codec::Profile::Dcp && s.answers < FIRST_PACKETS =>
                    {
                        s.answers += 1;
                        s.first_answered =
                            Some(s.first_answered.map_or(k.psn, |f| if psn::diff(f, k.psn) < 0 { k.psn } else { f }));
                    }
                    _ => {}
                }
            }
            a.add(&seen);
            ControlFlow::Continue(())
        })
        .err();
    let table = a.flows().flows;
    let mut counter = match counters {
        Some(input) => {
            let (host, iface) = counters::resolve(&table, input).map_err(ReplayError::Counters)?;
            let shape = |r: &FlowRow| {
                let h = &r.head;
                let (Ok(src), Ok(dst)) = (h.src.parse::<IpAddr>(), h.dst.parse::<IpAddr>()) else {
                    return (None, DEFAULT_MTU);
                };
                let req = shapes.get(&(h.interface, src, dst, h.destqp)).copied().unwrap_or_default();
                let peer_qpn =
                    h.peer.as_deref().and_then(|p| table.iter().find(|x| x.head.id == p)).map(|x| x.head.destqp);
                let resp = peer_qpn.and_then(|q| shapes.get(&(h.interface, dst, src, q)).copied()).unwrap_or_default();
                let mtu = req.mtu.max(resp.mtu);
                (req.first_psn, if mtu == 0 { DEFAULT_MTU } else { mtu })
            };
            Some((
                counters::Counter::new(host, iface, &table, shape),
                CountersHost { ip: host.to_string(), interface: iface },
            ))
        }
        None => None,
    };
    let (mut conns, mut unjudged) = connections(&table, opts);
    for c in &mut conns {
        let req = shapes.get(&(c.iface, c.requester, c.responder, c.responder_qpn)).copied().unwrap_or_default();
        let resp = shapes.get(&(c.iface, c.responder, c.requester, c.requester_qpn)).copied().unwrap_or_default();
        let mtu = req.mtu.max(resp.mtu);
        let first_psn = match (req.first_psn, resp.first_answered) {
            (Some(r), Some(a)) if psn::diff(r, a) < 0 => Some(a),
            (r, _) => r,
        };
        c.shape = Shape { first_psn, mtu: if mtu == 0 { DEFAULT_MTU } else { mtu } };
    }
    let mut by_key: HashMap<(u32, IpAddr, IpAddr, u32), Part> = HashMap::new();
    for (i, c) in conns.iter().enumerate() {
        by_key.insert((c.iface, c.requester, c.responder, c.responder_qpn), Part::Request(i));
        by_key.insert((c.iface, c.responder, c.requester, c.requester_qpn), Part::Response(i));
        // DCP returns a header-only packet as it came, addresses swapped: its DestQP is the
        // responder's own.
        if c.stack == StackKind::Dcp {
            by_key.entry((c.iface, c.responder, c.requester, c.responder_qpn)).or_insert(Part::Response(i));
        }
    }
    let erd_conns = conns.iter().any(|c| matches!(c.judge, Judge::Erd(_)));
    let sdr_conns = conns.iter().any(|c| matches!(c.judge, Judge::Sdr(_)));
    let mut end = 0u64;
    // Per interface: a PAUSE/PFC frame crossed it; per interface and host: when it last sent.
    let mut paused: std::collections::HashSet<u32> = Default::default();
    let mut host_last: HashMap<(u32, IpAddr), u64> = HashMap::new();
    let second_error = second
        .run(|rec, d| {
            end = end.max(rec.ts_ns);
            if let Some((c, h)) = counter.as_mut() {
                if rec.interface == h.interface {
                    if let Seen::Roce(k) = Pkt::from_decoded(d, rec.number, rec.ts_ns, rec.interface, rec.orig_len) {
                        c.frame(&k, counters::dma_len(&k, d));
                    }
                }
            }
            let f = &d.frame;
            if f.mac_control().is_some() {
                paused.insert(rec.interface);
            }
            if sdr_conns {
                use rocescope_analysis::analyze::pkt::{PktExt, Rare};
                fn judge(conns: &mut [Conn], iface: u32, src: IpAddr, dst: IpAddr) -> Option<&mut sdr::SdrJudge> {
                    let c =
                        conns.iter_mut().find(|c| matches!(c.judge, Judge::Sdr(_)) && c.between(iface, src, dst))?;
                    match &mut c.judge {
                        Judge::Sdr(j) => Some(j),
                        _ => None,
                    }
                }
                match Pkt::from_decoded(d, rec.number, rec.ts_ns, rec.interface, rec.orig_len) {
                    Seen::Roce(k) => {
                        if let PktExt::SdrData { msg_id, pkt_off, id_bits } = k.ext {
                            if let Some(j) = judge(&mut conns, k.iface, k.src, k.dst) {
                                j.data(rec.number, rec.ts_ns, msg_id, pkt_off, id_bits, k.payload);
                                return ControlFlow::Continue(());
                            }
                        }
                    }
                    Seen::Rare(r) => {
                        if let Rare::SdrCtrl(c) = *r {
                            // (Receiver → sender.)
                            if let Some(j) = judge(&mut conns, c.pkt.iface, c.pkt.dst, c.pkt.src) {
                                // (`missing` is an SR_NACK's chunks, an EC_NACK's data submessages.)
                                use rocescope_codec::ext::sdr::CtrlType;
                                let nack = matches!(c.kind, CtrlType::SrNack | CtrlType::EcNack);
                                let named: &[u32] = if nack { &c.missing } else { &[] };
                                let (msg_seq, cum, sacked, buf_len) = (c.msg_seq, c.cum_ack, &c.sacked[..], c.buf_len);
                                let ctrl = sdr::Ctrl { kind: c.kind, msg_seq, cum, sacked, named, buf_len };
                                j.ctrl(rec.number, rec.ts_ns, ctrl);
                            }
                            return ControlFlow::Continue(());
                        }
                    }
                    _ => {}
                }
            }
            if erd_conns {
                let port = opts.params.erd_nack_port;
                if let Some(t) = f.tcp().filter(|t| t.src_port == port || t.dst_port == port) {
                    // An ERD NACK segment: from the data receiver to the data sender, each entry
                    // naming the receiver's QP.
                    let Some((src, dst)) = f.ip_addrs() else { return ControlFlow::Continue(()) };
                    if t.payload_len == 0 {
                        return ControlFlow::Continue(());
                    }
                    // (Read on its own when it holds whole NACK messages, uncut by the snaplen.)
                    let whole_here = t.payload.len() == t.payload_len;
                    let read: Option<Vec<_>> =
                        whole_nacks(t.payload).filter(|_| whole_here).map(|entries| entries.collect());
                    let direct = read.is_some();
                    let (entries, whole) = match read {
                        Some(e) => (e, true),
                        // Through the reassembly: whole only when it completed messages with no
                        // problem and the snaplen cut nothing.
                        None => match d.nacks.as_ref() {
                            Some(b) => {
                                let whole = b.warnings.is_empty() && t.payload.len() == t.payload_len;
                                (b.entries().to_vec(), whole && !b.entries().is_empty())
                            }
                            None => (Vec::new(), false),
                        },
                    };
                    let mut named: HashMap<usize, Vec<(u32, u32)>> = HashMap::new();
                    for e in &entries {
                        if let Some(&Part::Request(i)) = by_key.get(&(rec.interface, dst, src, e.dst_qpn)) {
                            named.entry(i).or_default().push((e.src_qpn, e.psn));
                        }
                    }
                    for (i, c) in conns.iter_mut().enumerate() {
                        let ours = c.between(rec.interface, dst, src);
                        if let (true, Judge::Erd(j)) = (ours, &mut c.judge) {
                            let psns = named.get(&i).map(Vec::as_slice).unwrap_or(&[]);
                            j.nack(rec.number, rec.ts_ns, t.seq, psns, direct, whole);
                        }
                    }
                    return ControlFlow::Continue(());
                }
            }
            let (Some((src, dst)), Some(p)) = (f.ip_addrs(), f.roce()) else { return ControlFlow::Continue(()) };
            // (Bounded by the hosts seen: one entry each per interface.)
            let host_prev = host_last.insert((rec.interface, src), rec.ts_ns);
            // NetRT's switches (the ToRs' messages and the source ToR's marked resends): judged
            // by their own rules, kept from the hosts' judges.
            if let Ext::Netrt(n) = f.ext() {
                let qp = p.bth().dest_qp();
                match *n {
                    // A request travels the served flow's addresses backwards.
                    Netrt::Request { epsn } => {
                        if let Some(&Part::Request(i)) = by_key.get(&(rec.interface, dst, src, qp)) {
                            let bitmap = p.payload().get(4..20).and_then(|b| <[u8; 16]>::try_from(b).ok());
                            let asked =
                                bitmap.map(|b| rocescope_codec::ext::netrt::requested(epsn, &b).collect::<Vec<_>>());
                            // The highest held PSN: ePSN + 1 + the highest set bit.
                            let top = bitmap
                                .map(u128::from_be_bytes)
                                .filter(|&b| b != 0)
                                .map(|b| rocescope_codec::ib::psn::add(epsn, 1 + (127 - b.leading_zeros())));
                            conns[i].netrt.request(epsn, top, asked.unwrap_or_default().into_iter());
                        }
                        return ControlFlow::Continue(());
                    }
                    Netrt::Unfulfilled { psn: u } => {
                        if let Some(&Part::Request(i)) = by_key.get(&(rec.interface, src, dst, qp)) {
                            conns[i].netrt.unfulfilled(rec.number, rec.ts_ns, u);
                        }
                        return ControlFlow::Continue(());
                    }
                    Netrt::Data { rtx_mark: true } => {
                        if let Some(&Part::Request(i)) = by_key.get(&(rec.interface, src, dst, qp)) {
                            conns[i].netrt.resend(rec.number, rec.ts_ns, p.bth().psn());
                        }
                        return ControlFlow::Continue(());
                    }
                    Netrt::Data { rtx_mark: false } => {}
                }
            }
            // Flor's software ACKs (their own UD QP): to the connection whose data QP they name.
            if let Ext::Flor(Flor::Ack(a)) = f.ext() {
                for c in conns.iter_mut() {
                    if !(c.between(rec.interface, dst, src) && c.responder_qpn == a.qpn) {
                        continue;
                    }
                    let acked: Vec<_> = a.acked(p.payload()).collect();
                    match &mut c.judge {
                        Judge::Flor(j) => j.ack(rec.ts_ns, &acked, opts.params.flor_split),
                        Judge::FlorAck(j) => j.ack(rec.ts_ns, &acked),
                        _ => {}
                    }
                }
                return ControlFlow::Continue(());
            }
            let Some(&part) = by_key.get(&(rec.interface, src, dst, p.bth().dest_qp())) else {
                return ControlFlow::Continue(());
            };
            match part {
                // A CNP whose addresses and QP are a requests flow's (a host that is also a
                // responder, notifying the peer QP of that number) is no request.
                Part::Request(_) if p.opcode().0 == 0x81 => {}
                Part::Request(i) => {
                    let c = &mut conns[i];
                    if let Some(r) = c.rate.as_mut() {
                        r.request(rec.ts_ns, rec.orig_len as u64);
                    }
                    let mac = |o: usize| f.data().get(o..o + 6).and_then(|m| m.try_into().ok()).unwrap_or([0; 6]);
                    let requester = Host { mac: mac(6), ip: c.requester, qpn: c.requester_qpn };
                    let responder = Host { mac: mac(0), ip: c.responder, qpn: c.responder_qpn };
                    match &mut c.judge {
                        // (A copy with a bad ICRC is dropped by the receiver: not an arrival.)
                        Judge::Erd(_) if f.icrc_status() == rocescope_codec::IcrcStatus::Bad => {}
                        Judge::Erd(j) => j.data(rec.number, rec.ts_ns, p.bth().psn(), p.deth().map(|d| d.src_qp())),
                        // (SDR's data packets went to its judge above; anything else of the QP
                        // is no data.)
                        Judge::Sdr(_) => {}
                        Judge::FlorAck(j) => {
                            let flor = if let Ext::Flor(x) = f.ext() { Some(x) } else { None };
                            let whole = p.payload().len() == p.payload_len();
                            let len = p.payload_len();
                            j.data(rec.number, rec.ts_ns, p.bth().psn(), p.opcode().0, flor, whole, len);
                        }
                        Judge::Flor(j) => {
                            let flor = if let Ext::Flor(x) = f.ext() { Some(x) } else { None };
                            j.data(rec.number, rec.ts_ns, flor, p.reth().map(|r| r.dma_len()), p.payload());
                        }
                        Judge::Responder(j, d) => {
                            j.request(rec.number, rec.ts_ns, f, requester, responder, c.shape);
                            d.request(rec.number, rec.ts_ns, f);
                        }
                        Judge::Requester(j) => {
                            j.host_sent_before(host_prev);
                            j.request(rec.number, rec.ts_ns, f)
                        }
                        Judge::Fabric(j) => {
                            j.requests += 1;
                            j.side.request(rec.number, rec.ts_ns, f);
                            j.requester.request(rec.number, rec.ts_ns, f);
                        }
                    }
                }
                // A CNP (opcode 0x81) is the NIC's, not the transport's.
                Part::Response(i) if p.opcode().0 == 0x81 => {
                    conns[i].cnp.cnp(rec.number, rec.ts_ns);
                    if let Judge::Requester(j) = &mut conns[i].judge {
                        j.may_hold = true;
                    }
                    if let Some(r) = conns[i].rate.as_mut() {
                        r.cnp(rec.number, rec.ts_ns);
                    }
                }
                Part::Response(i) => match &mut conns[i].judge {
                    Judge::Erd(_) | Judge::Flor(_) | Judge::FlorAck(_) | Judge::Sdr(_) => {}
                    Judge::Responder(j, d) => {
                        j.response(rec.number, rec.ts_ns, f);
                        d.response(rec.number, rec.ts_ns, f);
                    }
                    Judge::Requester(j) => j.response(rec.number, rec.ts_ns, f),
                    Judge::Fabric(j) => {
                        j.responses += 1;
                        j.side.response(rec.number, rec.ts_ns, f);
                        j.requester.response(rec.number, rec.ts_ns, f);
                    }
                },
            }
            ControlFlow::Continue(())
        })
        .err();
    let mut findings = Vec::new();
    let mut connections = Vec::new();
    for c in conns {
        if let Some(reason) = c.judge.not_judged(opts) {
            unjudged.push(Unjudged { flow: table[c.row].head.id.clone(), interface: c.iface, reason });
            continue;
        }
        let cnp = c.cnp;
        let rate = c.rate;
        let mut netrt_seen = c.netrt;
        // (An SDR connection is selective repeat's until it shows erasure coding.)
        let stack = match &c.judge {
            Judge::Sdr(j) if j.ec => StackKind::SdrEc,
            _ => c.stack,
        };
        let (requests, responses, mut found, mut inferred) = match c.judge {
            Judge::Responder(mut j, mut d) => {
                j.finish(end);
                // (Its timers inferred here would be seen from a distance: the requester's tap
                // infers them.)
                let _ = d.finish(opts.timers_given, end);
                let mut inferred = Vec::new();
                if j.acks > 0 && c.stack != StackKind::Dcp {
                    // The reference acknowledges every packet it takes in order (or as a
                    // duplicate): how many of those one captured ACK covers on average is the
                    // NIC's coalescing.
                    inferred.push(Inferred {
                        name: "ack_coalescing",
                        value: (j.ref_acks as f64 / j.acks as f64 * 10.0).round() / 10.0,
                        evidence: format!(
                            "{} packets taken in order or as duplicates, {} ACKs sent ({} request packets in all)",
                            j.ref_acks, j.acks, j.requests
                        ),
                    });
                }
                let mut found = j.findings;
                found.append(&mut j.far.findings);
                match d.reordered {
                    Some(r) => unjudged.push(reordered(&table[c.row].head.id, c.iface, r)),
                    None => found.append(&mut d.findings),
                }
                (j.requests, j.responses, found, inferred)
            }
            Judge::Requester(mut j) => {
                j.may_hold |= paused.contains(&c.iface);
                let inferred = j.finish(opts.timers_given, end);
                let mut found = j.findings;
                found.append(&mut j.far.findings);
                (j.requests, j.responses, found, inferred)
            }
            Judge::Fabric(mut j) => {
                let _ = j.side.finish(opts.timers_given, end);
                // A tap on one of several paths (the data did not all cross it) may miss the
                // NetRT requests that took another: the switches' rules then only suspect.
                if j.side.far.first_unseen().is_some() || j.side.far.one_path_of_several().is_some() {
                    netrt_seen.one_of_several_paths();
                }
                let mut found = std::mem::take(&mut j.side.far.findings);
                if let Some(psn) = j.side.far.first_unseen() {
                    unjudged.push(Unjudged {
                        flow: table[c.row].head.id.clone(),
                        interface: c.iface,
                        reason: format!(
                            "fabric tap: PSN {psn} never crossed it (another path, or lost before it): the responder's \
                             answers are counted and its MSNs judged only up to there, the requester's go-backs and \
                             timers not at all"
                        ),
                    });
                } else if let Some((shown, skipped)) = j.side.far.one_path_of_several() {
                    unjudged.push(Unjudged {
                        flow: table[c.row].head.id.clone(),
                        interface: c.iface,
                        reason: format!(
                            "fabric tap: {shown} PSNs crossed it as they were first sent and {skipped} did not (one \
                             path of several): the requester's go-backs and timers are not judged here"
                        ),
                    });
                } else if let Some(r) = j.side.reordered {
                    unjudged.push(reordered(&table[c.row].head.id, c.iface, r));
                } else {
                    found.append(&mut j.side.findings);
                }
                found.append(&mut j.requester.findings);
                (j.requests, j.responses, found, Vec::new())
            }
            Judge::Erd(j) => (j.requests, j.nacks, j.findings, Vec::new()),
            Judge::Flor(j) => (j.requests, j.acks, j.findings, Vec::new()),
            Judge::Sdr(j) => (j.requests, j.ctrls, j.findings(), Vec::new()),
            Judge::FlorAck(mut j) => {
                j.finish(end);
                (j.requests, j.acks, j.findings, Vec::new())
            }
        };
        if let Some(r) = rate {
            inferred.extend(r.inferred());
            inferred.extend(r.increases());
        }
        let mut cnp = cnp;
        inferred.extend(cnp.inferred());
        found.append(&mut cnp.findings);
        found.append(&mut netrt_seen.findings);
        connections.push(Connection {
            flow: table[c.row].head.id.clone(),
            peer: c.peer.clone(),
            interface: c.iface,
            stack: stack.name(),
            tap: c.tap,
            requests,
            responses,
            departures: found.iter().filter(|f| f.kind == FindingKind::Departure).count() as u64,
            inferred,
        });
        findings.append(&mut found);
    }
    findings.sort_by_key(|f| (f.frames.first().copied(), f.rule));
    let stack = match opts.stack {
        StackChoice::Auto => "auto".to_string(),
        StackChoice::Fixed(k) => k.name().to_string(),
    };
    let (counters_host, counters) = match (counter, counters) {
        (Some((c, h)), Some(input)) => (Some(h), Some(c.reconcile(input))),
        _ => (None, None),
    };
    Ok((Report { stack, connections, findings, unjudged, counters_host, counters }, first_error.or(second_error)))
}

/// Away from the requester, a connection whose arrivals were reordered (PSN `psn`, at frame
/// `frame`, `how`): the requester's go-backs and timers are not judged there.
fn reordered(flow: &str, interface: u32, (psn, frame, how): (u32, u64, &str)) -> Unjudged {
    Unjudged {
        flow: flow.to_string(),
        interface,
        reason: format!(
            "arrivals reordered (several paths): PSN {psn} {how} (frame {frame}), so the order and times of the \
             requester's resends here say nothing of its go-backs and timers (judged at the requester's tap)"
        ),
    }
}

/// The connections of the flow table replay judges, and the flows it does not, with why.
fn connections(table: &[FlowRow], opts: &Options) -> (Vec<Conn>, Vec<Unjudged>) {
    let mut conns = Vec::new();
    let mut unjudged = Vec::new();
    let by_id: HashMap<&str, &FlowRow> = table.iter().map(|r| (r.head.id.as_str(), r)).collect();
    for (row, r) in table.iter().enumerate() {
        let h = &r.head;
        if h.role != Role::Requests {
            continue;
        }
        let skip = |reason: String| Unjudged { flow: h.id.clone(), interface: h.interface, reason };
        if h.profile == rocescope_codec::Profile::Sdr.name() {
            // (Before the peer: SDR's control messages flow on their own QP, not as responses.)
            // The control QP's flow: judged with the data it serves.
            if h.serves.is_some() {
                continue;
            }
            let side = match h.tap {
                Tap::Sender => sdr::Side::Sender,
                Tap::Receiver => sdr::Side::Receiver,
                _ => {
                    let why = "SDR-RDMA: judged at the sender's tap (where its control messages arrive) and the \
                               receiver's (where its data arrives)";
                    unjudged.push(skip(why.into()));
                    continue;
                }
            };
            // One judge per connection (interface, sender, receiver): its other data QPs join it.
            if let (Ok(src), Ok(dst)) = (h.src.parse::<IpAddr>(), h.dst.parse::<IpAddr>()) {
                if conns.iter().any(|c: &Conn| matches!(c.judge, Judge::Sdr(_)) && c.between(h.interface, src, dst)) {
                    continue;
                }
            }
            let judge =
                Judge::Sdr(sdr::SdrJudge::new(h.id.clone(), side, opts.reaction_ns, opts.params.sdr_chunk_packets));
            match own_judge_conn(row, h, None, StackKind::SdrSr, judge, opts) {
                Some(c) => conns.push(c),
                None => unjudged.push(skip("not an IP flow".into())),
            }
            continue;
        }
        if h.profile == rocescope_codec::Profile::Flor.name() {
            // Flor's ACKs travel on a UD QP of their own, not as the data QP's responses.
            let judge = match h.tap {
                Tap::Sender => Judge::Flor(flor::FlorJudge::new(h.id.clone(), opts.reaction_ns, opts.params.flor_unit_size)),
                Tap::Receiver => Judge::FlorAck(flor_ack::FlorAckJudge::new(
                    h.id.clone(),
                    opts.reaction_ns,
                    opts.params.flor_unit_size,
                )),
                _ => {
                    let why = if h.tap == Tap::Fabric { "this is a fabric tap" } else { "this tap's place is unknown" };
                    unjudged.push(skip(format!("Flor: judged at the sender's and the receiver's taps ({why})")));
                    continue;
                }
            };
            let peer = h.peer.as_deref().and_then(|p| by_id.get(p)).copied();
            match own_judge_conn(row, h, peer, StackKind::Flor, judge, opts) {
                Some(c) => conns.push(c),
                None => unjudged.push(skip("not an IP flow".into())),
            }
            continue;
        }
        let peer = h.peer.as_deref().and_then(|p| by_id.get(p));
        let stack = opts.stack.for_transport(h.transport);
        if stack == Some(StackKind::Erd) || (h.transport == Transport::Erd && opts.stack == StackChoice::Auto) {
            // ERD answers with NACKs over TCP, not RoCE responses: judged at either end's tap.
            let side = match h.tap {
                Tap::Sender => erd::Side::Sender,
                Tap::Receiver => erd::Side::Receiver,
                Tap::Fabric => {
                    unjudged.push(skip(
                        "fabric tap: ERD's NACKs and resends may take paths that do not cross it; its rules are \
                         judged at the sender's and the receiver's taps"
                            .into(),
                    ));
                    continue;
                }
                Tap::Unknown => {
                    unjudged.push(skip("unknown tap: ERD's rules are judged beside the sender or the receiver".into()));
                    continue;
                }
            };
            let judge = Judge::Erd(erd::ErdJudge::new(h.id.clone(), side, opts.reaction_ns));
            match own_judge_conn(row, h, peer.copied(), StackKind::Erd, judge, opts) {
                Some(c) => conns.push(c),
                None => unjudged.push(skip("not an IP flow".into())),
            }
            continue;
        }
        let Some(peer) = peer else {
            unjudged.push(skip("no responses captured for these requests: nothing to compare".into()));
            continue;
        };
        let Some(stack) = stack else {
            unjudged.push(skip(format!("no reference stack for {:?} yet", h.transport).to_lowercase()));
            continue;
        };
        if stack.is_sdr() || stack == StackKind::Flor {
            // (`--stack flor` on a flow that shows no Flor: nothing of Flor to judge. Flows that do
            // were judged above, by their profile.)
            let profile = stack.profile().name();
            unjudged.push(skip(format!(
                "--stack {}: this flow's packets carry nothing of {profile} (decode them with --profile {profile} if \
                 they are its)",
                stack.name()
            )));
            continue;
        }
        // A plain RC flow `auto` reads as Go-Back-N may be IRN that lost nothing (no selective
        // NAK to tell): its timers are inferred, not judged against GBN's, at every tap.
        let timers = !(opts.stack == StackChoice::Auto && h.transport == Transport::Rc);
        let distant = |v| {
            let mut j = RequesterJudge::distant(stack, h.id.clone(), opts.params, opts.answer_window_ns, opts.timeouts, v);
            j.judge_timers = timers;
            j
        };
        let judge = match h.tap {
            Tap::Receiver => Judge::Responder(
                ResponderJudge::new(stack, h.id.clone(), opts.params, opts.answer_window_ns),
                Box::new(distant(Vantage::Responder)),
            ),
            Tap::Sender => {
                let mut j = RequesterJudge::new(stack, h.id.clone(), opts.params, opts.reaction_ns, opts.timeouts);
                j.judge_timers = timers;
                Judge::Requester(j)
            }
            Tap::Fabric => Judge::Fabric(Box::new(FabricJudge {
                side: distant(Vantage::Fabric),
                requester: far::RequesterFromReceiver::new(stack, h.id.clone(), opts.params, opts.answer_window_ns),
                requests: 0,
                responses: 0,
            })),
            Tap::Unknown => {
                let why =
                    "unknown tap: the responder's rules are judged at the responder's tap, the requester's at the \
                           requester's, and the analysers cannot tell which this is";
                unjudged.push(skip(why.to_string()));
                continue;
            }
        };
        let (Ok(requester), Ok(responder)) = (h.src.parse::<IpAddr>(), h.dst.parse::<IpAddr>()) else {
            unjudged.push(skip("not an IP flow".into()));
            continue;
        };
        conns.push(Conn {
            row,
            peer: peer.head.id.clone(),
            iface: h.interface,
            requester,
            responder,
            requester_qpn: peer.head.destqp,
            responder_qpn: h.destqp,
            stack,
            tap: h.tap,
            shape: Shape { first_psn: None, mtu: DEFAULT_MTU },
            cnp: cnp::CnpPacing::new(h.id.clone(), opts.cnp_interval_ns, match h.tap {
                Tap::Receiver => None,
                Tap::Sender => Some("this tap is beside the requester"),
                _ => Some("this tap is in the fabric"),
            }),
            rate: (h.tap == Tap::Sender).then(rate::RateCuts::default),
            netrt: netrt::NetrtSwitches::new(h.id.clone()),
            judge,
        });
    }
    (conns, unjudged)
}

/// A connection of a research transport whose judge reads its own answers (ERD's NACKs over TCP,
/// Flor's ACKs on a UD QP) rather than RoCE responses: `peer` is the data QP's other direction,
/// if the capture shows one. `None` for a flow whose addresses are not IP.
fn own_judge_conn(
    row: usize,
    h: &rocescope_analysis::analyze::report::FlowHead,
    peer: Option<&FlowRow>,
    stack: StackKind,
    judge: Judge,
    opts: &Options,
) -> Option<Conn> {
    let (Ok(requester), Ok(responder)) = (h.src.parse::<IpAddr>(), h.dst.parse::<IpAddr>()) else { return None };
    let cnp_why = if h.tap == Tap::Receiver { None } else { Some("this tap is beside the requester") };
    Some(Conn {
        row,
        peer: peer.map_or_else(|| "-".to_string(), |p| p.head.id.clone()),
        iface: h.interface,
        requester,
        responder,
        requester_qpn: peer.map_or(0, |p| p.head.destqp),
        responder_qpn: h.destqp,
        stack,
        tap: h.tap,
        shape: Shape { first_psn: None, mtu: DEFAULT_MTU },
        cnp: cnp::CnpPacing::new(h.id.clone(), opts.cnp_interval_ns, cnp_why),
        rate: None,
        netrt: netrt::NetrtSwitches::new(h.id.clone()),
        judge,
    })
}

/// The report as text: one line per connection (with what it infers), one per finding, one per
/// flow not judged.
pub fn write_text(out: &mut impl std::io::Write, r: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "replay --stack {}: {} connection(s) judged, {} departure(s), {} flow(s) not judged",
        r.stack,
        r.connections.len(),
        r.departures(),
        r.unjudged.len()
    )?;
    for c in &r.connections {
        let verdict =
            if c.departures == 0 { "conformant".to_string() } else { format!("{} departure(s)", c.departures) };
        writeln!(
            out,
            "{} ({}, {:?} tap; responses {}): {} requests, {} responses: {verdict}",
            c.flow, c.stack, c.tap, c.peer, c.requests, c.responses
        )?;
        for i in &c.inferred {
            writeln!(out, "  inferred {} = {} ({})", i.name, i.value, i.evidence)?;
        }
    }
    for f in &r.findings {
        let frames = f.frames.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",");
        writeln!(
            out,
            "frame {frames}: {:?} {} on {}: expected {}; seen {} [{}]",
            f.kind, f.rule, f.flow, f.expected, f.seen, f.source
        )?;
    }
    for u in &r.unjudged {
        writeln!(out, "not judged: {}: {}", u.flow, u.reason)?;
    }
    if let (Some(h), Some(rows)) = (&r.counters_host, &r.counters) {
        let n = |v: Verdict| rows.iter().filter(|c| c.verdict == v).count();
        writeln!(
            out,
            "counters of {} (interface {}): {} agree, {} disagree, {} cannot be judged",
            h.ip,
            h.interface,
            n(Verdict::Agree),
            n(Verdict::Disagree),
            n(Verdict::CannotJudge)
        )?;
        let num = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        for c in rows {
            match c.verdict {
                Verdict::CannotJudge => {
                    writeln!(out, "  {}: delta {}: cannot be judged ({})", c.name, num(c.delta), c.why)?;
                }
                v => writeln!(
                    out,
                    "  {}: {} -> {}, delta {}; the capture shows {}: {} ({})",
                    c.name,
                    num(c.before),
                    num(c.after),
                    num(c.delta),
                    num(c.capture),
                    if v == Verdict::Agree { "agree" } else { "DISAGREE" },
                    c.why
                )?,
            }
        }
    }
    Ok(())
}
