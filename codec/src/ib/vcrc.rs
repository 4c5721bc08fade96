//! Variant CRC of native InfiniBand (IBTA Vol. 1 §7.8.2; docs/link-types.md): CRC-16 with the
//! polynomial x^16 + x^12 + x^3 + x + 1 (0x100B) over the whole packet, from the LRH's first byte
//! through the ICRC, nothing masked.
//!
//! The bit order, seed and final complement follow Endace's `dagcrc.c`
//! (`dagcrc_make_infiniband_vcrc_table_r` / `dagcrc_infiniband_vcrc16_r`, the routine its DAG
//! capture software checks InfiniBand VCRCs with): the reflected form (each byte least
//! significant bit first, polynomial 0xD008 in reflected notation), initial value 0xFFFF and the
//! result complemented. In CRC catalogue terms: width 16, poly 0x100B, init 0xFFFF, refin and
//! refout true, xorout 0xFFFF. As with the ICRC, the value is stored least significant byte
//! first (the reflected register's bits go out in transmission order).

/// The VCRC's length in bytes.
pub const VCRC_LEN: usize = 2;

/// The 0x100B polynomial in reflected notation.
const POLY_REFLECTED: u16 = 0xd008;

const fn table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u16;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { POLY_REFLECTED ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[n] = c;
        n += 1;
    }
    t
}

static TABLE: [u16; 256] = table();

/// The VCRC of `packet` (LRH through ICRC): the value whose little-endian bytes are on the wire.
pub fn compute(packet: &[u8]) -> u16 {
    let mut c = 0xffffu16;
    for &b in packet {
        c = TABLE[((c ^ b as u16) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    /// The catalogue check value of this parameter set (the CRC of ASCII "123456789"), computed
    /// by hand with the bitwise definition rather than the table.
    #[test]
    fn table_matches_the_bitwise_definition() {
        let bitwise = |data: &[u8]| {
            let mut c = 0xffffu16;
            for &b in data {
                c ^= b as u16;
                for _ in 0..8 {
                    c = if c & 1 != 0 { (c >> 1) ^ 0xd008 } else { c >> 1 };
                }
            }
            !c
        };
        for data in [&b"123456789"[..], &[], &[0xff; 33], &[0x00, 0x01, 0x80, 0x7f]] {
            assert_eq!(super::compute(data), bitwise(data));
        }
    }
}
