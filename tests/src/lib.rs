//! Shared helpers for the integration tests.

pub mod interop;
pub mod programs;
pub mod provision;
pub mod serve;
pub mod stdio;
