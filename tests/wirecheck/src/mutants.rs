//! Faulty stacks for mutation tests (issue 9, acceptance 4): thin wrappers around a reference
//! requester that inject one fault each without touching the stacks' code, so the wire checks
//! can be shown to catch what the stacks' own labels would hide.
//!
//! - [`ResendAcked`]: after each IRN SACK NAK it resends, unlabelled (`TxInfo::retx = None`),
//!   the two packets just below the NAK's cumulative PSN, which the receiver has acknowledged.
//! - [`GoBackShort`]: a Go-Back-N requester that, on a NAK (PSN sequence error) with PSN `e`,
//!   goes back to `e + 1` instead of `e` (the resend of `e` itself is suppressed; the local ACK
//!   timeout later recovers it).
//!
//! A wrapper sees only the `Requester`/`Endpoint` calls and the actions the inner stack pushes.
//! Request packets leave through `Requester::pull` (the NIC transmit model): the injected
//! resends of [`ResendAcked`] go out as immediate frames from `on_frame`, and
//! [`GoBackShort`] drops the pulled resend of the NAKed PSN and pulls the next packet instead.

use std::collections::BTreeMap;

use rocescope_codec::ib::{psn, Syndrome};
use rocescope_codec::Frame;
use rocescope_stacks::{Action, Endpoint, Message, Nanos, Requester, RetxReason, TxInfo};

/// The (PSN, NAK?, SACK?) of an RC Acknowledge.
fn ack_of(frame: &Frame<'_>) -> Option<(u32, bool, bool)> {
    let p = frame.roce()?;
    if p.opcode().0 != 0x11 {
        return None;
    }
    let nak = matches!(p.aeth()?.syndrome(), Syndrome::Nak { code: 0 });
    Some((p.bth().psn(), nak, p.irn_sack().is_some()))
}

/// Resends acknowledged packets, unlabelled, after every SACK NAK.
pub struct ResendAcked {
    pub inner: Box<dyn Requester>,
    /// The last copy sent of each recent data PSN.
    sent: BTreeMap<u32, (Vec<u8>, Option<u64>)>,
    /// Frames injected so far.
    pub injected: u64,
}

impl ResendAcked {
    pub fn new(inner: Box<dyn Requester>) -> ResendAcked {
        ResendAcked { inner, sent: BTreeMap::new(), injected: 0 }
    }
    fn note(&mut self, out: &[Action]) {
        for a in out {
            if let Action::Transmit { frame, info } = a {
                if info.msg.is_some() {
                    self.sent.insert(info.psn, (frame.clone(), info.msg));
                }
            }
        }
        while self.sent.len() > 4096 {
            self.sent.pop_first();
        }
    }
}

impl Endpoint for ResendAcked {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let from = out.len();
        self.inner.on_frame(now, frame, out);
        self.note(&out[from..]);
        if let Some((e, true, true)) = ack_of(frame) {
            for k in [2, 1] {
                let p = psn::add(e, psn::MASK + 1 - k);
                if let Some((bytes, msg)) = self.sent.get(&p) {
                    out.push(Action::Transmit { frame: bytes.clone(), info: TxInfo { psn: p, msg: *msg, retx: None } });
                    self.injected += 1;
                }
            }
        }
    }
    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        let from = out.len();
        self.inner.on_timer(now, token, out);
        self.note(&out[from..]);
    }
}

impl Requester for ResendAcked {
    fn post(&mut self, now: Nanos, msg: Message, out: &mut Vec<Action>) {
        let from = out.len();
        self.inner.post(now, msg, out);
        self.note(&out[from..]);
    }
    fn idle(&self) -> bool {
        self.inner.idle()
    }
    fn ready(&self) -> bool {
        self.inner.ready()
    }
    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        let from = out.len();
        let pulled = self.inner.pull(now, out);
        self.note(&out[from..]);
        pulled
    }
}

/// Goes back one packet too few on a NAK.
pub struct GoBackShort {
    pub inner: Box<dyn Requester>,
    /// NAK PSNs whose resend was suppressed.
    pub suppressed: Vec<u32>,
    /// The PSN of the last NAK, whose go-back resend is still to be suppressed.
    skip: Option<u32>,
}

impl GoBackShort {
    pub fn new(inner: Box<dyn Requester>) -> GoBackShort {
        GoBackShort { inner, suppressed: Vec::new(), skip: None }
    }
}

impl Endpoint for GoBackShort {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        self.inner.on_frame(now, frame, out);
        if let Some((e, true, false)) = ack_of(frame) {
            self.skip = Some(e);
        }
    }
    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        self.inner.on_timer(now, token, out)
    }
}

impl Requester for GoBackShort {
    fn post(&mut self, now: Nanos, msg: Message, out: &mut Vec<Action>) {
        self.inner.post(now, msg, out)
    }
    fn idle(&self) -> bool {
        self.inner.idle()
    }
    fn ready(&self) -> bool {
        self.inner.ready()
    }
    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        loop {
            let from = out.len();
            if !self.inner.pull(now, out) {
                return false;
            }
            let Some(e) = self.skip else { return true };
            let hit = out[from..].iter().position(|a| {
                matches!(a, Action::Transmit { info: TxInfo { psn, retx: Some(RetxReason::GoBack), .. }, .. } if *psn == e)
            });
            let Some(i) = hit else { return true };
            // The go-back resend of the NAKed PSN: drop it and send the next packet instead.
            out.remove(from + i);
            self.skip = None;
            self.suppressed.push(e);
            if !self.inner.ready() {
                return false;
            }
        }
    }
}
