//! The browser's options: one JSON object whose keys are the command line's (INTERFACES.md:
//! "the same key in the browser's options"), with `_` for `-`.
//!
//! ```json
//! { "profile": "auto", "maps": ["qpn=0x12=flor", "udp=4791=dcp"],
//!   "dcp_tag_shift": 3, "sdr_split": "8,22,2", "sdr_mtu": null, "sdr_max_message": null,
//!   "sdr_chunk_packets": 4, "flor_split": [1, 20, 11], "flor_unit_size": "0x800",
//!   "flor_ack_set_means": "write", "netrt_opcode": "0xc1", "erd_nack_port": 4793, "count": null }
//! ```
//!
//! Every key is optional; a missing key, `null` or `""` means the command line's default.
//! The parameters' keys, and how their values are read, are the codec's parameter table
//! (`rocescope_codec::params::PARAMS`): a value is turned into text (a JSON number as its
//! digits, a split also as an array `[8, 22, 2]`) and given to the entry's setter, the check
//! the command line's flags make. Numbers may be JSON numbers or strings (decimal, or hex with
//! `0x`), as a page's text inputs give them. `maps` is an array of `SELECTOR=PROFILE` strings, or one string of them separated
//! by spaces, commas or newlines. `count` is `-c N`. An unknown key is an error, so a misspelt
//! parameter is not silently ignored.

use rocescope_codec::decoder::{DecoderOptions, ProfileChoice, Selector};
use rocescope_codec::params::{ParamDef, ParamKind, PARAMS};
use rocescope_codec::{Params, Profile};
use serde_json::Value;

/// The keys the options object accepts besides the parameters (the table's names,
/// [`Params::NAMES`]).
pub const OTHER_KEYS: [&str; 3] = ["profile", "maps", "count"];

/// Every key the options object accepts.
pub fn keys() -> impl Iterator<Item = &'static str> {
    OTHER_KEYS.into_iter().chain(Params::NAMES)
}

/// Parsed options: the decoder's configuration and the frame limit (`-c N`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub decoder: DecoderOptions,
    pub count: Option<u64>,
}

/// `null`, `""` and a missing key are all "not given".
fn given(v: Option<&Value>) -> Option<&Value> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(v) => Some(v),
    }
}

fn text<'a>(key: &str, v: &'a Value) -> Result<&'a str, String> {
    v.as_str().map(str::trim).ok_or_else(|| format!("{key}: expected a string, got {v}"))
}

/// An unsigned integer (`count`) from a JSON number or a decimal / `0x` hex string.
fn uint(key: &str, v: &Value) -> Result<u64, String> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| format!("{key}: '{n}' is not a non-negative integer")),
        Value::String(s) => {
            let s = s.trim();
            rocescope_codec::params::parse_uint(s).ok_or_else(|| format!("{key}: '{s}' is not a number"))
        }
        _ => Err(format!("{key}: expected a number, got {v}")),
    }
}

/// A parameter's value as the text its setter reads: a string as it is, a number as its
/// digits, a split's array `[8, 22, 2]` as `8,22,2`.
fn param_text(d: &ParamDef, v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Array(a) if d.kind == ParamKind::Split => {
            Ok(a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","))
        }
        _ => Err(format!("expected a string or a number, got {v}")),
    }
}

/// One `SELECTOR=PROFILE` entry, as `--map` takes it (the decoder's parser; errors prefixed
/// with the option's name).
pub fn parse_map(s: &str) -> Result<(Selector, Profile), String> {
    rocescope_codec::decoder::parse_map(s).map_err(|e| format!("maps: {e}"))
}

/// Parses the options object (an empty string is `{}`).
pub fn parse(json: &str) -> Result<Options, String> {
    if json.trim().is_empty() {
        return Ok(Options::default());
    }
    let v: Value = serde_json::from_str(json).map_err(|e| format!("options are not JSON: {e}"))?;
    let obj = v.as_object().ok_or("options must be a JSON object")?;
    if let Some(k) = obj.keys().find(|k| !keys().any(|known| known == k.as_str())) {
        return Err(format!("unknown option '{k}' (known: {})", keys().collect::<Vec<_>>().join(", ")));
    }
    let get = |k: &str| given(obj.get(k));
    let mut o = Options::default();
    let mut p = Params::default();
    if let Some(v) = get("profile") {
        let s = text("profile", v)?;
        o.decoder.profile = ProfileChoice::parse(s)
            .ok_or_else(|| format!("profile: unknown profile '{s}' (auto std dcp sdr flor netrt erd)"))?;
    }
    if let Some(v) = get("maps") {
        let entries: Vec<String> = match v {
            Value::Array(a) => a
                .iter()
                .filter(|x| given(Some(x)).is_some())
                .map(|x| text("maps", x).map(String::from))
                .collect::<Result<_, _>>()?,
            _ => text("maps", v)?
                .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
        };
        o.decoder.maps = entries.iter().map(|s| parse_map(s)).collect::<Result<_, _>>()?;
    }
    for d in PARAMS {
        if let Some(v) = get(d.name) {
            param_text(d, v).and_then(|t| d.set(&mut p, &t)).map_err(|e| format!("{}: {e}", d.name))?;
        }
    }
    if let Some(v) = get("count") {
        o.count = Some(uint("count", v)?);
    }
    o.decoder.params = p;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::{FlorAckSetMeans, ImmSplit};

    #[test]
    fn the_keys_are_the_tables() {
        let params: Vec<&str> = keys().filter(|k| !OTHER_KEYS.contains(k)).collect();
        assert_eq!(params, PARAMS.iter().map(|d| d.name).collect::<Vec<_>>());
        // Each key reaches its setter, with the setter's check.
        for d in PARAMS {
            let value = match d.kind {
                ParamKind::Uint { max, .. } => format!("{max}"),
                ParamKind::Split => "0,0,32".into(),
                ParamKind::Enum { values } => values.last().unwrap().to_string(),
            };
            let mut want = Params::default();
            d.set(&mut want, &value).unwrap();
            let o = parse(&serde_json::json!({ (d.name): value }).to_string()).unwrap();
            assert_eq!(o.decoder.params, want, "{}", d.name);
            let o = parse(&serde_json::json!({ (d.name): d.default }).to_string()).unwrap();
            assert_eq!(o.decoder.params, Params::default(), "{}", d.name);
            let e = parse(&serde_json::json!({ (d.name): "0,1" }).to_string()).unwrap_err();
            assert_eq!(e, format!("{}: {}", d.name, d.parse("0,1").unwrap_err()));
        }
    }

    #[test]
    fn defaults_are_the_command_lines() {
        for json in ["", "{}", r#"{"profile": null, "sdr_mtu": "", "maps": []}"#] {
            let o = parse(json).unwrap();
            assert_eq!(o.decoder.profile, ProfileChoice::Auto);
            assert_eq!(o.decoder.params, Params::default());
            assert!(o.decoder.maps.is_empty());
            assert_eq!(o.count, None);
        }
    }

    #[test]
    fn every_parameter() {
        let o = parse(
            r#"{"profile":"flor","maps":"qpn=0x12=flor, ip=10.0.0.1-10.0.0.2=sdr","dcp_tag_shift":"3",
                "sdr_split":[8,22,2],"sdr_mtu":1024,"sdr_max_message":"1048576","sdr_chunk_packets":4,
                "flor_split":"1,20,11","flor_unit_size":"0x800","flor_ack_set_means":"write",
                "netrt_opcode":"0xc1","erd_nack_port":5000,"count":"7"}"#,
        )
        .unwrap();
        let p = o.decoder.params;
        assert_eq!(o.decoder.profile, ProfileChoice::Fixed(Profile::Flor));
        assert_eq!(o.decoder.maps.len(), 2);
        assert_eq!(o.decoder.maps[0], (Selector::Qpn(0x12), Profile::Flor));
        assert_eq!(p.dcp_tag_shift, 3);
        assert_eq!(p.sdr_split, ImmSplit(8, 22, 2));
        assert_eq!(p.sdr_mtu, Some(1024));
        assert_eq!(p.sdr_max_message, Some(1 << 20));
        assert_eq!(p.sdr_chunk_packets, 4);
        assert_eq!(p.flor_split, ImmSplit(1, 20, 11));
        assert_eq!(p.flor_unit_size, 2048);
        assert_eq!(p.flor_ack_set_means, FlorAckSetMeans::Write);
        assert_eq!(p.netrt_opcode, 0xc1);
        assert_eq!(p.erd_nack_port, 5000);
        assert_eq!(o.count, Some(7));
    }

    #[test]
    fn errors_name_the_option() {
        for (json, want) in [
            ("[1]", "JSON object"),
            ("{", "not JSON"),
            (r#"{"profil":"std"}"#, "unknown option 'profil'"),
            (r#"{"profile":"tcp"}"#, "profile: unknown profile 'tcp'"),
            (r#"{"maps":["qpn=1"]}"#, "maps:"),
            (r#"{"maps":["port=1=std"]}"#, "maps: unknown selector kind"),
            (r#"{"sdr_split":"10,18,5"}"#, "sdr_split:"),
            (r#"{"netrt_opcode":256}"#, "netrt_opcode: 256 is out of range"),
            (r#"{"erd_nack_port":"x"}"#, "erd_nack_port: 'x' is not a number"),
            (r#"{"flor_ack_set_means":"both"}"#, "flor_ack_set_means:"),
            (r#"{"sdr_mtu":-1}"#, "sdr_mtu:"),
        ] {
            let e = parse(json).unwrap_err();
            assert!(e.contains(want), "{json}: {e}");
        }
    }
}
