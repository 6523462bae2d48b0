//! The events of the streams replicas serve: kept in the deployment's shared event store (when
//! it has one, [`Backplane::events`](super::Backplane::events)) under the serving instance's
//! name, so that once that instance is gone, any instance replays what a client resuming such a
//! stream missed (`landing::replay_left_behind`).

use std::sync::Arc;

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

/// The key under which the events a replica on `instance` served of `session` are kept
/// (`suffix` is `@<instance>`).
pub(crate) fn key(session: &str, suffix: &str) -> String {
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
