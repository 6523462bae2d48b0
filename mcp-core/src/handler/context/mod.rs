//! The request context handed to tool handlers: every method of [`Context`] is written in this
//! folder, grouped by topic.
//!
//! - the request (this file): its id, `_meta`, HTTP parts, cancellation, the peer;
//! - the session and the client, and multi-round trips (`session.rs`);
//! - elicitation (`elicit.rs`) and URL elicitation (`url.rs`);
//! - sampling and roots, logging and progress (`client.rs`);
//! - the server handle: [`Context::server_handle`] returns the server's own type, so it is
//!   written beside that type (`server/live.rs`, the table of live servers it is read from by
//!   number), which this layer does not name.
//!
//! A method that reaches the server or the session the request came on is a short call into
//! the context's [`ServerSide`]: a value the server makes for each context, holding the
//! server and the session (or the 2026-era request, or the task run) concretely, each of its
//! methods a call into the server module that holds the logic. This layer sits below the
//! server and names nothing of it; nothing is read back by its type.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::request::Meta;
use crate::engine::{Cancellation, Peer, PeerError, RequestScope};
use crate::protocol::{ProgressParams, ProgressToken, RequestId};

mod client;
mod elicit;
mod session;
mod side;
mod url;

pub use client::ClientRequestError;
pub use elicit::ElicitRequest;
pub(crate) use elicit::MODE_REVISION;
pub use session::SessionKey;
pub(crate) use side::ServerSide;
pub use url::{CompleteError, Completed, UrlElicitRequest};

/// Everything a handler may use about the request it serves and the session it came on:
/// cancellation, progress, the client's identity and capabilities, shared state, and the peer
/// for server-to-client requests. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    request_id: RequestId,
    peer: Peer,
    cancel: Cancellation,
    progress_token: Option<ProgressToken>,
    last_progress: Mutex<Option<f64>>,
    meta: Meta,
    #[cfg(feature = "http")]
    http: Option<Arc<crate::engine::HttpRequestParts>>,
    side: Arc<dyn ServerSide>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("request_id", &self.inner.request_id)
            .field("progress_token", &self.inner.progress_token)
            .finish_non_exhaustive()
    }
}

impl Context {
    pub(crate) fn new(
        scope: RequestScope,
        progress_token: Option<ProgressToken>,
        meta: Meta,
        side: Arc<dyn ServerSide>,
    ) -> Self {
        Context {
            inner: Arc::new(ContextInner {
                request_id: scope.id,
                peer: scope.peer,
                cancel: scope.cancel,
                progress_token,
                last_progress: Mutex::new(None),
                meta,
                #[cfg(feature = "http")]
                http: scope.http,
                side,
            }),
        }
    }

    /// What this context reaches of the server and the session (the server's implementation).
    pub(crate) fn side(&self) -> &dyn ServerSide {
        &*self.inner.side
    }

    // The request.

    /// The request's `_meta`, as the client sent it (empty when it sent none).
    pub fn meta(&self) -> &Meta {
        &self.inner.meta
    }

    /// Over HTTP: the request's headers, extensions and the client's address (`None` on other
    /// transports). The `Authorization` and `Cookie` headers are left out.
    #[cfg(feature = "http")]
    pub fn http(&self) -> Option<&crate::engine::HttpRequestParts> {
        self.inner.http.as_deref()
    }

    /// Over HTTP: the request's headers (`Authorization` and `Cookie` left out); `None` on
    /// other transports.
    #[cfg(feature = "http")]
    pub fn headers(&self) -> Option<&axum::http::HeaderMap> {
        self.http().map(|h| &h.headers)
    }

    /// Over HTTP: the value of type `T` a layer in front of the endpoint put in the request's
    /// extensions (an `axum::Extension` layer, a `tower` middleware of the application).
    #[cfg(feature = "http")]
    pub fn extension<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.http().and_then(|h| h.extensions.get::<T>().cloned())
    }

    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The peer (the client), for requests and notifications tied to this request.
    pub fn peer(&self) -> &Peer {
        &self.inner.peer
    }

    /// A token cancelled when the client cancels this request or the session closes.
    pub fn cancellation(&self) -> &CancellationToken {
        self.inner.cancel.token()
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the request is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    // What the server's progress reports use.

    /// Whether the request carries a `progressToken`. [`Context::wants_progress`] adds tasks
    /// (in the server).
    pub(crate) fn has_progress_token(&self) -> bool {
        self.inner.progress_token.is_some()
    }

    /// Sends `notifications/progress` for the request's `progressToken` (nothing without one);
    /// a value not above the previous one is not sent (MCP requires every notification to
    /// increase the progress). [`Context::progress`] comes here (through the
    /// server) outside tasks.
    pub(crate) async fn notify_progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), PeerError> {
        let Some(token) = self.inner.progress_token.clone() else {
            return Ok(());
        };
        {
            let mut last = self.inner.last_progress.lock().map_err(|_| PeerError::Closed)?;
            if last.is_some_and(|l| progress <= l) || !progress.is_finite() {
                tracing::warn!(progress, previous = ?*last, "progress must increase; notification not sent");
                return Ok(());
            }
            *last = Some(progress);
        }
        let params = ProgressParams { progress_token: token, progress, total, message: message.map(str::to_owned) };
        self.inner.peer.notify("notifications/progress", &params).await
    }
}
