//! Posting: each message the client sends is a POST, in order; a request from a task of its
//! own, authorized (OAuth, step-up, a DPoP nonce) and its answer read (JSON, a stream, an HTTP
//! error); an answer to the server's question delivered again after a passing failure.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Response, StatusCode};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::shared::{Shared, authorization_error, is_event_stream, transport_error};
use crate::client::oauth::OAuthError;
use crate::engine::{Outbound, OutboundKind, PeerError};
use crate::protocol::{ErrorObject, Message, RequestId};

/// How many more times an answer to a server's question is sent after a retryable failure.
const ANSWER_REDELIVERIES: u32 = 4;

/// Whether delivering an answer failed in a way worth trying again: no connection, a failing
/// gateway, or an instance that is busy or leaving (`502`, `503`, `504`). `None` (the client
/// is closing) is not.
fn answer_delivery_failed(sent: Option<&Result<Response, PeerError>>) -> bool {
    match sent {
        None => false,
        Some(Err(PeerError::UntrustedCertificate { .. })) => false,
        Some(Err(_)) => true,
        Some(Ok(response)) => matches!(
            response.status(),
            StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT
        ),
    }
}

/// The wait a response's `Retry-After` asks for (in seconds), if it has one.
fn retry_after(sent: Option<&Result<Response, PeerError>>) -> Option<Duration> {
    let Some(Ok(response)) = sent else { return None };
    let seconds = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse::<u64>().ok()?;
    Some(Duration::from_secs(seconds))
}

/// The error for a request to `url` that got no answer: a certificate that was not trusted,
/// or any other failure to reach the server.
fn unreached(url: &reqwest::Url, error: &reqwest::Error) -> PeerError {
    #[cfg(feature = "rustls")]
    if let Some(reason) = crate::tls::untrusted_certificate(error) {
        return PeerError::UntrustedCertificate { url: url.to_string(), reason };
    }
    transport_error(format!("could not reach {url}: {error}"))
}

/// Delivers the session's outbound messages, one POST each, in order.
pub(super) async fn pump(shared: Arc<Shared>, mut outbound: mpsc::Receiver<Outbound>) {
    loop {
        let out = tokio::select! {
            biased;
            () = shared.stop.cancelled() => break,
            out = outbound.recv() => match out {
                Some(out) => out,
                None => break,
            },
        };
        shared.deliver(out).await;
    }
}

/// The id of an encoded request.
fn request_id(frame: &str) -> Option<RequestId> {
    match Message::decode(frame) {
        Ok(Message::Request(r)) => Some(r.id),
        _ => None,
    }
}

fn is_notification(frame: &str, method: &str) -> bool {
    matches!(Message::decode(frame), Ok(Message::Notification(n)) if n.method == method)
}

/// Whether a `WWW-Authenticate` header is a `Bearer` challenge with `error="insufficient_scope"`.
fn is_insufficient_scope(header: &str) -> bool {
    crate::client::oauth::challenge_error(header).as_deref() == Some("insufficient_scope")
}

impl Shared {
    /// Sends `body` with POST (with the access token, if any), unless the connection closes
    /// first.
    async fn post_once(&self, body: String, token: Option<&str>) -> Option<Result<Response, reqwest::Error>> {
        let mut request = self
            .with_session(self.http.post(self.url.clone()))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let (Some(token), Some(oauth)) = (token, &self.oauth) {
            request = oauth.authorize_request(request, token, "POST");
        }
        let era_2026 = self.era_2026.read().ok().and_then(|s| s.clone());
        if let Some(headers) = era_2026 {
            for (name, value) in headers.headers(&body) {
                request = request.header(name, value);
            }
        }
        let request = request.body(body);
        tokio::select! {
            biased;
            () = self.stop.cancelled() => None,
            r = request.send() => Some(r),
        }
    }

    /// Sends `body` with POST, unless the connection closes first. With OAuth, a 401 runs the
    /// authorization flow (or a refresh) once and a 403 `insufficient_scope` steps up (a few
    /// times at most) before the message is sent again.
    async fn post(&self, body: String) -> Option<Result<Response, PeerError>> {
        let unreachable = |e: reqwest::Error| unreached(&self.url, &e);
        let Some(oauth) = &self.oauth else {
            return self.post_once(body, None).await.map(|r| r.map_err(unreachable));
        };
        let mut reauthorized = false;
        let mut step_ups = 0;
        let mut nonce_retries = 0;
        loop {
            let token = tokio::select! {
                biased;
                () = self.stop.cancelled() => return None,
                t = oauth.bearer() => t,
            };
            let response = match self.post_once(body.clone(), token.as_deref()).await? {
                Ok(response) => response,
                Err(e) => return Some(Err(unreachable(e))),
            };
            let status = response.status();
            let challenge = response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let new_nonce = oauth.observe_nonce(response.headers());
            if status == StatusCode::UNAUTHORIZED
                && new_nonce
                && nonce_retries < 2
                && challenge.as_deref().and_then(crate::client::oauth::challenge_error).as_deref()
                    == Some("use_dpop_nonce")
            {
                // RFC 9449 section 9: the same token again, with a proof carrying the nonce.
                tracing::debug!("the server asks for a DPoP nonce; retrying with it");
                nonce_retries += 1;
                continue;
            }
            let authorized = if status == StatusCode::UNAUTHORIZED {
                if reauthorized {
                    return Some(Err(authorization_error(OAuthError::Unauthorized { status: status.as_u16() })));
                }
                reauthorized = true;
                tracing::debug!("the server asks for authorization");
                tokio::select! {
                    biased;
                    () = self.stop.cancelled() => return None,
                    r = oauth.unauthorized(token.as_deref(), challenge.as_deref()) => r,
                }
            } else if let Some(challenge) =
                challenge.filter(|c| status == StatusCode::FORBIDDEN && is_insufficient_scope(c))
            {
                if step_ups >= self.max_step_ups {
                    let scope = crate::client::oauth::challenge_scope(&challenge);
                    return Some(Err(authorization_error(OAuthError::InsufficientScope { scope })));
                }
                step_ups += 1;
                tokio::select! {
                    biased;
                    () = self.stop.cancelled() => return None,
                    r = oauth.insufficient_scope(token.as_deref(), &challenge) => r,
                }
            } else {
                return Some(Ok(response));
            };
            if let Err(e) = authorized {
                tracing::warn!(error = %e, "authorization failed");
                return Some(Err(authorization_error(e)));
            }
        }
    }

    /// The server forgot the session (404): nothing more can be done on it.
    fn session_lost(self: &Arc<Self>) {
        tracing::warn!("the server no longer knows this session; the connection is closed");
        let shared = self.clone();
        tokio::spawn(async move {
            shared.stop.cancel();
            shared.session.shutdown().await;
            shared.ended.cancel();
        });
    }

    /// POSTs one outbound message and routes what comes back. A request is sent from a task of
    /// its own: a server may hold its answer's headers until it has something to say, and
    /// everything after it (other requests, cancellations, answers to the server's own
    /// requests) must not wait for that.
    async fn deliver(self: &Arc<Self>, out: Outbound) {
        let era_2026 = self.era_2026.read().is_ok_and(|s| s.is_some());
        if out.kind == OutboundKind::Request
            && let Some(id) = request_id(&out.frame)
        {
            let shared = self.clone();
            if !era_2026 {
                self.tasks.spawn(async move { shared.send_request(id, out.frame).await });
                return;
            }
            // A 2026-07-28 request has no session to cancel it in: closing its stream does.
            let abort = CancellationToken::new();
            if let Ok(mut open) = self.open_requests.lock() {
                open.insert(id.clone(), abort.clone());
            }
            self.tasks.spawn(async move {
                tokio::select! {
                    () = abort.cancelled() => {}
                    () = shared.clone().send_request(id.clone(), out.frame) => {}
                }
                if let Ok(mut open) = shared.open_requests.lock() {
                    open.remove(&id);
                }
            });
            return;
        }
        if era_2026 && out.kind == OutboundKind::Notification {
            let cancelled = crate::client::http_headers::cancelled_request(&out.frame);
            let abort = cancelled.and_then(|id| self.open_requests.lock().ok()?.remove(&id));
            if let Some(abort) = abort {
                abort.cancel();
            }
        }
        let initialized =
            out.kind == OutboundKind::Notification && is_notification(&out.frame, "notifications/initialized");
        if out.kind == OutboundKind::Response {
            // An answer to the server's question: the request waiting for it hangs if it is
            // lost, and a server ignores an answer it already has, so one that met a gateway's
            // or an instance's passing trouble is sent again (from a task of its own: what
            // follows does not wait for it).
            let first = self.post(out.frame.clone()).await;
            if answer_delivery_failed(first.as_ref()) {
                let shared = self.clone();
                self.tasks.spawn(async move { shared.redeliver_answer(out.frame).await });
            } else {
                match first {
                    Some(Err(e)) => tracing::warn!(error = %e, "could not deliver an answer to the server"),
                    Some(Ok(r)) if !r.status().is_success() => {
                        tracing::warn!(status = %r.status(), "the server refused an answer");
                    }
                    _ => {}
                }
            }
            return;
        }
        match self.post(out.frame).await {
            None => return,
            Some(Err(e)) => tracing::warn!(error = %e, "could not deliver a message to the server"),
            Some(Ok(response)) => {
                if !response.status().is_success() {
                    tracing::warn!(status = %response.status(), "the server refused a message");
                }
            }
        }
        if initialized && self.config.standalone_stream && !self.standalone_opened.swap(true, Ordering::AcqRel) {
            self.open_standalone().await;
        }
    }

    /// Sends an answer to a server's question again, after its first delivery met a retryable
    /// failure: a few times, waiting a little longer each time (what `Retry-After` asks, up to
    /// a second).
    async fn redeliver_answer(self: Arc<Self>, frame: String) {
        let mut wait = Duration::from_millis(100);
        for attempt in 1..=ANSWER_REDELIVERIES {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            let sent = self.post(frame.clone()).await;
            if !answer_delivery_failed(sent.as_ref()) {
                tracing::debug!(attempt, "an answer to the server was delivered again");
                return;
            }
            wait = retry_after(sent.as_ref()).unwrap_or(wait * 2).min(Duration::from_secs(1));
        }
        tracing::warn!("could not deliver an answer to the server; the request that asked will not get it");
    }

    /// POSTs the request `id` and reads its answer.
    async fn send_request(self: Arc<Self>, id: RequestId, frame: String) {
        match self.post(frame).await {
            None => {}
            Some(Err(e)) => self.fail(&id, e).await,
            Some(Ok(response)) => {
                self.capture_session_id(&response);
                self.read_answer(id, response).await;
            }
        }
    }

    /// Reads the answer to the request `id`: JSON, an SSE stream, or an HTTP error.
    async fn read_answer(self: Arc<Self>, id: RequestId, mut response: Response) {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && self.has_session_id() {
            self.fail(&id, transport_error("the server no longer knows this session (HTTP 404)")).await;
            self.session_lost();
            return;
        }
        let challenge = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .filter(|c| crate::client::oauth::is_bearer_challenge(c));
        if let (Some(challenge), StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) = (challenge, status) {
            // A protected server refused with a Bearer challenge: without OAuth (or a token it
            // accepts) nothing more can be done, and the error says so in its type.
            let error = if status == StatusCode::FORBIDDEN && is_insufficient_scope(challenge) {
                OAuthError::InsufficientScope { scope: crate::client::oauth::challenge_scope(challenge) }
            } else {
                OAuthError::Unauthorized { status: status.as_u16() }
            };
            self.fail(&id, authorization_error(error)).await;
            return;
        }
        if !status.is_success() {
            let body = self.read_body(&mut response).await.unwrap_or_default();
            let error = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| serde_json::from_value::<ErrorObject>(v.get("error")?.clone()).ok())
                .map(PeerError::Rpc)
                .unwrap_or_else(|| {
                    let snippet: String = body.chars().take(200).collect();
                    transport_error(format!("HTTP {status}: {snippet}"))
                });
            self.fail(&id, error).await;
            return;
        }
        if is_event_stream(&response) {
            self.read_request_stream(id, response).await;
            return;
        }
        if status == StatusCode::ACCEPTED {
            tracing::debug!(%id, "the server accepted the request without answering it here");
            return;
        }
        match self.read_body(&mut response).await {
            Some(body) if !body.trim().is_empty() => {
                if !self.handle_incoming(&body, Some(&id)).await {
                    self.fail(&id, transport_error("the server's JSON answer is not the response to the request"))
                        .await;
                }
            }
            _ => self.fail(&id, transport_error("the server answered the request with an empty body")).await,
        }
    }

    /// A whole (non-SSE) body, if it fits within the size limit and is UTF-8.
    async fn read_body(&self, response: &mut Response) -> Option<String> {
        let mut body = Vec::new();
        loop {
            let chunk = tokio::select! {
                biased;
                () = self.stop.cancelled() => return None,
                c = response.chunk() => c,
            };
            match chunk {
                Ok(Some(bytes)) => {
                    if body.len() + bytes.len() > self.config.max_message_size {
                        tracing::warn!(limit = self.config.max_message_size, "the server's answer is too large");
                        return None;
                    }
                    body.extend_from_slice(&bytes);
                }
                Ok(None) => return String::from_utf8(body).ok(),
                Err(e) => {
                    tracing::debug!(error = %e, "reading the server's answer failed");
                    return None;
                }
            }
        }
    }
}
