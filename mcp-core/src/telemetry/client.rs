//! The `CLIENT` span of each request a client sends (its context written into `_meta`), the
//! span over a tool call run as a task, and the durations of sessions.

use std::time::{Duration, SystemTime};

use opentelemetry::trace::{SpanBuilder, SpanKind};
use opentelemetry::{Context as OtelContext, KeyValue};

use super::attributes::{Shape, version_name};
use super::{Operation, Telemetry, Transport};
use crate::protocol::JsonObject;
use crate::protocol::methods::Method;

impl Telemetry {
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
