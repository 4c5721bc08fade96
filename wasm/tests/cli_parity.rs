//! The browser's decode is the command line's: `decode_capture` on the bundled fixtures gives,
//! frame for frame, every field value that `rocescope decode --format json` gives (the built
//! binary is run), the same summary line as `rocescope decode`, the same located error for a
//! cut file, and hex-view offsets that point at the frame's bytes in the file.
//!
//! The binary is the workspace's `target/<profile>/rocescope`, built by `cargo test --workspace`
//! (the rocescope package's own tests need it); when it is missing (`cargo test -p
//! rocescope-wasm`), the test builds it with cargo. `ROCESCOPE_BIN` overrides the path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rocescope_analysis::capture::CaptureReader;
use rocescope_codec::FieldId;
use rocescope_wasm::{decode_capture, inspect, Inspection};
use serde_json::Value;

mod common;
use common::{bin, root};


fn fixture(name: &str) -> PathBuf {
    root().join("fixtures").join(name)
}


/// Runs `rocescope decode ARGS FILE`: (exit code, stdout, stderr).
fn cli(args: &[&str], file: &Path) -> (i32, String, String) {
    let o = Command::new(bin()).arg("decode").args(args).arg(file).output().expect("run rocescope");
    (o.status.code().unwrap_or(-1), String::from_utf8(o.stdout).unwrap(), String::from_utf8(o.stderr).unwrap())
}

fn decode(file: &Path, options: &str) -> (Inspection, Value) {
    let bytes = std::fs::read(file).unwrap();
    let json: Value = serde_json::from_str(&decode_capture(&bytes, options)).expect("decode_capture gives JSON");
    (inspect(&bytes, options), json)
}

/// A CLI JSON value as `--format fields` text: numbers in decimal, booleans 0/1, strings as
/// they are.
fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => (if *b { "1" } else { "0" }).into(),
        Value::Number(n) => n.to_string(),
        other => panic!("unexpected JSON value {other}"),
    }
}

/// Compares every frame of `file` decoded with the options and with the equivalent flags.
/// Returns the number of field values compared.
fn compare(file: &Path, flags: &[&str], options: &str) -> usize {
    let mut args = vec!["--format", "json"];
    args.extend_from_slice(flags);
    let (code, out, err) = cli(&args, file);
    assert_eq!(code, 0, "rocescope {args:?}: {err}");
    let want: Vec<Value> = serde_json::from_str(&out).expect("CLI JSON");
    let (got, got_json) = decode(file, options);
    assert!(got.error.is_none(), "{:?}", got.error);
    assert_eq!(got_json["frames"].as_array().unwrap().len(), got.frames.len());
    assert_eq!(got.frames.len(), want.len(), "{}: frame count", file.display());
    let mut compared = 0;
    for (g, w) in got.frames.iter().zip(&want) {
        let n = g.number;
        assert_eq!(w["frame"], n, "frame numbers");
        assert_eq!(w["time_ns"].as_str().unwrap(), g.time_ns, "frame {n}: time_ns");
        assert_eq!(w["len"], g.len, "frame {n}: len");
        assert_eq!(w["cap_len"], g.cap_len, "frame {n}: cap_len");
        assert_eq!(w["interface"], g.interface, "frame {n}: interface");
        assert_eq!(w.get("src").and_then(Value::as_str), g.src.as_deref(), "frame {n}: src");
        assert_eq!(w.get("dst").and_then(Value::as_str), g.dst.as_deref(), "frame {n}: dst");
        let mut want_fields: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (k, v) in w.as_object().unwrap() {
            // (time_relative and time_delta depend on the frames before: the page computes them itself.)
            if ["frame", "time_ns", "time_relative", "time_delta", "len", "cap_len", "interface", "src", "dst"].contains(&k.as_str()) {
                continue;
            }
            // The capture columns under their dotted names repeat the keys above.
            if rocescope_analysis::output::Meta::from_name(k).is_some() {
                continue;
            }
            assert!(FieldId::from_name(k).is_some(), "frame {n}: CLI key {k} is not in the registry");
            let vals = match v {
                Value::Array(a) => a.iter().map(as_text).collect(),
                v => vec![as_text(v)],
            };
            want_fields.insert(k, vals);
        }
        let mut got_fields: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for f in &g.fields {
            got_fields.entry(f.name).or_default().push(f.value.clone());
            assert!(f.start <= f.end && f.end <= g.cap_len, "frame {n}: {} has bytes {}..{} of {}", f.name, f.start, f.end, g.cap_len);
        }
        assert_eq!(got_fields, want_fields, "frame {n} of {}", file.display());
        compared += want_fields.values().map(Vec::len).sum::<usize>();
        let warnings: Vec<String> = want_fields.get("rocescope.warning").cloned().unwrap_or_default();
        assert_eq!(g.warnings, warnings, "frame {n}: warnings");
    }
    compared
}

#[test]
fn std_mix_every_field_as_the_cli() {
    let n = compare(&fixture("std-mix.pcapng"), &[], "{}");
    assert!(n > 3000, "only {n} values compared");
}

#[test]
fn ext_mix_every_field_as_the_cli() {
    let (got, _) = decode(&fixture("ext-mix.pcapng"), "{}");
    let profiles: std::collections::BTreeSet<_> = got.frames.iter().filter_map(|f| f.profile).collect();
    for p in ["std", "dcp", "sdr", "flor", "netrt", "erd"] {
        assert!(profiles.contains(p), "ext-mix has no {p} frame: {profiles:?}");
    }
    let n = compare(&fixture("ext-mix.pcapng"), &[], "{}");
    assert!(n > 500, "only {n} values compared");
}

#[test]
fn options_act_as_the_flags() {
    let ext = fixture("ext-mix.pcapng");
    let cases: &[(&[&str], &str)] = &[
        (&["--profile", "std"], r#"{"profile":"std"}"#),
        (&["--profile", "dcp", "--dcp-tag-shift", "3"], r#"{"profile":"dcp","dcp_tag_shift":"3"}"#),
        (&["--profile", "sdr", "--sdr-split", "8,22,2", "--sdr-mtu", "1024"], r#"{"profile":"sdr","sdr_split":"8,22,2","sdr_mtu":1024}"#),
        (&["--sdr-max-message", "65536", "--sdr-chunk-packets", "2"], r#"{"sdr_max_message":"65536","sdr_chunk_packets":2}"#),
        (
            &["--flor-split", "1,20,11", "--flor-unit-size", "2048", "--flor-ack-set-means", "write"],
            r#"{"flor_split":[1,20,11],"flor_unit_size":"2048","flor_ack_set_means":"write"}"#,
        ),
        (&["--netrt-opcode", "0xc1", "--erd-nack-port", "4793"], r#"{"netrt_opcode":"0xc1","erd_nack_port":4793}"#),
        (&["--map", "qpn=0x400=flor", "--map", "ip=10.1.0.1-10.1.0.2=std"], r#"{"maps":["qpn=0x400=flor","ip=10.1.0.1-10.1.0.2=std"]}"#),
    ];
    let fields = |options: &str| -> Vec<Vec<(&'static str, String)>> {
        let (got, _) = decode(&ext, options);
        got.frames.into_iter().map(|f| f.fields.into_iter().map(|x| (x.name, x.value)).collect()).collect()
    };
    let defaults = fields("{}");
    let fixed = |p: &str| fields(&format!(r#"{{"profile":"{p}"}}"#));
    for (flags, options) in cases {
        compare(&ext, flags, options);
        // Each case changes the decode (else it would prove nothing about the option).
        let base = if options.contains("dcp_tag_shift") {
            fixed("dcp")
        } else if options.contains("sdr_split") {
            fixed("sdr")
        } else {
            defaults.clone()
        };
        assert_ne!(fields(options), base, "{options} changes nothing");
    }
    compare(&fixture("std-mix.pcapng"), &["--profile", "erd"], r#"{"profile":"erd"}"#);
    // -c N
    let (got, _) = decode(&ext, r#"{"count":5}"#);
    assert_eq!(got.frames.len(), 5);
}

#[test]
fn summary_lines_are_the_clis() {
    for name in ["std-mix.pcapng", "ext-mix.pcapng"] {
        let file = fixture(name);
        // (`-t e`: the time as seconds since the epoch, which the page shows beside its date.)
        let (code, out, _) = cli(&["-t", "e"], &file);
        assert_eq!(code, 0);
        let (got, _) = decode(&file, "");
        let want: Vec<&str> = out.lines().collect();
        assert_eq!(want.len(), got.frames.len());
        for (g, w) in got.frames.iter().zip(want) {
            // The CLI's line: number, time, src → dst, summary, <profile> unless std, [warnings].
            let t: u64 = g.time_ns.parse().unwrap();
            let mut line = format!(
                "{:>6} {}.{:09} {} → {} {}",
                g.number,
                t / 1_000_000_000,
                t % 1_000_000_000,
                g.src.as_deref().unwrap_or("-"),
                g.dst.as_deref().unwrap_or("-"),
                g.summary
            );
            // The CLI tags every packet decoded under an extension (ERD NACK segments too).
            if let Some(p) = g.profile.filter(|p| *p != "std") {
                line += &format!(" <{p}>");
            }
            for warning in &g.warnings {
                line += &format!(" [{warning}]");
            }
            assert_eq!(line, w, "{name}");
        }
    }
}

#[test]
fn hex_view_offsets_point_at_the_frames() {
    for name in ["std-mix.pcapng", "ext-mix.pcapng"] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let (got, _) = decode(&fixture(name), "{}");
        let mut reader = CaptureReader::new(&bytes[..]).unwrap();
        for f in &got.frames {
            let rec = reader.next_record().unwrap().unwrap();
            let at = f.data_offset as usize;
            assert_eq!(&bytes[at..at + f.cap_len], rec.data, "{name} frame {}", f.number);
        }
    }
}

#[test]
fn flows_count_every_roce_packet() {
    let (got, json) = decode(&fixture("ext-mix.pcapng"), "{}");
    let roce: u64 = got.flows.iter().map(|f| f.packets).sum();
    assert_eq!(roce, got.stats.roce);
    assert_eq!(got.stats.packets.values().sum::<u64>(), got.stats.roce);
    let flow = got.flows.iter().find(|f| f.id == "10.1.0.1>10.1.0.2/256").expect("DCP flow");
    assert_eq!(flow.profile, "dcp");
    let frames: Vec<_> = got.frames.iter().filter(|f| f.src.as_deref() == Some("10.1.0.1") && f.summary.contains("QP=0x000100 ")).collect();
    assert_eq!(flow.packets, frames.len() as u64);
    assert_eq!(flow.bytes, frames.iter().map(|f| f.len as u64).sum::<u64>());
    assert_eq!(json["flows"][0]["id"], got.flows[0].id);
    // The CLI's auto-detection report, as numbers.
    assert_eq!(got.stats.flows_unsure, 1);
    assert_eq!(got.stats.packets_unsure, 8);
}

#[test]
fn a_cut_capture_is_the_clis_located_error() {
    let bytes = std::fs::read(fixture("std-mix.pcapng")).unwrap();
    let cut = &bytes[..bytes.len() * 2 / 3];
    let dir = std::env::temp_dir().join(format!("rocescope-wasm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cut.pcapng");
    std::fs::write(&file, cut).unwrap();
    let (code, out, err) = cli(&["--format", "json"], &file);
    assert_eq!(code, 2);
    let want: Vec<Value> = serde_json::from_str(&out).unwrap();
    let got = inspect(cut, "{}");
    let e = got.error.expect("an error");
    // rocescope: FILE: byte N: what
    assert_eq!(err.trim_end(), format!("rocescope: {}: {}", file.display(), e.text));
    assert!(e.text.starts_with(&format!("byte {}: ", e.offset.unwrap())));
    assert!(e.offset.unwrap() > 0);
    assert_eq!(got.frames.len(), want.len(), "frames before the error");
    assert!(!got.frames.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}
