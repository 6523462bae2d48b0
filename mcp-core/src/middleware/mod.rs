//! Middleware: code that wraps every request a server handles, on every transport (stdio
//! included) and in both protocol eras, before and after its handler.
//!
//! A [`Middleware`] sees the request (its method, what it is about, its `_meta`, the caller's
//! verified identity and, over HTTP, the request's headers and the client's address) and
//! either answers on its own (a refusal, a rate limit) or passes it on with [`Next::run`],
//! seeing the answer on its way back. [`from_fn`] makes one from an async closure, as axum's
//! `middleware::from_fn` does; [`RateLimit`] is one shipped here.
//!
//! ```
//! use typed_mcp::middleware::{self, Incoming, Next};
//! use typed_mcp::prelude::*;
//!
//! /// Echoes its text.
//! #[tool]
//! fn echo(text: String) -> String {
//!     text
//! }
//!
//! let audit = middleware::from_fn(|request: Incoming, next: Next| async move {
//!     let started = std::time::Instant::now();
//!     let answer = next.run().await;
//!     eprintln!(
//!         "{} {} by {} -> {} in {:?}",
//!         request.method(),
//!         request.target().unwrap_or("-"),
//!         request.principal().unwrap_or("anonymous"),
//!         if answer.is_ok() { "ok" } else { "error" },
//!         started.elapsed()
//!     );
//!     answer
//! });
//! let server = Server::builder("audited", "1.0.0").tools(tools![echo]).middleware(audit).build().unwrap();
//! # let _ = server;
//! ```
//!
//! Middleware runs in the order it was added, the first added outermost. It wraps each
//! request the router dispatches: `initialize` and requests refused before dispatch (an
//! unknown method, a malformed 2026-era `_meta`) are answered without it. In the 2026 era a
//! multi-round call is one request per round, and middleware sees each round.

mod rate_limit;

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;

pub use rate_limit::{KeyFn, RATE_LIMITED, RateLimit, RateLimitKey};

use crate::auth::AuthInfo;
use crate::engine::{Handling, ResultText};
use crate::handler::Meta;
use crate::protocol::methods::{Era, Method, MethodInfo};
use crate::protocol::{ErrorObject, RequestId};

/// How a request ends: its result (as JSON text) or a JSON-RPC error.
pub type Answer = Result<ResultText, ErrorObject>;

/// Wraps the requests a server handles. See the [module documentation](self).
pub trait Middleware: Send + Sync + 'static {
    /// Handles `request`: answer it, or pass it on with `next.run()`.
    fn handle(&self, request: Incoming, next: Next) -> BoxFuture<'static, Answer>;
}

/// A middleware made of an async function (see [`from_fn`]).
pub struct FromFn<F>(F);

impl<F> std::fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FromFn")
    }
}

/// A middleware from an async function of the request and the rest of the chain.
pub fn from_fn<F, Fut>(f: F) -> FromFn<F>
where
    F: Fn(Incoming, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    FromFn(f)
}

impl<F, Fut> Middleware for FromFn<F>
where
    F: Fn(Incoming, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    fn handle(&self, request: Incoming, next: Next) -> BoxFuture<'static, Answer> {
        Box::pin((self.0)(request, next))
    }
}

/// A request on its way to its handler, as middleware sees it. Cheap to clone.
#[derive(Clone)]
pub struct Incoming {
    inner: Arc<IncomingInner>,
}

pub(crate) struct IncomingInner {
    pub(crate) id: RequestId,
    pub(crate) method: &'static MethodInfo,
    pub(crate) era: Era,
    pub(crate) target: Option<String>,
    pub(crate) params: Option<Box<RawValue>>,
    pub(crate) meta: Meta,
    pub(crate) principal: Option<String>,
    pub(crate) auth: Option<Arc<AuthInfo>>,
    pub(crate) session: Option<u64>,
    #[cfg(feature = "http")]
    pub(crate) http: Option<Arc<crate::engine::HttpRequestParts>>,
}

impl std::fmt::Debug for Incoming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Incoming")
            .field("id", &self.inner.id)
            .field("method", &self.inner.method.name)
            .field("target", &self.inner.target)
            .field("principal", &self.inner.principal)
            .finish_non_exhaustive()
    }
}

impl Incoming {
    pub(crate) fn new(inner: IncomingInner) -> Self {
        Incoming { inner: Arc::new(inner) }
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The method, as on the wire (`tools/call`).
    pub fn method(&self) -> &'static str {
        self.inner.method.name
    }

    /// The method, as a value to match on.
    pub fn method_id(&self) -> Method {
        self.inner.method.id
    }

    /// The method's row of the method table (its eras, whether it may ask for input, …).
    pub fn method_info(&self) -> &'static MethodInfo {
        self.inner.method
    }

    /// The protocol era of the request.
    pub fn era(&self) -> Era {
        self.inner.era
    }

    /// What the request is about: the tool or prompt name, the resource URI, the task id.
    pub fn target(&self) -> Option<&str> {
        self.inner.target.as_deref()
    }

    /// The request's parameters, as the client sent them.
    pub fn params(&self) -> Option<&RawValue> {
        self.inner.params.as_deref()
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> &Meta {
        &self.inner.meta
    }

    /// The authenticated user, where the transport knows one.
    pub fn principal(&self) -> Option<&str> {
        self.inner.principal.as_deref()
    }

    /// The verified identity of the caller, on a server with OAuth authorization.
    pub fn auth(&self) -> Option<&Arc<AuthInfo>> {
        self.inner.auth.as_ref()
    }

    /// A number identifying the 2025-era session the request came on, the same for every
    /// request of the session (`None` in the 2026 era, which has no sessions).
    pub fn session(&self) -> Option<u64> {
        self.inner.session
    }

    /// Over HTTP: the request's headers (`Authorization` and `Cookie` left out), extensions and
    /// the client's address.
    #[cfg(feature = "http")]
    pub fn http(&self) -> Option<&crate::engine::HttpRequestParts> {
        self.inner.http.as_deref()
    }
}

/// The rest of the chain: the middleware after this one, then the handler.
pub struct Next {
    chain: Arc<[Arc<dyn Middleware>]>,
    index: usize,
    request: Incoming,
    handler: Box<dyn FnOnce() -> Handling + Send>,
}

impl std::fmt::Debug for Next {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Next").field("remaining", &(self.chain.len() - self.index)).finish_non_exhaustive()
    }
}

impl Next {
    /// Passes the request on, and resolves to its answer.
    pub fn run(self) -> BoxFuture<'static, Answer> {
        match self.chain.get(self.index).cloned() {
            Some(middleware) => {
                let request = self.request.clone();
                middleware.handle(request, Next { index: self.index + 1, ..self })
            }
            None => (self.handler)().into_future(),
        }
    }
}

/// Runs `chain` around `handler`.
pub(crate) fn wrap(
    chain: &Arc<[Arc<dyn Middleware>]>,
    request: Incoming,
    handler: impl FnOnce() -> Handling + Send + 'static,
) -> Handling {
    let next = Next { chain: chain.clone(), index: 0, request, handler: Box::new(handler) };
    Handling::Future(next.run())
}
