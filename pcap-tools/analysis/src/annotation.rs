//! Verdicts carried in a capture (issue 12, "Verdicts in Wireshark"): `rocescope annotate`
//! writes each frame's per-packet analysis fields (`rocescope.analysis.*`,
//! [`crate::analyze::fields`]) and replay findings (`rocescope.replay.*`, [`REPLAY_FIELDS`]) as a
//! pcapng packet comment (`opt_comment`) in the form below; the Wireshark plugin turns the
//! comment back into fields and expert infos, and `rocescope decode` reads the replay fields
//! from it. The form (docs/annotate.md):
//!
//! ```text
//! rocescope 1
//! rocescope.analysis.flow=10.0.0.1>10.0.1.1/512@0
//! rocescope.analysis.retransmission=1
//! rocescope.analysis.message_complete=3
//! rocescope.analysis.message_complete=4
//! rocescope.replay.departure=1
//! rocescope.replay.kind=departure
//! rocescope.replay.rule=...
//! ```
//!
//! - the first line is [`MARKER`] (the form's version): a comment not starting with it is not
//!   rocescope's and is left alone;
//! - then one line per value, `NAME=VALUE`, in the order of the tables ([`comment_fields`]); a
//!   repeated field repeats its line, one per value, in order;
//! - values are written as `decode -T fields` prints them (booleans 0/1, integers in decimal);
//!   `\` is written `\\`, a line feed `\n`, a carriage return `\r`, so a value is one line;
//! - lines separated by a line feed, no trailing line feed; a line whose name the reader does
//!   not know is skipped (a later version may add fields).
//!
//! The replay fields of a finding: `rocescope.replay.departure` / `.ambiguous` once on every
//! frame a departure / an ambiguous finding names; then per finding naming the frame (in the
//! report's order) one line each of `.kind`, `.rule`, `.source`, `.stack`, `.flow`, `.cause` (the
//! finding's first frame, its cause), `.expected`, `.seen`.

use std::borrow::Cow;
use std::fmt::Write as _;

use rocescope_codec::FieldType;

use crate::analyze::fields::{AField, ANALYSIS_FIELDS};

/// The first line of a rocescope comment: the form and its version.
pub const MARKER: &str = "rocescope 1";

/// A replay field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RField {
    Departure,
    Ambiguous,
    Kind,
    Rule,
    Source,
    Stack,
    Flow,
    Cause,
    Expected,
    Seen,
}

/// One entry of [`REPLAY_FIELDS`].
#[derive(Clone, Copy, Debug)]
pub struct ReplayFieldDef {
    pub field: RField,
    pub name: &'static str,
    pub ty: FieldType,
    pub desc: &'static str,
    pub values: &'static [&'static str],
    /// One value per finding naming the frame.
    pub repeated: bool,
}

const KINDS: &[&str] = &["departure", "ambiguous"];

macro_rules! rdef {
    ($f:ident, $name:literal, $ty:expr, $rep:literal, $desc:literal) => {
        ReplayFieldDef { field: RField::$f, name: $name, ty: $ty, desc: $desc, values: &[], repeated: $rep }
    };
    ($f:ident, $name:literal, $ty:expr, $rep:literal, $desc:literal, $values:expr) => {
        ReplayFieldDef { field: RField::$f, name: $name, ty: $ty, desc: $desc, values: $values, repeated: $rep }
    };
}

/// Every replay field (docs/annotate.md), in the order a comment holds them.
pub const REPLAY_FIELDS: &[ReplayFieldDef] = &[
    rdef!(
        Departure,
        "rocescope.replay.departure",
        FieldType::Bool,
        false,
        "Replay: a departure from the reference stack names this frame (docs/replay.md)"
    ),
    rdef!(
        Ambiguous,
        "rocescope.replay.ambiguous",
        FieldType::Bool,
        false,
        "Replay: an ambiguous finding (a departure, or a capture gap or loss) names this frame"
    ),
    rdef!(
        Kind,
        "rocescope.replay.kind",
        FieldType::Enum,
        true,
        "Replay: each finding naming this frame: departure or ambiguous (repeated, one per finding)",
        KINDS
    ),
    rdef!(Rule, "rocescope.replay.rule", FieldType::Text, true, "Replay: each finding's rule (repeated)"),
    rdef!(
        Source,
        "rocescope.replay.source",
        FieldType::Text,
        true,
        "Replay: where each finding's rule is written (repeated)"
    ),
    rdef!(
        Stack,
        "rocescope.replay.stack",
        FieldType::Text,
        true,
        "Replay: the reference stack that judged each finding's connection (repeated)"
    ),
    rdef!(
        Flow,
        "rocescope.replay.flow",
        FieldType::Text,
        true,
        "Replay: each finding's flow, the connection's requests flow (repeated)"
    ),
    rdef!(
        Cause,
        "rocescope.replay.cause",
        FieldType::UInt(32),
        true,
        "Replay: each finding's first frame, its cause (repeated)"
    ),
    rdef!(
        Expected,
        "rocescope.replay.expected",
        FieldType::Text,
        true,
        "Replay: what the reference stack does, per finding (repeated)"
    ),
    rdef!(
        Seen,
        "rocescope.replay.seen",
        FieldType::Text,
        true,
        "Replay: what the capture shows, per finding (repeated)"
    ),
];

impl RField {
    pub fn from_name(name: &str) -> Option<RField> {
        REPLAY_FIELDS.iter().find(|d| d.name == name).map(|d| d.field)
    }
    pub fn def(self) -> &'static ReplayFieldDef {
        REPLAY_FIELDS.iter().find(|d| d.field == self).expect("every field is in the table")
    }
}

/// Whether an analysis field may occur several times in one frame (one comment line each).
pub fn analysis_repeated(f: AField) -> bool {
    matches!(f, AField::MessageComplete)
}

/// A field a comment may hold, analysis or replay: the one table the Wireshark plugin's
/// `ProtoField`s are generated from (`dissector/src/lib.rs`).
#[derive(Clone, Copy, Debug)]
pub struct CommentField {
    pub name: &'static str,
    pub ty: FieldType,
    pub desc: &'static str,
    pub values: &'static [&'static str],
    pub repeated: bool,
}

/// Every field of the comment form, in the order a comment holds them: the analysis fields,
/// then the replay fields.
pub fn comment_fields() -> impl Iterator<Item = CommentField> {
    let analysis = ANALYSIS_FIELDS.iter().map(|d| CommentField {
        name: d.name,
        ty: d.ty,
        desc: d.desc,
        values: d.values,
        repeated: analysis_repeated(d.field),
    });
    let replay = REPLAY_FIELDS.iter().map(|d| CommentField {
        name: d.name,
        ty: d.ty,
        desc: d.desc,
        values: d.values,
        repeated: d.repeated,
    });
    analysis.chain(replay)
}

/// Whether a finding is a departure or an ambiguous one (`rocescope_replay::FindingKind`, which
/// this crate does not depend on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    Departure,
    Ambiguous,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Departure => KINDS[0],
            FindingKind::Ambiguous => KINDS[1],
        }
    }
}

/// A replay finding as a frame's comment carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FindingNote<'a> {
    pub kind: FindingKind,
    pub rule: &'a str,
    pub source: &'a str,
    pub stack: &'a str,
    pub flow: &'a str,
    /// The finding's first frame.
    pub cause: u64,
    pub expected: &'a str,
    pub seen: &'a str,
}

/// Appends `value` escaped (`\` → `\\`, line feed → `\n`, carriage return → `\r`).
pub fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

/// A value as written, unescaped (borrowed when it holds no `\`). A `\` before anything else
/// (or at the end) is kept as it is.
pub fn unescape(value: &str) -> Cow<'_, str> {
    if !value.contains('\\') {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

fn line(out: &mut String, name: &str, value: &str) {
    out.push('\n');
    out.push_str(name);
    out.push('=');
    escape_into(out, value);
}

/// Writes a frame's comment into `out` (cleared first): its analysis fields, each as
/// `analysis` writes it (as `decode -T fields` prints it, a repeated field's values joined by
/// commas; nothing when absent), then the findings naming the frame. `false` (and `out` empty)
/// when the frame has nothing to say: it gets no comment.
pub fn write_comment(
    out: &mut String,
    mut analysis: impl FnMut(AField, &mut String),
    findings: &[FindingNote<'_>],
) -> bool {
    out.clear();
    out.push_str(MARKER);
    let mut cell = String::new();
    let mut any = false;
    for d in ANALYSIS_FIELDS {
        cell.clear();
        analysis(d.field, &mut cell);
        if cell.is_empty() {
            continue;
        }
        any = true;
        if analysis_repeated(d.field) {
            for v in cell.split(',') {
                line(out, d.name, v);
            }
        } else {
            line(out, d.name, &cell);
        }
    }
    if findings.iter().any(|f| f.kind == FindingKind::Departure) {
        line(out, RField::Departure.def().name, "1");
    }
    if findings.iter().any(|f| f.kind == FindingKind::Ambiguous) {
        line(out, RField::Ambiguous.def().name, "1");
    }
    for f in findings {
        any = true;
        line(out, RField::Kind.def().name, f.kind.name());
        line(out, RField::Rule.def().name, f.rule);
        line(out, RField::Source.def().name, f.source);
        line(out, RField::Stack.def().name, f.stack);
        line(out, RField::Flow.def().name, f.flow);
        cell.clear();
        let _ = write!(cell, "{}", f.cause);
        line(out, RField::Cause.def().name, &cell);
        line(out, RField::Expected.def().name, f.expected);
        line(out, RField::Seen.def().name, f.seen);
    }
    if !any {
        out.clear();
    }
    any
}

/// A frame's rocescope packet comment (`annotate`), the first should there be several; a
/// malformed option ends the search quietly (`decode` warns about it).
pub fn rocescope_comment<'a>(rec: &crate::capture::Record<'a>) -> Option<&'a str> {
    rec.comments().map_while(Result::ok).find(|c| is_rocescope(c))
}

/// Whether a comment is in rocescope's form (its first line is [`MARKER`]).
pub fn is_rocescope(comment: &str) -> bool {
    comment.strip_prefix(MARKER).is_some_and(|rest| rest.is_empty() || rest.starts_with('\n'))
}

/// The `(name, value)` lines of a rocescope comment, values still escaped ([`unescape`]);
/// nothing for another comment. Lines without `=` are skipped.
pub fn entries(comment: &str) -> impl Iterator<Item = (&str, &str)> {
    let body = if is_rocescope(comment) { &comment[MARKER.len()..] } else { "" };
    body.split('\n').filter_map(|l| l.split_once('='))
}

/// Appends the values of field `name` in a rocescope comment to `cell`, each as `open` allows
/// (the `-E occurrence` / aggregator of `decode -T fields`).
pub fn write_values(comment: &str, name: &str, cell: &mut String, mut open: impl FnMut(&mut String) -> bool) {
    for (n, v) in entries(comment) {
        if n == name && open(cell) {
            cell.push_str(&unescape(v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_round_trips() {
        let f = FindingNote {
            kind: FindingKind::Departure,
            rule: "gbn.nak-once",
            source: "IBTA 9.7.5.2.2",
            stack: "gbn",
            flow: "a>b/1@1",
            cause: 12,
            expected: "one NAK\nthen silence \\ done",
            seen: "two=NAKs\r",
        };
        let mut out = String::new();
        let wrote = write_comment(
            &mut out,
            |a, cell| match a {
                AField::Retransmission => cell.push('1'),
                AField::MessageComplete => cell.push_str("3,4"),
                _ => {}
            },
            std::slice::from_ref(&f),
        );
        assert!(wrote);
        assert!(!out.contains('\r') && out.lines().count() == 13, "{out}");
        assert!(out.starts_with("rocescope 1\nrocescope.analysis.retransmission=1\nrocescope.analysis.message_complete=3\nrocescope.analysis.message_complete=4\nrocescope.replay.departure=1\n"), "{out}");
        let get = |name: &str| {
            let mut cell = String::new();
            write_values(&out, name, &mut cell, |c| {
                if !c.is_empty() {
                    c.push(',');
                }
                true
            });
            cell
        };
        assert_eq!(get("rocescope.analysis.message_complete"), "3,4");
        assert_eq!(get("rocescope.replay.expected"), f.expected);
        assert_eq!(get("rocescope.replay.seen"), f.seen);
        assert_eq!(get("rocescope.replay.cause"), "12");
        assert_eq!(get("rocescope.replay.ambiguous"), "");
        // Nothing to say: no comment.
        assert!(!write_comment(&mut out, |_, _| {}, &[]));
        assert!(out.is_empty());
    }

    #[test]
    fn other_comments_are_not_read() {
        assert!(entries("rocescope 10\nrocescope.replay.departure=1").next().is_none());
        assert!(entries("hello\nrocescope.replay.departure=1").next().is_none());
        assert_eq!(entries("rocescope 1\nno equals\nx=y").collect::<Vec<_>>(), vec![("x", "y")]);
        assert_eq!(unescape("a\\qb\\"), "a\\qb\\");
    }

    #[test]
    fn names_are_unique_and_known() {
        let names: Vec<&str> = comment_fields().map(|f| f.name).collect();
        let set: std::collections::HashSet<&&str> = names.iter().collect();
        assert_eq!(set.len(), names.len());
        assert!(names.iter().all(|n| n.starts_with("rocescope.analysis.") || n.starts_with("rocescope.replay.")));
        for d in REPLAY_FIELDS {
            assert_eq!(RField::from_name(d.name), Some(d.field));
        }
    }
}
