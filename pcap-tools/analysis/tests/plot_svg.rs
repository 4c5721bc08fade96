//! The flow plots of `rocescope timeline --svg` (analyze/plot.rs) read back as XML: for a lossy
//! Go-Back-N flow (sender tap) and the DCP flows of a receiver tap (header-only losses), every
//! loss and every retransmission of the timeline is one mark, centred at
//! (`Frame::x_of(time)`, `Frame::y_of(psn)`) within 0.01 px, with its 24-bit PSN and frame; and
//! the marks sit where the synthesizer's truth file (fixtures/*.truth.json, written when the
//! fixture was made) says the frame was: its capture time and PSN, the first PSN of the
//! connection at y of PSN offset 0. Also: the 24-bit unwrap across 2^24, escaping of flow ids,
//! and the empty-flow plot.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rocescope_analysis::analyze::plot::{self, Frame};
use rocescope_analysis::analyze::report::{Cause, FlowTimeline, Role, Tap, TimelineReport, Transport};
use rocescope_analysis::analyze::series::Series;
use rocescope_analysis::analyze::{run, Options};
use rocescope_analysis::capture;
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoder, DecoderOptions, ProfileChoice};
use rocescope_codec::Params;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures").join(name)
}

/// The timeline and each flow's plot points, as `rocescope timeline --svg` computes them.
fn analyse(name: &str) -> (TimelineReport, Vec<Option<Series>>) {
    let path = fixture(name);
    let reader = capture::open(path.to_str().unwrap()).unwrap();
    let opts =
        DecoderOptions { profile: ProfileChoice::Auto, maps: vec![], params: Params::default(), no_verify: false };
    let decoder = Decoder::new(opts);
    let mut s = Session::new(reader, decoder);
    let mut a = run::analyze(&mut s, Options { plot: true, ..Default::default() }, run::Window::default(), |_| {}).unwrap();
    (a.timeline(), a.series().into_iter().map(|s| s.cloned()).collect())
}

/// One data frame of the truth file: (time_ns, psn).
type TruthFrames = HashMap<u64, (u64, u32)>;

/// The truth's frames of one tap (pcapng interface) by frame number, and the connections' first
/// PSNs by requester address.
fn truth(name: &str, interface: u64) -> (TruthFrames, HashMap<String, u32>) {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let t: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tap = t["taps"].as_array().unwrap().iter().find(|tap| tap["interface"] == interface).unwrap();
    let frames = tap["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let time: u64 = f["time_ns"].as_str().unwrap().parse().unwrap();
            (f["frame"].as_u64().unwrap(), (time, f["psn"].as_u64().unwrap() as u32))
        })
        .collect();
    let starts = t["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["requester"]["ip"].as_str().unwrap().to_string(), c["start_psn"].as_u64().unwrap() as u32))
        .collect();
    (frames, starts)
}

fn num(n: roxmltree::Node, attr: &str) -> f64 {
    n.attribute(attr).unwrap_or_else(|| panic!("no {attr} on {n:?}")).parse().unwrap()
}

/// What a mark says: (x, y, data-psn, data-frame).
fn marks<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<(roxmltree::Node<'a, 'a>, f64, f64, u32, u64)> {
    doc.descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.split(' ').any(|w| w == class)))
        .map(|n| (n, num(n, "x"), num(n, "y"), num(n, "data-psn") as u32, num(n, "data-frame") as u64))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.01
}

fn cause_name(c: Cause) -> &'static str {
    match c {
        Cause::Loss => "loss",
        Cause::GoBack => "go_back",
        Cause::Timeout => "timeout",
        Cause::Spurious => "spurious",
        Cause::Unknown => "unknown",
    }
}

/// Renders `flow`, parses it and checks every loss and retransmission mark against the timeline
/// and the truth; returns (losses, retransmissions) checked.
fn check_flow(flow: &FlowTimeline, series: &Series, truth_frames: &TruthFrames, start_psn: u32) -> (usize, usize) {
    let svg = plot::flow_svg(flow, series);
    let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: not well-formed XML: {e}", flow.id));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    for attr in ["viewBox", "width", "height"] {
        assert!(root.attribute(attr).is_some(), "{attr}");
    }
    assert!(doc.descendants().any(|n| n.text().is_some_and(|t| t.contains(&flow.id))), "title names the flow");
    let fr = Frame::for_flow(flow, series).expect("a flow with data packets has a frame");

    // The drawn plot area is the frame's.
    let area = doc.descendants().find(|n| n.attribute("class") == Some("axis plot-area")).unwrap();
    let a = fr.area;
    assert!(close(num(area, "x"), a.left) && close(num(area, "y"), a.top));
    assert!(close(num(area, "width"), a.width) && close(num(area, "height"), a.height));

    // The connection's first PSN is offset 0; one PSN more is one step up.
    assert_eq!(fr.psn0, start_psn, "{}", flow.id);
    let step = fr.y_of(start_psn) - fr.y_of((start_psn + 1) & 0xff_ffff);
    assert!(step > 0.0 && close(fr.y_of((start_psn + 10) & 0xff_ffff), fr.y_of(start_psn) - 10.0 * step));

    // Losses: one per timeline entry, in the timeline's order, at its frame's time and PSN.
    let losses = marks(&doc, "loss");
    assert_eq!(losses.len(), flow.losses.len(), "{}: loss marks", flow.id);
    for (l, &(n, x, y, psn, frame)) in flow.losses.iter().zip(&losses) {
        assert_eq!(n.attribute("class"), Some("loss"));
        assert_eq!((psn, frame), (l.psn, l.frame), "{}", flow.id);
        let (id, lp) = (&flow.id, l.psn);
        assert!(close(x, fr.x_of(l.time_ns.0)) && close(y, fr.y_of(l.psn)), "{id}: loss {lp} at ({x}, {y})");
        let &(t, p) = truth_frames.get(&frame).unwrap_or_else(|| panic!("frame {frame} not in the truth"));
        assert_eq!(p, psn, "the truth's frame {frame} has this PSN");
        assert!(close(x, fr.x_of(t)) && close(y, fr.y_of(p)), "{id}: loss {psn} where the truth's frame {frame} is");
        assert!(x >= a.left && x <= a.right() && y >= a.top && y <= a.bottom(), "inside the plot area");
    }

    // Retransmissions: one per timeline entry, class by cause.
    let retx = marks(&doc, "retx");
    assert_eq!(retx.len(), flow.retransmissions.len(), "{}: retransmission marks", flow.id);
    for (r, &(n, x, y, psn, frame)) in flow.retransmissions.iter().zip(&retx) {
        assert_eq!(n.attribute("class"), Some(format!("retx cause-{}", cause_name(r.cause)).as_str()));
        assert_eq!((psn, frame), (r.psn, r.frame));
        let (id, rp) = (&flow.id, r.psn);
        assert!(close(x, fr.x_of(r.time_ns.0)) && close(y, fr.y_of(r.psn)), "{id}: retx {rp} at ({x}, {y})");
        let &(t, p) = truth_frames.get(&frame).unwrap_or_else(|| panic!("frame {frame} not in the truth"));
        assert_eq!(p, psn);
        assert!(close(x, fr.x_of(t)) && close(y, fr.y_of(p)));
        assert!(x >= a.left && x <= a.right() && y >= a.top && y <= a.bottom(), "inside the plot area");
    }
    (losses.len(), retx.len())
}

#[test]
fn gbn_sender_flow_marks_every_loss_and_retransmission() {
    let name = "synth-gbn-loss.pcapng";
    let (report, series) = analyse(name);
    let (frames, starts) = truth("synth-gbn-loss.truth.json", 0);
    let (i, flow) = report
        .flows
        .iter()
        .enumerate()
        .find(|(_, f)| f.interface == 0 && f.role == Role::Requests)
        .expect("the sender tap's requests flow");
    assert_eq!((flow.tap, flow.transport), (Tap::Sender, Transport::Gbn));
    let s = series[i].as_ref().unwrap();
    let (losses, retx) = check_flow(flow, s, &frames, starts[&flow.src]);
    // The fixture's sender tap sees losses, and Go-Back-N resends more than it lost.
    assert!(losses > 0 && retx > losses, "{losses} losses, {retx} retransmissions");
}

#[test]
fn dcp_receiver_flows_mark_header_only_losses() {
    let name = "synth-dcp-loss.pcapng";
    let (report, series) = analyse(name);
    let (frames, starts) = truth("synth-dcp-loss.truth.json", 1);
    let mut checked = BTreeMap::new();
    for (i, flow) in report.flows.iter().enumerate() {
        if flow.interface != 1 || flow.role != Role::Requests {
            continue;
        }
        assert_eq!((flow.tap, flow.transport), (Tap::Receiver, Transport::Dcp));
        let s = series[i].as_ref().unwrap();
        let header_only =
            flow.losses.iter().filter(|l| serde_json::to_value(l.evidence).unwrap() == "header_only").count();
        assert!(header_only > 0, "{}: the fixture trims at the receiver's switch", flow.id);
        checked.insert(flow.id.clone(), check_flow(flow, s, &frames, starts[&flow.src]));
    }
    assert_eq!(checked.len(), 2, "two senders: {checked:?}");
}

#[test]
fn psns_unwrap_to_the_nearest_value_across_2_pow_24() {
    let (report, series) = analyse("synth-gbn-loss.pcapng");
    let fr = Frame::for_flow(&report.flows[0], series[0].as_ref().unwrap()).unwrap();
    let near_top = Frame { psn0: 0xff_fffe, ..fr };
    assert_eq!(near_top.rel_psn(0xff_ffff), 1);
    assert_eq!(near_top.rel_psn(0), 2);
    assert_eq!(near_top.rel_psn(5), 7);
    assert_eq!(near_top.rel_psn(0xff_fff0), -14);
    // Half the PSN space away is the farthest a value can be, on either side.
    assert_eq!(near_top.rel_psn((0xff_fffe + (1 << 23)) & 0xff_ffff), -(1 << 23));
    assert_eq!(near_top.rel_psn((0xff_fffe + (1 << 23) - 1) & 0xff_ffff), (1 << 23) - 1);
    let from_zero = Frame { psn0: 0, ..fr };
    assert_eq!(from_zero.rel_psn(0xff_ffff), -1);
    // y is linear in the unwrapped PSN.
    let d = near_top.y_of(0xff_fffe) - near_top.y_of(0xff_ffff);
    assert!(close(near_top.y_of(0xff_fffe) - near_top.y_of(3), 5.0 * d));
}

#[test]
fn ids_are_escaped_and_an_empty_flow_says_so() {
    let (mut report, _) = analyse("synth-gbn-loss.pcapng");
    let mut flow = report.flows.swap_remove(0);
    flow.head.id = "10.0.0.1>10.0.1.1/512@0 <&\"'>".into();
    flow.losses.clear();
    flow.retransmissions.clear();
    flow.messages.clear();
    let empty = Series::default();
    assert!(Frame::for_flow(&flow, &empty).is_none());
    let svg = plot::flow_svg(&flow, &empty);
    let doc = roxmltree::Document::parse(&svg).expect("well-formed");
    assert!(doc.descendants().any(|n| n.text() == Some("no data packets")));
    assert!(doc.descendants().any(|n| n.text().is_some_and(|t| t.contains("10.0.0.1>10.0.1.1/512@0 <&\"'>"))));
    assert_eq!(doc.descendants().filter(|n| n.attribute("class") == Some("loss")).count(), 0);

    // The overview with nothing in it is still a well-formed plot that says so.
    let none = TimelineReport { flows: vec![flow] };
    let svg = plot::overview_svg(&none, &[None]);
    let doc = roxmltree::Document::parse(&svg).expect("well-formed");
    assert!(doc.descendants().any(|n| n.text() == Some("no completed messages")));
}

#[test]
fn overview_has_one_goodput_line_per_data_flow_and_the_latency_cdf() {
    let (report, series) = analyse("synth-dcp-loss.pcapng");
    let refs: Vec<Option<&Series>> = series.iter().map(|s| s.as_ref()).collect();
    let svg = plot::overview_svg(&report, &refs);
    let doc = roxmltree::Document::parse(&svg).expect("well-formed");
    let mut lines: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("goodput"))
        .map(|n| n.attribute("data-flow").unwrap())
        .collect();
    // The fixture: two senders to one receiver, three taps; the requests flows carry the data.
    let mut data_flows: Vec<&str> =
        report.flows.iter().filter(|f| f.role == Role::Requests).map(|f| f.id.as_str()).collect();
    lines.sort_unstable();
    data_flows.sort_unstable();
    assert_eq!(lines, data_flows);
    assert_eq!(doc.descendants().filter(|n| n.attribute("class") == Some("cdf")).count(), 1);
    let messages = report.flows.iter().flat_map(|f| &f.messages).filter(|m| m.latency_ns.is_some()).count();
    assert!(doc.descendants().any(|n| n.text().is_some_and(|t| t.contains(&format!("; {messages} messages,")))));
}
