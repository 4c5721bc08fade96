//! `rocescope dissector`: writes the Wireshark Lua plugin `dissector/rocescope.lua`.
//!
//! The plugin is two parts glued together:
//! - a **generated** part, written here from the codec so nothing in it is spelt twice: one
//!   `ProtoField` per entry of the field registry (`codec/src/field.rs`, same abbreviation,
//!   type, description and enumerated values), the fixed-layout headers with every field's
//!   bytes and bits (`codec/src/layout`), the opcode tables (`codec/src/ib/opcode.rs`, for the
//!   standard layout and DCP's), the CM attribute ids
//!   (`codec/src/ib/cm.rs`), the profile names (`codec/src/profile.rs`), the parameters'
//!   preferences and how to read them (the parameter table, `codec/src/params/table.rs`:
//!   names, titles, help texts, kinds, ranges, defaults), every warning text as a function of its
//!   values (`W.*`, `X.*`, `LAYER`, `NOTE`: the templates of `codec/src/warning.rs` that the
//!   codec's `Display` prints from), the opcode sets the extensions and the decoder test (`OPS`:
//!   each Rust predicate tried on all 256 opcodes), the extensions' constants (`K`: magic
//!   numbers, versions, type codes, lengths, flag bits, CM and MAC control) and byte layouts
//!   (`L`: each field's offset and length, from the `*_field` modules of `codec/src/ext/`,
//!   `ib/cm.rs`), type names and memory limits (`field.rs`, `ext/`, `decoder/`); and the
//!   fields of `rocescope annotate`'s packet comments (`ANNOT`: one `ProtoField` per analysis
//!   and replay field of the analysis library's tables, `analyze/fields.rs` and
//!   `annotation.rs`, the comment form's marker and escapes, their expert infos);
//! - the **hand-written** dispatch, `dissector/template.lua` (included verbatim), which decodes
//!   a frame the way `Frame::parse` does (with the five extensions of `codec/src/ext/`, and the
//!   stateful decoder of `codec/src/decoder/`: `auto` detection, SDR tracker, ERD NACK
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

pub mod docs;

use std::fmt::Write as _;

use core::ops::Range;

use rocescope_codec::ext::{dcp, erd, flor, netrt, sdr};
use rocescope_codec::ib::{cm as ib_cm, Position, Transport};
use rocescope_codec::mac_control::{self, MacControl};
use rocescope_codec::field::{FLOR_SEND_VALUES, SDR_CTRL_VALUES};
use rocescope_codec::ib::{CmMsg, Hdr, OpInfo, Opcode};
use rocescope_codec::params::{ParamKind, PARAMS};
use rocescope_codec::warning::{templates, Layer, Narrow, Note, Piece, SlotKind, Template, Unsupported, Warning};
use rocescope_codec::{FieldDef, FieldType, Profile, Warnings, FIELDS};

use rocescope_analysis::analyze::fields::AField;
use rocescope_analysis::annotation::{self, FindingKind, RField};

/// Wireshark's personal Lua plugin folder (`tshark -G folders`: "Personal Lua Plugins"):
/// `%APPDATA%\\Wireshark\\plugins` on Windows, `$HOME/.local/lib/wireshark/plugins` elsewhere
/// (Linux, macOS). `None` when the variable it derives from is not set.
pub fn personal_plugin_dir() -> Option<std::path::PathBuf> {
    if cfg!(windows) {
        let appdata = std::env::var_os("APPDATA")?;
        return Some(std::path::PathBuf::from(appdata).join("Wireshark").join("plugins"));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(std::path::PathBuf::from(home).join(".local/lib/wireshark/plugins"))
}

/// Writes the plugin as `rocescope.lua` into `dir`, creating the folder (and its parents) when
/// missing; returns the file's path.
pub fn install(dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("rocescope.lua");
    std::fs::write(&path, dissector())?;
    Ok(path)
}

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
    warnings(&mut s);
    extensions(&mut s);
    opcode_sets(&mut s);
    constants_and_layouts(&mut s);
    aeth_and_ib(&mut s);
    annotations(&mut s);
    s.push_str("\n-- ==== end of the generated part; what follows is dissector/template.lua ====\n\n");
    s.push_str(TEMPLATE);
    s
}

/// The Lua `ProtoField` of a field type: (kind, ftype, value strings, base), the mapping of the
/// module's documentation.
fn lua_type(name: &str, ty: FieldType) -> (&'static str, &'static str, &'static str, &'static str) {
    match ty {
        FieldType::UInt(64) => ("uint64", "ftypes.UINT64", "nil", "base.DEC"),
        FieldType::UInt(8) => ("uint", "ftypes.UINT8", "nil", "base.DEC"),
        FieldType::UInt(16) => ("uint", "ftypes.UINT16", "nil", "base.DEC"),
        FieldType::UInt(24) => ("uint", "ftypes.UINT24", "nil", "base.DEC"),
        FieldType::UInt(32) => ("uint", "ftypes.UINT32", "nil", "base.DEC"),
        FieldType::UInt(n) => panic!("{name}: no Wireshark type for a {n}-bit integer"),
        FieldType::Bool => ("bool", "ftypes.UINT8", "BOOL_STRINGS", "base.DEC"),
        FieldType::Bytes => ("bytes", "ftypes.BYTES", "nil", "base.NONE"),
        FieldType::Enum => ("enum", "ftypes.STRING", "nil", "base.NONE"),
        FieldType::Text => ("text", "ftypes.STRING", "nil", "base.NONE"),
    }
}

/// The expert infos of the analysis fields: (field, Wireshark group, severity, text), raised
/// on a frame whose comment gives the field a value other than 0.
const ANALYSIS_EXPERTS: &[(AField, &str, &str, &str)] = &[
    (AField::Retransmission, "PI_SEQUENCE", "PI_WARN", "Retransmission (rocescope analysis)"),
    (AField::Spurious, "PI_SEQUENCE", "PI_NOTE", "Spurious retransmission: the receiver already had this PSN (rocescope analysis)"),
    (AField::Loss, "PI_SEQUENCE", "PI_WARN", "Loss: this transmission, or the one it repairs, was lost (rocescope analysis)"),
    (AField::OutOfOrder, "PI_SEQUENCE", "PI_WARN", "Out of order: below a PSN seen earlier (rocescope analysis)"),
    (AField::PsnGap, "PI_SEQUENCE", "PI_WARN", "PSN gap: PSNs before this one were not seen (rocescope analysis)"),
    (AField::AckedUnseen, "PI_SEQUENCE", "PI_NOTE", "Acknowledges PSNs the capture never saw (rocescope analysis)"),
    (AField::DuplicateNak, "PI_SEQUENCE", "PI_NOTE", "Duplicate NAK (rocescope analysis)"),
];

/// The expert info of each replay finding a frame's comment names: (kind, group, severity,
/// format of the text from the rule, the expected and the seen).
const FINDING_EXPERTS: &[(FindingKind, &str, &str, &str)] = &[
    (FindingKind::Departure, "PI_PROTOCOL", "PI_ERROR", "Departure from the reference stack (rocescope replay), rule %s: expected %s; seen %s"),
    (FindingKind::Ambiguous, "PI_PROTOCOL", "PI_NOTE", "Departure or capture gap (rocescope replay), rule %s: expected %s; seen %s"),
];

/// The fields of `rocescope annotate`'s packet comments (pcap-tools/analysis/src/annotation.rs):
/// one `ProtoField` per analysis and replay field (appended to `FIELD_LIST`), the comment
/// form's marker and escapes, the expert infos. The template's `ANNOT.show` only parses
/// the comment: no analysis in Lua.
fn annotations(s: &mut String) {
    s.push_str(
        "
-- ==== generated: the packet comments of `rocescope annotate` (pcap-tools/analysis/src/annotation.rs,
-- the analysis fields' table pcap-tools/analysis/src/analyze/fields.rs; docs/annotate.md) ====
-- (One table, ANNOT: Lua allows 200 locals in a chunk, and the plugin is near that.)
-- ANNOT.F[name]        the field's ProtoField
-- ANNOT.kind[name]     \"uint\" | \"uint64\" | \"bool\" | \"enum\" | \"text\"
-- ANNOT.group[name]    \"analysis\" | \"replay\" (its subtree)
-- ANNOT.repeated[name] true when it may occur several times in one comment
-- ANNOT.values[name]   set of the names an enumerated field takes
-- ANNOT.expert[name]   {group, severity, text}, raised when its value is not 0
",
    );
    writeln!(
        s,
        r#"local ANNOT = {{F = {{}}, kind = {{}}, group = {{}}, repeated = {{}}, values = {{}}, expert = {{}},
    marker = {}, comment_fields = {{{}}}, unescape = {{["\\"] = "\\", n = "\n", r = "\r"}}}}"#,
        lua_str(annotation::MARKER),
        // Wireshark's packet comment: `frame.comment` (1.8 to 4.x); `pkt_comment` tried next.
        lua_list(&["frame.comment", "pkt_comment"])
    )
    .unwrap();
    s.push_str(
        "function ANNOT.field(name, kind, group, repeated, pf)
    ANNOT.F[name] = pf
    ANNOT.kind[name] = kind
    ANNOT.group[name] = group
    ANNOT.repeated[name] = repeated
    FIELD_LIST[#FIELD_LIST + 1] = pf
end
",
    );
    s.push_str("ANNOT.tree = {\n");
    for (group, label) in [("analysis", "RoCE analysis (rocescope annotate)"), ("replay", "RoCE replay verdicts (rocescope annotate)")] {
        let abbr = format!("rocescope.{group}");
        writeln!(s, "    {group} = ProtoField.new({}, {}, ftypes.NONE, nil, base.NONE, nil, {}),", lua_str(label), lua_str(&abbr), lua_str(label)).unwrap();
    }
    s.push_str("}\nFIELD_LIST[#FIELD_LIST + 1] = ANNOT.tree.analysis\nFIELD_LIST[#FIELD_LIST + 1] = ANNOT.tree.replay\n");
    for f in annotation::comment_fields() {
        let (kind, ftype, vs, base) = lua_type(f.name, f.ty);
        let group = if f.name.starts_with("rocescope.replay.") { "replay" } else { "analysis" };
        writeln!(
            s,
            "ANNOT.field({}, {}, {}, {}, ProtoField.new({}, {}, {ftype}, {vs}, {base}, nil, {}))",
            lua_str(f.name),
            lua_str(kind),
            lua_str(group),
            f.repeated,
            lua_str(f.desc),
            lua_str(f.name),
            lua_str(f.desc),
        )
        .unwrap();
        if !f.values.is_empty() {
            let set: Vec<String> = f.values.iter().map(|v| format!("[{}] = true", lua_str(v))).collect();
            writeln!(s, "ANNOT.values[{}] = {{{}}}", lua_str(f.name), set.join(", ")).unwrap();
        }
    }
    for (f, group, severity, text) in ANALYSIS_EXPERTS {
        writeln!(s, "ANNOT.expert[{}] = {{{group}, {severity}, {}}}", lua_str(f.def().name), lua_str(text)).unwrap();
    }
    // A finding's lines: its kind starts it; the expert info is made from its rule, expected
    // and seen.
    writeln!(
        s,
        "ANNOT.finding = {{kind = {}, rule = {}, expected = {}, seen = {}}}",
        lua_str(RField::Kind.def().name),
        lua_str(RField::Rule.def().name),
        lua_str(RField::Expected.def().name),
        lua_str(RField::Seen.def().name)
    )
    .unwrap();
    s.push_str("ANNOT.finding_expert = {\n");
    for (kind, group, severity, text) in FINDING_EXPERTS {
        writeln!(s, "    [{}] = {{{group}, {severity}, {}}},", lua_str(kind.name()), lua_str(text)).unwrap();
    }
    s.push_str("}\n");
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

/// The plugin's name for an extension header (the registry's spelling: `atomiceth`, `immdt`),
/// from the header's declaration (`codec/src/layout`).
pub fn hdr_name(h: Hdr) -> &'static str {
    h.layout().name
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
-- down to \"end of the generated part\" from the codec (field registry codec/src/field.rs, header
-- layouts codec/src/layout/, opcode table codec/src/ib/opcode.rs, CM ids codec/src/ib/cm.rs, profiles codec/src/profile.rs, parameter
-- table codec/src/params/table.rs, warning texts codec/src/warning.rs, the extensions' opcode
-- sets, constants and byte layouts codec/src/ext/), the rest verbatim from dissector/template.lua.
--
-- Use:  tshark -X lua_script:dissector/rocescope.lua -o rocescope.profile:std -r FILE -T fields -e rocescope.bth.psn
-- or install it (`rocescope dissector --install`: Wireshark's personal Lua plugin folder,
-- ~/.local/lib/wireshark/plugins on Linux). Tested with Wireshark 4.0 (Lua 5.2).

-- Loaded once: a second copy (an installed plugin and `-X lua_script:` naming this file) returns
-- here quietly; the first one loaded (the installed plugin) is the one in use.
-- (Wireshark runs each plugin file in its own environment: the mark goes in the global table.)
if _G.rocescope_plugin_loaded then return end
_G.rocescope_plugin_loaded = true
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
        let (kind, ftype, vs, base) = lua_type(f.name, f.ty);
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
    writeln!(s, "local PROFILE_DEFAULT = {}", lua_str(rocescope_codec::profile::CHOICE_DEFAULT)).unwrap();
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
-- The preferences: rocescope.profile (the command line's --profile), rocescope.verify_checksums
-- (Wireshark only: see template.lua), then rocescope.NAME, one per parameter: the table's titles,
-- defaults and help texts (with the flag's name); numbers and splits are strings, read as the flags
-- read them.
local function declare_param_prefs(proto)
",
    );
    // A string, not a menu: Wireshark keeps an enumeration's old value, silently, when `-o` names
    // no choice; the plugin reports a bad profile (template.lua, prefs_changed).
    writeln!(
        s,
        "    proto.prefs.profile = Pref.string(\"Profile\", PROFILE_DEFAULT, {})",
        lua_str(&format!("{} (--profile).", rocescope_codec::profile::CHOICE_HELP))
    )
    .unwrap();
    s.push_str(
        "    proto.prefs.verify_checksums = Pref.bool(\"Verify the ICRC and the IPv4 header checksum\", false,\n        \"Compute the ICRC (rocescope.icrc.status, ICRC mismatch warnings) and the IPv4 header checksum, as \"\n            .. \"rocescope decode does. Costly in Lua; off, they are not verified (no rocescope.icrc.status), \"\n            .. \"as with Wireshark's own checksum validation.\")\n",
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
    s.push_str(
        "\n-- ==== generated: the fixed-layout headers (codec/src/layout) and opcode tables (codec/src/ib/opcode.rs) ====\n\
         -- HDR[name] = {len = bytes, layer = name in warnings, fields = {...}}: the BTH, the extension headers,\n\
         -- IRN's SACK tail. Each field, in declaration order: {key = accessor, name = registry name (absent:\n\
         -- not shown), off = first byte, len = bytes (big-endian), and for a bit field shift = its lowest bit,\n\
         -- mask = its bits once shifted}.\n",
    );
    s.push_str("local HDR = {\n");
    for h in rocescope_codec::ib::layouts() {
        writeln!(s, "    {} = {{len = {}, layer = {}, fields = {{", h.name, h.len, lua_str(h.layer.name())).unwrap();
        for f in h.fields {
            let name = f.field.map(|id| format!("name = {}, ", lua_str(id.name()))).unwrap_or_default();
            let bits = if f.is_bits() { format!(", shift = {}, mask = 0x{:x}", f.shift, (1u64 << f.width) - 1) } else { String::new() };
            writeln!(s, "        {{key = {}, {name}off = {}, len = {}{bits}}},", lua_str(f.accessor), f.offset, f.len).unwrap();
        }
        s.push_str("    }},\n");
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

/// The AETH syndrome byte read as `Syndrome::from_byte` reads it (every one of the 256 bytes):
/// its kind and, when it has one, the field its low bits are (credit, RNR timer, NAK code) with
/// their value; and the IBTA lengths the template needs (`K.ib`).
fn aeth_and_ib(s: &mut String) {
    use rocescope_codec::ib::Syndrome;
    s.push_str(
        "\n-- ==== generated: the AETH syndrome (codec/src/ib/aeth.rs Syndrome::from_byte) and IBTA lengths ====\n\
         -- AETH_SYNDROME[byte] = {kind, field = registry name of its low bits (nil: none), value}\nlocal AETH_SYNDROME = {\n",
    );
    for b in 0..=255u8 {
        let syn = Syndrome::from_byte(b);
        let low = match syn {
            Syndrome::Ack { credit } => Some(("rocescope.aeth.credit", credit)),
            Syndrome::RnrNak { timer } => Some(("rocescope.aeth.rnr_timer", timer)),
            Syndrome::Nak { code } => Some(("rocescope.aeth.nak_code", code)),
            Syndrome::Reserved(_) => None,
        };
        let low = low.map_or(String::new(), |(f, v)| format!(", field = {}, value = {v}", lua_str(f)));
        let seq = if syn.is_psn_seq_error() { ", psn_seq_error = true" } else { "" };
        writeln!(s, "    [{b}] = {{kind = {}{low}{seq}}},", lua_str(syn.kind_name())).unwrap();
    }
    s.push_str("}\n");
    {
        use rocescope_codec::frame::{LNH_IBA_GLOBAL, LNH_IBA_LOCAL, PKT_LEN_UNIT};
        use rocescope_codec::ib::packet::{ATOMIC_WRITE_LEN, CNP_RESERVED, HO_MSN_LEN, ICRC_LEN};
        use rocescope_codec::ib::vcrc::VCRC_LEN;
        writeln!(
            s,
            "K.ib = {{icrc_len = {ICRC_LEN}, cnp_reserved = {CNP_RESERVED}, ho_msn_len = {HO_MSN_LEN}, atomic_write_len = {ATOMIC_WRITE_LEN}, \
             vcrc_len = {VCRC_LEN}, lnh_local = {LNH_IBA_LOCAL}, lnh_global = {LNH_IBA_GLOBAL}, pkt_len_unit = {PKT_LEN_UNIT}}}"
        )
        .unwrap();
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


/// The plugin's key for a layer (`LAYER.<key>`: its name in warnings); the match makes a new
/// [`Layer`] fail to compile here until the plugin knows it (and [`Layer::ALL`] lists it).
pub fn layer_key(l: Layer) -> &'static str {
    use Layer::*;
    match l {
        Link => "link",
        Lrh => "lrh",
        Vlan => "vlan",
        Ipv4 => "ipv4",
        Ipv6 => "ipv6",
        Grh => "grh",
        Udp => "udp",
        Bth => "bth",
        Rdeth => "rdeth",
        Deth => "deth",
        Xrceth => "xrceth",
        Feth => "feth",
        Reth => "reth",
        AtomicEth => "atomiceth",
        Aeth => "aeth",
        AtomicAckEth => "atomicacketh",
        ImmDt => "immdt",
        Ieth => "ieth",
        IrnSack => "irn_sack",
        Cnp => "cnp",
        Payload => "payload",
        Icrc => "icrc",
        Vcrc => "vcrc",
        Cm => "cm",
        Pfc => "pfc",
        Dcpeth => "dcpeth",
        Sseth => "sseth",
        Tcp => "tcp",
        Sdr => "sdr",
        SdrData => "sdr_data",
        Flor => "flor",
        FlorAck => "flor_ack",
        Netrt => "netrt",
        Erd => "erd",
        ErdNack => "erd_nack",
        Detection => "detection",
    }
}

/// The plugin's key for an unsupported encapsulation (`W.<key>`: the whole warning text).
fn unsupported_key(u: Unsupported) -> &'static str {
    match u {
        Unsupported::VlanDepth => "vlan_depth",
        Unsupported::Ipv4Fragment => "ipv4_fragment",
        Unsupported::Ipv6ExtensionHeaders => "ipv6_ext",
        Unsupported::GrhNextHeader => "grh_next_header",
        Unsupported::LrhRawPacket => "lrh_raw_packet",
    }
}

/// A template as a Lua `string.format` call on its slots (narrowed as the codec narrows them).
fn lua_format(t: &Template) -> String {
    let mut fmt = String::new();
    let mut args = Vec::new();
    for piece in t.pieces() {
        match piece {
            Piece::Lit(l) => fmt.push_str(&l.replace('%', "%%")),
            Piece::Slot(i, hex) => {
                let slot = t.slots[i];
                let (spec, arg) = match slot.kind {
                    SlotKind::Text => ("%s".to_string(), slot.name.to_string()),
                    SlotKind::Int(narrow) => {
                        let arg = match narrow {
                            Narrow::None => slot.name.to_string(),
                            Narrow::Wrap16 => format!("{} % {}", slot.name, Narrow::Wrap16.apply(u64::MAX) + 1),
                            Narrow::Sat16 => format!("math.min({}, {})", slot.name, Narrow::Sat16.apply(u64::MAX)),
                            Narrow::Sat32 => format!("math.min({}, {})", slot.name, Narrow::Sat32.apply(u64::MAX)),
                        };
                        (hex.map_or("%d".to_string(), |w| format!("%0{w}x")), arg)
                    }
                };
                fmt.push_str(&spec);
                args.push(arg);
            }
        }
    }
    if args.is_empty() {
        return lua_str(&fmt);
    }
    format!("string.format({}, {})", lua_str(&fmt), args.join(", "))
}

/// `W.<key>` / `X.<key>` from the templates of one table: a function of the slots (a string
/// for a template without slots), choosing a layer's own text first.
fn lua_templates(s: &mut String, table: &str, list: &[&Template]) {
    let mut i = 0;
    while i < list.len() {
        let key = list[i].key;
        let group: Vec<&Template> = list[i..].iter().take_while(|t| t.key == key).copied().collect();
        i += group.len();
        let last = group[group.len() - 1];
        if last.slots.is_empty() {
            writeln!(s, "{table}.{key} = {}", lua_format(last)).unwrap();
            continue;
        }
        let params: Vec<&str> = last.slots.iter().map(|sl| sl.name).collect();
        writeln!(s, "function {table}.{key}({})", params.join(", ")).unwrap();
        for t in &group[..group.len() - 1] {
            let l = t.layer.expect("only the last text of a key is for every layer");
            writeln!(s, "    if layer == LAYER.{} then return {} end", layer_key(l), lua_format(t)).unwrap();
        }
        writeln!(s, "    return {}", lua_format(last)).unwrap();
        s.push_str("end\n");
    }
}

fn warnings(s: &mut String) {
    s.push_str("\n-- ==== generated: warning texts (codec/src/warning.rs: Layer::name, templates) ====\n");
    s.push_str("-- LAYER[key] = Layer::name.\n");
    let layers: Vec<String> = Layer::ALL.iter().map(|&l| format!("{} = {}", layer_key(l), lua_str(l.name()))).collect();
    s.push_str("local LAYER = {\n");
    for chunk in layers.chunks(6) {
        writeln!(s, "    {},", chunk.join(", ")).unwrap();
    }
    s.push_str("}\n");
    s.push_str(
        "-- W.<key>(values...): the text of a warning (Warning's Display), X.<key>(values...): of an\n\
         -- extension problem (ExtProblem's Display), each from its template; the values narrowed as\n\
         -- the codec stores them.\n",
    );
    s.push_str("local W, X = {}, {}\n");
    lua_templates(s, "W", &templates::WARNINGS);
    lua_templates(s, "X", &templates::EXT_PROBLEMS);
    for u in Unsupported::ALL {
        writeln!(s, "W.{} = {}", unsupported_key(u), lua_str(&Warning::Unsupported(u).to_string())).unwrap();
    }
    // Warnings::problem_count leaves out Truncated warnings: known by their text's start.
    let prefix = match templates::TRUNCATED.pieces().next() {
        Some(Piece::Lit(l)) => l,
        _ => panic!("the truncated text starts with literal text"),
    };
    s.push_str("-- Whether a text is a Truncated warning's (Warnings::problem_count leaves those out).\n");
    writeln!(s, "function W.is_truncated(text) return text:sub(1, {}) == {} end", prefix.len(), lua_str(prefix)).unwrap();
}

fn lua_list(values: &[&str]) -> String {
    values.iter().map(|v| lua_str(v)).collect::<Vec<_>>().join(", ")
}

fn extensions(s: &mut String) {
    s.push_str(
        "\n-- ==== generated: the extensions' texts and limits (codec/src/warning.rs, field.rs, ext/, decoder/) ====\n",
    );
    s.push_str("-- NOTE[key] = Note::text (the fixed problems of Warning::Ext).\n");
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
    writeln!(s, "    dcp_unsure_after = {},", rocescope_codec::decoder::UNSURE_AFTER).unwrap();
    writeln!(s, "    patience = {},", rocescope_codec::decoder::PATIENCE).unwrap();
    writeln!(s, "    sdr_flows = {},", rocescope_codec::decoder::SdrTracker::MAX_FLOWS).unwrap();
    writeln!(s, "    sdr_msgs_per_flow = {},", rocescope_codec::decoder::SdrTracker::MAX_MSGS_PER_FLOW).unwrap();
    writeln!(s, "    nack_message_len = {},", erd::NACK_MAX_LEN).unwrap();
    s.push_str("}\n");
}

/// A Lua set of the opcodes `pred` holds for (all 256 tried), or a map to the value it gives.
fn lua_opcode_map(name: &str, mut pred: impl FnMut(Opcode) -> Option<String>) -> String {
    let entries: Vec<String> =
        (0..=255u8).filter_map(|op| pred(Opcode(op)).map(|v| format!("[0x{op:02x}] = {v}"))).collect();
    let mut out = format!("OPS.{name} = {{");
    let mut line = String::new();
    for (i, e) in entries.iter().enumerate() {
        if i > 0 && i % 8 == 0 {
            out.push_str(&line);
            out.push_str("\n    ");
            line.clear();
        }
        line.push_str(e);
        line.push_str(", ");
    }
    out.push_str(line.trim_end_matches(", "));
    out.push_str("}\n");
    out
}

fn set(b: bool) -> Option<String> {
    b.then(|| "true".to_string())
}

fn opcode_sets(s: &mut String) {
    s.push_str(
        "\n-- ==== generated: opcode sets, each of the Rust predicate it names tried on all 256 opcodes ====\n",
    );
    s.push_str("local OPS = {}\n");
    s.push_str("-- Opcode::name (the standard table's names, else Unknown / Vendor-specific).\n");
    s.push_str(&lua_opcode_map("name", |o| Some(lua_str(o.name()))));
    s.push_str("-- Opcode::is_write, Opcode::position, transport UD (Opcode::transport).\n");
    s.push_str(&lua_opcode_map("write", |o| set(o.is_write())));
    s.push_str(&lua_opcode_map("position", |o| {
        o.position().map(|p| {
            lua_str(match p {
                Position::First => "first",
                Position::Middle => "middle",
                Position::Last => "last",
                Position::Only => "only",
            })
        })
    }));
    s.push_str(&lua_opcode_map("ud", |o| set(o.transport() == Transport::Ud)));
    s.push_str(&lua_opcode_map("cnp_0x80", |o| set(rocescope_codec::ib::packet::is_cnp_0x80(o.0))));
    s.push_str(&lua_opcode_map("irn_sack", |o| set(rocescope_codec::ib::packet::may_carry_irn_sack(o.0))));
    s.push_str(&lua_opcode_map("rc_atomic_write", |o| set(rocescope_codec::ib::packet::is_rc_atomic_write(o))));
    s.push_str("-- CM MADs ride on this opcode (ib/cm.rs OPCODE).\n");
    s.push_str(&lua_opcode_map("cm", |o| set(o.0 == ib_cm::OPCODE)));
    s.push_str("-- DCP: Opcode::is_dcp_request (carry DCP headers), dcp::OPCODE_ACK (eMSN under tag 01).\n");
    s.push_str(&lua_opcode_map("dcp_request", |o| set(o.is_dcp_request())));
    s.push_str(&lua_opcode_map("dcp_ack", |o| set(o.0 == dcp::OPCODE_ACK)));
    s.push_str("-- SDR: sdr::OPCODE_DATA, sdr::is_ctrl_opcode.\n");
    s.push_str(&lua_opcode_map("sdr_data", |o| set(o.0 == sdr::OPCODE_DATA)));
    s.push_str(&lua_opcode_map("sdr_ctrl", |o| set(sdr::is_ctrl_opcode(o.0))));
    s.push_str(
        "-- Flor: flor::is_write_imm, flor::send_header_only (opcode -> whether a SEND Only),\n-- flor::OPCODE_ACK.\n",
    );
    s.push_str(&lua_opcode_map("flor_write_imm", |o| set(flor::is_write_imm(o.0))));
    s.push_str(&lua_opcode_map("flor_send_header", |o| flor::send_header_only(o.0).map(|b| b.to_string())));
    s.push_str(&lua_opcode_map("flor_ack", |o| set(o.0 == flor::OPCODE_ACK)));
    s.push_str("-- ERD: erd::carries_eeth.\n");
    s.push_str(&lua_opcode_map("erd_eeth", |o| set(erd::carries_eeth(o.0))));
}

/// A byte offset or range of a header, as `{off = .., len = ..}`.
trait Span {
    fn span(&self) -> (usize, usize);
}
impl Span for usize {
    fn span(&self) -> (usize, usize) {
        (*self, 1)
    }
}
impl Span for Range<usize> {
    fn span(&self) -> (usize, usize) {
        (self.start, self.end - self.start)
    }
}
/// To the end of the message: `len = 0`.
impl Span for core::ops::RangeFrom<usize> {
    fn span(&self) -> (usize, usize) {
        (self.start, 0)
    }
}

/// `L.<name> = {field = {off = .., len = ..}, ...}` from a module's byte offsets, the keys its
/// constants' names in lower case.
/// One extension header's byte layout: `(name, [(field, offset, bytes)])`, from the codec's
/// `*_field` constants.
macro_rules! layout {
    ($name:expr, $module:path, [$($c:ident),* $(,)?]) => {{
        use $module as m;
        let fields: Vec<(String, usize, usize)> = vec![$({
            let (off, len) = Span::span(&m::$c);
            (stringify!($c).to_lowercase(), off, len)
        }),*];
        ($name, fields)
    }};
}

/// The research extensions' byte layouts (and the CM MAD's fixed part), each field's offset and
/// length in its header (length 0: to the end; a repeated field is its first occurrence): the
/// plugin's `L` table and docs/wire-layouts.md are both written from this one list.
pub fn ext_layouts() -> Vec<(&'static str, Vec<(String, usize, usize)>)> {
    vec![
        layout!("flor_send", flor::send_field, [VERSION, TYPE, FLAGS, RESERVED, RN, GN, WRITE_RN, BODY_LEN]),
        layout!("flor_addr_req", flor::addr_req_field, [MID, MSG_LEN]),
        layout!("flor_addr_resp", flor::addr_resp_field, [MID, R_KEY, VA, BUF_LEN]),
        layout!("flor_ack", flor::ack_field, [QPN, BITMAP, LEAST_GN, DELAY_NS, ENTRY]),
        layout!("sdr_ctrl", sdr::ctrl_field, [MAGIC, VERSION, TYPE, FLAGS, MSG_SEQ, BUF_LEN, CUM_ACK, SACK_BITS, SACK, COUNT, INDEX]),
        layout!("netrt", netrt::field, [TYPE, PSN, BITMAP]),
        layout!("erd_eeth", erd::field, [FLAGS, MSG_ID, S_LEN, S_OFFSET]),
        layout!("erd_nack", erd::nack_field, [MAGIC, VERSION, COUNT, SRC_QPN, DST_QPN, PSN]),
        layout!("cm", ib_cm, [MGMT_CLASS, LOCAL_COMM_ID, REMOTE_COMM_ID]),
    ]
}

fn lua_layout(s: &mut String, name: &str, fields: &[(String, usize, usize)], extra: &[String]) {
    let mut v: Vec<String> = fields.iter().map(|(f, off, len)| format!("{f} = {{off = {off}, len = {len}}}")).collect();
    v.extend(extra.iter().cloned());
    writeln!(s, "L.{name} = {{{}}}", v.join(", ")).unwrap();
}

/// `name = value` pairs as a Lua table constructor.
fn lua_table(pairs: &[(&str, String)]) -> String {
    let v: Vec<String> = pairs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{{{}}}", v.join(", "))
}

fn constants_and_layouts(s: &mut String) {
    s.push_str("\n-- ==== generated: the extensions' constants and byte layouts (codec/src/ext/*.rs, ib/cm.rs, mac_control.rs) ====\n");
    s.push_str("-- K.<module>.<constant>: magic numbers, versions, type codes, lengths, flag bits.\n");
    s.push_str("local K = {}\n");
    let n = |v: u64| v.to_string();
    let h = |v: u64| format!("0x{v:02x}");
    writeln!(
        s,
        "K.dcp = {}",
        lua_table(&[
            ("tag_none", n(dcp::TAG_NONE as u64)),
            ("tag_ack", n(dcp::TAG_ACK as u64)),
            ("tag_data", n(dcp::TAG_DATA as u64)),
            ("tag_ho", n(dcp::TAG_HO as u64)),
            ("tag_mask", n(dcp::tag(0xff, 0) as u64)),
            ("ho_msn_len", n(dcp::HO_MSN_LEN as u64)),
        ])
    )
    .unwrap();
    let fixed: Vec<(&str, String)> = (1..=255u8)
        .filter_map(sdr::CtrlType::from_code)
        .map(|k| (k.name(), n(sdr::ctrl_body_fixed(k) as u64)))
        .collect();
    writeln!(
        s,
        "K.sdr = {}",
        lua_table(&[
            ("magic", h(sdr::MAGIC as u64)),
            ("version", n(sdr::VERSION as u64)),
            ("ctrl_header_len", n(sdr::CTRL_HEADER_LEN as u64)),
            ("default_mtu", n(sdr::DEFAULT_MTU as u64)),
            ("body_fixed", lua_table(&fixed)),
        ])
    )
    .unwrap();
    let addr: Vec<(&str, String)> = (1..=255u8)
        .filter_map(flor::SendType::from_code)
        .filter_map(|k| k.body_len().map(|l| (k.name(), n(l as u64))))
        .collect();
    writeln!(
        s,
        "K.flor = {}",
        lua_table(&[
            ("version", n(flor::VERSION as u64)),
            ("send_header_len", n(flor::SEND_HEADER_LEN as u64)),
            ("addr_len", lua_table(&addr)),
            ("flag_hint", h(flor::FLAG_HINT as u64)),
            ("flags_reserved", h(flor::FLAGS_RESERVED as u64)),
            ("ack_header_len", n(flor::ACK_HEADER_LEN as u64)),
            ("ack_max_entries", n(flor::ACK_MAX_ENTRIES as u64)),
            ("ack_qpn_high", format!("0x{:08x}", flor::ACK_QPN_HIGH)),
        ])
    )
    .unwrap();
    writeln!(
        s,
        "K.netrt = {}",
        lua_table(&[
            ("type_request", n(netrt::TYPE_REQUEST as u64)),
            ("type_unfulfilled", n(netrt::TYPE_UNFULFILLED as u64)),
            ("request_len", n(netrt::REQUEST_LEN as u64)),
            ("unfulfilled_len", n(netrt::UNFULFILLED_LEN as u64)),
            ("rtx_mark", h(netrt::RTX_MARK as u64)),
        ])
    )
    .unwrap();
    writeln!(
        s,
        "K.erd = {}",
        lua_table(&[
            ("eeth_len", n(erd::EETH_LEN as u64)),
            ("type_bit", h(erd::field::TYPE_BIT as u64)),
            ("last_bit", h(erd::field::LAST_BIT as u64)),
            ("mgmt_qp_max", n(erd::MGMT_QP_MAX as u64)),
            ("nack_magic", h(erd::NACK_MAGIC as u64)),
            ("nack_version", n(erd::NACK_VERSION as u64)),
            ("nack_header_len", n(erd::NACK_HEADER_LEN as u64)),
            ("nack_entry_len", n(erd::NACK_ENTRY_LEN as u64)),
            ("nack_max_streams", n(erd::NACK_MAX_STREAMS as u64)),
        ])
    )
    .unwrap();
    let need: Vec<String> = (0..=u16::MAX)
        .filter_map(|id| CmMsg::from_attribute_id(id).map(|m| format!("{} = {}", m.name(), m.needed_len())))
        .collect();
    writeln!(
        s,
        "K.cm = {}",
        lua_table(&[
            ("qp", n(ib_cm::QP as u64)),
            ("mgmt_class_cm", h(ib_cm::MGMT_CLASS_CM as u64)),
            ("header_len", n(ib_cm::DATA as u64)),
            ("min_len", n(rocescope_codec::ib::CmMad::<&[u8]>::MIN_LEN as u64)),
            ("need", format!("{{{}}}", need.join(", "))),
        ])
    )
    .unwrap();
    // MAC control: per opcode decoded, the bytes it needs and where its fields are.
    let mut ops = Vec::new();
    for op in 0..=u16::MAX {
        let b = op.to_be_bytes();
        let mut buf = [0u8; 64];
        buf[..2].copy_from_slice(&b);
        let mc = MacControl::new_unchecked(&buf[..]);
        let Some(need) = mc.needed_len() else { continue };
        let quanta: Vec<String> = (0..mc.quanta_count()).map(|i| mc.quanta_offset(i).to_string()).collect();
        let ce = match mc.class_enable() {
            Some(_) => format!("{{off = {}, len = {}}}", mac_control::CLASS_ENABLE.start, mac_control::CLASS_ENABLE.len()),
            None => "nil".to_string(),
        };
        ops.push(format!("[0x{op:04x}] = {{need = {need}, class_enable = {ce}, quanta = {{{}}}}}", quanta.join(", ")));
    }
    s.push_str(
        "-- K.mac_control.ops[opcode] = {need = bytes after the EtherType, class_enable = PFC's vector,\n\
         -- quanta = offsets of the pause times}.\n",
    );
    writeln!(
        s,
        "K.mac_control = {{ops = {{{}}}, opcode_len = {}, quanta_len = {}}}",
        ops.join(", "),
        mac_control::OPCODE.len(),
        mac_control::QUANTA_LEN
    )
    .unwrap();

    s.push_str(
        "-- L.<header>.<field> = {off = byte offset in the header, len = bytes (0: to the end)}; a repeated\n\
         -- field (ACK entries, NACK indices) is its first occurrence.\n",
    );
    s.push_str("local L = {}\n");
    let cm_msgs: Vec<String> = (0..=u16::MAX)
        .filter_map(CmMsg::from_attribute_id)
        .map(|m| {
            let f = |o: Option<usize>| o.map_or("nil".to_string(), |o| format!("{{off = {o}, len = {}}}", ib_cm::U24_LEN));
            format!(
                "{} = {{local_qpn = {}, remote_qpn = {}, start_psn = {}, remote_comm_id = {}}}",
                m.name(),
                f(m.local_qpn_at()),
                f(m.remote_qpn_at()),
                f(m.start_psn_at()),
                m.has_remote_comm_id()
            )
        })
        .collect();
    for (name, fields) in ext_layouts() {
        let extra = if name == "cm" {
            vec![
                format!("attr_id = {{off = {}, len = {}}}", ib_cm::ATTR_ID, ib_cm::ATTR_ID_LEN),
                format!("msgs = {{{}}}", cm_msgs.join(", ")),
            ]
        } else {
            vec![]
        };
        lua_layout(s, name, &fields, &extra);
    }
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
        // And one per field of `annotate`'s comments, and their two subtrees.
        for f in annotation::comment_fields() {
            let needle = format!("ANNOT.field({}, ", lua_str(f.name));
            assert_eq!(lua.matches(&needle).count(), 1, "{}", f.name);
        }
        assert_eq!(lua.matches("ProtoField.new(").count(), FIELDS.len() + annotation::comment_fields().count() + 2);
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
    fn nack_max_streams_is_the_reassemblers_default() {
        use rocescope_codec::decoder::{NackReassembler, StreamKey};
        use std::net::{IpAddr, Ipv4Addr};
        let mut r = NackReassembler::new();
        for port in 0..=erd::NACK_MAX_STREAMS as u16 {
            let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
            let key = StreamKey { src: a, dst: a, src_port: port, dst_port: 4792, interface: 0 };
            r.push(key, 0, b"N");
        }
        assert_eq!(r.stream_count(), erd::NACK_MAX_STREAMS);
    }

    #[test]
    fn lua_strings_are_escaped() {
        assert_eq!(lua_str(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
