//! # Serving over HTTP
//!
//! With the `http` feature, `server.serve_http(addr, None)` serves MCP's Streamable HTTP transport
//! at `/mcp`, and `server.streamable_http(HttpConfig::default()).router()` is an axum router to
//! mount in an existing application. Messages a tool sends while handling a request (elicitation,
//! progress, logs) travel on that request's own SSE stream; event ids and `Last-Event-ID`
//! resumption, session ids, `Host`/`Origin` checks (loopback only by default) and idle expiry
//! are built in. `HttpConfig::stateless(true)` serves without sessions (no server-to-client
//! requests then). A dropped connection does not cancel a request, but one whose stream nobody
//! resumes within `HttpConfig::resume_window` (a minute by default) is cancelled, so a tool does
//! not wait on a user whose client is gone. Every example takes `--port N` to serve HTTP instead
//! of stdio.
