//! What each of SDR's control messages says, kept for the ground truth (docs/truth.md, "SDR"):
//! the per-tap view reads from it which chunks a tap saw the receiver acknowledge or ask for,
//! and when (`observe/sdr.rs`). The messages are UC SEND frames (WIRE.md B.2) the truth records
//! as transmissions of kind `other`; their bytes are gone once delivered, so what they say is
//! read here as they are sent.
//!
//! Memory: one record per control message sent (a CTS, an SR_ACK per completed chunk, …),
//! four bytes per chunk its bitmap marks or its NACK names, kept only when the run keeps its
//! truth. Unlike the rest of the truth's records these are not spilled to disk, and they are
//! not linear in the run: each SR_ACK lists every chunk received past the first missing one, so
//! a message with an early hole costs memory growing with the square of its chunks (docs/truth.md
//! "Memory").

use rocescope_codec::ext::sdr::{Ctrl, CtrlType};
use rocescope_codec::frame::{DecodeOptions, Frame, LinkType};
use rocescope_codec::Warnings;

/// One control message: its transmission, type and message sequence number; an SR_ACK's
/// cumulative ACK and the chunks its bitmap marks received; an SR_NACK's chunks (an EC_NACK's
/// data submessages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtrlNames {
    pub tx: u32,
    pub kind: CtrlType,
    pub msg_seq: u32,
    pub cum_ack: Option<u32>,
    pub sacked: Vec<u32>,
    pub indices: Vec<u32>,
}

/// What an SDR control message (a whole Ethernet frame) says; `None` for a frame that is not one.
pub fn read(frame: &[u8]) -> Option<(CtrlType, u32, Option<u32>, Vec<u32>, Vec<u32>)> {
    let f =
        Frame::parse(LinkType::Ethernet, frame, frame.len(), &DecodeOptions { verify: false, ..Default::default() });
    let payload = f.roce()?.payload();
    let c = Ctrl::parse(payload, payload.len(), &mut Warnings::default())?;
    let cum = match c {
        Ctrl::SrAck { cum_ack, .. } => Some(cum_ack),
        _ => None,
    };
    Some((c.kind(), c.msg_seq(), cum, c.sacked(payload).collect(), c.indices(payload).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
    use rocescope_codec::ext::sdr::{sack_bitmap, CtrlRepr};

    fn frame(payload: Vec<u8>) -> Vec<u8> {
        // A UC SEND Only (opcode 0x24) to the sender's QP.
        let mut r = RoceRepr::new(0x24, 0x100, 77);
        r.payload = &payload;
        let net = NetRepr::Ipv4 { src: [10, 0, 1, 1], dst: [10, 0, 0, 1], tos: 0, ttl: 64, ident: 0 };
        FrameRepr::new(net, r).to_vec()
    }

    #[test]
    fn reads_an_sr_ack_bitmap_and_an_sr_nack() {
        // Chunks 3 and 5 received past a cumulative ACK of 2.
        let mut map = [0u8; 1];
        sack_bitmap(2, 8, |c| c == 3 || c == 5, &mut map);
        let ack = CtrlRepr::SrAck { msg_seq: 9, cum_ack: 2, sack_bits: 8, sack: &map };
        let (kind, seq, cum, sacked, idx) = read(&frame(ack.to_vec())).unwrap();
        assert_eq!((kind, seq, cum, sacked, idx), (CtrlType::SrAck, 9, Some(2), vec![3, 5], vec![]));
        let nack = CtrlRepr::SrNack { msg_seq: 4, indices: &[1, 7] };
        assert_eq!(read(&frame(nack.to_vec())).unwrap(), (CtrlType::SrNack, 4, None, vec![], vec![1, 7]));
        assert_eq!(read(&frame(vec![0xAA; 20])), None, "not a control message");
    }
}
