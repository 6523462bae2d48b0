//! A task's handler while it runs: its questions to the client, the answers `tasks/update`
//! brings, cancellation, and the writes of its record.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::store::{TaskRecord, TaskStore, TaskStoreError, now_ms};
use crate::engine::{Cancellation, PeerError};
use crate::protocol::{ErrorObject, JsonObject, TaskStatus};

/// A question of the handler the client has not answered yet.
struct Pending {
    /// `{"method": …, "params": …}`, as `inputRequests` shows it.
    request: Value,
    answer: oneshot::Sender<Value>,
}

/// Told of each change of a task once it is stored (status notifications).
pub(crate) type OnChange = Arc<dyn Fn(TaskRecord) -> crate::engine::BoxFuture<'static, ()> + Send + Sync>;

/// How often progress is written when the record names no poll interval, in milliseconds.
const PROGRESS_EVERY_DEFAULT_MS: u64 = 500;

/// The live side of one task, on the instance running its handler.
pub(crate) struct TaskRun {
    record: tokio::sync::Mutex<TaskRecord>,
    store: Arc<dyn TaskStore>,
    /// Cancelled by `tasks/cancel`: the handler is dropped.
    pub(crate) cancel: Cancellation,
    pending: Mutex<HashMap<String, Pending>>,
    next_key: AtomicU32,
    /// Whether the task was handed to the client (its `tools/call` answered with it). Until
    /// then, a question asked with `before_task` goes in the call's own `input_required` round.
    started: AtomicBool,
    on_change: Option<OnChange>,
    /// Progress writes are coalesced to one per poll interval (see [`TaskRun::progress`]).
    progress_every: Duration,
    /// When the record was last written to the store.
    last_write: Mutex<Option<tokio::time::Instant>>,
    /// Whether a deferred write of the latest progress is due.
    flush_due: AtomicBool,
}

impl std::fmt::Debug for TaskRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskRun").field("started", &self.started).finish_non_exhaustive()
    }
}

impl TaskRun {
    /// A run for the task `record`, kept in `store`.
    pub(crate) fn new(record: TaskRecord, store: Arc<dyn TaskStore>, on_change: Option<OnChange>) -> Self {
        let progress_every = Duration::from_millis(record.poll_interval_ms.unwrap_or(PROGRESS_EVERY_DEFAULT_MS));
        TaskRun {
            progress_every,
            last_write: Mutex::new(None),
            flush_due: AtomicBool::new(false),
            record: tokio::sync::Mutex::new(record),
            store,
            cancel: Cancellation::new(),
            pending: Mutex::default(),
            next_key: AtomicU32::new(0),
            started: AtomicBool::new(false),
            on_change,
        }
    }

    /// Whether the task was handed to the client.
    pub(crate) fn started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// The key of the next question: `explicit`, or the next in call order.
    pub(crate) fn key(&self, explicit: Option<&str>) -> String {
        match explicit {
            Some(k) => k.to_owned(),
            None => format!("input-{}", self.next_key.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// The record with the current input requests: `input_required` while some wait,
    /// `working` otherwise.
    fn apply_pending(&self, record: &mut TaskRecord) {
        if record.status.is_terminal() {
            record.input_requests.clear();
            return;
        }
        let asked: JsonObject = self
            .pending
            .lock()
            .map(|p| p.iter().map(|(k, q)| (k.clone(), q.request.clone())).collect())
            .unwrap_or_default();
        record.status = if asked.is_empty() { TaskStatus::Working } else { TaskStatus::InputRequired };
        record.input_requests = asked;
    }

    /// Hands the task to the client: its record is stored (with the questions already asked),
    /// and from now on every change is written. Returns the record stored.
    pub(crate) async fn start(&self) -> Result<TaskRecord, TaskStoreError> {
        let mut record = self.record.lock().await;
        self.apply_pending(&mut record);
        self.store.create(&record).await?;
        self.wrote();
        self.started.store(true, Ordering::Release);
        Ok(record.clone())
    }

    /// Applies `change` to the record (unless the task is over) with the current input requests,
    /// and writes it once the task was handed to the client. One write at a time, each from the
    /// state of the moment, so the last write is the latest state.
    async fn publish(&self, change: impl FnOnce(&mut TaskRecord)) -> Result<(), TaskStoreError> {
        let mut record = self.record.lock().await;
        if record.status.is_terminal() {
            return Ok(());
        }
        change(&mut record);
        self.apply_pending(&mut record);
        record.last_updated_at_ms = now_ms().max(record.last_updated_at_ms);
        if !self.started() {
            return Ok(());
        }
        self.store.put(&record).await?;
        self.wrote();
        if let Some(on_change) = &self.on_change {
            on_change(record.clone()).await;
        }
        Ok(())
    }

    /// Notes that the record was just written.
    fn wrote(&self) {
        if let Ok(mut last) = self.last_write.lock() {
            *last = Some(tokio::time::Instant::now());
        }
    }

    /// Shows `message` as the task's `statusMessage` (the handler's progress). The record in
    /// memory changes at once; the store is written at most once per poll interval, the
    /// client's own polling pace: a change within the interval of the last write is written
    /// (and announced) when the interval ends, latest message first, unless another change
    /// of the task wrote it before. A message the record shows already writes nothing.
    pub(crate) async fn progress(self: &Arc<Self>, message: String) -> Result<(), TaskStoreError> {
        let wait = {
            let mut record = self.record.lock().await;
            if record.status.is_terminal() || record.status_message.as_deref() == Some(message.as_str()) {
                return Ok(());
            }
            record.status_message = Some(message);
            if !self.started() {
                // `start` writes it with the rest.
                return Ok(());
            }
            let last = self.last_write.lock().ok().and_then(|l| *l);
            last.map(|at| self.progress_every.saturating_sub(at.elapsed())).filter(|w| !w.is_zero())
        };
        let Some(wait) = wait else {
            return self.publish(|_| {}).await;
        };
        if !self.flush_due.swap(true, Ordering::AcqRel) {
            let run = self.clone();
            tokio::spawn(async move {
                tokio::time::sleep(wait).await;
                run.flush_due.store(false, Ordering::Release);
                if let Err(e) = run.publish(|_| {}).await {
                    tracing::warn!(error = %e, "the progress of a task could not be saved");
                }
            });
        }
        Ok(())
    }

    /// Asks the client `method` with `params` under `key`, and waits for the answer a
    /// `tasks/update` brings (at most `timeout`, and never past cancellation).
    pub(crate) async fn ask(
        &self,
        key: String,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, PeerError> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(key.clone(), Pending { request: json!({"method": method, "params": params}), answer: tx });
        }
        let unasked = |run: &Self| {
            if let Ok(mut pending) = run.pending.lock() {
                pending.remove(&key);
            }
        };
        if let Err(e) = self.publish(|_| {}).await {
            unasked(self);
            return Err(PeerError::Transport(format!("the task could not be saved: {e}")));
        }
        let wait = async {
            match timeout {
                Some(t) => tokio::time::timeout(t, rx)
                    .await
                    .map_err(|_| PeerError::Timeout { method: method.to_owned(), timeout: t }),
                None => Ok(rx.await),
            }
        };
        let outcome = tokio::select! {
            answer = wait => answer.and_then(|a| a.map_err(|_| PeerError::Closed)),
            () = self.cancel.cancelled() => Err(PeerError::Cancelled),
        };
        if outcome.is_err() {
            unasked(self);
            let _ = self.publish(|_| {}).await;
        }
        outcome
    }

    /// The input requests still waiting, by key.
    pub(crate) fn waiting(&self) -> HashMap<String, String> {
        self.pending
            .lock()
            .map(|p| {
                p.iter()
                    .map(|(k, q)| (k.clone(), q.request["method"].as_str().unwrap_or_default().to_owned()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Hands `answers` (checked by the caller) to the questions they answer; answers to keys
    /// nothing waits for are ignored. The record shows the questions still waiting once this
    /// returns.
    pub(crate) async fn answer(&self, answers: JsonObject) -> Result<(), TaskStoreError> {
        let mut delivered = Vec::new();
        if let Ok(mut pending) = self.pending.lock() {
            for (key, answer) in answers {
                if let Some(question) = pending.remove(&key) {
                    delivered.push((question.answer, answer));
                }
            }
        }
        if delivered.is_empty() {
            return Ok(());
        }
        let written = self.publish(|_| {}).await;
        for (tx, answer) in delivered {
            let _ = tx.send(answer);
        }
        written
    }

    /// Ends the task with `status`: `result` when completed, `error` when failed. Nothing
    /// changes once it is over.
    pub(crate) async fn finish(
        &self,
        status: TaskStatus,
        result: Option<Value>,
        error: Option<ErrorObject>,
    ) -> Result<(), TaskStoreError> {
        if let Ok(mut pending) = self.pending.lock() {
            pending.clear();
        }
        self.publish(|record| {
            record.status = status;
            record.result = result;
            record.error = error;
        })
        .await
    }
}

/// The tasks whose handlers run on this instance, by id.
#[derive(Debug, Default)]
pub(crate) struct TaskRuns {
    runs: Mutex<HashMap<String, Arc<TaskRun>>>,
}

impl TaskRuns {
    pub(crate) fn insert(&self, id: String, run: Arc<TaskRun>) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.insert(id, run);
        }
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<TaskRun>> {
        self.runs.lock().ok().and_then(|r| r.get(id).cloned())
    }

    pub(crate) fn remove(&self, id: &str) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.remove(id);
        }
    }

    /// Cancels every task running here: their handlers are dropped, and each ends `cancelled`.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn cancel_all(&self) {
        if let Ok(runs) = self.runs.lock() {
            runs.values().for_each(|run| run.cancel.cancel());
        }
    }

    /// How many tasks run here.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.runs.lock().map(|r| r.len()).unwrap_or(0)
    }
}
