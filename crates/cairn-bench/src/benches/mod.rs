//! The benchmarks, one file each: its command-line flags and a `run` that composes a
//! dataset ([`crate::datasets`]), a protocol ([`crate::protocol`] or its own loop over
//! [`crate::run`]), scoring ([`crate::scoring`]), records ([`crate::records`]) and a
//! report with its methodology template ([`crate::report`]).
pub mod ann;
pub mod evermembench;
pub mod friendsqa;
pub mod lme_v2;
pub mod locomo;
pub mod longmemeval;
pub mod personal;
pub mod scale;
pub mod scale_loop;
pub mod trajectories_scale;
