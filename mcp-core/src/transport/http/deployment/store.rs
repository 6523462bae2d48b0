//! Where a shared deployment keeps what its instances share: the registry of sessions and
//! instances, and the bus between the instances. Both are traits, so a deployment can keep them
//! where it likes; the `typed-mcp-redis` crate implements them on Redis.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::engine::BoxFuture;

/// Why the backplane could not do what was asked: its store is unreachable or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackplaneError {
    /// The shared store could not be reached, or did not answer in time.
    #[error("the shared session store is unavailable: {0}")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The shared store is getting its records back (it lost them, and the instances are
    /// recording their sessions again): what it does not record is not known to be absent.
    #[error("the shared session store is recovering its records")]
    Recovering,
    /// The shared store answered with something this instance cannot read.
    #[error("the shared session store holds an unreadable record: {0}")]
    Corrupt(String),
}

/// Who owns a session, as the [`SessionRegistry`] knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The owning instance's id.
    pub instance: String,
    /// Where its endpoint is reached, while its heartbeat is fresh; `None` once it lapsed (the
    /// instance is gone).
    pub address: Option<String>,
}

/// Where a shared deployment records which instance owns each session, and which instances are
/// alive. Every method is one round trip to the store; implementations must bound what they
/// keep (everything expires unless refreshed).
pub trait SessionRegistry: Send + Sync + 'static {
    /// Announces `instance` as alive and reachable at `address` for `lease`, and keeps the
    /// sessions in `active` (owned by it) recorded for `session_ttl` more. Called every
    /// [`Backplane::heartbeat`](super::Backplane::heartbeat). Returns whether `instance` was still announced before this
    /// beat: `false` at the first beat, and when the store lost its records meanwhile (it was
    /// restarted empty), which makes the instance [`reclaim`](Self::reclaim) its sessions.
    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        address: &'a str,
        lease: Duration,
        active: &'a [String],
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, BackplaneError>>;

    /// Records `instance` as the owner of `session`, with its `state`, unless the store
    /// records an owner already (it then keeps it), and returns whether `instance` owns the
    /// session now. How an instance whose announcement lapsed (the store lost its records, or
    /// its beats did not reach the store for a lease) records again the sessions it holds, and
    /// learns which of them another instance took over meanwhile (it then ends its copy). The
    /// default does nothing and answers `true`.
    fn reclaim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, BackplaneError>> {
        let _ = (session, instance, state, session_ttl);
        Box::pin(std::future::ready(Ok(true)))
    }

    /// Withdraws the announcement of `instance` (it is shutting down): its sessions are taken
    /// over by the next instance that receives a request for one of them, without waiting for
    /// its lease to lapse. Their records stay. The default does nothing (the lease lapses).
    fn leave<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<(), BackplaneError>> {
        let _ = instance;
        Box::pin(std::future::ready(Ok(())))
    }

    /// Records `instance` as the owner of `session`, and the session's `state` (what another
    /// instance needs to take it over), for `session_ttl` unless refreshed.
    fn claim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<(), BackplaneError>>;

    /// Replaces the recorded state of `session` (the client changed its log level or
    /// subscriptions).
    fn save_state<'a>(
        &'a self,
        session: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<(), BackplaneError>>;

    /// Makes `instance` the owner of `session` if `gone` still owns it (its heartbeat lapsed),
    /// and returns the session's recorded state; `None` when another instance took it over
    /// first, or there is no state to take over.
    fn take_over<'a>(
        &'a self,
        session: &'a str,
        gone: &'a str,
        instance: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<String>, BackplaneError>>;

    /// The owner of `session`; `None` when no instance owns it (it never existed, ended, or
    /// expired).
    fn owner<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<Owner>, BackplaneError>>;

    /// The recorded state of `session` (what [`claim`](Self::claim) and
    /// [`save_state`](Self::save_state) wrote), for an instance that serves one of the session's
    /// requests without owning it. `None` when nothing is recorded. The default answers `None`:
    /// such an instance then forwards the request to the owner instead.
    fn state<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        let _ = session;
        Box::pin(std::future::ready(Ok(None)))
    }

    /// The address `instance` announced with its last [`heartbeat`](Self::heartbeat), while
    /// its lease lasts; `None` when it is not announced (gone, or never was). Used to send a
    /// client resuming a stream a replica served to the instance holding it. The default answers
    /// `None`: such a client is then told the events are no longer available.
    fn address_of<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        let _ = instance;
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Forgets `session`, if `instance` still owns it.
    fn release<'a>(&'a self, session: &'a str, instance: &'a str) -> BoxFuture<'a, Result<(), BackplaneError>>;

    /// A registry of the same store whose connections are its own, made on first use in the
    /// runtime that uses them. An instance's heartbeat runs on a thread of its own, and beats
    /// through such a registry, so that its beats go on while the server's runtime is merely
    /// busy (its workers held by long polls, its host overloaded for a moment): a busy instance
    /// is not taken for a hung one. Beats stop when the server's runtime made no progress for
    /// [`RUNTIME_STALL_LIMIT`](super::heartbeat::RUNTIME_STALL_LIMIT). Called on the heartbeat's thread.
    /// The default, `None`: the beats go through this registry (and its connections, with
    /// whatever runtime drives them).
    fn for_heartbeat(&self) -> Option<Arc<dyn SessionRegistry>> {
        None
    }
}

/// Messages between the instances of a deployment: what one instance learns that others must
/// act on (a resource changed, a URL-mode flow was completed on a page another instance
/// served). Delivery is at most once, to the instances subscribed when it is published.
pub trait MessageBus: Send + Sync + 'static {
    /// Publishes `payload` to every instance subscribed to `channel`.
    fn publish<'a>(&'a self, channel: &'a str, payload: String) -> BoxFuture<'a, Result<(), BackplaneError>>;

    /// Publishes like [`publish`](Self::publish), and says how many subscribers received the
    /// message when the bus can tell (`None` when it cannot; the default). A client's answer
    /// meant for one instance that reached none (its subscription not made yet, or broken for a
    /// moment) is then refused with `503`, for the client to send it again, instead of lost.
    fn publish_counted<'a>(
        &'a self,
        channel: &'a str,
        payload: String,
    ) -> BoxFuture<'a, Result<Option<usize>, BackplaneError>> {
        Box::pin(async move { self.publish(channel, payload).await.map(|()| None) })
    }

    /// Hands every message published on `channel` from now on to `deliver`, until `stop` is
    /// cancelled. The subscription outlives trouble with the store: it is made again once the
    /// store is back (what was published meanwhile is lost), and `deliver` is then handed an
    /// empty message first, which says so: the instance drops what a missed message may have
    /// made stale (its replicas of other instances' sessions). No message is otherwise empty.
    fn subscribe(&self, channel: String, deliver: Box<dyn Fn(String) + Send + Sync>, stop: CancellationToken);
}
