//! Issue 3's acceptance on a capture mixing all six profiles (`fixtures/ext-mix.pcapng`, from
//! `rocescope::testgen_ext`): `auto` labels every packet that identifies itself (and its flow
//! after it) with the right profile, reports what it could not classify, and leaves ordinary
//! RoCE marked DSCP 26/27 alone; `-e` prints every extension field of the registry.

use std::path::PathBuf;
use std::process::{Command, Output};

use rocescope::testgen_ext::{extension_mix, extension_mix_pcapng};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/ext-mix.pcapng")
}

fn rocescope(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope")).args(args).arg(fixture()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn ext_mix_fixture_is_up_to_date() {
    let have = std::fs::read(fixture()).unwrap();
    assert!(have == extension_mix_pcapng(), "fixtures/ext-mix.pcapng is stale: cargo run -p rocescope --example write_ext_mix");
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
    // The SEND-only DSCP 26 flow is reported, once, on the frame where detection gives up, and
    // the run ends with a count of what was not classified.
    let warned: Vec<&str> = lines.iter().filter(|l| l.contains("rule dcp")).copied().collect();
    assert_eq!(warned.len(), 1);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("auto: 8 packets in 1 flows could not be classified"), "{err}");
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
