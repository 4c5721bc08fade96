//! The analysers in the page (`src/analysis.rs`, `Inspector::analyze`) say what the command
//! line says, the built `rocescope` binary run on the same fixtures: the flow table is `rocescope
//! flows --format json`, each flow's timeline is `rocescope timeline --format json`'s, each
//! flow's plot is the SVG `rocescope timeline --svg` writes, and every frame's analysis fields
//! are `rocescope decode --analysis --format json`'s; the list's flags agree with the fields.

use std::path::Path;
use std::process::Command;

use rocescope_wasm::inspector::Inspector;
use serde_json::Value;

mod common;
use common::{bin, root};

fn run(args: &[&str], file: &Path) -> Vec<u8> {
    let o = Command::new(bin()).args(args).arg(file).output().expect("run rocescope");
    assert!(o.status.success(), "rocescope {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// A CLI JSON value as `--format fields` text.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => (if *b { "1" } else { "0" }).into(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(","),
        other => panic!("unexpected JSON value {other}"),
    }
}

#[test]
fn the_page_analyses_as_the_command_line() {
    let names = [
        "synth-gbn-loss.pcapng",
        "synth-irn-loss.pcapng",
        "synth-dcp-loss.pcapng",
        "synth-sdr-loss.pcapng",
        "synth-sdr-ec-loss.pcapng",
        "synth-flor-loss.pcapng",
        "synth-netrt-loss.pcapng",
        "synth-erd-loss.pcapng",
        "ext-mix.pcapng",
        "std-mix.pcapng",
    ];
    let (mut frames_with_fields, mut plots, mut flagged) = (0, 0, 0);
    for name in names {
        let file = root().join("fixtures").join(name);
        let mut page = Inspector::open(std::fs::read(&file).unwrap(), "{}", |_| {});
        // A slice at a time, as the worker runs them (97 frames: slices end mid-flow).
        let mut shares = Vec::new();
        loop {
            let s = page.index_mut().analyze_step(97);
            shares.push(s);
            if s >= 1.0 {
                break;
            }
        }
        let slices = 2 * page.index().len().div_ceil(97);
        assert!(shares.windows(2).all(|w| w[0] <= w[1]) && shares.len() >= slices, "{name}: progress {shares:?}");
        let got: Value = serde_json::from_str(&page.analysis()).unwrap();

        // The flow table.
        let flows: Value = serde_json::from_slice(&run(&["flows", "--format", "json"], &file)).unwrap();
        assert_eq!(got["flows"], flows, "{name}: flows");

        // Each flow's timeline and plot.
        let timeline: Value = serde_json::from_slice(&run(&["timeline", "--format", "json"], &file)).unwrap();
        let want = timeline["flows"].as_array().unwrap();
        assert_eq!(got["timeline"].as_array().unwrap().len(), want.len(), "{name}: timeline flows");
        let dir = std::env::temp_dir().join(format!("rocescope-page-plots-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let o = Command::new(bin()).args(["timeline", "--svg"]).arg(&dir).arg(&file).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for (i, w) in want.iter().enumerate() {
            let f: Value = serde_json::from_str(&page.flow_timeline(i as u32)).unwrap();
            assert_eq!(&f, w, "{name}: flow {i}'s timeline");
            let id = w["id"].as_str().unwrap();
            let svg_name: String =
                id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
            let svg = dir.join(format!("{svg_name}.svg"));
            let has_plot = got["timeline"][i]["plot"].as_bool().unwrap();
            assert_eq!(svg.exists(), has_plot, "{name}: flow {id}'s plot");
            if has_plot {
                assert_eq!(
                    page.flow_plot(i as u32),
                    std::fs::read_to_string(&svg).unwrap(),
                    "{name}: flow {id}'s plot"
                );
                plots += 1;
            }
        }
        let _ = std::fs::remove_dir_all(&dir);

        // Every frame's analysis fields, and the list's flags.
        let decoded: Vec<Value> =
            serde_json::from_slice(&run(&["decode", "--analysis", "--format", "json"], &file)).unwrap();
        let rows = page.rows_of(0, usize::MAX);
        assert_eq!(decoded.len(), rows.len(), "{name}");
        for (w, row) in decoded.iter().zip(&rows) {
            let n = row.number;
            let want: Vec<(String, String)> = w
                .as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| k.starts_with("rocescope.analysis."))
                .map(|(k, v)| (k.clone(), text(v)))
                .collect();
            let mut got: Vec<(String, String)> =
                page.frame_info(n).unwrap().analysis.into_iter().map(|a| (a.name.to_string(), a.value)).collect();
            got.sort();
            let mut want = want;
            want.sort();
            assert_eq!(got, want, "{name}: frame {n}");
            frames_with_fields += !want.is_empty() as usize;
            let field = |k: &str| want.iter().any(|(n, v)| n == k && v != "0");
            for (flag, key) in [
                ("retransmission", "rocescope.analysis.retransmission"),
                ("loss", "rocescope.analysis.loss"),
                ("out_of_order", "rocescope.analysis.out_of_order"),
                ("psn_gap", "rocescope.analysis.psn_gap"),
                ("duplicate_nak", "rocescope.analysis.duplicate_nak"),
                ("spurious", "rocescope.analysis.spurious"),
            ] {
                assert_eq!(row.flags.contains(&flag), field(key), "{name}: frame {n}: {flag}");
            }
            flagged += !row.flags.is_empty() as usize;
        }
    }
    assert!(frames_with_fields > 1000 && plots >= 10 && flagged > 50, "{frames_with_fields} {plots} {flagged}");
}
