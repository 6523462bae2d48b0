//! # Tools in detail
//!
//!
//! - Arguments become the tool's `inputSchema` (`Option<T>` arguments are optional, never
//!   nullable); doc comments become descriptions; `#[tool(name, title, description, read_only,
//!   destructive, idempotent, open_world)]` override them; `#[tool(scopes = ["notes:write"])]`
//!   names the OAuth scopes a call needs on a protected server (see
//!   [Protecting an HTTP server](super::authorization)); `#[tool(task = "optional")]` lets
//!   it run as a task (see [Long-running tools](super::tasks)). `Context` and
//!   `State<T>` arguments are injected, not part of the schema.
//! - Return text-like values, `Content`, `Vec<Content>`, `CallToolResult`, `Json<T>` (structured
//!   output with an `outputSchema`), or `Result<T, E>`: an `Err` becomes a result with
//!   `isError: true` carrying the message (an `ErrorObject` or `UrlElicitationRequired` becomes a
//!   JSON-RPC error instead).
//! - A call with a missing argument, or one of the wrong type, never reaches your function. From
//!   revision 2025-11-25 on (and in the 2026-07-28 era) it is answered as a tool error, a result
//!   with `isError: true` whose text names the argument and the problem (``missing required
//!   argument `b` ``), so the model can correct its call; sessions of older revisions get JSON-RPC
//!   error -32602 with the same message, as their spec says. What is still a protocol error is
//!   -32602 in every revision: an unknown tool, or `tools/call` parameters of the wrong shape (no
//!   `name`, `arguments` that are not an object). A hand-written tool that returns
//!   `ErrorObject::invalid_params(…)` is answered the same way.
//! - Methods: put `#[toolbox]` on an `impl` block and `#[tool]` on its `&self` methods, then
//!   register with `ServerBuilder::toolbox(value)`.
//! - Without macros: `ToolDef::new(name, input_schema, |call| async { … })`; the handler reads
//!   its arguments from the request's text with `call.arguments.get::<T>("name")` (or all at
//!   once with `call.arguments.deserialize::<Struct>()`), with no JSON tree in between.
//! - A tool that is not `async` (or `ToolDef::new_sync`) runs as soon as its call is read and is
//!   answered at once, with no future at all; keep such tools quick, since the session reads its
//!   next message after them. Long or blocking work belongs in an `async` tool with
//!   `tokio::task::spawn_blocking`.
//! - Wrong argument or return types fail to compile at the offending token, with a note listing
//!   the allowed kinds.
//!
