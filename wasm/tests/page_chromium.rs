//! The inspector page in a real browser (issue 14, acceptance 1 and 3): `test/page_e2e.mjs`
//! drives Debian's headless chromium with playwright-core over the page built by
//! `wasm/build.sh` (`www/pkg`), and checks what it shows against the `rocescope` binary: every
//! field of chosen frames of every profile's fixture, the hex highlight of clicked fields,
//! display filters typed in the box, a flow picked in the flow table, and the errors of
//! garbage, cut and empty files with the frames before the damage.
//!
//! Needs node, /usr/bin/chromium, playwright-core (`npm ci --prefix pcap-tools/cli/tests/chromium`)
//! and the built page; without them the test fails and says what to do (it never passes by
//! skipping). `.ci/run` provides all of them.

use std::process::Command;

mod common;
use common::{bin, root};

#[test]
fn the_page_in_chromium_shows_what_the_command_line_decodes() {
    let root = root();
    assert!(
        root.join("wasm/www/pkg/rocescope_wasm_bg.wasm").exists(),
        "the page is not built: run `bash wasm/build.sh`"
    );
    assert!(
        root.join("pcap-tools/cli/tests/chromium/node_modules/playwright-core/package.json").exists(),
        "playwright-core is not installed: run `npm ci --prefix pcap-tools/cli/tests/chromium`"
    );
    assert!(std::path::Path::new("/usr/bin/chromium").exists(), "/usr/bin/chromium is missing (apt-get install chromium)");
    let o = Command::new("node")
        .arg(root.join("wasm/test/page_e2e.mjs"))
        .arg(bin())
        .current_dir(&root)
        .output()
        .expect("run node (apt-get install nodejs)");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "page_e2e.mjs failed:\n{out}\n{}", String::from_utf8_lossy(&o.stderr));
    let checked: serde_json::Value = serde_json::from_str(out.lines().last().unwrap_or("")).expect("a JSON line");
    // What it checked, so that a script that checks nothing cannot pass.
    assert_eq!(checked["fixtures"], 9, "{checked}");
    assert!(checked["values"].as_u64().unwrap() > 500, "{checked}");
    assert!(checked["highlights"].as_u64().unwrap() >= 9, "{checked}");
    assert_eq!((checked["filters"].as_u64(), checked["errors"].as_u64()), (Some(4), Some(4)), "{checked}");
    assert!(checked["analysis"].as_u64().unwrap() > 0, "{checked}");
}
