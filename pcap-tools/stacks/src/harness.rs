//! A small deterministic driver for the stacks: one requester and one responder joined by a
//! link with a rate and a fixed one-way delay, a per-transmission fate (deliver, drop, delay, or
//! trim to a DCP header-only packet as a congested DCP switch would), and an event queue. It
//! records every transmission, every arrival and every application event, and checks
//! conservation and the frames' encoding. The fabric simulator (`rocescope-sim`) is the full
//! model; this is for unit and behaviour tests of the stacks themselves.
//!
//! Each end has a NIC like the simulator's hosts (the crate's NIC transmit model): when its
//! wire is free it sends the oldest queued control frame (every immediate
//! [`Action::Transmit`]), else pulls one request packet from the requester
//! ([`Requester::pull`]). A frame of `L` bytes occupies the wire for
//! `(max(L, 60) + 24)·8/rate` (FCS, preamble and inter-frame gap, as in the simulator) and
//! arrives `delay` after its last bit left; [`TxRecord::at`] is when its first bit left.

use std::collections::BTreeMap;

use rocescope_codec::build::header_only;
use rocescope_codec::ext::dcp::{tag, TAG_DATA, TAG_HO};
use rocescope_codec::{DecodeOptions, Frame, IcrcStatus, LinkType, Profile};

use super::events::EventQueue;
use super::{new_pair, Action, ConnConfig, Endpoint, Message, Nanos, Requester, RetxReason, StackKind, TxInfo};
use crate::rng::splitmix64;

/// One end of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    Requester,
    Responder,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::Requester => Side::Responder,
            Side::Responder => Side::Requester,
        }
    }
}

/// What the link does with one transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    Drop,
    /// Deliver this much later than the link delay (reordering).
    Delay(Nanos),
    /// A congested DCP switch (seed §4.2): a DCP data frame (tag 10, DCP stack only) is trimmed
    /// to its header-only form and delivered; an HO frame is delivered (it has its own queue);
    /// any other frame is dropped.
    Trim,
}

/// What the fate function sees.
#[derive(Clone, Copy, Debug)]
pub struct FateCtx<'a> {
    pub now: Nanos,
    pub from: Side,
    /// Index of the transmission in [`Harness::txs`].
    pub index: usize,
    pub frame: &'a [u8],
    pub info: &'a TxInfo,
    /// The frame is a DCP data frame (tag 10 under the connection's params).
    pub dcp_data: bool,
}

/// One transmission and what became of it.
#[derive(Clone, Debug)]
pub struct TxRecord {
    pub at: Nanos,
    pub from: Side,
    pub frame: Vec<u8>,
    pub info: TxInfo,
    pub fate: Fate,
    /// When it reached the other end (None: lost).
    pub arrived: Option<Nanos>,
    /// The header-only frame that was delivered instead, when trimmed.
    pub trimmed: Option<Vec<u8>>,
}

/// An application-visible event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppEvent {
    pub at: Nanos,
    pub side: Side,
    pub action: Action,
}

/// Why [`Harness::run`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Nothing left to do (the requester is idle and the queue empty, or only idle timers left).
    Idle,
    /// The time limit was reached first.
    TimeLimit,
}

#[derive(Clone, Debug)]
enum Ev {
    /// Time 0: both ends' [`Endpoint::start`].
    Start,
    Post(Message),
    Arrive {
        to: Side,
        tx: usize,
    },
    Timer {
        side: Side,
        token: u64,
    },
    /// A side's wire finished sending a frame.
    WireFree(Side),
}

/// Default link rate of the harness: 100 Gbit/s (the DCP paper's links, seed 000 §6).
pub const DEFAULT_RATE_BPS: u64 = 100_000_000_000;

/// Bytes a frame of `len` bytes costs on the wire: at least 60, plus FCS 4, preamble and SFD
/// 8, inter-frame gap 12.
pub fn wire_bytes(len: usize) -> u64 {
    len.max(60) as u64 + 24
}

/// One end's NIC: the control FIFO and whether its wire is sending.
#[derive(Default)]
struct Nic {
    ctrl: std::collections::VecDeque<(Vec<u8>, TxInfo)>,
    busy: bool,
}

/// A boxed fate function.
pub type FateFn = Box<dyn FnMut(&FateCtx<'_>) -> Fate>;

/// Two endpoints, a link and an event queue.
pub struct Harness {
    /// The stack, for the three of [`StackKind`]; `None` for a pair built elsewhere
    /// ([`Harness::custom`]: the SDR stacks).
    pub kind: Option<StackKind>,
    /// The stack's name (`gbn`, `sdr-sr`, …).
    pub name: &'static str,
    /// The decode profile of the pair's frames.
    pub profile: Profile,
    pub cfg: ConnConfig,
    pub delay_ns: Nanos,
    /// Link rate, bits per second (both directions).
    pub rate_bps: u64,
    req: Box<dyn Requester>,
    resp: Box<dyn Endpoint>,
    fate: FateFn,
    queue: EventQueue<Ev>,
    /// Queued events that are not timers.
    busy: usize,
    now: Nanos,
    txs: Vec<TxRecord>,
    events: Vec<AppEvent>,
    posted: Vec<Message>,
    nics: [Nic; 2],
}

impl Harness {
    /// A connection of `kind` over a link of one-way delay `delay_ns` that delivers everything.
    pub fn new(kind: StackKind, cfg: &ConnConfig, delay_ns: Nanos) -> Harness {
        let (req, resp) = new_pair(kind, cfg);
        let mut h = Harness::custom(kind.name(), kind.profile(), cfg, req, resp, delay_ns);
        h.kind = Some(kind);
        h
    }

    /// A pair of ends built elsewhere (the SDR stacks, `crate::sdr::new_pair`), named `name`,
    /// whose frames decode under `profile`.
    pub fn custom(
        name: &'static str,
        profile: Profile,
        cfg: &ConnConfig,
        req: Box<dyn Requester>,
        resp: Box<dyn Endpoint>,
        delay_ns: Nanos,
    ) -> Harness {
        let mut queue = EventQueue::default();
        // Both ends' `start` at time 0 (an SDR receiver posts its first receives then).
        queue.push(0, Ev::Start);
        Harness {
            kind: None,
            name,
            profile,
            cfg: cfg.clone(),
            delay_ns,
            rate_bps: DEFAULT_RATE_BPS,
            req,
            resp,
            fate: Box::new(|_| Fate::Deliver),
            queue,
            busy: 1,
            now: 0,
            txs: Vec::new(),
            events: Vec::new(),
            posted: Vec::new(),
            nics: [Nic::default(), Nic::default()],
        }
    }

    /// Sets the link rate (bits per second).
    pub fn with_rate(mut self, rate_bps: u64) -> Harness {
        self.rate_bps = rate_bps.max(1);
        self
    }

    /// Time a frame of `len` bytes occupies the wire, ns (rounded up).
    pub fn ser_ns(&self, len: usize) -> Nanos {
        (wire_bytes(len) as u128 * 8 * 1_000_000_000).div_ceil(self.rate_bps.max(1) as u128) as Nanos
    }

    /// Sets the fate function.
    pub fn with_fate(mut self, f: impl FnMut(&FateCtx<'_>) -> Fate + 'static) -> Harness {
        self.fate = Box::new(f);
        self
    }

    /// Posts `msg` at time `at` (messages must be posted with ids 0, 1, 2, … in time order).
    pub fn post(&mut self, at: Nanos, msg: Message) {
        self.posted.push(msg);
        self.push(at, Ev::Post(msg));
    }

    fn push(&mut self, at: Nanos, ev: Ev) {
        if !matches!(ev, Ev::Timer { .. }) {
            self.busy += 1;
        }
        self.queue.push(at, ev);
    }

    pub fn now(&self) -> Nanos {
        self.now
    }
    pub fn txs(&self) -> &[TxRecord] {
        &self.txs
    }
    pub fn events(&self) -> &[AppEvent] {
        &self.events
    }
    pub fn posted(&self) -> &[Message] {
        &self.posted
    }
    pub fn requester_idle(&self) -> bool {
        self.req.idle()
    }

    /// Runs until nothing is left to do or the clock passes `until`.
    pub fn run(&mut self, until: Nanos) -> RunEnd {
        let opts = DecodeOptions { verify: false, profile: self.profile, params: self.cfg.params };
        let mut out = Vec::new();
        loop {
            // Only timers left and the requester idle: done (stacks ignore idle timers).
            if self.req.idle() && self.busy == 0 {
                return RunEnd::Idle;
            }
            let Some(at) = self.queue.next_at() else { return RunEnd::Idle };
            if at > until {
                return RunEnd::TimeLimit;
            }
            let (at, ev) = self.queue.pop().expect("a queued event");
            if !matches!(ev, Ev::Timer { .. }) {
                self.busy -= 1;
            }
            self.now = at;
            let side = match ev {
                Ev::Start => {
                    self.resp.start(at, &mut out);
                    for a in out.drain(..) {
                        self.act(Side::Responder, a);
                    }
                    self.req.start(at, &mut out);
                    Side::Requester
                }
                Ev::Post(m) => {
                    self.req.post(at, m, &mut out);
                    Side::Requester
                }
                Ev::Arrive { to, tx } => {
                    let rec = &self.txs[tx];
                    let bytes = rec.trimmed.as_deref().unwrap_or(&rec.frame);
                    let f = Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &opts);
                    match to {
                        Side::Requester => self.req.on_frame(at, &f, &mut out),
                        Side::Responder => self.resp.on_frame(at, &f, &mut out),
                    }
                    to
                }
                Ev::Timer { side, token } => {
                    match side {
                        Side::Requester => self.req.on_timer(at, token, &mut out),
                        Side::Responder => self.resp.on_timer(at, token, &mut out),
                    }
                    side
                }
                Ev::WireFree(side) => {
                    self.nics[side as usize].busy = false;
                    side
                }
            };
            for a in out.drain(..) {
                self.act(side, a);
            }
            for side in [Side::Requester, Side::Responder] {
                self.kick(side, &mut out);
            }
        }
    }

    /// A free wire takes the next control frame, else a request packet the requester gives.
    fn kick(&mut self, side: Side, out: &mut Vec<Action>) {
        if self.nics[side as usize].busy {
            return;
        }
        if let Some((frame, info)) = self.nics[side as usize].ctrl.pop_front() {
            return self.wire(side, frame, info);
        }
        if side != Side::Requester || !self.req.ready() {
            return;
        }
        self.req.pull(self.now, out);
        for a in out.drain(..) {
            match a {
                Action::Transmit { frame, info } if !self.nics[side as usize].busy => self.wire(side, frame, info),
                a => self.act(side, a),
            }
        }
    }

    fn act(&mut self, side: Side, a: Action) {
        match a {
            Action::Transmit { frame, info } => self.nics[side as usize].ctrl.push_back((frame, info)),
            Action::Timer { at, token } => self.push(at.max(self.now), Ev::Timer { side, token }),
            other => self.events.push(AppEvent { at: self.now, side, action: other }),
        }
    }

    /// Puts a frame on `side`'s wire now.
    fn wire(&mut self, side: Side, frame: Vec<u8>, info: TxInfo) {
        let index = self.txs.len();
        let dcp_data = self.kind == Some(StackKind::Dcp) && self.dcp_tag(&frame) == Some(TAG_DATA);
        let ctx = FateCtx { now: self.now, from: side, index, frame: &frame, info: &info, dcp_data };
        let fate = (self.fate)(&ctx);
        let ser = self.ser_ns(frame.len());
        let sent = self.now + ser;
        let mut rec = TxRecord { at: self.now, from: side, frame, info, fate, arrived: None, trimmed: None };
        let arrive = match fate {
            Fate::Deliver => Some(sent + self.delay_ns),
            Fate::Drop => None,
            Fate::Delay(d) => Some(sent + self.delay_ns + d),
            Fate::Trim => match self.dcp_tag(&rec.frame).filter(|_| self.kind == Some(StackKind::Dcp)) {
                Some(TAG_DATA) => {
                    rec.trimmed = header_only(LinkType::Ethernet, &rec.frame, self.cfg.params.dcp_tag_shift);
                    rec.trimmed.as_ref().map(|_| sent + self.delay_ns)
                }
                Some(TAG_HO) => Some(sent + self.delay_ns),
                _ => None,
            },
        };
        rec.arrived = arrive;
        self.txs.push(rec);
        self.nics[side as usize].busy = true;
        self.push(sent, Ev::WireFree(side));
        if let Some(t) = arrive {
            self.push(t, Ev::Arrive { to: side.other(), tx: index });
        }
    }

    fn dcp_tag(&self, frame: &[u8]) -> Option<u8> {
        let f = Frame::parse(
            LinkType::Ethernet,
            frame,
            frame.len(),
            &DecodeOptions { verify: false, ..Default::default() },
        );
        f.roce()?;
        f.tos().map(|t| tag(t, self.cfg.params.dcp_tag_shift))
    }

    /// Transmissions by `side` that the stack marked as retransmissions, with their reason.
    pub fn retransmissions(&self, side: Side) -> Vec<(usize, RetxReason)> {
        self.txs
            .iter()
            .enumerate()
            .filter(|(_, t)| t.from == side)
            .filter_map(|(i, t)| t.info.retx.map(|r| (i, r)))
            .collect()
    }

    /// Requester retransmissions of a PSN an earlier transmission of which reached the responder
    /// whole (it was delayed, not lost or trimmed): the truth's "spurious".
    pub fn spurious_retransmissions(&self) -> usize {
        let mut first_good: BTreeMap<u32, Nanos> = BTreeMap::new();
        for t in &self.txs {
            if t.from == Side::Requester && t.info.msg.is_some() && t.trimmed.is_none() && t.arrived.is_some() {
                first_good.entry(t.info.psn).or_insert(t.at);
            }
        }
        self.txs
            .iter()
            .filter(|t| t.from == Side::Requester && t.info.retx.is_some())
            .filter(|t| first_good.get(&t.info.psn).is_some_and(|&a| a < t.at))
            .count()
    }

    /// Retransmissions by `side` with `reason`.
    pub fn count_retx(&self, side: Side, reason: RetxReason) -> usize {
        self.retransmissions(side).iter().filter(|(_, r)| *r == reason).count()
    }

    /// Every posted message was delivered exactly once, intact and with its length, and
    /// completed exactly once; nothing else was delivered or completed; nothing failed.
    pub fn check_conservation(&self) -> Result<(), String> {
        let mut delivered: BTreeMap<u64, Vec<(u32, bool)>> = BTreeMap::new();
        let mut completed: BTreeMap<u64, usize> = BTreeMap::new();
        for e in &self.events {
            match e.action {
                Action::Delivered { msg, len, intact } => delivered.entry(msg).or_default().push((len, intact)),
                Action::Completed { msg } => *completed.entry(msg).or_default() += 1,
                Action::Failed { reason } => return Err(format!("connection failed at {} ns: {reason}", e.at)),
                _ => {}
            }
        }
        for m in &self.posted {
            match delivered.remove(&m.id).as_deref() {
                Some([(len, true)]) if *len == m.len => {}
                other => {
                    return Err(format!("message {} ({:?}, {} bytes) delivered as {:?}", m.id, m.op, m.len, other))
                }
            }
            match completed.remove(&m.id) {
                Some(1) => {}
                other => return Err(format!("message {} completed {:?} times", m.id, other)),
            }
        }
        if let Some((m, _)) = delivered.into_iter().next() {
            return Err(format!("unposted message {m} delivered"));
        }
        if let Some((m, _)) = completed.into_iter().next() {
            return Err(format!("unposted message {m} completed"));
        }
        Ok(())
    }

    /// Every transmitted frame (and every header-only frame made by trimming) decodes under the
    /// stack's profile with no warning, and its ICRC verifies (header-only frames have none).
    pub fn check_frames(&self) -> Result<(), String> {
        let opts = DecodeOptions { verify: true, profile: self.profile, params: self.cfg.params };
        for (i, t) in self.txs.iter().enumerate() {
            for bytes in std::iter::once(&t.frame).chain(t.trimmed.as_ref()) {
                let f = Frame::parse(LinkType::Ethernet, bytes, bytes.len(), &opts);
                if f.roce().is_none() {
                    // ERD's info path is TCP (its NACK fields are the stateful decoder's).
                    if self.profile == Profile::Erd && f.tcp().is_some() && f.warnings.is_empty() {
                        continue;
                    }
                    return Err(format!("tx {i}: not a RoCE frame"));
                }
                if !f.warnings.is_empty() {
                    return Err(format!("tx {i} ({:?}): warnings {:?}", t.info, f.warnings.iter().collect::<Vec<_>>()));
                }
                let ho = self.dcp_tag(bytes) == Some(TAG_HO) && self.kind == Some(StackKind::Dcp);
                let want = if ho { IcrcStatus::Absent } else { IcrcStatus::Good };
                if f.icrc_status() != want {
                    return Err(format!("tx {i} ({:?}): ICRC {:?}, want {:?}", t.info, f.icrc_status(), want));
                }
            }
        }
        Ok(())
    }
}

/// SplitMix64: a tiny deterministic generator for tests' fates and workloads.
#[derive(Clone, Debug)]
pub struct TestRng(pub u64);

impl TestRng {
    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p && p > 0.0
    }
}

/// A random fate: each transmission is lost with probability `loss` (trimmed instead when it is
/// a DCP data frame and `trim` is set — DCP's fabric trims rather than drops), otherwise delayed
/// by up to `jitter_ns` extra with probability `reorder`.
#[derive(Clone, Copy, Debug)]
pub struct RandomFate {
    pub seed: u64,
    pub loss: f64,
    /// Probability that a DCP data frame is trimmed (on top of `loss`).
    pub trim: f64,
    pub reorder: f64,
    pub jitter_ns: Nanos,
}

impl RandomFate {
    pub fn into_fn(self) -> impl FnMut(&FateCtx<'_>) -> Fate + 'static {
        let mut rng = TestRng(self.seed);
        move |ctx| {
            if ctx.dcp_data && rng.chance(self.trim) {
                return Fate::Trim;
            }
            if rng.chance(self.loss) {
                return Fate::Drop;
            }
            if self.jitter_ns > 0 && rng.chance(self.reorder) {
                return Fate::Delay(1 + rng.below(self.jitter_ns));
            }
            Fate::Deliver
        }
    }
}
