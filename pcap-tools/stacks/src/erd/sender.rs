//! ERD's sender (the requester): datagrams with the EETH in posting order, the send buffer, the
//! RetryQ served first, NACKs from the info path, and completion after a quiet time (module
//! docs of [`super`]; seed 004 §4.4-4.5).

use std::collections::{HashMap, HashSet, VecDeque};

use rocescope_codec::build::RoceRepr;
use rocescope_codec::ext::erd::{parse_nack, EethRepr, EETH_LEN};
use rocescope_codec::ib::{psn, DethRepr};
use rocescope_codec::Frame;

use super::{info, packets, per_packet, ErdConfig, Q_KEY};
use crate::common::{payload, unwrap24, Wire};
use crate::{Action, ConnConfig, Endpoint, Message, Nanos, Op, Requester, RetxReason, TxInfo};

/// A posted message.
#[derive(Debug)]
struct OutMsg {
    msg: Message,
    /// Its first PSN (unwrapped) and packet count.
    first: u64,
    n: u32,
    /// No NACK named it and nothing of it left since; its completion waits for this.
    quiet_until: Nanos,
    /// Every packet left once.
    sent_all: bool,
    done: bool,
}

/// ERD's sender.
pub struct ErdSender {
    cfg: ConnConfig,
    erd: ErdConfig,
    wire: Wire,
    /// Unwrapped PSN of the next new packet.
    next_psn: u64,
    msgs: VecDeque<OutMsg>,
    /// First pass: the message index and packet next to send.
    cursor: (usize, u32),
    /// The RetryQ: PSNs named by NACKs, to resend first.
    retry: VecDeque<u64>,
    queued: HashSet<u64>,
    info: info::InfoReceiver,
    /// Completion timers: token → message id.
    timers: HashMap<u64, u64>,
    next_token: u64,
    failed: bool,
}

impl ErdSender {
    pub fn new(cfg: &ConnConfig, erd: &ErdConfig) -> ErdSender {
        ErdSender {
            cfg: cfg.clone(),
            erd: erd.clone(),
            wire: Wire::new(cfg, true),
            next_psn: (cfg.start_psn & psn::MASK) as u64,
            msgs: VecDeque::new(),
            cursor: (0, 0),
            retry: VecDeque::new(),
            queued: HashSet::new(),
            info: info::InfoReceiver::default(),
            timers: HashMap::new(),
            next_token: 0,
            failed: false,
        }
    }

    /// The live message holding unwrapped PSN `p`.
    fn holder(&self, p: u64) -> Option<usize> {
        let i = self.msgs.partition_point(|m| m.first + m.n as u64 <= p);
        self.msgs.get(i).filter(|m| m.first <= p && !m.done).map(|_| i)
    }

    /// Packet `k` of message index `i`.
    fn packet(&mut self, i: usize, k: u32, retx: Option<RetxReason>, out: &mut Vec<Action>) {
        let m = &self.msgs[i];
        let per = per_packet(self.cfg.mtu);
        let off = k as u64 * per as u64;
        let len = (m.msg.len as u64).saturating_sub(off).min(per as u64) as u32;
        let eeth = EethRepr {
            ty: (m.n > 1) as u8,
            last: k + 1 == m.n,
            msg_id: m.msg.id as u16,
            s_len: len as u16,
            s_offset: off as u32,
        };
        let mut body = Vec::with_capacity(EETH_LEN + len as usize);
        body.extend_from_slice(&eeth.to_bytes());
        body.extend_from_slice(&payload(m.msg.id, off, len));
        let p = ((m.first + k as u64) & psn::MASK as u64) as u32;
        let mut r = RoceRepr::new(0x64, self.cfg.responder.qpn, p).with_payload(&body);
        r.deth = Some(DethRepr { q_key: Q_KEY, src_qp: self.cfg.requester.qpn });
        let frame = self.wire.frame(self.cfg.tos, r);
        out.push(Action::Transmit { frame, info: TxInfo { psn: p, msg: Some(m.msg.id), retx } });
    }

    fn arm(&mut self, at: Nanos, msg: u64, out: &mut Vec<Action>) {
        let token = self.next_token;
        self.next_token += 1;
        self.timers.insert(token, msg);
        out.push(Action::Timer { at, token });
    }

    /// The NACK messages of an in-order info-path segment.
    fn on_nacks(&mut self, now: Nanos, mut b: &[u8]) {
        while !b.is_empty() {
            let Ok((entries, len)) = parse_nack(b) else { return };
            let mine: Vec<u32> = entries
                .filter(|e| e.src_qpn == self.cfg.requester.qpn && e.dst_qpn == self.cfg.responder.qpn)
                .map(|e| e.psn)
                .collect();
            for low in mine {
                let p = unwrap24(self.next_psn, low);
                // A PSN not sent yet, or of a message already completed: nothing to resend.
                if p >= self.next_psn {
                    continue;
                }
                let Some(i) = self.holder(p) else { continue };
                self.msgs[i].quiet_until = self.msgs[i].quiet_until.max(now + self.erd.quiet_ns);
                if self.queued.insert(p) {
                    self.retry.push_back(p);
                }
            }
            b = &b[len.min(b.len())..];
        }
    }
}

impl Endpoint for ErdSender {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(t) = frame.tcp() else { return };
        if t.dst_port != self.cfg.params.erd_nack_port || t.src_port != self.erd.info_port {
            return;
        }
        if let Some(bytes) = self.info.on_segment(t.seq, t.payload) {
            let bytes = bytes.to_vec();
            self.on_nacks(now, &bytes);
        }
        if !t.payload.is_empty() {
            // A cumulative ACK for every segment with bytes.
            let (me, peer) = (self.cfg.requester, self.cfg.responder);
            let ports = (self.cfg.params.erd_nack_port, self.erd.info_port);
            let f = info::frame(me, peer, self.cfg.tos, ports, 1, self.info.ack(), &[]);
            out.push(Action::Transmit { frame: f, info: TxInfo { psn: 0, msg: None, retx: None } });
        }
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        let Some(msg) = self.timers.remove(&token) else { return };
        let Some(i) = self.msgs.iter().position(|m| m.msg.id == msg) else { return };
        let m = &self.msgs[i];
        if m.done {
            return;
        }
        let pending = self.retry.iter().any(|&p| p >= m.first && p < m.first + m.n as u64);
        if now >= m.quiet_until && !pending {
            self.msgs[i].done = true;
            out.push(Action::Completed { msg });
            while self.msgs.front().is_some_and(|m| m.done) && self.cursor.0 > 0 {
                self.msgs.pop_front();
                self.cursor.0 -= 1;
            }
        } else {
            let at = self.msgs[i].quiet_until.max(now + self.erd.scan_ns);
            self.arm(at, msg, out);
        }
    }
}

impl Requester for ErdSender {
    fn post(&mut self, _now: Nanos, msg: Message, out: &mut Vec<Action>) {
        if self.failed {
            return;
        }
        if msg.op == Op::Read {
            return crate::common::fail(&mut self.failed, "ERD models no RDMA READ", out);
        }
        if self.erd.lengths.as_ref().is_some_and(|l| l.of(msg.id) != Some(msg.len)) {
            return crate::common::fail(&mut self.failed, "ERD message longer or shorter than its posted receive", out);
        }
        let n = packets(msg.len, self.cfg.mtu);
        let first = self.next_psn;
        self.next_psn += n as u64;
        self.msgs.push_back(OutMsg { msg, first, n, quiet_until: 0, sent_all: false, done: false });
    }

    fn idle(&self) -> bool {
        self.failed || self.msgs.iter().all(|m| m.done)
    }

    fn ready(&self) -> bool {
        !self.failed && (!self.retry.is_empty() || self.cursor.0 < self.msgs.len())
    }

    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        if self.failed {
            return false;
        }
        // The RetryQ first (§4.4: "processing with high priority").
        while let Some(p) = self.retry.pop_front() {
            self.queued.remove(&p);
            let Some(i) = self.holder(p) else { continue };
            let k = (p - self.msgs[i].first) as u32;
            self.packet(i, k, Some(RetxReason::Nack), out);
            self.msgs[i].quiet_until = self.msgs[i].quiet_until.max(now + self.erd.quiet_ns);
            return true;
        }
        let (i, k) = self.cursor;
        if i >= self.msgs.len() {
            return false;
        }
        self.packet(i, k, None, out);
        if k + 1 < self.msgs[i].n {
            self.cursor.1 += 1;
        } else {
            self.cursor = (i + 1, 0);
            let m = &mut self.msgs[i];
            m.sent_all = true;
            m.quiet_until = m.quiet_until.max(now + self.erd.quiet_ns);
            let (at, id) = (m.quiet_until, m.msg.id);
            self.arm(at, id, out);
        }
        true
    }
}
