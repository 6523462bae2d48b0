//! Transports only move frames between a peer and a session of the server: stdio and
//! Streamable HTTP here; for one of your own, see [`Server::connect`](crate::Server::connect)
//! and the guide's [`transports`](crate::guide::transports) chapter.

#[cfg(feature = "http")]
pub mod http;
pub mod stdio;

pub(crate) use stdio::serve_lines;
pub use stdio::{DEFAULT_MAX_LINE, LineOptions};
