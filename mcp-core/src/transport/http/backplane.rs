//! Shared deployments: the backplane's traits, and the forwarding of requests to the instance
//! owning their session (see [`Backplane`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;

use tokio_util::sync::CancellationToken;

use super::session::HttpSession;
use crate::engine::{BoxFuture, Service as _};

/// The header an instance adds to a request it forwards to the session's owner. The owner
/// serves such a request itself or answers it as not found; it never forwards it again.
pub const FORWARDED_HEADER: &str = "mcp-forwarded-by";

/// The header of the `503` a draining instance answers a forwarded request with instead of
/// serving it: the session is handed over, and the instance that forwarded the request takes
/// it over and serves the request itself.
pub const LEAVING_HEADER: &str = "mcp-instance-leaving";

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
    /// [`Backplane::heartbeat`]. Returns whether `instance` was still announced before this
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

    /// Forgets `session`, if `instance` still owns it.
    fn release<'a>(&'a self, session: &'a str, instance: &'a str) -> BoxFuture<'a, Result<(), BackplaneError>>;

    /// A registry of the same store whose connections are its own, made on first use in the
    /// runtime that uses them. An instance's heartbeat runs on a thread of its own, and beats
    /// through such a registry, so that its beats go on while the server's runtime is merely
    /// busy (its workers held by long polls, its host overloaded for a moment): a busy instance
    /// is not taken for a hung one. Beats stop when the server's runtime made no progress for
    /// [`RUNTIME_STALL_LIMIT`](super::RUNTIME_STALL_LIMIT). Called on the heartbeat's thread.
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
    /// store is back (what was published meanwhile is lost).
    fn subscribe(&self, channel: String, deliver: Box<dyn Fn(String) + Send + Sync>, stop: CancellationToken);
}

/// How a server takes part in a shared deployment: several instances of one server behind any
/// load balancer, each able to serve any session.
///
/// The instance whose endpoint received a session's `initialize` owns the session: it holds the
/// session's GET stream and records it in a [`SessionRegistry`], where every instance also
/// announces itself (its endpoint address) with a heartbeat.
///
/// **A request is served where it lands.** A 2025-era request for a session another instance
/// owns is served by the instance it reached, on a *replica* of the session built from its
/// recorded state (protocol version, client capabilities, log level, user), kept while it is
/// used. What such a request sends before its answer (progress, logs, elicitation and sampling
/// requests) goes on its own POST's SSE stream, as on the owner; the client's answer to one of
/// those questions may be POSTed to any instance: the question's id names the instance asking
/// it, and the answer reaches that instance over the [`MessageBus`]. So do cancellations (to
/// whichever instance runs the request), and what a replica sends outside any request (the
/// completion of a URL-mode flow), which reaches the owner's GET stream.
///
/// **What goes to the owner**, forwarded in one HTTP hop (the owner's answer streams back
/// through the instance the client reached), is what only the owner can do:
/// - the session's `GET` stream and its `Last-Event-ID` resumption: the owner is where
///   announcements for the session arrive and where its events are numbered and kept;
/// - `DELETE`: the owner ends the session and its record;
/// - requests that change what is recorded of the session (`logging/setLevel`,
///   `resources/subscribe`, `resources/unsubscribe`): the owner applies them to the session
///   whose subscriptions its announcements read, records the new state, and tells the replicas
///   to start again from it;
/// - the client's answer to a question the owner's own handler asked (the handler awaits it
///   there), and the notifications other than cancellation.
///
/// Without a bus (or a registry that does not give out [`state`](SessionRegistry::state)),
/// every request for a session owned elsewhere is forwarded.
///
/// A request that lands on its session's owner costs nothing more than with a single process:
/// the session is found in the instance's own table, and the registry is not asked (with a
/// shared [`events`](Self::events) store, the SSE events it sends are also queued for a
/// background writer, which the request does not wait for). On another instance, the first
/// request of a session reads its owner and state (three reads); the following ones are served
/// from the replica with no round trip to the store. When the registry cannot answer, requests
/// needing it get `503` at once, while the others go on being served.
///
/// **Takeover.** When the owner cannot be reached (its connection is refused, or not made within
/// a second), or its lease lapsed (it renewed its presence for none of the last three
/// [`heartbeat`](Self::heartbeat)s: one second by default), the instance that needed it takes the
/// session over on the spot (see [`SessionRegistry::take_over`]) and serves the request itself.
/// An owner that accepts the forwarded request but does not answer (a hung or stopped process,
/// whose kernel still accepts connections) is found out the same way: while no answer has come,
/// the forwarding instance looks at the owner's lease every quarter of it, and takes the session
/// over once the lease lapsed. An instance whose endpoint is closed
/// ([`StreamableHttp::close_all`](super::StreamableHttp::close_all),
/// [`StreamableHttp::drain`](super::StreamableHttp::drain)) leaves the registry at once, so its
/// sessions are taken over without waiting for its lease.
///
/// **An owner taken over while alive** (its beats did not reach the store for a lease: its
/// process stopped or starved of CPU, or cut off from the store but not from the other instances)
/// does not go on serving the sessions it lost. Its next beat that reaches the store finds its
/// lease lapsed: it asks the registry which of its sessions another instance now owns
/// ([`SessionRegistry::reclaim`]) and ends its copy of those (their requests still running here
/// end with an error, their `GET` streams close, and the client's next `GET` reaches the new
/// owner); the others stay its own. A request forwarded to it while its own lease, as it last
/// renewed it, is older than the lease waits for that beat (and is refused with `503` if the
/// beat does not come within a second): so a request another instance gave up waiting for is
/// not run here too when the process resumes, the session being another's by then.
/// One case is not covered: a request forwarded to an owner that was alive and running it, but
/// whose beats stopped reaching the store before it answered, is run again by the instance that
/// took the session over. Where instances may stall for a second (overloaded hosts), give a
/// longer [`heartbeat`](Self::heartbeat).
///
/// Each part is a trait, so a deployment can keep it where it likes; the `typed-mcp-redis` crate
/// implements them on Redis. Without [`HttpConfig::backplane`](super::HttpConfig::backplane) a
/// server keeps everything in its own process, as before.
#[derive(Clone)]
pub struct Backplane {
    pub(crate) registry: Arc<dyn SessionRegistry>,
    pub(crate) bus: Option<Arc<dyn MessageBus>>,
    pub(crate) instance: Arc<str>,
    pub(crate) address: Arc<str>,
    pub(crate) heartbeat: Duration,
    pub(crate) lease: Duration,
    /// How often the records of the sessions in use are renewed.
    pub(crate) renew: Duration,
    pub(crate) events: Option<Arc<dyn super::EventStore>>,
    /// Tools whose calls run on the session's owner (see [`Backplane::on_owner`]).
    pub(crate) on_owner: Arc<[String]>,
}

impl std::fmt::Debug for Backplane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backplane")
            .field("instance", &self.instance)
            .field("address", &self.address)
            .field("heartbeat", &self.heartbeat)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

/// The default of [`Backplane::heartbeat`]: a lease of one second.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_millis(333);

/// How often the records of the sessions in use are renewed (or every heartbeat, if longer).
pub const RECORDS_RENEWAL: Duration = Duration::from_secs(2);

impl Backplane {
    /// This instance's part in a deployment whose sessions `registry` records; `address` is the
    /// URL of this instance's MCP endpoint as the other instances reach it (for example
    /// `http://10.0.0.7:8080/mcp`). The instance gets a random id.
    pub fn new(registry: Arc<dyn SessionRegistry>, address: impl Into<String>) -> Self {
        Backplane {
            registry,
            bus: None,
            instance: crate::elicit::url::new_elicitation_id().into(),
            address: address.into().into(),
            heartbeat: DEFAULT_HEARTBEAT,
            lease: DEFAULT_HEARTBEAT * 3,
            renew: RECORDS_RENEWAL,
            events: None,
            on_owner: Arc::new([]),
        }
    }

    /// Runs the calls of `tool` on the instance owning their session, wherever they land (one
    /// hop there), instead of where they land. For a tool that keeps state of its own for each
    /// session in its process (keyed by `Context::session_key`, which is not the same on two
    /// instances) rather than in shared storage: its calls then all meet that state. Call once
    /// per tool.
    pub fn on_owner(mut self, tool: impl Into<String>) -> Self {
        let mut tools = self.on_owner.to_vec();
        tools.push(tool.into());
        self.on_owner = tools.into();
        self
    }

    /// How often this instance renews its presence in the registry ([`DEFAULT_HEARTBEAT`], a
    /// third of a second); it counts as gone, and its sessions are taken over by the next
    /// instance needing their owner, when it has not for three times that (its *lease*, one
    /// second by default). A beat is one small write per instance (two commands on Redis, in one
    /// round trip); the records of the sessions in use are renewed in it every
    /// [`RECORDS_RENEWAL`] (or every beat, when the heartbeat is longer).
    ///
    /// A shorter lease finds a dead or hung owner sooner; a longer one tolerates an instance
    /// whose beats are late (its host overloaded, its link to the store slow) without taking its
    /// sessions over while it lives: see "An owner taken over while alive" in [`Backplane`] for
    /// what happens then.
    pub fn heartbeat(mut self, every: Duration) -> Self {
        let every = every.max(Duration::from_millis(50));
        self.heartbeat = every;
        self.lease = every * 3;
        self.renew = every.max(RECORDS_RENEWAL);
        self
    }

    /// How long a session's records live unless renewed, on a server whose idle timeout is
    /// `idle`: past its idle timeout, by a renewal period and a lease.
    pub(crate) fn session_ttl(&self, idle: Duration) -> Duration {
        idle + self.renew + self.lease
    }

    /// Carries notifications (`notify_resource_updated`, list changes) and the completion of
    /// URL-mode flows between the instances over `bus`: without one, each instance tells only
    /// the sessions it holds.
    pub fn bus(mut self, bus: Arc<dyn MessageBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// Keeps the sessions' SSE events in `store`, shared by the instances, so that a client can
    /// resume a stream with `Last-Event-ID` after its session was taken over from an instance
    /// that is gone (see [`EventStore::restore`](super::EventStore::restore)); it replaces
    /// [`HttpConfig::event_store`](super::HttpConfig::event_store). Without one, events are
    /// kept by the owner alone, and resumption works only while it lives.
    pub fn events(mut self, store: Arc<dyn super::EventStore>) -> Self {
        self.events = Some(store);
        self
    }

    /// The bus between the instances, if there is one.
    pub fn message_bus(&self) -> Option<&Arc<dyn MessageBus>> {
        self.bus.as_ref()
    }

    /// This instance's id in the registry.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The address other instances forward requests to.
    pub fn address(&self) -> &str {
        &self.address
    }
}

type Client = hyper_util::client::legacy::Client<hyper_util::client::legacy::connect::HttpConnector, Body>;

/// How many looks at a late owner may find its session recorded no more before it is taken
/// for gone (the owner ended the session and is answering; at a quarter lease each, about five
/// seconds by default).
const ENDED_PATIENCE: u32 = 20;

/// The largest answer of an owner that is read whole before it is sent on.
const BUFFERED: usize = 64 * 1024;

/// A backplane at work: the settings, the HTTP client that forwards requests to owners, and
/// the replicas of sessions other instances own that this one serves requests of.
pub(crate) struct Forwarder {
    pub(crate) backplane: Backplane,
    client: Client,
    /// This instance's id as the value of [`FORWARDED_HEADER`].
    me: Option<HeaderValue>,
    /// Owners looked up lately, with when: a session's requests come in runs, and its owner
    /// changes only when the owner is gone (which a failed connection reveals).
    owners: std::sync::Mutex<Owners>,
    /// Sessions other instances own, served here (see [`Backplane`]).
    pub(crate) replicas: std::sync::RwLock<std::collections::HashMap<String, Replica>>,
    /// This instance's tag: what the ids of the questions its replicas ask carry.
    pub(crate) tag: u64,
    /// When this forwarder was made: the origin of [`confirmed`](Self::confirmed).
    epoch: std::time::Instant,
    /// When (milliseconds after `epoch`) the last beat that found this instance's lease
    /// unbroken was sent: its lease runs from then.
    confirmed: std::sync::atomic::AtomicU64,
    /// Told when a beat got its answer (or failed).
    beaten: tokio::sync::Notify,
}

/// A session another instance owns, as served here.
#[derive(Clone)]
pub(crate) struct Replica {
    pub(crate) session: Arc<HttpSession>,
    /// The owning instance's id.
    pub(crate) owner: Arc<str>,
}

/// Sessions' owners (instance id and address), and when each was looked up.
type Owners = std::collections::HashMap<Box<str>, (Arc<str>, Arc<str>, std::time::Instant)>;

/// How many owners [`Forwarder`] remembers at most (then it forgets them all).
const OWNER_CACHE: usize = 10_000;

/// How long an owner is given to accept a connection before it counts as gone.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The ids of the requests a replica sends the client start here: the bits below name the
/// replica's instance (its tag, 20 bits) and count its requests (32 bits). An owner's ids stay
/// below (they count from 0, or, after a takeover, from the time in milliseconds × 1000), and
/// every id stays below 2^53, which JavaScript clients read exactly.
pub(crate) const REPLICA_IDS: i64 = 1 << 52;

/// The tag of `instance`: 20 bits of a hash of its id. Two instances with one tag both receive
/// the answers meant for either, and each ignores those it did not ask for.
pub(crate) fn tag_of(instance: &str) -> u64 {
    // FNV-1a: stable across processes and versions, unlike the standard library's hasher.
    let hash =
        instance.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    hash & 0xF_FFFF
}

/// The tag of the instance that asked the question `id`, if a replica asked it.
pub(crate) fn asker_of(id: &crate::protocol::RequestId) -> Option<u64> {
    match id {
        crate::protocol::RequestId::Number(n) if *n >= REPLICA_IDS => Some((*n as u64 >> 32) & 0xF_FFFF),
        _ => None,
    }
}

/// The owner could not be reached at all (nothing was sent): ask the registry again.
pub(crate) struct Unreachable;

/// Where a request for a session that is not local goes.
pub(crate) enum Route {
    /// Serve it here (the session is unknown everywhere, or owned by this instance).
    Here,
    /// Forward it to the owner, instance `instance` at `address`.
    Owner { instance: Arc<str>, address: Arc<str> },
    /// The owner (this instance id) is gone: take the session over.
    Gone(String),
    /// The registry could not be asked: the request cannot be served now.
    Unavailable,
}

impl Forwarder {
    pub(crate) fn new(backplane: Backplane) -> Self {
        let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector);
        let me = HeaderValue::from_str(&backplane.instance).ok();
        let tag = tag_of(&backplane.instance);
        Forwarder {
            backplane,
            client,
            me,
            owners: std::sync::Mutex::default(),
            replicas: std::sync::RwLock::default(),
            tag,
            epoch: std::time::Instant::now(),
            confirmed: std::sync::atomic::AtomicU64::new(0),
            beaten: tokio::sync::Notify::new(),
        }
    }

    /// Records that this instance's lease, as renewed by a beat sent at `sent`, is unbroken.
    pub(crate) fn confirm(&self, sent: std::time::Instant) {
        let at = u64::try_from(sent.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u64::MAX);
        self.confirmed.fetch_max(at, std::sync::atomic::Ordering::Relaxed);
    }

    /// Wakes the requests waiting for a beat's answer ([`may_serve_forwarded`](Self::may_serve_forwarded)).
    pub(crate) fn beat_answered(&self) {
        self.beaten.notify_waiters();
    }

    /// Whether this instance's lease, as it last renewed it, still runs.
    fn holds_lease(&self) -> bool {
        let confirmed = Duration::from_millis(self.confirmed.load(std::sync::atomic::Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(confirmed) < self.backplane.lease
    }

    /// Whether this instance may serve a request another instance forwarded to it as to the
    /// owner: it holds its lease, or the next beat finds it unbroken. When the lease lapsed in
    /// the store (this process was stopped, or its beats did not reach the store), the other
    /// instances may have taken its sessions over and given up waiting for this request: the
    /// beat then ends here the sessions another instance took over before it confirms the lease,
    /// so what is served after it is only what is still this instance's. A beat that is merely
    /// late (a busy host) costs the request that wait, not a refusal.
    pub(crate) async fn may_serve_forwarded(&self) -> bool {
        let patience = self.backplane.lease.max(Duration::from_secs(1));
        let waited = tokio::time::timeout(patience, async {
            loop {
                let beaten = self.beaten.notified();
                if self.holds_lease() {
                    return;
                }
                beaten.await;
            }
        });
        waited.await.is_ok()
    }

    /// Whether requests for sessions owned elsewhere may be served here: the instances can
    /// reach each other over a bus (for the answers to the questions replicas ask).
    pub(crate) fn serves_where_it_lands(&self) -> bool {
        self.backplane.bus.is_some()
    }

    /// The replica of `session` served here, if there is one.
    pub(crate) fn replica(&self, session: &str) -> Option<Replica> {
        self.replicas.read().ok()?.get(session).cloned()
    }

    /// The owner of `session` (instance, address) as looked up within the last heartbeat, if it
    /// was.
    pub(crate) fn cached(&self, session: &str) -> Option<(Arc<str>, Arc<str>)> {
        let owners = self.owners.lock().ok()?;
        let (instance, address, when) = owners.get(session)?;
        (when.elapsed() < self.backplane.heartbeat).then(|| (instance.clone(), address.clone()))
    }

    /// Whether `instance` still owns `session` and holds its lease; `true` when the registry
    /// cannot tell (it is unreachable: the owner is not taken for gone on that), and when the
    /// session is recorded no more (`ended`: its owner ended it, answering the request that
    /// ended it, the `DELETE` this instance forwarded, say).
    async fn still_owns(&self, session: &str, instance: &str, ended: &mut u32) -> bool {
        match self.backplane.registry.owner(session).await {
            Ok(Some(Owner { instance: owner, address: Some(_) })) => owner == instance,
            Ok(None) => {
                *ended += 1;
                // Not for ever: an owner that hangs after the record expired is gone too.
                *ended <= ENDED_PATIENCE
            }
            Ok(Some(_)) => false,
            Err(_) => true,
        }
    }

    /// Forgets the owner of `session` (it could not be reached).
    pub(crate) fn forget(&self, session: &str) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(session);
        }
    }

    /// Where a request for `session`, which this instance does not hold, is served.
    pub(crate) async fn route(&self, session: &str) -> Route {
        match self.backplane.registry.owner(session).await {
            Ok(Some(Owner { instance, address: Some(address) })) if *instance != *self.backplane.instance => {
                let instance: Arc<str> = instance.into();
                let address: Arc<str> = address.into();
                if let Ok(mut owners) = self.owners.lock() {
                    if owners.len() >= OWNER_CACHE {
                        owners.clear();
                    }
                    owners.insert(session.into(), (instance.clone(), address.clone(), std::time::Instant::now()));
                }
                Route::Owner { instance, address }
            }
            Ok(Some(Owner { address: None, instance })) if *instance != *self.backplane.instance => {
                tracing::debug!(session, owner = instance, "the session's owner is gone");
                Route::Gone(instance)
            }
            Ok(_) => Route::Here,
            Err(e) => {
                tracing::warn!(error = %e, session, "cannot look up the owner of a session");
                Route::Unavailable
            }
        }
    }

    /// Forwards a request for `session` to its owner, `instance` at `address`, and streams its
    /// answer back; `503` when the exchange failed midway, [`Unreachable`] when no connection
    /// could be made, or the owner did not answer before it lost the session or its lease (it
    /// hangs).
    pub(crate) async fn forward(
        &self,
        session: &str,
        instance: &str,
        address: &str,
        method: Method,
        headers: &HeaderMap,
        body: axum::body::Bytes,
    ) -> Result<Response, Unreachable> {
        let uri: Uri = match address.parse() {
            Ok(uri) => uri,
            Err(_) => {
                tracing::warn!(address, "a session's owner has an unusable address");
                return Ok(unavailable("the session's owner has an unusable address"));
            }
        };
        let is_post = method == Method::POST;
        let mut request = axum::http::Request::new(Body::from(body.clone()));
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        for (name, value) in headers {
            // Hop-by-hop headers belong to the client's connection, not to this hop.
            if name == header::CONNECTION || name == header::TRANSFER_ENCODING || name == header::CONTENT_LENGTH {
                continue;
            }
            request.headers_mut().append(name.clone(), value.clone());
        }
        if let Some(me) = &self.me {
            request.headers_mut().insert(FORWARDED_HEADER, me.clone());
        }
        // The owner's lease is looked at only while its answer is late: an owner whose
        // process hangs still accepts connections (its kernel does), but renews nothing.
        let mut sent = self.client.request(request);
        let patience = (self.backplane.lease / 4).clamp(Duration::from_millis(20), CONNECT_TIMEOUT);
        let mut ended = 0;
        let answer = loop {
            match tokio::time::timeout(patience, &mut sent).await {
                Ok(answer) => break answer,
                Err(_) if self.still_owns(session, instance, &mut ended).await => {}
                Err(_) => {
                    tracing::info!(
                        address,
                        owner = instance,
                        session,
                        "the owner of a session does not answer, and lost its lease"
                    );
                    return Err(Unreachable);
                }
            }
        };
        match answer {
            Ok(response)
                if response.status() == StatusCode::SERVICE_UNAVAILABLE
                    && response.headers().contains_key(LEAVING_HEADER) =>
            {
                // The owner drains: it handed the session over, for this instance to take.
                tracing::debug!(address, owner = instance, session, "the owner of a session is leaving");
                Err(Unreachable)
            }
            Ok(response) => {
                let (mut parts, response_body) = response.into_parts();
                parts.headers.remove(header::CONNECTION);
                parts.headers.remove(header::TRANSFER_ENCODING);
                let is_sse = parts
                    .headers
                    .get(header::CONTENT_TYPE)
                    .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
                let length =
                    parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
                let body = if is_sse {
                    match super::responses::request_id(&body).filter(|_| is_post) {
                        Some(id) => answer_if_cut(Body::new(response_body), id),
                        None => Body::new(response_body),
                    }
                } else if length.is_some_and(|n| n <= BUFFERED) {
                    // A small JSON answer is read whole and sent on in one piece: cheaper than
                    // relaying it as a stream, chunk by chunk.
                    match axum::body::to_bytes(Body::new(response_body), BUFFERED).await {
                        Ok(bytes) => Body::from(bytes),
                        Err(e) => {
                            tracing::warn!(error = %e, address, "the owner of a session failed to answer");
                            return Ok(unavailable("the session's owner did not answer; retry later"));
                        }
                    }
                } else {
                    Body::new(response_body)
                };
                Ok(Response::from_parts(parts, body))
            }
            Err(e) if e.is_connect() => {
                tracing::debug!(error = %e, address, "cannot connect to the owner of a session");
                Err(Unreachable)
            }
            Err(e) => {
                tracing::warn!(error = %e, address, "the owner of a session failed to answer");
                Ok(unavailable("the session's owner did not answer; retry later"))
            }
        }
    }
}

/// The owner's SSE answer to request `id`, ending with an error response to it if the owner's
/// stream breaks off (the owner died): the client's request must end, never hang.
fn answer_if_cut(body: Body, id: crate::protocol::RequestId) -> Body {
    use futures_util::StreamExt as _;
    let events = body.into_data_stream();
    let stream = futures_util::stream::unfold((events, Some(id)), |(mut events, id)| async move {
        let id = id?;
        match events.next().await {
            Some(Ok(bytes)) => Some((Ok::<_, std::convert::Infallible>(bytes), (events, Some(id)))),
            None => None,
            Some(Err(e)) => {
                tracing::warn!(error = %e, %id, "the owner of a session stopped answering a request");
                let error = crate::protocol::ErrorObject::internal(
                    "the server instance running this request stopped; the request was not completed",
                );
                let frame = crate::protocol::jsonrpc::encode_error(Some(&id), &error);
                let event = format!("\n\nevent: message\ndata: {frame}\n\n");
                Some((Ok(axum::body::Bytes::from(event)), (events, None)))
            }
        }
    });
    Body::from_stream(stream)
}

/// A draining instance's answer to a request forwarded to it that it hands back: `503` with
/// `Retry-After` (for a client that would see it) and [`LEAVING_HEADER`].
pub(crate) fn leaving() -> Response {
    let mut r = unavailable("this instance is shutting down and hands its sessions over; retry");
    r.headers_mut().insert(LEAVING_HEADER, HeaderValue::from_static("1"));
    r
}

/// `503` with `Retry-After`, as a JSON-RPC error naming `reason`.
pub(crate) fn unavailable(reason: &str) -> Response {
    let mut r = super::responses::plain(StatusCode::SERVICE_UNAVAILABLE, reason);
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// What the transport records of a session for the instance that may take it over: whose it
/// is, and its server session's own snapshot.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Recorded {
    pub(crate) principal: Option<String>,
    pub(crate) session: String,
}

/// The session's record for the shared registry: its principal and server-session snapshot.
pub(crate) fn record_of(session: &HttpSession) -> Option<String> {
    let snapshot = session.engine().service().snapshot()?;
    serde_json::to_string(&Recorded { principal: session.principal().map(str::to_owned), session: snapshot }).ok()
}

/// Whether a request changes what the shared registry records of its session.
pub(crate) fn changes_record(method: &crate::protocol::MethodName) -> bool {
    method.info().is_some_and(|m| m.changes_session)
}
