//! `completion/complete`: suggestions for prompt arguments and resource-template variables,
//! from completers the application registers.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use super::{Context, ServerBuilder, ServerInner};
use crate::engine::BoxFuture;
use crate::protocol::{CompleteParams, CompleteResult, Completion, CompletionReference, ErrorObject};

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
    /// use mcp_core::server::{Completer, CompletionCall};
    /// let languages = Completer::new(|call: CompletionCall| async move {
    ///     let all = ["python", "rust", "typescript"];
    ///     Ok::<_, mcp_core::ErrorObject>(all.iter().filter(|l| l.starts_with(&call.value)).map(|l| l.to_string()).collect::<Vec<_>>())
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

impl ServerBuilder {
    /// Suggests values for `argument` of the prompt `prompt` (registered on this builder) in
    /// `completion/complete`. Declares the `completions` capability.
    pub fn complete_prompt_argument(
        mut self,
        prompt: impl Into<String>,
        argument: impl Into<String>,
        completer: Completer,
    ) -> Self {
        self.surface.prompt_completers.push((prompt.into(), argument.into(), completer));
        self
    }

    /// Suggests values for `variable` of the resource template `uri_template` (registered on
    /// this builder) in `completion/complete`. Declares the `completions` capability.
    pub fn complete_template_variable(
        mut self,
        uri_template: impl Into<String>,
        variable: impl Into<String>,
        completer: Completer,
    ) -> Self {
        self.surface.template_completers.push((uri_template.into(), variable.into(), completer));
        self
    }
}

/// Answers `completion/complete`.
pub(crate) fn complete(
    server: &Arc<ServerInner>,
    ctx: impl FnOnce() -> Context,
    params: CompleteParams,
) -> Result<BoxFuture<'static, Result<CompleteResult, ErrorObject>>, ErrorObject> {
    let name = params.argument.name;
    let completer = match &params.reference {
        CompletionReference::Prompt { name: prompt, .. } => {
            let def = server
                .surface
                .prompts
                .get(prompt)
                .ok_or_else(|| ErrorObject::invalid_params(format!("unknown prompt: `{prompt}`")))?;
            if !def.has_argument(&name) {
                return Err(ErrorObject::invalid_params(format!("prompt `{prompt}` has no argument `{name}`")));
            }
            def.completers.get(&name).cloned()
        }
        CompletionReference::Resource { uri } => {
            let entry = server
                .surface
                .templates
                .get(uri)
                .ok_or_else(|| ErrorObject::invalid_params(format!("unknown resource template: `{uri}`")))?;
            if !entry.parsed.variables().any(|v| v == name) {
                return Err(ErrorObject::invalid_params(format!("resource template `{uri}` has no variable `{name}`")));
            }
            entry.def.completers.get(&name).cloned()
        }
    };
    let Some(completer) = completer else {
        return Ok(Box::pin(std::future::ready(Ok(CompleteResult::default()))));
    };
    let call = CompletionCall {
        ctx: ctx(),
        argument: name,
        value: params.argument.value,
        context: params.context.and_then(|c| c.arguments).unwrap_or_default(),
    };
    let fut = completer.complete(call);
    Ok(Box::pin(async move { Ok(CompleteResult { completion: fut.await?.limited() }) }))
}
