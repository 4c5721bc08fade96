//! What a tap can observe (`docs/truth.md`, "What a tap can observe"): the observable view of a
//! truth document. The per-tap records of [`Truth`] say what happened, including what no capture
//! at that tap could show; [`view`] keeps each fact (loss, retransmission, capture gap, message)
//! with the values the tap's frames determine, or marks it unobservable with the reason.
//!
//! It is an oracle the analysers are judged against, so each rule is one small function written
//! the way the document states it, reading only the typed document: `sim.transmissions` (sends,
//! fates, arrivals), `taps[].frames` and `taps[].flows`, `connections` and `config.stack`. A value
//! is kept only when the tap's frames determine it; in particular the stack's reason for a resend
//! is read only at the tap on the sender's NIC (`trigger`), so `cause` and a loss's `signal` are
//! known there only (the document says why).

use std::collections::{BTreeMap, HashMap, HashSet};

use rocescope_codec::ib::psn;
use serde::Serialize;

mod erd;
mod flor;
mod sdr;
use erd::{erd_ambiguous, erd_asks, erd_complete_known, erd_losses};

use crate::truth::{
    Accept, Direction, Fate, Flow, FlowMessage, Frame, Kind, Op, Reason, Repair, RetxCause, Role, Signal, Stack, Tap, TapName,
    TimeNs, Transmission, Truth,
};

// ---------------------------------------------------------------------------------------------
// The view.

/// Where a tap is relative to a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Position {
    /// At the NIC of the host that sends the flow.
    Source,
    /// At the NIC of the host the flow is addressed to.
    Destination,
    /// In the fabric (the `fabric` tap).
    Middle,
}

/// One tap's observable view.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TapView {
    pub name: TapName,
    pub interface: u32,
    /// The flows the tap recorded at least one frame of, in the tap's `flows[]` order.
    pub flows: Vec<FlowView>,
    /// Losses, retransmissions, capture gaps and messages of every flow of the tap, seen or not.
    pub facts: u64,
    /// Of those, how many are unobservable, per reason (flows not seen included).
    pub unobservable: BTreeMap<Why, u64>,
}

impl TapView {
    /// The share of the tap's facts that are unobservable (0 when it has none).
    pub fn share_unobservable(&self) -> f64 {
        let n: u64 = self.unobservable.values().sum();
        if self.facts == 0 {
            0.0
        } else {
            n as f64 / self.facts as f64
        }
    }
}

/// One flow as the tap can observe it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowView {
    pub id: String,
    pub conn: u32,
    pub role: Role,
    pub position: Position,
    /// By frame.
    pub losses: Vec<ObsLoss>,
    /// By frame.
    pub retransmissions: Vec<ObsRetx>,
    /// By frame.
    pub capture_gaps: Vec<ObsGap>,
    /// By index (requests flows).
    pub messages: Vec<ObsMessage>,
    /// The flow's facts the tap cannot observe.
    pub unobservable: Vec<Unobservable>,
    /// PSNs the tap cannot judge by its signals, lost or not: those the network reordered (no
    /// tap can tell such a packet overtaken from a lost one) and, at the source tap, those a
    /// stale NAK or SACK followed (`Cx::stale_signals`). An analyser's loss, spurious and cause
    /// claims about them are not judged.
    pub ambiguous: Vec<u32>,
    /// PSNs of frames the tap cannot place at all (SDR: of sends it cannot tell from another
    /// send of their message id, `Why::IdReused`): an analyser's losses and retransmissions of
    /// them are not judged, whatever it makes of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unjudged: Vec<u32>,
}

/// An observable loss.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObsLoss {
    pub psn: u32,
    /// The lost transmission.
    pub tx: u32,
    /// The tap's frame of the lost copy when it recorded it, else of the next copy (the repair).
    pub frame: u64,
    /// That frame's time (the instant of the loss is never observable).
    pub time_ns: TimeNs,
    /// What made the sender resend it: the next copy's `trigger` (source tap), else `null`.
    pub signal: Option<Signal>,
    /// Known at the source tap; elsewhere `end_host` when the tap recorded a later copy, else
    /// `null`.
    pub repair: Option<Repair>,
}

/// An observable retransmission.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObsRetx {
    pub psn: u32,
    pub tx: u32,
    pub frame: u64,
    pub time_ns: TimeNs,
    /// What made the sender resend it (`nak`, `sack`, `ho`, `timeout`), or `null`.
    pub trigger: Option<Signal>,
    pub spurious: Option<bool>,
    pub cause: Option<RetxCause>,
}

/// An observable capture gap.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObsGap {
    pub psn: u32,
    /// The tap's first frame proving the PSN received.
    pub frame: u64,
}

/// An observable message. A field `None` and not in `unknown` means the tap recorded no such
/// frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ObsMessage {
    pub index: u64,
    pub first_frame: Option<u64>,
    pub last_frame: Option<u64>,
    pub packets: Option<u32>,
    pub retransmitted: Option<u64>,
    pub complete_frame: Option<u64>,
    pub complete_time_ns: Option<TimeNs>,
    /// The names of the fields above that are unobservable.
    pub unknown: Vec<&'static str>,
}

/// A kind of fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fact {
    Loss,
    Retransmission,
    CaptureGap,
    Message,
}

/// A fact the tap cannot observe.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unobservable {
    pub fact: Fact,
    pub psn: Option<u32>,
    /// A message's index.
    pub index: Option<u64>,
    pub tx: Option<u32>,
    pub why: Why,
}

/// Why a fact is unobservable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// The tap recorded no frame of the flow.
    FlowNotSeen,
    /// The tap recorded the copies of the PSN in another order than they were sent.
    CopiesOutOfOrder,
    /// A retransmission the tap recorded without any earlier copy of its PSN.
    EarlierCopyNotSeen,
    /// A lost ACK, NAK, SACK, CNP or bounce.
    NotData,
    /// A lost packet whose PSN was reordered, with no header-only evidence.
    Reordered,
    /// No evidence the rules accept (a loss), or no proof frame (a capture gap).
    NoEvidence,
    /// A loss with header-only evidence (a bounce) of which the tap recorded neither the lost
    /// copy nor its repair: no frame of the flow to name.
    NoFrame,
    /// A capture gap with no recorded data PSN of the flow below or above it (for `dcp`: in its
    /// message).
    OutsideSeenRange,
    /// The tap did not record a data frame of the message or of an earlier message (SDR: of the
    /// message's send).
    MessageNotSeen,
    /// SDR: a fact of a send the tap cannot tell from another send of its message id (a reused
    /// id whose new CTS the tap did not record).
    IdReused,
    /// Flor: a lost packet of a WQE whose every packet the tap recorded: an ACK names the WQE, not
    /// which of its packets was lost.
    WqeNotPacket,
    /// Flor: a retransmission of a WQE the tap did not identify (it missed the packet naming it,
    /// or, for a WRITE chunk, some of its packets).
    WqeNotSeen,
    /// SDR erasure coding: a lost packet the receiver rebuilt from parity. Nothing on the wire
    /// names it, and no tap recorded a frame of it reaching the receiver.
    ErasureDecoded,
    /// NetRT: a host's retransmission at a tap between the ToRs, which also sees the ToRs'
    /// requests; the view does not follow those (like PFC frames, they are not in the truth's
    /// frames), and the analyser reads them.
    SwitchRequests,
    /// NetRT: a switch's resend of a PSN an earlier copy of which the receiver had accepted;
    /// a tap between the ToRs cannot see what the destination ToR holds.
    SwitchResendNeedless,
}

/// The observable view of every tap of `t`, in `taps[]` order.
pub fn view(t: &Truth) -> Vec<TapView> {
    let run = Run::new(t);
    t.taps.iter().map(|tap| tap_view(&run, tap)).collect()
}

// ---------------------------------------------------------------------------------------------
// Indexes over the whole run.

/// A flow's key: connection and direction.
type FlowKey = (u32, Role);

/// The run's transmissions, indexed.
struct Run<'a> {
    t: &'a Truth,
    /// Every transmission by id.
    txs: HashMap<u32, &'a Transmission>,
    /// The data transmissions ("copies") of each (flow, PSN), in the order they were sent (id).
    copies: HashMap<(FlowKey, u32), Vec<u32>>,
    /// The (flow, PSN)s that are reordered.
    reordered: HashSet<(FlowKey, u32)>,
    /// SDR: the sends of each (connection, message) that carried a packet, by sequence number
    /// (selective repeat: the message's index; erasure coding: D0, P0, D1, …).
    sdr_sends: HashMap<(u32, u64), std::collections::BTreeSet<u64>>,
}

/// The flow a transmission belongs to: the requester's direction or the responder's.
fn flow_key_of(x: &Transmission) -> FlowKey {
    let role = match x.origin {
        crate::truth::Origin::Requester => Role::Requests,
        // NetRT's source ToR resending a request packet from its pool.
        crate::truth::Origin::Switch if x.kind == Kind::Data => Role::Requests,
        _ => Role::Responses,
    };
    (x.conn, role)
}

/// The kind of a flow's data: requests (`data`) or READ responses.
fn data_kind(role: Role) -> Kind {
    match role {
        Role::Requests => Kind::Data,
        Role::Responses => Kind::ReadResponse,
    }
}

fn is_data_of(x: &Transmission, f: FlowKey) -> bool {
    flow_key_of(x) == f && x.kind == data_kind(f.1)
}

/// A NetRT switch's resend of a request packet.
fn is_switch(x: &Transmission) -> bool {
    x.origin == crate::truth::Origin::Switch && x.kind == Kind::Data
}

/// `a` ≤ `b` modulo 2^24.
fn psn_le(a: u32, b: u32) -> bool {
    a == b || psn::lt(a, b)
}

impl<'a> Run<'a> {
    fn new(t: &'a Truth) -> Run<'a> {
        let txs: HashMap<u32, &Transmission> = t.sim.transmissions.iter().map(|x| (x.id, x)).collect();
        let mut copies: HashMap<(FlowKey, u32), Vec<u32>> = HashMap::new();
        for x in &t.sim.transmissions {
            let f = flow_key_of(x);
            if is_data_of(x, f) {
                copies.entry((f, x.psn)).or_default().push(x.id);
            }
        }
        for ids in copies.values_mut() {
            ids.sort_unstable();
        }
        let reordered = reordered(t);
        let mut sdr_sends: HashMap<(u32, u64), std::collections::BTreeSet<u64>> = HashMap::new();
        for x in t.sim.transmissions.iter().filter(|x| x.kind == Kind::Data) {
            if let (Some(m), Some(seq)) = (x.msg, x.sdr_seq) {
                sdr_sends.entry((x.conn, m)).or_default().insert(seq as u64);
            }
        }
        Run { t, txs, copies, reordered, sdr_sends }
    }

    fn tx(&self, id: u32) -> Option<&'a Transmission> {
        self.txs.get(&id).copied()
    }

    fn stack(&self) -> Stack {
        self.t.config.stack
    }

    /// SDR: a message's facts are its sends (each a message of the view and of the timeline:
    /// selective repeat has one, erasure coding D0, P0, D1, …), those that carried a packet; a
    /// message none of whose packets left is one.
    fn message_facts(&self, conn: u32, msg: u64) -> usize {
        match self.stack() {
            Stack::SdrEc => self.sdr_sends.get(&(conn, msg)).map_or(1, |s| s.len().max(1)),
            _ => 1,
        }
    }

    fn is_sdr(&self) -> bool {
        matches!(self.stack(), Stack::SdrSr | Stack::SdrEc)
    }

    /// The copies of `p` in flow `f`, in send order.
    fn copies_of(&self, f: FlowKey, p: u32) -> &[u32] {
        self.copies.get(&(f, p)).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The copies of `p` sent before `id`, and the one sent just after it.
    fn around(&self, f: FlowKey, p: u32, id: u32) -> (&[u32], Option<u32>) {
        let all = self.copies_of(f, p);
        let i = all.partition_point(|&c| c < id);
        let next = all[i..].iter().copied().find(|&c| c > id);
        (&all[..i], next)
    }
}

/// PSN p is reordered in flow F when a whole copy of p arrived at the destination after a whole
/// data transmission of F sent after it, or before one sent before it (header-only forms and lost
/// copies do not count). Sends are in id order; arrivals are `fate_time_ns` of `delivered`.
fn reordered(t: &Truth) -> HashSet<(FlowKey, u32)> {
    let mut whole: HashMap<FlowKey, Vec<(u32, TimeNs)>> = HashMap::new();
    for x in &t.sim.transmissions {
        let f = flow_key_of(x);
        if is_data_of(x, f) && x.fate == Fate::Delivered {
            if let Some(at) = x.fate_time_ns {
                whole.entry(f).or_default().push((x.psn, at));
            }
        }
    }
    let mut out = HashSet::new();
    for (f, sent) in whole {
        // sent is in id (send) order. Latest arrival of those sent before i, earliest of those
        // sent after i.
        let n = sent.len();
        let mut later_min = vec![TimeNs(u64::MAX); n + 1];
        for i in (0..n).rev() {
            later_min[i] = later_min[i + 1].min(sent[i].1);
        }
        let mut earlier_max = TimeNs(0);
        for (i, &(p, at)) in sent.iter().enumerate() {
            if earlier_max > at || later_min[i + 1] < at {
                out.insert((f, p));
            }
            earlier_max = earlier_max.max(at);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// One tap.

/// The tap's frames, indexed.
struct TapIx<'a> {
    tap: &'a Tap,
    /// The host whose NIC the tap is at (`None`: the fabric tap).
    host: Option<u32>,
    /// Its frames of each flow id, in frame order.
    by_flow: HashMap<&'a str, Vec<&'a Frame>>,
    /// Its frames of each transmission.
    by_tx: HashMap<u32, Vec<&'a Frame>>,
    /// Its frames of each flow id and PSN, in frame order.
    by_psn: HashMap<(&'a str, u32), Vec<&'a Frame>>,
    /// Its first frame going out of its host (a frame the host sent with a fresh TTL).
    first_out: Option<u64>,
}

/// Everything one flow's rules read.
struct Cx<'a, 'r> {
    run: &'r Run<'a>,
    ix: &'r TapIx<'a>,
    flow: &'a Flow,
    key: FlowKey,
    position: Position,
    /// The tap's frames of the flow, and of its reverse flow (the other direction of its
    /// connection), in frame order.
    frames: &'r [&'a Frame],
    reverse: &'r [&'a Frame],
    /// The tap's `messages[]` of the connection's requests flow (for `dcp` ACK coverage).
    messages: &'a [FlowMessage],
    /// ERD, a requests flow: each PSN a NACK the tap recorded named, with the frame where a
    /// capture reads it ([`erd_asks`]), in frame order; and the PSNs those NACKs mislead the
    /// tap about ([`erd_ambiguous`]).
    erd_asks: Vec<(u64, u32)>,
    erd_ambiguous: HashSet<u32>,
}

fn tap_view(run: &Run<'_>, tap: &Tap) -> TapView {
    let c0 = run.t.connections.first();
    let host = match tap.name {
        TapName::Sender => c0.map(|c| c.sender),
        TapName::Receiver => c0.map(|c| c.receiver),
        TapName::Fabric => None,
    };
    // (Not a bounce: a DCP responder returns a header-only packet with the TTL it arrived with,
    // so a bounce does not show its sender is the tapped host.)
    let first_out = tap.frames.iter().find(|f| f.direction == Direction::Out && f.kind != Kind::HoBounce).map(|f| f.frame);
    let mut ix = TapIx { tap, host, by_flow: HashMap::new(), by_tx: HashMap::new(), by_psn: HashMap::new(), first_out };
    for fr in &tap.frames {
        ix.by_flow.entry(fr.flow.as_str()).or_default().push(fr);
        ix.by_tx.entry(fr.tx).or_default().push(fr);
        ix.by_psn.entry((fr.flow.as_str(), fr.psn)).or_default().push(fr);
    }
    let empty: Vec<&Frame> = Vec::new();
    let mut out = TapView {
        name: tap.name,
        interface: tap.interface,
        flows: Vec::new(),
        facts: 0,
        unobservable: BTreeMap::new(),
    };
    // Each observed flow's losses, retransmissions (whose cause reads the observable losses) and
    // capture gaps; then messages, which read whether the retransmissions of both directions
    // are observable.
    let mut cxs = Vec::new();
    for flow in &tap.flows {
        let messages: usize = flow.messages.iter().map(|m| run.message_facts(flow.conn, m.index)).sum();
        let n = flow.losses.len() + flow.retransmissions.len() + flow.capture_gaps.len() + messages;
        out.facts += n as u64;
        // (ERD's NACK path is TCP, its segments and their ACKs the run's frames of kind
        // `other`: a flow the tap saw only those of is no RoCE flow.)
        let tcp = |f: &&Frame| run.stack() == Stack::Erd && f.kind == Kind::Other;
        let roce = |fs: &Vec<&Frame>| fs.iter().any(|f| !tcp(f));
        // (An SDR connection's data goes to several QPs, each frame in its own QP's flow.)
        let sdr_data = run.is_sdr() && flow.role == Role::Requests && flow.frames > 0;
        if !sdr_data && (flow.frames == 0 || !ix.by_flow.get(flow.id.as_str()).is_some_and(roce)) {
            *out.unobservable.entry(Why::FlowNotSeen).or_default() += n as u64;
            continue;
        }
        let reverse = tap.flows.iter().find(|o| o.conn == flow.conn && o.role != flow.role);
        let requests = tap.flows.iter().find(|o| o.conn == flow.conn && o.role == Role::Requests);
        let mut cx = Cx {
            run,
            ix: &ix,
            flow,
            key: (flow.conn, flow.role),
            position: position(run, &ix, flow),
            frames: ix.by_flow.get(flow.id.as_str()).unwrap_or(&empty),
            reverse: reverse.and_then(|r| ix.by_flow.get(r.id.as_str())).unwrap_or(&empty),
            messages: requests.map(|r| r.messages.as_slice()).unwrap_or(&[]),
            erd_asks: Vec::new(),
            erd_ambiguous: HashSet::new(),
        };
        if run.stack() == Stack::Erd && flow.role == Role::Requests {
            cx.erd_asks = erd_asks(&cx);
            cx.erd_ambiguous = erd_ambiguous(&cx);
        }
        cxs.push(cx);
    }
    let mut views: Vec<FlowView> = Vec::new();
    let mut sdr_views: Vec<FlowView> = Vec::new();
    for cx in &cxs {
        // (SDR's and Flor's requests flows have rules of their own.)
        let own = match cx.run.stack() {
            _ if cx.key.1 != Role::Requests => None,
            Stack::SdrSr | Stack::SdrEc => Some(sdr::sdr_views(cx)),
            Stack::Flor => Some(vec![flor::flor_view(cx, cx.run.t.config.flor_unit_size)]),
            _ => None,
        };
        if let Some(own) = own {
            sdr_views.extend(own);
            // (A placeholder keeps `views` in step with `cxs`; it is dropped below.)
            views.push(FlowView {
                id: String::new(),
                conn: cx.flow.conn,
                role: cx.flow.role,
                position: cx.position,
                losses: Vec::new(),
                retransmissions: Vec::new(),
                capture_gaps: Vec::new(),
                messages: Vec::new(),
                unobservable: Vec::new(),
                ambiguous: Vec::new(),
                unjudged: Vec::new(),
            });
            continue;
        }
        let mut unobs = Vec::new();
        let losses = losses(cx, &mut unobs);
        let lost_seen: HashSet<u32> = losses.iter().map(|l| l.tx).collect();
        let retx = retransmissions(cx, &lost_seen, &mut unobs);
        let gaps = capture_gaps(cx, &mut unobs);
        views.push(FlowView {
            id: cx.flow.id.clone(),
            conn: cx.flow.conn,
            role: cx.flow.role,
            position: cx.position,
            losses,
            retransmissions: retx,
            capture_gaps: gaps,
            messages: Vec::new(),
            unobservable: unobs,
            ambiguous: {
                // (ERD's analysis reads no loss from order: only NACKs that do not mean what
                // they seem to mislead it.)
                let mut r: Vec<u32> = if cx.run.stack() == Stack::Erd {
                    cx.erd_ambiguous.iter().copied().collect()
                } else {
                    cx.run.reordered.iter().filter(|(k, _)| *k == cx.key).map(|&(_, p)| p).collect()
                };
                r.extend(cx.stale_signals());
                r.extend(cx.netrt_late_between_tors());
                r.sort_unstable();
                r.dedup();
                r
            },
            unjudged: Vec::new(),
        });
    }
    // Messages: a message's retransmitted count needs every recorded retransmission of it, in
    // either direction of its connection, to be observable.
    let observable_retx: HashSet<u64> = views.iter().flat_map(|v| v.retransmissions.iter().map(|r| r.frame)).collect();
    for (cx, v) in cxs.iter().zip(views.iter_mut()) {
        if !v.id.is_empty() {
            v.messages = messages(cx, &observable_retx, &mut v.unobservable);
        }
    }
    views.retain(|v| !v.id.is_empty());
    views.extend(sdr_views);
    for v in &views {
        for u in &v.unobservable {
            *out.unobservable.entry(u.why).or_default() += 1;
        }
    }
    out.flows = views;
    out
}

/// The tap's position relative to `flow`: the `sender` tap is at connection 0's sender host, the
/// `receiver` tap at its receiver host; a requests flow goes from its connection's sender host to
/// its receiver host, a responses flow the other way; the fabric tap is in the middle.
fn position(run: &Run<'_>, ix: &TapIx<'_>, flow: &Flow) -> Position {
    let Some(host) = ix.host else { return Position::Middle };
    let Some(c) = run.t.connections.iter().find(|c| c.index == flow.conn) else { return Position::Middle };
    let (src, dst) = match flow.role {
        Role::Requests => (c.sender, c.receiver),
        Role::Responses => (c.receiver, c.sender),
    };
    if host == src {
        Position::Source
    } else if host == dst {
        Position::Destination
    } else {
        Position::Middle
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers the rules share.

impl<'a> Cx<'a, '_> {
    /// The tap's (first) frame of transmission `id`.
    fn frame_of(&self, id: u32) -> Option<&'a Frame> {
        self.ix.by_tx.get(&id).and_then(|v| v.first().copied())
    }

    /// The tap's frame numbered `n` (its frames are in frame order).
    fn frame_numbered(&self, n: u64) -> Option<&'a Frame> {
        let frames = &self.ix.tap.frames;
        frames.binary_search_by_key(&n, |f| f.frame).ok().map(|i| &frames[i])
    }

    /// The tap's frames of the flow's connection, any of its flows (a research transport's
    /// several QPs), with their transmissions, in frame order.
    fn conn_frames(&self) -> impl Iterator<Item = (&'a Frame, &'a Transmission)> + '_ {
        let conn = self.flow.conn;
        self.ix.tap.frames.iter().filter_map(move |f| Some((f, self.run.tx(f.tx).filter(|x| x.conn == conn)?)))
    }

    /// The tap's data frames of the flow with PSN `p` (copies of p, whole or header-only), in
    /// frame order.
    fn recorded_copies(&self, p: u32) -> impl Iterator<Item = &'a Frame> + '_ {
        let kind = data_kind(self.key.1);
        let frames = self.ix.by_psn.get(&(self.flow.id.as_str(), p)).map(Vec::as_slice).unwrap_or(&[]);
        frames.iter().copied().filter(move |f| f.kind == kind)
    }

    fn reordered(&self, p: u32) -> bool {
        self.run.reordered.contains(&(self.key, p))
    }

    /// The gap rule's repair (the first copy of `p` the tap recorded after `c`) came after the
    /// tap knew it is at the destination.
    fn knows_destination(&self, c: u32, p: u32) -> bool {
        self.recorded_copies(p).find(|f| f.tx > c).is_some_and(|f| self.position_at(f.frame) == Position::Destination)
    }

    /// Where the tap is for the flow as its frames before frame `at` tell: a capture learns it
    /// is at a host from a frame that host sent (an initial IP TTL), so until the tap recorded a
    /// frame going out of its host, the destination's tap reads its flows as a fabric tap would.
    fn position_at(&self, at: u64) -> Position {
        if self.position != Position::Destination {
            return self.position;
        }
        let known = self.ix.first_out.is_some_and(|f| f < at);
        if known {
            Position::Destination
        } else {
            Position::Middle
        }
    }

    /// The tap recorded a bounce of `p` (in the reverse flow) after copy `c` was sent and before
    /// the next copy `next` was sent (by the transmissions' send times; a bounce at the instant
    /// the next copy leaves counts as before it).
    fn bounce_between(&self, p: u32, c: u32, next: Option<u32>) -> bool {
        let Some(sent) = self.run.tx(c).map(|x| x.time_ns) else { return false };
        let until = next.and_then(|n| self.run.tx(n)).map(|x| x.time_ns);
        self.reverse.iter().any(|f| {
            f.kind == Kind::HoBounce && f.psn == p && f.time_ns >= sent && until.is_none_or(|u| f.time_ns <= u)
        })
    }

    /// Copy `c` was trimmed and the tap recorded its header-only form, or (at the source tap,
    /// which records every copy, so a bounce names the copy before it) a bounce of its PSN
    /// between its send and the next copy's. (A fabric tap on one of several paths may see a
    /// bounce of a copy that went another way: it cannot tell which copy was trimmed.)
    fn header_only_seen(&self, c: u32, next: Option<u32>) -> bool {
        let Some(x) = self.run.tx(c) else { return false };
        let ho_form = self.ix.by_tx.get(&c).is_some_and(|v| v.iter().any(|f| f.ho));
        x.trim.is_some() && (ho_form || (self.position == Position::Source && self.bounce_between(x.psn, c, next)))
    }

    /// NetRT on a fabric that sprays (or routes adaptively), at a tap between the ToRs: the PSNs
    /// resent although an earlier copy arrived whole (accepted, or discarded by the host's
    /// Go-Back-N). The destination ToR asks for a PSN it lacks,
    /// and a copy on a slower path is one it lacks too: the tap reads the request (which the
    /// truth does not record) as saying the copy before the resend was lost. The hosts' arrivals
    /// do not show such lateness (the destination ToR restores the order before the host), so
    /// `reordered` does not catch it. The hosts' resends count too: a request the pool cannot
    /// serve ends in the hosts' Go-Back-N, and the tap reads the request as the loss of the
    /// copy before that resend (the first sprayed mismatch found was such a case).
    fn netrt_late_between_tors(&self) -> Vec<u32> {
        let sprays = self.run.t.config.routing != crate::truth::Routing::Ecmp;
        if self.run.stack() != Stack::Netrt || self.position != Position::Middle || !sprays {
            return Vec::new();
        }
        let delivered = |c: &u32| self.run.tx(*c).is_some_and(|x| x.fate == Fate::Delivered);
        let mut out: Vec<u32> = self
            .frames
            .iter()
            .filter(|f| f.kind == data_kind(self.key.1) && f.retx.is_some())
            .filter(|f| self.run.around(self.key, f.psn, f.tx).0.iter().any(delivered))
            .map(|f| f.psn)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// PSNs whose copies a stale signal followed, at the source tap: between two copies c and
    /// c′ of p the tap recorded a NAK or SACK with PSN ≤ p that the receiver sent before c
    /// arrived whole. The tap reads such a signal as the receiver's answer to c — c missing, or
    /// (Go-Back-N) discarded — when it answered an earlier state; which it was, no capture shows.
    fn stale_signals(&self) -> Vec<u32> {
        if self.position != Position::Source {
            return Vec::new();
        }
        let signals: Vec<&Frame> = self.reverse.iter().copied().filter(|f| matches!(f.kind, Kind::Nak | Kind::Sack)).collect();
        let mut out = Vec::new();
        let mut by_psn: HashMap<u32, Vec<&Frame>> = HashMap::new();
        for f in self.frames.iter().filter(|f| f.kind == data_kind(self.key.1)) {
            by_psn.entry(f.psn).or_default().push(f);
        }
        for (&p, copies) in &by_psn {
            let stale = copies.windows(2).any(|w| {
                let Some(c) = self.run.tx(w[0].tx) else { return false };
                let (Fate::Delivered, Some(arrived)) = (c.fate, c.fate_time_ns) else { return false };
                signals.iter().any(|s| {
                    s.frame > w[0].frame
                        && s.frame < w[1].frame
                        && psn_le(s.psn, p)
                        && self.run.tx(s.tx).is_some_and(|x| x.time_ns < arrived)
                })
            });
            if stale {
                out.push(p);
            }
        }
        out
    }

    /// Before frame `before`, the tap recorded an acknowledgement in the reverse flow proving
    /// data PSN `p` (of message `msg`) received: an ACK with PSN ≥ p, a NAK or SACK with PSN > p,
    /// a READ response with PSN > p; for `dcp` an ACK at or after the `complete_frame` of p's
    /// message (DCP ACKs acknowledge messages).
    fn acked_before(&self, p: u32, msg: Option<u64>, before: u64) -> bool {
        if self.run.stack() == Stack::Dcp {
            let complete = msg.and_then(|m| self.messages.iter().find(|x| x.index == m)).and_then(|x| x.complete_frame);
            return self.key.1 == Role::Requests && complete.is_some_and(|c| c < before);
        }
        self.reverse.iter().take_while(|f| f.frame < before).any(|f| match f.kind {
            Kind::Ack => psn_le(p, f.psn),
            Kind::Nak | Kind::Sack => psn::lt(p, f.psn),
            Kind::ReadResponse => self.key.1 == Role::Requests && psn::lt(p, f.psn),
            _ => false,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Retransmissions.

/// The tap's retransmissions of the flow: observable when the tap recorded the copies of the PSN
/// in the order they were sent and an earlier copy than this one.
fn retransmissions(cx: &Cx<'_, '_>, lost_seen: &HashSet<u32>, unobs: &mut Vec<Unobservable>) -> Vec<ObsRetx> {
    let mut out = Vec::new();
    for r in &cx.flow.retransmissions {
        let copies: Vec<&Frame> = cx.recorded_copies(r.psn).collect();
        let in_order = copies.windows(2).all(|w| w[0].tx < w[1].tx);
        let earlier_seen = copies.iter().any(|f| f.frame < r.frame);
        let why = if !in_order {
            Some(Why::CopiesOutOfOrder)
        } else if !earlier_seen {
            Some(Why::EarlierCopyNotSeen)
        } else {
            None
        };
        if let Some(why) = why {
            unobs.push(Unobservable { fact: Fact::Retransmission, psn: Some(r.psn), index: None, tx: Some(r.tx), why });
            continue;
        }
        let (earlier, _) = cx.run.around(cx.key, r.psn, r.tx);
        if cx.position == Position::Middle && cx.run.tx(r.tx).is_some_and(is_switch) {
            // NetRT's source ToR resent it (a tap between the ToRs shows it marked), asked for
            // by the destination ToR, which had not got it: not spurious, its cause the loss. A
            // tap here cannot see what the destination ToR holds, so a resend of a PSN an
            // earlier copy of which the receiver had accepted after all, or one reordering may
            // have overtaken, is unobservable.
            let x = cx.run.tx(r.tx).and_then(|x| x.retx.as_ref());
            let why = if cx.reordered(r.psn) {
                Some(Why::Reordered)
            } else if x.is_none_or(|x| x.spurious) {
                Some(Why::SwitchResendNeedless)
            } else {
                None
            };
            if let Some(why) = why {
                unobs.push(Unobservable {
                    fact: Fact::Retransmission,
                    psn: Some(r.psn),
                    index: None,
                    tx: Some(r.tx),
                    why,
                });
                continue;
            }
            out.push(ObsRetx {
                psn: r.psn,
                tx: r.tx,
                frame: r.frame,
                time_ns: r.time_ns,
                trigger: None,
                spurious: Some(false),
                cause: x.map(|x| x.cause),
            });
            continue;
        }
        if cx.run.stack() == Stack::Netrt && cx.position == Position::Middle {
            unobs.push(Unobservable {
                fact: Fact::Retransmission,
                psn: Some(r.psn),
                index: None,
                tx: Some(r.tx),
                why: Why::SwitchRequests,
            });
            continue;
        }
        let trigger = trigger(cx, r.tx, r.frame);
        let spurious = spurious(cx, r.psn, r.msg, r.tx, r.frame, trigger);
        let earlier_loss_seen = earlier.iter().any(|c| lost_seen.contains(c));
        out.push(ObsRetx {
            psn: r.psn,
            tx: r.tx,
            frame: r.frame,
            time_ns: r.time_ns,
            trigger,
            spurious,
            cause: cause(spurious, trigger, earlier_loss_seen),
        });
    }
    out.sort_by_key(|r| r.frame);
    out
}

/// What made the sender resend transmission `id` (recorded at frame `at`): known at the source
/// tap only. Since the previous copy of its PSN left, the tap recorded in the reverse flow a NAK
/// with PSN ≤ p, a SACK, or a bounce of p, and the stack's reason is that signal's (`go_back`:
/// `nak`, `sack`: `sack`, `header_only`: `ho`); or none of these and the reason is `timeout`.
/// Otherwise `None` (a signal arrived but the timer fired, or the reverse).
fn trigger(cx: &Cx<'_, '_>, id: u32, at: u64) -> Option<Signal> {
    if cx.run.stack() == Stack::Erd {
        return cx.erd_trigger(cx.run.tx(id)?.psn, at);
    }
    if cx.position != Position::Source {
        return None;
    }
    let x = cx.run.tx(id)?;
    let (earlier, _) = cx.run.around(cx.key, x.psn, id);
    // (The last earlier copy the tap recorded: NetRT's switch resends never cross a host's tap.)
    let prev = earlier.iter().rev().find_map(|&c| cx.frame_of(c))?.frame;
    let window = || cx.reverse.iter().filter(|f| f.frame > prev && f.frame < at);
    let nak = window().any(|f| f.kind == Kind::Nak && psn_le(f.psn, x.psn));
    let sack = window().any(|f| f.kind == Kind::Sack);
    let bounce = window().any(|f| f.kind == Kind::HoBounce && f.psn == x.psn);
    match x.retx.as_ref()?.reason? {
        Reason::GoBack if nak => Some(Signal::Nak),
        Reason::Sack if sack => Some(Signal::Sack),
        Reason::HeaderOnly if bounce => Some(Signal::Ho),
        Reason::Timeout if !(nak || sack || bounce) => Some(Signal::Timeout),
        _ => None,
    }
}

/// Whether the retransmission `id` of `p` (recorded at frame `at`) was spurious, when the tap
/// tells.
fn spurious(cx: &Cx<'_, '_>, p: u32, msg: Option<u64>, id: u32, at: u64, trigger: Option<Signal>) -> Option<bool> {
    // At the destination: an earlier copy the tap recorded was accepted (gbn: `accepted`, in
    // sequence; irn, dcp: it arrived whole).
    if cx.position_at(at) == Position::Destination {
        let accepted = |f: &Frame| {
            let acc = cx.run.tx(f.tx).and_then(|x| x.accept);
            match cx.run.stack() {
                Stack::Gbn | Stack::Netrt => acc == Some(Accept::Accepted),
                Stack::Irn | Stack::Dcp => !f.ho && acc.is_some(),
                // ERD: its receiver accepts the first whole copy of a PSN (any earlier whole
                // copy the tap recorded is one). (SDR's views are `sdr.rs`'s; Flor's are not
                // built yet: `synth --truth` refuses its runs.)
                Stack::SdrSr | Stack::SdrEc | Stack::Flor | Stack::Erd => acc == Some(Accept::Accepted),
            }
        };
        return Some(cx.recorded_copies(p).any(|f| f.frame < at && accepted(f)));
    }
    // At the source and middle taps: an acknowledgement proving p received came first.
    if cx.acked_before(p, msg, at) {
        return Some(true);
    }
    if cx.run.stack() == Stack::Erd {
        return cx.erd_spurious(p, at);
    }
    // At the source: the receiver asked for it after the previous copy left, and no copy was
    // still on its way — whatever moved the sender (the trigger may be unknown: a signal arrived
    // and the timer fired): `gbn`, a NAK with PSN ≤ p (the receiver discarded what followed the
    // PSN it expects); `irn`, a NAK or SACK naming p as expected (a SACK asks for every PSN it
    // does not cover, but a PSN may be uncovered only because the SACKs covering it were lost);
    // `dcp`, a bounce of p.
    let _ = trigger;
    let (earlier, _) = cx.run.around(cx.key, p, id);
    let prev = earlier.iter().rev().find_map(|&c| cx.frame_of(c)).map(|f| f.frame);
    let asked = prev.is_some_and(|prev| {
        cx.reverse.iter().any(|f| {
            f.frame > prev
                && f.frame < at
                && match cx.run.stack() {
                    Stack::Gbn | Stack::Netrt => f.kind == Kind::Nak && psn_le(f.psn, p),
                    Stack::Irn => matches!(f.kind, Kind::Nak | Kind::Sack) && f.psn == p,
                    Stack::Dcp => f.kind == Kind::HoBounce && f.psn == p,
                    Stack::SdrSr | Stack::SdrEc | Stack::Flor | Stack::Erd => false,
                }
        })
    });
    if cx.position == Position::Source && asked && !cx.reordered(p) {
        return Some(false);
    }
    // Every earlier copy was trimmed, and the source tap (which records every copy) shows each
    // one's bounce (a fabric tap may miss a copy that went another way and arrived).
    let (earlier, _) = cx.run.around(cx.key, p, id);
    let all_trimmed_seen = earlier.iter().enumerate().all(|(i, &c)| {
        let next = earlier.get(i + 1).copied().or(Some(id));
        cx.header_only_seen(c, next)
    });
    if cx.position == Position::Source && !earlier.is_empty() && all_trimmed_seen {
        return Some(false);
    }
    None
}

/// A research transport's resend trigger at a tap: `signal` when the tap read the receiver's
/// request for it (`asked`: SDR's NACKs, Flor's ACK gaps) and the stack's reason is the
/// request's (`sack`); at the source, `timeout` when it read none and the reason is the timer;
/// `Err` when the two disagree (its PSNs are ambiguous), else `None`.
fn asked_trigger(asked: bool, reason: Option<Reason>, source: bool, signal: Signal) -> Result<Option<Signal>, ()> {
    match (asked, reason) {
        (true, Some(Reason::Sack)) => Ok(Some(signal)),
        (true, _) => Err(()),
        (false, Some(Reason::Timeout)) if source => Ok(Some(Signal::Timeout)),
        (false, Some(Reason::Sack)) if source => Err(()),
        (false, _) => Ok(None),
    }
}

/// The truth's `cause` when the tap determines it: `spurious` when spurious; when not spurious,
/// `timeout` if the trigger is `timeout`, `loss` if the trigger is a receiver's signal (so the
/// stack's reason was not its timer) and the tap shows the loss of an earlier copy. `go_back`
/// needs the reason not to be the timer and every earlier copy discarded: no tap shows both.
fn cause(spurious: Option<bool>, trigger: Option<Signal>, earlier_loss_seen: bool) -> Option<RetxCause> {
    match (spurious?, trigger) {
        (true, _) => Some(RetxCause::Spurious),
        (false, Some(Signal::Timeout)) => Some(RetxCause::Timeout),
        (false, Some(Signal::Nak | Signal::Sack | Signal::Ho | Signal::ErdNack | Signal::SdrBitmap))
            if earlier_loss_seen =>
        {
            Some(RetxCause::Loss)
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Losses.

/// The flow's losses: only data losses can be observable, by header-only evidence (any tap),
/// "asked for" (source tap) or a gap (destination tap).
fn losses(cx: &Cx<'_, '_>, unobs: &mut Vec<Unobservable>) -> Vec<ObsLoss> {
    if cx.run.stack() == Stack::Erd {
        return erd_losses(cx, unobs);
    }
    let mut out = Vec::new();
    for l in &cx.flow.losses {
        let why = |why| Unobservable { fact: Fact::Loss, psn: Some(l.psn), index: None, tx: Some(l.tx), why };
        if l.kind != data_kind(cx.key.1) {
            unobs.push(why(Why::NotData));
            continue;
        }
        let (c, p) = (l.tx, l.psn);
        let (_, next) = cx.run.around(cx.key, p, c);
        // At the source, the next copy it recorded (NetRT's switch resends never cross it).
        let next_here = if cx.position == Position::Source {
            cx.run.copies_of(cx.key, p).iter().copied().find(|&n| n > c && cx.frame_of(n).is_some())
        } else {
            next
        };
        let header_only = cx.header_only_seen(c, next);
        // NetRT: between the ToRs, the source ToR's resend (marked) names the loss it repairs.
        let switch_repair = cx.position == Position::Middle
            && next.is_some_and(|n| cx.run.tx(n).is_some_and(is_switch) && cx.frame_of(n).is_some());
        let evidence = header_only
            || switch_repair
            || (cx.position == Position::Source && asked_for(cx, c, p, next_here))
            || (cx.position == Position::Destination && gap_seen(cx, c, p) && cx.knows_destination(c, p));
        if !evidence {
            let reordered = cx.position != Position::Middle && cx.reordered(p);
            unobs.push(why(if reordered { Why::Reordered } else { Why::NoEvidence }));
            continue;
        }
        // The frame: the tap's frame of c, else of the next copy (the repair).
        let Some(fr) = cx.frame_of(c).or_else(|| next.and_then(|n| cx.frame_of(n))) else {
            unobs.push(why(Why::NoFrame));
            continue;
        };
        let (signal, repair) = if switch_repair {
            (Some(Signal::NetrtRequest), Some(Repair::InNetwork))
        } else if cx.position == Position::Source {
            let repair = if next_here.is_some() { Repair::EndHost } else { Repair::None };
            let signal = next_here.and_then(|n| cx.frame_of(n).and_then(|f| trigger(cx, n, f.frame)));
            (signal, Some(repair))
        } else {
            let later = cx.recorded_copies(p).any(|f| f.tx > c);
            (None, later.then_some(Repair::EndHost))
        };
        out.push(ObsLoss { psn: p, tx: c, frame: fr.frame, time_ns: fr.time_ns, signal, repair });
    }
    out.sort_by_key(|l| l.frame);
    out
}

/// "Asked for" (source tap): p is not reordered, c is the copy sent just before the next copy
/// c′, and c′'s trigger is known and is `sack`, or is `nak` with a NAK of PSN exactly p recorded
/// between c and c′ (a Go-Back-N receiver names only the first missing PSN).
fn asked_for(cx: &Cx<'_, '_>, c: u32, p: u32, next: Option<u32>) -> bool {
    let (Some(n), false) = (next, cx.reordered(p)) else { return false };
    let (Some(fc), Some(fn_)) = (cx.frame_of(c), cx.frame_of(n)) else { return false };
    match trigger(cx, n, fn_.frame) {
        Some(Signal::Sack | Signal::Nak) => cx
            .reverse
            .iter()
            .any(|f| matches!(f.kind, Kind::Nak | Kind::Sack) && f.psn == p && f.frame > fc.frame && f.frame < fn_.frame),
        _ => false,
    }
}

/// A gap (destination tap): p is not reordered; c′, the first copy of p the tap recorded, was
/// sent after c; c is the only lost copy of p sent before c′; and before c′ the tap recorded a
/// whole data frame of the flow with a PSN above p.
fn gap_seen(cx: &Cx<'_, '_>, c: u32, p: u32) -> bool {
    if cx.reordered(p) {
        return false;
    }
    let Some(first) = cx.recorded_copies(p).next() else { return false };
    if first.tx <= c {
        return false;
    }
    let (before, _) = cx.run.around(cx.key, p, first.tx);
    let lost: Vec<u32> = before.iter().copied().filter(|&x| cx.run.tx(x).is_some_and(is_lost)).collect();
    let kind = data_kind(cx.key.1);
    let above = cx.frames.iter().any(|f| f.frame < first.frame && f.kind == kind && !f.ho && psn::lt(p, f.psn));
    lost == [c] && above
}

/// The network failed to deliver it whole.
fn is_lost(x: &Transmission) -> bool {
    matches!(x.fate, Fate::Dropped | Fate::Trimmed)
}

// ---------------------------------------------------------------------------------------------
// Capture gaps.

/// A PSN the receiver accepted of which the tap recorded no copy: observable when the tap
/// recorded data of the flow with a lower PSN and with a higher one (for `dcp`, both of the
/// gap's message) and the proof frame is not `null`.
fn capture_gaps(cx: &Cx<'_, '_>, unobs: &mut Vec<Unobservable>) -> Vec<ObsGap> {
    let kind = data_kind(cx.key.1);
    let dcp = cx.run.stack() == Stack::Dcp;
    let mut out = Vec::new();
    for g in &cx.flow.capture_gaps {
        let around = |f: &&&Frame| f.kind == kind && (!dcp || f.msg == g.msg);
        // A lower one before the proof (the window an analyser keeps starts at the first PSN it
        // saw: a PSN below it that an acknowledgement covered is not known to have existed until
        // a lower one shows up), a higher one at any time.
        let lower = cx.frames.iter().filter(around).any(|f| psn::lt(f.psn, g.psn) && g.frame.is_some_and(|p| f.frame < p));
        let higher = cx.frames.iter().filter(around).any(|f| psn::lt(g.psn, f.psn));
        let why = match g.frame {
            _ if !(lower && higher) => Some(Why::OutsideSeenRange),
            None => Some(Why::NoEvidence),
            Some(frame) => {
                out.push(ObsGap { psn: g.psn, frame });
                None
            }
        };
        if let Some(why) = why {
            unobs.push(Unobservable { fact: Fact::CaptureGap, psn: Some(g.psn), index: None, tx: Some(g.tx), why });
        }
    }
    out.sort_by_key(|g| g.frame);
    out
}

// ---------------------------------------------------------------------------------------------
// Messages.

/// The flow's messages (requests flows): observable when the tap recorded data of it and of every
/// earlier message; its fields when the tap determines the message's PSN range.
fn messages(cx: &Cx<'_, '_>, observable_retx: &HashSet<u64>, unobs: &mut Vec<Unobservable>) -> Vec<ObsMessage> {
    let mut out = Vec::new();
    let mut all_seen = true;
    let mut ms: Vec<&FlowMessage> = cx.flow.messages.iter().collect();
    ms.sort_by_key(|m| m.index);
    let dcp = cx.run.stack() == Stack::Dcp;
    for m in ms {
        // A message is counted from its first packet (`gbn`, `irn`: its opcode says First or
        // Only); `dcp` packets name their message (MSN), so any of its packets will do.
        all_seen &= if dcp {
            m.first_frame.is_some()
        } else {
            m.first_psn.is_some_and(|p| cx.recorded_copies(p).any(|f| f.msg == Some(m.index)))
        };
        if !all_seen {
            unobs.push(Unobservable {
                fact: Fact::Message,
                psn: None,
                index: Some(m.index),
                tx: None,
                why: Why::MessageNotSeen,
            });
            continue;
        }
        out.push(message(cx, m, observable_retx));
    }
    out
}

/// One observable message.
fn message(cx: &Cx<'_, '_>, m: &FlowMessage, observable_retx: &HashSet<u64>) -> ObsMessage {
    let read = m.op == Op::Read;
    let requests = |p: Option<u32>| p.is_some_and(|p| cx.recorded_copies(p).any(|f| f.msg == Some(m.index)));
    // The PSN range: a READ, from its request (whose length gives the responses); otherwise
    // from copies of its first and last PSN (the MSN tells a DCP packet's message, not where
    // the message starts or ends).
    let range = match cx.run.stack() {
        _ if read => requests(m.first_psn),
        _ => requests(m.first_psn) && requests(m.last_psn),
    };
    // Every retransmission of it the tap recorded, in either direction of the connection (a
    // READ's responses are in the responses flow), is observable.
    let conn_flows = cx.ix.tap.flows.iter().filter(|o| o.conn == cx.flow.conn);
    let mut own_retx = conn_flows.flat_map(|o| &o.retransmissions).filter(|r| r.msg == Some(m.index));
    let retx_known = range && own_retx.all(|r| observable_retx.contains(&r.frame));
    // A READ completes at the requester, where its responses arrive; an ERD message at the
    // receiver, and only there (nothing acknowledges it).
    let complete_known = range
        && if cx.run.stack() == Stack::Erd { erd_complete_known(cx) } else { !read || cx.position == Position::Source };
    let mut unknown = Vec::new();
    let mut keep = |known: bool, names: &[&'static str]| {
        if !known {
            unknown.extend_from_slice(names);
        }
        known
    };
    let r = keep(range, &["first_frame", "last_frame", "packets"]);
    let rt = keep(retx_known, &["retransmitted"]);
    let c = keep(complete_known, &["complete_frame", "complete_time_ns"]);
    ObsMessage {
        index: m.index,
        first_frame: m.first_frame.filter(|_| r),
        last_frame: m.last_frame.filter(|_| r),
        packets: Some(m.packets).filter(|_| r),
        retransmitted: Some(m.retransmitted).filter(|_| rt),
        complete_frame: m.complete_frame.filter(|_| c),
        complete_time_ns: m.complete_time_ns.filter(|_| c),
        unknown,
    }
}
