//! Whether an `ambiguous` finding of `rocescope replay` on a simulated capture is explained by
//! what the network did, read from the simulator's ground truth (`synth --truth`): every frame
//! a tap captured names its transmission (`tx`), and every transmission (`sim.transmissions`)
//! its connection, PSN, message, when it left and whether the network delivered it.
//!
//! An ambiguous finding offers two explanations, a departure of one end or something the
//! network did; on an unmodified capture only the second may be true, and this checks it:
//! - `gbn.go-back-short` away from the requester (the first resend after a NAK was not the
//!   NAK'd PSN): the first copy of the NAK'd PSN the requester sent after the NAK left, before
//!   that resend reached the tap, is one the network did not deliver;
//! - `dcp.emsn-ahead` away from the responder (an ACK's eMSN passes messages sent after the
//!   packet it names): every packet of those messages had arrived at the responder before the
//!   ACK left (the network reordered them ahead of that packet).

use std::collections::HashMap;

use serde_json::Value;

fn ns(v: &Value) -> u64 {
    v.as_str().and_then(|s| s.parse().ok()).or_else(|| v.as_u64()).expect("a time")
}

/// The truth, indexed.
pub struct Truth<'a> {
    /// Capture frame number → its transmission.
    by_frame: HashMap<u64, &'a Value>,
    tx: &'a [Value],
    messages: &'a [Value],
}

impl<'a> Truth<'a> {
    pub fn new(truth: &'a Value) -> Self {
        let tx = truth["sim"]["transmissions"].as_array().expect("sim.transmissions");
        let by_id: HashMap<u64, &Value> = tx.iter().map(|t| (t["id"].as_u64().unwrap(), t)).collect();
        let mut by_frame = HashMap::new();
        for tap in truth["taps"].as_array().expect("taps") {
            for f in tap["frames"].as_array().unwrap() {
                if let Some(t) = f["tx"].as_u64().and_then(|id| by_id.get(&id)) {
                    by_frame.insert(f["frame"].as_u64().unwrap(), *t);
                }
            }
        }
        Truth { by_frame, tx, messages: truth["sim"]["messages"].as_array().expect("sim.messages") }
    }

    /// Why the network explains `finding` (a report's finding), or why it does not. `at` gives
    /// a captured frame's time (ns) and `msn` its AETH MSN (DCP: the eMSN).
    pub fn explains(
        &self,
        finding: &Value,
        at: impl Fn(u64) -> u64,
        msn: impl Fn(u64) -> Option<u32>,
    ) -> Result<String, String> {
        let frames: Vec<u64> = finding["frames"].as_array().unwrap().iter().map(|f| f.as_u64().unwrap()).collect();
        let tx = |n: u64| self.by_frame.get(&n).copied().ok_or(format!("frame {n} is in no tap's truth"));
        match (finding["kind"].as_str(), finding["rule"].as_str()) {
            (Some("ambiguous"), Some("gbn.go-back-short")) => {
                let nak = tx(frames[0])?;
                let (conn, e, nak_left) = (nak["conn"].as_u64(), nak["psn"].as_u64(), ns(&nak["time_ns"]));
                let by = at(frames[1]);
                // The go-back's first resend of the NAK'd PSN (the first copy sent after the NAK
                // left), and the network did not deliver it.
                let first = self
                    .tx
                    .iter()
                    .filter(|t| {
                        t["conn"].as_u64() == conn
                            && t["origin"] == "requester"
                            && t["kind"] == "data"
                            && t["psn"].as_u64() == e
                            && (nak_left..by).contains(&ns(&t["time_ns"]))
                    })
                    .min_by_key(|t| ns(&t["time_ns"]));
                let lost = first.filter(|t| t["fate"] != "delivered");
                lost.map(|t| format!("the resend of PSN {} (transmission {}) was {}", e.unwrap(), t["id"], t["fate"]))
                    .ok_or(format!("no resend of PSN {e:?} after the NAK was lost: {finding}"))
            }
            (Some("ambiguous"), Some("dcp.emsn-ahead")) => {
                let ack = tx(frames[0])?;
                let (conn, p, left) = (ack["conn"].as_u64(), ack["psn"].as_u64(), ns(&ack["time_ns"]));
                let emsn = msn(frames[0]).ok_or("no eMSN")? as u64;
                let msg = |m: u64| {
                    self.messages.iter().find(|x| x["conn"].as_u64() == conn && x["dcp_msn"].as_u64() == Some(m))
                };
                let of_p = self
                    .messages
                    .iter()
                    .find(|x| {
                        x["conn"].as_u64() == conn && (x["first_psn"].as_u64()..=x["last_psn"].as_u64()).contains(&p)
                    })
                    .and_then(|x| x["dcp_msn"].as_u64())
                    .ok_or("PSN in no message")?;
                for k in of_p + 1..emsn {
                    let m = msg(k).ok_or(format!("no message {k}"))?;
                    for psn in m["first_psn"].as_u64().unwrap()..=m["last_psn"].as_u64().unwrap() {
                        let arrived = self.tx.iter().any(|t| {
                            t["conn"].as_u64() == conn
                                && t["kind"] == "data"
                                && t["psn"].as_u64() == Some(psn)
                                && t["fate"] == "delivered"
                                && ns(&t["fate_time_ns"]) <= left
                        });
                        if !arrived {
                            return Err(format!(
                                "PSN {psn} of message {k} had not arrived when the ACK left: {finding}"
                            ));
                        }
                    }
                }
                Ok(format!("messages {}..{emsn} had arrived whole before the ACK of PSN {p:?} left", of_p + 1))
            }
            _ => Err(format!("no network explanation checked for this finding: {finding}")),
        }
    }
}

/// Each captured frame's time and AETH MSN (DCP: the eMSN), by frame number.
pub fn capture_index(path: &std::path::Path, profile: rocescope_codec::Profile) -> HashMap<u64, (u64, Option<u32>)> {
    use rocescope_codec::{DecodeOptions, Frame, LinkType, Params};
    let mut r = rocescope_analysis::capture::open(&path.display().to_string()).unwrap();
    let opts = DecodeOptions { verify: false, profile, params: Params::default() };
    let mut m = HashMap::new();
    while let Some(rec) = r.next_record().unwrap() {
        let f = Frame::parse(LinkType::Ethernet, rec.data, rec.data.len(), &opts);
        m.insert(rec.number, (rec.ts_ns, f.roce().and_then(|p| p.aeth()).map(|a| a.msn())));
    }
    m
}
