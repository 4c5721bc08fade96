//! The page's on-demand decoding (`src/index.rs`, `src/inspector.rs`) is the whole-capture
//! decoding (`inspect`, itself checked against `rocescope decode` by `cli_parity.rs`): for every
//! fixture, with detection and with fixed profiles, whole and cut inside a record, each frame
//! decoded again from the index has every field, value, byte range, warning, summary line and
//! profile the one pass gave; the list's rows say the same; the statistics, flows and error
//! are the same. Display filters keep exactly the frames `rocescope decode -Y` prints.

use std::path::Path;
use std::process::Command;

use rocescope_wasm::inspector::Inspector;
use rocescope_wasm::{inspect, Inspection};
use serde_json::Value;

mod common;
use common::{bin, fixtures, root};

fn json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

/// Checks the index of `bytes` against the one-pass decoding; returns (frames, frames with
/// state kept for them).
fn check(label: &str, bytes: &[u8], options: &str) -> (usize, usize) {
    let whole: Inspection = inspect(bytes, options);
    let mut reports = Vec::new();
    let page = Inspector::open(bytes.to_vec(), options, |p| reports.push(p));
    let ix = page.index();
    assert_eq!(ix.len(), whole.frames.len(), "{label}: frames");
    assert_eq!(json(&ix.error), json(&whole.error), "{label}: error");
    assert_eq!(json(&ix.stats), json(&whole.stats), "{label}: statistics");
    assert_eq!(json(&ix.flows()), json(&whole.flows), "{label}: flows");
    // The last report is the end: every frame, the whole file.
    let last = reports.last().expect("a progress report");
    assert_eq!((last.frames, last.bytes), (ix.len() as u64, bytes.len() as u64), "{label}");
    let rows = page.rows_of(0, usize::MAX);
    assert_eq!(rows.len(), ix.len(), "{label}: rows");
    for (k, want) in whole.frames.iter().enumerate() {
        let got = page.frame_info(k as u64 + 1).expect("a frame");
        assert_eq!(json(&got), json(want), "{label}: frame {}", k + 1);
        let r = &rows[k];
        let from_frame = (&want.src, &want.dst, want.protocol, want.profile, &want.summary, &want.warnings);
        assert_eq!((&r.src, &r.dst, r.protocol, r.profile, &r.summary, &r.warnings), from_frame, "{label}: row {k}");
        assert_eq!(r.number, want.number, "{label}");
        assert_eq!(ix.frame_bytes(k), &bytes[want.data_offset as usize..][..want.cap_len], "{label}: bytes");
        assert_eq!(ix.flags(k), (!want.warnings.is_empty(), want.profile.is_some()), "{label}: flags of {k}");
    }
    assert!(page.frame_info(0).is_none() && page.frame_info(ix.len() as u64 + 1).is_none(), "{label}");
    (ix.len(), ix.stateful_frames())
}

#[test]
fn every_fixture_decoded_on_demand_as_in_one_pass() {
    let mut stateful = std::collections::BTreeMap::new();
    assert!(fixtures().len() >= 14, "{} fixtures", fixtures().len());
    for file in fixtures() {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&file).unwrap();
        for options in ["{}", r#"{"profile":"std"}"#, r#"{"profile":"sdr"}"#, r#"{"profile":"erd","count":40}"#] {
            let (frames, kept) = check(&format!("{name} {options}"), &bytes, options);
            assert!(frames > 0, "{name}");
            *stateful.entry(name.clone()).or_insert(0) += kept;
        }
        // Indexed again with other options, the file kept: as indexed afresh with them.
        let mut page = Inspector::open(bytes.clone(), "{}", |_| {});
        // (Options that do not parse change nothing.)
        let before = json(&page.rows_of(0, usize::MAX));
        assert_eq!(page.reopen(r#"{"maps":"qpn=0x12="}"#, |_| {}).split(':').next(), Some("options"), "{name}");
        assert_eq!(json(&page.rows_of(0, usize::MAX)), before, "{name}");
        assert_eq!(page.reopen(r#"{"profile":"std"}"#, |_| {}), "", "{name}");
        let fresh = Inspector::open(bytes.clone(), r#"{"profile":"std"}"#, |_| {});
        assert_eq!(page.index().file_len(), bytes.len(), "{name}");
        assert_eq!(json(&page.rows_of(0, usize::MAX)), json(&fresh.rows_of(0, usize::MAX)), "{name}");
        // Cut inside a record: the frames before it, and the error.
        let cut = &bytes[..bytes.len() * 2 / 3];
        check(&format!("{name} cut"), cut, "{}");
        // The analysers run to their end over a cut file too (the frames before the damage).
        let mut page = Inspector::open(cut.to_vec(), "{}", |_| {});
        page.index_mut().analyze(|_| {});
        assert!(page.index().analysis.is_some(), "{name} cut: analysed");
    }
    // The kept state is exercised: SDR's rebuilt immediates, ERD's NACK segments, detection's
    // warnings.
    for f in ["synth-sdr-loss.pcapng", "synth-erd-loss.pcapng", "ext-mix.pcapng"] {
        assert!(stateful[f] > 0, "{f}: no frame kept state ({stateful:?})");
    }
}

#[test]
fn bad_files_and_options_are_errors_with_nothing_indexed() {
    for (bytes, options, want) in [
        (&b"hello, world, this is not a capture file"[..], "{}", "byte 0: not a pcap or pcapng file"),
        (&b""[..], "{}", "empty file"),
        (&b""[..], r#"{"profile":"nope"}"#, "options: profile: unknown profile 'nope'"),
    ] {
        let page = Inspector::open(bytes.to_vec(), options, |_| {});
        let e = page.index().error.as_ref().expect("an error");
        assert!(e.text.starts_with(want) || e.message == want, "{e:?}");
        assert_eq!((page.index().len(), page.shown(), page.rows_of(0, 10).len()), (0, 0, 0));
        assert_eq!(json(&page.index().error), json(&inspect(bytes, options).error));
    }
}

/// `rocescope decode -Y FILTER -e frame.number FILE`: the frame numbers printed.
fn cli_filter(file: &Path, filter: &str) -> Vec<u32> {
    let o = Command::new(bin()).args(["decode", "-Y", filter, "-e", "frame.number"]).arg(file).output().unwrap();
    assert!(o.status.success(), "{filter}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().lines().map(|l| l.trim().parse().unwrap()).collect()
}

#[test]
fn display_filters_keep_the_frames_the_command_line_prints() {
    let cases = [
        ("synth-gbn-loss.pcapng", "rocescope.aeth.kind == nak"),
        ("synth-gbn-loss.pcapng", "rocescope.bth.opcode == 0x0a || rocescope.bth.opcode == 0x06"),
        ("synth-gbn-loss.pcapng", "frame.time_delta_displayed < 0.0000001"),
        ("synth-gbn-loss.pcapng", "frame.time_delta > 0.0000001 && rocescope.bth"),
        ("synth-erd-loss.pcapng", "rocescope.erd.nack.psn"),
        ("synth-sdr-loss.pcapng", "rocescope.sdr.user_imm"),
        ("ext-mix.pcapng", "rocescope.warning"),
        ("ext-mix.pcapng", "!rocescope.bth"),
        ("std-mix.pcapng", "ip.src == 192.168.0.0/16 && frame.len > 100"),
    ];
    for (name, filter) in cases {
        let file = root().join("fixtures").join(name);
        let want = cli_filter(&file, filter);
        let mut page = Inspector::open(std::fs::read(&file).unwrap(), "{}", |_| {});
        assert_eq!(page.set_filter(filter), "", "{filter}");
        // A slice at a time, as the worker runs it: the rows grow in order.
        let mut steps = 0;
        while page.filter_step(7) < 1.0 {
            steps += 1;
        }
        assert!(steps > 0, "{name}: one slice");
        let got: Vec<u32> = page.rows_of(0, usize::MAX).iter().map(|r| r.number as u32).collect();
        assert_eq!(got, want, "{name}: {filter}");
        assert!(!want.is_empty() && want.len() < page.index().len(), "{name}: {filter} selects {} frames", want.len());
        for (row, n) in want.iter().enumerate() {
            assert_eq!(page.row_of(*n), row as i32);
        }
        // A frame filtered out has no row; clearing the filter shows every frame again.
        let out = (1..=page.index().len() as u32).find(|n| !want.contains(n)).unwrap();
        assert_eq!(page.row_of(out), -1);
        assert_eq!(page.set_filter(""), "");
        assert_eq!(page.shown() as usize, page.index().len());
    }
    // A syntax error names its place; the rows stay as they were.
    let mut page = Inspector::open(std::fs::read(root().join("fixtures/ext-mix.pcapng")).unwrap(), "{}", |_| {});
    let e: Value = serde_json::from_str(&page.set_filter("rocescope.bth.psn == ")).unwrap();
    assert!(e["message"].as_str().unwrap().contains("expected"), "{e}");
    assert_eq!(page.shown() as usize, page.index().len());
    let e: Value = serde_json::from_str(&page.set_filter("rocescope.nope == 1")).unwrap();
    assert_eq!((e["start"].as_u64(), e["end"].as_u64()), (Some(0), Some(14)), "{e}");
}
