//! The IBTA extension headers made of whole-byte fields (WIRE.md A.3). Reserved bytes are
//! skipped on parse and written as zero on emit. AETH and FETH, which hold bit fields, live in
//! `aeth.rs` and `feth.rs`.

use super::bytes::fixed_header;

fixed_header! {
    /// RDETH (Reliable Datagram ETH): reserved 8 · EE-Context 24.
    Rdeth / RdethRepr, len 4, Rdeth {
        eecnxt: u32 = 1..4,
    }
}

fixed_header! {
    /// DETH (Datagram ETH): Q_Key 32 · reserved 8 · SrcQP 24.
    Deth / DethRepr, len 8, Deth {
        q_key: u32 = 0..4,
        src_qp: u32 = 5..8,
    }
}

fixed_header! {
    /// XRCETH: reserved 8 · XRC SRQ 24.
    Xrceth / XrcethRepr, len 4, Xrceth {
        xrc_srq: u32 = 1..4,
    }
}

fixed_header! {
    /// RETH (RDMA ETH): VA 64 · R_Key 32 · DMA Length 32.
    Reth / RethRepr, len 16, Reth {
        va: u64 = 0..8,
        r_key: u32 = 8..12,
        dma_len: u32 = 12..16,
    }
}

fixed_header! {
    /// AtomicETH: VA 64 · R_Key 32 · Swap (or Add) Data 64 · Compare Data 64.
    AtomicEth / AtomicEthRepr, len 28, AtomicEth {
        va: u64 = 0..8,
        r_key: u32 = 8..12,
        swap_add: u64 = 12..20,
        compare: u64 = 20..28,
    }
}

fixed_header! {
    /// AtomicAckETH: original remote data 64.
    AtomicAckEth / AtomicAckEthRepr, len 8, AtomicAckEth {
        orig_rem_data: u64 = 0..8,
    }
}

fixed_header! {
    /// ImmDt: 32 bits of immediate data.
    ImmDt / ImmDtRepr, len 4, ImmDt {
        imm: u32 = 0..4,
    }
}

fixed_header! {
    /// IETH (Invalidate ETH): R_Key 32.
    Ieth / IethRepr, len 4, Ieth {
        r_key: u32 = 0..4,
    }
}

fixed_header! {
    /// IRN's selective NAK tail (WIRE.md A.3, pinned): reserved 8 · SACK PSN 24, after the AETH.
    IrnSack / IrnSackRepr, len 4, IrnSack {
        sack_psn: u32 = 1..4,
    }
}

fixed_header! {
    /// DCPETH (DCP, WIRE.md B.1, pinned): MSN 24 · sRetryNo 8, right after the BTH.
    Dcpeth / DcpethRepr, len 4, Dcpeth {
        msn: u32 = 0..3,
        sretryno: u8 = 3..4,
    }
}

fixed_header! {
    /// SSNETH (DCP, WIRE.md B.1, pinned): SSN 24 · reserved 8.
    Sseth / SsethRepr, len 4, Sseth {
        ssn: u32 = 0..3,
    }
}
