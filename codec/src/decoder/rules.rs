//! The detection rules of `auto` (WIRE.md part B, "Detection rules"; the table is in
//! [`super`]'s documentation): each tried on one packet of a flow not yet known, with the flow's
//! memory ([`FlowState`]) and the decoder's per-address-pair sets.

use crate::ext::{dcp, erd, flor, netrt, sdr, Ext};
use crate::frame::{DecodeOptions, Frame, LinkType};
use crate::ib::{Opcode, Position};
use crate::profile::Profile;

use super::{Decoder, FlowState};

impl Decoder {
    /// What a detection rule compares: the packet decoded with `p`, and the number of problems
    /// of its `std` decoding — both as verification would have them.
    pub(super) fn candidate<'a>(&self, std: &Frame<'a>, link: LinkType, orig_len: usize, p: Profile) -> (Frame<'a>, usize) {
        if !self.lazy_verify || self.opts.no_verify {
            return (self.redecode(*std, link, orig_len, p), std.warnings.problem_count());
        }
        let verified = |profile| DecodeOptions { verify: true, profile, params: self.opts.params };
        let std = Frame::parse(link, std.data(), orig_len, &verified(Profile::Std));
        let problems = std.warnings.problem_count();
        let f = if p == Profile::Std || !std.is_decoded() { std } else { Frame::parse(link, std.data(), orig_len, &verified(p)) };
        (f, problems)
    }

    /// Applies one detection rule; returns the packet decoded with `p` when it identifies
    /// itself as such.
    #[inline(always)]
    pub(super) fn try_rule<'a>(&self, p: Profile, std: &Frame<'a>, link: LinkType, orig_len: usize, state: &mut FlowState) -> Option<Frame<'a>> {
        let roce = std.roce()?;
        let params = &self.opts.params;
        let opcode = roce.opcode().0;
        match p {
            Profile::Netrt => {
                if opcode != params.netrt_opcode {
                    return None;
                }
                let (f, _) = self.candidate(std, link, orig_len, p);
                let ok = matches!(f.ext(), Ext::Netrt(netrt::Netrt::Request { .. } | netrt::Netrt::Unfulfilled { .. }));
                (ok && f.warnings.problem_count() == 0).then_some(f)
            }
            Profile::Dcp => {
                if std.is_rocev1() || state.dcp_refuted {
                    return None;
                }
                let tag = dcp::tag(std.tos()?, params.dcp_tag_shift);
                if tag == dcp::TAG_NONE {
                    return None;
                }
                if tag == dcp::TAG_ACK {
                    // A DCP ACK (an RC Acknowledge tagged 01, its AETH MSN the eMSN) answers a
                    // flow already shown to be DCP in the other direction; alone, an ACK tag is
                    // no evidence (other DSCP values carry it).
                    let (src, dst) = std.ip_addrs()?;
                    if opcode != dcp::OPCODE_ACK || !self.dcp_senders.contains(&(dst, src)) {
                        return None;
                    }
                    let (f, std_problems) = self.candidate(std, link, orig_len, p);
                    return (f.warnings.problem_count() <= std_problems).then_some(f);
                }
                // Only packets that would carry DCP headers say anything: a tagged READ response
                // is as ordinary under DCP as outside it.
                if tag == dcp::TAG_DATA && !Opcode(opcode).is_dcp_request() {
                    return None;
                }
                state.dcp_tagged = state.dcp_tagged.saturating_add(1);
                if !Opcode(opcode).is_write() {
                    state.dcp_idle = state.dcp_idle.saturating_add(1);
                }
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                let r = f.roce()?;
                if tag == dcp::TAG_HO {
                    let ho = r.wire_len() == 15 && f.warnings.problem_count() == 0;
                    state.dcp_refuted |= !ho;
                    return ho.then_some(f);
                }
                if f.warnings.problem_count() > std_problems {
                    // The DCP layout does not even parse: ordinary traffic with this DSCP.
                    state.dcp_refuted = true;
                    return None;
                }
                let (Some(reth), true) = (r.reth(), Opcode(opcode).is_write()) else { return None };
                let psn = r.bth().psn();
                match Opcode(opcode).position() {
                    Some(Position::First) => {
                        state.dcp_first = Some((psn, reth.va(), reth.dma_len(), r.payload_len() as u32));
                        None
                    }
                    Some(Position::Middle | Position::Last) => {
                        let (fpsn, fva, flen, fpay) = state.dcp_first?;
                        let k = crate::ib::psn::diff(fpsn, psn);
                        let want_va = fva.wrapping_add((k as i64 as u64).wrapping_mul(fpay as u64));
                        let ok = k > 0 && flen != 0 && reth.dma_len() == flen && reth.va() == want_va;
                        // Only a packet of the First's own message (the PSNs after it, as many as
                        // its DMA length fills) must agree with it: on a sprayed or lossy path a
                        // Middle of another message arrives between them, or before its First.
                        let packets = if fpay == 0 { 0 } else { flen.div_ceil(fpay) as i64 };
                        let same_message = k > 0 && (k as i64) < packets;
                        state.dcp_refuted |= !ok && (same_message || flen == 0);
                        ok.then_some(f)
                    }
                    _ => None,
                }
            }
            Profile::Sdr => {
                let payload = roce.payload();
                let candidate = match opcode {
                    sdr::OPCODE_DATA => true,
                    op if sdr::is_ctrl_opcode(op) => sdr::is_ctrl(payload),
                    _ => false,
                };
                if !candidate {
                    return None;
                }
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                if f.warnings.problem_count() > std_problems {
                    return None;
                }
                match f.ext() {
                    Ext::Sdr(sdr::Sdr::Ctrl(_)) => Some(f),
                    Ext::Sdr(sdr::Sdr::Data(d)) => {
                        let reth = f.roce()?.reth()?;
                        state.sdr_max_dma = state.sdr_max_dma.max(reth.dma_len());
                        let mtu = sdr::effective_mtu(params, state.sdr_max_dma);
                        (sdr::expected_va(params, mtu, d.msg_id, d.pkt_off) == Some(reth.va())).then_some(f)
                    }
                    _ => None,
                }
            }
            Profile::Flor => {
                let payload = roce.payload();
                let wire = roce.payload_len();
                let candidate = match opcode {
                    op if flor::send_header_only(op).is_some() => {
                        flor::is_send_header(payload, wire, flor::send_header_only(op) == Some(true))
                    }
                    // WIRE.md B.3: an ACK-shaped UD SEND is Flor's only between endpoints that
                    // exchange WRITE-with-Immediate traffic (or are known to carry Flor).
                    flor::OPCODE_ACK => flor::is_ack(payload, wire) && {
                        let (a, b) = std.ip_addrs()?;
                        let pair = if a <= b { (a, b) } else { (b, a) };
                        self.write_imm_pairs.contains(&pair) || self.flor_pairs.contains(&pair)
                    },
                    op if flor::is_write_imm(op) => {
                        let (a, b) = std.ip_addrs()?;
                        self.flor_pairs.contains(&if a <= b { (a, b) } else { (b, a) })
                    }
                    _ => false,
                };
                if !candidate {
                    return None;
                }
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                (matches!(f.ext(), Ext::Flor(_)) && f.warnings.problem_count() <= std_problems).then_some(f)
            }
            Profile::Erd => {
                if !erd::detect(roce) {
                    return None;
                }
                let (f, std_problems) = self.candidate(std, link, orig_len, p);
                (matches!(f.ext(), Ext::Erd(_)) && f.warnings.problem_count() <= std_problems).then_some(f)
            }
            _ => None,
        }
    }
}
