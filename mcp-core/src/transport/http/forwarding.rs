//! One instance of a shared deployment: a request for a session another instance owns is
//! forwarded there, and a session whose instance is gone is taken over here.

use std::sync::Arc;

use axum::http::Method;
use axum::response::Response;

use super::backplane::{self, FORWARDED_HEADER, Recorded};
use super::lifecycle::{make_room, release};
use super::responses::header_str;
use super::session::HttpSession;
use super::{Opening, SESSION_HEADER, Shared};
use crate::protocol::Message;

/// Forwards a request for a session this instance does not hold to the instance that owns it;
/// `None` when it is to be served here (no session named, the session is local or unknown, or
/// the request was forwarded to this instance already).
pub(crate) async fn forward_if_elsewhere(
    shared: &Arc<Shared>,
    forwarder: &backplane::Forwarder,
    parts: &axum::http::request::Parts,
    bytes: axum::body::Bytes,
) -> Option<Response> {
    if !matches!(parts.method, Method::POST | Method::GET | Method::DELETE) {
        return None;
    }
    let id = header_str(&parts.headers, SESSION_HEADER)?;
    if parts.headers.contains_key(FORWARDED_HEADER) || shared.sessions.read().ok()?.contains_key(id) {
        return None;
    }
    if let Some(address) = forwarder.cached(id) {
        match forwarder.forward(&address, parts.method.clone(), &parts.headers, bytes.clone()).await {
            Ok(response) => return Some(response),
            // Gone since: ask the registry.
            Err(backplane::Unreachable) => forwarder.forget(id),
        }
    }
    let mut route = forwarder.route(id).await;
    if let backplane::Route::Gone(gone) = &route {
        match take_over(shared, forwarder, id, gone).await {
            // Taken over: served here, like any local session.
            Ok(true) => return None,
            // Another instance was faster: it owns the session now.
            Ok(false) => route = forwarder.route(id).await,
            Err(None) => route = backplane::Route::Unavailable,
            // Every session here is busy: refused like an `initialize` would be.
            Err(Some(refused)) => return Some(refused),
        }
    }
    match route {
        backplane::Route::Here | backplane::Route::Gone(_) => None,
        backplane::Route::Owner(address) => {
            let forwarded = forwarder.forward(&address, parts.method.clone(), &parts.headers, bytes).await;
            Some(forwarded.unwrap_or_else(|backplane::Unreachable| {
                forwarder.forget(id);
                tracing::warn!(address, "cannot reach the owner of a session");
                backplane::unavailable("the session's owner cannot be reached; retry later")
            }))
        }
        backplane::Route::Unavailable => {
            Some(backplane::unavailable("the shared session store is unavailable; retry later"))
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
    let ttl = shared.config.idle_timeout + bp.lease;
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
    tracing::info!(session = id, from = gone, "took over a session whose instance is gone");
    Ok(true)
}
