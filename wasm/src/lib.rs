//! rocescope in the browser: the wasm-bindgen surface of the static inspector page (`wasm/www`).
//!
//! All the work is Rust and is the command line's: [`rocescope_analysis::capture::CaptureReader`] reads
//! the capture, [`rocescope_codec::decoder::Decoder`] decodes it (per-flow profile detection,
//! `--map`, every parameter), [`Decoded::visit`] yields every field with its byte range, values
//! are printed by [`Value`]'s `Display` exactly as `rocescope decode --format fields` prints
//! them, and the summary line is [`rocescope_analysis::output::summary_info`]. JavaScript only lays the
//! answer out.
//!
//! The same functions are plain Rust on a native target, so `cargo test` checks them against the
//! `rocescope` binary (`tests/cli_parity.rs`).
//!
//! - [`decode_capture`]`(bytes, options_json) -> String`: see [`Inspection`] for the JSON.
//! - [`fields_registry`]`() -> String`: every field name, its type, description and values.
//! - [`params_table`]`() -> String`: the transports' parameters (the codec's parameter table),
//!   from which the page builds its parameter controls.
//! - [`version`]`() -> String`.

use std::ops::ControlFlow;

use rocescope_analysis::capture::{CaptureError, CaptureReader, Record};
use rocescope_analysis::flows::{Flow, FlowTable};
use rocescope_analysis::output::{self, Meta};
use rocescope_analysis::session::Session;
use rocescope_codec::decoder::{Decoded, Decoder, ProfileChoice};
use rocescope_codec::{field_group, layers, Profile, Value, FIELDS};
use serde::Serialize;
use wasm_bindgen::prelude::*;

pub mod analysis;
pub mod index;
pub mod inspector;
pub mod options;

/// The answer of [`decode_capture`], serialised as JSON.
///
/// ```json
/// { "version": "0.1.0",
///   "frames": [ { "number": 1, "time_ns": "1700000000000000000", "len": 66, "cap_len": 66,
///                 "interface": 0, "linktype": 1, "data_offset": 100,
///                 "src": "192.168.77.10", "dst": "192.168.77.20", "protocol": "RoCEv2",
///                 "summary": "RC SEND First QP=0xa50000 PSN=16777215 len=8", "profile": "std",
///                 "warnings": [],
///                 "fields": [ { "name": "rocescope.bth.psn", "value": "16777215", "start": 51, "end": 54 }, … ] } ],
///   "flows": [ { "id": "192.168.77.10>192.168.77.20/10813440", "src": "192.168.77.10",
///                "dst": "192.168.77.20", "destqp": 10813440, "profile": "std", "packets": 1,
///                "bytes": 66, "first_frame": 1, "last_frame": 1 } ],
///   "stats": { "frames": 305, "roce": 303, "packets": { "dcp": 0, …, "std": 303 },
///              "flows_detected": 0, "flows_unsure": 0, "packets_unsure": 0 },
///   "error": null }
/// ```
///
/// - `fields` is the codec's walk in order: a repeated field appears once per value, each with
///   its own bytes; `start`/`end` are offsets in the captured frame (`start == end` for a derived
///   value such as `rocescope.profile`). `value` is the `--format fields` text (integers in
///   decimal, byte strings in lowercase hex, booleans 0/1, enumerations by name).
/// - `data_offset` is where the frame's captured bytes start in the file, so the page slices
///   its hex view out of the file it already holds.
/// - `profile` is `null` for frames that are not RoCE (nor an ERD NACK stream segment).
/// - `error`, when the capture is unusable, is `{ "offset": N, "message": "…", "text": "byte N:
///   …" }` as the command line reports it (its offset is `null` for bad options); the frames
///   before the bad record are still listed.
#[derive(Serialize, Debug, Default)]
pub struct Inspection {
    pub version: &'static str,
    pub frames: Vec<FrameInfo>,
    pub flows: Vec<FlowInfo>,
    pub stats: Stats,
    pub error: Option<ErrorInfo>,
}

#[derive(Serialize, Debug)]
pub struct FrameInfo {
    pub number: u64,
    /// Decimal string: it can exceed 2^53.
    pub time_ns: String,
    pub len: u32,
    pub cap_len: usize,
    pub interface: u32,
    pub linktype: u32,
    pub data_offset: u64,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub protocol: &'static str,
    pub summary: String,
    pub profile: Option<&'static str>,
    pub warnings: Vec<String>,
    pub fields: Vec<FieldInfo>,
    /// The headers below RoCE and the bytes no header claims (`rocescope_codec::layers`), in
    /// wire order: with `fields`, every captured byte belongs to one.
    pub layers: Vec<LayerInfo>,
    /// The analysis fields (`rocescope.analysis.*`) the frame has, once the page's analysers
    /// ran (`analysis.rs`); absent before, and in [`decode_capture`]'s answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub analysis: Vec<analysis::AnalysisValue>,
}

/// A field of the headers below RoCE (Wireshark's name and text), or bytes no header claims.
#[derive(Serialize, Debug)]
pub struct LayerInfo {
    /// Its subtree (`eth`, `vlan`, `ip`, `ipv6`, `grh`, `udp`, `tcp`, `data`) and its label.
    pub group: &'static str,
    pub label: &'static str,
    pub name: &'static str,
    pub value: String,
    pub start: usize,
    pub end: usize,
}

#[derive(Serialize, Debug)]
pub struct FieldInfo {
    pub name: &'static str,
    pub value: String,
    pub start: usize,
    pub end: usize,
}

/// One direction of one QP between two addresses: an entry of
/// [`rocescope_analysis::flows::FlowTable`] (`id` is `SRC>DST/DESTQP`).
#[derive(Serialize, Debug, Clone)]
pub struct FlowInfo {
    pub id: String,
    pub src: String,
    pub dst: String,
    pub destqp: u32,
    /// The profile of the flow's latest packet (detection labels a flow once it is sure).
    pub profile: &'static str,
    pub packets: u64,
    /// Sum of the frames' lengths on the wire.
    pub bytes: u64,
    pub first_frame: u64,
    pub last_frame: u64,
}

#[derive(Serialize, Debug, Default)]
pub struct Stats {
    pub frames: u64,
    /// Frames with a RoCE packet.
    pub roce: u64,
    /// RoCE packets per profile.
    pub packets: std::collections::BTreeMap<&'static str, u64>,
    pub flows_detected: u64,
    /// `auto`: flows left `std` with a warning, and their packets.
    pub flows_unsure: u64,
    pub packets_unsure: u64,
}

impl Stats {
    /// What the decoder counted once a capture was read: packets per profile, flows detected,
    /// and under `auto` the flows (and their packets) it could not classify.
    pub fn add_detection(&mut self, decoder: &Decoder) {
        let s = decoder.stats();
        self.packets = Profile::ALL.iter().map(|p| (p.name(), s.packets[*p as usize])).collect();
        self.flows_detected = s.flows_detected;
        if decoder.options().profile == ProfileChoice::Auto {
            self.flows_unsure = s.flows_unsure;
            self.packets_unsure = s.packets_unsure;
        }
    }
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct ErrorInfo {
    pub offset: Option<u64>,
    pub message: String,
    pub text: String,
}

/// Decodes a whole capture (pcap or pcapng) with the options (see [`options`]) and returns
/// [`Inspection`] as JSON.
#[wasm_bindgen]
pub fn decode_capture(bytes: &[u8], options_json: &str) -> String {
    serde_json::to_string(&inspect(bytes, options_json)).expect("serialising to a String")
}

/// The registry as JSON: `[{ "name", "type", "desc", "values", "repeated", "group",
/// "group_label" }]` (the field tree's subtree, as the Wireshark plugin groups), `type` as
/// `rocescope fields` prints it (`uint24`, `bool`, `bytes`, `enum`, `text`; `meta` for the
/// capture columns `frame.number`, `ip.src`, …).
#[wasm_bindgen]
pub fn fields_registry() -> String {
    #[derive(Serialize)]
    struct Def {
        name: &'static str,
        #[serde(rename = "type")]
        ty: String,
        desc: &'static str,
        values: &'static [&'static str],
        repeated: bool,
        /// The subtree the field is shown under (codec/src/field_group.rs) and its label.
        group: &'static str,
        group_label: &'static str,
    }
    let mut defs: Vec<Def> = FIELDS
        .iter()
        .map(|f| Def {
            name: f.name,
            ty: output::type_name(f.ty),
            desc: f.desc,
            values: f.values,
            repeated: f.repeated,
            group: field_group::group_of(f.name),
            group_label: field_group::label(field_group::group_of(f.name)).unwrap_or(""),
        })
        .collect();
    defs.extend(Meta::ALL.iter().map(|(name, _, desc)| Def {
        name,
        ty: "meta".into(),
        desc,
        values: &[],
        repeated: false,
        group: "",
        group_label: "",
    }));
    serde_json::to_string(&defs).expect("serialising to a String")
}

/// The codec's parameter table (`rocescope_codec::params::PARAMS`) as JSON, one object per
/// parameter in table order:
///
/// ```json
/// [ { "name": "dcp_tag_shift", "flag": "--dcp-tag-shift", "title": "DCP tag shift",
///     "value_name": "SHIFT", "help": "DCP: the tag is (ToS >> SHIFT) & 3 (SHIFT 0-6)",
///     "kind": "u8", "max": "6", "optional": false, "default": "2", "values": [] }, … ]
/// ```
///
/// `name` is the options key, `help` the flag's help text with its range, `kind` `u8` `u16`
/// `u32` `u64` `split` or `enum`, `max` (numbers only, else `null`) a decimal string (it can
/// exceed 2^53), `default` the text the setter reads (`""` for an optional number: derived),
/// `values` an enumeration's names.
#[wasm_bindgen]
pub fn params_table() -> String {
    #[derive(Serialize)]
    struct Def {
        name: &'static str,
        flag: &'static str,
        title: &'static str,
        value_name: &'static str,
        help: String,
        kind: &'static str,
        max: Option<String>,
        optional: bool,
        default: &'static str,
        values: &'static [&'static str],
    }
    let defs: Vec<Def> = rocescope_codec::params::PARAMS
        .iter()
        .map(|d| Def {
            name: d.name,
            flag: d.flag,
            title: d.title,
            value_name: d.value_name,
            help: d.help_text(),
            kind: d.kind.name(),
            max: match d.kind {
                rocescope_codec::params::ParamKind::Uint { max, .. } => Some(max.to_string()),
                _ => None,
            },
            optional: d.optional(),
            default: d.default,
            values: d.values(),
        })
        .collect();
    serde_json::to_string(&defs).expect("serialising to a String")
}

/// The crate version (the workspace's).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// [`decode_capture`] before serialisation.
pub fn inspect(bytes: &[u8], options_json: &str) -> Inspection {
    let mut out = Inspection { version: env!("CARGO_PKG_VERSION"), ..Default::default() };
    let opts = match options::parse(options_json) {
        Ok(o) => o,
        Err(message) => {
            out.error = Some(ErrorInfo { offset: None, text: format!("options: {message}"), message });
            return out;
        }
    };
    let error = |e: CaptureError| ErrorInfo { offset: Some(e.offset), text: e.to_string(), message: e.message };
    let reader = match CaptureReader::new(bytes) {
        Ok(r) => r,
        Err(e) => {
            out.error = Some(error(e));
            return out;
        }
    };
    // As `rocescope decode` over a file: a detection pass first, so every flow is decided before
    // its first packet is listed.
    let mut session = Session::new(reader, Decoder::new(opts.decoder));
    if let Ok(again) = CaptureReader::new(bytes) {
        session = session.with_detection_pass(again);
    }
    let mut flows = FlowTable::default();
    let r = session.run(|rec, d| {
        if opts.count.is_some_and(|c| rec.number > c) {
            return ControlFlow::Break(());
        }
        flows.add(d, rec.orig_len, rec.number);
        out.stats.frames += 1;
        out.stats.roce += d.frame.roce().is_some() as u64;
        out.frames.push(FrameInfo::of(rec, d));
        ControlFlow::Continue(())
    });
    if let Err(e) = r {
        out.error = Some(error(e));
    }
    out.stats.add_detection(session.decoder());
    out.flows = flows.flows().iter().map(FlowInfo::from).collect();
    out
}

/// The profile a frame is listed with: the one it was decoded with, for a RoCE packet or an
/// ERD NACK segment; `None` for any other frame.
pub fn listed_profile(d: &Decoded<'_, '_>) -> Option<&'static str> {
    (d.frame.roce().is_some() || d.nacks.is_some()).then(|| d.profile().name())
}

/// A frame's warnings as texts: its own, then the decoder's detection warning.
pub fn warning_texts(d: &Decoded<'_, '_>) -> Vec<String> {
    d.frame.warnings.listed().chain(d.extra.detection.iter().copied()).map(|w| w.to_string()).collect()
}

impl FrameInfo {
    /// A frame as the page shows it: its record and decoding, every field walked.
    pub fn of(rec: &Record<'_>, d: &Decoded<'_, '_>) -> FrameInfo {
        let frame = &d.frame;
        let addrs = frame.ip_addrs();
        let mut fields = Vec::new();
        d.visit(|id, v: Value<'_>, range| {
            fields.push(FieldInfo { name: id.name(), value: v.to_string(), start: range.start, end: range.end });
        });
        let covered: Vec<_> = fields.iter().map(|f| f.start..f.end).collect();
        let mut layers = Vec::new();
        layers::visit_layers(frame, &covered, |group, name, value, r| {
            layers.push(LayerInfo {
                group,
                label: layers::group_label(group),
                name,
                value,
                start: r.start,
                end: r.end,
            });
        });
        if frame.data().is_empty() && !rec.data.is_empty() {
            // (A link type rocescope does not decode: the frame's bytes are data.)
            let (label, n) = ("Data (a link type rocescope does not decode)", rec.data.len());
            let value = layers::bytes_text(n);
            layers.push(LayerInfo { group: "data", label, name: "data.data", value, start: 0, end: n });
        }
        FrameInfo {
            analysis: Vec::new(),
            layers,
            number: rec.number,
            time_ns: rec.ts_ns.to_string(),
            len: rec.orig_len,
            cap_len: rec.data.len(),
            interface: rec.interface,
            linktype: rec.linktype,
            data_offset: rec.data_offset,
            src: addrs.map(|(s, _)| s.to_string()),
            dst: addrs.map(|(_, d)| d.to_string()),
            protocol: output::protocol_name(d),
            summary: output::summary_info(d),
            profile: listed_profile(d),
            warnings: warning_texts(d),
            fields,
        }
    }
}

impl From<&Flow> for FlowInfo {
    fn from(f: &Flow) -> FlowInfo {
        FlowInfo {
            id: f.id(),
            src: f.src.to_string(),
            dst: f.dst.to_string(),
            destqp: f.destqp,
            profile: f.profile.name(),
            packets: f.packets,
            bytes: f.bytes,
            first_frame: f.first_frame,
            last_frame: f.last_frame,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_a_capture_is_an_error_at_byte_0() {
        let r = inspect(b"hello, world, this is not a capture file", "{}");
        let e = r.error.unwrap();
        assert_eq!(e.offset, Some(0));
        assert!(e.text.starts_with("byte 0: not a pcap or pcapng file"), "{}", e.text);
        assert!(r.frames.is_empty());
        let r = inspect(b"", "");
        assert_eq!(r.error.unwrap().message, "empty file");
    }

    #[test]
    fn bad_options_are_an_error_without_offset() {
        let r = inspect(b"", r#"{"profile":"nope"}"#);
        let e = r.error.unwrap();
        assert_eq!(e.offset, None);
        assert!(e.text.starts_with("options: profile: unknown profile 'nope'"), "{}", e.text);
    }

    #[test]
    fn params_table_is_the_codecs() {
        let v: serde_json::Value = serde_json::from_str(&params_table()).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), rocescope_codec::params::PARAMS.len());
        for (j, d) in a.iter().zip(rocescope_codec::params::PARAMS) {
            assert_eq!(j["name"], d.name);
            assert_eq!(j["default"], d.default);
            assert_eq!(j["help"], d.help_text());
        }
        let shift = &a[0];
        assert_eq!(shift["kind"], "u8");
        assert_eq!(shift["max"], "6");
        assert_eq!(shift["flag"], "--dcp-tag-shift");
        let means = a.iter().find(|d| d["name"] == "flor_ack_set_means").unwrap();
        assert_eq!(means["values"], serde_json::json!(["send", "write"]));
        assert_eq!(means["max"], serde_json::Value::Null);
        let mtu = a.iter().find(|d| d["name"] == "sdr_mtu").unwrap();
        assert_eq!((&mtu["optional"], &mtu["default"]), (&serde_json::json!(true), &serde_json::json!("")));
    }

    #[test]
    fn registry_lists_every_field_and_the_meta_columns() {
        let v: serde_json::Value = serde_json::from_str(&fields_registry()).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), FIELDS.len() + Meta::ALL.len());
        let psn = a.iter().find(|d| d["name"] == "rocescope.bth.psn").unwrap();
        assert_eq!(psn["type"], "uint24");
        assert_eq!(psn["desc"], "BTH Packet Sequence Number");
        let kind = a.iter().find(|d| d["name"] == "rocescope.aeth.kind").unwrap();
        assert_eq!(kind["values"], serde_json::json!(["ack", "rnr_nak", "nak", "reserved"]));
        assert!(a.iter().any(|d| d["name"] == "frame.number" && d["type"] == "meta"));
    }
}
