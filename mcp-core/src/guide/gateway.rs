//! # The gateway: one endpoint in front of many servers, either era on either side
//!
//! The package `typed-mcp-gateway` (folder `mcp-gateway/`) is a library, `Gateway`, and a
//! program, `mcp-gateway`, that mount other MCP servers (the **upstreams**) on one of our
//! [`Server`](crate::Server)s. Clients see one endpoint: each upstream's tools and prompts under
//! its prefix (`"<name>_"` by default, `""` for none), its resources and templates at their own
//! URIs. Two upstreams offering the same name are refused when the gateway starts.
//!
//! ```text
//! mcp-gateway --config gateway.toml                   # stdio
//! mcp-gateway --config gateway.toml --port 8080       # Streamable HTTP at /mcp, both eras
//! mcp-gateway --config gateway.toml --threads 2       # stdio on two worker threads
//! ```
//!
//! Over stdio the program runs one worker thread unless `--threads` says otherwise: it serves
//! one client and does little work per message, so a second worker mostly hands messages
//! between threads while the upstream servers it started wait for a core (on two cores, one
//! worker relays about 1.4 times the calls per second of two). Over HTTP it runs one per core.
//!
//! The configuration (see `examples/gateway.toml`) has one `[[upstream]]` table per server:
//! `name`; `command = ["program", "arg"]` with optional `env` and `cwd`, or `url` with optional
//! `headers`, `bearer` or `[upstream.oauth]` client credentials; `prefix`; `allow` and `deny`
//! lists of the upstream's tool names; `start = "eager" | "lazy"`; `era = "auto" |
//! "2025-11-25" | "2026-07-28"`. A file that breaks a rule fails at start with
//! `file:line:column: reason`.
//!
//! ## In front
//!
//! `Gateway::server_builder()` returns a [`ServerBuilder`](crate::ServerBuilder) with dynamic
//! lists; whatever you add to it (middleware, [`RateLimit`](crate::middleware::RateLimit),
//! telemetry, a shared request-state key, the OAuth resource server of the HTTP endpoint)
//! applies to every upstream's tools, then `Gateway::start(builder)` builds it and mounts the
//! upstreams.
//!
//! **Telemetry across the hop.** `Gateway::telemetry(telemetry)` (before `server_builder`)
//! serves with that `Telemetry` (`typed_mcp::telemetry`, feature `otel`) and gives it to the
//! gateway's clients of its upstreams: a client's request is a `SERVER` span continuing the client's
//! trace (`traceparent` in `_meta` or the HTTP headers), the request upstream a `CLIENT` span
//! under it that passes `traceparent` on, and an upstream with telemetry of its own continues
//! the same trace. The program does this when `OTEL_EXPORTER_OTLP_ENDPOINT` names a collector
//! (the other standard `OTEL_*` variables apply; an upstream started over stdio inherits them
//! unless its `env` says otherwise).
//!
//! ## Elicitation across eras
//!
//! What an upstream asks during a call (a form, a URL flow, a sampling or roots request)
//! reaches the client in the client's era: `elicitation/create` in a 2025-11-25 session, an
//! `input_required` result in the 2026-07-28 era. The upstream's request runs in a task of its
//! own; the gateway's handler answers its questions in order. A 2026-era client's retry runs the
//! handler again from the start ([`multi_round`](crate::multi_round)): the gateway finds the
//! upstream request still waiting under the request's
//! [`round_trip_id`](crate::Context::round_trip_id) (held at most 15 minutes), replays the
//! questions already answered (their answers come from the sealed request state) and passes
//! the new answer on. A 2026 upstream's `input_required` is answered by the gateway's client,
//! which asks the downstream client and retries upstream. `-32042` errors pass through to a
//! 2025-11-25 client, and the upstream's `notifications/elicitation/complete` reaches the session
//! that was asked. A 2026-07-28 client gets each flow of a `-32042` as a URL input request; its
//! retry, once the user accepted every flow, waits (at most 45 seconds, or until the client
//! gives up) for the upstream to announce the flows complete before calling it again, since
//! that era's client retries at once while the user is still in the browser. An upstream that
//! never announces completion is called again when the wait ends. A flow the user declined ends
//! the request without another upstream call.
//!
//! **A retry that lands on another gateway instance** does not find the held upstream request
//! (it lives in the instance's memory). If the instances share the request-state key, the
//! retry is accepted, the upstream call is made again from the start, and the answers sealed in
//! the state answer its questions in the order it asks them: this holds when the upstream tool
//! asks the same questions in the same order and is safe to run again. Otherwise keep a
//! client's rounds on one instance (sticky routing).
//!
//! ## Lifecycle
//!
//! Stdio upstreams start with the gateway (or on the first request, `start = "lazy"`), are
//! started again with a pause doubling from 100 ms to 30 s when they die, and are stopped with
//! the gateway; a call in flight when its upstream dies ends with an error that says so. An HTTP
//! upstream that forgot the session (404) gets a new one and the request is made once more.
//! Each call runs on its own, so a slow or dead upstream stalls no other.
//!
//! ## What a relayed call costs
//!
//! `bench gateway` (in `bench/`) calls the benchmark server's echo tool through the gateway and
//! directly, in turn, on one machine. On two cores:
//!
//! - **stdio**, 16 calls in flight: about half the calls per second of calling the server
//!   directly (102,506 against 201,788, 0.52×; p50 138 µs against 71 µs). The direct run
//!   leaves a core partly idle, and the gateway spends about 10 µs of CPU on a call.
//! - **Streamable HTTP**, 64 sessions: a quarter (22,656 against 91,535, 0.25×). Here the direct
//!   run already keeps both cores busy: per call, the server spends about 15 µs and the
//!   benchmark's client 6 µs. Through the gateway the same cores also carry the gateway's part,
//!   which is the work of a server (the client's request) and of a client (the request
//!   upstream): 55 µs. Even a gateway that cost no more than the server plus the leanest client
//!   would halve the calls per second on two cores; with more cores than busy processes the
//!   bound is the latency of the hop instead.
//!
//! ## Known limits
//!
//! Over stdio, a 2025-era upstream's request names no call, so with several calls in flight on
//! one upstream its question goes to the oldest. All clients share one upstream connection
//! (what the upstream keeps per session is shared). A client's task is the gateway's task: a
//! call made as a task runs as a task of the gateway's, which calls the upstream plainly, or,
//! for a tool its upstream runs only as a task, follows the upstream's task to its end. Such a
//! call becomes the gateway's task when the upstream's call becomes one
//! ([`task::hold_start`](crate::task::hold_start)), so that what the upstream asks before (its
//! `input_required` rounds) reaches the client in the call's own rounds, as it would direct.
//! The upstream's own task ids are not shown to the client.
