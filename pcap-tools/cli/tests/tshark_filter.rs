//! `decode -Y` keeps the frames tshark 4.0's `-Y` keeps (docs/cli.md "Display filters").
//!
//! Each filter of [`FILTERS`] is written with rocescope's names; its tshark twin is the same text
//! with every `rocescope.*` name replaced by tshark's through the mapping the value comparison
//! uses (`common/tshark_fields.rs`, [`tshark_name`]; header presence through [`GROUPS`]). Both
//! run over every bundled capture (`fixtures/*.pcapng`; rocescope with `--profile std`, since
//! tshark knows only the IBTA headers) and must print the same frame numbers. Frames where a
//! named field's mapping does not apply (`Mapping::when`: for the extension headers' fields, the
//! opcodes tshark cannot decode) are left out of the comparison.
//!
//! The filters cover the BTH, RETH and AETH fields, addresses, ports, header presence, `!` of
//! an absent field, `&&`/`||` precedence, parentheses, hex, octal and binary literals, sets,
//! times, and fields present twice in a frame (`ip.addr`, `udp.port`) under `==`, `!=` (every
//! occurrence differs), `===` and `~=`.
//!
//! Skipped, with a message, when tshark is not installed.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/tshark_fields.rs"]
mod tshark_fields;
use tshark_fields::{run, tshark_available, tshark_name, Row, DISABLED_PROTOCOLS, MAPPINGS};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

/// Header presence: rocescope's group, tshark's subtree, and a field of the header (whose
/// mapping says on which frames tshark decodes it).
const GROUPS: &[(&str, &str, &str)] = &[
    ("rocescope.aeth", "infiniband.aeth", "rocescope.aeth.syndrome"),
    ("rocescope.deth", "infiniband.deth", "rocescope.deth.q_key"),
];

/// The filters, in rocescope's names.
const FILTERS: &[&str] = &[
    "rocescope.bth.opcode == 0x0a",
    "rocescope.bth.opcode != 17",
    "rocescope.bth.opcode >= 0x06 && rocescope.bth.opcode <= 0x0B",
    "rocescope.bth.opcode in {0x00, 0x04..0x05, 17}",
    "rocescope.bth.psn < 1000",
    "rocescope.bth.psn gt 16777000 or rocescope.bth.psn == 010",
    "rocescope.bth.psn >= 0b1000 && rocescope.bth.psn le 40",
    "rocescope.bth.destqp == 0xa50000 || rocescope.bth.destqp == 0x000012",
    "rocescope.bth.destqp ne 0xa50000 and rocescope.bth.a == 1",
    "rocescope.bth.a == 0",
    "rocescope.bth.se == 1 || rocescope.bth.m == 1",
    "rocescope.bth.se == 2 && rocescope.bth.psn < 100",
    "rocescope.reth.dmalen > 70000",
    "rocescope.reth.dmalen && rocescope.reth.dmalen != 72088",
    "!rocescope.reth.dmalen",
    "rocescope.aeth.syndrome == 0x60 || rocescope.aeth.msn <= 3",
    "not rocescope.aeth.msn",
    "rocescope.aeth && !(rocescope.aeth.syndrome >= 0x20)",
    "rocescope.deth",
    "ip.src == 192.168.77.10 || ip.dst == 10.0.1.1",
    "ip.src == 10.0.0.0/24",
    "ip.addr == 10.0.0.2",
    "ip.addr != 10.0.0.1",
    "rocescope.bth.opcode === 17 || ip.addr === 192.168.77.10",
    "ip.addr ~= 10.0.1.1",
    "ipv6.src == fd00:5ce0::a && frame.number < 40",
    "udp.port == 4791 && udp.srcport > 58000",
    "udp.port != 49152",
    "udp.srcport != 49152",
    "rocescope.bth.opcode == 0x11 || rocescope.bth.opcode == 0x0a && rocescope.bth.psn > 16700000",
    "(rocescope.bth.opcode == 0x11 || rocescope.bth.opcode == 0x0a) && rocescope.bth.psn > 16700000",
    "not (rocescope.bth.psn >= 10 and rocescope.bth.psn <= 20) && frame.number in {1, 3, 10..40}",
    "frame.len > 100 && frame.cap_len <= 1100",
    "frame.time_relative > 0.00005 && frame.time_delta < 0.000002",
    "frame.time_delta >= 0.000001",
    "ipv6 || tcp",
    "udp && !ip && frame.number > 200",
    "frame.number >= 'A' && frame.number <= 'F'",
    "rocescope.aeth.msn ~= 3 && rocescope.reth.dmalen != 72088 || rocescope.bth.psn eq 00",
];

/// The same filter in tshark's names.
fn translate(filter: &str) -> String {
    let mut out = String::new();
    let mut rest = filter;
    while let Some(at) = rest.find("rocescope.") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_')).unwrap_or(tail.len());
        let name = &tail[..end];
        let theirs = GROUPS
            .iter()
            .find(|(g, _, _)| *g == name)
            .map(|(_, t, _)| *t)
            .or_else(|| tshark_name(name))
            .unwrap_or_else(|| panic!("{name} has no tshark twin in common/tshark_fields.rs"));
        out.push_str(theirs);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The rocescope fields a filter names (a header by its representative field).
fn named_fields(filter: &str) -> Vec<&str> {
    let mut v = Vec::new();
    let mut rest = filter;
    while let Some(at) = rest.find("rocescope.") {
        let tail = &rest[at..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_')).unwrap_or(tail.len());
        let name = &tail[..end];
        v.push(GROUPS.iter().find(|(g, _, _)| *g == name).map_or(name, |(_, _, f)| *f));
        rest = &tail[end..];
    }
    v
}

/// The frames tshark cannot judge the filter on: those where a named field's mapping does not
/// apply (`Mapping::when`: for the extension headers, the opcodes tshark 4.0 decodes; RD is
/// read as Mellanox DC, XRC, FLUSH and ATOMIC WRITE are unknown to it).
fn not_comparable(file: &Path, filter: &str) -> Vec<u64> {
    let names = named_fields(filter);
    let whens: Vec<_> = MAPPINGS.iter().filter(|m| names.contains(&m.ours)).map(|m| m.when).collect();
    let text = run(Command::new(BIN).args(["decode", "--profile", "std", "-e", "frame.number", "-e", "rocescope.bth.opcode"]).arg(file));
    text.lines()
        .filter_map(|l| {
            let (number, opcode) = l.split_once('\t')?;
            let number: u64 = number.parse().ok()?;
            let row = Row {
                number: number as usize,
                ours: Default::default(),
                theirs: [("infiniband.bth.opcode", opcode)].into_iter().collect(),
            };
            whens.iter().any(|w| !w(&row)).then_some(number)
        })
        .collect()
}

fn frame_numbers(text: &str) -> Vec<u64> {
    text.lines().map(|l| l.trim().parse().unwrap_or_else(|_| panic!("not a frame number: {l:?}"))).collect()
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcapng"))
        // Native InfiniBand (link type 247): tshark 4.0 leaves it undecoded (tshark_diff.rs
        // compares those packets through ERF records instead).
        .filter(|p| !p.ends_with("ib-native.pcapng"))
        .collect();
    v.sort();
    assert!(v.len() >= 8, "the bundled captures: {v:?}");
    v
}

/// One comparison: a mismatch message, and how many frames matched and were read.
fn compare(file: &Path, filter: &str, config: &Path) -> (Option<String>, usize, usize) {
    let ours = run(Command::new(BIN).args(["decode", "--profile", "std", "-Y", filter, "-e", "frame.number"]).arg(file));
    let twin = translate(filter);
    let mut cmd = Command::new("tshark");
    cmd.env("WIRESHARK_CONFIG_DIR", config);
    cmd.args(["-n", "-o", "infiniband.rroce.port:4791"]);
    for p in DISABLED_PROTOCOLS {
        cmd.args(["--disable-protocol", p]);
    }
    cmd.arg("-r").arg(file).args(["-Y", &twin, "-T", "fields", "-e", "frame.number"]);
    let theirs = run(&mut cmd);
    let skip = not_comparable(file, filter);
    let keep = |v: Vec<u64>| v.into_iter().filter(|n| !skip.contains(n)).collect::<Vec<_>>();
    let (ours, theirs) = (keep(frame_numbers(&ours)), keep(frame_numbers(&theirs)));
    let total = frame_numbers(&run(Command::new(BIN).args(["decode", "-e", "frame.number"]).arg(file))).len();
    let msg = (ours != theirs).then(|| {
        let only = |a: &[u64], b: &[u64]| a.iter().filter(|n| !b.contains(n)).take(12).copied().collect::<Vec<_>>();
        format!(
            "{}: {filter:?} (tshark: {twin:?}): rocescope {} frames, tshark {}; only rocescope: {:?}; only tshark: {:?}",
            file.file_name().unwrap().to_string_lossy(),
            ours.len(),
            theirs.len(),
            only(&ours, &theirs),
            only(&theirs, &ours)
        )
    });
    (msg, ours.len(), total)
}

#[test]
fn display_filters_keep_the_frames_tshark_keeps() {
    let Some(version) = tshark_available() else {
        eprintln!("skipped: tshark is not installed (Debian: apt-get install tshark)");
        return;
    };
    eprintln!("comparing -Y with {version}");
    let config = std::env::temp_dir().join(format!("rocescope-tshark-filter-{}", std::process::id()));
    std::fs::create_dir_all(&config).unwrap();
    let jobs: Vec<(PathBuf, &str)> =
        fixtures().into_iter().flat_map(|f| FILTERS.iter().map(move |q| (f.clone(), *q))).collect();
    // Two workers: tshark takes most of a second to start.
    let results: Vec<(&str, Option<String>, usize, usize)> = std::thread::scope(|s| {
        let halves: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(2))
            .map(|chunk| {
                let config = &config;
                s.spawn(move || {
                    chunk.iter().map(|(f, q)| {
                        let (m, kept, total) = compare(f, q, config);
                        (*q, m, kept, total)
                    }).collect::<Vec<_>>()
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let _ = std::fs::remove_dir_all(&config);
    let mismatches: Vec<&String> = results.iter().filter_map(|(_, m, _, _)| m.as_ref()).collect();
    // Each filter must keep some frames and drop others somewhere, or it proves little.
    let mut idle = Vec::new();
    for q in FILTERS {
        let kept: usize = results.iter().filter(|r| r.0 == *q).map(|r| r.2).sum();
        let total: usize = results.iter().filter(|r| r.0 == *q).map(|r| r.3).sum();
        if kept == 0 || kept == total {
            idle.push(format!("{q:?} keeps {kept} of {total} frames"));
        }
    }
    assert!(mismatches.is_empty(), "{} disagreement(s) with tshark:\n{}", mismatches.len(), mismatches.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
    assert!(idle.is_empty(), "filters that keep all or nothing:\n{}", idle.join("\n"));
}
