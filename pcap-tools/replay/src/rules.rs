//! The rules `rocescope replay` judges, written once: the report names them, docs/replay.md
//! lists them (checked by a test against this table).

/// One rule: its id (`stack.rule`), where it comes from, and what it asks.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub id: &'static str,
    /// The section of the specification or paper the behaviour is taken from.
    pub source: &'static str,
    pub summary: &'static str,
}

/// How far below its value a timer or interval may fire before it departs: the larger of 10%
/// and 5 µs (the "10% or 5 µs", taken as the more lenient, so a NIC's timer granularity
/// is no departure).
pub fn tolerance(value_ns: u64) -> u64 {
    (value_ns / 10).max(5_000)
}

/// The needless-retransmission rule of `kind`'s stack (judged at the requester's tap, suspected
/// at the others).
pub fn retx_needless(kind: rocescope_stacks::StackKind) -> Rule {
    match kind {
        rocescope_stacks::StackKind::Gbn | rocescope_stacks::StackKind::Netrt => GBN_RETX_NEEDLESS,
        // (SDR and Flor connections are listed as not judged: `connections` in lib.rs.)
        rocescope_stacks::StackKind::Irn
        | rocescope_stacks::StackKind::SdrSr
        | rocescope_stacks::StackKind::SdrEc
        | rocescope_stacks::StackKind::Flor
        | rocescope_stacks::StackKind::Erd => IRN_RETX_NEEDLESS,
        rocescope_stacks::StackKind::Dcp => DCP_RETX_NEEDLESS,
    }
}

macro_rules! rules {
    ($($name:ident: $id:literal, $source:literal, $summary:literal;)*) => {
        $(pub const $name: Rule = Rule { id: $id, source: $source, summary: $summary };)*
        /// Every rule, in the order the documentation lists them.
        pub const ALL: &[Rule] = &[$($name),*];
    };
}

rules! {
    GBN_NAK_MISSING: "gbn.nak-missing", "IBTA Vol. 1 §9.7.5 (responder: an out-of-sequence request gets a PSN sequence error NAK)",
        "the first request packet ahead of the expected PSN is answered by a NAK (PSN sequence error) carrying the expected PSN";
    GBN_NAK_REPEATED: "gbn.nak-repeated", "IBTA Vol. 1 §9.7.5 (one NAK per sequence error)",
        "no second NAK for the same sequence error: the responder stays silent until the expected PSN arrives";
    GBN_NAK_UNEXPECTED: "gbn.nak-unexpected", "IBTA Vol. 1 §9.7.5",
        "a PSN sequence error NAK only when a request packet arrived ahead of the expected PSN, naming that PSN";
    GBN_ACK_AHEAD: "gbn.ack-ahead", "IBTA Vol. 1 §9.7.5 (coalesced ACKs acknowledge what was received in order)",
        "an ACK never acknowledges a PSN the responder has not received, in order";
    GBN_ACK_REGRESSED: "gbn.ack-regressed", "IBTA Vol. 1 §9.7.5, §9.7.6 (ACKs are cumulative)",
        "an ACK's PSN and MSN never go back below an earlier ACK's";
    GBN_READ_ORDER: "gbn.read-out-of-order", "IBTA Vol. 1 §9.7.5 (the responder returns a READ's responses in PSN order)",
        "a READ's responses leave the responder in PSN order: each Middle or Last the PSN after the response before it";
    GBN_RETX_NEEDLESS: "gbn.retx-needless", "IBTA Vol. 1 §9.7 (the requester resends from the NAK'd or the oldest unacknowledged PSN)",
        "the requester never sends again a packet an ACK (or a NAK, for the PSNs before the one it names) has acknowledged";
    GBN_GO_BACK_SHORT: "gbn.go-back-short", "IBTA Vol. 1 §9.7.5 (a NAK'd requester resends from the PSN the NAK names)",
        "after a NAK, the requester's next request packet is the PSN the NAK names";
    GBN_TIMEOUT_EARLY: "gbn.timeout-early", "IBTA Vol. 1 §9.7.6.1.3 (local ACK timeout: 4.096 µs · 2^t)",
        "the local ACK timer fires no earlier than its value (less the larger of 10% and 5 µs) after it started";
    GBN_TIMEOUT_LATE: "gbn.timeout-late", "IBTA Vol. 1 §9.7.6.1.3 (local ACK timeout: 4.096 µs · 2^t)",
        "the local ACK timer fires no later than its value (plus the larger of 10% and 5 µs) after it started";
    IRN_SACK_MISSING: "irn.sack-missing", "IRN (Mittal et al., SIGCOMM 2018) §3; the SACK layout of docs/wire.md",
        "every out-of-order request packet is answered by a selective NAK naming the expected PSN and the packet's PSN";
    IRN_SACK_UNEXPECTED: "irn.sack-unexpected", "IRN §3",
        "a selective NAK only for a packet that arrived out of order, at most once per arrival";
    IRN_ACK_AHEAD: "irn.ack-ahead", "IRN §3 (cumulative ACK of the in-order prefix)",
        "an ACK never acknowledges a PSN the responder has not received, in order";
    IRN_ACK_REGRESSED: "irn.ack-regressed", "IRN §3", "an ACK's PSN and MSN never go back below an earlier ACK's";
    IRN_RETX_NEEDLESS: "irn.retx-needless", "IRN §3 (selective retransmission of what is not acknowledged)",
        "the requester never sends again a packet the cumulative ACK has covered";
    IRN_TIMEOUT_EARLY: "irn.timeout-early", "IRN §3.1 (RTO_low, RTO_high)",
        "the retransmission timer fires no earlier than RTO_low (less the larger of 10% and 5 µs) after it started";
    IRN_TIMEOUT_LATE: "irn.timeout-late", "IRN §3.1 (RTO_low, RTO_high)",
        "the retransmission timer fires no later than its value, RTO_low or RTO_high (plus the larger of 10% and 5 µs), after it started";
    DCP_HO_UNANSWERED: "dcp.ho-unanswered", "DCP paper §4.1 (the receiver returns every header-only packet to the sender)",
        "every header-only (trimmed) packet that reaches the receiver is bounced back to the sender";
    DCP_HO_UNEXPECTED: "dcp.ho-unexpected", "DCP paper §4.1",
        "a header-only packet goes back to the sender only for one that reached the receiver, once";
    DCP_EMSN_AHEAD: "dcp.emsn-ahead", "DCP paper §4.5 (eMSN: the first message not yet complete)",
        "an ACK's eMSN never passes a message the receiver has not received whole";
    DCP_RETX_NEEDLESS: "dcp.retx-needless", "DCP paper §4.5 (the messages before the eMSN are complete)",
        "the requester never sends again a packet of a message an ACK's eMSN has passed";
    DCP_EMSN_REGRESSED: "dcp.emsn-regressed", "DCP paper §4.5", "an ACK's eMSN never goes back";
    DCQCN_CNP_FAST: "dcqcn.cnp-fast", "DCQCN (Zhu et al., SIGCOMM 2015) §3.1 (the notification point sends at most one CNP per flow every N µs)",
        "the responder's NIC sends a connection no two CNPs closer than the CNP interval (less the larger of 10% and 5 µs)";
    DCP_TIMEOUT_EARLY: "dcp.timeout-early", "DCP paper §4.5 (the coarse timeout)",
        "the coarse timer fires no earlier than its first-round value (less the larger of 10% and 5 µs) after it started";
    NETRT_RESEND_UNASKED: "netrt.resend-unasked", "NetRT paper §III-B (the source ToR resends from its pool what a retransmission request asks for)",
        "the source ToR resends (with the in-network mark) only PSNs a retransmission request asked for: the request's ePSN and the holes below its highest held PSN";
    NETRT_UNFULFILLED_UNASKED: "netrt.unfulfilled-unasked", "NetRT paper §III-B, Algorithm 2 (an unfulfilled request answers a request the pool cannot serve)",
        "an unfulfilled request names a PSN a retransmission request asked for";
    ERD_RESEND_UNASKED: "erd.resend-unasked", "ERD paper §4.4 (the sender resends what a NACK names, from its RetryQ)",
        "the sender sends a PSN again only after a NACK named it, once per naming";
    FLOR_RESEND_ACKED: "flor.resend-acked", "Flor paper §5 (a WQE is resent when lost: a gap in the ACKs or the RTO)",
        "the sender sends a WQE again (WRITE_RETX, a SEND retransmission, the chunk itself) only while an ACK has not acknowledged it";
    FLOR_ACK_LATE: "flor.ack-late", "Flor paper §5.1 (software ACKs: the four triggers and the 120 µs timer)",
        "every WQE the receiver got whole is in an ACK that leaves within the 120 µs ACK timer";
    FLOR_ACK_SLOW: "flor.ack-slow", "Flor paper §5.1 (software ACKs: sent at once on a WQE with the hint or an out-of-order reliable number)",
        "an ACK leaves at once (within the reaction time) on a WQE with the hint or an out-of-order reliable number";
    SDR_RESEND_ACKED: "sdr.resend-acked", "SDR-RDMA paper §3.2-4 (selective repeat resends unacknowledged chunks; erasure coding stops at the EC_ACK)",
        "the sender sends a packet again only while no SR_ACK shows its chunk received and no EC_ACK its message decoded";
    ERD_NACK_UNEXPECTED: "erd.nack-unexpected", "ERD paper §4.3 (a scan names the PSNs missing from the bitmap)",
        "a NACK names only PSNs the receiver has not received";
    SDR_NACK_UNEXPECTED: "sdr.nack-unexpected", "SDR-RDMA paper §4.1 (the SR_NACK names chunks missing from the chunk bitmap)",
        "an SR_NACK names only chunks the receiver has not received";
    DCP_TIMEOUT_LATE: "dcp.timeout-late", "DCP paper §4.5 (the coarse timeout)",
        "the coarse timer fires no later than its first-round value (plus the larger of 10% and 5 µs) after it started";
}
