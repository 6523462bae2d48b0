//! Tasks kept in Redis: [`RedisTaskStore`].

use std::sync::LazyLock;
use std::time::Duration;

use typed_mcp::engine::BoxFuture;
use typed_mcp::task::{TaskRecord, TaskStore, TaskStoreError, now_ms};

use crate::Redis;

/// How long a record without a `ttlMs` is kept, unless [`RedisTaskStore::unbounded_ttl`] says
/// otherwise: a day.
pub const DEFAULT_UNBOUNDED_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// The [`TaskStore`] of a deployment on Redis: every instance sees every task's status and
/// result, and the result of a finished task outlives the instance that ran it.
///
/// Each task is one key, `{prefix}:task:{id}`, holding its record as JSON and expiring when the
/// task does (its `createdAt` plus `ttlMs`); a record without a `ttlMs` expires after
/// [`unbounded_ttl`](Self::unbounded_ttl) (a day by default), so nothing is kept forever.
/// Creating a task is one `SET … NX PX`: once it returned, every instance finds the task, and an
/// id is never handed out twice. Replacing one is one script that leaves a task that ended as it
/// ended.
///
/// Built from the same [`Redis`] as the deployment's backplane, it also tells whether the
/// instance running a task is alive (its `alive` key, which its heartbeat renews for
/// [`RUNNER_GRACE`](crate::RUNNER_GRACE)), so that a task whose instance died is reported
/// `failed` instead of `working` until it expires.
#[derive(Clone, Debug)]
pub struct RedisTaskStore {
    redis: Redis,
    unbounded_ttl: Duration,
}

impl Redis {
    /// The task store on this Redis (see [`RedisTaskStore`]); give it to
    /// `ServerBuilder::task_store`.
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore { redis: self.clone(), unbounded_ttl: DEFAULT_UNBOUNDED_TTL }
    }
}

fn backend(e: impl std::error::Error + Send + Sync + 'static) -> TaskStoreError {
    TaskStoreError::Backend(Box::new(e))
}

impl RedisTaskStore {
    /// How long a record without a `ttlMs` (a server built with `task_ttl(None)`) is kept after
    /// its last write (default [`DEFAULT_UNBOUNDED_TTL`]).
    pub fn unbounded_ttl(mut self, ttl: Duration) -> Self {
        self.unbounded_ttl = ttl;
        self
    }

    fn key(&self, task_id: &str) -> String {
        self.redis.key("task", task_id)
    }

    /// How many milliseconds `record` has left to live (`None`: it expired already).
    fn remaining_ms(&self, record: &TaskRecord) -> Option<u64> {
        match record.expires_at_ms() {
            Some(at) => at.checked_sub(now_ms()).filter(|ms| *ms > 0),
            None => Some(crate::millis(self.unbounded_ttl)),
        }
    }
}

/// Replaces a record (ARGV[1], for ARGV[2] ms) unless the stored one is over: one round trip,
/// atomic.
static PUT_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local old = redis.call('GET', KEYS[1])
if old then
  local ok, stored = pcall(cjson.decode, old)
  if ok and type(stored) == 'table' then
    local s = stored['status']
    if s == 'completed' or s == 'failed' or s == 'cancelled' then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
",
    )
});

impl TaskStore for RedisTaskStore {
    fn create<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let json = serde_json::to_string(record).map_err(backend)?;
            // Past its time to live already: there is nothing to keep.
            let Some(ttl) = self.remaining_ms(record) else { return Ok(()) };
            let set: Option<String> = redis::cmd("SET")
                .arg(self.key(&record.task_id))
                .arg(json)
                .arg("NX")
                .arg("PX")
                .arg(ttl)
                .query_async(&mut self.redis.connection())
                .await
                .map_err(backend)?;
            match set {
                Some(_) => Ok(()),
                None => Err(TaskStoreError::Exists(record.task_id.clone())),
            }
        })
    }

    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async move {
            let json: Option<String> = redis::cmd("GET")
                .arg(self.key(task_id))
                .query_async(&mut self.redis.connection())
                .await
                .map_err(backend)?;
            let Some(json) = json else { return Ok(None) };
            let record: TaskRecord = serde_json::from_str(&json).map_err(backend)?;
            // Redis expires the key on its own clock; this instance's may be a little ahead.
            Ok((!record.is_expired(now_ms())).then_some(record))
        })
    }

    fn put<'a>(&'a self, record: &'a TaskRecord) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            let key = self.key(&record.task_id);
            let mut connection = self.redis.connection();
            match self.remaining_ms(record) {
                Some(ttl) => {
                    let json = serde_json::to_string(record).map_err(backend)?;
                    PUT_SCRIPT.key(key).arg(json).arg(ttl).invoke_async::<i64>(&mut connection).await.map(drop)
                }
                // Past its time to live: nothing is kept.
                None => redis::cmd("DEL").arg(key).query_async::<()>(&mut connection).await,
            }
            .map_err(backend)
        })
    }

    fn delete<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<(), TaskStoreError>> {
        Box::pin(async move {
            redis::cmd("DEL")
                .arg(self.key(task_id))
                .query_async::<()>(&mut self.redis.connection())
                .await
                .map_err(backend)
        })
    }

    fn runner_alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let mut connection = self.redis.connection();
            let alive = redis::cmd("EXISTS")
                .arg(self.redis.key("alive", instance))
                .query_async::<bool>(&mut connection)
                .await
                .map_err(backend)?;
            if alive {
                return Ok(true);
            }
            // An instance of an earlier version announces itself only with its heartbeat key.
            redis::cmd("EXISTS")
                .arg(self.redis.key("instance", instance))
                .query_async::<bool>(&mut connection)
                .await
                .map_err(backend)
        })
    }
}
