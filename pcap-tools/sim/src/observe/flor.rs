//! Flor's rules of the observable view (docs/truth.md, "What a tap can observe", Flor; seed 002
//! §4-5, Appendix A.1). Flor's unit of reliability is a `flor_unit_size` unit of a large
//! message (its ADDR_REQ one more) or a small message's SEND; a WQE transmission (one GN,
//! `sim.transmissions[].flor`) is a copy of every unit it covers, its packets consecutive PSNs
//! of the data QP. What a tap learns of losses and resends it reads from the WQEs it recorded and
//! the receiver's ACKs (`flor_ack`, each listing GNs):
//!
//! - A copy is **identified** at a tap when the tap recorded the packets that name it and give
//!   its span: a SEND's first packet (its header: GN, type, body length); a WRITE chunk's first
//!   (its RETH length) and last (its immediate: message id and first unit).
//! - **Reading ACKs** (in frame order): an ACK the tap recorded *lists* the identified copies
//!   whose GNs it names. Every identified copy not listed yet, recorded before the newest copy
//!   the ACK lists, is *gap-flagged* (UC keeps a QP's order: the receiver did not get it).
//! - A **retransmission** (each packet of a resend WQE the tap recorded) is observable when its
//!   copy c is identified and the tap identified an earlier copy p covering c's first unit (the
//!   latest such, before c). Its trigger at the source tap: `flor_ack` when an ACK read between
//!   p and c gap-flagged p and the stack's reason is the ACK's (`sack`), `timeout` when none did
//!   and the reason is the timer; the two disagreeing make its PSNs ambiguous (trigger unknown).
//!   Elsewhere `flor_ack` when p was gap-flagged and the reason agrees, else unknown. Spurious: at
//!   the destination, when every unit of c had an earlier copy the tap recorded whole there;
//!   elsewhere when ACKs read before c listed copies covering every unit of c, not spurious when
//!   p was gap-flagged (and the PSN is not ambiguous), else unknown.
//! - A **lost** packet l of copy c is observable at a tap that did not record it (downstream of
//!   the loss) when c is identified there (its other packets show the hole), an ACK gap-flagged
//!   c, and the tap recorded the repair k (the next copy covering l's unit, the truth's) after
//!   that: frame k's first packet, PSN l's, signal k's trigger. A tap that recorded l (upstream)
//!   cannot tell which packet of c was lost (an ACK names the WQE): unobservable, but for a
//!   one-packet WQE (frame and PSN l's). A packet the tap's frames alone name as lost where the
//!   truth says otherwise (a lost ACK entry; a repair the tap could not name) is ambiguous.
//! - **Messages** are numbered in the flow as the tap meets them: at their first identified
//!   copy (a message with a packet recorded before that, in a copy the tap cannot name, is
//!   unobservable: `wqe_not_seen`). `first_frame` is the tap's; `last_frame` too, unless its last
//!   recorded packet is in a copy the tap cannot name; `packets` (first copies) known when it
//!   recorded all; `retransmitted` when every retransmission of it is observable; the completion
//!   (the truth's) when the tap knows the message's units (the ADDR_REQ identified; a small
//!   message is one) and identified every copy of it the completing ACKs list.
//! - A retransmission's **cause**: `spurious`; `loss` when not spurious after an ACK's gap (a
//!   packet of the flagged copy was lost, though no ACK says which); else as the other stacks'.
//!   A loss whose flag came before a repair the sender made on its timer is ambiguous.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{asked_trigger, cause, Cx, Fact, FlowView, Frame, ObsLoss, ObsMessage, ObsRetx, Position, Repair, Signal};
use super::{Unobservable, Why};
use crate::truth::{Accept, Kind, RetxCause, Transmission};
use rocescope_codec::ext::flor::SEND_HEADER_LEN;

/// A WQE copy the tap recorded some packet of.
struct Copy<'a> {
    gn: u64,
    msg: u64,
    wqe: &'a str,
    off: u32,
    units: u32,
    /// Its packets the tap recorded, in frame order.
    recs: Vec<(&'a Frame, &'a Transmission)>,
    /// All its packets (as sent), in send order.
    sent: Vec<&'a Transmission>,
    identified: bool,
    /// The frame of its first recorded packet (its place in the tap's order).
    at: u64,
}

impl Copy<'_> {
    fn covers(&self, u: u32) -> bool {
        u >= self.off && u - self.off < self.units
    }
    /// Whether `other` is a copy of units of the same kind (an ADDR_REQ's unit is its own) of the
    /// same message, covering unit `u`.
    fn same_unit(&self, other: &Copy, u: u32) -> bool {
        other.msg == self.msg && (other.wqe == "addr_req") == (self.wqe == "addr_req") && other.covers(u)
    }
    /// It reached the receiver whole.
    fn whole(&self) -> bool {
        arrived_whole(&self.sent)
    }
}

/// Whether a WQE's packets (as sent) reached the receiver whole: every one accepted or redundant.
fn arrived_whole(sent: &[&Transmission]) -> bool {
    sent.iter().all(|x| matches!(x.accept, Some(Accept::Accepted | Accept::Duplicate)))
}

/// The unit of the first payload byte of a WQE's packet `k` (4 KiB units unless the run says;
/// a SEND's first 24 bytes its header).
fn packet_unit(wqe: &str, off: u32, k: u32, mtu: u32, unit: u32) -> u32 {
    let at = k as u64 * mtu as u64;
    match wqe {
        "chunk" => off + (at / unit as u64) as u32,
        "piece" => off + (at.saturating_sub(SEND_HEADER_LEN as u64) / unit as u64) as u32,
        _ => 0,
    }
}

/// The Flor connection's data flow as the tap observes it (see the module's doc).
pub(super) fn flor_view(cx: &Cx<'_, '_>, unit: u32) -> FlowView {
    let conn = cx.flow.conn;
    let mtu = cx.run.t.connections.iter().find(|c| c.index == conn).map_or(1, |c| c.mtu.max(1));
    // Every WQE copy of the connection, by GN: its packets as sent.
    let mut sent: BTreeMap<u64, Vec<&Transmission>> = BTreeMap::new();
    for x in &cx.run.t.sim.transmissions {
        if let (true, Some(w)) = (x.conn == conn && x.kind == Kind::Data, x.flor.as_ref()) {
            sent.entry(w.gn).or_default().push(x);
        }
    }
    // The copies the tap recorded a packet of, in the order of their first recorded frame.
    let mut by_gn: HashMap<u64, Copy> = HashMap::new();
    for f in cx.frames {
        let Some(x) = cx.run.tx(f.tx).filter(|x| x.kind == Kind::Data) else { continue };
        let Some(w) = x.flor.as_ref() else { continue };
        let c = by_gn.entry(w.gn).or_insert_with(|| Copy {
            gn: w.gn,
            msg: x.msg.unwrap_or(u64::MAX),
            wqe: w.wqe.as_str(),
            off: w.off,
            units: w.units,
            recs: Vec::new(),
            sent: sent.get(&w.gn).cloned().unwrap_or_default(),
            identified: false,
            at: f.frame,
        });
        c.recs.push((f, x));
    }
    for c in by_gn.values_mut() {
        let first = c.sent.first().map(|x| x.id);
        let last = c.sent.last().map(|x| x.id);
        let has = |id: Option<u32>| c.recs.iter().any(|(_, x)| Some(x.id) == id);
        c.identified = match c.wqe {
            "chunk" => has(first) && has(last),
            _ => has(first),
        };
    }
    let mut order: Vec<u64> = by_gn.keys().copied().collect();
    order.sort_by_key(|g| by_gn[g].at);
    // ACK reads: per copy, when it was first listed and when gap-flagged (frames).
    let mut listed: HashMap<u64, u64> = HashMap::new();
    let mut gapped: HashMap<u64, u64> = HashMap::new();
    // (Each ACK: its frame, the GNs it lists.)
    let acks: Vec<(&Frame, &Vec<u64>)> =
        cx.conn_frames().filter_map(|(f, x)| Some((f, x.flor_ack.as_ref()?))).collect();
    for (f, gns) in &acks {
        let mut newest = None;
        for g in gns.iter() {
            let Some(c) = by_gn.get(g).filter(|c| c.identified && c.at < f.frame) else { continue };
            listed.entry(*g).or_insert(f.frame);
            newest = newest.max(Some(c.at));
        }
        let Some(newest) = newest else { continue };
        for g in &order {
            let c = &by_gn[g];
            if c.at < newest && c.identified && !listed.contains_key(g) {
                gapped.entry(*g).or_insert(f.frame);
            }
        }
    }
    // The latest identified copy before copy `c` covering unit `u` of its message.
    let previous = |c: &Copy, u: u32| -> Option<&Copy> {
        order.iter().map(|g| &by_gn[g]).rfind(|p| p.at < c.at && p.identified && c.same_unit(p, u))
    };
    let source = cx.position == Position::Source;
    let mut unobs: Vec<Unobservable> = Vec::new();
    let mut ambiguous: HashSet<u32> = HashSet::new();
    // Triggers per resend copy (Err: contradicts the stack's reason).
    let trigger = |c: &Copy, p: &Copy| -> Result<Option<Signal>, ()> {
        let flagged = gapped.get(&p.gn).is_some_and(|&at| at < c.at);
        let reason = c.recs.first().and_then(|(_, x)| x.retx.as_ref()).and_then(|r| r.reason);
        asked_trigger(flagged, reason, source, Signal::FlorAck)
    };
    // Losses.
    let mut losses: Vec<ObsLoss> = Vec::new();
    let mut lost_seen: HashSet<u32> = HashSet::new();
    for l in &cx.flow.losses {
        let why = |why| Unobservable { fact: Fact::Loss, psn: Some(l.psn), index: None, tx: Some(l.tx), why };
        let Some(x) = cx.run.tx(l.tx).filter(|x| x.kind == Kind::Data && x.flor.is_some()) else {
            unobs.push(why(Why::NotData));
            continue;
        };
        let w = x.flor.as_ref().expect("a WQE");
        let recorded = cx.ix.by_tx.contains_key(&x.id);
        let Some(c) = by_gn.get(&w.gn).filter(|c| c.identified || (recorded && c.sent.len() == 1)) else {
            unobs.push(why(Why::NoEvidence));
            continue;
        };
        let k = c.sent.iter().position(|y| y.id == x.id).unwrap_or(0) as u32;
        let u = packet_unit(c.wqe, c.off, k, mtu, unit);
        let repair = l.frame.and_then(|fr| cx.frame_numbered(fr));
        let next = order.iter().map(|g| &by_gn[g]).find(|k2| k2.at > c.at && k2.identified && c.same_unit(k2, u));
        let flagged = gapped.get(&c.gn).copied();
        let ok = match (recorded, next, flagged) {
            (_, Some(k2), Some(at)) if at < k2.at => {
                let frame = if recorded { c.sent.len() == 1 } else { repair.is_some_and(|r| r.frame == k2.at) };
                // (The ACK's gap came before the repair, but the sender resent on its timer:
                // the tap's evidence misleads about the signal; the loss is not judged.)
                if frame && trigger(k2, c).is_err() {
                    ambiguous.insert(x.psn);
                }
                frame.then(|| trigger(k2, c).unwrap_or(None))
            }
            _ => None,
        };
        match (ok, repair) {
            (Some(signal), Some(fr)) => {
                lost_seen.insert(x.id);
                losses.push(ObsLoss {
                    psn: x.psn,
                    tx: x.id,
                    frame: fr.frame,
                    time_ns: fr.time_ns,
                    signal,
                    repair: Some(Repair::EndHost),
                });
            }
            _ if recorded && c.sent.len() > 1 => unobs.push(why(Why::WqeNotPacket)),
            _ => unobs.push(why(Why::NoEvidence)),
        }
    }
    // What an analyser claims from the tap's frames alone: a packet an ACK's gap names (a
    // one-packet copy the tap recorded, or a PSN of an identified copy it did not record) is lost
    // when the flag came before the next identified copy of its unit. A claim the truth does not
    // make (the flagged copy had arrived and its ACK entry was lost; the truth's repair is a copy
    // the tap could not name) misleads: its PSN is ambiguous.
    for g in &order {
        let c = &by_gn[g];
        let Some(&flag) = gapped.get(g).filter(|_| c.identified) else { continue };
        for (k, y) in c.sent.iter().enumerate() {
            let rec = c.recs.iter().find(|(_, x)| x.id == y.id).map(|(f, _)| f.frame);
            if rec.is_some() && c.sent.len() != 1 {
                continue;
            }
            let u = packet_unit(c.wqe, c.off, k as u32, mtu, unit);
            let next = order.iter().map(|g| &by_gn[g]).find(|k2| k2.at > c.at && k2.identified && c.same_unit(k2, u));
            let Some(k2) = next.filter(|k2| flag < k2.at) else { continue };
            let frame = rec.unwrap_or(k2.at);
            if !losses.iter().any(|l| l.frame == frame && l.psn == y.psn) {
                ambiguous.insert(y.psn);
            }
        }
    }
    // Retransmissions.
    let mut retx: Vec<ObsRetx> = Vec::new();
    let mut unobservable_retx: HashSet<u64> = HashSet::new();
    for g in &order {
        let c = &by_gn[g];
        for (f, x) in &c.recs {
            if x.retx.is_none() {
                continue;
            }
            let p = previous(c, c.off).filter(|_| c.identified);
            let Some(p) = p else {
                unobservable_retx.insert(f.frame);
                let why = if c.identified { Why::EarlierCopyNotSeen } else { Why::WqeNotSeen };
                unobs.push(Unobservable {
                    fact: Fact::Retransmission,
                    psn: Some(f.psn),
                    index: None,
                    tx: Some(x.id),
                    why,
                });
                continue;
            };
            let trig = trigger(c, p);
            // (A gap that misleads: the flagged copy had arrived whole, its ACK entry lost; or
            // every unit of the resend had arrived in some earlier copy.)
            let flagged = gapped.get(&p.gn).is_some_and(|&at| at < c.at);
            let whole_before = |u: u32| {
                sent.values().any(|v| {
                    v[0].id < c.sent[0].id
                        && v[0].msg == Some(c.msg)
                        && v[0].flor.as_ref().is_some_and(|w| {
                            (w.wqe == "addr_req") == (c.wqe == "addr_req") && u >= w.off && u - w.off < w.units
                        })
                        && arrived_whole(v)
                })
            };
            let misleading = flagged && (p.whole() || (c.off..c.off + c.units).all(whole_before));
            if trig.is_err() || misleading {
                ambiguous.extend(c.recs.iter().map(|(f, _)| f.psn));
            }
            let trig = trig.unwrap_or(None);
            let spurious = if cx.position_at(f.frame) == Position::Destination {
                let had =
                    |u: u32| order.iter().map(|g| &by_gn[g]).any(|e| e.at < c.at && c.same_unit(e, u) && e.whole());
                Some((c.off..c.off + c.units).all(had))
            } else {
                let acked = |u: u32| {
                    order
                        .iter()
                        .map(|g| &by_gn[g])
                        .any(|e| c.same_unit(e, u) && listed.get(&e.gn).is_some_and(|&at| at < c.at))
                };
                if (c.off..c.off + c.units).all(acked) {
                    Some(true)
                } else if gapped.get(&p.gn).is_some_and(|&at| at < c.at) && !ambiguous.contains(&f.psn) {
                    Some(false)
                } else {
                    None
                }
            };
            // (Not spurious after an ACK's gap: a packet of the flagged copy was lost, though
            // the tap may not tell which.)
            let earlier_loss_seen = p.sent.iter().any(|y| lost_seen.contains(&y.id));
            let cause = match (spurious, trig) {
                (Some(false), Some(Signal::FlorAck)) => Some(RetxCause::Loss),
                _ => cause(spurious, trig, earlier_loss_seen),
            };
            retx.push(ObsRetx {
                psn: f.psn,
                tx: x.id,
                frame: f.frame,
                time_ns: f.time_ns,
                trigger: trig,
                spurious,
                cause,
            });
        }
    }
    // Messages, numbered as the tap first meets them.
    let mut msgs: Vec<ObsMessage> = Vec::new();
    // (A message is met at its first identified copy: the packets of a copy the tap cannot
    // name name no message.)
    let mut first_of: Vec<(u64, u64)> = Vec::new();
    for g in &order {
        let m = by_gn[g].msg;
        if by_gn[g].identified && !first_of.iter().any(|&(_, x)| x == m) {
            first_of.push((by_gn[g].at, m));
        }
    }
    first_of.sort_unstable();
    for (index, &(first, m)) in first_of.iter().enumerate() {
        let Some(tm) = cx.flow.messages.iter().find(|x| x.index == m) else { continue };
        let copies: Vec<&Copy> = order.iter().map(|g| &by_gn[g]).filter(|c| c.msg == m).collect();
        let frames: Vec<(&Frame, &Transmission)> = copies.iter().flat_map(|c| c.recs.iter().copied()).collect();
        // The tap recorded a packet of it before its first identified copy, in a copy it
        // cannot name: where the message starts is not known there.
        if frames.iter().any(|(f, _)| f.frame < first) {
            unobs.push(Unobservable { fact: Fact::Message, psn: None, index: Some(m), tx: None, why: Why::WqeNotSeen });
            continue;
        }
        let named_last = copies.iter().filter(|c| c.identified).flat_map(|c| c.recs.iter()).map(|(f, _)| f.frame).max();
        let firsts_sent: usize = sent.values().flatten().filter(|x| x.msg == Some(m) && x.retx.is_none()).count();
        let firsts_seen = frames.iter().filter(|(_, x)| x.retx.is_none()).count();
        let retx_frames: Vec<u64> = frames.iter().filter(|(_, x)| x.retx.is_some()).map(|(f, _)| f.frame).collect();
        let retx_known = retx_frames.iter().all(|f| !unobservable_retx.contains(f));
        // The completion: known when the tap knows the message's units and identified every
        // copy of it the ACKs up to the completing one list.
        let units_known =
            copies.iter().any(|c| c.wqe == "addr_req" && c.identified) || copies.iter().any(|c| c.wqe == "data");
        let until = tm.complete_frame.unwrap_or(u64::MAX);
        let all_listed_known = acks.iter().filter(|(f, _)| f.frame <= until).all(|(_, gns)| {
            gns.iter()
                .all(|g| sent.get(g).is_none_or(|v| v[0].msg != Some(m) || by_gn.get(g).is_some_and(|c| c.identified)))
        });
        let complete_known = units_known && all_listed_known;
        let mut unknown = Vec::new();
        if firsts_seen < firsts_sent {
            unknown.push("packets");
        }
        if !retx_known {
            unknown.push("retransmitted");
        }
        // (Its last recorded packet in a copy the tap cannot name.)
        let last_known = named_last == frames.iter().map(|(f, _)| f.frame).max();
        if !last_known {
            unknown.push("last_frame");
        }
        if !complete_known {
            unknown.extend(["complete_frame", "complete_time_ns"]);
        }
        msgs.push(ObsMessage {
            index: index as u64,
            first_frame: Some(first),
            last_frame: frames.iter().map(|(f, _)| f.frame).max().filter(|_| last_known),
            packets: Some(firsts_seen as u32).filter(|_| firsts_seen >= firsts_sent),
            retransmitted: Some(retx_frames.len() as u64).filter(|_| retx_known),
            complete_frame: tm.complete_frame.filter(|_| complete_known),
            complete_time_ns: tm.complete_time_ns.filter(|_| complete_known),
            unknown,
        });
    }
    for m in &cx.flow.messages {
        if !first_of.iter().any(|&(_, x)| x == m.index) {
            let u = Unobservable {
                fact: Fact::Message,
                psn: None,
                index: Some(m.index),
                tx: None,
                why: Why::MessageNotSeen,
            };
            unobs.push(u);
        }
    }
    for g in &cx.flow.capture_gaps {
        unobs.push(Unobservable {
            fact: Fact::CaptureGap,
            psn: Some(g.psn),
            index: None,
            tx: Some(g.tx),
            why: Why::NoEvidence,
        });
    }
    losses.sort_by_key(|l| l.frame);
    retx.sort_by_key(|r| r.frame);
    let mut amb: Vec<u32> = ambiguous.into_iter().collect();
    amb.sort_unstable();
    FlowView {
        id: cx.flow.id.clone(),
        conn,
        role: cx.flow.role,
        position: cx.position,
        losses,
        retransmissions: retx,
        capture_gaps: Vec::new(),
        messages: msgs,
        unobservable: unobs,
        ambiguous: amb,
        unjudged: Vec::new(),
    }
}
