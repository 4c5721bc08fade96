//! Hive-style partition folders (`host=h1/date=2026-11-29/`), which engines read back as
//! columns: `--partition KEY=VALUE,…`, each value given, or taken from the capture when it
//! starts with `@` (docs/cluster.md, "Partitions"):
//!
//! | value | taken from |
//! |---|---|
//! | `@hardware`, `@os`, `@application` | pcapng's section header: `shb_hardware`, `shb_os`, `shb_userappl` |
//! | `@comment` | the section header's first comment |
//! | `@interface`, `@interface_description` | each interface's `if_name`, `if_description` (the rows of each interface go to its own folder) |
//! | `@date` | the capture's first frame, as a UTC date (`2026-11-29`) |
//! | `@file` | the capture's file name |
//!
//! A value the capture does not have (a pcap file has no options) is Hive's
//! `__HIVE_DEFAULT_PARTITION__`, which engines read as null. Characters other than letters,
//! digits and `- _ . :` become `_`.

use rocescope_analysis::capture::{self, InterfaceName, SectionInfo};
use rocescope_analysis::output;

/// Hive's folder name for a null value.
pub const NULL_VALUE: &str = "__HIVE_DEFAULT_PARTITION__";

/// Where a partition value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    Given(String),
    Hardware,
    Os,
    Application,
    Comment,
    Interface,
    InterfaceDescription,
    Date,
    File,
}

/// A `--partition` specification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Partition {
    keys: Vec<(String, Source)>,
}

/// What a capture says of itself, for the `@` values.
#[derive(Clone, Debug, Default)]
pub struct CaptureInfo {
    pub file: String,
    pub section: SectionInfo,
    /// The interfaces described in the capture (all of them when read for `@interface` or
    /// `@interface_description`; else those described before the first packet).
    pub interfaces: Vec<InterfaceName>,
    pub first_ts_ns: Option<u64>,
}

impl CaptureInfo {
    /// Reads a capture's header blocks and first frame; with `every_interface`, its blocks
    /// through to the end (records not decoded: a few percent of an export's time), since a
    /// pcapng interface may be described after the first packet, before its own first one.
    /// (The reading stops quietly where the capture turns out unusable: the export reports it.)
    pub fn read(path: &str, file: &str, every_interface: bool) -> Result<CaptureInfo, capture::CaptureError> {
        let mut r = capture::open(path)?;
        let first_ts_ns = r.next_record()?.map(|rec| rec.ts_ns);
        if every_interface && first_ts_ns.is_some() {
            while let Ok(Some(_)) = r.next_record() {}
        }
        let interfaces = (0..).map_while(|i| r.interface_name(i).cloned()).collect();
        Ok(CaptureInfo { file: file.to_string(), section: r.section_info(), interfaces, first_ts_ns })
    }
}

/// A value as a folder name's part.
fn clean(v: &str) -> String {
    let v: String =
        v.trim().chars().map(|c| if c.is_ascii_alphanumeric() || "-_.:".contains(c) { c } else { '_' }).collect();
    if v.is_empty() {
        NULL_VALUE.to_string()
    } else {
        v
    }
}

/// The partition folders of a capture: one per distinct combination of values, and for each
/// interface the folder its rows go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folders {
    pub dirs: Vec<String>,
    /// Interface id → index in `dirs` (interfaces past the list: `other`).
    by_interface: Vec<usize>,
    other: usize,
}

impl Folders {
    /// The folder index of interface `id`'s rows.
    pub fn of_interface(&self, id: u32) -> usize {
        self.by_interface.get(id as usize).copied().unwrap_or(self.other)
    }
}

impl Partition {
    /// Parses `KEY=VALUE,…`.
    pub fn parse(spec: &str) -> Result<Partition, String> {
        let mut keys = Vec::new();
        for kv in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(format!("--partition: '{kv}' is not KEY=VALUE"));
            };
            let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c));
            let source = match v {
                "@hardware" => Source::Hardware,
                "@os" => Source::Os,
                "@application" => Source::Application,
                "@comment" => Source::Comment,
                "@interface" => Source::Interface,
                "@interface_description" => Source::InterfaceDescription,
                "@date" => Source::Date,
                "@file" => Source::File,
                v if v.starts_with('@') => {
                    return Err(format!(
                        "--partition: '{kv}': {v} is not one of @hardware, @os, @application, @comment, \
                         @interface, @interface_description, @date, @file"
                    ))
                }
                v if ok(v) => Source::Given(v.to_string()),
                _ => return Err(format!("--partition: '{kv}': values are letters, digits and - _ . : (or @NAME)")),
            };
            if !ok(k) {
                return Err(format!("--partition: '{kv}': keys are letters, digits and - _ . :"));
            }
            if keys.iter().any(|(k2, _)| k2 == k) {
                return Err(format!("--partition: key '{k}' is given twice"));
            }
            keys.push((k.to_string(), source));
        }
        Ok(Partition { keys })
    }

    /// Refuses a key that names a column of the tables (`columns`): engines would read the
    /// folder's value and the file's column under one name (DuckDB keeps one of them quietly).
    pub fn check_keys(&self, columns: &std::collections::BTreeSet<String>) -> Result<(), String> {
        match self.keys.iter().find(|(k, _)| columns.contains(k)) {
            Some((k, _)) => Err(format!("--partition: key '{k}' is a column of the export; name it otherwise")),
            None => Ok(()),
        }
    }

    /// Whether any value is taken from the capture.
    pub fn reads_capture(&self) -> bool {
        self.keys.iter().any(|(_, s)| !matches!(s, Source::Given(_)))
    }

    /// Whether a value is taken per interface (`@interface`, `@interface_description`).
    pub fn per_interface(&self) -> bool {
        self.keys.iter().any(|(_, s)| matches!(s, Source::Interface | Source::InterfaceDescription))
    }

    /// The folders of a capture.
    pub fn folders(&self, info: &CaptureInfo) -> Folders {
        let value = |s: &Source, iface: Option<&InterfaceName>| -> String {
            let v = match s {
                Source::Given(v) => Some(v.clone()),
                Source::Hardware => info.section.hardware.clone(),
                Source::Os => info.section.os.clone(),
                Source::Application => info.section.userappl.clone(),
                Source::Comment => info.section.comment.clone(),
                Source::Interface => iface.and_then(|i| i.name.clone()),
                Source::InterfaceDescription => iface.and_then(|i| i.description.clone()),
                Source::Date => info.first_ts_ns.map(|t| {
                    let (y, m, d) = output::civil_from_days((t / 1_000_000_000 / 86_400) as i64);
                    format!("{y:04}-{m:02}-{d:02}")
                }),
                Source::File => Some(info.file.clone()),
            };
            v.map_or_else(|| NULL_VALUE.to_string(), |v| clean(&v))
        };
        let dir = |iface: Option<&InterfaceName>| {
            self.keys.iter().map(|(k, s)| format!("{k}={}", value(s, iface))).collect::<Vec<_>>().join("/")
        };
        let mut dirs: Vec<String> = Vec::new();
        let mut index = |d: String| match dirs.iter().position(|x| *x == d) {
            Some(i) => i,
            None => {
                dirs.push(d);
                dirs.len() - 1
            }
        };
        let by_interface = info.interfaces.iter().map(|i| index(dir(Some(i)))).collect();
        let other = index(dir(None));
        Folders { dirs, by_interface, other }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> CaptureInfo {
        CaptureInfo {
            file: "run 1.pcapng".into(),
            section: SectionInfo { hardware: Some("host-7".into()), ..SectionInfo::default() },
            interfaces: vec![
                InterfaceName { name: Some("sender".into()), description: None },
                InterfaceName { name: Some("receiver".into()), description: None },
            ],
            // 2026-11-29T14:00:00Z
            first_ts_ns: Some(1_795_960_800 * 1_000_000_000),
        }
    }

    #[test]
    fn given_and_capture_values_make_the_folders() {
        let p = Partition::parse("host=@hardware,date=@date,job=llm-7,os=@os").unwrap();
        let f = p.folders(&info());
        assert_eq!(f.dirs, vec!["host=host-7/date=2026-11-29/job=llm-7/os=__HIVE_DEFAULT_PARTITION__"]);
        assert_eq!((f.of_interface(0), f.of_interface(1), f.of_interface(9)), (0, 0, 0));
    }

    #[test]
    fn interface_values_send_each_interface_to_its_folder() {
        let f = Partition::parse("tap=@interface,file=@file").unwrap().folders(&info());
        assert_eq!(
            f.dirs,
            vec![
                "tap=sender/file=run_1.pcapng",
                "tap=receiver/file=run_1.pcapng",
                "tap=__HIVE_DEFAULT_PARTITION__/file=run_1.pcapng"
            ]
        );
        assert_eq!((f.of_interface(0), f.of_interface(1), f.of_interface(2)), (0, 1, 2));
    }

    #[test]
    fn bad_specifications_are_refused() {
        for bad in ["host", "host=@nothing", "h/st=1", "host=a b", "host=1,host=2"] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Partition::parse("").unwrap().folders(&info()).dirs, vec![String::new()]);
    }
}
