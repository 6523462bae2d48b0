//! Load, at test scale: many HTTP sessions at once, each running a tool that elicits, all
//! questions pending together and answered concurrently. Every session gets its own correct
//! result, none is lost, and once they end nothing is left (sessions, request streams, the
//! peer's pending requests). `MCP_LOAD_SESSIONS` sets the count (default 100); the full scale
//! (1,000 sessions and more, with timings) belongs to the benchmark harness in `bench/`.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::http::{Endpoint, text_of};
use tests::stdio::within;
use tokio::sync::Barrier;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks for a name and says whose it is.
#[tool]
async fn ask(ctx: Context, tag: String) -> String {
    match ctx.elicit::<Name>(format!("name for {tag}?")).await {
        Ok(Elicitation::Accept(n)) => format!("{tag}: {}", n.name),
        Ok(_) => format!("{tag}: refused"),
        Err(e) => format!("{tag}: failed: {e}"),
    }
}

fn sessions() -> usize {
    std::env::var("MCP_LOAD_SESSIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(100)
}

/// This process's resident memory in bytes (Linux), if known.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sessions_elicit_at_once_and_each_gets_its_own_answer() {
    let n = sessions();
    let server = Server::builder("load", "1.0.0").tools(tools![ask]).build().unwrap();
    let endpoint = Arc::new(Endpoint::serve(&server, HttpConfig::default()).await);
    let http = endpoint.transport().clone();
    let before = resident_bytes();
    let started = Instant::now();
    // Every question is asked before any is answered.
    let all_asked = Arc::new(Barrier::new(n + 1));
    let answer_now = Arc::new(Barrier::new(n + 1));
    let mut tasks = Vec::new();
    for i in 0..n {
        let endpoint = endpoint.clone();
        let (all_asked, answer_now) = (all_asked.clone(), answer_now.clone());
        tasks.push(tokio::spawn(async move {
            let session = endpoint.session(json!({"elicitation": {"form": {}}})).await;
            let tag = format!("session-{i}");
            let (id, mut reply) = session.start("tools/call", json!({"name": "ask", "arguments": {"tag": tag}})).await;
            let question = reply.message().await;
            assert_eq!(question["params"]["message"], format!("name for {tag}?"));
            all_asked.wait().await;
            answer_now.wait().await;
            session.answer(&question, json!({"action": "accept", "content": {"name": format!("user-{i}")}})).await;
            let response = reply.message().await;
            assert_eq!(response["id"], id);
            let text = text_of(&response["result"]);
            assert_eq!(session.delete().await, reqwest::StatusCode::OK);
            text
        }));
    }
    within("every question to be asked", all_asked.wait()).await;
    assert_eq!(http.session_count(), n);
    assert_eq!(http.request_streams(), n, "one request in flight per session");
    answer_now.wait().await;
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(within("a session to finish", task).await.expect("a session task"));
    }
    let elapsed = started.elapsed();
    for (i, text) in answers.iter().enumerate() {
        assert_eq!(text, &format!("session-{i}: user-{i}"), "a session got another's answer, or none");
    }
    within("every session to end", async {
        while http.session_count() != 0 || http.request_streams() != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    if let (Some(before), Some(after)) = (before, resident_bytes()) {
        let grown = after.saturating_sub(before);
        assert!(grown < 256 << 20, "memory grew by {grown} bytes over {n} sessions");
        println!("{n} sessions in {elapsed:?}; resident memory grew by {} KiB", grown / 1024);
    }
}
