//! The hand-written Lua of the plugin spells no table: no header offsets or lengths, no opcode
//! numbers, no warning texts, no parameter defaults (issue 8). Those come from Rust through the
//! generated part of `dissector/rocescope.lua` (`dissector/src/lib.rs`); the hand-written Lua is
//! dispatch and the stateful trackers.
//!
//! The rules, checked on every line of [`HANDWRITTEN`] outside comments (`--` to the end of the
//! line), with string literals and `[[long strings]]` told apart from code:
//!
//! - `hex`: no hexadecimal literal (`0x…`): opcodes, magic numbers, flag bits, masks.
//! - `number`: no decimal literal other than 0 and 1 (offsets, lengths, type codes, limits,
//!   defaults), except the bit arithmetic `2 ^ n`, `x % 2` and `x / 8`, `x % 8`, `x * 8` (bits
//!   and bytes), and array indexes (`t[2]`; a table constructor's key `{[2] = …}` is checked).
//! - `offset`: no literal added to the offset of a byte read (`u8 u16 u24 u32 rd big_bytes`) or
//!   of a field `emit(name, offset, length, …)`, and no literal length in an `emit` (this
//!   catches the `+ 1` the `number` rule lets through).
//! - `text`: no string literal containing a space (warning texts, labels: they come from the
//!   codec's templates), and none equal to a generated text (a layer's name, a note, an
//!   unsupported encapsulation, a piece of a warning template).
//! - `default`: no preference declared with a literal default (`Pref.uint/string/enum(label,
//!   <literal>, …)`).
//!
//! A line belongs to the top-level definition it is in (`local function NAME`, `local NAME =`,
//! `NAME = …`, `function NAME`, `proto.prefs.NAME = …`): [`ALLOWED`] lists the definitions
//! exempt from some rules, each with its reason. The L2-L4 walk (Ethernet, VLAN, IP, UDP, TCP,
//! GRH offsets and EtherTypes) may stay hand-written, and so may arithmetic (CRC, big numbers,
//! PSN and immediate bit widths).

use std::collections::HashSet;
use std::path::PathBuf;

use rocescope_codec::warning::{templates, Layer, Note, Piece, Unsupported, Warning};

/// The hand-written Lua, from the repository root.
pub const HANDWRITTEN: &str = "dissector/template.lua";

const HEX: &str = "hex";
const NUMBER: &str = "number";
const OFFSET: &str = "offset";
const TEXT: &str = "text";
const DEFAULT: &str = "default";

/// (top-level definition, rules it is exempt from, reason).
const ALLOWED: &[(&str, &[&str], &str)] = &[
    // Arithmetic, not layouts.
    ("bitops", &[HEX, NUMBER, TEXT], "Lua 5.3 bit operators on 32-bit values (code in a string)"),
    ("U32", &[NUMBER], "2^32, for unsigned 32-bit arithmetic"),
    ("LIMB", &[NUMBER], "16-bit limbs of the big-number arithmetic"),
    ("big_mul_add", &[NUMBER], "big-number arithmetic"),
    ("big_pow2", &[NUMBER], "big-number arithmetic"),
    ("big_low64", &[NUMBER], "big-number arithmetic: 64 bits are 4 limbs"),
    ("big_bytes", &[NUMBER, OFFSET], "big-number arithmetic: bytes to limbs"),
    ("big_halves", &[NUMBER], "big-number arithmetic: limbs to 32-bit halves"),
    ("big_parse", &[NUMBER], "big-number arithmetic: decimal and hexadecimal digits"),
    ("u8", &[OFFSET], "byte access (Lua strings count from 1)"),
    ("u16", &[NUMBER, OFFSET], "byte access (Lua strings count from 1)"),
    ("u24", &[NUMBER, OFFSET], "byte access (Lua strings count from 1)"),
    ("u32", &[NUMBER, OFFSET], "byte access (Lua strings count from 1)"),
    ("imm_split", &[NUMBER], "32-bit immediate arithmetic (ImmSplit::split)"),
    ("bit_bytes", &[NUMBER], "32-bit immediate arithmetic (sdr::bit_bytes)"),
    ("netrt_requested", &[NUMBER, OFFSET], "bit arithmetic over the request bitmap (netrt::requested)"),
    ("signed32", &[NUMBER], "32-bit sequence-number arithmetic"),
    ("psn_diff", &[NUMBER], "half the PSN space (psn::diff)"),
    ("parse_param", &[NUMBER], "a parameter of more than 32 bits is read as a big (ParamDef::parse)"),
    ("parse_split", &[NUMBER], "an immediate's three widths add up to its 32 bits (ImmSplit::new)"),
    ("proto.prefs_changed", &[TEXT], "Wireshark's report of a bad preference value (no CLI counterpart)"),
    ("nack_consume", &[NUMBER], "a big-endian count whose bytes may span two buffers"),
    ("sdr_expected_va", &[NUMBER], "the u128 shift bound of sdr::max_message"),
    ("sdr_evict_flows", &[NUMBER], "SdrTracker keeps the most recent half"),
    ("sdr_evict_msgs", &[NUMBER], "SdrTracker arithmetic: half the id space"),
    ("sdr_observe", &[NUMBER], "SdrTracker arithmetic on 32-bit immediates and id spaces"),
    ("try_rule", &[NUMBER], "a saturating u16 counter (the decoder's dcp_tagged)"),
    ("detect", &[NUMBER], "a saturating u16 counter (the decoder's ambiguous)"),
    // The CRC and the L2-L4 walk (may stay hand-written).
    ("CRC_TABLE", &[HEX, NUMBER], "CRC-32 table (the ICRC, WIRE.md A.5)"),
    ("crc_byte", &[HEX, NUMBER], "CRC-32 arithmetic"),
    ("icrc_compute", &[HEX, NUMBER, OFFSET], "ICRC masks of the IP and UDP headers (L3-L4); the BTH's masked byte comes from HDR"),
    ("ipv4_checksum", &[HEX, NUMBER, OFFSET], "L3 walk: the IPv4 header checksum"),
    ("ROCEV2_PORT", &[HEX, NUMBER], "L4 walk: UDP port 4791, EtherTypes 0x8915 and 0x8808"),
    ("PT_NONE", &[NUMBER], "Wireshark's port type numbers (epan/address.h port_type)"),
    ("link_of", &[NUMBER, OFFSET, TEXT], "L2 walk: link types told apart by Wireshark's link addresses (their text for none) and bytes"),
    ("native_ib", &[TEXT], "L2 walk: native InfiniBand told by Wireshark's address texts (infiniband's LID / GID, none)"),
    ("link_fits", &[HEX, NUMBER, OFFSET], "L2-L4 walk: EtherTypes, IP versions, protocols and ports"),
    ("ctx_tos", &[HEX, NUMBER, OFFSET], "L3 walk: IPv4 ToS, IPv6 traffic class"),
    ("parse_tcp", &[HEX, NUMBER, OFFSET], "L4 walk: the TCP header"),
    ("parse_ip", &[HEX, NUMBER, OFFSET], "L3-L4 walk: IPv4, IPv6, UDP"),
    ("parse_grh", &[HEX, NUMBER, OFFSET], "L3 walk: the GRH (RoCEv1)"),
    ("parse_ib", &[HEX, NUMBER, OFFSET], "L2-L3 walk: native InfiniBand's GRH and the VCRC's 2 little-endian bytes"),
    ("VCRC_TABLE", &[HEX, NUMBER], "CRC-16 table (native InfiniBand's VCRC)"),
    ("vcrc_compute", &[HEX, NUMBER], "CRC-16 arithmetic"),
    ("parse_link", &[HEX, NUMBER, OFFSET], "L2 walk: link headers, VLAN tags, EtherTypes"),
    ("decode", &[HEX], "L2 walk: EtherTypes"),
    ("ip_addrs", &[NUMBER, OFFSET], "L3 walk: IP addresses and GIDs"),
    ("tcp_segment", &[HEX, NUMBER, OFFSET], "L4 walk: TCP ports, sequence number, flags"),
    ("nack_push", &[HEX], "L4 walk: TCP flags"),
    ("parse_roce", &[HEX, NUMBER, OFFSET], "the ICRC's 4 little-endian bytes after the payload (WIRE.md A.5)"),
    // Wireshark-only texts (no Rust counterpart).
    ("proto", &[TEXT], "the protocol's name in Wireshark"),
    ("check_field", &[TEXT], "the tree's internal error messages"),
    ("ANNOT.show_comment", &[TEXT], "the annotation comments' checks: internal error messages, as check_field's"),
    ("PROVISIONAL_NOTE", &[TEXT], "Wireshark's expert note of a provisional label (no registry field: the codec has none)"),
    // Other branches' regions.
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A token of a line's code.
#[derive(Debug, PartialEq)]
enum Tok<'a> {
    Str(&'a str),
    Num(&'a str),
    Other(&'a str),
}

/// Splits a line into tokens, dropping its comment; `long` is whether a `[[long string]]` is open.
fn tokens<'a>(line: &'a str, long: &mut bool) -> Vec<Tok<'a>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if *long {
            match line[i..].find("]]") {
                Some(e) => {
                    out.push(Tok::Str(&line[i..i + e]));
                    i += e + 2;
                    *long = false;
                }
                None => {
                    out.push(Tok::Str(&line[i..]));
                    return out;
                }
            }
            continue;
        }
        let c = b[i];
        if line[i..].starts_with("--") {
            break;
        }
        if line[i..].starts_with("[[") {
            *long = true;
            i += 2;
        } else if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            while j < b.len() && b[j] != c {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push(Tok::Str(&line[i + 1..j.min(b.len())]));
            i = j + 1;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'.') {
                j += 1;
            }
            out.push(Tok::Num(&line[i..j]));
            i = j;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.' || b[j] == b':') {
                j += 1;
            }
            out.push(Tok::Other(&line[i..j]));
            i = j;
        } else {
            if !c.is_ascii_whitespace() {
                out.push(Tok::Other(&line[i..i + 1]));
            }
            i += 1;
        }
    }
    out
}

/// The name a top-level line defines, if it starts a definition.
fn definition(line: &str) -> Option<String> {
    if line.starts_with(char::is_whitespace) || line.starts_with("end") || line.starts_with('}') {
        return None;
    }
    let rest = line.strip_prefix("local ").unwrap_or(line);
    let rest = rest.strip_prefix("function ").unwrap_or(rest);
    let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.').collect();
    if name.is_empty() || name == "for" || name == "if" || name == "return" {
        return None;
    }
    // proto.prefs.X = Pref...: all one region.
    if name.starts_with("proto.prefs.") {
        return Some("proto.prefs".to_string());
    }
    Some(name)
}

/// Every text the generated part holds: layer names, notes, unsupported encapsulations and
/// the literal pieces of the warning templates.
fn generated_texts() -> HashSet<String> {
    let mut t: HashSet<String> = HashSet::new();
    t.extend(Layer::ALL.iter().map(|l| l.name().to_string()));
    t.extend(Note::ALL.iter().map(|n| n.text().to_string()));
    t.extend(Unsupported::ALL.iter().map(|&u| Warning::Unsupported(u).to_string()));
    for tpl in templates::WARNINGS.iter().chain(&templates::EXT_PROBLEMS) {
        for p in tpl.pieces() {
            if let Piece::Lit(l) = p {
                if l.trim().len() >= 3 {
                    t.insert(l.trim().to_string());
                }
            }
        }
    }
    t
}

/// The violations of `lua`: (line number, region, rule, line).
fn lint(lua: &str) -> Vec<(usize, String, &'static str, String)> {
    let texts = generated_texts();
    let mut out = Vec::new();
    let mut region = String::from("(top)");
    let mut long = false;
    for (n, line) in lua.lines().enumerate() {
        if !long {
            if let Some(d) = definition(line) {
                region = d;
            }
        }
        let allowed: Vec<&str> = ALLOWED.iter().filter(|(r, _, _)| *r == region).flat_map(|(_, rules, _)| rules.iter().copied()).collect();
        let toks = tokens(line, &mut long);
        let mut hit = |rule: &'static str| {
            if !allowed.contains(&rule) && !out.iter().any(|(l, _, r, _): &(usize, String, &str, String)| *l == n + 1 && *r == rule) {
                out.push((n + 1, region.clone(), rule, line.trim().to_string()));
            }
        };
        let other = |i: usize| match toks.get(i) {
            Some(Tok::Other(o)) => *o,
            _ => "",
        };
        for (i, t) in toks.iter().enumerate() {
            match *t {
                Tok::Num(v) if v.starts_with("0x") || v.starts_with("0X") => hit(HEX),
                Tok::Num(v) if v != "0" && v != "1" => {
                    let prev = if i > 0 { other(i - 1) } else { "" };
                    let bitwise = (v == "2" && (other(i + 1) == "^" || prev == "%"))
                        || (v == "8" && matches!(prev, "/" | "%" | "*"));
                    // An array index (`t[2]`), not a table constructor's key.
                    let index = prev == "["
                        && other(i + 1) == "]"
                        && i >= 2
                        && match toks[i - 2] {
                            Tok::Other(o) => o == "]" || o == ")" || o.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'),
                            _ => false,
                        };
                    if !bitwise && !index {
                        hit(NUMBER);
                    }
                }
                Tok::Str(s) if s.contains(' ') || texts.contains(s.trim()) => hit(TEXT),
                _ => {}
            }
        }
        // Offsets and lengths: a literal in the offset argument of a byte read or an emit, or
        // as an emit's length.
        for (i, t) in toks.iter().enumerate() {
            let Tok::Other(f) = t else { continue };
            let reader = matches!(*f, "u8" | "u16" | "u24" | "u32" | "rd" | "big_bytes");
            if !(reader || *f == "emit") || other(i + 1) != "(" {
                continue;
            }
            // The call's arguments at depth 1, split at commas.
            let mut depth = 0;
            let mut args: Vec<Vec<&Tok>> = vec![Vec::new()];
            for t in &toks[i + 1..] {
                match t {
                    Tok::Other("(") => {
                        depth += 1;
                        if depth == 1 {
                            continue;
                        }
                    }
                    Tok::Other(")") => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Tok::Other(",") if depth == 1 => {
                        args.push(Vec::new());
                        continue;
                    }
                    _ => {}
                }
                args.last_mut().unwrap().push(t);
            }
            let offset = args.get(1);
            let added = offset.is_some_and(|a| a.windows(2).any(|w| matches!(w, [Tok::Other("+" | "-"), Tok::Num(_)])));
            let length = *f == "emit" && args.get(2).is_some_and(|a| matches!(a.as_slice(), [Tok::Num(v)] if *v != "0"));
            if added || length {
                hit(OFFSET);
            }
        }
        // Preferences with literal defaults.
        for (i, t) in toks.iter().enumerate() {
            if matches!(t, Tok::Other("Pref.uint" | "Pref.string" | "Pref.enum")) && other(i + 1) == "(" {
                if let (Some(Tok::Other(",")), Some(Tok::Num(_) | Tok::Str(_))) = (toks.get(i + 3), toks.get(i + 4)) {
                    hit(DEFAULT);
                }
            }
        }
    }
    out
}

#[test]
fn handwritten_lua_spells_no_table() {
    // LINT_LUA=FILE lints another file (an older template, say) with the same rules.
    let path = std::env::var_os("LINT_LUA").map_or_else(|| repo().join(HANDWRITTEN), PathBuf::from);
    let lua = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let violations = lint(&lua);
    let code = lua.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("--")).count();
    let mut long = false;
    let mut region = String::new();
    let mut allowed_lines = 0;
    for l in lua.lines() {
        if !long {
            if let Some(d) = definition(l) {
                region = d;
            }
        }
        tokens(l, &mut long);
        if !l.trim().is_empty() && !l.trim_start().starts_with("--") && ALLOWED.iter().any(|(r, _, _)| *r == region) {
            allowed_lines += 1;
        }
    }
    eprintln!(
        "{HANDWRITTEN}: {} lines of hand-written Lua ({code} of code, {allowed_lines} of them in allow-listed definitions)",
        lua.lines().count()
    );
    assert!(
        violations.is_empty(),
        "{HANDWRITTEN} spells what the generated part must provide ({} lines):\n{}",
        violations.len(),
        violations.iter().map(|(n, r, rule, l)| format!("{n} [{rule}] in {r}: {l}")).collect::<Vec<_>>().join("\n")
    );
    // Every allow-list entry names a definition that exists (a stale entry is an error).
    let mut long = false;
    let defined: HashSet<String> = lua
        .lines()
        .filter_map(|l| {
            let d = if long { None } else { definition(l) };
            tokens(l, &mut long);
            d
        })
        .collect();
    for (r, _, why) in ALLOWED {
        assert!(defined.contains(*r), "allow-list entry {r} ({why}) names no definition of {HANDWRITTEN}");
    }
}

#[test]
fn the_lint_catches_what_it_should() {
    let lua = "\
local function f(s, at)
    if op == 0x2b then return end -- an opcode
    local v = u32(s, at + 4) -- an offset
    local w = u8(s, at + 1) -- a small offset
    emit(\"rocescope.x\", at, 4, v) -- a length
    warn(fr, \"unknown opcode\") -- a text
    local n = \"BTH\" -- a generated text
    local k = 24 -- a length
    local m = 2 ^ k + v / 8 -- bit arithmetic: fine
    -- 0x64 in a comment: fine
end
local pref = Pref.uint(\"X\", 4791, \"doc\")
local t = {[2] = true, x = u[2]} -- a constructor's key, an index
";
    let rules: Vec<(usize, &str)> = lint(lua).into_iter().map(|(n, _, r, _)| (n, r)).collect();
    assert_eq!(
        rules,
        [
            (2, HEX),
            (3, NUMBER),
            (3, OFFSET),
            (4, OFFSET),
            (5, NUMBER),
            (5, OFFSET),
            (6, TEXT),
            (7, TEXT),
            (8, NUMBER),
            (12, NUMBER),
            (12, DEFAULT),
            (13, NUMBER),
        ]
    );
}
