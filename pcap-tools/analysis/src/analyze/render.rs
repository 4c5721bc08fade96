//! Text and CSV forms of the flow table and the timeline (JSON is the report types' serde form).
//! CSV: one header line, RFC 4180 quoting (ids hold no commas, but a reader should not care);
//! unknown values are empty cells.

use std::io::{self, Write};

use super::report::{FlowRow, FlowTimeline, FlowsReport};

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// An enumeration of the reports as its JSON name (`"fabric"`, `"end_host"`).
pub fn json_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|j| j.as_str().map(str::to_owned)).unwrap_or_default()
}

fn ms(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |n| format!("{:.3}", n as f64 / 1e6))
}

fn us(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |n| format!("{:.1}", n as f64 / 1e3))
}

/// The CSV columns of `flows`, in order.
pub const FLOW_COLUMNS: &[&str] = &[
    "id", "src", "dst", "destqp", "interface", "profile", "transport", "role", "tap", "peer", "frames", "bytes",
    "data_frames", "data_bytes", "unique_bytes", "retransmitted", "spurious", "max_retries", "timeouts", "losses",
    "capture_gaps", "out_of_order", "sequence_errors", "acks", "naks", "sacks", "rnr_naks", "cnps", "ecn_ce",
    "header_only", "messages", "messages_completed", "messages_failed", "fct_ns", "latency_min_ns", "latency_avg_ns",
    "latency_max_ns", "rtt_samples", "rtt_min_ns", "rtt_avg_ns", "rtt_max_ns", "rtt_stdev_ns", "first_time_ns",
    "last_time_ns", "goodput_bps", "idle_max_ns", "pfc_paused_ns",
];

fn flow_cells(f: &FlowRow) -> Vec<String> {
    vec![
        f.id.clone(),
        f.src.clone(),
        f.dst.clone(),
        f.destqp.to_string(),
        f.interface.to_string(),
        f.profile.to_string(),
        json_name(&f.transport),
        json_name(&f.role),
        json_name(&f.tap),
        f.peer.clone().unwrap_or_default(),
        f.frames.to_string(),
        f.bytes.to_string(),
        f.data_frames.to_string(),
        f.data_bytes.to_string(),
        f.unique_bytes.to_string(),
        f.retransmitted.to_string(),
        f.spurious.to_string(),
        f.max_retries.to_string(),
        f.timeouts.to_string(),
        f.losses.to_string(),
        f.capture_gaps.to_string(),
        f.out_of_order.to_string(),
        f.sequence_errors.to_string(),
        f.acks.to_string(),
        f.naks.to_string(),
        f.sacks.to_string(),
        f.rnr_naks.to_string(),
        f.cnps.to_string(),
        f.ecn_ce.to_string(),
        f.header_only.to_string(),
        f.messages.to_string(),
        f.messages_completed.to_string(),
        f.messages_failed.to_string(),
        opt(f.fct_ns),
        opt(f.message_latency.min_ns),
        opt(f.message_latency.avg_ns),
        opt(f.message_latency.max_ns),
        f.rtt.samples.to_string(),
        opt(f.rtt.min_ns),
        opt(f.rtt.avg_ns),
        opt(f.rtt.max_ns),
        opt(f.rtt.stdev_ns),
        f.first_time_ns.0.to_string(),
        f.last_time_ns.0.to_string(),
        opt(f.goodput_bps.map(|g| format!("{g:.0}"))),
        f.idle_max_ns.to_string(),
        f.pfc_paused_ns.to_string(),
    ]
}

pub fn flows_csv(out: &mut impl Write, r: &FlowsReport) -> io::Result<()> {
    writeln!(out, "{}", FLOW_COLUMNS.join(","))?;
    for f in &r.flows {
        writeln!(out, "{}", flow_cells(f).join(","))?;
    }
    Ok(())
}

/// `flows` as a table: one line per flow, the counts a tester reads first; `-T json` or `csv`
/// have every column.
pub fn flows_text(out: &mut impl Write, r: &FlowsReport) -> io::Result<()> {
    writeln!(
        out,
        "{:<34} {:>2} {:<8} {:<5} {:<9} {:>8} {:>10} {:>6} {:>5} {:>5} {:>5} {:>6} {:>6} {:>5} {:>5} {:>9} {:>9} {:>9}",
        "flow", "if", "tap", "trans", "role", "frames", "bytes", "retx", "spur", "loss", "gaps", "msgs", "done", "cnp",
        "ce", "fct_ms", "lat_avg_us", "rtt_avg_us"
    )?;
    for f in &r.flows {
        writeln!(
            out,
            "{:<34} {:>2} {:<8} {:<5} {:<9} {:>8} {:>10} {:>6} {:>5} {:>5} {:>5} {:>6} {:>6} {:>5} {:>5} {:>9} {:>9} {:>9}",
            f.id,
            f.interface,
            json_name(&f.tap),
            json_name(&f.transport),
            json_name(&f.role),
            f.frames,
            f.bytes,
            f.retransmitted,
            f.spurious,
            f.losses,
            f.capture_gaps,
            f.messages,
            f.messages_completed,
            f.cnps,
            f.ecn_ce,
            ms(f.fct_ns),
            us(f.message_latency.avg_ns),
            us(f.rtt.avg_ns),
        )?;
    }
    for p in &r.pauses {
        writeln!(
            out,
            "pfc if {} from {} priority {}: {} frames, paused {} ms, longest {} ms, {} storms, {} flows affected",
            p.interface,
            p.src_mac,
            p.priority,
            p.frames,
            ms(Some(p.paused_ns)),
            ms(Some(p.longest_ns)),
            p.storms,
            p.flows_affected.len()
        )?;
    }
    Ok(())
}

/// One timeline event, for the text and CSV forms (in frame order per flow).
struct Event {
    frame: u64,
    time_ns: u64,
    kind: &'static str,
    psn: Option<u32>,
    message: Option<u64>,
    detail: String,
}


fn events(f: &FlowTimeline) -> Vec<Event> {
    let mut ev = Vec::new();
    for l in &f.losses {
        ev.push(Event {
            frame: l.frame,
            time_ns: l.time_ns.0,
            kind: "loss",
            psn: Some(l.psn),
            message: l.message,
            detail: format!("signal={} repair={} evidence={}", l.signal.name(), json_name(&l.repair), json_name(&l.evidence)),
        });
    }
    for r in &f.retransmissions {
        ev.push(Event {
            frame: r.frame,
            time_ns: r.time_ns.0,
            kind: "retransmission",
            psn: Some(r.psn),
            message: r.message,
            detail: format!(
                "cause={} trigger={} spurious={} copy={}",
                r.cause.name(),
                r.trigger.name(),
                r.spurious.map_or("unknown".into(), |s| s.to_string()),
                r.copy
            ),
        });
    }
    for g in &f.capture_gaps {
        ev.push(Event { frame: g.frame, time_ns: 0, kind: "capture_gap", psn: Some(g.psn), message: None, detail: String::new() });
    }
    for m in &f.messages {
        if let (Some(cf), Some(ct)) = (m.complete_frame, m.complete_time_ns) {
            ev.push(Event {
                frame: cf,
                time_ns: ct.0,
                kind: "message_complete",
                psn: m.last_psn,
                message: Some(m.index),
                detail: format!(
                    "op={} psn={}..{} frames={}..{} packets={} retransmitted={} latency_us={}",
                    m.op,
                    m.first_psn,
                    opt(m.last_psn),
                    m.first_frame,
                    m.last_frame,
                    opt(m.packets),
                    m.retransmitted,
                    us(m.latency_ns)
                ),
            });
        } else {
            ev.push(Event {
                frame: m.last_frame,
                time_ns: 0,
                kind: "message_incomplete",
                psn: Some(m.first_psn),
                message: Some(m.index),
                detail: format!("op={} frames={}..{}", m.op, m.first_frame, m.last_frame),
            });
        }
    }
    ev.sort_by_key(|e| (e.frame, e.kind));
    ev
}


/// One flow of the timeline as text: its header line, then its events in frame order.
pub fn timeline_text_flow(out: &mut impl Write, f: &FlowTimeline) -> io::Result<()> {
    writeln!(
        out,
        "flow {} (interface {}, {} {} {}, tap {}{}{}): {} losses, {} retransmissions, {} messages, {} capture gaps",
        f.id,
        f.interface,
        f.profile,
        json_name(&f.transport),
        json_name(&f.role),
        json_name(&f.tap),
        f.peer.as_ref().map_or(String::new(), |p| format!(", peer {p}")),
        f.serves.as_ref().map_or(String::new(), |p| format!(", serves {p}")),
        f.losses.len(),
        f.retransmissions.len(),
        f.messages.len(),
        f.capture_gaps.len()
    )?;
    for e in events(f) {
        writeln!(out, "  frame {:>7} {:<18} psn {:>8} msg {:>5} {}", e.frame, e.kind, opt(e.psn), opt(e.message), e.detail)?;
    }
    Ok(())
}

/// The timeline CSV's header line.
pub fn timeline_csv_header(out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "flow,event,frame,time_ns,psn,message,detail")
}

/// One flow's rows of the timeline CSV (one row per event).
pub fn timeline_csv_flow(out: &mut impl Write, f: &FlowTimeline) -> io::Result<()> {
    for e in events(f) {
        let time = if e.time_ns == 0 { String::new() } else { e.time_ns.to_string() };
        writeln!(out, "{},{},{},{},{},{},\"{}\"", f.id, e.kind, e.frame, time, opt(e.psn), opt(e.message), e.detail)?;
    }
    Ok(())
}
