//! The research stacks (`sdr-sr`, `sdr-ec`, `flor`, `erd`; issue 13, acceptance 1) judged from
//! the wire, as [`crate::verdict`] judges the standard ones. Their messages are not PSN
//! sequences (SDR numbers packets by the immediate, Flor resends under new PSNs, ERD places
//! datagrams by their EETH), so the PSN ledger of [`crate::ledger`] does not apply; what does:
//!
//! - **tap records** ([`records`]): every frame the truth lists at a tap is a RoCE frame of that
//!   tap's interface with the truth's PSN, flow, timestamp, direction and kind (message data, a
//!   CNP, or other: the transports' control messages), and the capture holds no other RoCE frame;
//! - **arrivals** ([`arrivals`]): between the two tapped hosts, in each direction, the frames
//!   that left one tap and that the truth does not call lost are exactly the frames that reached
//!   the other (compared by their bytes, with what switches rewrite zeroed: `Pkt::normalized`);
//! - **delivery** ([`sdr`], [`flor`], [`erd`]): every message of a connection whose responder is
//!   tapped is rebuilt, byte by byte, from the frames that reached the responder's tap, by the
//!   transport's own placement rules read from the headers (immediates and RETH VAs, Flor's SEND
//!   header and address exchange, the EETH), and for erasure coding each submessage is
//!   recoverable from the data and parity chunks that arrived, the parity recomputed from the
//!   message's bytes;
//! - **the truth's summary** (as for every stack, [`crate::verdict`]): with no connection
//!   failed, every message posted was completed and delivered exactly once.
//!
//! What the wire cannot show and is left to the simulator's own tests: completions at the
//! sender (each transport acknowledges in its own way; the timeline compares them with the
//! truth, `timeline_cmp`).

pub mod erd;
pub mod flor;
pub mod sdr;

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use rocescope_sim::synth::SynthOptions;
use rocescope_sim::truth::{Direction, Kind, Truth};
use rocescope_stacks::StackKind;

use super::packet::{Pkt, PktKind};
use super::payload::Delivery;
use super::verdict::Verdict;
use super::wire::{Coverage, Dir, Wire};

/// Whether `stack` is judged here rather than by [`crate::verdict::judge_wire`].
pub fn is_research(stack: StackKind) -> bool {
    matches!(stack, StackKind::SdrSr | StackKind::SdrEc | StackKind::Flor | StackKind::Erd)
}

/// What a research stack's RoCE frame is, from its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Carries (or, for Flor's ADDR_REQ, asks to place) a message's bytes.
    Data,
    Cnp,
    /// The transport's control: SDR's CTS, ACKs and NACKs, Flor's ADDR_RESP and ACKs.
    Other,
}

/// The class of `p` under `stack`:
/// - SDR: data packets are UC RDMA WRITE Only with Immediate (0x2B); control messages are SENDs.
/// - Flor: every UC packet a requester sends its responder's QP (WRITE chunks, SENDs of DATA,
///   ADDR_REQ and WRITE_RETX) is data; the responder's ADDR_RESP (a UC SEND Only to the
///   requester's QP) and the ACKs (UD SENDs) are not. `requests(src, dst, destqp)`: a
///   connection's requester, responder and the responder's QPN (a host of a leaf-spine
///   permutation is the requester of one connection and the responder of another).
/// - ERD: RD/UD SENDs with the EETH to a QP above 1.
pub fn class(stack: StackKind, p: &Pkt, requests: impl Fn(IpAddr, IpAddr, u32) -> bool) -> Class {
    if p.kind == PktKind::Cnp {
        return Class::Cnp;
    }
    let data = match stack {
        StackKind::SdrSr | StackKind::SdrEc => p.opcode == rocescope_codec::ext::sdr::OPCODE_DATA,
        StackKind::Flor => (0x20..=0x2b).contains(&p.opcode) && requests(p.src, p.dst, p.destqp),
        StackKind::Erd => rocescope_codec::ext::erd::carries_eeth(p.opcode) && p.destqp > 1,
        _ => p.kind == PktKind::Data,
    };
    if data {
        Class::Data
    } else {
        Class::Other
    }
}

fn class_of(k: Kind) -> Class {
    match k {
        Kind::Data => Class::Data,
        Kind::Cnp => Class::Cnp,
        _ => Class::Other,
    }
}

/// Every check of the module doc over one run of a research stack (`opts`: the run's options,
/// for the transport's parameters: the layout knowledge a user brings, like the tap layout).
pub fn judge(opts: &SynthOptions, t: &Truth, w: &Wire, others: &[OtherFrame]) -> Verdict {
    let mut v = Verdict::default();
    let stack = opts.stack;
    let conns: std::collections::BTreeSet<(IpAddr, IpAddr, u32)> =
        t.connections.iter().map(|c| (c.requester.ip, c.responder.ip, c.responder.qpn)).collect();
    let classes: Vec<Class> = w.pkts.iter().map(|p| class(stack, p, |s, d, q| conns.contains(&(s, d, q)))).collect();
    match records(t, w, &classes, others) {
        Ok(n) => v.numbers.compared.frames = n,
        Err(e) => v.truth.push(format!("truth against capture:\n{e}")),
    }
    let lost = lost_frames(t);
    for (a, b) in tapped_pairs(t, w) {
        match arrivals(w, others, a, b, &lost) {
            Ok((sent, arrived)) => {
                v.numbers.lost += sent - arrived;
            }
            Err(e) => v.truth.push(format!("arrivals {a}>{b}:\n{e}")),
        }
    }
    // Counts: data frames leaving a tapped host, of which retransmissions (the truth's label: a
    // research transport's resend has a new PSN or none of its own, so the wire alone cannot
    // count it as the PSN ledger does; the label is the timeline's to check).
    let retx: std::collections::BTreeSet<u64> =
        t.taps.iter().flat_map(|tap| &tap.frames).filter(|f| f.retx.is_some()).map(|f| f.frame).collect();
    for (p, c) in w.pkts.iter().zip(&classes) {
        if *c == Class::Data && w.dir(p) == Dir::Out {
            v.numbers.data_frames += 1;
            v.numbers.retx += retx.contains(&p.number) as u64;
            if lost.contains(&p.number) {
                v.numbers.data_lost += 1;
            }
        }
    }
    let n_msgs = t.config.messages as u64;
    let params = opts.fabric_config().params;
    for tc in &t.connections {
        let (req, resp) = (tc.requester.ip, tc.responder.ip);
        let cov = w.coverage(req, resp);
        v.numbers.count_connection(cov);
        let flow = format!("{req}>{resp}/{}", tc.responder.qpn);
        v.coverage.push((flow.clone(), cov));
        let Some(tap) = w.tap_at(resp) else { continue };
        // What reached the responder from the requester, in capture order.
        let arrived: Vec<&Pkt> = w
            .pkts
            .iter()
            .zip(&classes)
            .filter(|(p, c)| **c == Class::Data && p.interface == tap.interface && p.src == req && p.dst == resp)
            .map(|(p, _)| p)
            .collect();
        let d: Delivery = match stack {
            StackKind::SdrSr | StackKind::SdrEc => sdr::rebuild(opts, &params, &arrived),
            StackKind::Flor => {
                // The address exchange: the responder's ADDR_RESPs, wherever a tap saw them.
                let back: Vec<&Pkt> =
                    w.pkts.iter().filter(|p| p.src == resp && p.dst == req && p.destqp == tc.requester.qpn).collect();
                flor::rebuild(&params, t.config.message_size as u64, &arrived, &back)
            }
            StackKind::Erd => erd::rebuild(&arrived),
            _ => unreachable!("judged by verdict::judge_wire"),
        };
        v.numbers.messages_rebuilt += d.messages.iter().filter(|m| m.intact).count() as u64;
        if tc.failed.is_none() {
            if let Err(e) = d.check(n_msgs, t.config.message_size as u64) {
                v.delivery.push(format!("{flow}: delivery: {e}"));
            }
        }
        if cov == Coverage::Both {
            v.numbers.messages_judged += n_msgs;
            v.numbers.completed_on_wire += d.messages.iter().filter(|m| m.intact).count() as u64;
        }
    }
    super::verdict::check_summary(t, &mut v);
    v
}

/// How far byte ranges `[a, b)` cover a message from byte 0 without a hole.
pub(crate) fn covered_from_zero(mut spans: Vec<(u64, u64)>) -> u64 {
    spans.sort_unstable();
    let mut upto = 0u64;
    for (a, b) in spans {
        if a > upto {
            break;
        }
        upto = upto.max(b);
    }
    upto
}

/// The frames the truth says did not reach their destination whole.
fn lost_frames(t: &Truth) -> std::collections::BTreeSet<u64> {
    t.taps.iter().flat_map(|tap| &tap.frames).filter(|f| f.lost).map(|f| f.frame).collect()
}

/// The ordered pairs of distinct hosts both tapped (the sender and receiver taps' hosts).
fn tapped_pairs(t: &Truth, w: &Wire) -> Vec<(IpAddr, IpAddr)> {
    let hosts: Vec<IpAddr> = w.taps.iter().filter_map(|s| s.host).collect();
    let _ = t;
    let mut out = Vec::new();
    for &a in &hosts {
        for &b in &hosts {
            if a != b {
                out.push((a, b));
            }
        }
    }
    out
}

/// A captured IP frame that is not RoCE: ERD's NACKs travel over TCP (WIRE.md B.5).
#[derive(Clone, Debug)]
pub struct OtherFrame {
    pub number: u64,
    pub interface: u32,
    pub ts_ns: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub normalized: Vec<u8>,
}

/// The IP frames of the capture at `path` that are not RoCE.
pub fn read_others(path: &std::path::Path) -> Result<Vec<OtherFrame>, String> {
    use rocescope_codec::{DecodeOptions, Frame, LinkType};
    let mut out = Vec::new();
    super::packet::each_frame(path, |number, interface, ts_ns, bytes| {
        let f = Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &DecodeOptions::default());
        if let (None, Some((src, dst))) = (f.roce(), f.ip_addrs()) {
            out.push(OtherFrame { number, interface, ts_ns, src, dst, normalized: super::packet::normalize(bytes) });
        }
    })?;
    Ok(out)
}

/// The tap records against the frames (module doc); the number of records compared. A record
/// of a frame that is not RoCE (an ERD NACK's TCP segment) must be kind `other`, PSN 0, between
/// its flow's two addresses.
pub fn records(t: &Truth, w: &Wire, classes: &[Class], others: &[OtherFrame]) -> Result<u64, String> {
    let mut errs: Vec<String> = Vec::new();
    let by_number: HashMap<u64, usize> = w.pkts.iter().enumerate().map(|(i, p)| (p.number, i)).collect();
    let other_by_number: HashMap<u64, &OtherFrame> = others.iter().map(|o| (o.number, o)).collect();
    let host_dir = |interface: u32, src: IpAddr, dst: IpAddr| match w.taps.iter().find(|t| t.interface == interface) {
        Some(t) if t.host == Some(src) => Dir::Out,
        Some(t) if t.host == Some(dst) => Dir::In,
        _ => Dir::Through,
    };
    let dir_ok = |d: Dir, f: Direction| {
        matches!((d, f), (Dir::Out, Direction::Out) | (Dir::In, Direction::In) | (Dir::Through, _))
    };
    let (mut n, mut n_other) = (0u64, 0u64);
    for tap in &t.taps {
        for f in &tap.frames {
            n += 1;
            let Some(&i) = by_number.get(&f.frame) else {
                match other_by_number.get(&f.frame) {
                    Some(o)
                        if o.interface == tap.interface
                            && o.ts_ns == f.time_ns.0
                            && f.kind == Kind::Other
                            && f.psn == 0
                            && f.flow.starts_with(&format!("{}>{}/", o.src, o.dst))
                            && dir_ok(host_dir(o.interface, o.src, o.dst), f.direction) =>
                    {
                        n_other += 1
                    }
                    Some(o) => errs.push(format!(
                        "frame {}: truth says {:?} {:?} psn {} flow {} at {} on interface {}, the wire a frame {}>{} at {} on {}",
                        f.frame, f.kind, f.direction, f.psn, f.flow, f.time_ns.0, tap.interface, o.src, o.dst, o.ts_ns, o.interface
                    )),
                    None => errs.push(format!("truth frame {} ({:?}) is not an IP frame of the capture", f.frame, f.kind)),
                }
                continue;
            };
            let p = &w.pkts[i];
            if p.interface != tap.interface
                || p.psn != f.psn
                || p.flow_id() != f.flow
                || p.ts_ns != f.time_ns.0
                || !dir_ok(w.dir(p), f.direction)
                || classes[i] != class_of(f.kind)
            {
                errs.push(format!(
                    "frame {}: truth says {:?} {:?} psn {} flow {} at {} on interface {}, the wire {:?} {:?} psn {} flow {} at {} on {}",
                    f.frame,
                    f.kind,
                    f.direction,
                    f.psn,
                    f.flow,
                    f.time_ns.0,
                    tap.interface,
                    classes[i],
                    w.dir(p),
                    p.psn,
                    p.flow_id(),
                    p.ts_ns,
                    p.interface
                ));
            }
        }
    }
    if n - n_other != w.pkts.len() as u64 {
        errs.push(format!("truth lists {} RoCE frames, the capture has {}", n - n_other, w.pkts.len()));
    }
    if n_other != others.len() as u64 {
        errs.push(format!("truth lists {n_other} other IP frames, the capture has {}", others.len()));
    }
    if errs.is_empty() {
        Ok(n)
    } else {
        let total = errs.len();
        errs.truncate(8);
        Err(format!("{total} disagreements, the first: {}", errs.join("\n")))
    }
}

/// From tapped host `a` to tapped host `b` (module doc), RoCE and other IP frames alike:
/// (frames that left `a`'s tap for `b`, frames that reached `b`'s tap from `a`), or what differs.
pub fn arrivals(
    w: &Wire,
    others: &[OtherFrame],
    a: IpAddr,
    b: IpAddr,
    lost: &std::collections::BTreeSet<u64>,
) -> Result<(u64, u64), String> {
    let (Some(ta), Some(tb)) = (w.tap_at(a), w.tap_at(b)) else { return Ok((0, 0)) };
    let seen = w
        .pkts
        .iter()
        .map(|p| (p.number, p.interface, p.src, p.dst, &p.normalized[..]))
        .chain(others.iter().map(|o| (o.number, o.interface, o.src, o.dst, &o.normalized[..])))
        .filter(|s| s.2 == a && s.3 == b);
    // Multisets of normalized bytes: + for each copy that should arrive, − for each that did.
    let mut balance: BTreeMap<&[u8], (i64, u64)> = BTreeMap::new();
    let (mut sent, mut arrived, mut n_lost) = (0u64, 0u64, 0u64);
    for (number, interface, _, _, bytes) in seen {
        if interface == ta.interface {
            sent += 1;
            if lost.contains(&number) {
                n_lost += 1;
            } else {
                balance.entry(bytes).or_insert((0, number)).0 += 1;
            }
        } else if interface == tb.interface {
            arrived += 1;
            balance.entry(bytes).or_insert((0, number)).0 -= 1;
        }
    }
    let bad: Vec<(u64, i64)> = balance.values().filter(|(n, _)| *n != 0).map(|&(n, f)| (f, n)).collect();
    if bad.is_empty() {
        Ok((sent, arrived))
    } else {
        Err(format!(
            "{} frames differ (frame, copies sent and not lost minus copies arrived): {:?}; {sent} sent, {n_lost} lost, {arrived} arrived",
            bad.len(),
            &bad[..bad.len().min(6)]
        ))
    }
}
