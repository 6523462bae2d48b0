//! A server over newline-delimited JSON-RPC: the `quickstart` example as a child process over
//! real stdio, and servers in this process over `tokio::io::duplex`.

use std::io;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::stdio::{LineClient, ServerProcess, error_code, error_message, within};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use typed_mcp::prelude::*;

const INVALID_REQUEST: i64 = -32600;

/// What a prompt answer means here: well under the tests' patience, generous for a loaded machine.
const PROMPTLY: Duration = Duration::from_secs(5);

// ---------------------------------------------------------------------------------------------
// The in-process server.

/// Lets a test see what the tools are doing.
struct Probe {
    started: mpsc::UnboundedSender<String>,
    stopped: mpsc::UnboundedSender<String>,
}

/// Reports its tag on `stopped` when dropped: the handler's future is gone.
struct Stopped(mpsc::UnboundedSender<String>, String);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.send(self.1.clone());
    }
}

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Counts to `steps`, reporting progress at each step (and trying to report a step back, and
/// the same step twice, which must not reach the client).
#[tool]
async fn count(ctx: Context, steps: u32) -> String {
    let total = Some(f64::from(steps));
    for step in 1..=steps {
        let step = f64::from(step);
        ctx.progress(step, total, Some("counting")).await.expect("progress");
        ctx.progress(step - 0.5, total, Some("going back")).await.expect("progress");
        ctx.progress(step, total, Some("standing still")).await.expect("progress");
    }
    format!("counted to {steps}")
}

/// Waits until the call is cancelled.
#[tool]
async fn wait_for_cancel(ctx: Context, probe: State<Probe>, tag: String) -> String {
    let _stopped = Stopped(probe.stopped.clone(), tag.clone());
    let _ = probe.started.send(tag.clone());
    ctx.cancelled().await;
    format!("{tag} noticed its cancellation")
}

/// Hands its context to a background task that outlives the call.
#[tool]
async fn linger(ctx: Context) -> &'static str {
    tokio::spawn(async move {
        let _kept = ctx;
        std::future::pending::<()>().await;
    });
    "left a task behind"
}

struct InProcess {
    client: LineClient,
    server: JoinHandle<io::Result<()>>,
    started: mpsc::UnboundedReceiver<String>,
    stopped: mpsc::UnboundedReceiver<String>,
}

impl InProcess {
    fn start(configure: impl FnOnce(typed_mcp::ServerBuilder) -> typed_mcp::ServerBuilder) -> Self {
        let (started_tx, started) = mpsc::unbounded_channel();
        let (stopped_tx, stopped) = mpsc::unbounded_channel();
        let builder = Server::builder("stdio-test-server", "3.1.4")
            .title("Stdio test server")
            .tools(tools![add, count, wait_for_cancel, linger])
            .state(Probe { started: started_tx, stopped: stopped_tx });
        let server = configure(builder).build().expect("the test server builds");
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_end);
        let server = tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        let (client_read, client_write) = tokio::io::split(client_end);
        InProcess { client: LineClient::new(client_read, client_write), server, started, stopped }
    }

    fn new() -> Self {
        Self::start(|b| b)
    }

    async fn started(&mut self) -> String {
        within("a tool to start", self.started.recv()).await.expect("probe dropped")
    }

    async fn stopped(&mut self) -> String {
        within("a tool to stop", self.stopped.recv()).await.expect("probe dropped")
    }

    /// Closes the server's input and returns what it still wrote; the server must end cleanly.
    async fn finish(mut self) -> Vec<Value> {
        self.client.close_input().await;
        let rest = self.client.rest().await;
        within("serve_io to return", self.server).await.expect("server task").expect("serve_io");
        rest
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers. (Malformed and hostile input: the catalog in `bad_input.rs`.)

/// Sends `line`, expects an error response with `code` and `id`, then checks the session serves.
async fn expect_error(c: &mut LineClient, line: &str, code: i64, id: Value) -> Value {
    c.send_line(line).await;
    let response = c.recv().await;
    assert_eq!(error_code(&response), code, "for {line}: {response}");
    assert_eq!(response["id"], id, "for {line}: {response}");
    assert!(response.get("result").is_none(), "{response}");
    c.assert_serving().await;
    response
}

// ---------------------------------------------------------------------------------------------
// In-process tests.

#[tokio::test]
async fn initialize_negotiates_the_protocol_version() {
    for (asked, agreed) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", "2025-11-25"),
        ("2024-10-07", "2025-11-25"),
        ("", "2025-11-25"),
    ] {
        let mut s = InProcess::new();
        let result = s.client.initialize(asked).await;
        assert_eq!(result["protocolVersion"], agreed, "client asked for {asked:?}: {result}");
        s.client.assert_serving().await;
        s.finish().await;
    }
}

#[tokio::test]
async fn initialize_reports_the_server_identity_and_tools() {
    let mut s = InProcess::start(|b| b.instructions("Use add."));
    let result = s.client.initialize("2025-06-18").await;
    assert_eq!(
        result["serverInfo"],
        json!({"name": "stdio-test-server", "title": "Stdio test server", "version": "3.1.4"})
    );
    assert_eq!(result["instructions"], "Use add.");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    let tools = s.client.result("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "count", "wait_for_cancel", "linger"]);
    let wait = &tools["tools"][2]["inputSchema"];
    assert_eq!(wait["required"], json!(["tag"]), "injected arguments are not in the schema: {wait}");
    s.finish().await;
}

#[tokio::test]
async fn progress_is_sent_only_with_a_token_and_only_increases() {
    let mut s = InProcess::new();
    s.client.initialize("2025-11-25").await;

    for token in [json!("progress-1"), json!(7)] {
        let (response, before) = s
            .client
            .request_collect(
                "tools/call",
                json!({"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": token}}),
            )
            .await;
        assert_eq!(response["result"]["content"][0]["text"], "counted to 3", "{response}");
        let mut progress = Vec::new();
        for n in &before {
            assert_eq!(n["method"], "notifications/progress", "{n}");
            assert!(n.get("id").is_none(), "{n}");
            assert_eq!(n["params"]["progressToken"], token, "{n}");
            assert_eq!(n["params"]["total"], 3.0, "{n}");
            assert_eq!(n["params"]["message"], "counting", "{n}");
            progress.push(n["params"]["progress"].as_f64().unwrap());
        }
        assert_eq!(progress, [1.0, 2.0, 3.0], "each notification must increase the progress");
    }

    // No token, no notifications (`request` fails on anything before the response).
    let result = s.client.result("tools/call", json!({"name": "count", "arguments": {"steps": 3}})).await;
    assert_eq!(result["content"][0]["text"], "counted to 3");
    let result =
        s.client.result("tools/call", json!({"name": "count", "arguments": {"steps": 2}, "_meta": {"other": 1}})).await;
    assert_eq!(result["content"][0]["text"], "counted to 2");
    assert_eq!(s.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn cancelling_a_tool_call_stops_its_handler_and_sends_nothing_for_it() {
    let mut s = InProcess::new();
    s.client.initialize("2025-11-25").await;
    s.client.send_request("slow-1", "tools/call", json!({"name": "wait_for_cancel", "arguments": {"tag": "a"}})).await;
    s.client.send_request(77, "tools/call", json!({"name": "wait_for_cancel", "arguments": {"tag": "b"}})).await;
    let mut started = vec![s.started().await, s.started().await];
    started.sort();
    assert_eq!(started, ["a", "b"]);

    s.client.notify("notifications/cancelled", json!({"requestId": "slow-1", "reason": "changed my mind"})).await;
    assert_eq!(s.stopped().await, "a");
    s.client.assert_serving().await;
    s.client.notify("notifications/cancelled", json!({"requestId": 77})).await;
    assert_eq!(s.stopped().await, "b");
    s.client.assert_serving().await;

    let rest = s.finish().await;
    assert_eq!(rest, Vec::<Value>::new(), "cancelled calls get no response");
}

#[tokio::test]
async fn eof_with_nothing_in_flight_ends_serve_io() {
    let mut s = InProcess::new();
    s.client.initialize("2025-11-25").await;
    s.client.assert_serving().await;
    assert_eq!(s.finish().await, Vec::<Value>::new());
    // Even before anything was said.
    assert_eq!(InProcess::new().finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn eof_with_a_handler_in_flight_cancels_it_and_ends_serve_io() {
    let mut s = InProcess::new();
    s.client.initialize("2025-11-25").await;
    s.client.send_request(1, "tools/call", json!({"name": "wait_for_cancel", "arguments": {"tag": "eof"}})).await;
    assert_eq!(s.started().await, "eof");
    s.client.close_input().await;
    assert_eq!(s.stopped().await, "eof");
    assert_eq!(s.finish().await, Vec::<Value>::new(), "the cancelled call gets no response");
}

#[tokio::test]
async fn eof_ends_serve_io_even_if_a_task_still_holds_a_context() {
    let mut s = InProcess::new();
    s.client.initialize("2025-11-25").await;
    let result = s.client.result("tools/call", json!({"name": "linger", "arguments": {}})).await;
    assert_eq!(result["content"][0]["text"], "left a task behind");
    assert_eq!(s.finish().await, Vec::<Value>::new());
}

#[tokio::test]
async fn an_over_long_line_is_rejected_and_the_next_line_works() {
    const LIMIT: usize = 1024;
    let mut s = InProcess::start(|b| b.max_message_size(LIMIT));
    s.client.initialize("2025-11-25").await;

    // A valid request, too long: its id cannot be known without buffering it.
    let padding = "x".repeat(64 * LIMIT);
    let long = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"padding": padding}}});
    let response = expect_error(&mut s.client, &long.to_string(), INVALID_REQUEST, Value::Null).await;
    assert!(error_message(&response).contains(&LIMIT.to_string()), "{response}");

    // Garbage over the limit, sent in pieces, followed at once by a good line in the same write.
    let garbage = vec![b'{'; 10 * LIMIT];
    for piece in garbage.chunks(LIMIT / 3) {
        s.client.send_bytes(piece).await;
    }
    s.client.send_bytes(b"\n{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"ping\"}\n").await;
    let response = s.client.recv().await;
    assert_eq!((error_code(&response), response["id"].clone()), (INVALID_REQUEST, Value::Null), "{response}");
    assert_eq!(s.client.recv().await, json!({"jsonrpc": "2.0", "id": "after", "result": {}}));

    // Exactly at the limit is fine.
    let ping = json!({"jsonrpc": "2.0", "id": "edge", "method": "ping", "params": {"_meta": {"p": ""}}}).to_string();
    let fill = "y".repeat(LIMIT - ping.len());
    let ping = ping.replace("\"p\":\"\"", &format!("\"p\":\"{fill}\""));
    assert_eq!(ping.len(), LIMIT);
    s.client.send_line(&ping).await;
    assert_eq!(s.client.recv().await, json!({"jsonrpc": "2.0", "id": "edge", "result": {}}));
    s.client.assert_serving().await;
    s.finish().await;
}

// ---------------------------------------------------------------------------------------------
// The quickstart example over real stdio.

#[tokio::test]
async fn quickstart_initializes_and_calls_its_tools() {
    let mut p = ServerProcess::quickstart(&[]);
    assert_eq!(p.client.result("ping", json!({})).await, json!({}));
    let result = p.client.initialize("2024-11-05").await;
    assert_eq!(result["protocolVersion"], "2024-11-05");
    assert_eq!(result["serverInfo"]["name"], "quickstart");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    let tools = p.client.result("tools/list", json!({})).await;
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "echo", "text_stats"]);
    let echoed = p.client.result("tools/call", json!({"name": "echo", "arguments": {"text": "a\nb ü"}})).await;
    assert_eq!(echoed["content"][0]["text"], "a\nb ü");
    let stats = p.client.result("tools/call", json!({"name": "text_stats", "arguments": {"text": "a b\nc"}})).await;
    assert_eq!(stats["structuredContent"], json!({"characters": 5, "words": 3, "lines": 2}));
    let overflow = p.client.result("tools/call", json!({"name": "add", "arguments": {"a": i64::MAX, "b": 1}})).await;
    assert_eq!(overflow["isError"], true, "a tool error is a result, not a protocol error: {overflow}");
    assert_eq!(p.client.result("ping", json!({})).await, json!({}));
    let (status, rest, stderr) = p.finish().await;
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    assert_eq!(rest, Vec::<Value>::new());
}

#[tokio::test]
async fn quickstart_exits_zero_promptly_at_eof() {
    // Right away, and after a session.
    for initialize in [false, true] {
        let mut p = ServerProcess::quickstart(&[]);
        if initialize {
            p.client.initialize("2025-11-25").await;
            p.client.assert_serving().await;
        }
        let closed = Instant::now();
        let (status, rest, stderr) = p.finish().await;
        assert!(closed.elapsed() < PROMPTLY, "exit took {:?}", closed.elapsed());
        assert_eq!(status.code(), Some(0), "stderr:\n{stderr}");
        assert_eq!(rest, Vec::<Value>::new());
    }
}

#[tokio::test]
async fn quickstart_answers_a_script_piped_in_before_eof() {
    // Like `printf '…' | quickstart`: every request is read before the input ends, and handlers
    // that answer at once must be answered before the process exits. Repeated because the
    // failure this guards against depended on scheduling.
    let script = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "script", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    ]
    .iter()
    .map(|m| format!("{m}\n"))
    .collect::<String>();
    for _ in 0..10 {
        let mut p = ServerProcess::quickstart(&[]);
        p.client.send_bytes(script.as_bytes()).await;
        let (status, rest, stderr) = p.finish().await;
        assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
        let mut ids: Vec<i64> = rest.iter().map(|m| m["id"].as_i64().unwrap()).collect();
        ids.sort_unstable();
        assert_eq!(ids, [1, 2, 3], "every request is answered: {rest:?}");
        let sum = rest.iter().find(|m| m["id"] == 2).unwrap();
        assert_eq!(sum["result"]["content"][0]["text"], "3", "{sum}");
    }
}

#[tokio::test]
async fn quickstart_answers_every_request_of_a_pipelined_burst() {
    const N: i64 = 500;
    let mut p = ServerProcess::quickstart(&[]);
    p.client.initialize("2025-11-25").await;
    let burst: String = (0..N)
        .map(|i| {
            let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": i, "b": 1}}});
            format!("{call}\n")
        })
        .collect();
    p.client.send_bytes(burst.as_bytes()).await;
    let mut seen = vec![false; N as usize];
    for _ in 0..N {
        let response = p.client.recv().await;
        let id = response["id"].as_i64().unwrap_or_else(|| panic!("{response}"));
        assert_eq!(response["result"]["content"][0]["text"], (id + 1).to_string(), "{response}");
        assert!(!std::mem::replace(&mut seen[id as usize], true), "id {id} answered twice");
    }
    let (status, rest, stderr) = p.finish().await;
    assert!(status.success(), "stderr:\n{stderr}");
    assert_eq!(rest, Vec::<Value>::new());
}

#[tokio::test]
async fn quickstart_rejects_a_line_over_the_default_limit() {
    let mut p = ServerProcess::quickstart(&[]);
    p.client.initialize("2025-11-25").await;
    let line = format!("\"{}\"", "z".repeat(typed_mcp::transport::DEFAULT_MAX_LINE));
    p.client.send_line(&line).await;
    let response = p.client.recv().await;
    assert_eq!((error_code(&response), response["id"].clone()), (INVALID_REQUEST, Value::Null), "{response}");
    p.client.assert_serving().await;
    let (status, _, stderr) = p.finish().await;
    assert!(status.success(), "stderr:\n{stderr}");
}
