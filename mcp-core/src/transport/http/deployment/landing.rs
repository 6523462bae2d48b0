//! Where a request for a session this instance does not own lands: served here on a replica,
//! passed over the bus to whoever waits for it, or forwarded in one hop to the session's owner
//! (or, when the owner is gone, the session taken over here).

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse as _, Response};

use super::backplane::FORWARDED_HEADER;
use super::forwarder::{self, Forwarder, Whereabouts, unavailable};
use super::messages::Message;
use super::release::answers_or_cancels;
use super::replicas::{Replicated, replicate};
use super::takeover::{hand_over, take_over};
use crate::protocol::MethodName;
use crate::protocol::methods::Method as McpMethod;
use crate::transport::http::responses::{header_str, plain, session_not_found};
use crate::transport::http::{SESSION_HEADER, Shared};

/// Serves or forwards a request for a session this instance does not own: a request nothing
/// ties to the owner is served here, on a replica of the session (`None`: served by the
/// caller); an answer or a cancellation travels over the bus to whoever waits for it; the rest
/// is forwarded to the owner, or, when the owner is gone, the session is taken over here.
/// `None` too when no session is named, the session is owned here or unknown, or the request
/// was forwarded to this instance already.
pub(crate) async fn forward_if_elsewhere(
    shared: &Arc<Shared>,
    forwarder: &Forwarder,
    parts: &axum::http::request::Parts,
    principal: Option<&str>,
    identity: Option<&crate::auth::AuthInfo>,
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
            return Some(unavailable("this instance cannot renew its lease; retry later"));
        }
        if shared.draining.load(std::sync::atomic::Ordering::Relaxed) && !answers_or_cancels(&bytes) {
            return hand_over(shared, id, principal).await;
        }
        return None;
    }
    if parts.method == Method::GET
        && let Some((_, keeper)) = header_str(&parts.headers, "last-event-id").and_then(|last| last.split_once('@'))
    {
        // Resuming a stream a replica served: its events are kept by that replica's instance.
        if *keeper == *forwarder.backplane.instance {
            return None;
        }
        return Some(resume_where_kept(forwarder, &parts.headers, id, keeper, (principal, identity)).await);
    }
    if shared.sessions.read().ok()?.contains_key(id) {
        // Owned here. Only an answer to a replica's question, or a cancellation (of a request
        // that may run on a replica), goes elsewhere: told apart without reading the message
        // when it is a request of the session (the common case).
        let elsewhere = parts.method == Method::POST && forwarder.serves_where_it_lands() && answers_or_cancels(&bytes);
        if !elsewhere {
            return None;
        }
        return match Landing::of(&bytes) {
            Landing::Answer(asker) if *asker != *forwarder.backplane.instance => {
                Some(over_the_bus(shared, forwarder, &parts.headers, &bytes, id, principal, Some(&asker)).await)
            }
            Landing::Cancel => Some(over_the_bus(shared, forwarder, &parts.headers, &bytes, id, principal, None).await),
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
                if *asker == *forwarder.backplane.instance && forwarder.replica(id).is_some() {
                    return None;
                }
                return Some(
                    over_the_bus(shared, forwarder, &parts.headers, &bytes, id, principal, Some(&asker)).await,
                );
            }
            Landing::Cancel => {
                return Some(over_the_bus(shared, forwarder, &parts.headers, &bytes, id, principal, None).await);
            }
            Landing::Owner => {}
        }
    }
    if parts.method == Method::DELETE {
        forwarder.drop_replica(id);
    }
    let mut route = match forwarder.cached(id) {
        Some((instance, address)) => Whereabouts::Owner { instance, address },
        None => forwarder.locate(id).await,
    };
    // Whether the owner was found gone because its connection was refused (not only its lease).
    let mut refused = false;
    // At most: the owner remembered is gone, another instance took the session over first, the
    // request is forwarded there.
    for _ in 0..3 {
        route = match route {
            Whereabouts::Owner { instance, address } => {
                #[cfg(feature = "otel")]
                let (hop, bytes) = match observe_hop(shared, parts, &address, &bytes) {
                    Some((hop, body)) => (Some(hop), axum::body::Bytes::from(body)),
                    None => (None, bytes.clone()),
                };
                #[cfg(not(feature = "otel"))]
                let bytes = bytes.clone();
                let forwarded = forwarder.forward(
                    id,
                    (&instance, &address),
                    parts.method.clone(),
                    &parts.headers,
                    bytes,
                    (principal, identity),
                );
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
                    Err(forwarder::Unreachable) => {
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
                        refused = true;
                        Whereabouts::Gone(instance.to_string())
                    }
                }
            }
            Whereabouts::Gone(gone) => match take_over(shared, forwarder, id, &gone, !refused).await {
                // Taken over: served here, like any local session.
                Ok(true) => return None,
                // Another instance was faster: it owns the session now.
                Ok(false) => forwarder.locate(id).await,
                Err(None) => Whereabouts::Unavailable,
                // Every session here is busy: refused like an `initialize` would be.
                Err(Some(refused)) => return Some(refused),
            },
            Whereabouts::Here => return None,
            Whereabouts::Unavailable => break,
        };
    }
    match route {
        Whereabouts::Here => None,
        _ => Some(unavailable("the shared session store is unavailable; retry later")),
    }
}

/// Answers a `GET` resuming, after `after`, a stream that a replica on `keeper` served of
/// `session`, now that `keeper` is gone: the events the client missed, from the shared store,
/// and the end of the stream (nothing runs it any more). Only for the session's own user: the
/// session must still be recorded, for `principal`. `404` when there is no shared store, or
/// the events are no longer all there.
async fn replay_left_behind(
    forwarder: &Forwarder,
    session: &str,
    keeper: &str,
    after: crate::transport::http::EventId,
    principal: Option<&str>,
) -> Response {
    let gone = || plain(StatusCode::NOT_FOUND, "those events are no longer available");
    let Some(store) = &forwarder.backplane.events else { return gone() };
    // A replica has no GET stream of its own.
    if after.stream == 0 {
        return gone();
    }
    let recorded = match forwarder.backplane.registry.state(session).await {
        Ok(Some(state)) => serde_json::from_str::<forwarder::Recorded>(&state).ok(),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(error = %e, session, "cannot read a session's state");
            return unavailable("the shared session store is unavailable; retry later");
        }
    };
    // Another user's session, or one that ended, is answered as events not found.
    if recorded.is_none_or(|r| r.principal.as_deref() != principal) {
        return gone();
    }
    let suffix = format!("@{keeper}");
    let kept = super::kept_events::key(session, &suffix);
    store.restore(&kept).await;
    let missed = store.replay(&kept, after);
    // Read once: this instance keeps no copy of what another instance left behind.
    store.evict(&kept);
    let missed = match missed {
        Some(missed) if !missed.is_empty() => missed,
        _ => return gone(),
    };
    tracing::debug!(session, keeper, events = missed.len(), "replaying the events of a replica that is gone");
    let events: Vec<Result<_, std::convert::Infallible>> = missed
        .iter()
        .map(|(id, frame)| Ok(crate::transport::http::sse::format_event(frame, Some((*id, suffix.as_str())))))
        .collect();
    crate::transport::http::sse::response(axum::body::Body::from_stream(futures_util::stream::iter(events)))
}

/// `response`, a stream relayed from a session's owner, ended once `closing` is cancelled.
fn until_closed(response: Response, closing: tokio_util::sync::CancellationToken) -> Response {
    use futures_util::StreamExt as _;
    response.map(|body| {
        let stream = body.into_data_stream().take_until(closing.cancelled_owned());
        axum::body::Body::from_stream(stream)
    })
}

/// Forwards a `GET` resuming a stream a replica served to `keeper`, the instance that served
/// it (and keeps its events), which replays what the client missed and goes on with the live
/// stream. Once `keeper` is gone (it names no instance announced now), what the client missed
/// is replayed here from the deployment's shared event store, if it has one; otherwise it is
/// answered as events no longer available.
async fn resume_where_kept(
    forwarder: &Forwarder,
    headers: &axum::http::HeaderMap,
    session: &str,
    keeper: &str,
    vouched: (Option<&str>, Option<&crate::auth::AuthInfo>),
) -> Response {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
    if keeper.is_empty() || keeper.len() > super::backplane::MAX_INSTANCE_ID || !keeper.chars().all(allowed) {
        return plain(StatusCode::BAD_REQUEST, "malformed Last-Event-ID");
    }
    let gone = || plain(StatusCode::NOT_FOUND, "those events are no longer available");
    let address = match forwarder.backplane.registry.address_of(keeper).await {
        Ok(Some(address)) => address,
        Ok(None) => {
            let position = header_str(headers, "last-event-id").and_then(|last| last.split_once('@')).map(|p| p.0);
            return match position.and_then(crate::transport::http::EventId::decode) {
                Some(after) => replay_left_behind(forwarder, session, keeper, after, vouched.0).await,
                None => plain(StatusCode::BAD_REQUEST, "malformed Last-Event-ID"),
            };
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot read an instance's address");
            return unavailable("the shared session store is unavailable; retry later");
        }
    };
    let forwarded = forwarder.forward(session, (keeper, &address), Method::GET, headers, Default::default(), vouched);
    forwarded.await.unwrap_or_else(|_| gone())
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
    /// The client's answer to a question a replica asked (the id of its instance).
    Answer(String),
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
            (None, Some(id)) => {
                forwarder::asker_of(&id).map_or(Landing::Owner, |asker| Landing::Answer(asker.to_owned()))
            }
            _ => Landing::Owner,
        }
    }
}

/// The user of `session` (`Ok(None)`: no such session), as held here or recorded.
async fn whose(shared: &Shared, forwarder: &Forwarder, session: &str) -> Result<Option<Option<String>>, ()> {
    let owned = shared.sessions.read().ok().and_then(|s| s.get(session).cloned());
    let held = owned.or_else(|| forwarder.replica(session).map(|r| r.session));
    if let Some(held) = held {
        return Ok(Some(held.principal().map(str::to_owned)));
    }
    match forwarder.backplane.registry.state(session).await {
        Ok(Some(state)) => Ok(serde_json::from_str::<forwarder::Recorded>(&state).ok().map(|r| r.principal)),
        Ok(None) => Ok(None),
        Err(e) => {
            tracing::warn!(error = %e, session, "cannot read a session's state");
            Err(())
        }
    }
}

/// Sends a client's answer (to the instance `asker`, or, without one, a cancellation to every
/// instance) over the bus, to whoever holds the session and waits for it.
async fn over_the_bus(
    shared: &Shared,
    forwarder: &Forwarder,
    headers: &axum::http::HeaderMap,
    bytes: &[u8],
    session: &str,
    principal: Option<&str>,
    asker: Option<&str>,
) -> Response {
    // Checked as it would be where it is delivered; a malformed one is refused here.
    if let Err(refused) = crate::transport::http::responses::read_message(headers, bytes) {
        return *refused;
    }
    let Some(bus) = &forwarder.bus else {
        return unavailable("the instances cannot reach each other; retry later");
    };
    // Another user's session is unknown to this one, here as where it is delivered.
    match whose(shared, forwarder, session).await {
        Ok(Some(user)) if user.as_deref() == principal => {}
        Ok(_) => return session_not_found(),
        Err(()) => return unavailable("the shared session store is unavailable; retry later"),
    }
    let frame = String::from_utf8_lossy(bytes).into_owned();
    let started = tokio::time::Instant::now();
    loop {
        let message = Message::Deliver {
            session: session.to_owned(),
            principal: principal.map(str::to_owned),
            frame: frame.clone(),
        };
        let sent = bus.send_now(asker, message).await;
        // Nobody heard an answer, or the bus failed: the instance that asked is not listening
        // for a moment (its subscription is being made again, the bus's Redis failing over), and
        // many clients never send an answer twice. Sent again for a while; only then refused,
        // for a client that does to send it again.
        let unheard = matches!(sent, Ok(Some(0))) && asker.is_some();
        if (unheard || sent.is_err()) && started.elapsed() + DELIVERY_PAUSE < DELIVERY_PATIENCE {
            tokio::time::sleep(DELIVERY_PAUSE).await;
            continue;
        }
        return match sent {
            Ok(Some(0)) if asker.is_some() => {
                tracing::debug!(
                    session,
                    "no instance heard a client's answer; refused for the client to send it again"
                );
                unavailable("the instance waiting for this answer is not listening yet; retry")
            }
            Ok(_) => axum::http::StatusCode::ACCEPTED.into_response(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot pass a client's message to the instance waiting for it");
                unavailable("the instances cannot reach each other; retry later")
            }
        };
    }
}

/// How long a client's answer is sent again while no instance hears it (or the bus fails).
const DELIVERY_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);
/// How long between two sendings of an answer nobody heard.
const DELIVERY_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);
