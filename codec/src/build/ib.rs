//! Native InfiniBand packets (link type 247, docs/link-types.md): LRH · GRH (LNH 3) or not
//! (LNH 2) · the RoCE packet's transport part · ICRC · VCRC, with LNH, PktLen, the GRH's PayLen,
//! the ICRC and the VCRC computed.

use super::roce::RoceRepr;
use crate::ib::icrc::{self, IcrcNet};
use crate::ib::{vcrc, LrhRepr};

/// The GRH of a global packet (IBTA Vol. 1 §8.3: the layout RoCEv1 carries too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IbGrhRepr {
    pub src_gid: [u8; 16],
    pub dst_gid: [u8; 16],
    pub traffic_class: u8,
    pub flow_label: u32,
    pub hop_limit: u8,
}

/// A whole native InfiniBand packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IbFrameRepr<'p> {
    /// The LRH as written, but for LNH (2, or 3 with a GRH) and PktLen, which are computed.
    pub lrh: LrhRepr,
    /// A global packet's GRH.
    pub grh: Option<IbGrhRepr>,
    pub roce: RoceRepr<'p>,
}

impl IbFrameRepr<'_> {
    /// Appends the packet (through its VCRC) to `out`; returns its length.
    pub fn emit(&self, out: &mut Vec<u8>) -> usize {
        let start = out.len();
        let grh_len = if self.grh.is_some() { 40 } else { 0 };
        let roce_len = self.roce.buffer_len();
        let pkt_len = LrhRepr::LEN + grh_len + roce_len;
        let lrh = LrhRepr { lnh: if self.grh.is_some() { 3 } else { 2 }, pkt_len: (pkt_len / 4) as u16, ..self.lrh };
        out.resize(start + pkt_len, 0);
        let (lrh_buf, rest) = out[start..].split_at_mut(LrhRepr::LEN);
        lrh.emit(lrh_buf);
        // (The LRH has no read-only field: its reserved bits are `Repr` fields, written as given.)
        let (grh_buf, roce) = rest.split_at_mut(grh_len);
        if let Some(g) = self.grh {
            let w = 6u32 << 28 | (g.traffic_class as u32) << 20 | (g.flow_label & 0xf_ffff);
            grh_buf[0..4].copy_from_slice(&w.to_be_bytes());
            grh_buf[4..6].copy_from_slice(&(roce_len as u16).to_be_bytes());
            grh_buf[6] = 0x1b;
            grh_buf[7] = g.hop_limit;
            grh_buf[8..24].copy_from_slice(&g.src_gid);
            grh_buf[24..40].copy_from_slice(&g.dst_gid);
        }
        self.roce.emit(roce);
        let covered = roce_len - 4;
        let net = if self.grh.is_some() { IcrcNet::Grh { grh: grh_buf } } else { IcrcNet::Lrh { lrh: lrh_buf } };
        let crc = icrc::compute(net, &roce[..covered]);
        roce[covered..].copy_from_slice(&crc.to_le_bytes());
        let v = vcrc::compute(&out[start..start + pkt_len]);
        out.extend_from_slice(&v.to_le_bytes());
        out.len() - start
    }

    /// The packet as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(64 + self.roce.payload.len());
        self.emit(&mut v);
        v
    }
}
