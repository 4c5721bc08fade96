//! Compressed captures, as tshark reads them (issue 11): a capture compressed by the system's
//! `gzip` and `zstd` (installed by `.ci/run`; concatenated members and frames too) decodes
//! exactly as the plain file, from a file and from a pipe; a damaged compressed file is a
//! located error, not a panic; a missing file says so without a byte position; two pcap files
//! one after the other and a damaged pcapng block are named in plain words, not the parsing
//! library's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rocescope");

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures").join(name)
}

fn fields(arg: &Path, stdin: Option<Vec<u8>>) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(["decode", "-T", "fields", "-e", "frame.number", "-e", "rocescope.bth.psn", "-e", "rocescope.icrc.status"]).arg(arg);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        if let Some(b) = stdin {
            let _ = input.write_all(&b);
        }
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// `tool` (gzip or zstd) run over `input`, its output bytes.
fn compress(tool: &str, input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(tool)
        .args(["-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool} is needed (Debian: apt-get install {tool}): {e}"));
    let mut i = child.stdin.take().unwrap();
    let data = input.to_vec();
    let t = std::thread::spawn(move || i.write_all(&data));
    let out = child.wait_with_output().unwrap();
    t.join().unwrap().unwrap();
    assert!(out.status.success());
    out.stdout
}

#[test]
fn gzip_and_zstd_captures_decode_as_the_plain_file() {
    let dir = std::env::temp_dir().join(format!("rocescope-compressed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["std-mix.pcapng", "synth-dcp-loss.pcapng"] {
        let plain = std::fs::read(fixture(name)).unwrap();
        let (code, want, _) = fields(&fixture(name), None);
        assert_eq!(code, Some(0));
        assert!(want.lines().count() > 50);
        for tool in ["gzip", "zstd"] {
            // Two members / frames: the capture split in two and compressed piecewise, as
            // concatenated .gz files and multi-frame .zst files are.
            let cut = plain.len() / 2;
            let mut z = compress(tool, &plain[..cut]);
            z.extend(compress(tool, &plain[cut..]));
            let path = dir.join(format!("{name}.{tool}"));
            std::fs::write(&path, &z).unwrap();
            let (code, got, err) = fields(&path, None);
            assert_eq!((code, got.as_str()), (Some(0), want.as_str()), "{name} via {tool}: {err}");
            let (code, got, err) = fields(Path::new("-"), Some(z.clone()));
            assert_eq!((code, got.as_str()), (Some(0), want.as_str()), "{name} via {tool} on a pipe: {err}");
            // Damaged: the compressed stream cut short. The frames before the damage come out,
            // then a located error (exit 2).
            let damaged = dir.join(format!("{name}.{tool}.cut"));
            std::fs::write(&damaged, &z[..z.len() / 3]).unwrap();
            let (code, got, err) = fields(&damaged, None);
            assert_eq!(code, Some(2), "{name} via {tool}, cut: {err}");
            assert!(err.contains("byte "), "located: {err}");
            assert!(want.starts_with(&got), "what came out before the damage is right");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_file_says_so_without_a_byte_position() {
    let (code, _, err) = fields(Path::new("/nonexistent/x.pcap"), None);
    assert_eq!(code, Some(2));
    assert_eq!(err.trim(), "rocescope: /nonexistent/x.pcap: cannot open: No such file or directory");
}

/// A classic pcap file (little-endian, microseconds, Ethernet) of these frames, written here
/// from the format's definition (24-byte header, 16-byte record headers).
fn pcap_file<'a>(frames: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut v = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
    v.extend([0u8; 8]);
    v.extend(65535u32.to_le_bytes());
    v.extend(1u32.to_le_bytes());
    for (i, f) in frames.enumerate() {
        v.extend(1_700_000_000u32.to_le_bytes());
        v.extend((i as u32).to_le_bytes());
        v.extend((f.len() as u32).to_le_bytes());
        v.extend((f.len() as u32).to_le_bytes());
        v.extend(f);
    }
    v
}

/// A capture given to `decode`: exit code, number of frames printed, standard error.
fn decode_bytes(bytes: Vec<u8>) -> (Option<i32>, usize, String) {
    let (code, out, err) = fields(Path::new("-"), Some(bytes));
    (code, out.lines().count(), err)
}

#[test]
fn damaged_structures_are_named_in_plain_words() {
    // Two pcap files one after the other (`cat a.pcap b.pcap | rocescope decode -`): the first
    // file's frames, then the error at the second header; no bogus frame made of its bytes.
    let pcapng = std::fs::read(fixture("std-mix.pcapng")).unwrap();
    let frames = fields(&fixture("std-mix.pcapng"), None).1.lines().count();
    let mix = rocescope_testsupport::testgen::standard_mix();
    let pcap = pcap_file(mix.iter().map(|f| f.bytes.as_slice()));
    let n = mix.len();
    let mut twice = pcap.clone();
    twice.extend(&pcap);
    let (code, printed, err) = decode_bytes(twice);
    assert_eq!((code, printed), (Some(2), n), "{err}");
    assert!(err.contains(&format!("byte {}: a second pcap file starts here", pcap.len())), "{err}");
    // A pcapng block whose trailing length disagrees with its leading one: said so, not in the
    // parsing library's words.
    let mut bad = pcapng.clone();
    let at = bad.len() - 4;
    bad[at] ^= 0x40;
    let (code, printed, err) = decode_bytes(bad);
    assert_eq!(code, Some(2));
    assert_eq!(printed, frames - 1, "every frame before the damaged last block");
    assert!(err.contains("leading and trailing lengths differ") && !err.contains("initial_length"), "{err}");
}
