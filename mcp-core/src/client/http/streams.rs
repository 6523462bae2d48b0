//! Streams: a request's SSE stream, resumed with `GET` and `Last-Event-ID` when it ends before
//! the answer, and the session's own `GET` stream, opened first and reopened when it ends.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::ACCEPT;
use reqwest::{Response, StatusCode};
use tokio::sync::oneshot;

use super::shared::{Shared, is_event_stream, transport_error};
use crate::client::sse::SseParser;
use crate::protocol::RequestId;

/// The longest delay between two attempts to open the session's GET stream.
const MAX_REOPEN_DELAY: Duration = Duration::from_secs(30);

/// How reading a stream ended.
enum StreamEnd {
    /// The awaited response arrived.
    Answered,
    /// The server ended the stream (or it broke).
    Ended,
    /// The connection is closing.
    Stopped,
}

/// Where a stream is, for resuming it.
#[derive(Default)]
struct StreamPosition {
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

impl Shared {
    /// Opens (or resumes, after `last_event_id`) a GET stream, unless the connection closes first.
    async fn get(&self, last_event_id: Option<&str>) -> Option<Result<Response, reqwest::Error>> {
        let mut request = self.with_session(self.http.get(self.url.clone())).header(ACCEPT, "text/event-stream");
        if let Some(oauth) = &self.oauth
            && let Some(token) = oauth.current()
        {
            request = oauth.authorize_request(request, &token, "GET");
        }
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        tokio::select! {
            biased;
            () = self.stop.cancelled() => None,
            r = request.send() => Some(r),
        }
    }

    /// Opens the session's GET stream in a task of its own, and waits until it is open (or
    /// refused), [`HttpClientConfig::standalone_stream_wait`] at most: a server may send there
    /// what a later request causes, and a stream opened after that would miss it. A server
    /// slower than that keeps its stream; only sending stops waiting for it.
    pub(super) async fn open_standalone(self: &Arc<Self>) {
        let (opened, settled) = oneshot::channel();
        let shared = self.clone();
        self.tasks.spawn(async move { shared.standalone(opened).await });
        let wait = self.config.standalone_wait;
        tokio::select! {
            biased;
            _ = settled => {}
            () = self.stop.cancelled() => {}
            () = tokio::time::sleep(wait) => tracing::warn!(
                ?wait,
                "the server has not answered the request for the session's GET stream yet; \
                 sending goes on, and the stream is read as soon as the server answers"
            ),
        }
    }

    /// Reads one SSE stream until the awaited response, its end, or the connection closing.
    async fn read_stream(
        &self,
        mut response: Response,
        awaited: Option<&RequestId>,
        position: &mut StreamPosition,
    ) -> StreamEnd {
        let mut parser = SseParser::new(self.config.max_message_size);
        let mut events = Vec::new();
        loop {
            let chunk = tokio::select! {
                biased;
                () = self.stop.cancelled() => return StreamEnd::Stopped,
                c = response.chunk() => c,
            };
            let bytes = match chunk {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return StreamEnd::Ended,
                Err(e) => {
                    tracing::debug!(error = %e, "an SSE stream broke");
                    return StreamEnd::Ended;
                }
            };
            parser.feed(&bytes, &mut events);
            position.retry = parser.retry.or(position.retry);
            if parser.last_event_id.is_some() {
                position.last_event_id.clone_from(&parser.last_event_id);
            }
            for data in events.drain(..) {
                if self.handle_incoming(&data, awaited).await {
                    return StreamEnd::Answered;
                }
            }
        }
    }

    /// Waits the delay the server asked for before reconnecting; false if the connection closes.
    async fn pause(&self, position: &StreamPosition) -> bool {
        self.sleep(position.retry.unwrap_or(self.config.default_retry)).await
    }

    /// Reads a request's SSE stream, resuming it with GET when it ends before the response.
    pub(super) async fn read_request_stream(&self, id: RequestId, response: Response) {
        let mut position = StreamPosition::default();
        let mut response = response;
        let mut attempts = 0;
        loop {
            match self.read_stream(response, Some(&id), &mut position).await {
                StreamEnd::Answered | StreamEnd::Stopped => return,
                StreamEnd::Ended => {}
            }
            let Some(last) = position.last_event_id.clone() else {
                self.fail(
                    &id,
                    transport_error(
                        "the server ended the stream without answering (and gave no event id to resume from)",
                    ),
                )
                .await;
                return;
            };
            if attempts >= self.config.max_reconnects {
                self.fail(&id, transport_error(format!("the stream ended without an answer {attempts} times"))).await;
                return;
            }
            attempts += 1;
            if !self.pause(&position).await {
                return;
            }
            tracing::debug!(%id, last_event_id = %last, "resuming the stream of a request");
            match self.get(Some(&last)).await {
                None => return,
                Some(Ok(r)) if r.status().is_success() && is_event_stream(&r) => response = r,
                Some(Ok(r)) => {
                    let error = transport_error(format!("resuming the stream failed: HTTP {}", r.status()));
                    self.fail(&id, error).await;
                    return;
                }
                Some(Err(e)) => {
                    self.fail(&id, transport_error(format!("resuming the stream failed: {e}"))).await;
                    return;
                }
            }
        }
    }

    /// The session's GET stream: server messages not tied to a request. Reopened (resumed)
    /// when it ends, a few times in a row at most; tried again with growing delays when it
    /// cannot be opened (the server unreachable, HTTP 5xx or 429); given up when the server
    /// declines it. `opened` is told once the stream is open or settled otherwise.
    async fn standalone(&self, opened: oneshot::Sender<()>) {
        let mut opened = Some(opened);
        let mut position = StreamPosition::default();
        let mut failures = 0;
        loop {
            let attempt = match self.get(position.last_event_id.as_deref()).await {
                None => return,
                Some(Ok(response)) if is_transient(response.status()) => Err(format!("HTTP {}", response.status())),
                Some(Ok(response)) => Ok(response),
                Some(Err(e)) => Err(e.to_string()),
            };
            let response = match attempt {
                Ok(response) => response,
                Err(reason) => {
                    failures += 1;
                    if failures > self.config.max_reconnects {
                        tracing::warn!(
                            %reason,
                            attempts = failures,
                            "could not open the session's GET stream; giving up on it: messages the server \
                             sends there are lost"
                        );
                        return;
                    }
                    let delay = reopen_delay(position.retry.unwrap_or(self.config.default_retry), failures);
                    tracing::warn!(%reason, attempt = failures, ?delay, "could not open the session's GET stream; trying again");
                    if !self.sleep(delay).await {
                        return;
                    }
                    continue;
                }
            };
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            let status = response.status();
            if status == StatusCode::METHOD_NOT_ALLOWED {
                tracing::debug!("the server offers no GET stream");
                return;
            }
            if !status.is_success() || !is_event_stream(&response) {
                tracing::warn!(%status, "the server refused the session's GET stream; messages it would send there are lost");
                return;
            }
            let before = position.last_event_id.clone();
            if let StreamEnd::Stopped = self.read_stream(response, None, &mut position).await {
                return;
            }
            // A stream that delivered something starts the count of failures afresh.
            failures = if position.last_event_id != before { 1 } else { failures + 1 };
            if failures > self.config.max_reconnects {
                tracing::warn!(
                    times = failures,
                    "the session's GET stream ended without news too often; not reopening it"
                );
                return;
            }
            if !self.pause(&position).await {
                return;
            }
        }
    }

    /// Sleeps `delay`; false if the connection closes first.
    async fn sleep(&self, delay: Duration) -> bool {
        tokio::select! {
            biased;
            () = self.stop.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }
}

/// Whether a refusal of a GET stream may pass: the server is overloaded or failing for now.
fn is_transient(status: StatusCode) -> bool {
    status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS
}

/// The delay before attempt `failures + 1` to open a stream: `base`, doubled for each failure
/// after the first, [`MAX_REOPEN_DELAY`] at most.
fn reopen_delay(base: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    base.saturating_mul(1 << doublings).min(MAX_REOPEN_DELAY)
}
