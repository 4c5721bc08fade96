//! ERD's messages rebuilt from the datagrams that reached the receiver's tap (WIRE.md B.5; seed
//! 004 §4.5, the reorder module), from their bytes alone: each datagram's EETH names its
//! message (`Msg_ID`, 16 bits, unwrapped here to the nearest of the highest seen) and where its
//! `S_Len` bytes go (`S_Offset`); the packet holding a message's final bytes says so (`Last`),
//! which gives its length. A message is whole when its bytes `0 … length` all arrived, every
//! copy with the message's bytes (`rocescope_stacks::message_byte`).

use std::collections::BTreeMap;

use rocescope_codec::ext::erd::{EethRepr, EETH_LEN};
use rocescope_stacks::message_byte;

use crate::packet::Pkt;
use crate::payload::{Delivery, Rebuilt};

#[derive(Default)]
struct Msg {
    /// Byte ranges that arrived, by start (merged when rebuilt).
    spans: Vec<(u64, u64)>,
    len: Option<u64>,
    right: bool,
    packets: u32,
}

/// The messages of one connection from `arrived`, its data datagrams at the receiver's tap in
/// capture order.
pub fn rebuild(arrived: &[&Pkt]) -> Delivery {
    let mut d = Delivery::default();
    let mut msgs: BTreeMap<u64, Msg> = BTreeMap::new();
    let mut high: Option<u64> = None;
    for p in arrived {
        let Some(e) = EethRepr::parse(&p.payload) else {
            d.errors.push(format!("frame {}: no EETH", p.number));
            continue;
        };
        let data = &p.payload[EETH_LEN..];
        if e.s_len as usize != data.len() {
            d.errors.push(format!("frame {}: S_Len {} with {} bytes after the EETH", p.number, e.s_len, data.len()));
            continue;
        }
        let id = match high {
            None => e.msg_id as u64,
            Some(h) => {
                let dlt = (e.msg_id as i64 - (h as i64 & 0xffff)).rem_euclid(1 << 16);
                (h as i64 + if dlt >= 1 << 15 { dlt - (1 << 16) } else { dlt }).max(0) as u64
            }
        };
        high = Some(high.map_or(id, |h| h.max(id)));
        let m = msgs.entry(id).or_insert_with(|| Msg { right: true, ..Default::default() });
        let off = e.s_offset as u64;
        let right = data.iter().enumerate().all(|(i, &b)| b == message_byte(id, off + i as u64));
        if !right {
            d.errors.push(format!("frame {}: message {id} bytes {off}…: wrong bytes", p.number));
        }
        m.right &= right;
        m.packets += 1;
        m.spans.push((off, off + data.len() as u64));
        if let Some(l) = e.msg_len() {
            if m.len.is_some_and(|x| x != l) {
                d.errors
                    .push(format!("frame {}: message {id} ends at {l}, an earlier Last said {:?}", p.number, m.len));
            }
            m.len = Some(l);
        }
    }
    for (id, m) in msgs {
        // Covered from 0 without a hole, up to the end the Last packet gave.
        let upto = super::covered_from_zero(m.spans);
        let whole = m.len.is_some_and(|l| upto >= l);
        d.messages.push(Rebuilt {
            msg: id,
            first_opcode: 0x64,
            len: if whole { m.len.unwrap_or(0) } else { upto },
            intact: whole && m.right,
            packets: m.packets,
        });
    }
    d
}
