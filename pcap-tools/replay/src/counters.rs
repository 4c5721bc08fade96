//! Counter reconciliation (`rocescope replay --counters BEFORE AFTER`, docs/replay.md
//! "Counter reconciliation"): two `ethtool -S` snapshots of the NIC at the capture's host-side
//! tap, each counter's change set against what the capture shows of that host (the frames of
//! its tap only, into and out of it).
//!
//! Counted from the analysers' per-packet summaries ([`Pkt`]) of the tap's frames, with small
//! models of their own: the responder's expected PSN (in order for Go-Back-N, any order for IRN
//! and DCP), the requester's READ responses and its resends.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::net::IpAddr;

use serde::Serialize;

use rocescope_analysis::analyze::pkt::{Class, Pkt, ReqOp};
use rocescope_analysis::analyze::report::{FlowRow, Role, Tap, Transport};
use rocescope_codec::ib::psn;

/// An `ethtool -S` snapshot: counter name → value.
pub type Snapshot = BTreeMap<String, u64>;

/// Reads `ethtool -S` output: `name: value` lines (leading spaces allowed), a header line
/// ending in `:` (`NIC statistics:`) and blank lines skipped. Any other line is an error:
/// (line number from 1, what is wrong).
pub fn parse_ethtool(text: &str) -> Result<Snapshot, (usize, String)> {
    let mut out = Snapshot::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        let Some((name, value)) = l.split_once(':') else {
            return Err((n, format!("not a `name: value` line: {l:?}")));
        };
        let (name, value) = (name.trim(), value.trim());
        if value.is_empty() && !name.is_empty() {
            continue; // a header: `NIC statistics:`
        }
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err((n, format!("not a counter name: {name:?}")));
        }
        let Ok(v) = value.parse::<u64>() else {
            return Err((n, format!("{name}: not a count: {value:?}")));
        };
        if out.insert(name.to_string(), v).is_some() {
            return Err((n, format!("{name} appears twice")));
        }
    }
    Ok(out)
}

/// What `--counters` gives replay.
#[derive(Clone, Debug, Default)]
pub struct CountersInput {
    pub before: Snapshot,
    pub after: Snapshot,
    /// The host whose NIC the snapshots are of (`--counters-host`).
    pub host: Option<IpAddr>,
    /// The capture interface at that host's NIC (`--counters-interface`).
    pub interface: Option<u32>,
}

/// How a counter's change compares with the capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Agree,
    Disagree,
    /// The capture does not show it (the reason says why); not a failure.
    CannotJudge,
}

/// One counter reconciled.
#[derive(Clone, Debug, Serialize)]
pub struct CounterRow {
    pub name: String,
    pub before: Option<u64>,
    pub after: Option<u64>,
    /// `after − before`; `None` when a snapshot lacks it or it went back.
    pub delta: Option<u64>,
    /// What the capture shows; `None` when it cannot judge.
    pub capture: Option<u64>,
    pub verdict: Verdict,
    /// How the capture's count is made, or why it cannot judge.
    pub why: String,
}

/// The host the counters are of, and its tap.
#[derive(Clone, Debug, Serialize)]
pub struct CountersHost {
    pub ip: String,
    pub interface: u32,
}

/// The counters rocescope judges, with how the capture shows each (docs/replay.md).
pub const JUDGED: &[(&str, &str)] = &[
    ("out_of_sequence", "request packets the host received (whole) with a PSN beyond the one its responder QP expected next (Go-Back-N: in order; IRN, DCP: any order)"),
    ("duplicate_request", "request packets the host received whose PSN its responder QP had already received"),
    ("packet_seq_err", "PSN sequence error NAKs (IRN's selective NAKs included) the host received"),
    ("implied_nak_seq_err", "ACKs or READ responses the host received past the READ response it expected next (once per missing PSN)"),
    ("local_ack_timeout_err", "Go-Back-N resends the host began with no NAK or implied NAK received since its previous request packet that sent it back"),
    ("np_cnp_sent", "CNPs the host sent"),
    ("np_ecn_marked_roce_packets", "RoCE packets the host received with the CE mark"),
    ("rp_cnp_handled", "CNPs the host received, less rp_cnp_ignored's change when the snapshots have it"),
    ("rx_vport_rdma_unicast_packets", "RoCE packets the host received"),
    ("tx_vport_rdma_unicast_packets", "RoCE packets the host sent"),
];

/// mlx5 RDMA counters the capture cannot judge, with why.
pub const NOT_JUDGED: &[(&str, &str)] = &[
    (
        "rp_cnp_ignored",
        "whether the NIC's rate reacted to a CNP does not show on the wire",
    ),
    ("rnr_nak_retry_err", "RNR retries exhausted: a NIC-internal state"),
    ("out_of_buffer", "receive WQEs missing: a NIC-internal state"),
    (
        "out_of_sequence_dropped",
        "not distinguishable from out_of_sequence on the wire",
    ),
    ("resp_local_length_error", "completion errors do not show on the wire"),
    ("resp_cqe_error", "completion errors do not show on the wire"),
    ("req_cqe_error", "completion errors do not show on the wire"),
    ("resp_cqe_flush_error", "completion errors do not show on the wire"),
    ("req_cqe_flush_error", "completion errors do not show on the wire"),
    (
        "req_remote_invalid_request",
        "counted by the NIC's requester per completion, not per packet",
    ),
    (
        "req_remote_access_errors",
        "counted by the NIC's requester per completion, not per packet",
    ),
    (
        "resp_remote_access_errors",
        "counted by the NIC's responder per completion, not per packet",
    ),
    (
        "rx_write_requests",
        "counted per operation by the NIC, which the capture cannot match per packet",
    ),
    (
        "rx_read_requests",
        "counted per operation by the NIC, which the capture cannot match per packet",
    ),
    (
        "rx_atomic_requests",
        "counted per operation by the NIC, which the capture cannot match per packet",
    ),
    ("rx_dct_connect", "DC transport: not modelled"),
    ("roce_adp_retrans", "adaptive retransmission is NIC-internal"),
    ("roce_adp_retrans_to", "adaptive retransmission is NIC-internal"),
    ("roce_slow_restart", "slow restart is NIC-internal"),
    ("roce_slow_restart_cnps", "slow restart is NIC-internal"),
    ("roce_slow_restart_trans", "slow restart is NIC-internal"),
    ("np_cnp_sent_ignored", "not on the wire"),
    ("rx_icrc_encapsulated", "not on the wire"),
];

/// The host-side interfaces of a flow table: interface → the host its flows say the tap is at
/// (the requester's NIC or the responder's, by each connection's flows). An interface with a
/// fabric flow, or whose flows name two hosts, is none.
fn host_taps(table: &[FlowRow]) -> BTreeMap<u32, IpAddr> {
    let mut votes: BTreeMap<u32, Option<HashSet<IpAddr>>> = BTreeMap::new();
    for r in table {
        let h = &r.head;
        let e = votes.entry(h.interface).or_insert_with(|| Some(HashSet::new()));
        // The tap is named relative to the flow's connection: at the requester's NIC or the
        // responder's.
        let (requester, responder) = match h.role {
            Role::Requests => (&h.src, &h.dst),
            Role::Responses => (&h.dst, &h.src),
            Role::Unknown => continue,
        };
        let ip = match h.tap {
            Tap::Sender => requester.parse::<IpAddr>().ok(),
            Tap::Receiver => responder.parse::<IpAddr>().ok(),
            Tap::Fabric => {
                *e = None;
                continue;
            }
            Tap::Unknown => None,
        };
        if let (Some(set), Some(ip)) = (e.as_mut(), ip) {
            set.insert(ip);
        }
    }
    votes
        .into_iter()
        .filter_map(|(i, s)| {
            let s = s?;
            (s.len() == 1).then(|| (i, *s.iter().next().expect("one")))
        })
        .collect()
}

/// The host and interface the counters are of: as given, or the only host-side tap.
pub fn resolve(table: &[FlowRow], input: &CountersInput) -> Result<(IpAddr, u32), String> {
    let taps = host_taps(table);
    let list = || {
        if taps.is_empty() {
            "the capture shows no host-side tap (every interface is a fabric tap, or its place is not known)"
                .to_string()
        } else {
            let l: Vec<String> = taps.iter().map(|(i, h)| format!("interface {i} ({h})")).collect();
            format!("host-side taps: {}", l.join(", "))
        }
    };
    match (input.interface, input.host) {
        (Some(i), host) => {
            let Some(&h) = taps.get(&i) else {
                return Err(format!("--counters-interface {i} is not a host-side tap; {}", list()));
            };
            if let Some(want) = host.filter(|&w| w != h) {
                return Err(format!("--counters-host {want}: interface {i} is the tap of {h}"));
            }
            Ok((h, i))
        }
        (None, Some(want)) => {
            let at: Vec<u32> = taps.iter().filter(|(_, &h)| h == want).map(|(&i, _)| i).collect();
            match at[..] {
                [i] => Ok((want, i)),
                [] => Err(format!(
                    "--counters-host {want}: no host-side tap of that host; {}",
                    list()
                )),
                _ => Err(format!(
                    "--counters-host {want}: tapped on interfaces {at:?}; say which with --counters-interface"
                )),
            }
        }
        (None, None) => match taps.len() {
            1 => {
                let (&i, &h) = taps.iter().next().expect("one");
                Ok((h, i))
            }
            _ => Err(format!(
                "which host are the counters of? {}; say which with --counters-host IP or --counters-interface N",
                list()
            )),
        },
    }
}

/// A connection at the counted tap, as the host sees it.
struct Qp {
    /// The host is its responder (else its requester).
    responder: bool,
    transport: Transport,
    mtu: u32,
    /// Responder: the next PSN expected (in order), or the floor (any order).
    expected: Option<u32>,
    seen: HashSet<u32>,
    /// Requester: one past the previous request packet, one past the highest sent.
    prev_next: Option<u32>,
    snd_max: Option<u32>,
    /// A NAK or implied NAK arrived since the previous request packet.
    asked: bool,
    /// READs sent, oldest first: (first PSN, response packets), and the front one's responses
    /// received in order.
    reads: VecDeque<(u32, u32)>,
    front_done: u32,
    last_implied: Option<u32>,
    /// Where the requester last went back to (a resend began there, or an implied NAK sent it
    /// there), until a READ response arrives in order: it goes back for a missing READ response
    /// only if not already there (once per gap).
    retry_at: Option<u32>,
}

/// A READ request's DMA length (its RETH), for the frame `k` summarises (read here rather than
/// carried in every frame's summary, which crosses between the analyser's threads).
pub(crate) fn dma_len(k: &Pkt, d: &rocescope_codec::decoder::Decoded<'_, '_>) -> Option<u32> {
    match k.class {
        Class::Request { op: ReqOp::Read, .. } => d.frame.roce().and_then(|p| p.reth()).map(|r| r.dma_len()),
        _ => None,
    }
}

impl Qp {
    fn in_order(&self) -> bool {
        matches!(self.transport, Transport::Gbn | Transport::Rc)
    }
    /// The PSNs a request packet spans: a READ request's DMA length (`dma_len`, its RETH's) in
    /// responses, else one.
    fn span(&self, k: &Pkt, dma_len: Option<u32>) -> u32 {
        match (k.class, dma_len) {
            (Class::Request { op: ReqOp::Read, .. }, Some(len)) => len.div_ceil(self.mtu.max(1)).max(1),
            _ => 1,
        }
    }
    fn read_expected(&self) -> Option<u32> {
        self.reads.front().map(|&(f, _)| psn::add(f, self.front_done))
    }
}

/// What the counting pass keeps.
pub(crate) struct Counter {
    host: IpAddr,
    iface: u32,
    /// (src, dst, DestQP) of a requests flow → its QP; of a responses flow → the same QP.
    keys: HashMap<(IpAddr, IpAddr, u32), usize>,
    qps: Vec<Qp>,
    c: BTreeMap<&'static str, u64>,
    cnps_in: u64,
    /// A requester QP of the host is not Go-Back-N: its timer's resends are not told apart.
    non_gbn_requester: bool,
}

impl Counter {
    /// For `host` at `iface`: its connections from the flow table, with each requests flow's
    /// (first PSN, MTU).
    pub(crate) fn new(
        host: IpAddr,
        iface: u32,
        table: &[FlowRow],
        shape: impl Fn(&FlowRow) -> (Option<u32>, u32),
    ) -> Counter {
        let mut k = Counter {
            host,
            iface,
            keys: HashMap::new(),
            qps: Vec::new(),
            c: JUDGED.iter().map(|&(n, _)| (n, 0)).collect(),
            cnps_in: 0,
            non_gbn_requester: false,
        };
        let by_id: HashMap<&str, &FlowRow> = table.iter().map(|r| (r.head.id.as_str(), r)).collect();
        for r in table {
            let h = &r.head;
            if h.interface != iface || h.role != Role::Requests {
                continue;
            }
            let (Ok(src), Ok(dst)) = (h.src.parse::<IpAddr>(), h.dst.parse::<IpAddr>()) else {
                continue;
            };
            if src != host && dst != host {
                continue;
            }
            let responder = dst == host;
            let (first, mtu) = shape(r);
            let i = k.qps.len();
            k.qps.push(Qp {
                responder,
                transport: h.transport,
                mtu,
                expected: first,
                seen: HashSet::new(),
                prev_next: None,
                snd_max: None,
                asked: false,
                reads: VecDeque::new(),
                front_done: 0,
                last_implied: None,
                retry_at: None,
            });
            if !responder && !matches!(h.transport, Transport::Gbn | Transport::Rc) {
                k.non_gbn_requester = true;
            }
            k.keys.insert((src, dst, h.destqp), i);
            if let Some(peer) = h.peer.as_deref().and_then(|p| by_id.get(p)) {
                k.keys.insert((dst, src, peer.head.destqp), i);
            }
        }
        k
    }

    fn bump(&mut self, name: &'static str) {
        *self.c.get_mut(name).expect("a judged counter") += 1;
    }

    /// One frame of the capture; `dma_len`: a READ request's DMA length ([`dma_len`]).
    pub(crate) fn frame(&mut self, k: &Pkt, dma_len: Option<u32>) {
        if k.iface != self.iface {
            return;
        }
        let (out, inn) = (k.src == self.host, k.dst == self.host);
        if out == inn {
            return;
        }
        self.bump(if out {
            "tx_vport_rdma_unicast_packets"
        } else {
            "rx_vport_rdma_unicast_packets"
        });
        if inn && k.ce {
            self.bump("np_ecn_marked_roce_packets");
        }
        if k.class == Class::Cnp {
            if out {
                self.bump("np_cnp_sent");
            } else {
                self.cnps_in += 1;
            }
            return;
        }
        let Some(&qi) = self.keys.get(&(k.src, k.dst, k.destqp)) else {
            return;
        };
        let q = &mut self.qps[qi];
        let request = matches!(k.class, Class::Request { .. });
        let mut found: Vec<&'static str> = Vec::new();
        if q.responder && inn && request {
            let span = q.span(k, dma_len);
            let p = k.psn;
            let e = *q.expected.get_or_insert(p);
            if q.in_order() {
                if p == e {
                    q.expected = Some(psn::add(e, span));
                } else if psn::lt(p, e) {
                    found.push("duplicate_request");
                } else {
                    found.push("out_of_sequence");
                }
            } else if psn::lt(p, e) || !q.seen.insert(p) {
                found.push("duplicate_request");
            } else {
                if p != e {
                    found.push("out_of_sequence");
                }
                let mut f = e;
                while q.seen.remove(&f) {
                    f = psn::add(f, 1);
                }
                q.expected = Some(f);
            }
        } else if !q.responder && out && request {
            let (p, span) = (k.psn, q.span(k, dma_len));
            let next = psn::add(p, span);
            let new = q.snd_max.is_none_or(|m| !psn::lt(p, m));
            // Going back (an acknowledgement that passes the next PSN moves it forward: no
            // resend begins there).
            let restart = q.prev_next.is_some_and(|pn| psn::lt(p, pn)) && !new;
            if restart && !q.asked && q.in_order() {
                found.push("local_ack_timeout_err");
            }
            if restart {
                q.retry_at = Some(p);
            }
            if matches!(k.class, Class::Request { op: ReqOp::Read, .. }) && new {
                q.reads.push_back((p, span));
            }
            q.asked = false;
            q.prev_next = Some(next);
            if q.snd_max.is_none_or(|m| psn::lt(m, next)) {
                q.snd_max = Some(next);
            }
        } else if !q.responder && inn {
            let mut implied = None;
            match k.class {
                Class::Nak { code: 0 } | Class::Sack { .. } => {
                    found.push("packet_seq_err");
                    q.asked = true;
                }
                Class::Ack => {
                    if let Some(e) = q.read_expected().filter(|&e| !psn::lt(k.psn, e)) {
                        implied = Some(e);
                    }
                }
                Class::ReadResponse { .. } => {
                    if let Some(e) = q.read_expected() {
                        if k.psn == e {
                            q.retry_at = None;
                            q.front_done += 1;
                            if q.reads.front().is_some_and(|&(_, n)| q.front_done >= n) {
                                q.reads.pop_front();
                                q.front_done = 0;
                            }
                        } else if psn::lt(e, k.psn) {
                            implied = Some(e);
                        }
                    }
                }
                _ => {}
            }
            // Counted once per missing response; the requester re-issues the READ from there
            // unless it already went back there.
            if let Some(e) = implied {
                if q.retry_at != Some(e) {
                    q.asked = true;
                    q.retry_at = Some(e);
                }
                if q.last_implied != Some(e) {
                    q.last_implied = Some(e);
                    found.push("implied_nak_seq_err");
                }
            }
        }
        for n in found {
            self.bump(n);
        }
    }

    /// The rows: every judged or known counter the snapshots list, in name order.
    pub(crate) fn reconcile(&self, input: &CountersInput) -> Vec<CounterRow> {
        let names: std::collections::BTreeSet<&String> = input.before.keys().chain(input.after.keys()).collect();
        let delta_of = |n: &str| -> Option<u64> {
            let (b, a) = (input.before.get(n)?, input.after.get(n)?);
            a.checked_sub(*b)
        };
        let mut rows = Vec::new();
        for name in names {
            let judged = JUDGED.iter().find(|(n, _)| n == name);
            let known = NOT_JUDGED.iter().find(|(n, _)| n == name);
            if judged.is_none() && known.is_none() {
                continue; // ethtool -S prints many other counters
            }
            let (before, after) = (input.before.get(name).copied(), input.after.get(name).copied());
            let delta = delta_of(name);
            let mut row = CounterRow {
                name: name.clone(),
                before,
                after,
                delta,
                capture: None,
                verdict: Verdict::CannotJudge,
                why: String::new(),
            };
            if let Some(&(_, why)) = known {
                row.why = why.to_string();
            } else if before.is_none() || after.is_none() {
                row.why = format!(
                    "only in the {} snapshot",
                    if before.is_some() { "BEFORE" } else { "AFTER" }
                );
            } else if delta.is_none() {
                row.why = "the counter went back between the snapshots (reset?)".into();
            } else if name == "local_ack_timeout_err" && self.non_gbn_requester {
                row.why = "a requester QP at this host is not Go-Back-N: the capture tells its timer's resends from the others only for Go-Back-N".into();
            } else {
                let &(n, why) = judged.expect("judged");
                let shown = if n == "rp_cnp_handled" {
                    self.cnps_in.saturating_sub(delta_of("rp_cnp_ignored").unwrap_or(0))
                } else {
                    self.c[n]
                };
                row.capture = Some(shown);
                row.verdict = if delta == Some(shown) {
                    Verdict::Agree
                } else {
                    Verdict::Disagree
                };
                row.why = why.to_string();
            }
            rows.push(row);
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethtool_s_output_with_its_header_and_indentation() {
        let text = "NIC statistics:\n     rx_packets: 10\n\n\trp_cnp_handled: 3\nout_of_sequence:7\n  tx_vport_rdma_unicast_packets: 18446744073709551615\n";
        let s = parse_ethtool(text).expect("parses");
        assert_eq!(s.len(), 4);
        assert_eq!(s["rx_packets"], 10);
        assert_eq!(s["rp_cnp_handled"], 3);
        assert_eq!(s["out_of_sequence"], 7);
        assert_eq!(s["tx_vport_rdma_unicast_packets"], u64::MAX);
        assert_eq!(parse_ethtool("").expect("empty"), Snapshot::new());
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let e = |t: &str| parse_ethtool(t).expect_err("rejected");
        assert_eq!(
            e("NIC statistics:\n     rx_packets: 10\ngarbage here\n"),
            (3, "not a `name: value` line: \"garbage here\"".to_string())
        );
        assert_eq!(e("  rx_packets: ten\n").0, 1);
        assert!(e("  rx_packets: -1\n").1.contains("not a count"));
        assert!(e("  a b: 1\n").1.contains("not a counter name"));
        assert_eq!(e("x: 1\ny: 2\nx: 3\n"), (3, "x appears twice".to_string()));
        assert_eq!(e(": 5\n").0, 1);
    }

    #[test]
    fn reconciling_compares_deltas_and_lists_what_it_cannot_judge() {
        let mut k = Counter {
            host: "10.0.0.1".parse().unwrap(),
            iface: 0,
            keys: HashMap::new(),
            qps: Vec::new(),
            c: JUDGED.iter().map(|&(n, _)| (n, 0)).collect(),
            cnps_in: 5,
            non_gbn_requester: false,
        };
        *k.c.get_mut("np_cnp_sent").unwrap() = 4;
        let snap = |v: &[(&str, u64)]| v.iter().map(|&(n, x)| (n.to_string(), x)).collect::<Snapshot>();
        let input = CountersInput {
            before: snap(&[
                ("np_cnp_sent", 10),
                ("rp_cnp_handled", 0),
                ("rp_cnp_ignored", 1),
                ("out_of_sequence", 9),
                ("rx_packets", 1),
                ("packet_seq_err", 2),
            ]),
            after: snap(&[
                ("np_cnp_sent", 14),
                ("rp_cnp_handled", 3),
                ("rp_cnp_ignored", 3),
                ("out_of_sequence", 8),
                ("rx_packets", 2),
            ]),
            ..CountersInput::default()
        };
        let rows = k.reconcile(&input);
        let v = |n: &str| {
            rows.iter()
                .find(|r| r.name == n)
                .map(|r| (r.verdict, r.capture, r.delta))
        };
        assert_eq!(v("np_cnp_sent"), Some((Verdict::Agree, Some(4), Some(4))));
        // 5 CNPs in, 2 of them ignored by the snapshots' own count: 3 handled.
        assert_eq!(v("rp_cnp_handled"), Some((Verdict::Agree, Some(3), Some(3))));
        assert_eq!(v("rp_cnp_ignored"), Some((Verdict::CannotJudge, None, Some(2))));
        assert_eq!(
            v("out_of_sequence"),
            Some((Verdict::CannotJudge, None, None)),
            "went back"
        );
        assert_eq!(
            v("packet_seq_err"),
            Some((Verdict::CannotJudge, None, None)),
            "only before"
        );
        assert_eq!(v("rx_packets"), None, "not an RDMA counter: ignored");
        assert_eq!(rows.len(), 5);
        k.non_gbn_requester = true;
        let input = CountersInput {
            before: snap(&[("local_ack_timeout_err", 0)]),
            after: snap(&[("local_ack_timeout_err", 1)]),
            ..CountersInput::default()
        };
        assert_eq!(k.reconcile(&input)[0].verdict, Verdict::CannotJudge);
    }
}
