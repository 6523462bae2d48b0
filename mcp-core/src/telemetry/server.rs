//! The `SERVER` span of each request a server receives, continuing the trace its `_meta` names.

use std::collections::HashMap;
use std::time::SystemTime;

use opentelemetry::trace::{SpanBuilder, SpanKind, TraceContextExt};
use opentelemetry::{Context as OtelContext, KeyValue};

use super::attributes::{Shape, request_id_text};
use super::propagation::{carries_trace_context, trace_members};
use super::{Operation, Telemetry, Transport};
use crate::protocol::methods::Method;

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
}
