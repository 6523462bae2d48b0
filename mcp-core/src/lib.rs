//! # mcp-core
//!
//! Typed [Model Context Protocol](https://modelcontextprotocol.io) servers in Rust.
//!
//! Annotate functions with `#[tool]`, register them on a [`Server`], and serve it over stdio:
//!
//! ```no_run
//! use mcp_core::prelude::*;
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
//! # Layers
//!
//! Bottom up; a module imports only from the modules above it in this list.
//!
//! 1. [`protocol`]: wire types (JSON-RPC envelope, MCP messages of each revision, error codes); no I/O.
//! 2. [`engine`]: one session's message pump (ids, pending answers, cancellation, timeouts).
//! 3. [`elicit`]: the `Elicit` trait, form schemas, content validation, `Elicitation<T>`.
//! 4. [`handler`]: what a handler may ask of its request (`Context`, `State`, `Completer`).
//! 5. [`tool`](mod@tool): tool definitions, argument extraction, result conversion.
//! 6. [`prompt`](mod@prompt): prompt definitions and their arguments.
//! 7. [`resource`](mod@resource): resources, URI templates, their contents.
//! 8. [`multi_round`]: multi round-trip requests (2026-07-28): answers carried in the retry, sealed `requestState`.
//! 9. [`transport`]: stdio lines and the Streamable HTTP server side, serving sessions it opens through a trait.
//! 10. [`server`]: builder, routing, sessions of both eras, URL flows; runs on the transports.
//! 11. [`client`]: client, handlers of server requests, its transports (stdio, Streamable HTTP).
//! 12. [`testing`]: a client connected to a server in process, with scripted answers.

pub mod protocol;

pub mod engine;

pub mod elicit;

pub mod handler;

pub mod tool;

pub mod prompt;

pub mod resource;

pub mod multi_round;

pub mod transport;

pub mod server;

pub mod client;

pub mod testing;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;

/// Multi round-trip requests, under the acronym they had: see [`multi_round`].
#[deprecated(since = "0.1.0", note = "renamed `multi_round`")]
pub mod mrtr {
    pub use crate::multi_round::*;
}

pub use elicit::{ElicitError, Elicitation, UrlElicitationRequired};
pub use engine::{Peer, PeerError};
pub use handler::{Context, State};
pub use prompt::{ArgumentValue, PromptDef};
pub use protocol::{CallToolResult, Content, ErrorObject, LoggingLevel, PromptMessage, ResourceContents, Role};
pub use resource::ResourceDef;
pub use server::{BuildError, Server, ServerBuilder};
pub use tool::{Json, ToolDef};

#[cfg(feature = "macros")]
pub use mcp_macros::{prompt, resource, tool, toolbox};

/// The README's examples, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The names most servers need.
pub mod prelude {
    pub use crate::elicit::{Elicit, ElicitError, Elicitation, UrlElicitationRequired};
    pub use crate::handler::{Completer, Context, State};
    pub use crate::prompt::{ArgumentValue, PromptDef};
    pub use crate::protocol::{
        CallToolResult, Content, ErrorObject, GetPromptResult, LoggingLevel, PromptMessage, ResourceContents, Role,
    };
    pub use crate::resource::{Blob, ResourceDef, ResourceUri};
    pub use crate::server::Server;
    pub use crate::tool::{Json, Params, ToolDef};
    pub use crate::{prompts, resources, tools};
    #[cfg(feature = "macros")]
    pub use mcp_macros::{prompt, resource, tool, toolbox};
}

/// Items used by macro-generated code. Not a public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use crate::elicit::fields::single_select_schema;
    pub use crate::elicit::{
        ChoiceOption, Elicit, ElicitField, ElicitOptions, FieldKind, FormBuilder, FormField, FormSchema, OptionStyle,
        SchemaError, form_schema_for, type_schema,
    };
    pub use crate::prompt::{IntoPromptResult, PromptArg, PromptCall, PromptDef, PromptFn};
    pub use crate::protocol::{ErrorObject, JsonObject, PromptArgument, ToolAnnotations};
    pub use crate::resource::{
        IntoResourceContents, ResourceCall, ResourceDef, ResourceFn, ResourceInjected, ResourceVariable,
    };
    pub use crate::tool::{InputSchema, IntoToolResult, ToolArgument, ToolBox, ToolCall, ToolDef, ToolFn};
    pub use serde_json;
    pub use std::sync::Arc;
    pub use std::sync::OnceLock;
    pub use std::vec;
    pub use std::vec::Vec;
}

#[cfg(test)]
mod renamed {
    /// The old public names still resolve, to the same items, for one release.
    #[test]
    #[allow(deprecated)]
    fn old_names_still_resolve() {
        assert_eq!(crate::server::MODERN_PROTOCOL_VERSION, crate::protocol::PROTOCOL_VERSION_2026_07_28);
        let key = crate::mrtr::state::StateKey::from_bytes([7; 32]);
        let _: crate::multi_round::state::StateKey = key;
        assert_eq!(crate::protocol::base64::encode(b"foob"), "Zm9vYg==");
        assert_eq!(crate::protocol::base64::decode("Zm9vYg").as_deref(), Some(&b"foob"[..]));
    }
}
