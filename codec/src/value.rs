//! Field values as the visitor yields them, and their text form (INTERFACES.md: integers in
//! decimal, byte strings as lowercase hex, booleans 0/1, enumerations by name).

use crate::warning::Warning;
use core::fmt;

/// A decoded field value. Borrowed: producing one never allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    UInt(u64),
    Bool(bool),
    Bytes(&'a [u8]),
    /// An enumeration value or fixed text.
    Str(&'static str),
    Warning(Warning),
}

impl Value<'_> {
    /// The integer, for `UInt` and `Bool`.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt(v) => Some(v),
            Value::Bool(b) => Some(b as u64),
            _ => None,
        }
    }
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::UInt(v) => write!(f, "{v}"),
            Value::Bool(b) => f.write_str(if *b { "1" } else { "0" }),
            Value::Bytes(bytes) => {
                for b in bytes.iter() {
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
            Value::Str(s) => f.write_str(s),
            Value::Warning(w) => write!(f, "{w}"),
        }
    }
}
