//! rocescope-wirecheck (not published): judges the reference stacks (`rocescope-stacks`) and the
//! fabric simulator (`rocescope-sim`) from the wire, not from their own labels (issue 9).
//!
//! A `synth` run is read back as a user would read it: the pcapng is decoded frame by frame with
//! the codec ([`packet`]), and every count comes from the frames' bytes: BTH PSNs, AETH
//! syndromes and MSNs, IRN SACKs, DCP tags, DCPETH MSNs, RETH VAs, payload bytes. Nothing the
//! stacks label (`TxInfo`'s retransmission reason, `Delivered { intact }`) is used.
//!
//! - [`wire`]: the capture with its tap layout and the connections found in it.
//! - [`ledger`]: per-PSN transmissions and retransmissions at the NIC a flow leaves, and losses
//!   between the two ends' taps.
//! - [`judge`]: the sender at its own tap: resends of already-acknowledged PSNs, Go-Back-N's
//!   go-back points against the NAKs, completions.
//! - [`payload`]: every message rebuilt from the bytes that reached the receiver.
//! - [`truth_cmp`]: the truth document's per-tap frames, retransmissions and losses against all
//!   of that; [`spurious`]: its `spurious` labels against the copy the receiver's tap shows
//!   accepted; [`tshark`]: tshark's reading of the same BTHs.
//! - [`harness_wire`]: the stacks' two-node test harness seen as a two-tap capture.
//! - [`run`]: runs `synth` to files; [`mutants`]: faulty stacks the checks must catch.
//! - [`verdict`]: all of the above over one run, with the invariants of issue 9's grid;
//!   [`grid`]: one cell of that grid.
//! - [`replayed`]: `replay` over a grid cell's capture, which must find no departure.
//! - [`research`]: the same for the research transports (SDR-RDMA, Flor, ERD: issue 13), whose
//!   messages are not PSN sequences.

pub mod grid;
pub mod harness_wire;
pub mod judge;
pub mod ledger;
pub mod mutants;
pub mod packet;
pub mod payload;
pub mod replayed;
pub mod research;
pub mod run;
pub mod spurious;
pub mod timeline_cmp;
pub mod truth_cmp;
pub mod tshark;
pub mod verdict;
pub mod wire;
