//! How one posted message becomes SDR sends (docs/stacks.md "SDR-RDMA"; seed 001 §3.1, §4.1;
//! notes/sdr.md §1.6, §2.2): both ends compute it from the message's length, the sender to send
//! and the receiver to know what its posted receives hold.
//!
//! - Selective repeat: one SDR send, the whole message: `⌈len/MTU⌉` packets (one for an empty
//!   message) in chunks of `N` packets (the last chunk may be short).
//! - Erasure coding: the message's `M` chunks are cut into `L = ⌈M/k⌉` data submessages of `k`
//!   chunks (the last may have fewer), each followed by its parity submessage of `m` full chunks,
//!   in the order `D0, P0, D1, P1, …` (2L sends; notes §1.6 PROPOSED): parity can leave as soon as
//!   its data is encoded (§4.1.2).
//!
//! Every send is one SDR message: it takes the next message sequence number (`msg_seq`), so the
//! next posted receive; its packets are numbered from 0 (`pkt_off`).

use crate::common::npkts;

/// What one SDR send carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The whole message (selective repeat).
    Whole,
    /// Data submessage `j`.
    Data(u32),
    /// Parity submessage `j`.
    Parity(u32),
}

/// One SDR send of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Send {
    pub role: Role,
    /// Its packets and chunks.
    pub packets: u32,
    pub chunks: u32,
    /// For `Whole` and `Data`: its bytes of the message, from `byte_off`, `bytes` long. For
    /// `Parity`: `m` full chunks of parity (`bytes` = m · chunk bytes).
    pub byte_off: u64,
    pub bytes: u64,
}

impl Send {
    /// Payload bytes of packet `p` (0-based).
    pub fn packet_len(&self, p: u32, mtu: u32) -> u32 {
        (self.bytes.saturating_sub(p as u64 * mtu as u64)).min(mtu as u64) as u32
    }
    /// The chunk of packet `p`, and the packets of chunk `c` (`n` packets a chunk).
    pub fn chunk_of(p: u32, n: u32) -> u32 {
        p / n
    }
    pub fn chunk_packets(&self, c: u32, n: u32) -> std::ops::Range<u32> {
        (c * n).min(self.packets)..((c + 1) * n).min(self.packets)
    }
}

/// The erasure code's shape: `k` data and `m` parity chunks a submessage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcShape {
    pub k: u32,
    pub m: u32,
}

/// The sends of a message of `len` bytes: MTU `mtu`, `n` packets a chunk, selective repeat
/// (`ec` None) or erasure coding.
pub fn sends(len: u32, mtu: u32, n: u32, ec: Option<EcShape>) -> Vec<Send> {
    let packets = npkts(len, mtu);
    let chunk_bytes = n as u64 * mtu as u64;
    let Some(EcShape { k, m }) = ec else {
        return vec![Send { role: Role::Whole, packets, chunks: packets.div_ceil(n), byte_off: 0, bytes: len as u64 }];
    };
    let chunks = packets.div_ceil(n);
    let subs = chunks.div_ceil(k);
    let mut out = Vec::with_capacity(2 * subs as usize);
    for j in 0..subs {
        let byte_off = j as u64 * k as u64 * chunk_bytes;
        let bytes = (len as u64).saturating_sub(byte_off).min(k as u64 * chunk_bytes);
        let dp = npkts(bytes as u32, mtu);
        out.push(Send { role: Role::Data(j), packets: dp, chunks: dp.div_ceil(n), byte_off, bytes });
        out.push(Send { role: Role::Parity(j), packets: m * n, chunks: m, byte_off: 0, bytes: m as u64 * chunk_bytes });
    }
    out
}

/// The chunks of a message of `len` bytes (`M`; `n` packets a chunk, the last may be short).
pub fn chunks(len: u32, mtu: u32, n: u32) -> u64 {
    npkts(len, mtu).div_ceil(n) as u64
}

/// The sends of a message: how many (the receives it takes).
pub fn send_count(len: u32, mtu: u32, n: u32, ec: Option<EcShape>) -> u32 {
    match ec {
        None => 1,
        Some(EcShape { k, .. }) => 2 * npkts(len, mtu).div_ceil(n).div_ceil(k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selective_repeat_is_one_send() {
        let s = sends(10_000, 1024, 4, None);
        assert_eq!(s, vec![Send { role: Role::Whole, packets: 10, chunks: 3, byte_off: 0, bytes: 10_000 }]);
        assert_eq!(s[0].packet_len(9, 1024), 10_000 - 9 * 1024);
        assert_eq!(s[0].chunk_packets(2, 4), 8..10);
        assert_eq!(sends(0, 1024, 4, None)[0].packets, 1);
    }

    #[test]
    fn erasure_coding_interleaves_data_and_parity() {
        // 9 chunks of 2 packets (the last short: 17 packets), k = 4, m = 2: D0 P0 D1 P1 D2 P2.
        let len = 16 * 256 + 100;
        let s = sends(len, 256, 2, Some(EcShape { k: 4, m: 2 }));
        assert_eq!(s.len(), 6);
        assert_eq!(send_count(len, 256, 2, Some(EcShape { k: 4, m: 2 })), 6);
        assert_eq!(s[0], Send { role: Role::Data(0), packets: 8, chunks: 4, byte_off: 0, bytes: 2048 });
        assert_eq!(s[1], Send { role: Role::Parity(0), packets: 4, chunks: 2, byte_off: 0, bytes: 1024 });
        assert_eq!(s[4], Send { role: Role::Data(2), packets: 1, chunks: 1, byte_off: 4096, bytes: 100 });
        assert_eq!(s[5].role, Role::Parity(2));
    }
}
