//! The events of the streams replicas serve: kept in the deployment's shared event store (when
//! it has one, [`Backplane::events`](super::Backplane::events)) under the serving instance's
//! name, so that once that instance is gone, any instance replays what a client resuming such a
//! stream missed.

use std::sync::Arc;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;

use super::forwarder::{Forwarder, Recorded, unavailable};
use crate::transport::http::responses::plain;
use crate::transport::http::{EventId, EventStore, MemoryEventStore};

/// Where the events of this instance's replicas are kept: `shared`, under `<session>@<instance>`
/// (apart from the owner's events of the session, numbered on their own), or this instance's
/// memory when the deployment shares none.
pub(crate) fn store(shared: Option<&Arc<dyn EventStore>>, instance: &str) -> Arc<dyn EventStore> {
    match shared {
        Some(store) => Arc::new(KeptBy { store: store.clone(), suffix: format!("@{instance}") }),
        None => Arc::new(MemoryEventStore::default()),
    }
}

/// The key under which the events a replica on `instance` served of `session` are kept.
fn key(session: &str, suffix: &str) -> String {
    let mut key = String::with_capacity(session.len() + suffix.len());
    key.push_str(session);
    key.push_str(suffix);
    key
}

/// A replica's events, in the shared store under the serving instance's name.
struct KeptBy {
    store: Arc<dyn EventStore>,
    /// `@<instance>`.
    suffix: String,
}

impl EventStore for KeptBy {
    fn store(&self, session: &str, id: EventId, frame: &str) {
        self.store.store(&key(session, &self.suffix), id, frame);
    }

    fn replay(&self, session: &str, after: EventId) -> Option<Vec<(EventId, String)>> {
        self.store.replay(&key(session, &self.suffix), after)
    }

    fn forget(&self, session: &str) {
        self.store.forget(&key(session, &self.suffix));
    }

    fn flush(&self) -> crate::engine::BoxFuture<'_, ()> {
        self.store.flush()
    }
}

/// Answers a `GET` resuming, after `after`, a stream that a replica on `keeper` served of
/// `session`, now that `keeper` is gone: the events the client missed, from the shared store,
/// and the end of the stream (nothing runs it any more). Only for the session's own user: the
/// session must still be recorded, for `principal`. `404` when there is no shared store, or
/// the events are no longer all there.
pub(crate) async fn replay_left_behind(
    forwarder: &Forwarder,
    session: &str,
    keeper: &str,
    after: EventId,
    principal: Option<&str>,
) -> Response {
    let gone = || plain(StatusCode::NOT_FOUND, "those events are no longer available");
    let Some(store) = &forwarder.backplane.events else { return gone() };
    // A replica has no GET stream of its own.
    if after.stream == 0 {
        return gone();
    }
    let recorded = match forwarder.backplane.registry.state(session).await {
        Ok(Some(state)) => serde_json::from_str::<Recorded>(&state).ok(),
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
    let kept = key(session, &suffix);
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
    crate::transport::http::sse::response(Body::from_stream(futures_util::stream::iter(events)))
}
