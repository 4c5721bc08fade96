//! Flor's data receiver as the ground truth judges it (docs/truth.md "Flor"; seed 002 §2.2, §5,
//! Appendix A.1; the stack it mirrors: `rocescope_stacks::flor`'s receiver).
//!
//! Flor runs on UC: the receiver's NIC takes the data QP's packets in PSN order (one behind the
//! expected PSN is discarded, a PSN gap loses the WQE being received, a Middle or Last with no
//! WQE begun is discarded), and Flor's software counts a WQE once its last packet arrived. Each
//! WQE transmission that reached the receiver closes with a verdict on the packets of it that
//! arrived: [`Verdict::New`] when it brought something (a unit of a large message not covered
//! before, a small message's SEND whose reliable number was not delivered before, the first
//! ADDR_REQ of a message), [`Verdict::Old`] when whole but redundant, [`Verdict::Aborted`] when
//! the UC receive lost it. A WQE's packets have consecutive PSNs, so a verdict names them by its
//! first PSN and count: the simulator keeps the verdicts per WQE (a packet's is known only once
//! its WQE closes, after its record may have been recycled) for the truth to derive each
//! packet's acceptance from. [`FlorJudge::oos`] counts what the stack's receiver counts as out
//! of sequence.

use std::collections::{HashMap, HashSet, VecDeque};

use rocescope_codec::ext::flor::{self as wire, Addr, SendType};
use rocescope_codec::ib::opcode::Position;
use rocescope_codec::ib::{psn, RocePacket};
use rocescope_codec::params::ImmSplit;
use rocescope_codec::Warnings;

use crate::spill::{Dec, Enc, Record};

/// What the receiver made of a WQE transmission's packets that arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    New,
    Old,
    Aborted,
}

/// One closed WQE transmission (or a lone packet discarded outside any): its packets that
/// arrived are the connection's data PSNs `first_psn` and the `packets − 1` after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closed {
    pub first_tx: u32,
    pub first_psn: u32,
    pub packets: u32,
    pub verdict: Verdict,
    /// It completed its message (the stack's receiver delivers it now).
    pub delivers: bool,
    /// When it closed: the arrival that completed or aborted it (for one still being received
    /// when the run ended, the end).
    pub at: u64,
}

/// On disk (`spill.rs`), when the run spills its truth: a closed WQE with its connection (a
/// zeroed record reads as a new one).
impl Record for (u32, Closed) {
    const SIZE: usize = 4 + 4 * 3 + 1 + 1 + 8;
    fn encode(&self, o: &mut Enc<'_>) {
        let (conn, c) = self;
        for v in [*conn, c.first_tx, c.first_psn, c.packets] {
            o.u32(v);
        }
        o.u8(match c.verdict {
            Verdict::New => 0,
            Verdict::Old => 1,
            Verdict::Aborted => 2,
        });
        o.u8(c.delivers as u8);
        o.u64(c.at);
    }
    fn decode(i: &mut Dec<'_>) -> (u32, Closed) {
        let (conn, first_tx, first_psn, packets) = (i.u32(), i.u32(), i.u32(), i.u32());
        let verdict = match i.u8() {
            1 => Verdict::Old,
            2 => Verdict::Aborted,
            _ => Verdict::New,
        };
        let delivers = i.bool();
        (conn, Closed { first_tx, first_psn, packets, verdict, delivers, at: i.u64() })
    }
}

/// Completed messages and SEND numbers remembered (the stack's receiver's bound).
const REMEMBERED: usize = 4096;
/// Bytes of a SEND's start kept (its header and an ADDR body).
const SEND_HEAD: usize = 64;

/// The WQE being received.
#[derive(Debug)]
struct Cur {
    first_tx: u32,
    first_psn: u32,
    packets: u32,
    write: bool,
    /// WRITE: its RETH length.
    dma_len: u32,
    /// SEND: the start of its payload.
    head: Vec<u8>,
}

/// A large message being received: its units covered.
#[derive(Debug)]
struct Large {
    covered: Vec<bool>,
    count: usize,
}

/// A bounded set (the oldest forgotten first).
#[derive(Debug, Default)]
struct Recent<T: std::hash::Hash + Eq + Copy> {
    set: HashSet<T>,
    order: VecDeque<T>,
}

impl<T: std::hash::Hash + Eq + Copy> Recent<T> {
    fn contains(&self, x: &T) -> bool {
        self.set.contains(x)
    }
    fn insert(&mut self, x: T) {
        if self.set.insert(x) {
            self.order.push_back(x);
            if self.order.len() > REMEMBERED {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
}

/// One Flor connection's data receiver, as judged.
#[derive(Debug)]
pub struct FlorJudge {
    unit: u32,
    split: ImmSplit,
    send_max: u32,
    epsn: u32,
    cur: Option<Cur>,
    live: HashMap<u32, Large>,
    done: Recent<u32>,
    data_rns: Recent<u32>,
    /// WQEs aborted and packets discarded (the stack receiver's `oos`).
    pub oos: u64,
}

impl FlorJudge {
    /// A connection whose first PSN is `start_psn`, `unit`-byte units, immediates split by
    /// `split`, SENDs of at most `send_max` bytes for small messages.
    pub fn new(start_psn: u32, unit: u32, split: ImmSplit, send_max: u32) -> FlorJudge {
        FlorJudge {
            unit: unit.max(1),
            split,
            send_max,
            epsn: start_psn & psn::MASK,
            cur: None,
            live: HashMap::new(),
            done: Recent::default(),
            data_rns: Recent::default(),
            oos: 0,
        }
    }

    /// Data packet `p` (transmission `tx`) reached the receiver's QP whole at `now`: the WQEs it
    /// closes.
    pub fn arrive(&mut self, now: u64, tx: u32, p: &RocePacket<'_>, out: &mut Vec<Closed>) {
        let n = p.bth().psn();
        let lone = |verdict| Closed { first_tx: tx, first_psn: n, packets: 1, verdict, delivers: false, at: now };
        let aborted = |c: &Cur| c.closed(Verdict::Aborted, false, now);
        let d = psn::diff(self.epsn, n);
        if d < 0 {
            self.oos += 1;
            return out.push(lone(Verdict::Aborted));
        }
        if d > 0 {
            if let Some(c) = self.cur.take() {
                self.oos += 1;
                out.push(aborted(&c));
            }
        }
        self.epsn = psn::add(n, 1);
        let op = p.opcode();
        let (Some(pos), body) = (op.position(), p.payload()) else { return out.push(lone(Verdict::Aborted)) };
        let write = op.is_write();
        if body.len() != p.payload_len() {
            if let Some(c) = self.cur.take() {
                out.push(aborted(&c));
            }
            return out.push(lone(Verdict::Aborted));
        }
        if matches!(pos, Position::First | Position::Only) {
            if let Some(c) = self.cur.take() {
                self.oos += 1;
                out.push(aborted(&c));
            }
            let dma_len = p.reth().map_or(0, |r| r.dma_len());
            self.cur = Some(Cur { first_tx: tx, first_psn: n, packets: 0, write, dma_len, head: Vec::new() });
        }
        match self.cur.as_mut() {
            Some(c) if c.write == write => {
                c.packets += 1;
                if !write && c.head.len() < SEND_HEAD {
                    let take = (SEND_HEAD - c.head.len()).min(body.len());
                    c.head.extend_from_slice(&body[..take]);
                }
            }
            _ => {
                if let Some(c) = self.cur.take() {
                    out.push(aborted(&c));
                }
                return out.push(lone(Verdict::Aborted));
            }
        }
        if !matches!(pos, Position::Last | Position::Only) {
            return;
        }
        let c = self.cur.take().expect("a WQE being received");
        let imm = p.immdt().map(|i| i.imm());
        let (verdict, delivers) = if c.write { self.write(c.dma_len, imm) } else { self.send(&c.head) };
        out.push(c.closed(verdict, delivers, now));
    }

    /// The run ended at `now`: a WQE still being received never completed.
    pub fn finish(&mut self, now: u64, out: &mut Vec<Closed>) {
        if let Some(c) = self.cur.take() {
            out.push(c.closed(Verdict::Aborted, false, now));
        }
    }

    /// Units `[off, off + ⌈len/unit⌉)` of MID `mid` arrived: (new or old, the message complete).
    fn cover(&mut self, mid: u32, off: u32, len: u32) -> (Verdict, bool) {
        let Some(m) = self.live.get_mut(&mid) else { return (Verdict::Old, false) };
        let end = (off as usize + len.div_ceil(self.unit).max(1) as usize).min(m.covered.len());
        let mut new = false;
        for u in (off as usize).min(end)..end {
            if !m.covered[u] {
                m.covered[u] = true;
                m.count += 1;
                new = true;
            }
        }
        let whole = m.count == m.covered.len();
        if whole {
            self.live.remove(&mid);
            self.done.insert(mid);
        }
        (if new { Verdict::New } else { Verdict::Old }, whole && new)
    }

    fn write(&mut self, dma_len: u32, imm: Option<u32>) -> (Verdict, bool) {
        let Some(imm) = imm else { return (Verdict::Old, false) };
        let r = wire::WriteRn::from_imm(self.split, imm);
        self.cover(r.mid, r.chunk_off, dma_len)
    }

    fn send(&mut self, head: &[u8]) -> (Verdict, bool) {
        let mut w = Warnings::default();
        let Some(h) = wire::SendHeader::parse(head, head.len(), true, self.split, &mut w) else {
            return (Verdict::Old, false);
        };
        match h.kind {
            SendType::Data if !self.data_rns.contains(&h.rn) => {
                self.data_rns.insert(h.rn);
                (Verdict::New, true)
            }
            SendType::WriteRetx => {
                let r = h.write();
                self.cover(r.mid, r.chunk_off, h.body_len)
            }
            SendType::AddrReq => match h.addr(head) {
                Some(Addr::Req { mid, msg_len })
                    if msg_len > self.send_max as u64 && !self.live.contains_key(&mid) && !self.done.contains(&mid) =>
                {
                    let units = (msg_len.div_ceil(self.unit as u64)).max(1) as usize;
                    self.live.insert(mid, Large { covered: vec![false; units], count: 0 });
                    (Verdict::New, false)
                }
                _ => (Verdict::Old, false),
            },
            _ => (Verdict::Old, false),
        }
    }
}

impl Cur {
    fn closed(&self, verdict: Verdict, delivers: bool, at: u64) -> Closed {
        Closed { first_tx: self.first_tx, first_psn: self.first_psn, packets: self.packets, verdict, delivers, at }
    }
}
