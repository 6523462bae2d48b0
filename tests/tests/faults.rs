//! Faults: a client that goes away while a tool awaits its answer (end of stdin; an HTTP
//! connection dropped), answers that come late, twice or for nothing, a client that stops
//! reading, a tool that panics, and an elicitation that times out. In each case the server ends
//! what it must promptly, keeps nothing behind (counted: the peer's pending requests, the
//! HTTP transport's sessions and request streams, the URL elicitations), holds memory within
//! its bounds, and goes on serving.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::http::{Endpoint, Reply, text_of};
use tests::stdio::{LineClient, error_code, within};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;
use typed_mcp::{Peer, Server};

/// What the tools report: how their waits ended, and the peer they ran with.
#[derive(Default)]
struct Reports {
    events: Mutex<Option<mpsc::UnboundedSender<String>>>,
    peer: Mutex<Option<Peer>>,
}

impl Reports {
    fn send(&self, what: String) {
        if let Some(tx) = self.events.lock().unwrap().as_ref() {
            let _ = tx.send(what);
        }
    }

    fn subscribe(&self) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.events.lock().unwrap() = Some(tx);
        rx
    }

    fn peer(&self) -> Peer {
        self.peer.lock().unwrap().clone().expect("a tool ran")
    }
}

/// Reports `"<tag> dropped"` when the handler's future is dropped before it finished.
struct DropReport(Arc<Reports>, &'static str, bool);

impl Drop for DropReport {
    fn drop(&mut self) {
        if !self.2 {
            self.0.send(format!("{} dropped", self.1));
        }
    }
}

#[derive(Deserialize, JsonSchema, Elicit)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks for a name; reports how the wait ended.
#[tool]
async fn ask(ctx: Context, reports: State<Reports>) -> String {
    *reports.peer.lock().unwrap() = Some(ctx.peer().clone());
    let mut guard = DropReport(reports.0.clone(), "ask", false);
    let answer = ctx.elicit::<Name>("Who are you?").await;
    guard.2 = true;
    let what = match answer {
        Ok(Elicitation::Accept(n)) => format!("hello {}", n.name),
        Ok(_) => "no name".to_owned(),
        Err(e) => format!("ask failed: {e}"),
    };
    reports.send(what.clone());
    what
}

/// Sends the user to a page (URL mode); reports how the wait ended.
#[tool]
async fn visit(ctx: Context, reports: State<Reports>) -> String {
    let mut guard = DropReport(reports.0.clone(), "visit", false);
    let answer = ctx.elicit_url("https://example.test/flow?id={elicitationId}", "Go there").await;
    guard.2 = true;
    let what = format!("visit ended: {:?}", answer.map(|a| a.accepted().is_some()).map_err(|e| e.to_string()));
    reports.send(what.clone());
    what
}

/// Asks with a short timeout.
#[tool]
async fn ask_briefly(ctx: Context) -> String {
    match ctx.elicit::<Name>("Quick!").timeout(Duration::from_millis(200)).await {
        Ok(_) => "answered".into(),
        Err(ElicitError::Timeout(_)) => "timed out".into(),
        Err(e) => format!("other error: {e}"),
    }
}

/// Sends `text` back.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Sends `count` log messages of `size` bytes, then answers.
#[tool]
async fn chatter(ctx: Context, count: usize, size: usize) -> String {
    let filler = "x".repeat(size);
    for n in 0..count {
        ctx.info(format!("{n} {filler}")).await;
    }
    format!("sent {count}")
}

/// Panics at once.
#[tool]
fn boom() -> String {
    panic!("boom at once")
}

/// Panics after waiting.
#[tool]
async fn boom_later() -> String {
    tokio::time::sleep(Duration::from_millis(10)).await;
    panic!("boom later")
}

/// Adds two integers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn server() -> (Server, Arc<Reports>) {
    let reports = Arc::new(Reports::default());
    let server = Server::builder("faults", "1.0.0")
        .default_log_level(LoggingLevel::Info)
        .tools(tools![ask, visit, ask_briefly, echo, chatter, boom, boom_later, add])
        .state_arc(reports.clone())
        .build()
        .expect("the server builds");
    (server, reports)
}

fn capable() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}})
}

/// A session over an in-memory pipe of `buffer` bytes; returns the client and the server's task.
async fn connect(server: &Server, buffer: usize) -> (LineClient, tokio::task::JoinHandle<std::io::Result<()>>) {
    let (client_io, server_io) = tokio::io::duplex(buffer);
    let (read, write) = tokio::io::split(server_io);
    let serving = server.clone();
    let task = tokio::spawn(async move { serving.serve_io(read, write).await });
    let (read, write) = tokio::io::split(client_io);
    let mut client = LineClient::new(read, write);
    client
        .result(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capable(), "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    client.notify("notifications/initialized", json!({})).await;
    (client, task)
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    within(what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// The client goes away.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn end_of_stdin_while_tools_await_answers_ends_them_and_leaves_nothing() {
    let (server, reports) = server();
    let mut events = reports.subscribe();
    let (mut client, serving) = connect(&server, 64 * 1024).await;
    client.send_request(1, "tools/call", json!({"name": "ask", "arguments": {}})).await;
    assert_eq!(client.recv().await["method"], "elicitation/create");
    client.send_request(2, "tools/call", json!({"name": "visit", "arguments": {}})).await;
    assert_eq!(client.recv().await["params"]["mode"], "url");
    let peer = reports.peer();
    assert_eq!(peer.pending_count(), 2);
    assert_eq!(server.url_elicitations().len(), 1);

    client.close_input().await;
    within("serve_io to return at end of input", serving).await.unwrap().unwrap();
    let mut ended = vec![within("a tool to end", events.recv()).await.unwrap()];
    ended.push(within("a tool to end", events.recv()).await.unwrap());
    ended.sort();
    // Each handler either saw the connection close or was cancelled; neither waits any longer.
    for (what, tool) in ended.iter().zip(["ask", "visit"]) {
        assert!(what.starts_with(tool) && (what.contains("dropped") || what.contains("closed")), "{ended:?}");
    }
    assert_eq!(peer.pending_count(), 0);
    assert!(peer.is_closed());
    assert_eq!(server.url_elicitations().len(), 0, "the session's URL flows are forgotten");
    // Nothing was answered after the end.
    assert_eq!(client.rest().await, Vec::<Value>::new());
}

#[tokio::test]
async fn a_dropped_http_connection_ends_a_tool_awaiting_an_answer_once_nobody_resumes_it() {
    let (server, reports) = server();
    let mut events = reports.subscribe();
    let config = HttpConfig::default().keep_alive(Duration::from_millis(20)).resume_window(Duration::from_millis(300));
    let endpoint = Endpoint::serve(&server, config).await;
    let http = endpoint.transport().clone();
    let session = endpoint.session(capable()).await;

    let (_, mut asking) = session.start("tools/call", json!({"name": "ask", "arguments": {}})).await;
    assert_eq!(asking.message().await["method"], "elicitation/create");
    let (_, mut visiting) = session.start("tools/call", json!({"name": "visit", "arguments": {}})).await;
    assert_eq!(visiting.message().await["params"]["mode"], "url");
    let peer = reports.peer();
    assert_eq!((peer.pending_count(), http.request_streams(), server.url_elicitations().len()), (2, 2, 1));

    // The client's connections drop, and nobody comes back for the requests.
    drop(asking);
    drop(visiting);
    let mut ended = vec![within("a tool to end", events.recv()).await.unwrap()];
    ended.push(within("a tool to end", events.recv()).await.unwrap());
    ended.sort();
    assert_eq!(ended, ["ask dropped", "visit dropped"]);
    until("the request streams to go", || http.request_streams() == 0).await;
    assert_eq!(peer.pending_count(), 0, "the questions were withdrawn");
    // The session itself lives on (its client may still use it), and serves.
    assert_eq!(session.call("add", json!({"a": 2, "b": 40})).await["content"][0]["text"], "42");
    assert_eq!(http.session_count(), 1);
    assert_eq!(session.delete().await, StatusCode::OK);
    assert_eq!((http.session_count(), server.url_elicitations().len()), (0, 0));
}

#[tokio::test]
async fn a_client_that_vanishes_leaves_nothing_once_its_session_is_idle() {
    let (server, reports) = server();
    let mut events = reports.subscribe();
    let config = HttpConfig::default()
        .keep_alive(Duration::from_millis(20))
        .resume_window(Duration::from_millis(200))
        .idle_timeout(Duration::from_millis(300));
    let endpoint = Endpoint::serve(&server, config).await;
    let http = endpoint.transport().clone();
    let session = endpoint.session(capable()).await;
    let (_, mut visiting) = session.start("tools/call", json!({"name": "visit", "arguments": {}})).await;
    assert_eq!(visiting.message().await["params"]["mode"], "url");
    assert_eq!(server.url_elicitations().len(), 1);
    drop(visiting);
    drop(session);
    assert_eq!(within("the tool to end", events.recv()).await.unwrap(), "visit dropped");
    until("the session to expire", || http.session_count() == 0).await;
    assert_eq!((http.request_streams(), server.url_elicitations().len()), (0, 0));
}

#[tokio::test]
async fn a_resumed_stream_keeps_its_request_past_the_window() {
    let (server, _) = server();
    let config = HttpConfig::default().keep_alive(Duration::from_millis(20)).resume_window(Duration::from_secs(1));
    let endpoint = Endpoint::serve(&server, config).await;
    let session = endpoint.session(capable()).await;
    let (id, reply) = session.start("tools/call", json!({"name": "ask", "arguments": {}})).await;
    let Reply::Sse(mut sse) = reply else { panic!("an SSE stream was expected") };
    let event = within("the question", sse.next()).await.unwrap();
    let question = event.message();
    drop(sse);
    // Back at once; then well past the window, the request still waits for its answer.
    let resumed = session.get().header("last-event-id", event.id.as_deref().unwrap()).send().await.unwrap();
    let mut resumed = support::http::Sse::new(resumed);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    session.answer(&question, json!({"action": "accept", "content": {"name": "Ada"}})).await;
    let response = resumed.message().await;
    assert_eq!((&response["id"], text_of(&response["result"])), (&json!(id), "hello Ada".to_owned()));
}

// ---------------------------------------------------------------------------------------------
// Answers that come late, twice, or for nothing; a timeout.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_timeout_fires_and_late_duplicate_and_unknown_answers_are_ignored() {
    let (server, _) = server();
    let (mut client, _serving) = connect(&server, 64 * 1024).await;
    client.send_request(1, "tools/call", json!({"name": "ask_briefly", "arguments": {}})).await;
    let question = client.recv().await;
    assert_eq!(question["method"], "elicitation/create");
    // No answer: the tool sees its timeout, and the question is withdrawn.
    let withdrawn = client.recv().await;
    assert_eq!(withdrawn["method"], "notifications/cancelled", "{withdrawn}");
    assert_eq!(withdrawn["params"]["requestId"], question["id"]);
    let response = client.recv().await;
    assert_eq!((&response["id"], text_of(&response["result"])), (&json!(1), "timed out".to_owned()));
    // The answer arrives late, then again, then one for a question never asked.
    let late = json!({"action": "accept", "content": {"name": "late"}});
    for id in [question["id"].clone(), question["id"].clone(), json!(987_654)] {
        client.send(&json!({"jsonrpc": "2.0", "id": id, "result": late})).await;
    }
    client.send(&json!({"jsonrpc": "2.0", "id": question["id"], "error": {"code": 1, "message": "late"}})).await;
    // Nothing comes of them: the next message is the answer to the next call.
    assert_eq!(text_of(&client.result("tools/call", json!({"name": "add", "arguments": {"a": 1, "b": 2}})).await), "3");
}

#[tokio::test]
async fn an_elicitation_timeout_over_http_reaches_the_tool() {
    let (server, _) = server();
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    let session = endpoint.session(capable()).await;
    let (id, mut reply) = session.start("tools/call", json!({"name": "ask_briefly", "arguments": {}})).await;
    let question = reply.message().await;
    assert_eq!(question["method"], "elicitation/create");
    let withdrawn = reply.message().await;
    assert_eq!(withdrawn["method"], "notifications/cancelled");
    let response = reply.message().await;
    assert_eq!((&response["id"], text_of(&response["result"])), (&json!(id), "timed out".to_owned()));
    let late = session.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})).await;
    assert_eq!(late.status(), StatusCode::ACCEPTED, "a late answer is accepted and ignored");
    assert_eq!(endpoint.transport().request_streams(), 0);
}

// ---------------------------------------------------------------------------------------------
// A client that stops reading.
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_held_back_and_others_are_still_served() {
    const SENT: usize = 50_000;
    let (server, _) = server();
    // The stalled client: initialized, then writing requests without ever reading.
    let (client_io, server_io) = tokio::io::duplex(4096);
    let (read, write) = tokio::io::split(server_io);
    let serving = server.clone();
    tokio::spawn(async move { serving.serve_io(read, write).await });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut client_read = BufReader::new(client_read);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    client_write.write_all(format!("{init}\n").as_bytes()).await.unwrap();
    let mut line = String::new();
    client_read.read_line(&mut line).await.unwrap();
    let written = Arc::new(AtomicUsize::new(0));
    let writer = tokio::spawn({
        let written = written.clone();
        async move {
            for n in 1..=SENT {
                let call = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "some text to send back"}}});
                client_write.write_all(format!("{call}\n").as_bytes()).await.unwrap();
                written.store(n, Ordering::Relaxed);
            }
            client_write
        }
    });

    // The server stops taking requests once its bounded queues are full: the writer stalls.
    let stalled_at = within("the writer to stall", async {
        let mut last = 0;
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let now = written.load(Ordering::Relaxed);
            assert!(now < SENT, "the server read all {SENT} requests while nobody read a response");
            if now == last && now > 0 {
                return now;
            }
            last = now;
        }
    })
    .await;
    let tasks = tokio::runtime::Handle::current().metrics().num_alive_tasks();
    assert!(tasks < 4096, "{tasks} tasks alive with {stalled_at} requests unanswered");

    // Another client of the same server is served meanwhile.
    let (mut other, _other_serving) = connect(&server, 64 * 1024).await;
    for n in 0..20 {
        let sum = other.result("tools/call", json!({"name": "add", "arguments": {"a": n, "b": 1}})).await;
        assert_eq!(text_of(&sum), (n + 1).to_string());
    }

    // Once the stalled client reads, everything is answered, in full.
    let mut answered = 0;
    within("every answer", async {
        while answered < SENT {
            line.clear();
            client_read.read_line(&mut line).await.unwrap();
            let response: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(text_of(&response["result"]), "some text to send back");
            answered += 1;
        }
    })
    .await;
    within("the writer to finish", writer).await.unwrap();
}

#[tokio::test]
async fn a_slow_sse_reader_is_cut_off_at_the_bound_and_others_are_still_served() {
    const COUNT: usize = 2000;
    const SIZE: usize = 16 * 1024;
    let (server, _) = server();
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    let http = endpoint.transport().clone();
    let slow = endpoint.session(capable()).await;
    // 32 MB of log messages on the POST's stream, which its client does not read.
    let (_, reply) =
        slow.start("tools/call", json!({"name": "chatter", "arguments": {"count": COUNT, "size": SIZE}})).await;
    let other = endpoint.session(capable()).await;
    until("the chatty tool to finish", || http.request_streams() == 0).await;
    assert_eq!(other.call("add", json!({"a": 2, "b": 40})).await["content"][0]["text"], "42");

    // The reader was cut off: it gets what the socket and the stream's bounded queue held, the
    // stream then ends without the response, and what it missed is no longer kept (the event
    // store is bounded too), so resuming is refused rather than served with a gap.
    let Reply::Sse(mut sse) = reply else { panic!("an SSE stream was expected") };
    let mut received = 0;
    let mut last_id = None;
    while let Some(event) = within("the next event", sse.next()).await {
        assert_eq!(event.message()["method"], "notifications/message", "the response never comes on a cut stream");
        last_id = event.id.clone();
        received += 1;
    }
    assert!(received < COUNT, "all {COUNT} messages were buffered for a reader that did not read");
    let resume = slow.get().header("last-event-id", last_id.unwrap()).send().await.unwrap();
    assert_eq!(resume.status(), StatusCode::NOT_FOUND);
    assert_eq!(slow.call("add", json!({"a": 1, "b": 1})).await["content"][0]["text"], "2");
}

// ---------------------------------------------------------------------------------------------
// A tool that panics.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_panicking_tool_is_an_error_result_and_the_server_keeps_serving() {
    let (server, _) = server();
    let (mut client, _serving) = connect(&server, 64 * 1024).await;
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    let session = endpoint.session(capable()).await;
    for (tool, message) in [("boom", "boom at once"), ("boom_later", "boom later")] {
        let over_stdio = client.result("tools/call", json!({"name": tool, "arguments": {}})).await;
        let over_http = session.call(tool, json!({})).await;
        for result in [over_stdio, over_http] {
            assert_eq!(result["isError"], true, "{result}");
            assert!(text_of(&result).contains(message), "{result}");
        }
        assert_eq!(
            text_of(&client.result("tools/call", json!({"name": "add", "arguments": {"a": 1, "b": 2}})).await),
            "3"
        );
        assert_eq!(text_of(&session.call("add", json!({"a": 1, "b": 2})).await), "3");
    }
    // A protocol error is still a protocol error.
    let unknown = client.request("tools/call", json!({"name": "nope", "arguments": {}})).await;
    assert_eq!(error_code(&unknown), -32602);
}
