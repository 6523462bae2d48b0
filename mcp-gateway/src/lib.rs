//! # typed-mcp-gateway
//!
//! One MCP endpoint in front of many MCP servers, either protocol era on either side.
//!
//! A [`Gateway`] mounts the servers of a [`Config`] (the **upstreams**: programs spoken to over
//! stdio, or Streamable HTTP endpoints) on one [`typed_mcp::Server`]: their tools and prompts
//! under each upstream's prefix, their resources and templates at their own URIs. Whatever the
//! server builder puts in front applies to every upstream: OAuth (the resource server),
//! middleware, rate limits, telemetry. The program `mcp-gateway` serves a configuration file
//! over stdio or Streamable HTTP.
//!
//! The gateway speaks to each upstream in the era it speaks (2025-11-25 sessions, or the
//! stateless 2026-07-28 revision), and to each client in the client's. A question an upstream
//! asks during a call (an elicitation, a sampling or roots request) reaches the client the
//! way the client's era asks it: `elicitation/create` in a session, an `input_required` result
//! in the 2026 era; the answer goes back to the waiting upstream call.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp_gateway::{Config, Gateway};
//!
//! let config = Config::parse(
//!     r#"
//!     [[upstream]]
//!     name = "files"
//!     command = ["files-server"]
//!
//!     [[upstream]]
//!     name = "search"
//!     url = "http://127.0.0.1:8080/mcp"
//!     "#,
//!     "gateway.toml",
//! )?;
//! let gateway = Gateway::from_config(config)?;
//! let server = gateway.start(gateway.server_builder()).await?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! # Modules
//!
//! Bottom up, each using only those before it: [`config`] (the file), `calls` (questions of
//! upstreams routed to the downstream request they belong to, kept between the rounds of a
//! 2026-era request), [`upstream`] (one upstream's connection and lifecycle), `relay` (the
//! definitions served for an upstream's tools, prompts and resources), `gateway` (the upstreams
//! mounted on one server).

pub mod config;

mod calls;

pub mod upstream;

mod relay;

mod gateway;

pub use config::{Config, ConfigError, UpstreamConfig};
pub use gateway::{Gateway, GatewayError};
pub use upstream::Upstream;
