//! SDR-RDMA's rules of the observable view (docs/truth.md, "What a tap can observe", SDR;
//! seed 001 §3.2-4). SDR sends every packet as its own UC WRITE with Immediate naming (send,
//! packet offset) and ignores PSNs: a packet's copies are those of its (send, offset)
//! (`sim.transmissions[].sdr_seq` and `sdr_off`), each under a new UC PSN, possibly on another
//! data QP. Selective repeat sends a message as one send; erasure coding as data and parity
//! submessages D0, P0, D1, …, each its own send, and the view's messages are then the sends (as
//! the wire names them: a message's facts are its sends that carried a packet). What a tap
//! learns of losses and resends it reads from the receiver's control messages (`sdr_ctrl`),
//! never from PSNs or order:
//!
//! - **What a tap reads** ([`Reads`]): the control messages it recorded, each about the send
//!   whose sequence number it names, once the tap has recorded a data frame of that send and
//!   before the send's completion at the tap. An SR_ACK *acknowledges* every chunk below its
//!   cumulative ACK and every chunk its bitmap marks, and *asks for* every chunk from the
//!   cumulative ACK up to the highest marked one that is not marked; an SR_NACK asks for the
//!   chunks it names. An EC_ACK acknowledges every packet of the send it names (a message's
//!   D0) and completes it; an EC_NACK *names* every packet of the data submessages it lists
//!   (sends `msg_seq + 2j`), which the sender resends received or not: no loss evidence
//!   ([`Ask`]). Only an SR_NACK or EC_NACK makes the sender resend at once. A chunk is `N`
//!   packets (`config.sdr_chunk_packets`, `--sdr-chunk`): chunk `c` is packets `c·N …
//!   c·N + N − 1`, and what a control message says of a chunk it says of each of them. With
//!   `N` > 1 a request for a chunk says the receiver lacked one of its packets, not which: it is
//!   *evidence* that a packet was lacked only at the destination's tap, for a packet of the
//!   chunk the tap had recorded no copy of before the request; anywhere else it asks for the
//!   packets (a NACK's resends are at once) but proves no loss and no need.
//! - A **retransmission** is observable when the tap recorded an earlier copy of its packet
//!   (copies in send order). Its `trigger` at the source tap is the stack's reason (`timeout`
//!   when no NACK the tap read since the previous copy it recorded named the packet,
//!   `sdr_bitmap` for a resend a NACK named), elsewhere `sdr_bitmap` when such a NACK named it
//!   and the reason is that NACK, else unknown. It is spurious at the destination (the receiver
//!   had a whole copy the tap recorded); elsewhere spurious when the tap read an acknowledgement
//!   of the packet before it, not spurious when it read an SR_ACK's or SR_NACK's request for it
//!   since the previous copy it recorded (the packet not ambiguous), else unknown.
//! - A **lost** copy c is observable when the tap read an SR_ACK's or SR_NACK's request for its
//!   packet after the copy it recorded last before the next copy k it recorded, and either it
//!   recorded c, that last copy (frame: c's), or it recorded no copy before k and c is the copy
//!   sent just before k (frame: k's, the repair; earlier lost copies leave no trace there). Its
//!   signal is k's trigger as above (`timeout` at the source when no NACK asked), repair
//!   `end_host`. It is listed in the flow (data QP) of its frame. A loss rebuilt from parity is
//!   unobservable (`erasure_decoded`).
//! - **Ambiguous packets**: a request the tap read for a packet with k the next copy it
//!   recorded, when a copy sent before k arrived whole (the receiver asked before a late copy
//!   arrived) or none sent before k was lost; and a packet whose resend's trigger contradicts
//!   the stack's reason (a NACK read, but the timer had fired; or, at the source tap, a resend
//!   for a NACK the tap did not record). Their PSNs (of every copy the tap recorded) are
//!   listed, so neither losses nor spuriousness of them are judged.
//! - A **message** (send) is listed in the flow of the first data frame of it the tap recorded,
//!   the flow's messages numbered in that order. Its first and last frame are the tap's;
//!   `retransmitted` (the retransmissions of it the tap recorded) is known when every one is
//!   observable. Its `packets` (those that left) are known when the tap recorded every one (a
//!   tap that missed some would count fewer); its completion (the first SR_ACK the tap recorded
//!   whose cumulative ACK passes every chunk of it, or its EC_ACK) when it recorded every one
//!   before that (one that missed some would take an earlier acknowledgement for the last, and
//!   one first seen after it says the message was not complete after all).
//! - **Reused ids** ([`id_reused`]): a send the tap cannot tell from another send of its
//!   message id (it missed the CTSes that tell them apart) is unobservable, with every later
//!   send of the id, its frames' PSNs `unjudged`.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{
    asked_trigger, cause, is_lost, Cx, Fact, Fate, FlowView, Frame, ObsLoss, ObsMessage, ObsRetx, Position, Repair,
    Signal, Unobservable, Why,
};
use crate::truth::{Kind, Transmission};

/// A packet: its send's message sequence number (selective repeat: the message's index) and
/// its offset.
type Unit = (u64, u32);

/// The packet a data transmission is a copy of.
fn unit_of(x: &Transmission) -> Option<Unit> {
    Some((x.sdr_seq? as u64, x.sdr_off?))
}

/// What asked for a packet.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ask {
    /// A hole in an SR_ACK's bitmap: the receiver lacks it (the sender's timer resends it).
    Hole,
    /// An SR_NACK naming its chunk: the receiver lacks it, and the sender resends it at once.
    Nack,
    /// An EC_NACK naming its data submessage: the sender resends every packet of it at once,
    /// whether the receiver had it or not (so no evidence of a loss).
    EcNack,
}

impl Ask {
    /// Evidence that the receiver lacked the packet.
    fn lacked(self) -> bool {
        matches!(self, Ask::Hole | Ask::Nack)
    }
    /// A request the sender answers at once.
    fn at_once(self) -> bool {
        matches!(self, Ask::Nack | Ask::EcNack)
    }
}

/// What the tap read of the connection's control messages.
#[derive(Default)]
struct Reads<'a> {
    /// (frame, packet, what asked, for a chunk of several packets): a request for the packet.
    asks: Vec<(u64, Unit, Ask, bool)>,
    /// (frame, message, cumulative ACK, marked chunks).
    acks: Vec<(u64, u64, u32, Vec<u32>)>,
    /// Per message: the frame that completes it at the tap.
    complete: HashMap<u64, &'a Frame>,
}

/// One data frame the tap recorded, with its transmission.
#[derive(Clone, Copy)]
struct Rec<'a> {
    f: &'a Frame,
    x: &'a Transmission,
}

impl Rec<'_> {
    fn unit(&self) -> Unit {
        unit_of(self.x).unwrap_or((u64::MAX, 0))
    }
}

/// The SDR connection's data flows as the tap observes them: one view per data QP the tap
/// recorded frames of (see the module's doc).
pub(super) fn sdr_views(cx: &Cx<'_, '_>) -> Vec<FlowView> {
    let conn = cx.flow.conn;
    let data: Vec<Rec> = cx
        .conn_frames()
        .filter(|(_, x)| x.kind == Kind::Data && x.sdr_off.is_some())
        .map(|(f, x)| Rec { f, x })
        .collect();
    let mut recorded: HashMap<Unit, Vec<Rec>> = HashMap::new();
    let mut of_send: HashMap<u64, Vec<Rec>> = HashMap::new();
    let mut first_seen: HashMap<u64, u64> = HashMap::new();
    let mut offsets: HashMap<u64, HashSet<u32>> = HashMap::new();
    for r in &data {
        recorded.entry(r.unit()).or_default().push(*r);
        of_send.entry(r.unit().0).or_default().push(*r);
        first_seen.entry(r.unit().0).or_insert(r.f.frame);
        offsets.entry(r.unit().0).or_default().insert(r.unit().1);
    }
    // Every copy of each packet, in send order.
    let mut sent: HashMap<Unit, Vec<&Transmission>> = HashMap::new();
    for x in &cx.run.t.sim.transmissions {
        if x.conn == conn && x.kind == Kind::Data {
            if let Some(u) = unit_of(x) {
                sent.entry(u).or_default().push(x);
            }
        }
    }
    // Each send's packets that left (every one, but for a parity submessage's first pass cut
    // short by a fallback).
    let mut send_offsets: HashMap<u64, Vec<u32>> = HashMap::new();
    for &(seq, off) in sent.keys() {
        send_offsets.entry(seq).or_default().push(off);
    }
    send_offsets.values_mut().for_each(|v| v.sort_unstable());
    let packets = |m: u64| -> u32 { send_offsets.get(&m).map_or(0, |v| v.len() as u32) };
    let reads = reads(cx, &first_seen, &send_offsets);
    let confused = id_reused(cx, &of_send, &first_seen);
    let s = Sdr { cx, recorded: &recorded, sent: &sent, reads: &reads };

    // Which copies' triggers contradict the stack's reason, and which packets a request
    // misleads the tap about.
    let mut ambiguous: HashSet<Unit> = s.misleading_asks();
    for r in &data {
        if r.x.retx.is_some() && s.trigger(r).is_err() {
            ambiguous.insert(r.unit());
        }
    }

    // Packets whose copies the tap recorded in another order than they were sent: an analyser
    // takes the later-recorded first copy for a resend; no frame of them is judged.
    let disordered: HashSet<Unit> =
        recorded.iter().filter(|(_, v)| v.windows(2).any(|w| w[0].x.id > w[1].x.id)).map(|(&u, _)| u).collect();
    // (Each with the flow of its frame, or of a recorded copy of its packet (the same channel's
    // QP), else none: the first view's.)
    let mut unobs: Vec<(Option<String>, Unobservable)> = Vec::new();
    let flow_of_unit = |u: Unit| recorded.get(&u).and_then(|v| v.first()).map(|r| r.f.flow.clone());
    // Losses.
    let mut losses: Vec<(String, ObsLoss)> = Vec::new();
    let mut lost_seen: HashSet<u32> = HashSet::new();
    for l in &cx.flow.losses {
        let why = |why| Unobservable { fact: Fact::Loss, psn: Some(l.psn), index: None, tx: Some(l.tx), why };
        let Some(c) = cx.run.tx(l.tx).filter(|x| x.kind == Kind::Data && x.sdr_off.is_some()) else {
            unobs.push((None, why(Why::NotData)));
            continue;
        };
        if l.repair == Repair::ErasureCode {
            unobs.push((flow_of_unit(unit_of(c).unwrap_or((u64::MAX, 0))), why(Why::ErasureDecoded)));
            continue;
        }
        if unit_of(c).is_some_and(|u| confused.contains(&u.0)) {
            unobs.push((flow_of_unit(unit_of(c).unwrap_or((u64::MAX, 0))), why(Why::IdReused)));
            continue;
        }
        // (Its copies recorded out of order: its frames are unjudged.)
        if unit_of(c).is_some_and(|u| disordered.contains(&u)) {
            unobs.push((flow_of_unit(unit_of(c).unwrap_or((u64::MAX, 0))), why(Why::CopiesOutOfOrder)));
            continue;
        }
        match s.loss(c) {
            Some((fr, signal)) if !ambiguous.contains(&unit_of(c).unwrap_or((u64::MAX, 0))) => {
                lost_seen.insert(c.id);
                let obs = ObsLoss {
                    psn: fr.psn,
                    tx: c.id,
                    frame: fr.frame,
                    time_ns: fr.time_ns,
                    signal,
                    repair: Some(Repair::EndHost),
                };
                losses.push((fr.flow.clone(), obs));
            }
            Some(_) => unobs.push((flow_of_unit(unit_of(c).unwrap_or((u64::MAX, 0))), why(Why::Reordered))),
            None => unobs.push((flow_of_unit(unit_of(c).unwrap_or((u64::MAX, 0))), why(Why::NoEvidence))),
        }
    }
    // Retransmissions.
    let mut retx: Vec<(String, ObsRetx)> = Vec::new();
    let mut unobservable_retx: HashSet<u64> = HashSet::new();
    for r in &data {
        let Some(rx) = r.x.retx.as_ref() else { continue };
        let copies = recorded.get(&r.unit()).map(Vec::as_slice).unwrap_or(&[]);
        let in_order = copies.windows(2).all(|w| w[0].x.id < w[1].x.id);
        let why = if confused.contains(&r.unit().0) {
            Some(Why::IdReused)
        } else if !in_order {
            Some(Why::CopiesOutOfOrder)
        } else if s.earlier_recorded(r).is_none() {
            Some(Why::EarlierCopyNotSeen)
        } else {
            None
        };
        if let Some(why) = why {
            unobservable_retx.insert(r.f.frame);
            let u = Unobservable { fact: Fact::Retransmission, psn: Some(r.f.psn), index: None, tx: Some(r.x.id), why };
            unobs.push((Some(r.f.flow.clone()), u));
            continue;
        }
        let _ = rx;
        let trigger = s.trigger(r).unwrap_or(None);
        let spurious = s.spurious(r, ambiguous.contains(&r.unit()));
        let earlier_loss_seen =
            sent.get(&r.unit()).is_some_and(|v| v.iter().any(|c| c.id < r.x.id && lost_seen.contains(&c.id)));
        let obs = ObsRetx {
            psn: r.f.psn,
            tx: r.x.id,
            frame: r.f.frame,
            time_ns: r.f.time_ns,
            trigger,
            spurious,
            cause: cause(spurious, trigger, earlier_loss_seen),
        };
        retx.push((r.f.flow.clone(), obs));
    }
    // Messages, in the flow of their first recorded frame, numbered there in that order.
    let mut by_first: Vec<(u64, u64)> = first_seen.iter().map(|(&m, &f)| (f, m)).collect();
    by_first.sort_unstable();
    let mut msgs: Vec<(String, ObsMessage)> = Vec::new();
    let mut next_index: HashMap<String, u64> = HashMap::new();
    // (A flow where the tap confused sends numbers its messages as the timeline may not: they
    // are matched by first frame.)
    let confused_flows: HashSet<&str> =
        data.iter().filter(|r| confused.contains(&r.unit().0)).map(|r| r.f.flow.as_str()).collect();
    for &(first, m) in &by_first {
        let recs: Vec<&Rec> = of_send.get(&m).map(|v| v.iter().collect()).unwrap_or_default();
        let flow = recs[0].f.flow.clone();
        if confused.contains(&m) {
            let index = recs[0].x.msg;
            let u = Unobservable { fact: Fact::Message, psn: None, index, tx: None, why: Why::IdReused };
            unobs.push((Some(flow), u));
            continue;
        }
        let index = next_index.entry(flow.clone()).or_default();
        let n = offsets.get(&m).map_or(0, |o| o.len() as u32);
        // Its retransmissions the tap recorded: known when every one is observable (one whose
        // earlier copies the tap never saw is not, and would be missed).
        let retx_frames: Vec<u64> = recs.iter().filter(|r| r.x.retx.is_some()).map(|r| r.f.frame).collect();
        let retx_known = retx_frames.iter().all(|f| !unobservable_retx.contains(f));
        // Its packets: known when the tap recorded every packet of it; its completion, when it
        // recorded every one before the SR_ACK completing it (a packet first seen after it, a
        // copy late on another path, tells the tap the message was not complete after all).
        let all_seen = n >= packets(m);
        let complete = reads.complete.get(&m).copied();
        let seen_before = |at: u64| {
            let before: HashSet<u32> = recs.iter().filter(|r| r.f.frame < at).map(|r| r.unit().1).collect();
            before.len() as u32 >= packets(m)
        };
        let complete_known = all_seen && complete.is_none_or(|c| seen_before(c.frame));
        let mut unknown = Vec::new();
        if confused_flows.contains(flow.as_str()) {
            unknown.push("index");
        }
        if !all_seen {
            unknown.push("packets");
        }
        if !retx_known {
            unknown.push("retransmitted");
        }
        if !complete_known {
            unknown.extend(["complete_frame", "complete_time_ns"]);
        }
        msgs.push((
            flow,
            ObsMessage {
                index: *index,
                first_frame: Some(first),
                last_frame: recs.iter().map(|r| r.f.frame).max(),
                packets: Some(n).filter(|_| all_seen),
                retransmitted: Some(retx_frames.len() as u64).filter(|_| retx_known),
                complete_frame: complete.map(|f| f.frame).filter(|_| complete_known),
                complete_time_ns: complete.map(|f| f.time_ns).filter(|_| complete_known),
                unknown,
            },
        ));
        *index += 1;
    }
    // (A message's facts are its sends that carried a packet: `Run::message_facts`.)
    for m in &cx.flow.messages {
        let sends = cx.run.sdr_sends.get(&(conn, m.index));
        let unseen = match sends {
            Some(s) if !s.is_empty() => s.iter().filter(|q| !first_seen.contains_key(q)).count(),
            _ => 1,
        };
        let u =
            Unobservable { fact: Fact::Message, psn: None, index: Some(m.index), tx: None, why: Why::MessageNotSeen };
        unobs.extend(std::iter::repeat_n((None, u), unseen));
    }
    for g in &cx.flow.capture_gaps {
        let u = Unobservable {
            fact: Fact::CaptureGap,
            psn: Some(g.psn),
            index: None,
            tx: Some(g.tx),
            why: Why::NoEvidence,
        };
        unobs.push((None, u));
    }

    // One view per data QP.
    let mut ids: Vec<&str> = data.iter().map(|r| r.f.flow.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut views: BTreeMap<&str, FlowView> = BTreeMap::new();
    for id in ids {
        let mut amb: Vec<u32> =
            data.iter().filter(|r| r.f.flow == id && ambiguous.contains(&r.unit())).map(|r| r.f.psn).collect();
        amb.sort_unstable();
        amb.dedup();
        views.insert(
            id,
            FlowView {
                id: id.to_string(),
                conn,
                role: cx.flow.role,
                position: cx.position,
                losses: pick(&losses, id),
                retransmissions: pick(&retx, id),
                capture_gaps: Vec::new(),
                messages: pick(&msgs, id),
                unobservable: unobs.iter().filter(|(f, _)| f.as_deref() == Some(id)).map(|(_, u)| u.clone()).collect(),
                ambiguous: amb,
                unjudged: {
                    let mut v: Vec<u32> = data
                        .iter()
                        .filter(|r| {
                            r.f.flow == id && (confused.contains(&r.unit().0) || disordered.contains(&r.unit()))
                        })
                        .map(|r| r.f.psn)
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                },
            },
        );
    }
    let mut out: Vec<FlowView> = views.into_values().collect();
    out.iter_mut().for_each(|v| {
        v.losses.sort_by_key(|l| l.frame);
        v.retransmissions.sort_by_key(|r| r.frame);
    });
    if let Some(v) = out.first_mut() {
        let ids: HashSet<&str> = data.iter().map(|r| r.f.flow.as_str()).collect();
        let elsewhere = unobs.into_iter().filter(|(f, _)| f.as_deref().is_none_or(|f| !ids.contains(f)));
        v.unobservable.extend(elsewhere.map(|(_, u)| u));
    }
    out
}

fn pick<T: Clone>(v: &[(String, T)], id: &str) -> Vec<T> {
    v.iter().filter(|(f, _)| f == id).map(|(_, t)| t.clone()).collect()
}

/// Each SR_ACK's bitmap of connection `conn`, by transmission: the truth keeps what each one
/// newly marks, and its message's marks only grow (`sim/sdr_ctrl_names.rs`).
fn bitmaps(cx: &Cx<'_, '_>, conn: u32) -> HashMap<u32, Vec<u32>> {
    let mut marks: HashMap<u32, crate::sim::SdrMarks> = HashMap::new();
    let mut out = HashMap::new();
    for x in cx.run.t.sim.transmissions.iter().filter(|x| x.conn == conn) {
        let Some(c) = x.sdr_ctrl.as_ref().filter(|c| c.kind == "sr_ack") else { continue };
        let (cum, bits) = (c.cum_ack.unwrap_or(0), c.sack_bits.unwrap_or(0));
        out.insert(x.id, marks.entry(c.msg_seq).or_default().sacked(cum, bits, &c.newly_sacked));
    }
    out
}

/// Reads the tap's control messages of the connection (see the module's doc): each about a
/// send the tap has recorded a data frame of and has not seen complete. `send_offsets`: each
/// send's packets.
fn reads<'a>(cx: &Cx<'a, '_>, first_seen: &HashMap<u64, u64>, send_offsets: &HashMap<u64, Vec<u32>>) -> Reads<'a> {
    let bitmap = bitmaps(cx, cx.flow.conn);
    let mut out = Reads::default();
    let packets = |m: u64| send_offsets.get(&m).map_or(0, |v| v.len() as u32);
    // Chunks to packets (module doc).
    let n = cx.run.t.config.sdr_chunk_packets.max(1);
    let multi = n > 1;
    let of_chunk = move |c: u32| rocescope_codec::ext::sdr::chunk_packets(c, n);
    for f in cx.reverse {
        let Some(c) = cx.run.tx(f.tx).and_then(|x| x.sdr_ctrl.as_ref()) else { continue };
        let m = c.msg_seq as u64;
        let open =
            |out: &Reads, m: u64| first_seen.get(&m).is_some_and(|&s| s < f.frame) && !out.complete.contains_key(&m);
        if c.kind == "ec_nack" {
            // (About data submessages D_j: sends m + 2j.)
            let named: Vec<u64> = c.indices.iter().map(|&j| ec_data_send(m, j)).filter(|&d| open(&out, d)).collect();
            for d in named {
                let offs = send_offsets.get(&d).map(Vec::as_slice).unwrap_or(&[]);
                out.asks.extend(offs.iter().map(|&o| (f.frame, (d, o), Ask::EcNack, false)));
            }
            continue;
        }
        if !open(&out, m) {
            continue;
        }
        match c.kind.as_str() {
            "sr_ack" => {
                let cum = c.cum_ack.unwrap_or(0);
                let sacked = bitmap.get(&f.tx).cloned().unwrap_or_default();
                if let Some(&top) = sacked.iter().max() {
                    let holes = (cum..top).filter(|o| !sacked.contains(o)).flat_map(of_chunk);
                    out.asks.extend(holes.map(|o| (f.frame, (m, o), Ask::Hole, multi)));
                }
                let cum = cum.saturating_mul(n);
                out.acks.push((f.frame, m, cum, sacked.into_iter().flat_map(of_chunk).collect()));
                if cum >= packets(m) {
                    out.complete.insert(m, *f);
                }
            }
            "sr_nack" => {
                let named = c.indices.iter().flat_map(|&c| of_chunk(c));
                out.asks.extend(named.map(|o| (f.frame, (m, o), Ask::Nack, multi)))
            }
            "ec_ack" => {
                // (Its message delivered: every packet of its first send is acknowledged.)
                out.acks.push((f.frame, m, u32::MAX, Vec::new()));
                out.complete.insert(m, *f);
            }
            _ => {}
        }
    }
    out
}

/// The sends the tap cannot tell from another send of their message id (module's doc). A send
/// is *placed* when the tap recorded its CTS last of its id's before its first frame; one not
/// placed is confused when the tap recorded an earlier CTS of its id (its packets are taken for
/// that receive's), or any control message of another send of its id after its first frame. Per id, in order of the tap's first frames, a send whose id an earlier
/// recorded send used is told apart from it when the earlier one was placed and the tap then
/// recorded a CTS of the id naming another sequence number (a receive posted there again)
/// before the later send's first frame, after which the earlier send's frames all come on QPs
/// that had carried it. Otherwise both, and every later send of the id, are confused.
fn id_reused(cx: &Cx<'_, '_>, of_send: &HashMap<u64, Vec<Rec>>, first_seen: &HashMap<u64, u64>) -> HashSet<u64> {
    let bits = rocescope_codec::Params::default().sdr_split.0;
    let id = |seq: u64| rocescope_codec::ext::sdr::msg_id(seq as u32, bits);
    // The tap's control frames, in order: (frame, a send it is about, a CTS). (An EC_NACK is about
    // the data submessages it names.)
    let mut ctrl: Vec<(u64, u64, bool)> = Vec::new();
    for f in cx.reverse {
        let Some(c) = cx.run.tx(f.tx).and_then(|x| x.sdr_ctrl.as_ref()) else { continue };
        let seq = c.msg_seq as u64;
        match c.kind.as_str() {
            "ec_nack" => ctrl.extend(c.indices.iter().map(|&j| (f.frame, ec_data_send(seq, j), false))),
            k => ctrl.push((f.frame, seq, k == "cts")),
        }
    }
    // (The latest CTS of its id before frame f0: the receive a timeline takes its packets for.)
    let last_cts = |f0: u64, s0: u64| ctrl.iter().rfind(|c| c.2 && c.0 < f0 && id(c.1) == id(s0)).map(|c| c.1);
    let mut chains: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
    for (&seq, &first) in first_seen {
        chains.entry(id(seq)).or_default().push((first, seq));
    }
    let mut out = HashSet::new();
    for chain in chains.values_mut() {
        chain.sort_unstable();
        let mut broken = false;
        for (i, &(f0, s0)) in chain.iter().enumerate() {
            let cts = last_cts(f0, s0);
            let known = cts == Some(s0);
            // (Taken for an earlier receive's: the send's own control messages are another's.
            // Taken for no receive's: any of its id's are its.)
            broken |= !known && (cts.is_some() || ctrl.iter().any(|c| c.0 > f0 && c.1 != s0 && id(c.1) == id(s0)));
            if let Some(&(f1, _)) = chain.get(i + 1).filter(|_| !broken) {
                let repost = ctrl.iter().find(|c| c.2 && c.0 > f0 && c.0 < f1 && id(c.1) == id(s0) && c.1 != s0);
                let apart = known
                    && repost.is_some_and(|&(at, _, _)| {
                        let of_s0 = || of_send.get(&s0).into_iter().flatten();
                        let qps: HashSet<&str> =
                            of_s0().filter(|r| r.f.frame < at).map(|r| r.f.flow.as_str()).collect();
                        of_s0().all(|r| r.f.frame < f1 && (r.f.frame < at || qps.contains(r.f.flow.as_str())))
                    });
                if !apart {
                    out.insert(s0);
                    broken = true;
                }
            }
            if broken {
                out.insert(s0);
            }
        }
    }
    out
}

/// Erasure coding: the send of data submessage `j` of the message whose first send is `base`
/// (`codec::ext::sdr::ec_data_send`; the truth's sequence numbers stay below 2^32).
fn ec_data_send(base: u64, j: u32) -> u64 {
    rocescope_codec::ext::sdr::ec_data_send(base as u32, j) as u64
}

/// The rules, over the tap's records of one connection.
struct Sdr<'c, 'a, 'r> {
    cx: &'c Cx<'a, 'r>,
    recorded: &'c HashMap<Unit, Vec<Rec<'a>>>,
    sent: &'c HashMap<Unit, Vec<&'a Transmission>>,
    reads: &'c Reads<'a>,
}

impl<'a> Sdr<'_, 'a, '_> {
    /// The copy of `r`'s packet the tap recorded last before `r`.
    fn earlier_recorded(&self, r: &Rec<'a>) -> Option<Rec<'a>> {
        self.recorded.get(&r.unit())?.iter().take_while(|c| c.f.frame < r.f.frame).last().copied()
    }

    /// A request for `u` that `which` accepts, read after frame `after` (if any) and before
    /// frame `before`; `chunks`: requests for a chunk of several packets count too.
    fn asked(&self, u: Unit, after: Option<u64>, before: u64, which: fn(Ask) -> bool, chunks: bool) -> bool {
        self.reads.asks.iter().any(|&(f, q, a, multi)| {
            q == u && f < before && after.is_none_or(|x| f > x) && which(a) && (chunks || !multi)
        })
    }

    /// An acknowledgement of `u` read before frame `before`.
    fn acked(&self, u: Unit, before: u64) -> bool {
        self.reads
            .acks
            .iter()
            .any(|(f, m, cum, sacked)| *f < before && *m == u.0 && (u.1 < *cum || sacked.contains(&u.1)))
    }

    /// What made the sender send copy `r` (see the module's doc); `Err` when the SR_NACK the
    /// tap read contradicts the stack's reason (the timer fired first).
    fn trigger(&self, r: &Rec<'a>) -> Result<Option<Signal>, ()> {
        let prev = self.earlier_recorded(r).map(|p| p.f.frame);
        let nack = self.asked(r.unit(), prev, r.f.frame, Ask::at_once, true);
        let reason = r.x.retx.as_ref().and_then(|x| x.reason);
        asked_trigger(nack, reason, self.cx.position == Position::Source, Signal::SdrBitmap)
    }

    /// Whether copy `r` was needless, when the tap tells.
    fn spurious(&self, r: &Rec<'a>, ambiguous: bool) -> Option<bool> {
        if self.cx.position_at(r.f.frame) == Position::Destination {
            let copies = self.recorded.get(&r.unit()).map(Vec::as_slice).unwrap_or(&[]);
            let whole = copies.iter().any(|c| c.f.frame < r.f.frame && c.x.fate == Fate::Delivered);
            return Some(whole);
        }
        if self.acked(r.unit(), r.f.frame) {
            return Some(true);
        }
        let prev = self.earlier_recorded(r).map(|p| p.f.frame);
        (self.asked(r.unit(), prev, r.f.frame, Ask::lacked, false) && !ambiguous).then_some(false)
    }

    /// The lost copy `c`'s frame and signal, when observable.
    fn loss(&self, c: &'a Transmission) -> Option<(&'a Frame, Option<Signal>)> {
        let u = unit_of(c)?;
        let copies = self.recorded.get(&u)?;
        let k = copies.iter().find(|r| r.x.id > c.id)?;
        let prior = copies.iter().take_while(|r| r.f.frame < k.f.frame).last();
        // (A chunk's request is evidence at the destination for a packet not recorded before.)
        let chunks = prior.is_none() && self.cx.position_at(k.f.frame) == Position::Destination;
        if !self.asked(u, prior.map(|p| p.f.frame), k.f.frame, Ask::lacked, chunks) {
            return None;
        }
        let frame = match prior {
            Some(p) if p.x.id == c.id => p.f,
            None if self.sent_just_before(u, k.x.id) == Some(c.id) => k.f,
            _ => return None,
        };
        Some((frame, self.trigger(k).unwrap_or(None)))
    }

    /// The copy of `u` sent just before copy `k` (the one `k` repairs, when lost).
    fn sent_just_before(&self, u: Unit, k: u32) -> Option<u32> {
        self.sent.get(&u)?.iter().map(|x| x.id).take_while(|&x| x < k).last()
    }

    /// The packets about which a request the tap read misleads it (see the module's doc).
    fn misleading_asks(&self) -> HashSet<Unit> {
        let mut out = HashSet::new();
        for &(f, u, _, multi) in self.reads.asks.iter().filter(|a| a.2.lacked()) {
            if out.contains(&u) {
                continue;
            }
            let Some(k) = self.recorded.get(&u).and_then(|v| v.iter().find(|r| r.f.frame > f)) else { continue };
            // (A chunk's request misleads only where it is evidence: `loss`.)
            let before = self.recorded.get(&u).is_some_and(|v| v.iter().any(|r| r.f.frame < f));
            if multi && (before || self.cx.position_at(k.f.frame) != Position::Destination) {
                continue;
            }
            let Some(all) = self.sent.get(&u) else { continue };
            let before: Vec<&&Transmission> = all.iter().filter(|x| x.id < k.x.id).collect();
            let whole = before.iter().any(|x| x.fate == Fate::Delivered);
            let lost = before.iter().any(|x| is_lost(x));
            // (Erasure coding: the message rebuilt from parity before k arrived: k was needless.)
            let delivered = |m: Option<u64>| {
                let s = self.cx.run.t.sim.messages.iter().find(|s| s.conn == k.x.conn && Some(s.index) == m);
                s.and_then(|s| s.delivered_ns)
            };
            let ec = self.cx.run.stack() == crate::truth::Stack::SdrEc;
            let decoded = ec && k.x.fate_time_ns.zip(delivered(k.x.msg)).is_some_and(|(arr, d)| d < arr);
            if whole || !lost || decoded {
                out.insert(u);
            }
        }
        out
    }
}
