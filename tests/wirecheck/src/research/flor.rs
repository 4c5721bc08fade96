//! Flor's messages rebuilt from what reached the receiver's tap (WIRE.md B.3; seed 002 §4-5;
//! docs/stacks.md "Flor"), from the bytes alone.
//!
//! Flor's data travels on a UC QP, so first the WQEs: a First (or Only) packet opens one, each
//! Middle and Last must follow at the next PSN of the same verb, or the WQE in progress is
//! dropped (what a UC responder does on a gap; a new First also drops it). A complete WQE is:
//! - a WRITE chunk: its RETH VA places its bytes (`VA_BASE + (message << 32) + offset`: the
//!   buffer the ADDR_RESP gave), its immediate names the message's MID and the chunk's first
//!   unit, which must be that offset (`offset = chunk_off · UNIT_SIZE`);
//! - a SEND with the Flor header: DATA carries a small message whole, the message named by its
//!   first 8 bytes (`rocescope_stacks::message_of_first_word`); WRITE_RETX carries the units of
//!   a large message from its WRITE reliable number's first unit, the message found by the MID
//!   in the responder's ADDR_RESP (`back`: the frames from responder to requester, at any tap);
//!   ADDR_REQ carries no message bytes.
//!
//! A message is whole when its bytes `0 … message_size` all arrived, every copy with the
//! message's bytes (the run's messages are all `message_size` long).

use std::collections::{BTreeMap, HashMap};

use rocescope_codec::ext::flor::{Addr, SendHeader, SendType, WriteRn, SEND_HEADER_LEN};
use rocescope_codec::ib::psn;
use rocescope_codec::{Params, Warnings};
use rocescope_stacks::{message_byte, message_of_first_word, VA_BASE};

use crate::packet::Pkt;
use crate::payload::{Delivery, Rebuilt};

/// A WQE being reassembled.
struct Wqe {
    write: bool,
    first_frame: u64,
    last_psn: u32,
    reth: Option<(u64, u32)>,
    buf: Vec<u8>,
}

#[derive(Default)]
struct Msg {
    spans: Vec<(u64, u64)>,
    right: bool,
    packets: u32,
}

fn right(id: u64, off: u64, b: &[u8]) -> bool {
    b.iter().enumerate().all(|(i, &x)| x == message_byte(id, off + i as u64))
}

/// The messages of one connection from `arrived` (its UC packets at the receiver's tap, in
/// capture order) and `back` (what the responder sent the requester).
pub fn rebuild(params: &Params, message_size: u64, arrived: &[&Pkt], back: &[&Pkt]) -> Delivery {
    let mut d = Delivery::default();
    let unit = params.flor_unit_size as u64;
    let split = params.flor_split;
    // MID → message, from the ADDR_RESPs.
    let mut mids: HashMap<u32, u64> = HashMap::new();
    for p in back.iter().filter(|p| p.opcode == 0x24) {
        let mut w = Warnings::default();
        let Some(h) = SendHeader::parse(&p.payload, p.payload.len(), true, split, &mut w) else { continue };
        if let (SendType::AddrResp, Some(Addr::Resp { mid, va, .. })) = (h.kind, h.addr(&p.payload)) {
            let id = va.wrapping_sub(VA_BASE) >> 32;
            if mids.insert(mid, id).is_some_and(|was| was != id) {
                d.errors.push(format!("frame {}: MID {mid} given to a second message", p.number));
            }
        }
    }
    let mut msgs: BTreeMap<u64, Msg> = BTreeMap::new();
    let mut cover = |d: &mut Delivery, frame: u64, id: u64, off: u64, b: &[u8], packets: u32| {
        let ok = right(id, off, b);
        if !ok {
            d.errors.push(format!("WQE from frame {frame}: message {id} bytes {off}…: wrong bytes"));
        }
        let m = msgs.entry(id).or_insert_with(|| Msg { right: true, ..Default::default() });
        m.right &= ok;
        m.packets += packets;
        m.spans.push((off, off + b.len() as u64));
    };
    let mut cur: Option<(Wqe, u32)> = None;
    for p in arrived {
        let pos = p.opcode & 0x1f;
        let write = pos >= 0x06;
        let opens = matches!(pos, 0x00 | 0x04 | 0x05 | 0x06 | 0x0a | 0x0b);
        let closes = matches!(pos, 0x02..=0x05 | 0x08..=0x0b);
        if opens {
            cur = Some((Wqe { write, first_frame: p.number, last_psn: p.psn, reth: p.reth, buf: Vec::new() }, 0));
        } else {
            match cur.as_mut() {
                Some((w, _)) if w.write == write && p.psn == psn::add(w.last_psn, 1) => w.last_psn = p.psn,
                // A gap (or a stray Middle/Last): the WQE in progress is lost.
                _ => {
                    cur = None;
                    continue;
                }
            }
        }
        let (w, n) = cur.as_mut().expect("a WQE");
        w.buf.extend_from_slice(&p.payload);
        *n += 1;
        if !closes {
            continue;
        }
        let (w, n) = cur.take().expect("a WQE");
        if w.write {
            let (Some((va, len)), Some(imm)) = (w.reth, p.immdt) else {
                d.errors.push(format!("frame {}: a WRITE chunk without its RETH or immediate", w.first_frame));
                continue;
            };
            if w.buf.len() != len as usize {
                d.errors.push(format!("frame {}: a WRITE of {len} bytes carried {}", w.first_frame, w.buf.len()));
                continue;
            }
            let (id, off) = (va.wrapping_sub(VA_BASE) >> 32, va & 0xffff_ffff);
            let rn = WriteRn::from_imm(split, imm);
            if rn.chunk_off as u64 * unit != off || mids.get(&rn.mid).is_some_and(|&m| m & 0xff_ffff != id) {
                d.errors.push(format!(
                    "frame {}: a WRITE at message {id} offset {off} whose immediate says MID {} unit {}",
                    w.first_frame, rn.mid, rn.chunk_off
                ));
            }
            cover(&mut d, w.first_frame, id, off, &w.buf, n);
            continue;
        }
        let mut warn = Warnings::default();
        let Some(h) = SendHeader::parse(&w.buf, w.buf.len(), true, split, &mut warn) else {
            d.errors.push(format!("frame {}: a SEND without a Flor header", w.first_frame));
            continue;
        };
        let body = &w.buf[SEND_HEADER_LEN.min(w.buf.len())..];
        match h.kind {
            SendType::Data => {
                let Some(word) = body.get(..8) else {
                    d.errors.push(format!("frame {}: a DATA SEND under 8 bytes names no message", w.first_frame));
                    continue;
                };
                let id = message_of_first_word(u64::from_le_bytes(word.try_into().expect("8 bytes")));
                cover(&mut d, w.first_frame, id, 0, body, n);
            }
            SendType::WriteRetx => {
                let rn = h.write();
                let Some(&id) = mids.get(&rn.mid) else {
                    d.errors.push(format!("frame {}: WRITE_RETX of MID {} with no ADDR_RESP", w.first_frame, rn.mid));
                    continue;
                };
                cover(&mut d, w.first_frame, id, rn.chunk_off as u64 * unit, body, n);
            }
            SendType::AddrReq | SendType::AddrResp => {}
        }
    }
    for (id, m) in msgs {
        let upto = super::covered_from_zero(m.spans);
        let whole = upto >= message_size;
        d.messages.push(Rebuilt {
            msg: id,
            first_opcode: 0x26,
            len: if whole { message_size } else { upto },
            intact: whole && m.right,
            packets: m.packets,
        });
    }
    d
}
