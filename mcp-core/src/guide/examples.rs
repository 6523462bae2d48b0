//! # The examples
//!
//! The repository's `examples/` directory holds complete programs, one file each, that use the
//! published crates and ordinary ones (`serde`, `schemars`, `tokio`, `tracing-subscriber`,
//! `axum` where a page is served) and nothing else of the repository: copy one into a project
//! of your own to start, turning on the features of `typed-mcp` its row names (besides the
//! default ones, `macros` and `rustls`). The table below is the one of `examples/README.md`;
//! each file's doc comment says the same and lists its other options. From a clone, run one
//! with `cargo run -p examples --bin NAME`; started with `--port N` (or `PORT=N`), every one
//! serves Streamable HTTP at `http://127.0.0.1:N/mcp`, and all but `shared` and `protected`
//! speak stdio otherwise.
//!
//! To try one, build them with `cargo build -p examples` and run the row's command from the
//! clone's root: it prints what follows the arrow. A server the row shows "running" is started
//! first, in a terminal of its own. `npx @modelcontextprotocol/inspector@2.12.0` is the
//! [MCP Inspector](https://www.npmjs.com/package/@modelcontextprotocol/inspector) (Node.js
//! 22.19+); the repository's tests run every one of these commands and look for that output.
//!
//! | example | what it teaches | features | try it |
//! | ------- | --------------- | -------- | ------ |
//! | `quickstart` | tools from plain functions: `add`, `echo`, and `text_stats` with structured output; stdio or Streamable HTTP from one `main` | `http`, `otel-otlp` | `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/quickstart --method tools/call --tool-name add --tool-arg a=2 b=40` → `"42"` |
//! | `elicitation` | your first elicitation: `create_project` asks for a form (accept, decline, cancel), `process_data` asks for a confirmation only for input over 100 characters; the repository's README answers the form with `mcpdo` | `http` | `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/elicitation --method tools/call --tool-name process_data --tool-arg data=hello` → `Processed 5 characters` |
//! | `url_elicitation` | URL mode: `auth_via_url` sends the user to a page the program serves (on `--url-port`, default 8931), `protected_action` answers -32042 until they have been there (a client that did not declare URL mode is refused) | `http`, `otel-otlp` | `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/url_elicitation --method tools/call --tool-name protected_action` → `the client did not declare elicitation.url` (the Inspector's CLI opens no page) |
//! | `tasks` | a long-running tool as a task (2026-07-28 tasks extension): `deploy` asks for a confirmation half-way, which waits in the task until the client answers it | `http`, `otel-otlp` | `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/tasks --method tools/list` → `"taskSupport": "optional"` |
//! | `apps` | an MCP App: a task board whose view (`apps/board.html`, compiled in; `--view-from-disk` while editing it) lists, reorders and adds tasks by calling tools through the host; `move_task` is for the view only; `plan_task` asks for a form beside it | `http`, `otel-otlp` | `target/debug/apps --port 8080` running: `npx @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:8080/mcp --method tools/call --tool-name show_board --app-info` → `"resourceUri":"ui://task-board/board.html"` |
//! | `notes` | resources and templates with subscriptions, a prompt with argument completion, logging, sampling and roots | `http`, `otel-otlp` | `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/notes --method resources/read --uri notes://index` → `"text": "welcome"` |
//! | `skills` | agent skills (the skills extension): the folder `examples/skills/` (another with `--dir PATH`) listed with `skills/list`, each file a `skill://` resource with its digest and size, folders read with `resources/directory/read`; `--watch` serves and announces changes to the folder; a skill that breaks a rule stops it at start, naming the file | `skills`, `http`, `otel-otlp` | `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/skills --method resources/read --uri skill://release-notes/SKILL.md` → `"mimeType": "text/markdown"` |
//! | `shared` | several instances behind a load balancer sharing sessions, questions and tasks through Redis (`--redis URL`; no sticky sessions) | `http`, `otel-otlp`; and typed-mcp-redis | `redis-server --port 6379` and `target/debug/shared --port 8081 --redis redis://127.0.0.1:6379` running: `npx @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:8081/mcp --method tools/call --tool-name served_by` → `Served by http://127.0.0.1:8081/mcp` |
//! | `protected` | Streamable HTTP behind OAuth 2.1: JWT access tokens from one issuer (`--issuer URL`), per-tool scopes, and the challenge that tells a client where to get a token; TLS and DPoP as options; several instances sharing sessions on one Redis (`--redis URL`, `--resource`, `--secret`) | `auth`, `http-tls`, `otel-otlp`; and typed-mcp-redis with `dpop` | `target/debug/protected --port 8080 --issuer https://auth.example.com` running: `curl -i http://127.0.0.1:8080/mcp` → `401 Unauthorized`, `www-authenticate: Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"` |
//! | `audited` | a server run for others: middleware audits every request (one JSON line each, to `--audit-log FILE` or stderr) and rate-limits each caller (`--rate N` calls a minute) | `http`, `otel-otlp` | `npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/audited --method tools/call --tool-name echo --tool-arg text=hi` → `"target":"echo"` (its audit line, on stderr) |
//!
//! The [apps](super::apps) chapter says which hosts render the `apps` example's view, and the
//! [hosts](super::hosts) chapter how to add any example to a host.
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
