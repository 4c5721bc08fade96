//! Flor's WQE copies, software ACKs and user messages (docs/analysis.md, "Flor"; WIRE.md B.3;
//! seed 002 §4-5 and Appendix A.1; notes/flor.md §1.2, §1.3, §3.3).
//!
//! Flor's unit of reliability is a `flor_unit_size` unit (4 KiB) of a large message (its
//! ADDR_REQ one more, of its own) or a small message's SEND. A WQE transmission — a *copy* — is
//! one UC WQE on the data QP, consecutive PSNs: a WRITE chunk (the immediate of its last packet
//! names message id and first unit), a WRITE_RETX piece of a lost chunk, a small message's DATA,
//! or an ADDR_REQ (SENDs, named by the 24-byte header of their first packet, which gives the
//! global number and the body's length, hence the copy's packets). A resend is a new copy with
//! new PSNs, so the PSN tracker owns no Flor message: here, per data flow:
//!
//! - A copy is **identified** when the tap recorded the packet naming it and learned its span: a
//!   SEND's first packet; every packet of a WRITE chunk (then its bytes give its units). Packets
//!   of copies the tap cannot name are counted in the flow only.
//! - **ACKs** (receiver → sender, a UD QP of their own; the ACK flow `serves` the data flow)
//!   *list* the copies whose global numbers (or chunk numbers) they name; every identified copy
//!   not listed yet, recorded before the newest copy an ACK lists, is *gap-flagged* (UC keeps a
//!   QP's order: the receiver did not get it whole; notes §3.3).
//! - Every packet of a resend copy (a SEND with the retransmission flag, or a WRITE_RETX piece)
//!   is a **retransmission** of the latest identified earlier copy p of the same units (its first
//!   unit). Trigger `flor_ack` when an ACK gap-flagged p, else `timeout` at the sender's tap,
//!   else unknown. Spurious at the receiver's tap when each of its units had arrived whole in an
//!   earlier copy; elsewhere when ACKs had listed copies of each of its units, not spurious when
//!   p was gap-flagged. Its cause: `spurious`, else `timeout` for the timer's, else unknown (an
//!   ACK's gap does not tell which packet of p was lost).
//! - A **loss** is named where a packet can be: a SEND copy's PSN the tap did not record
//!   (downstream of the loss: the hole, at the frame of its repair), or a one-packet copy the tap
//!   recorded (upstream: at its own frame). It is a loss when an ACK gap-flagged its copy before
//!   the next identified copy of its unit (its repair, `end_host`, signal `flor_ack`) came. A
//!   multi-packet copy the tap recorded whole and an ACK flagged names no packet: no loss.
//! - **Messages** are user messages (a large one by its message id, a small one by its SEND
//!   reliable number), listed as the tap identifies their first copy. `packets` counts the
//!   recorded packets of first copies, `retransmitted` those of resends; a message completes at
//!   the ACK after which every one of its units is listed (known once its ADDR_REQ told the
//!   length; a small message is one unit).
//!
//! Units are `flor_unit_size` bytes (`--flor-unit-size`, [`super::Options::flor_unit_size`]).

use std::collections::{BTreeMap, HashMap};

use rocescope_codec::ext::flor::{Acked, SEND_HEADER_LEN};
use rocescope_codec::ib::opcode::Position;
use rocescope_codec::ib::psn;
use rocescope_codec::params::ImmSplit;

use super::pkt::{Class, FlorAckPkt, FlorKind, Pkt, PktExt, ReqOp};
use super::report::{Cause, Evidence, Loss, Message, Ns, Repair, Retransmission, Signal};
use super::track::Place;
use super::Analyzer;

/// A user message: a large one by its message id, a small one by its SEND reliable number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum MsgKey {
    Large(u32),
    Small(u32),
}

/// What a copy carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    Chunk,
    Piece,
    Data,
    AddrReq,
}

/// What a resend copy's packets are, decided at its first.
#[derive(Clone, Copy, Debug)]
struct RetxFacts {
    trigger: Signal,
    spurious: Option<bool>,
    cause: Cause,
    copy: u32,
}

/// An identified copy.
#[derive(Clone, Debug)]
struct Copy {
    msg: MsgKey,
    what: What,
    /// A SEND's global number (0 for a chunk).
    gn: u64,
    /// First unit and units covered.
    off: u32,
    units: u32,
    first_psn: u32,
    /// Frame and time of its first recorded packet.
    at: u64,
    time: u64,
    /// Its packets, and how many the tap recorded.
    span: u32,
    recorded: u32,
    /// Copies of its first unit before it (0: a first copy).
    nth: u32,
    retx: Option<RetxFacts>,
    listed: bool,
    gapped: bool,
}

impl Copy {
    fn covers(&self, u: u32) -> bool {
        u >= self.off && u - self.off < self.units
    }
    /// Of the same message's units of the same class (an ADDR_REQ's unit is its own).
    fn same_class(&self, o: &Copy) -> bool {
        self.msg == o.msg && (self.what == What::AddrReq) == (o.what == What::AddrReq)
    }
    fn whole(&self) -> bool {
        self.recorded >= self.span
    }
}

/// A packet a loss may name, waiting for the next copy of its unit.
#[derive(Clone, Copy, Debug)]
struct Pending {
    copy: u64,
    psn: u32,
    unit: u32,
    /// The lost packet's own frame (recorded, upstream), or none: the repair's (a hole).
    frame: Option<(u64, u64)>,
}

/// A user message's units as the tap learned them.
#[derive(Debug, Default)]
struct Msg {
    /// Its entry in the flow's timeline.
    index: usize,
    /// Data units (from its ADDR_REQ; a small message: 1).
    units: Option<u32>,
    /// Its units listed by an ACK, and those recorded whole in some copy.
    acked: Units,
    whole: Units,
    /// Its identified copies, in the tap's order.
    copies: Vec<u64>,
    pending: Vec<Pending>,
    done: bool,
    /// Time of its first identified copy.
    first_time: u64,
}

/// Units of a message marked (listed by an ACK, or arrived whole): its data units, and its
/// ADDR_REQ's unit of its own.
#[derive(Debug, Default)]
struct Units {
    data: Vec<bool>,
    /// Data units marked.
    count: u32,
    addr: bool,
}

impl Units {
    /// Marks copy `c`'s units.
    fn mark(&mut self, c: &Copy) {
        if c.what == What::AddrReq {
            self.addr = true;
            return;
        }
        for u in c.off as usize..(c.off + c.units) as usize {
            if self.data.len() <= u {
                self.data.resize(u + 1, false);
            }
            self.count += !std::mem::replace(&mut self.data[u], true) as u32;
        }
    }

    /// Every unit of copy `c` is marked.
    fn all(&self, c: &Copy) -> bool {
        if c.what == What::AddrReq {
            return self.addr;
        }
        (c.off as usize..(c.off + c.units) as usize).all(|u| self.data.get(u).copied().unwrap_or(false))
    }
}

/// The WQE being received.
#[derive(Clone, Copy, Debug)]
enum Rx {
    /// An identified SEND copy: the next PSN expected.
    Send { id: u64, next: u32, mtu: u32 },
    /// A WRITE chunk so far: its span (`dma_len` bytes, MTU-sized packets, from its RETH), the
    /// packets recorded (the PSNs missing in [`FlowFlor::holes`]).
    Chunk { first_psn: u32, at: u64, time: u64, next: u32, dma_len: u32, mtu: u32, span: u32, packets: u32, bytes: u64 },
}

/// One data flow's Flor copies and messages.
#[derive(Debug, Default)]
pub struct FlowFlor {
    copies: HashMap<u64, Copy>,
    next_id: u64,
    msgs: HashMap<MsgKey, Msg>,
    /// SEND copies by global number, chunks by (message id, first unit).
    by_gn: HashMap<u64, u64>,
    chunks: HashMap<(u32, u32), u64>,
    /// Identified copies neither listed nor gap-flagged yet, by first frame.
    unlisted: BTreeMap<u64, u64>,
    rx: Option<Rx>,
    /// The PSNs the WQE being received is missing so far.
    holes: Vec<u32>,
    /// The reliable number's split, from the WRITE chunks.
    split: Option<ImmSplit>,
    /// Messages completed, in order (forgotten [`KEEP_DONE`] later).
    done: std::collections::VecDeque<MsgKey>,
    /// Bytes per unit (`flor_unit_size`).
    unit: u64,
}

/// Completed messages kept (a late resend or ACK still finds its copies).
const KEEP_DONE: usize = 4096;

/// PSNs missing from one WQE that are named at most: a damaged capture may claim a WQE of
/// millions of packets; one missing more names none (Flor's largest WQE, a 64 KiB chunk, has
/// 256 packets at a 256-byte MTU).
const MAX_HOLES: usize = 4096;

impl FlowFlor {
    /// The unit (of `unit` bytes) of the first byte of packet `k` of copy `c` (a SEND's first 24
    /// bytes its header).
    fn packet_unit(c: &Copy, k: u32, mtu: u32, unit: u64) -> u32 {
        let at = k as u64 * mtu as u64;
        match c.what {
            What::Chunk => c.off + (at / unit) as u32,
            What::Piece => c.off + (at.saturating_sub(SEND_HEADER_LEN as u64) / unit) as u32,
            What::Data | What::AddrReq => c.off,
        }
    }

    /// Packet `psn` of the WQE being received, which starts at `first` and spans `span`
    /// packets, `next` expected: the PSNs it skips are missing. False when the packet is not
    /// the WQE's (outside its span, or behind), or the WQE misses too many to name.
    fn step(&mut self, first: u32, span: u32, next: u32, psn: u32) -> bool {
        let (k, gap) = (psn::diff(first, psn), psn::diff(next, psn));
        k >= 0 && k < span as i32 && gap >= 0 && self.miss(next, gap as u32)
    }

    /// `n` PSNs from `from` are missing from the WQE being received; false (and none named)
    /// past [`MAX_HOLES`].
    fn miss(&mut self, from: u32, n: u32) -> bool {
        if self.holes.len() + n as usize > MAX_HOLES {
            self.holes.clear();
            return false;
        }
        self.holes.extend((0..n).map(|d| psn::add(from, d)));
        true
    }

    /// Copy `id` ends (`mtu`-sized packets): the PSNs it missed wait for a copy of their unit (a
    /// loss may name them), and a copy recorded whole marks its units arrived whole.
    fn settle(&mut self, id: u64, mtu: u32) {
        let unit = self.unit;
        let Some(c) = self.copies.get(&id) else { return self.holes.clear() };
        let Some(m) = self.msgs.get_mut(&c.msg) else { return self.holes.clear() };
        m.pending.extend(self.holes.drain(..).map(|p| {
            let k = psn::diff(c.first_psn, p) as u32;
            Pending { copy: id, psn: p, unit: Self::packet_unit(c, k, mtu, unit), frame: None }
        }));
        if c.whole() {
            m.whole.mark(c);
        }
    }

    /// Ends the WQE being received: a SEND copy's PSNs not recorded, up to its span, are missing.
    fn close(&mut self) {
        match self.rx.take() {
            Some(Rx::Send { id, next, mtu }) => {
                if let Some(c) = self.copies.get(&id) {
                    let tail = psn::diff(next, psn::add(c.first_psn, c.span)).max(0) as u32;
                    self.miss(next, tail);
                }
                self.settle(id, mtu);
            }
            _ => self.holes.clear(),
        }
    }

    /// Forgets messages completed long ago (memory stays bounded by the live messages).
    fn trim(&mut self) {
        while self.done.len() > KEEP_DONE {
            let Some(key) = self.done.pop_front() else { break };
            let Some(m) = self.msgs.remove(&key) else { continue };
            for id in m.copies {
                if let Some(c) = self.copies.remove(&id) {
                    self.unlisted.remove(&c.at);
                    match c.what {
                        What::Chunk => {
                            if let MsgKey::Large(mid) = c.msg {
                                self.chunks.remove(&(mid, c.off));
                            }
                        }
                        _ => {
                            self.by_gn.remove(&c.gn);
                        }
                    }
                }
            }
        }
    }
}

impl Analyzer {
    /// A data packet of a Flor flow `i` (the PSN tracker counts its PSN only: it belongs to no
    /// tracker message).
    pub(super) fn flor_data(&mut self, i: usize, k: &Pkt, place: Place) {
        let Class::Request { pos, op } = k.class else { return };
        let unit = self.opts.flor_unit_size.max(1) as u64;
        let st = self.flows[i].flor.get_or_insert_with(|| Box::new(FlowFlor { unit, ..FlowFlor::default() }));
        let starts = matches!(pos, Position::First | Position::Only);
        if starts {
            st.close();
        }
        match (pos, k.ext) {
            (_, PktExt::FlorSend { kind, retx, rn, gn, mid, off, len }) if starts => {
                let (key, what, off, units) = match kind {
                    FlorKind::Data => (MsgKey::Small(rn), What::Data, 0, 1),
                    FlorKind::AddrReq => (MsgKey::Large(mid), What::AddrReq, 0, 1),
                    FlorKind::WriteRetx => {
                        (MsgKey::Large(mid), What::Piece, off, (len as u64).div_ceil(unit).max(1) as u32)
                    }
                    FlorKind::Other => return,
                };
                let body = if kind == FlorKind::AddrReq { 16 } else { len as u64 };
                let total = SEND_HEADER_LEN as u64 + body;
                let mtu = k.payload.max(1);
                let span = if pos == Position::Only { 1 } else { total.div_ceil(mtu as u64).max(1) as u32 };
                let resend = retx || kind == FlorKind::WriteRetx;
                let c = Copy {
                    msg: key,
                    what,
                    gn,
                    off,
                    units,
                    first_psn: k.psn,
                    at: k.frame,
                    time: k.time_ns,
                    span,
                    recorded: 0,
                    nth: 0,
                    retx: None,
                    listed: false,
                    gapped: false,
                };
                let msg_units = (kind == FlorKind::AddrReq).then(|| (len as u64).div_ceil(unit).max(1) as u32);
                let id = self.flor_identify(i, c, msg_units, resend, place);
                self.flor_packet(i, id, k);
                let st = self.flows[i].flor.as_mut().expect("a Flor flow");
                st.rx = Some(Rx::Send { id, next: psn::add(k.psn, 1), mtu });
                if pos == Position::Only {
                    st.close();
                }
            }
            (Position::Only, PktExt::FlorWrite { mid, off, split }) => {
                st.split = Some(split);
                let c = one_chunk(mid, off, k, 1, k.payload as u64, unit);
                let id = self.flor_identify(i, c, None, false, place);
                self.flor_chunk_packets(i, id, k, 1, k.payload, k.payload as u64);
            }
            (Position::First, PktExt::WriteFirst { dma_len }) if op == ReqOp::Write => {
                st.rx = Some(Rx::Chunk {
                    first_psn: k.psn,
                    at: k.frame,
                    time: k.time_ns,
                    next: psn::add(k.psn, 1),
                    dma_len,
                    mtu: k.payload.max(1),
                    span: (dma_len as u64).div_ceil(k.payload.max(1) as u64).max(1) as u32,
                    packets: 1,
                    bytes: k.payload as u64,
                });
            }
            (Position::Middle | Position::Last, ext) => {
                let last = pos == Position::Last;
                match st.rx {
                    Some(Rx::Send { id, next, mtu }) => {
                        let Some((first, span)) = st.copies.get(&id).map(|c| (c.first_psn, c.span)) else { return };
                        if !st.step(first, span, next, k.psn) {
                            // A WQE the tap cannot name.
                            st.close();
                            return;
                        }
                        st.rx = Some(Rx::Send { id, next: psn::add(k.psn, 1), mtu });
                        self.flor_packet(i, id, k);
                        if last {
                            self.flows[i].flor.as_mut().expect("a Flor flow").close();
                        }
                    }
                    Some(Rx::Chunk { first_psn, at, time, next, dma_len, mtu, span, packets, bytes }) => {
                        if !st.step(first_psn, span, next, k.psn) {
                            // A WQE the tap cannot name.
                            st.close();
                            return;
                        }
                        let (packets, bytes) = (packets + 1, bytes + k.payload as u64);
                        let next = psn::add(k.psn, 1);
                        st.rx = Some(Rx::Chunk { first_psn, at, time, next, dma_len, mtu, span, packets, bytes });
                        if !last {
                            return;
                        }
                        st.rx = None;
                        let PktExt::FlorWrite { mid, off, split } = ext else { return };
                        st.split = Some(split);
                        if psn::diff(first_psn, k.psn) != span as i32 - 1 {
                            return st.holes.clear();
                        }
                        let mut c = one_chunk(mid, off, k, span, dma_len as u64, unit);
                        (c.first_psn, c.at, c.time) = (first_psn, at, time);
                        let id = self.flor_identify(i, c, None, false, place);
                        // (Its packets, recorded before it was named; the PSNs it misses.)
                        self.flor_chunk_packets(i, id, k, packets, mtu, bytes);
                    }
                    None => {}
                }
            }
            _ => st.rx = None,
        }
    }

    /// Names copy `c` of flow `i` (its first packet, or a chunk's last): its message, the
    /// losses it repairs, and for a resend what its packets are. Returns its id.
    fn flor_identify(&mut self, i: usize, mut c: Copy, msg_units: Option<u32>, resend: bool, place: Place) -> u64 {
        let v = self.flows[i].data.peek(c.first_psn);
        let st = self.flows[i].flor.as_mut().expect("a Flor flow");
        let id = st.next_id;
        st.next_id += 1;
        let key = c.msg;
        if !st.msgs.contains_key(&key) {
            let out = self.flows[i].sdr_out.get_or_insert_with(Default::default);
            let index = out.msgs.len();
            out.msgs.push(Message {
                index: index as u64,
                op: if matches!(key, MsgKey::Large(_)) { "write_imm" } else { "send" },
                first_psn: c.first_psn,
                last_psn: None,
                first_frame: c.at,
                last_frame: c.at,
                complete_frame: None,
                complete_time_ns: None,
                packets: Some(0),
                retransmitted: 0,
                bytes: 0,
                latency_ns: None,
            });
            self.flows[i].data.stats.messages += 1;
            let units = matches!(key, MsgKey::Small(_)).then_some(1);
            let m = Msg { index, units, first_time: c.time, ..Msg::default() };
            self.flows[i].flor.as_mut().expect("a Flor flow").msgs.insert(key, m);
        }
        let st = self.flows[i].flor.as_mut().expect("a Flor flow");
        let m = st.msgs.get_mut(&key).expect("inserted");
        if let Some(u) = msg_units {
            m.units.get_or_insert(u);
        }
        // The packets waiting for a copy of their unit: this one repairs them, if an ACK
        // flagged theirs before.
        let mut losses = Vec::new();
        m.pending.retain(|p| {
            let Some(pc) = st.copies.get(&p.copy) else { return false };
            if !(pc.same_class(&c) && c.covers(p.unit)) {
                return true;
            }
            if pc.gapped {
                let (frame, time) = p.frame.unwrap_or((c.at, c.time));
                losses.push(Loss {
                    psn: p.psn,
                    frame,
                    time_ns: Ns(time),
                    signal: Signal::FlorAck,
                    repair: Repair::EndHost,
                    evidence: Evidence::AskedFor,
                    message: Some(m.index as u64),
                });
            }
            false
        });
        // A resend: of the latest earlier copy of its first unit.
        let prev =
            m.copies.iter().rev().filter_map(|id| st.copies.get(id)).find(|p| p.same_class(&c) && p.covers(c.off));
        c.nth = prev.map_or(0, |p| p.nth + 1);
        if resend {
            let gapped = prev.is_some_and(|p| p.gapped);
            let trigger = match place {
                _ if gapped => Signal::FlorAck,
                Place::Source => Signal::Timeout,
                _ => Signal::Unknown,
            };
            let spurious = match prev {
                None => None,
                Some(_) if place == Place::Destination => Some(m.whole.all(&c)),
                Some(_) if m.acked.all(&c) => Some(true),
                Some(_) if gapped => Some(false),
                Some(_) => None,
            };
            let cause = match (spurious, trigger) {
                (Some(true), _) => Cause::Spurious,
                (Some(false), Signal::Timeout) => Cause::Timeout,
                // (A packet of the flagged copy was lost, though an ACK does not say which.)
                (Some(false), Signal::FlorAck) => Cause::Loss,
                _ => Cause::Unknown,
            };
            c.retx = Some(RetxFacts { trigger, spurious, cause, copy: c.nth.max(1) });
        }
        m.copies.push(id);
        let index = m.index as u64;
        if c.span == 1 {
            // A one-packet copy the tap recorded: an ACK's gap names its packet.
            m.pending.push(Pending { copy: id, psn: c.first_psn, unit: c.off, frame: Some((c.at, c.time)) });
        }
        match c.what {
            What::Chunk => {
                if let MsgKey::Large(mid) = key {
                    st.chunks.insert((mid, c.off), id);
                }
            }
            _ => {
                st.by_gn.insert(c.gn, id);
            }
        }
        st.unlisted.insert(c.at, id);
        let span = c.span as u64;
        st.copies.insert(id, c);
        let s = &mut self.flows[i].data.stats;
        s.losses += losses.len() as u64;
        let out = self.flows[i].sdr_out.get_or_insert_with(Default::default);
        out.losses.extend(losses);
        // (The per-packet `message` field: the copy's PSNs are its message's.)
        if let Some(v) = v {
            out.ranges.push((v, v + span - 1, index));
        }
        id
    }

    /// A recorded packet `k` of identified copy `id`: its message's counts, and a resend's
    /// retransmission.
    fn flor_packet(&mut self, i: usize, id: u64, k: &Pkt) {
        let Some(st) = self.flows[i].flor.as_mut() else { return };
        let Some(c) = st.copies.get_mut(&id) else { return };
        c.recorded += 1;
        let retx = c.retx;
        let Some(index) = st.msgs.get(&c.msg).map(|m| m.index) else { return };
        let out = self.flows[i].sdr_out.get_or_insert_with(Default::default);
        let Some(msg) = out.msgs.get_mut(index) else { return };
        let Some(r) = retx else { return record(msg, k, 1, k.payload as u64) };
        record(msg, k, 0, 0);
        msg.retransmitted += 1;
        out.retx.push(Retransmission {
            psn: k.psn,
            frame: k.frame,
            time_ns: Ns(k.time_ns),
            spurious: r.spurious,
            cause: r.cause,
            trigger: r.trigger,
            copy: r.copy,
            message: Some(index as u64),
        });
        let s = &mut self.flows[i].data.stats;
        // (The PSN tracker took it for a first copy: its PSN is new.)
        s.unique_bytes = s.unique_bytes.saturating_sub(k.payload as u64);
        s.retransmitted += 1;
        s.spurious += (r.spurious == Some(true)) as u64;
        s.timeouts += (r.trigger == Signal::Timeout) as u64;
        s.max_retries = s.max_retries.max(r.copy);
    }

    /// A WRITE chunk named at its last packet `k`: its `packets` recorded (`bytes` of payload)
    /// count in its message, and it ends ([`FlowFlor::settle`], `mtu`-sized packets).
    fn flor_chunk_packets(&mut self, i: usize, id: u64, k: &Pkt, packets: u32, mtu: u32, bytes: u64) {
        let Some(st) = self.flows[i].flor.as_mut() else { return };
        let Some(c) = st.copies.get_mut(&id) else { return };
        c.recorded = packets;
        let key = c.msg;
        st.settle(id, mtu);
        let Some(index) = st.msgs.get(&key).map(|m| m.index) else { return };
        let Some(msg) = self.flows[i].sdr_out.as_mut().and_then(|o| o.msgs.get_mut(index)) else { return };
        record(msg, k, packets, bytes);
    }

    /// A Flor software ACK (on its own UD QP, receiver → sender).
    pub(super) fn flor_ack(&mut self, a: &FlorAckPkt) {
        let k = &a.pkt;
        let Some(c) = self.index.get(&super::Key(k.iface, k.src, k.dst, k.destqp)) else { return };
        let Some(j) = self.index.get(&super::Key(k.iface, k.dst, k.src, a.qpn)) else { return };
        if c != j {
            self.flows[c].serves = Some(j);
        }
        let Some(st) = self.flows[j].flor.as_mut() else { return };
        let split = st.split.unwrap_or(rocescope_codec::Params::default().flor_split);
        let mut newest = None;
        let mut touched: Vec<MsgKey> = Vec::new();
        for e in &a.acked {
            let id = match *e {
                Acked::Write { rn } => {
                    let (_, mid, off) = split.split(rn);
                    st.chunks.get(&(mid, off)).copied()
                }
                Acked::Send { gn } => st.by_gn.get(&gn).copied(),
            };
            let Some(c) = id.and_then(|id| st.copies.get_mut(&id)) else { continue };
            newest = newest.max(Some(c.at));
            if c.listed {
                continue;
            }
            c.listed = true;
            st.unlisted.remove(&c.at);
            let Some(m) = st.msgs.get_mut(&c.msg) else { continue };
            m.acked.mark(c);
            if !touched.contains(&c.msg) {
                touched.push(c.msg);
            }
        }
        // Listed a later copy, not these: a gap.
        if let Some(newest) = newest {
            let behind: Vec<u64> = st.unlisted.range(..newest).map(|(_, &id)| id).collect();
            for id in behind {
                if let Some(c) = st.copies.get_mut(&id) {
                    c.gapped = true;
                    st.unlisted.remove(&c.at);
                }
            }
        }
        // Messages whose every unit is now listed complete here.
        let mut done = Vec::new();
        for key in touched {
            let Some(m) = st.msgs.get_mut(&key) else { continue };
            if m.done || m.units.is_none_or(|u| m.acked.count < u) {
                continue;
            }
            m.done = true;
            st.done.push_back(key);
            done.push((m.index, m.first_time));
        }
        st.trim();
        let Some(out) = self.flows[j].sdr_out.as_mut() else { return };
        for (index, first_time) in done {
            if let Some(msg) = out.msgs.get_mut(index) {
                msg.complete_frame = Some(k.frame);
                msg.complete_time_ns = Some(Ns(k.time_ns));
                msg.latency_ns = Some(k.time_ns.saturating_sub(first_time));
            }
        }
    }
}

/// Packet `k` of message `msg` recorded, its latest so far, bringing `packets` packets of
/// first copies (`bytes` of payload).
fn record(msg: &mut Message, k: &Pkt, packets: u32, bytes: u64) {
    msg.last_frame = msg.last_frame.max(k.frame);
    msg.last_psn = Some(k.psn);
    msg.packets = Some(msg.packets.unwrap_or(0) + packets);
    msg.bytes += bytes;
}

/// A WRITE chunk of message `mid` from unit `off`, named at packet `k`: `packets` packets,
/// `bytes` of payload.
fn one_chunk(mid: u32, off: u32, k: &Pkt, packets: u32, bytes: u64, unit: u64) -> Copy {
    Copy {
        msg: MsgKey::Large(mid),
        what: What::Chunk,
        gn: 0,
        off,
        units: bytes.div_ceil(unit).max(1) as u32,
        first_psn: k.psn,
        at: k.frame,
        time: k.time_ns,
        span: packets,
        recorded: 0,
        nth: 0,
        retx: None,
        listed: false,
        gapped: false,
    }
}
