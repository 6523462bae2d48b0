//! Our HTTP client keeps the session's `GET` stream when the server is slow to answer it, and
//! tries again when the server fails it for a while: a question the server sends there during
//! a call still reaches the client, and the call completes. An answer to such a question that a
//! gateway or a busy server refuses (502, 503, 504) is sent again.
//!
//! The server is scripted here (2025-11-25, one session): it answers the `GET` stream's
//! request after a delay (or with HTTP 503 first), and a `tools/call` sends `elicitation/create`
//! on that stream only, then waits for the client's answer before it answers the call.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use typed_mcp::client::http::HttpClientConfig;
use typed_mcp::client::{Client, ElicitationModes, ElicitationRequest, elicitation_fn};
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::ToolResultExt;

use crate::support::http::serve_router;

/// The session id the scripted server assigns.
const SESSION: &str = "slow-get-session";
/// How long the server waits for the client's answer before giving up on the call.
const ANSWER_PATIENCE: Duration = Duration::from_secs(30);

/// What the scripted server does, and what it saw.
struct Script {
    /// How long the `GET` stream's response headers take.
    delay: Duration,
    /// How many `GET`s are answered with 503 before one is served.
    failures: u32,
    /// How many `GET`s arrived.
    gets: AtomicU32,
    /// The questions for the `GET` stream; taken by the `GET` that serves them.
    questions: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
    ask: mpsc::UnboundedSender<String>,
    /// Where the client's answer to the question goes.
    answer: Mutex<Option<oneshot::Sender<Value>>>,
    /// How many of the client's answers are still to be refused (the first with 502, as a
    /// gateway whose backend connection broke; the next with 503 and `Retry-After`).
    refuse_answers: AtomicU32,
    /// How many answers arrived.
    answers: AtomicU32,
}

impl Script {
    fn new(delay: Duration, failures: u32) -> Arc<Script> {
        let (ask, questions) = mpsc::unbounded_channel();
        Arc::new(Script {
            delay,
            failures,
            gets: AtomicU32::new(0),
            questions: Mutex::new(Some(questions)),
            ask,
            answer: Mutex::new(None),
            refuse_answers: AtomicU32::new(0),
            answers: AtomicU32::new(0),
        })
    }

    /// A script whose GET is served at once, and which refuses the first `refused` answers.
    fn refusing_answers(refused: u32) -> Arc<Script> {
        let script = Script::new(Duration::ZERO, 0);
        script.refuse_answers.store(refused, Ordering::SeqCst);
        script
    }
}

fn json_response(body: Value) -> Response {
    ([("content-type", "application/json"), ("mcp-session-id", SESSION)], body.to_string()).into_response()
}

async fn on_post(State(script): State<Arc<Script>>, body: String) -> Response {
    let message: Value = serde_json::from_str(&body).expect("the client sends JSON");
    let id = message.get("id").cloned();
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        // The client's answer to the question.
        let n = script.answers.fetch_add(1, Ordering::SeqCst) + 1;
        let refusing = script.refuse_answers.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| r.checked_sub(1));
        if refusing.is_ok() {
            return if n == 1 {
                (StatusCode::BAD_GATEWAY, "the backend connection broke").into_response()
            } else {
                (StatusCode::SERVICE_UNAVAILABLE, [("retry-after", "0")], "busy").into_response()
            };
        }
        if let Some(answer) = script.answer.lock().unwrap().take() {
            let _ = answer.send(message);
        }
        return StatusCode::ACCEPTED.into_response();
    };
    let Some(id) = id else { return StatusCode::ACCEPTED.into_response() };
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-get", "version": "1"}
        }),
        "tools/call" => {
            let (answer, answered) = oneshot::channel();
            *script.answer.lock().unwrap() = Some(answer);
            // Asked on the GET stream only: a client without it never sees the question.
            let question = json!({
                "jsonrpc": "2.0",
                "id": "question-1",
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
                }
            });
            // Lost when the client dropped the stream: the call then waits in vain.
            let _ = script.ask.send(question.to_string());
            match tokio::time::timeout(ANSWER_PATIENCE, answered).await {
                Ok(Ok(answer)) => {
                    let name = answer["result"]["content"]["name"].as_str().unwrap_or("nobody").to_owned();
                    json!({"content": [{"type": "text", "text": format!("Hello, {name}!")}]})
                }
                _ => json!({"content": [{"type": "text", "text": "no answer"}], "isError": true}),
            }
        }
        _ => json!({}),
    };
    json_response(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

async fn on_get(State(script): State<Arc<Script>>, headers: HeaderMap) -> Response {
    assert_eq!(headers.get("mcp-session-id").and_then(|v| v.to_str().ok()), Some(SESSION));
    let n = script.gets.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= script.failures {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    tokio::time::sleep(script.delay).await;
    let questions = script.questions.lock().unwrap().take();
    let events = futures_util::stream::unfold(questions, |questions| async move {
        let mut questions = questions?;
        let question = questions.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(format!("data: {question}\n\n")), Some(questions)))
    });
    ([("content-type", "text/event-stream")], Body::from_stream(events)).into_response()
}

/// Serves `script`; returns the endpoint and what keeps it up.
async fn serve(script: &Arc<Script>) -> (String, oneshot::Sender<()>) {
    let app = axum::Router::new()
        .route("/mcp", post(on_post).get(on_get).delete(|| async { StatusCode::OK }))
        .with_state(script.clone());
    serve_router(app).await
}

/// Connects with `config`, calls the tool, and returns the result's text and how long it took.
async fn call(url: &str, config: HttpClientConfig) -> (String, Duration) {
    let client = Client::builder("get-stream-test", "1.0.0")
        .elicitation(elicitation_fn(ElicitationModes::FORM, |request| async move {
            match request {
                ElicitationRequest::Form(form) => {
                    form.accept(json!({"name": "Ada"}).as_object().cloned().expect("an object")).expect("fits")
                }
                _ => ElicitResult::decline(),
            }
        }))
        .connect_http_with(url, config)
        .await
        .expect("connects");
    let started = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(30), client.call_tool("ask", ()))
        .await
        .expect("the call completes: the question on the slow GET stream reached the client")
        .expect("the call succeeds");
    let took = started.elapsed();
    client.close().await;
    assert!(!result.is_error(), "{result:?}");
    (result.text(), took)
}

/// The default settings: the stream's headers come after 6 seconds, beyond the 5 seconds sending
/// waits for them. The stream is kept, and the question asked there during the call is answered.
#[tokio::test]
async fn a_get_stream_slower_than_the_default_wait_is_kept() {
    let script = Script::new(Duration::from_secs(6), 0);
    let (url, _server) = serve(&script).await;
    let (text, _) = call(&url, HttpClientConfig::default()).await;
    assert_eq!(text, "Hello, Ada!");
    assert_eq!(script.gets.load(Ordering::SeqCst), 1, "the first GET stream was kept, not reopened");
}

/// A shorter wait: sending goes on after 100 ms, and the stream that opens a second later still
/// carries the question.
#[tokio::test]
async fn a_get_stream_slower_than_a_configured_wait_is_kept() {
    let script = Script::new(Duration::from_secs(1), 0);
    let (url, _server) = serve(&script).await;
    let config = HttpClientConfig::default().standalone_stream_wait(Duration::from_millis(100));
    let started = Instant::now();
    let (text, took) = call(&url, config).await;
    assert_eq!(text, "Hello, Ada!");
    assert_eq!(script.gets.load(Ordering::SeqCst), 1);
    // Sending did not wait for the stream: the call was on its way before the stream opened.
    assert!(took >= Duration::from_millis(500), "the call completed before the stream could open: {took:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
}

/// The server fails the first two GETs with 503: the client tries again, after growing delays,
/// and the third stream carries the question.
#[tokio::test]
async fn a_get_stream_failed_with_503_is_tried_again() {
    let script = Script::new(Duration::ZERO, 2);
    let (url, _server) = serve(&script).await;
    let config = HttpClientConfig::default()
        .standalone_stream_wait(Duration::from_millis(100))
        .reconnect(3, Duration::from_millis(100));
    let (text, _) = call(&url, config).await;
    assert_eq!(text, "Hello, Ada!");
    assert_eq!(script.gets.load(Ordering::SeqCst), 3);
}

/// The client's answer to the question is refused twice on its way (502 from a gateway, then
/// 503 with `Retry-After`): the client sends it again, and the call that waited for it completes.
#[tokio::test]
async fn an_answer_refused_by_a_gateway_is_sent_again() {
    let script = Script::refusing_answers(2);
    let (url, _server) = serve(&script).await;
    let config = HttpClientConfig::default().standalone_stream_wait(Duration::from_millis(100));
    let (text, _) = call(&url, config).await;
    assert_eq!(text, "Hello, Ada!");
    assert_eq!(script.answers.load(Ordering::SeqCst), 3, "two refused deliveries, then the one taken");
}
