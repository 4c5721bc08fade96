//! The two-node harness of the stacks (`rocescope_stacks::harness`) seen as a capture: a tap at
//! each end, recording each frame when it leaves (its bytes as sent) and when it arrives (as
//! delivered: the header-only form of a trimmed frame), so the wire checks ([`crate::judge`],
//! [`crate::payload`]) judge the stacks' own tests and stress sweep from the frames too, not
//! from `TxInfo` or `Delivered { intact }`.
//!
//! The harness has no NIC queue: a frame leaves when its stack hands it over. Frames at the
//! same instant are ordered arrivals first (an arrival at `t` can cause a departure at `t`,
//! never the other way round), then by transmission. With `WIRECHECK_DUMP` set, [`check`]
//! prints the frames before its first finding.

use rocescope_stacks::harness::{Harness, Side};
use rocescope_stacks::Message;

use super::judge::{sender_view, SenderView};
use super::packet::decode;
use super::payload::{rebuild, Delivery};
use super::wire::{TapSpec, Wire};

/// Interface of the requester's tap.
pub const REQUESTER: u32 = 0;
/// Interface of the responder's tap.
pub const RESPONDER: u32 = 1;

/// The harness's traffic as a two-tap capture.
pub fn wire(h: &Harness) -> Wire {
    let iface = |s: Side| {
        if s == Side::Requester {
            REQUESTER
        } else {
            RESPONDER
        }
    };
    // (time, 0 = arrival / 1 = departure, tx index, interface, bytes)
    let mut ev: Vec<(u64, u8, usize, u32, &[u8])> = Vec::new();
    for (i, t) in h.txs().iter().enumerate() {
        ev.push((t.at, 1, i, iface(t.from), &t.frame));
        if let Some(a) = t.arrived {
            ev.push((a, 0, i, iface(t.from.other()), t.trimmed.as_deref().unwrap_or(&t.frame)));
        }
    }
    ev.sort_by_key(|e| (e.0, e.1, e.2));
    let (profile, params) = (h.profile, h.cfg.params);
    let pkts = ev
        .iter()
        .enumerate()
        .filter_map(|(n, &(at, _, _, ifc, bytes))| decode(n as u64 + 1, ifc, at, bytes, profile, params))
        .collect();
    let taps = vec![
        TapSpec { interface: REQUESTER, name: "requester".into(), host: Some(h.cfg.requester.ip) },
        TapSpec { interface: RESPONDER, name: "responder".into(), host: Some(h.cfg.responder.ip) },
    ];
    Wire::new(pkts, taps, profile)
}

/// The wire checks over a finished harness run: the requester's view and the rebuilt requests.
pub fn judge(h: &Harness) -> (Wire, Option<SenderView>, Option<Delivery>) {
    let w = wire(h);
    let c = w.conns.first().cloned();
    let s = c.as_ref().and_then(|c| sender_view(&w, c, h.cfg.mtu));
    let d = c.as_ref().and_then(|c| rebuild(&w, c, h.cfg.mtu));
    (w, s, d)
}

/// Every posted message rebuilt intact with its length, acknowledged on the wire, no
/// retransmission of an acknowledged PSN, and (Go-Back-N) every go-back where a rule puts it.
pub fn check(h: &Harness) -> Result<(), String> {
    let (w, s, d) = judge(h);
    if std::env::var_os("WIRECHECK_DUMP").is_some() {
        let first =
            s.as_ref().and_then(|s| s.resent_after_ack.first().map(|x| x.0).or(s.bad_go_backs.first().map(|x| x.0)));
        if let Some(f) = first {
            for p in w.pkts.iter().filter(|p| p.number + 40 >= f && p.number <= f + 3) {
                eprintln!(
                    "{} t={} if={} {:?} psn={} op={:#x}",
                    p.number, p.ts_ns, p.interface, p.kind, p.psn, p.opcode
                );
            }
        }
    }
    let posted: &[Message] = h.posted();
    let (Some(s), Some(d)) = (s, d) else {
        return if posted.is_empty() { Ok(()) } else { Err("no request on the wire".into()) };
    };
    let mut errs = Vec::new();
    if let Err(e) = d.check_each(posted) {
        errs.push(format!("delivery: {e}"));
    }
    if s.completed != posted.len() as u64 {
        errs.push(format!("{} of {} messages acknowledged on the wire", s.completed, posted.len()));
    }
    if !s.resent_after_ack.is_empty() {
        errs.push(format!(
            "resent after acknowledgement (frame, PSN): {:?}",
            &s.resent_after_ack[..s.resent_after_ack.len().min(5)]
        ));
    }
    if h.kind == Some(rocescope_stacks::StackKind::Gbn) && !s.bad_go_backs.is_empty() {
        errs.push(format!("misplaced go-back bursts: {:?}", &s.bad_go_backs[..s.bad_go_backs.len().min(5)]));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("; "))
    }
}
