//! Issue 3's acceptance on a capture mixing all six profiles (`fixtures/ext-mix.pcapng`, from
//! `rocescope_testsupport::testgen_ext`): `auto` labels every packet of a flow that identifies
//! itself (before and after the deciding packet: detection looks ahead, docs/profiles.md) with
//! the right profile, reports what it could not classify, and leaves ordinary RoCE marked DSCP
//! 26/27 alone; `-e` prints every extension field of the registry.

use std::path::PathBuf;
use std::process::{Command, Output};

use rocescope_testsupport::testgen_ext::{extension_mix, extension_mix_pcapng};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/ext-mix.pcapng")
}

fn rocescope(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).arg(fixture()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn ext_mix_fixture_is_up_to_date() {
    let have = std::fs::read(fixture()).unwrap();
    assert!(have == extension_mix_pcapng(), "fixtures/ext-mix.pcapng is stale: cargo run -p rocescope-testsupport --example write_ext_mix");
}

#[test]
fn auto_labels_every_packet_with_its_flows_profile_once_identified() {
    let o = rocescope(&["decode", "--format", "fields", "-e", "rocescope.profile", "-e", "rocescope.warning"]);
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    let mix = extension_mix();
    assert_eq!(lines.len(), mix.len());
    let mut seen = [0usize; 6];
    for (i, (line, f)) in lines.iter().zip(&mix).enumerate() {
        let (profile, warning) = line.split_once('\t').unwrap();
        assert_eq!(profile, f.expect.name(), "frame {}: {}", i + 1, f.desc);
        seen[f.expect as usize] += 1;
        if !f.desc.starts_with("ordinary SEND-only flow") {
            assert_eq!(warning, "", "frame {}: {}", i + 1, f.desc);
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "every profile appears: {seen:?}");
    // The SEND-only DSCP 26 flow (8 tagged packets that decide nothing) is reported once, on its
    // first packet, and the run ends with a count of what was not classified.
    let warned: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.contains("rule dcp")).map(|(i, _)| i).collect();
    let first = mix.iter().position(|f| f.desc.starts_with("ordinary SEND-only flow")).unwrap();
    assert_eq!(warned, [first]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("auto: 8 packets of 1 flow could not be classified"), "{err}");
}

#[test]
fn every_extension_field_prints_with_dash_e() {
    let ext: Vec<&str> = rocescope_codec::FIELDS
        .iter()
        .map(|f| f.name)
        .filter(|n| ["dcp", "sdr", "flor", "netrt", "erd"].iter().any(|p| n.starts_with(&format!("rocescope.{p}."))))
        .collect();
    assert!(ext.len() > 50);
    // The DCP ACK only says "DCP" through its flow: map the DCP pair explicitly.
    let mut args = vec!["decode", "--format", "fields", "--map", "ip=10.1.0.1-10.1.0.2=dcp"];
    for n in &ext {
        args.extend(["-e", n]);
    }
    let out = String::from_utf8(rocescope(&args).stdout).unwrap();
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    for (i, name) in ext.iter().enumerate() {
        let values: Vec<&str> = rows.iter().map(|r| r[i]).filter(|v| !v.is_empty()).collect();
        assert!(!values.is_empty(), "{name} never printed");
    }
    // Spot checks against the generator's values.
    let col = |name: &str| ext.iter().position(|n| *n == name).unwrap();
    let all = |name: &str| rows.iter().map(|r| r[col(name)]).filter(|v| !v.is_empty()).collect::<Vec<_>>();
    assert!(all("rocescope.sdr.user_imm").contains(&&*0xCAFEF00Du32.to_string()));
    assert_eq!(all("rocescope.netrt.requested"), ["258,261"]);
    assert_eq!(all("rocescope.erd.nack.psn"), ["21,23"]);
    assert_eq!(all("rocescope.sdr.ctrl.indices"), ["3,7"]);
    assert_eq!(all("rocescope.dcp.emsn"), ["3"]);
    assert!(all("rocescope.flor.ack.acked").contains(&"2,3072,3073,2147486722"));
}

#[test]
fn an_explicit_profile_decodes_what_it_does_not_apply_to_as_std_without_warnings() {
    for p in ["std", "dcp", "sdr", "flor", "netrt", "erd"] {
        let o = rocescope(&["decode", "--profile", p, "--format", "fields", "-e", "rocescope.profile", "-e", "rocescope.warning"]);
        let out = String::from_utf8(o.stdout).unwrap();
        for (i, (line, f)) in out.lines().zip(extension_mix()).enumerate() {
            let (profile, warning) = line.split_once('\t').unwrap();
            assert!(profile == p || profile == "std" || profile.is_empty(), "--profile {p}, frame {}: {profile}", i + 1);
            // Under the frame's own profile (or std for ordinary traffic), no warnings.
            if f.expect.name() == p {
                assert_eq!(warning, "", "--profile {p}, frame {}: {}", i + 1, f.desc);
            }
        }
    }
}

/// A capture cut by a snaplen (`tcpdump -s N`, `editcap -s N`) is judged by what was captured:
/// a header the snaplen cuts is named in a `Truncated` warning, which says nothing against the
/// packet, so detection still works on what is left, and `check` finds nothing bad in a
/// capture that is clean on the wire. No cut packet gets a profile its whole version does not.
#[test]
fn a_snaplen_cut_capture_is_detected_and_checked_like_the_whole_one() {
    use rocescope_analysis::capture::CaptureWriter;
    let mix = extension_mix();
    let dir = std::env::temp_dir().join(format!("rocescope-ext-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str], path: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).arg(path).output().unwrap()
    };
    let labels = |path: &std::path::Path| -> Vec<String> {
        let o = run(&["decode", "--format", "fields", "-e", "rocescope.profile"], path);
        String::from_utf8(o.stdout).unwrap().lines().map(String::from).collect()
    };
    let whole = labels(&fixture());
    for snaplen in [54usize, 58, 60, 64, 70, 76, 90, 128] {
        let path = dir.join(format!("cut{snaplen}.pcapng"));
        let mut w = CaptureWriter::new(std::fs::File::create(&path).unwrap(), &["cut"]).unwrap();
        for (i, f) in mix.iter().enumerate() {
            w.write_truncated(0, 1_700_000_000_000_000_000 + i as u64 * 1000, &f.bytes, snaplen).unwrap();
        }
        drop(w);
        let o = run(&["check"], &path);
        assert_eq!(o.status.code(), Some(0), "snaplen {snaplen}: {}", String::from_utf8_lossy(&o.stdout));
        // A NetRT message whose body the snaplen removed is cut, not short: under an explicit
        // profile the cut capture has no bad packet the whole one does not have.
        let bad = |path: &std::path::Path| String::from_utf8(run(&["check", "--profile", "netrt"], path).stdout).unwrap();
        let (cut_bad, whole_bad) = (bad(&path), bad(&fixture()));
        assert!(cut_bad.lines().all(|l| whole_bad.contains(l)), "netrt, snaplen {snaplen}: {cut_bad} vs {whole_bad}");
        let cut = labels(&path);
        assert_eq!(cut.len(), whole.len());
        for (i, (c, w)) in cut.iter().zip(&whole).enumerate() {
            assert!(c == w || c.is_empty() || c == "std", "snaplen {snaplen}, frame {}: {c} where the whole capture says {w} ({})", i + 1, mix[i].desc);
        }
    }
    // The DCP header-only packet, whose flow a WRITE cut inside its headers precedes, stays dcp
    // (it used to lose its flow's detection to the cut WRITE's warning).
    let ho = mix.iter().position(|f| f.desc.contains("header-only")).expect("a header-only packet");
    let path = dir.join("cut70.pcapng");
    assert_eq!(labels(&path)[ho], "dcp", "{}", mix[ho].desc);
}
