//! The transports' parameter flags (`--dcp-tag-shift`, `--sdr-split`, …), generated from the
//! codec's parameter table (`rocescope_codec::params::PARAMS`, `codec/src/params/table.rs`):
//! one clap argument per entry, with the entry's flag, value name, help text (with its range),
//! default and enumeration values; the value is checked, and then stored in [`Params`], by the
//! entry's setter, the check the browser's options and the Lua plugin's preferences make too.
//!
//! [`ParamArgs`] implements [`clap::Args`] by hand, so a derived command takes the flags with
//! `#[command(flatten)]`; its type parameter says which parameters ([`All`] for the commands
//! that decode, [`SynthParams`] for `synth`).

use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use rocescope_codec::params::ParamDef;
use rocescope_codec::Params;

/// Which parameters of the table a command takes.
pub trait ParamSet: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// Their names (entries of the table), in the order of the help.
    fn names() -> &'static [&'static str];
}

/// Every parameter (the commands that decode).
#[derive(Clone, Debug)]
pub struct All;

impl ParamSet for All {
    fn names() -> &'static [&'static str] {
        &Params::NAMES
    }
}

/// `--dcp-tag-shift` and `--flor-unit-size` (`synth`: the simulated DCP stack tags its packets
/// so, the simulated Flor stack counts its units so).
#[derive(Clone, Debug)]
pub struct SynthParams;

impl ParamSet for SynthParams {
    fn names() -> &'static [&'static str] {
        &["dcp_tag_shift", "flor_unit_size"]
    }
}

/// The parameters a command line gave, over the table's defaults.
#[derive(Clone, Debug)]
pub struct ParamArgs<S: ParamSet = All> {
    pub params: Params,
    set: PhantomData<S>,
}

fn defs<S: ParamSet>() -> impl Iterator<Item = &'static ParamDef> {
    S::names().iter().map(|n| ParamDef::find(n).unwrap_or_else(|| panic!("no parameter '{n}' in the table")))
}

/// The clap argument of a table entry: id = the parameter's name, the value a checked `String`.
pub fn arg(d: &'static ParamDef) -> Arg {
    let a = Arg::new(d.name)
        .long(d.long())
        .value_name(d.value_name)
        .help(d.help_text())
        .action(ArgAction::Set)
        .value_parser(ParamParser(d));
    if d.default.is_empty() {
        a
    } else {
        a.default_value(d.default)
    }
}

/// Checks a value with the entry's parser (the table's one check) and keeps its text; the
/// enumeration's names are clap's possible values (listed by `--help`).
#[derive(Clone)]
struct ParamParser(&'static ParamDef);

impl TypedValueParser for ParamParser {
    type Value = String;

    fn parse_ref(&self, cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<String, clap::Error> {
        let d = self.0;
        StringValueParser::new().try_map(move |s| d.parse(&s).map(|_| s)).parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let values = self.0.values();
        if values.is_empty() {
            return None;
        }
        Some(Box::new(values.iter().map(|v| PossibleValue::new(*v))))
    }
}

impl<S: ParamSet> FromArgMatches for ParamArgs<S> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut a = ParamArgs { params: Params::default(), set: PhantomData };
        a.update_from_arg_matches(m)?;
        Ok(a)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for d in defs::<S>() {
            if let Some(v) = m.get_one::<String>(d.name) {
                // Checked by ParamParser already.
                d.set(&mut self.params, v)
                    .map_err(|e| clap::Error::raw(ErrorKind::ValueValidation, format!("{}: {e}\n", d.flag)))?;
            }
        }
        Ok(())
    }
}

impl<S: ParamSet> Args for ParamArgs<S> {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(defs::<S>().map(arg))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use rocescope_codec::params::{ParamKind, PARAMS};

    fn parse<S: ParamSet>(args: &[&str]) -> Result<Params, clap::Error> {
        let cmd = ParamArgs::<S>::augment_args(Command::new("t").no_binary_name(true));
        let m = cmd.try_get_matches_from(args)?;
        Ok(ParamArgs::<S>::from_arg_matches(&m)?.params)
    }

    /// Every table entry is an argument of `sub` with the entry's flag, value name, help,
    /// default and possible values.
    fn check_args(cmd: &Command, names: &[&str]) {
        for name in names {
            let d = ParamDef::find(name).unwrap();
            let a = cmd.get_arguments().find(|a| a.get_id() == d.name).unwrap_or_else(|| panic!("{}: no {}", cmd.get_name(), d.flag));
            assert_eq!(a.get_long(), Some(d.long()));
            assert_eq!(a.get_value_names().unwrap(), [d.value_name]);
            assert_eq!(a.get_help().unwrap().to_string(), d.help_text());
            let defaults: Vec<&str> = a.get_default_values().iter().map(|v| v.to_str().unwrap()).collect();
            assert_eq!(defaults, if d.default.is_empty() { vec![] } else { vec![d.default] }, "{}", d.name);
            let values: Vec<String> = a.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
            assert_eq!(values, d.values(), "{}", d.name);
        }
        let params = cmd.get_arguments().filter(|a| Params::NAMES.contains(&a.get_id().as_str())).count();
        assert_eq!(params, names.len(), "{}: other parameters", cmd.get_name());
    }

    #[test]
    fn every_entry_is_a_flag_of_the_commands() {
        let cli = crate::Cli::command();
        for sub in ["decode", "check"] {
            check_args(cli.find_subcommand(sub).unwrap(), &Params::NAMES);
        }
        check_args(cli.find_subcommand("synth").unwrap(), &["dcp_tag_shift", "flor_unit_size"]);
    }

    #[test]
    fn flags_set_what_the_setters_set() {
        assert_eq!(parse::<All>(&[]).unwrap(), Params::default());
        for d in PARAMS {
            let text = match d.kind {
                ParamKind::Uint { max, .. } => format!("0x{max:x}"),
                ParamKind::Split => "0,0,32".into(),
                ParamKind::Enum { values } => values.last().unwrap().to_string(),
            };
            let mut want = Params::default();
            d.set(&mut want, &text).unwrap();
            assert_ne!(want, Params::default(), "{}", d.name);
            assert_eq!(parse::<All>(&[d.flag, &text]).unwrap(), want, "{} {text}", d.flag);
            assert_eq!(parse::<All>(&[&format!("{}={text}", d.flag)]).unwrap(), want, "{}={text}", d.flag);
        }
        let p = parse::<SynthParams>(&["--dcp-tag-shift", "4"]).unwrap();
        assert_eq!(p, Params { dcp_tag_shift: 4, ..Params::default() });
        assert!(parse::<SynthParams>(&["--sdr-split", "8,22,2"]).is_err());
    }

    #[test]
    fn bad_values_are_usage_errors_with_the_tables_message() {
        for (args, message) in [
            (&["--dcp-tag-shift", "7"][..], "7 is out of range (at most 6)"),
            (&["--sdr-split", "1,2,3"], "'1,2,3' is not three bit widths adding up to 32"),
            (&["--flor-ack-set-means", "both"], "'both' is not one of send, write"),
            (&["--netrt-opcode", "256"], "256 is out of range (at most 255)"),
            (&["--erd-nack-port", "x"], "'x' is not a number"),
            (&["--dcp-tag-shift", "1", "--dcp-tag-shift", "2"], "cannot be used multiple times"),
        ] {
            let e = parse::<All>(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
            assert!(e.to_string().contains(message), "{args:?}: {e}");
        }
    }
}
