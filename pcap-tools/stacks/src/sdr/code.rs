//! SDR's erasure codes (seed 001 §4.1.2, §5 "Erasure coding"; notes/sdr.md §1.6): `k` data
//! chunks and `m` parity chunks a submessage.
//!
//! - **XOR**: parity `r` is the XOR of the data chunks `i` with `i mod m = r`; a submessage is
//!   recoverable when each of the `m` groups (its data chunks and its parity) misses at most one.
//! - **MDS**: a Reed-Solomon code, recoverable from any `k` of the `k + m` chunks. The paper uses
//!   ISA-L's Cauchy code over GF(2^8); any MDS code recovers the same erasure patterns, so this
//!   uses the `reed-solomon-simd` crate (Leopard-RS over GF(2^16), maintained, pure Rust), which
//!   needs shards of an even number of bytes.
//!
//! A last submessage with fewer than `k` data chunks is encoded as if padded with zero chunks
//! (known to both ends, so never missing); shorter chunks are zero-padded to the chunk size.

/// Which code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    Xor,
    Mds,
}

impl Code {
    pub fn name(self) -> &'static str {
        match self {
            Code::Xor => "xor",
            Code::Mds => "mds",
        }
    }
}

/// The `m` parity chunks of `data` (up to `k` chunks, each at most `shard` bytes; missing ones
/// and missing bytes are zeros). `shard` must be even for MDS.
pub fn encode(code: Code, k: u32, m: u32, data: &[Vec<u8>], shard: usize) -> Vec<Vec<u8>> {
    assert!(data.len() <= k as usize && m > 0 && k > 0);
    match code {
        Code::Xor => {
            let mut parity = vec![vec![0u8; shard]; m as usize];
            for (i, d) in data.iter().enumerate() {
                xor_into(&mut parity[i % m as usize], d);
            }
            parity
        }
        Code::Mds => {
            let padded = (0..k as usize).map(|i| padded(data.get(i).map_or(&[][..], |d| d), shard));
            reed_solomon_simd::encode(k as usize, m as usize, padded).expect("a valid Reed-Solomon shape")
        }
    }
}

/// Whether the data chunks can be rebuilt: `have_data(i)` for data chunk `i < k` (padding counts
/// as present), `have_parity(r)` for parity chunk `r < m`.
pub fn recoverable(
    code: Code,
    k: u32,
    m: u32,
    have_data: impl Fn(u32) -> bool,
    have_parity: impl Fn(u32) -> bool,
) -> bool {
    match code {
        Code::Xor => (0..m).all(|r| {
            let missing = (r..k).step_by(m as usize).filter(|&i| !have_data(i)).count() + !have_parity(r) as usize;
            missing <= 1
        }),
        Code::Mds => {
            let missing = (0..k).filter(|&i| !have_data(i)).count();
            missing <= (0..m).filter(|&r| have_parity(r)).count()
        }
    }
}

/// Rebuilds the missing data chunks in place (`data[i]` None when missing; `data.len()` ≤ k,
/// chunks beyond it are zero padding) from the parity present; `shard` bytes each (rebuilt
/// chunks come back `shard` bytes long: the caller cuts them to their real length). False when
/// not [`recoverable`].
pub fn decode(
    code: Code,
    k: u32,
    m: u32,
    data: &mut [Option<Vec<u8>>],
    parity: &[Option<Vec<u8>>],
    shard: usize,
) -> bool {
    let have_data = |i: u32| data.get(i as usize).is_none_or(|d| d.is_some());
    if !recoverable(code, k, m, have_data, |r| parity.get(r as usize).is_some_and(|p| p.is_some())) {
        return false;
    }
    if data.iter().all(|d| d.is_some()) {
        return true;
    }
    match code {
        Code::Xor => {
            for (r, p) in parity.iter().enumerate().take(m as usize) {
                let Some(lost) = (r..data.len()).step_by(m as usize).find(|&i| data[i].is_none()) else { continue };
                let mut rebuilt = p.clone().expect("recoverable: the group's parity is present");
                rebuilt.resize(shard, 0);
                for i in (r..data.len()).step_by(m as usize).filter(|&i| i != lost) {
                    xor_into(&mut rebuilt, data[i].as_deref().expect("one lost a group"));
                }
                data[lost] = Some(rebuilt);
            }
            true
        }
        Code::Mds => {
            let originals: Vec<(usize, Vec<u8>)> = (0..k as usize)
                .filter_map(|i| match data.get(i) {
                    Some(Some(d)) => Some((i, padded(d, shard))),
                    Some(None) => None,
                    None => Some((i, vec![0; shard])),
                })
                .collect();
            let recovery = parity.iter().enumerate().filter_map(|(r, p)| p.as_ref().map(|p| (r, p)));
            let Ok(restored) = reed_solomon_simd::decode(k as usize, m as usize, originals, recovery) else {
                return false;
            };
            for (i, d) in restored {
                if let Some(slot @ None) = data.get_mut(i) {
                    *slot = Some(d);
                }
            }
            data.iter().all(|d| d.is_some())
        }
    }
}

fn xor_into(acc: &mut [u8], d: &[u8]) {
    for (a, b) in acc.iter_mut().zip(d) {
        *a ^= b;
    }
}

fn padded(d: &[u8], shard: usize) -> Vec<u8> {
    let mut v = d.to_vec();
    v.resize(shard, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(k: usize, shard: usize) -> Vec<Vec<u8>> {
        (0..k).map(|i| (0..shard).map(|b| (i * 31 + b * 7 + 1) as u8).collect()).collect()
    }

    #[test]
    fn xor_rebuilds_one_chunk_per_group_and_no_more() {
        let (k, m, shard) = (8u32, 4u32, 16usize);
        let d = chunks(k as usize, shard);
        let p = encode(Code::Xor, k, m, &d, shard);
        // Parity 1 is the XOR of chunks 1 and 5.
        assert_eq!(p[1], d[1].iter().zip(&d[5]).map(|(a, b)| a ^ b).collect::<Vec<_>>());
        let mut got: Vec<Option<Vec<u8>>> = d.iter().cloned().map(Some).collect();
        got[1] = None; // group 1
        got[2] = None; // group 2
        let par: Vec<_> = p.iter().cloned().map(Some).collect();
        assert!(decode(Code::Xor, k, m, &mut got, &par, shard));
        assert_eq!(got.iter().map(|c| c.clone().unwrap()).collect::<Vec<_>>(), d);
        // Two of group 1 lost: not recoverable.
        let mut got: Vec<Option<Vec<u8>>> = d.iter().cloned().map(Some).collect();
        got[1] = None;
        got[5] = None;
        assert!(!decode(Code::Xor, k, m, &mut got, &par, shard));
        // A chunk and its group's parity lost: not recoverable either.
        assert!(!recoverable(Code::Xor, k, m, |i| i != 3, |r| r != 3));
    }

    #[test]
    fn mds_rebuilds_any_m_losses() {
        let (k, m, shard) = (32u32, 8u32, 64usize);
        let d = chunks(k as usize, shard);
        let p = encode(Code::Mds, k, m, &d, shard);
        assert_eq!(p.len(), 8);
        // 6 data chunks and 2 parity chunks lost: 8 = m, recoverable.
        let mut got: Vec<Option<Vec<u8>>> = d.iter().cloned().map(Some).collect();
        for i in [0, 3, 9, 17, 30, 31] {
            got[i] = None;
        }
        let mut par: Vec<_> = p.iter().cloned().map(Some).collect();
        par[2] = None;
        par[7] = None;
        assert!(decode(Code::Mds, k, m, &mut got, &par, shard));
        assert_eq!(got.iter().map(|c| c.clone().unwrap()).collect::<Vec<_>>(), d);
        // One more lost: 9 > m.
        par[0] = None;
        let mut got: Vec<Option<Vec<u8>>> = d.iter().cloned().map(Some).collect();
        for i in [0, 3, 9, 17, 30, 31] {
            got[i] = None;
        }
        assert!(!decode(Code::Mds, k, m, &mut got, &par, shard));
    }

    #[test]
    fn a_short_last_submessage_is_padded_with_zero_chunks() {
        let (k, m, shard) = (4u32, 2u32, 8usize);
        let d = vec![vec![1u8; 8], vec![2u8; 3]]; // 2 of 4 chunks, the second short
        for code in [Code::Xor, Code::Mds] {
            let p = encode(code, k, m, &d, shard);
            let mut got = vec![None, Some(vec![2u8; 3])];
            let par: Vec<_> = p.iter().cloned().map(Some).collect();
            assert!(decode(code, k, m, &mut got, &par, shard), "{code:?}");
            assert_eq!(got[0].as_deref(), Some(&[1u8; 8][..]), "{code:?}");
        }
    }
}
