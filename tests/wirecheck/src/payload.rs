//! The messages rebuilt from the frames that reached the receiver's tap, byte by byte.
//!
//! Message `m`'s byte `i` is `rocescope_stacks::message_byte(m, i)` and its remote buffer is at
//! `remote_va(m)` (both ends compute them, `stacks` crate docs), so the frames alone say whether
//! every message arrived whole:
//! - Go-Back-N and IRN (standard RoCE): the request PSNs of a connection are consecutive and
//!   each message starts with a First/Only opcode; walking the PSNs from the flow's first one
//!   numbers the messages 0, 1, 2, … (RC posting order). Packet `k` of a message carries bytes
//!   `k·MTU …`. A WRITE's RETH VA must name the same message (`remote_va(m)`) and its DMA length
//!   the message's length; a WRITE with Immediate's ImmDt must be `imm_data(m)`. A READ Request
//!   takes as many PSNs as it has response packets.
//! - DCP (WIRE.md B.1): the DCPETH MSN is the message number; a WRITE packet's RETH VA is the
//!   address of its own payload; a SEND packet's offset is its PSN's distance from its message's
//!   First packet times the MTU.
//!
//! Every whole copy that arrived is checked (a duplicate must carry the same bytes), and every
//! PSN of every message must have arrived at least once.

use std::collections::BTreeMap;

use rocescope_codec::ib::psn;
use rocescope_stacks::{imm_data, message_byte, remote_va, VA_BASE};

use super::packet::{Pkt, PktKind};
use super::wire::{Conn, Dir, Wire};

/// One message as the receiver's tap shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rebuilt {
    pub msg: u64,
    /// The opcode of its first packet.
    pub first_opcode: u8,
    pub len: u64,
    /// Every byte arrived, and every arrived byte is right.
    pub intact: bool,
    pub packets: u32,
}

/// The rebuilt messages of a connection and what was wrong.
#[derive(Clone, Debug, Default)]
pub struct Delivery {
    pub messages: Vec<Rebuilt>,
    pub errors: Vec<String>,
}

impl Delivery {
    /// Messages `0..n` all present, intact and `len` bytes long (a READ's length is its
    /// request's DMA length), nothing else: the errors otherwise.
    pub fn check(&self, n: u64, len: u64) -> Result<(), String> {
        self.check_lengths(&vec![len; n as usize])
    }

    /// The same for messages of their own lengths (posting order).
    pub fn check_each(&self, posted: &[rocescope_stacks::Message]) -> Result<(), String> {
        self.check_lengths(&posted.iter().map(|m| m.len as u64).collect::<Vec<_>>())
    }

    fn check_lengths(&self, lens: &[u64]) -> Result<(), String> {
        let mut errs = self.errors.clone();
        if self.messages.len() != lens.len() {
            errs.push(format!("{} messages rebuilt, {} posted", self.messages.len(), lens.len()));
        }
        for (i, m) in self.messages.iter().enumerate() {
            if m.msg != i as u64 {
                errs.push(format!("message {} found where {} was expected", m.msg, i));
            }
            if !m.intact {
                errs.push(format!("message {} not intact", m.msg));
            }
            if let Some(&len) = lens.get(i) {
                if m.len != len {
                    errs.push(format!("message {} is {} bytes, not {len}", m.msg, m.len));
                }
            }
        }
        if errs.is_empty() {
            Ok(())
        } else {
            errs.truncate(8);
            Err(errs.join("; "))
        }
    }
}

fn bytes_ok(msg: u64, off: u64, data: &[u8]) -> bool {
    data.iter().enumerate().all(|(i, &b)| b == message_byte(msg, off + i as u64))
}

/// The message a RETH VA names (`remote_va`), with the offset into it.
fn va_msg(va: u64) -> (u64, u64) {
    let rel = va.wrapping_sub(VA_BASE);
    (rel >> 32, rel & 0xffff_ffff)
}

/// Rebuilds the requests of `c` from what reached the responder's tap; `None` when the
/// responder has no tap. `mtu`: the connection's payload bytes per full packet.
pub fn rebuild(w: &Wire, c: &Conn, mtu: u32) -> Option<Delivery> {
    let tap = w.tap_at(c.responder)?;
    let pkts: Vec<&Pkt> =
        w.at(tap.interface).filter(|p| c.is_request(p) && w.dir(p) == Dir::In && p.kind == PktKind::Data).collect();
    Some(if w.profile == rocescope_codec::Profile::Dcp { rebuild_dcp(&pkts, mtu) } else { rebuild_std(&pkts, mtu) })
}

fn rebuild_std(pkts: &[&Pkt], mtu: u32) -> Delivery {
    let mut d = Delivery::default();
    let Some(p0) = pkts.first() else { return d };
    // First copy of each PSN, by distance from the earliest PSN; duplicates must match it.
    let mut by_psn: BTreeMap<i32, &Pkt> = BTreeMap::new();
    for p in pkts {
        let k = psn::diff(p0.psn, p.psn);
        match by_psn.get(&k) {
            Some(q) if q.payload != p.payload || q.opcode != p.opcode => d
                .errors
                .push(format!("frame {}: PSN {} differs from its earlier copy (frame {})", p.number, p.psn, q.number)),
            Some(_) => {}
            None => {
                by_psn.insert(k, p);
            }
        }
    }
    let (Some(&lo), Some(&hi)) = (by_psn.keys().next(), by_psn.keys().next_back()) else {
        return d;
    };
    let mut k = lo;
    let mut msg = 0u64;
    while k <= hi {
        let Some(p) = by_psn.get(&k) else {
            d.errors.push(format!("PSN {} never arrived", psn::add(p0.psn, k as u32)));
            k += 1;
            continue;
        };
        if !p.starts_message() {
            d.errors
                .push(format!("frame {}: PSN {} (opcode {:#04x}) does not start a message", p.number, p.psn, p.opcode));
            k += 1;
            continue;
        }
        let first_opcode = p.opcode;
        let mut m = Rebuilt { msg, first_opcode, len: 0, intact: true, packets: 0 };
        if p.is_read_request() {
            let (va, len) = p.reth.unwrap_or((0, 0));
            m.intact = va == remote_va(msg);
            m.len = len as u64;
            m.packets = len.div_ceil(mtu.max(1)).max(1);
            k += m.packets as i32;
            d.messages.push(m);
            msg += 1;
            continue;
        }
        let reth = p.reth;
        loop {
            let Some(q) = by_psn.get(&k) else {
                d.errors.push(format!("message {msg}: PSN {} never arrived", psn::add(p0.psn, k as u32)));
                m.intact = false;
                break;
            };
            if m.packets > 0 && q.starts_message() {
                d.errors.push(format!("message {msg}: frame {} starts another message before the last", q.number));
                m.intact = false;
                break;
            }
            m.intact &= bytes_ok(msg, m.len, &q.payload);
            if !q.ends_message() && q.payload.len() != mtu as usize {
                m.intact = false;
            }
            m.len += q.payload.len() as u64;
            m.packets += 1;
            k += 1;
            if q.ends_message() {
                if matches!(q.opcode, 0x09 | 0x0B) && q.immdt != Some(imm_data(msg)) {
                    d.errors.push(format!("message {msg}: ImmDt {:?} in frame {}", q.immdt, q.number));
                    m.intact = false;
                }
                break;
            }
        }
        if let Some((va, len)) = reth {
            if va != remote_va(msg) || len as u64 != m.len {
                d.errors.push(format!("message {msg}: RETH VA {va:#x} length {len}, {} bytes arrived", m.len));
                m.intact = false;
            }
        }
        d.messages.push(m);
        msg += 1;
    }
    d
}

fn rebuild_dcp(pkts: &[&Pkt], mtu: u32) -> Delivery {
    let mut d = Delivery::default();
    // Per MSN: first PSN (from the First/Only packet), packets by PSN, length, opcode.
    #[derive(Default)]
    struct M<'a> {
        first: Option<&'a Pkt>,
        last: Option<&'a Pkt>,
        by_psn: BTreeMap<u32, &'a Pkt>,
    }
    let mut msgs: BTreeMap<u32, M<'_>> = BTreeMap::new();
    for p in pkts {
        let Some(msn) = p.dcp_msn else {
            d.errors.push(format!("frame {}: DCP data without DCPETH", p.number));
            continue;
        };
        let m = msgs.entry(msn).or_default();
        if p.starts_message() {
            m.first.get_or_insert(p);
        }
        if p.ends_message() {
            m.last.get_or_insert(p);
        }
        match m.by_psn.get(&p.psn) {
            Some(q) if q.payload != p.payload || q.opcode != p.opcode || q.reth != p.reth => d
                .errors
                .push(format!("frame {}: PSN {} differs from its earlier copy (frame {})", p.number, p.psn, q.number)),
            Some(_) => {}
            None => {
                m.by_psn.insert(p.psn, p);
            }
        }
    }
    for (&msn, m) in &msgs {
        let msg = msn as u64;
        let (Some(first), Some(last)) = (m.first, m.last) else {
            d.errors.push(format!("message {msg}: first or last packet never arrived"));
            d.messages.push(Rebuilt { msg, first_opcode: 0xff, len: 0, intact: false, packets: 0 });
            continue;
        };
        let n = psn::diff(first.psn, last.psn) + 1;
        let mut r = Rebuilt { msg, first_opcode: first.opcode, len: 0, intact: n >= 1, packets: 0 };
        for k in 0..n.max(0) as u32 {
            let Some(q) = m.by_psn.get(&psn::add(first.psn, k)) else {
                d.errors.push(format!("message {msg}: PSN {} never arrived", psn::add(first.psn, k)));
                r.intact = false;
                continue;
            };
            let off = match q.reth {
                Some((va, _)) => {
                    let (vm, off) = va_msg(va);
                    if vm != msg & 0xff_ffff {
                        r.intact = false;
                    }
                    off
                }
                None => k as u64 * mtu as u64,
            };
            if off != k as u64 * mtu as u64 {
                r.intact = false;
            }
            r.intact &= bytes_ok(msg, off, &q.payload);
            r.len += q.payload.len() as u64;
            r.packets += 1;
        }
        if let Some((_, len)) = first.reth {
            r.intact &= len as u64 == r.len;
        }
        if matches!(last.opcode, 0x09) && last.immdt != Some(imm_data(msg)) {
            r.intact = false;
        }
        if m.by_psn.len() as u32 != r.packets {
            d.errors.push(format!("message {msg}: {} PSNs arrived for {} packets", m.by_psn.len(), r.packets));
        }
        d.messages.push(r);
    }
    d
}

/// READ data rebuilt at the requester's tap: each READ Request's RETH names the message and the
/// offset its first response carries (a re-issued READ starts at a missing response), response
/// PSN `q + k` carries bytes `offset + k·MTU …`, and only the responses the requester accepted
/// (in PSN order, [`crate::judge::response_acceptance`]) count. Returns (message, intact) per
/// READ whose requests left the tap; `None` when the requester has no tap.
pub fn rebuild_reads(w: &Wire, c: &Conn, mtu: u32) -> Option<BTreeMap<u64, bool>> {
    let tap = w.tap_at(c.requester)?;
    let accepted = super::judge::response_acceptance(w, c, mtu);
    // Response PSN -> (message, byte offset), from the requests (a re-issue overrides the tail).
    let mut at: BTreeMap<i32, (u64, u64)> = BTreeMap::new();
    let mut base: Option<u32> = None;
    let mut reads: BTreeMap<u64, (u64, u64, bool)> = BTreeMap::new(); // msg -> (len, bytes got, ok)
    for p in w.at(tap.interface) {
        match w.dir(p) {
            Dir::Out if c.is_request(p) && p.is_read_request() => {
                let Some((va, len)) = p.reth else { continue };
                let (msg, off) = va_msg(va);
                let b = *base.get_or_insert(p.psn);
                let e = reads.entry(msg).or_insert((off + len as u64, 0, true));
                if off == 0 {
                    e.0 = len as u64;
                }
                for k in 0..len.div_ceil(mtu.max(1)).max(1) {
                    at.insert(psn::diff(b, psn::add(p.psn, k)), (msg, off + k as u64 * mtu as u64));
                }
            }
            Dir::In
                if c.is_response(p) && p.kind == PktKind::ReadResponse && accepted.get(&p.number) == Some(&true) =>
            {
                let Some(b) = base else { continue };
                let Some(&(msg, off)) = at.get(&psn::diff(b, p.psn)) else { continue };
                if let Some(e) = reads.get_mut(&msg) {
                    e.2 &= bytes_ok(msg, off, &p.payload);
                    e.1 += p.payload.len() as u64;
                }
            }
            _ => {}
        }
    }
    Some(reads.into_iter().map(|(m, (len, got, ok))| (m, ok && got == len)).collect())
}
