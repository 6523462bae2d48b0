//! Completers: what suggests values for a prompt argument or a resource-template variable in
//! `completion/complete`.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use super::Context;
use crate::engine::BoxFuture;
use crate::protocol::{Completion, ErrorObject};

/// One `completion/complete` as a completer sees it.
#[derive(Debug)]
pub struct CompletionCall {
    /// The request context.
    pub ctx: Context,
    /// The argument (or template variable) being completed.
    pub argument: String,
    /// What the user has typed so far.
    pub value: String,
    /// Values already chosen for the other arguments or variables.
    pub context: HashMap<String, String>,
}

type CompleteFn = dyn Fn(CompletionCall) -> BoxFuture<'static, Result<Completion, ErrorObject>> + Send + Sync;

/// Suggests values for one prompt argument or template variable. Cheap to clone.
///
/// Whatever it returns is cut to the 100 values MCP allows, with `total` and `hasMore` set.
#[derive(Clone)]
pub struct Completer(Arc<CompleteFn>);

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Completer")
    }
}

impl Completer {
    /// A completer run by `f`, which returns `Vec<String>` or a [`Completion`].
    ///
    /// ```
    /// use typed_mcp::server::{Completer, CompletionCall};
    /// let languages = Completer::new(|call: CompletionCall| async move {
    ///     let all = ["python", "rust", "typescript"];
    ///     Ok::<_, typed_mcp::ErrorObject>(all.iter().filter(|l| l.starts_with(&call.value)).map(|l| l.to_string()).collect::<Vec<_>>())
    /// });
    /// ```
    pub fn new<F, Fut, C>(f: F) -> Self
    where
        F: Fn(CompletionCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<C, ErrorObject>> + Send + 'static,
        C: Into<Completion>,
    {
        Completer(Arc::new(move |call| {
            let fut = f(call);
            Box::pin(async move { fut.await.map(|c| c.into().limited()) })
        }))
    }

    /// A completer offering the values of a fixed list that start with what the user typed
    /// (ignoring case).
    pub fn values<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        let values: Arc<[String]> = values.into_iter().map(Into::into).collect();
        Completer::new(move |call: CompletionCall| {
            let values = values.clone();
            async move {
                let typed = call.value.to_lowercase();
                Ok(values.iter().filter(|v| v.to_lowercase().starts_with(&typed)).cloned().collect::<Vec<_>>())
            }
        })
    }

    /// Runs the completer.
    pub fn complete(&self, call: CompletionCall) -> BoxFuture<'static, Result<Completion, ErrorObject>> {
        (self.0)(call)
    }
}
