//! Evaluating a parsed display filter over one decoded frame (docs/cli.md "Display filters";
//! the semantics in `filter/mod.rs`): the frame's registry fields are visited once, each
//! occurrence updating the tests that read its field; the capture columns and protocols are read
//! directly; then the `&&`/`||`/`!` tree combines the tests. Nothing allocates except comparing a
//! warning's text by order or `contains`.

use core::cmp::Ordering;
use core::fmt::{self, Write as _};
use std::net::IpAddr;

use rocescope_codec::decoder::Decoded;
use rocescope_codec::Value;

use super::parse::{Lit, Node, Op, Proto, Source, Test};
use super::Filter;
use crate::capture::Record;
use crate::output::{MetaValue, Times};

/// What one test learnt from a frame's occurrences of its field.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct State {
    present: bool,
    /// Some occurrence satisfies the test's predicate.
    any_true: bool,
    /// Some occurrence does not.
    any_false: bool,
}

impl State {
    fn add(&mut self, holds: bool) {
        self.present = true;
        self.any_true |= holds;
        self.any_false |= !holds;
    }
    /// The test's verdict for the frame.
    fn verdict(&self, op: Op) -> bool {
        match op {
            Op::Present => self.present,
            Op::AllNe => self.present && !self.any_true,
            Op::AllEq => self.present && !self.any_false,
            Op::AnyNe => self.any_false,
            Op::AnyEq | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Contains | Op::In => self.any_true,
        }
    }
}

/// One occurrence's value, from the registry or a capture column.
#[derive(Clone, Copy)]
enum V<'a> {
    Field(Value<'a>),
    Meta(MetaValue),
}

pub(super) fn run(f: &mut Filter, rec: &Record<'_>, times: &Times, d: &Decoded<'_, '_>) -> bool {
    let Filter { tests, by_field, state, root, .. } = f;
    state.iter_mut().for_each(|s| *s = State::default());
    let mut any_field = false;
    for (t, s) in tests.iter().zip(state.iter_mut()) {
        match &t.source {
            Source::Meta(m) => m.values(rec, &d.frame, times, |v| s.add(holds(t, V::Meta(v)))),
            Source::Proto(p) => {
                if proto_present(*p, d) {
                    s.add(true);
                }
            }
            Source::Field(_) | Source::Group(_) => any_field = true,
        }
    }
    if any_field {
        d.visit(|id, v, _| {
            for &i in &by_field[id as usize] {
                let t = &tests[i as usize];
                state[i as usize].add(holds(t, V::Field(v)));
            }
        });
    }
    eval(root, tests, state)
}

fn eval(n: &Node, tests: &[Test], state: &[State]) -> bool {
    match n {
        Node::Test(i) => state[*i as usize].verdict(tests[*i as usize].op),
        Node::Not(a) => !eval(a, tests, state),
        Node::And(a, b) => eval(a, tests, state) && eval(b, tests, state),
        Node::Or(a, b) => eval(a, tests, state) || eval(b, tests, state),
    }
}

fn proto_present(p: Proto, d: &Decoded<'_, '_>) -> bool {
    let f = &d.frame;
    match p {
        Proto::Frame => true,
        Proto::Ip => f.ip_addrs().is_some_and(|(s, _)| s.is_ipv4()),
        Proto::Ipv6 => f.ip_addrs().is_some_and(|(s, _)| s.is_ipv6()) && !f.is_rocev1(),
        Proto::Udp => f.udp_ports().is_some(),
        Proto::Tcp => f.tcp().is_some(),
    }
}

/// Whether one occurrence satisfies the test's predicate: equality for `==`, `!=`, `===`, `~=`;
/// the ordering, containment or membership otherwise.
fn holds(t: &Test, v: V<'_>) -> bool {
    match t.op {
        Op::Present => true,
        Op::AnyEq | Op::AllNe | Op::AllEq | Op::AnyNe => equals(v, &t.lit),
        Op::Lt => compare(v, &t.lit) == Some(Ordering::Less),
        Op::Le => matches!(compare(v, &t.lit), Some(Ordering::Less | Ordering::Equal)),
        Op::Gt => compare(v, &t.lit) == Some(Ordering::Greater),
        Op::Ge => matches!(compare(v, &t.lit), Some(Ordering::Greater | Ordering::Equal)),
        Op::Contains => contains(v, &t.lit),
        Op::In => match &t.lit {
            Lit::Set(items) => items.iter().any(|(lo, hi)| match hi {
                None => equals(v, lo),
                Some(hi) => {
                    matches!(compare(v, lo), Some(Ordering::Greater | Ordering::Equal))
                        && matches!(compare(v, hi), Some(Ordering::Less | Ordering::Equal))
                }
            }),
            _ => false,
        },
    }
}

fn equals(v: V<'_>, lit: &Lit) -> bool {
    match (v, lit) {
        (V::Meta(MetaValue::Ip(a)), Lit::Net(n, prefix)) => in_net(a, *n, *prefix),
        (V::Field(Value::Warning(w)), Lit::Str(s)) => {
            let mut m = Matcher { rest: s.as_bytes(), ok: true };
            let _ = write!(m, "{w}");
            m.ok && m.rest.is_empty()
        }
        _ => compare(v, lit) == Some(Ordering::Equal),
    }
}

/// The occurrence's order against the literal; `None` when they cannot be compared.
fn compare(v: V<'_>, lit: &Lit) -> Option<Ordering> {
    Some(match (v, lit) {
        (_, Lit::Never | Lit::None | Lit::Set(_)) => return None,
        (V::Field(f), Lit::UInt(n)) => f.as_u64()?.cmp(n),
        (V::Meta(MetaValue::UInt(a)), Lit::UInt(n)) => a.cmp(n),
        (V::Meta(MetaValue::Time(a)), Lit::Time(n)) => a.cmp(n),
        (V::Meta(MetaValue::Ip(a)), Lit::Net(n, _)) => a.cmp(n),
        (V::Field(Value::Bytes(b)), Lit::Bytes(l)) => b.cmp(l.as_slice()),
        (V::Field(Value::Str(s)), Lit::Str(l)) => s.cmp(l.as_str()),
        (V::Field(Value::Warning(w)), Lit::Str(l)) => w.to_string().as_str().cmp(l.as_str()),
        _ => return None,
    })
}

fn contains(v: V<'_>, lit: &Lit) -> bool {
    match (v, lit) {
        (V::Field(Value::Bytes(b)), Lit::Bytes(l)) => l.is_empty() || b.windows(l.len()).any(|w| w == l.as_slice()),
        (V::Field(Value::Str(s)), Lit::Str(l)) => s.contains(l.as_str()),
        (V::Field(Value::Warning(w)), Lit::Str(l)) => w.to_string().contains(l.as_str()),
        _ => false,
    }
}

fn in_net(a: IpAddr, n: IpAddr, prefix: u8) -> bool {
    match (a, n) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix as u32) };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if prefix == 0 { 0 } else { u128::MAX << (128 - prefix as u32) };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// Compares formatted text with a string as it is written, without building it.
struct Matcher<'a> {
    rest: &'a [u8],
    ok: bool,
}

impl fmt::Write for Matcher<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.ok && self.rest.starts_with(s.as_bytes()) {
            self.rest = &self.rest[s.len()..];
        } else {
            self.ok = false;
        }
        Ok(())
    }
}
