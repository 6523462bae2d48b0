//! # The examples
//!
//! The repository's `examples/` directory holds complete programs, one file each, that use the
//! published crates and ordinary ones (`serde`, `schemars`, `tokio`, `tracing-subscriber`,
//! `axum` where a page is served) and nothing else of the repository: copy one into a project
//! of your own to start. Each file's doc comment says what it shows and how to run it; from a
//! clone, run one with `cargo run -p examples --bin NAME`.
//!
//! | example | what it shows | run it |
//! | ------- | ------------- | ------ |
//! | `quickstart` | three tools (`add`, `echo`, `text_stats` with structured output); stdio, or Streamable HTTP with `--port` | `cargo run -p examples --bin quickstart` (add `-- --port 8080` for HTTP) |
//! | `elicitation` | your first elicitation: `create_project` asks for a form (accept, decline, cancel), `process_data` asks for a confirmation only for long input | `cargo run -p examples --bin elicitation` |
//! | `url_elicitation` | URL mode: `auth_via_url` sends the user to a page the program serves, `protected_action` answers -32042 until they have been there | `cargo run -p examples --bin url_elicitation` (page on `--url-port`, default 8931) |
//! | `tasks` | a long-running tool as a task (2026-07-28 tasks extension): `deploy` asks for a confirmation half-way | `cargo run -p examples --bin tasks` (add `-- --port 8080` for HTTP) |
//! | `apps` | an MCP App: a task board whose view lists, reorders and adds tasks through the host's `tools/call`, an app-only tool, and an elicitation beside it (`plan_task`) | `cargo run -p examples --bin apps -- --port 8080` (see the [`apps`](super::apps) chapter) |
//! | `notes` | resources and templates with subscriptions, a prompt with argument completion, logging, sampling and roots | `cargo run -p examples --bin notes` (add `-- --port 8080` for HTTP) |
//! | `shared` | several instances behind a load balancer sharing sessions, questions and tasks through Redis | `cargo run -p examples --bin shared -- --port 8081 --redis redis://127.0.0.1:6379` (one per port) |
//! | `protected` | Streamable HTTP behind OAuth 2.1: JWT access tokens from one issuer, per-tool scopes | `cargo run -p examples --bin protected -- --port 8080 --issuer https://auth.example.com` |
//! | `audited` | a server run for others: every request audited (one JSON line each) and each caller rate-limited by middleware, traces and metrics over OTLP | `cargo run -p examples --bin audited -- --audit-log audit.jsonl --rate 60` |
//!
//! # Serving over stdio or HTTP from one `main`
//!
//! One `main` can serve both a host that starts your program and a client that connects to it:
//! `Server::serve_stdio_or_http` (feature `http`) speaks
//! stdio unless the program was started with `--port N` (or `PORT=N`), and then serves
//! `http://127.0.0.1:N/mcp`. Started by hand in a terminal, a stdio server prints how to try it
//! on stderr; started by a host through a pipe, it writes nothing but JSON-RPC to stdout.
//!
//! ```rust,no_run
//! use typed_mcp::prelude::*;
//!
//! /// Returns the text it is given.
//! #[tool]
//! fn echo(text: String) -> String {
//!     text
//! }
//!
//! # #[cfg(feature = "http")]
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder("echo", "1.0.0").tools(tools![echo]).build()?;
//!     server.serve_stdio_or_http().await?;
//!     Ok(())
//! }
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! ```
