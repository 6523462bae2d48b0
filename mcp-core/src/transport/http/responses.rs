//! The responses every part of the endpoint gives: JSON-RPC errors with their HTTP status, the
//! checks of a POST's media types and body, and small header helpers.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::protocol::codes::{HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};
use crate::protocol::jsonrpc::{DecodeError, encode_error};
use crate::protocol::{ErrorObject, Message, RequestId, codes};

pub(crate) fn json_rpc_error(status: StatusCode, error: &ErrorObject) -> Response {
    json_rpc_error_for(status, None, error)
}

/// An error response to the request `id` (`None`: a request whose id could not be read).
pub(crate) fn json_rpc_error_for(status: StatusCode, id: Option<&RequestId>, error: &ErrorObject) -> Response {
    let body = encode_error(id, error);
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The id of the request in `body`, if it is one: an error about the request as a whole still
/// names the request it answers.
pub(crate) fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    // Only an object is a request: serde would read `IdOnly` from an array too, by position.
    if !body.trim_ascii_start().starts_with(b"{") {
        return None;
    }
    let parsed: IdOnly = serde_json::from_slice(body).ok()?;
    parsed.method.and(parsed.id)
}

/// The HTTP status of a 2026-era error response: 404 for a method the server does not have,
/// 400 for a malformed request (invalid params, a header that disagrees with the body, a
/// capability the client did not declare, a revision the server does not speak), else 200.
pub(crate) fn status_of_2026_error(code: i32) -> StatusCode {
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::PARSE_ERROR
        | codes::INVALID_REQUEST
        | codes::INVALID_PARAMS
        | HEADER_MISMATCH
        | MISSING_REQUIRED_CLIENT_CAPABILITY
        | UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

pub(crate) fn plain(status: StatusCode, message: &str) -> Response {
    json_rpc_error(status, &ErrorObject::invalid_request(message.to_owned()))
}

pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether `Accept` lists `media` (or a wildcard covering it). The list may be split over
/// several header lines.
pub(crate) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let kind = media.split('/').next().unwrap_or("");
    let mut listed = headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(','));
    listed.any(|part| {
        let media_type = part.split(';').next().unwrap_or("").trim();
        // Media types are case-insensitive.
        media_type.eq_ignore_ascii_case(media)
            || media_type == "*/*"
            || media_type.strip_suffix("/*").is_some_and(|k| k.eq_ignore_ascii_case(kind))
    })
}

pub(crate) fn session_not_found() -> Response {
    json_rpc_error(StatusCode::NOT_FOUND, &ErrorObject::new(-32001, "session not found"))
}

/// The message a POST carries, or the response refusing it (wrong media types, not UTF-8, not
/// a JSON-RPC message).
pub(crate) fn read_message(headers: &HeaderMap, bytes: &[u8]) -> Result<Message, Box<Response>> {
    let content_type = header_str(headers, header::CONTENT_TYPE.as_str()).unwrap_or("");
    if !content_type.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json") {
        return Err(Box::new(plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, "the body must be `application/json`")));
    }
    if !(accepts(headers, "application/json") && accepts(headers, "text/event-stream")) {
        return Err(Box::new(plain(
            StatusCode::NOT_ACCEPTABLE,
            "the Accept header must list application/json and text/event-stream",
        )));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Box::new(json_rpc_error(
            StatusCode::BAD_REQUEST,
            &ErrorObject::parse_error(format!("parse error: invalid UTF-8: {e}")),
        ))
    })?;
    Message::decode(text).map_err(|DecodeError { id, error, respond }| {
        // A malformed response or notification must not be answered: the POST is refused,
        // with an error that names no id (the id of a response is one of ours).
        let id = if respond { id } else { None };
        let body = encode_error(id.as_ref(), &error);
        Box::new((StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response())
    })
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::accepts;

    fn with_accept(values: &[&'static str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::ACCEPT, HeaderValue::from_static(v));
        }
        headers
    }

    #[test]
    fn accept_lists_media_types_wildcards_and_parameters_over_several_lines() {
        let both = with_accept(&["application/json;q=0.9, text/event-stream"]);
        assert!(accepts(&both, "application/json") && accepts(&both, "text/event-stream"));
        let split = with_accept(&["Application/JSON", "text/*"]);
        assert!(accepts(&split, "application/json") && accepts(&split, "text/event-stream"));
        assert!(accepts(&with_accept(&["*/*"]), "text/event-stream"));
        let json_only = with_accept(&["application/json"]);
        assert!(!accepts(&json_only, "text/event-stream"));
        assert!(!accepts(&with_accept(&["application/*"]), "text/event-stream"));
        assert!(!accepts(&HeaderMap::new(), "application/json"));
    }
}
