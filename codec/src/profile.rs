//! Transport profiles (WIRE.md part B): which extension a packet is decoded with.

/// A transport profile; `rocescope.profile` prints its [`Profile::name`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    #[default]
    Std,
    Dcp,
    Sdr,
    Flor,
    Netrt,
    Erd,
}

impl Profile {
    pub const ALL: [Profile; 6] =
        [Profile::Std, Profile::Dcp, Profile::Sdr, Profile::Flor, Profile::Netrt, Profile::Erd];

    pub fn name(self) -> &'static str {
        crate::field::PROFILE_VALUES[self as usize]
    }
    pub fn from_name(s: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// `--profile`'s choices: `auto` (detect per flow) or one profile. The default, and the help
/// text the command line, the browser and the Wireshark preference show.
pub const CHOICE_DEFAULT: &str = "auto";
/// See [`CHOICE_DEFAULT`].
pub const CHOICE_HELP: &str = "Transport profile: auto (detect per flow), std, dcp, sdr, flor, netrt, erd";
