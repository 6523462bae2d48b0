//! A tool for the task tests that runs until its task is cancelled, and tells whether its
//! handler was dropped before it finished.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_core::prelude::*;

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
