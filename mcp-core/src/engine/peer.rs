//! Sending requests and notifications to the other side of a session, and awaiting answers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{Outbound, OutboundKind};
use crate::protocol::jsonrpc::{encode_notification, encode_request};
use crate::protocol::{CancelledParams, ErrorObject, RequestId};

/// Why a request to the peer produced no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PeerError {
    /// No answer arrived within the timeout.
    #[error("the peer did not answer `{method}` within {timeout:?}")]
    Timeout {
        /// The method of the request.
        method: String,
        /// The timeout that expired.
        timeout: Duration,
    },
    /// The wait was cancelled (typically: the request being handled was cancelled).
    #[error("the request was cancelled")]
    Cancelled,
    /// The session closed before an answer arrived.
    #[error("the connection closed")]
    Closed,
    /// The peer answered with a JSON-RPC error.
    #[error("the peer answered with error {}: {}", .0.code, .0.message)]
    Rpc(ErrorObject),
    /// The parameters could not be encoded, or the result could not be decoded.
    #[error("{0}")]
    Codec(String),
    /// The transport could not deliver the request or its answer (the peer was not reached,
    /// or broke the transport's rules); the peer did not answer.
    #[error("transport failure: {0}")]
    Transport(String),
    /// The server requires authorization and the client could not obtain it (or the server
    /// refused what it obtained).
    #[error("authorization failed: {0}")]
    Authorization(Box<crate::protocol::OAuthError>),
    /// The transport reached the peer over TLS, but the peer's certificate was not trusted
    /// (not issued by a trusted authority, not valid for the host name, expired…).
    #[error("the TLS certificate of {url} was not trusted: {reason}")]
    UntrustedCertificate {
        /// Where the request went.
        url: String,
        /// What is wrong with the certificate.
        reason: String,
    },
}

type Slot = oneshot::Sender<Result<Box<RawValue>, PeerError>>;

struct Pending {
    closed: bool,
    slots: HashMap<i64, Slot>,
}

pub(crate) struct PeerShared {
    out: mpsc::Sender<Outbound>,
    pending: Mutex<Pending>,
    next_id: AtomicI64,
    /// When set, request ids are strings: this prefix, then the request's number.
    prefix: OnceLock<Arc<str>>,
}

/// Options for one request to the peer.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// How long to wait for the answer; `None` waits until cancelled or closed.
    pub timeout: Option<Duration>,
    /// Abandons the wait when cancelled.
    pub cancel: Option<CancellationToken>,
}

/// A handle for talking to the other side of a session. Cheap to clone.
///
/// A peer obtained from a request's context is *related* to that request: transports that can
/// (Streamable HTTP) deliver what it sends on that request's own response stream.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<PeerShared>,
    related: Option<RequestId>,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer").field("related", &self.related).field("pending", &self.pending_count()).finish()
    }
}

/// Removes a pending slot when the wait ends, however it ends (including being dropped). If the
/// request went out and is still unanswered while the session is open, the peer is told with
/// `notifications/cancelled`, so it can stop working on an answer nobody awaits.
struct SlotGuard<'a> {
    peer: &'a Peer,
    id: i64,
    sent: AtomicBool,
    reason: &'static str,
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let abandoned = match self.peer.shared.pending.lock() {
            Ok(mut p) => p.slots.remove(&self.id).is_some() && !p.closed,
            Err(_) => false,
        };
        if abandoned && self.sent.load(Ordering::Relaxed) {
            self.peer.notify_cancelled(self.peer.id_of(self.id), self.reason);
        }
    }
}

impl Peer {
    pub(crate) fn new(out: mpsc::Sender<Outbound>) -> Self {
        Peer {
            shared: Arc::new(PeerShared {
                out,
                pending: Mutex::new(Pending { closed: false, slots: HashMap::new() }),
                next_id: AtomicI64::new(0),
                prefix: OnceLock::new(),
            }),
            related: None,
        }
    }

    /// Numbers the requests sent from now on from `first` (a session taken over from another
    /// process must not reuse the ids of requests the client may still be answering).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn number_requests_from(&self, first: i64) {
        self.shared.next_id.fetch_max(first, Ordering::Relaxed);
    }

    /// Names the requests sent from now on `"<prefix><n>"` (string ids) instead of `n`: the
    /// prefix says who asked, to whoever must route the answer (a replica names its instance).
    /// Set once; later calls change nothing.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn number_requests_as(&self, prefix: &str) {
        let _ = self.shared.prefix.set(prefix.into());
    }

    /// The id of the request numbered `n`.
    fn id_of(&self, n: i64) -> RequestId {
        match self.shared.prefix.get() {
            Some(prefix) => RequestId::String(format!("{prefix}{n}").into()),
            None => RequestId::Number(n),
        }
    }

    /// The number of the request `id`, if it is one of this peer's ids.
    fn number_of(&self, id: &RequestId) -> Option<i64> {
        match (id, self.shared.prefix.get()) {
            (RequestId::Number(n), None) => Some(*n),
            (RequestId::String(s), Some(prefix)) => {
                let digits = s.strip_prefix(&**prefix)?;
                // Only the form this peer writes: no sign, no leading zero, no spaces.
                let canonical = !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && (digits == "0" || !digits.starts_with('0'));
                if canonical { digits.parse().ok() } else { None }
            }
            _ => None,
        }
    }

    /// The same peer, with what it sends tied to the request `id`.
    pub(crate) fn related_to(&self, id: RequestId) -> Self {
        Peer { shared: self.shared.clone(), related: Some(id) }
    }

    /// The same peer, tied to no request (what it sends goes to the session at large).
    pub fn unrelated(&self) -> Self {
        Peer { shared: self.shared.clone(), related: None }
    }

    /// The request this handle is tied to, if any.
    pub fn related_request(&self) -> Option<&RequestId> {
        self.related.as_ref()
    }

    /// How many requests to the peer await an answer.
    pub fn pending_count(&self) -> usize {
        self.shared.pending.lock().map(|p| p.slots.len()).unwrap_or(0)
    }

    /// Whether the session has closed.
    pub fn is_closed(&self) -> bool {
        self.shared.pending.lock().map(|p| p.closed).unwrap_or(true)
    }

    /// Sends a request and awaits the raw result.
    pub async fn request_raw<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, PeerError> {
        let (n, frame) = self.encode_request(method, params)?;
        self.exchange(method, n, frame, options).await
    }

    /// Like [`request`](Self::request), but takes the parameters by value and drops them once
    /// encoded: a request may wait minutes for a person (an elicitation), and parameters kept
    /// as a `Value` tree for that long cost several times their text.
    pub(crate) async fn request_owned<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        options: RequestOptions,
    ) -> Result<R, PeerError> {
        let (n, frame) = self.encode_request(method, &params)?;
        drop(params);
        let raw = self.exchange(method, n, frame, options).await?;
        serde_json::from_str(raw.get()).map_err(|e| PeerError::Codec(format!("invalid `{method}` result: {e}")))
    }

    /// A new id and the request's frame.
    fn encode_request<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Result<(i64, String), PeerError> {
        let n = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = encode_request(&self.id_of(n), method, params).map_err(|e| PeerError::Codec(e.to_string()))?;
        Ok((n, frame))
    }

    /// Sends the request `frame` with id `n` and awaits the answer.
    async fn exchange(
        &self,
        method: &str,
        n: i64,
        frame: String,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, PeerError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self.shared.pending.lock().map_err(|_| PeerError::Closed)?;
            if p.closed {
                return Err(PeerError::Closed);
            }
            p.slots.insert(n, tx);
        }
        let mut guard = SlotGuard {
            peer: self,
            id: n,
            sent: AtomicBool::new(false),
            reason: "the request that needed this answer ended",
        };

        // The timeout and the token bound the whole exchange, including waiting for room in a
        // full outbound queue (a peer that stopped reading).
        let exchange = async {
            let out = Outbound { frame, related: self.related.clone(), kind: OutboundKind::Request };
            // Waiting for room is rare; its future, boxed, is not part of every pending request.
            if let Err(out) = self.try_send_outbound_or_closed(out)? {
                Box::pin(self.send_outbound(out)).await?;
            }
            guard.sent.store(true, Ordering::Relaxed);
            rx.await.map_err(|_| PeerError::Closed)?
        };
        let cancel = options.cancel.unwrap_or_default();
        let timeout = async {
            match options.timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            r = exchange => r,
            () = cancel.cancelled() => Err(PeerError::Cancelled),
            () = timeout => {
                Err(PeerError::Timeout { method: method.to_owned(), timeout: options.timeout.unwrap_or_default() })
            }
        };
        // Whichever way the wait ended, dropping `guard` frees the slot and withdraws an unanswered request.
        match outcome {
            Err(PeerError::Cancelled) => guard.reason = "the request that needed this answer was cancelled",
            Err(PeerError::Timeout { .. }) => guard.reason = "timed out",
            _ => {}
        }
        outcome
    }

    /// Sends a request and decodes the result as `R`.
    pub async fn request<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        options: RequestOptions,
    ) -> Result<R, PeerError> {
        let raw = self.request_raw(method, params, options).await?;
        serde_json::from_str(raw.get()).map_err(|e| PeerError::Codec(format!("invalid `{method}` result: {e}")))
    }

    /// Sends a notification.
    pub async fn notify<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Result<(), PeerError> {
        let frame = encode_notification(method, params).map_err(|e| PeerError::Codec(e.to_string()))?;
        self.send(frame, OutboundKind::Notification).await
    }

    fn notify_cancelled(&self, id: RequestId, reason: &str) {
        let params = CancelledParams { request_id: Some(id), reason: Some(reason.to_owned()) };
        if let Ok(frame) = encode_notification(crate::protocol::Method::Cancelled.name(), &params) {
            // Best effort: a full outbound queue must not block the caller that is giving up.
            let _ = self.shared.out.try_send(Outbound {
                frame,
                related: self.related.clone(),
                kind: OutboundKind::Notification,
            });
        }
    }

    pub(crate) async fn send(&self, frame: String, kind: OutboundKind) -> Result<(), PeerError> {
        self.send_outbound(Outbound { frame, related: self.related.clone(), kind }).await
    }

    pub(crate) async fn send_outbound(&self, out: Outbound) -> Result<(), PeerError> {
        self.shared.out.send(out).await.map_err(|_| PeerError::Closed)
    }

    /// Whether every message queued so far was taken off the queue by the transport.
    pub(crate) fn queue_is_empty(&self) -> bool {
        self.shared.out.capacity() == self.shared.out.max_capacity()
    }

    /// Queues a message if there is room at once; gives it back when the queue is full. A closed
    /// queue drops it (nobody would read it).
    pub(crate) fn try_send_outbound(&self, out: Outbound) -> Result<(), Outbound> {
        match self.shared.out.try_send(out) {
            Err(mpsc::error::TrySendError::Full(out)) => Err(out),
            _ => Ok(()),
        }
    }

    /// Queues a message if there is room at once (`Ok(Ok(()))`), gives it back when the queue is
    /// full (`Ok(Err(out))`); fails when the session has closed.
    pub(crate) fn try_send_outbound_or_closed(&self, out: Outbound) -> Result<Result<(), Outbound>, PeerError> {
        match self.shared.out.try_send(out) {
            Ok(()) => Ok(Ok(())),
            Err(mpsc::error::TrySendError::Full(out)) => Ok(Err(out)),
            Err(mpsc::error::TrySendError::Closed(_)) => Err(PeerError::Closed),
        }
    }

    /// Routes a response from the peer to whoever awaits it. Unknown ids are ignored.
    pub(crate) fn resolve(&self, id: &RequestId, outcome: Result<Box<RawValue>, ErrorObject>) -> bool {
        self.settle(id, outcome.map_err(PeerError::Rpc))
    }

    /// Ends the wait for the answer to `id` with `error`, as the transport found it could not
    /// come. Unknown ids are ignored.
    #[cfg_attr(not(feature = "http-client"), allow(dead_code))]
    pub(crate) fn fail(&self, id: &RequestId, error: PeerError) -> bool {
        self.settle(id, Err(error))
    }

    fn settle(&self, id: &RequestId, outcome: Result<Box<RawValue>, PeerError>) -> bool {
        let Some(n) = self.number_of(id) else {
            return false;
        };
        let slot = self.shared.pending.lock().ok().and_then(|mut p| p.slots.remove(&n));
        match slot {
            Some(tx) => tx.send(outcome).is_ok(),
            None => false,
        }
    }

    /// Fails every pending wait with [`PeerError::Closed`] and refuses new requests.
    pub(crate) fn close(&self) {
        if let Ok(mut p) = self.shared.pending.lock() {
            p.closed = true;
            p.slots.clear();
        }
    }
}
