//! Sessions changing hands: one whose owner is gone taken over here, and one this draining
//! instance hands back to the instance that forwarded its request.

use std::sync::Arc;

use axum::response::Response;

use super::forwarder::{Forwarder, Recorded, leaving};
use super::release::release;
use crate::protocol::Message;
use crate::transport::http::lifecycle::make_room;
use crate::transport::http::session::HttpSession;
use crate::transport::http::{Opening, Shared};

/// A request forwarded to this draining instance, for session `id`: sent back (the instance
/// that forwarded it takes the session over) unless the session has something running here,
/// which it then joins (`None`). A session sent back is ended here first, its events written
/// out for the instance taking it over.
pub(crate) async fn hand_over(shared: &Arc<Shared>, id: &str, principal: Option<&str>) -> Option<Response> {
    let handed = match shared.sessions.write() {
        Ok(mut sessions) => match sessions.get(id) {
            Some(session) if session.in_flight() > 0 => return None,
            // Not this user's: answered as unknown, by the caller.
            Some(session) if session.principal() != principal => return None,
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
    Some(leaving())
}

/// Takes over session `id` from the instance `gone`, whose heartbeat lapsed (or whose
/// connection was refused): a session is opened here in the recorded state and recorded as this
/// instance's, within this instance's session caps (an idle session may be closed to make
/// room). With `unless_back`, not when `gone` announced itself again meanwhile. `Ok(false)`
/// when another instance took it over first, the owner is back, or nothing is recorded to take
/// over; `Err(None)` when the registry failed, `Err(Some(_))` with the `503` when no session can
/// make room.
pub(crate) async fn take_over(
    shared: &Arc<Shared>,
    forwarder: &Forwarder,
    id: &str,
    gone: &str,
    unless_back: bool,
) -> Result<bool, Option<Response>> {
    let bp = &forwarder.backplane;
    let ttl = bp.session_ttl(shared.config.idle_timeout);
    // Recorded as this instance's only while the store knows where this instance is: else the
    // session would look orphaned again, to the next instance.
    if !forwarder.may_own().await {
        tracing::warn!(session = id, "cannot take over a session: this instance's lease is not confirmed");
        return Err(None);
    }
    // The owner was found gone a moment ago, maybe seconds (the store was out of reach): if it
    // announced itself again since, it lives, and keeps its session. (Not in the same atomic
    // step as the takeover, which a Cluster cannot do across slots: this narrows the window to
    // one round trip.)
    if unless_back && let Ok(Some(_)) = bp.registry.address_of(gone).await {
        tracing::debug!(session = id, owner = gone, "the owner of a session is back: not taken over");
        forwarder.forget(id);
        return Ok(false);
    }
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
    let service = shared.server.open(Opening::Restore(&recorded.session), recorded.principal.clone());
    let session =
        HttpSession::start(id.to_owned(), service, recorded.principal, shared, Some(shared.config.event_store.clone()));
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
    forwarder.drop_replica(id);
    tracing::info!(session = id, from = gone, "took over a session whose instance is gone");
    Ok(true)
}
