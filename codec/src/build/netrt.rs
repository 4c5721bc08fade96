//! NetRT messages (WIRE.md B.4): a [`NetrtRepr`] body as a whole RoCE packet.

use super::roce::RoceRepr;
use crate::ext::netrt::NetrtRepr;
use crate::ib::psn;

impl NetrtRepr {
    /// The RoCE packet carrying `body` (from [`Self::to_vec`]) for the flow's DestQP: the pinned
    /// BTH (SE, M, PadCnt, TVer, byte 4 and A all 0) with the body's PSN and the P_Key given.
    pub fn roce<'b>(&self, opcode: u8, dest_qp: u32, p_key: u16, body: &'b [u8]) -> RoceRepr<'b> {
        let mut r = RoceRepr::new(opcode, dest_qp, self.psn() & psn::MASK);
        r.bth.p_key = p_key;
        r.payload = body;
        r
    }
}
