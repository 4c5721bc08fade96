//! Sequence plots as SVG (`rocescope timeline --svg`), in the spirit of Wireshark's Stevens and
//! tcptrace graphs: one PSN-versus-time plot per flow ([`flow_svg`]) and a capture-wide overview
//! ([`overview_svg`]: goodput per flow, message completion time CDF). The points come from
//! [`Series`] (series.rs), the events from the timeline ([`FlowTimeline`], report.rs).
//!
//! Hand-written SVG 1.1 (no dependency): a `viewBox`, `width`/`height`, a white background, text
//! in a sans-serif font. Every loss is a `<use class="loss">` and every retransmission a
//! `<use class="retx cause-CAUSE">` whose `x`/`y` are the mark's centre, exactly
//! [`Frame::x_of`]`(time_ns)` and [`Frame::y_of`]`(psn)` (printed to 1/1000 px), with `data-psn`
//! (the 24-bit PSN of the report) and `data-frame`; a test recomputes them from [`Frame::for_flow`].

use std::fmt::Write;

use super::psn::MASK;
use super::report::{Cause, FlowTimeline, Retransmission, TimelineReport, Transport};
use super::series::{Point, PointKind, Series};

/// The plot area, in SVG pixels (y grows downwards).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

impl Area {
    pub fn right(&self) -> f64 {
        self.left + self.width
    }
    pub fn bottom(&self) -> f64 {
        self.top + self.height
    }
}

/// Size of a flow plot.
const FLOW_W: f64 = 1100.0;
const FLOW_H: f64 = 640.0;
/// Where a flow plot draws its points (the legend is to the right of it).
pub const FLOW_AREA: Area = Area { left: 90.0, top: 70.0, width: 740.0, height: 480.0 };

/// The geometry of one flow's plot: capture time and 24-bit PSN to SVG pixels.
///
/// Time is read relative to `t0_ns`, the flow's first point; PSNs relative to `psn0`, the PSN of
/// the flow's earliest data point, each unwrapped to the value nearest `psn0` modulo 2^24
/// ([`Frame::rel_psn`]). The axes run from `x_lo_ns` to `x_hi_ns` (ns after `t0_ns`) and from
/// `rel_lo` to `rel_hi` (PSNs after `psn0`), a small margin around the points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub t0_ns: u64,
    pub psn0: u32,
    pub x_lo_ns: f64,
    pub x_hi_ns: f64,
    pub rel_lo: f64,
    pub rel_hi: f64,
    pub area: Area,
}

impl Frame {
    /// The frame of a flow's plot in [`FLOW_AREA`], or `None` when it has no data packet
    /// (no original, header-only packet, retransmission or loss).
    ///
    /// `t0_ns` is the earliest time of any point drawn (originals, acknowledgements, signals,
    /// retransmissions, losses, message completions); `psn0` the PSN of the earliest data point,
    /// by time (originals first on a tie); the PSN range covers the data points and the last PSNs
    /// of completed messages; acknowledgements and NAKs outside it are clipped.
    pub fn for_flow(flow: &FlowTimeline, series: &Series) -> Option<Frame> {
        let header_only = series.signals.iter().filter(|p| p.kind == PointKind::HeaderOnly);
        // (time, psn) of every data point.
        let data: Vec<(u64, u32)> = series
            .originals
            .iter()
            .chain(header_only)
            .map(|p| (p.time_ns, p.psn))
            .chain(flow.retransmissions.iter().map(|r| (r.time_ns.0, r.psn)))
            .chain(flow.losses.iter().map(|l| (l.time_ns.0, l.psn)))
            .collect();
        let &(_, psn0) = data.iter().min_by_key(|(t, _)| *t)?;
        let completions = flow.messages.iter().filter_map(|m| Some((m.complete_time_ns?.0, m.last_psn?)));
        let times = data
            .iter()
            .map(|d| d.0)
            .chain(series.acks.iter().chain(&series.signals).map(|p| p.time_ns))
            .chain(completions.clone().map(|c| c.0));
        let (t0, t1) = times.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
        let mut frame =
            Frame { t0_ns: t0, psn0, x_lo_ns: 0.0, x_hi_ns: 1.0, rel_lo: 0.0, rel_hi: 1.0, area: FLOW_AREA };
        let rels = data.iter().map(|d| d.1).chain(completions.map(|c| c.1)).map(|p| frame.rel_psn(p));
        let (lo, hi) = rels.fold((i64::MAX, i64::MIN), |(lo, hi), r| (lo.min(r), hi.max(r)));
        let span = (t1 - t0).max(1) as f64;
        frame.x_lo_ns = -span * 0.02;
        frame.x_hi_ns = span * 1.02;
        let pad = ((hi - lo) as f64 * 0.04).max(1.0);
        frame.rel_lo = lo as f64 - pad;
        frame.rel_hi = hi as f64 + pad;
        Some(frame)
    }

    /// `psn` relative to `psn0`: the nearest value modulo 2^24, in [−2^23, 2^23).
    pub fn rel_psn(&self, psn: u32) -> i64 {
        let d = (psn.wrapping_sub(self.psn0) & MASK) as i64;
        if d >= 1 << 23 {
            d - (1 << 24)
        } else {
            d
        }
    }

    /// The x pixel of a capture time: `left + (time − t0 − x_lo) / (x_hi − x_lo) · width`.
    pub fn x_of(&self, time_ns: u64) -> f64 {
        let rel = (time_ns as i128 - self.t0_ns as i128) as f64;
        self.x_of_rel(rel)
    }

    fn x_of_rel(&self, rel_ns: f64) -> f64 {
        self.area.left + (rel_ns - self.x_lo_ns) / (self.x_hi_ns - self.x_lo_ns) * self.area.width
    }

    /// The y pixel of a 24-bit PSN: `bottom − (rel_psn − rel_lo) / (rel_hi − rel_lo) · height`.
    pub fn y_of(&self, psn: u32) -> f64 {
        self.y_of_rel(self.rel_psn(psn) as f64)
    }

    fn y_of_rel(&self, rel: f64) -> f64 {
        self.area.bottom() - (rel - self.rel_lo) / (self.rel_hi - self.rel_lo) * self.area.height
    }
}

/// A time axis unit: name and nanoseconds per unit, chosen by the span shown.
fn time_unit(span_ns: f64) -> (&'static str, f64) {
    if span_ns < 2e6 {
        ("µs", 1e3)
    } else if span_ns < 2e10 {
        ("ms", 1e6)
    } else {
        ("s", 1e9)
    }
}

/// Tick values between `lo` and `hi` at a step of 1, 2 or 5 × 10^k, about `n` of them; the step
/// is at least `min_step`.
fn ticks(lo: f64, hi: f64, n: usize, min_step: f64) -> (Vec<f64>, f64) {
    let raw = ((hi - lo) / n.max(1) as f64).max(min_step);
    if !raw.is_finite() || raw <= 0.0 {
        return (vec![], 1.0);
    }
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw * 0.999).unwrap_or(10.0 * mag);
    let mut v = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + step * 1e-9 && v.len() < 100 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    (v, step)
}

/// A tick label with as many decimals as the step needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    format!("{v:.decimals$}")
}

/// A coordinate, to 1/1000 px.
fn px(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// Text for XML content and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}


/// The serde name of a report enumeration (`sender`, `gbn`, `header_only`, …).
fn name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|j| j.as_str().map(str::to_owned)).unwrap_or_else(|| "unknown".into())
}

const CAUSES: [Cause; 5] = [Cause::Loss, Cause::GoBack, Cause::Timeout, Cause::Spurious, Cause::Unknown];

/// The start of a document: header, marker shapes (centred on the origin) and the background.
/// `scale` sizes the marks (smaller where a plot has many).
fn open_svg(out: &mut String, w: f64, h: f64, title: &str, scale: f64) {
    let _ = write!(
        out,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1"
  width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="13">
<title>{title}</title>
<style>
.axis {{ stroke: #333; stroke-width: 1; fill: none; }}
.grid {{ stroke: #e4e4e4; stroke-width: 1; }}
.tick {{ font-size: 12px; fill: #333; }}
.label {{ font-size: 13px; fill: #111; }}
.legend {{ font-size: 12px; fill: #111; }}
</style>
<defs>
<g id="mk-loss"{sc} stroke-linecap="round" fill="none">
  <path d="M-5.5,-5.5L5.5,5.5M-5.5,5.5L5.5,-5.5" stroke="#fff" stroke-width="4"/>
  <path d="M-5.5,-5.5L5.5,5.5M-5.5,5.5L5.5,-5.5" stroke="#d62728" stroke-width="2.4"/></g>
<g id="mk-retx-loss"{sc}><path d="M0,-4.5L5,4.5L-5,4.5Z" fill="#ff7f0e" stroke="#a04d00" stroke-width="0.8"/></g>
<g id="mk-retx-go_back"{sc}><path d="M0,4.5L5,-4.5L-5,-4.5Z" fill="#9467bd" stroke="#4b2d6b" stroke-width="0.8"/></g>
<g id="mk-retx-timeout"{sc}>
  <rect x="-4" y="-4" width="8" height="8" fill="#8c564b" stroke="#3e2520" stroke-width="0.8"/></g>
<g id="mk-retx-spurious"{sc}>
  <path d="M0,-5.5L5.5,0L0,5.5L-5.5,0Z" fill="#e377c2" stroke="#8a2f6e" stroke-width="0.8"/></g>
<g id="mk-retx-unknown"{sc}><circle r="3.6" fill="none" stroke="#7f7f7f" stroke-width="1.6"/></g>
<g id="mk-header-only"{sc}>
  <rect x="-3.5" y="-3.5" width="7" height="7" fill="none" stroke="#000" stroke-width="1.3"/></g>
<g id="mk-bounce"{sc}><path d="M0,-5L5,0L0,5L-5,0Z" fill="none" stroke="#a0522d" stroke-width="1.5"/></g>
<g id="mk-nak"{sc}><path d="M-4.5,0L4.5,-5L4.5,5Z" fill="none" stroke="#17becf" stroke-width="1.6"/></g>
<g id="mk-sack"{sc}><path d="M-5,0L5,0M0,-5L0,5" fill="none" stroke="#bcbd22" stroke-width="2"/></g>
<g id="mk-done"{sc}><path d="M0,-6L4.5,0L0,6L-4.5,0Z" fill="#c7e9c0" stroke="#006d2c" stroke-width="1.5"/></g>
</defs>
<rect class="background" x="0" y="0" width="{w}" height="{h}" fill="#fff"/>
"##,
        title = esc(title),
        sc = if scale == 1.0 { String::new() } else { format!(r#" transform="scale({})""#, px(scale)) }
    );
}

/// Axes with ticks and grid lines for `area`: x ticks at `xs` (label text beside each pixel),
/// y ticks likewise, axis titles.
fn axes(out: &mut String, area: &Area, xs: &[(f64, String)], ys: &[(f64, String)], x_title: &str, y_title: &str) {
    for (x, _) in xs {
        let (top, bottom) = (px(area.top), px(area.bottom()));
        let _ = writeln!(out, r#"<line class="grid" x1="{0}" y1="{top}" x2="{0}" y2="{bottom}"/>"#, px(*x));
    }
    for (y, _) in ys {
        let (left, right) = (px(area.left), px(area.right()));
        let _ = writeln!(out, r#"<line class="grid" x1="{left}" y1="{0}" x2="{right}" y2="{0}"/>"#, px(*y));
    }
    let _ = writeln!(
        out,
        r#"<rect class="axis plot-area" x="{}" y="{}" width="{}" height="{}"/>"#,
        px(area.left),
        px(area.top),
        px(area.width),
        px(area.height)
    );
    for (x, label) in xs {
        let b = area.bottom();
        let _ = writeln!(
            out,
            concat!(
                r#"<line class="axis" x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>"#,
                r#"<text class="tick" x="{0}" y="{3}" text-anchor="middle">{4}</text>"#
            ),
            px(*x),
            px(b),
            px(b + 5.0),
            px(b + 19.0),
            esc(label)
        );
    }
    for (y, label) in ys {
        let l = area.left;
        let _ = writeln!(
            out,
            concat!(
                r#"<line class="axis" x1="{1}" y1="{0}" x2="{2}" y2="{0}"/>"#,
                r#"<text class="tick" x="{3}" y="{4}" text-anchor="end">{5}</text>"#
            ),
            px(*y),
            px(l - 5.0),
            px(l),
            px(l - 8.0),
            px(y + 4.0),
            esc(label)
        );
    }
    let _ = writeln!(
        out,
        r#"<text class="label" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        px(area.left + area.width / 2.0),
        px(area.bottom() + 40.0),
        esc(x_title)
    );
    let (yx, yy) = (area.left - 62.0, area.top + area.height / 2.0);
    let _ = writeln!(
        out,
        r#"<text class="label" x="{0}" y="{1}" text-anchor="middle" transform="rotate(-90 {0} {1})">{2}</text>"#,
        px(yx),
        px(yy),
        esc(y_title)
    );
}

/// One legend line: a sample (SVG fragment drawn centred at the given point) and its text.
struct Legend {
    x: f64,
    y: f64,
}

impl Legend {
    fn entry(&mut self, out: &mut String, sample: &str, text: &str) {
        let (cx, cy) = (self.x + 10.0, self.y);
        let _ = writeln!(out, r#"<g transform="translate({},{})">{sample}</g>"#, px(cx), px(cy));
        let (tx, ty) = (px(self.x + 26.0), px(cy + 4.0));
        let _ = writeln!(out, r#"<text class="legend" x="{tx}" y="{ty}">{}</text>"#, esc(text));
        self.y += 19.0;
    }

    fn uses(&mut self, out: &mut String, marker: &str, text: &str) {
        self.entry(out, &format!(r##"<use href="#{marker}" xlink:href="#{marker}"/>"##), text);
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A mark: a `<use>` of a defined shape centred at (x, y), with attributes and a tooltip.
fn mark(out: &mut String, class: &str, marker: &str, x: f64, y: f64, attrs: &str, tip: &str) {
    let _ = writeln!(
        out,
        concat!(
            r##"<use class="{class}" href="#{marker}" xlink:href="#{marker}" x="{}" y="{}"{attrs}>"##,
            "<title>{}</title></use>"
        ),
        px(x),
        px(y),
        esc(tip),
        class = class,
        marker = marker,
        attrs = attrs
    );
}

/// One flow's PSN-versus-time plot (see the module documentation); a flow without data packets
/// gives a plot that says so.
pub fn flow_svg(flow: &FlowTimeline, series: &Series) -> String {
    let mut out = String::new();
    let title = format!("flow {}", flow.id);
    let events = flow.losses.len() + flow.retransmissions.len() + series.signals.len();
    open_svg(&mut out, FLOW_W, FLOW_H, &title, if events > 150 { 0.7 } else { 1.0 });
    let subtitle = format!(
        "tap: {} · transport: {} · role: {} · profile: {}",
        name(&flow.tap),
        name(&flow.transport),
        name(&flow.role),
        flow.profile
    );
    let left = px(FLOW_AREA.left);
    let bold = r##"font-size="17" font-weight="bold" fill="#111""##;
    let _ = writeln!(out, r##"<text x="{left}" y="28" {bold}>{}</text>"##, esc(&title));
    let _ = writeln!(out, r##"<text x="{left}" y="50" font-size="13" fill="#444">{}</text>"##, esc(&subtitle));
    let Some(fr) = Frame::for_flow(flow, series) else {
        let a = FLOW_AREA;
        let (l, t, w, h) = (a.left, a.top, a.width, a.height);
        let _ = writeln!(out, r##"<rect class="axis plot-area" x="{l}" y="{t}" width="{w}" height="{h}"/>"##);
        let (x, y) = (px(l + w / 2.0), px(t + h / 2.0));
        let _ = writeln!(
            out,
            concat!(
                r##"<text class="no-data" x="{x}" y="{y}" text-anchor="middle" font-size="20" fill="#666">"##,
                "no data packets</text>"
            ),
            x = x,
            y = y
        );
        out.push_str("</svg>\n");
        return out;
    };
    let a = fr.area;

    // Axes: time after the first point, PSN after the first PSN.
    let (unit, per) = time_unit(fr.x_hi_ns - fr.x_lo_ns);
    let (tx, tstep) = ticks(fr.x_lo_ns.max(0.0) / per, fr.x_hi_ns / per, 8, 0.0);
    let xs: Vec<(f64, String)> = tx.iter().map(|&v| (fr.x_of_rel(v * per), tick_label(v, tstep))).collect();
    let (ty, ystep) = ticks(fr.rel_lo, fr.rel_hi, 8, 1.0);
    let ys: Vec<(f64, String)> = ty.iter().map(|&v| (fr.y_of_rel(v), tick_label(v, ystep))).collect();
    let x_title = format!("time since the flow's first packet ({unit})");
    let y_title = format!("PSN − {} (first PSN)", fr.psn0);
    axes(&mut out, &a, &xs, &ys, &x_title, &y_title);
    let _ = writeln!(
        out,
        r#"<clipPath id="plot-clip"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>"#,
        px(a.left),
        px(a.top),
        px(a.width),
        px(a.height)
    );
    out.push_str("<g clip-path=\"url(#plot-clip)\">\n");

    // ACK progress: a step line through each acknowledgement's highest covered PSN. DCP's eMSN
    // acknowledgements count messages, not PSNs: they show as message completions only; and the
    // analyser reads no coverage from the PSN of a DCP ACK without an eMSN (mod.rs), nor does this.
    let acks: Vec<&Point> = match flow.transport {
        Transport::Dcp => Vec::new(),
        _ => series.acks.iter().filter(|p| p.kind == PointKind::Ack).collect(),
    };
    if let Some(first) = acks.first() {
        let mut d = format!("M{},{}", px(fr.x_of(first.time_ns)), px(fr.y_of(first.psn)));
        for p in &acks[1..] {
            let _ = write!(d, "H{}V{}", px(fr.x_of(p.time_ns)), px(fr.y_of(p.psn)));
        }
        // The last acknowledgement holds until the flow's last point.
        let _ = write!(d, "H{}", px(fr.x_of_rel(fr.x_hi_ns / 1.02)));
        let _ = writeln!(out, r##"<path class="acks" d="{d}" fill="none" stroke="#2ca02c" stroke-width="1.6"/>"##);
    }

    // Originals: dots, as zero-length round-capped segments of one path.
    if !series.originals.is_empty() {
        let mut d = String::with_capacity(series.originals.len() * 16);
        for p in &series.originals {
            let _ = write!(d, "M{},{}h0", px(fr.x_of(p.time_ns)), px(fr.y_of(p.psn)));
        }
        let _ = writeln!(
            out,
            concat!(
                r##"<path class="originals" d="{d}" fill="none" stroke="#1f77b4" stroke-width="4" "##,
                r#"stroke-linecap="round"/>"#
            ),
            d = d
        );
    }

    // Signals: header-only packets, bounces, NAKs, SACKs; CNPs as ticks along the bottom.
    let count = |k: PointKind| series.signals.iter().filter(|p| p.kind == k).count();
    for p in &series.signals {
        let (class, marker, what) = match p.kind {
            PointKind::HeaderOnly => ("header-only", "mk-header-only", "header-only packet"),
            PointKind::Bounce => ("bounce", "mk-bounce", "bounced header"),
            PointKind::Nak => ("nak", "mk-nak", "NAK, expected PSN"),
            PointKind::Sack => ("sack", "mk-sack", "SACK, SACKed PSN"),
            _ => continue,
        };
        let tip = format!("{what} {} at {:.3} µs", p.psn, (p.time_ns as i128 - fr.t0_ns as i128) as f64 / 1e3);
        mark(&mut out, class, marker, fr.x_of(p.time_ns), fr.y_of(p.psn), &format!(r#" data-psn="{}""#, p.psn), &tip);
    }
    out.push_str("</g>\n");
    let cnps: Vec<f64> =
        series.signals.iter().filter(|p| p.kind == PointKind::Cnp).map(|p| fr.x_of(p.time_ns)).collect();
    if !cnps.is_empty() {
        let mut d = String::new();
        for x in &cnps {
            let _ = write!(d, "M{},{}v-12", px(*x), px(a.bottom() - 1.0));
        }
        let _ = writeln!(out, r##"<path class="cnp" d="{d}" stroke="#e7298a" stroke-width="1.6" fill="none"/>"##);
    }

    // Message completions, then retransmissions, then losses on top.
    let mut done = 0;
    for m in &flow.messages {
        let (Some(t), Some(last)) = (m.complete_time_ns, m.last_psn) else { continue };
        done += 1;
        let (index, first, bytes) = (m.index, m.first_psn, m.bytes);
        let tip = format!("message {index} ({}) complete, PSNs {first}–{last}, {bytes} bytes", m.op);
        let frame = m.complete_frame.unwrap_or(0);
        let attrs = format!(r#" data-message="{index}" data-psn="{last}" data-frame="{frame}""#);
        mark(&mut out, "done", "mk-done", fr.x_of(t.0), fr.y_of(last), &attrs, &tip);
    }
    for r in &flow.retransmissions {
        let cause = r.cause.name();
        mark(
            &mut out,
            &format!("retx cause-{cause}"),
            &format!("mk-retx-{cause}"),
            fr.x_of(r.time_ns.0),
            fr.y_of(r.psn),
            &format!(r#" data-psn="{}" data-frame="{}" data-copy="{}""#, r.psn, r.frame, r.copy),
            &retx_tip(r),
        );
    }
    for l in &flow.losses {
        let tip = format!(
            "loss of PSN {}, frame {}: signal {}, evidence {}, repair {}",
            l.psn,
            l.frame,
            name(&l.signal),
            name(&l.evidence),
            name(&l.repair)
        );
        let attrs = format!(r#" data-psn="{}" data-frame="{}""#, l.psn, l.frame);
        mark(&mut out, "loss", "mk-loss", fr.x_of(l.time_ns.0), fr.y_of(l.psn), &attrs, &tip);
    }

    // Legend: every kind of mark drawn, with its count.
    let mut lg = Legend { x: a.right() + 22.0, y: a.top + 8.0 };
    let _ = writeln!(out, r#"<text class="legend" x="{}" y="{}" font-weight="bold">Legend</text>"#, px(lg.x), px(lg.y));
    lg.y += 20.0;
    if !series.originals.is_empty() {
        let text = plural(series.originals.len(), "packet (first copy)", "packets (first copies)");
        lg.entry(&mut out, r##"<circle r="2.2" fill="#1f77b4"/>"##, &text);
    }
    for c in CAUSES {
        let n = flow.retransmissions.iter().filter(|r| r.cause == c).count();
        if n > 0 {
            let cause = c.name();
            lg.uses(&mut out, &format!("mk-retx-{cause}"), &format!("{n} retransmitted, cause {cause}"));
        }
    }
    if !flow.losses.is_empty() {
        lg.uses(&mut out, "mk-loss", &plural(flow.losses.len(), "loss", "losses"));
    }
    if !acks.is_empty() {
        let sample = r##"<path d="M-9,3H0V-3H9" fill="none" stroke="#2ca02c" stroke-width="1.6"/>"##;
        lg.entry(&mut out, sample, &format!("ACK progress ({})", acks.len()));
    }
    for (k, marker, one, many) in [
        (PointKind::HeaderOnly, "mk-header-only", "header-only packet", "header-only packets"),
        (PointKind::Bounce, "mk-bounce", "bounce", "bounces"),
        (PointKind::Nak, "mk-nak", "NAK (expected PSN)", "NAKs (expected PSN)"),
        (PointKind::Sack, "mk-sack", "SACK", "SACKs"),
    ] {
        let n = count(k);
        if n > 0 {
            lg.uses(&mut out, marker, &plural(n, one, many));
        }
    }
    if done > 0 {
        lg.uses(&mut out, "mk-done", &plural(done, "message completed", "messages completed"));
    }
    if !cnps.is_empty() {
        let sample = r##"<path d="M0,6v-12" stroke="#e7298a" stroke-width="1.6"/>"##;
        lg.entry(&mut out, sample, &plural(cnps.len(), "CNP (bottom)", "CNPs (bottom)"));
    }
    if flow.losses.is_empty() && flow.retransmissions.is_empty() {
        lg.entry(&mut out, "", "no loss, no retransmission");
    }
    let emsn = series.acks.iter().filter(|p| p.kind == PointKind::Emsn).count();
    if emsn > 0 {
        lg.entry(&mut out, "", &format!("{emsn} eMSN ACKs: see completions"));
    }
    out.push_str("</svg>\n");
    out
}

fn retx_tip(r: &Retransmission) -> String {
    let spurious = match r.spurious {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    format!(
        "retransmission of PSN {}, frame {}, copy {}: cause {}, trigger {}, spurious {spurious}",
        r.psn,
        r.frame,
        r.copy + 1,
        r.cause.name(),
        name(&r.trigger)
    )
}

/// Size of the overview and its two panels.
const OV_W: f64 = 1100.0;
const OV_H: f64 = 800.0;
const GOODPUT_AREA: Area = Area { left: 90.0, top: 70.0, width: 740.0, height: 300.0 };
const CDF_AREA: Area = Area { left: 90.0, top: 480.0, width: 740.0, height: 240.0 };
/// Line colours of the flows (then repeated dashed).
const PALETTE: [&str; 10] =
    ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
/// Dash patterns of the interfaces (taps), in order.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "10 3 2 3"];
/// Flows named in the legend at most.
const LEGEND_MAX: usize = 24;

/// The capture-wide view: goodput per flow over time and the message completion time CDF.
pub fn overview_svg(report: &TimelineReport, series: &[Option<&Series>]) -> String {
    let mut out = String::new();
    open_svg(&mut out, OV_W, OV_H, "rocescope overview", 1.0);
    let left = GOODPUT_AREA.left;
    let bold = r##"font-size="17" font-weight="bold" fill="#111""##;
    let _ = writeln!(out, r##"<text x="{left}" y="28" {bold}>Goodput per flow</text>"##);
    goodput(&mut out, report, series);
    let y = CDF_AREA.top - 22.0;
    let _ = writeln!(out, r##"<text x="{left}" y="{y}" {bold}>Message completion time CDF</text>"##);
    cdf(&mut out, report);
    out.push_str("</svg>\n");
    out
}

fn no_data(out: &mut String, a: &Area, text: &str) {
    let (l, t, w, h) = (a.left, a.top, a.width, a.height);
    let _ = writeln!(out, r#"<rect class="axis" x="{l}" y="{t}" width="{w}" height="{h}"/>"#);
    let _ = writeln!(
        out,
        r##"<text class="no-data" x="{}" y="{}" text-anchor="middle" font-size="18" fill="#666">{}</text>"##,
        px(a.left + a.width / 2.0),
        px(a.top + a.height / 2.0),
        esc(text)
    );
}

/// Goodput: unique payload bytes of each flow's first copies per time bucket, in Gb/s.
///
/// The series' originals carry no payload size: each counts the flow's average payload per
/// packet, Σ`messages.bytes` / Σ`messages.packets` (messages whose last packet was seen). Past
/// [`Series::CAP`] points a series keeps one in 2^k, so when a flow's messages span clearly more
/// packets than its series kept, each kept point stands for that power of two of packets.
///
/// A line's colour is its connection direction (`SRC>DST/DESTQP`), its dash the interface (tap)
/// it was captured on, so one flow seen at several taps reads as one colour.
fn goodput(out: &mut String, report: &TimelineReport, series: &[Option<&Series>]) {
    let a = GOODPUT_AREA;
    // (flow, originals, bytes per kept point)
    let mut flows: Vec<(&FlowTimeline, &Series, f64)> = report
        .flows
        .iter()
        .zip(series)
        .filter_map(|(f, s)| {
            let s = (*s)?;
            if s.originals.is_empty() {
                return None;
            }
            let (bytes, packets) = f
                .messages
                .iter()
                .filter_map(|m| Some((m.bytes, m.packets? as u64)))
                .fold((0u64, 0u64), |(b, p), (mb, mp)| (b + mb, p + mp));
            if packets == 0 || bytes == 0 {
                return None;
            }
            let ratio = packets as f64 / s.originals.len() as f64;
            let stride = if ratio >= 1.5 { 2f64.powf(ratio.log2().round()) } else { 1.0 };
            Some((f, s, bytes as f64 / packets as f64 * stride))
        })
        .collect();
    if flows.is_empty() {
        no_data(out, &a, "no flow carrying data with known payload sizes");
        return;
    }
    flows.sort_by_key(|(f, _, _)| f.interface);
    let base = |f: &FlowTimeline| f.id.split(['@', '#']).next().unwrap_or("").to_string();
    let mut bases: Vec<String> = Vec::new();
    let mut ifaces: Vec<u32> = flows.iter().map(|(f, _, _)| f.interface).collect();
    ifaces.dedup();
    for (f, _, _) in &flows {
        if !bases.contains(&base(f)) {
            bases.push(base(f));
        }
    }
    let style = |f: &FlowTimeline| {
        let c = bases.iter().position(|b| *b == base(f)).unwrap_or(0);
        let i = ifaces.iter().position(|i| *i == f.interface).unwrap_or(0);
        let dash = DASHES[i % DASHES.len()];
        let dash = if dash.is_empty() { String::new() } else { format!(r#" stroke-dasharray="{dash}""#) };
        (PALETTE[c % PALETTE.len()], dash)
    };

    let times = flows.iter().flat_map(|(_, s, _)| s.originals.iter().map(|p| p.time_ns));
    let (t0, t1) = times.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
    // Buckets of a round width, about one per six packets of the busiest flow, 10 to 150.
    let busiest = flows.iter().map(|(_, s, _)| s.originals.len()).max().unwrap_or(1);
    let span = (t1 - t0).max(1) as f64;
    let bucket = nice_floor((span / (busiest / 6).clamp(10, 150) as f64).max(1.0));
    let nbuckets = (span / bucket).floor() as usize + 1;
    let lines: Vec<Vec<f64>> = flows
        .iter()
        .map(|(_, s, per)| {
            let mut v = vec![0.0; nbuckets];
            for p in &s.originals {
                let b = ((p.time_ns - t0) as f64 / bucket) as usize;
                v[b.min(nbuckets - 1)] += per;
            }
            // bytes per bucket to Gb/s (bits per ns)
            v.iter().map(|b| b * 8.0 / bucket).collect()
        })
        .collect();
    let ymax = lines.iter().flatten().fold(0.0f64, |m, v| m.max(*v)).max(1e-9);
    let x_hi = nbuckets as f64 * bucket;
    let (unit, per) = time_unit(x_hi);
    let x_of = |ns: f64| a.left + ns / x_hi * a.width;
    let (_, ystep) = ticks(0.0, ymax * 1.05, 6, 0.0);
    let y_hi = (ymax * 1.05 / ystep).ceil() * ystep;
    let (ytick, _) = ticks(0.0, y_hi, 6, 0.0);
    let y_of = |g: f64| a.bottom() - g / y_hi * a.height;
    let (tx, tstep) = ticks(0.0, x_hi / per, 8, 0.0);
    let xs: Vec<(f64, String)> = tx.iter().map(|&v| (x_of(v * per), tick_label(v, tstep))).collect();
    let ys: Vec<(f64, String)> =
        ytick.iter().filter(|v| **v <= y_hi).map(|&v| (y_of(v), tick_label(v, ystep))).collect();
    let x_title = format!("time since the first data packet ({unit}); buckets of {}", duration(bucket));
    axes(out, &a, &xs, &ys, &x_title, "goodput (Gb/s)");
    for ((f, _, _), v) in flows.iter().zip(&lines) {
        let first = v.iter().position(|g| *g > 0.0).unwrap_or(0);
        let last = v.iter().rposition(|g| *g > 0.0).unwrap_or(0);
        // A step per bucket, from 0 before the flow's first bucket to 0 after its last.
        let mut pts = format!("{},{} ", px(x_of(first as f64 * bucket)), px(y_of(0.0)));
        for (b, g) in v.iter().enumerate().take(last + 1).skip(first) {
            let (x0, x1, y) = (px(x_of(b as f64 * bucket)), px(x_of((b + 1) as f64 * bucket)), px(y_of(*g)));
            let _ = write!(pts, "{x0},{y} {x1},{y} ");
        }
        let _ = write!(pts, "{},{}", px(x_of((last + 1) as f64 * bucket)), px(y_of(0.0)));
        let (colour, dash) = style(f);
        let _ = writeln!(
            out,
            concat!(
                r#"<polyline class="goodput" data-flow="{}" points="{}" fill="none" stroke="{colour}" "#,
                r#"stroke-width="1.8" "#,
                r#"stroke-linejoin="round"{dash}><title>{}</title></polyline>"#
            ),
            esc(&f.id),
            pts.trim_end(),
            esc(&f.id),
            colour = colour,
            dash = dash
        );
    }
    let mut lg = Legend { x: a.right() + 22.0, y: a.top + 8.0 };
    let (x, y, n) = (px(lg.x), px(lg.y), flows.len());
    let _ = writeln!(out, r#"<text class="legend" x="{x}" y="{y}" font-weight="bold">Flows ({n})</text>"#);
    lg.y += 16.0;
    let y = px(lg.y);
    let note = "colour: flow · dash: interface";
    let _ = writeln!(out, r##"<text class="legend" x="{x}" y="{y}" font-size="11" fill="#555">{note}</text>"##);
    lg.y += 18.0;
    for (f, _, _) in flows.iter().take(LEGEND_MAX) {
        let (colour, dash) = style(f);
        let sample = format!(r#"<path d="M-10,0H10" stroke="{colour}" stroke-width="2.4"{dash}/>"#);
        lg.entry(out, &sample, &f.id);
    }
    if flows.len() > LEGEND_MAX {
        lg.entry(out, "", &format!("… and {} more", flows.len() - LEGEND_MAX));
    }
}

/// The largest 1, 2 or 5 × 10^k not above `x` (x ≥ 1).
fn nice_floor(x: f64) -> f64 {
    let mag = 10f64.powf(x.log10().floor());
    [5.0, 2.0, 1.0].iter().map(|m| m * mag).find(|v| *v <= x * 1.000_001).unwrap_or(mag)
}

/// A duration in ns as text in its own unit (`20 µs`, `500 ns`).
fn duration(ns: f64) -> String {
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", px(v))
}

/// The CDF of message completion times over every flow, in µs; a log axis when the values span
/// more than two decades. The median and the 99th percentile are marked.
fn cdf(out: &mut String, report: &TimelineReport) {
    let a = CDF_AREA;
    let mut lat: Vec<u64> = report.flows.iter().flat_map(|f| f.messages.iter().filter_map(|m| m.latency_ns)).collect();
    lat.sort_unstable();
    let (Some(&lo), Some(&hi)) = (lat.first(), lat.last()) else {
        no_data(out, &a, "no completed messages");
        return;
    };
    let n = lat.len();
    // In µs; a log axis needs positive values (a 0 ns latency is drawn at 1 ns).
    let us = |ns: u64| ns.max(1) as f64 / 1e3;
    let log = us(hi) / us(lo) > 100.0;
    let (x_lo, x_hi, xs_v): (f64, f64, Vec<(f64, String)>) = if log {
        let (d_lo, d_hi) = (us(lo).log10().floor(), us(hi).log10().ceil());
        let v = (d_lo as i32..=d_hi as i32).map(|d| (d as f64, decade_label(d))).collect();
        (d_lo, d_hi, v)
    } else {
        let pad = ((us(hi) - us(lo)) * 0.05).max(us(hi) * 0.02).max(1e-3);
        let (l, h) = ((us(lo) - pad).max(0.0), us(hi) + pad);
        let (t, step) = ticks(l, h, 8, 0.0);
        (l, h, t.iter().map(|&v| (v, tick_label(v, step))).collect())
    };
    let pos = |ns: u64| if log { us(ns).log10() } else { us(ns) };
    let x_of = |v: f64| a.left + (v - x_lo) / (x_hi - x_lo) * a.width;
    let y_of = |q: f64| a.bottom() - q * a.height;
    let xs: Vec<(f64, String)> = xs_v.iter().map(|(v, l)| (x_of(*v), l.clone())).collect();
    let ys: Vec<(f64, String)> = [0.0, 0.25, 0.5, 0.75, 1.0].iter().map(|&q| (y_of(q), format!("{q:.2}"))).collect();
    let scale = if log { "log scale" } else { "linear scale" };
    let x_title = format!("message completion time (µs, {scale}); {n} messages, over every flow and tap");
    axes(out, &a, &xs, &ys, &x_title, "fraction of messages");
    let mut d = format!("M{},{}", px(x_of(pos(lo))), px(y_of(0.0)));
    for (i, &v) in lat.iter().enumerate() {
        let x = px(x_of(pos(v)));
        let _ = write!(d, "H{x}V{}", px(y_of((i + 1) as f64 / n as f64)));
    }
    let _ = writeln!(out, r##"<path class="cdf" d="{d}" fill="none" stroke="#1f77b4" stroke-width="2"/>"##);
    // Labels low in the plot: right of the median, left of the 99th percentile, where a CDF
    // leaves room.
    for (q, label, dy) in [(0.5, "p50", 30.0), (0.99, "p99", 12.0)] {
        let v = lat[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        let x = x_of(pos(v));
        // The label on the side with room.
        let left = (label == "p99" && x > a.left + 130.0) || x > a.right() - 120.0;
        let (tx, anchor) = if left { (x - 5.0, "end") } else { (x + 5.0, "start") };
        let _ = writeln!(
            out,
            concat!(
                r##"<line class="percentile" x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#d62728" "##,
                r#"stroke-width="1.2" stroke-dasharray="4 3"/>"#,
                r##"<text class="legend" x="{3}" y="{4}" text-anchor="{anchor}" fill="#d62728" "##,
                r##"stroke="#fff" stroke-width="3" paint-order="stroke">{label} {5} µs</text>"##
            ),
            px(x),
            px(a.top),
            px(a.bottom()),
            px(tx),
            px(a.bottom() - dy),
            fmt_us(us(v)),
            anchor = anchor,
            label = label
        );
    }
}

fn decade_label(d: i32) -> String {
    if d >= 0 {
        format!("{}", 10u64.saturating_pow(d as u32))
    } else {
        format!("{}", 10f64.powi(d))
    }
}

fn fmt_us(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
