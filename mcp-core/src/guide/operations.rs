//! # Operating a server: telemetry, middleware, and the request in handlers
//!
//! A server that others rely on must be observable, and its operators must be able to put
//! policy around every call without touching every tool. This chapter covers three things:
//! OpenTelemetry traces and metrics, middleware, and what a handler can read of the request
//! beyond its arguments.
//!
//! ## Telemetry (feature `otel`)
//!
//! With the `otel` feature, `ServerBuilder::telemetry` and
//! `ClientBuilder::telemetry` take a `typed_mcp::telemetry::Telemetry`. Each request then gets
//! a span named by the OpenTelemetry MCP conventions (`tools/call get_weather`, kind `SERVER`
//! on the server, `CLIENT` on the client), with the conventions' attributes, and its duration
//! goes into `mcp.server.operation.duration` or `mcp.client.operation.duration`; sessions into
//! `mcp.server.session.duration` and `mcp.client.session.duration`. A failed request carries
//! `error.type`: the JSON-RPC code, or `tool_error` for a tool result with `isError`.
//!
//! Trace context travels in each request's `_meta` (`traceparent`, `tracestate`, `baggage`,
//! as the specification reserves them): our client writes it with the configured propagator,
//! and a server continues the trace it finds there, so a call shows as one trace from the agent
//! to the tool, through every round of a 2026-era call (one client span, a server span per
//! round) and into the work a task goes on with after its request was answered. A value that is
//! not valid trace context is ignored. Tool arguments and results are recorded only when asked
//! (`Telemetry::record_tool_arguments`, `record_tool_results`): they may be sensitive.
//!
//! The crate uses the `opentelemetry` API only: the application picks the SDK and exporters.
//! For the common case, the feature `otel-otlp` sets up OTLP/HTTP export from the standard
//! environment variables in one call (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`,
//! `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_METRIC_EXPORT_INTERVAL`…),
//! and does nothing when no endpoint is set:
//!
//! ```ignore
//! use typed_mcp::telemetry::{Telemetry, otlp_from_env, shutdown_signal};
//!
//! let otlp = otlp_from_env()?; // Some(guard) when OTEL_EXPORTER_OTLP_ENDPOINT is set
//! let mut builder = Server::builder("weather", "1.0.0").tools(tools![forecast]);
//! if let Some(otlp) = &otlp {
//!     builder = builder.telemetry(otlp.telemetry());
//! }
//! let server = builder.build()?;
//! tokio::select! {
//!     served = server.serve_stdio_or_http() => served?,
//!     () = shutdown_signal() => {} // SIGTERM or Ctrl-C
//! }
//! if let Some(otlp) = otlp {
//!     otlp.shutdown(); // flushes what is still buffered
//! }
//! ```
//!
//! Then point it at any collector: `OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318
//! OTEL_SERVICE_NAME=weather cargo run`. The example programs do exactly this.
//!
//! Which constructor: `Telemetry::global()` takes the providers the application installed
//! globally, and `Telemetry::new(&tracer_provider, &meter_provider)` any providers. When the
//! meter provider is the SDK's `SdkMeterProvider`, prefer `Telemetry::from_sdk` (feature
//! `otel-sdk`, part of `otel-otlp`; `OtlpGuard::telemetry` uses it): the same spans and
//! metrics, with each duration recorded through an instrument bound to its attribute set (the
//! SDK's bound instruments), which saves hashing and comparing the attributes on every
//! request. It is not taken for any meter provider because one that does not implement
//! binding would drop those records without a word.
//!
//! What it costs: without the feature, nothing; with it and no `Telemetry` given, one branch
//! per request. With it on, each request costs a span and a histogram record of the
//! OpenTelemetry SDK plus our reading of the request: about half a microsecond of CPU per
//! stdio echo call through `from_sdk` on this project's benchmark machine, and a little under
//! one through `new` (`bench operations` prints both, and the SDK's own share). That is
//! nothing beside a tool that does real work, and it is visible only on a server that answers
//! echo calls by the hundred thousand per second. The SDK's samplers take the standard
//! `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` (`parentbased_traceidratio` and `0.1`
//! keep one trace in ten, following the caller's decision when it made one); the duration
//! histograms still count every request.
//!
//! ## Middleware
//!
//! [`ServerBuilder::middleware`](crate::ServerBuilder::middleware) wraps every request the
//! router dispatches, on stdio and HTTP alike, in both eras. A
//! [`Middleware`](crate::middleware::Middleware) sees an
//! [`Incoming`](crate::middleware::Incoming) (method, target, `_meta`, identity, and over HTTP
//! the headers and the client's address) and either answers on its own or calls
//! [`Next::run`](crate::middleware::Next::run). [`middleware::from_fn`](crate::middleware::from_fn)
//! makes one from an async closure:
//!
//! ```
//! use typed_mcp::middleware::{self, Incoming, Next};
//! use typed_mcp::prelude::*;
//!
//! /// Deletes everything.
//! #[tool(destructive)]
//! fn wipe() -> String {
//!     "wiped".into()
//! }
//!
//! // Only administrators may call destructive tools.
//! let admins_only = middleware::from_fn(|request: Incoming, next: Next| async move {
//!     let admin = request.auth().is_some_and(|a| a.has_scope("admin"));
//!     if request.target() == Some("wipe") && !admin {
//!         return Err(ErrorObject::new(-32003, "`wipe` needs the `admin` scope"));
//!     }
//!     next.run().await
//! });
//! let server = Server::builder("ops", "1.0.0").tools(tools![wipe]).middleware(admins_only).build().unwrap();
//! # let _ = server;
//! ```
//!
//! [`RateLimit`](crate::middleware::RateLimit) is a token bucket per caller (the verified
//! subject or principal; for anonymous callers the client's address, so that opening a new
//! session does not reset a limit, else the session; or a key of yours); a request over the
//! limit is refused at once with [`RATE_LIMITED`](crate::middleware::RATE_LIMITED) and
//! `data.retryAfterMs`, never queued, so one caller's burst slows no one else. Behind a load
//! balancer every anonymous request comes from the balancer's address: name the header it
//! appends the client's address to with
//! `client_address_header` (feature `http`).
//!
//! ## The request in handlers
//!
//! A handler takes what it needs as arguments, as axum handlers do; one trait,
//! [`FromContext`](crate::handler::FromContext), serves tools, prompts and resources alike:
//! [`Context`](crate::Context), [`State<T>`](crate::State), [`Meta`](crate::handler::Meta) (the
//! request's `_meta`, typed for known keys and raw for the rest),
//! [`Identity`](crate::handler::Identity) (the verified caller), and over HTTP `Headers` (the
//! `Authorization` and `Cookie` headers are never passed on) and `Extension<T>` (what an axum
//! layer in front of the endpoint put in the request). A type of yours implementing
//! `FromContext` is taken as `Extract<YourType>`:
//!
//! ```
//! use typed_mcp::handler::{Extract, FromContext, Meta};
//! use typed_mcp::prelude::*;
//!
//! struct Tenant(String);
//!
//! impl FromContext for Tenant {
//!     fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
//!         ctx.meta()
//!             .get_str("com.example/tenant")
//!             .map(Tenant)
//!             .ok_or_else(|| ErrorObject::invalid_params("`_meta` must name `com.example/tenant`"))
//!     }
//! }
//!
//! /// Lists the tenant's invoices.
//! #[tool]
//! fn invoices(who: Extract<Tenant>, meta: Meta) -> String {
//!     let trace = meta.traceparent().unwrap_or_default();
//!     format!("invoices of {} (trace {trace})", who.0.0)
//! }
//! # let _ = tools![invoices];
//! ```
