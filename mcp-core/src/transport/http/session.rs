//! One HTTP session: the engine session, and the routing of what it sends to SSE streams.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::response::Response;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::events::{EventId, EventStore};
use crate::engine::{BoxFuture, HandlerResult, Handling, Outbound, OutboundKind, Peer, RequestScope, Service, Session};
use crate::protocol::{CancelledParams, Message, Notification, Request, RequestId};

/// The stream of messages not tied to any request (the session's GET stream).
const STANDALONE: u64 = 0;
/// How many events may wait for a slow SSE reader before it is cut off (it can resume with
/// `Last-Event-ID`; nothing is lost while the event store keeps the events).
const SINK_CAPACITY: usize = 256;

/// One message on its way to an SSE stream.
#[derive(Debug)]
pub(crate) struct SseEvent {
    pub(crate) id: Option<EventId>,
    pub(crate) frame: String,
    pub(crate) is_response: bool,
}

/// The sending end of one SSE stream's queue (kept by the session's router).
///
/// Not a tokio `mpsc` channel: that allocates its slots 32 at a time (~1.8 KiB for these events)
/// when the first one is sent, and every request answered with SSE has a stream. A request that
/// waits for the user (an elicitation) keeps its stream for minutes; with many of them that was
/// the largest share of a pending request's memory. This queue holds what is in it and no more.
pub(crate) struct Sink {
    shared: Arc<Mutex<Queue>>,
}

/// The receiving end, read by the SSE response.
pub(crate) struct Events {
    shared: Arc<Mutex<Queue>>,
    /// For a request's stream: whom to tell when the reader goes away.
    detach: Option<Detach>,
}

/// A reader of a request's stream, as its session knows it.
struct Detach {
    session: Weak<HttpSession>,
    stream: u64,
    /// Which attachment of the stream this reader is (a resumed stream gets a new reader).
    attach: u64,
}

struct Queue {
    events: VecDeque<SseEvent>,
    waker: Option<std::task::Waker>,
    sink_gone: bool,
    events_gone: bool,
}

/// A queue of at most [`SINK_CAPACITY`] events.
fn sse_queue() -> (Sink, Events) {
    let shared =
        Arc::new(Mutex::new(Queue { events: VecDeque::new(), waker: None, sink_gone: false, events_gone: false }));
    (Sink { shared: shared.clone() }, Events { shared, detach: None })
}

fn lock(queue: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Sink {
    /// Queues `event`; fails when the reader is gone or has fallen [`SINK_CAPACITY`] behind.
    fn try_send(&self, event: SseEvent) -> Result<(), SseEvent> {
        let mut q = lock(&self.shared);
        if q.events_gone || q.events.len() >= SINK_CAPACITY {
            return Err(event);
        }
        q.events.push_back(event);
        if let Some(w) = q.waker.take() {
            drop(q);
            w.wake();
        }
        Ok(())
    }

    /// Whether the reader is gone.
    fn is_closed(&self) -> bool {
        lock(&self.shared).events_gone
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let mut q = lock(&self.shared);
        q.sink_gone = true;
        if let Some(w) = q.waker.take() {
            drop(q);
            w.wake();
        }
    }
}

impl Events {
    /// The next event; `None` once the sink is gone and every event was read.
    pub(crate) async fn recv(&mut self) -> Option<SseEvent> {
        std::future::poll_fn(|cx| {
            let mut q = lock(&self.shared);
            if let Some(event) = q.events.pop_front() {
                return Poll::Ready(Some(event));
            }
            if q.sink_gone {
                return Poll::Ready(None);
            }
            if !q.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                q.waker = Some(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        {
            let mut q = lock(&self.shared);
            q.events_gone = true;
            q.events = VecDeque::new();
            q.waker = None;
        }
        if let Some(d) = self.detach.take()
            && let Some(session) = d.session.upgrade()
        {
            session.detached(d.stream, d.attach);
        }
    }
}

/// What an SSE response sends: events already known, then whatever arrives on `live`.
pub(crate) struct Delivery {
    ready: VecDeque<SseEvent>,
    live: Option<Events>,
}

impl Delivery {
    pub(crate) fn new(first: SseEvent, live: Events) -> Self {
        Delivery { ready: VecDeque::from([first]), live: Some(live) }
    }

    /// Nothing at all: the stream ends at once.
    pub(crate) fn empty() -> Self {
        Delivery { ready: VecDeque::new(), live: None }
    }
}

struct StreamState {
    next_seq: u64,
    sink: Option<Sink>,
    done: bool,
    /// How many readers have attached to the stream (the POST's, then each resumption's).
    attach: u64,
}

impl StreamState {
    fn new() -> Self {
        StreamState { next_seq: 0, sink: None, done: false, attach: 0 }
    }
}

#[derive(Default)]
struct Routes {
    next_stream: u64,
    by_request: HashMap<RequestId, u64>,
    streams: HashMap<u64, StreamState>,
    /// The session closed: no new request stream may open (nothing would ever end it).
    closed: bool,
}

impl Routes {
    /// Whether `stream` is unfinished and still without the reader that attached as `attach`.
    fn still_detached(&self, stream: u64, attach: u64) -> bool {
        self.streams.get(&stream).is_some_and(|s| !s.done && s.attach == attach)
    }
}

/// Cancels the requests of a session's detached streams as their resume windows end, unless a
/// reader came back (or the stream ended) meanwhile. Ends when no stream is left to watch.
async fn watch_detached(session: Weak<HttpSession>) {
    loop {
        let next = {
            let Some(s) = session.upgrade() else { return };
            let Ok(mut d) = s.detached.lock() else { return };
            match d.streams.front() {
                Some(&(deadline, _, _)) => deadline,
                None => {
                    d.watched = false;
                    return;
                }
            }
        };
        tokio::time::sleep_until(next).await;
        let Some(s) = session.upgrade() else { return };
        let now = tokio::time::Instant::now();
        let mut due = Vec::new();
        if let Ok(mut d) = s.detached.lock() {
            while d.streams.front().is_some_and(|&(deadline, _, _)| deadline <= now) {
                due.extend(d.streams.pop_front().map(|(_, stream, attach)| (stream, attach)));
            }
        }
        for (stream, attach) in due {
            let request = match s.routes.lock() {
                Ok(routes) if routes.still_detached(stream, attach) => {
                    routes.by_request.iter().find(|(_, st)| **st == stream).map(|(id, _)| id.clone())
                }
                _ => None,
            };
            if let Some(request) = request {
                tracing::debug!(session = s.id(), %request, "nobody resumed the request's stream; cancelling it");
                s.cancel(request).await;
            }
        }
    }
}

/// Why a request stream could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// A request with that id is in flight.
    DuplicateId,
    /// The session has closed.
    Closed,
}

/// The server session, reporting requests that end without a response.
///
/// The engine sends nothing for a request whose handler was dropped (the client cancelled it),
/// so without this the request's stream, and the POST waiting on it, would stay open until the
/// session ends.
pub(crate) struct Tracked {
    inner: Box<dyn Service>,
    unanswered: mpsc::UnboundedSender<RequestId>,
}

impl Service for Tracked {
    fn handle_request(&self, request: Request, scope: RequestScope) -> Handling {
        let id = scope.id.clone();
        match self.inner.handle_request(request, scope) {
            // Answered: nothing to report.
            Handling::Ready(result) => Handling::Ready(result),
            Handling::Future(inner) => Handling::future(WatchEnd {
                inner: Some(inner),
                report: Some((id, self.unanswered.clone())),
                polling: false,
            }),
        }
    }

    fn handle_notification(&self, notification: Notification, peer: &Peer) {
        self.inner.handle_notification(notification, peer);
    }

    fn closed(&self) {
        self.inner.closed();
    }

    fn snapshot(&self) -> Option<String> {
        self.inner.snapshot()
    }
}

/// A handler's future that reports its request when it is dropped before completing: the engine
/// drops it only when the request was cancelled, and then sends no response.
struct WatchEnd {
    inner: Option<BoxFuture<'static, HandlerResult>>,
    report: Option<(RequestId, mpsc::UnboundedSender<RequestId>)>,
    /// Set while the handler is polled: if it panics, the engine answers with an error, so the
    /// request does not end unanswered.
    polling: bool,
}

impl Future for WatchEnd {
    type Output = HandlerResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<HandlerResult> {
        let this = self.get_mut();
        let Some(inner) = this.inner.as_mut() else { return Poll::Pending };
        this.polling = true;
        let outcome = inner.as_mut().poll(cx);
        this.polling = false;
        if outcome.is_ready() {
            this.report = None;
            this.inner = None;
        }
        outcome
    }
}

impl Drop for WatchEnd {
    fn drop(&mut self) {
        // The handler's own clean-up (withdrawing its requests to the client) is queued first.
        drop(self.inner.take());
        if let Some((id, report)) = self.report.take()
            && !self.polling
        {
            let _ = report.send(id);
        }
    }
}

pub(crate) struct HttpSession {
    id: String,
    engine: Session<Tracked>,
    routes: Mutex<Routes>,
    last_active: Mutex<Instant>,
    principal: Option<String>,
    store: Option<Arc<dyn EventStore>>,
    keep_alive: Duration,
    resume_window: Duration,
    /// Request streams whose reader went away, oldest first: see [`detached`](Self::detached).
    detached: Mutex<Detached>,
    closing: CancellationToken,
    /// Close as soon as no request is in flight (sessionless serving).
    ephemeral: AtomicBool,
    /// Set on a replica of a session another instance owns: where what the session sends
    /// outside any request of this instance goes (to the owner's GET stream).
    to_owner: std::sync::OnceLock<Box<dyn Fn(String) + Send + Sync>>,
    /// What follows the event ids on the wire (`@<instance>` on a replica).
    id_suffix: std::sync::OnceLock<String>,
}

/// Streams waiting for a reader to come back, each with the time its request is cancelled
/// unless one does (in order: the window is the same for all), and whether a task watches them.
#[derive(Default)]
struct Detached {
    streams: VecDeque<(tokio::time::Instant, u64, u64)>,
    watched: bool,
}

impl HttpSession {
    /// Starts a session; `store` (when resumable) keeps its events for `Last-Event-ID`.
    pub(crate) fn start(
        id: String,
        service: Box<dyn Service>,
        principal: Option<String>,
        shared: &Arc<Shared>,
        store: Option<Arc<dyn EventStore>>,
    ) -> Arc<Self> {
        let (unanswered, unanswered_rx) = mpsc::unbounded_channel();
        let (engine, outbound) =
            Session::new(Tracked { inner: service, unanswered }, shared.server.session_config().clone());
        let session = Arc::new(HttpSession {
            id,
            engine,
            routes: Mutex::new(Routes { next_stream: STANDALONE + 1, ..Routes::default() }),
            last_active: Mutex::new(Instant::now()),
            principal,
            store,
            id_suffix: std::sync::OnceLock::new(),
            keep_alive: shared.config.keep_alive,
            resume_window: shared.config.resume_window,
            detached: Mutex::default(),
            closing: shared.closing.child_token(),
            ephemeral: AtomicBool::new(false),
            to_owner: std::sync::OnceLock::new(),
        });
        tokio::spawn(pump(Arc::downgrade(&session), outbound, unanswered_rx));
        session
    }

    /// Ends the ids of this session's events with `@<instance>`: they are kept by `instance`
    /// alone (a replica's), where a client resuming from one of them is sent.
    pub(crate) fn keep_events_on(&self, instance: &str) {
        let _ = self.id_suffix.set(format!("@{instance}"));
    }

    fn id_suffix(&self) -> &str {
        self.id_suffix.get().map_or("", String::as_str)
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn engine(&self) -> &Session<Tracked> {
        &self.engine
    }

    pub(crate) fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    pub(crate) fn closing(&self) -> CancellationToken {
        self.closing.clone()
    }

    pub(crate) fn touch(&self) {
        if let Ok(mut t) = self.last_active.lock() {
            *t = Instant::now();
        }
    }

    /// When the session last had a request.
    pub(crate) fn last_active(&self) -> Instant {
        self.last_active.lock().map(|t| *t).unwrap_or_else(|p| *p.into_inner())
    }

    pub(crate) fn idle_for(&self) -> Duration {
        self.last_active.lock().map(|t| t.elapsed()).unwrap_or_default()
    }

    /// How many request streams are tracked (the GET stream is not counted).
    pub(crate) fn request_streams(&self) -> usize {
        self.routes.lock().map(|r| r.streams.keys().filter(|k| **k != STANDALONE).count()).unwrap_or(0)
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.engine.in_flight_count() + self.engine.peer().pending_count()
    }

    /// Makes this session a replica of one another instance owns: what it sends outside any
    /// request served here is handed to `to_owner` (for the owner's GET stream), not kept.
    pub(crate) fn relay_unrelated(&self, to_owner: Box<dyn Fn(String) + Send + Sync>) {
        let _ = self.to_owner.set(to_owner);
    }

    /// Whether this session is a replica of one another instance owns.
    pub(crate) fn is_replica(&self) -> bool {
        self.to_owner.get().is_some()
    }

    /// Sends `frame`, which a replica of this session sent outside any request, on the
    /// session's GET stream.
    pub(crate) fn deliver_unrelated(&self, frame: String) {
        if self.is_replica() {
            return;
        }
        let _ = self.route(Outbound { frame, related: None, kind: OutboundKind::Notification });
    }

    /// A stream for the response to request `id` (and what is sent while handling it).
    pub(crate) fn open_request_stream(self: &Arc<Self>, id: &RequestId) -> Result<Events, OpenError> {
        let mut routes = self.routes.lock().map_err(|_| OpenError::Closed)?;
        if routes.closed {
            return Err(OpenError::Closed);
        }
        if routes.by_request.contains_key(id) {
            return Err(OpenError::DuplicateId);
        }
        let stream = routes.next_stream;
        routes.next_stream += 1;
        let (tx, mut rx) = sse_queue();
        rx.detach = Some(Detach { session: Arc::downgrade(self), stream, attach: 0 });
        routes.by_request.insert(id.clone(), stream);
        routes.streams.insert(stream, StreamState { sink: Some(tx), ..StreamState::new() });
        Ok(rx)
    }

    /// The reader of a request's stream went away (the client's connection dropped, or it was
    /// cut off for reading too slowly). Unless the stream ended, or another reader attached
    /// since, the request is cancelled once the resume window passes with nobody back for it: a
    /// disconnection is not a cancellation, but a request nobody resumes must not keep its
    /// handler, and the questions it waits on, until they time out.
    fn detached(self: &Arc<Self>, stream: u64, attach: u64) {
        if !self.routes.lock().is_ok_and(|routes| routes.still_detached(stream, attach)) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        // One task per session watches its detached streams, not one per stream: a request that
        // waits for its user (an elicitation) with nobody reading its stream would otherwise keep
        // a task and a timer of its own, more than the rest of what it holds.
        let deadline = tokio::time::Instant::now() + self.resume_window;
        let first = match self.detached.lock() {
            Ok(mut d) => {
                d.streams.push_back((deadline, stream, attach));
                !std::mem::replace(&mut d.watched, true)
            }
            Err(_) => return,
        };
        if first {
            runtime.spawn(watch_detached(Arc::downgrade(self)));
        }
    }

    async fn cancel(&self, id: RequestId) {
        let params = CancelledParams {
            request_id: Some(id),
            reason: Some("the client's connection closed and nobody resumed the request".into()),
        };
        let Ok(params) = serde_json::value::to_raw_value(&params) else { return };
        let cancelled = Notification { method: "notifications/cancelled".into(), params: Some(params) };
        self.engine.handle_message(Message::Notification(cancelled)).await;
    }

    /// Ends the stream of request `id`, which ended without a response (it was cancelled).
    /// Returns true when the session should close, like [`route`](Self::route).
    fn end_unanswered(&self, id: &RequestId) -> bool {
        let Ok(mut routes) = self.routes.lock() else { return true };
        if let Some(stream) = routes.by_request.remove(id) {
            // Dropping the sink ends the SSE response (or the POST still waiting for a first
            // message); a client resuming this stream later gets 404.
            routes.streams.remove(&stream);
            self.touch();
        }
        self.ephemeral.load(Ordering::Relaxed) && routes.by_request.is_empty()
    }

    /// Puts one outbound message on its stream. Returns true when the session should close
    /// (ephemeral, and nothing is left in flight).
    fn route(&self, out: Outbound) -> bool {
        let Ok(mut routes) = self.routes.lock() else { return true };
        if routes.closed {
            // Nobody can receive it, and storing it would recreate the session's events after
            // `close` forgot them, never to be freed.
            return false;
        }
        let request_stream = out.related.as_ref().and_then(|r| routes.by_request.get(r).copied());
        if let (None, Some(to_owner)) = (request_stream, self.to_owner.get()) {
            drop(routes);
            to_owner(out.frame);
            return false;
        }
        let stream_id = request_stream.unwrap_or(STANDALONE);
        let is_response = out.kind == OutboundKind::Response;
        let state = routes.streams.entry(stream_id).or_insert_with(StreamState::new);
        // A response that is the first message of its stream goes out as plain JSON: no event
        // id reaches the client, so nobody can resume it, and keeping it would only push
        // resumable events out of a bounded store.
        let plain_json = is_response && request_stream.is_some() && state.next_seq == 0;
        state.next_seq += 1;
        let id = self.store.as_ref().map(|_| EventId { stream: stream_id, seq: state.next_seq });
        if let (Some(store), Some(id), false) = (&self.store, id, plain_json) {
            store.store(&self.id, id, &out.frame);
        }
        if let Some(sink) = &state.sink {
            let event = SseEvent { id, frame: out.frame, is_response: is_response && request_stream.is_some() };
            if sink.try_send(event).is_err() {
                // Gone, or too slow: the reader can come back with `Last-Event-ID`.
                state.sink = None;
            }
        }
        if is_response && request_stream.is_some() {
            // Idleness counts from the end of the last request, not from when it arrived: a
            // request that ran longer than the idle timeout must not expire its session at once.
            self.touch();
            state.done = true;
            state.sink = None;
            if let Some(r) = &out.related {
                routes.by_request.remove(r);
            }
            routes.streams.remove(&stream_id);
        }
        self.ephemeral.load(Ordering::Relaxed) && routes.by_request.is_empty()
    }

    /// Re-attaches a client to the stream of `after`, first replaying what it missed.
    pub(crate) fn resume(self: &Arc<Self>, after: EventId) -> Result<Delivery, StatusCode> {
        let store = self.store.as_ref().ok_or(StatusCode::BAD_REQUEST)?;
        let mut routes = self.routes.lock().map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
        let missed = store.replay(&self.id, after).ok_or(StatusCode::NOT_FOUND)?;
        let ready: VecDeque<SseEvent> =
            missed.into_iter().map(|(id, frame)| SseEvent { id: Some(id), frame, is_response: false }).collect();
        let live = match routes.streams.get_mut(&after.stream) {
            Some(state) if !state.done => {
                let (tx, mut rx) = sse_queue();
                state.sink = Some(tx);
                state.attach += 1;
                if after.stream != STANDALONE {
                    let session = Arc::downgrade(self);
                    rx.detach = Some(Detach { session, stream: after.stream, attach: state.attach });
                }
                Some(rx)
            }
            // A finished request stream: replay it and end.
            _ if after.stream != STANDALONE && !ready.is_empty() => None,
            _ if after.stream != STANDALONE => return Err(StatusCode::NOT_FOUND),
            _ => {
                let (tx, rx) = sse_queue();
                routes.streams.entry(STANDALONE).or_insert_with(StreamState::new).sink = Some(tx);
                Some(rx)
            }
        };
        Ok(Delivery { ready, live })
    }

    /// Attaches the session's GET stream; 409 when one is already open.
    pub(crate) fn attach_standalone(&self) -> Result<Delivery, StatusCode> {
        let mut routes = self.routes.lock().map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
        let state = routes.streams.entry(STANDALONE).or_insert_with(StreamState::new);
        if state.sink.as_ref().is_some_and(|s| !s.is_closed()) {
            return Err(StatusCode::CONFLICT);
        }
        let (tx, rx) = sse_queue();
        state.sink = Some(tx);
        Ok(Delivery { ready: VecDeque::new(), live: Some(rx) })
    }

    /// Numbers this session's new streams, and the events of its GET stream, from `base` on: a
    /// session taken over from another instance must not reuse the event ids the client saw
    /// there, which the shared event store may still replay.
    pub(crate) fn number_events_from(&self, base: u64) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.next_stream = routes.next_stream.max(base);
            routes.streams.entry(STANDALONE).or_insert_with(StreamState::new).next_seq = base;
        }
    }

    /// Serve nothing more than what is in flight, then close.
    pub(crate) fn close_when_idle(self: &Arc<Self>) {
        self.ephemeral.store(true, Ordering::Relaxed);
        let idle = self.routes.lock().map(|r| r.by_request.is_empty()).unwrap_or(true);
        if idle {
            let this = self.clone();
            tokio::spawn(async move { this.close().await });
        }
    }

    /// Ends the session: pending waits fail, handlers stop, streams end, events are forgotten.
    pub(crate) async fn close(&self) {
        self.close_keeping_events(false).await;
    }

    /// Answers every request still running here with an error, before the session moves to
    /// another instance of the deployment (its client sends them again): a client whose stream
    /// just ends may wait for ever for the answer.
    pub(crate) fn cut_running(&self) {
        let running: Vec<RequestId> =
            self.routes.lock().map(|r| r.by_request.keys().cloned().collect()).unwrap_or_default();
        let error = crate::protocol::ErrorObject::internal(
            "this request was cut short: its session moved to another instance of the server; send it again",
        );
        for id in running {
            let frame = crate::protocol::jsonrpc::encode_error(Some(&id), &error);
            self.route(Outbound { frame, related: Some(id), kind: OutboundKind::Response });
        }
    }

    /// Ends the session, forgetting its events unless `keep` (the session lives on: another
    /// instance of the deployment takes it over, and replays them).
    pub(crate) async fn close_keeping_events(&self, keep: bool) {
        if keep {
            self.cut_running();
        }
        self.closing.cancel();
        self.engine.shutdown().await;
        if let Ok(mut routes) = self.routes.lock() {
            routes.closed = true;
            routes.streams.clear();
            routes.by_request.clear();
        }
        if let (Some(store), false) = (&self.store, keep) {
            store.forget(&self.id);
        }
    }
}

/// Moves what the engine sends onto the session's streams, and ends the streams of requests
/// that ended unanswered.
async fn pump(
    session: Weak<HttpSession>,
    mut outbound: mpsc::Receiver<Outbound>,
    mut unanswered: mpsc::UnboundedReceiver<RequestId>,
) {
    let mut reports_open = true;
    loop {
        let close = tokio::select! {
            biased;
            out = outbound.recv() => {
                let Some(out) = out else { return };
                let Some(session) = session.upgrade() else { return };
                session.route(out).then_some(session)
            }
            id = unanswered.recv(), if reports_open => {
                let Some(id) = id else {
                    reports_open = false;
                    continue;
                };
                let Some(session) = session.upgrade() else { return };
                // Whatever the handler sent before it was dropped is already queued: deliver it
                // on the request's stream before ending that stream.
                let mut close = false;
                while let Ok(out) = outbound.try_recv() {
                    close |= session.route(out);
                }
                close |= session.end_unanswered(&id);
                close.then_some(session)
            }
        };
        if let Some(session) = close {
            tokio::spawn(async move { session.close().await });
            return;
        }
    }
}

fn format_event(event: &SseEvent, suffix: &str) -> Bytes {
    super::sse::format_event(&event.frame, event.id.map(|id| (id, suffix)))
}

/// An SSE response delivering `delivery`, with keep-alive comments, ending when the stream's
/// response was sent, the stream was detached, or the session closed.
///
/// The response keeps `session` alive while it streams: a sessionless one is held by nothing
/// else, and dropping it would cancel the very request whose messages the stream carries.
pub(crate) fn sse_response(delivery: Delivery, session: Arc<HttpSession>) -> Response {
    struct St {
        delivery: Delivery,
        tick: tokio::time::Interval,
        closing: CancellationToken,
        finished: bool,
        _session: Arc<HttpSession>,
    }
    let keep_alive = session.keep_alive;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + keep_alive, keep_alive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let state = St { delivery, tick, closing: session.closing(), finished: false, _session: session };
    let body = futures_util::stream::unfold(state, |mut st| async move {
        if st.finished {
            return None;
        }
        if let Some(event) = st.delivery.ready.pop_front() {
            st.finished = event.is_response;
            return Some((Ok::<_, Infallible>(format_event(&event, st._session.id_suffix())), st));
        }
        let live = st.delivery.live.as_mut()?;
        tokio::select! {
            // What was routed before the session closed is still delivered (a sessionless
            // session closes as soon as its response is routed).
            biased;
            event = live.recv() => {
                let event = event?;
                st.finished = event.is_response;
                Some((Ok(format_event(&event, st._session.id_suffix())), st))
            }
            _ = st.tick.tick() => Some((Ok(Bytes::from_static(super::sse::KEEP_ALIVE)), st)),
            () = st.closing.cancelled() => None,
        }
    });
    super::sse::response(Body::from_stream(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::{HttpConfig, StreamableHttp};

    /// Records which sessions have events stored.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl EventStore for Recorder {
        fn store(&self, session: &str, _: EventId, _: &str) {
            self.0.lock().unwrap().push(session.to_owned());
        }
        fn replay(&self, _: &str, _: EventId) -> Option<Vec<(EventId, String)>> {
            Some(Vec::new())
        }
        fn forget(&self, session: &str) {
            self.0.lock().unwrap().retain(|s| s != session);
        }
    }

    #[tokio::test]
    async fn nothing_is_stored_for_a_session_after_it_closed() {
        let server = crate::Server::builder("t", "1").build().unwrap();
        let store = Arc::new(Recorder::default());
        let http = StreamableHttp::new(&server, HttpConfig::default().event_store(store.clone()));
        let service = http.shared.server.open(super::super::Opening::Initialize, None);
        let session =
            HttpSession::start("s1".into(), service, None, &http.shared, Some(http.shared.config.event_store.clone()));
        let note = || Outbound { frame: "{}".into(), related: None, kind: OutboundKind::Notification };
        assert!(!session.route(note()));
        assert_eq!(*store.0.lock().unwrap(), ["s1"]);
        session.close().await;
        assert!(store.0.lock().unwrap().is_empty(), "close forgets the session's events");
        // A message still queued, or sent by a task that outlived the session, comes later.
        session.route(note());
        assert!(store.0.lock().unwrap().is_empty(), "a closed session's events would never be forgotten");
    }

    #[test]
    fn an_event_is_framed_with_one_data_line_per_line() {
        let one = SseEvent { id: Some(EventId { stream: 3, seq: 1 }), frame: r#"{"a":1}"#.into(), is_response: false };
        assert_eq!(&format_event(&one, "")[..], b"id: 3-1\nevent: message\ndata: {\"a\":1}\n\n");
        let split = SseEvent { id: None, frame: "{\n\"a\":\r\n1\r}".into(), is_response: true };
        assert_eq!(
            &format_event(&split, "")[..],
            b"event: message\ndata: {\ndata: \"a\":\ndata: \ndata: 1\ndata: }\n\n".as_slice()
        );
    }
}
