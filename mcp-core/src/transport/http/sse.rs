//! Server-sent events: how one message is written as an event, and the response that carries
//! a stream of them.

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::Response;

use super::events::EventId;

/// A comment that keeps an idle stream (and the proxies on its way) from timing out.
pub(crate) const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// One message as an SSE event, with its id (and what follows it on the wire) when the stream
/// can be resumed.
pub(crate) fn format_event(frame: &str, id: Option<(EventId, &str)>) -> Bytes {
    let mut text = String::with_capacity(frame.len() + 32);
    if let Some((id, suffix)) = id {
        text.push_str("id: ");
        text.push_str(&id.encode());
        text.push_str(suffix);
        text.push('\n');
    }
    text.push_str("event: message\n");
    // A frame is compact JSON as a rule, but a raw value passed through verbatim may hold line
    // breaks (JSON whitespace). Each line becomes its own `data:` line, which the client joins
    // back with `\n`: a bare break would end the field, or with a blank line the event.
    for line in frame.split(['\r', '\n']) {
        text.push_str("data: ");
        text.push_str(line);
        text.push('\n');
    }
    text.push('\n');
    Bytes::from(text)
}

/// The `200 text/event-stream` response carrying `body`.
pub(crate) fn response(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(body)
        .unwrap_or_else(|_| Response::new(Body::empty()))
}
