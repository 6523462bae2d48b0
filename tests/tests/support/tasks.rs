//! A tool for the task tests that runs until its task is cancelled, and tells whether its
//! handler was dropped before it finished.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use typed_mcp::prelude::*;

/// Whether the handler of `stoppable` was dropped before it finished.
#[derive(Default)]
pub struct Dropped(pub AtomicBool);

/// Sets the flag when dropped unless disarmed.
struct Guard(Arc<Dropped>, bool);

impl Drop for Guard {
    fn drop(&mut self) {
        if self.1 {
            (self.0).0.store(true, Ordering::SeqCst);
        }
    }
}

/// Runs until cancelled.
#[tool(task = "optional")]
pub async fn stoppable(dropped: State<Dropped>) -> &'static str {
    let mut guard = Guard(dropped.0.clone(), true);
    tokio::time::sleep(Duration::from_secs(600)).await;
    guard.1 = false;
    "finished"
}

/// Waits for the `notifications/tasks` that says task `id` completed, and returns its params;
/// a notification about another task fails the test.
pub async fn completion_notice(
    notifications: &mut tokio::sync::broadcast::Receiver<typed_mcp::client::ServerNotification>,
    id: &str,
    what: &str,
) -> serde_json::Value {
    tests::stdio::within(what, async {
        loop {
            match notifications.recv().await.unwrap() {
                typed_mcp::client::ServerNotification::Other { method, params: Some(params) }
                    if method == "notifications/tasks" =>
                {
                    assert_eq!(params["taskId"], id, "{params}");
                    if params["status"] == "completed" {
                        return params;
                    }
                }
                _ => {}
            }
        }
    })
    .await
}

/// Polls `tasks/get` until `done` holds for the task (at most `patience`).
pub async fn poll_until(
    client: &typed_mcp::client::Client,
    id: &str,
    patience: Duration,
    done: impl Fn(&typed_mcp::protocol::Task) -> bool,
) -> typed_mcp::protocol::Task {
    let started = std::time::Instant::now();
    loop {
        let task = client.get_task(id).await.unwrap();
        if done(&task) {
            return task;
        }
        assert!(started.elapsed() < patience, "task {id} stayed {:?}", task.status);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
