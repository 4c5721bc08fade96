//! A deterministic discrete-event simulator of a lossy RoCE fabric, driving the reference
//! stacks of [`crate::stacks`] as endpoints, recording pcapng captures at chosen taps and the
//! ground truth of what happened ([`truth::Truth`], `docs/truth.md`). `rocescope synth` is
//! [`synth::run`].

pub mod rng;
pub mod sim;
pub mod synth;
pub mod truth;

pub use sim::{Fabric, FabricConfig, LossDir, LossModel, LossPlace, Routing, TapPoint};
