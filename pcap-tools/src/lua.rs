//! `rocescope dissector`: writes the Wireshark Lua plugin `dissector/rocescope.lua`.
//!
//! The plugin is two parts glued together:
//! - a **generated** part, written here from the codec so nothing in it is spelt twice: one
//!   `ProtoField` per entry of the field registry (`codec/src/field.rs`, same abbreviation,
//!   type, description and enumerated values), the extension headers and the opcode tables
//!   (`codec/src/ib/opcode.rs`, for the standard layout and DCP's), the CM attribute ids
//!   (`codec/src/ib/cm.rs`), the profile names and the parameters' defaults
//!   (`codec/src/profile.rs`, `codec/src/params.rs`);
//! - the **hand-written** dispatch, `dissector/template.lua` (included verbatim), which decodes
//!   a frame the way `Frame::parse` does and adds the fields in the order of `Frame::visit`.
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

use rocescope_codec::ib::{CmMsg, Hdr, OpInfo, Opcode};
use rocescope_codec::{FieldDef, FieldType, FlorAckSetMeans, Params, Profile, FIELDS};

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
-- table codec/src/ib/opcode.rs, CM ids codec/src/ib/cm.rs, profiles and parameter defaults
-- codec/src/profile.rs and params.rs), the rest verbatim from dissector/template.lua.
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
    fn lua_strings_are_escaped() {
        assert_eq!(lua_str(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
