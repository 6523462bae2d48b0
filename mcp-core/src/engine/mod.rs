//! One session's message pump, independent of tools and of transports.
//!
//! A transport hands each incoming frame to the session and writes out whatever arrives on the
//! session's outbound channel (outside the crate, through
//! [`Server::connect`](crate::Server::connect)). The engine:
//! - polls each incoming request's handler once, on the reader: a handler that answers without
//!   waiting is answered at once, with no task of its own; one that waits goes on in its own
//!   task, so it never blocks the reader, other requests, or the responses the service awaits;
//! - routes responses to the waits opened through [`Peer`], by id;
//! - honours `notifications/cancelled` (the handler's future is dropped, nothing is sent);
//! - when the session shuts down, fails every pending wait and cancels every handler.

mod cancel;
#[cfg(feature = "http")]
mod http_parts;
mod peer;
mod reply;

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use tokio::sync::{Semaphore, mpsc};

pub use cancel::Cancellation;
pub use peer::{Peer, PeerError, RequestOptions};
pub use reply::ResultText;

use crate::protocol::jsonrpc::{DecodeError, encode_error};
use crate::protocol::{CancelledParams, ErrorObject, Message, Method, Notification, Request, RequestId};
#[cfg(feature = "http")]
pub use http_parts::HttpRequestParts;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a request handler returns: the serialized result, or a JSON-RPC error.
pub type HandlerResult = Result<ResultText, ErrorObject>;

/// How a session's service (the server's or the client's side) answers a request: with the answer itself, when it needs to wait for
/// nothing, or with a future that makes it.
///
/// Most requests (a `tools/list`, a tool that computes its result) are answered at once: they
/// need no future, no allocation for one, and no polling.
pub enum Handling {
    /// The answer, made without waiting.
    Ready(HandlerResult),
    /// A future making the answer. It is polled once at once, by the session's reader; if it
    /// waits then, it goes on in a task of its own.
    Future(BoxFuture<'static, HandlerResult>),
}

impl Handling {
    /// A future making the answer, boxed.
    pub fn future(future: impl Future<Output = HandlerResult> + Send + 'static) -> Self {
        Handling::Future(Box::pin(future))
    }

    /// The answer as a future, whichever way it comes.
    pub fn into_future(self) -> BoxFuture<'static, HandlerResult> {
        match self {
            Handling::Ready(result) => Box::pin(std::future::ready(result)),
            Handling::Future(future) => future,
        }
    }
}

impl From<HandlerResult> for Handling {
    fn from(result: HandlerResult) -> Self {
        Handling::Ready(result)
    }
}

impl std::fmt::Debug for Handling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Handling::Ready(result) => f.debug_tuple("Ready").field(result).finish(),
            Handling::Future(_) => f.write_str("Future(..)"),
        }
    }
}

/// What kind of message an [`Outbound`] frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutboundKind {
    /// A response to a request of the peer's.
    Response,
    /// A request of ours.
    Request,
    /// A notification of ours.
    Notification,
}

/// One encoded message for the transport to deliver.
#[derive(Debug)]
pub struct Outbound {
    /// The JSON text, without a trailing newline.
    pub frame: String,
    /// The peer's request this message belongs to, if any (its response, or something sent
    /// while handling it). Streamable HTTP uses this to choose the stream.
    pub related: Option<RequestId>,
    /// What the message is.
    pub kind: OutboundKind,
}

/// Answers written straight for the writer, for a transport whose reader and writer run in
/// one task (the line transport): an answer made while the reader handles a frame, when
/// nothing waits in the outbound queue before it, is appended here instead of going through
/// the queue. The writer takes these before the queue, so the order of what one request
/// sends is kept. Bounded: past [`DirectFrames::LIMIT`] bytes, answers take the queue (and
/// with it, its backpressure on the reader).
#[derive(Debug, Default)]
pub(crate) struct DirectFrames {
    frames: Mutex<Vec<u8>>,
}

impl DirectFrames {
    /// How many bytes may wait here.
    pub(crate) const LIMIT: usize = 256 * 1024;

    /// Appends the response to `id` carrying `result`, and a newline, unless the buffer is
    /// full (then gives the result back).
    fn push(&self, id: &RequestId, result: ResultText) -> Result<(), ResultText> {
        let Ok(mut frames) = self.frames.lock() else { return Err(result) };
        if frames.len() >= Self::LIMIT {
            return Err(result);
        }
        result.write_response(id, &mut frames);
        frames.push(b'\n');
        Ok(())
    }

    /// Swaps what waits with `spare` (emptied first), which then holds it.
    pub(crate) fn take(&self, spare: &mut Vec<u8>) {
        spare.clear();
        if let Ok(mut frames) = self.frames.lock() {
            std::mem::swap(&mut *frames, spare);
        }
    }

    /// Whether nothing waits (a hint: the reader may add some at any time).
    pub(crate) fn is_empty(&self) -> bool {
        self.frames.lock().map_or(true, |f| f.is_empty())
    }
}

/// Everything a request handler gets from the engine besides the request.
#[derive(Debug, Clone)]
pub struct RequestScope {
    /// The request's id.
    pub id: RequestId,
    /// Cancelled when the peer cancels the request or the session closes.
    pub cancel: Cancellation,
    /// The peer, related to this request.
    pub peer: Peer,
    /// Over HTTP: the request's headers, extensions and the client's address.
    #[cfg(feature = "http")]
    pub(crate) http: Option<Arc<HttpRequestParts>>,
}

impl RequestScope {
    /// The scope of request `id`.
    pub(crate) fn new(id: RequestId, cancel: Cancellation, peer: Peer) -> Self {
        RequestScope {
            id,
            cancel,
            peer,
            #[cfg(feature = "http")]
            http: None,
        }
    }
}

/// The role-specific half of a session (a server or a client).
pub(crate) trait Service: Send + Sync + 'static {
    /// Handles a request: answers it at once ([`Handling::Ready`]), or returns a future that
    /// will. Either way this runs on the caller of [`Session::handle_message`] (the reader), and
    /// so does the future's first poll, whatever happens; if the future is not done then, it
    /// goes on in its own task, and is dropped if still waiting when the request is cancelled or
    /// the session closes. Work done here, or before the future's first wait, delays the
    /// session's next message: long computations belong in `spawn_blocking`.
    fn handle_request(&self, request: Request, scope: RequestScope) -> Handling;

    /// Handles a notification other than `notifications/cancelled`. Called in order, on the
    /// reader; must not block (spawn if there is work to do).
    fn handle_notification(&self, notification: Notification, peer: &Peer);

    /// Called once when the session shuts down, after pending waits have failed.
    fn closed(&self) {}

    /// What another process needs to serve this session from now on (a shared deployment's
    /// takeover, over Streamable HTTP), as text; `None` when there is nothing to carry over
    /// (the default).
    #[cfg(feature = "http")]
    fn snapshot(&self) -> Option<String> {
        None
    }
}

/// Tunables of a session.
///
/// What a peer can make a session hold is bounded: the outbound queue, as many answers again
/// waiting for room in it (past that, the reader waits until the peer reads: a peer that stops
/// reading is held back rather than buffered for), and the handlers waiting at once.
#[derive(Debug, Clone)]
pub(crate) struct SessionConfig {
    /// Capacity of the outbound queue; when the peer stops reading, senders wait.
    pub outbound_capacity: usize,
    /// How long [`Session::shutdown`] waits for cancelled handlers to finish.
    pub shutdown_grace: Duration,
    /// How many of the peer's requests may be waiting at once (handlers that did not answer in
    /// their first poll). One more that waits is dropped and answered with an error (-32603);
    /// requests answered at once are always served.
    pub max_in_flight: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig { outbound_capacity: 1024, shutdown_grace: Duration::from_secs(5), max_in_flight: 1024 }
    }
}

/// The requests being handled, by id. Ids are the peer's, but at most
/// [`SessionConfig::max_in_flight`] of them wait at once, and the hasher is seeded per process.
/// What an HTTP request carried besides the JSON-RPC message (nothing without HTTP).
#[cfg(feature = "http")]
type HttpParts = Arc<HttpRequestParts>;
/// What an HTTP request carried besides the JSON-RPC message (nothing without HTTP).
#[cfg(not(feature = "http"))]
type HttpParts = std::convert::Infallible;

type InFlight = Arc<Mutex<HashMap<RequestId, Cancellation, foldhash::fast::RandomState>>>;

/// One MCP session: a service, its peer, and the requests in flight.
pub(crate) struct Session<S: Service> {
    service: Arc<S>,
    peer: Peer,
    in_flight: InFlight,
    /// Room for answers that found the outbound queue full (see [`SessionConfig`]).
    backlog: Arc<Semaphore>,
    /// Room for handlers that wait.
    waiting: Arc<Semaphore>,
    tasks: HandlerTasks,
    closing: Cancellation,
    closed: AtomicBool,
    config: SessionConfig,
}

impl<S: Service> Session<S> {
    /// Creates a session and the receiving end of its outbound queue, which the transport drains.
    pub fn new(service: S, config: SessionConfig) -> (Self, mpsc::Receiver<Outbound>) {
        let (tx, rx) = mpsc::channel(config.outbound_capacity.max(1));
        let session = Session {
            service: Arc::new(service),
            peer: Peer::new(tx),
            in_flight: Arc::default(),
            backlog: Arc::new(Semaphore::new(config.outbound_capacity.max(1))),
            waiting: Arc::new(Semaphore::new(config.max_in_flight)),
            tasks: HandlerTasks::default(),
            closing: Cancellation::new(),
            closed: AtomicBool::new(false),
            config,
        };
        (session, rx)
    }

    /// The peer of this session.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The service.
    #[cfg(feature = "http")]
    pub fn service(&self) -> &Arc<S> {
        &self.service
    }

    /// How many of the peer's requests are being handled.
    pub fn in_flight_count(&self) -> usize {
        self.in_flight.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Decodes and dispatches one frame. Only waits when the outbound queue is full.
    pub async fn handle_frame(&self, frame: &str) {
        self.handle_frame_with(frame, None).await;
    }

    /// Like [`handle_frame`](Self::handle_frame), with answers made at once written to
    /// `direct` when the outbound queue is empty.
    pub(crate) async fn handle_frame_with(&self, frame: &str, direct: Option<&DirectFrames>) {
        match Message::decode(frame) {
            Ok(Message::Request(request)) => self.spawn_request(request, direct, None).await,
            Ok(message) => self.handle_message(message).await,
            Err(DecodeError { id, error, respond }) => {
                tracing::debug!(code = error.code, message = %error.message, "rejected frame");
                if respond {
                    self.send_error(id.as_ref(), &error).await;
                }
            }
        }
    }

    /// Dispatches one decoded message.
    pub async fn handle_message(&self, message: Message) {
        match message {
            Message::Request(request) => self.spawn_request(request, None, None).await,
            Message::Response(response) => {
                if !self.peer.resolve(&response.id, response.outcome) {
                    tracing::debug!(id = %response.id, "ignored a response to no pending request");
                }
            }
            Message::Notification(n) if n.method.id() == Some(Method::Cancelled) => self.cancel_from(&n),
            Message::Notification(n) => self.service.handle_notification(n, &self.peer),
        }
    }

    /// Answers a frame the transport rejected before decoding (for example: too long).
    pub async fn send_error(&self, id: Option<&RequestId>, error: &ErrorObject) {
        let _ = self.peer.send(encode_error(id, error), OutboundKind::Response).await;
    }

    fn cancel_from(&self, n: &Notification) {
        let Some(params) = n.params.as_ref() else {
            return;
        };
        let Ok(CancelledParams { request_id: Some(id), .. }) = serde_json::from_str(params.get()) else {
            tracing::debug!("ignored a malformed notifications/cancelled");
            return;
        };
        if let Some(token) = self.in_flight.lock().ok().and_then(|m| m.get(&id).cloned()) {
            token.cancel();
        }
    }

    /// Handles a request that came over HTTP, with what the HTTP request carried besides it.
    #[cfg(feature = "http")]
    pub(crate) async fn handle_http_request(&self, request: Request, http: Option<HttpParts>) {
        self.spawn_request(request, None, http).await
    }

    async fn spawn_request(&self, request: Request, direct: Option<&DirectFrames>, http: Option<HttpParts>) {
        if self.closing.is_cancelled() {
            // Nobody would receive the answer, and a handler must not start work after shutdown.
            tracing::debug!(id = %request.id, method = %request.method, "session closed; request ignored");
            return;
        }
        let id = request.id.clone();
        // An id may not be reused while a request with it waits. Requests answered in their
        // first poll (most) never enter the map: there is nothing to cancel once they are
        // answered, and nothing can cancel them before, since the caller reads the session's
        // messages in order. The map is only searched when something waits: with every permit
        // free, nothing does (a permit is taken before entering the map and given back after
        // leaving it), and the map is not even locked.
        let none_waits = self.waiting.available_permits() == self.config.max_in_flight;
        let duplicate = !none_waits
            && match self.in_flight.lock() {
                Ok(m) => m.contains_key(&id),
                Err(_) => true,
            };
        if duplicate {
            self.send_error(Some(&id), &id_in_use(&id)).await;
            return;
        }
        // A cancellation of its own, not a child token of the session's: linking a child into a
        // token (and unlinking it) takes that token's lock twice per request. `close` cancels
        // those of the requests in flight instead.
        let cancel = Cancellation::new();
        #[cfg_attr(not(feature = "http"), allow(unused_mut))]
        let mut scope = RequestScope::new(id.clone(), cancel.clone(), self.peer.related_to(id.clone()));
        #[cfg(feature = "http")]
        {
            scope.http = http;
        }
        #[cfg(not(feature = "http"))]
        let _ = http;
        let method = request.method.clone();
        // A handler that panics, here or in its future, is answered with an error; the session
        // goes on.
        let mut future =
            match std::panic::catch_unwind(AssertUnwindSafe(|| self.service.handle_request(request, scope))) {
                Ok(Handling::Future(future)) => AssertUnwindSafe(future).catch_unwind(),
                Ok(Handling::Ready(result)) => {
                    return self.answered_at_once(id, &method, Ok(result), cancel, direct).await;
                }
                Err(panic) => return self.answered_at_once(id, &method, Err(panic), cancel, direct).await,
            };
        // The first poll runs here, on the caller: it does whatever the handler can do without
        // waiting, even when the request was cancelled (or the session closed) right after it
        // arrived, so a handler that answers at once is answered however tasks are scheduled.
        // Most requests end in that poll, and then need no task of their own: spawning one, and
        // waking another thread to run it, would cost more than the handler itself.
        if let Poll::Ready(outcome) = std::future::poll_fn(|cx| Poll::Ready(future.poll_unpin(cx))).await {
            drop(future);
            return self.answered_at_once(id, &method, outcome, cancel, direct).await;
        }
        let Ok(room) = self.waiting.clone().try_acquire_owned() else {
            // Too many handlers wait already: this one is answered with an error, then dropped
            // (which withdraws whatever it asked the peer in its first poll).
            let error = ErrorObject::internal(format!(
                "too many requests in flight (at most {} may wait at once); retry when some have finished",
                self.config.max_in_flight
            ));
            self.send_error(Some(&id), &error).await;
            drop(future);
            return;
        };
        // The handler waits, and from now on can be cancelled. (On Streamable HTTP, requests
        // arrive on many tasks: another one with this id may have started waiting meanwhile.)
        let registered = match self.in_flight.lock() {
            Ok(mut m) => match m.entry(id.clone()) {
                std::collections::hash_map::Entry::Vacant(room) => {
                    room.insert(cancel.clone());
                    true
                }
                std::collections::hash_map::Entry::Occupied(_) => false,
            },
            Err(_) => false,
        };
        if !registered {
            drop((future, room));
            self.send_error(Some(&id), &id_in_use(&id)).await;
            return;
        }
        // `close` may have run since the first check: it cancelled only what was in the map.
        if self.closing.is_cancelled() {
            cancel.cancel();
        }
        // The handler waits: it goes on in a task of its own. (It is polled again there, with
        // that task's waker, before it waits for anything.) Once it waits, cancellation wins.
        let peer = self.peer.related_to(id.clone());
        let in_flight = self.in_flight.clone();
        self.tasks.spawn(|running| async move {
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                r = &mut future => Some(r),
            };
            if let Ok(mut m) = in_flight.lock() {
                m.remove(&id);
            }
            match outcome {
                Some(outcome) => {
                    let frame = response_frame(&id, &method, outcome);
                    let out = Outbound { frame, related: Some(id), kind: OutboundKind::Response };
                    // Waiting for room is rare; its future, boxed, is not part of every task.
                    if let Err(out) = peer.try_send_outbound(out) {
                        let _ = Box::pin(peer.send_outbound(out)).await;
                    }
                }
                None => tracing::debug!(%id, %method, "request cancelled; no response sent"),
            }
            drop((room, running));
        });
    }

    /// Sends the answer of a request whose handler ended without waiting (on the reader), and
    /// keeps its cancellation state for the next request when nothing else holds it.
    async fn answered_at_once(
        &self,
        id: RequestId,
        method: &str,
        outcome: std::thread::Result<HandlerResult>,
        cancel: Cancellation,
        direct: Option<&DirectFrames>,
    ) {
        cancel.recycle();
        let outcome = match (outcome, direct.filter(|_| self.peer.queue_is_empty())) {
            (Ok(Ok(result)), Some(direct)) => match direct.push(&id, result) {
                Ok(()) => return,
                Err(back) => Ok(Ok(back)),
            },
            (outcome, _) => outcome,
        };
        let frame = response_frame(&id, method, outcome);
        let out = Outbound { frame, related: Some(id), kind: OutboundKind::Response };
        // The caller is the reader. A full outbound queue does not stop it at once: a peer
        // that sends a burst before it reads anything is still served. But the answers
        // waiting for room are bounded; past that the reader waits, and so does a peer
        // that stopped reading, instead of the session growing for it.
        if let Err(out) = self.peer.try_send_outbound(out) {
            match self.backlog.clone().try_acquire_owned() {
                Ok(room) => {
                    let peer = self.peer.clone();
                    self.tasks.spawn(|running| async move {
                        let _ = peer.send_outbound(out).await;
                        drop((room, running));
                    });
                }
                Err(_) => {
                    let _ = self.peer.send_outbound(out).await;
                }
            }
        }
    }

    /// Ends the session: fails every pending wait on the peer with [`PeerError::Closed`],
    /// cancels every handler, and waits (up to the grace period) for their tasks to end.
    /// Dropping the session does the same without waiting.
    pub async fn shutdown(&self) {
        self.close();
        if tokio::time::timeout(self.config.shutdown_grace, self.tasks.wait()).await.is_err() {
            tracing::warn!("some request handlers did not stop within the shutdown grace period");
        }
    }

    /// Fails pending waits, tells the service, and cancels every handler; only the first call acts.
    fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.peer.close();
        self.service.closed();
        self.closing.cancel();
        if let Ok(m) = self.in_flight.lock() {
            m.values().for_each(Cancellation::cancel);
        }
    }
}

impl<S: Service> Drop for Session<S> {
    /// A session dropped without [`shutdown`](Session::shutdown) (its transport task aborted,
    /// say) must not leave handlers running or waits pending forever.
    fn drop(&mut self) {
        self.close();
    }
}

/// The tasks a session spawned (handlers that wait, answers waiting for room), so that
/// [`Session::shutdown`] can wait for them to end.
///
/// tokio-util's `TaskTracker` does the same, but needs tokio-util's `rt` feature, which brings
/// futures-util's default features, its proc macros, and with them a second major version of
/// syn: seconds of every clean build of a server.
#[derive(Clone, Default)]
struct HandlerTasks(Arc<TasksInner>);

#[derive(Default)]
struct TasksInner {
    running: AtomicUsize,
    none_left: tokio::sync::Notify,
}

/// Counts a task as running until dropped (when the task ends, or is dropped unpolled).
struct Running(Arc<TasksInner>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.none_left.notify_waiters();
        }
    }
}

impl HandlerTasks {
    /// Spawns the task `make` returns; the task must keep the [`Running`] it is given until it
    /// ends. (Wrapping the task in an async block of ours that held the guard would store the
    /// task's future twice in that block: its state is kept for every handler that waits.)
    fn spawn<F: Future<Output = ()> + Send + 'static>(&self, make: impl FnOnce(Running) -> F) {
        self.0.running.fetch_add(1, Ordering::AcqRel);
        tokio::spawn(make(Running(self.0.clone())));
    }

    /// Completes once no task is running.
    async fn wait(&self) {
        loop {
            // Created before the check: `notify_waiters` reaches it even if it is not polled yet.
            let notified = self.0.none_left.notified();
            if self.0.running.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// The error for a request whose id a request in flight already has.
fn id_in_use(id: &RequestId) -> ErrorObject {
    ErrorObject::invalid_request(format!("request id {id} is already in use by a request in flight"))
}

/// The response to a request whose handler ended (or panicked).
fn response_frame(id: &RequestId, method: &str, outcome: std::thread::Result<HandlerResult>) -> String {
    match outcome {
        Ok(Ok(result)) => result.into_response(id),
        Ok(Err(error)) => encode_error(Some(id), &error),
        Err(panic) => {
            let what = panic_message(&*panic);
            tracing::error!(%id, %method, panic = %what, "request handler panicked");
            encode_error(Some(id), &ErrorObject::internal(format!("the handler of `{method}` panicked: {what}")))
        }
    }
}

/// 128 random bits, hex: an id nobody can guess (a session's, a URL flow's, a request's
/// rounds'). They come from the thread's CSPRNG (ChaCha, seeded and reseeded from the
/// operating system), not from a system call per id: one is made for every 2026-era request.
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    rand::fill(&mut bytes[..]);
    hex::encode(bytes)
}

/// The text of a panic payload.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

#[cfg(test)]
mod tests;
