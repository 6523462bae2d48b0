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

#[cfg(feature = "otel-sdk")]
mod bound;
#[cfg(feature = "otel-otlp")]
mod otlp;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use opentelemetry::metrics::{Histogram, MeterProvider};
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{SpanBuilder, SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context as OtelContext, InstrumentationScope, KeyValue};

#[cfg(feature = "otel-otlp")]
pub use otlp::{OtlpError, OtlpGuard, otlp_from_env, shutdown_signal};

use crate::protocol::JsonObject;
use crate::protocol::methods::Method;

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

    fn with_propagator<T>(&self, f: impl FnOnce(&dyn TextMapPropagator) -> T) -> T {
        match &self.options.propagator {
            Some(p) => f(&**p),
            None => {
                let mut f = Some(f);
                opentelemetry::global::get_text_map_propagator(|p| (f.take().expect("called once"))(p))
            }
        }
    }

    /// The context a request's `_meta` carries, if any.
    fn extract_meta(&self, meta: &HashMap<String, String>) -> Option<OtelContext> {
        if meta.is_empty() {
            return None;
        }
        let cx = self.with_propagator(|p| p.extract_with_context(&OtelContext::new(), &Carrier(meta)));
        cx.span().span_context().is_valid().then_some(cx)
    }

    /// Writes the trace context of `cx` into `meta`.
    fn inject(&self, cx: &OtelContext, meta: &mut JsonObject) {
        let mut carrier = HashMap::new();
        self.with_propagator(|p| p.inject_context(cx, &mut CarrierMut(&mut carrier)));
        for (k, v) in carrier {
            meta.insert(k, serde_json::Value::String(v));
        }
    }
}

/// Trace context in a `_meta` object (or in HTTP headers), as the propagators read it.
struct Carrier<'a>(&'a HashMap<String, String>);

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct CarrierMut<'a>(&'a mut HashMap<String, String>);

impl Injector for CarrierMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
}

/// Whether a `_meta` object's text may hold trace context (a cheap search, before decoding).
fn carries_trace_context(meta: &str) -> bool {
    static KEYS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 2]> = std::sync::LazyLock::new(|| {
        [memchr::memmem::Finder::new("traceparent"), memchr::memmem::Finder::new("baggage")]
    });
    KEYS.iter().any(|k| k.find(meta.as_bytes()).is_some())
}

/// The trace-context members of `_meta` (strings only: anything else is ignored).
fn trace_members(meta: Option<&serde_json::Map<String, serde_json::Value>>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Some(meta) = meta {
        for key in ["traceparent", "tracestate", "baggage"] {
            if let Some(serde_json::Value::String(v)) = meta.get(key) {
                out.insert(key.to_owned(), v.clone());
            }
        }
    }
    out
}

/// The method's name as a `'static` string when it is one of the table's (no allocation per
/// request), else owned.
fn method_name(id: Option<Method>, method: &str) -> Cow<'static, str> {
    match id {
        Some(id) => Cow::Borrowed(id.name()),
        None => Cow::Owned(method.to_owned()),
    }
}

/// A protocol version as a `'static` string when it is one we speak, else owned.
fn version_name(version: &str) -> Cow<'static, str> {
    crate::protocol::SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .chain([&crate::protocol::stateless::PROTOCOL_VERSION_2026_07_28])
        .find(|v| **v == version)
        .map_or_else(|| Cow::Owned(version.to_owned()), |v| Cow::Borrowed(*v))
}

/// How many tool (and prompt) names [`interned`] keeps: they come from the wire, so the set is
/// bounded; past it, each request allocates its own.
const INTERNED_MAX: usize = 512;

/// The span name `{method} {target}` and the target, for a tool call or a prompt, as `'static`
/// strings kept for the life of the process (at most [`INTERNED_MAX`] per method), so that
/// naming a span and its attributes allocates nothing; clones of the attributes (the span's,
/// the histogram's) then copy a pointer.
fn interned(id: Method, target: &str) -> (Cow<'static, str>, Cow<'static, str>) {
    type Names = foldhash::HashMap<Box<str>, (&'static str, &'static str)>;
    static TOOLS: std::sync::LazyLock<std::sync::RwLock<Names>> = std::sync::LazyLock::new(Default::default);
    static PROMPTS: std::sync::LazyLock<std::sync::RwLock<Names>> = std::sync::LazyLock::new(Default::default);
    let names = if id == Method::ToolsCall { &TOOLS } else { &PROMPTS };
    let method = id.name();
    if let Some(&(name, target)) = names.read().ok().as_ref().and_then(|n| n.get(target)) {
        return (Cow::Borrowed(name), Cow::Borrowed(target));
    }
    let owned = || (Cow::Owned(format!("{method} {target}")), Cow::Owned(target.to_owned()));
    let Ok(mut names) = names.write() else { return owned() };
    if let Some(&(name, target)) = names.get(target) {
        return (Cow::Borrowed(name), Cow::Borrowed(target));
    }
    if names.len() >= INTERNED_MAX {
        return owned();
    }
    let name: &'static str = Box::leak(format!("{method} {target}").into_boxed_str());
    let kept: &'static str = &name[method.len() + 1..];
    names.insert(target.into(), (name, kept));
    (Cow::Borrowed(name), Cow::Borrowed(kept))
}

/// A `'static` string, compared and hashed by its address and length: two of them are the
/// same value when these are (the converse need not hold, which only costs a second binding of
/// one attribute set).
#[derive(Debug, Clone, Copy)]
struct Static(&'static str);

impl PartialEq for Static {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Static {}

impl std::hash::Hash for Static {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.as_ptr() as usize);
        state.write_usize(self.0.len());
    }
}

impl Static {
    /// `None` when `s` is not `'static`.
    #[allow(clippy::ptr_arg, reason = "whether the `Cow` borrows is what is asked")]
    fn of_cow(s: &Cow<'static, str>) -> Option<Self> {
        match s {
            Cow::Borrowed(s) => Some(Static(s)),
            Cow::Owned(_) => None,
        }
    }
}

/// What an operation is on, as its attributes name it.
enum Target {
    None,
    Tool(Cow<'static, str>),
    Prompt(Cow<'static, str>),
    Resource(Arc<str>),
}

/// The attributes every record of an operation shares (how it failed aside).
fn shared_attributes(
    method: Cow<'static, str>,
    target: Target,
    version: Option<Cow<'static, str>>,
    transport: Transport,
) -> Vec<KeyValue> {
    // Room for what a span adds (the request's id, the session, the peer's address).
    let mut attributes = Vec::with_capacity(12);
    attributes.push(KeyValue::new("mcp.method.name", method));
    match target {
        Target::None => {}
        Target::Tool(tool) => {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        Target::Prompt(prompt) => attributes.push(KeyValue::new("gen_ai.prompt.name", prompt)),
        // Shared, so that the span's copy and the histogram's are one string.
        Target::Resource(uri) => attributes.push(KeyValue::new("mcp.resource.uri", uri)),
    }
    if let Some(v) = version {
        attributes.push(KeyValue::new("mcp.protocol.version", v));
    }
    attributes.push(KeyValue::new("network.transport", transport.name()));
    attributes
}

/// The attribute set of an operation's duration, identified without hashing its strings: by
/// the addresses of its values (all `'static`: an operation with another value has no key and
/// keeps its attributes) and how the operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct SetKey {
    server: bool,
    method: Method,
    /// The tool of a `tools/call`, the prompt of a `prompts/get`.
    target: Option<Static>,
    version: Option<Static>,
    transport: Transport,
    failure: FailureKey,
}

impl SetKey {
    /// The attributes of the set.
    fn attributes(&self) -> Vec<KeyValue> {
        let target = match (self.method, self.target) {
            (_, None) => Target::None,
            (Method::ToolsCall, Some(tool)) => Target::Tool(Cow::Borrowed(tool.0)),
            (_, Some(prompt)) => Target::Prompt(Cow::Borrowed(prompt.0)),
        };
        let version = self.version.map(|v| Cow::Borrowed(v.0));
        let mut attributes = shared_attributes(Cow::Borrowed(self.method.name()), target, version, self.transport);
        self.failure.apply(&mut attributes);
        attributes
    }
}

/// How an operation failed, as far as its duration's attributes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum FailureKey {
    None,
    Rpc(i32),
    Tool,
    Other(Static),
}

impl FailureKey {
    fn apply(self, attributes: &mut Vec<KeyValue>) {
        match self {
            FailureKey::None => {}
            FailureKey::Rpc(code) => {
                attributes.push(KeyValue::new("error.type", code.to_string()));
                attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
            FailureKey::Tool => attributes.push(KeyValue::new("error.type", "tool_error")),
            FailureKey::Other(kind) => attributes.push(KeyValue::new("error.type", kind.0)),
        }
    }
}

/// What every record of an operation shares: its span's name, the attributes of its span and
/// duration, and the key of their set (`None` when a value is not `'static`).
struct Shape {
    name: Cow<'static, str>,
    attributes: Vec<KeyValue>,
    key: Option<SetKey>,
}

impl Shape {
    /// The shape of `method` (`id` when it is one of MCP's) on `target` (a tool, a prompt or a
    /// resource), at `version`, over `transport`, as a `server` (or a client) sees it.
    fn of(
        server: bool,
        (id, method): (Option<Method>, &str),
        target: Option<&str>,
        version: Option<&str>,
        transport: Transport,
    ) -> Shape {
        let method = method_name(id, method);
        let (name, target) = match (id, target) {
            (Some(id @ Method::ToolsCall), Some(tool)) => {
                let (name, tool) = interned(id, tool);
                (name, Target::Tool(tool))
            }
            (Some(id @ Method::PromptsGet), Some(prompt)) => {
                let (name, prompt) = interned(id, prompt);
                (name, Target::Prompt(prompt))
            }
            // Not in the name: URIs are of high cardinality.
            (Some(Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe), Some(uri)) => {
                (method.clone(), Target::Resource(Arc::from(uri)))
            }
            _ => (method.clone(), Target::None),
        };
        let version = version.map(version_name);
        let key = (|| {
            Some(SetKey {
                server,
                method: id?,
                target: match &target {
                    Target::None => None,
                    Target::Tool(t) | Target::Prompt(t) => Some(Static::of_cow(t)?),
                    Target::Resource(_) => return None,
                },
                version: match &version {
                    Some(v) => Some(Static::of_cow(v)?),
                    None => None,
                },
                transport,
                failure: FailureKey::None,
            })
        })();
        Shape { name, attributes: shared_attributes(method, target, version, transport), key }
    }

    /// The span's attributes to start from, and what the duration is recorded with: the
    /// attributes themselves go to the span when their set has a key, else a copy.
    fn split(self) -> (Cow<'static, str>, Vec<KeyValue>, DurationSet) {
        match self.key {
            Some(key) => (self.name, self.attributes, DurationSet::Keyed(key)),
            None => (self.name, self.attributes.clone(), DurationSet::Attributes(self.attributes)),
        }
    }
}

/// What an operation's duration is recorded with.
enum DurationSet {
    /// The key of its attribute set.
    Keyed(SetKey),
    /// Its attributes (some value is not `'static`).
    Attributes(Vec<KeyValue>),
}

/// `jsonrpc.request.id`: the id as the request gave it (a string id with its quotes).
fn request_id_text(id: &crate::protocol::RequestId) -> String {
    match id {
        crate::protocol::RequestId::Number(n) => itoa::Buffer::new().format(*n).to_owned(),
        other => other.to_string(),
    }
}

/// How an operation failed, by the conventions: the JSON-RPC code (also its
/// `rpc.response.status_code`) with the error's message, or `tool_error`.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// A JSON-RPC error.
    Rpc { code: i32, message: String },
    /// A tool result with `isError: true`.
    Tool,
    /// Failed without a response (`timeout`, `cancelled`, `closed`, `_OTHER`).
    Other(&'static str, String),
}

impl Failure {
    /// How a request to the peer failed.
    pub(crate) fn of_peer(error: &crate::engine::PeerError) -> Failure {
        use crate::engine::PeerError;
        match error {
            PeerError::Rpc(e) => Failure::Rpc { code: e.code, message: e.message.clone() },
            PeerError::Timeout { .. } => Failure::Other("timeout", error.to_string()),
            PeerError::Cancelled => Failure::Other("cancelled", error.to_string()),
            PeerError::Closed => Failure::Other("closed", error.to_string()),
            _ => Failure::Other("_OTHER", error.to_string()),
        }
    }

    fn key(&self) -> FailureKey {
        match self {
            Failure::Rpc { code, .. } => FailureKey::Rpc(*code),
            Failure::Tool => FailureKey::Tool,
            Failure::Other(kind, _) => FailureKey::Other(Static(kind)),
        }
    }

    fn status(&self) -> Status {
        match self {
            Failure::Rpc { message, .. } | Failure::Other(_, message) => Status::error(message.clone()),
            Failure::Tool => Status::error("the tool reported an error"),
        }
    }
}

/// Whether a `tools/call` result (its JSON text) says `isError: true` (its top-level member,
/// found by the member scanner; nothing is decoded).
pub(crate) fn is_tool_error(result: &str) -> bool {
    use crate::protocol::scan::Members;
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("\"isError\""));
    if KEY.find(result.as_bytes()).is_none() {
        return false;
    }
    let Ok(members) = Members::of(result, 0..result.len()) else { return false };
    members
        .filter_map(Result::ok)
        .find(|(key, _)| key.in_text(result) == "isError")
        .is_some_and(|(_, value)| result.get(value).is_some_and(|v| v.trim() == "true"))
}

/// One operation being observed: its span's context and what its duration is recorded with.
pub(crate) struct Operation {
    instruments: Arc<Instruments>,
    record_results: bool,
    cx: OtelContext,
    /// The span's start time. The duration recorded is measured with the same clock as the
    /// span's (two clock reads per operation, not four).
    started: SystemTime,
    duration: DurationSet,
    tool_call: bool,
    server: bool,
}

/// What a server knows of a request it received, beyond its parameters.
pub(crate) struct Received<'a> {
    pub(crate) method: &'a crate::protocol::MethodName,
    pub(crate) id: &'a crate::protocol::RequestId,
    pub(crate) params: Option<&'a str>,
    pub(crate) protocol_version: Option<&'a str>,
    pub(crate) session_id: Option<&'a str>,
    pub(crate) transport: Transport,
    pub(crate) client: Option<std::net::SocketAddr>,
    /// The HTTP request's own trace context (its `traceparent`/`tracestate` headers).
    pub(crate) http_trace: HashMap<String, String>,
}

impl Telemetry {
    /// Starts the `SERVER` span of a request received; `view` is where the members of its
    /// parameters are (read once, for the router too). `_meta` is decoded only when it carries
    /// trace context.
    pub(crate) fn received(&self, r: Received<'_>, view: &crate::protocol::view::ParamsView) -> Operation {
        use crate::protocol::view::{Meta2026Text, NO_PARAMS, ParamsView};
        let text = r.params.unwrap_or(NO_PARAMS);
        let meta = ParamsView::text(text, &view.meta);
        let version = r.protocol_version.or_else(|| meta.and_then(|m| Meta2026Text::read(m).ok()?.version()));
        let id = r.method.id();
        let (name, mut span_attributes, duration) =
            Shape::of(true, (id, r.method.as_str()), view.target(text), version, r.transport).split();
        span_attributes.push(KeyValue::new("jsonrpc.request.id", request_id_text(r.id)));
        if let Some(id) = r.session_id {
            span_attributes.push(KeyValue::new("mcp.session.id", id.to_owned()));
        }
        if let Some(address) = r.client {
            span_attributes.push(KeyValue::new("client.address", address.ip().to_string()));
            span_attributes.push(KeyValue::new("client.port", i64::from(address.port())));
        }
        if self.options.record_arguments
            && id == Some(Method::ToolsCall)
            && let Some(arguments) = ParamsView::text(text, &view.arguments)
        {
            span_attributes.push(KeyValue::new("gen_ai.tool.call.arguments", arguments.to_owned()));
        }
        // The caller's context from `_meta` is the parent; the HTTP request's own, and the
        // ambient one, are linked.
        let trace = meta.filter(|m| carries_trace_context(m)).map(|m| {
            trace_members(serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(m).ok().as_ref())
        });
        let parent = trace.and_then(|t| self.extract_meta(&t));
        let mut links = Vec::new();
        if let Some(http) = self.extract_meta(&r.http_trace) {
            links.push(http.span().span_context().clone());
        }
        let ambient = OtelContext::current();
        if ambient.span().span_context().is_valid() {
            links.push(ambient.span().span_context().clone());
        }
        let parent = parent.unwrap_or_else(|| if links.is_empty() { ambient } else { OtelContext::new() });
        let started = SystemTime::now();
        let mut builder = SpanBuilder::from_name(name)
            .with_kind(SpanKind::Server)
            .with_start_time(started)
            .with_attributes(span_attributes);
        if !links.is_empty() {
            links.retain(|l| *l != *parent.span().span_context());
            builder = builder.with_links(links.into_iter().map(opentelemetry::trace::Link::with_context).collect());
        }
        Operation {
            instruments: self.inner.clone(),
            record_results: self.options.record_results,
            cx: self.inner.tracer.start(builder, &parent),
            started,
            duration,
            tool_call: id == Some(Method::ToolsCall),
            server: true,
        }
    }

    /// Starts the `CLIENT` span of a request about to be sent, and writes its context into
    /// `params._meta`.
    pub(crate) fn sending(
        &self,
        method: &str,
        params: &mut JsonObject,
        protocol_version: Option<&str>,
        transport: Transport,
        server: Option<(&str, u16)>,
    ) -> Operation {
        let id = Method::from_name(method);
        // The parameter the method's row names as its target.
        let target = id.and_then(|m| m.info().target).and_then(|t| params.get(t.param())?.as_str());
        let mut shape = Shape::of(false, (id, method), target, protocol_version, transport);
        if let Some((host, port)) = server {
            shape.attributes.push(KeyValue::new("server.address", host.to_owned()));
            shape.attributes.push(KeyValue::new("server.port", i64::from(port)));
            shape.key = None;
        }
        let (name, mut span_attributes, duration) = shape.split();
        if id == Some(Method::ToolsCall)
            && self.options.record_arguments
            && let Some(arguments) = params.get("arguments")
        {
            span_attributes.push(KeyValue::new("gen_ai.tool.call.arguments", arguments.to_string()));
        }
        let parent = OtelContext::current();
        let started = SystemTime::now();
        let builder = SpanBuilder::from_name(name)
            .with_kind(SpanKind::Client)
            .with_start_time(started)
            .with_attributes(span_attributes);
        let cx = self.inner.tracer.start(builder, &parent);
        let meta = params.entry("_meta").or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
        if let serde_json::Value::Object(meta) = meta {
            self.inject(&cx, meta);
        }
        Operation {
            instruments: self.inner.clone(),
            record_results: self.options.record_results,
            cx,
            started,
            duration,
            tool_call: id == Some(Method::ToolsCall),
            server: false,
        }
    }

    /// The context of an `INTERNAL` span over a whole tool call run as a task (the call, then
    /// the requests that follow the task), child of the current context; the caller ends it.
    pub(crate) fn task_span(&self, tool: &str) -> OtelContext {
        let parent = OtelContext::current();
        let call = Method::ToolsCall.name();
        let builder =
            SpanBuilder::from_name(format!("{call} {tool} (task)")).with_kind(SpanKind::Internal).with_attributes([
                KeyValue::new("mcp.method.name", call),
                KeyValue::new("gen_ai.tool.name", tool.to_owned()),
                KeyValue::new("gen_ai.operation.name", "execute_tool"),
            ]);
        self.inner.tracer.start(builder, &parent)
    }

    /// Records a session that lasted `duration`.
    pub(crate) fn session_ended(
        &self,
        server: bool,
        duration: Duration,
        protocol_version: Option<&str>,
        transport: Transport,
    ) {
        let mut attributes = vec![KeyValue::new("network.transport", transport.name())];
        if let Some(v) = protocol_version {
            attributes.push(KeyValue::new("mcp.protocol.version", version_name(v)));
        }
        let histogram = if server { &self.inner.server_session } else { &self.inner.client_session };
        histogram.record(duration.as_secs_f64(), &attributes);
    }
}

impl Operation {
    /// The context of the operation's span, for what runs on its behalf.
    pub(crate) fn context(&self) -> &OtelContext {
        &self.cx
    }

    /// Ends the operation: `Ok` with the result's JSON text (read for `isError` in a tool
    /// call, and recorded when asked), or how it failed.
    pub(crate) fn end(self, outcome: Result<Option<&str>, Failure>) {
        let Operation { instruments, record_results, cx, started, duration, tool_call, server } = self;
        let failure = match outcome {
            Ok(Some(result)) if tool_call && is_tool_error(result) => Some(Failure::Tool),
            Ok(result) => {
                if let (true, true, Some(result)) = (tool_call, record_results, result) {
                    cx.span().set_attribute(KeyValue::new("gen_ai.tool.call.result", result.to_owned()));
                }
                None
            }
            Err(failure) => Some(failure),
        };
        let failure_key = failure.as_ref().map_or(FailureKey::None, Failure::key);
        if let Some(failure) = &failure {
            let span = cx.span();
            let mut error_attributes = Vec::new();
            failure_key.apply(&mut error_attributes);
            span.set_attributes(error_attributes);
            span.set_status(failure.status());
        }
        let ended = SystemTime::now();
        cx.span().end_with_timestamp(ended);
        let seconds = ended.duration_since(started).unwrap_or_default().as_secs_f64();
        match duration {
            DurationSet::Keyed(key) => instruments.record_keyed(SetKey { failure: failure_key, ..key }, seconds),
            DurationSet::Attributes(mut attributes) => {
                failure_key.apply(&mut attributes);
                instruments.operation(server).record(seconds, &attributes);
            }
        }
    }
}

/// A request an instance of a shared deployment passes on to the instance owning its session:
/// the `SERVER` span of the request as this instance received it, and under it the `CLIENT`
/// span of the hop to the owner (see [`Telemetry::forwarding`]).
#[cfg(feature = "http")]
pub(crate) struct Hop {
    server: Operation,
    client: Operation,
}

/// What an instance knows of a request it forwards, beyond its body.
#[cfg(feature = "http")]
pub(crate) struct Forwarding<'a> {
    /// The request's HTTP header named (lowercase) so, if any.
    pub(crate) header: &'a dyn Fn(&str) -> Option<String>,
    /// The client's address.
    pub(crate) client: Option<std::net::SocketAddr>,
    /// The owner's host and port.
    pub(crate) owner: Option<(&'a str, u16)>,
}

#[cfg(feature = "http")]
impl Telemetry {
    /// Starts the spans of a request `body` this instance forwards to the session's owner, and
    /// returns the body to send instead: its `_meta` carries the hop's context, so that the
    /// owner's `SERVER` span is the hop's child, the hop the child of this instance's `SERVER`
    /// span, and that one the child of the caller's context (the client's `_meta`). `None` when
    /// `body` is not one JSON-RPC request with object (or no) parameters: nothing is observed.
    pub(crate) fn forwarding(&self, body: &[u8], f: Forwarding<'_>) -> Option<(Hop, Vec<u8>)> {
        let mut message: JsonObject = serde_json::from_slice(body).ok()?;
        let method = crate::protocol::MethodName::new(message.get("method")?.as_str()?);
        let id: crate::protocol::RequestId = serde_json::from_value(message.get("id")?.clone()).ok()?;
        if message.get("params").is_some_and(|p| !p.is_object()) {
            return None;
        }
        let params = message.get("params").map(serde_json::Value::to_string);
        let (version, session) = ((f.header)("mcp-protocol-version"), (f.header)("mcp-session-id"));
        let http_trace = ["traceparent", "tracestate"]
            .into_iter()
            .filter_map(|key| Some((key.to_owned(), (f.header)(key)?)))
            .collect();
        let text = params.as_deref().unwrap_or(crate::protocol::view::NO_PARAMS);
        let view = crate::protocol::view::ParamsView::read(text, method.info()).unwrap_or_default();
        let server = self.received(
            Received {
                method: &method,
                id: &id,
                params: params.as_deref(),
                protocol_version: version.as_deref(),
                session_id: session.as_deref(),
                transport: Transport::Tcp,
                client: f.client,
                http_trace,
            },
            &view,
        );
        if !server.context().span().is_recording() {
            // No spans are exported (a provider that records nothing): the request goes on as
            // it came, its `_meta` naming the caller's context already.
            return None;
        }
        let client = {
            let _attached = server.context().clone().attach();
            let params = message.entry("params").or_insert_with(|| serde_json::Value::Object(JsonObject::new()));
            let serde_json::Value::Object(params) = params else { return None };
            self.sending(&method, params, version.as_deref(), Transport::Tcp, f.owner)
        };
        let body = serde_json::to_vec(&message).ok()?;
        Some((Hop { server, client }, body))
    }
}

#[cfg(feature = "http")]
impl Hop {
    /// Ends the hop and the request's span here: `Ok` when the owner answered (its own span
    /// says how the request went), or how passing it on failed.
    pub(crate) fn end(self, outcome: Result<(), Failure>) {
        let Hop { server, client } = self;
        match outcome {
            Ok(()) => {
                client.end(Ok(None));
                server.end(Ok(None));
            }
            Err(failure) => {
                client.end(Err(failure.clone()));
                server.end(Err(failure));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cow, INTERNED_MAX, Method, Shape, Transport, interned, is_tool_error, version_name};

    #[test]
    fn tool_names_are_kept_once_and_only_up_to_the_bound() {
        let (name, tool) = interned(Method::PromptsGet, "greet");
        assert_eq!((&*name, &*tool), ("prompts/get greet", "greet"));
        let (again, _) = interned(Method::PromptsGet, "greet");
        assert!(matches!((&name, &again), (Cow::Borrowed(a), Cow::Borrowed(b)) if std::ptr::eq(*a, *b)));
        // The same name under the other method is another span name.
        assert_eq!(&*interned(Method::ToolsCall, "greet").0, "tools/call greet");
        // Names from the wire fill the table at most to its bound; past it they are still right.
        for i in 0..INTERNED_MAX + 10 {
            let target = format!("p{i}");
            let (name, kept) = interned(Method::PromptsGet, &target);
            assert_eq!(name, format!("prompts/get {target}"));
            assert_eq!(kept, target);
        }
        assert!(matches!(interned(Method::PromptsGet, "one more").0, Cow::Owned(_)));
        assert!(matches!(interned(Method::PromptsGet, "greet").0, Cow::Borrowed(_)));
    }

    #[test]
    fn versions_we_speak_are_static_and_others_are_kept_as_given() {
        assert!(matches!(version_name("2025-11-25"), Cow::Borrowed("2025-11-25")));
        assert!(matches!(version_name("2026-07-28"), Cow::Borrowed("2026-07-28")));
        assert_eq!(version_name("1999-01-01"), "1999-01-01");
        let shape = Shape::of(
            true,
            (Some(Method::ToolsCall), Method::ToolsCall.name()),
            Some("get_weather"),
            Some("2025-11-25"),
            Transport::Pipe,
        );
        assert_eq!(shape.name, "tools/call get_weather");
        let keys: Vec<&str> = shape.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "mcp.method.name",
                "gen_ai.tool.name",
                "gen_ai.operation.name",
                "mcp.protocol.version",
                "network.transport"
            ]
        );
    }

    #[test]
    fn a_tool_error_is_the_top_level_is_error_member() {
        assert!(is_tool_error(r#"{"content":[],"isError":true}"#));
        assert!(is_tool_error(r#"{ "isError" : true , "content": []}"#));
        assert!(!is_tool_error(r#"{"content":[],"isError":false}"#));
        assert!(!is_tool_error(r#"{"content":[{"type":"text","text":"\"isError\":true"}]}"#));
        assert!(!is_tool_error(r#"{"structuredContent":{"isError":true},"content":[]}"#));
        assert!(!is_tool_error("not json"));
    }
}
