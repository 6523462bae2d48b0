//! A server's part in a shared deployment, as configured: the registry and bus it uses, its
//! instance id and address, and how often it renews its presence.

use std::sync::Arc;
use std::time::Duration;

use super::seal::Keys;
use super::store::{MessageBus, SessionRegistry};

/// The header an instance adds to a request it forwards to the session's owner. The owner
/// serves such a request itself or answers it as not found; it never forwards it again.
pub const FORWARDED_HEADER: &str = "mcp-forwarded-by";

/// The header of the `503` a draining instance answers a forwarded request with instead of
/// serving it: the session is handed over, and the instance that forwarded the request takes
/// it over and serves the request itself.
pub const LEAVING_HEADER: &str = "mcp-instance-leaving";

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
/// requests) goes on its own POST's SSE stream, as on the owner, under event ids naming the
/// instance (`<stream>-<seq>@<instance>`), which keeps those events (in the shared
/// [`events`](Self::events) store too, under its name): a client resuming from one of them on
/// any instance is sent there (see [`SessionRegistry::address_of`]), or, once that instance is
/// gone, served what it missed from the shared store. The client's
/// answer to one of those questions may be POSTed to any instance: the question's id names the
/// instance asking it, and the answer reaches that instance over the [`MessageBus`]. So do cancellations (to
/// whichever instance runs the request), and what a replica sends outside any request (the
/// completion of a URL-mode flow), which reaches the owner's GET stream.
///
/// **What goes to the owner**, forwarded in one HTTP hop (the owner's answer streams back
/// through the instance the client reached), is what only the owner can do:
/// - the session's `GET` stream and the `Last-Event-ID` resumption of the streams the owner
///   served: the owner is where announcements for the session arrive and where those events
///   are numbered and kept;
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
/// ([`StreamableHttp::close_all`](crate::transport::http::StreamableHttp::close_all),
/// [`StreamableHttp::drain`](crate::transport::http::StreamableHttp::drain)) leaves the registry at once, so its
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
/// implements them on Redis. Without [`HttpConfig::backplane`](crate::transport::http::HttpConfig::backplane) a
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
    pub(crate) events: Option<Arc<dyn crate::transport::http::EventStore>>,
    /// Tools whose calls run on the session's owner (see [`Backplane::on_owner`]).
    pub(crate) on_owner: Arc<[String]>,
    /// The deployment secret(s): what seals the messages between the instances.
    pub(crate) keys: Keys,
    /// Roots the hop trusts, besides the platform's, for owners at `https://` addresses.
    #[cfg(feature = "http-tls")]
    pub(crate) hop_roots: Option<crate::tls::RootCertificates>,
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

/// The longest id [`Backplane::instance_id`] takes, in bytes.
pub const MAX_INSTANCE_ID: usize = 64;

/// The shortest deployment secret [`Backplane::secret`] takes, in bytes.
pub const MIN_SECRET: usize = 32;

/// The default of [`Backplane::heartbeat`]: a lease of one second.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_millis(333);

/// How often the records of the sessions in use are renewed (or every heartbeat, if longer).
pub const RECORDS_RENEWAL: Duration = Duration::from_secs(2);

impl Backplane {
    /// This instance's part in a deployment whose sessions `registry` records; `address` is the
    /// URL of this instance's MCP endpoint as the other instances reach it (for example
    /// `http://10.0.0.7:8080/mcp`, or `https://mcp-3.internal:8443/mcp`). The hop between
    /// instances carries the clients' requests, their tokens included: on plain `http://`, give
    /// an address inside the deployment's network; with feature `http-tls`, an instance serving
    /// `https://` ([`HttpConfig::tls`](crate::transport::http::HttpConfig)) announces its
    /// `https://` address and the others reach it over TLS, trusting the platform's roots and
    /// `hop_roots`. Either way the deployment secret
    /// ([`secret`](Self::secret)) seals what the hop vouches for. An owner whose address the hop
    /// cannot speak (`https://` without `http-tls`), or whose certificate is not trusted, is
    /// answered `503`, never taken for gone. The instance gets a random id.
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
            keys: Keys::default(),
            #[cfg(feature = "http-tls")]
            hop_roots: None,
        }
    }

    /// Names this instance `id` instead of a random id: what its logs, its records in the
    /// registry and the ids of the questions its replicas ask the clients (`"<id>-<n>"`) show.
    /// Every instance of a deployment needs its own id, and an instance started again takes a
    /// new one (the old one's sessions are taken over from it). An id is 1 to
    /// [`MAX_INSTANCE_ID`] letters, digits, `-`, `_`, `.` or `:`; another is refused with a
    /// warning and the random id kept.
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
        if id.is_empty() || id.len() > MAX_INSTANCE_ID || !id.chars().all(allowed) {
            tracing::warn!(id, "an unusable instance id is refused: the instance keeps its random id");
            return self;
        }
        self.instance = id.into();
        self
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

    /// The deployment secret: every message this instance sends another (on the
    /// [`MessageBus`], and each request it forwards to a session's owner) is sealed with it
    /// (HMAC-SHA256 over the message, the sending instance and the time), and what arrives is
    /// dropped (and counted, see
    /// [`StreamableHttp::bus_messages_dropped`](crate::transport::http::StreamableHttp::bus_messages_dropped))
    /// unless sealed with it and sent within the last minute. A request forwarded to this
    /// instance then carries what the instance it landed on verified (the user, the token's
    /// details, its DPoP proof), and is served without checking the token again; a request
    /// claiming to be forwarded without a valid seal is refused with `403`.
    ///
    /// Give every instance the same secret, 32 random bytes or more (a shorter one is refused
    /// with a warning and the deployment stays unauthenticated). Without a secret, anyone who
    /// can publish on the bus can act as an instance: see "Trust" in the deployment guide. To
    /// rotate it, deploy the new secret with the old one as [`previous_secret`](Self::previous_secret),
    /// then, once every instance has the new one, deploy without the old one.
    pub fn secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        let secret = secret.as_ref();
        if secret.len() < MIN_SECRET {
            tracing::warn!(
                length = secret.len(),
                "a deployment secret shorter than {MIN_SECRET} bytes is refused: the deployment stays unauthenticated"
            );
            return self;
        }
        self.keys.set(secret.to_vec());
        self
    }

    /// Also accepts what `secret` sealed: the secret being replaced, while the instances move
    /// to the new one (see [`secret`](Self::secret)).
    pub fn previous_secret(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.keys.accept(secret.as_ref().to_vec());
        self
    }

    /// Trusts `roots` (the deployment's private CA, say), besides the platform's roots, for the
    /// certificates of the instances the hop reaches at `https://` addresses (feature
    /// `http-tls`). An owner whose certificate is not trusted is answered `503` and the
    /// reason logged; its session is not taken over.
    #[cfg(feature = "http-tls")]
    pub fn hop_roots(mut self, roots: crate::tls::RootCertificates) -> Self {
        self.hop_roots = Some(roots);
        self
    }

    /// Whether the messages between the instances are sealed with a deployment secret.
    pub fn is_authenticated(&self) -> bool {
        self.keys.enforced()
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
    /// that is gone (see [`EventStore::restore`](crate::transport::http::EventStore::restore)); it replaces
    /// [`HttpConfig::event_store`](crate::transport::http::HttpConfig::event_store). The events of the streams
    /// replicas serve are kept there too, under the serving instance's name, and replayed by any
    /// instance once that one is gone. Without one, events are kept by the instance that served
    /// them alone, and resumption works only while it lives.
    pub fn events(mut self, store: Arc<dyn crate::transport::http::EventStore>) -> Self {
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
