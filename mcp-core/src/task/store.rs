//! Where tasks are kept: [`TaskStore`], its records, and the in-memory default.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::BoxFuture;
use crate::protocol::{ErrorObject, JsonObject, Task, TaskStatus};

/// What a store keeps of one task: everything `tasks/get` answers with, and who may see it.
/// Plain data that serializes to JSON, so a store may keep it anywhere (a Redis value, a row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The task's id: 128 random bits, hex.
    pub task_id: String,
    /// The authenticated user whose call made the task; only they may see or touch it
    /// (`None` on a server without authentication: any client may, knowing the id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Where the task is.
    pub status: TaskStatus,
    /// A note on the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When it last changed, in milliseconds since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// How long after its creation it is kept, in milliseconds (`None`: until deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// How often clients should poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// What the task waits for, by key (status `input_required`).
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub input_requests: JsonObject,
    /// The tool's result (status `completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// What ended it (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    /// The id of the deployment instance running its handler (a server with a backplane), so
    /// that another instance can reach the handler, and tell when that instance is gone
    /// ([`TaskStore::runner_alive`]). `None` on a server of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
}

impl TaskRecord {
    /// A task just made: `working`, created now.
    pub fn new(task_id: String, owner: Option<String>, ttl_ms: Option<u64>, poll_interval_ms: Option<u64>) -> Self {
        let now = now_ms();
        TaskRecord {
            task_id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            last_updated_at_ms: now,
            ttl_ms,
            poll_interval_ms,
            input_requests: JsonObject::new(),
            result: None,
            error: None,
            runner: None,
        }
    }

    /// When the store may forget it, in milliseconds since the Unix epoch.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|ttl| self.created_at_ms.saturating_add(ttl))
    }

    /// Whether it is past its time to live at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms().is_some_and(|at| at <= now_ms)
    }

    /// The task as the wire shows it, with `inputRequests`, `result` and `error` when `detailed`
    /// (`tasks/get`), without them otherwise (the `tools/call` that made it).
    pub fn to_task(&self, detailed: bool) -> Task {
        let detailed_field = |present: bool| detailed && present;
        Task {
            task_id: self.task_id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: iso8601(self.created_at_ms),
            last_updated_at: iso8601(self.last_updated_at_ms),
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_interval_ms,
            input_requests: detailed_field(self.status == TaskStatus::InputRequired)
                .then(|| self.input_requests.clone()),
            result: if detailed_field(self.status == TaskStatus::Completed) { self.result.clone() } else { None },
            error: if detailed_field(self.status == TaskStatus::Failed) { self.error.clone() } else { None },
        }
    }
}

/// Why a store could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// [`TaskStore::create`] with an id already taken.
    #[error("a task with id `{0}` already exists")]
    Exists(String),
    /// The store's backend failed (a connection, a command, a record that does not decode).
    #[error("the task store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where a server keeps its tasks.
///
/// The server writes a task's record when it is created (before its id is sent to the client),
/// each time its status changes, and once when it ends; `tasks/get` reads it. A store shared by
/// the instances of a deployment (Redis, a database) lets any instance answer `tasks/get`, and
/// keeps the results of finished tasks across restarts. Records are plain JSON-serializable
/// data ([`TaskRecord`]); a store forgets a record once it is past
/// [`expires_at_ms`](TaskRecord::expires_at_ms) (a `get` must not return it afterwards).
///
/// The handler of a task runs on the instance that created it; what only that run can do
/// (deliver `tasks/update` answers to the waiting handler, end it on `tasks/cancel`) goes to it
/// directly (over the deployment's message bus from another instance), not through the store.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new record; fails with [`TaskStoreError::Exists`] if its id is taken. Once this
    /// completes, `get` finds it, on every instance sharing the store.
    fn create<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// The record of `task_id`, unless there is none or it expired.
    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Replaces the record with the same id (or stores it, if it is gone), unless the stored
    /// one is over (completed, failed or cancelled): a task that ended stays as it ended, so
    /// that two instances ending it at once (its runner completing it, another finding the
    /// runner gone) cannot undo each other. Atomic in a shared store.
    fn put<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// Forgets `task_id` (nothing happens if it is unknown).
    fn delete<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>>;

    /// Whether the deployment instance `instance` (a [`TaskRecord::runner`]) is still alive, as
    /// far as the store can tell: a task still `working` whose runner is gone will never finish,
    /// and `tasks/get` reports it `failed`. The default (a store that cannot tell) says yes; a
    /// store shared with a deployment's backplane checks the instance's heartbeat.
    fn runner_alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        let _ = instance;
        Box::pin(async { Ok(true) })
    }
}

/// Tasks kept in this process's memory: the default. They are lost when it exits, and other
/// instances do not see them.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    records: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many records it holds, expired ones not yet swept included.
    pub fn len(&self) -> usize {
        self.records.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn poisoned() -> TaskStoreError {
    TaskStoreError::Backend("the in-memory task store's lock is poisoned".into())
}

impl TaskStore for MemoryTaskStore {
    fn create<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut records = self.records.lock().map_err(|_| poisoned())?;
            // Expired records go when new ones come: the store never holds more than what lives,
            // plus what expired since the last task was made.
            let now = now_ms();
            records.retain(|_, r| !r.is_expired(now));
            if records.contains_key(&record.task_id) {
                return Err(TaskStoreError::Exists(record.task_id.clone()));
            }
            records.insert(record.task_id.clone(), record.clone());
            Ok(())
        })
    }

    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let records = self.records.lock().map_err(|_| poisoned())?;
            Ok(records.get(task_id).filter(|r| !r.is_expired(now_ms())).cloned())
        })
    }

    fn put<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let mut records = self.records.lock().map_err(|_| poisoned())?;
            let ended = records.get(&record.task_id).is_some_and(|r| r.status.is_terminal() && !r.is_expired(now_ms()));
            if !ended {
                records.insert(record.task_id.clone(), record.clone());
            }
            Ok(())
        })
    }

    fn delete<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            self.records.lock().map_err(|_| poisoned())?.remove(task_id);
            Ok(())
        })
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` (since the Unix epoch) as an ISO 8601 UTC timestamp with milliseconds,
/// `2026-07-28T12:34:56.789Z`.
pub fn iso8601(ms: u64) -> String {
    let days = ms / 86_400_000;
    let in_day = ms % 86_400_000;
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, milli) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60, in_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// The proleptic Gregorian date `days` days after 1970-01-01.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Counted in 400-year eras from 0000-03-01, so that a leap day ends each year.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_785_242_096_789), "2026-07-28T12:34:56.789Z");
        assert_eq!(iso8601(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    }

    #[tokio::test]
    async fn the_memory_store_keeps_records_until_they_expire() {
        let store = MemoryTaskStore::new();
        let mut record = TaskRecord::new("t1".into(), Some("alice".into()), Some(60_000), Some(500));
        store.create(&record).await.unwrap();
        assert!(matches!(store.create(&record).await, Err(TaskStoreError::Exists(id)) if id == "t1"));
        record.status = TaskStatus::Completed;
        store.put(&record).await.unwrap();
        assert_eq!(store.get("t1").await.unwrap().unwrap().status, TaskStatus::Completed);
        assert!(store.get("t2").await.unwrap().is_none());

        let mut old = TaskRecord::new("old".into(), None, Some(1), None);
        old.created_at_ms -= 10;
        store.put(&old).await.unwrap();
        assert!(store.get("old").await.unwrap().is_none(), "an expired record is not returned");
        store.create(&TaskRecord::new("t3".into(), None, None, None)).await.unwrap();
        assert_eq!(store.len(), 2, "creating a task sweeps the expired ones");
        store.delete("t1").await.unwrap();
        assert!(store.get("t1").await.unwrap().is_none());
    }

    #[test]
    fn records_round_trip_through_json() {
        let mut record = TaskRecord::new("t".into(), None, None, Some(250));
        record.status = TaskStatus::InputRequired;
        record.input_requests.insert("input-0".into(), serde_json::json!({"method": "elicitation/create"}));
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), record);
        let wire = serde_json::to_value(record.to_task(true)).unwrap();
        assert_eq!(wire["status"], "input_required");
        assert_eq!(wire["ttlMs"], Value::Null);
        assert!(wire["inputRequests"]["input-0"].is_object());
        assert!(serde_json::to_value(record.to_task(false)).unwrap().get("inputRequests").is_none());
    }
}
