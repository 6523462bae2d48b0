//! 2026-era requests over HTTP: no session; each POST is one request, answered on its own.
//!
//! The request's parameters are read once ([`ParamsView`]), here, to tell its era, and handed
//! to the server with it; the server admits it (its `_meta`, its token's scopes, the era's
//! header rules) and serves it, and a refusal comes back typed, to be answered here. The
//! handler runs on the POST's own task: one that answers without
//! sending anything else is answered with plain JSON, whose HTTP status follows from the
//! result it already has in hand; one that sends notifications first (progress, log messages,
//! a `subscriptions/listen` stream) gets an SSE stream, which drives it from then on. No
//! engine session, no pump task.

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::responses::{header_str, json_rpc_error_for, status_of_2026_error};
use super::sse::{KEEP_ALIVE, format_event};
use super::{Incoming, SESSION_HEADER, Served, Shared};
use crate::auth::RequestIdentity;
use crate::engine::HttpRequestParts;
use crate::engine::{Cancellation, HandlerResult, Handling, Outbound, Peer, RequestScope, panic_message};
use crate::protocol::era_2026::META_PROTOCOL_VERSION_KEY;
use crate::protocol::jsonrpc::encode_error;
use crate::protocol::methods::MethodInfo;
use crate::protocol::view::{Meta2026Text, NO_PARAMS, ParamsView};
use crate::protocol::{ErrorObject, PROTOCOL_VERSION_2026_07_28, Request, RequestId};

/// How many messages a handler may send ahead of the stream that carries them.
const QUEUE: usize = 64;

/// A request found to be of the 2026 era, with its parameters read.
pub(crate) struct Request2026 {
    request: Request,
    method: Option<&'static MethodInfo>,
    view: Result<ParamsView, String>,
}

/// Sorts a POSTed request by era: of the 2026 era (`Ok`, read) when its `_meta` names a protocol
/// version, its `MCP-Protocol-Version` header says so (a request whose header says so but whose
/// `_meta` does not is then refused as malformed), or it probes with `server/discover` outside
/// a session; else of the 2025 era (`Err`, untouched).
#[allow(clippy::result_large_err)] // the request itself goes back to its caller
pub(crate) fn read(request: Request, headers: &HeaderMap, version: Option<&str>) -> Result<Request2026, Request> {
    let text = request.params.as_deref().map_or(NO_PARAMS, RawValue::get);
    let by_header = version == Some(PROTOCOL_VERSION_2026_07_28)
        || (request.method == "server/discover" && header_str(headers, SESSION_HEADER).is_none());
    // Cheap test first: a 2025-era request almost never holds the key anywhere.
    if !by_header && META_PROTOCOL_VERSION_KEY.find(text.as_bytes()).is_none() {
        return Err(request);
    }
    let method = request.method.info();
    let view = ParamsView::read(text, method);
    let by_meta = || {
        let view = view.as_ref().ok()?;
        let meta = Meta2026Text::read(ParamsView::text(text, &view.meta)?).ok()?;
        meta.protocol_version.map(drop)
    };
    if by_header || by_meta().is_some() { Ok(Request2026 { request, method, view }) } else { Err(request) }
}

/// Serves a 2026-era request.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    http: &Arc<HttpRequestParts>,
    principal: Option<String>,
    auth: RequestIdentity,
    request: Request2026,
) -> Response {
    let Request2026 { request, method, view } = request;
    let view = match view {
        Ok(view) => view,
        Err(e) => {
            let error = ErrorObject::invalid_params(format!("invalid `{}` parameters: {e}", request.method));
            return json_rpc_error_for(StatusCode::BAD_REQUEST, Some(&request.id), &error);
        }
    };
    // The rest of its admission (its `_meta`, its headers, its token's scopes) is the
    // server's, when it is served.
    // Alone, a request is answered at once: nothing is quicker. When others are being
    // answered too, it lets them go first (one turn of the runtime, so that the requests that
    // arrived with it are read too), then is answered on the POST's own task: the answers
    // then leave together instead of one write (and one wake-up of the client) between each
    // two reads. Measured with 32 connections, that serves about 1.3x the calls per second of
    // answering at once, and about 1.15x of answering on a task of its own (see the
    // `http-stateless` scenario of the benchmarks).
    let args = Box::new(Args { principal, auth, request, method, view, http: http.clone() });
    let busy = Busy::enter(&shared.answering_2026);
    if busy.with_others {
        tokio::task::yield_now().await;
    }
    answer(shared, args).await
}

/// Counts the 2026-era requests being answered, while one is.
struct Busy<'a> {
    count: &'a AtomicUsize,
    /// Others were being answered when this one started.
    with_others: bool,
}

impl<'a> Busy<'a> {
    fn enter(count: &'a AtomicUsize) -> Self {
        Busy { with_others: count.fetch_add(1, Ordering::Relaxed) > 0, count }
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A request ready to be answered (boxed: the futures that carry it stay small).
struct Args {
    principal: Option<String>,
    auth: RequestIdentity,
    request: Request,
    method: Option<&'static MethodInfo>,
    view: ParamsView,
    http: Arc<HttpRequestParts>,
}

/// Runs the request's handler and answers the POST: JSON when the result is all there is,
/// else an SSE stream that drives the handler from then on.
async fn answer(shared: &Arc<Shared>, args: Box<Args>) -> Response {
    match begin(shared, args) {
        Begun::Answered(response) => response,
        Begun::Waiting(waiting) => waiting.finish(shared).await,
    }
}

/// How a handler's first run ended.
enum Begun {
    /// With the answer.
    Answered(Response),
    /// It waits, or sent something before answering.
    Waiting(Waiting),
}

/// A request whose handler has not answered yet (or sent something first).
struct Waiting {
    id: RequestId,
    method: crate::protocol::MethodName,
    handler: futures_util::future::BoxFuture<'static, std::thread::Result<HandlerResult>>,
    queue: mpsc::Receiver<Outbound>,
    cancelled_on_drop: CancelOnDrop,
}

/// Runs the handler as far as it goes without waiting.
fn begin(shared: &Shared, args: Box<Args>) -> Begun {
    let Args { principal, auth, request, method: row, view, http } = *args;
    let id = request.id.clone();
    let method = request.method.clone();
    let (out, queue) = Queue::take();
    let cancel = Cancellation::new();
    let mut scope = RequestScope::new(id.clone(), cancel.clone(), Peer::new(out.clone()).related_to(id.clone()));
    scope.http = Some(http);
    // Dropped with the response (the client went away, or the answer was written): the handler
    // is told, as a session's handlers are when it closes.
    let cancelled_on_drop = CancelOnDrop(Some(cancel));
    let server = &shared.server;
    let served = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let incoming = Incoming::Alone { request, method: row, view, principal, scope };
        server.serve(incoming, shared.admission(&auth))
    }));
    let handler = match served {
        Ok(Served::Handling(Handling::Ready(result))) if queue.is_empty() => {
            cancelled_on_drop.answered();
            Queue::give_back(out, queue);
            return Begun::Answered(json(&id, result));
        }
        Ok(Served::Handling(Handling::Ready(result))) => std::future::ready(Ok(result)).boxed(),
        Ok(Served::Handling(Handling::Future(future))) => AssertUnwindSafe(future).catch_unwind().boxed(),
        Ok(Served::Refused(refusal)) => {
            cancelled_on_drop.answered();
            Queue::give_back(out, queue);
            return Begun::Answered(shared.refused(&auth, Some(&id), refusal));
        }
        Ok(Served::ToSession(_)) => {
            let error = ErrorObject::internal("a 2026-era request was sent to a session");
            return Begun::Answered(json(&id, Err(error)));
        }
        Err(panic) => return Begun::Answered(json(&id, panicked(&method, &*panic))),
    };
    Begun::Waiting(Waiting { id, method, handler, queue, cancelled_on_drop })
}

impl Waiting {
    async fn finish(self, shared: &Shared) -> Response {
        let Waiting { id, method, mut handler, mut queue, cancelled_on_drop } = self;
        let closing = shared.closing.clone();
        let first = tokio::select! {
            biased;
            outcome = &mut handler => {
                let result = outcome.unwrap_or_else(|panic| panicked(&method, &*panic));
                if queue.is_empty() {
                    return json(&id, result);
                }
                Step::Answered(result)
            }
            Some(first) = queue.recv() => Step::Sent(first),
            () = closing.cancelled() => {
                let error = ErrorObject::internal("the server is shutting down; retry");
                return json_rpc_error_for(StatusCode::SERVICE_UNAVAILABLE, Some(&id), &error);
            }
        };
        let stream = Stream {
            id,
            method,
            handler: Some(handler),
            queue,
            first: Some(first),
            closing,
            _cancel: cancelled_on_drop,
        };
        sse(stream, shared.config.keep_alive)
    }
}

/// The queues of what handlers send before they answer, kept per thread once their request
/// is answered: a new one costs an allocation of a few kilobytes (and the allocator's
/// clean-up of small blocks that comes with one that size), once per request otherwise.
struct Queue;

thread_local! {
    static SPARE_QUEUES: std::cell::RefCell<Vec<(mpsc::Sender<Outbound>, mpsc::Receiver<Outbound>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Queue {
    /// How many spare queues a thread keeps.
    const SPARES: usize = 64;

    fn take() -> (mpsc::Sender<Outbound>, mpsc::Receiver<Outbound>) {
        SPARE_QUEUES.with(|q| q.borrow_mut().pop()).unwrap_or_else(|| mpsc::channel(QUEUE))
    }

    /// Keeps a queue for the next request, if nothing else holds its sending half any more
    /// (a handler may have handed its context to a task that outlives the request) and it is
    /// empty.
    fn give_back(out: mpsc::Sender<Outbound>, queue: mpsc::Receiver<Outbound>) {
        if out.strong_count() == 1 && queue.is_empty() {
            SPARE_QUEUES.with(|q| {
                let mut q = q.borrow_mut();
                if q.len() < Self::SPARES {
                    q.push((out, queue));
                }
            });
        }
    }
}

/// A JSON answer, its status following from the result.
fn json(id: &RequestId, result: HandlerResult) -> Response {
    match result {
        Ok(result) => {
            (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], result.into_response(id)).into_response()
        }
        Err(error) => json_rpc_error_for(status_of_2026_error(error.code), Some(id), &error),
    }
}

fn panicked(method: &str, panic: &(dyn std::any::Any + Send)) -> HandlerResult {
    let what = panic_message(panic);
    tracing::error!(%method, panic = %what, "request handler panicked");
    Err(ErrorObject::internal(format!("the handler of `{method}` panicked: {what}")))
}

/// Cancels the request when dropped.
struct CancelOnDrop(Option<Cancellation>);

impl CancelOnDrop {
    /// The request was answered: what its handler left running is told, if anything.
    fn answered(mut self) {
        if let Some(cancel) = self.0.take() {
            cancel.end();
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(cancel) = &self.0 {
            cancel.cancel();
        }
    }
}

/// What happened first once the handler waited.
enum Step {
    /// It sent this.
    Sent(Outbound),
    /// It answered, having sent something before.
    Answered(HandlerResult),
}

/// A request answered on an SSE stream: what its handler sends, then its response.
struct Stream {
    id: RequestId,
    method: crate::protocol::MethodName,
    handler: Option<futures_util::future::BoxFuture<'static, std::thread::Result<HandlerResult>>>,
    queue: mpsc::Receiver<Outbound>,
    first: Option<Step>,
    closing: tokio_util::sync::CancellationToken,
    _cancel: CancelOnDrop,
}

impl Stream {
    /// The next event, or `None` once the response was sent (or the server is closing).
    async fn next(&mut self, tick: &mut tokio::time::Interval) -> Option<Bytes> {
        let step = match self.first.take() {
            Some(step) => step,
            None => {
                // Sent before the answer, delivered before it.
                if let Ok(out) = self.queue.try_recv() {
                    return Some(format_event(&out.frame, None));
                }
                let handler = self.handler.as_mut()?;
                tokio::select! {
                    biased;
                    Some(out) = self.queue.recv() => Step::Sent(out),
                    outcome = handler => {
                        Step::Answered(outcome.unwrap_or_else(|panic| panicked(&self.method, &*panic)))
                    }
                    _ = tick.tick() => return Some(Bytes::from_static(KEEP_ALIVE)),
                    () = self.closing.cancelled() => return None,
                }
            }
        };
        match step {
            Step::Sent(out) => Some(format_event(&out.frame, None)),
            Step::Answered(result) => {
                self.handler = None;
                // Whatever the handler sent before it answered goes first.
                let mut text = Vec::new();
                while let Ok(out) = self.queue.try_recv() {
                    text.extend_from_slice(&format_event(&out.frame, None));
                }
                let frame = match result {
                    Ok(result) => result.into_response(&self.id),
                    Err(error) => encode_error(Some(&self.id), &error),
                };
                text.extend_from_slice(&format_event(&frame, None));
                Some(Bytes::from(text))
            }
        }
    }
}

/// The SSE response carrying `stream`, with keep-alive comments.
fn sse(stream: Stream, every: std::time::Duration) -> Response {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let body = futures_util::stream::unfold((stream, tick, false), |(mut stream, mut tick, done)| async move {
        if done {
            return None;
        }
        let event = stream.next(&mut tick).await?;
        let done = stream.handler.is_none();
        Some((Ok::<_, Infallible>(event), (stream, tick, done)))
    });
    super::sse::response(Body::from_stream(body))
}
