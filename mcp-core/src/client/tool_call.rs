//! `tools/call`: a call configured (arguments, timeout, cancellation, progress, as a task) and
//! made, and retried once the URL-mode elicitations the server requires are complete.

use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ClientError;
use super::connected::Client;
use super::service::{ClientShared, ProgressCallback};
use crate::engine::BoxFuture;
use crate::protocol::{
    CallToolParams, CallToolResult, JsonObject, Method, ProgressParams, ProgressToken, RequestMeta, Task,
};

/// How many times [`Client::call_tool_with_url_elicitation`] completes flows and retries.
const URL_ELICITATION_ROUNDS: usize = 3;

impl Client {
    /// Calls a tool. `arguments` must serialize to a JSON object (or `()` for none).
    pub async fn call_tool(&self, name: &str, arguments: impl Serialize) -> Result<CallToolResult, ClientError> {
        self.tool(name).arguments(arguments).send().await
    }

    /// A tool call to configure (progress, timeout, cancellation) before awaiting it.
    pub fn tool(&self, name: impl Into<String>) -> ToolCallBuilder<'_> {
        ToolCallBuilder {
            client: self,
            name: name.into(),
            arguments: Ok(None),
            timeout: None,
            cancel: None,
            progress: None,
            as_task: false,
            on_task: None,
        }
    }

    /// Calls a tool; when the server answers that URL-mode elicitations must be completed
    /// first (-32042), offers each to the elicitation handler, waits for the server to report
    /// them complete, and calls again (a few times at most). When the handler does not accept
    /// them all, the -32042 error is returned.
    pub async fn call_tool_with_url_elicitation(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = tool_arguments(arguments).map_err(ClientError::Codec)?;
        let mut rounds = 0;
        loop {
            let call = ToolCallBuilder { arguments: Ok(arguments.clone()), ..self.tool(name) };
            match call.send().await {
                Err(ClientError::UrlElicitationRequired(required)) if rounds < URL_ELICITATION_ROUNDS => {
                    rounds += 1;
                    if !self.complete_url_elicitations(&required).await? {
                        return Err(ClientError::UrlElicitationRequired(required));
                    }
                }
                other => return other,
            }
        }
    }
}

/// Tool arguments as a JSON object: `()` or `null` for none.
pub(super) fn tool_arguments(arguments: impl Serialize) -> Result<Option<JsonObject>, String> {
    match serde_json::to_value(arguments) {
        Ok(serde_json::Value::Object(o)) => Ok(Some(o)),
        Ok(serde_json::Value::Null) => Ok(None),
        Ok(other) => Err(format!("tool arguments must be a JSON object, not {other}")),
        Err(e) => Err(format!("tool arguments could not be encoded: {e}")),
    }
}

/// A `tools/call` being configured; await it (or call [`send`](Self::send)) to make the call.
#[must_use = "a tool call does nothing until awaited"]
pub struct ToolCallBuilder<'a> {
    client: &'a Client,
    name: String,
    arguments: Result<Option<JsonObject>, String>,
    timeout: Option<Option<Duration>>,
    cancel: Option<CancellationToken>,
    progress: Option<ProgressCallback>,
    /// Whether the server may run the call as a task (see [`as_task`](Self::as_task)).
    as_task: bool,
    on_task: Option<TaskCallback>,
}

/// Told the task a call became (see [`ToolCallBuilder::on_task`]).
pub(crate) type TaskCallback = Arc<dyn Fn(&Task) + Send + Sync>;

impl std::fmt::Debug for ToolCallBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallBuilder")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// Removes a request's progress callback when the request ends, however it ends.
struct ProgressGuard<'a> {
    shared: &'a ClientShared,
    token: ProgressToken,
}

impl Drop for ProgressGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut m) = self.shared.progress.lock() {
            m.remove(&self.token);
        }
    }
}

impl ToolCallBuilder<'_> {
    /// The arguments: anything that serializes to a JSON object.
    pub fn arguments(mut self, arguments: impl Serialize) -> Self {
        self.arguments = tool_arguments(arguments);
        self
    }

    /// Waits at most `timeout` for the result (instead of the client's default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }

    /// Waits for the result however long it takes (until cancelled or the connection closes).
    pub fn without_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Withdraws the call (with `notifications/cancelled`) when `token` is cancelled; the call
    /// then fails with [`ClientError::Cancelled`].
    pub fn cancel_on(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Asks the server for progress notifications and hands each to `callback`, on the
    /// connection's reader: keep it quick.
    pub fn on_progress(mut self, callback: impl Fn(ProgressParams) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }

    /// Lets the server run the call as a task (the 2026-07-28 tasks extension): the call
    /// declares the extension, and when the server answers with a task, the client polls it
    /// (`tasks/get`, at the interval the server asks for), answers its `inputRequests` with the
    /// client's handlers (`tasks/update`), and returns the tool's result once it completed.
    ///
    /// The call's timeout, when one is set with [`timeout`](Self::timeout), bounds the whole
    /// task; otherwise it bounds each request to the server, and the task may run as long as it
    /// takes. When the call's cancellation token fires, the task is cancelled (`tasks/cancel`).
    /// A task that failed is [`ClientError::Rpc`] with its error; one cancelled otherwise is
    /// [`ClientError::TaskCancelled`]. The server may also answer at once, without a task. In a
    /// session (2025 era), which has no tasks, this is an ordinary call.
    pub fn as_task(mut self) -> Self {
        self.as_task = true;
        self
    }

    /// With [`as_task`](Self::as_task): `callback` is told the task when the server answers
    /// the call with one (after any questions the call's own rounds asked), before the client
    /// follows it. For a caller that shows the task, or, relaying the call, becomes a task
    /// itself only then.
    pub fn on_task(mut self, callback: impl Fn(&Task) + Send + Sync + 'static) -> Self {
        self.on_task = Some(Arc::new(callback));
        self
    }

    /// Makes the call.
    pub async fn send(self) -> Result<CallToolResult, ClientError> {
        self.send_as().await
    }

    /// Makes the call, like [`send`](Self::send), and returns the result's JSON text as the
    /// server sent it, unparsed: for a server relaying the call (a gateway) that hands the
    /// result on as it is, with no decoding and encoding again. A call that became a task
    /// ([`as_task`](Self::as_task)) returns its final result encoded.
    pub async fn send_raw(self) -> Result<crate::tool::RawToolResult, ClientError> {
        self.send_as().await
    }

    async fn send_as<R: ResultForm>(self) -> Result<R, ClientError> {
        let client = self.client;
        let arguments = self.arguments.map_err(ClientError::Codec)?;
        let shared = &*client.inner.shared;
        let mut meta = None;
        let _guard = match self.progress {
            Some(callback) => {
                let n = client.inner.next_progress.fetch_add(1, Ordering::Relaxed);
                let token = ProgressToken::String(format!("progress-{n}"));
                if let Ok(mut m) = shared.progress.lock() {
                    m.insert(token.clone(), callback);
                }
                meta = Some(RequestMeta { progress_token: Some(token.clone()), other: JsonObject::new() });
                Some(ProgressGuard { shared, token })
            }
            None => None,
        };
        let options = client.options(self.timeout, self.cancel);
        if let Some(era_2026) = &client.inner.era_2026 {
            // The tool's `x-mcp-header` marks decide its HTTP headers: learn them first.
            // Boxed, as the task below: taken once, they would make every call's future larger.
            if era_2026.headers.known(&self.name).is_none()
                && let Err(e) = Box::pin(client.list_all_tools()).await
            {
                tracing::debug!(error = %e, "could not list the tools before calling one");
            }
            if let Some(Err(reason)) = era_2026.headers.known(&self.name) {
                return Err(ClientError::ToolRefused { name: self.name, reason });
            }
        }
        let params = CallToolParams { name: self.name, arguments, meta };
        match &client.inner.era_2026 {
            Some(era_2026) if self.as_task => R::from_result(
                Box::pin(client.call_as_task(era_2026, &params, self.timeout.flatten(), options.cancel, self.on_task))
                    .await?,
            ),
            // The parameters made an object by moving their parts, not by encoding them.
            Some(era_2026) => {
                client.request_object(era_2026, Method::ToolsCall.name(), params_object(params), options).await
            }
            None => client.request_with(Method::ToolsCall.name(), &params, options).await,
        }
    }
}

/// What a call's result is read as: the result parsed, or its JSON text.
trait ResultForm: serde::de::DeserializeOwned + Send {
    /// The result a task ended with, in this form.
    fn from_result(result: CallToolResult) -> Result<Self, ClientError>;
}

impl ResultForm for CallToolResult {
    fn from_result(result: CallToolResult) -> Result<Self, ClientError> {
        Ok(result)
    }
}

impl ResultForm for crate::tool::RawToolResult {
    fn from_result(result: CallToolResult) -> Result<Self, ClientError> {
        let raw = serde_json::value::to_raw_value(&result).map_err(|e| ClientError::Codec(e.to_string()))?;
        Ok(crate::tool::RawToolResult::from_raw(raw))
    }
}

/// `params` as the JSON object they encode to, made without encoding.
fn params_object(params: CallToolParams) -> JsonObject {
    let mut object = JsonObject::new();
    object.insert("name".into(), Value::String(params.name));
    if let Some(arguments) = params.arguments {
        object.insert("arguments".into(), Value::Object(arguments));
    }
    if let Some(meta) = params.meta {
        let mut members = meta.other;
        if let Some(token) = meta.progress_token {
            let token = match token {
                ProgressToken::String(s) => Value::String(s),
                ProgressToken::Number(n) => Value::from(n),
            };
            members.insert("progressToken".into(), token);
        }
        object.insert("_meta".into(), Value::Object(members));
    }
    object
}

impl<'a> IntoFuture for ToolCallBuilder<'a> {
    type Output = Result<CallToolResult, ClientError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parameters_made_an_object_by_hand_are_what_they_encode_to() {
        let mut other = JsonObject::new();
        other.insert("traceparent".into(), json!("00-abc-def-01"));
        let cases = [
            CallToolParams { name: "bare".into(), arguments: None, meta: None },
            CallToolParams {
                name: "echo".into(),
                arguments: Some(json!({"text": "hi", "n": [1, 2]}).as_object().cloned().unwrap()),
                meta: Some(RequestMeta { progress_token: Some(ProgressToken::String("p-1".into())), other }),
            },
            CallToolParams {
                name: "count".into(),
                arguments: Some(JsonObject::new()),
                meta: Some(RequestMeta { progress_token: Some(ProgressToken::Number(7)), other: JsonObject::new() }),
            },
        ];
        for params in cases {
            let encoded = serde_json::to_value(&params).unwrap();
            assert_eq!(Value::Object(params_object(params)), encoded);
        }
    }
}
