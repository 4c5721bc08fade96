//! `rocescope export` read by Spark (issue 15, acceptance 1, the Spark half, and acceptance 2):
//! the PySpark script the project ships (pcap-tools/export/spark/rocescope_report.py, the one
//! docs/cluster.md tells users to `spark-submit`) runs unchanged in local mode over an export of
//! captures of different stacks, taps and seeds, and its report equals what the rocescope binary
//! prints on the same files: frames, CNPs, flows, retransmissions, losses, every completed
//! message's latency (count, sum, extremes, exact percentiles), the top flows, losses by tap.
//!
//! Needs python3 with pyspark and a Java runtime (`pip install pyspark`, Debian's
//! openjdk-17-jre-headless; `.ci/run` installs both): without them the test fails and says so.

use std::collections::BTreeMap;
use std::path::Path;


mod export_common;
use export_common::{json, rocescope};

/// The exact percentile `q` of `v` (sorted), interpolated linearly as Spark's `percentile` is.
fn percentile(v: &[f64], q: f64) -> f64 {
    let at = q * (v.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}

#[test]
fn the_shipped_spark_script_reports_what_the_command_line_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("rocescope-export-spark-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A DCP incast with ECN (CNPs), and two fixtures of other stacks and taps.
    let made = dir.join("dcp-incast.pcapng");
    rocescope(&[
        "synth",
        "--stack",
        "dcp",
        "--messages",
        "30",
        "--message-size",
        "16384",
        "--loss",
        "0.02",
        "--ecn-threshold",
        "20000",
        "--incast",
        "4",
        "--seed",
        "3",
        "-o",
        made.to_str().unwrap(),
    ]);
    let captures =
        [made.clone(), root.join("fixtures/synth-gbn-loss.pcapng"), root.join("fixtures/synth-flor-loss.pcapng")];
    let out = dir.join("export");
    let report = export_common::export_and_read(
        &captures,
        &out,
        "host=h3",
        &root.join("pcap-tools/export/spark/rocescope_report.py"),
        "pip install pyspark; a Java runtime",
    );

    let (mut all_retx, mut all_losses_timeline) = (Vec::new(), 0u64);
    for c in &captures {
        let file = c.to_str().unwrap();
        let name = c.file_name().unwrap().to_str().unwrap();
        let got = &report["captures"][name];
        let frames =
            rocescope(&["decode", "-e", "frame.number", file]).split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
        let cnps = rocescope(&["decode", "-Y", "rocescope.bth.opcode == 0x81", "-e", "frame.number", file])
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
        assert_eq!((got["frames"].as_u64(), got["cnps"].as_u64()), (Some(frames as u64), Some(cnps as u64)), "{name}");
        let flows = json(&["flows", "--format", "json", file]);
        let rows = flows["flows"].as_array().unwrap();
        let sum = |k: &str| rows.iter().map(|f| f[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(got["flows"].as_u64(), Some(rows.len() as u64), "{name}: flows");
        assert_eq!(got["retransmitted"].as_u64(), Some(sum("retransmitted")), "{name}");
        assert_eq!(got["losses"].as_u64(), Some(sum("losses")), "{name}");
        all_retx.extend(rows.iter().map(|f| f["retransmitted"].as_u64().unwrap()));
        let t = json(&["timeline", "--format", "json", file]);
        let mut lat: Vec<f64> = Vec::new();
        for f in t["flows"].as_array().unwrap() {
            all_losses_timeline += f["losses"].as_array().unwrap().len() as u64;
            lat.extend(
                f["messages"].as_array().unwrap().iter().filter_map(|m| m["latency_ns"].as_u64()).map(|l| l as f64),
            );
        }
        lat.sort_by(f64::total_cmp);
        let l = &got["latency_ns"];
        assert_eq!(l["completed"].as_u64(), Some(lat.len() as u64), "{name}");
        assert_eq!(l["sum"].as_f64(), Some(lat.iter().sum::<f64>()), "{name}");
        assert_eq!((l["min"].as_f64(), l["max"].as_f64()), (lat.first().copied(), lat.last().copied()), "{name}");
        for (k, q) in [("p50", 0.5), ("p99", 0.99)] {
            let want = percentile(&lat, q);
            assert!((l[k].as_f64().unwrap() - want).abs() < 1e-6 * want.max(1.0), "{name}: {k} {} vs {want}", l[k]);
        }
        assert!(frames > 0 && !lat.is_empty(), "{name}");
    }
    // Across captures: the top flows' retransmissions, and every loss placed at a tap.
    all_retx.sort_unstable_by(|a, b| b.cmp(a));
    let top: Vec<u64> = report["top_flows"].as_array().unwrap().iter().map(|r| r[3].as_u64().unwrap()).collect();
    assert_eq!(top, all_retx[..top.len()].to_vec(), "top flows");
    assert_eq!(top.len(), 20.min(all_retx.len()));
    let by_tap: u64 = report["losses_by_tap"].as_array().unwrap().iter().map(|r| r[3].as_u64().unwrap()).sum();
    assert_eq!(by_tap, all_losses_timeline, "losses by tap");
    assert!(!report["cnp_storms"].as_array().unwrap().is_empty(), "the DCP incast's CNPs");
    let mut per_capture = BTreeMap::new();
    for (k, v) in report["captures"].as_object().unwrap() {
        per_capture.insert(k.clone(), v["frames"].clone());
    }
    assert_eq!(per_capture.len(), 3, "{per_capture:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
