//! The parameter table: every transport parameter of WIRE.md part B once, with its name, flag,
//! kind, default, help text and setter. The front ends are built from it, so none of them
//! spells a default, a range or a help text:
//!
//! - the command line (`pcap-tools/cli/src/params_args.rs`) makes one clap argument per entry
//!   (`--dcp-tag-shift`, its default, help and value check) and stores what it reads with
//!   [`ParamDef::set`];
//! - the browser (`wasm/src/options.rs`) takes the same keys and parses them with
//!   [`ParamDef::set`]; `params_table()` (`wasm/src/lib.rs`) hands the table to the page, whose
//!   parameter controls `wasm/www/app.js` builds from it;
//! - the Wireshark plugin (`dissector/src/lib.rs`) declares one preference per entry and writes
//!   the kinds, ranges and defaults into the generated `PARAM_DEFS`, through which
//!   `dissector/template.lua` parses the preferences as [`ParamDef::parse`] does;
//! - [`Params::default`] is the table's defaults, applied with the setters.
//!
//! One syntax everywhere: numbers in decimal or `0x` hexadecimal (leading and trailing blanks
//! ignored), splits as three comma-separated bit widths adding up to 32, enumerations by name;
//! an optional number's empty text means "not given" (the value is derived from the capture).

use std::sync::OnceLock;

use super::{parse_uint, FlorAckSetMeans, ImmSplit, Params};

/// What text a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// An unsigned integer stored in `bits` bits (8, 16, 32 or 64), from 0 to `max`, written in
    /// decimal or as `0x` hexadecimal. With `optional`, the empty text is "not given": the
    /// decoder derives the value (the help text says how).
    Uint { bits: u8, max: u64, optional: bool },
    /// Three bit widths adding up to 32, most significant first: "a,b,c" ([`ImmSplit`]).
    Split,
    /// One of these names.
    Enum { values: &'static [&'static str] },
}

impl ParamKind {
    /// `u8`, `u16`, `u32`, `u64`, `split` or `enum`.
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::Uint { bits: 8, .. } => "u8",
            ParamKind::Uint { bits: 16, .. } => "u16",
            ParamKind::Uint { bits: 32, .. } => "u32",
            ParamKind::Uint { .. } => "u64",
            ParamKind::Split => "split",
            ParamKind::Enum { .. } => "enum",
        }
    }
}

/// A parameter's value as [`ParamDef::parse`] reads it from text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamValue {
    /// [`ParamKind::Uint`] (`None`: an optional number not given).
    Uint(Option<u64>),
    Split(ImmSplit),
    /// [`ParamKind::Enum`]: the index of the name in `values`.
    Enum(usize),
}

impl ParamValue {
    fn uint(self) -> Option<u64> {
        match self {
            ParamValue::Uint(v) => v,
            v => panic!("{v:?} is not a number"),
        }
    }
    fn split(self) -> ImmSplit {
        match self {
            ParamValue::Split(s) => s,
            v => panic!("{v:?} is not a split"),
        }
    }
    fn index(self) -> usize {
        match self {
            ParamValue::Enum(i) => i,
            v => panic!("{v:?} is not an enumeration"),
        }
    }
}

/// One transport parameter: an entry of [`PARAMS`].
#[derive(Debug)]
pub struct ParamDef {
    /// The name: a field of [`Params`], the browser's option key and the Wireshark preference
    /// (`rocescope.NAME`).
    pub name: &'static str,
    /// The command-line flag: the name with `-` for `_`, after `--`.
    pub flag: &'static str,
    /// A short title (the Wireshark preference's).
    pub title: &'static str,
    /// What the command line's help calls the value.
    pub value_name: &'static str,
    /// What the parameter means; [`ParamDef::help_text`] adds the range.
    pub help: &'static str,
    pub kind: ParamKind,
    /// The default, as text ([`ParamDef::parse`] reads it; empty for an optional number).
    pub default: &'static str,
    store: fn(&mut Params, ParamValue),
    load: fn(&Params) -> ParamValue,
}

impl ParamDef {
    /// The entry of that name.
    pub fn find(name: &str) -> Option<&'static ParamDef> {
        PARAMS.iter().find(|d| d.name == name)
    }

    /// The flag without its leading `--` (clap's long name).
    pub fn long(&self) -> &'static str {
        self.flag.trim_start_matches('-')
    }

    /// An optional number: not giving it (or giving the empty text) lets the decoder derive it.
    pub fn optional(&self) -> bool {
        matches!(self.kind, ParamKind::Uint { optional: true, .. })
    }

    /// The names an enumeration takes (empty for the other kinds).
    pub fn values(&self) -> &'static [&'static str] {
        match self.kind {
            ParamKind::Enum { values } => values,
            _ => &[],
        }
    }

    /// The help text with the range when it is narrower than the type's, e.g. "DCP: the tag is
    /// (ToS >> SHIFT) & 3 (SHIFT 0-6)". Every front end shows this text.
    pub fn help_text(&self) -> String {
        match self.kind {
            ParamKind::Uint { bits, max, .. } if bits < 64 && max < (1u64 << bits) - 1 => {
                format!("{} ({} 0-{max})", self.help, self.value_name)
            }
            _ => self.help.to_string(),
        }
    }

    /// Reads a value written as text: the one check of every front end. The error says what
    /// is wrong with the text (front ends prefix the flag or key).
    pub fn parse(&self, text: &str) -> Result<ParamValue, String> {
        let s = text.trim();
        match self.kind {
            ParamKind::Uint { optional: true, .. } if s.is_empty() => Ok(ParamValue::Uint(None)),
            ParamKind::Uint { max, .. } => {
                let n = parse_uint(s).ok_or_else(|| format!("'{s}' is not a number (decimal or 0x hex)"))?;
                if n > max {
                    return Err(format!("{n} is out of range (at most {max})"));
                }
                Ok(ParamValue::Uint(Some(n)))
            }
            ParamKind::Split => ImmSplit::parse(s)
                .map(ParamValue::Split)
                .ok_or_else(|| format!("'{s}' is not three bit widths adding up to 32")),
            ParamKind::Enum { values } => values
                .iter()
                .position(|v| *v == s)
                .map(ParamValue::Enum)
                .ok_or_else(|| format!("'{s}' is not one of {}", values.join(", "))),
        }
    }

    /// Parses the text and stores the value in its field of `p`; on error `p` is unchanged.
    pub fn set(&self, p: &mut Params, text: &str) -> Result<(), String> {
        let v = self.parse(text)?;
        (self.store)(p, v);
        Ok(())
    }

    /// The value of this parameter in `p`.
    pub fn get(&self, p: &Params) -> ParamValue {
        (self.load)(p)
    }
}

const fn uint(bits: u8) -> ParamKind {
    ParamKind::Uint { bits, max: if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }, optional: false }
}

const fn optional_uint(bits: u8) -> ParamKind {
    match uint(bits) {
        ParamKind::Uint { bits, max, .. } => ParamKind::Uint { bits, max, optional: true },
        k => k,
    }
}

/// The number of parameters.
pub const COUNT: usize = 10;

const TABLE: [ParamDef; COUNT] = [
    ParamDef {
        name: "dcp_tag_shift",
        flag: "--dcp-tag-shift",
        title: "DCP tag shift",
        value_name: "SHIFT",
        help: "DCP: the tag is (ToS >> SHIFT) & 3",
        kind: ParamKind::Uint { bits: 8, max: Params::MAX_DCP_TAG_SHIFT as u64, optional: false },
        default: "2",
        store: |p, v| p.dcp_tag_shift = v.uint().unwrap_or_default() as u8,
        load: |p| ParamValue::Uint(Some(p.dcp_tag_shift as u64)),
    },
    ParamDef {
        name: "sdr_split",
        flag: "--sdr-split",
        title: "SDR immediate split",
        value_name: "ID,OFF,FRAG",
        help: "SDR immediate split: message id, packet offset and user-immediate fragment bits, adding up to 32",
        kind: ParamKind::Split,
        default: "10,18,4",
        store: |p, v| p.sdr_split = v.split(),
        load: |p| ParamValue::Split(p.sdr_split),
    },
    ParamDef {
        name: "sdr_mtu",
        flag: "--sdr-mtu",
        title: "SDR MTU",
        value_name: "BYTES",
        help: "SDR MTU in bytes (default: the DMA length of the flow's full-size packets, else 4096)",
        kind: optional_uint(32),
        default: "",
        store: |p, v| p.sdr_mtu = v.uint().map(|n| n as u32),
        load: |p| ParamValue::Uint(p.sdr_mtu.map(u64::from)),
    },
    ParamDef {
        name: "sdr_max_message",
        flag: "--sdr-max-message",
        title: "SDR maximum message",
        value_name: "BYTES",
        help: "SDR maximum message size in bytes (default: 2^OFF x MTU)",
        kind: optional_uint(64),
        default: "",
        store: |p, v| p.sdr_max_message = v.uint(),
        load: |p| ParamValue::Uint(p.sdr_max_message),
    },
    ParamDef {
        name: "sdr_chunk_packets",
        flag: "--sdr-chunk-packets",
        title: "SDR packets per chunk",
        value_name: "N",
        help: "SDR packets per chunk",
        kind: uint(32),
        default: "1",
        store: |p, v| p.sdr_chunk_packets = v.uint().unwrap_or_default() as u32,
        load: |p| ParamValue::Uint(Some(p.sdr_chunk_packets as u64)),
    },
    ParamDef {
        name: "flor_split",
        flag: "--flor-split",
        title: "Flor immediate split",
        value_name: "HINT,MID,OFF",
        help: "Flor immediate split: hint, message id and chunk offset bits, adding up to 32",
        kind: ParamKind::Split,
        default: "1,21,10",
        store: |p, v| p.flor_split = v.split(),
        load: |p| ParamValue::Split(p.flor_split),
    },
    ParamDef {
        name: "flor_unit_size",
        flag: "--flor-unit-size",
        title: "Flor UNIT_SIZE",
        value_name: "BYTES",
        help: "Flor UNIT_SIZE in bytes",
        kind: uint(32),
        default: "4096",
        store: |p, v| p.flor_unit_size = v.uint().unwrap_or_default() as u32,
        load: |p| ParamValue::Uint(Some(p.flor_unit_size as u64)),
    },
    ParamDef {
        name: "flor_ack_set_means",
        flag: "--flor-ack-set-means",
        title: "Flor ACK set bit means",
        value_name: "ENTRY",
        help: "Flor ACK bitmap: what a set bit marks (send: a compressed SEND global number, write: a WRITE reliable number)",
        kind: ParamKind::Enum { values: &FlorAckSetMeans::NAMES },
        default: "send",
        store: |p, v| p.flor_ack_set_means = FlorAckSetMeans::ALL[v.index()],
        load: |p| ParamValue::Enum(p.flor_ack_set_means as usize),
    },
    ParamDef {
        name: "netrt_opcode",
        flag: "--netrt-opcode",
        title: "NetRT opcode",
        value_name: "OPCODE",
        help: "NetRT message BTH OpCode",
        kind: uint(8),
        default: "0xc0",
        store: |p, v| p.netrt_opcode = v.uint().unwrap_or_default() as u8,
        load: |p| ParamValue::Uint(Some(p.netrt_opcode as u64)),
    },
    ParamDef {
        name: "erd_nack_port",
        flag: "--erd-nack-port",
        title: "ERD NACK port",
        value_name: "PORT",
        help: "ERD NACK TCP port",
        kind: uint(16),
        default: "4792",
        store: |p, v| p.erd_nack_port = v.uint().unwrap_or_default() as u16,
        load: |p| ParamValue::Uint(Some(p.erd_nack_port as u64)),
    },
];

/// Every parameter, in the order of [`Params`]' fields.
pub static PARAMS: &[ParamDef; COUNT] = &TABLE;

/// The parameters' names in table order ([`Params::NAMES`]).
pub(super) const NAMES: [&str; COUNT] = {
    let mut names = [""; COUNT];
    let mut i = 0;
    while i < COUNT {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// Placeholder values, every one replaced by the table's default in [`defaults`].
const BLANK: Params = Params {
    dcp_tag_shift: 0,
    sdr_split: ImmSplit(0, 32, 0),
    sdr_mtu: None,
    sdr_max_message: None,
    sdr_chunk_packets: 0,
    flor_split: ImmSplit(0, 32, 0),
    flor_unit_size: 0,
    flor_ack_set_means: FlorAckSetMeans::ALL[1],
    netrt_opcode: 0,
    erd_nack_port: 0,
};

/// The table's defaults applied to every field ([`Params::default`]).
pub(super) fn defaults() -> Params {
    static DEFAULTS: OnceLock<Params> = OnceLock::new();
    *DEFAULTS.get_or_init(|| {
        let mut p = BLANK;
        for d in PARAMS {
            d.set(&mut p, d.default).unwrap_or_else(|e| panic!("the default of {}: {e}", d.name));
        }
        p
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid text different from the default.
    fn sample(d: &ParamDef) -> String {
        match d.kind {
            ParamKind::Uint { max, .. } => max.to_string(),
            ParamKind::Split => "0,0,32".into(),
            ParamKind::Enum { values } => values.last().unwrap().to_string(),
        }
    }

    /// The `name: value` parts of a Params' Debug text (one per field, in order).
    fn fields(p: &Params) -> Vec<String> {
        let d = format!("{p:?}");
        let inner = d.trim_start_matches("Params { ").trim_end_matches(" }");
        let mut out: Vec<String> = Vec::new();
        for part in inner.split(", ") {
            // ImmSplit(10, 18, 4) contains ", ": glue the pieces back.
            match out.last_mut() {
                Some(last) if last.matches('(').count() > last.matches(')').count() => {
                    last.push_str(", ");
                    last.push_str(part);
                }
                _ => out.push(part.to_string()),
            }
        }
        out
    }

    #[test]
    fn flags_and_names_agree() {
        for d in PARAMS {
            assert_eq!(d.flag, format!("--{}", d.name.replace('_', "-")));
            assert_eq!(d.long(), &d.flag[2..]);
            assert!(d.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{}: Wireshark allows [a-z0-9_.]", d.name);
            assert!(ParamDef::find(d.name).is_some_and(|f| std::ptr::eq(f, d)));
            assert!(!d.help.is_empty() && !d.title.is_empty() && !d.value_name.is_empty());
            if let ParamKind::Uint { bits, max, .. } = d.kind {
                assert!([8, 16, 32, 64].contains(&bits), "{}", d.name);
                assert!(bits == 64 || max < 1u64 << bits, "{}", d.name);
            }
            assert_eq!(d.optional(), d.default.is_empty(), "{}: only an optional number has no default", d.name);
        }
        assert_eq!(NAMES.len(), PARAMS.len());
    }

    #[test]
    fn each_setter_sets_its_own_field() {
        let base = fields(&Params::default());
        for d in PARAMS {
            let mut p = Params::default();
            let s = sample(d);
            assert_ne!(s, d.default, "{}", d.name);
            d.set(&mut p, &s).unwrap();
            assert_eq!(d.get(&p), d.parse(&s).unwrap(), "{}: set then get", d.name);
            let changed: Vec<usize> = fields(&p).iter().zip(&base).enumerate().filter(|(_, (a, b))| a != b).map(|(i, _)| i).collect();
            let at = NAMES.iter().position(|n| *n == d.name).unwrap();
            assert_eq!(changed, [at], "{}: sets {:?}", d.name, fields(&p));
            assert!(fields(&p)[at].starts_with(&format!("{}: ", d.name)));
            // The default text puts the default back.
            d.set(&mut p, d.default).unwrap();
            assert_eq!(p, Params::default(), "{}", d.name);
        }
    }

    #[test]
    fn defaults_replace_every_placeholder() {
        // Every field of BLANK differs from the default: so each comes from the table.
        let (blank, default) = (fields(&BLANK), fields(&Params::default()));
        for (i, (b, d)) in blank.iter().zip(&default).enumerate() {
            let name = NAMES[i];
            if ParamDef::find(name).unwrap().optional() {
                continue;
            }
            assert_ne!(b, d, "{name}: the placeholder is the default");
        }
    }

    #[test]
    fn one_syntax() {
        let d = |n: &str| ParamDef::find(n).unwrap();
        let shift = d("dcp_tag_shift");
        assert_eq!(shift.parse(" 3 "), Ok(ParamValue::Uint(Some(3))));
        assert_eq!(shift.parse("0x6"), Ok(ParamValue::Uint(Some(6))));
        assert_eq!(shift.parse("7").unwrap_err(), "7 is out of range (at most 6)");
        assert_eq!(shift.parse("").unwrap_err(), "'' is not a number (decimal or 0x hex)");
        assert_eq!(shift.help_text(), "DCP: the tag is (ToS >> SHIFT) & 3 (SHIFT 0-6)");
        assert_eq!(d("netrt_opcode").parse("0xC0"), Ok(ParamValue::Uint(Some(0xc0))));
        assert_eq!(d("netrt_opcode").parse("192"), Ok(ParamValue::Uint(Some(0xc0))));
        assert!(d("netrt_opcode").parse("256").is_err());
        assert!(d("erd_nack_port").parse("65536").is_err());
        assert_eq!(d("sdr_mtu").parse("  "), Ok(ParamValue::Uint(None)));
        assert_eq!(d("sdr_max_message").parse("18446744073709551615"), Ok(ParamValue::Uint(Some(u64::MAX))));
        assert!(d("sdr_max_message").parse("18446744073709551616").is_err());
        assert_eq!(d("sdr_split").parse("8, 22, 2"), Ok(ParamValue::Split(ImmSplit(8, 22, 2))));
        assert_eq!(d("sdr_split").parse("8,22,3").unwrap_err(), "'8,22,3' is not three bit widths adding up to 32");
        assert_eq!(d("flor_ack_set_means").parse("write"), Ok(ParamValue::Enum(1)));
        assert_eq!(d("flor_ack_set_means").parse("Write").unwrap_err(), "'Write' is not one of send, write");
        assert_eq!(d("flor_ack_set_means").help_text(), d("flor_ack_set_means").help);
        let mut p = Params::default();
        assert!(d("erd_nack_port").set(&mut p, "x").is_err());
        assert_eq!(p, Params::default(), "a failed set changes nothing");
    }

    #[test]
    fn kinds_have_names() {
        let kinds: Vec<&str> = PARAMS.iter().map(|d| d.kind.name()).collect();
        assert_eq!(kinds, ["u8", "split", "u32", "u64", "u32", "split", "u32", "enum", "u8", "u16"]);
    }
}
