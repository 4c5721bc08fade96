//! SDR's per-flow state (WIRE.md B.2), kept by the stateful decoder beside the parser: the user
//! immediate rebuilt from the fragments a message's packets carry, and the RETH VA cross-check.

use core::ops::Range;
use crate::fxhash::FxHashMap;

use crate::ext::sdr::{effective_mtu, expected_va, fragment_count, Sdr};
use crate::ext::Ext;
use crate::field::FieldId as F;
use crate::frame::Frame;
use crate::params::Params;
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning};

/// What [`SdrTracker::observe`] learned about one data packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SdrAnnotation {
    /// The message's user immediate, once all F fragments have been seen (on the packet that
    /// completes it and on every later packet of the message).
    pub user_imm: Option<u32>,
    /// RETH VA == msg_id · max_message_bytes + pkt_off · MTU.
    pub va_ok: Option<bool>,
    /// A fragment that differs from the one seen before at the same position (first), a VA that
    /// does not match, or a DMA Length other than the payload length.
    pub problem: Option<Warning>,
}

impl SdrAnnotation {
    /// Walks `rocescope.sdr.user_imm` and `rocescope.sdr.va_ok` (derived values: empty ranges).
    /// The problem is the caller's to add to the frame's warnings.
    pub fn visit<'a>(&self, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        if let Some(v) = self.user_imm {
            f(F::SdrUserImm, Value::UInt(v as u64), 0..0);
        }
        if let Some(ok) = self.va_ok {
            f(F::SdrVaOk, Value::Bool(ok), 0..0);
        }
    }
}

/// Fragments seen of one message.
#[derive(Clone, Copy, Debug, Default)]
struct MsgState {
    /// The user immediate's bits known so far.
    value: u32,
    /// Bit j: fragment j seen.
    seen: u32,
    /// The packet at offset 0 was seen.
    off0: bool,
}

#[derive(Debug, Default)]
struct FlowState {
    /// Largest DMA length seen (the MTU when none is configured).
    max_dma: u32,
    /// The most recent message id that started a new message (ids wrap modulo 2^ID).
    frontier: Option<u32>,
    msgs: FxHashMap<u32, MsgState>,
    last_use: u64,
}

/// Per-flow SDR state for the stateful decoder: rebuilds each message's user immediate from
/// the fragments of its packets and cross-checks RETH VAs against immediates (WIRE.md B.2).
///
/// Memory is bounded: at most [`SdrTracker::MAX_FLOWS`] flows (the least recently used half is
/// dropped when full) of at most [`SdrTracker::MAX_MSGS_PER_FLOW`] live message ids each.
/// A message id's state is dropped when the id is reused for a new message: message ids advance
/// modulo 2^ID, so an id ahead of the flow's newest one (by less than half the id space) starts
/// a new message, and every id it passes over is stale too. With no id bits (ID = 0) a second
/// packet at offset 0 of a message whose fragments were all seen starts a new message.
#[derive(Debug, Default)]
pub struct SdrTracker {
    /// (FxHash, as `msgs`: deterministic, as the decoder's other maps.)
    flows: FxHashMap<u64, FlowState>,
    tick: u64,
}

impl SdrTracker {
    pub const MAX_FLOWS: usize = 4096;
    pub const MAX_MSGS_PER_FLOW: usize = 256;

    pub fn new() -> SdrTracker {
        SdrTracker::default()
    }

    /// Number of flows held.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// Number of message states held (all flows).
    pub fn live_messages(&self) -> usize {
        self.flows.values().map(|f| f.msgs.len()).sum()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.flows.clear();
    }

    /// Feeds one data packet of `flow` (an opaque key: the decoder's hash of the SDR connection;
    /// key it by endpoints rather than DestQP, as a message's packets are spread over channels
    /// and generations of QPs): its immediate `(msg_id, pkt_off, frag)`, its RETH `(va,
    /// dma_len)` and its payload length on the wire.
    pub fn observe(
        &mut self,
        flow: u64,
        params: &Params,
        sdr_data: (u32, u32, u32),
        reth: (u64, u32),
        payload_len: usize,
    ) -> SdrAnnotation {
        let (msg_id, pkt_off, frag) = sdr_data;
        let (va, dma_len) = reth;
        let split = params.sdr_split;
        self.tick += 1;
        if self.flows.len() >= Self::MAX_FLOWS && !self.flows.contains_key(&flow) {
            self.evict_flows();
        }
        let st = self.flows.entry(flow).or_default();
        st.last_use = self.tick;
        st.max_dma = st.max_dma.max(dma_len);
        let mut ann = SdrAnnotation::default();

        // New message on a reused id?
        let id_bits = split.0 as u32;
        if (1..=32).contains(&id_bits) {
            let space = 1u64 << id_bits;
            match st.frontier {
                None => st.frontier = Some(msg_id),
                Some(f) => {
                    let d = (msg_id as u64).wrapping_sub(f as u64) & (space - 1);
                    if d != 0 && d < space / 2 {
                        if d as usize >= st.msgs.len() {
                            st.msgs.retain(|&id, _| {
                                let a = (id as u64).wrapping_sub(f as u64) & (space - 1);
                                a == 0 || a > d
                            });
                        } else {
                            for k in 1..=d {
                                st.msgs.remove(&(((f as u64 + k) & (space - 1)) as u32));
                            }
                        }
                        st.frontier = Some(msg_id);
                    }
                }
            }
        }

        if let Some(fcount) = fragment_count(split) {
            let fr = split.2 as u32;
            let full = if fcount == 32 { u32::MAX } else { (1u32 << fcount) - 1 };
            if id_bits == 0 && pkt_off == 0 && st.msgs.get(&msg_id).is_some_and(|m| m.seen == full && m.off0) {
                st.msgs.remove(&msg_id);
            }
            if !st.msgs.contains_key(&msg_id) && st.msgs.len() >= Self::MAX_MSGS_PER_FLOW {
                Self::evict_msgs(st, id_bits);
            }
            let m = st.msgs.entry(msg_id).or_default();
            m.off0 |= pkt_off == 0;
            let j = pkt_off % fcount;
            let shift = 32 - fr * (j + 1);
            let mask = ((1u64 << fr) - 1) as u32;
            let frag = frag & mask;
            if m.seen >> j & 1 != 0 {
                let before = (m.value >> shift) & mask;
                if before != frag {
                    ann.problem = Some(Warning::Ext {
                        layer: Layer::SdrData,
                        what: ExtProblem::Mismatch { field: F::SdrImmFrag, got: frag, want: before },
                    });
                }
            } else {
                m.seen |= 1 << j;
                m.value |= frag << shift;
            }
            if m.seen == full {
                ann.user_imm = Some(m.value);
            }
        }

        let mtu = effective_mtu(params, st.max_dma);
        let ok = expected_va(params, mtu, msg_id, pkt_off) == Some(va);
        ann.va_ok = Some(ok);
        if !ok && ann.problem.is_none() {
            ann.problem = Some(Warning::Ext { layer: Layer::SdrData, what: ExtProblem::Other(Note::SdrVaMismatch) });
        }
        if ann.problem.is_none() && dma_len as usize != payload_len {
            ann.problem = Some(Warning::Ext {
                layer: Layer::SdrData,
                what: ExtProblem::Mismatch {
                    field: F::RethDmalen,
                    got: dma_len,
                    want: payload_len.min(u32::MAX as usize) as u32,
                },
            });
        }
        ann
    }

    /// [`Self::observe`] for a frame decoded under the `sdr` profile; `None` unless it is an SDR
    /// data packet with its RETH captured.
    pub fn observe_frame(&mut self, flow: u64, params: &Params, frame: &Frame<'_>) -> Option<SdrAnnotation> {
        let Ext::Sdr(Sdr::Data(d)) = *frame.ext() else { return None };
        let p = frame.roce()?;
        let reth = p.reth()?;
        Some(self.observe(flow, params, (d.msg_id, d.pkt_off, d.frag), (reth.va(), reth.dma_len()), p.payload_len()))
    }

    fn evict_flows(&mut self) {
        let mut ticks: Vec<u64> = self.flows.values().map(|f| f.last_use).collect();
        ticks.sort_unstable();
        let cut = ticks[ticks.len() / 2];
        self.flows.retain(|_, f| f.last_use > cut);
    }

    /// Drops the message states farthest behind the frontier (all of them without id bits).
    fn evict_msgs(st: &mut FlowState, id_bits: u32) {
        match (st.frontier, id_bits) {
            (Some(f), 1..=32) => {
                let space = 1u64 << id_bits;
                let keep = (Self::MAX_MSGS_PER_FLOW / 2) as u64;
                st.msgs.retain(|&id, _| (f as u64).wrapping_sub(id as u64) & (space - 1) < keep);
                if st.msgs.len() >= Self::MAX_MSGS_PER_FLOW {
                    st.msgs.clear();
                }
            }
            _ => st.msgs.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::sdr::DataRepr;
    use crate::params::ImmSplit;

    fn params() -> Params {
        Params::default()
    }

    /// The packets of message `id` with `n` packets carrying `user_imm`, at MTU `mtu`.
    fn feed(t: &mut SdrTracker, p: &Params, flow: u64, id: u32, offs: impl IntoIterator<Item = u32>, user_imm: u32, mtu: u32) -> Vec<SdrAnnotation> {
        offs.into_iter()
            .map(|off| {
                let d = DataRepr::new(p.sdr_split, id, off, user_imm);
                t.observe(flow, p, (id, off, d.frag), (d.va(p, mtu), mtu), mtu as usize)
            })
            .collect()
    }

    #[test]
    fn user_imm_is_rebuilt_after_f_packets_and_not_before() {
        let p = params();
        let mut t = SdrTracker::new();
        let a = feed(&mut t, &p, 1, 3, 0..10, 0xCAFE_F00D, 4096);
        for (i, x) in a.iter().enumerate() {
            assert_eq!(x.user_imm, (i >= 7).then_some(0xCAFE_F00D), "packet {i}");
            assert_eq!(x.va_ok, Some(true));
            assert_eq!(x.problem, None);
        }
        // Out of order and over another flow's packets: still rebuilt once all 8 were seen.
        let mut t = SdrTracker::new();
        let order = [7, 3, 0, 5, 1, 6, 2];
        let a = feed(&mut t, &p, 9, 1, order, 0x0102_0304, 4096);
        assert!(a.iter().all(|x| x.user_imm.is_none()));
        feed(&mut t, &p, 10, 1, 0..4, 0xffff_ffff, 4096);
        let a = feed(&mut t, &p, 9, 1, [4], 0x0102_0304, 4096);
        assert_eq!(a[0].user_imm, Some(0x0102_0304));
        // A message shorter than F packets never rebuilds it.
        let a = feed(&mut t, &p, 11, 2, 0..7, 0x1111_2222, 4096);
        assert!(a.iter().all(|x| x.user_imm.is_none()));
        // 8·22·2: 16 fragments.
        let mut q = params();
        q.sdr_split = ImmSplit(8, 22, 2);
        let a = feed(&mut t, &q, 12, 3, 0..16, 0x8765_4321, 4096);
        assert_eq!(a[14].user_imm, None);
        assert_eq!(a[15].user_imm, Some(0x8765_4321));
        assert!(a.iter().all(|x| x.va_ok == Some(true)));
    }

    #[test]
    fn a_conflicting_retransmitted_fragment_is_a_warning() {
        let p = params();
        let mut t = SdrTracker::new();
        feed(&mut t, &p, 1, 4, 0..3, 0xA000_0000, 4096);
        // Offset 0 again with another fragment.
        let a = t.observe(1, &p, (4, 0, 0x3), (p_va(&p, 4, 0), 4096), 4096);
        assert_eq!(
            a.problem,
            Some(Warning::Ext {
                layer: Layer::SdrData,
                what: ExtProblem::Mismatch { field: F::SdrImmFrag, got: 3, want: 0xA }
            })
        );
        assert_eq!(a.problem.unwrap().to_string(), "SDR data packet: rocescope.sdr.imm_frag 3 disagrees with 10");
        // A retransmission with the same fragment is fine; the first value is kept.
        let a = t.observe(1, &p, (4, 0, 0xA), (p_va(&p, 4, 0), 4096), 4096);
        assert_eq!(a.problem, None);
        let a = feed(&mut t, &p, 1, 4, 3..8, 0xA000_0000, 4096);
        assert_eq!(a[4].user_imm, Some(0xA000_0000));
    }

    fn p_va(p: &Params, id: u32, off: u32) -> u64 {
        expected_va(p, 4096, id, off).unwrap()
    }

    #[test]
    fn reused_message_ids_start_afresh() {
        let p = params();
        let mut t = SdrTracker::new();
        let a = feed(&mut t, &p, 1, 5, 0..8, 0x1111_1111, 4096);
        assert_eq!(a[7].user_imm, Some(0x1111_1111));
        // Ids 6 … 1023, 0 … 4 go by (one packet each), then id 5 carries a new message.
        for id in (6..1024).chain(0..5) {
            feed(&mut t, &p, 1, id, [0], 0, 4096);
        }
        assert!(t.live_messages() <= SdrTracker::MAX_MSGS_PER_FLOW);
        let a = feed(&mut t, &p, 1, 5, 0..8, 0x2222_2222, 4096);
        assert!(a.iter().all(|x| x.problem.is_none()), "{a:?}");
        assert_eq!(a[7].user_imm, Some(0x2222_2222));
        // A late packet of an older message (behind the frontier) keeps its state.
        let a = feed(&mut t, &p, 1, 4, [1], 0, 4096);
        assert_eq!(a[0].problem, None);
        let a = feed(&mut t, &p, 1, 5, [8], 0x2222_2222, 4096);
        assert_eq!(a[0].user_imm, Some(0x2222_2222));
        // No id bits: offset 0 after a complete message starts a new one.
        let mut q = params();
        q.sdr_split = ImmSplit(0, 28, 4);
        let a = feed(&mut t, &q, 2, 0, 0..8, 0x3333_3333, 4096);
        assert_eq!(a[7].user_imm, Some(0x3333_3333));
        let a = feed(&mut t, &q, 2, 0, 0..8, 0x4444_4444, 4096);
        assert!(a.iter().all(|x| x.problem.is_none()));
        assert_eq!(a[7].user_imm, Some(0x4444_4444));
    }

    #[test]
    fn va_check_with_and_without_a_configured_mtu() {
        let mut p = params();
        let mut t = SdrTracker::new();
        // Without configuration: the flow's largest DMA length (1024 here) is the MTU.
        let va = 3u64 * (1 << 18) * 1024 + 5 * 1024;
        let a = t.observe(1, &p, (3, 5, 0), (va, 1024), 1024);
        assert_eq!(a.va_ok, Some(true));
        assert_eq!(a.problem, None);
        // The last, short packet of the message still checks against 1024.
        let a = t.observe(1, &p, (3, 6, 0), (va + 1024, 100), 100);
        assert_eq!(a.va_ok, Some(true));
        let a = t.observe(1, &p, (3, 7, 0), (va + 4096, 1024), 1024);
        assert_eq!(a.va_ok, Some(false));
        assert_eq!(a.problem.unwrap().to_string(), "SDR data packet: RETH VA does not match the immediate's message id and offset");
        // No DMA length seen yet (zero-length packet): 4096.
        let a = t.observe(2, &p, (1, 2, 0), ((1 << 18) * 4096 + 2 * 4096, 0), 0);
        assert_eq!(a.va_ok, Some(true));
        // A configured MTU wins over what the flow shows.
        p.sdr_mtu = Some(2048);
        let a = t.observe(1, &p, (3, 5, 0), (va, 1024), 1024);
        assert_eq!(a.va_ok, Some(false));
        let a = t.observe(1, &p, (3, 5, 0), (3 * (1 << 18) * 2048 + 5 * 2048, 1024), 1024);
        assert_eq!(a.va_ok, Some(true));
        // And a configured maximum message size.
        p.sdr_max_message = Some(1 << 20);
        let a = t.observe(1, &p, (3, 5, 0), (3 * (1 << 20) + 5 * 2048, 1024), 1024);
        assert_eq!(a.va_ok, Some(true));
        // DMA length other than the payload length.
        let a = t.observe(1, &p, (3, 5, 0), (3 * (1 << 20) + 5 * 2048, 1024), 1000);
        assert_eq!(a.problem.unwrap().to_string(), "SDR data packet: rocescope.reth.dmalen 1024 disagrees with 1000");
    }

    #[test]
    fn memory_stays_bounded() {
        let p = params();
        let mut t = SdrTracker::new();
        for flow in 0..(SdrTracker::MAX_FLOWS as u64 + 100) {
            t.observe(flow, &p, (0, 0, 0), (0, 4096), 4096);
        }
        assert!(t.flows() <= SdrTracker::MAX_FLOWS);
        // Message ids hopping around (never advancing by less than half the space).
        let mut t = SdrTracker::new();
        for i in 0..5000u32 {
            let id = (i * 613) % 1024;
            t.observe(7, &p, (id, 1, 0), (0, 4096), 4096);
        }
        assert!(t.live_messages() <= SdrTracker::MAX_MSGS_PER_FLOW);
    }
}
