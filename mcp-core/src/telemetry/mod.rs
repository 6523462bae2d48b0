//! OpenTelemetry traces and metrics by the MCP semantic conventions (feature `otel`).
//!
//! [`Telemetry`], given to [`ServerBuilder::telemetry`](crate::ServerBuilder::telemetry) or
//! [`ClientBuilder::telemetry`](crate::client::ClientBuilder::telemetry), makes:
//!
//! - a `SERVER` span per request a server receives and a `CLIENT` span per request a client
//!   sends (a 2026-era call over several rounds is one client span; each round a server span
//!   under it), named `{mcp.method.name} {target}` (`tools/call get_weather`), with the
//!   conventions' attributes (`mcp.method.name`, `gen_ai.tool.name`, `gen_ai.prompt.name`,
//!   `mcp.resource.uri`, `gen_ai.operation.name`, `jsonrpc.request.id`, `mcp.protocol.version`,
//!   `mcp.session.id`, `network.transport`, `client.address`/`server.address`) and, when it
//!   fails, `error.type` (the JSON-RPC code, or `tool_error` for a result with `isError`),
//!   `rpc.response.status_code` and an error status;
//! - the histograms `mcp.server.operation.duration`, `mcp.client.operation.duration`,
//!   `mcp.server.session.duration` and `mcp.client.session.duration` (seconds, with the
//!   conventions' bucket boundaries);
//! - trace context through `_meta`: a client injects `traceparent`, `tracestate` and `baggage`
//!   with the configured propagator; a server continues the trace it finds there, and links
//!   the context of the HTTP request that carried the message when it has one. A malformed
//!   value is ignored.
//!
//! On a shared deployment (`HttpConfig::backplane`), a request that runs on its session's owner
//! but landed on another instance is one trace too: the instance it landed on has the `SERVER`
//! span of what it received and, under it, the `CLIENT` span of the hop to the owner, whose
//! context the forwarded request carries in its `_meta`; the owner's `SERVER` span is the hop's
//! child.
//!
//! Tool arguments and results are recorded only when asked
//! ([`record_tool_arguments`](Telemetry::record_tool_arguments),
//! [`record_tool_results`](Telemetry::record_tool_results)): they may be sensitive.
//!
//! Followed: the MCP page of the OpenTelemetry GenAI semantic conventions
//! (`semantic-conventions-genai`, v0.1.0, status Development).
//!
//! Without this feature none of it is compiled; with it and no `Telemetry` given, a request
//! costs one branch more. With the SDK's meter provider, `Telemetry::from_sdk` (feature
//! `otel-sdk`) records durations through instruments bound to their attribute sets, which
//! costs less per request than [`Telemetry::new`].

mod attributes;
#[cfg(feature = "otel-sdk")]
mod bound;
mod client;
#[cfg(feature = "http")]
mod hop;
mod operation;
#[cfg(feature = "otel-otlp")]
mod otlp;
mod propagation;
mod server;

use std::sync::Arc;

use opentelemetry::metrics::{Histogram, MeterProvider};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanBuilder, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context as OtelContext, InstrumentationScope};

#[cfg(feature = "otel-otlp")]
pub use otlp::{OtlpError, OtlpGuard, otlp_from_env, shutdown_signal};

pub(crate) use attributes::Failure;
use attributes::SetKey;
#[cfg(feature = "http")]
pub(crate) use hop::{Forwarding, Hop};
pub(crate) use operation::Operation;
pub(crate) use server::Received;

/// The conventions' bucket boundaries for the MCP duration histograms, in seconds.
pub const DURATION_BUCKETS: [f64; 14] =
    [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// The meaning of `network.transport` for each of our transports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Transport {
    /// stdio, or any reader/writer pair: `pipe`.
    Pipe,
    /// Streamable HTTP: `tcp`.
    Tcp,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// Traces and metrics for a server or a client. Cheap to clone. See the
/// [module documentation](self).
#[derive(Clone)]
pub struct Telemetry {
    inner: Arc<Instruments>,
    /// What the application chose; kept beside the shared instruments, so that setting an
    /// option on a clone changes that clone.
    options: Options,
}

#[derive(Clone, Default)]
struct Options {
    propagator: Option<Arc<dyn TextMapPropagator + Send + Sync>>,
    record_arguments: bool,
    record_results: bool,
}

struct Instruments {
    tracer: Box<dyn Spans>,
    /// Operation histograms bound to their attribute sets, when the meter provider is known to
    /// implement binding (see [`Telemetry::from_sdk`]).
    #[cfg(feature = "otel-sdk")]
    bound: Option<bound::Bound>,
    server_operation: Histogram<f64>,
    client_operation: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
}

impl Instruments {
    /// The histogram of operations seen as a server, or as a client.
    fn operation(&self, server: bool) -> &Histogram<f64> {
        if server { &self.server_operation } else { &self.client_operation }
    }

    /// Records an operation's duration in the attribute set `key` names: through the
    /// instrument bound to the set when the provider binds, else with the set's attributes.
    fn record_keyed(&self, key: SetKey, seconds: f64) {
        let histogram = self.operation(key.server);
        #[cfg(feature = "otel-sdk")]
        if let Some(bound) = &self.bound {
            return bound.record(histogram, key, seconds);
        }
        histogram.record(seconds, &key.attributes());
    }
}

/// Starts spans with the application's tracer, whatever its type: the span goes into the
/// context it parents as it is (`BoxedTracer` would box it once more, and every call on it
/// would go through two tables).
trait Spans: Send + Sync {
    /// The context of `builder`'s span, started as a child of `parent`.
    fn start(&self, builder: SpanBuilder, parent: &OtelContext) -> OtelContext;
}

impl<T> Spans for T
where
    T: Tracer + Send + Sync,
    T::Span: Send + Sync + 'static,
{
    fn start(&self, builder: SpanBuilder, parent: &OtelContext) -> OtelContext {
        parent.with_span(builder.start_with_context(self, parent))
    }
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("record_tool_arguments", &self.options.record_arguments)
            .field("record_tool_results", &self.options.record_results)
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Telemetry through the process-wide providers and propagator
    /// (`opentelemetry::global`), as the application set them up.
    pub fn global() -> Self {
        Self::new(&opentelemetry::global::tracer_provider(), &*opentelemetry::global::meter_provider())
    }

    /// Telemetry through these providers (and the global propagator, unless
    /// [`propagator`](Self::propagator) sets one).
    pub fn new<T>(tracer_provider: &T, meter_provider: &dyn MeterProvider) -> Self
    where
        T: TracerProvider,
        T::Tracer: Send + Sync + 'static,
        <T::Tracer as Tracer>::Span: Send + Sync + 'static,
    {
        Self::build(Box::new(tracer_provider.tracer_with_scope(Self::scope())), meter_provider, false)
    }

    /// Telemetry through these providers, the meter provider being the OpenTelemetry SDK's
    /// (feature `otel-sdk`). The same as [`new`](Self::new), faster: each duration is recorded
    /// through an instrument bound to its attribute set (the SDK's bound instruments), which
    /// saves hashing and comparing the attributes on every request. Only the SDK's provider is
    /// taken here, because a provider that does not implement binding would drop what is
    /// recorded that way.
    #[cfg(feature = "otel-sdk")]
    pub fn from_sdk<T>(tracer_provider: &T, meter_provider: &opentelemetry_sdk::metrics::SdkMeterProvider) -> Self
    where
        T: TracerProvider,
        T::Tracer: Send + Sync + 'static,
        <T::Tracer as Tracer>::Span: Send + Sync + 'static,
    {
        Self::build(Box::new(tracer_provider.tracer_with_scope(Self::scope())), meter_provider, true)
    }

    /// The instrumentation scope of our spans and instruments.
    fn scope() -> InstrumentationScope {
        InstrumentationScope::builder("typed-mcp")
            .with_version(env!("CARGO_PKG_VERSION"))
            .with_schema_url("https://opentelemetry.io/schemas/1.41.0")
            .build()
    }

    /// `bind`: whether the meter provider implements bound instruments.
    fn build(tracer: Box<dyn Spans>, meter_provider: &dyn MeterProvider, bind: bool) -> Self {
        #[cfg(not(feature = "otel-sdk"))]
        let _ = bind;
        let scope = Self::scope;
        let meter = meter_provider.meter_with_scope(scope());
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        Telemetry {
            inner: Arc::new(Instruments {
                tracer,
                #[cfg(feature = "otel-sdk")]
                bound: bind.then(bound::Bound::default),
                server_operation: histogram(
                    "mcp.server.operation.duration",
                    "MCP request duration as observed on the receiver, from receipt until the result is sent.",
                ),
                client_operation: histogram(
                    "mcp.client.operation.duration",
                    "MCP request duration as observed on the sender, from sending until the result is received.",
                ),
                server_session: histogram(
                    "mcp.server.session.duration",
                    "The duration of the MCP session on the server.",
                ),
                client_session: histogram(
                    "mcp.client.session.duration",
                    "The duration of the MCP session on the client.",
                ),
            }),
            options: Options::default(),
        }
    }

    /// Propagates trace context with `propagator` instead of the global one (for example
    /// `TraceContextPropagator` and `BaggagePropagator` of `opentelemetry_sdk`, composed).
    pub fn propagator(mut self, propagator: impl TextMapPropagator + Send + Sync + 'static) -> Self {
        self.options.propagator = Some(Arc::new(propagator));
        self
    }

    /// Records a tool call's arguments on its spans (`gen_ai.tool.call.arguments`). Off by
    /// default: arguments may hold what users would not want in a trace store.
    pub fn record_tool_arguments(mut self, on: bool) -> Self {
        self.options.record_arguments = on;
        self
    }

    /// Records a successful tool call's result on its spans (`gen_ai.tool.call.result`). Off
    /// by default.
    pub fn record_tool_results(mut self, on: bool) -> Self {
        self.options.record_results = on;
        self
    }
}
