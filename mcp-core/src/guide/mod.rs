//! The guide: everything past the first server, one chapter a topic.
//!
//! The [crate docs](crate) and the README show a first server and a first elicitation. These
//! chapters go further; each is a page of prose around code that compiles (every sample here is
//! a doctest, run by `cargo test -p typed-mcp`). Read them in order the first time, or jump to
//! the one you need:
//!
//! | chapter | what it covers |
//! | --- | --- |
//! | [`tools`] | `#[tool]` and `#[toolbox]`: arguments and their schema, results, tool errors and protocol errors, shared state, progress and cancellation |
//! | [`elicitation`] | asking the user mid-call: typed forms and the schema they become, decline and cancel, shorthands, URL mode, handlers replayed in the 2026-07-28 era |
//! | [`testing`] | testing tools in process, with scripted answers, in both eras |
//! | [`hosts`] | using a server from a host: Claude Desktop, VS Code, Streamable HTTP, logs, the MCP Inspector, which hosts elicit |
//! | [`resources_and_prompts`] | resources and templates, prompts, logging, completion, sampling, roots, dynamic lists |
//! | [`http`] | Streamable HTTP: serving, mounting in axum, HTTPS, limits |
//! | [`transports`] | a transport of your own: a Unix socket, framed messages, a WebSocket |
//! | [`authorization`] | a protected server: OAuth 2.1 resource server, token verifiers, scopes per tool |
//! | [`eras`] | one handler for 2025-11-25 sessions and 2026-07-28 requests |
//! | [`tasks`] | long-running tools that outlive their request |
//! | [`apps`] | MCP Apps: tools with an interactive view, its content security policy, hosts without apps |
//! | `skills` (feature `skills`) | agent skills: serving a folder of skills (checked at build, or compiled in), reading them verified from a host |
//! | [`client`] | using servers from Rust: transports, handlers of the server's questions, OAuth |
//! | [`deployment`] | several instances behind a load balancer, sharing sessions through Redis |
//! | [`gateway`] | the `mcp-gateway` program and library: many servers behind one endpoint, elicitation across eras |
//! | [`operations`] | OpenTelemetry traces and metrics, middleware and rate limits, `_meta` and headers in handlers |
//! | [`macros`] | what the macros generate, and how to read it |
//! | [`examples`] | the example programs, and what each one shows |
//!
//! The guide is part of the API documentation (`cargo doc -p typed-mcp --open`), so it is
//! always the guide of the version you depend on.

pub mod apps;
pub mod authorization;
pub mod client;
pub mod deployment;
pub mod elicitation;
pub mod eras;
pub mod examples;

pub mod gateway;
pub mod hosts;
pub mod http;
pub mod macros;
pub mod operations;
pub mod resources_and_prompts;
#[cfg(feature = "skills")]
pub mod skills;
pub mod tasks;
pub mod testing;
pub mod tools;
pub mod transports;
