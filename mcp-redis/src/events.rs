//! SSE events kept in Redis, so that a stream can be resumed after its session was taken over.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use typed_mcp::transport::http::{EventId, EventStore, MemoryEventStore};

use crate::{Redis, millis};

/// How many events of each session [`Redis::backplane`] keeps (as [`MemoryEventStore`] does by
/// default).
pub const DEFAULT_EVENTS_PER_SESSION: usize = 256;
/// How long [`Redis::backplane`] keeps a session's events after the newest: the default idle
/// timeout of a session (30 minutes) and a minute more.
pub const DEFAULT_EVENT_TTL: Duration = Duration::from_secs(31 * 60);
/// How many writes may wait for Redis; beyond that, events are kept by this instance only.
const QUEUE: usize = 16_384;
/// How long [`EventStore::flush`] waits for Redis at most.
const FLUSH_PATIENCE: Duration = Duration::from_secs(5);
/// The most writes sent to Redis in one round trip.
const BATCH: usize = 512;

/// One write, in the order the sessions made them.
enum Write {
    Event {
        session: Arc<str>,
        id: EventId,
        frame: String,
    },
    Forget(String),
    /// Answered once every write queued before it was sent.
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// An [`EventStore`] shared by the instances of a deployment, on Redis: the events are kept in
/// this instance's memory (so the owner replays them with no round trip), and written behind to
/// a Redis list per session (`{prefix}:events:{session}`, its newest `per_session` events,
/// expiring `ttl` after the last one), from which the instance taking a session over
/// [restores](EventStore::restore) them.
///
/// Writing never waits for Redis: a background task sends what the sessions stored since its
/// last round trip, in one pipelined round trip (a push per event and, per session, one trim and
/// one expiry). An event Redis did not get before its instance died (it was lost with the
/// instance, queued, or Redis was unreachable) is missing after a takeover: a client resuming
/// from before it is refused with `404` (it cannot catch up without a gap), as when the
/// events were trimmed; one resuming after it gets what follows.
pub struct RedisEvents {
    memory: MemoryEventStore,
    queue: mpsc::Sender<Write>,
    redis: Redis,
    per_session: usize,
    /// Set while writes are being dropped (the queue is full), so it is logged once.
    overflowing: AtomicBool,
}

impl std::fmt::Debug for RedisEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEvents").field("per_session", &self.per_session).finish_non_exhaustive()
    }
}

impl RedisEvents {
    /// The store on `redis`, keeping `per_session` events of each session for `ttl` after the
    /// last. Call within a tokio runtime (a task writes to Redis).
    pub(crate) fn new(redis: Redis, per_session: usize, ttl: Duration) -> Self {
        let per_session = per_session.max(1);
        let (queue, writes) = mpsc::channel(QUEUE);
        tokio::spawn(write_behind(redis.clone(), writes, per_session, ttl));
        RedisEvents {
            memory: MemoryEventStore::new(per_session),
            queue,
            redis,
            per_session,
            overflowing: AtomicBool::new(false),
        }
    }

    /// How many events of each session are kept.
    pub fn per_session(&self) -> usize {
        self.per_session
    }

    fn send(&self, write: Write) {
        match self.queue.try_send(write) {
            Ok(()) => {
                if self.overflowing.swap(false, Ordering::Relaxed) {
                    tracing::info!("SSE events reach Redis again");
                }
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                if !self.overflowing.swap(true, Ordering::Relaxed) {
                    tracing::warn!("Redis is not keeping up: SSE events are kept by this instance only");
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }
}

impl EventStore for RedisEvents {
    fn store(&self, session: &str, id: EventId, frame: &str) {
        self.memory.store(session, id, frame);
        self.send(Write::Event { session: session.into(), id, frame: frame.to_owned() });
    }

    fn replay(&self, session: &str, after: EventId) -> Option<Vec<(EventId, String)>> {
        self.memory.replay(session, after)
    }

    fn forget(&self, session: &str) {
        self.memory.forget(session);
        self.send(Write::Forget(session.to_owned()));
    }

    fn evict(&self, session: &str) {
        self.memory.forget(session);
    }

    fn flush(&self) -> typed_mcp::engine::BoxFuture<'_, ()> {
        Box::pin(async move {
            let (done, written) = tokio::sync::oneshot::channel();
            // Waits for room: what is queued is written meanwhile.
            if self.queue.send(Write::Flush(done)).await.is_ok() {
                let _ = tokio::time::timeout(FLUSH_PATIENCE, written).await;
            }
        })
    }

    fn restore<'a>(&'a self, session: &'a str) -> typed_mcp::engine::BoxFuture<'a, ()> {
        Box::pin(async move {
            let key = self.redis.session_key("events", session);
            let read = redis::cmd("LRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .query_async::<Vec<String>>(&mut self.redis.connection())
                .await;
            match read {
                Ok(entries) => {
                    let events: Vec<(EventId, String)> = entries
                        .into_iter()
                        .filter_map(|entry| {
                            let (id, frame) = entry.split_once('\n')?;
                            Some((EventId::decode(id)?, frame.to_owned()))
                        })
                        .collect();
                    tracing::debug!(session, events = events.len(), "restored a session's SSE events");
                    self.memory.load(session, events);
                }
                Err(e) => {
                    tracing::warn!(error = %e, session, "cannot restore a session's SSE events: they cannot be replayed");
                }
            }
        })
    }
}

/// Sends the queued writes to Redis, as many as are queued in one round trip, until the store
/// is dropped.
async fn write_behind(redis: Redis, mut writes: mpsc::Receiver<Write>, per_session: usize, ttl: Duration) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut failing = false;
    let keep = -i64::try_from(per_session).unwrap_or(i64::MAX);
    while writes.recv_many(&mut batch, BATCH).await > 0 {
        let mut commands = Vec::with_capacity(batch.len() + 8);
        let mut touched: Vec<&str> = Vec::new();
        for write in &batch {
            match write {
                Write::Event { session, id, frame } => {
                    let mut entry = id.encode();
                    entry.push('\n');
                    entry.push_str(frame);
                    let key = redis.session_key("events", session);
                    let mut push = redis::cmd("RPUSH");
                    push.arg(&key).arg(entry);
                    commands.push((key, push));
                    if !touched.contains(&&**session) {
                        touched.push(session);
                    }
                }
                Write::Forget(session) => {
                    let key = redis.session_key("events", session);
                    let mut forget = redis::cmd("DEL");
                    forget.arg(&key);
                    commands.push((key, forget));
                }
                Write::Flush(_) => {}
            }
        }
        for session in touched {
            let key = redis.session_key("events", session);
            let mut trim = redis::cmd("LTRIM");
            trim.arg(&key).arg(keep).arg(-1);
            let mut expire = redis::cmd("PEXPIRE");
            expire.arg(&key).arg(millis(ttl));
            commands.push((key.clone(), trim));
            commands.push((key, expire));
        }
        let written = if commands.is_empty() { Ok(Vec::new()) } else { redis.connection.batch(commands).await };
        match written {
            Ok(_) => {
                if std::mem::replace(&mut failing, false) {
                    tracing::info!("SSE events are written to Redis again");
                }
            }
            Err(e) => {
                if !std::mem::replace(&mut failing, true) {
                    tracing::warn!(error = %e, "cannot write SSE events to Redis: they are kept by this instance only");
                }
            }
        }
        for write in batch.drain(..) {
            if let Write::Flush(done) = write {
                let _ = done.send(());
            }
        }
    }
}
