//! MCP's Streamable HTTP transport (revision 2025-11-25), client side.
//!
//! Every message the client sends is a `POST` to the endpoint with
//! `Accept: application/json, text/event-stream`, the session id the server gave in answer to
//! `initialize` (`Mcp-Session-Id`) and, after `initialize`, the negotiated revision
//! (`MCP-Protocol-Version`). A request is answered with JSON or with an SSE stream carrying the
//! server's messages about it and then the response; the server's own requests found there
//! are answered with new POSTs. After `notifications/initialized` the client opens the
//! session's `GET` stream (a server may decline with 405), and on close it sends `DELETE`.
//!
//! A stream that ends before the response arrived is resumed with `GET` and `Last-Event-ID`,
//! after the delay the server asked for with `retry:` (a few times at most); the `GET` stream is
//! reopened the same way when it ends.
//!
//! The session's `GET` stream is opened before anything else is sent, so that a server that
//! sends there what a later request causes has the stream first; sending waits for its response
//! headers a few seconds at most ([`HttpClientConfig::standalone_stream_wait`]). A server slower
//! than that keeps its stream: the request stays open and the stream is read as soon as the
//! server answers. A `GET` that fails (the server unreachable, or HTTP 5xx or 429) is tried
//! again with growing delays. What the client does about the stream is logged at `warn` level.
//!
//! # TLS
//!
//! With the feature `rustls` (on by default) `https://` endpoints work as they are, trusting
//! the platform's certificate store; a server whose certificate comes from a private CA is
//! trusted once the CA is added with `HttpClientConfig::root_certificates`. A certificate
//! that is not trusted fails the connection with
//! [`ClientError::UntrustedCertificate`](super::ClientError::UntrustedCertificate).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::client::{Client, http::HttpClientConfig};
//! # #[cfg(feature = "rustls")]
//! use typed_mcp::tls::RootCertificates;
//!
//! let config = HttpClientConfig::default();
//! # #[cfg(feature = "rustls")]
//! let config = config.root_certificates(RootCertificates::from_pem_file("ca.pem")?);
//! let client = Client::builder("my-app", "1.0.0").connect_http_with("https://mcp.example.com/mcp", config).await?;
//! # client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! Without the `rustls` feature the transport has no TLS of its own: `http://` endpoints work,
//! and for `https://` the application passes a `reqwest::Client` built with a TLS backend of
//! its choice to [`HttpClientConfig::http_client`].

mod config;
mod connection;
mod posting;
mod shared;
mod streams;

pub use config::HttpClientConfig;
pub(crate) use connection::HttpConnection;
