//! `Context`: elicitation (forms and their shorthands).

use std::borrow::Cow;
use std::future::IntoFuture;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Context;
use crate::elicit::{
    Choice, Elicit, ElicitError, ElicitField, Elicitation, FormSchema, SchemaError, Single, choice_schema,
};
use crate::engine::BoxFuture;
use crate::protocol::{ElicitRequestParams, ElicitResult, JsonObject};

/// The first revision whose `elicitation/create` has a `mode` member.
pub(crate) const MODE_REVISION: &str = "2025-11-25";

type Finish<R> = fn(Elicitation<JsonObject>) -> Result<R, ElicitError>;

/// A form elicitation being prepared. Await it to send it; `.timeout(…)` first to override the
/// server's default timeout for this one call.
#[must_use = "an elicitation is sent only when awaited"]
pub struct ElicitRequest<'a, R> {
    ctx: &'a Context,
    message: String,
    schema: Result<Cow<'static, FormSchema>, SchemaError>,
    timeout: Option<Duration>,
    key: Option<String>,
    before_task: bool,
    finish: Finish<R>,
}

impl<R> std::fmt::Debug for ElicitRequest<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitRequest").field("message", &self.message).field("timeout", &self.timeout).finish()
    }
}

impl<R> ElicitRequest<'_, R> {
    /// Waits at most `timeout` for the user's answer (instead of the server's default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The key of this request in a 2026-era `input_required` result, instead of its place in
    /// call order (`input-0`, `input-1`, …). A question asked only on some runs, or a handler
    /// whose questions may change order between versions, keeps its answer with a stable key;
    /// see [`crate::multi_round`]. Ignored in the 2025 era.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// In a call of a tool that runs as a task (see [`crate::task`]): asks this question
    /// before the task starts, in the call's own `input_required` result (a multi round-trip
    /// request, whose retry runs the handler again), instead of from the task. The task then
    /// starts on the retry that answers it, once the handler waits on something else. Once the
    /// task has started, and in any other call, this changes nothing.
    pub fn before_task(mut self) -> Self {
        self.before_task = true;
        self
    }
}

impl<'a, R: Send + 'a> IntoFuture for ElicitRequest<'a, R> {
    type Output = Result<R, ElicitError>;
    type IntoFuture = BoxFuture<'a, Result<R, ElicitError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let schema = self.schema.map_err(|e| ElicitError::InvalidRequest(e.to_string()))?;
            let (ctx, key) = (self.ctx, self.key.as_deref());
            let answer = ctx.side().send_form(ctx, &self.message, &schema, self.timeout, key, self.before_task).await?;
            (self.finish)(answer)
        })
    }
}

fn decode<T: DeserializeOwned>(content: JsonObject) -> Result<T, ElicitError> {
    T::deserialize(Value::Object(content))
        .map_err(|e| ElicitError::InvalidResponse { field: None, reason: e.to_string() })
}

fn finish_form<T: Elicit>(answer: Elicitation<JsonObject>) -> Result<Elicitation<T>, ElicitError> {
    Ok(match answer {
        Elicitation::Accept(content) => Elicitation::Accept(decode(content)?),
        Elicitation::Decline => Elicitation::Decline,
        Elicitation::Cancel => Elicitation::Cancel,
    })
}

fn take_field<V: DeserializeOwned>(mut content: JsonObject, name: &str) -> Result<V, ElicitError> {
    let value = content.remove(name).unwrap_or(Value::Null);
    V::deserialize(value)
        .map_err(|e| ElicitError::InvalidResponse { field: Some(name.to_owned()), reason: e.to_string() })
}

fn finish_value<V: DeserializeOwned>(answer: Elicitation<JsonObject>) -> Result<Elicitation<V>, ElicitError> {
    Ok(match answer {
        Elicitation::Accept(content) => Elicitation::Accept(take_field(content, "value")?),
        Elicitation::Decline => Elicitation::Decline,
        Elicitation::Cancel => Elicitation::Cancel,
    })
}

fn finish_confirm(answer: Elicitation<JsonObject>) -> Result<bool, ElicitError> {
    match answer {
        Elicitation::Accept(content) => take_field(content, "confirm"),
        _ => Ok(false),
    }
}

fn finish_choice(answer: Elicitation<JsonObject>) -> Result<Elicitation<String>, ElicitError> {
    Ok(match answer {
        Elicitation::Accept(content) => Elicitation::Accept(take_field(content, "choice")?),
        Elicitation::Decline => Elicitation::Decline,
        Elicitation::Cancel => Elicitation::Cancel,
    })
}

impl Context {
    // Elicitation.

    /// Whether this request may elicit a form: the client declared form-mode support. Use it
    /// to degrade gracefully.
    pub fn can_elicit(&self) -> bool {
        self.client_capabilities().and_then(|c| c.elicitation.as_ref()).is_some_and(|e| e.supports_form())
    }

    /// Whether this request may elicit in URL mode: the client declared URL-mode support and
    /// the session's revision has URL mode (2025-11-25 or later).
    pub fn can_elicit_url(&self) -> bool {
        // Before 2025-11-25 `elicitation/create` has no `mode` and is always a form, so a URL
        // request would reach the client as a form without a schema; a client on such a
        // session that declares `url` anyway is not asked.
        self.protocol_version().is_none_or(|v| v >= MODE_REVISION)
            && self.client_capabilities().and_then(|c| c.elicitation.as_ref()).is_some_and(|e| e.supports_url())
    }

    /// Asks the user to fill in the form `T` and returns their answer.
    ///
    /// ```no_run
    /// # use typed_mcp::prelude::*;
    /// # use typed_mcp::elicit::{Elicit, Elicitation};
    /// #[derive(serde::Deserialize, schemars::JsonSchema, Elicit)]
    /// struct Details {
    ///     /// Your name.
    ///     name: String,
    /// }
    ///
    /// #[tool]
    /// async fn greet(ctx: Context) -> Result<String, typed_mcp::elicit::ElicitError> {
    ///     Ok(match ctx.elicit::<Details>("Who are you?").await? {
    ///         Elicitation::Accept(d) => format!("Hello, {}!", d.name),
    ///         Elicitation::Decline | Elicitation::Cancel => "Hello, stranger!".into(),
    ///     })
    /// }
    /// ```
    pub fn elicit<T: Elicit>(&self, message: impl Into<String>) -> ElicitRequest<'_, Elicitation<T>> {
        ElicitRequest {
            ctx: self,
            message: message.into(),
            schema: T::form_schema().map(Cow::Borrowed).map_err(Clone::clone),
            timeout: None,
            key: None,
            before_task: false,
            finish: finish_form::<T>,
        }
    }

    /// Asks for a single value (a string, number, boolean or option of a `#[derive(Elicit)]`
    /// enum), sent as a one-field form whose property is `value`.
    pub fn elicit_value<V: ElicitField + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> ElicitRequest<'_, Elicitation<V>> {
        ElicitRequest {
            ctx: self,
            message: message.into(),
            schema: Single::<V>::schema("value", None).map(Cow::Owned),
            timeout: None,
            key: None,
            before_task: false,
            finish: finish_value::<V>,
        }
    }

    /// Asks a yes/no question; `true` only when the user accepted and said yes.
    ///
    /// It is sent as a one-field form whose property is `confirm`, a required boolean titled
    /// "Confirm". A client answers `{"confirm": true}`; in a test,
    /// `ElicitationScript::new().accept(json!({"confirm": true}))`.
    pub fn confirm(&self, message: impl Into<String>) -> ElicitRequest<'_, bool> {
        ElicitRequest {
            ctx: self,
            message: message.into(),
            schema: Single::<bool>::schema("confirm", Some("Confirm")).map(Cow::Owned),
            timeout: None,
            key: None,
            before_task: false,
            finish: finish_confirm,
        }
    }

    /// Asks the user to pick one of `choices` (given at run time); returns the chosen value.
    ///
    /// It is sent as a one-field form whose property is `choice`, a single-select of the
    /// choices; a client answers `{"choice": "<one of them>"}`.
    pub fn choose<C: Into<Choice>>(
        &self,
        message: impl Into<String>,
        choices: impl IntoIterator<Item = C>,
    ) -> ElicitRequest<'_, Elicitation<String>> {
        let choices: Vec<Choice> = choices.into_iter().map(Into::into).collect();
        let schema = if choices.is_empty() {
            Err(SchemaError { property: Some("choice".into()), reason: "there is nothing to choose from".into() })
        } else {
            choice_schema("choice", &choices).map(Cow::Owned)
        };
        ElicitRequest {
            ctx: self,
            message: message.into(),
            schema,
            timeout: None,
            key: None,
            before_task: false,
            finish: finish_choice,
        }
    }

    /// Sends `elicitation/create` with parameters built at run time and returns the client's
    /// raw answer. The parameters are checked first (a form needs a schema in MCP's restricted
    /// subset; a URL request needs an id and a URL) and the client's capability for the mode;
    /// on failure nothing is sent. The content of an accepted form is returned as sent, not
    /// validated: check it with [`FormSchema::validate`](crate::elicit::FormSchema::validate) if needed.
    pub async fn elicit_raw(
        &self,
        params: ElicitRequestParams,
        timeout: Option<Duration>,
    ) -> Result<ElicitResult, ElicitError> {
        self.side().elicit_raw(self, params, timeout).await
    }
}
