//! Native InfiniBand's LRH (docs/link-types.md) and the extension headers other than the AETH
//! (WIRE.md A.3; DCP's DCPETH and SSNETH, B.1; IRN's SACK tail): views and `Repr`s from their
//! declarations in `crate::layout`. Reserved bits are skipped on parse and written as zero on
//! emit (the LRH's and the BTH's reserved bits are `Repr` fields, written as given).

use super::fixed_header::fixed_header;

crate::layout::lrh!(fixed_header);
crate::layout::rdeth!(fixed_header);
crate::layout::deth!(fixed_header);
crate::layout::xrceth!(fixed_header);
crate::layout::feth!(fixed_header);
crate::layout::reth!(fixed_header);
crate::layout::atomic_eth!(fixed_header);
crate::layout::atomic_ack_eth!(fixed_header);
crate::layout::immdt!(fixed_header);
crate::layout::ieth!(fixed_header);
crate::layout::irn_sack!(fixed_header);
crate::layout::dcpeth!(fixed_header);
crate::layout::sseth!(fixed_header);
