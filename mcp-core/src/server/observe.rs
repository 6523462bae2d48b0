//! Telemetry around each request the server receives (feature `otel`; see
//! [`crate::telemetry`]). Without the feature, or without a `Telemetry`, the request is
//! handled as it is.

use super::ServerInner;
use crate::engine::{Handling, RequestScope};
use crate::protocol::Request;
use crate::protocol::view::ParamsView;

/// Handles `request` with `run`, inside its `SERVER` span when the server has telemetry.
/// `protocol_version` is the session's (2026-era requests name theirs in `_meta`). `view` is
/// where the members of the request's parameters are, when the caller read them already; with
/// telemetry they are read here when it did not, and `run` is given them so that nobody reads
/// them twice (`None` when they are not valid parameters: the router then says why).
#[cfg(feature = "otel")]
pub(crate) fn observe(
    server: &ServerInner,
    request: Request,
    scope: RequestScope,
    protocol_version: Option<&str>,
    view: Option<ParamsView>,
    run: impl FnOnce(Request, RequestScope, Option<ParamsView>) -> Handling,
) -> Handling {
    use crate::protocol::view::NO_PARAMS;
    use crate::telemetry::{Failure, Received, Transport};
    use opentelemetry::context::FutureExt;
    let Some(telemetry) = &server.telemetry else { return run(request, scope, view) };
    let view = view.or_else(|| {
        let text = request.params.as_deref().map_or(NO_PARAMS, serde_json::value::RawValue::get);
        ParamsView::read(text, request.method.info()).ok()
    });
    #[cfg(feature = "http")]
    let http = scope.http.as_deref();
    #[cfg(not(feature = "http"))]
    let http: Option<&std::convert::Infallible> = None;
    #[cfg_attr(not(feature = "http"), allow(unused_mut))]
    let mut received = Received {
        method: &request.method,
        id: &request.id,
        params: request.params.as_deref().map(serde_json::value::RawValue::get),
        protocol_version,
        session_id: None,
        transport: if http.is_some() { Transport::Tcp } else { Transport::Pipe },
        client: None,
        http_trace: Default::default(),
    };
    #[cfg(feature = "http")]
    if let Some(http) = http {
        let header = |name: &str| http.headers().get(name).and_then(|v| v.to_str().ok());
        received.session_id = header("mcp-session-id");
        received.client = http.remote_address();
        for key in ["traceparent", "tracestate"] {
            if let Some(v) = header(key) {
                received.http_trace.insert(key.to_owned(), v.to_owned());
            }
        }
    }
    let operation = telemetry.received(received, view.as_ref().unwrap_or(&ParamsView::default()));
    let handling = {
        let _attached = operation.context().clone().attach();
        run(request, scope, view)
    };
    let end = |operation: crate::telemetry::Operation, result: &crate::engine::HandlerResult| {
        operation.end(match result {
            Ok(text) => Ok(Some(text.get())),
            Err(e) => Err(Failure::Rpc { code: e.code, message: e.message.clone() }),
        })
    };
    match handling {
        Handling::Ready(result) => {
            end(operation, &result);
            Handling::Ready(result)
        }
        Handling::Future(future) => {
            let cx = operation.context().clone();
            Handling::future(async move {
                let result = future.with_context(cx).await;
                end(operation, &result);
                result
            })
        }
    }
}

/// Handles `request` with `run` (no telemetry without the `otel` feature).
#[cfg(not(feature = "otel"))]
#[inline(always)]
pub(crate) fn observe(
    _: &ServerInner,
    request: Request,
    scope: RequestScope,
    _: Option<&str>,
    view: Option<ParamsView>,
    run: impl FnOnce(Request, RequestScope, Option<ParamsView>) -> Handling,
) -> Handling {
    run(request, scope, view)
}
