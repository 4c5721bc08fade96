//! A deterministic discrete-event simulator of a lossy RoCE fabric, driving the reference
//! stacks of [`rocescope_stacks`] as endpoints, recording pcapng captures at chosen taps and the
//! ground truth of what happened ([`truth::Truth`], `docs/truth.md`). `rocescope synth` is
//! [`synth::run`].

pub use rocescope_stacks::rng;

pub mod counters;
mod nic;
pub mod observe;
pub mod pfc;
pub mod sim;
pub mod spill;
pub mod spill_sort;
pub mod spill_var;
pub mod synth;
pub mod topology;
pub mod truth;

pub use sim::{Fabric, FabricConfig, LossDir, LossMode, LossModel, LossPlace, Routing, TapPoint};
