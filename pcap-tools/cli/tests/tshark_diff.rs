//! Differential test against Wireshark's `infiniband` dissector (WIRE.md part A: "tshark is an
//! oracle for it").
//! The same comparison runs over native InfiniBand packets (`testgen_ib`, link type 247, with
//! [`LRH_MAPPINGS`] for the LRH and VCRC; tshark 4.0 reads them from ERF records, as its wiretap
//! refuses link type 247) and over the mix's IP frames as raw IP link types 228 and 229.
//!
//! The standard mix of `rocescope_testsupport::testgen` (every standard opcode, IPv4/IPv6, 0-2 VLAN tags,
//! pads 0-3, CM MADs, PFC/PAUSE) is written to a temporary pcapng; the built `rocescope` binary
//! prints it with `decode --format fields -e …` and `tshark -T fields -e …` prints the same file;
//! the two are compared frame by frame through [`MAPPINGS`] (`common/tshark_fields.rs`, shared
//! with the display-filter test `tshark_filter.rs`), a table of
//! rocescope field → tshark field(s) → normaliser (which turns tshark's text into rocescope's:
//! integers in decimal, byte strings as lowercase hex, booleans 0/1, enumerations by name).
//!
//! # tshark 4.0 quirks (each checked with `tshark -V` / `-T fields` on this capture)
//! - QPNs, keys, virtual addresses, CM ids and the ICRC print as zero-padded `0x…` hex
//!   (`infiniband.bth.destqp` `0xa50000`, `infiniband.deth.q_key` `0x000000001bad00c9`,
//!   `infiniband.reth.va` `0xfeb4…`); P_Key, PSN, DMA length, MSN, swap/compare data and
//!   original remote data print in decimal. The normaliser [`int`] reads either.
//! - `infiniband.immdt` and `infiniband.ieth` are byte fields, and each is added twice per
//!   packet (`c0de000c,c0de000c`): [`bytes_u32`] checks every occurrence and reads the first.
//! - There are no FECN/BECN fields: BTH byte 4 is the first occurrence of `infiniband.reserved`
//!   (`40` = BECN, `80` = FECN; DETH/RDETH reserved bytes and CM reserved fields follow it).
//! - AtomicETH VA and R_Key print as `infiniband.reth.va` / `infiniband.reth.r_key` (only the
//!   swap and compare data have `infiniband.atomiceth.*` names).
//! - The ICRC (`infiniband.invariant.crc`) is read big-endian from the wire bytes, so
//!   `0x2400c49e` is our `2400c49e`. It is not shown for an IRN SACK NAK (tshark stops after the
//!   AETH and ignores the 4-byte tail) nor for opcodes it does not know.
//! - The payload (`data.len`) includes the pad bytes; `rocescope.payload_len` excludes them.
//! - Heuristic payload dissectors (rpcordma, smb_direct, iser, nvme-rdma, lnet, smc,
//!   infiniband_sdp, fcoib) claim SEND payloads and throw "Malformed Packet: RPCoRDMA" on
//!   them, so they are disabled ([`DISABLED_PROTOCOLS`], names from `tshark -G protocols`).
//! - CNP (0x81), XRC (0xA0-0xB7), FLUSH (0x1C) and ATOMIC WRITE (0x1D) are "Unknown OpCode":
//!   only the BTH is decoded. RD (0x40-0x55) is read as Mellanox DC, whose headers differ (and
//!   RD READ Request and the RD atomics come out as malformed). For these only the BTH is
//!   compared; their extension headers are checked against hand-written byte literals from
//!   WIRE.md's tables in `codec/tests/opcode_literals.rs`.
//! - CM: REQ and REP local communication ids are `infiniband.cm.req` / `infiniband.cm.rep`,
//!   DREP's are `infiniband.cm.drsp.*`, DREQ's remote QPN is `infiniband.cm.req.remoteqpneecn`,
//!   and MRA is "Dissector Not Implemented": its ids are read from `infiniband.mad.data`.
//! - Packet comments (the fixture's frame descriptions) show up as expert items of severity
//!   Comment; the malformed check only rejects severity Warning and above.
//!
//! Run with tshark installed (Debian: `apt-get install tshark`). Without it the test fails
//! (it never passes by skipping).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "common/tshark_fields.rs"]
mod tshark_fields;
use tshark_fields::*;

use rocescope_testsupport::testgen;

/// `0x7228` → `7228`: tshark reads the VCRC big-endian, so this is the wire bytes in order.
fn vcrc(_: &Row, v: &[&str]) -> Result<String, String> {
    let s = single(v[0])?;
    if s.is_empty() {
        return Ok(String::new());
    }
    Ok(format!("{:04x}", parse_int(s)?))
}

/// Native InfiniBand's LRH and VCRC (link type 247; the LRH comes first in tshark's dissection
/// as in rocescope's).
const LRH_MAPPINGS: &[Mapping] = &[
    Mapping { ours: "rocescope.lrh.vl", theirs: &["infiniband.lrh.vl"], norm: int, when: always },
    Mapping { ours: "rocescope.lrh.lver", theirs: &["infiniband.lrh.lver"], norm: int, when: always },
    Mapping { ours: "rocescope.lrh.sl", theirs: &["infiniband.lrh.sl"], norm: int, when: always },
    Mapping { ours: "rocescope.lrh.lnh", theirs: &["infiniband.lrh.lnh"], norm: int, when: always },
    Mapping { ours: "rocescope.lrh.dlid", theirs: &["infiniband.lrh.dlid"], norm: int, when: always },
    Mapping { ours: "rocescope.lrh.pktlen", theirs: &["infiniband.lrh.pktlen"], norm: int, when: always },
    Mapping { ours: "rocescope.lrh.slid", theirs: &["infiniband.lrh.slid"], norm: int, when: always },
    Mapping { ours: "rocescope.vcrc", theirs: &["infiniband.variant.crc"], norm: vcrc, when: always },
];

/// Fields of the registry the comparison leaves out, and why. Part-A fields here are checked
/// against hand-written byte literals in `codec/tests/opcode_literals.rs`.
const NOT_COMPARED: &[(&str, &str)] = &[
    ("rocescope.profile", "rocescope's own notion"),
    ("rocescope.truncated", "rocescope's own notion (nothing is truncated here)"),
    ("rocescope.opcode_name", "names differ in style; the opcode number is compared"),
    ("rocescope.warning", "rocescope's own notion; testgen's unit test asserts none"),
    ("rocescope.icrc.status", "tshark 4.0 does not verify the ICRC; testgen's unit test asserts good"),
    ("rocescope.vcrc.status", "tshark 4.0 does not verify the VCRC; tests/ib_crc_crcmod.py does (ib_crc_crcmod.rs)"),
    ("rocescope.rdeth.eecnxt", "tshark reads RD as Mellanox DC: opcode_literals.rs"),
    ("rocescope.deth.reserved", "tshark shows reserved bytes only as infiniband.reserved: opcode_literals.rs"),
    ("rocescope.xrceth.xrcsrq", "tshark does not know XRC: opcode_literals.rs"),
    ("rocescope.feth.sel", "tshark does not know FLUSH: opcode_literals.rs"),
    ("rocescope.feth.plt", "tshark does not know FLUSH: opcode_literals.rs"),
    ("rocescope.irn.sack_psn", "IRN's tail is not IBTA; tshark ignores it: opcode_literals.rs"),
];


/// A fresh directory for this run and test.
fn temp_dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rocescope-tshark-diff-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).expect("creating a temporary directory");
    d
}


/// Splits `fields` output into rows of exactly `n` columns.
fn table(text: &str, n: usize, who: &str) -> Vec<Vec<String>> {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let cols: Vec<String> = l.split('\t').map(str::to_string).collect();
            assert_eq!(cols.len(), n, "{who} line {}: {} columns, expected {n}: {l:?}", i + 1, cols.len());
            cols
        })
        .collect()
}

/// Per (rocescope field, tshark fields): how many present values were compared.
type Counts = HashMap<(&'static str, &'static [&'static str]), usize>;

/// Prints `ours_path` with rocescope and `theirs_path` (the same packets, in a format tshark
/// reads) with tshark, and compares every frame through `mappings`: the disagreements, and the
/// number of present values each mapping compared. `descs` names the frames in messages.
fn compare(theirs_path: &Path, ours_path: &Path, descs: &[String], mappings: &[&Mapping], dir: &Path) -> (Vec<String>, Counts) {
    // rocescope: frame.number, then every mapped field.
    let ours_context = ["rocescope.irn.sack_psn"];
    let ours_names: Vec<&'static str> =
        mappings.iter().map(|m| m.ours).chain(ours_context).collect::<BTreeSet<_>>().into_iter().collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocescope"));
    cmd.args(["decode", "--format", "fields", "-e", "frame.number"]);
    for n in &ours_names {
        cmd.args(["-e", n]);
    }
    cmd.arg(ours_path);
    let ours_text = run(&mut cmd);

    // tshark: frame.number, the malformed/expert columns, every mapped and context column.
    let context = [
        "infiniband.bth.opcode",
        "infiniband.mad.mgmtclass",
        "infiniband.mad.attributeid",
        "_ws.malformed",
        "_ws.expert.severity",
    ];
    let theirs_names: Vec<&'static str> = mappings
        .iter()
        .flat_map(|m| m.theirs.iter().copied())
        .chain(context)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut cmd = Command::new("tshark");
    // A private configuration directory: no personal preferences or disabled protocols.
    cmd.env("WIRESHARK_CONFIG_DIR", dir.join("wireshark-config"));
    cmd.args(["-n", "-r"]).arg(theirs_path);
    cmd.args(["-o", "infiniband.rroce.port:4791"]);
    for p in DISABLED_PROTOCOLS {
        cmd.args(["--disable-protocol", p]);
    }
    cmd.args([
        "-T",
        "fields",
        "-E",
        "header=n",
        "-E",
        "separator=/t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
        "-E",
        "quote=n",
    ]);
    cmd.args(["-e", "frame.number"]);
    for n in &theirs_names {
        cmd.args(["-e", n]);
    }
    let theirs_text = run(&mut cmd);

    let ours = table(&ours_text, ours_names.len() + 1, "rocescope");
    let theirs = table(&theirs_text, theirs_names.len() + 1, "tshark");
    assert_eq!(ours.len(), descs.len(), "rocescope printed {} lines for {} frames", ours.len(), descs.len());
    assert_eq!(theirs.len(), descs.len(), "tshark printed {} lines for {} frames", theirs.len(), descs.len());

    let mut mismatches = Vec::new();
    let mut compared = Counts::new();
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        let number = i + 1;
        assert_eq!(o[0], number.to_string(), "rocescope frame numbering");
        assert_eq!(t[0], number.to_string(), "tshark frame numbering");
        let row = Row {
            number,
            ours: ours_names.iter().copied().zip(o[1..].iter().map(String::as_str)).collect(),
            theirs: theirs_names.iter().copied().zip(t[1..].iter().map(String::as_str)).collect(),
        };
        let desc = &descs[i];

        // No malformed packets and no expert item above Comment, except for RD opcodes, which
        // tshark misreads as Mellanox DC.
        if !row.opcode().is_some_and(is_rd) {
            if !row.theirs("_ws.malformed").is_empty() {
                mismatches.push(format!("frame {number} ({desc}): tshark reports a malformed packet"));
            }
            for s in row.theirs("_ws.expert.severity").split(',').filter(|s| !s.is_empty()) {
                // PI_WARN = 0x00600000; PI_COMMENT (packet comments) = 0x00100000.
                if parse_int(s).unwrap_or(u64::MAX) >= 0x0060_0000 {
                    mismatches.push(format!("frame {number} ({desc}): tshark expert item of severity {s}"));
                }
            }
        }

        for m in mappings {
            if !(m.when)(&row) {
                continue;
            }
            let vals: Vec<&str> = m.theirs.iter().map(|n| row.theirs(n)).collect();
            let ours_v = row.ours(m.ours);
            match (m.norm)(&row, &vals) {
                Ok(expected) if expected == ours_v => {
                    if !ours_v.is_empty() {
                        *compared.entry((m.ours, m.theirs)).or_default() += 1;
                    }
                }
                Ok(expected) => mismatches.push(format!(
                    "frame {} ({desc}): {}: rocescope {ours_v:?}, tshark {expected:?} (from {})",
                    row.number,
                    m.ours,
                    m.theirs.iter().zip(&vals).map(|(n, v)| format!("{n}={v:?}")).collect::<Vec<_>>().join(" ")
                )),
                Err(e) => mismatches
                    .push(format!("frame {number} ({desc}): {}: cannot read tshark's {:?}: {e}", m.ours, m.theirs)),
            }
        }
    }
    (mismatches, compared)
}

/// Each of `mappings` compared a present value at least once, or it proves nothing.
fn every_mapping_compared(mappings: &[&Mapping], compared: &Counts, mismatches: &mut Vec<String>) {
    for m in mappings {
        if !compared.contains_key(&(m.ours, m.theirs)) {
            mismatches.push(format!("mapping {} <- {:?} never compared a present value", m.ours, m.theirs));
        }
    }
}

fn assert_no_mismatch(mismatches: &[String], kept: &Path) {
    assert!(
        mismatches.is_empty(),
        "{} disagreement(s) between rocescope and tshark (captures kept in {}):\n{}",
        mismatches.len(),
        kept.display(),
        mismatches.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}

fn tshark_version() -> String {
    let Some(version) = tshark_available() else {
        panic!("tshark not found on PATH: install it (Debian: apt-get install tshark)");
    };
    version
}

#[test]
fn rocescope_agrees_with_tshark_on_the_standard_mix() {
    eprintln!("comparing against {}", tshark_version());
    let dir = temp_dir("std");
    let path = dir.join("std-mix.pcapng");
    let frames = testgen::standard_mix();
    testgen::write_pcapng(&path, &frames).expect("writing the capture");
    let descs: Vec<String> = frames.iter().map(|f| f.desc.clone()).collect();
    let mappings: Vec<&Mapping> = MAPPINGS.iter().collect();
    let (mut mismatches, compared) = compare(&path, &path, &descs, &mappings, &dir);
    every_mapping_compared(&mappings, &compared, &mut mismatches);
    assert_no_mismatch(&mismatches, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Native InfiniBand (link type 247, docs/link-types.md): `fixtures/ib-native.pcapng`'s packets
/// (local and global, RC and UD opcodes with RETH, AETH, DETH, ImmDt, IETH). tshark 4.0's
/// wiretap refuses link type 247, so tshark reads the same packets from ERF records of type 21
/// (INFINIBAND), which go to the same `infiniband` dissector from the LRH on. Every LRH field,
/// the VCRC and every transport mapping of [`MAPPINGS`] that these opcodes carry must compare.
#[test]
fn rocescope_agrees_with_tshark_on_native_infiniband() {
    use rocescope_testsupport::testgen_ib;
    eprintln!("comparing against {}", tshark_version());
    let dir = temp_dir("ib");
    let frames = testgen_ib::ib_native();
    let ours = dir.join("ib-native.pcapng");
    testgen_ib::write_pcapng_ib(&ours, &frames).unwrap();
    let theirs = dir.join("ib-native.erf");
    let packets: Vec<(Vec<u8>, usize)> = frames.iter().map(|f| (f.bytes.clone(), f.bytes.len())).collect();
    std::fs::write(&theirs, testgen_ib::erf_bytes_ib(&packets)).unwrap();
    let descs: Vec<String> = frames.iter().map(|f| f.desc.clone()).collect();
    let mappings: Vec<&Mapping> = LRH_MAPPINGS.iter().chain(MAPPINGS).collect();
    let (mut mismatches, compared) = compare(&theirs, &ours, &descs, &mappings, &dir);
    const CARRIED: &[&str] = &[
        "rocescope.bth.opcode",
        "rocescope.bth.psn",
        "rocescope.bth.destqp",
        "rocescope.deth.q_key",
        "rocescope.deth.srcqp",
        "rocescope.reth.va",
        "rocescope.reth.r_key",
        "rocescope.reth.dmalen",
        "rocescope.aeth.syndrome",
        "rocescope.aeth.msn",
        "rocescope.immdt",
        "rocescope.ieth.r_key",
        "rocescope.payload_len",
        "rocescope.icrc",
    ];
    let carried: Vec<&Mapping> =
        LRH_MAPPINGS.iter().chain(MAPPINGS.iter().filter(|m| CARRIED.contains(&m.ours))).collect();
    every_mapping_compared(&carried, &compared, &mut mismatches);
    assert_no_mismatch(&mismatches, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Raw IP link types 228 (LINKTYPE_IPV4) and 229 (LINKTYPE_IPV6): the standard mix's IPv4 and
/// IPv6 frames without their Ethernet header (and VLAN tags), in a classic pcap of each.
#[test]
fn rocescope_agrees_with_tshark_on_raw_ipv4_and_ipv6_link_types() {
    use rocescope_testsupport::testgen_ib::pcap_bytes;
    eprintln!("comparing against {}", tshark_version());
    let dir = temp_dir("raw");
    for (linktype, ethertype) in [(228u32, 0x0800u16), (229, 0x86dd)] {
        let mut packets = Vec::new();
        let mut descs = Vec::new();
        for f in testgen::standard_mix() {
            // The EtherType after 0-2 VLAN tags.
            let mut at = 12;
            while matches!(u16::from_be_bytes([f.bytes[at], f.bytes[at + 1]]), 0x8100 | 0x88a8) {
                at += 4;
            }
            if u16::from_be_bytes([f.bytes[at], f.bytes[at + 1]]) == ethertype {
                let ip = f.bytes[at + 2..].to_vec();
                let n = ip.len();
                packets.push((ip, n));
                descs.push(f.desc);
            }
        }
        let path = dir.join(format!("raw-{linktype}.pcap"));
        std::fs::write(&path, pcap_bytes(linktype, &packets)).unwrap();
        let mappings: Vec<&Mapping> = MAPPINGS.iter().collect();
        let (mut mismatches, compared) = compare(&path, &path, &descs, &mappings, &dir);
        let core: Vec<&Mapping> = MAPPINGS.iter().filter(|m| m.ours.starts_with("rocescope.bth.")).collect();
        every_mapping_compared(&core, &compared, &mut mismatches);
        assert!(compared.values().sum::<usize>() > 500, "link type {linktype}: too few values compared");
        assert_no_mismatch(&mismatches, &dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The table covers the registry's part-A fields: each is compared with tshark or listed in
/// [`NOT_COMPARED`] with the reason (so a new standard field cannot be silently left out).
#[test]
fn every_standard_field_is_compared_or_excused() {
    let mapped: BTreeSet<&str> = MAPPINGS.iter().chain(LRH_MAPPINGS).map(|m| m.ours).collect();
    let excused: BTreeSet<&str> = NOT_COMPARED.iter().map(|(n, _)| *n).collect();
    assert!(
        mapped.is_disjoint(&excused),
        "both compared and excused: {:?}",
        mapped.intersection(&excused).collect::<Vec<_>>()
    );
    for n in mapped.iter().chain(&excused) {
        assert!(rocescope_codec::FieldId::from_name(n).is_some(), "{n} is not a registry field");
    }
    // Part B (research extensions) is not tshark's business.
    const PART_B: &[&str] = &["dcp.", "sdr.", "flor.", "netrt.", "erd."];
    let missing: Vec<&str> = rocescope_codec::FIELDS
        .iter()
        .map(|f| f.name)
        .filter(|n| !PART_B.iter().any(|p| n.strip_prefix("rocescope.").is_some_and(|r| r.starts_with(p))))
        .filter(|n| !mapped.contains(n) && !excused.contains(n))
        .collect();
    assert!(missing.is_empty(), "registry fields neither compared with tshark nor excused: {missing:?}");
}
