//! Where SSE events are kept so that a client reconnecting with `Last-Event-ID` gets what it
//! missed.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// An SSE event id: the stream it belongs to and its position on that stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventId {
    /// The stream (one per POST that answered with SSE, plus the session's GET stream).
    pub stream: u64,
    /// The event's position on its stream, from 1.
    pub seq: u64,
}

impl EventId {
    /// The wire form, `"<stream>-<seq>"`.
    pub fn encode(&self) -> String {
        format!("{}-{}", self.stream, self.seq)
    }

    /// Reads the wire form.
    pub fn decode(text: &str) -> Option<EventId> {
        let (stream, seq) = text.trim().split_once('-')?;
        Some(EventId { stream: stream.parse().ok()?, seq: seq.parse().ok()? })
    }
}

/// Storage of a session's SSE events, for resumption. Implementations must bound what they
/// keep: a client that never reconnects must not make the server grow.
pub trait EventStore: Send + Sync + 'static {
    /// Records an event of `session`.
    fn store(&self, session: &str, id: EventId, frame: &str);
    /// The events of `after.stream` that come after `after`, oldest first. `None` when some of
    /// them were already dropped (the client cannot catch up).
    fn replay(&self, session: &str, after: EventId) -> Option<Vec<(EventId, String)>>;
    /// Forgets everything about `session`.
    fn forget(&self, session: &str);
    /// Makes what is kept of `session` elsewhere (a store shared by the instances of a
    /// deployment) available to [`replay`](Self::replay) here: called once when this instance
    /// takes over a session whose instance is gone, before the session serves anything. The
    /// default does nothing (a store in one process has nothing elsewhere).
    fn restore<'a>(&'a self, session: &'a str) -> crate::engine::BoxFuture<'a, ()> {
        let _ = session;
        Box::pin(std::future::ready(()))
    }

    /// Drops what this instance holds of `session` in its own memory, leaving what is kept where
    /// the other instances read it: called after replaying the events that an instance which
    /// left the deployment kept (read once, through [`restore`](Self::restore)), so that they
    /// are not held here too. The default does nothing (a store in one process keeps nothing of
    /// other instances).
    fn evict(&self, session: &str) {
        let _ = session;
    }

    /// Completes once what was stored so far is kept where the other instances of a deployment
    /// read it (a store writing behind has written it): called by a graceful shutdown
    /// ([`StreamableHttp::drain`](super::StreamableHttp::drain)) before the instance leaves. The
    /// default completes at once.
    fn flush(&self) -> crate::engine::BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// An [`EventStore`] in memory, keeping the newest events of each session up to a count.
#[derive(Debug)]
pub struct MemoryEventStore {
    per_session: usize,
    sessions: Mutex<HashMap<String, Kept>>,
}

/// One session's events.
#[derive(Debug, Default)]
struct Kept {
    events: VecDeque<(EventId, String)>,
    /// The last event dropped from each stream (for the newest streams that lost any), so a
    /// client resuming from before it is told it cannot catch up, even when no later event of
    /// that stream is kept yet.
    dropped: HashMap<u64, u64>,
}

impl MemoryEventStore {
    /// Keeps at most `per_session` events per session.
    pub fn new(per_session: usize) -> Self {
        MemoryEventStore { per_session: per_session.max(1), sessions: Mutex::default() }
    }
}

impl MemoryEventStore {
    /// Replaces what is kept of `session` with `events` (oldest first, as they were stored):
    /// the newest `per_session` of them. Where a stream's events are not consecutive (some were
    /// never kept, or were trimmed), only those after the last gap are replayable, and resuming
    /// from before it is refused; so is resuming from before a stream's first kept event.
    pub fn load(&self, session: &str, events: Vec<(EventId, String)>) {
        let mut kept = Kept::default();
        let skip = events.len().saturating_sub(self.per_session);
        let mut last: HashMap<u64, u64> = HashMap::new();
        for (id, frame) in events.into_iter().skip(skip) {
            match last.get(&id.stream) {
                Some(&prev) if id.seq == prev + 1 => {}
                Some(_) => {
                    // A gap: what came before it on this stream cannot be replayed whole.
                    kept.events.retain(|(e, _)| e.stream != id.stream);
                    kept.dropped.insert(id.stream, id.seq - 1);
                }
                None if id.seq > 1 => {
                    kept.dropped.insert(id.stream, id.seq - 1);
                }
                None => {}
            }
            last.insert(id.stream, id.seq);
            kept.events.push_back((id, frame));
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(session.to_owned(), kept);
        }
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new(256)
    }
}

impl EventStore for MemoryEventStore {
    fn store(&self, session: &str, id: EventId, frame: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            let kept = sessions.entry(session.to_owned()).or_default();
            if kept.events.len() == self.per_session
                && let Some((gone, _)) = kept.events.pop_front()
            {
                kept.dropped.insert(gone.stream, gone.seq);
                if kept.dropped.len() > self.per_session {
                    // Bounded too: forget the oldest stream's loss.
                    if let Some(oldest) = kept.dropped.keys().min().copied() {
                        kept.dropped.remove(&oldest);
                    }
                }
            }
            kept.events.push_back((id, frame.to_owned()));
        }
    }

    fn replay(&self, session: &str, after: EventId) -> Option<Vec<(EventId, String)>> {
        let sessions = self.sessions.lock().ok()?;
        let Some(kept) = sessions.get(session) else { return Some(Vec::new()) };
        if kept.dropped.get(&after.stream).is_some_and(|&last| last > after.seq) {
            return None;
        }
        let missed: Vec<_> =
            kept.events.iter().filter(|(id, _)| id.stream == after.stream && id.seq > after.seq).cloned().collect();
        match missed.first() {
            Some((first, _)) if first.seq > after.seq + 1 => None,
            _ => Some(missed),
        }
    }

    fn forget(&self, session: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.remove(session);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_after_an_id_and_stays_bounded() {
        let store = MemoryEventStore::new(3);
        for seq in 1..=2 {
            store.store("s", EventId { stream: 1, seq }, &format!("a{seq}"));
        }
        store.store("s", EventId { stream: 2, seq: 1 }, "b1");
        let replay = store.replay("s", EventId { stream: 1, seq: 1 }).unwrap();
        assert_eq!(replay, vec![(EventId { stream: 1, seq: 2 }, "a2".to_owned())]);
        store.store("s", EventId { stream: 2, seq: 2 }, "b2");
        // The oldest event was dropped: a client that saw nothing of stream 1 cannot catch up.
        assert_eq!(store.replay("s", EventId { stream: 1, seq: 0 }), None);
        assert_eq!(store.replay("s", EventId { stream: 1, seq: 2 }), Some(vec![]));
        assert_eq!(store.replay("other", EventId { stream: 1, seq: 0 }), Some(vec![]));
        // Both events of stream 1 are gone now, and none after them is kept: resuming from
        // before them must still be refused, not answered with nothing.
        store.store("s", EventId { stream: 3, seq: 1 }, "c1");
        store.store("s", EventId { stream: 3, seq: 2 }, "c2");
        assert_eq!(store.replay("s", EventId { stream: 1, seq: 1 }), None);
        assert_eq!(store.replay("s", EventId { stream: 1, seq: 2 }), Some(vec![]));
        store.forget("s");
        assert_eq!(store.replay("s", EventId { stream: 1, seq: 1 }), Some(vec![]));
        assert_eq!(EventId::decode("7-42"), Some(EventId { stream: 7, seq: 42 }));
        assert_eq!(EventId::decode("x"), None);
    }

    #[test]
    fn loaded_events_replay_only_what_is_whole() {
        let store = MemoryEventStore::new(10);
        let id = |stream, seq| EventId { stream, seq };
        let events = vec![
            (id(1, 1), "a1".to_owned()),
            (id(2, 3), "b3".to_owned()),
            (id(1, 2), "a2".to_owned()),
            (id(1, 4), "a4".to_owned()),
            (id(1, 5), "a5".to_owned()),
            (id(2, 4), "b4".to_owned()),
        ];
        store.load("s", events);
        // Stream 1 lost its third event: only what follows the gap is replayable.
        assert_eq!(store.replay("s", id(1, 1)), None);
        assert_eq!(store.replay("s", id(1, 3)), Some(vec![(id(1, 4), "a4".into()), (id(1, 5), "a5".into())]));
        // Stream 2 starts at its third event.
        assert_eq!(store.replay("s", id(2, 1)), None);
        assert_eq!(store.replay("s", id(2, 2)), Some(vec![(id(2, 3), "b3".into()), (id(2, 4), "b4".into())]));
        // Bounded like anything stored.
        let small = MemoryEventStore::new(2);
        small.load("s", vec![(id(1, 1), "a".into()), (id(1, 2), "b".into()), (id(1, 3), "c".into())]);
        assert_eq!(small.replay("s", id(1, 0)), None);
        assert_eq!(small.replay("s", id(1, 1)), Some(vec![(id(1, 2), "b".into()), (id(1, 3), "c".into())]));
    }
}
