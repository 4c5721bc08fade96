//! 24-bit PSNs (IBTA 9.7.1) made monotonic: each flow reads its PSNs relative to the last one it
//! saw, so a flow that wraps past 2^24 − 1 keeps counting and comparisons are plain integer ones.

/// PSN mask (24 bits).
pub const MASK: u32 = 0x00ff_ffff;

/// Unwraps PSNs relative to a moving reference (the flow's highest PSN so far).
#[derive(Clone, Copy, Debug)]
pub struct Unwrap {
    reference: Option<u64>,
}

/// Where unwrapped PSNs start: far enough from 0 that a flow may go back below its first PSN.
const ORIGIN: u64 = 1 << 40;

impl Unwrap {
    pub const fn new() -> Unwrap {
        Unwrap { reference: None }
    }

    /// The unwrapped value of `psn`: the one nearest the reference (the first PSN seen sets it).
    pub fn unwrap(&mut self, psn: u32) -> u64 {
        let psn = psn & MASK;
        match self.reference {
            None => {
                let v = ORIGIN + psn as u64;
                self.reference = Some(v);
                v
            }
            Some(r) => {
                let d = (psn.wrapping_sub(r as u32 & MASK) & MASK) as i64;
                let d = if d >= 1 << 23 { d - (1 << 24) } else { d };
                let v = (r as i64 + d) as u64;
                if v > r {
                    self.reference = Some(v);
                }
                v
            }
        }
    }

    /// Reads `psn` without moving the reference.
    pub fn peek(&self, psn: u32) -> Option<u64> {
        let r = self.reference?;
        let d = ((psn & MASK).wrapping_sub(r as u32 & MASK) & MASK) as i64;
        let d = if d >= 1 << 23 { d - (1 << 24) } else { d };
        Some((r as i64 + d) as u64)
    }

    /// The distance from the reference, if set.
    pub fn distance(&self, psn: u32) -> Option<i64> {
        Some(self.peek(psn)? as i64 - self.reference? as i64)
    }
}

impl Default for Unwrap {
    fn default() -> Self {
        Unwrap::new()
    }
}

/// The 24-bit PSN of an unwrapped value.
pub fn wire(v: u64) -> u32 {
    v as u32 & MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_forward_and_back() {
        let mut u = Unwrap::new();
        let a = u.unwrap(MASK - 1);
        let b = u.unwrap(MASK);
        let c = u.unwrap(0);
        let d = u.unwrap(2);
        assert_eq!((b - a, c - b, d - c), (1, 1, 2));
        // Going back across the wrap.
        assert_eq!(u.unwrap(MASK), b);
        assert_eq!(wire(c), 0);
        assert_eq!(u.distance(MASK), Some(-3));
    }
}
