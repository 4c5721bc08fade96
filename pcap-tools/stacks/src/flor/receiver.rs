//! Flor's receiver (the responder): UC reception of WQEs, placement and checking of chunks and
//! their resends, delivery, the address exchange's answers, and the coalesced software ACKs
//! (module docs of [`super`]; seed 002 §4.3, §5, Appendix A.1).

use std::collections::{HashMap, HashSet, VecDeque};

use rocescope_codec::build::RoceRepr;
use rocescope_codec::ext::flor::{self as wire, AckRepr, Addr, AddrRepr, SendRepr, SendType};
use rocescope_codec::ib::{psn, DethRepr};
use rocescope_codec::{Frame, Warnings};

use super::{FlorConfig, ACK_Q_KEY};
use crate::common::{is_content, Wire};
use crate::{message_of_first_word, remote_va, Action, ConnConfig, Endpoint, Nanos, TxInfo, R_KEY, VA_BASE};

/// Bytes a SEND WQE being received may reach (a larger one is not Flor's: dropped).
const MAX_SEND: usize = 16 << 20;
/// Message ids a SEND of under 8 bytes is matched against, from the lowest undelivered.
const SHORT_SCAN: u64 = 1 << 16;
/// Completed messages remembered (their late chunks and resends are acknowledged and
/// discarded).
const DONE_REMEMBERED: usize = 4096;

/// The WQE being received (UC: its packets in PSN order).
#[derive(Debug)]
enum Verb {
    /// A WRITE chunk: its RETH (address, length), bytes so far, all of them as expected.
    Write { va: u64, len: u32, got: u64, intact: bool },
    /// A SEND: its bytes so far.
    Send { buf: Vec<u8> },
}

/// A large message being received.
#[derive(Debug)]
struct InMsg {
    id: u64,
    len: u32,
    covered: Vec<bool>,
    count: usize,
    intact: bool,
}

/// What one completed WQE puts in the next ACK.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// SEND: its GN; WRITE: its immediate.
    send: bool,
    value: u64,
}

/// The ACK coalescer (§5): entries since the last ACK.
#[derive(Debug, Default)]
struct Coalescer {
    entries: Vec<Entry>,
    bytes: u64,
    /// Arrival of the last entry (T2).
    t2: Nanos,
    /// The timer armed for this batch.
    epoch: u64,
}

/// Flor's receiver.
pub struct FlorReceiver {
    cfg: ConnConfig,
    flor: FlorConfig,
    unit: u32,
    wire: Wire,
    /// UC: the next PSN expected on the data QP.
    epsn: u32,
    verb: Option<Verb>,
    /// The receiver's own PSNs: its data QP (ADDR_RESP) and its ACK QP.
    data_psn: u32,
    ack_psn: u32,
    /// The receiver's own SEND numbers (ADDR_RESP).
    next_gn: u64,
    next_send_rn: u32,
    /// Small messages delivered (recent ones, to discard resends), and the lowest message id
    /// not known delivered (where matching a SEND of under 8 bytes starts).
    small_done: HashSet<u64>,
    small_order: VecDeque<u64>,
    small_low: u64,
    /// Large messages by MID, and recent ones delivered.
    live: HashMap<u32, InMsg>,
    /// The live large messages by the 24 bits of their id a VA carries (a WRITE packet finds
    /// its message here: a scan of `live` per packet made a run of many posted messages
    /// quadratic).
    by_va: HashMap<u64, u64>,
    done: HashSet<u32>,
    done_order: VecDeque<u32>,
    /// The highest message id a MID named so far (MIDs are unwrapped near it).
    mid_high: u64,
    /// SEND reliable numbers of DATA messages delivered (recent ones).
    data_rns: HashSet<u32>,
    data_rn_order: VecDeque<u32>,
    /// Out-of-order test: the highest SEND RN, and the last WRITE chunk's (MID, end unit).
    max_send_rn: u32,
    last_write: Option<(u32, u32)>,
    acks: Coalescer,
    timers: HashMap<u64, u64>,
    next_token: u64,
    /// WQEs the UC receive discarded (behind the expected PSN) or aborted (a PSN gap): the
    /// paper's out-of-sequence counter (§6).
    pub oos: u64,
}

impl FlorReceiver {
    pub fn new(cfg: &ConnConfig, flor: &FlorConfig) -> FlorReceiver {
        FlorReceiver {
            cfg: cfg.clone(),
            flor: flor.clone(),
            unit: cfg.params.flor_unit_size.max(1),
            wire: Wire::new(cfg, false),
            epsn: cfg.start_psn & psn::MASK,
            verb: None,
            data_psn: cfg.start_psn & psn::MASK,
            ack_psn: 0,
            next_gn: 1,
            next_send_rn: 1,
            small_done: HashSet::new(),
            small_order: VecDeque::new(),
            small_low: 0,
            live: HashMap::new(),
            by_va: HashMap::new(),
            done: HashSet::new(),
            done_order: VecDeque::new(),
            mid_high: 0,
            data_rns: HashSet::new(),
            data_rn_order: VecDeque::new(),
            max_send_rn: 0,
            last_write: None,
            acks: Coalescer::default(),
            timers: HashMap::new(),
            next_token: 0,
            oos: 0,
        }
    }

    fn mid_mask(&self) -> u32 {
        super::mid_mask(&self.cfg)
    }

    /// The message MID `mid` names (MID = message id + 1, masked), unwrapped near the highest
    /// seen.
    fn mid_message(&self, mid: u32) -> u64 {
        let mask = self.mid_mask() as u64;
        let here = self.mid_high.wrapping_add(1) & mask;
        let ahead = (mid as u64).wrapping_sub(here) & mask;
        if ahead <= mask / 2 {
            self.mid_high + ahead
        } else {
            self.mid_high.saturating_sub(here.wrapping_sub(mid as u64) & mask)
        }
    }

    /// The large message MID `mid` names, opened on its ADDR_REQ (none if it was delivered).
    fn open_large(&mut self, mid: u32, msg_len: u64) -> Option<u64> {
        if let Some(m) = self.live.get(&mid) {
            return Some(m.id);
        }
        let len = u32::try_from(msg_len).ok().filter(|&l| l > self.flor.send_max)?;
        if self.done.contains(&mid) {
            return None;
        }
        let id = self.mid_message(mid);
        self.mid_high = self.mid_high.max(id);
        let units = len.div_ceil(self.unit).max(1) as usize;
        self.live.insert(mid, InMsg { id, len, covered: vec![false; units], count: 0, intact: true });
        self.by_va.insert(id & 0xff_ffff, id);
        Some(id)
    }

    /// Units `[off, off + ⌈len/unit⌉)` of MID `mid` arrived (`intact`: as expected); delivers
    /// the message when all have.
    fn cover(&mut self, mid: u32, off: u32, len: u32, intact: bool, out: &mut Vec<Action>) {
        let unit = self.unit;
        let Some(m) = self.live.get_mut(&mid) else { return };
        let end = (off as usize + len.div_ceil(unit).max(1) as usize).min(m.covered.len());
        m.intact &= intact;
        for u in off as usize..end {
            if !m.covered[u] {
                m.covered[u] = true;
                m.count += 1;
            }
        }
        if m.count == m.covered.len() {
            let m = self.live.remove(&mid).expect("live");
            if self.by_va.get(&(m.id & 0xff_ffff)) == Some(&m.id) {
                self.by_va.remove(&(m.id & 0xff_ffff));
            }
            out.push(Action::Delivered { msg: m.id, len: m.len, intact: m.intact });
            self.done.insert(mid);
            self.done_order.push_back(mid);
            if self.done_order.len() > DONE_REMEMBERED {
                if let Some(old) = self.done_order.pop_front() {
                    self.done.remove(&old);
                }
            }
        }
    }

    /// The message (id) of a buffer address, and the byte offset in it.
    fn place(va: u64) -> (u64, u64) {
        (va.wrapping_sub(VA_BASE) >> 32, va & 0xffff_ffff)
    }

    /// The posted small message a DATA SEND's body is (its bytes name it: module docs of
    /// [`super`]), not delivered yet.
    fn small_message(&self, body: &[u8]) -> Option<u64> {
        let fits = |id: u64| {
            !self.small_done.contains(&id)
                && self.flor.lengths.as_ref().is_none_or(|l| l.of(id) == Some(body.len() as u32))
                && body.len() as u32 <= self.flor.send_max
                && is_content(id, 0, body)
        };
        if let Some(w) = body.get(..8) {
            let id = message_of_first_word(u64::from_le_bytes(w.try_into().expect("8 bytes")));
            return fits(id).then_some(id);
        }
        // Under 8 bytes: the lowest posted message of that length and content.
        (self.small_low..self.small_low + SHORT_SCAN).find(|&id| fits(id))
    }

    fn deliver_small(&mut self, id: u64, len: u32, out: &mut Vec<Action>) {
        out.push(Action::Delivered { msg: id, len, intact: true });
        self.small_done.insert(id);
        self.small_order.push_back(id);
        if self.small_order.len() > DONE_REMEMBERED {
            if let Some(old) = self.small_order.pop_front() {
                self.small_done.remove(&old);
            }
        }
        while self.small_done.contains(&self.small_low) {
            self.small_low += 1;
        }
    }

    /// A complete SEND WQE.
    fn on_send(&mut self, buf: &[u8], now: Nanos, out: &mut Vec<Action>) {
        let mut w = Warnings::default();
        let Some(h) = wire::SendHeader::parse(buf, buf.len(), true, self.cfg.params.flor_split, &mut w) else {
            return;
        };
        let body = &buf[wire::SEND_HEADER_LEN.min(buf.len())..];
        let ooo = h.rn != self.max_send_rn.wrapping_add(1);
        if h.rn.wrapping_sub(self.max_send_rn) as i32 > 0 {
            self.max_send_rn = h.rn;
        }
        match h.kind {
            SendType::Data => {
                if !self.data_rns.contains(&h.rn) {
                    if let Some(id) = self.small_message(body) {
                        self.deliver_small(id, body.len() as u32, out);
                        self.data_rns.insert(h.rn);
                        self.data_rn_order.push_back(h.rn);
                        if self.data_rn_order.len() > DONE_REMEMBERED {
                            if let Some(old) = self.data_rn_order.pop_front() {
                                self.data_rns.remove(&old);
                            }
                        }
                    }
                }
            }
            SendType::WriteRetx => {
                let r = h.write();
                if let Some(m) = self.live.get(&r.mid) {
                    let at = r.chunk_off as u64 * self.unit as u64;
                    let ok = at + body.len() as u64 <= m.len as u64 && is_content(m.id, at, body);
                    self.cover(r.mid, r.chunk_off, body.len() as u32, ok, out);
                }
            }
            SendType::AddrReq => {
                if let Some(Addr::Req { mid, msg_len }) = h.addr(buf) {
                    if let Some(id) = self.open_large(mid, msg_len) {
                        self.addr_resp(mid, id, msg_len, out);
                    }
                }
            }
            SendType::AddrResp => return,
        }
        self.ack_entry(Entry { send: true, value: h.gn }, buf.len() as u64, h.hint(), ooo, now, out);
    }

    fn addr_resp(&mut self, mid: u32, id: u64, len: u64, out: &mut Vec<Action>) {
        let (gn, rn) = (self.next_gn, self.next_send_rn);
        self.next_gn += 1;
        self.next_send_rn = self.next_send_rn.wrapping_add(1);
        let body =
            SendRepr::addr(rn, gn, AddrRepr::Resp { mid, r_key: R_KEY, va: remote_va(id), buf_len: len }).to_vec();
        let psn = self.data_psn;
        self.data_psn = psn::add(psn, 1);
        let r = RoceRepr::new(0x24, self.wire.peer_qpn(), psn).with_payload(&body);
        let frame = self.wire.frame(self.cfg.tos, r);
        out.push(Action::Transmit { frame, info: TxInfo { psn, msg: None, retx: None } });
    }

    /// A complete WRITE chunk: its RETH, its immediate.
    fn on_write(&mut self, va: u64, len: u32, intact: bool, imm: u32, now: Nanos, out: &mut Vec<Action>) {
        let r = wire::WriteRn::from_imm(self.cfg.params.flor_split, imm);
        let ooo = match self.last_write {
            // In order: the next chunk of the same message, or a new message's first.
            Some((mid, end)) => !((r.mid == mid && r.chunk_off == end) || (r.mid != mid && r.chunk_off == 0)),
            None => r.chunk_off != 0,
        };
        self.last_write = Some((r.mid, r.chunk_off + len.div_ceil(self.unit).max(1)));
        if let Some(m) = self.live.get(&r.mid) {
            let (id, off) = Self::place(va);
            let placed = id == m.id & 0xff_ffff && off == r.chunk_off as u64 * self.unit as u64;
            self.cover(r.mid, r.chunk_off, len, intact && placed, out);
        }
        self.ack_entry(Entry { send: false, value: imm as u64 }, len as u64, r.hint, ooo, now, out);
    }

    /// Adds a WQE to the next ACK; sends it on a trigger (32 WQEs, 32 KB, the hint, an
    /// out-of-order number), else makes sure the 120 µs timer runs.
    fn ack_entry(&mut self, e: Entry, bytes: u64, hint: bool, ooo: bool, now: Nanos, out: &mut Vec<Action>) {
        let first = self.acks.entries.is_empty();
        self.acks.entries.push(e);
        self.acks.bytes += bytes;
        self.acks.t2 = now;
        let c = &self.acks;
        if c.entries.len() >= self.flor.ack_wqes as usize || c.bytes >= self.flor.ack_bytes as u64 || hint || ooo {
            self.send_ack(now, out);
        } else if first {
            let token = self.next_token;
            self.next_token += 1;
            self.timers.insert(token, self.acks.epoch);
            out.push(Action::Timer { at: now + self.flor.ack_timer_ns, token });
        }
    }

    fn send_ack(&mut self, now: Nanos, out: &mut Vec<Action>) {
        let c = std::mem::take(&mut self.acks);
        self.acks.epoch = c.epoch + 1;
        if c.entries.is_empty() {
            return;
        }
        let least = c.entries.iter().filter(|e| e.send).map(|e| e.value).min().unwrap_or(0);
        let entries: Vec<u32> =
            c.entries.iter().map(|e| if e.send { (e.value - least) as u32 } else { e.value as u32 }).collect();
        let bitmap = wire::ack_bitmap(c.entries.iter().map(|e| e.send), self.cfg.params.flor_ack_set_means);
        let body = AckRepr {
            qpn: self.cfg.responder.qpn,
            bitmap,
            least_gn: least,
            delay_ns: now.saturating_sub(c.t2),
            entries: &entries,
        }
        .to_vec();
        let psn = self.ack_psn;
        self.ack_psn = psn::add(psn, 1);
        let mut r = RoceRepr::new(wire::OPCODE_ACK, self.flor.sender_ack_qpn, psn).with_payload(&body);
        r.deth = Some(DethRepr { q_key: ACK_Q_KEY, src_qp: self.flor.receiver_ack_qpn });
        let frame = self.wire.frame(self.cfg.tos, r);
        out.push(Action::Transmit { frame, info: TxInfo { psn, msg: None, retx: None } });
    }

    /// UC reception of one data packet (§2.2): behind the expected PSN it is discarded; after a
    /// gap the WQE being received is lost; a Middle or Last with no WQE begun is discarded.
    fn on_data(&mut self, now: Nanos, p: &rocescope_codec::ib::RocePacket<'_>, out: &mut Vec<Action>) {
        let (op, n) = (p.opcode().0, p.bth().psn());
        let d = psn::diff(self.epsn, n);
        if d < 0 {
            self.oos += 1;
            return;
        }
        if d > 0 && self.verb.take().is_some() {
            self.oos += 1;
        }
        self.epsn = psn::add(n, 1);
        let body = p.payload();
        if body.len() != p.payload_len() {
            self.verb = None;
            return;
        }
        let Some((write, pos, imm)) = crate::common::classify_request(op & 0x1f) else { return };
        if pos.starts() {
            if self.verb.take().is_some() {
                self.oos += 1;
            }
            self.verb = Some(if write {
                let Some(reth) = p.reth() else { return };
                Verb::Write { va: reth.va(), len: reth.dma_len(), got: 0, intact: true }
            } else {
                Verb::Send { buf: Vec::new() }
            });
        }
        match self.verb.as_ref() {
            Some(&Verb::Write { va, got, .. }) if write => {
                let (low, off) = Self::place(va);
                let id = self.by_va.get(&low).copied();
                let ok = id.is_some_and(|id| is_content(id, off + got, body));
                if let Some(Verb::Write { got, intact, .. }) = self.verb.as_mut() {
                    *intact &= ok;
                    *got += body.len() as u64;
                }
            }
            Some(Verb::Send { buf }) if !write && buf.len() + body.len() <= MAX_SEND => {
                if let Some(Verb::Send { buf }) = self.verb.as_mut() {
                    buf.extend_from_slice(body);
                }
            }
            _ => {
                self.verb = None;
                return;
            }
        }
        if !pos.ends() {
            return;
        }
        match self.verb.take() {
            Some(Verb::Write { va, len, got, intact }) => {
                let Some(imm) = p.immdt().map(|i| i.imm()).filter(|_| imm) else { return };
                // The message id in the VA is 24 bits: the live message's, checked in on_write.
                let whole = got == len as u64;
                self.on_write(va, len, intact && whole, imm, now, out);
            }
            Some(Verb::Send { buf }) => self.on_send(&buf, now, out),
            None => {}
        }
    }
}

impl Endpoint for FlorReceiver {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        if p.bth().dest_qp() == self.cfg.responder.qpn && p.opcode().0 & 0xe0 == 0x20 {
            self.on_data(now, p, out);
        }
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        if self.timers.remove(&token) == Some(self.acks.epoch) && !self.acks.entries.is_empty() {
            self.send_ack(now, out);
        }
    }
}
