//! Every configurable parameter of WIRE.md part B. [`PARAMS`] (`params/table.rs`) is the one
//! place that names, describes and defaults them: the CLI flag, the Wireshark preference and the
//! browser option of the same name are built from it and set these with its setters.

mod table;

pub use table::{ParamDef, ParamKind, ParamValue, COUNT, PARAMS};

/// Parses an unsigned number written in decimal or as `0x…` hexadecimal (how QPNs, opcodes and
/// parameters are written on the command line, in `--map` selectors and in the browser options).
pub fn parse_uint(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// How a 32-bit immediate is split into three fields, most significant first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImmSplit(pub u8, pub u8, pub u8);

impl ImmSplit {
    /// Checks that the three widths add up to 32.
    pub fn new(a: u8, b: u8, c: u8) -> Option<ImmSplit> {
        (a as u32 + b as u32 + c as u32 == 32).then_some(ImmSplit(a, b, c))
    }
    /// Splits `imm` into the three fields.
    #[inline]
    pub fn split(self, imm: u32) -> (u32, u32, u32) {
        let ImmSplit(_, b, c) = self;
        let mask = |bits: u8| if bits >= 32 { u32::MAX } else { (1u32 << bits) - 1 };
        let first = if b as u32 + c as u32 >= 32 { 0 } else { imm >> (b + c) };
        let second = if c >= 32 { 0 } else { (imm >> c) & mask(b) };
        (first, second, imm & mask(c))
    }
    /// Joins three fields (each masked to its width).
    pub fn join(self, a: u32, b: u32, c: u32) -> u32 {
        let ImmSplit(wa, wb, wc) = self;
        let mask = |bits: u8| if bits >= 32 { u32::MAX } else { (1u32 << bits) - 1 };
        let sh = |v: u32, s: u8| if s >= 32 { 0 } else { v << s };
        sh(a & mask(wa), wb + wc) | sh(b & mask(wb), wc) | (c & mask(wc))
    }
    /// Parses "10,18,4".
    pub fn parse(s: &str) -> Option<ImmSplit> {
        let v: Vec<u8> = s.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
        match v[..] {
            [a, b, c] => ImmSplit::new(a, b, c),
            _ => None,
        }
    }
}

/// Which entries a set bit of a Flor ACK bitmap marks (WIRE.md B.3: the paper contradicts
/// itself, so the polarity is configurable; the default is [`PARAMS`]').
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlorAckSetMeans {
    /// A set bit marks a compressed SEND global number (the text's rule).
    Send,
    /// A set bit marks a WRITE reliable number (the worked example's reading).
    Write,
}

impl FlorAckSetMeans {
    /// Every value, in the order of [`FlorAckSetMeans::NAMES`] (`ALL[v as usize] == v`).
    pub const ALL: [FlorAckSetMeans; 2] = [FlorAckSetMeans::Send, FlorAckSetMeans::Write];
    /// The names the flag, the option and the preference take.
    pub const NAMES: [&'static str; 2] = ["send", "write"];

    /// `send` or `write`.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The transport parameters. Their names, help texts, kinds and defaults are in [`PARAMS`];
/// [`Params::default`] applies its defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    /// DCP: the tag is `(tos >> shift) & 3`.
    pub dcp_tag_shift: u8,
    /// SDR immediate split: message id · packet offset · user-immediate fragment.
    pub sdr_split: ImmSplit,
    /// SDR MTU in bytes; `None`: the DMA length of the flow's full-size packets, else 4096.
    pub sdr_mtu: Option<u32>,
    /// SDR maximum message size in bytes; `None`: 2^OFF · MTU.
    pub sdr_max_message: Option<u64>,
    /// SDR packets per chunk.
    pub sdr_chunk_packets: u32,
    /// Flor immediate split: hint · message id · chunk offset.
    pub flor_split: ImmSplit,
    /// Flor UNIT_SIZE in bytes.
    pub flor_unit_size: u32,
    /// Flor ACK bitmap polarity.
    pub flor_ack_set_means: FlorAckSetMeans,
    /// NetRT message opcode.
    pub netrt_opcode: u8,
    /// ERD NACK TCP port.
    pub erd_nack_port: u16,
}

impl Params {
    /// The largest DCP tag shift: the tag's two bits must lie inside the ToS byte.
    pub const MAX_DCP_TAG_SHIFT: u8 = 6;

    /// The parameters' names, in declaration order ([`PARAMS`]' names): the CLI's flags (`-` for
    /// `_`), the browser's option keys and the Lua plugin's preferences all spell them so
    /// (INTERFACES.md).
    pub const NAMES: [&'static str; COUNT] = table::NAMES;

    /// The parameter table ([`PARAMS`]).
    pub fn table() -> &'static [ParamDef] {
        PARAMS
    }
}

impl Default for Params {
    /// The defaults of [`PARAMS`].
    fn default() -> Self {
        table::defaults()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_fields_in_order() {
        // The Debug form lists the fields as `name: value` in declaration order.
        let debug = format!("{:?}", Params::default());
        let mut at = 0;
        for name in Params::NAMES {
            let i = debug[at..].find(&format!("{name}: ")).unwrap_or_else(|| panic!("{name} is not a field, or out of order"));
            at += i + name.len();
        }
        assert_eq!(debug.matches(": ").count(), Params::NAMES.len(), "a field has no name in Params::NAMES: {debug}");
    }

    #[test]
    fn flor_ack_names_are_in_order() {
        for (i, v) in FlorAckSetMeans::ALL.into_iter().enumerate() {
            assert_eq!(v as usize, i);
            assert_eq!(v.name(), FlorAckSetMeans::NAMES[i]);
        }
    }

    #[test]
    fn wire_md_worked_examples() {
        // B.2: 10·18·4 with id 3, offset 5, fragment 0xA; 8·22·2 with id 3, offset 5, fragment 2.
        assert_eq!(ImmSplit(10, 18, 4).join(3, 5, 0xa), 0x00C0_005A);
        assert_eq!(ImmSplit(10, 18, 4).split(0x00C0_005A), (3, 5, 0xa));
        assert_eq!(ImmSplit(8, 22, 2).join(3, 5, 2), 0x0300_0016);
        assert_eq!(ImmSplit(8, 22, 2).split(0x0300_0016), (3, 5, 2));
        // B.3: Flor id 1 offset 0; id 1 offset 2; with the hint.
        assert_eq!(ImmSplit(1, 21, 10).join(0, 1, 0), 0x0000_0400);
        assert_eq!(ImmSplit(1, 21, 10).join(0, 1, 2), 0x0000_0402);
        assert_eq!(ImmSplit(1, 21, 10).split(0x8000_0402), (1, 1, 2));
        assert_eq!(ImmSplit::parse("10,18,4"), Some(ImmSplit(10, 18, 4)));
        assert_eq!(ImmSplit::parse("10,18,5"), None);
        assert_eq!(ImmSplit(0, 32, 0).split(0xdead_beef), (0, 0xdead_beef, 0));
    }
}
