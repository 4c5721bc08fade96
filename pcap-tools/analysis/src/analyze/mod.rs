//! The analysers behind `rocescope flows` and `rocescope timeline` (docs/analysis.md): one pass
//! over a capture's frames, in file order, per interface (a flow belongs to one interface).
//!
//! - [`pkt`]: what the analysers read of a frame.
//! - [`track`]: one flow's data — retransmissions, losses, capture gaps, messages.
//! - [`pfc`]: PFC pauses.
//! - [`report`]: what they report (serde data).
//!
//! A flow is one direction of one QP on one interface: (interface, source address, destination
//! address, BTH DestQP). The two directions of an RC connection are paired by the CM REQ and
//! REP that set it up when the capture holds them, else by addresses and PSN ranges: an
//! acknowledgement (or READ response, CNP, bounce) belongs to the flow from its destination to
//! its source whose PSNs it is nearest. A DestQP reused with a PSN far from the
//! old range (more than 2^22 away, at a First or Only packet) starts a new flow (`#N`).
//!
//! Where the tap is: a host puts its own frames on the wire with an initial IP TTL (64, 128 or
//! 255) and every router on the way decrements it, so on each interface the addresses seen
//! sending with an initial TTL are the tapped hosts. A flow from a tapped host is seen at its
//! source, one to a tapped host at its destination, others in the fabric; with no TTL, or when
//! both ends look tapped (a capture without routers), the tap is `unknown` and read as a fabric
//! tap (loss evidence from header-only packets only).

pub mod asks;
pub mod erd;
pub mod fields;
pub mod flor;
pub mod netrt;
pub mod pfc;
pub mod pkt;
pub mod plain;
pub mod plot;
pub mod psn;
pub mod records;
pub mod render;
pub mod report;
pub mod run;
pub mod sdr;
pub mod series;
pub mod spill;
pub mod stream;
pub mod track;

use std::collections::{HashMap, HashSet};

use rocescope_codec::fxhash::{FxHashMap, FxHashSet};
use rocescope_codec::recent_map::RecentMap;
use std::net::IpAddr;

use rocescope_codec::Profile;

use pkt::{Class, Pkt, Seen};
use report::{FlowRow, FlowTimeline, FlowsReport, Ns, Role, Tap, TimelineReport, Transport};
use track::{MessageTable, Place, Ranks, Tracker};

/// Options of an analysis.
#[derive(Clone, Debug)]
pub struct Options {
    /// Keep every event (the timeline); without, only counts (the flow table).
    pub keep_events: bool,
    /// Link rate for PFC pause quanta, Gb/s.
    pub link_gbps: f64,
    /// A pause at least this long is a storm.
    pub storm_ns: u64,
    /// Keep each flow's plot points ([`series::Series`]).
    pub plot: bool,
    /// Spill finished records to a temporary file rather than memory ([`spill`]).
    pub spill_to_file: bool,
    /// Flor's UNIT_SIZE in bytes ([`flor`]; the decoder's `flor_unit_size`, which [`run`] passes).
    pub flor_unit_size: u32,
    /// SDR's packets a chunk ([`sdr`]; the decoder's `sdr_chunk_packets`, which [`run`] passes;
    /// 0 is 1).
    pub sdr_chunk_packets: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            keep_events: true,
            link_gbps: 100.0,
            storm_ns: 10_000_000,
            plot: false,
            spill_to_file: false,
            flor_unit_size: rocescope_codec::Params::default().flor_unit_size,
            sdr_chunk_packets: 1,
        }
    }
}

impl Options {
    /// `opts` with what the decoder's parameters say of the transports (Flor's unit size, SDR's
    /// chunk size).
    pub fn with_params(opts: Options, params: &rocescope_codec::Params) -> Options {
        Options { flor_unit_size: params.flor_unit_size, sdr_chunk_packets: params.sdr_chunk_packets.max(1), ..opts }
    }
}

/// Header-only packets a flow holds at most while its role is unknown.
const MAX_PENDING_HO: usize = 1024;

/// Flow key: interface, source, destination, DestQP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key(u32, IpAddr, IpAddr, u32);

/// Looked up once per frame: an IPv4 flow hashes as two words (the interface and DestQP, the
/// two addresses), not as the tuple's eight (each address hashed with its variant and length).
/// Equal keys still hash equal, as `Eq` needs; nothing iterates the map.
impl std::hash::Hash for Key {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(u64::from(self.0) << 32 | u64::from(self.3));
        match (&self.1, &self.2) {
            (IpAddr::V4(s), IpAddr::V4(d)) => h.write_u64(u64::from(s.to_bits()) << 32 | u64::from(d.to_bits())),
            (s, d) => (s, d).hash(h),
        }
    }
}

/// One flow's state.
///
/// Laid out in declaration order (`repr(C)`): what every frame of the flow reads and counts
/// first, then its tracker (whose own hot fields lead), then what is read rarely. A flow is
/// visited every hundred or so frames, its state usually out of the cache: the default layout
/// (by alignment) spread the per-frame fields over twice the cache lines.
#[derive(Debug)]
#[repr(C)]
struct FlowState {
    frames: u64,
    bytes: u64,
    last_time: u64,
    idle_max: u64,
    /// Where the tap is for it, as of a version of the tapped-host sets.
    place: Option<(u64, Place)>,
    peer: Option<usize>,
    /// Header-only packets seen before the flow showed whether it carries requests or answers.
    pending_ho: Vec<Pkt>,
    /// PSNs a research transport's receiver side asked for ([`asks`]).
    asks: Option<Box<asks::Asks>>,
    acks: u64,
    sacks: u64,
    seq_errors: u64,
    /// The PSN of the flow's last NAK (duplicate NAKs).
    last_nak: Option<u32>,
    /// Its source is known to be a tapped host (sent with an initial TTL).
    src_local: bool,
    profile: Profile,
    transport: Transport,
    role: Role,
    data: Tracker,
    naks: u64,
    rnr_naks: u64,
    cnps: u64,
    ecn_ce: u64,
    /// When the flow's last CE-marked data packet was seen (CE to CNP).
    last_ce: Option<u64>,
    iface: u32,
    src: IpAddr,
    dst: IpAddr,
    destqp: u32,
    /// 0 for the first use of the key, N for the Nth reuse.
    generation: u32,
    first_time: u64,
    series: Option<Box<series::Series>>,
    /// Its spill streams (retransmissions, capture gaps, losses, messages) once it spills.
    streams: [Option<usize>; 4],
    /// A control flow: the data flow it serves (NetRT requests, SDR control).
    serves: Option<usize>,
    /// SDR's events on this flow ([`sdr`]); Flor's too ([`flor`]).
    sdr_out: Option<Box<sdr::Out>>,
    /// Flor's WQEs on this data flow ([`flor`]).
    flor: Option<Box<flor::FlowFlor>>,
}

/// The analysis of one capture, fed frame by frame.
#[derive(Debug)]
pub struct Analyzer {
    opts: Options,
    flows: Vec<FlowState>,
    /// Each key's current flow (its latest generation); looked up once per frame, recent keys
    /// in a direct-mapped table first.
    index: RecentMap<Key, usize>,
    /// Per interface: addresses seen sending with an initial TTL (the tapped hosts).
    local: FxHashMap<u32, FxHashSet<IpAddr>>,
    /// Bumped whenever a tapped host is added (the flows' cached places are then stale).
    local_version: u64,
    pauses: pfc::Pauses,
    last_time: u64,
    /// What the last frame showed at once (per-packet analysis fields).
    note: fields::LiveNote,
    /// CM REQs awaiting their REP: (interface, REQ sender, REQ receiver, local comm id) → QPN.
    cm_reqs: FxHashMap<(u32, IpAddr, IpAddr, u32), u32>,
    /// Connections the CM set up: (interface, host, QPN) → (the other host, its QPN).
    cm_pairs: FxHashMap<(u32, IpAddr, u32), (IpAddr, u32)>,
    /// Where finished records go ([`spill`]).
    spill: spill::Spill,
    /// SDR connections ([`sdr`]).
    sdr: FxHashMap<sdr::ConnKey, sdr::Conn>,
}

fn initial_ttl(t: u8) -> bool {
    matches!(t, 64 | 128 | 255)
}

/// Where the tap is for flow `f`, given the tapped hosts (`local`) per interface.
fn place_of(f: &FlowState, local: &FxHashMap<u32, FxHashSet<IpAddr>>) -> Place {
    let Some(local) = local.get(&f.iface) else { return Place::Middle };
    match (local.contains(&f.src), local.contains(&f.dst)) {
        (true, false) => Place::Source,
        (false, true) => Place::Destination,
        _ => Place::Middle,
    }
}

/// [`place_of`], cached in the flow until the tapped-host sets change (`version`).
#[inline]
fn place_cached(f: &mut FlowState, local: &FxHashMap<u32, FxHashSet<IpAddr>>, version: u64) -> Place {
    if let Some((v, p)) = f.place {
        if v == version {
            return p;
        }
    }
    let p = place_of(f, local);
    f.place = Some((version, p));
    p
}

/// Data packet `k` to flow `f`'s PSN tracker. Flor's messages are its own (`analyze/flor.rs`:
/// a resend has new PSNs): to the tracker its packets belong to no message.
#[inline]
fn feed_tracker(f: &mut FlowState, k: &Pkt, place: Place) {
    let t = f.transport;
    match k.class {
        Class::Request { op, .. } if k.profile == Profile::Flor || f.profile == Profile::Flor => {
            let k = Pkt { class: Class::Request { pos: rocescope_codec::ib::opcode::Position::Middle, op }, ..*k };
            f.data.on_data(&k, place, t);
        }
        _ => f.data.on_data(k, place, t),
    }
}

/// What a data packet showed at once (`last`, its tracker's note), into the frame's note.
#[inline]
fn note_data(note: &mut fields::LiveNote, last: &track::TrackNote) {
    note.data = Some((last.v, last.msn));
    note.out_of_order = last.out_of_order;
    note.psn_gap = last.psn_gap;
}

impl Analyzer {
    pub fn new(opts: Options) -> Analyzer {
        let pauses = pfc::Pauses::new(opts.link_gbps, opts.storm_ns);
        // Without a writable temporary directory the records stay in memory.
        let spill = if opts.spill_to_file {
            spill::Spill::temp_file().unwrap_or_else(|_| spill::Spill::memory())
        } else {
            spill::Spill::memory()
        };
        Analyzer {
            opts,
            flows: Vec::new(),
            index: RecentMap::default(),
            local: FxHashMap::default(),
            local_version: 0,
            pauses,
            last_time: 0,
            note: fields::LiveNote::default(),
            spill,
            cm_reqs: FxHashMap::default(),
            cm_pairs: FxHashMap::default(),
            sdr: FxHashMap::default(),
        }
    }

    /// Moves a flow's finished records to the spill once they fill a chunk. (Only the timeline
    /// keeps records: without `keep_events` the trackers encode none, and there is nothing to
    /// look at.)
    #[inline]
    fn drain(&mut self, i: usize) {
        if !self.opts.keep_events || self.flows[i].data.out.iter().all(|o| o.len() < 2048) {
            return;
        }
        for k in 0..4 {
            if self.flows[i].data.out[k].len() < 2048 {
                continue;
            }
            let stream = match self.flows[i].streams[k] {
                Some(s) => s,
                None => {
                    let s = self.spill.stream();
                    self.flows[i].streams[k] = Some(s);
                    s
                }
            };
            let buf = std::mem::take(&mut self.flows[i].data.out[k]);
            // An I/O error on the spill leaves the records in memory (they are reported all
            // the same).
            if self.spill.push(stream, &buf).is_err() {
                self.flows[i].data.out[k] = buf;
            }
        }
    }

    /// Feeds one frame and says what it showed at once (the per-packet analysis fields).
    pub fn add_noted(&mut self, seen: &Seen) -> fields::LiveNote {
        self.note = fields::LiveNote::default();
        self.add(seen);
        self.note
    }

    /// Feeds one frame (from [`Pkt::from_decoded`]).
    ///
    /// Inlined: called once per frame by the reading loops, which then call the analyser of the
    /// frame's kind directly.
    #[inline]
    pub fn add(&mut self, seen: &Seen) {
        match seen {
            Seen::Roce(k) => self.roce(k),
            Seen::Pfc(p) => {
                self.last_time = self.last_time.max(p.time_ns);
                self.pauses.add(p)
            }
            Seen::Rare(r) => match &**r {
                pkt::Rare::ErdNack(n) => self.erd_nack(n),
                pkt::Rare::Cm(c) => {
                    self.roce(&c.pkt);
                    self.cm(c);
                }
                pkt::Rare::SdrCtrl(c) => {
                    self.roce(&c.pkt);
                    self.sdr_ctrl(c);
                }
                pkt::Rare::FlorAck(a) => {
                    self.roce(&a.pkt);
                    self.flor_ack(a);
                }
            },
            Seen::None => {}
        }
    }

    fn flow(&mut self, k: &Pkt) -> usize {
        let key = Key(k.iface, k.src, k.dst, k.destqp);
        if let Some(i) = self.index.lookup(&key) {
            // A QPN reused with a new PSN range.
            let reuse = matches!(
                k.class,
                Class::Request {
                    pos: rocescope_codec::ib::opcode::Position::First | rocescope_codec::ib::opcode::Position::Only,
                    ..
                }
            ) && self.flows[i].data.distance(k.psn).is_some_and(|d| d.abs() > 1 << 22);
            if !reuse {
                return i;
            }
            let g = self.flows[i].generation + 1;
            // The reverse flow now acknowledges the new range: it pairs anew.
            if let Some(p) = self.flows[i].peer {
                self.flows[p].peer = None;
            }
            let n = self.new_flow(k, g);
            self.index.insert(key, n);
            return n;
        }
        let n = self.new_flow(k, 0);
        self.index.insert(key, n);
        n
    }

    fn new_flow(&mut self, k: &Pkt, generation: u32) -> usize {
        self.flows.push(FlowState {
            iface: k.iface,
            src: k.src,
            dst: k.dst,
            destqp: k.destqp,
            generation,
            profile: k.profile,
            transport: if k.profile == Profile::Dcp { Transport::Dcp } else { Transport::Rc },
            role: Role::Unknown,
            frames: 0,
            bytes: 0,
            first_time: k.time_ns,
            last_time: k.time_ns,
            idle_max: 0,
            acks: 0,
            naks: 0,
            sacks: 0,
            seq_errors: 0,
            rnr_naks: 0,
            cnps: 0,
            ecn_ce: 0,
            data: Tracker::new(self.opts.keep_events),
            peer: None,
            series: self.opts.plot.then(Box::default),
            streams: [None; 4],
            last_nak: None,
            last_ce: None,
            src_local: false,
            pending_ho: Vec::new(),
            place: None,
            asks: None,
            serves: None,
            sdr_out: None,
            flor: None,
        });
        self.flows.len() - 1
    }

    /// Where the tap is for flow `i`.
    fn place(&mut self, i: usize) -> Place {
        place_cached(&mut self.flows[i], &self.local, self.local_version)
    }

    fn place_now(&self, i: usize) -> Place {
        place_of(&self.flows[i], &self.local)
    }

    /// The flow whose data a frame of flow `i` acknowledges (the reverse direction), paired on
    /// first use: the one requests flow from `i`'s destination to its source, or among several
    /// the one whose PSNs `psn` is nearest.
    fn peer(&mut self, i: usize, psn: u32) -> Option<usize> {
        if let Some(p) = self.flows[i].peer {
            return Some(p);
        }
        // The connection manager said which QPs are the two ends.
        let f = &self.flows[i];
        if let Some(&(other, qpn)) = self.cm_pairs.get(&(f.iface, f.dst, f.destqp)) {
            if other == f.src {
                if let Some(j) = self.index.get(&Key(f.iface, f.dst, f.src, qpn)) {
                    if self.flows[j].peer.is_none() {
                        return Some(self.pair(i, j));
                    }
                }
            }
        }
        let f = &self.flows[i];
        let best = self
            .flows
            .iter()
            .enumerate()
            .filter(|(j, g)| {
                *j != i
                    && g.iface == f.iface
                    && g.src == f.dst
                    && g.dst == f.src
                    && g.role == Role::Requests
                    && g.peer.is_none()
            })
            .min_by_key(|(_, g)| g.data.distance(psn).map_or(i64::MAX, |d| d.abs()))
            .map(|(j, _)| j)?;
        Some(self.pair(i, best))
    }

    /// Pairs answers flow `i` with requests flow `j`; returns `j`.
    fn pair(&mut self, i: usize, j: usize) -> usize {
        self.flows[i].peer = Some(j);
        self.flows[j].peer = Some(i);
        if self.flows[i].role == Role::Unknown {
            self.flows[i].role = Role::Responses;
        }
        j
    }

    /// A data packet of flow `i` (its role set): to its tracker, where the tap stands for it.
    /// (One look-up of the flow: this runs for most frames.)
    fn data(&mut self, i: usize, k: &Pkt) -> Place {
        let f = &mut self.flows[i];
        let place = place_cached(f, &self.local, self.local_version);
        feed_tracker(f, k, place);
        place
    }

    /// [`Self::data`], then what the packet showed at once ([`Self::data_note`]).
    fn data_noted(&mut self, i: usize, k: &Pkt) -> Place {
        let f = &mut self.flows[i];
        let place = place_cached(f, &self.local, self.local_version);
        feed_tracker(f, k, place);
        note_data(&mut self.note, &f.data.last);
        place
    }

    /// A DCP bounce in flow `i`: its trimmed copy was the reverse flow's data.
    fn bounce(&mut self, i: usize, k: &Pkt) {
        if let Some(p) = self.peer(i, k.psn) {
            let place = self.place(p);
            self.flows[p].data.on_bounce(k.psn, place);
        }
    }

    fn roce(&mut self, k: &Pkt) {
        self.last_time = self.last_time.max(k.time_ns);
        let i = self.flow(k);
        self.note.flow = Some(i);
        // (The flow's own counts first, with one look-up of it.)
        let f = &mut self.flows[i];
        // (A NetRT message is a switch's, at the served flow's addresses: its TTL tells nothing.)
        let tapped = !f.src_local && k.ttl.is_some_and(initial_ttl) && !k.is_netrt_message();
        if tapped {
            f.src_local = true;
        }
        if f.frames > 0 {
            f.idle_max = f.idle_max.max(k.time_ns.saturating_sub(f.last_time));
        }
        f.frames += 1;
        f.bytes += k.len as u64;
        f.last_time = f.last_time.max(k.time_ns);
        if k.ce {
            f.ecn_ce += 1;
            if k.is_data() {
                f.last_ce = Some(k.time_ns);
            }
        }
        if k.profile != Profile::Std || f.profile == Profile::Std {
            f.profile = k.profile;
        }
        if k.profile == Profile::Dcp {
            f.transport = Transport::Dcp;
        }
        let pending = !f.pending_ho.is_empty();
        if tapped && self.local.entry(k.iface).or_default().insert(k.src) {
            self.local_version += 1;
        }
        if self.pauses.any() {
            self.pauses.frame(k.iface, k.time_ns, i);
        }
        if pending && !matches!(k.class, Class::HeaderOnly { .. } | Class::Cnp | Class::Other) {
            self.settle_pending_ho(i, matches!(k.class, Class::Request { .. }));
        }
        match k.class {
            Class::Request { .. } => {
                self.flows[i].role = Role::Requests;
                self.research_before_data(i, k);
                let place = self.data_noted(i, k);
                self.research_after_data(i, k, place);
            }
            Class::Control => self.netrt_control(i, k),
            Class::HeaderOnly { .. } => {
                // The trimmed form of this flow's data, or a bounce of the reverse flow's: the
                // flow's role says which; a flow that showed neither requests nor answers is a
                // bounce's if the reverse flow carries requests, else it cannot be told (a fabric
                // tap may see the bounce and not the data) and the packet is only counted.
                let at_source = self.place(i) == Place::Source;
                let bounce = match self.flows[i].role {
                    Role::Requests => false,
                    Role::Responses => true,
                    // A host never sends a trimmed packet (trimming happens in the network): a
                    // header-only packet leaving a tapped host is a bounce.
                    Role::Unknown if at_source => true,
                    Role::Unknown => {
                        let reverse_requests = self.flows.iter().any(|g| {
                            g.iface == k.iface && g.src == k.dst && g.dst == k.src && g.role == Role::Requests
                        });
                        if !reverse_requests {
                            // Held until the flow shows what it carries (a bounce matters only at
                            // the sender's tap, where the requests flow is always known first).
                            if self.flows[i].pending_ho.len() < MAX_PENDING_HO {
                                self.flows[i].pending_ho.push(*k);
                            }
                            return self.finish_frame(i, k);
                        }
                        reverse_requests
                    }
                };
                if bounce {
                    self.bounce(i, k);
                } else {
                    self.flows[i].role = Role::Requests;
                    self.data_noted(i, k);
                }
            }
            Class::ReadResponse { pos } => {
                self.flows[i].role = Role::Responses;
                self.data_noted(i, k);
                if let Some(p) = self.peer(i, k.psn) {
                    self.flows[p].data.on_read_response(k, pos);
                    if self.flows[p].transport != Transport::Dcp {
                        self.flows[p].data.on_cover(k.psn, k.frame, k.time_ns);
                    }
                }
            }
            Class::Ack => {
                self.flows[i].acks += 1;
                if let Some(p) = self.peer(i, k.psn) {
                    let g = &mut self.flows[p];
                    if let Some(e) = k.dcp_emsn {
                        g.data.on_emsn(e, k.frame, k.time_ns);
                    } else if g.transport != Transport::Dcp {
                        let next = k.psn.wrapping_add(1) & psn::MASK;
                        g.data.on_cover(next, k.frame, k.time_ns);
                        self.note.ack_rtt_ns = g.data.last.rtt;
                        self.resync(p, next);
                    }
                }
            }
            Class::Nak { code } => {
                self.flows[i].naks += 1;
                self.note.duplicate_nak = self.flows[i].last_nak == Some(k.psn);
                self.flows[i].last_nak = Some(k.psn);
                if code == 0 {
                    self.flows[i].seq_errors += 1;
                    if let Some(p) = self.peer(i, k.psn) {
                        if self.flows[p].transport == Transport::Rc {
                            self.flows[p].transport = Transport::Gbn;
                            self.flows[i].transport = Transport::Gbn;
                        }
                        self.flows[p].data.on_cover(k.psn, k.frame, k.time_ns);
                        self.flows[p].data.on_nak(k.psn);
                        self.resync(p, k.psn);
                    }
                }
            }
            Class::Sack { .. } => {
                let f = &mut self.flows[i];
                f.sacks += 1;
                f.last_nak = Some(k.psn);
                f.seq_errors += 1;
                if let Some(p) = self.peer(i, k.psn) {
                    self.flows[i].transport = Transport::Irn;
                    let g = &mut self.flows[p];
                    g.transport = Transport::Irn;
                    g.data.on_cover(k.psn, k.frame, k.time_ns);
                    g.data.on_sack(k.psn);
                    self.resync(p, k.psn);
                }
            }
            Class::RnrNak => self.flows[i].rnr_naks += 1,
            Class::Cnp => {
                // Counted against the data flow whose congestion it reports.
                match self.peer(i, k.psn) {
                    Some(p) => {
                        self.flows[p].cnps += 1;
                        self.note.ce_to_cnp_ns = self.flows[p].last_ce.map(|t| k.time_ns.saturating_sub(t));
                    }
                    None => self.flows[i].cnps += 1,
                }
            }
            Class::Other => {}
        }
        self.finish_frame(i, k);
    }

    /// The header-only packets a flow held while its role was unknown: its data's trimmed forms
    /// (`requests`), else bounces of its peer's data.
    fn settle_pending_ho(&mut self, i: usize, requests: bool) {
        let pending = std::mem::take(&mut self.flows[i].pending_ho);
        for k in &pending {
            if requests {
                self.flows[i].role = Role::Requests;
                self.data(i, k);
            } else {
                self.bounce(i, k);
            }
        }
    }

    /// After a frame of flow `i`: its plot point, and finished records to the spill.
    fn finish_frame(&mut self, i: usize, k: &Pkt) {
        if self.opts.plot {
            self.point(i, k);
        }
        // (Without `keep_events` (the flow table) nothing is ever drained: not even the call.)
        if self.opts.keep_events {
            self.drain(i);
            if let Some(p) = self.flows[i].peer {
                self.drain(p);
            }
        }
    }

    /// Records a plot point against the flow whose data it is about.
    fn point(&mut self, i: usize, k: &Pkt) {
        use series::{Point, PointKind};
        let (owner, kind, psn) = match k.class {
            Class::Request { .. } => {
                let first = self.flows[i].data.copies_of(k.psn) == 1;
                if !first {
                    return;
                }
                (Some(i), PointKind::Original, k.psn)
            }
            Class::HeaderOnly { .. } if self.flows[i].role == Role::Requests => (Some(i), PointKind::HeaderOnly, k.psn),
            Class::HeaderOnly { .. } => (self.flows[i].peer, PointKind::Bounce, k.psn),
            Class::Ack => match k.dcp_emsn {
                Some(e) => (self.flows[i].peer, PointKind::Emsn, e),
                None => (self.flows[i].peer, PointKind::Ack, k.psn),
            },
            Class::Nak { .. } => (self.flows[i].peer, PointKind::Nak, k.psn),
            Class::Sack { sacked } => (self.flows[i].peer, PointKind::Sack, sacked),
            Class::Cnp => (self.flows[i].peer.or(Some(i)), PointKind::Cnp, k.psn),
            Class::ReadResponse { .. } => (Some(i), PointKind::Original, k.psn),
            _ => (None, PointKind::Original, 0),
        };
        if let Some(o) = owner {
            if let Some(s) = self.flows[o].series.as_mut() {
                s.add(Point { time_ns: k.time_ns, psn, kind });
            }
        }
    }

    /// The plot points of every flow (in the timeline's order; `None` without `plot`).
    pub fn series(&self) -> Vec<Option<&series::Series>> {
        self.flows.iter().map(|f| f.series.as_deref()).collect()
    }

    /// A CM REQ opens a connection from its sender's QP; the REP that answers it (its remote
    /// communication id is the REQ's local one) names the other end's QP.
    fn cm(&mut self, c: &pkt::CmPkt) {
        let k = &c.pkt;
        if !c.rep {
            self.cm_reqs.insert((k.iface, k.src, k.dst, c.local_comm_id), c.qpn);
            return;
        }
        let Some(req_qpn) = self.cm_reqs.remove(&(k.iface, k.dst, k.src, c.remote_comm_id)) else { return };
        self.cm_pairs.insert((k.iface, k.dst, req_qpn), (k.src, c.qpn));
        self.cm_pairs.insert((k.iface, k.src, c.qpn), (k.dst, req_qpn));
    }

    /// At the destination of flow `p`, its receiver's acknowledgement says what it expects next.
    fn resync(&mut self, p: usize, next: u32) {
        let g = &mut self.flows[p];
        if place_cached(g, &self.local, self.local_version) == Place::Destination {
            let Some(v) = g.data.peek(next) else { return };
            g.data.resync_expected(v);
        }
    }

    /// Each flow's id: `SRC>DST/DESTQP`, with `@IF` when the same id is on several interfaces
    /// and `#N` for the Nth reuse of a DestQP.
    fn ids(&self) -> Vec<String> {
        let base = |f: &FlowState| format!("{}>{}/{}", f.src, f.dst, f.destqp);
        let mut ifaces: HashMap<String, HashSet<u32>> = HashMap::new();
        for f in &self.flows {
            ifaces.entry(base(f)).or_default().insert(f.iface);
        }
        self.flows
            .iter()
            .map(|f| {
                let b = base(f);
                let mut id = b.clone();
                if ifaces[&b].len() > 1 {
                    id.push_str(&format!("@{}", f.iface));
                }
                if f.generation > 0 {
                    id.push_str(&format!("#{}", f.generation));
                }
                id
            })
            .collect()
    }

    /// Flow `i`'s role: a research transport's control flow (SDR's control QP, Flor's ACK QP:
    /// `serves` a data flow) is that connection's responses direction.
    fn role(&self, i: usize) -> Role {
        let f = &self.flows[i];
        match f.role {
            Role::Unknown if f.serves.is_some() => Role::Responses,
            r => r,
        }
    }

    fn tap(&self, i: usize) -> Tap {
        let f = &self.flows[i];
        let Some(local) = self.local.get(&f.iface) else { return Tap::Fabric };
        let requests = match self.role(i) {
            Role::Requests => true,
            Role::Responses => false,
            Role::Unknown => return Tap::Unknown,
        };
        match (self.place_now(i), requests) {
            (Place::Source, true) | (Place::Destination, false) => Tap::Sender,
            (Place::Source, false) | (Place::Destination, true) => Tap::Receiver,
            (Place::Middle, _) if local.contains(&f.src) && local.contains(&f.dst) => Tap::Unknown,
            (Place::Middle, _) => Tap::Fabric,
        }
    }

    /// The timeline one flow at a time (the command line writes each as it comes: memory holds
    /// one flow's report, not the capture's), with the flow's plot points.
    pub fn each_flow_timeline<E>(
        &mut self,
        mut f: impl FnMut(FlowTimeline, Option<&series::Series>) -> Result<(), E>,
    ) -> Result<(), E> {
        // (As `timeline_and_messages`: an ERD flow whose tap turned out to be the receiver's
        // late completes the messages that arrived whole before it is reported.)
        self.erd_settle();
        let ids = self.ids();
        for i in 0..self.flows.len() {
            let (t, _) = self.flow_timeline(i, &ids);
            f(t, self.flows[i].series.as_deref())?;
        }
        Ok(())
    }

    /// The timeline of every flow, in order of first appearance.
    pub fn timeline(&mut self) -> TimelineReport {
        self.timeline_and_messages().0
    }

    /// The timeline, and per flow its messages' indices (the per-packet `message` field).
    pub fn timeline_and_messages(&mut self) -> (TimelineReport, Vec<MessageTable>) {
        self.erd_settle();
        let ids = self.ids();
        let (flows, tables) = (0..self.flows.len()).map(|i| self.flow_timeline(i, &ids)).unzip();
        (TimelineReport { flows }, tables)
    }

    /// One flow's timeline, from what its tracker spilled and still holds (which it gives up),
    /// with its messages' indices.
    fn flow_timeline(&mut self, i: usize, ids: &[String]) -> (FlowTimeline, MessageTable) {
        let spilled = self.flows[i].streams.map(|s| s.and_then(|s| self.spill.take(s).ok()).unwrap_or_default());
        let d = self.flows[i].data.report(spilled);
        // Message indices: rank by MSN (DCP) or first PSN, from 0, then SDR's and Flor's
        // messages, by their PSNs: they follow the tracker's in the flow's list.
        let sdr_ranges = self.flows[i].sdr_out.as_ref().map_or(&[][..], |o| &o.ranges[..]);
        let ranks = Ranks::new(d.msgs.iter().map(|(id, m)| track::rank_key(*id, m)).collect(), sdr_ranges);
        // The message of a PSN: as the per-packet field finds it, else the id the tracker knew
        // when it found the event.
        let lookup = |v: u64, msn: Option<u64>, hint: u32| ranks.lookup(v, msn, hint);
        let mut losses: Vec<report::Loss> =
            d.losses.iter().map(|(l, v, m)| report::Loss { message: lookup(*v, None, *m), ..l.clone() }).collect();
        losses.sort_by_key(|l| (l.frame, l.psn));
        let mut retransmissions: Vec<report::Retransmission> =
            d.retx.iter().map(|r| stream::retx_row(r, lookup(r.v, r.msn, r.msg))).collect();
        retransmissions.sort_by_key(|r| r.frame);
        // SDR's messages follow the tracker's in the flow's list.
        if let Some(out) = self.flows[i].sdr_out.as_ref() {
            // (An event naming no message of its own takes the tracker's message of its PSN: Flor.)
            let own = |m: Option<u64>, psn: u32| ranks.of_sdr_event(m, psn, &self.flows[i].data);
            losses.extend(out.losses.iter().map(|l| report::Loss { message: own(l.message, l.psn), ..l.clone() }));
            losses.sort_by_key(|l| (l.frame, l.psn));
            retransmissions.extend(
                out.retx.iter().map(|r| report::Retransmission { message: own(r.message, r.psn), ..r.clone() }),
            );
            retransmissions.sort_by_key(|r| r.frame);
        }
        let mut capture_gaps: Vec<report::CaptureGap> =
            d.gaps.iter().map(|&(psn, frame)| report::CaptureGap { psn, frame }).collect();
        capture_gaps.sort_by_key(|g| (g.frame, g.psn));
        let mut messages: Vec<report::Message> =
            d.msgs.iter().map(|(id, s)| stream::message_row(ranks.of_id(*id).unwrap_or(0), s)).collect();
        messages.sort_by_key(|m| m.index);
        if let Some(out) = self.flows[i].sdr_out.as_ref() {
            messages.extend(out.msgs.iter().map(|m| report::Message { index: ranks.tracked + m.index, ..m.clone() }));
        }
        let t = FlowTimeline { head: self.head(i, ids), losses, capture_gaps, retransmissions, messages };
        (t, ranks.table)
    }

    /// Flow `i`'s name and place.
    fn head(&self, i: usize, ids: &[String]) -> report::FlowHead {
        let f = &self.flows[i];
        report::FlowHead {
            id: ids[i].clone(),
            src: f.src.to_string(),
            dst: f.dst.to_string(),
            destqp: f.destqp,
            interface: f.iface,
            profile: f.profile.name(),
            transport: f.transport,
            role: self.role(i),
            tap: self.tap(i),
            peer: f.peer.map(|p| ids[p].clone()),
            serves: f.serves.map(|p| ids[p].clone()),
        }
    }

    /// The flow table (and PFC pauses), in order of first appearance.
    pub fn flows(&mut self) -> FlowsReport {
        self.erd_settle();
        self.sdr_settle();
        for f in &mut self.flows {
            f.data.finalize_all();
        }
        let ids = self.ids();
        let end = self.last_time;
        let pauses = self.pauses.finish(end, |i| ids[i].clone());
        let flows = (0..self.flows.len())
            .map(|i| {
                let f = &self.flows[i];
                let s = &f.data.stats;
                let dur = f.last_time.saturating_sub(f.first_time);
                FlowRow {
                    head: self.head(i, &ids),
                    frames: f.frames,
                    bytes: f.bytes,
                    data_frames: s.data_frames,
                    data_bytes: s.data_bytes,
                    unique_bytes: s.unique_bytes,
                    retransmitted: s.retransmitted,
                    spurious: s.spurious,
                    max_retries: s.max_retries,
                    timeouts: s.timeouts,
                    losses: s.losses,
                    capture_gaps: s.capture_gaps,
                    out_of_order: s.out_of_order,
                    sequence_errors: f.peer.map_or(0, |p| self.flows[p].seq_errors),
                    acks: f.acks,
                    naks: f.naks,
                    sacks: f.sacks,
                    rnr_naks: f.rnr_naks,
                    cnps: f.cnps,
                    ecn_ce: f.ecn_ce,
                    header_only: s.header_only,
                    messages: s.messages,
                    messages_completed: s.completed,
                    messages_failed: s.messages - s.completed,
                    fct_ns: s.last_complete.map(|c| c.saturating_sub(f.first_time)),
                    message_latency: s.latency.spread(),
                    rtt: s.rtt.spread(),
                    first_time_ns: Ns(f.first_time),
                    last_time_ns: Ns(f.last_time),
                    goodput_bps: (dur > 0 && s.unique_bytes > 0).then(|| s.unique_bytes as f64 * 8e9 / dur as f64),
                    idle_max_ns: f.idle_max,
                    pfc_paused_ns: self.pauses.paused_between(f.iface, f.first_time, f.last_time),
                }
            })
            .collect();
        FlowsReport { flows, pauses }
    }
}
