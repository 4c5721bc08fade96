//! Fuzz harnesses, shared by the cargo-fuzz targets in `fuzz/` (nightly, libFuzzer) and by the
//! stable corpus-replay test `tests/fuzz_corpus_replay.rs`, so both run exactly the same logic.
//! See `docs/fuzzing.md`.
//!
//! Every harness must return normally for *any* input: a panic (including a failed
//! `assert!`) is a bug in the decoder, the capture reader or the harness's invariants.

use std::fmt::Write as _;
use std::io::Cursor;

use rocescope_codec::build::{self, FrameRepr, NetRepr, RoceRepr};
use rocescope_codec::decoder::{Decoder, DecoderOptions};
use rocescope_codec::ext::{dcp, Ext};
use rocescope_codec::ib::*;
use rocescope_codec::mac_control::MacControlRepr;
use rocescope_codec::{DecodeOptions, Frame, IcrcStatus, LinkType, Profile, Warning};

use rocescope_analysis::capture::CaptureReader;

/// Link type selected by the low two bits of a `fuzz_frame` input's first byte.
pub const LINKS: [LinkType; 4] = [LinkType::Ethernet, LinkType::LinuxSll, LinkType::LinuxSll2, LinkType::RawIp];

/// Largest number of records `fuzz_capture` walks and `fuzz_analysis` analyses (keeps each run
/// short).
const MAX_RECORDS: usize = 4096;

/// `frame_decode` target. Input: two control bytes, then the captured frame.
///
/// Byte 0: bits 1..0 link type ([`LINKS`]); bit 2 set = decode without ICRC/checksum
/// verification; bits 7..3 = `n`: the record's original length is the captured length plus
/// `0` (n = 0) or `2^(n-1)` bytes, as a snaplen-cut capture would say.
/// Byte 1: the profile and its parameters ([`decode_options`]).
pub fn fuzz_frame(data: &[u8]) {
    let [ctl, prof, frame @ ..] = data else { return };
    let link = LINKS[(ctl & 3) as usize];
    let opts = decode_options(ctl & 4 == 0, *prof);
    let n = ctl >> 3;
    let extra = if n == 0 { 0 } else { 1usize << (n - 1) };
    check_frame(link, frame, frame.len() + extra, &opts);
    if link == LinkType::Ethernet {
        // (Cut by a snaplen, the fast path refuses the frame: also as if captured whole.)
        check_plain_summary(frame, frame.len() + extra);
        check_plain_summary(frame, frame.len());
    }
}

/// The analysers' summary fast path (`pcap-tools/analysis/src/analyze/plain.rs`) against the
/// long way, on one Ethernet frame (`orig_len` long on the wire): when the fast path reads it,
/// its summary is the one written from the frame's `std` decoding, and that decoding is of a
/// whole frame with no extension and no CM MAD (what the fast path stands for). Returns whether
/// the fast path read it.
pub fn check_plain_summary(data: &[u8], orig_len: usize) -> bool {
    use rocescope_analysis::analyze::pkt::{Pkt, Seen};
    use rocescope_analysis::analyze::plain::PlainV4;
    use rocescope_codec::decoder::ProfileChoice;

    let Some(v) = PlainV4::parse(data, orig_len) else { return false };
    let mut fast = Seen::None;
    Pkt::write_plain(&mut fast, &v, 7, 11, 3, orig_len as u32);
    let mut decoder =
        Decoder::new(DecoderOptions { profile: ProfileChoice::Fixed(Profile::Std), ..DecoderOptions::default() });
    let d = decoder.decode(LinkType::Ethernet, data, orig_len);
    let slow = Pkt::from_decoded(&d, 7, 11, 3, orig_len as u32);
    assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "the fast path's summary of {data:02x?}");
    assert!(!d.frame.truncated() && matches!(d.frame.ext(), Ext::None) && d.frame.cm().is_none());
    assert!(matches!(d.frame.net(), Some(rocescope_codec::frame::Net::Ipv4 { .. })) && d.frame.roce().is_some());
    true
}

/// Frames the fast path reads in a whole capture, and the frames read.
pub struct FastPathRun {
    pub plain: u64,
    pub frames: u64,
}

/// A whole capture analysed the long way (every frame decoded, [`Session::run`]) and with the
/// summary fast path ([`Session::run_summarised`], as `rocescope flows` and `timeline` read),
/// with profile `auto` and checksums only where detection compares them, both ways a decoder
/// reads a file (holding frames back, as the analysers do; after a detection pass, as
/// `decode` does): the flow tables, every flow's timeline and the decoder's whole state (its
/// flows' detection states, counts, ERD and SDR state: its `Debug` form) are the same. At most
/// `max_records` records. Returns the look-ahead reading's counts.
///
/// [`Session::run`]: rocescope_analysis::session::Session::run
/// [`Session::run_summarised`]: rocescope_analysis::session::Session::run_summarised
pub fn check_fast_path_run(data: &[u8], max_records: u64) -> FastPathRun {
    let run = check_fast_path_mode(data, max_records, false);
    check_fast_path_mode(data, max_records, true);
    run
}

/// [`check_fast_path_run`] in one of the two modes.
fn check_fast_path_mode(data: &[u8], max_records: u64, detection_pass: bool) -> FastPathRun {
    use rocescope_analysis::analyze::pkt::{Pkt, Seen};
    use rocescope_analysis::analyze::run::write_summary;
    use rocescope_analysis::analyze::{Analyzer, Options};
    use rocescope_analysis::session::{Given, Session};
    use std::ops::ControlFlow;

    let session = || {
        let reader = CaptureReader::new(Cursor::new(data)).ok()?;
        let s = Session::new(reader, Decoder::new(DecoderOptions::default()).checksums_for_detection_only());
        Some(match detection_pass {
            true => s.with_detection_pass(CaptureReader::new(Cursor::new(data)).ok()?),
            false => s,
        })
    };
    let Some(mut long) = session() else { return FastPathRun { plain: 0, frames: 0 } };
    let mut fast = session().expect("the same bytes open again");
    let params = long.decoder().options().params;
    let opts = Options::with_params(Options { keep_events: true, ..Options::default() }, &params);
    let (mut a_long, mut a_fast) = (Analyzer::new(opts.clone()), Analyzer::new(opts));
    let long_result = long.run(|rec, d| {
        if rec.number > max_records {
            return ControlFlow::Break(());
        }
        let seen = Pkt::from_decoded(d, rec.number, rec.ts_ns, rec.interface, rec.orig_len);
        if !matches!(seen, Seen::None) {
            a_long.add(&seen);
        }
        ControlFlow::Continue(())
    });
    let mut run = FastPathRun { plain: 0, frames: 0 };
    let fast_result = fast.run_summarised(|rec, given| {
        if rec.number > max_records {
            return ControlFlow::Break(());
        }
        run.frames = rec.number;
        run.plain += u64::from(matches!(given, Given::Plain(_)));
        let mut seen = Seen::None;
        write_summary(&mut seen, rec, rec.ts_ns, given);
        if !matches!(seen, Seen::None) {
            a_fast.add(&seen);
        }
        ControlFlow::Continue(())
    });
    let mode = if detection_pass { "after a detection pass" } else { "holding frames back" };
    assert_eq!(long_result.map_err(|e| e.to_string()), fast_result.map_err(|e| e.to_string()), "{mode}");
    assert_eq!(long.decoder().stats(), fast.decoder().stats(), "the decoder's counts, {mode}");
    same_text(
        &format!("{:?}", long.decoder()),
        &format!("{:?}", fast.decoder()),
        &format!("the decoder's state {mode}"),
    );
    let report = |a: &mut Analyzer| {
        let mut out = serde_json::to_string(&a.flows()).expect("json");
        a.each_flow_timeline(|f, _| -> Result<(), serde_json::Error> {
            out.push_str(&serde_json::to_string(&f)?);
            Ok(())
        })
        .expect("json");
        out
    };
    same_text(&report(&mut a_long), &report(&mut a_fast), &format!("the analysis {mode}"));
    run
}

/// Panics when the long way's text `l` and the fast path's `f` differ, showing where.
fn same_text(l: &str, f: &str, what: &str) {
    if l != f {
        let at = l.bytes().zip(f.bytes()).position(|(a, b)| a != b).unwrap_or(l.len().min(f.len()));
        let from = at.saturating_sub(200);
        let show =
            |t: &str| String::from_utf8_lossy(&t.as_bytes()[from.min(t.len())..(at + 200).min(t.len())]).into_owned();
        panic!("with the fast path, {what} differs at byte {at}:\n long: {}\n fast: {}", show(l), show(f));
    }
}

/// Decoding options from a control byte: bits 2..0 the profile ([`Profile::ALL`]; 6 and 7 are
/// `std`), bits 5..3 the DCP tag shift, bits 7..6 the NetRT opcode (0xC0, 0xC1, 0x0A, 0xFF).
/// Byte 0 selects the defaults.
pub fn decode_options(verify: bool, ctl: u8) -> DecodeOptions {
    let mut opts = DecodeOptions { verify, ..DecodeOptions::default() };
    if ctl != 0 {
        opts.profile = Profile::ALL.get((ctl & 7) as usize).copied().unwrap_or(Profile::Std);
        opts.params.dcp_tag_shift = (ctl >> 3) & 7;
        opts.params.netrt_opcode = [0xc0, 0xc1, 0x0a, 0xff][(ctl >> 6) as usize];
    }
    opts
}

/// `analysis` target. Input: a whole pcap or pcapng file, analysed as `rocescope flows`,
/// `timeline` (JSON, CSV and text, each flow's plot and the overview) and `decode -e
/// rocescope.analysis.*` analyse one (profile `auto`, checksums only where detection compares
/// them): one analyser keeps the events and the plots' points, a second gives each frame's
/// analysis fields as it arrives ([`Analyzer::add_noted`]), and the timeline is also handed out
/// a record at a time (`rocescope export`'s [`Analyzer::each_flow_streamed`]). Every frame a
/// report names is one of the capture's; the flow table counts no more frames than were read.
///
/// [`Analyzer::add_noted`]: rocescope_analysis::analyze::Analyzer::add_noted
/// [`Analyzer::each_flow_streamed`]: rocescope_analysis::analyze::Analyzer::each_flow_streamed
pub fn fuzz_analysis(data: &[u8]) {
    use rocescope_analysis::analyze::pkt::{Pkt, Seen};
    use rocescope_analysis::analyze::stream::TimelinePart;
    use rocescope_analysis::analyze::{plot, render, series::Series, Analyzer, Options};
    use rocescope_analysis::session::Session;
    use std::ops::ControlFlow;

    let Ok(reader) = CaptureReader::new(Cursor::new(data)) else { return };
    let mut session = Session::new(reader, Decoder::new(DecoderOptions::default()).checksums_for_detection_only());
    let params = session.decoder().options().params;
    let opts =
        |keep_events| Options::with_params(Options { keep_events, plot: keep_events, ..Options::default() }, &params);
    let (mut events, mut noted, mut streamed) =
        (Analyzer::new(opts(true)), Analyzer::new(opts(false)), Analyzer::new(opts(true)));
    let mut frames = 0u64;
    let _ = session.run(|rec, d| {
        if rec.number > MAX_RECORDS as u64 {
            return ControlFlow::Break(());
        }
        frames = rec.number;
        let seen = Pkt::from_decoded(d, rec.number, rec.ts_ns, rec.interface, rec.orig_len);
        if !matches!(seen, Seen::None) {
            events.add(&seen);
            let _ = noted.add_noted(&seen);
            streamed.add(&seen);
        }
        ControlFlow::Continue(())
    });
    let named =
        |what: &str, frame: u64| assert!((1..=frames).contains(&frame), "{what} names frame {frame} of {frames}");
    let message_named = |m: &rocescope_analysis::analyze::report::Message| {
        named("a message", m.first_frame);
        named("a message", m.last_frame);
        if let Some(c) = m.complete_frame {
            named("a message's completion", c);
        }
    };

    let table = events.flows();
    assert!(table.flows.iter().map(|f| f.frames).sum::<u64>() <= frames, "the flow table counts more frames than read");
    let mut out = Vec::new();
    render::flows_text(&mut out, &table).unwrap();
    render::flows_csv(&mut out, &table).unwrap();
    serde_json::to_writer(&mut out, &table).unwrap();
    let empty = Series::default();
    let mut overview = Vec::new();
    let mut overview_series = Vec::new();
    render::timeline_csv_header(&mut out).unwrap();
    events
        .each_flow_timeline(|f, s| -> std::io::Result<()> {
            for l in &f.losses {
                named("a loss", l.frame);
            }
            for r in &f.retransmissions {
                named("a retransmission", r.frame);
            }
            for g in &f.capture_gaps {
                named("a capture gap", g.frame);
            }
            f.messages.iter().for_each(message_named);
            serde_json::to_writer(&mut out, &f).unwrap();
            render::timeline_csv_flow(&mut out, &f)?;
            render::timeline_text_flow(&mut out, &f)?;
            let _ = plot::flow_svg(&f, s.unwrap_or(&empty));
            overview_series.push(s.cloned());
            overview.push(f);
            Ok(())
        })
        .unwrap();
    let report = rocescope_analysis::analyze::report::TimelineReport { flows: overview };
    let _ = plot::overview_svg(&report, &overview_series.iter().map(Option::as_ref).collect::<Vec<_>>());
    let _ = noted.flows();
    check_fast_path_run(data, MAX_RECORDS as u64);
    streamed
        .each_flow_streamed(|_, part| -> std::io::Result<()> {
            match part {
                TimelinePart::Loss(l) => named("a streamed loss", l.frame),
                TimelinePart::Retransmission(r) => named("a streamed retransmission", r.frame),
                TimelinePart::CaptureGap(g) => named("a streamed capture gap", g.frame),
                TimelinePart::Message(m) => message_named(m),
                TimelinePart::Flow(_) => {}
            }
            Ok(())
        })
        .unwrap();
}

/// `capture_file` target. Input: a whole pcap or pcapng file. Every record is read and every
/// frame of a decodable link type is decoded and checked like `fuzz_frame` does (default
/// options: verification on, `std` profile), then decoded again by a [`Decoder`] with the CLI's
/// defaults (profile `auto`) and its fields walked.
pub fn fuzz_capture(data: &[u8]) {
    let mut reader = match CaptureReader::new(Cursor::new(data)) {
        Ok(r) => r,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let opts = DecodeOptions::default();
    let mut decoder = Decoder::new(DecoderOptions::default());
    let mut last_offset = 0u64;
    let mut last_number = 0u64;
    for _ in 0..MAX_RECORDS {
        let rec = match reader.next_record() {
            Ok(Some(rec)) => rec,
            Ok(None) => break,
            Err(e) => {
                assert!(e.offset <= data.len() as u64, "error offset {} beyond the {}-byte file", e.offset, data.len());
                let _ = e.to_string();
                break;
            }
        };
        // Records come in file order, numbered from 1, and lie inside the file.
        assert!(rec.offset >= last_offset && rec.offset < data.len() as u64, "record offset {}", rec.offset);
        assert_eq!(rec.number, last_number + 1);
        assert!(rec.data.len() <= data.len());
        last_offset = rec.offset;
        last_number = rec.number;
        let Some(link) = rocescope_analysis::link_type(rec.linktype) else { continue };
        check_frame(link, rec.data, rec.orig_len as usize, &opts);
        // The stateful decoder the CLI runs (per-flow profile detection, SDR tracking, ERD
        // NACK stream reassembly), with every field it adds.
        let d = decoder.decode(link, rec.data, rec.orig_len as usize);
        let _ = (d.profile().name(), d.warning_count());
        let mut s = String::new();
        d.visit(|id, v, range| {
            s.clear();
            write!(s, "{v}").unwrap();
            assert!(range.start <= range.end, "{}: range {range:?}", id.name());
            assert!(
                range.end <= rec.data.len(),
                "{}: range {range:?} beyond the {} captured bytes",
                id.name(),
                rec.data.len()
            );
        });
    }
    let st = decoder.stats();
    assert!(st.packets.iter().sum::<u64>() <= last_number);
}

/// Decodes one frame and exercises everything a consumer can ask of it: every accessor of
/// [`Frame`] and [`RocePacket`], every header view and field, the field walk with each value
/// formatted, and the warnings. Checks the invariants the decoder documents. Returns the frame.
pub fn check_frame<'a>(link: LinkType, data: &'a [u8], orig_len: usize, opts: &DecodeOptions) -> Frame<'a> {
    let f = Frame::parse(link, data, orig_len, opts);
    let mut s = String::new();

    // Frame accessors.
    assert_eq!(f.data().len(), data.len());
    assert_eq!(f.link(), link);
    let _ = f.ethertype();
    for id in f.vlan_ids() {
        assert!(id <= 0x0fff);
    }
    let _ = f.net();
    let _ = (f.roce_offset(), f.is_rocev1(), f.truncated(), f.profile().name(), f.is_decoded());
    let _ = f.icrc_status().name();
    if let Some((a, b)) = f.ip_addrs() {
        write!(s, "{a} {b}").unwrap();
    }
    let _ = (f.tos(), f.udp_ports());
    if let Some(t) = f.tcp() {
        let fl = t.flags;
        let _ = (t.src_port, t.dst_port, t.seq, t.ack, fl.fin(), fl.syn(), fl.rst(), fl.psh(), fl.ack());
        assert!(t.header_offset < t.payload_offset);
        assert!(t.payload.len() <= t.payload_len);
    }
    if let Some(cm) = f.cm() {
        let _ = (cm.attribute_id(), cm.msg().name(), cm.local_comm_id(), cm.remote_comm_id());
        let _ = (cm.local_qpn(), cm.remote_qpn(), cm.start_psn());
        let _ = (cm.local_qpn_range(), cm.remote_qpn_range(), cm.start_psn_range());
    }
    if let Some(mc) = f.mac_control() {
        let _ = (mc.opcode(), mc.needed_len(), mc.class_enable());
        for i in 0..mc.quanta_count() {
            let _ = (mc.quanta_offset(i), mc.quanta(i));
        }
    }
    if let Some(p) = f.roce() {
        check_roce(&f, p);
    }

    // Warnings.
    assert!(f.warnings.len() >= f.warnings.iter().count());
    for w in f.warnings.iter() {
        s.clear();
        write!(s, "{w}").unwrap();
        assert!(!s.is_empty());
    }

    // The field walk: every value formats, every byte range lies inside the captured bytes.
    let mut fields = 0usize;
    f.visit(|id, v, range| {
        fields += 1;
        let _ = (id.name(), id.def(), v.as_u64());
        s.clear();
        write!(s, "{v}").unwrap();
        assert!(range.start <= range.end, "{}: range {range:?}", id.name());
        assert!(range.end <= data.len(), "{}: range {range:?} beyond the {} captured bytes", id.name(), data.len());
    });
    assert!(fields >= f.warnings.iter().count());

    // Verification only adds verdicts: the structure decoded is the same without it.
    let g = Frame::parse(link, data, orig_len, &DecodeOptions { verify: !opts.verify, ..*opts });
    let shape = |f: &Frame<'_>| {
        (
            f.ethertype(),
            f.net(),
            f.truncated(),
            f.is_decoded(),
            f.cm().is_some(),
            f.profile(),
            *f.ext(),
            f.roce().map(|p| (f.roce_offset(), p.wire_len(), p.headers(), p.payload_offset(), p.payload_len())),
        )
    };
    assert_eq!(shape(&f), shape(&g), "verify on/off decode differently");
    f
}

fn check_roce(f: &Frame<'_>, p: &RocePacket<'_>) {
    let bytes = p.bytes();
    assert!(bytes.len() >= Bth::<&[u8]>::LEN, "a RocePacket always holds its BTH");
    assert!(bytes.len() <= p.wire_len());
    assert!(f.roce_offset() + bytes.len() <= f.data().len());
    assert_eq!(p.is_truncated(), bytes.len() < p.wire_len());

    let bth = p.bth();
    let _ = (bth.opcode(), bth.se(), bth.mig_req(), bth.pad_cnt(), bth.tver(), bth.p_key());
    let _ = (bth.fecn(), bth.becn(), bth.byte4(), bth.dest_qp(), bth.ack_req(), bth.psn());
    let _ = BthRepr::parse(&bth);

    let op = p.opcode();
    assert_eq!(op.0, bth.opcode());
    let _ = (op.name(), op.transport().name(), op.op(), op.is_send(), op.is_write(), op.position());
    // The IBTA table, or the DCP one under the DCP profile (None: unknown, extension body,
    // DCP header-only).
    if let Some(i) = p.info() {
        assert!(Some(i) == op.info() || Some(i) == op.info_dcp(), "{:?} for opcode {:#04x}", i.name, op.0);
    }

    for h in Hdr::ALL {
        let _ = (h.len(), h.layer().name());
        match (p.header_offset(h), p.header(h)) {
            (Some(o), Some(b)) => {
                assert!(o >= Bth::<&[u8]>::LEN);
                assert_eq!(b.len(), h.len());
                assert_eq!(b, &bytes[o..o + h.len()]);
            }
            (None, Some(_)) => panic!("header {h:?} without an offset"),
            _ => {}
        }
    }
    let hs = p.headers();
    let _ = (hs.len(), hs.is_empty(), hs.iter().count());

    if let Some(h) = p.rdeth() {
        let _ = h.eecnxt();
    }
    if let Some(h) = p.deth() {
        let _ = (h.q_key(), h.src_qp());
    }
    if let Some(h) = p.xrceth() {
        let _ = h.xrc_srq();
    }
    if let Some(h) = p.feth() {
        let _ = (h.sel(), h.plt());
    }
    if let Some(h) = p.reth() {
        let _ = (h.va(), h.r_key(), h.dma_len());
    }
    if let Some(h) = p.atomic_eth() {
        let _ = (h.va(), h.r_key(), h.swap_add(), h.compare());
    }
    if let Some(h) = p.aeth() {
        let s = h.syndrome();
        let _ = (h.syndrome_byte(), h.msn(), s.kind_name(), s.is_psn_seq_error());
        assert_eq!(s.to_byte(), h.syndrome_byte());
    }
    if let Some(h) = p.atomic_ack_eth() {
        let _ = h.orig_rem_data();
    }
    if let Some(h) = p.immdt() {
        let _ = h.imm();
    }
    if let Some(h) = p.ieth() {
        let _ = h.r_key();
    }
    if let Some(o) = p.sack_offset() {
        assert!(o >= Bth::<&[u8]>::LEN);
    }
    if let Some(h) = p.irn_sack() {
        let _ = h.sack_psn();
    }

    let payload = p.payload();
    assert!(payload.len() <= p.payload_len());
    if !payload.is_empty() {
        assert_eq!(payload, &bytes[p.payload_offset()..p.payload_offset() + payload.len()]);
    }
    match (p.icrc_offset(), p.icrc_bytes()) {
        (Some(o), Some(b)) => {
            assert_eq!(b.len(), 4);
            assert_eq!(o + 4, p.wire_len());
        }
        (None, Some(_)) => panic!("ICRC bytes without an offset"),
        _ => {}
    }
    if let Some(c) = p.icrc_covered() {
        assert_eq!(Some(c.len()), p.icrc_offset());
    }
    let _ = RoceRepr::parse(p);

    // What the profile's extension decoded.
    let _ = p.ho_msn();
    if let Some(h) = p.dcpeth() {
        let _ = (h.msn(), h.sretryno());
    }
    if let Some(h) = p.sseth() {
        let _ = h.ssn();
    }
    assert_eq!(f.ext().profile(), f.profile());
    match f.ext() {
        Ext::Dcp(d) => {
            let _ = d.msn(p);
        }
        Ext::Netrt(n) => {
            if let Some(bm) = n.bitmap(p) {
                assert!(rocescope_codec::ext::netrt::requested(0, bm).count() <= 129);
            }
        }
        _ => {}
    }

    // A frame whose ICRC `fix_icrc` rewrote must then verify.
    if !f.truncated() && p.icrc_bytes().is_some() {
        let mut copy = f.data().to_vec();
        if build::fix_icrc(f.link(), &mut copy) {
            let g = Frame::parse(f.link(), &copy, copy.len(), &DecodeOptions { verify: true, ..Default::default() });
            assert!(g.roce().is_some(), "fix_icrc changed what the frame decodes as");
            assert_eq!(g.icrc_status(), IcrcStatus::Good, "ICRC still wrong after fix_icrc");
        }
    }
}

/// Reads fixed-size values from the fuzzer's bytes, zeros once they run out.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        let n = N.min(self.0.len());
        b[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        b
    }
    fn u8(&mut self) -> u8 {
        self.bytes::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.bytes())
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.bytes())
    }
    fn u24(&mut self) -> u32 {
        self.u32() & 0x00ff_ffff
    }
    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.bytes())
    }
    fn bool(&mut self) -> bool {
        self.u8() & 1 != 0
    }
    fn rest(&mut self, max: usize) -> &'a [u8] {
        let n = self.0.len().min(max);
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
}

/// `roundtrip` target: builds a frame from the input with the codec's builders, decodes it and
/// checks that every header reads back as built, the ICRC verifies and nothing is flagged.
/// The first byte selects an IBTA RoCE packet (0-4), a DCP data packet decoded with the DCP
/// profile (5), a PAUSE/PFC frame (6) or a CM MAD (7).
pub fn fuzz_roundtrip(data: &[u8]) {
    let mut inp = Input(data);
    match inp.u8() & 7 {
        5 => roundtrip_roce(&mut inp, true),
        6 => roundtrip_mac_control(&mut inp),
        7 => roundtrip_cm(&mut inp),
        _ => roundtrip_roce(&mut inp, false),
    }
}

fn net_repr(inp: &mut Input<'_>) -> NetRepr {
    match inp.u8() % 3 {
        0 => NetRepr::Ipv4 { src: inp.bytes(), dst: inp.bytes(), tos: inp.u8(), ttl: inp.u8(), ident: inp.u16() },
        1 => NetRepr::Ipv6 {
            src: inp.bytes(),
            dst: inp.bytes(),
            traffic_class: inp.u8(),
            flow_label: inp.u32() & 0xf_ffff,
            hop_limit: inp.u8(),
        },
        _ => NetRepr::Grh {
            src: inp.bytes(),
            dst: inp.bytes(),
            traffic_class: inp.u8(),
            flow_label: inp.u32() & 0xf_ffff,
            hop_limit: inp.u8(),
        },
    }
}

fn frame_repr<'p>(inp: &mut Input<'_>, roce: RoceRepr<'p>) -> FrameRepr<'p> {
    let net = net_repr(inp);
    let mut fr = FrameRepr::new(net, roce);
    fr.eth_dst = inp.bytes();
    fr.eth_src = inp.bytes();
    let v = inp.u8();
    let tag = |inp: &mut Input<'_>, on: bool| if on { Some(inp.u16()) } else { None };
    fr.vlans = [tag(inp, v & 1 != 0), tag(inp, v & 2 != 0)];
    fr.udp_src = inp.u16();
    fr.udp_checksum = inp.bool();
    fr.pad_to_min = inp.bool();
    fr
}

/// Decodes a built frame and checks what every builder-made frame must satisfy.
fn decode_built<'a>(bytes: &'a [u8], fr: &FrameRepr<'_>, opts: &DecodeOptions) -> Frame<'a> {
    let f = check_frame(LinkType::Ethernet, bytes, bytes.len(), opts);
    let vlans: Vec<u16> = fr.vlans.iter().flatten().map(|t| t & 0x0fff).collect();
    assert_eq!(f.vlan_ids().collect::<Vec<_>>(), vlans);
    assert!(!f.truncated());
    assert_eq!(f.icrc_status(), IcrcStatus::Good, "{:?}", f.warnings);
    let (src, dst) = f.ip_addrs().expect("addresses");
    match fr.net {
        NetRepr::Ipv4 { src: s, dst: d, tos, .. } => {
            assert_eq!((src, dst), (s.into(), d.into()));
            assert_eq!(f.tos(), Some(tos));
        }
        NetRepr::Ipv6 { src: s, dst: d, traffic_class, .. } | NetRepr::Grh { src: s, dst: d, traffic_class, .. } => {
            assert_eq!((src, dst), (s.into(), d.into()));
            assert_eq!(f.tos(), Some(traffic_class));
        }
    }
    if matches!(fr.net, NetRepr::Grh { .. }) {
        assert!(f.is_rocev1());
        assert_eq!(f.udp_ports(), None);
    } else {
        assert_eq!(f.udp_ports(), Some((fr.udp_src, fr.udp_dst)));
    }
    for w in f.warnings.iter() {
        let ok = matches!(
            w,
            Warning::TVer(_)
                | Warning::UnknownOpcode(_)
                | Warning::CnpOpcode0x80
                | Warning::AtomicWriteLength { .. }
                | Warning::AethReserved(_)
                | Warning::CmAttribute(_)
                | Warning::LengthTooShort { layer: rocescope_codec::Layer::Cm, .. }
        );
        assert!(ok, "unexpected warning on a built frame: {w:?}");
    }
    f
}

/// The opcodes that carry DCP headers (RC SEND, RDMA WRITE, RDMA READ Request).
const DCP_OPCODES: [u8; 15] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x0a, 0x0b, 0x0c, 0x16, 0x17];

fn roundtrip_roce(inp: &mut Input<'_>, dcp: bool) {
    let (opcode, info, mut r) = if dcp {
        let op = DCP_OPCODES[inp.u8() as usize % DCP_OPCODES.len()];
        (op, Opcode(op).info_dcp(), RoceRepr::new_dcp(op, inp.u24(), inp.u24()))
    } else {
        let op = inp.u8();
        (op, Opcode(op).info(), RoceRepr::new(op, inp.u24(), inp.u24()))
    };
    let flags = inp.u8();
    r.bth.se = flags & 1 != 0;
    r.bth.mig_req = flags & 2 != 0;
    r.bth.fecn = flags & 4 != 0;
    r.bth.becn = flags & 8 != 0;
    r.bth.ack_req = flags & 16 != 0;
    r.bth.tver = if flags & 32 != 0 { inp.u8() & 0x0f } else { 0 };
    r.bth.resv6 = inp.u8() & 0x3f;
    r.bth.p_key = inp.u16();
    if let Some(h) = &mut r.rdeth {
        h.eecnxt = inp.u24();
    }
    if let Some(h) = &mut r.deth {
        h.q_key = inp.u32();
        h.src_qp = inp.u24();
    }
    if let Some(h) = &mut r.xrceth {
        h.xrc_srq = inp.u24();
    }
    if let Some(h) = &mut r.dcpeth {
        *h = DcpethRepr { msn: inp.u24(), sretryno: inp.u8() };
    }
    if let Some(h) = &mut r.sseth {
        h.ssn = inp.u24();
    }
    if let Some(h) = &mut r.feth {
        let b = inp.u8();
        h.sel = (b >> 4) & 3;
        h.plt = b & 0x0f;
    }
    if let Some(h) = &mut r.reth {
        *h = RethRepr { va: inp.u64(), r_key: inp.u32(), dma_len: inp.u32() };
    }
    if let Some(h) = &mut r.atomic_eth {
        *h = AtomicEthRepr { va: inp.u64(), r_key: inp.u32(), swap_add: inp.u64(), compare: inp.u64() };
    }
    if let Some(h) = &mut r.aeth {
        *h = AethRepr { syndrome: Syndrome::from_byte(inp.u8()), msn: inp.u24() };
    }
    if let Some(h) = &mut r.atomic_ack_eth {
        h.orig_rem_data = inp.u64();
    }
    if let Some(h) = &mut r.immdt {
        h.imm = inp.u32();
    }
    if let Some(h) = &mut r.ieth {
        h.r_key = inp.u32();
    }
    // IRN's selective NAK: an RC Acknowledge carrying NAK(PSN sequence error).
    let sack = opcode == 0x11 && r.aeth.is_some_and(|a| a.syndrome.is_psn_seq_error());
    if sack && inp.bool() {
        r.irn_sack = Some(IrnSackRepr { sack_psn: inp.u24() });
    }
    let mut fr = frame_repr(inp, r);
    let mut opts = DecodeOptions::default();
    if dcp {
        // Tag 10 (data) in the ToS / traffic class; DCP needs IP (no GRH).
        let shift = opts.params.dcp_tag_shift;
        fr.net = match fr.net {
            NetRepr::Ipv4 { src, dst, tos, ttl, ident } => {
                NetRepr::Ipv4 { src, dst, tos: dcp::with_tag(tos, shift, dcp::TAG_DATA), ttl, ident }
            }
            NetRepr::Ipv6 { src, dst, traffic_class, flow_label, hop_limit }
            | NetRepr::Grh { src, dst, traffic_class, flow_label, hop_limit } => NetRepr::Ipv6 {
                src,
                dst,
                traffic_class: dcp::with_tag(traffic_class, shift, dcp::TAG_DATA),
                flow_label,
                hop_limit,
            },
        };
        opts.profile = Profile::Dcp;
    }
    match info {
        Some(i) if i.payload => fr.roce = fr.roce.with_payload(inp.rest(2048)),
        // Unknown opcodes: everything after the BTH reads back as payload (no pad).
        None => fr.roce.payload = inp.rest(2048),
        _ => {}
    }
    let bytes = fr.to_vec();
    let f = decode_built(&bytes, &fr, &opts);
    let p = f.roce().expect("a built RoCE frame decodes as RoCE");
    if dcp {
        assert_eq!(f.profile(), Profile::Dcp);
        assert_eq!(*f.ext(), Ext::Dcp(dcp::Dcp { tag: dcp::TAG_DATA, ho: false, emsn: None }));
    }
    assert_eq!(RoceRepr::parse(p), fr.roce);
    assert_eq!(p.payload(), fr.roce.payload.get(..p.payload().len()).unwrap_or(&[]));
}

fn roundtrip_mac_control(inp: &mut Input<'_>) {
    let repr = if inp.bool() {
        MacControlRepr::Pause { quanta: inp.u16() }
    } else {
        let class_enable = inp.u16();
        let mut quanta = [0u16; 8];
        quanta.iter_mut().for_each(|q| *q = inp.u16());
        MacControlRepr::Pfc { class_enable, quanta }
    };
    let mut bytes = Vec::new();
    build::mac_control_frame(inp.bytes(), &repr, &mut bytes);
    let f = check_frame(LinkType::Ethernet, &bytes, bytes.len(), &DecodeOptions::default());
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    let mc = f.mac_control().expect("MAC control frame");
    match repr {
        MacControlRepr::Pause { quanta } => {
            assert_eq!((mc.class_enable(), mc.quanta_count(), mc.quanta(0)), (None, 1, quanta));
        }
        MacControlRepr::Pfc { class_enable, quanta } => {
            assert_eq!(mc.class_enable(), Some(class_enable));
            let got: Vec<u16> = (0..mc.quanta_count()).map(|i| mc.quanta(i)).collect();
            assert_eq!(got, quanta);
        }
    }
}

fn roundtrip_cm(inp: &mut Input<'_>) {
    const MSGS: [CmMsg; 7] = [CmMsg::Req, CmMsg::Mra, CmMsg::Rej, CmMsg::Rep, CmMsg::Rtu, CmMsg::Dreq, CmMsg::Drep];
    let cm = CmRepr {
        msg: MSGS[inp.u8() as usize % MSGS.len()],
        transaction_id: inp.u64(),
        local_comm_id: inp.u32(),
        remote_comm_id: inp.u32(),
        qpn: inp.u24(),
        start_psn: inp.u24(),
    };
    let mut mad = [0u8; CmRepr::LEN];
    cm.emit(&mut mad);
    let mut r = RoceRepr::new(0x64, 1, inp.u24()).with_payload(&mad);
    if let Some(d) = &mut r.deth {
        d.q_key = 0x8001_0000;
        d.src_qp = 1;
    }
    let fr = frame_repr(inp, r);
    let bytes = fr.to_vec();
    let f = decode_built(&bytes, &fr, &DecodeOptions::default());
    assert_eq!(RoceRepr::parse(f.roce().expect("RoCE")), fr.roce);
    let got = f.cm().expect("CM MAD");
    assert_eq!(got.msg(), cm.msg);
    assert_eq!(got.local_comm_id(), cm.local_comm_id);
    if cm.msg != CmMsg::Req {
        assert_eq!(got.remote_comm_id(), Some(cm.remote_comm_id));
    }
    if let Some(q) = got.local_qpn().or(got.remote_qpn()) {
        assert_eq!(q, cm.qpn);
    }
    if let Some(psn) = got.start_psn() {
        assert_eq!(psn, cm.start_psn);
    }
}
