//! # typed-mcp
//!
//! Typed [Model Context Protocol](https://modelcontextprotocol.io) servers and clients in Rust.
//!
//! Annotate functions with `#[tool]`, register them on a [`Server`], and serve it over stdio:
//!
//! ```no_run
//! use typed_mcp::prelude::*;
//!
//! /// Adds two integers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder("calculator", "1.0.0").tools(tools![add]).build()?;
//!     server.serve_stdio().await?;
//!     Ok(())
//! }
//! ```
//!
//! A tool asks the user for more input in the middle of a call with a form that is a Rust type
//! ([`elicit`] has the whole story):
//!
//! ```
//! use typed_mcp::prelude::*;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! /// The details of a new project.
//! #[derive(Deserialize, JsonSchema, Elicit)]
//! struct ProjectDetails {
//!     /// The project's name.
//!     name: String,
//!     /// Set up TypeScript.
//!     typescript: bool,
//! }
//!
//! /// Creates a project, asking the user for its details.
//! #[tool]
//! async fn create_project(ctx: Context) -> Result<String, ElicitError> {
//!     Ok(match ctx.elicit::<ProjectDetails>("Please provide the project details.").await? {
//!         Elicitation::Accept(details) => format!("Created {}", details.name),
//!         Elicitation::Decline => "No project was created.".to_owned(),
//!         Elicitation::Cancel => "Cancelled.".to_owned(),
//!     })
//! }
//! # let _ = Server::builder("projects", "1.0.0").tools(tools![create_project]).build().unwrap();
//! ```
//!
//! **The [`guide`]** takes it from there, one chapter a topic: tools in detail, elicitation,
//! resources and prompts, HTTP, authorization, the two protocol eras, tasks, the client,
//! several instances, testing, and what the macros generate.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! | --- | :---: | --- |
//! | `macros` | yes | `#[tool]`, `#[toolbox]`, `#[prompt]`, `#[resource]`, `#[derive(Elicit)]` (from `typed-mcp-macros`) |
//! | `http` | | the Streamable HTTP server transport (`transport::http`) |
//! | `http-client` | | the client's Streamable HTTP transport, with OAuth 2.1 (`client::oauth`) |
//! | `auth` | | token verifiers for protected HTTP servers ([`auth`]); DPoP proofs are checked with aws-lc-rs |
//! | `rustls` | yes | `https://` for the HTTP client and the token verifiers: rustls, with the platform's certificate store (`tls`) |
//! | `http-tls` | | serving Streamable HTTP over TLS yourself (`HttpConfig::tls`) |
//! | `tracing-bridge` | | forwards the application's `tracing` events to clients as log messages |
//! | `skills` | | agent skills over MCP (`skills`): serving a folder of skills (or one compiled in with `embed_skills!`), reading and verifying them from the client |
//!
//! # Words
//!
//! Each word below means one thing in this crate's code and docs.
//!
//! | word | meaning |
//! | --- | --- |
//! | **revision** | a dated version of the MCP specification (`2025-11-25`, `2026-07-28`), named in `protocolVersion` |
//! | **era** | how a client and a server talk: the **2025-11-25 era** (that revision and older ones) opens a session with `initialize`; the **2026-07-28 era** has no `initialize` and no session, each request naming its revision and the client's capabilities in `_meta` ([`protocol::methods::Era`]) |
//! | **session** | an MCP session of the 2025-11-25 era: from `initialize` to the end of the connection (stdio) or to `DELETE` or expiry (Streamable HTTP, `Mcp-Session-Id`). Nothing else is called a session |
//! | **method** | a JSON-RPC method of MCP, as a value: [`protocol::Method`], the id of its **row** in the method table ([`protocol::methods::METHODS`]), which holds every fact about it |
//! | **round** | one request and its answer within a multi round-trip request of the 2026-07-28 era: an answer `input_required` asks the client something, and the client's retry, carrying the answers and the sealed **request state**, is the next round. The handler runs again from the start in each round ([`multi_round`]) |
//! | **elicitation** | asking the user for input in the middle of a request: a **form** (a typed schema) or a **URL flow** (a page the user visits) |
//! | **principal** | who the caller is, as the transport authenticated them (a token's subject); **identity** is the principal with what its token grants ([`auth::AuthInfo`]). The **caller** of a request is its principal and identity together, with its era and session |
//! | **transport** | what moves messages between a client and a server: stdio, Streamable HTTP, or one of your own ([`Server::connect`]) |
//! | **instance** | one process serving a shared deployment's endpoint, behind a load balancer, sharing sessions through a **backplane** (`typed-mcp-redis`) |
//! | **owner** | the instance that opened a session and keeps it live; its **heartbeat** renews its claim, and another instance **takes over** a session whose owner's claim lapsed |
//! | **replica** | a copy of a session on an instance that is not its owner, built from the session's **record** in the shared **registry**, so that a request is served where it lands |
//! | **hop** | a request an instance passes on to the session's owner (what must run there), with the landing instance's sealed word for what it verified |
//! | **bus** | the channel on which instances tell each other what they must act on (answers, cancellations, changed records, announcements, URL flows, tasks): one message type, in a versioned envelope |
//! | **deployment secret** | the key every instance of a deployment shares (`transport::http::Backplane::secret`, feature `http`); what one instance tells another is **sealed** with it (a MAC), and what is not is dropped |
//! | **task** | a long-running tool call that outlives its request (the tasks extension): polled with `tasks/get`, answered with `tasks/update` |
//!
//! # Layers
//!
//! Bottom up; a module imports only from the modules above it in this list.
//!
//! 1. [`protocol`]: wire types (JSON-RPC envelope, MCP messages of each revision, error codes)
//!    and the method table ([`protocol::methods`]): every fact about each method; no I/O.
//! 2. [`engine`]: one session's message pump (ids, pending answers, cancellation, timeouts).
//! 3. [`elicit`]: the `Elicit` trait, form schemas, content validation, `Elicitation<T>`.
//! 4. [`handler`]: what a handler may ask of its request (`Context`, `State`, `Completer`).
//! 5. [`apps`]: the MCP Apps extension's metadata (a tool's view and visibility, a view's
//!    content security policy and permissions).
//! 6. [`tool`](mod@tool): tool definitions, argument extraction, result conversion.
//! 7. [`prompt`](mod@prompt): prompt definitions and their arguments.
//! 8. [`resource`](mod@resource): resources, URI templates, their contents; beside it,
//!    `skills` (feature `skills`): agent skills, their frontmatter and the rules they follow,
//!    served as resources.
//! 9. [`multi_round`]: multi round-trip requests (2026-07-28): answers carried in the retry, sealed `requestState`.
//! 10. [`task`]: tasks (the 2026-07-28 tasks extension): the task store, and a task's run.
//! 11. [`auth`]: the resource server's side of OAuth 2.1: verifying access tokens, per-tool scopes.
//! 12. [`middleware`]: code around every request, on every transport and in both eras (audit,
//!     refusals, the [`middleware::RateLimit`] shipped here).
//! 13. `telemetry` (feature `otel`): OpenTelemetry spans and duration histograms by the MCP
//!     semantic conventions, and trace context carried in `_meta`.
//! 14. [`transport`]: stdio lines and the Streamable HTTP server side, serving what implements
//!     its trait (2025-era sessions it opens, 2026-era requests one by one); it knows nothing
//!     of tools or elicitation.
//! 15. [`server`]: builder, the one router of both eras, sessions, URL flows, tasks; runs on the transports.
//! 16. [`client`]: client, handlers of server requests, its transports (stdio, Streamable HTTP).
//! 17. [`testing`]: a client connected to a server in process, with scripted answers.
//!
//! Beside them, `tls` (feature `rustls`, on by default, with `http-client`, `auth` or
//! `http-tls`) holds the TLS settings of the HTTP client, the token verifiers and the HTTP
//! server: extra roots to trust, the server's certificate. It imports from none of the layers.
//! Neither does `state_map`: the application's shared state, one value per type (what
//! [`ServerBuilder::state`](server::ServerBuilder::state) registers and [`Context::state`] reads).
//! [`prelude`] re-exports the names most servers need. [`guide`] holds no code: it is the
//! guide, as documentation. `fuzzing` (hidden, only under `cfg(fuzzing)`, which `cargo fuzz`
//! sets) exposes internals to the fuzz targets.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod protocol;

pub mod engine;

pub mod elicit;

pub mod handler;

mod state_map;

pub mod apps;

pub mod tool;

pub mod prompt;

pub mod resource;

#[cfg(feature = "skills")]
pub mod skills;

pub mod multi_round;

pub mod task;

pub mod auth;

pub mod transport;

pub mod middleware;

#[cfg(feature = "otel")]
pub mod telemetry;

pub mod server;

pub mod client;

pub mod testing;

#[cfg(all(feature = "rustls", any(feature = "http-client", feature = "auth", feature = "http-tls")))]
pub mod tls;

pub mod guide;

#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;

pub use elicit::{ElicitError, Elicitation, UrlElicitationRequired};
pub use engine::{Peer, PeerError};
pub use handler::{Context, State};
pub use prompt::{ArgumentValue, PromptDef};
pub use protocol::{CallToolResult, Content, ErrorObject, LoggingLevel, PromptMessage, ResourceContents, Role};
pub use resource::ResourceDef;
pub use server::{BuildError, Server, ServerBuilder};
pub use tool::{Json, ToolDef};

#[cfg(feature = "macros")]
pub use typed_mcp_macros::{prompt, resource, tool, toolbox};

/// The names most servers need.
pub mod prelude {
    pub use crate::elicit::{Elicit, ElicitError, Elicitation, UrlElicitationRequired};
    pub use crate::handler::{Completer, Context, State};
    pub use crate::prompt::{ArgumentValue, PromptDef};
    pub use crate::protocol::{
        CallToolResult, Content, ErrorObject, GetPromptResult, LoggingLevel, PromptMessage, ResourceContents, Role,
    };
    pub use crate::resource::{AppResource, Blob, ResourceDef, ResourceUri};
    pub use crate::server::Server;
    pub use crate::tool::{Json, Params, ToolDef};
    pub use crate::{prompts, resources, tools};
    #[cfg(feature = "macros")]
    pub use typed_mcp_macros::{prompt, resource, tool, toolbox};
}

/// Items used by macro-generated code. Not a public API: no stability promise.
///
/// The name carries the version of `typed-mcp-macros` it goes with (typed-mcp depends on exactly that
/// version): code generated by another version names a module this crate does not have, and
/// fails to compile there, at the macro, rather than with odd errors further on.
#[doc(hidden)]
pub mod __private_v0_1 {
    pub use crate::apps::{Permissions, UiResourceMeta, Visibility};
    pub use crate::elicit::fields::single_select_schema;
    pub use crate::elicit::{
        ChoiceOption, Elicit, ElicitField, ElicitOptions, FieldKind, FormBuilder, FormField, FormSchema, OptionStyle,
        SchemaError, form_schema_for,
    };
    pub use crate::prompt::{IntoPromptResult, PromptArg, PromptCall, PromptDef, PromptFn};
    pub use crate::protocol::{ErrorObject, JsonObject, PromptArgument, TaskSupport, ToolAnnotations};
    pub use crate::resource::{
        IntoResourceContents, ResourceCall, ResourceDef, ResourceFn, ResourceInjected, ResourceVariable,
    };
    #[cfg(feature = "skills")]
    pub use crate::skills::Skills;
    pub use crate::tool::{InputSchema, IntoToolResult, ToolArgument, ToolBox, ToolCall, ToolDef, ToolFn};
    pub use serde_json;
    pub use std::sync::Arc;
    pub use std::sync::OnceLock;
    pub use std::vec;
    pub use std::vec::Vec;
}
