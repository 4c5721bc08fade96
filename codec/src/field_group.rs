//! The subtree a field is shown under, in Wireshark's tree (the Lua plugin) and the browser's
//! field tree: one table for both, so the two front ends group fields alike.
//!
//! A field's group is its dotted name without the last component (`rocescope.sdr.ctrl.type` →
//! `sdr.ctrl`, `rocescope.bth.psn` → `bth`), or the name itself for a one-component name
//! (`rocescope.immdt` → `immdt`, `rocescope.icrc` → `icrc`), except the values that describe the
//! whole frame ([`FRAME_LEVEL`]), whose group is [`FRAME`].

/// The group of the values about the whole frame.
pub const FRAME: &str = "frame";

/// One-component fields that describe the frame rather than a header.
pub const FRAME_LEVEL: &[&str] = &["profile", "truncated", "opcode_name", "payload_len", "warning"];

/// Every group's label, in no particular order (a group missing here is labelled by its key in
/// upper case; a test keeps the table complete).
pub const LABELS: &[(&str, &str)] = &[
    (FRAME, "Frame"),
    ("lrh", "Local Route Header (LRH)"),
    ("bth", "Base Transport Header (BTH)"),
    ("rdeth", "RDETH"),
    ("deth", "DETH"),
    ("xrceth", "XRCETH"),
    ("reth", "RETH"),
    ("atomiceth", "AtomicETH"),
    ("aeth", "AETH"),
    ("irn", "IRN selective NAK"),
    ("atomicacketh", "AtomicAckETH"),
    ("immdt", "ImmDt"),
    ("ieth", "IETH"),
    ("feth", "FETH"),
    ("icrc", "Invariant CRC"),
    ("vcrc", "Variant CRC"),
    ("cm", "Connection Manager MAD"),
    ("pfc", "PAUSE / PFC"),
    ("dcp", "DCP"),
    ("sdr", "SDR"),
    ("sdr.ctrl", "SDR control message"),
    ("flor", "Flor"),
    ("flor.send", "Flor SEND header"),
    ("flor.addr", "Flor address exchange"),
    ("flor.ack", "Flor ACK"),
    ("netrt", "NetRT"),
    ("erd", "ERD EETH"),
    ("erd.nack", "ERD NACK"),
];

/// The group key of a registry name (`rocescope.…`).
pub fn group_of(name: &str) -> &str {
    let rest = name.strip_prefix("rocescope.").unwrap_or(name);
    match rest.rsplit_once('.') {
        Some((group, _)) => group,
        None if FRAME_LEVEL.contains(&rest) => FRAME,
        None => rest,
    }
}

/// A group's label.
pub fn label(group: &str) -> Option<&'static str> {
    LABELS.iter().find(|(k, _)| *k == group).map(|(_, l)| *l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_a_labelled_group_and_every_label_is_used() {
        let groups: std::collections::BTreeSet<&str> = crate::FIELDS.iter().map(|f| group_of(f.name)).collect();
        for g in &groups {
            assert!(label(g).is_some(), "group {g} has no label");
        }
        for (k, _) in LABELS {
            assert!(groups.contains(k), "label of {k}, which no field uses");
        }
        assert_eq!(group_of("rocescope.sdr.ctrl.type"), "sdr.ctrl");
        assert_eq!(group_of("rocescope.bth.psn"), "bth");
        assert_eq!(group_of("rocescope.immdt"), "immdt");
        assert_eq!(group_of("rocescope.warning"), FRAME);
    }
}
