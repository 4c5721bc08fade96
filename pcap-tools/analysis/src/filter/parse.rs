//! The display filter's lexer and parser (docs/cli.md "Display filters"; the language in
//! `filter/mod.rs`): text → a tree of `&&`/`||`/`!` over tests, each test a name, an operator
//! and a literal already converted to the name's type (so evaluation never parses).
//! Error messages follow tshark 4.0's wording and point at the token they are about.

use core::ops::Range;
use std::net::IpAddr;

use rocescope_codec::field_group::group_of;
use rocescope_codec::{FieldId, FieldType, FIELDS};

use crate::output::Meta;

/// A parse error: the message and the byte range it is about.
pub(super) type Error = (String, Range<usize>);

/// The boolean structure of a filter; leaves index the tests.
#[derive(Debug)]
pub(super) enum Node {
    Test(u16),
    Not(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
}

/// What a test reads.
#[derive(Debug)]
pub(super) enum Source {
    Field(FieldId),
    /// A header (`rocescope.reth`) or the whole registry (`rocescope`): present when any of
    /// these fields is.
    Group(Vec<FieldId>),
    Meta(Meta),
    Proto(Proto),
}

impl Source {
    /// The registry fields the test reads (fed from the field walk).
    pub(super) fn field_ids(&self) -> Vec<FieldId> {
        match self {
            Source::Field(id) => vec![*id],
            Source::Group(ids) => ids.clone(),
            Source::Meta(_) | Source::Proto(_) => Vec::new(),
        }
    }
}

/// Protocols a bare name tests the presence of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Proto {
    Frame,
    Ip,
    Ipv6,
    Udp,
    Tcp,
}

/// How a test combines a frame's occurrences of its field (tshark's operators).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Present,
    /// `==`: some occurrence equals.
    AnyEq,
    /// `!=`: present, and every occurrence differs.
    AllNe,
    /// `===`: present, and every occurrence equals.
    AllEq,
    /// `~=`: some occurrence differs.
    AnyNe,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    In,
}

/// A literal, converted to its field's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Lit {
    /// Presence tests have none.
    None,
    /// A negative number against an unsigned field: equals nothing, orders with nothing.
    Never,
    UInt(u64),
    /// Nanoseconds.
    Time(i64),
    Bytes(Vec<u8>),
    Str(String),
    /// An address and its prefix length (the full length for a plain address).
    Net(IpAddr, u8),
    /// `in {…}`: values and ranges (`lo..hi`).
    Set(Vec<(Lit, Option<Lit>)>),
}

/// One test of a filter.
#[derive(Debug)]
pub(super) struct Test {
    pub source: Source,
    pub op: Op,
    pub lit: Lit,
}

/// The type a name's values have, which decides how its literals read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    UInt(u8),
    Bool,
    Bytes,
    Enum(&'static [&'static str]),
    Text,
    Time,
    Ipv4,
    Ipv6,
    /// Protocols and headers: presence only.
    Presence,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    DotDot,
    Rel(Op),
    And,
    Or,
    Not,
    Word,
    Str(String),
    Char(u8),
    Eof,
}

/// Every name a filter knows besides the registry's fields: the capture columns, the
/// protocols and the header groups.
pub fn names() -> Vec<String> {
    let mut v: Vec<String> = Meta::ALL.iter().map(|(n, _, _)| n.to_string()).collect();
    v.extend(PROTOS.iter().map(|(n, _)| n.to_string()));
    v.push("rocescope".into());
    let mut groups: Vec<String> = FIELDS.iter().map(|f| format!("rocescope.{}", group_of(f.name))).collect();
    groups.dedup();
    v.extend(groups.into_iter().filter(|g| FieldId::from_name(g).is_none()));
    v
}

const PROTOS: [(&str, Proto); 5] = [
    ("frame", Proto::Frame),
    ("ip", Proto::Ip),
    ("ipv6", Proto::Ipv6),
    ("udp", Proto::Udp),
    ("tcp", Proto::Tcp),
];

fn word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':' | b'/' | b'-')
}

/// Splits the filter into tokens with their byte ranges.
fn lex(text: &str) -> Result<Vec<(Tok, Range<usize>)>, Error> {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let two = |s: &str| text[i..].starts_with(s);
        let (tok, len) = if two("===") {
            (Tok::Rel(Op::AllEq), 3)
        } else if two("==") {
            (Tok::Rel(Op::AnyEq), 2)
        } else if two("!=") {
            (Tok::Rel(Op::AllNe), 2)
        } else if two("~=") {
            (Tok::Rel(Op::AnyNe), 2)
        } else if two("<=") {
            (Tok::Rel(Op::Le), 2)
        } else if two(">=") {
            (Tok::Rel(Op::Ge), 2)
        } else if two("&&") {
            (Tok::And, 2)
        } else if two("||") {
            (Tok::Or, 2)
        } else if two("..") {
            (Tok::DotDot, 2)
        } else {
            match c {
                b'<' => (Tok::Rel(Op::Lt), 1),
                b'>' => (Tok::Rel(Op::Gt), 1),
                b'!' => (Tok::Not, 1),
                b'(' => (Tok::LParen, 1),
                b')' => (Tok::RParen, 1),
                b'{' => (Tok::LBrace, 1),
                b'}' => (Tok::RBrace, 1),
                b',' => (Tok::Comma, 1),
                b'"' => {
                    let (s, len) = string(text, i)?;
                    (Tok::Str(s), len)
                }
                b'\'' => {
                    let (v, len) = char_constant(text, i)?;
                    (Tok::Char(v), len)
                }
                c if word_char(c) => {
                    let mut j = i;
                    while j < b.len() && word_char(b[j]) && !text[j..].starts_with("..") {
                        j += 1;
                    }
                    let tok = match &text[i..j] {
                        "and" => Tok::And,
                        "or" => Tok::Or,
                        "not" => Tok::Not,
                        "eq" | "any_eq" => Tok::Rel(Op::AnyEq),
                        "ne" | "all_ne" => Tok::Rel(Op::AllNe),
                        "all_eq" => Tok::Rel(Op::AllEq),
                        "any_ne" => Tok::Rel(Op::AnyNe),
                        "lt" => Tok::Rel(Op::Lt),
                        "le" => Tok::Rel(Op::Le),
                        "gt" => Tok::Rel(Op::Gt),
                        "ge" => Tok::Rel(Op::Ge),
                        "contains" => Tok::Rel(Op::Contains),
                        "in" => Tok::Rel(Op::In),
                        _ => Tok::Word,
                    };
                    (tok, j - i)
                }
                _ => {
                    let ch = text[i..].chars().next().unwrap_or('?');
                    return Err((format!("\"{ch}\" was unexpected in this context."), i..i + ch.len_utf8()));
                }
            }
        };
        i += len;
        toks.push((tok, start..i));
    }
    toks.push((Tok::Eof, b.len()..b.len()));
    Ok(toks)
}

/// A double-quoted string starting at `at`, with C escapes; its value and length.
fn string(text: &str, at: usize) -> Result<(String, usize), Error> {
    let mut out = String::new();
    let mut chars = text[at + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return Ok((out, k + 2)),
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, e)) => out.push(e),
                None => break,
            },
            c => out.push(c),
        }
    }
    Err(("The final quote was missing from a quoted string.".into(), at..text.len()))
}

/// A character constant `'c'` (or `'\n'`, `'\\''`) starting at `at`: its byte value and length.
fn char_constant(text: &str, at: usize) -> Result<(u8, usize), Error> {
    let rest = &text.as_bytes()[at + 1..];
    let (v, used) = match rest {
        [b'\\', b'n', ..] => (b'\n', 2),
        [b'\\', b't', ..] => (b'\t', 2),
        [b'\\', b'r', ..] => (b'\r', 2),
        [b'\\', c, ..] => (*c, 2),
        [c, ..] if c.is_ascii() => (*c, 1),
        _ => return Err(("Not a valid character constant.".into(), at..text.len())),
    };
    if rest.get(used) != Some(&b'\'') {
        return Err(("Not a valid character constant.".into(), at..(at + used + 2).min(text.len())));
    }
    Ok((v, used + 2))
}

struct Parser<'t> {
    text: &'t str,
    toks: Vec<(Tok, Range<usize>)>,
    at: usize,
    tests: Vec<Test>,
}

/// Parses a filter into its tree and tests.
pub(super) fn parse(text: &str) -> Result<(Node, Vec<Test>), Error> {
    let mut p = Parser { text, toks: lex(text)?, at: 0, tests: Vec::new() };
    if p.peek() == &Tok::Eof {
        // An empty filter keeps every frame, as tshark's `-Y ''`.
        let all = p.push(Test { source: Source::Proto(Proto::Frame), op: Op::Present, lit: Lit::None });
        return Ok((all, p.tests));
    }
    let root = p.or()?;
    if p.peek() != &Tok::Eof {
        return Err(p.unexpected());
    }
    if p.tests.len() > u16::MAX as usize {
        return Err(("The filter has too many tests.".into(), 0..text.len()));
    }
    Ok((root, p.tests))
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.at].0
    }
    fn span(&self) -> Range<usize> {
        self.toks[self.at].1.clone()
    }
    fn next(&mut self) -> (Tok, Range<usize>) {
        let t = self.toks[self.at].clone();
        if t.0 != Tok::Eof {
            self.at += 1;
        }
        t
    }
    /// The error for the current token.
    fn unexpected(&self) -> Error {
        let span = self.span();
        if self.peek() == &Tok::Eof {
            return ("Unexpected end of filter expression.".into(), span);
        }
        (format!("\"{}\" was unexpected in this context.", &self.text[span.clone()]), span)
    }

    fn or(&mut self) -> Result<Node, Error> {
        let mut left = self.and()?;
        while self.peek() == &Tok::Or {
            self.next();
            let right = self.and()?;
            left = Node::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, Error> {
        let mut left = self.unary()?;
        while self.peek() == &Tok::And {
            self.next();
            let right = self.unary()?;
            left = Node::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Node, Error> {
        match self.peek() {
            Tok::Not => {
                self.next();
                Ok(Node::Not(Box::new(self.unary()?)))
            }
            Tok::LParen => {
                self.next();
                let inner = self.or()?;
                if self.peek() != &Tok::RParen {
                    return Err(self.unexpected());
                }
                self.next();
                Ok(inner)
            }
            Tok::Word => self.test(),
            _ => Err(self.unexpected()),
        }
    }

    /// `NAME`, `NAME OP LITERAL` or `NAME in {…}`.
    fn test(&mut self) -> Result<Node, Error> {
        let (_, span) = self.next();
        let name = &self.text[span.clone()];
        let op = match self.peek() {
            Tok::Rel(op) => Some(*op),
            _ => None,
        };
        let Some((source, kind)) = resolve(name) else {
            if name.starts_with("rocescope.analysis.") {
                return Err((
                    format!("{name} cannot be used in a display filter (the analysis fields need a second pass)."),
                    span,
                ));
            }
            return Err(match op {
                Some(_) => {
                    let op_text = &self.text[self.span()];
                    (format!("Left side of \"{op_text}\" expression must be a field or function, not {name}."), span)
                }
                None => (format!("{name} is neither a field nor a protocol name."), span),
            });
        };
        let Some(op) = op else {
            return Ok(self.push(Test { source, op: Op::Present, lit: Lit::None }));
        };
        self.next();
        if kind == Kind::Presence {
            return Err((format!("{name} is a protocol or header: it can only be tested for presence."), span));
        }
        if op == Op::Contains && !matches!(kind, Kind::Bytes | Kind::Text | Kind::Enum(_)) {
            return Err((format!("{name} (type={}) cannot participate in contains comparison.", kind_name(kind)), span));
        }
        let lit = if op == Op::In { self.set(name, kind)? } else { self.literal(name, kind, op)? };
        Ok(self.push(Test { source, op, lit }))
    }

    fn push(&mut self, t: Test) -> Node {
        self.tests.push(t);
        Node::Test((self.tests.len() - 1) as u16)
    }

    /// `{a, b, c..d}`.
    fn set(&mut self, name: &str, kind: Kind) -> Result<Lit, Error> {
        if self.peek() != &Tok::LBrace {
            return Err(self.unexpected());
        }
        self.next();
        let mut items = Vec::new();
        loop {
            let lo = self.literal(name, kind, Op::In)?;
            let hi = if self.peek() == &Tok::DotDot {
                self.next();
                Some(self.literal(name, kind, Op::In)?)
            } else {
                None
            };
            items.push((lo, hi));
            match self.next() {
                (Tok::Comma, _) => continue,
                (Tok::RBrace, _) => break,
                _ => {
                    self.at -= 1;
                    return Err(self.unexpected());
                }
            }
        }
        Ok(Lit::Set(items))
    }

    /// One literal, read as `kind`.
    fn literal(&mut self, name: &str, kind: Kind, op: Op) -> Result<Lit, Error> {
        let (tok, span) = self.next();
        let w = &self.text[span.clone()];
        let err = |m: String| Err((m, span.clone()));
        match tok {
            Tok::Word => {
                if resolve(w).is_some() {
                    return err(format!("Comparing two fields ({name} and {w}) is not supported by rocescope."));
                }
                word_literal(w, name, kind, op).map_err(|m| (m, span.clone()))
            }
            Tok::Str(s) => match kind {
                Kind::Text => Ok(Lit::Str(s)),
                Kind::Enum(values) if values.contains(&s.as_str()) || op == Op::Contains => Ok(Lit::Str(s)),
                Kind::Enum(_) => err(format!("\"{s}\" cannot be found among the possible values for {name}.")),
                Kind::Bytes => Ok(Lit::Bytes(s.into_bytes())),
                _ => err(format!("{} cannot be converted from a string (\"{s}\").", kind_name(kind))),
            },
            Tok::Char(c) => match kind {
                Kind::UInt(_) => Ok(Lit::UInt(c as u64)),
                Kind::Bool => Ok(Lit::UInt((c != 0) as u64)),
                Kind::Bytes => Ok(Lit::Bytes(vec![c])),
                _ => err(format!("{} cannot be converted from a character constant ({w}).", kind_name(kind))),
            },
            _ => {
                self.at -= 1;
                Err(self.unexpected())
            }
        }
    }
}

/// A name's source and kind: a registry field, a header group, a capture column or a protocol.
fn resolve(name: &str) -> Option<(Source, Kind)> {
    if let Some(id) = FieldId::from_name(name) {
        let def = id.def();
        let kind = match def.ty {
            FieldType::UInt(bits) => Kind::UInt(bits),
            FieldType::Bool => Kind::Bool,
            FieldType::Bytes => Kind::Bytes,
            FieldType::Enum => Kind::Enum(def.values),
            FieldType::Text => Kind::Text,
        };
        return Some((Source::Field(id), kind));
    }
    if let Some(m) = Meta::from_name(name) {
        let kind = match m {
            Meta::Number | Meta::Len | Meta::CapLen => Kind::UInt(32),
            Meta::UdpSrcPort | Meta::UdpDstPort | Meta::UdpPort => Kind::UInt(16),
            Meta::TimeEpoch | Meta::TimeRelative | Meta::TimeDelta | Meta::TimeDeltaDisplayed => Kind::Time,
            Meta::IpSrc | Meta::IpDst | Meta::IpAddr => Kind::Ipv4,
            Meta::Ipv6Src | Meta::Ipv6Dst | Meta::Ipv6Addr => Kind::Ipv6,
        };
        return Some((Source::Meta(m), kind));
    }
    if let Some((_, p)) = PROTOS.iter().find(|(n, _)| *n == name) {
        return Some((Source::Proto(*p), Kind::Presence));
    }
    if name == "rocescope" {
        return Some((Source::Group(FIELDS.iter().map(|f| f.id).collect()), Kind::Presence));
    }
    let group = name.strip_prefix("rocescope.")?;
    let ids: Vec<FieldId> = FIELDS.iter().filter(|f| group_of(f.name) == group).map(|f| f.id).collect();
    (!ids.is_empty()).then_some((Source::Group(ids), Kind::Presence))
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::UInt(_) => "Unsigned integer",
        Kind::Bool => "Boolean",
        Kind::Bytes => "Byte string",
        Kind::Enum(_) | Kind::Text => "Character string",
        Kind::Time => "Time offset",
        Kind::Ipv4 => "IPv4 address",
        Kind::Ipv6 => "IPv6 address",
        Kind::Presence => "Protocol",
    }
}

/// An unquoted literal read as `kind`; the error message otherwise.
fn word_literal(w: &str, name: &str, kind: Kind, op: Op) -> Result<Lit, String> {
    match kind {
        Kind::UInt(bits) => match int(w)? {
            None => Ok(Lit::Never),
            Some(n) => {
                let max = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
                if n > max {
                    return Err(format!("\"{w}\" too big for this field, maximum {max}."));
                }
                Ok(Lit::UInt(n))
            }
        },
        Kind::Bool => {
            if w.eq_ignore_ascii_case("true") {
                return Ok(Lit::UInt(1));
            }
            if w.eq_ignore_ascii_case("false") {
                return Ok(Lit::UInt(0));
            }
            Ok(match int(w)? {
                Some(n) => Lit::UInt((n != 0) as u64),
                None => Lit::UInt(1),
            })
        }
        Kind::Bytes => bytes(w).map(Lit::Bytes).ok_or_else(|| format!("\"{w}\" is not a valid byte string.")),
        Kind::Enum(values) if values.contains(&w) || op == Op::Contains => Ok(Lit::Str(w.to_string())),
        Kind::Enum(_) => Err(format!("\"{w}\" cannot be found among the possible values for {name}.")),
        Kind::Text => Ok(Lit::Str(w.to_string())),
        Kind::Time => seconds(w).map(Lit::Time).ok_or_else(|| format!("\"{w}\" is not a valid time (seconds).")),
        Kind::Ipv4 => net(w).filter(|(a, _)| a.is_ipv4()).map(|(a, p)| Lit::Net(a, p)).ok_or_else(|| format!("\"{w}\" is not a valid hostname or IPv4 address.")),
        Kind::Ipv6 => net(w).filter(|(a, _)| a.is_ipv6()).map(|(a, p)| Lit::Net(a, p)).ok_or_else(|| format!("\"{w}\" is not a valid IPv6 address.")),
        Kind::Presence => Err(format!("{name} can only be tested for presence.")),
    }
}

/// An unsigned integer as tshark reads one (`strtoull` base 0, plus `0b`): `Some(n)`, or `None`
/// for a negative number.
fn int(w: &str) -> Result<Option<u64>, String> {
    let (neg, digits) = match w.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, w),
    };
    let (radix, d) = if let Some(h) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b").or_else(|| digits.strip_prefix("0B")) {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if d.is_empty() || !d.chars().all(|c| c.is_digit(radix)) {
        return Err(format!("\"{w}\" is not a valid number."));
    }
    let n = u64::from_str_radix(d, radix).map_err(|_| format!("\"{w}\" causes an integer overflow."))?;
    Ok(if neg { None } else { Some(n) })
}

/// Seconds with up to nine decimals (`0.000195`, `-1.5`, `2`) as nanoseconds.
fn seconds(w: &str) -> Option<i64> {
    let (neg, t) = match w.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, w),
    };
    let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || !all_digits(frac) || frac.len() > 9 {
        return None;
    }
    let s: i64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let mut ns: i64 = 0;
    for (i, b) in frac.bytes().enumerate() {
        ns += (b - b'0') as i64 * 10i64.pow(8 - i as u32);
    }
    let v = s.checked_mul(1_000_000_000)?.checked_add(ns)?;
    Some(if neg { -v } else { v })
}

/// `aa:bb:cc`, `aa-bb-cc`, `aa.bb.cc` or `aabbcc`.
fn bytes(w: &str) -> Option<Vec<u8>> {
    let parts: Vec<&str> = w.split([':', '-', '.']).collect();
    let hex = |s: &str| u8::from_str_radix(s, 16).ok();
    if parts.len() > 1 {
        return parts.iter().map(|p| if p.len() == 2 || p.len() == 1 { hex(p) } else { None }).collect();
    }
    if w.is_empty() || !w.len().is_multiple_of(2) {
        return None;
    }
    (0..w.len()).step_by(2).map(|i| w.get(i..i + 2).and_then(hex)).collect()
}

/// An address with an optional `/prefix`.
fn net(w: &str) -> Option<(IpAddr, u8)> {
    let (addr, prefix) = match w.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (w, None),
    };
    let addr: IpAddr = addr.parse().ok()?;
    let full = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        Some(p) => p.parse::<u8>().ok().filter(|p| *p <= full)?,
        None => full,
    };
    Some((addr, prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_as_strtoull_base_0() {
        assert_eq!(int("10"), Ok(Some(10)));
        assert_eq!(int("010"), Ok(Some(8)));
        assert_eq!(int("0x1F"), Ok(Some(31)));
        assert_eq!(int("0b101"), Ok(Some(5)));
        assert_eq!(int("-1"), Ok(None));
        assert!(int("0x").is_err());
        assert!(int("1.0").is_err());
        assert!(int("99999999999999999999").unwrap_err().contains("overflow"));
    }

    #[test]
    fn seconds_and_bytes_and_networks() {
        assert_eq!(seconds("0.000195"), Some(195_000));
        assert_eq!(seconds("2"), Some(2_000_000_000));
        assert_eq!(seconds("-0.5"), Some(-500_000_000));
        assert_eq!(seconds("1.0000000001"), None);
        assert_eq!(bytes("c0:de:00:0c"), Some(vec![0xc0, 0xde, 0, 0x0c]));
        assert_eq!(bytes("c0de000c"), Some(vec![0xc0, 0xde, 0, 0x0c]));
        assert_eq!(bytes("c0d"), None);
        assert_eq!(net("10.0.0.0/8"), Some(("10.0.0.0".parse().unwrap(), 8)));
        assert_eq!(net("fd00::a"), Some(("fd00::a".parse().unwrap(), 128)));
        assert_eq!(net("10.0.0.1/33"), None);
    }

    #[test]
    fn and_binds_tighter_than_or_and_not_tighter_than_and() {
        let (root, tests) = parse("frame.number == 1 || !frame.number == 2 && udp").unwrap();
        assert_eq!(tests.len(), 3);
        match root {
            Node::Or(a, b) => {
                assert!(matches!(*a, Node::Test(0)));
                match *b {
                    Node::And(l, r) => {
                        assert!(matches!(*l, Node::Not(_)));
                        assert!(matches!(*r, Node::Test(2)));
                    }
                    other => panic!("{other:?}"),
                }
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_point_at_the_culprit() {
        let e = parse("rocescope.bth.psn = 1").unwrap_err();
        assert_eq!(e, ("\"=\" was unexpected in this context.".to_string(), 18..19));
        let e = parse("foo == 1").unwrap_err();
        assert_eq!(e.1, 0..3);
        assert!(e.0.contains("Left side of \"==\""), "{}", e.0);
        let e = parse("rocescope.bth.psn == 1 ||").unwrap_err();
        assert_eq!(e.0, "Unexpected end of filter expression.");
        let e = parse("rocescope.bth.psn == 16777216").unwrap_err();
        assert_eq!(e, ("\"16777216\" too big for this field, maximum 16777215.".to_string(), 21..29));
        let e = parse("ip.src == fd00::a").unwrap_err();
        assert_eq!(e.1, 10..17);
        let e = parse("frame.number == 1 && udp.port contains 1").unwrap_err();
        assert_eq!(e, ("udp.port (type=Unsigned integer) cannot participate in contains comparison.".to_string(), 21..29));
        assert!(parse("  ").is_ok(), "an empty filter keeps everything");
        let e = parse("rocescope.aeth.kind == \"yes\"").unwrap_err();
        assert!(e.0.contains("possible values"), "{}", e.0);
    }
}
