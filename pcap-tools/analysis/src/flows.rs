//! The flow table: one entry per direction of one QP between two addresses (source address,
//! destination address, BTH DestQP), in order of first appearance. Memory grows with the
//! number of flows, not of packets.

use std::collections::HashMap;
use std::net::IpAddr;

use rocescope_codec::decoder::Decoded;
use rocescope_codec::Profile;

/// What the table knows of one flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub destqp: u32,
    /// The profile of the flow's latest packet (detection labels a flow once it is sure).
    pub profile: Profile,
    pub packets: u64,
    /// Sum of the frames' lengths on the wire.
    pub bytes: u64,
    pub first_frame: u64,
    pub last_frame: u64,
}

impl Flow {
    /// The flow's name, `SRC>DST/DESTQP`.
    pub fn id(&self) -> String {
        format!("{}>{}/{}", self.src, self.dst, self.destqp)
    }
}

/// Flows in order of first appearance.
#[derive(Default, Debug)]
pub struct FlowTable {
    index: HashMap<(IpAddr, IpAddr, u32), usize>,
    flows: Vec<Flow>,
}

impl FlowTable {
    /// Counts a decoded frame of `orig_len` bytes on the wire, frame number `number`; frames
    /// without a RoCE packet and addresses are not part of any flow.
    pub fn add(&mut self, d: &Decoded<'_, '_>, orig_len: u32, number: u64) {
        let (Some(p), Some((src, dst))) = (d.frame.roce(), d.frame.ip_addrs()) else { return };
        let destqp = p.bth().dest_qp();
        let n = self.flows.len();
        let i = *self.index.entry((src, dst, destqp)).or_insert(n);
        if i == n {
            self.flows.push(Flow {
                src,
                dst,
                destqp,
                profile: d.profile(),
                packets: 0,
                bytes: 0,
                first_frame: number,
                last_frame: number,
            });
        }
        let f = &mut self.flows[i];
        f.profile = d.profile();
        f.packets += 1;
        f.bytes += orig_len as u64;
        f.last_frame = number;
    }

    /// The flows, in order of first appearance.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }
}
