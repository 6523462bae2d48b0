//! MCP clients: connect to a server, use what it offers, and answer what it asks.
//!
//! A [`Client`] is built by a [`ClientBuilder`] with the handlers for the server's requests
//! ([`ElicitationHandler`], [`SamplingHandler`], [`RootsHandler`]) — the capabilities declared
//! in `initialize` follow from them — and connected over a child process's stdio
//! ([`connect_stdio`](ClientBuilder::connect_stdio)), Streamable HTTP
//! (`ClientBuilder::connect_http`, with the feature `http-client`; `https://` works out of
//! the box with the default feature `rustls`, see `client::http`), any reader/writer
//! pair ([`connect_io`](ClientBuilder::connect_io)), or to a [`Server`](crate::Server) in this process
//! ([`connect_in_process`](ClientBuilder::connect_in_process)).
//!
//! ```no_run
//! use typed_mcp::client::{Client, ElicitationModes, elicitation_fn};
//! use typed_mcp::protocol::ElicitResult;
//!
//! # async fn run() -> Result<(), typed_mcp::client::ClientError> {
//! let client = Client::builder("my-app", "1.0.0")
//!     .elicitation(elicitation_fn(ElicitationModes::FORM, |request| async move {
//!         // Show `request.message()` and the form to the user…
//!         request.as_form().and_then(|f| f.accept_defaults().ok()).unwrap_or_else(ElicitResult::decline)
//!     }))
//!     .connect_stdio(tokio::process::Command::new("my-mcp-server"))
//!     .await?;
//! let result = client.call_tool("add", serde_json::json!({"a": 2, "b": 40})).await?;
//! println!("{:?}", result.content);
//! client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Protocol eras
//!
//! By default the client opens a session with `initialize` (revisions up to 2025-11-25).
//! [`ClientBuilder::protocol_era`] chooses the 2026-07-28 era instead, or
//! [`ProtocolEra::Auto`]: `server/discover` first, `initialize` if the server does not speak
//! it. The API is the same in both: in the 2026-07-28 era each request carries the revision and
//! the client's capabilities in `_meta`, a result that asks for input (`input_required`) is
//! answered by the same handlers and the request retried until it completes, list results are
//! kept as long as the server's caching hints allow, and [`Client::listen`] opens the stream of
//! change notifications. Over HTTP, each 2026-07-28 request also carries `Mcp-Method`,
//! `Mcp-Name` and the `Mcp-Param-*` headers of the tool arguments the tool's schema marks with
//! `x-mcp-header` (a tool whose marks break the rules is refused).
//!
//! Every request waits at most [`DEFAULT_REQUEST_TIMEOUT`] unless configured otherwise;
//! dropping its future, or cancelling the token given to [`ToolCallBuilder::cancel_on`], withdraws it
//! with `notifications/cancelled`. Notifications reach the application through
//! [`Client::notifications`] (a broadcast receiver) or [`ClientBuilder::on_notification`].

mod apps;
mod builder;
mod cache;
mod calls;
mod choice;
mod connected;
pub(crate) mod connection;
mod elicitation;
mod era;
mod error;
mod handlers;
#[cfg(feature = "http-client")]
pub mod http;
pub(crate) mod http_headers;
mod listen;
mod notifications;
#[cfg(feature = "http-client")]
pub mod oauth;
mod requests;
mod round_trip;
pub(crate) mod service;
#[cfg(feature = "skills")]
mod skills;
#[cfg(any(feature = "http-client", fuzzing))]
pub(crate) mod sse;
mod tasks;
mod tool_call;
#[cfg(feature = "otel")]
mod traced;
mod url_elicitation;

pub use apps::AppView;
pub use builder::{
    ClientBuilder, DEFAULT_NOTIFICATION_CAPACITY, DEFAULT_REQUEST_TIMEOUT, DEFAULT_URL_ELICITATION_TIMEOUT,
};
pub use connected::Client;
pub use elicitation::{
    ElicitationFn, ElicitationHandler, ElicitationModes, ElicitationRequest, FormRequest, TypedAnswerError,
    TypedElicitation, TypedForm, UrlRequest, elicitation_fn, fill_defaults, typed_elicitation,
};
pub use era::{ProtocolEra, VERSIONS_2026};
pub use error::ClientError;
pub use handlers::{RootsHandler, SamplingFn, SamplingHandler, SamplingSupport, sampling_fn};
pub use listen::Subscription;
pub use notifications::ServerNotification;
pub use round_trip::{DEFAULT_MAX_INPUT_ROUNDS, input_key};
#[cfg(feature = "skills")]
pub use skills::{Skill, SkillReadError};
pub use tasks::TaskStart;
/// Cancels a request given to [`ToolCallBuilder::cancel_on`].
pub use tokio_util::sync::CancellationToken;
pub use tool_call::ToolCallBuilder;
