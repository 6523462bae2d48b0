//! Tasks on a shared deployment, with a real Redis (a `redis-server` of each test's own, on a
//! free loopback port, persisting nothing).
//!
//! - `RedisTaskStore` keeps the task store contract, expires its records with the task's
//!   `ttlMs`, and tells a live instance from one whose heartbeat lapsed.

use std::time::Duration;

use mcp_core::task::{TaskRecord, TaskStore};
use mcp_redis::Redis;
use mcp_redis::testing::{RedisServer, keys};

#[tokio::test]
async fn the_redis_store_keeps_the_task_store_contract() {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("c");
    mcp_core::testing::assert_task_store_contract(&redis.task_store()).await;
    assert!(keys(&server.url(), "c:*").await.is_empty(), "the contract deletes what it made");
}

#[tokio::test]
async fn task_records_expire_in_redis_with_the_task() {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("e");
    let store = redis.task_store().unbounded_ttl(Duration::from_millis(300));
    store.create(&TaskRecord::new("short".into(), None, Some(300), None)).await.unwrap();
    store.create(&TaskRecord::new("long".into(), None, Some(60_000), None)).await.unwrap();
    store.create(&TaskRecord::new("unbounded".into(), None, None, None)).await.unwrap();
    let mut found = keys(&server.url(), "e:task:*").await;
    found.sort();
    assert_eq!(found, ["e:task:long", "e:task:short", "e:task:unbounded"]);
    // Another connection (another instance) finds what one created.
    let other = Redis::connect(&server.url()).unwrap().with_prefix("e").task_store();
    assert!(other.get("short").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(keys(&server.url(), "e:task:*").await, ["e:task:long"], "Redis forgets a task when it expires");
    // A put keeps the record's expiry: it does not live longer for having changed.
    let mut record = TaskRecord::new("kept".into(), None, Some(400), None);
    store.create(&record).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    record.status = mcp_core::protocol::TaskStatus::Completed;
    store.put(&record).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(store.get("kept").await.unwrap().is_none(), "the record expired 400 ms after its creation");
    assert_eq!(keys(&server.url(), "e:task:*").await, ["e:task:long"]);
}

#[tokio::test]
async fn the_redis_store_tells_a_live_instance_from_a_lapsed_one() {
    use mcp_core::transport::http::SessionRegistry;
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).unwrap().with_prefix("h");
    let store = redis.task_store();
    assert!(!store.runner_alive("a").await.unwrap(), "an instance never seen is not alive");
    redis
        .sessions()
        .heartbeat("a", "http://a/mcp", Duration::from_millis(300), &[], Duration::from_secs(5))
        .await
        .unwrap();
    assert!(store.runner_alive("a").await.unwrap());
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert!(!store.runner_alive("a").await.unwrap(), "its heartbeat lapsed");
}
