//! Tasks (the `io.modelcontextprotocol/tasks` extension, 2026-07-28 era): a `tools/call` that
//! becomes a task, and `tasks/get`, `tasks/update`, `tasks/cancel`. See [`crate::task`].

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::ServerInner;
use super::handling::{error_2026, to_raw};
use super::state::SessionState;
use crate::engine::{BoxFuture, HandlerResult};
use crate::protocol::{
    ClientCapabilities, CreateMessageResult, ElicitResult, ErrorObject, JsonObject, ListRootsResult,
    META_CLIENT_CAPABILITIES, Request, TASKS_EXTENSION, TaskStatus, TaskSupport,
};
use crate::task::run::{TaskRun, TaskRuns};
use crate::task::{MemoryTaskStore, RelayOp, TaskRecord, TaskStore, TaskStoreError};

/// The default `ttlMs`: an hour.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(60 * 60);

/// The default `pollIntervalMs`: half a second.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The server's tasks: where they are kept, their settings, and the runs on this instance.
pub(crate) struct Tasks {
    /// Whether the server offers the extension (some tool may run as a task, or a store was
    /// configured).
    pub(crate) enabled: bool,
    store: Arc<dyn TaskStore>,
    ttl: Option<Duration>,
    poll_interval: Duration,
    runs: TaskRuns,
    /// How this instance reaches the tasks other instances of its deployment run (set when it
    /// joins one with a message bus).
    relay: OnceLock<Arc<dyn Relay>>,
}

/// How an instance reaches the handlers of tasks another instance of its deployment runs.
pub(crate) trait Relay: Send + Sync {
    /// This instance's id in the deployment (what [`TaskRecord::runner`] names).
    fn instance(&self) -> &str;

    /// Asks `runner` to do `op` to its task `task_id` for `principal`: its outcome, or `None`
    /// when no answer came in time (the runner is gone or unreachable).
    fn ask<'a>(
        &'a self,
        runner: &'a str,
        task_id: &'a str,
        principal: Option<&'a str>,
        op: RelayOp,
    ) -> BoxFuture<'a, Option<Result<(), ErrorObject>>>;

    /// Tells the other instances that a task this one runs changed, for the
    /// `subscriptions/listen` streams they hold (status notifications).
    fn changed(&self, record: &TaskRecord);
}

/// What the builder collects.
#[derive(Clone)]
pub(crate) struct TaskSettings {
    pub(crate) store: Option<Arc<dyn TaskStore>>,
    pub(crate) ttl: Option<Duration>,
    pub(crate) poll_interval: Duration,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings { store: None, ttl: Some(DEFAULT_TASK_TTL), poll_interval: DEFAULT_TASK_POLL_INTERVAL }
    }
}

impl Tasks {
    pub(crate) fn new(settings: TaskSettings, some_tool_runs_as_task: bool) -> Self {
        Tasks {
            enabled: some_tool_runs_as_task || settings.store.is_some(),
            store: settings.store.unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
            ttl: settings.ttl,
            poll_interval: settings.poll_interval,
            runs: TaskRuns::default(),
            relay: OnceLock::new(),
        }
    }

    /// Joins a deployment: tasks made from now on name this instance as their runner, and
    /// requests for tasks other instances run go there through `relay`. `false` if it joined
    /// one already.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn join(&self, relay: Arc<dyn Relay>) -> bool {
        self.relay.set(relay).is_ok()
    }

    /// Cancels the tasks running on this instance (it is shutting down).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn cancel_running(&self) {
        self.runs.cancel_all();
    }

    /// How many tasks' handlers run on this instance.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn running(&self) -> usize {
        self.runs.len()
    }

    fn instance(&self) -> Option<&str> {
        self.relay.get().map(|r| r.instance())
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// -32021 naming the extension.
pub(crate) fn extension_required(context: &str) -> ErrorObject {
    let mut extensions = JsonObject::new();
    extensions.insert(TASKS_EXTENSION.into(), Value::Object(JsonObject::new()));
    let mut required = JsonObject::new();
    required.insert("extensions".into(), Value::Object(extensions));
    ErrorObject::missing_client_capabilities(context, required)
}

fn store_failed(e: TaskStoreError) -> ErrorObject {
    tracing::error!(error = %e, "the task store failed");
    ErrorObject::internal(format!("the task store failed: {e}"))
}

/// A run for a `tools/call` that may become a task: when the server offers tasks, the tool
/// may run as one, and the client negotiated the extension in this request.
pub(crate) fn plan(
    server: &Arc<ServerInner>,
    name: &str,
    capabilities: &ClientCapabilities,
    principal: Option<&str>,
) -> Option<Arc<TaskRun>> {
    if !server.tasks.enabled || !capabilities.has_extension(TASKS_EXTENSION) {
        return None;
    }
    let support = server.tools.read(|tools| tools.get(name).map(|t| t.task_mode()));
    if !support.is_some_and(TaskSupport::allows_task) {
        return None;
    }
    let tasks = &server.tasks;
    let weak = Arc::downgrade(server);
    let on_change: crate::task::run::OnChange = Arc::new(move |record: TaskRecord| {
        let server = weak.clone();
        Box::pin(async move {
            if let Some(server) = server.upgrade() {
                notify(&server, &record).await;
                if let Some(relay) = server.tasks.relay.get() {
                    relay.changed(&record);
                }
            }
        })
    });
    let mut record = TaskRecord::new(
        crate::multi_round::new_chain(),
        principal.map(str::to_owned),
        tasks.ttl.map(millis),
        Some(millis(tasks.poll_interval)),
    );
    record.runner = tasks.instance().map(str::to_owned);
    Some(Arc::new(TaskRun::new(record, tasks.store.clone(), Some(on_change))))
}

/// `notifications/tasks`: the task as `tasks/get` shows it, to the subscriptions
/// (`subscriptions/listen`) that named it.
pub(crate) async fn notify(server: &ServerInner, record: &TaskRecord) {
    let id = record.task_id.as_str();
    server
        .surface
        .listeners
        .broadcast("notifications/tasks", &record.to_task(true), |filter| {
            filter.task_ids.as_ref().is_some_and(|ids| ids.iter().any(|t| t == id))
        })
        .await;
}

/// Of the tasks `ids`, those `principal` may follow (the others are unknown to them). Fails
/// with -32021 when the client did not declare the extension.
pub(crate) async fn followable(
    server: &ServerInner,
    ids: &[String],
    capabilities: &ClientCapabilities,
    principal: Option<&str>,
) -> Result<Vec<String>, ErrorObject> {
    if !capabilities.has_extension(TASKS_EXTENSION) {
        return Err(extension_required("`taskIds` in a subscription are part of the tasks extension"));
    }
    let mut followed = Vec::new();
    for id in ids {
        if lookup(server, id, principal).await.is_ok() {
            followed.push(id.clone());
        }
    }
    Ok(followed)
}

/// Hands the call to the client as a task, and lets `handler` go on in the background: the
/// record is stored first, so the id returned always resolves. The `CreateTaskResult`.
pub(crate) async fn start(
    server: &Arc<ServerInner>,
    run: Arc<TaskRun>,
    handler: BoxFuture<'static, HandlerResult>,
) -> HandlerResult {
    // The work goes on in the trace of the call that started it.
    #[cfg(feature = "otel")]
    let handler = Box::pin(opentelemetry::context::FutureExt::with_current_context(handler));
    let record = run.start().await.map_err(store_failed)?;
    let id = record.task_id.clone();
    server.tasks.runs.insert(id.clone(), run.clone());
    let expiry = record.ttl_ms.map(Duration::from_millis);
    let server = server.clone();
    tokio::spawn(async move {
        let expired = async {
            match expiry {
                Some(ttl) => tokio::time::sleep(ttl).await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            result = handler => Some(result),
            () = run.cancel.cancelled() => None,
            () = expired => {
                run.cancel.cancel();
                None
            }
        };
        let written = match outcome {
            Some(Ok(result)) => match serde_json::from_str::<Value>(result.get()) {
                Ok(result) => run.finish(TaskStatus::Completed, Some(result), None).await,
                Err(e) => {
                    let error = ErrorObject::internal(format!("the tool's result could not be read: {e}"));
                    run.finish(TaskStatus::Failed, None, Some(error)).await
                }
            },
            Some(Err(error)) => run.finish(TaskStatus::Failed, None, Some(error_2026(error))).await,
            None => run.finish(TaskStatus::Cancelled, None, None).await,
        };
        if let Err(e) = written {
            tracing::error!(task = %id, error = %e, "the end of a task could not be saved");
        }
        server.tasks.runs.remove(&id);
    });
    to_raw(&record.to_task(false))
}

fn read<T: DeserializeOwned>(request: &Request) -> Result<T, ErrorObject> {
    let text = request.params.as_deref().map_or("{}", RawValue::get);
    serde_json::from_str(text)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid `{}` parameters: {e}", request.method)))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskIdIn {
    task_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateIn {
    task_id: String,
    input_responses: Value,
}

/// The task `id` as `principal` may see it: an unknown id, an expired task and another user's
/// task are all -32602, so that ids cannot be probed.
async fn lookup(server: &ServerInner, id: &str, principal: Option<&str>) -> Result<TaskRecord, ErrorObject> {
    let record = server.tasks.store.get(id).await.map_err(store_failed)?;
    match record {
        Some(record) if record.owner.as_deref() == principal => Ok(record),
        _ => Err(ErrorObject::invalid_params(format!("unknown task: `{id}`"))),
    }
}

/// Serves `tasks/get`, `tasks/update` and `tasks/cancel`.
pub(crate) async fn handle(server: &ServerInner, state: &SessionState, request: &Request) -> HandlerResult {
    let principal = state.principal.as_deref();
    if !state.client().is_some_and(|c| c.capabilities.has_extension(TASKS_EXTENSION)) {
        return Err(extension_required(&format!(
            "`{}` is part of the tasks extension, which `_meta[\"{META_CLIENT_CAPABILITIES}\"]` does not declare",
            request.method
        )));
    }
    match request.method.as_str() {
        "tasks/get" => {
            let p: TaskIdIn = read(request)?;
            let record = lookup(server, &p.task_id, principal).await?;
            let record = unless_orphaned(server, record).await?;
            to_raw(&record.to_task(true))
        }
        "tasks/update" => update(server, request, principal).await,
        "tasks/cancel" => {
            let p: TaskIdIn = read(request)?;
            let record = lookup(server, &p.task_id, principal).await?;
            // A task whose instance died failed: there is nothing left to cancel.
            let mut record = unless_orphaned(server, record).await?;
            if !record.status.is_terminal() {
                match server.tasks.runs.get(&p.task_id) {
                    Some(run) => {
                        run.cancel.cancel();
                        run.finish(TaskStatus::Cancelled, None, None).await.map_err(store_failed)?;
                    }
                    // Another instance runs it: that instance ends it.
                    None if relayed(server, &record, principal, RelayOp::Cancel).await.transpose()?.is_some() => {}
                    // Its run is gone (the instance that ran it stopped, or cannot be reached):
                    // the record is all there is.
                    None => {
                        record.status = TaskStatus::Cancelled;
                        record.input_requests.clear();
                        record.last_updated_at_ms = crate::task::now_ms();
                        server.tasks.store.put(&record).await.map_err(store_failed)?;
                    }
                }
            }
            to_raw(&json!({}))
        }
        other => Err(ErrorObject::method_not_found(other)),
    }
}

/// `tasks/update`: answers to the task's input requests. Answers to questions nothing waits
/// for are ignored; an answer that is not a result of the request it answers is refused
/// (-32602) and nothing is delivered.
async fn update(server: &ServerInner, request: &Request, principal: Option<&str>) -> HandlerResult {
    let p: UpdateIn = read(request)?;
    let Value::Object(responses) = p.input_responses else {
        return Err(ErrorObject::invalid_params("`inputResponses` must be an object of answers by key"));
    };
    let record = lookup(server, &p.task_id, principal).await?;
    if record.status.is_terminal() {
        return Err(ErrorObject::invalid_params(format!(
            "task `{}` is {}: it takes no more input",
            p.task_id,
            record.status.as_str()
        )));
    }
    let Some(run) = server.tasks.runs.get(&p.task_id) else {
        let record = unless_orphaned(server, record).await?;
        if record.status.is_terminal() {
            return Err(ErrorObject::invalid_params(format!(
                "task `{}` is {}: it takes no more input",
                p.task_id,
                record.status.as_str()
            )));
        }
        let elsewhere = record.runner.is_some() && server.tasks.relay.get().is_some();
        return match relayed(server, &record, principal, RelayOp::Update { responses }).await {
            Some(outcome) => outcome.and_then(|()| to_raw(&json!({}))),
            None if elsewhere => Err(ErrorObject::internal(format!(
                "task `{}` runs on another server instance, which did not answer",
                p.task_id
            ))),
            None => Err(ErrorObject::internal(format!("task `{}` is not running on this server instance", p.task_id))),
        };
    };
    answer_run(&run, responses).await?;
    to_raw(&json!({}))
}

/// Hands `responses` to the questions `run` waits on: answers to questions nothing waits for
/// are ignored; an answer that is not a result of the request it answers is refused (-32602)
/// and nothing is delivered.
async fn answer_run(run: &TaskRun, responses: JsonObject) -> Result<(), ErrorObject> {
    let waiting = run.waiting();
    let mut answers = JsonObject::new();
    for (key, answer) in responses {
        let Some(method) = waiting.get(&key) else { continue };
        let valid = match method.as_str() {
            "elicitation/create" => ElicitResult::deserialize(&answer).map(drop),
            "sampling/createMessage" => CreateMessageResult::deserialize(&answer).map(drop),
            "roots/list" => ListRootsResult::deserialize(&answer).map(drop),
            _ => Ok(()),
        };
        if let Err(e) = valid {
            return Err(ErrorObject::invalid_params(format!(
                "input response `{key}` is not a valid `{method}` result: {e}"
            )));
        }
        answers.insert(key, answer);
    }
    run.answer(answers).await.map_err(store_failed)
}

/// `record` as it stands, or, when it is not over but the instance running its handler is gone
/// (its heartbeat lapsed), ended as `failed`: the handler will never finish.
async fn unless_orphaned(server: &ServerInner, mut record: TaskRecord) -> Result<TaskRecord, ErrorObject> {
    if record.status.is_terminal() || server.tasks.runs.get(&record.task_id).is_some() {
        return Ok(record);
    }
    let Some(runner) = record.runner.as_deref() else { return Ok(record) };
    if server.tasks.instance() == Some(runner) || server.tasks.store.runner_alive(runner).await.map_err(store_failed)? {
        return Ok(record);
    }
    tracing::info!(task = %record.task_id, runner, "the instance running a task is gone: the task failed");
    record.status = TaskStatus::Failed;
    record.input_requests.clear();
    record.error =
        Some(ErrorObject::internal("the server instance running this task stopped before the task finished"));
    record.last_updated_at_ms = crate::task::now_ms().max(record.last_updated_at_ms);
    server.tasks.store.put(&record).await.map_err(store_failed)?;
    // The runner may have ended it meanwhile: the store keeps whichever end came first.
    let id = record.task_id.clone();
    Ok(server.tasks.store.get(&id).await.map_err(store_failed)?.unwrap_or(record))
}

/// `op` done by the other instance running `record`'s task: `None` when this server is in no
/// deployment, the record names no other runner, or the runner did not answer.
async fn relayed(
    server: &ServerInner,
    record: &TaskRecord,
    principal: Option<&str>,
    op: RelayOp,
) -> Option<Result<(), ErrorObject>> {
    let relay = server.tasks.relay.get()?;
    let runner = record.runner.as_deref().filter(|r| *r != relay.instance())?;
    relay.ask(runner, &record.task_id, principal, op).await
}

/// Serves `op`, asked by another instance, for the task `task_id` this instance runs.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) async fn serve_relayed(
    server: &ServerInner,
    task_id: &str,
    principal: Option<&str>,
    op: RelayOp,
) -> Result<(), ErrorObject> {
    let record = lookup(server, task_id, principal).await?;
    let run = server.tasks.runs.get(task_id).filter(|_| !record.status.is_terminal());
    match (op, run) {
        (RelayOp::Update { responses }, Some(run)) => answer_run(&run, responses).await,
        (RelayOp::Cancel, Some(run)) => {
            run.cancel.cancel();
            run.finish(TaskStatus::Cancelled, None, None).await.map_err(store_failed)
        }
        // It ended meanwhile: cancelling it changes nothing, as on the instance that ran it.
        (RelayOp::Cancel, None) => Ok(()),
        (RelayOp::Update { .. }, None) if record.status.is_terminal() => Err(ErrorObject::invalid_params(format!(
            "task `{task_id}` is {}: it takes no more input",
            record.status.as_str()
        ))),
        (RelayOp::Update { .. }, None) => Err(ErrorObject::internal(format!("task `{task_id}` is no longer running"))),
    }
}

impl super::ServerBuilder {
    /// Where tasks are kept (default: a [`MemoryTaskStore`] of this process). Setting a store
    /// also makes the server offer the tasks extension when no tool declares task support yet
    /// (tools added at run time may).
    pub fn task_store(mut self, store: impl TaskStore) -> Self {
        self.tasks.store = Some(Arc::new(store));
        self
    }

    /// How long a task is kept after its creation (`ttlMs`; default an hour); `None` keeps it
    /// until the store forgets it. A task still running then is cancelled.
    pub fn task_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.tasks.ttl = ttl;
        self
    }

    /// How often clients should poll a task (`pollIntervalMs`; default 500 ms).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.tasks.poll_interval = interval;
        self
    }
}
