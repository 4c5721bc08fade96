//! SDR-RDMA's messages rebuilt from the data packets that reached the receiver's tap (WIRE.md
//! B.2; docs/stacks.md "SDR-RDMA"), from their bytes alone:
//!
//! - the immediate names the send (`msg_id`: its sequence number modulo `2^id_bits`, unwrapped
//!   here to the nearest of the highest seen) and the packet (`pkt_off`); the RETH VA must be
//!   `msg_id · max_message + pkt_off · MTU`;
//! - selective repeat: message `m` is send `m`, packet `p` carries bytes `p · MTU …`;
//! - erasure coding: message `m`'s sends are `m · 2L …`, data submessage `j` then its parity
//!   (`L = ⌈chunks / k⌉`, every message of the run being as long); a data packet carries the
//!   message's bytes from `j · k · chunk` on; a parity packet carries its slice of parity chunk
//!   `p / N`, recomputed here from the message's bytes: XOR of the data chunks `c ≡ r (mod m)`,
//!   or the Reed-Solomon recovery shards of `reed_solomon_simd` (an outside implementation of
//!   the MDS code the stack uses), chunks zero-padded. A submessage is whole when the chunks that
//!   arrived intact rebuild it: for XOR each of the `m` groups misses at most one chunk, for MDS
//!   any `k` of the `k + m` arrived (padding chunks of a short last submessage count as there).
//!
//! Every copy must carry the right bytes at the right VA; the run's messages must all be
//! `message_size` long (the grid's are).

use std::collections::{BTreeMap, HashMap};

use rocescope_codec::ext::sdr::{expected_va, Data};
use rocescope_codec::Params;
use rocescope_sim::synth::SynthOptions;
use rocescope_stacks::sdr::Code;
use rocescope_stacks::{message_byte, StackKind};

use crate::packet::Pkt;
use crate::payload::{Delivery, Rebuilt};

fn npkts(len: u64, mtu: u64) -> u64 {
    len.div_ceil(mtu).max(1)
}

/// `len` bytes of message `m` from `off`.
fn bytes(m: u64, off: u64, len: u64) -> Vec<u8> {
    (off..off + len).map(|i| message_byte(m, i)).collect()
}

/// The sequence number nearest `high` whose low `bits` are `id`.
fn unwrap(high: Option<u64>, id: u32, bits: u8) -> u64 {
    let Some(h) = high else { return id as u64 };
    if bits >= 63 {
        return id as u64;
    }
    let span = 1i64 << bits;
    let d = (id as i64 - (h as i64 & (span - 1))).rem_euclid(span);
    let d = if d >= span / 2 { d - span } else { d };
    (h as i64 + d).max(0) as u64
}

/// The shape of one run's messages.
struct Shape {
    mtu: u64,
    /// Packets a chunk.
    n: u64,
    len: u64,
    /// Chunks a message.
    chunks: u64,
    /// `(k, m, code)` for erasure coding.
    ec: Option<(u64, u64, Code)>,
}

impl Shape {
    fn sends(&self) -> u64 {
        match self.ec {
            None => 1,
            Some((k, ..)) => 2 * self.chunks.div_ceil(k),
        }
    }
    fn chunk_bytes(&self) -> u64 {
        self.n * self.mtu
    }
    /// Data submessage `j`: (first byte, bytes).
    fn data_span(&self, j: u64) -> (u64, u64) {
        let k = self.ec.map_or(self.chunks, |e| e.0);
        let off = j * k * self.chunk_bytes();
        (off, self.len.saturating_sub(off).min(k * self.chunk_bytes()))
    }
    /// Packets of send `s` of a message.
    fn packets(&self, s: u64) -> u64 {
        match self.ec {
            None => npkts(self.len, self.mtu),
            Some((_, m, _)) if s % 2 == 1 => m * self.n,
            Some(_) => npkts(self.data_span(s / 2).1, self.mtu),
        }
    }
    /// The parity chunks of submessage `j` of message `msg`.
    fn parity(&self, msg: u64, j: u64) -> Vec<Vec<u8>> {
        let (k, m, code) = self.ec.expect("erasure coding");
        let (off, len) = self.data_span(j);
        let shard = self.chunk_bytes() as usize;
        let data: Vec<Vec<u8>> = (0..k)
            .map(|c| {
                let at = c * shard as u64;
                let mut d = bytes(msg, off + at, len.saturating_sub(at).min(shard as u64));
                d.resize(shard, 0);
                d
            })
            .collect();
        match code {
            Code::Xor => {
                let mut p = vec![vec![0u8; shard]; m as usize];
                for (c, d) in data.iter().enumerate() {
                    for (x, y) in p[c % m as usize].iter_mut().zip(d) {
                        *x ^= y;
                    }
                }
                p
            }
            Code::Mds => reed_solomon_simd::encode(k as usize, m as usize, &data).expect("a Reed-Solomon shape"),
        }
    }
}

/// The messages of one connection (module doc) from `arrived`, its data packets at the
/// receiver's tap in capture order.
pub fn rebuild(opts: &SynthOptions, params: &Params, arrived: &[&Pkt]) -> Delivery {
    let mut d = Delivery::default();
    let mtu = opts.mtu as u64;
    let n = opts.sdr.chunk_packets.max(1) as u64;
    let len = opts.message_size as u64;
    let ec = (opts.stack == StackKind::SdrEc).then_some((opts.sdr.k as u64, opts.sdr.m as u64, opts.sdr.code));
    let shape = Shape { mtu, n, len, chunks: npkts(len, mtu).div_ceil(n), ec };
    let per_msg = shape.sends();
    // Per send: packet offset → every copy right.
    let mut got: BTreeMap<u64, BTreeMap<u64, bool>> = BTreeMap::new();
    let mut parity: HashMap<(u64, u64), Vec<Vec<u8>>> = HashMap::new();
    let mut high: Option<u64> = None;
    for p in arrived {
        let Some(imm) = p.immdt else {
            d.errors.push(format!("frame {}: a data packet without an immediate", p.number));
            continue;
        };
        let im = Data::from_imm(params.sdr_split, imm);
        let seq = unwrap(high, im.msg_id, params.sdr_split.0);
        high = Some(high.map_or(seq, |h| h.max(seq)));
        let (msg, s, off) = (seq / per_msg, seq % per_msg, im.pkt_off as u64);
        if off >= shape.packets(s) {
            d.errors.push(format!("frame {}: packet {off} of a send of {} packets", p.number, shape.packets(s)));
            continue;
        }
        let va_ok = p.reth.map(|r| r.0) == expected_va(params, opts.mtu, im.msg_id, im.pkt_off);
        let right = if ec.is_some() && s % 2 == 1 {
            let chunks = parity.entry((msg, s / 2)).or_insert_with(|| shape.parity(msg, s / 2));
            let at = ((off % n) * mtu) as usize;
            chunks[(off / n) as usize].get(at..at + mtu as usize) == Some(&p.payload[..])
        } else {
            let (start, span) = shape.data_span(if ec.is_some() { s / 2 } else { 0 });
            let at = off * mtu;
            p.payload == bytes(msg, start + at, span.saturating_sub(at).min(mtu))
        };
        if !(va_ok && right) {
            d.errors.push(format!(
                "frame {}: send {seq} packet {off}: {}",
                p.number,
                if va_ok { "wrong bytes" } else { "wrong RETH VA" }
            ));
        }
        *got.entry(seq).or_default().entry(off).or_insert(true) &= va_ok && right;
        // Parity is needed while its message is being rebuilt; drop what is far behind.
        if parity.len() > 256 {
            parity.retain(|&(m, _), _| m + 4 >= msg);
        }
    }
    let Some(last) = got.keys().next_back().map(|s| s / per_msg) else { return d };
    for msg in 0..=last {
        let send = |s: u64| got.get(&(msg * per_msg + s));
        let whole = |s: u64, pkts: std::ops::Range<u64>| {
            send(s).is_some_and(|g| pkts.clone().all(|p| g.get(&p) == Some(&true)))
        };
        let packets: u32 = (0..per_msg).map(|s| send(s).map_or(0, |g| g.len() as u32)).sum();
        if packets == 0 {
            continue;
        }
        let all_right = (0..per_msg).all(|s| send(s).is_none_or(|g| g.values().all(|&ok| ok)));
        let rebuilt = match ec {
            None => whole(0, 0..shape.packets(0)),
            Some((k, m, code)) => (0..per_msg / 2).all(|j| {
                let data_pkts = shape.packets(2 * j);
                let kj = data_pkts.div_ceil(n);
                let have_data = |c: u64| c >= kj || whole(2 * j, c * n..((c + 1) * n).min(data_pkts));
                let have_parity = |r: u64| whole(2 * j + 1, r * n..(r + 1) * n);
                match code {
                    Code::Xor => (0..m).all(|r| {
                        (r..k).step_by(m as usize).filter(|&c| !have_data(c)).count() + !have_parity(r) as usize <= 1
                    }),
                    Code::Mds => {
                        (0..k).filter(|&c| have_data(c)).count() + (0..m).filter(|&r| have_parity(r)).count()
                            >= k as usize
                    }
                }
            }),
        };
        d.messages.push(Rebuilt {
            msg,
            first_opcode: rocescope_codec::ext::sdr::OPCODE_DATA,
            len: if rebuilt { len } else { 0 },
            intact: rebuilt && all_right,
            packets,
        });
    }
    d
}

#[cfg(test)]
mod tests {
    use super::unwrap;

    #[test]
    fn ids_unwrap_to_the_nearest_sequence_number() {
        assert_eq!(unwrap(None, 5, 10), 5);
        assert_eq!(unwrap(Some(1023), 0, 10), 1024);
        assert_eq!(unwrap(Some(1030), 1020, 10), 1020);
        assert_eq!(unwrap(Some(2000), (2000 + 300) % 1024, 10), 2300);
        assert_eq!(unwrap(Some(3), 1022, 10), 0);
    }
}
