//! SDR data packets (WIRE.md B.2): a [`DataRepr`] as a whole RoCE packet.

use super::roce::RoceRepr;
use crate::ext::sdr::{DataRepr, OPCODE_DATA};
use crate::ib::{ImmDtRepr, RethRepr};
use crate::params::Params;

impl DataRepr {
    /// UC RDMA WRITE Only with Immediate: RETH (VA for `mtu`, R_Key, DMA Length = payload
    /// bytes), the immediate and the payload.
    pub fn roce<'p>(&self, params: &Params, mtu: u32, dest_qp: u32, psn: u32, payload: &'p [u8]) -> RoceRepr<'p> {
        let mut r = RoceRepr::new(OPCODE_DATA, dest_qp, psn).with_payload(payload);
        r.reth = Some(RethRepr { va: self.va(params, mtu), r_key: self.r_key, dma_len: payload.len() as u32 });
        r.immdt = Some(ImmDtRepr { imm: self.imm(params.sdr_split) });
        r
    }
}
