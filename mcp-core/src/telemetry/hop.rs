//! A request one instance of a shared deployment forwards to the session's owner: the `SERVER`
//! span of what it received and, under it, the `CLIENT` span of the hop.

use opentelemetry::trace::TraceContextExt;

use super::server::Received;
use super::{Failure, Operation, Telemetry, Transport};
use crate::protocol::JsonObject;

/// A request an instance of a shared deployment passes on to the instance owning its session:
/// the `SERVER` span of the request as this instance received it, and under it the `CLIENT`
/// span of the hop to the owner (see [`Telemetry::forwarding`]).
pub(crate) struct Hop {
    server: Operation,
    client: Operation,
}

/// What an instance knows of a request it forwards, beyond its body.
pub(crate) struct Forwarding<'a> {
    /// The request's HTTP header named (lowercase) so, if any.
    pub(crate) header: &'a dyn Fn(&str) -> Option<String>,
    /// The client's address.
    pub(crate) client: Option<std::net::SocketAddr>,
    /// The owner's host and port.
    pub(crate) owner: Option<(&'a str, u16)>,
}

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
