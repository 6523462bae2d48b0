//! Answering the server's other requests: `sampling/createMessage` ([`SamplingHandler`]) and
//! `roots/list` ([`RootsHandler`]).

use std::future::Future;

use crate::engine::BoxFuture;
use crate::protocol::{CreateMessageParams, CreateMessageResult, ErrorObject, JsonObject, Root, SamplingCapability};

/// What a sampling capability supports beyond plain messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SamplingSupport {
    /// Tool use in sampling (`sampling.tools`): requests may carry `tools` and `toolChoice`.
    pub tools: bool,
    /// Context inclusion (`sampling.context`): `includeContext` other than `none`.
    pub context: bool,
}

impl SamplingSupport {
    /// The declared capability.
    pub fn capability(self) -> SamplingCapability {
        SamplingCapability { context: self.context.then(JsonObject::new), tools: self.tools.then(JsonObject::new) }
    }
}

/// Answers `sampling/createMessage`: runs the conversation through the application's model
/// (with the user's approval, as MCP recommends).
///
/// A request that uses tools when [`support`](Self::support) does not declare them is answered
/// with -32602 without reaching the handler.
pub trait SamplingHandler: Send + Sync + 'static {
    /// What to declare besides plain sampling (nothing by default).
    fn support(&self) -> SamplingSupport {
        SamplingSupport::default()
    }

    /// Produces the model's message, or an error to answer with (for example when the user
    /// refuses).
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorObject>> + Send;
}

/// A [`SamplingHandler`] made of a closure (see [`sampling_fn`]).
pub struct SamplingFn<F> {
    support: SamplingSupport,
    answer: F,
}

impl<F> std::fmt::Debug for SamplingFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplingFn").field("support", &self.support).finish_non_exhaustive()
    }
}

/// A sampling handler that answers with `answer(params).await`, declaring plain sampling.
pub fn sampling_fn<F, Fut>(answer: F) -> SamplingFn<F>
where
    F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
{
    SamplingFn { support: SamplingSupport::default(), answer }
}

impl<F> SamplingFn<F> {
    /// Declares tool use and/or context inclusion too.
    pub fn with_support(mut self, support: SamplingSupport) -> Self {
        self.support = support;
        self
    }
}

impl<F, Fut> SamplingHandler for SamplingFn<F>
where
    F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
{
    fn support(&self) -> SamplingSupport {
        self.support
    }

    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> impl Future<Output = Result<CreateMessageResult, ErrorObject>> + Send {
        (self.answer)(params)
    }
}

/// Answers `roots/list`: the directories (or other roots) the server may work in.
///
/// A fixed `Vec<Root>` is a handler. When the roots change, call
/// [`Client::notify_roots_list_changed`](super::Client::notify_roots_list_changed) (the client
/// declares `roots.listChanged` when [`list_changed`](Self::list_changed) says so).
pub trait RootsHandler: Send + Sync + 'static {
    /// Whether to declare `roots.listChanged` (true by default).
    fn list_changed(&self) -> bool {
        true
    }

    /// The current roots.
    fn list_roots(&self) -> impl Future<Output = Result<Vec<Root>, ErrorObject>> + Send;
}

impl RootsHandler for Vec<Root> {
    fn list_changed(&self) -> bool {
        false
    }

    fn list_roots(&self) -> impl Future<Output = Result<Vec<Root>, ErrorObject>> + Send {
        std::future::ready(Ok(self.clone()))
    }
}

/// [`SamplingHandler`] behind a pointer.
pub(crate) trait DynSamplingHandler: Send + Sync + 'static {
    fn support(&self) -> SamplingSupport;
    fn create_message(&self, params: CreateMessageParams) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>>;
}

impl<H: SamplingHandler> DynSamplingHandler for H {
    fn support(&self) -> SamplingSupport {
        SamplingHandler::support(self)
    }
    fn create_message(&self, params: CreateMessageParams) -> BoxFuture<'_, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(SamplingHandler::create_message(self, params))
    }
}

/// [`RootsHandler`] behind a pointer.
pub(crate) trait DynRootsHandler: Send + Sync + 'static {
    fn list_changed(&self) -> bool;
    fn list_roots(&self) -> BoxFuture<'_, Result<Vec<Root>, ErrorObject>>;
}

impl<H: RootsHandler> DynRootsHandler for H {
    fn list_changed(&self) -> bool {
        RootsHandler::list_changed(self)
    }
    fn list_roots(&self) -> BoxFuture<'_, Result<Vec<Root>, ErrorObject>> {
        Box::pin(RootsHandler::list_roots(self))
    }
}
