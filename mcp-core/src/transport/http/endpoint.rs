//! The endpoint: one handler for `POST`, `GET` and `DELETE`, which checks what every request
//! must satisfy and hands a POSTed message to its era: a 2026-era request to [`super::era_2026`],
//! a 2025-era message to its session (or, in sessionless mode, to a session of its own).

use std::sync::Arc;

use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::deployment::forwarder::{self, changes_record, record_of};
use super::deployment::hop;
use super::deployment::landing::forward_if_elsewhere;
use super::deployment::release::{announce_changed, answers_or_cancels, release_now};
use super::deployment::replicas::replica;
use super::events::EventId;
use super::lifecycle::{lookup, make_room};
use super::responses::{accepts, header_str, json_rpc_error_for, plain, read_message, request_id, session_not_found};
use super::session::{self, Delivery, HttpSession, OpenError};
use super::{
    Incoming, Opening, PROTOCOL_VERSION_HEADER, Principal, SESSION_HEADER, Served, Shared, auth, era_2026, security,
};
use crate::auth::RequestIdentity;
use crate::engine::HttpRequestParts;
use crate::engine::Service;
use crate::protocol::codes::UNSUPPORTED_PROTOCOL_VERSION;
use crate::protocol::jsonrpc::encode_error;
use crate::protocol::{
    ErrorObject, Message, PROTOCOL_VERSION_2026_07_28, SUPPORTED_PROTOCOL_VERSIONS, supported_versions,
};

pub(crate) async fn endpoint(State(shared): State<Arc<Shared>>, request: HttpRequest) -> Response {
    if request.method() == Method::GET {
        // A `GET` stream is not work a drain waits for: it ends when the session closes.
        return respond(&shared, request).await;
    }
    let entry = Entry::enter(shared);
    let response = respond(&entry.0, request).await;
    entry.hold(response)
}

/// A `POST` or `DELETE` being answered here, counted in [`Shared::entered`] until its response
/// has been sent whole.
struct Entry(Arc<Shared>);

impl Entry {
    fn enter(shared: Arc<Shared>) -> Entry {
        // Before the request looks at `shut`: a drain that sees no request being answered after
        // it set `shut` knows that every later one sees `shut` set.
        shared.entered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Entry(shared)
    }

    /// `response`, counted until its body has been sent (or dropped): at once for a body of
    /// known length, at the end of the stream for an SSE answer.
    fn hold(self, response: Response) -> Response {
        use axum::body::HttpBody as _;
        if response.body().size_hint().exact().is_some() {
            return response;
        }
        response.map(|body| axum::body::Body::new(Held { body, _entry: self }))
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.0.entered.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A response body that keeps its request counted while it is sent.
struct Held {
    body: axum::body::Body,
    _entry: Entry,
}

impl axum::body::HttpBody for Held {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Serves one request to the endpoint.
async fn respond(shared: &Arc<Shared>, request: HttpRequest) -> Response {
    let (parts, body) = request.into_parts();
    // The body is read before anything is refused. A response sent while part of the body is
    // still unread makes hyper close the connection after it, without saying so: a client that
    // reuses the connection (as after the 400 for a newer revision's probe) then sees it drop
    // with no response.
    let read =
        tokio::time::timeout(shared.config.request_read_timeout, axum::body::to_bytes(body, shared.config.max_body));
    let bytes = match read.await {
        Ok(Ok(b)) => b,
        Err(_) => {
            let mut r = plain(StatusCode::REQUEST_TIMEOUT, "the request body did not arrive in time");
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
        Ok(Err(_)) => {
            let mut r = plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the request body exceeds the limit of {} bytes", shared.config.max_body),
            );
            // The rest stays unread, so this connection cannot carry another request.
            r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return r;
        }
    };
    if shared.shut.load(std::sync::atomic::Ordering::SeqCst)
        && parts.method != Method::GET
        && !answers_or_cancels(&bytes)
    {
        // Draining, with nothing left running: no new work is started here.
        return if parts.headers.contains_key(super::FORWARDED_HEADER) {
            forwarder::leaving()
        } else {
            forwarder::unavailable("this instance is shutting down; retry later")
        };
    }
    if let Err(reason) = security::check(&shared.config, &parts.headers) {
        tracing::warn!(%reason, "rejected an HTTP request");
        return plain(StatusCode::FORBIDDEN, &reason);
    }
    if let Some(guard) = &shared.guard
        && auth::Guard::is_metadata_path(parts.uri.path())
    {
        return match parts.method {
            Method::GET | Method::HEAD => guard.metadata(),
            _ => {
                let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "the metadata is read with GET");
                r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET"));
                r
            }
        };
    }
    // Every request after `initialize` carries the negotiated revision; one this server does
    // not speak is refused whatever the method.
    if let Some(v) = header_str(&parts.headers, PROTOCOL_VERSION_HEADER)
        && v != PROTOCOL_VERSION_2026_07_28
        && !SUPPORTED_PROTOCOL_VERSIONS.contains(&v)
    {
        let error = ErrorObject::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("unsupported MCP-Protocol-Version `{v}`; supported: {}", supported_versions().join(", ")),
        )
        .with_data(serde_json::json!({"supported": supported_versions(), "requested": v}));
        return json_rpc_error_for(StatusCode::BAD_REQUEST, request_id(&bytes).as_ref(), &error);
    }
    let mut principal = parts.extensions.get::<Principal>().map(|p| p.0.clone());
    let mut identity = None;
    // Forwarded by another instance: served on its sealed word, which names the user it
    // verified (the token, and its one-time DPoP proof, are not checked twice).
    let mut vouched = None;
    if let Some(forwarder) = &shared.forwarder
        && parts.headers.contains_key(super::FORWARDED_HEADER)
    {
        let session = header_str(&parts.headers, SESSION_HEADER);
        match hop::check(&forwarder.backplane.keys, &parts.headers, parts.method.as_str(), session, &bytes) {
            Ok(word) => vouched = word,
            Err(reason) => {
                tracing::warn!(reason, "refused a request claiming to be forwarded by another instance");
                return plain(StatusCode::FORBIDDEN, reason);
            }
        }
    }
    if let Some(word) = vouched {
        principal = word.principal;
        identity = word.identity;
    } else if let Some(guard) = &shared.guard {
        match guard.authenticate(parts.method.as_str(), parts.uri.path(), &parts.headers).await {
            Ok(info) => {
                // The token's subject is the user: sessions, URL flows and `requestState`
                // are bound to it.
                principal = Some(info.subject().to_owned());
                identity = Some(info);
            }
            Err(response) => return response,
        }
    }
    if let Some(forwarder) = &shared.forwarder
        && let Some(response) =
            forward_if_elsewhere(shared, forwarder, &parts, principal.as_deref(), identity.as_deref(), bytes.clone())
                .await
    {
        return response;
    }
    let method = parts.method.clone();
    let remote = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0);
    // Each request carries its own verified identity to the handler serving it (nothing to
    // carry, and nothing inserted, on an endpoint without authorization).
    let hide_unauthorized = shared.guard.as_ref().is_some_and(|g| g.settings.hide_unauthorized);
    let verified = RequestIdentity { identity, hide_unauthorized };
    let mut extensions = parts.extensions;
    if verified.identity.is_some() || verified.hide_unauthorized {
        extensions.insert(verified.clone());
    }
    let http = Arc::new(HttpRequestParts::new(parts.headers, extensions, remote));
    match method {
        Method::POST => post(shared, http, principal, verified, &bytes).await,
        Method::GET => get(shared, &http.headers, principal).await,
        Method::DELETE => delete(shared, &http.headers, principal).await,
        _ => {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE");
            r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
            r
        }
    }
}

/// A POST: checks and decodes the message, then serves it by its era (a 2026-era request), in
/// sessionless mode, or on its session.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    http: Arc<HttpRequestParts>,
    principal: Option<String>,
    auth: RequestIdentity,
    bytes: &[u8],
) -> Response {
    let headers = &http.headers;
    let message = match read_message(headers, bytes) {
        Ok(m) => m,
        Err(refused) => return *refused,
    };
    // Checked by `endpoint`: absent, or a revision this server speaks.
    let version = header_str(headers, PROTOCOL_VERSION_HEADER);
    let message = match message {
        Message::Request(request) => match era_2026::read(request, headers, version) {
            Ok(request) => return era_2026::post(shared, &http, principal, auth, request).await,
            // A call of something that needs scopes the token lacks is refused (403, so the
            // client can step up); anything else goes to its session.
            Err(request) => match shared.server.serve(Incoming::ToSession(request), shared.admission(&auth)) {
                Served::ToSession(request) => Message::Request(request),
                Served::Refused(refusal) => return shared.refused(&auth, None, refusal),
                Served::Handling(_) => {
                    let error = ErrorObject::internal("a 2025-era request was served outside its session");
                    return json_rpc_error_for(StatusCode::INTERNAL_SERVER_ERROR, None, &error);
                }
            },
        },
        // Nothing to do with a 2026-era notification or response over HTTP.
        _ if version == Some(PROTOCOL_VERSION_2026_07_28) => return StatusCode::ACCEPTED.into_response(),
        other => other,
    };
    if shared.config.sessionless {
        let version = version.map(str::to_owned);
        post_sessionless(shared, principal, message, version.as_deref(), Some(http)).await
    } else {
        post_to_session(shared, &http, principal, message).await
    }
}

/// A 2025-era message in sessionless mode: served by a fresh session, initialized by the
/// message itself or taken to be at the revision its header names.
pub(crate) async fn post_sessionless(
    shared: &Arc<Shared>,
    principal: Option<String>,
    message: Message,
    version: Option<&str>,
    http: Option<Arc<HttpRequestParts>>,
) -> Response {
    let is_initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
    let service = if is_initialize {
        shared.server.open(Opening::Initialize, principal.clone())
    } else {
        let v = version.unwrap_or(crate::protocol::LATEST_PROTOCOL_VERSION);
        shared.server.open(Opening::Preinitialized(v), principal.clone())
    };
    serve_alone(shared, service, principal, message, http).await
}

/// Serves `message` on a session of its own, with no id, that closes once it has answered.
pub(crate) async fn serve_alone(
    shared: &Arc<Shared>,
    service: Box<dyn Service>,
    principal: Option<String>,
    message: Message,
    http: Option<Arc<HttpRequestParts>>,
) -> Response {
    let session = HttpSession::start(String::new(), service, principal, shared, None);
    let response = hand_over(&session, message, None, http).await;
    session.close_when_idle();
    response
}

/// A 2025-era message on its session: `initialize` without a session id opens one (kept only
/// if initialization succeeds); anything else goes to the session its id names.
pub(crate) async fn post_to_session(
    shared: &Arc<Shared>,
    http: &Arc<HttpRequestParts>,
    principal: Option<String>,
    message: Message,
) -> Response {
    let headers = &http.headers;
    let is_initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
    let (session, created) = match header_str(headers, SESSION_HEADER) {
        None if is_initialize => {
            if shared.draining.load(std::sync::atomic::Ordering::Relaxed) {
                return forwarder::unavailable("this instance is shutting down; retry later");
            }
            // Recorded as this instance's only once the store knows where this instance is.
            if let Some(forwarder) = &shared.forwarder
                && !forwarder.may_own().await
            {
                return forwarder::unavailable(
                    "this instance is not announced in the shared session store; retry later",
                );
            }
            if let Err(response) = make_room(shared, principal.as_deref()) {
                return response;
            }
            let id = crate::engine::random_id();
            let service = shared.server.open(Opening::Initialize, principal.clone());
            let session =
                HttpSession::start(id.clone(), service, principal, shared, Some(shared.config.event_store.clone()));
            (session, true)
        }
        // A session owned here, else one served here for its owner.
        _ => match find_session(shared, headers, &principal) {
            Ok(s) => (s, false),
            Err(r) => return r,
        },
    };
    if created && let Ok(mut sessions) = shared.sessions.write() {
        sessions.insert(session.id().to_owned(), session.clone());
    }
    let recorded = matches!((&shared.forwarder, &message),
        (Some(_), Message::Request(r)) if created || changes_record(&r.method));
    let mut response = hand_over(&session, message, created.then(|| session.id().to_owned()), Some(http.clone())).await;
    if let (true, Some(forwarder)) = (recorded && response.status().is_success(), &shared.forwarder) {
        let bp = &forwarder.backplane;
        let ttl = bp.session_ttl(shared.config.idle_timeout);
        let record = record_of(&session).unwrap_or_default();
        if created {
            // Recorded before the client learns the id: its next request may land anywhere.
            if let Err(e) = bp.registry.claim(session.id(), &bp.instance, &record, ttl).await {
                tracing::warn!(error = %e, "cannot record a new session in the shared session store");
                response = forwarder::unavailable("the shared session store is unavailable; retry later");
            }
        } else if let Err(e) = bp.registry.save_state(session.id(), &record, ttl).await {
            tracing::warn!(error = %e, session = session.id(), "cannot record a session's new state");
        } else {
            // Replicas elsewhere start again from the new state.
            announce_changed(shared, session.id());
        }
    }
    if created && !response.status().is_success() {
        // `initialize` failed: the session was never usable.
        if let Ok(mut sessions) = shared.sessions.write() {
            sessions.remove(session.id());
        }
        session.close().await;
    }
    response
}

/// The session a POST names: the one owned here, else the replica served here for its owner.
#[allow(clippy::result_large_err)] // an error response is built once per rejected request
fn find_session(
    shared: &Shared,
    headers: &HeaderMap,
    principal: &Option<String>,
) -> Result<Arc<HttpSession>, Response> {
    let owned =
        header_str(headers, SESSION_HEADER).is_some_and(|id| shared.sessions.read().is_ok_and(|s| s.contains_key(id)));
    // A request forwarded here was sent to the owner: never served on a replica.
    let forwarded = headers.contains_key(super::FORWARDED_HEADER);
    match replica(shared, headers, principal).filter(|_| !owned && !forwarded) {
        Some(replica) => Ok(replica),
        None => lookup(shared, headers, principal),
    }
}

/// Hands a message to the session and answers the POST: 202 for notifications and responses;
/// for a request, JSON when the response is all there is, else an SSE stream.
/// `new_id` is the id of the session `initialize` just created, if it did.
pub(crate) async fn hand_over(
    session: &Arc<HttpSession>,
    message: Message,
    new_id: Option<String>,
    http: Option<Arc<HttpRequestParts>>,
) -> Response {
    let Message::Request(request) = message else {
        session.engine().handle_message(message).await;
        return StatusCode::ACCEPTED.into_response();
    };
    let id = request.id.clone();
    let mut events = match session.open_request_stream(&id) {
        Ok(events) => events,
        Err(OpenError::DuplicateId) => {
            let error =
                ErrorObject::invalid_request(format!("request id {id} is already in use by a request in flight"));
            let body = encode_error(Some(&id), &error);
            return (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        }
        // Closed between the lookup and now: as if it had not been found.
        Err(OpenError::Closed) => return session_not_found(),
    };
    session.engine().handle_http_request(request, http).await;
    let mut response = match events.recv().await {
        // Cancelled before it sent anything: no response will come. The request still gets
        // the SSE stream the spec asks for, ending at once.
        None if !session.closing().is_cancelled() => session::sse_response(Delivery::empty(), session.clone()),
        None => plain(StatusCode::SERVICE_UNAVAILABLE, "the session closed before answering"),
        Some(first) if first.is_response => {
            // A failed `initialize` is refused as a whole: no session was made.
            let is_error = first.frame.contains("\"error\":{") && !first.frame.contains("\"result\":");
            let status = if is_error && new_id.is_some() { StatusCode::BAD_REQUEST } else { StatusCode::OK };
            (status, [(header::CONTENT_TYPE, "application/json")], first.frame).into_response()
        }
        Some(first) => session::sse_response(Delivery::new(first, events), session.clone()),
    };
    if let Some(id) = new_id
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

pub(crate) async fn get(shared: &Arc<Shared>, headers: &HeaderMap, principal: Option<String>) -> Response {
    if shared.config.sessionless {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "this server keeps no sessions: there is no session stream to GET",
        );
    }
    if !accepts(headers, "text/event-stream") {
        return plain(StatusCode::NOT_ACCEPTABLE, "GET needs `Accept: text/event-stream`");
    }
    let last = header_str(headers, "last-event-id");
    // `<stream>-<seq>@<instance>`: an event of a stream a replica served, kept by that instance
    // (a client resuming it elsewhere was sent here), and resumed on the replica, for its user.
    let keeper = last.and_then(|last| last.split_once('@'));
    let session = match keeper {
        Some((_, keeper)) if shared.forwarder.as_ref().is_some_and(|f| *f.backplane.instance == *keeper) => {
            match replica(shared, headers, &principal) {
                Some(session) => session,
                None => return session_not_found(),
            }
        }
        Some(_) => return plain(StatusCode::NOT_FOUND, "those events are no longer available"),
        None => match lookup(shared, headers, &principal) {
            Ok(s) => s,
            Err(r) => return r,
        },
    };
    let attached = match keeper.map_or(last, |(id, _)| Some(id)) {
        Some(last) => match EventId::decode(last) {
            // A replica has no GET stream of its own.
            Some(after) if keeper.is_some() && after.stream == 0 => {
                return plain(StatusCode::NOT_FOUND, "those events are no longer available");
            }
            Some(after) => session.resume(after),
            None => return plain(StatusCode::BAD_REQUEST, "malformed Last-Event-ID"),
        },
        None => session.attach_standalone(),
    };
    match attached {
        Ok(delivery) => session::sse_response(delivery, session),
        Err(status) => plain(
            status,
            if status == StatusCode::CONFLICT {
                "this session already has an open GET stream"
            } else {
                "those events are no longer available"
            },
        ),
    }
}

pub(crate) async fn delete(shared: &Arc<Shared>, headers: &HeaderMap, principal: Option<String>) -> Response {
    if shared.config.sessionless {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "this server keeps no sessions: there is no session to end");
    }
    let session = match lookup(shared, headers, &principal) {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Ok(mut sessions) = shared.sessions.write() {
        sessions.remove(session.id());
    }
    session.close().await;
    release_now(shared, session.id()).await;
    StatusCode::OK.into_response()
}
