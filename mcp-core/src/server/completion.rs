//! `completion/complete`: suggestions for prompt arguments and resource-template variables,
//! from completers the application registers.

use std::sync::Arc;

use super::{ServerBuilder, ServerInner};
use crate::engine::BoxFuture;
use crate::handler::{Completer, CompletionCall, Context};
use crate::protocol::{CompleteParams, CompleteResult, CompletionReference, ErrorObject};

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
