//! ERD's receiver (the responder): the bitmap of PSNs received, scanned every `T` into NACKs on
//! the info path, and the reordering module placing each datagram by its EETH and delivering a
//! message once it holds all its bytes (module docs of [`super`]; seed 004 §4.3, §4.5).

use std::collections::{BTreeSet, HashMap, VecDeque};

use rocescope_codec::ext::erd::{EethRepr, NackEntry, NackRepr, EETH_LEN};
use rocescope_codec::ib::psn;
use rocescope_codec::Frame;

use super::{info, packets, ErdConfig, TAIL_NACK};
use crate::common::{is_content, unwrap24};
use crate::{Action, ConnConfig, Endpoint, Nanos, TxInfo};

/// NACK entries per info-path segment (under a 1,500-byte MTU's TCP payload).
const ENTRIES_PER_SEGMENT: usize = 120;
/// NACK entries per scan at most (the rest wait for the next scan).
const ENTRIES_PER_SCAN: usize = 4096;

/// A message being reassembled.
#[derive(Debug, Default)]
struct InMsg {
    /// Its length, once known (posted, or from its Last packet).
    len: Option<u64>,
    bytes: u64,
    intact: bool,
}

/// A message the receiver expects (from the posted lengths): id, first PSN, packets, length.
#[derive(Clone, Copy, Debug)]
struct Expected {
    id: u64,
    first: u64,
    n: u32,
    len: u32,
}

#[derive(Clone, Copy, Debug)]
enum Job {
    Scan,
    Info,
}

/// ERD's receiver.
pub struct ErdReceiver {
    cfg: ConnConfig,
    erd: ErdConfig,
    /// Unwrapped PSNs: all below `floor` received; `got` those above it.
    floor: u64,
    got: BTreeSet<u64>,
    high: Option<u64>,
    /// The highest PSN received as of the previous scan.
    high_prev: Option<u64>,
    /// Scans so far, and the scan that last named each PSN still missing (a PSN is named
    /// again only two scans later: its resend may be on its way, one round trip ≤ T).
    scans: u64,
    named: std::collections::BTreeMap<u64, u64>,
    arrived: bool,
    /// Posted messages not yet delivered, in order, and where the walk of the lengths stands.
    expected: VecDeque<Expected>,
    next_id: u64,
    next_first: u64,
    posted_end: bool,
    /// Highest message id seen (unwrapping Msg_ID without posted lengths).
    id_high: u64,
    msgs: HashMap<u64, InMsg>,
    info: info::InfoSender,
    scanning: bool,
    info_armed: bool,
    timers: HashMap<u64, Job>,
    next_token: u64,
}

impl ErdReceiver {
    pub fn new(cfg: &ConnConfig, erd: &ErdConfig) -> ErdReceiver {
        let start = (cfg.start_psn & psn::MASK) as u64;
        ErdReceiver {
            cfg: cfg.clone(),
            erd: erd.clone(),
            floor: start,
            got: BTreeSet::new(),
            high: None,
            high_prev: None,
            scans: 0,
            named: std::collections::BTreeMap::new(),
            arrived: false,
            expected: VecDeque::new(),
            next_id: 0,
            next_first: start,
            posted_end: erd.lengths.is_none(),
            id_high: 0,
            msgs: HashMap::new(),
            info: info::InfoSender::default(),
            scanning: false,
            info_armed: false,
            timers: HashMap::new(),
            next_token: 0,
        }
    }

    fn timer(&mut self, at: Nanos, job: Job, out: &mut Vec<Action>) {
        let token = self.next_token;
        self.next_token += 1;
        self.timers.insert(token, job);
        out.push(Action::Timer { at, token });
    }

    /// Walks the posted lengths until the expected messages reach PSN `p` (or end).
    fn expect_through(&mut self, p: u64) {
        let Some(lengths) = self.erd.lengths.clone() else { return };
        let mut steps = 0;
        while !self.posted_end && self.next_first <= p && steps < 1 << 20 {
            match lengths.of(self.next_id) {
                Some(len) => {
                    let n = packets(len, self.cfg.mtu);
                    self.expected.push_back(Expected { id: self.next_id, first: self.next_first, n, len });
                    self.next_id += 1;
                    self.next_first += n as u64;
                }
                None => self.posted_end = true,
            }
            steps += 1;
        }
    }

    /// The posted message holding PSN `p`.
    fn expected_at(&mut self, p: u64) -> Option<Expected> {
        self.expect_through(p);
        let i = self.expected.partition_point(|e| e.first + e.n as u64 <= p);
        self.expected.get(i).copied().filter(|e| e.first <= p)
    }

    /// The message id a packet's Msg_ID names.
    fn message_id(&mut self, p: u64, msg_id: u16) -> u64 {
        if let Some(e) = self.expected_at(p) {
            return e.id;
        }
        // Without posted lengths: the id ≡ Msg_ID (mod 2^16) nearest the highest seen.
        let base = self.id_high;
        let d = (msg_id as u64).wrapping_sub(base) as u16 as i16 as i64;
        (base as i64 + d).max(0) as u64
    }

    fn on_data(&mut self, now: Nanos, p: &rocescope_codec::ib::RocePacket<'_>, out: &mut Vec<Action>) {
        let body = p.payload();
        if body.len() != p.payload_len() {
            return;
        }
        let Some(e) = EethRepr::parse(body) else { return };
        let data = &body[EETH_LEN..];
        if e.s_len as usize != data.len() {
            return;
        }
        let v = unwrap24(self.high.unwrap_or(self.floor), p.bth().psn());
        if v < self.floor || !self.got.insert(v) {
            return; // a copy already received
        }
        while self.got.remove(&self.floor) {
            self.floor += 1;
        }
        self.high = Some(self.high.map_or(v, |h| h.max(v)));
        self.arrived = true;
        if !self.scanning {
            self.scanning = true;
            self.timer(now + self.erd.scan_ns, Job::Scan, out);
        }
        // The reordering module (§4.5): place it by S_Offset.
        let id = self.message_id(v, e.msg_id);
        self.id_high = self.id_high.max(id);
        let posted = self.expected_at(v).filter(|x| x.id == id).map(|x| x.len as u64);
        let m = self.msgs.entry(id).or_insert_with(|| InMsg { intact: true, ..Default::default() });
        m.len = m.len.or(posted).or(e.msg_len());
        m.intact &= is_content(id, e.s_offset as u64, data);
        m.bytes += data.len() as u64;
        let whole = m.len.is_some_and(|l| m.bytes >= l) && (m.len != Some(0) || e.last);
        if whole {
            let m = self.msgs.remove(&id).expect("being reassembled");
            let len = m.len.unwrap_or(0);
            out.push(Action::Delivered { msg: id, len: len as u32, intact: m.intact && m.bytes == len });
            // Delivered posted messages leave the expected list.
            while self.expected.front().is_some_and(|x| x.first + (x.n as u64) <= self.floor) {
                self.expected.pop_front();
            }
        }
    }

    /// The bitmap scan: the PSNs to name (module docs of [`super`]).
    fn missing(&mut self) -> Vec<u64> {
        let mut lost = Vec::new();
        // Below a PSN that had arrived by the previous scan.
        if let Some(hp) = self.high_prev {
            let mut p = self.floor;
            while p < hp && lost.len() < ENTRIES_PER_SCAN {
                if !self.got.contains(&p) {
                    lost.push(p);
                }
                p += 1;
            }
        }
        // A stall: nothing arrived for a whole period; the posted PSNs after the highest.
        if !self.arrived && self.erd.lengths.is_some() {
            let from = self.high.map_or(self.floor, |h| h + 1).max(self.floor);
            self.expect_through(from + TAIL_NACK as u64);
            let end = self.next_first;
            let mut p = from;
            while p < end && p < from + TAIL_NACK as u64 && lost.len() < ENTRIES_PER_SCAN {
                if !self.got.contains(&p) {
                    lost.push(p);
                }
                p += 1;
            }
        }
        lost
    }

    /// Whether anything is still awaited (the scan keeps running).
    fn awaiting(&mut self) -> bool {
        if !self.got.is_empty() {
            return true;
        }
        if self.erd.lengths.is_none() {
            return false;
        }
        self.expect_through(self.floor);
        self.floor < self.next_first || !self.posted_end
    }

    fn scan(&mut self, now: Nanos, out: &mut Vec<Action>) {
        self.scans += 1;
        let scan = self.scans;
        self.named = self.named.split_off(&self.floor);
        let mut lost = self.missing();
        lost.retain(|p| self.named.get(p).is_none_or(|&at| at + 2 <= scan));
        for &p in &lost {
            self.named.insert(p, scan);
        }
        self.high_prev = self.high;
        self.arrived = false;
        if !lost.is_empty() {
            let entries: Vec<NackEntry> = lost
                .iter()
                .map(|&p| NackEntry {
                    src_qpn: self.cfg.requester.qpn,
                    dst_qpn: self.cfg.responder.qpn,
                    psn: (p & psn::MASK as u64) as u32,
                })
                .collect();
            for chunk in entries.chunks(ENTRIES_PER_SEGMENT) {
                let bytes = NackRepr::new(chunk).to_vec();
                let seq = self.info.push(bytes.clone());
                self.segment(seq, &bytes, out);
            }
            if !self.info_armed {
                self.info_armed = true;
                self.timer(info::deadline(now, self.erd.info_rto_ns), Job::Info, out);
            }
        }
        if self.awaiting() {
            self.timer(now + self.erd.scan_ns, Job::Scan, out);
        } else {
            self.scanning = false;
        }
    }

    fn segment(&mut self, seq: u32, bytes: &[u8], out: &mut Vec<Action>) {
        let (me, peer) = (self.cfg.responder, self.cfg.requester);
        let ports = (self.erd.info_port, self.cfg.params.erd_nack_port);
        let f = info::frame(me, peer, self.cfg.tos, ports, seq, 1, bytes);
        out.push(Action::Transmit { frame: f, info: TxInfo { psn: 0, msg: None, retx: None } });
    }
}

impl Endpoint for ErdReceiver {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        if let Some(t) = frame.tcp() {
            if t.src_port == self.cfg.params.erd_nack_port && t.dst_port == self.erd.info_port {
                self.info.on_ack(t.ack);
            }
            return;
        }
        let Some(p) = frame.roce() else { return };
        let mine = p.opcode().0 == 0x64
            && p.bth().dest_qp() == self.cfg.responder.qpn
            && p.deth().is_some_and(|d| d.src_qp() == self.cfg.requester.qpn);
        if mine {
            self.on_data(now, p, out);
        }
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        match self.timers.remove(&token) {
            Some(Job::Scan) => self.scan(now, out),
            Some(Job::Info) => {
                self.info_armed = false;
                if self.info.is_idle() {
                    return;
                }
                let again: Vec<(u32, Vec<u8>)> = self.info.unacked().map(|(s, b)| (s, b.to_vec())).collect();
                for (seq, b) in again {
                    self.segment(seq, &b, out);
                }
                self.info_armed = true;
                self.timer(info::deadline(now, self.erd.info_rto_ns), Job::Info, out);
            }
            None => {}
        }
    }
}
