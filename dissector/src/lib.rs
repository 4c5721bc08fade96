//! `rocescope dissector`: writes the Wireshark Lua plugin `dissector/rocescope.lua`.
//!
//! The plugin is two parts glued together:
//! - a **generated** part, written here from the codec so nothing in it is spelt twice: one
//!   `ProtoField` per entry of the field registry (`codec/src/field.rs`, same abbreviation,
//!   type, description and enumerated values), the extension headers and the opcode tables
//!   (`codec/src/ib/opcode.rs`, for the standard layout and DCP's), the CM attribute ids
//!   (`codec/src/ib/cm.rs`), the profile names (`codec/src/profile.rs`), the parameters'
//!   preferences and how to read them (the parameter table, `codec/src/params/table.rs`:
//!   names, titles, help texts, kinds, ranges, defaults), the extensions' warning texts, type names
//!   and memory limits (`codec/src/warning.rs`, `field.rs`, `ext/`, `decoder.rs`);
//! - the **hand-written** dispatch, `dissector/template.lua` (included verbatim), which decodes
//!   a frame the way `Frame::parse` does (with the five extensions of `codec/src/ext/`, and the
//!   stateful decoder of `codec/src/decoder.rs`: `auto` detection, SDR tracker, ERD NACK
//!   reassembly) and adds the fields in the order of `Decoded::visit`.
//!
//! The checked-in `dissector/rocescope.lua` must equal [`dissector`]'s output
//! (`pcap-tools/cli/tests/lua_dissector.rs` checks it); after changing the registry, the opcode
//! table or the template, regenerate it with
//! `cargo run -p rocescope -- dissector > dissector/rocescope.lua`.
//!
//! Field types map so that `tshark -T fields` prints what `rocescope decode --format fields`
//! prints: `UInt(8|16|24|32)` → `uint8|16|24|32` and `UInt(64)` → `uint64`, all `base.DEC`;
//! `Bool` → `uint8` with the value strings False/True (tshark prints the number, 0 or 1, in
//! every version, where a `ProtoField.bool` prints `True`/`False` from Wireshark 4.2 on);
//! `Bytes` → `bytes` (tshark prints lowercase hex without separators); `Enum` and `Text` →
//! `string`.

use std::fmt::Write as _;

use rocescope_codec::ext::{erd, sdr};
use rocescope_codec::field::{FLOR_SEND_VALUES, SDR_CTRL_VALUES};
use rocescope_codec::ib::{CmMsg, Hdr, OpInfo, Opcode};
use rocescope_codec::warning::{Layer, Note};
use rocescope_codec::params::{ParamKind, PARAMS};
use rocescope_codec::{FieldDef, FieldType, Profile, Warnings, FIELDS};

/// The hand-written part of the plugin.
pub const TEMPLATE: &str = include_str!("../template.lua");

/// The whole plugin: the generated part, then [`TEMPLATE`].
pub fn dissector() -> String {
    let mut s = String::with_capacity(64 * 1024 + TEMPLATE.len());
    header(&mut s);
    fields(&mut s);
    groups(&mut s);
    profiles_and_params(&mut s);
    headers_and_opcodes(&mut s);
    cm(&mut s);
    extensions(&mut s);
    s.push_str("\n-- ==== end of the generated part; what follows is dissector/template.lua ====\n\n");
    s.push_str(TEMPLATE);
    s
}

/// The tree's subtrees (codec/src/field_group.rs): `FIELD_GROUP[name]` is the group of a field
/// (`nil` for the frame-level values), `GROUP_LABEL[group]` its label.
fn groups(s: &mut String) {
    s.push_str("\n-- ==== generated: the tree's groups (codec/src/field_group.rs) ====\nlocal FIELD_GROUP = {\n");
    for f in FIELDS {
        let g = rocescope_codec::field_group::group_of(f.name);
        if g != rocescope_codec::field_group::FRAME {
            writeln!(s, "    [\"{}\"] = \"{g}\",", f.name).unwrap();
        }
    }
    s.push_str("}\nlocal GROUP_LABEL = {\n");
    for (k, label) in rocescope_codec::field_group::LABELS {
        writeln!(s, "    [\"{k}\"] = \"{label}\",").unwrap();
    }
    s.push_str("}\n");
}

/// The profile whose extension yields a field: the second component of its name when that is
/// a profile name (`rocescope.dcp.msn` → DCP), else [`Profile::Std`] (frame, IBTA headers, CM,
/// PFC).
pub fn field_profile(def: &FieldDef) -> Profile {
    def.name
        .strip_prefix("rocescope.")
        .and_then(|rest| rest.split('.').next())
        .and_then(Profile::from_name)
        .unwrap_or(Profile::Std)
}

/// The registry fields the standard profile can yield, in registry order.
pub fn std_fields() -> impl Iterator<Item = &'static FieldDef> {
    FIELDS.iter().filter(|f| field_profile(f) == Profile::Std)
}

/// The plugin's name for an extension header (the registry's spelling: `atomiceth`, `immdt`).
pub fn hdr_name(h: Hdr) -> &'static str {
    match h {
        Hdr::Rdeth => "rdeth",
        Hdr::Deth => "deth",
        Hdr::Xrceth => "xrceth",
        Hdr::Dcpeth => "dcpeth",
        Hdr::Feth => "feth",
        Hdr::Reth => "reth",
        Hdr::AtomicEth => "atomiceth",
        Hdr::Aeth => "aeth",
        Hdr::AtomicAckEth => "atomicacketh",
        Hdr::Sseth => "sseth",
        Hdr::ImmDt => "immdt",
        Hdr::Ieth => "ieth",
    }
}

/// A Lua string literal.
fn lua_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => write!(out, "\\{:03}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn header(s: &mut String) {
    s.push_str(
        "\
-- rocescope.lua: Wireshark dissector for RoCEv2 / RoCEv1 (the InfiniBand transport over Ethernet),
-- with the field names of rocescope (shared/spec/INTERFACES.md, \"One field vocabulary\").
--
-- GENERATED FILE, do not edit. `rocescope dissector > dissector/rocescope.lua` writes it: the part
-- down to \"end of the generated part\" from the codec (field registry codec/src/field.rs, opcode
-- table codec/src/ib/opcode.rs, CM ids codec/src/ib/cm.rs, profiles codec/src/profile.rs, parameter
-- table codec/src/params/table.rs), the rest verbatim from dissector/template.lua.
--
-- Use:  tshark -X lua_script:dissector/rocescope.lua -o rocescope.profile:std -r FILE -T fields -e rocescope.bth.psn
-- or copy this file to ~/.local/lib/wireshark/plugins/. Tested with Wireshark 4.0 (Lua 5.2).
",
    );
}

fn fields(s: &mut String) {
    s.push_str(
        "
-- ==== generated: the field registry (codec/src/field.rs), in registry order ====
local F = {}             -- registry name -> ProtoField
local FIELD_LIST = {}    -- every ProtoField, in registry order
local FIELD_KIND = {}    -- registry name -> \"uint\" | \"uint64\" | \"bool\" | \"bytes\" | \"enum\" | \"text\"
local FIELD_PROFILE = {} -- registry name -> the profile that yields it (\"std\": frame, IBTA, CM, PFC)
local REPEATED = {}      -- registry name -> true when it may occur several times in one packet
local ENUM_VALUES = {}   -- registry name -> set of the names an enumerated field takes
local BOOL_STRINGS = {[0] = \"False\", [1] = \"True\"}
local function field(name, kind, profile, repeated, pf)
    F[name] = pf
    FIELD_LIST[#FIELD_LIST + 1] = pf
    FIELD_KIND[name] = kind
    FIELD_PROFILE[name] = profile
    REPEATED[name] = repeated
end
",
    );
    let mut last_profile = None;
    for f in FIELDS {
        let profile = field_profile(f);
        if last_profile != Some(profile) {
            writeln!(s, "-- {}", profile.name()).unwrap();
            last_profile = Some(profile);
        }
        let (kind, ftype, vs, base) = match f.ty {
            FieldType::UInt(64) => ("uint64", "ftypes.UINT64", "nil", "base.DEC"),
            FieldType::UInt(8) => ("uint", "ftypes.UINT8", "nil", "base.DEC"),
            FieldType::UInt(16) => ("uint", "ftypes.UINT16", "nil", "base.DEC"),
            FieldType::UInt(24) => ("uint", "ftypes.UINT24", "nil", "base.DEC"),
            FieldType::UInt(32) => ("uint", "ftypes.UINT32", "nil", "base.DEC"),
            FieldType::UInt(n) => panic!("{}: no Wireshark type for a {n}-bit integer", f.name),
            FieldType::Bool => ("bool", "ftypes.UINT8", "BOOL_STRINGS", "base.DEC"),
            FieldType::Bytes => ("bytes", "ftypes.BYTES", "nil", "base.NONE"),
            FieldType::Enum => ("enum", "ftypes.STRING", "nil", "base.NONE"),
            FieldType::Text => ("text", "ftypes.STRING", "nil", "base.NONE"),
        };
        writeln!(
            s,
            "field({}, {}, {}, {}, ProtoField.new({}, {}, {ftype}, {vs}, {base}, nil, {}))",
            lua_str(f.name),
            lua_str(kind),
            lua_str(profile.name()),
            f.repeated,
            lua_str(f.desc),
            lua_str(f.name),
            lua_str(f.desc),
        )
        .unwrap();
    }
    for f in FIELDS.iter().filter(|f| !f.values.is_empty()) {
        let set: Vec<String> = f.values.iter().map(|v| format!("[{}] = true", lua_str(v))).collect();
        writeln!(s, "ENUM_VALUES[{}] = {{{}}}", lua_str(f.name), set.join(", ")).unwrap();
    }
}

fn profiles_and_params(s: &mut String) {
    s.push_str(
        "\n-- ==== generated: profiles (codec/src/profile.rs) and the parameter table (codec/src/params/table.rs) ====\n",
    );
    let names: Vec<String> =
        std::iter::once("auto").chain(Profile::ALL.iter().map(|p| p.name())).map(lua_str).collect();
    writeln!(s, "local PROFILE_CHOICES = {{{}}}", names.join(", ")).unwrap();
    s.push_str(
        "\
-- PARAM_DEFS: the transports' parameters in table order, as read_params parses their preferences
-- (ParamDef::parse): kind \"uint\" (a number of `bits` bits from 0 to `max`, a decimal string;
-- `optional`: blank text = derived), \"split\" (three widths adding up to 32) or \"enum\" (`values`);
-- `default` is the preference's default text.
local PARAM_DEFS = {
",
    );
    for d in PARAMS {
        let kind = match d.kind {
            ParamKind::Uint { bits, max, optional } => {
                format!("kind = \"uint\", bits = {bits}, max = {}, optional = {optional}", lua_str(&max.to_string()))
            }
            ParamKind::Split => "kind = \"split\"".to_string(),
            ParamKind::Enum { values } => format!("kind = \"enum\", values = {{{}}}", lua_list(values)),
        };
        writeln!(s, "    {{name = {}, {kind}, default = {}}},", lua_str(d.name), lua_str(d.default)).unwrap();
    }
    s.push_str("}\n");
    s.push_str("-- What a derived (optional) parameter falls back to: sdr_mtu (sdr::DEFAULT_MTU).\n");
    writeln!(s, "local PARAM_FALLBACK = {{sdr_mtu = {}}}", sdr::DEFAULT_MTU).unwrap();
    s.push_str(
        "\
-- The preferences rocescope.NAME, one per parameter: the table's titles, defaults and help texts
-- (with the flag's name); numbers and splits are strings, read as the flags read them.
local function declare_param_prefs(proto)
",
    );
    for d in PARAMS {
        let desc = lua_str(&format!("{} ({})", d.help_text(), d.flag));
        match d.kind {
            ParamKind::Enum { values } => {
                let choices: Vec<String> =
                    values.iter().enumerate().map(|(i, v)| format!("{{{0}, {1}, {0}}}", i + 1, lua_str(v))).collect();
                let default = values.iter().position(|v| *v == d.default).expect("an enumeration's default is one of its values");
                writeln!(
                    s,
                    "    proto.prefs.{} = Pref.enum({}, {}, {desc},\n        {{{}}}, false)",
                    d.name,
                    lua_str(d.title),
                    default + 1,
                    choices.join(", ")
                )
                .unwrap();
            }
            _ => writeln!(s, "    proto.prefs.{} = Pref.string({}, {}, {desc})", d.name, lua_str(d.title), lua_str(d.default)).unwrap(),
        }
    }
    s.push_str("end\n");
}

fn op_entry(info: &OpInfo) -> String {
    let hdrs: Vec<String> =
        info.headers.iter().map(|h| format!("{{{}, {}}}", lua_str(hdr_name(h)), info.offsets[h as usize])).collect();
    format!(
        "{{name = {}, hdrs = {{{}}}, hdrs_len = {}, payload = {}, cnp = {}}}",
        lua_str(info.name),
        hdrs.join(", "),
        info.headers_len,
        info.payload,
        info.cnp
    )
}

fn headers_and_opcodes(s: &mut String) {
    s.push_str("\n-- ==== generated: extension headers and opcode tables (codec/src/ib/opcode.rs) ====\n");
    s.push_str("-- HDR[name] = {len = bytes, layer = name in warnings}\n");
    s.push_str("local HDR = {\n");
    for h in Hdr::ALL {
        writeln!(s, "    {} = {{len = {}, layer = {}}},", hdr_name(h), h.len(), lua_str(h.layer().name())).unwrap();
    }
    s.push_str("}\n");
    s.push_str(
        "-- OPCODES[layout][opcode] = {name, hdrs = {{header, offset from the BTH}, ...} in wire order,\n\
         -- hdrs_len, payload (may carry one), cnp (16 reserved bytes)}; absent: outside the table.\n\
         -- Layouts: std (WIRE.md A.4), dcp_data (a DCP data packet, WIRE.md B.1).\n",
    );
    s.push_str("local OPCODES = {std = {}, dcp_data = {}}\n");
    for (layout, get) in
        [("std", Opcode::info as fn(Opcode) -> Option<&'static OpInfo>), ("dcp_data", Opcode::info_dcp)]
    {
        for op in 0..=255u8 {
            if let Some(info) = get(Opcode(op)) {
                writeln!(s, "OPCODES.{layout}[0x{op:02x}] = {}", op_entry(info)).unwrap();
            }
        }
    }
}

fn cm(s: &mut String) {
    s.push_str("\n-- ==== generated: CM messages by MAD attribute id (codec/src/ib/cm.rs) ====\n");
    let entries: Vec<String> = (0..=u16::MAX)
        .filter_map(|id| CmMsg::from_attribute_id(id).map(|m| format!("[0x{id:04x}] = {}", lua_str(m.name()))))
        .collect();
    writeln!(s, "local CM_MSGS = {{{}}}", entries.join(", ")).unwrap();
}

/// The plugin's key for a fixed warning note; the match makes a new [`Note`] fail to compile
/// here until the plugin knows it (and [`Note::ALL`] lists it).
fn note_key(n: Note) -> &'static str {
    match n {
        Note::SdrFragmentConflict => "sdr_fragment_conflict",
        Note::SdrVaMismatch => "sdr_va_mismatch",
        Note::SdrCtrlFlags => "sdr_ctrl_flags",
        Note::SdrSackTrailingBits => "sdr_sack_trailing_bits",
        Note::FlorReserved => "flor_reserved",
        Note::FlorWriteRnNotRetx => "flor_write_rn_not_retx",
        Note::FlorAckLength => "flor_ack_length",
        Note::FlorAckBitmapBeyond => "flor_ack_bitmap_beyond",
        Note::FlorAckQpnHigh => "flor_ack_qpn_high",
        Note::NetrtBthFlags => "netrt_bth_flags",
        Note::ErdStreamGap => "erd_stream_gap",
        Note::ErdNackTooLong => "erd_nack_too_long",
        Note::DetectionAmbiguous => "detection_ambiguous",
        Note::DcpUnconfirmed => "dcp_unconfirmed",
    }
}


/// The layers extension warnings name, by the plugin's key.
const EXT_LAYERS: [(&str, Layer); 8] = [
    ("sdr", Layer::Sdr),
    ("sdr_data", Layer::SdrData),
    ("flor", Layer::Flor),
    ("flor_ack", Layer::FlorAck),
    ("netrt", Layer::Netrt),
    ("erd", Layer::Erd),
    ("erd_nack", Layer::ErdNack),
    ("detection", Layer::Detection),
];

fn lua_list(values: &[&str]) -> String {
    values.iter().map(|v| lua_str(v)).collect::<Vec<_>>().join(", ")
}

fn extensions(s: &mut String) {
    s.push_str(
        "\n-- ==== generated: the extensions' texts and limits (codec/src/warning.rs, field.rs, ext/, decoder.rs) ====\n",
    );
    s.push_str("-- Warning::Ext texts: \"<EXT_LAYER[layer]>: <problem>\"; NOTE[key] = Note::text.\n");
    let layers: Vec<String> = EXT_LAYERS.iter().map(|(k, l)| format!("{k} = {}", lua_str(l.name()))).collect();
    writeln!(s, "local EXT_LAYER = {{{}}}", layers.join(", ")).unwrap();
    s.push_str("local NOTE = {\n");
    for n in Note::ALL {
        writeln!(s, "    {} = {},", note_key(n), lua_str(n.text())).unwrap();
    }
    s.push_str("}\n");
    s.push_str("-- Type codes 1, 2, ... of SDR control messages and Flor SEND headers.\n");
    writeln!(s, "local SDR_CTRL = {{{}}}", lua_list(SDR_CTRL_VALUES)).unwrap();
    writeln!(s, "local FLOR_SEND = {{{}}}", lua_list(FLOR_SEND_VALUES)).unwrap();
    s.push_str("-- Limits: warnings listed per frame, the decoder's memory.\n");
    s.push_str("local LIMITS = {\n");
    writeln!(s, "    warnings = {},", Warnings::CAPACITY).unwrap();
    writeln!(s, "    dcp_unsure_after = {},", rocescope_codec::decoder::DCP_UNSURE_AFTER).unwrap();
    writeln!(s, "    sdr_flows = {},", sdr::SdrTracker::MAX_FLOWS).unwrap();
    writeln!(s, "    sdr_msgs_per_flow = {},", sdr::SdrTracker::MAX_MSGS_PER_FLOW).unwrap();
    writeln!(s, "    nack_message_len = {},", erd::NACK_MAX_LEN).unwrap();
    s.push_str("}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_grouped_by_profile() {
        let f = |n: &str| field_profile(FIELDS.iter().find(|f| f.name == n).unwrap());
        assert_eq!(f("rocescope.bth.psn"), Profile::Std);
        assert_eq!(f("rocescope.profile"), Profile::Std);
        assert_eq!(f("rocescope.icrc.status"), Profile::Std);
        assert_eq!(f("rocescope.dcp.msn"), Profile::Dcp);
        assert_eq!(f("rocescope.netrt.requested"), Profile::Netrt);
        assert!(std_fields().any(|f| f.name == "rocescope.pfc.quanta"));
    }

    #[test]
    fn every_registry_field_becomes_one_protofield() {
        let lua = dissector();
        for f in FIELDS {
            let needle = format!("ProtoField.new({}, {},", lua_str(f.desc), lua_str(f.name));
            assert_eq!(lua.matches(&needle).count(), 1, "{}", f.name);
        }
        assert_eq!(lua.matches("ProtoField.new(").count(), FIELDS.len());
    }

    #[test]
    fn every_note_has_a_key() {
        let keys: std::collections::HashSet<&str> = Note::ALL.iter().map(|&n| note_key(n)).collect();
        assert_eq!(keys.len(), Note::ALL.len());
        // The template raises every note the codec raises (SdrFragmentConflict: none; the
        // tracker reports a conflicting fragment as a Mismatch).
        for n in Note::ALL.into_iter().filter(|&n| n != Note::SdrFragmentConflict) {
            assert!(TEMPLATE.contains(&format!("NOTE.{}", note_key(n))), "{} unused by the template", note_key(n));
        }
    }

    #[test]
    fn every_parameter_is_a_preference_and_a_param_def() {
        let lua = dissector();
        for d in PARAMS {
            let decl = format!("    proto.prefs.{} = Pref.", d.name);
            assert_eq!(lua.matches(&decl).count(), 1, "{}", d.name);
            let line = &lua[lua.find(&decl).unwrap()..];
            let line = &line[..line.find(")\n").unwrap()];
            assert!(line.contains(&lua_str(d.title)), "{line}");
            assert!(line.contains(&lua_str(&format!("{} ({})", d.help_text(), d.flag))), "{line}");
            let default = match d.kind {
                ParamKind::Enum { values } => (values.iter().position(|v| *v == d.default).unwrap() + 1).to_string(),
                _ => lua_str(d.default),
            };
            assert!(line.contains(&format!(", {default}, ")), "{line}");
            let def = format!("    {{name = {}, kind = \"", lua_str(d.name));
            assert_eq!(lua.matches(&def).count(), 1, "{}", d.name);
        }
        // The template spells no parameter's default (nor SDR's fallback MTU): it reads
        // PARAM_DEFS and PARAM_FALLBACK. (0xc0 is also where IBTA's vendor-specific opcodes
        // start, which the opcode names use.)
        let vendor = TEMPLATE.matches("p.op >= 0xc0").count();
        for d in PARAMS.iter().filter(|d| !matches!(d.kind, ParamKind::Enum { .. }) && d.default.len() > 1) {
            let allowed = if d.default == "0xc0" { vendor } else { 0 };
            assert_eq!(TEMPLATE.matches(d.default).count(), allowed, "template.lua spells the default of {}: {}", d.name, d.default);
        }
        assert!(!TEMPLATE.contains(&sdr::DEFAULT_MTU.to_string()));
        assert!(TEMPLATE.contains("declare_param_prefs(proto)") && TEMPLATE.contains("PARAM_DEFS"));
    }

    #[test]
    fn lua_strings_are_escaped() {
        assert_eq!(lua_str(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
