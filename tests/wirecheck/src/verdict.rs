//! Every wire check over one run, and the numbers they counted.
//!
//! The invariants (issue 9, acceptance 2), each from the capture:
//! - the truth agrees with the capture ([`crate::truth_cmp::compare`]), its `spurious` labels
//!   too ([`crate::spurious`]);
//! - every message reached the receiver whole and intact ([`crate::payload`]; a READ's data,
//!   the requester, when it has a tap), and the sender's tap saw every message acknowledged
//!   ([`crate::judge`]);
//! - no retransmission left the sender after the PSN was acknowledged;
//! - (Go-Back-N) every go-back burst starts where a NAK, an ACK or the timeout rule puts it.
//!
//! A connection the truth reports failed is exempt from delivery and completion (the grid's
//! "or its connection is reported failed").
//!
//! Each check needs a tap at a given end ([`crate::wire::Coverage`]): a connection is judged at
//! the ends that are tapped and nowhere else (a leaf-spine's other connections, whose hosts the
//! sender and receiver taps do not watch); [`Verdict::coverage`] says which connection was
//! judged how, and [`Numbers`] counts them. A truth connection with a tapped end that sends
//! nothing on the wire is an error. What no tap shows is held to the simulator's own count
//! instead (the truth's `summary`, over every connection: with no connection failed, every
//! message posted was completed and delivered exactly once, whole and with the right bytes):
//! a weaker check (the simulator's receivers, not the frames), and the only one the untapped
//! connections get.

use rocescope_sim::truth::Truth;

use super::judge::{sender_view, SenderView};
use super::ledger;
use super::payload;
use super::run::Run;
use super::spurious;
use super::truth_cmp::{self, Counts};
use super::wire::{Coverage, Wire};

/// What the checks counted over a run (every connection whose ends are tapped).
#[derive(Clone, Debug, Default)]
pub struct Numbers {
    pub data_frames: u64,
    pub retx: u64,
    /// The retransmissions of connections with both ends tapped (those whose losses are
    /// counted: the dumbbell's all).
    pub retx_both: u64,
    /// Data-carrying frames lost (requests and READ responses).
    pub data_lost: u64,
    /// Every frame lost (ACKs, NAKs, header-only bounces too).
    pub lost: u64,
    pub resent_after_ack: u64,
    pub go_backs: u64,
    pub bad_go_backs: u64,
    pub messages_rebuilt: u64,
    pub completed_on_wire: u64,
    pub compared: Counts,
    /// Retransmissions whose `spurious` label was checked.
    pub labels_checked: u64,
    /// Connections of the truth, and how many of them had both ends, only the requester, only
    /// the responder, or neither end tapped.
    pub conns: u64,
    pub conns_both: u64,
    pub conns_requester: u64,
    pub conns_responder: u64,
    pub conns_neither: u64,
    /// Messages the judged requesters posted (connections whose requester is tapped).
    pub messages_judged: u64,
    /// `replay` over the capture (grid cells, [`crate::replayed`]): (tap, connection) pairs
    /// it judged, and its ambiguous findings.
    pub replay_connections: u64,
    pub replay_ambiguous: u64,
}

impl Numbers {
    /// One more truth connection, whose ends the taps cover as `cov`.
    pub fn count_connection(&mut self, cov: Coverage) {
        self.conns += 1;
        *match cov {
            Coverage::Both => &mut self.conns_both,
            Coverage::Requester => &mut self.conns_requester,
            Coverage::Responder => &mut self.conns_responder,
            Coverage::Neither => &mut self.conns_neither,
        } += 1;
    }

    /// Retransmissions per lost data packet (over the connections with both ends tapped).
    pub fn retx_per_loss(&self) -> f64 {
        self.retx_both as f64 / self.data_lost.max(1) as f64
    }
}

/// The outcome of [`judge`].
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    pub numbers: Numbers,
    /// Per connection the requester's view (only connections whose requester has a tap).
    pub senders: Vec<SenderView>,
    /// The truth disagrees with the capture.
    pub truth: Vec<String>,
    /// A message did not arrive whole and intact, or was not acknowledged at the sender's tap.
    pub delivery: Vec<String>,
    /// Retransmissions of PSNs already acknowledged when they left.
    pub resends: Vec<String>,
    /// (Go-Back-N) go-back bursts starting where no rule puts them.
    pub go_back: Vec<String>,
    /// Retransmissions the truth labels spurious (or not) against the copy the receiver's tap
    /// shows accepted.
    pub labels: Vec<String>,
    /// The same for READ responses (Go-Back-N).
    pub read_labels: Vec<String>,
    /// The truth's own summary says a message was not completed, or not delivered exactly once,
    /// with no connection failed.
    pub reported: Vec<String>,
    /// `replay` found departures from the reference stack in the unmodified capture.
    pub replay: Vec<String>,
    /// Anything else (the run hit its time limit, the same seed wrote other bytes, …).
    pub errors: Vec<String>,
    /// Per truth connection (its requests flow), which ends were tapped and so judged: not an
    /// invariant, a statement of what the run's verdict covers.
    pub coverage: Vec<(String, Coverage)>,
}

impl Verdict {
    /// Every broken invariant, one per line.
    pub fn all(&self) -> Vec<String> {
        [
            &self.truth,
            &self.labels,
            &self.read_labels,
            &self.delivery,
            &self.resends,
            &self.go_back,
            &self.reported,
            &self.replay,
            &self.errors,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
    }
    pub fn ok(&self) -> Result<(), String> {
        let all = self.all();
        if all.is_empty() {
            Ok(())
        } else {
            Err(all.join("\n"))
        }
    }
    /// Everything but the resends-after-acknowledgement check.
    pub fn ok_but_resends(&self) -> Result<(), String> {
        Self::join([
            &self.truth,
            &self.labels,
            &self.read_labels,
            &self.delivery,
            &self.go_back,
            &self.reported,
            &self.replay,
            &self.errors,
        ])
    }
    /// Everything but the READ responses' labels.
    pub fn ok_but_read_labels(&self) -> Result<(), String> {
        Self::join([
            &self.truth,
            &self.labels,
            &self.delivery,
            &self.resends,
            &self.go_back,
            &self.reported,
            &self.replay,
            &self.errors,
        ])
    }
    fn join<const N: usize>(parts: [&Vec<String>; N]) -> Result<(), String> {
        let all: Vec<String> = parts.into_iter().flatten().cloned().collect();
        if all.is_empty() {
            Ok(())
        } else {
            Err(all.join("\n"))
        }
    }
}

/// Every check of the module doc over `run` (the Go-Back-N rule for `gbn` runs).
pub fn judge(run: &Run) -> Verdict {
    judge_wire(&run.truth, &run.wire)
}

/// The same over a truth and a decoded capture.
pub fn judge_wire(t: &Truth, w: &Wire) -> Verdict {
    let mut v = Verdict::default();
    let gbn = matches!(t.config.stack, rocescope_sim::truth::Stack::Gbn | rocescope_sim::truth::Stack::Netrt);
    match truth_cmp::compare(t, w) {
        Ok(c) => v.numbers.compared = c,
        Err(e) => v.truth.push(format!("truth against capture:\n{e}")),
    }
    let (mislabelled, checked) = spurious::check(t, w);
    v.numbers.labels_checked = checked;
    for (reads, out) in [(false, &mut v.labels), (true, &mut v.read_labels)] {
        let bad: Vec<_> = mislabelled.iter().filter(|m| m.read_response == reads).collect();
        if !bad.is_empty() {
            out.push(format!(
                "{} of {checked} retransmissions{} labelled against the wire (first: {:?})",
                bad.len(),
                if reads { " (READ responses)" } else { "" },
                &bad[..bad.len().min(3)]
            ));
        }
    }
    let n_msgs = t.config.messages as u64;
    for tc in &t.connections {
        let (req, resp) = (tc.requester.ip, tc.responder.ip);
        let cov = w.coverage(req, resp);
        v.numbers.count_connection(cov);
        let flow = format!("{req}>{resp}/{}", tc.responder.qpn);
        let on_wire =
            w.conns.iter().any(|c| c.requester == req && c.responder == resp && c.responder_qpn == tc.responder.qpn);
        if cov != Coverage::Neither && !on_wire && n_msgs > 0 {
            v.errors.push(format!("{flow}: an end is tapped ({}), no request of it on the wire", cov.name()));
        }
        v.coverage.push((flow, cov));
    }
    check_summary(t, &mut v);
    for c in &w.conns {
        let failed = t
            .connections
            .iter()
            .find(|tc| {
                tc.requester.ip == c.requester && tc.responder.ip == c.responder && tc.responder.qpn == c.responder_qpn
            })
            .is_some_and(|tc| tc.failed.is_some());
        let both = w.coverage(c.requester, c.responder) == Coverage::Both;
        for s in [ledger::requests_sent(w, c), ledger::responses_sent(w, c)].into_iter().flatten() {
            v.numbers.data_frames += s.data_frames();
            v.numbers.retx += s.retx.len() as u64;
            if both {
                v.numbers.retx_both += s.retx.len() as u64;
            }
        }
        for l in [ledger::requests_lost(w, c), ledger::responses_lost(w, c)].into_iter().flatten() {
            v.numbers.data_lost += l.data_total();
            v.numbers.lost += l.total();
        }
        if let Some(s) = sender_view(w, c, t.config.mtu) {
            v.numbers.messages_judged += n_msgs;
            v.numbers.resent_after_ack += s.resent_after_ack.len() as u64;
            v.numbers.go_backs += s.go_backs.len() as u64;
            v.numbers.completed_on_wire += s.completed;
            if !s.resent_after_ack.is_empty() {
                v.resends.push(format!(
                    "{}: {} retransmissions of already-acknowledged PSNs (frame, PSN): {:?}",
                    c.requests_flow(),
                    s.resent_after_ack.len(),
                    &s.resent_after_ack[..s.resent_after_ack.len().min(5)]
                ));
            }
            if gbn {
                v.numbers.bad_go_backs += s.bad_go_backs.len() as u64;
                if !s.bad_go_backs.is_empty() {
                    v.go_back.push(format!(
                        "{}: {} go-back bursts start where no NAK/ACK/timeout puts them (frame, PSN, last NAK PSNs): {:?}",
                        c.requests_flow(),
                        s.bad_go_backs.len(),
                        &s.bad_go_backs[..s.bad_go_backs.len().min(5)]
                    ));
                }
            }
            if !failed && s.completed != n_msgs {
                v.delivery.push(format!(
                    "{}: the sender's tap saw {} of {n_msgs} messages acknowledged",
                    c.requests_flow(),
                    s.completed
                ));
            }
            v.senders.push(s);
        }
        if let Some(mut d) = payload::rebuild(w, c, t.config.mtu) {
            // READs: their data, at the requester's tap.
            if let Some(reads) = payload::rebuild_reads(w, c, t.config.mtu) {
                for m in d.messages.iter_mut().filter(|m| m.first_opcode == 0x0C) {
                    m.intact &= reads.get(&m.msg) == Some(&true);
                }
            }
            v.numbers.messages_rebuilt += d.messages.iter().filter(|m| m.intact).count() as u64;
            if !failed {
                if let Err(e) = d.check(n_msgs, t.config.message_size as u64) {
                    v.delivery.push(format!("{}: delivery: {e}", c.requests_flow()));
                }
            }
        }
    }
    if (w.conns.len() as u32) < t.config.senders.min(1) {
        v.errors.push("no connection on the wire".into());
    }
    v
}

/// The truth's own summary (module doc): as many messages posted as its connections post, and
/// with no connection failed, every one completed and delivered exactly once (`reported`).
pub fn check_summary(t: &Truth, v: &mut Verdict) {
    let sum = &t.summary;
    let posted = t.config.messages as u64 * t.connections.len() as u64;
    if sum.messages != posted {
        v.reported
            .push(format!("the truth's summary counts {} messages posted, its connections {posted}", sum.messages));
    }
    if sum.failed_connections == 0 && (sum.completed != sum.messages || sum.delivered_once != sum.messages) {
        v.reported.push(format!(
            "no connection failed, yet of {} messages the truth's summary completed {} and delivered {} exactly once",
            sum.messages, sum.completed, sum.delivered_once
        ));
    }
}
