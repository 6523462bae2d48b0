//! Shared helpers for the integration tests.

pub mod interop;
pub mod stdio;
