//! The forwarder: this instance's end of the hop to a session's owner (an HTTP client, the
//! owners looked up lately, the lease this instance holds), and the replicas of sessions other
//! instances own that are served here.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use tokio_util::sync::CancellationToken;

use super::backplane::{Backplane, FORWARDED_HEADER, LEAVING_HEADER};
use super::bus::DeploymentBus;
use super::hop;
use super::store::Owner;
use crate::engine::Service as _;
use crate::transport::http::session::HttpSession;

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
    /// This instance's end of the bus between the instances, if the deployment has one.
    pub(crate) bus: Option<Arc<DeploymentBus>>,
    client: super::connector::Hop,
    /// This instance's id as the value of [`FORWARDED_HEADER`].
    me: Option<HeaderValue>,
    /// Owners looked up lately, with when: a session's requests come in runs, and its owner
    /// changes only when the owner is gone (which a failed connection reveals).
    owners: std::sync::Mutex<Owners>,
    /// Sessions other instances own, served here (see [`Backplane`]).
    pub(crate) replicas: std::sync::RwLock<std::collections::HashMap<String, Replica>>,
    /// Replicas dropped while requests of theirs still ran: no new request is served on them,
    /// but the client's answers to their questions (and cancellations) still reach them until
    /// those requests end.
    retiring: std::sync::Mutex<std::collections::HashMap<String, Arc<HttpSession>>>,
    /// When this forwarder was made: the origin of [`confirmed`](Self::confirmed).
    epoch: std::time::Instant,
    /// When (milliseconds after `epoch`, plus one) the last beat that found this instance's
    /// lease unbroken was sent: its lease runs from then. 0 until a beat reached the store.
    confirmed: std::sync::atomic::AtomicU64,
    /// Told when a beat got its answer (or failed).
    beaten: tokio::sync::Notify,
    /// When (milliseconds after `epoch`, plus one) this instance reached the store again after
    /// it could not (its own announcement lapsed meanwhile): 0 if never.
    recovered: std::sync::atomic::AtomicU64,
    /// The events of the streams of the replicas served here (their ids name this instance):
    /// in the deployment's shared store if it has one (see `kept_events`).
    pub(crate) replica_events: Arc<dyn crate::transport::http::EventStore>,
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

/// For how many leases after an instance reached the store again, after it could not, an owner
/// whose announcement lapsed is waited for rather than taken for gone.
const RECOVERY_GRACE: u32 = 3;

/// How many owners [`Forwarder`] remembers at most (then it forgets them all).
const OWNER_CACHE: usize = 10_000;

/// How long a request that would record a session as this instance's waits for its lease to
/// be confirmed (the first beat of an instance just started, on a busy host) before `503`.
const ANNOUNCE_PATIENCE: Duration = Duration::from_secs(5);

/// The prefix of the ids of the questions (elicitations, sampling…) a replica on `instance`
/// asks the client: such an id is the string `"<instance>-<n>"`, naming the asking instance in
/// full, so the client's answer, wherever it lands, goes to that instance and no other. An
/// owner numbers its own questions (JSON numbers, which JavaScript clients read exactly).
pub(crate) fn question_prefix(instance: &str) -> String {
    format!("{instance}-")
}

/// The instance that asked the question `id`, if a replica asked it: the part of a string id
/// before its last `-`, when digits follow it.
pub(crate) fn asker_of(id: &crate::protocol::RequestId) -> Option<&str> {
    let crate::protocol::RequestId::String(id) = id else { return None };
    let (instance, n) = id.rsplit_once('-')?;
    let numbered = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let named = !instance.is_empty() && instance.len() <= super::backplane::MAX_INSTANCE_ID;
    (numbered && named).then_some(instance)
}

/// The owner could not be reached at all (nothing was sent): ask the registry again.
pub(crate) struct Unreachable;

/// Where a request for a session that is not local goes.
pub(crate) enum Whereabouts {
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
    pub(crate) fn new(backplane: Backplane, closing: &CancellationToken) -> Self {
        let client = super::connector::Hop::new(&backplane);
        if !backplane.address.parse::<Uri>().is_ok_and(|uri| client.speaks(&uri)) {
            tracing::error!(
                address = &*backplane.address,
                speaks = super::connector::SCHEMES,
                "this instance's backplane address is not one the hop speaks: the other instances cannot forward \
                 requests to it (give the address the instances reach each other at, inside the deployment)"
            );
        }
        let me = HeaderValue::from_str(&backplane.instance).ok();
        let bus = backplane
            .bus
            .clone()
            .map(|bus| DeploymentBus::start(bus, backplane.instance.clone(), backplane.keys.clone(), closing));
        let replica_events = super::kept_events::store(backplane.events.as_ref(), &backplane.instance);
        Forwarder {
            backplane,
            bus,
            client,
            me,
            owners: std::sync::Mutex::default(),
            replicas: std::sync::RwLock::default(),
            retiring: std::sync::Mutex::default(),
            epoch: std::time::Instant::now(),
            confirmed: std::sync::atomic::AtomicU64::new(0),
            beaten: tokio::sync::Notify::new(),
            recovered: std::sync::atomic::AtomicU64::new(0),
            replica_events,
        }
    }

    /// Records that this instance's lease, as renewed by a beat sent at `sent`, is unbroken.
    pub(crate) fn confirm(&self, sent: std::time::Instant) {
        let at = u64::try_from(sent.saturating_duration_since(self.epoch).as_millis()).unwrap_or(u64::MAX - 1);
        self.confirmed.fetch_max(at + 1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Records that this instance reached the store again after it could not for longer than a
    /// lease: the other instances' announcements lapsed too, most likely, though they live.
    pub(crate) fn store_recovered(&self) {
        let at = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX - 1);
        self.recovered.store(at + 1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How much longer an owner whose announcement lapsed is given to announce itself again
    /// before its sessions are taken over: [`RECOVERY_GRACE`] leases after this instance reached
    /// the store again, when it could not for a while (a Redis failover lapses every lease).
    fn recovery_grace_left(&self) -> Option<Duration> {
        let recovered = self.recovered.load(std::sync::atomic::Ordering::Relaxed).checked_sub(1)?;
        let since = self.epoch.elapsed().saturating_sub(Duration::from_millis(recovered));
        (self.backplane.lease * RECOVERY_GRACE).checked_sub(since).filter(|left| !left.is_zero())
    }

    /// Wakes the requests waiting for a beat's answer ([`lease_confirmed`](Self::lease_confirmed)).
    pub(crate) fn beat_answered(&self) {
        self.beaten.notify_waiters();
    }

    /// Whether this instance's lease, as it last renewed it, still runs (never before its
    /// first beat reached the store).
    fn holds_lease(&self) -> bool {
        match self.confirmed.load(std::sync::atomic::Ordering::Relaxed) {
            0 => false,
            confirmed => {
                self.epoch.elapsed().saturating_sub(Duration::from_millis(confirmed - 1)) < self.backplane.lease
            }
        }
    }

    /// Whether this instance holds its lease now, or within `patience` (once a beat confirms
    /// it). What needs it: recording a session as this instance's (opening one, taking one
    /// over), and serving a request forwarded here as to the owner. Until its first beat reached
    /// the store, the store has no address for this instance: a session recorded as its own
    /// then looks orphaned to the other instances, which would take it over while it is served
    /// here (two owners, each losing answers meant for the other).
    async fn lease_confirmed(&self, patience: Duration) -> bool {
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

    /// Whether this instance may serve a request another instance forwarded to it as to the
    /// owner: it holds its lease, or the next beat finds it unbroken. When the lease lapsed in
    /// the store (this process was stopped, or its beats did not reach the store), the other
    /// instances may have taken its sessions over and given up waiting for this request: the
    /// beat then ends here the sessions another instance took over before it confirms the lease,
    /// so what is served after it is only what is still this instance's. A beat that is merely
    /// late (a busy host) costs the request that wait, not a refusal.
    pub(crate) async fn may_serve_forwarded(&self) -> bool {
        self.lease_confirmed(self.backplane.lease.max(Duration::from_secs(1))).await
    }

    /// Whether this instance may record a session as its own (open one, take one over): it
    /// holds its lease, or gets it within [`ANNOUNCE_PATIENCE`] (an instance just started
    /// waits for its first beat; one whose beats fail refuses).
    pub(crate) async fn may_own(&self) -> bool {
        self.lease_confirmed(ANNOUNCE_PATIENCE.max(self.backplane.lease)).await
    }

    /// Whether requests for sessions owned elsewhere may be served here: the instances can
    /// reach each other over a bus (for the answers to the questions replicas ask).
    pub(crate) fn serves_where_it_lands(&self) -> bool {
        self.bus.is_some()
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

    /// Ends the replica of `session`, if there is one, once its requests are answered.
    pub(crate) fn drop_replica(&self, session: &str) {
        let replica = self.replicas.write().ok().and_then(|mut r| r.remove(session));
        if let Some(replica) = replica {
            if replica.session.in_flight() > 0
                && let Ok(mut retiring) = self.retiring.lock()
            {
                retiring.insert(session.to_owned(), replica.session.clone());
            }
            replica.session.close_when_idle();
        }
    }

    /// The replica of `session` a message of its client (an answer, a cancellation) goes to:
    /// the one serving it, else one dropped whose requests still run.
    pub(crate) fn answering(&self, session: &str) -> Option<Arc<HttpSession>> {
        if let Some(replica) = self.replica(session) {
            return Some(replica.session);
        }
        let retiring = self.retiring.lock().ok()?;
        retiring.get(session).filter(|s| s.in_flight() > 0).cloned()
    }

    /// Forgets the dropped replicas whose requests have all ended.
    pub(crate) fn prune_retiring(&self) {
        if let Ok(mut retiring) = self.retiring.lock() {
            retiring.retain(|_, session| session.in_flight() > 0);
        }
    }

    /// Forgets the owner of `session` (it could not be reached).
    pub(crate) fn forget(&self, session: &str) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(session);
        }
    }

    /// Where `session`, which this instance does not hold, is owned, as the registry says.
    pub(crate) async fn locate(&self, session: &str) -> Whereabouts {
        loop {
            let found = self.locate_now(session).await;
            // An owner lapsed while the store was out of reach may well live: given a moment
            // to announce itself again rather than have its sessions taken over.
            if let (Whereabouts::Gone(_), Some(left)) = (&found, self.recovery_grace_left()) {
                tokio::time::sleep(left.min(Duration::from_millis(100))).await;
                continue;
            }
            return found;
        }
    }

    /// Where `session` is owned, as the registry says now.
    async fn locate_now(&self, session: &str) -> Whereabouts {
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
                Whereabouts::Owner { instance, address }
            }
            Ok(Some(Owner { address: None, instance })) if *instance != *self.backplane.instance => {
                tracing::debug!(session, owner = instance, "the session's owner is gone");
                Whereabouts::Gone(instance)
            }
            Ok(_) => Whereabouts::Here,
            Err(e) => {
                tracing::warn!(error = %e, session, "cannot look up the owner of a session");
                Whereabouts::Unavailable
            }
        }
    }

    /// Forwards a request for `session` to its owner, `instance` at `address`, vouching for
    /// what this instance verified of it (`vouched`: the user, the token's details), and streams its
    /// answer back; `503` when the exchange failed midway, [`Unreachable`] when no connection
    /// could be made, or the owner did not answer before it lost the session or its lease (it
    /// hangs).
    pub(crate) async fn forward(
        &self,
        session: &str,
        (instance, address): (&str, &str),
        method: Method,
        headers: &HeaderMap,
        body: axum::body::Bytes,
        vouched: (Option<&str>, Option<&crate::auth::AuthInfo>),
    ) -> Result<Response, Unreachable> {
        let uri: Uri = match address.parse::<Uri>() {
            Ok(uri) if self.client.speaks(&uri) => uri,
            // Not "gone": an owner this instance cannot speak to may well be alive, and taking
            // its session over would make two instances serve it.
            Ok(_) => {
                tracing::error!(
                    address,
                    speaks = super::connector::SCHEMES,
                    "a session's owner has an address the hop does not speak"
                );
                return Ok(unavailable("the session's owner cannot be reached from this instance; retry later"));
            }
            Err(_) => {
                tracing::warn!(address, "a session's owner has an unusable address");
                return Ok(unavailable("the session's owner has an unusable address"));
            }
        };
        let is_post = method == Method::POST;
        let keys = &self.backplane.keys;
        let seal = hop::vouch(keys, &self.backplane.instance, method.as_str(), session, &body, vouched.0, vouched.1);
        let mut request = axum::http::Request::new(Body::from(body.clone()));
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        for (name, value) in headers {
            // Hop-by-hop headers belong to the client's connection, not to this hop.
            if name == header::CONNECTION || name == header::TRANSFER_ENCODING || name == header::CONTENT_LENGTH {
                continue;
            }
            // What only an instance may say is never taken from the client.
            if name == FORWARDED_HEADER || name == hop::HOP_HEADER {
                continue;
            }
            request.headers_mut().append(name.clone(), value.clone());
        }
        if let Some(me) = &self.me {
            request.headers_mut().insert(FORWARDED_HEADER, me.clone());
        }
        if let Some(seal) = seal {
            request.headers_mut().insert(hop::HOP_HEADER, seal);
        }
        // The owner's lease is looked at only while its answer is late: an owner whose
        // process hangs still accepts connections (its kernel does), but renews nothing.
        let Ok(mut sent) = self.client.request(request) else {
            return Ok(unavailable("the session's owner cannot be reached from this instance; retry later"));
        };
        let patience = (self.backplane.lease / 4).clamp(Duration::from_millis(20), super::connector::CONNECT_TIMEOUT);
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
                    match crate::transport::http::responses::request_id(&body).filter(|_| is_post) {
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
            Err(e) if e.is_connect() => match super::connector::tls_failure(&e) {
                // The owner's host answered but TLS failed: it is not gone.
                Some(why) => {
                    tracing::error!(
                        address,
                        reason = why,
                        "cannot speak TLS with a session's owner (its certificate is trusted through the platform's \
                         roots or Backplane::hop_roots)"
                    );
                    Ok(unavailable("the session's owner cannot be reached from this instance; retry later"))
                }
                None => {
                    tracing::debug!(error = %e, address, "cannot connect to the owner of a session");
                    Err(Unreachable)
                }
            },
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
    let mut r = crate::transport::http::responses::plain(StatusCode::SERVICE_UNAVAILABLE, reason);
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

#[cfg(test)]
mod tests {
    use super::{asker_of, question_prefix};
    use crate::protocol::RequestId;

    #[test]
    fn a_replicas_question_id_names_its_instance_in_full() {
        let id = RequestId::String(format!("{}7", question_prefix("eu-west-1.node-3")).into());
        assert_eq!(asker_of(&id), Some("eu-west-1.node-3"));
        // The owner's own questions, and ids of other shapes, name no asker.
        for other in [
            RequestId::Number(7),
            RequestId::String("7".into()),
            RequestId::String("node-".into()),
            RequestId::String("-7".into()),
            RequestId::String("node-7a".into()),
            RequestId::String(format!("{}-7", "n".repeat(65)).into()),
        ] {
            assert_eq!(asker_of(&other), None, "{other:?}");
        }
    }
}
