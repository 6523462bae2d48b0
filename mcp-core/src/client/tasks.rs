//! Tasks (the 2026-07-28 tasks extension) from the client's side: a call the server may run
//! as a task, polled to its end, and the raw `tasks/get`, `tasks/update`, `tasks/cancel`.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::era::Era2026;
use super::requests::params_object;
use super::round_trip::answer;
use super::tool_call::TaskCallback;
use super::{Client, ClientError};
use crate::protocol::Method;
use crate::protocol::{
    CallToolParams, CallToolResult, ErrorObject, JsonObject, META_CLIENT_CAPABILITIES, TASKS_EXTENSION, Task,
    TaskStatus, codes,
};

/// The poll interval when the server names none.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Polls are never closer than this, whatever the server says.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(10);
/// Nor further apart than this.
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// `params` declaring the tasks extension for this request only.
pub(crate) fn with_tasks_extension(mut params: JsonObject) -> JsonObject {
    let meta = params.entry("_meta").or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(meta) = meta {
        let mut extensions = JsonObject::new();
        extensions.insert(TASKS_EXTENSION.into(), Value::Object(JsonObject::new()));
        let mut capabilities = JsonObject::new();
        capabilities.insert("extensions".into(), Value::Object(extensions));
        meta.insert(META_CLIENT_CAPABILITIES.into(), Value::Object(capabilities));
    }
    params
}

/// How long to wait before the next poll, from the task's `pollIntervalMs`.
fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis).clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
}

/// How the server answered a call that may run as a task
/// ([`Client::start_tool_task`]).
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum TaskStart {
    /// The call runs as this task: follow it with [`Client::get_task`].
    Task(Task),
    /// The server answered at once, without a task.
    Done(CallToolResult),
}

impl Client {
    /// Calls a tool, letting the server run it as a task, and returns what the server answered
    /// at once: the task (to follow with [`get_task`](Self::get_task),
    /// [`update_task`](Self::update_task) and [`cancel_task`](Self::cancel_task)), or the
    /// result. [`call_tool_as_task`](Self::call_tool_as_task) does the following itself. Only in
    /// the 2026-07-28 era ([`ClientError::WrongEra`] otherwise).
    pub async fn start_tool_task(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
    ) -> Result<TaskStart, ClientError> {
        let Some(era_2026) = &self.inner.era_2026 else {
            return Err(ClientError::WrongEra { what: "tools/call as a task".into(), era: self.era() });
        };
        let arguments = super::tool_call::tool_arguments(arguments).map_err(ClientError::Codec)?;
        let params = CallToolParams { name: name.to_owned(), arguments, meta: None };
        let params = with_tasks_extension(params_object(&params)?);
        let first =
            self.round_trip(era_2026).request(Method::ToolsCall.name(), params, self.options(None, None)).await?;
        if first.task {
            first.decode(Method::ToolsCall.name()).map(TaskStart::Task)
        } else {
            first.decode(Method::ToolsCall.name()).map(TaskStart::Done)
        }
    }

    /// Calls a tool, letting the server run it as a task; polls the task to its end, answering
    /// its questions with the client's handlers. The same as
    /// `client.tool(name).arguments(arguments).as_task().await`; see
    /// [`ToolCallBuilder::as_task`](super::ToolCallBuilder::as_task).
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: impl serde::Serialize,
    ) -> Result<CallToolResult, ClientError> {
        self.tool(name).arguments(arguments).as_task().send().await
    }

    /// `tasks/get`: the task as it is now (with its `inputRequests`, `result` or `error`).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        self.task_request("tasks/get", serde_json::json!({"taskId": task_id})).await
    }

    /// `tasks/update`: answers to some or all of the task's `inputRequests`, by key.
    pub async fn update_task(&self, task_id: &str, input_responses: JsonObject) -> Result<(), ClientError> {
        let params = serde_json::json!({"taskId": task_id, "inputResponses": input_responses});
        self.task_request::<JsonObject>("tasks/update", params).await.map(drop)
    }

    /// `tasks/cancel`: ends the task (nothing happens to one that is over already).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), ClientError> {
        self.task_request::<JsonObject>("tasks/cancel", serde_json::json!({"taskId": task_id})).await.map(drop)
    }

    /// A request of the tasks extension, which only the 2026-07-28 era has.
    async fn task_request<R: DeserializeOwned>(&self, method: &str, params: Value) -> Result<R, ClientError> {
        let Some(era_2026) = &self.inner.era_2026 else {
            return Err(ClientError::WrongEra { what: method.to_owned(), era: self.era() });
        };
        let params = with_tasks_extension(params_object(&params)?);
        self.round_trip(era_2026).request(method, params, self.options(None, None)).await?.decode(method)
    }

    /// A `tools/call` the server may answer with a task, polled until it ends. `timeout`
    /// bounds the whole task; `cancel` cancels it.
    pub(crate) async fn call_as_task(
        &self,
        era_2026: &Era2026,
        params: &CallToolParams,
        timeout: Option<Duration>,
        cancel: Option<CancellationToken>,
        on_task: Option<TaskCallback>,
    ) -> Result<CallToolResult, ClientError> {
        // With telemetry, the call and every request following its task are one trace, under
        // a span of the whole task.
        #[cfg(feature = "otel")]
        if let Some(traced) = &self.inner.traced {
            use opentelemetry::context::FutureExt;
            use opentelemetry::trace::TraceContextExt;
            let cx = traced.telemetry.task_span(&params.name);
            let outcome =
                self.call_as_task_untraced(era_2026, params, timeout, cancel, on_task).with_context(cx.clone()).await;
            if let Err(e) = &outcome {
                cx.span().set_status(opentelemetry::trace::Status::error(e.to_string()));
            }
            cx.span().end();
            return outcome;
        }
        self.call_as_task_untraced(era_2026, params, timeout, cancel, on_task).await
    }

    async fn call_as_task_untraced(
        &self,
        era_2026: &Era2026,
        params: &CallToolParams,
        timeout: Option<Duration>,
        cancel: Option<CancellationToken>,
        on_task: Option<TaskCallback>,
    ) -> Result<CallToolResult, ClientError> {
        let params = with_tasks_extension(params_object(params)?);
        let first = self
            .round_trip(era_2026)
            .request(Method::ToolsCall.name(), params, self.options(None, cancel.clone()))
            .await?;
        if !first.task {
            return first.decode(Method::ToolsCall.name());
        }
        let task: Task = first.decode(Method::ToolsCall.name())?;
        if let Some(on_task) = &on_task {
            on_task(&task);
        }
        let id = task.task_id.clone();
        tracing::debug!(task = %id, "the call runs as a task");
        let follow = self.follow(task);
        let ended = async {
            match timeout {
                Some(t) => tokio::time::timeout(t, follow).await.unwrap_or_else(|_| {
                    Err(ClientError::Timeout { method: Method::ToolsCall.name().into(), timeout: t })
                }),
                None => follow.await,
            }
        };
        let outcome = match &cancel {
            Some(token) => tokio::select! {
                biased;
                () = token.cancelled() => Err(ClientError::Cancelled),
                r = ended => r,
            },
            None => ended.await,
        };
        if matches!(outcome, Err(ClientError::Cancelled | ClientError::Timeout { .. })) {
            // The task would go on running for nobody.
            if let Err(e) = self.cancel_task(&id).await {
                tracing::debug!(task = %id, error = %e, "could not cancel an abandoned task");
            }
        }
        outcome
    }

    /// Polls `task` until it ends, answering its questions.
    async fn follow(&self, task: Task) -> Result<CallToolResult, ClientError> {
        let id = task.task_id;
        let mut interval = poll_interval(task.poll_interval_ms);
        let mut wait = true;
        loop {
            if wait {
                tokio::time::sleep(interval).await;
            }
            wait = true;
            let task = self.get_task(&id).await?;
            interval = poll_interval(task.poll_interval_ms);
            match task.status {
                TaskStatus::Working => {}
                TaskStatus::InputRequired => {
                    let requests = task.input_requests.unwrap_or_default();
                    if requests.is_empty() {
                        continue;
                    }
                    tracing::debug!(task = %id, questions = requests.len(), "answering the task's questions");
                    let answers = futures_util::future::try_join_all(
                        requests.into_iter().map(|(key, request)| answer(self.inner.shared.clone(), key, request)),
                    )
                    .await?;
                    self.update_task(&id, answers.into_iter().collect()).await?;
                    // More questions may follow at once.
                    wait = false;
                }
                TaskStatus::Completed => {
                    let result = task
                        .result
                        .ok_or_else(|| ClientError::Codec(format!("task `{id}` completed without a `result`")))?;
                    return serde_json::from_value(result)
                        .map_err(|e| ClientError::Codec(format!("invalid result of task `{id}`: {e}")));
                }
                TaskStatus::Failed => {
                    return Err(ClientError::Rpc(task.error.unwrap_or_else(|| {
                        ErrorObject::new(codes::INTERNAL_ERROR, format!("task `{id}` failed without saying why"))
                    })));
                }
                TaskStatus::Cancelled => return Err(ClientError::TaskCancelled(id)),
            }
        }
    }
}
