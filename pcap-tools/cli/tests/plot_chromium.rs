//! `rocescope timeline --svg` seen by a browser: the built binary writes the plots of
//! fixtures/synth-gbn-loss.pcapng, and Debian's chromium (headless, driven by playwright-core
//! from tests/chromium/render.mjs under node) decodes a flow plot and overview.svg as images,
//! parses them as XML and puts them inline, where the number of `.loss` marks must equal the
//! losses of the JSON timeline the same run printed, each mark's drawn box centred on its x/y.
//!
//! Needs node, /usr/bin/chromium and `npm ci` in tests/chromium; without them the test fails
//! and says what to install (it never passes by skipping). `.ci/run` installs all three.

use std::path::Path;
use std::process::Command;

fn chromium_setup() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chromium");
    assert!(
        Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success()),
        "node is not installed (Debian: apt-get install nodejs)"
    );
    assert!(Path::new("/usr/bin/chromium").exists(), "/usr/bin/chromium is missing (Debian: apt-get install chromium)");
    assert!(
        dir.join("node_modules/playwright-core/package.json").exists(),
        "playwright-core is not installed: run `npm ci --prefix {}`",
        dir.display()
    );
    dir
}

/// The file name `rocescope timeline --svg DIR` gives a flow's plot.
fn plot_name(id: &str) -> String {
    let name: String = id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
    format!("{name}.svg")
}

/// The `width`/`height` attributes of an SVG file's root element.
fn svg_size(text: &str) -> (u64, u64) {
    let root = &text[text.find("<svg").unwrap()..];
    let root = &root[..root.find('>').unwrap()];
    let attr = |name: &str| -> u64 {
        let at = root.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        root[at..at + root[at..].find('"').unwrap()].parse().unwrap()
    };
    (attr("width"), attr("height"))
}

#[test]
fn chromium_renders_the_plots_with_every_loss() {
    let script_dir = chromium_setup();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("rocescope-plot-chromium-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = Command::new(env!("CARGO_BIN_EXE_rocescope"))
        .args(["timeline", "fixtures/synth-gbn-loss.pcapng", "--format", "json", "--svg"])
        .arg(&dir)
        .current_dir(&root)
        .output()
        .expect("run rocescope");
    assert!(o.status.success(), "rocescope timeline --svg: {}", String::from_utf8_lossy(&o.stderr));
    let timeline: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON timeline");

    // The sender tap's requests flow (interface 0): the one with losses seen at their source.
    let flow = timeline["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["interface"] == 0 && f["role"] == "requests")
        .expect("a requests flow on interface 0");
    let losses = flow["losses"].as_array().unwrap();
    let retx = flow["retransmissions"].as_array().unwrap();
    assert!(!losses.is_empty(), "the fixture loses packets");
    let flow_svg = dir.join(plot_name(flow["id"].as_str().unwrap()));
    let overview_svg = dir.join("overview.svg");
    let flow_size = svg_size(&std::fs::read_to_string(&flow_svg).expect("the flow's plot"));
    let overview_size = svg_size(&std::fs::read_to_string(&overview_svg).expect("overview.svg"));

    let o = Command::new("node")
        .arg(script_dir.join("render.mjs"))
        .arg(&flow_svg)
        .arg(&overview_svg)
        .output()
        .expect("run node");
    assert!(
        o.status.success(),
        "node render.mjs failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let page: serde_json::Value = serde_json::from_slice(&o.stdout).expect("render.mjs prints JSON");
    eprintln!("page screenshot (kept when the test fails): {}", dir.join("page.png").display());

    // Decoded as images, at the size the files declare.
    for (key, (w, h)) in [("flow", flow_size), ("overview", overview_size)] {
        assert_eq!(page[key]["decoded"], true, "{key}: {}", page[key]);
        let natural = (page[key]["naturalWidth"].as_u64(), page[key]["naturalHeight"].as_u64());
        assert_eq!(natural, (Some(w), Some(h)), "{key}");
        assert!(w > 0 && h > 0);
    }
    assert_eq!(page["pageErrors"], serde_json::json!([]));

    // Inline: well-formed, one mark per loss and per retransmission of the JSON timeline.
    let inline = &page["flowInline"];
    assert_eq!(inline["parserError"], false);
    assert_eq!(inline["losses"].as_u64(), Some(losses.len() as u64));
    assert_eq!(inline["retransmissions"].as_u64(), Some(retx.len() as u64));
    let psns: Vec<u64> = losses.iter().map(|l| l["psn"].as_u64().unwrap()).collect();
    let frames: Vec<u64> = losses.iter().map(|l| l["frame"].as_u64().unwrap()).collect();
    assert_eq!(inline["lossPsns"], serde_json::json!(psns));
    assert_eq!(inline["lossFrames"], serde_json::json!(frames));
    let centres = inline["centres"].as_array().unwrap();
    assert_eq!(centres.len(), losses.len() + retx.len());
    for c in centres {
        let d = |a: &str, b: &str| (c[a].as_f64().unwrap() - c[b].as_f64().unwrap()).abs();
        assert!(d("x", "cx") < 0.05 && d("y", "cy") < 0.05, "a mark drawn off its coordinates: {c}");
    }

    // The overview: one goodput line per flow carrying data, and the CDF.
    let data_flows = timeline["flows"].as_array().unwrap().iter().filter(|f| f["role"] == "requests").count();
    assert_eq!(page["overviewInline"]["parserError"], false);
    assert_eq!(page["overviewInline"]["goodputLines"].as_u64(), Some(data_flows as u64));
    assert_eq!(page["overviewInline"]["cdf"].as_u64(), Some(1));
    std::fs::remove_dir_all(&dir).ok();
}
