//! The timeline a record at a time ([`Analyzer::each_flow_streamed`]), for writers that need
//! no flow whole (`rocescope export`): a flow's messages, losses, retransmissions and capture
//! gaps are read back from the spill a chunk at a time and handed out one by one, so that
//! memory holds, of the flow being written, about 28 bytes a message (its index by first PSN
//! or MSN, and its rank by id: [`Ranks`]), not the flow's report
//! ([`Analyzer::each_flow_timeline`] builds each flow's whole: some 300 bytes a message).
//!
//! The entries are those of `each_flow_timeline`, with the same values; only their order
//! differs: messages come in the tracker's order (as they began), then SDR's; losses,
//! retransmissions and capture gaps as they were recorded (the timeline sorts them by frame).

use super::records::{decode_gap, decode_loss, decode_msg, decode_retx, each_record};
use super::report::{self, CaptureGap, FlowHead, Loss, Message, Ns, Retransmission};
use super::track::{rank_key, MsgState, RankKey, Ranks, RetxEvent};
use super::{psn, Analyzer};

/// One entry of a flow's timeline, as [`Analyzer::each_flow_streamed`] hands them out: the
/// flow's head first, then its entries.
#[derive(Debug)]
pub enum TimelinePart<'a> {
    Flow(&'a FlowHead),
    Message(&'a Message),
    Loss(&'a Loss),
    Retransmission(&'a Retransmission),
    CaptureGap(&'a CaptureGap),
}

/// A tracker's message as the timeline reports it, with its index.
pub(super) fn message_row(index: u64, s: &MsgState) -> Message {
    Message {
        index,
        op: s.op,
        first_psn: psn::wire(s.first_psn),
        last_psn: s.last_psn.map(psn::wire),
        first_frame: s.first_frame,
        last_frame: s.last_frame,
        complete_frame: s.complete_frame,
        complete_time_ns: s.complete_time.map(Ns),
        packets: s.last_psn.map(|l| (l + 1 - s.first_psn) as u32),
        retransmitted: s.retransmitted,
        bytes: s.bytes,
        latency_ns: s.complete_time.map(|c| c.saturating_sub(s.first_time)),
    }
}

/// A tracker's retransmission as the timeline reports it, with its message.
pub(super) fn retx_row(r: &RetxEvent, message: Option<u64>) -> Retransmission {
    Retransmission {
        psn: r.psn,
        frame: r.frame,
        time_ns: Ns(r.time_ns),
        spurious: r.spurious,
        cause: r.cause,
        trigger: r.trigger,
        copy: r.copy,
        message,
    }
}

impl Analyzer {
    /// The timeline of every flow, in order of first appearance, a record at a time (this
    /// module's doc): `f(flow index, part)`. An error reading the spill back ends it.
    pub fn each_flow_streamed<E: From<std::io::Error>>(
        &mut self,
        mut f: impl FnMut(usize, TimelinePart<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.erd_settle();
        let ids = self.ids();
        let mut buf = Vec::new();
        for i in 0..self.flows.len() {
            let head = self.head(i, &ids);
            f(i, TimelinePart::Flow(&head))?;
            self.flows[i].data.finalize_all();
            let streams = self.flows[i].streams;
            // The messages' indices, as `flow_timeline` numbers them.
            let mut keys: Vec<RankKey> = Vec::new();
            each_record(&mut self.spill, streams[3], &self.flows[i].data.out[3], &mut buf, decode_msg, |(id, m)| {
                keys.push(rank_key(id, &m))
            })?;
            keys.extend(self.flows[i].data.live_msgs().map(|(id, m)| rank_key(id, m)));
            let sdr_ranges = self.flows[i].sdr_out.as_ref().map_or(&[][..], |o| &o.ranges[..]);
            let ranks = Ranks::new(keys, sdr_ranges);
            let rank = |id: u32| ranks.of_id(id);
            let lookup = |v: u64, msn: Option<u64>, hint: u32| ranks.lookup(v, msn, hint);
            // Messages: the tracker's, then SDR's.
            let mut failed: Result<(), E> = Ok(());
            let mut emit = |part: TimelinePart<'_>| {
                if failed.is_ok() {
                    failed = f(i, part);
                }
            };
            each_record(&mut self.spill, streams[3], &self.flows[i].data.out[3], &mut buf, decode_msg, |(id, m)| {
                emit(TimelinePart::Message(&message_row(rank(id).unwrap_or(0), &m)))
            })?;
            for (id, m) in self.flows[i].data.live_msgs() {
                emit(TimelinePart::Message(&message_row(rank(id).unwrap_or(0), m)));
            }
            if let Some(out) = self.flows[i].sdr_out.as_ref() {
                for m in &out.msgs {
                    emit(TimelinePart::Message(&report::Message { index: ranks.tracked + m.index, ..m.clone() }));
                }
            }
            // Losses.
            each_record(
                &mut self.spill,
                streams[2],
                &self.flows[i].data.out[2],
                &mut buf,
                decode_loss,
                |(l, v, m)| emit(TimelinePart::Loss(&Loss { message: lookup(v, None, m), ..l })),
            )?;
            for (l, v, m) in self.flows[i].data.live_losses() {
                emit(TimelinePart::Loss(&Loss { message: lookup(*v, None, *m), ..l.clone() }));
            }
            // Retransmissions.
            each_record(&mut self.spill, streams[0], &self.flows[i].data.out[0], &mut buf, decode_retx, |r| {
                emit(TimelinePart::Retransmission(&retx_row(&r, lookup(r.v, r.msn, r.msg))))
            })?;
            // SDR's (an event naming no message of its own takes the tracker's message of its
            // PSN: Flor).
            if let Some(out) = self.flows[i].sdr_out.as_ref() {
                let own = |m: Option<u64>, psn: u32| ranks.of_sdr_event(m, psn, &self.flows[i].data);
                for l in &out.losses {
                    emit(TimelinePart::Loss(&Loss { message: own(l.message, l.psn), ..l.clone() }));
                }
                for r in &out.retx {
                    emit(TimelinePart::Retransmission(&Retransmission { message: own(r.message, r.psn), ..r.clone() }));
                }
            }
            // Capture gaps.
            each_record(
                &mut self.spill,
                streams[1],
                &self.flows[i].data.out[1],
                &mut buf,
                decode_gap,
                |(psn, frame)| emit(TimelinePart::CaptureGap(&CaptureGap { psn, frame })),
            )?;
            for (psn, frame) in self.flows[i].data.live_gaps() {
                emit(TimelinePart::CaptureGap(&CaptureGap { psn, frame }));
            }
            failed?;
        }
        Ok(())
    }
}
