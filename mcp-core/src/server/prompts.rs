//! `prompts/get`, and registering prompts on the builder.

use std::sync::Arc;

use super::context_side::context;
use super::handling::{params, to_raw};
use super::state::SessionState;
use super::{ServerBuilder, ServerInner};
use crate::engine::{Handling, RequestScope};
use crate::prompt::{PromptCall, PromptDef};
use crate::protocol::{ErrorObject, GetPromptParams, Request};

impl ServerBuilder {
    /// Registers a prompt. A name registered twice makes [`build`](Self::build) fail.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.surface.prompts.push(prompt);
        self
    }

    /// Registers several prompts, e.g. `prompts![review, summarize]`.
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = PromptDef>) -> Self {
        self.surface.prompts.extend(prompts);
        self
    }
}

/// Answers `prompts/get`: an unknown prompt or a missing required argument is -32602.
pub(crate) fn get(
    server: &Arc<ServerInner>,
    session: &Arc<SessionState>,
    request: Request,
    scope: RequestScope,
) -> Handling {
    let prepared = (|| {
        let p: GetPromptParams = params(&request)?;
        let def = server
            .surface
            .prompts
            .get(&p.name)
            .ok_or_else(|| ErrorObject::invalid_params(format!("unknown prompt: `{}`", p.name)))?;
        let arguments = p.arguments.unwrap_or_default();
        if let Some(missing) =
            def.prompt.arguments.iter().flatten().find(|a| a.is_required() && !arguments.contains_key(&a.name))
        {
            return Err(ErrorObject::invalid_params(format!(
                "missing required argument `{}` of prompt `{}`",
                missing.name, p.name
            )));
        }
        Ok((def, arguments))
    })();
    let (def, arguments) = match prepared {
        Ok(x) => x,
        Err(e) => return Handling::Ready(Err(e)),
    };
    let ctx = context(server, session, &request, scope);
    let fut = def.get(PromptCall { ctx, arguments });
    let description = def.prompt.description.clone();
    Handling::future(async move {
        let mut result = fut.await?;
        if result.description.is_none() {
            result.description = description;
        }
        to_raw(&result)
    })
}
