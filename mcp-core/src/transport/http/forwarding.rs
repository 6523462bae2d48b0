//! One instance of a shared deployment: a request for a session another instance owns is
//! forwarded there, and a session whose instance is gone is taken over here.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use axum::http::Method;
use axum::response::{IntoResponse as _, Response};

use super::backplane::{self, FORWARDED_HEADER, Recorded};
use super::bus::{self, BROADCAST, Bus, release, tagged};
use super::lifecycle::make_room;
use super::responses::header_str;
use super::session::HttpSession;
use super::{Opening, SESSION_HEADER, Shared};
use crate::protocol::methods::Method as McpMethod;
use crate::protocol::{Message, MethodName};

/// Serves or forwards a request for a session this instance does not own: a request nothing
/// ties to the owner is served here, on a replica of the session (`None`: served by the
/// caller); an answer or a cancellation travels over the bus to whoever waits for it; the rest
/// is forwarded to the owner, or, when the owner is gone, the session is taken over here.
/// `None` too when no session is named, the session is owned here or unknown, or the request
/// was forwarded to this instance already.
pub(crate) async fn forward_if_elsewhere(
    shared: &Arc<Shared>,
    forwarder: &backplane::Forwarder,
    parts: &axum::http::request::Parts,
    principal: Option<&str>,
    bytes: axum::body::Bytes,
) -> Option<Response> {
    if !matches!(parts.method, Method::POST | Method::GET | Method::DELETE) {
        return None;
    }
    let id = header_str(&parts.headers, SESSION_HEADER)?;
    if parts.headers.contains_key(FORWARDED_HEADER) {
        // Sent here as to the owner. While this instance's lease may have lapsed, the instance
        // that sent it may have given up waiting and taken the session over (this process was
        // stopped): served once a beat says which sessions are still this instance's.
        if !forwarder.may_serve_forwarded().await {
            return Some(backplane::unavailable("this instance cannot renew its lease; retry later"));
        }
        if shared.draining.load(std::sync::atomic::Ordering::Relaxed) && !bus::answers_or_cancels(&bytes) {
            return hand_over(shared, id).await;
        }
        return None;
    }
    if shared.sessions.read().ok()?.contains_key(id) {
        // Owned here. Only an answer to a replica's question, or a cancellation (of a request
        // that may run on a replica), goes elsewhere: told apart without reading the message
        // when it is a request of the session (the common case).
        let elsewhere =
            parts.method == Method::POST && forwarder.serves_where_it_lands() && bus::answers_or_cancels(&bytes);
        if !elsewhere {
            return None;
        }
        return match Landing::of(&bytes) {
            Landing::Answer(asker) if asker != forwarder.tag => {
                Some(over_the_bus(forwarder, &parts.headers, &bytes, id, principal, Some(asker)).await)
            }
            Landing::Cancel => Some(over_the_bus(forwarder, &parts.headers, &bytes, id, principal, None).await),
            _ => None,
        };
    }
    if parts.method == Method::POST && forwarder.serves_where_it_lands() {
        match Landing::of(&bytes) {
            Landing::Call(tool) if forwarder.backplane.on_owner.contains(&tool) => {}
            Landing::Request | Landing::Call(_) => {
                if forwarder.replica(id).is_some() {
                    return None;
                }
                match replicate(shared, forwarder, id).await {
                    Replicated::Served => return None,
                    Replicated::Refused(response) => return Some(response),
                    Replicated::Forward => {}
                }
            }
            Landing::Answer(asker) => {
                if asker == forwarder.tag && forwarder.replica(id).is_some() {
                    return None;
                }
                return Some(over_the_bus(forwarder, &parts.headers, &bytes, id, principal, Some(asker)).await);
            }
            Landing::Cancel => {
                return Some(over_the_bus(forwarder, &parts.headers, &bytes, id, principal, None).await);
            }
            Landing::Owner => {}
        }
    }
    if parts.method == Method::DELETE {
        drop_replica(forwarder, id);
    }
    let mut route = match forwarder.cached(id) {
        Some((instance, address)) => backplane::Route::Owner { instance, address },
        None => forwarder.route(id).await,
    };
    // At most: the owner remembered is gone, another instance took the session over first, the
    // request is forwarded there.
    for _ in 0..3 {
        route = match route {
            backplane::Route::Owner { instance, address } => {
                #[cfg(feature = "otel")]
                let (hop, bytes) = match observe_hop(shared, parts, &address, &bytes) {
                    Some((hop, body)) => (Some(hop), axum::body::Bytes::from(body)),
                    None => (None, bytes.clone()),
                };
                #[cfg(not(feature = "otel"))]
                let bytes = bytes.clone();
                let forwarded = forwarder.forward(id, &instance, &address, parts.method.clone(), &parts.headers, bytes);
                match forwarded.await {
                    Ok(response) if parts.method == Method::GET => {
                        // A stream relayed from the owner ends when this instance closes: its
                        // client opens it again, on an instance that stays.
                        return Some(until_closed(response, shared.closing.clone()));
                    }
                    Ok(response) => {
                        #[cfg(feature = "otel")]
                        let response = match hop {
                            Some(hop) => ending(response, hop),
                            None => response,
                        };
                        return Some(response);
                    }
                    Err(backplane::Unreachable) => {
                        // The hop failed; the request is served here (or forwarded again), in
                        // spans of its own.
                        #[cfg(feature = "otel")]
                        if let Some(hop) = hop {
                            hop.end(Err(crate::telemetry::Failure::Other(
                                "_OTHER",
                                "the session's owner could not be reached".into(),
                            )));
                        }
                        // Its connection refused (or not made in time): the owner is gone,
                        // whatever its lease says; or it hangs, and its lease lapsed. The
                        // session is taken over here, now (unless it moved: then it is asked
                        // where).
                        forwarder.forget(id);
                        tracing::info!(%address, owner = %instance, session = id, "the owner of a session cannot be reached");
                        backplane::Route::Gone(instance.to_string())
                    }
                }
            }
            backplane::Route::Gone(gone) => match take_over(shared, forwarder, id, &gone).await {
                // Taken over: served here, like any local session.
                Ok(true) => return None,
                // Another instance was faster: it owns the session now.
                Ok(false) => forwarder.route(id).await,
                Err(None) => backplane::Route::Unavailable,
                // Every session here is busy: refused like an `initialize` would be.
                Err(Some(refused)) => return Some(refused),
            },
            backplane::Route::Here => return None,
            backplane::Route::Unavailable => break,
        };
    }
    match route {
        backplane::Route::Here => None,
        _ => Some(backplane::unavailable("the shared session store is unavailable; retry later")),
    }
}

/// A request forwarded to this draining instance, for session `id`: sent back (the instance
/// that forwarded it takes the session over) unless the session has something running here,
/// which it then joins (`None`). A session sent back is ended here first, its events written
/// out for the instance taking it over.
async fn hand_over(shared: &Arc<Shared>, id: &str) -> Option<Response> {
    let handed = match shared.sessions.write() {
        Ok(mut sessions) => match sessions.get(id) {
            Some(session) if session.in_flight() > 0 => return None,
            Some(_) => sessions.remove(id),
            // Not held here (any more): sent back all the same.
            None => None,
        },
        Err(_) => None,
    };
    if let Some(session) = handed {
        tracing::debug!(session = id, "handing a session over: this instance is draining");
        session.close_keeping_events(true).await;
    }
    shared.config.event_store.flush().await;
    Some(backplane::leaving())
}

/// `response`, a stream relayed from a session's owner, ended once `closing` is cancelled.
fn until_closed(response: Response, closing: tokio_util::sync::CancellationToken) -> Response {
    use futures_util::StreamExt as _;
    response.map(|body| {
        let stream = body.into_data_stream().take_until(closing.cancelled_owned());
        axum::body::Body::from_stream(stream)
    })
}

/// The spans of a request forwarded to the owner at `address`, when the server has telemetry and
/// the request is a POSTed JSON-RPC request; with the body to forward instead (its `_meta`
/// carrying the hop's context).
#[cfg(feature = "otel")]
fn observe_hop(
    shared: &Shared,
    parts: &axum::http::request::Parts,
    address: &str,
    bytes: &[u8],
) -> Option<(crate::telemetry::Hop, Vec<u8>)> {
    let telemetry = shared.server.telemetry()?;
    if parts.method != Method::POST {
        return None;
    }
    let header = |name: &str| header_str(&parts.headers, name).map(str::to_owned);
    let owner = address.parse::<axum::http::Uri>().ok();
    let owner = owner.as_ref().and_then(|uri| Some((uri.host()?, uri.port_u16()?)));
    let client = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0);
    telemetry.forwarding(bytes, crate::telemetry::Forwarding { header: &header, client, owner })
}

/// `response` (the owner's answer to a forwarded request), ending `hop` once its body is sent
/// on: at once for an error status or an answer of known length, at the end of the stream
/// otherwise.
#[cfg(feature = "otel")]
fn ending(response: Response, hop: crate::telemetry::Hop) -> Response {
    use axum::body::HttpBody as _;
    use futures_util::StreamExt as _;
    let (parts, body) = response.into_parts();
    if !parts.status.is_success() {
        let failure = crate::telemetry::Failure::Other("_OTHER", format!("the owner answered {}", parts.status));
        hop.end(Err(failure));
        return Response::from_parts(parts, body);
    }
    if body.size_hint().exact().is_some() {
        // A JSON answer (read whole when small): the hop is over.
        hop.end(Ok(()));
        return Response::from_parts(parts, body);
    }
    let chunks = body.into_data_stream();
    let stream = futures_util::stream::unfold((chunks, Some(hop)), |(mut chunks, mut hop)| async move {
        match chunks.next().await {
            Some(chunk) => Some((chunk, (chunks, hop))),
            None => {
                if let Some(hop) = hop.take() {
                    hop.end(Ok(()));
                }
                None
            }
        }
    });
    Response::from_parts(parts, axum::body::Body::from_stream(stream))
}

/// What a POST for a session owned elsewhere carries, as far as where to serve it goes.
enum Landing {
    /// A request nothing ties to the owner: served here.
    Request,
    /// A call of this tool: served here unless the tool runs on the owner.
    Call(String),
    /// The client's answer to a question a replica asked (the tag of its instance).
    Answer(u64),
    /// A cancellation: for whichever instance runs the request.
    Cancel,
    /// Anything else: for the owner.
    Owner,
}

impl Landing {
    fn of(body: &[u8]) -> Landing {
        #[derive(serde::Deserialize)]
        struct Peek<'a> {
            method: Option<MethodName>,
            id: Option<crate::protocol::RequestId>,
            #[serde(borrow)]
            params: Option<Params<'a>>,
        }
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            #[serde(borrow)]
            name: Option<std::borrow::Cow<'a, str>>,
        }
        // Only an object is one message: serde would read `Peek` from an array too, by position.
        if !body.trim_ascii_start().starts_with(b"{") {
            return Landing::Owner;
        }
        let Ok(peek) = serde_json::from_slice::<Peek>(body) else { return Landing::Owner };
        let method = peek.method.as_ref().map(|m| m.id());
        match (method, peek.id) {
            (Some(Some(McpMethod::ToolsCall)), Some(_)) => {
                peek.params.and_then(|p| p.name).map_or(Landing::Request, |name| Landing::Call(name.into_owned()))
            }
            (Some(Some(McpMethod::Initialize)), Some(_)) => Landing::Owner,
            (Some(Some(method)), Some(_)) if method.info().changes_session => Landing::Owner,
            (Some(_), Some(_)) => Landing::Request,
            (Some(Some(McpMethod::Cancelled)), None) => Landing::Cancel,
            (None, Some(id)) => backplane::asker_of(&id).map_or(Landing::Owner, Landing::Answer),
            _ => Landing::Owner,
        }
    }
}

/// How making a replica went.
enum Replicated {
    /// The request is served here (on a new replica, or on the session taken over).
    Served,
    /// Served nowhere: this answer says why.
    Refused(Response),
    /// To be forwarded to the owner after all.
    Forward,
}

/// Makes a replica of session `id`, which another instance owns, from its recorded state; or,
/// when its owner is gone, takes the session over.
async fn replicate(shared: &Arc<Shared>, forwarder: &backplane::Forwarder, id: &str) -> Replicated {
    let bp = &forwarder.backplane;
    let owner = match forwarder.route(id).await {
        backplane::Route::Owner { instance, .. } => instance,
        backplane::Route::Gone(gone) => {
            return match take_over(shared, forwarder, id, &gone).await {
                Ok(true) => Replicated::Served,
                Ok(false) => Replicated::Forward,
                Err(None) => {
                    Replicated::Refused(backplane::unavailable("the shared session store is unavailable; retry later"))
                }
                Err(Some(refused)) => Replicated::Refused(refused),
            };
        }
        // Unknown: answered as such by the caller.
        backplane::Route::Here => return Replicated::Served,
        backplane::Route::Unavailable => {
            return Replicated::Refused(backplane::unavailable("the shared session store is unavailable; retry later"));
        }
    };
    let too_many = forwarder.replicas.read().map_or(true, |r| r.len() >= shared.config.max_sessions);
    if too_many {
        return Replicated::Forward;
    }
    let state = match bp.registry.state(id).await {
        Ok(Some(state)) => state,
        Ok(None) => return Replicated::Forward,
        Err(e) => {
            tracing::warn!(error = %e, session = id, "cannot read a session's state");
            return Replicated::Refused(backplane::unavailable("the shared session store is unavailable; retry later"));
        }
    };
    let Ok(recorded) = serde_json::from_str::<Recorded>(&state) else {
        tracing::warn!(session = id, "a session has an unreadable record");
        return Replicated::Forward;
    };
    let slot = Arc::new(crate::auth::AuthSlot::default());
    let service = shared.server.open(Opening::Restore(&recorded.session), recorded.principal.clone(), slot.clone());
    // Not resumable: its streams carry no event ids (the owner numbers and keeps the session's
    // events); a client whose connection drops retries the request.
    let session = HttpSession::start(id.to_owned(), service, recorded.principal, slot, shared, false);
    session.engine().peer().number_requests_from(backplane::REPLICA_IDS | (forwarder.tag << 32) as i64);
    let bus = bp.bus.clone();
    let (channel, session_id) = (tagged(backplane::tag_of(&owner)), id.to_owned());
    session.relay_unrelated(Box::new(move |frame| {
        let Some(bus) = bus.clone() else { return };
        let channel = channel.clone();
        let Ok(payload) = serde_json::to_string(&Bus::Notify { session: session_id.clone(), frame }) else { return };
        tokio::spawn(async move {
            if let Err(e) = bus.publish(&channel, payload).await {
                tracing::warn!(error = %e, "cannot hand a session's message to its owner");
            }
        });
    }));
    let replica = backplane::Replica { session: session.clone(), owner };
    let kept = match forwarder.replicas.write() {
        Ok(mut replicas) => Arc::ptr_eq(&replicas.entry(id.to_owned()).or_insert(replica).session, &session),
        Err(_) => false,
    };
    if !kept {
        // Another request made one first: it is used instead.
        session.close().await;
    } else {
        tracing::debug!(session = id, "serving a session owned by another instance");
    }
    Replicated::Served
}

/// Ends the replica of `id`, if there is one, once its requests are answered.
fn drop_replica(forwarder: &backplane::Forwarder, id: &str) {
    let replica = forwarder.replicas.write().ok().and_then(|mut r| r.remove(id));
    if let Some(replica) = replica {
        replica.session.close_when_idle();
    }
}

/// Sends a client's answer (to the instance `asker`, or, without one, a cancellation to every
/// instance) over the bus, to whoever holds the session and waits for it.
async fn over_the_bus(
    forwarder: &backplane::Forwarder,
    headers: &axum::http::HeaderMap,
    bytes: &[u8],
    session: &str,
    principal: Option<&str>,
    asker: Option<u64>,
) -> Response {
    // Checked as it would be where it is delivered; a malformed one is refused here.
    if let Err(refused) = super::responses::read_message(headers, bytes) {
        return *refused;
    }
    let Some(bus) = &forwarder.backplane.bus else {
        return backplane::unavailable("the instances cannot reach each other; retry later");
    };
    let frame = String::from_utf8_lossy(bytes).into_owned();
    let message = Bus::Deliver { session: session.to_owned(), principal: principal.map(str::to_owned), frame };
    let Ok(payload) = serde_json::to_string(&message) else {
        return backplane::unavailable("cannot pass the message on; retry later");
    };
    let channel = asker.map_or_else(|| BROADCAST.to_owned(), tagged);
    match bus.publish_counted(&channel, payload).await {
        // An answer nobody heard: the instance that asked is not listening yet (or for a
        // moment no more); the client sends it again.
        Ok(Some(0)) if asker.is_some() => {
            tracing::debug!(session, "no instance heard a client's answer; refused for the client to send it again");
            backplane::unavailable("the instance waiting for this answer is not listening yet; retry")
        }
        Ok(_) => axum::http::StatusCode::ACCEPTED.into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "cannot pass a client's message to the instance waiting for it");
            backplane::unavailable("the instances cannot reach each other; retry later")
        }
    }
}

/// Takes over session `id` from the instance `gone`, whose heartbeat lapsed: a session is
/// opened here in the recorded state and recorded as this instance's, within this instance's
/// session caps (an idle session may be closed to make room). `Ok(false)` when another
/// instance took it over first (or nothing is recorded to take over); `Err(None)` when the
/// registry failed, `Err(Some(_))` with the `503` when no session can make room.
pub(crate) async fn take_over(
    shared: &Arc<Shared>,
    forwarder: &backplane::Forwarder,
    id: &str,
    gone: &str,
) -> Result<bool, Option<Response>> {
    let bp = &forwarder.backplane;
    let ttl = bp.session_ttl(shared.config.idle_timeout);
    // A session taken over counts against this instance's caps like one it opened: room is
    // made first (so that, when none can be, the session stays for another instance).
    make_room(shared, None).map_err(Some)?;
    let state = match bp.registry.take_over(id, gone, &bp.instance, ttl).await {
        Ok(Some(state)) => state,
        Ok(None) => return Ok(false),
        Err(e) => {
            tracing::warn!(error = %e, session = id, "cannot take over a session");
            return Err(None);
        }
    };
    let Ok(recorded) = serde_json::from_str::<Recorded>(&state) else {
        tracing::warn!(session = id, "a session to take over has an unreadable record");
        return Ok(false);
    };
    // Its user's cap, known now.
    if let Err(refused) = make_room(shared, recorded.principal.as_deref()) {
        // Recorded as ours, but not served: it ends here, like an evicted one.
        release(shared, id);
        return Err(Some(refused));
    }
    // What the lost instance stored of the session's streams becomes replayable here.
    shared.config.event_store.restore(id).await;
    let slot = Arc::new(crate::auth::AuthSlot::default());
    let service = shared.server.open(Opening::Restore(&recorded.session), recorded.principal.clone(), slot.clone());
    let session = HttpSession::start(id.to_owned(), service, recorded.principal, slot, shared, true);
    // The client may still hold requests of the lost instance (numbered from 0): ours start
    // past any of those, and past those of an earlier takeover (ids stay below 2^53, which
    // JavaScript clients read exactly). So do the ids of our SSE streams and events, which
    // must not repeat those the lost instance stored.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let base = i64::try_from(now.as_millis()).unwrap_or(0).saturating_mul(1000);
    session.engine().peer().number_requests_from(base);
    session.number_events_from(u64::try_from(base).unwrap_or(0));
    // As after `initialize`: the session takes part in announcements.
    let initialized = crate::protocol::Notification { method: "notifications/initialized".into(), params: None };
    session.engine().handle_message(Message::Notification(initialized)).await;
    if let Ok(mut sessions) = shared.sessions.write() {
        sessions.insert(id.to_owned(), session);
    }
    // Served here as its owner from now on.
    drop_replica(forwarder, id);
    tracing::info!(session = id, from = gone, "took over a session whose instance is gone");
    Ok(true)
}

/// How long a replica is kept without a request.
const REPLICA_IDLE: Duration = Duration::from_secs(60);

/// Makes this instance hear what the others send about sessions, until the endpoint closes.
pub(crate) fn join(shared: &Arc<Shared>) {
    let Some(forwarder) = &shared.forwarder else { return };
    let Some(bus) = &forwarder.backplane.bus else { return };
    for channel in [BROADCAST.to_owned(), tagged(forwarder.tag)] {
        let weak = Arc::downgrade(shared);
        bus.subscribe(channel, Box::new(move |payload| on_bus_message(&weak, &payload)), shared.closing.clone());
    }
}

/// Once per heartbeat: the replicas used since `since` (their records are renewed, and their
/// owners are told), and the end of those idle for long.
pub(crate) fn replicas_beat(shared: &Shared, since: Instant) -> Vec<String> {
    let Some(forwarder) = &shared.forwarder else { return Vec::new() };
    let idle_limit = REPLICA_IDLE.min(shared.config.idle_timeout);
    let mut used: std::collections::HashMap<Arc<str>, Vec<String>> = std::collections::HashMap::new();
    let mut idle = Vec::new();
    if let Ok(replicas) = forwarder.replicas.read() {
        for (id, replica) in replicas.iter() {
            if replica.session.last_active() >= since || replica.session.in_flight() > 0 {
                used.entry(replica.owner.clone()).or_default().push(id.clone());
            } else if replica.session.idle_for() >= idle_limit {
                idle.push(id.clone());
            }
        }
    }
    for id in idle {
        drop_replica(forwarder, &id);
    }
    let mut active = Vec::new();
    if let Some(bus) = &forwarder.backplane.bus {
        for (owner, sessions) in used {
            active.extend(sessions.iter().cloned());
            let Ok(payload) = serde_json::to_string(&Bus::Touch { sessions }) else { continue };
            let bus = bus.clone();
            tokio::spawn(async move {
                let _ = bus.publish(&tagged(backplane::tag_of(&owner)), payload).await;
            });
        }
    }
    active
}

/// The session `id` held here: the one owned here, else the replica.
fn held(shared: &Shared, id: &str) -> Option<Arc<HttpSession>> {
    let owned = shared.sessions.read().ok().and_then(|s| s.get(id).cloned());
    owned.or_else(|| shared.forwarder.as_ref()?.replica(id).map(|r| r.session))
}

/// Acts on one message from another instance about a session.
fn on_bus_message(shared: &Weak<Shared>, payload: &str) {
    let Some(shared) = shared.upgrade() else { return };
    let message = match serde_json::from_str::<Bus>(payload) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!(error = %e, "an unreadable message about a session from another instance");
            return;
        }
    };
    match message {
        Bus::Deliver { session, principal, frame } => {
            // Another user's session is not theirs to answer in.
            let Some(session) = held(&shared, &session).filter(|s| s.principal() == principal.as_deref()) else {
                return;
            };
            let Ok(message) = Message::decode(&frame) else { return };
            session.touch();
            tokio::spawn(async move { session.engine().handle_message(message).await });
        }
        Bus::Notify { session, frame } => {
            let owned = shared.sessions.read().ok().and_then(|s| s.get(&session).cloned());
            if let Some(session) = owned {
                session.deliver_unrelated(frame);
            }
        }
        Bus::Touch { sessions } => {
            if let Ok(owned) = shared.sessions.read() {
                sessions.iter().filter_map(|id| owned.get(id)).for_each(|s| s.touch());
            }
        }
        Bus::Changed { session } => {
            if let Some(forwarder) = &shared.forwarder {
                drop_replica(forwarder, &session);
            }
        }
    }
}

/// The replica a POST names, if this instance serves one for the request's user.
pub(crate) fn replica(
    shared: &Shared,
    headers: &axum::http::HeaderMap,
    principal: &Option<String>,
) -> Option<Arc<HttpSession>> {
    let id = header_str(headers, SESSION_HEADER)?;
    let replica = shared.forwarder.as_ref()?.replica(id)?.session;
    (replica.principal() == principal.as_deref()).then(|| {
        replica.touch();
        replica
    })
}
