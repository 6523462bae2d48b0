//! Transports only move frames between a peer and a [`Session`](crate::engine::Session).

#[cfg(feature = "http")]
pub mod http;
pub mod stdio;

pub use stdio::{DEFAULT_MAX_LINE, LineOptions, serve_lines};
