//! The ground truth of a run, as JSON (schema: `docs/truth.md`): per tap, what that tap can
//! observe (frames, per-flow losses, capture gaps, retransmissions and message completions, in
//! the vocabulary of `rocescope timeline`), and the simulator's own view (every message and
//! every transmission with its fate).

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use serde_json::{json, Map, Value};

use super::sim::{Accept, AcceptModel, ConnRec, Cover, Fabric, Fate, Kind, Origin, TapFrame, TxRec, EPOCH_NS};
use rocescope_stacks::{Op, RetxReason};

/// A capture timestamp (epoch ns) as a JSON string.
fn ts(t: u64) -> Value {
    Value::String((EPOCH_NS + t).to_string())
}

pub fn reason_name(r: RetxReason) -> &'static str {
    match r {
        RetxReason::GoBack => "go_back",
        RetxReason::Sack => "sack",
        RetxReason::HeaderOnly => "header_only",
        RetxReason::Timeout => "timeout",
    }
}

/// The loss signal (timeline vocabulary) a retransmission reason stands for.
fn signal_name(r: Option<RetxReason>) -> &'static str {
    match r {
        Some(RetxReason::GoBack) => "nak",
        Some(RetxReason::Sack) => "sack",
        Some(RetxReason::HeaderOnly) => "ho",
        Some(RetxReason::Timeout) => "timeout",
        None => "gap",
    }
}

/// What the truth derives about each transmission.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxTruth {
    /// Index among the transmissions of its PSN (0: the original).
    pub copy: u32,
    pub spurious: bool,
    /// "loss" | "go_back" | "timeout" | "spurious" (retransmissions only).
    pub cause: Option<&'static str>,
    /// For a lost transmission: the next transmission of the same PSN.
    pub repaired_by: Option<u32>,
}

/// Per-transmission derivations: which frames are retransmissions, spurious or not, and why.
pub fn derive(f: &Fabric<'_>) -> Vec<TxTruth> {
    let mut out = vec![TxTruth::default(); f.txs.len()];
    let mut groups: HashMap<(u32, bool, u32), Vec<u32>> = HashMap::new();
    for t in &f.txs {
        if t.kind.is_data() {
            groups.entry((t.conn, t.to_requester, t.psn)).or_default().push(t.id);
        }
    }
    let useful = |t: &TxRec| match f.cfg.accept {
        AcceptModel::InOrder => t.accept == Some(Accept::Accepted),
        AcceptModel::AnyOrder => matches!(t.accept, Some(Accept::Accepted | Accept::Duplicate)),
    };
    for ids in groups.values() {
        for (i, &id) in ids.iter().enumerate() {
            let t = &f.txs[id as usize];
            out[id as usize].copy = i as u32;
            if lost(t) {
                out[id as usize].repaired_by = ids.get(i + 1).copied();
            }
            if i == 0 {
                continue;
            }
            let earlier = &ids[..i];
            let spurious = earlier.iter().any(|&e| useful(&f.txs[e as usize]));
            let any_lost = earlier.iter().any(|&e| lost(&f.txs[e as usize]));
            let cause = if spurious {
                "spurious"
            } else if t.reason == Some(RetxReason::Timeout) {
                "timeout"
            } else if any_lost {
                "loss"
            } else {
                "go_back"
            };
            out[id as usize].spurious = spurious;
            out[id as usize].cause = Some(cause);
        }
    }
    out
}

/// The network failed to deliver it whole (dropped, or trimmed to header-only).
pub fn lost(t: &TxRec) -> bool {
    t.trimmed.is_some() || matches!(t.fate, Fate::Dropped { .. })
}

/// Flow number of a transmission: 2·conn for requests, 2·conn+1 for the responder's direction.
fn flow_of(t: &TxRec) -> usize {
    t.conn as usize * 2 + t.to_requester as usize
}

/// Per connection: each message's first and last PSN (over every data transmission of it) and
/// its DCP MSN.
struct MsgPsns {
    first: Option<u32>,
    last: Option<u32>,
    dcp_msn: Option<u32>,
    packets: u32,
}

fn msg_psns(f: &Fabric<'_>) -> Vec<Vec<MsgPsns>> {
    let mut out: Vec<Vec<MsgPsns>> = f
        .conns
        .iter()
        .map(|c| c.messages.iter().map(|_| MsgPsns { first: None, last: None, dcp_msn: None, packets: 0 }).collect())
        .collect();
    let mut seen: HashMap<(u32, u64, u32), ()> = HashMap::new();
    for t in &f.txs {
        let (Some(m), true) = (t.msg, t.kind.is_data()) else { continue };
        let Some(e) = out[t.conn as usize].get_mut(m as usize) else { continue };
        let read = f.conns[t.conn as usize].messages[m as usize].msg.op == Op::Read;
        if t.origin == Origin::Requester {
            e.first = Some(e.first.unwrap_or(t.psn));
            e.dcp_msn = e.dcp_msn.or(t.dcp_msn);
        }
        // A READ's packets are its responses; other messages' are the requester's.
        let counts = if read { t.kind == Kind::ReadResp } else { t.origin == Origin::Requester };
        if counts {
            if seen.insert((t.conn, m, t.psn), ()).is_none() {
                e.packets += 1;
            }
            e.last = Some(match e.last {
                Some(l) if super::sim::psn_lt(t.psn, l) => l,
                _ => t.psn,
            });
        }
    }
    out
}

/// Offset of `psn` from the connection's first PSN (PSNs before it count as 0).
fn psn_off(c: &ConnRec, psn: u32) -> u64 {
    let d = psn.wrapping_sub(c.cfg.start_psn) & 0xff_ffff;
    if d >= 1 << 23 {
        0
    } else {
        d as u64
    }
}

/// How much of the request stream a cover proves: request PSN offsets below the first value,
/// DCP messages below the second (relative to message 0's MSN).
fn cover_amount(c: &ConnRec, base_msn: Option<u32>, cover: Cover) -> (u64, u64) {
    match cover {
        Cover::None => (0, 0),
        Cover::PsnLe(p) => (psn_off(c, p) + 1, 0),
        Cover::PsnLt(p) => (psn_off(c, p), 0),
        Cover::MsnLt(e) => {
            let b = base_msn.unwrap_or(0);
            let d = e.wrapping_sub(b) & 0xff_ffff;
            (0, if d >= 1 << 23 { 0 } else { d as u64 })
        }
    }
}

/// Indexes shared by every tap.
struct Index {
    derived: Vec<TxTruth>,
    psns: Vec<Vec<MsgPsns>>,
    /// Per flow: the lost transmissions, and the accepted data transmissions.
    lost: Vec<Vec<u32>>,
    accepted: Vec<Vec<u32>>,
}

/// One tap's frames, indexed.
struct TapView<'a> {
    frames: Vec<&'a TapFrame>,
    /// tx → index in `frames` (u32::MAX: not seen).
    by_tx: Vec<u32>,
    /// Per flow, indexes into `frames`.
    by_flow: Vec<Vec<u32>>,
}

impl<'a> TapView<'a> {
    fn new(f: &'a Fabric<'_>, tap: usize) -> TapView<'a> {
        let frames: Vec<&TapFrame> = f.tap_frames.iter().filter(|t| t.tap as usize == tap).collect();
        let mut by_tx = vec![u32::MAX; f.txs.len()];
        let mut by_flow = vec![Vec::new(); f.conns.len() * 2];
        for (i, fr) in frames.iter().enumerate() {
            by_tx[fr.tx as usize] = i as u32;
            by_flow[flow_of(&f.txs[fr.tx as usize])].push(i as u32);
        }
        TapView { frames, by_tx, by_flow }
    }
    fn seen(&self, tx: u32) -> Option<&'a TapFrame> {
        let i = *self.by_tx.get(tx as usize)?;
        (i != u32::MAX).then(|| self.frames[i as usize])
    }
}

/// Streams JSON: a document whose big arrays are written one element per line.
struct Out<'w, W: Write> {
    w: &'w mut W,
}

impl<W: Write> Out<'_, W> {
    fn raw(&mut self, s: &str) -> io::Result<()> {
        self.w.write_all(s.as_bytes())
    }
    fn key(&mut self, first: bool, k: &str) -> io::Result<()> {
        if !first {
            self.raw(",")?;
        }
        serde_json::to_writer(&mut *self.w, k)?;
        self.raw(":")
    }
    fn value(&mut self, v: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut *self.w, v).map_err(io::Error::other)
    }
    /// `[` newline, one element per line, `]`.
    fn array<I: IntoIterator<Item = Value>>(&mut self, items: I) -> io::Result<()> {
        self.raw("[")?;
        let mut first = true;
        for v in items {
            self.raw(if first { "\n" } else { ",\n" })?;
            first = false;
            self.value(&v)?;
        }
        self.raw(if first { "]" } else { "\n]" })
    }
}

/// The whole truth document. `extra` is merged in at the top level (the command line, the
/// configuration).
pub fn truth_json(f: &Fabric<'_>, extra: Map<String, Value>) -> Value {
    let mut buf = Vec::new();
    write_truth(f, extra, &mut buf).expect("writing to memory");
    serde_json::from_slice(&buf).expect("valid JSON")
}

/// Writes the truth document to `w`: compact JSON with every frame, flow entry, message and
/// transmission on a line of its own.
pub fn write_truth(f: &Fabric<'_>, extra: Map<String, Value>, w: &mut impl Write) -> io::Result<()> {
    let derived = derive(f);
    let psns = msg_psns(f);
    let nflows = f.conns.len() * 2;
    let mut lost_by = vec![Vec::new(); nflows];
    let mut accepted = vec![Vec::new(); nflows];
    for t in &f.txs {
        if lost(t) {
            lost_by[flow_of(t)].push(t.id);
        }
        if t.kind.is_data() && t.accept == Some(Accept::Accepted) {
            accepted[flow_of(t)].push(t.id);
        }
    }
    let ix = Index { derived, psns, lost: lost_by, accepted };
    let mut o = Out { w };
    o.raw("{")?;
    o.key(true, "format")?;
    o.value(&json!("rocescope-synth-truth"))?;
    o.key(false, "version")?;
    o.value(&json!(1))?;
    for (k, v) in &extra {
        o.raw(",\n")?;
        o.key(true, k)?;
        o.value(v)?;
    }
    o.raw(",\n")?;
    o.key(true, "epoch_ns")?;
    o.value(&ts(0))?;
    o.raw(",\n")?;
    o.key(true, "summary")?;
    o.value(&summary_json(f, &ix.derived))?;
    o.raw(",\n")?;
    o.key(true, "connections")?;
    o.array(f.conns.iter().enumerate().map(|(i, c)| conn_json(i, c)))?;
    o.raw(",\n")?;
    o.key(true, "taps")?;
    o.raw("[")?;
    for (ti, name) in f.tap_names().iter().enumerate() {
        let v = TapView::new(f, ti);
        o.raw(if ti == 0 { "\n{" } else { ",\n{" })?;
        o.key(true, "name")?;
        o.value(&json!(name))?;
        o.key(false, "interface")?;
        o.value(&json!(ti))?;
        o.key(false, "frames")?;
        o.array(v.frames.iter().map(|fr| frame_json(f, &ix, fr)))?;
        o.raw(",\n")?;
        o.key(true, "flows")?;
        o.raw("[")?;
        let mut first = true;
        for ci in 0..f.conns.len() {
            for dir in 0..2 {
                o.raw(if first { "\n" } else { ",\n" })?;
                first = false;
                flow_json(f, &ix, &v, name, ci, dir, &mut o)?;
            }
        }
        o.raw("\n]}")?;
    }
    o.raw("\n]")?;
    o.raw(",\n")?;
    o.key(true, "sim")?;
    o.raw("{")?;
    o.key(true, "messages")?;
    o.array(sim_messages(f, &ix.psns))?;
    o.raw(",\n")?;
    o.key(true, "transmissions")?;
    o.array(f.txs.iter().map(|t| tx_json(f, &ix.derived, t)))?;
    o.raw("}\n}\n")
}

fn summary_json(f: &Fabric<'_>, d: &[TxTruth]) -> Value {
    let s = &f.stats;
    let msgs: Vec<_> = f.conns.iter().flat_map(|c| c.messages.iter()).collect();
    let retx = d.iter().filter(|d| d.cause.is_some()).count();
    let spurious = d.iter().filter(|d| d.spurious).count();
    json!({
        "events": s.events,
        "transmissions": s.transmissions,
        "link_frames": s.link_frames,
        "captured_frames": s.captured,
        "retransmissions": retx,
        "spurious_retransmissions": spurious,
        "dropped": s.dropped,
        "trimmed": s.trimmed,
        "ho_dropped": s.ho_dropped,
        "max_control_queue_bytes": s.max_control_queue_bytes,
        "ce_marked": s.ce_marked,
        "cnps": s.cnps,
        "end_time_ns": ts(s.end_ns),
        "timed_out": s.timed_out,
        "messages": msgs.len(),
        "delivered_once": msgs.iter().filter(|m| m.delivered.len() == 1 && m.delivered[0].2 && m.delivered[0].1 == m.msg.len).count(),
        "completed": msgs.iter().filter(|m| !m.completed.is_empty()).count(),
        "failed_connections": f.conns.iter().filter(|c| c.failed.is_some()).count(),
    })
}

fn flow_id(f: &Fabric<'_>, flow: usize) -> (String, String, String, u32) {
    let c = &f.conns[flow / 2].cfg;
    let (src, dst) = if flow.is_multiple_of(2) { (c.requester, c.responder) } else { (c.responder, c.requester) };
    (format!("{}>{}/{}", src.ip, dst.ip, dst.qpn), src.ip.to_string(), dst.ip.to_string(), dst.qpn)
}

fn conn_json(i: usize, c: &ConnRec) -> Value {
    let host = |h: rocescope_stacks::Host| json!({"ip": h.ip.to_string(), "qpn": h.qpn, "mac": h.mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")});
    json!({
        "index": i,
        "sender": c.sender,
        "requester": host(c.cfg.requester),
        "responder": host(c.cfg.responder),
        "start_psn": c.cfg.start_psn,
        "mtu": c.cfg.mtu,
        "udp_sport": c.cfg.udp_sport,
        "tos": c.cfg.tos,
        "rto_ns": c.cfg.rto_ns,
        "failed": c.failed.map(|(t, r)| json!({"time_ns": ts(t), "reason": r})),
    })
}

fn place(f: &Fabric<'_>, id: u32) -> Value {
    f.places.get(id as usize).map_or(Value::Null, |s| json!(s))
}

fn frame_json(f: &Fabric<'_>, ix: &Index, fr: &TapFrame) -> Value {
    let t = &f.txs[fr.tx as usize];
    let dt = &ix.derived[fr.tx as usize];
    let mut o = Map::new();
    o.insert("frame".into(), json!(fr.frame));
    o.insert("time_ns".into(), ts(fr.time));
    o.insert("direction".into(), json!(if fr.incoming { "in" } else { "out" }));
    o.insert("tx".into(), json!(t.id));
    o.insert("flow".into(), json!(flow_id(f, flow_of(t)).0));
    o.insert("origin".into(), json!(t.origin.name()));
    o.insert("kind".into(), json!(t.kind.name()));
    o.insert("psn".into(), json!(t.psn));
    o.insert("msg".into(), json!(t.msg));
    if fr.trimmed {
        o.insert("ho".into(), json!(true));
    }
    if fr.ce {
        o.insert("ce".into(), json!(true));
    }
    if let Some(cause) = dt.cause {
        o.insert(
            "retx".into(),
            json!({"reason": t.reason.map(reason_name), "cause": cause, "spurious": dt.spurious, "copy": dt.copy}),
        );
    }
    if lost(t) {
        o.insert("lost".into(), json!(true));
    }
    Value::Object(o)
}

#[allow(clippy::too_many_arguments)]
fn flow_json<W: Write>(
    f: &Fabric<'_>,
    ix: &Index,
    v: &TapView<'_>,
    tap: &str,
    ci: usize,
    dir: usize,
    o: &mut Out<'_, W>,
) -> io::Result<()> {
    let c = &f.conns[ci];
    let d = &ix.derived;
    let psns = &ix.psns[ci];
    let flow = ci * 2 + dir;
    let dcp = f.cfg.profile == rocescope_codec::Profile::Dcp;
    let base_msn = psns.first().and_then(|m| m.dcp_msn);
    // Coverage frames at this tap (the responder's direction), with running maxima.
    let mut cov_frames: Vec<(u32, (u64, u64))> = Vec::new();
    let mut best = (0u64, 0u64);
    for &i in &v.by_flow[ci * 2 + 1] {
        let fr = v.frames[i as usize];
        let t = &f.txs[fr.tx as usize];
        if t.cover == Cover::None || fr.trimmed {
            continue;
        }
        let a = cover_amount(c, base_msn, t.cover);
        best = (best.0.max(a.0), best.1.max(a.1));
        cov_frames.push((i, best));
    }
    // The first frame covering request-PSN offset `need_psn` (or DCP message offset `need_msg`).
    let first_cover = |need_psn: Option<u64>, need_msg: Option<u64>| -> Option<&TapFrame> {
        let k = cov_frames
            .partition_point(|(_, (p, m))| !(need_psn.is_some_and(|n| *p > n) || need_msg.is_some_and(|n| *m > n)));
        cov_frames.get(k).map(|(i, _)| v.frames[*i as usize])
    };
    let msg_off = |m: &MsgPsns| -> Option<u64> {
        let (b, x) = (base_msn?, m.dcp_msn?);
        let d = x.wrapping_sub(b) & 0xff_ffff;
        (d < 1 << 23).then_some(d as u64)
    };
    let (id, src, dst, destqp) = flow_id(f, flow);
    o.raw("{")?;
    for (i, (k, val)) in [
        ("id", json!(id)),
        ("src", json!(src)),
        ("dst", json!(dst)),
        ("destqp", json!(destqp)),
        ("conn", json!(ci)),
        ("role", json!(if dir == 0 { "requests" } else { "responses" })),
        ("profile", json!(f.cfg.profile.name())),
        ("tap", json!(tap)),
        ("frames", json!(v.by_flow[flow].len())),
    ]
    .into_iter()
    .enumerate()
    {
        o.key(i == 0, k)?;
        o.value(&val)?;
    }
    // Losses.
    o.raw(",\n")?;
    o.key(true, "losses")?;
    o.array(ix.lost[flow].iter().filter_map(|&id| {
        let t = &f.txs[id as usize];
        let seen = v.seen(id);
        let repair = d[id as usize].repaired_by;
        let evidence = repair.and_then(|r| v.seen(r)).map(|fr| fr.frame);
        let (when, cause, wher) = match (t.trimmed, t.fate) {
            (Some((at, p)), _) => (at, "trimmed", place(f, p)),
            (None, Fate::Dropped { at, cause, place: p }) => (at, cause.name(), place(f, p)),
            _ => return None,
        };
        let mut e = json!({
            "psn": t.psn, "tx": t.id, "kind": t.kind.name(), "msg": t.msg,
            "frame": seen.map(|s| s.frame).or(evidence),
            "seen": seen.is_some(),
            "time_ns": ts(when), "cause": cause, "where": wher,
            "signal": if t.kind.is_data() { signal_name(repair.and_then(|r| f.txs[r as usize].reason)) } else { "none" },
            "repair": if repair.is_some() { "end_host" } else { "none" },
        });
        if let Some(s) = seen {
            e["seen_as"] = json!(if s.trimmed { "ho" } else { "data" });
        }
        if let (Some(_), Fate::Dropped { at, cause, place: p }) = (t.trimmed, t.fate) {
            e["ho_lost"] = json!({"time_ns": ts(at), "cause": cause.name(), "where": place(f, p)});
        }
        Some(e)
    }))?;
    // Capture gaps: PSNs the receiver accepted of which this tap saw no copy.
    let mut seen_psn: HashSet<u32> = HashSet::new();
    for &i in &v.by_flow[flow] {
        let t = &f.txs[v.frames[i as usize].tx as usize];
        if t.kind.is_data() {
            seen_psn.insert(t.psn);
        }
    }
    o.raw(",\n")?;
    o.key(true, "capture_gaps")?;
    o.array(ix.accepted[flow].iter().filter_map(|&id| {
        let t = &f.txs[id as usize];
        if !seen_psn.insert(t.psn) {
            return None;
        }
        let evidence = if dir != 0 {
            None
        } else if dcp {
            t.msg.and_then(|m| psns.get(m as usize)).and_then(|p| first_cover(None, msg_off(p)))
        } else {
            first_cover(Some(psn_off(c, t.psn)), None)
        };
        Some(json!({"psn": t.psn, "tx": t.id, "msg": t.msg, "frame": evidence.map(|e| e.frame)}))
    }))?;
    // Retransmissions.
    o.raw(",\n")?;
    o.key(true, "retransmissions")?;
    o.array(v.by_flow[flow].iter().filter_map(|&i| {
        let fr = v.frames[i as usize];
        let t = &f.txs[fr.tx as usize];
        let dt = &d[fr.tx as usize];
        dt.cause.map(|cause| {
            json!({
                "psn": t.psn, "frame": fr.frame, "time_ns": ts(fr.time), "tx": t.id, "msg": t.msg,
                "spurious": dt.spurious, "cause": cause, "reason": t.reason.map(reason_name),
            })
        })
    }))?;
    // Messages (in the request flow).
    o.raw(",\n")?;
    o.key(true, "messages")?;
    let mut messages = Vec::new();
    if dir == 0 {
        let n = c.messages.len();
        let (mut first, mut last, mut retx) = (vec![None::<u64>; n], vec![None::<u64>; n], vec![0u64; n]);
        // The READ responses the requester accepted, per message (the last one completes it).
        let mut read_last: Vec<Option<&TapFrame>> = vec![None; n];
        for fl in [ci * 2, ci * 2 + 1] {
            for &i in &v.by_flow[fl] {
                let fr = v.frames[i as usize];
                let t = &f.txs[fr.tx as usize];
                let Some(m) = t.msg.filter(|&m| (m as usize) < n && t.kind.is_data()) else { continue };
                let m = m as usize;
                first[m] = Some(first[m].map_or(fr.frame, |x| x.min(fr.frame)));
                last[m] = Some(last[m].map_or(fr.frame, |x| x.max(fr.frame)));
                if d[fr.tx as usize].cause.is_some() {
                    retx[m] += 1;
                }
                if t.kind == Kind::ReadResp
                    && Some(t.psn) == psns[m].last
                    && t.accept == Some(Accept::Accepted)
                    && read_last[m].is_none()
                {
                    read_last[m] = Some(fr);
                }
            }
        }
        // RC completes in order: a message is proven complete once it and every message before
        // it are.
        let mut proof: Option<&TapFrame> = None;
        for (mi, m) in c.messages.iter().enumerate() {
            let p = &psns[mi];
            let own = if m.msg.op == Op::Read {
                m.completed_by.and_then(|t| v.seen(t)).or(read_last[mi])
            } else if dcp {
                first_cover(None, msg_off(p))
            } else {
                p.last.and_then(|l| first_cover(Some(psn_off(c, l)), None))
            };
            proof = match (proof, own) {
                (Some(a), Some(b)) => Some(if a.frame > b.frame { a } else { b }),
                (a, b) => b.or(a),
            };
            let comp = own.and(proof);
            messages.push(json!({
                "index": mi, "op": op_name(m.msg.op), "len": m.msg.len,
                "first_psn": p.first, "last_psn": p.last,
                "first_frame": first[mi], "last_frame": last[mi],
                "complete_frame": comp.map(|c| c.frame),
                "complete_time_ns": comp.map(|c| ts(c.time)),
                "packets": p.packets, "retransmitted": retx[mi],
            }));
        }
    }
    o.array(messages)?;
    o.raw("}")
}

pub fn op_name(op: Op) -> &'static str {
    op.name()
}

fn sim_messages<'a>(f: &'a Fabric<'_>, psns: &'a [Vec<MsgPsns>]) -> impl Iterator<Item = Value> + 'a {
    f.conns.iter().enumerate().flat_map(move |(ci, c)| {
        c.messages.iter().enumerate().map(move |(mi, m)| {
            let p = &psns[ci][mi];
            json!({
                "conn": ci, "index": mi, "op": op_name(m.msg.op), "len": m.msg.len,
                "first_psn": p.first, "last_psn": p.last, "dcp_msn": p.dcp_msn,
                "posted_ns": m.posted.map(ts),
                "delivered_ns": m.delivered.first().map(|x| ts(x.0)),
                "deliveries": m.delivered.len(),
                "intact": m.delivered.iter().all(|x| x.2 && x.1 == m.msg.len) && !m.delivered.is_empty(),
                "completed_ns": m.completed.first().map(|&t| ts(t)),
                "completions": m.completed.len(),
                "completed_by_tx": m.completed_by,
            })
        })
    })
}

fn tx_json(f: &Fabric<'_>, d: &[TxTruth], t: &TxRec) -> Value {
    let dt = &d[t.id as usize];
    let mut o = json!({
        "id": t.id, "conn": t.conn, "origin": t.origin.name(), "kind": t.kind.name(),
        "psn": t.psn, "msg": t.msg, "time_ns": ts(t.sent), "len": t.len,
    });
    if let Some(cause) = dt.cause {
        o["retx"] =
            json!({"reason": t.reason.map(reason_name), "cause": cause, "spurious": dt.spurious, "copy": dt.copy});
    }
    match t.fate {
        Fate::Delivered { at } => {
            o["fate"] = json!(if t.trimmed.is_some() { "trimmed" } else { "delivered" });
            o["fate_time_ns"] = ts(at);
        }
        Fate::Dropped { at, cause, place: p } => {
            o["fate"] = json!(if t.trimmed.is_some() { "trimmed" } else { "dropped" });
            o["fate_time_ns"] = ts(at);
            o["drop"] = json!({"cause": cause.name(), "where": place(f, p)});
        }
        Fate::InFlight => o["fate"] = json!("in_flight"),
    }
    if let Some((at, p)) = t.trimmed {
        o["trim"] = json!({"time_ns": ts(at), "where": place(f, p)});
    }
    if let Some(a) = t.accept {
        o["accept"] = json!(a.name());
    }
    o
}
