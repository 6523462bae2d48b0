//! Shared helpers for the integration tests.

pub mod interop;
pub mod serve;
pub mod stdio;
