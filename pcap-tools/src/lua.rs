//! `rocescope dissector`: writes the Wireshark Lua plugin `dissector/rocescope.lua`.
//!
//! The plugin is two parts glued together:
//! - a **generated** part, written here from the codec so nothing in it is spelt twice: one
//!   `ProtoField` per entry of the field registry (`codec/src/field.rs`, same abbreviation,
//!   type, description and enumerated values), the fixed-layout headers with every field's
//!   bytes and bits (`codec/src/layout`), the opcode tables (`codec/src/ib/opcode.rs`, for the
//!   standard layout and DCP's), the CM attribute ids
//!   (`codec/src/ib/cm.rs`), the profile names and the parameters' defaults
//!   (`codec/src/profile.rs`, `codec/src/params.rs`), the extensions' warning texts, type names
//!   and memory limits (`codec/src/warning.rs`, `field.rs`, `ext/`, `decoder/`);
//! - the **hand-written** dispatch, `dissector/template.lua` (included verbatim), which decodes
//!   a frame the way `Frame::parse` does (with the five extensions of `codec/src/ext/`, and the
//!   stateful decoder of `codec/src/decoder/`: `auto` detection, SDR tracker, ERD NACK
//!   reassembly) and adds the fields in the order of `Decoded::visit`.
//!
//! The checked-in `dissector/rocescope.lua` must equal [`dissector`]'s output
//! (`pcap-tools/tests/lua_dissector.rs` checks it); after changing the registry, the opcode
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

use rocescope_codec::decoder::SdrTracker;
use rocescope_codec::ext::erd;
use rocescope_codec::field::{FLOR_SEND_VALUES, SDR_CTRL_VALUES};
use rocescope_codec::ib::{CmMsg, Hdr, OpInfo, Opcode};
use rocescope_codec::warning::{Layer, Note};
use rocescope_codec::{FieldDef, FieldType, FlorAckSetMeans, Params, Profile, Warnings, FIELDS};

/// The hand-written part of the plugin.
pub const TEMPLATE: &str = include_str!("../../dissector/template.lua");

/// The whole plugin: the generated part, then [`TEMPLATE`].
pub fn dissector() -> String {
    let mut s = String::with_capacity(64 * 1024 + TEMPLATE.len());
    header(&mut s);
    fields(&mut s);
    profiles_and_params(&mut s);
    headers_and_opcodes(&mut s);
    cm(&mut s);
    extensions(&mut s);
    s.push_str("\n-- ==== end of the generated part; what follows is dissector/template.lua ====\n\n");
    s.push_str(TEMPLATE);
    s
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
-- layouts codec/src/layout/, opcode table codec/src/ib/opcode.rs, CM ids codec/src/ib/cm.rs, profiles
-- and parameter defaults codec/src/profile.rs and params.rs), the rest verbatim from dissector/template.lua.
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
        "\n-- ==== generated: profiles (codec/src/profile.rs) and parameter defaults (codec/src/params.rs) ====\n",
    );
    let names: Vec<String> =
        std::iter::once("auto").chain(Profile::ALL.iter().map(|p| p.name())).map(lua_str).collect();
    writeln!(s, "local PROFILE_CHOICES = {{{}}}", names.join(", ")).unwrap();
    // Destructured so that a parameter added to the codec fails to compile here until the
    // plugin declares it too.
    let Params {
        dcp_tag_shift,
        sdr_split,
        sdr_mtu,
        sdr_max_message,
        sdr_chunk_packets,
        flor_split,
        flor_unit_size,
        flor_ack_set_means,
        netrt_opcode,
        erd_nack_port,
    } = Params::default();
    let split = |v: rocescope_codec::ImmSplit| lua_str(&format!("{},{},{}", v.0, v.1, v.2));
    let opt = |v: Option<String>| lua_str(&v.unwrap_or_default());
    s.push_str("-- Preference defaults: numbers for uint preferences, strings for the rest (\"\" = derived).\n");
    s.push_str("local PARAM_DEFAULTS = {\n");
    writeln!(s, "    dcp_tag_shift = {dcp_tag_shift},").unwrap();
    writeln!(s, "    sdr_split = {},", split(sdr_split)).unwrap();
    writeln!(s, "    sdr_mtu = {},", opt(sdr_mtu.map(|v| v.to_string()))).unwrap();
    writeln!(s, "    sdr_max_message = {},", opt(sdr_max_message.map(|v| v.to_string()))).unwrap();
    writeln!(s, "    sdr_chunk_packets = {sdr_chunk_packets},").unwrap();
    writeln!(s, "    flor_split = {},", split(flor_split)).unwrap();
    writeln!(s, "    flor_unit_size = {flor_unit_size},").unwrap();
    let means = match flor_ack_set_means {
        FlorAckSetMeans::Send => "send",
        FlorAckSetMeans::Write => "write",
    };
    writeln!(s, "    flor_ack_set_means = {},", lua_str(means)).unwrap();
    writeln!(s, "    netrt_opcode = {},", lua_str(&format!("0x{netrt_opcode:02x}"))).unwrap();
    writeln!(s, "    erd_nack_port = {erd_nack_port},").unwrap();
    s.push_str("}\n");
    writeln!(s, "PARAM_DEFAULTS.max_dcp_tag_shift = {}", Params::MAX_DCP_TAG_SHIFT).unwrap();
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
        "\n-- ==== generated: the extensions' texts and limits (codec/src/warning.rs, field.rs, ext/, decoder/) ====\n",
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
    writeln!(s, "    sdr_flows = {},", SdrTracker::MAX_FLOWS).unwrap();
    writeln!(s, "    sdr_msgs_per_flow = {},", SdrTracker::MAX_MSGS_PER_FLOW).unwrap();
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
    fn lua_strings_are_escaped() {
        assert_eq!(lua_str(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
