//! What each of ERD's NACK segments names, kept for the ground truth (docs/truth.md, "ERD"):
//! the per-tap view reads from it which PSNs a tap saw the receiver ask for, and when
//! (`observe.rs`). The segments themselves are TCP frames (WIRE.md B.5) the truth records as
//! transmissions of kind `other`; their bytes are gone once delivered, so the PSNs their NACK
//! messages name are read here as they are sent.
//!
//! Size: one record per NACK segment sent (a resend of a segment is a transmission too), four
//! bytes per PSN named, kept only when the run keeps its truth: on disk when it spills its truth
//! (`spill_var.rs`), in memory when it keeps its records there. ERD names a PSN only while it is
//! missing, so this grows with the run's losses, not its packets.

use rocescope_codec::ext::erd::whole_nacks;
use rocescope_codec::frame::{DecodeOptions, Frame, LinkType};

use crate::spill_var::VarRecord;

/// One NACK segment: its transmission, its TCP sequence number (the tap's reassembly of the
/// stream reads a segment's messages only when its bytes are new) and the PSNs its NACK
/// messages name, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NackNames {
    pub tx: u32,
    pub seq: u32,
    pub psns: Vec<u32>,
}

/// On disk: the sequence number is the fixed part, the PSNs the variable one.
impl VarRecord for NackNames {
    type Head = u32;
    fn tx(&self) -> u32 {
        self.tx
    }
    fn split(&self, words: &mut Vec<u32>) -> u32 {
        words.extend_from_slice(&self.psns);
        self.seq
    }
    fn join(tx: u32, seq: u32, words: &[u32]) -> NackNames {
        NackNames { tx, seq, psns: words.to_vec() }
    }
}

/// The NACK messages a TCP segment (a whole Ethernet frame) carries: its sequence number and the
/// PSNs named; `None` for a segment with no payload (a TCP ACK) or one that is not NACKs.
pub fn read(frame: &[u8]) -> Option<(u32, Vec<u32>)> {
    let f =
        Frame::parse(LinkType::Ethernet, frame, frame.len(), &DecodeOptions { verify: false, ..Default::default() });
    let t = f.tcp()?;
    Some((t.seq, whole_nacks(t.payload)?.map(|e| e.psn).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::ext::erd::{NackEntry, NackRepr};
    use rocescope_stacks::erd::info;
    use rocescope_stacks::Host;

    fn host(ip: [u8; 4]) -> Host {
        Host { ip: std::net::IpAddr::from(ip), mac: [2, 0, 0, 0, 0, ip[3]], qpn: 0x100 }
    }

    #[test]
    fn reads_the_psns_a_segment_names_and_nothing_from_an_ack() {
        let e = |psn| NackEntry { src_qpn: 0x100, dst_qpn: 0x200, psn };
        let mut payload = NackRepr::new(&[e(7), e(9)]).to_vec();
        payload.extend(NackRepr::new(&[e(0xFF_FFFF)]).to_vec());
        let seg = info::frame(host([10, 0, 1, 1]), host([10, 0, 0, 1]), 0, (4791, 4792), 1234, 1, &payload);
        assert_eq!(read(&seg), Some((1234, vec![7, 9, 0xFF_FFFF])));
        let ack = info::frame(host([10, 0, 0, 1]), host([10, 0, 1, 1]), 0, (4792, 4791), 1, 77, &[]);
        assert_eq!(read(&ack), None);
        // Not NACKs: garbage after a good message.
        let mut bad = NackRepr::new(&[e(3)]).to_vec();
        bad.extend([0xAA, 1, 0, 0]);
        let seg = info::frame(host([10, 0, 1, 1]), host([10, 0, 0, 1]), 0, (4791, 4792), 5, 1, &bad);
        assert_eq!(read(&seg), None);
    }
}
