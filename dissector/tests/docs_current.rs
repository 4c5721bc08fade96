//! The generated reference pages (docs/wire-layouts.md, docs/fields.md) are what the codec's
//! tables print now. `ROCESCOPE_BLESS=1 cargo test -p rocescope-dissector --test docs_current`
//! rewrites them after a change to a header declaration, the opcode table or the registry.

use std::path::PathBuf;

fn check(name: &str, text: String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs").join(name);
    if std::env::var_os("ROCESCOPE_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(have == text, "docs/{name} is stale: ROCESCOPE_BLESS=1 cargo test -p rocescope-dissector --test docs_current");
}

#[test]
fn wire_layouts_page_is_current() {
    let text = rocescope_dissector::docs::wire_layouts();
    // Spot checks against the IBTA layout, independent of the generator: the BTH's PSN is bytes
    // 9..12 (24 bits), DestQP 5..8; RETH is 16 bytes.
    assert!(text.contains("| psn | 9..12 | all | `rocescope.bth.psn` |"), "{text}");
    assert!(text.contains("| dest_qp | 5..8 | all | `rocescope.bth.destqp` |"), "{text}");
    assert!(text.contains("### RETH (16 bytes)"), "{text}");
    check("wire-layouts.md", text);
}

#[test]
fn fields_page_is_current() {
    let text = rocescope_dissector::docs::fields();
    for f in rocescope_codec::FIELDS {
        assert!(text.contains(&format!("| `{}` |", f.name)), "{} missing", f.name);
    }
    check("fields.md", text);
}
