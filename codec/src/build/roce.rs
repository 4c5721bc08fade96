//! The RoCE packet as the builders see it (WIRE.md A.1-A.4): BTH, the extension headers the
//! opcode table calls for, payload and pad, each header emitted by its `Repr`.

use crate::ib::*;

/// The transport part of a RoCE packet: BTH, the extension headers that are `Some` (emitted in
/// wire order), the payload and the pad (`bth.pad_cnt` zero bytes); the ICRC follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoceRepr<'p> {
    pub bth: BthRepr,
    pub rdeth: Option<RdethRepr>,
    pub deth: Option<DethRepr>,
    pub xrceth: Option<XrcethRepr>,
    /// DCP data packets (WIRE.md B.1).
    pub dcpeth: Option<DcpethRepr>,
    pub feth: Option<FethRepr>,
    pub reth: Option<RethRepr>,
    pub atomic_eth: Option<AtomicEthRepr>,
    pub aeth: Option<AethRepr>,
    pub atomic_ack_eth: Option<AtomicAckEthRepr>,
    /// DCP SEND packets and the last packet of a WRITE with Immediate.
    pub sseth: Option<SsethRepr>,
    pub immdt: Option<ImmDtRepr>,
    pub ieth: Option<IethRepr>,
    /// IRN's selective NAK tail after the AETH.
    pub irn_sack: Option<IrnSackRepr>,
    /// Everything after the headers and before the pad (for a CNP, its 16 reserved bytes).
    pub payload: &'p [u8],
}

/// The 16 reserved bytes of a CNP.
pub static CNP_RESERVED: [u8; 16] = [0; 16];

impl<'p> RoceRepr<'p> {
    /// A packet with the given opcode, DestQP and PSN, P_Key 0xFFFF, and every extension header
    /// the opcode table calls for set to zero values (fill them in afterwards).
    pub fn new(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        Self::from_info(opcode, dest_qp, psn, Opcode(opcode).info())
    }

    /// A DCP data packet (tag 10, WIRE.md B.1): as [`Self::new`] with the DCPETH, RETH and
    /// SSNETH the DCP table adds.
    pub fn new_dcp(opcode: u8, dest_qp: u32, psn: u32) -> Self {
        Self::from_info(opcode, dest_qp, psn, Opcode(opcode).info_dcp())
    }

    fn from_info(opcode: u8, dest_qp: u32, psn: u32, info: Option<&OpInfo>) -> Self {
        let mut r = RoceRepr {
            bth: BthRepr { opcode, p_key: 0xffff, dest_qp, psn, ..Default::default() },
            ..Default::default()
        };
        if let Some(info) = info {
            for h in info.headers.iter() {
                match h {
                    Hdr::Rdeth => r.rdeth = Some(Default::default()),
                    Hdr::Deth => r.deth = Some(Default::default()),
                    Hdr::Xrceth => r.xrceth = Some(Default::default()),
                    Hdr::Dcpeth => r.dcpeth = Some(Default::default()),
                    Hdr::Feth => r.feth = Some(Default::default()),
                    Hdr::Reth => r.reth = Some(Default::default()),
                    Hdr::AtomicEth => r.atomic_eth = Some(Default::default()),
                    Hdr::Aeth => r.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: 0 }),
                    Hdr::AtomicAckEth => r.atomic_ack_eth = Some(Default::default()),
                    Hdr::Sseth => r.sseth = Some(Default::default()),
                    Hdr::ImmDt => r.immdt = Some(Default::default()),
                    Hdr::Ieth => r.ieth = Some(Default::default()),
                }
            }
            if info.cnp {
                r.payload = &CNP_RESERVED;
            }
        }
        r
    }

    /// Sets the payload and the PadCnt that brings it to a multiple of four bytes.
    pub fn with_payload(mut self, payload: &'p [u8]) -> Self {
        self.payload = payload;
        self.bth.pad_cnt = ((4 - payload.len() % 4) % 4) as u8;
        self
    }

    /// Bytes of the extension headers.
    pub fn headers_len(&self) -> usize {
        [
            self.rdeth.map(|_| RdethRepr::LEN),
            self.deth.map(|_| DethRepr::LEN),
            self.xrceth.map(|_| XrcethRepr::LEN),
            self.dcpeth.map(|_| DcpethRepr::LEN),
            self.feth.map(|_| FethRepr::LEN),
            self.reth.map(|_| RethRepr::LEN),
            self.atomic_eth.map(|_| AtomicEthRepr::LEN),
            self.aeth.map(|_| AethRepr::LEN),
            self.irn_sack.map(|_| IrnSackRepr::LEN),
            self.atomic_ack_eth.map(|_| AtomicAckEthRepr::LEN),
            self.sseth.map(|_| SsethRepr::LEN),
            self.immdt.map(|_| ImmDtRepr::LEN),
            self.ieth.map(|_| IethRepr::LEN),
        ]
        .iter()
        .flatten()
        .sum()
    }

    /// Length from the BTH to the ICRC inclusive.
    pub fn buffer_len(&self) -> usize {
        BthRepr::LEN + self.headers_len() + self.payload.len() + self.bth.pad_cnt as usize + 4
    }

    /// Writes BTH … pad into `buf` (at least `buffer_len() - 4` bytes); the ICRC is not written.
    pub fn emit(&self, buf: &mut [u8]) {
        self.bth.emit(&mut buf[..BthRepr::LEN]);
        let mut off = BthRepr::LEN;
        let mut put = |len: usize, f: &dyn Fn(&mut [u8])| {
            f(&mut buf[off..off + len]);
            off += len;
        };
        if let Some(h) = self.rdeth {
            put(RdethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.deth {
            put(DethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.xrceth {
            put(XrcethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.dcpeth {
            put(DcpethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.feth {
            put(FethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.reth {
            put(RethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.atomic_eth {
            put(AtomicEthRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.aeth {
            put(AethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.irn_sack {
            put(IrnSackRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.atomic_ack_eth {
            put(AtomicAckEthRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.sseth {
            put(SsethRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.immdt {
            put(ImmDtRepr::LEN, &|b| h.emit(b));
        }
        if let Some(h) = self.ieth {
            put(IethRepr::LEN, &|b| h.emit(b));
        }
        let payload = self.payload;
        put(payload.len(), &|b| b.copy_from_slice(payload));
        put(self.bth.pad_cnt as usize, &|b| b.fill(0));
    }

    /// Reads every header of a parsed packet back into a `Repr` (the inverse of [`Self::emit`]).
    pub fn parse(p: &RocePacket<'p>) -> Self {
        RoceRepr {
            bth: BthRepr::parse(&p.bth()),
            rdeth: p.rdeth().map(|v| RdethRepr::parse(&v)),
            deth: p.deth().map(|v| DethRepr::parse(&v)),
            xrceth: p.xrceth().map(|v| XrcethRepr::parse(&v)),
            dcpeth: p.dcpeth().map(|v| DcpethRepr::parse(&v)),
            feth: p.feth().map(|v| FethRepr::parse(&v)),
            reth: p.reth().map(|v| RethRepr::parse(&v)),
            atomic_eth: p.atomic_eth().map(|v| AtomicEthRepr::parse(&v)),
            aeth: p.aeth().map(|v| AethRepr::parse(&v)),
            atomic_ack_eth: p.atomic_ack_eth().map(|v| AtomicAckEthRepr::parse(&v)),
            sseth: p.sseth().map(|v| SsethRepr::parse(&v)),
            immdt: p.immdt().map(|v| ImmDtRepr::parse(&v)),
            ieth: p.ieth().map(|v| IethRepr::parse(&v)),
            irn_sack: p.irn_sack().map(|v| IrnSackRepr::parse(&v)),
            payload: if p.info().is_some_and(|i| i.cnp) {
                // A CNP has no extension header: its reserved bytes follow the BTH (fewer than 16
                // when the UDP length is short).
                p.bytes().get(BthRepr::LEN..p.payload_offset()).unwrap_or(&[])
            } else {
                p.payload()
            },
        }
    }
}
