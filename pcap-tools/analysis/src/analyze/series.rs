//! The points of a flow's sequence plot (`--svg`): every first copy of a data packet, every
//! acknowledgement's progress, NAKs, SACKs, CNPs and header-only packets, with the time and the
//! 24-bit PSN as captured. Retransmissions, losses and completions come from the timeline.
//! Memory is bounded: past [`Series::CAP`] points of one kind, every other point is dropped and
//! the stride doubles (a plot has fewer pixels than that anyway); events are never dropped.

/// What a point is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PointKind {
    /// First copy of a data packet, whole.
    Original,
    /// A header-only (trimmed) data packet.
    HeaderOnly,
    /// An acknowledgement: `psn` is the highest PSN it covers.
    Ack,
    /// A NAK: `psn` is the PSN the receiver expects.
    Nak,
    /// An IRN SACK: `psn` is the SACKed PSN.
    Sack,
    /// A header-only packet bounced to the sender (DCP).
    Bounce,
    /// A congestion notification.
    Cnp,
    /// A DCP ACK: `psn` is the eMSN.
    Emsn,
}

/// One point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub time_ns: u64,
    pub psn: u32,
    pub kind: PointKind,
}

/// A flow's points.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub originals: Vec<Point>,
    pub acks: Vec<Point>,
    /// NAKs, SACKs, bounces, header-only packets, CNPs: kept whole.
    pub signals: Vec<Point>,
    stride: [u64; 2],
    seen: [u64; 2],
}

impl Series {
    /// Points of one decimated kind kept at most.
    pub const CAP: usize = 20_000;

    pub fn add(&mut self, p: Point) {
        let (which, v) = match p.kind {
            PointKind::Original => (0, &mut self.originals),
            PointKind::Ack | PointKind::Emsn => (1, &mut self.acks),
            _ => {
                self.signals.push(p);
                return;
            }
        };
        let stride = self.stride[which].max(1);
        self.seen[which] += 1;
        if !self.seen[which].is_multiple_of(stride) {
            return;
        }
        v.push(p);
        if v.len() >= Self::CAP {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                i % 2 == 0
            });
            self.stride[which] = stride * 2;
        }
    }
}
