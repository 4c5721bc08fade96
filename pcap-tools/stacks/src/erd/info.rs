//! ERD's retransmission info path (seed 004 §4.4: "implemented using TCP/IP for end-to-end
//! connectivity"), modelled minimally: one stream from the data receiver (the NACKs) to the data
//! sender, which answers with cumulative ACKs. Segments are taken in order only; the NACK side
//! keeps what is unacknowledged and, when its timer fires, sends it all again from the oldest.
//! No handshake (both streams start at sequence number 1), no window, no congestion control.

use std::collections::VecDeque;
use std::net::IpAddr;

use rocescope_codec::build::{NetRepr, TcpFrameRepr};
use rocescope_codec::frame::TcpFlags;

use crate::{Host, Nanos};

/// An Ethernet · IP · TCP frame from `src` to `dst` (ACK set; PSH when it carries bytes).
pub fn frame(src: Host, dst: Host, tos: u8, ports: (u16, u16), seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    let net = match (src.ip, dst.ip) {
        (IpAddr::V4(s), IpAddr::V4(d)) => NetRepr::Ipv4 { src: s.octets(), dst: d.octets(), tos, ttl: 64, ident: 0 },
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            NetRepr::Ipv6 { src: s.octets(), dst: d.octets(), traffic_class: tos, flow_label: 0, hop_limit: 64 }
        }
        _ => panic!("hosts of different IP families"),
    };
    let mut t = TcpFrameRepr::new(net, ports.0, ports.1, seq, payload);
    t.eth_src = src.mac;
    t.eth_dst = dst.mac;
    t.ack = ack;
    t.flags = if payload.is_empty() { TcpFlags::ACK } else { TcpFlags::ACK | TcpFlags::PSH };
    let mut out = Vec::new();
    t.emit(&mut out);
    out
}

/// The sending end of the stream (the data receiver's NACKs).
#[derive(Debug)]
pub struct InfoSender {
    /// Next sequence number to send.
    next: u32,
    /// Sent and not acknowledged: (sequence number, bytes).
    unacked: VecDeque<(u32, Vec<u8>)>,
}

impl Default for InfoSender {
    fn default() -> Self {
        InfoSender { next: 1, unacked: VecDeque::new() }
    }
}

impl InfoSender {
    /// Queues `bytes` as one segment; returns its sequence number.
    pub fn push(&mut self, bytes: Vec<u8>) -> u32 {
        let seq = self.next;
        self.next = self.next.wrapping_add(bytes.len() as u32);
        self.unacked.push_back((seq, bytes));
        seq
    }

    /// A cumulative ACK: every byte below `ack` arrived.
    pub fn on_ack(&mut self, ack: u32) {
        while let Some((seq, b)) = self.unacked.front() {
            let end = seq.wrapping_add(b.len() as u32);
            if (ack.wrapping_sub(end) as i32) < 0 {
                break;
            }
            self.unacked.pop_front();
        }
    }

    /// What to send again when the timer fires (every unacknowledged segment, oldest first).
    pub fn unacked(&self) -> impl Iterator<Item = (u32, &[u8])> {
        self.unacked.iter().map(|(s, b)| (*s, b.as_slice()))
    }

    pub fn is_idle(&self) -> bool {
        self.unacked.is_empty()
    }
}

/// The receiving end (the data sender): the next byte expected.
#[derive(Debug)]
pub struct InfoReceiver {
    next: u32,
}

impl Default for InfoReceiver {
    fn default() -> Self {
        InfoReceiver { next: 1 }
    }
}

impl InfoReceiver {
    /// A segment: its bytes when they are the next ones in order (else `None`: old, or beyond a
    /// hole the sender will fill); the ACK number to answer with is then [`Self::ack`].
    pub fn on_segment<'a>(&mut self, seq: u32, payload: &'a [u8]) -> Option<&'a [u8]> {
        if seq != self.next || payload.is_empty() {
            return None;
        }
        self.next = self.next.wrapping_add(payload.len() as u32);
        Some(payload)
    }

    pub fn ack(&self) -> u32 {
        self.next
    }
}

/// The time an info-path retransmission timer of `rto` set at `now` fires.
pub fn deadline(now: Nanos, rto: Nanos) -> Nanos {
    now + rto.max(1)
}
