//! Display filters (`rocescope decode -Y FILTER`, docs/cli.md "Display filters"): a subset of
//! Wireshark's display-filter language, evaluated as tshark 4.0 evaluates it.
//!
//! The language: comparisons `==` `!=` `<` `>` `<=` `>=` (and `eq ne lt gt le ge`), tshark's
//! `===` (`all_eq`) and `~=` (`any_ne`), `contains`, `in {a, b, c..d}`; `&&`/`and`,
//! `||`/`or`, `!`/`not`, parentheses; a bare name tests presence. Names are the registry's
//! fields (`rocescope fields`), a header's group (`rocescope.reth`: any of its fields), the
//! capture columns of [`crate::output::Meta`] (`frame.number`, `frame.time_relative`,
//! `ip.src`, `udp.port`, …) and the protocols `frame`, `ip`, `ipv6`, `udp`, `tcp`.
//! Literals: integers in decimal, `0x` hex, `0b` binary, `0` octal and `'c'` characters;
//! seconds with decimals for times; IPv4/IPv6 addresses with an optional `/prefix`; byte strings
//! as `aa:bb:cc` (or `-`, `.`, no separator); quoted strings (or bare words for enumerations).
//!
//! tshark's semantics, each checked against tshark 4.0.17 on the bundled fixtures
//! (`pcap-tools/cli/tests/tshark_filter.rs`):
//! - a field absent from a frame makes every comparison on it false (and `!` of it true);
//! - a field present several times (`ip.addr`, `udp.port`, `rocescope.pfc.quanta`): `==`, the
//!   orderings, `contains` and `in` hold if any occurrence matches; `!=` holds if every
//!   occurrence differs (and the field is present); `===` if every occurrence equals; `~=` if
//!   any occurrence differs;
//! - a boolean field compares as 0/1, and any non-zero literal (or `True`) means 1;
//! - a negative number never equals an unsigned field, and no ordering holds with it;
//! - `&&` binds tighter than `||`; `!` applies to the comparison or parenthesis after it;
//! - `ip.src`, `ip.dst`, `ip.addr` are IPv4 only (`ipv6.*` the IPv6 ones), as tshark's fields
//!   are, although the `-e ip.src` column also prints IPv6 and GRH addresses.
//!
//! Not supported (a usage error says so): comparing two fields, slices (`field[0:2]`),
//! functions, `matches`, arithmetic.
//!
//! [`Filter::parse`] runs once; [`Filter::matches`] visits a frame's fields once
//! ([`Decoded::visit`]) and allocates nothing (but to compare the text of a warning with `<`,
//! `>` or `contains`).

mod eval;
mod parse;

use core::fmt;
use core::ops::Range;

use rocescope_codec::decoder::Decoded;

use crate::capture::Record;
use crate::output::Times;

pub use parse::names;

/// A parsed display filter.
#[derive(Debug)]
pub struct Filter {
    text: String,
    root: parse::Node,
    tests: Vec<parse::Test>,
    /// For each registry field (by `FieldId as usize`), the tests that read it.
    by_field: Vec<Vec<u16>>,
    /// Per test, what this frame's occurrences said (reset for each frame).
    state: Vec<eval::State>,
}

/// Why a filter does not parse: the message and the byte range of the text it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError {
    pub message: String,
    pub span: Range<usize>,
    pub text: String,
}

impl fmt::Display for FilterError {
    /// As tshark prints it: the message, the filter, and a caret line under the culprit.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if self.span.start < self.text.len() || !self.span.is_empty() {
            let start = self.text[..self.span.start.min(self.text.len())].chars().count();
            let len = self.text.get(self.span.clone()).map_or(1, |s| s.chars().count()).max(1);
            write!(f, "\n    {}\n    {}^{}", self.text, " ".repeat(start), "~".repeat(len - 1))?;
        }
        Ok(())
    }
}

impl std::error::Error for FilterError {}

impl Filter {
    /// Parses `text`; the error names the position as tshark does.
    pub fn parse(text: &str) -> Result<Filter, FilterError> {
        let (root, tests) = parse::parse(text).map_err(|(message, span)| FilterError {
            message,
            span,
            text: text.to_string(),
        })?;
        let mut by_field = vec![Vec::new(); rocescope_codec::FIELDS.len()];
        for (i, t) in tests.iter().enumerate() {
            for id in t.source.field_ids() {
                by_field[id as usize].push(i as u16);
            }
        }
        let state = vec![eval::State::default(); tests.len()];
        Ok(Filter { text: text.to_string(), root, tests, by_field, state })
    }

    /// Whether the filter reads this registry field (a header group or `rocescope` reads all of
    /// theirs).
    pub fn reads(&self, id: rocescope_codec::FieldId) -> bool {
        !self.by_field[id as usize].is_empty()
    }

    /// The filter as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the frame passes the filter.
    pub fn matches(&mut self, rec: &Record<'_>, times: &Times, d: &Decoded<'_, '_>) -> bool {
        eval::run(self, rec, times, d)
    }
}
