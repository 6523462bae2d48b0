//! The benchmark server with no SDK: each message is parsed with serde_json and answered with
//! a hand-written frame. It knows exactly the two tools and nothing else of MCP (no validation,
//! no timeouts, no cancellation), so it is the physical limit the SDKs are measured against.
//!
//! `bare-server` serves stdio from one thread; `bare-server --http 0` serves a minimal
//! Streamable HTTP endpoint (sessions, JSON answers, SSE for the form) on a free loopback port
//! and prints that port as its first line. The endpoint also answers stateless requests of the
//! 2026-07-28 revision (`MCP-Protocol-Version: 2026-07-28`, no session) with a plain JSON body
//! whose result says `resultType: "complete"`; `form` is not offered that way.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::{Method, Request, Response, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::mpsc;

const INITIALIZE_RESULT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench-bare","version":"0.0.0"}}"#;
const TOOLS: &str = r#"{"tools":[{"name":"echo","description":"Returns the text it is given.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"The text to send back."}},"required":["text"]}},{"name":"form","description":"Asks the user for their contact details and returns them.","inputSchema":{"type":"object"}}]}"#;
const FORM_PARAMS: &str = r#"{"mode":"form","message":"Please enter your contact details.","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"Your name."},"age":{"type":"integer","minimum":0,"maximum":4294967295,"description":"Your age in years."},"subscribe":{"type":"boolean","description":"Send me the newsletter."}},"required":["name","age","subscribe"]}}"#;

/// Any incoming message.
#[derive(Deserialize)]
struct In<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct EchoArgs<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
}

#[derive(Deserialize)]
struct ElicitAnswer<'a> {
    #[serde(borrow)]
    action: Cow<'a, str>,
    content: Option<Contact<'a>>,
}

#[derive(Deserialize)]
struct Contact<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    age: u32,
    subscribe: bool,
}

#[derive(Serialize)]
struct Text<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct ToolResult<'a> {
    content: [Text<'a>; 1],
    #[serde(rename = "isError")]
    is_error: bool,
    /// `complete` in answers to stateless (2026-07-28) requests; absent otherwise.
    #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
}

#[derive(Serialize)]
struct Reply<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: R,
}

#[derive(Serialize)]
struct Call<'a> {
    jsonrpc: &'static str,
    id: u64,
    method: &'static str,
    params: &'a RawValue,
}

fn reply<R: Serialize>(out: &mut Vec<u8>, id: &RawValue, result: R) {
    serde_json::to_writer(&mut *out, &Reply { jsonrpc: "2.0", id, result }).expect("writing to a Vec");
}

fn text_result(out: &mut Vec<u8>, id: &RawValue, text: &str) {
    reply(out, id, ToolResult { content: [Text { kind: "text", text }], is_error: false, result_type: None });
}

fn error(out: &mut Vec<u8>, id: &RawValue, code: i32, message: &str) {
    let error = serde_json::json!({ "code": code, "message": message });
    serde_json::to_writer(&mut *out, &serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error }))
        .expect("writing to a Vec");
}

fn raw(text: &'static str) -> &'static RawValue {
    serde_json::from_str(text).expect("constant JSON")
}

fn form_text(answer: &str) -> String {
    match serde_json::from_str::<ElicitAnswer>(answer) {
        Ok(ElicitAnswer { action, content: Some(c) }) if action == "accept" => {
            format!("contact: {} ({}), newsletter: {}", c.name, c.age, c.subscribe)
        }
        _ => "contact: none given".to_owned(),
    }
}

/// What a request needs besides a plain answer.
enum Handled {
    /// Answered (or nothing to answer).
    Done,
    /// `form` was called: the caller sends `elicitation/create` and remembers the call.
    Elicit,
}

/// Answers a stateless (2026-07-28) request into `out`: `tools/call` of `echo` only.
fn answer_stateless(id: &RawValue, method: &str, params: Option<&RawValue>, out: &mut Vec<u8>) {
    let call = params.and_then(|p| serde_json::from_str::<CallParams>(p.get()).ok());
    let text = call
        .filter(|c| method == "tools/call" && c.name == "echo")
        .and_then(|c| serde_json::from_str::<EchoArgs>(c.arguments?.get()).ok());
    match text {
        Some(args) => {
            let result = ToolResult {
                content: [Text { kind: "text", text: &args.text }],
                is_error: false,
                result_type: Some("complete"),
            };
            reply(out, id, result);
        }
        None => error(out, id, -32602, "this server answers only `tools/call` of `echo` without a session"),
    }
}

/// Answers a request into `out`, except `form`, which is left to the caller.
fn answer(id: &RawValue, method: &str, params: Option<&RawValue>, out: &mut Vec<u8>) -> Handled {
    match method {
        "initialize" => reply(out, id, raw(INITIALIZE_RESULT)),
        "ping" => reply(out, id, raw("{}")),
        "tools/list" => reply(out, id, raw(TOOLS)),
        "tools/call" => {
            let call = params.and_then(|p| serde_json::from_str::<CallParams>(p.get()).ok());
            match call {
                Some(c) if c.name == "echo" => {
                    match c.arguments.and_then(|a| serde_json::from_str::<EchoArgs>(a.get()).ok()) {
                        Some(args) => text_result(out, id, &args.text),
                        None => error(out, id, -32602, "echo needs a `text` string"),
                    }
                }
                Some(c) if c.name == "form" => return Handled::Elicit,
                _ => error(out, id, -32602, "unknown tool"),
            }
        }
        _ => error(out, id, -32601, "method not found"),
    }
    Handled::Done
}

fn serve_stdio() -> io::Result<()> {
    let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = String::new();
    let mut out = Vec::with_capacity(1024);
    // Our `elicitation/create` id → the id of the `tools/call` waiting for it.
    let mut pending: HashMap<u64, Box<RawValue>> = HashMap::new();
    let mut next_id = 0u64;
    let form_params = raw(FORM_PARAMS);
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        out.clear();
        if let Ok(message) = serde_json::from_str::<In>(&line) {
            match (message.id, message.method) {
                (Some(id), Some(method)) => {
                    if let Handled::Elicit = answer(id, &method, message.params, &mut out) {
                        next_id += 1;
                        pending.insert(next_id, id.to_owned());
                        let call =
                            Call { jsonrpc: "2.0", id: next_id, method: "elicitation/create", params: form_params };
                        serde_json::to_writer(&mut out, &call)?;
                    }
                }
                (Some(id), None) => {
                    let waiting = id.get().parse::<u64>().ok().and_then(|n| pending.remove(&n));
                    if let (Some(call_id), Some(result)) = (waiting, message.result) {
                        text_result(&mut out, &call_id, &form_text(result.get()));
                    }
                }
                _ => {}
            }
        }
        if !out.is_empty() {
            out.push(b'\n');
            output.write_all(&out)?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

/// A response body: all at once, or an SSE stream fed through a channel.
enum Body {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

#[derive(Default)]
struct HttpSession {
    /// Our `elicitation/create` id → the `tools/call` id and its SSE stream.
    pending: HashMap<u64, (Box<RawValue>, mpsc::Sender<Bytes>)>,
}

#[derive(Default)]
struct Shared {
    sessions: Mutex<HashMap<String, HttpSession>>,
    next: AtomicU64,
}

fn status(code: StatusCode) -> Response<Body> {
    let mut r = Response::new(Body::Full(None));
    *r.status_mut() = code;
    r
}

fn json(body: Vec<u8>) -> Response<Body> {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::Full(Some(Bytes::from(body))))
        .expect("valid response")
}

fn sse(frame: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(frame.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(frame);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let session_id = request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let stateless = request.headers().get("mcp-protocol-version").is_some_and(|v| v == "2026-07-28");
    let method = request.method().clone();
    if method == Method::DELETE {
        let removed = session_id.and_then(|id| shared.sessions.lock().expect("lock").remove(&id));
        return Ok(status(if removed.is_some() { StatusCode::OK } else { StatusCode::NOT_FOUND }));
    }
    if method != Method::POST {
        return Ok(status(StatusCode::METHOD_NOT_ALLOWED));
    }
    let Ok(body) = request.into_body().collect().await.map(|b| b.to_bytes()) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let Ok(message) = serde_json::from_slice::<In>(&body) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let mut out = Vec::with_capacity(256);
    match (message.id, message.method, session_id) {
        (Some(id), Some(m), None) if m == "initialize" => {
            let session = format!("{:032x}", shared.next.fetch_add(1, Ordering::Relaxed) + 1);
            shared.sessions.lock().expect("lock").insert(session.clone(), HttpSession::default());
            answer(id, &m, message.params, &mut out);
            let mut response = json(out);
            response.headers_mut().insert("mcp-session-id", session.parse().expect("hex is a valid header"));
            Ok(response)
        }
        (Some(id), Some(m), None) if stateless => {
            answer_stateless(id, &m, message.params, &mut out);
            Ok(json(out))
        }
        (_, _, None) => Ok(status(StatusCode::BAD_REQUEST)),
        (id, method, Some(session)) => {
            let mut sessions = shared.sessions.lock().expect("lock");
            let Some(state) = sessions.get_mut(&session) else { return Ok(status(StatusCode::NOT_FOUND)) };
            match (id, method) {
                (Some(id), Some(m)) => match answer(id, &m, message.params, &mut out) {
                    Handled::Done => Ok(json(out)),
                    Handled::Elicit => {
                        let n = shared.next.fetch_add(1, Ordering::Relaxed) + 1;
                        let call =
                            Call { jsonrpc: "2.0", id: n, method: "elicitation/create", params: raw(FORM_PARAMS) };
                        serde_json::to_writer(&mut out, &call).expect("writing to a Vec");
                        let (tx, rx) = mpsc::channel(2);
                        let _ = tx.try_send(sse(&out));
                        state.pending.insert(n, (id.to_owned(), tx));
                        Ok(Response::builder()
                            .header("content-type", "text/event-stream")
                            .body(Body::Stream(rx))
                            .expect("valid response"))
                    }
                },
                (Some(id), None) => {
                    let waiting = id.get().parse::<u64>().ok().and_then(|n| state.pending.remove(&n));
                    if let (Some((call_id, stream)), Some(result)) = (waiting, message.result) {
                        text_result(&mut out, &call_id, &form_text(result.get()));
                        let _ = stream.try_send(sse(&out));
                    }
                    Ok(status(StatusCode::ACCEPTED))
                }
                (None, _) => Ok(status(StatusCode::ACCEPTED)),
            }
        }
    }
}

async fn serve_http(port: u16) -> io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("{}", listener.local_addr()?.port());
    let shared = Arc::new(Shared::default());
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |r| handle(shared.clone(), r));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(port)) => {
            let port = port.parse()?;
            tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(serve_http(port))?;
        }
        (None, _) => serve_stdio()?,
        _ => return Err("usage: bare-server [--http PORT]".into()),
    }
    Ok(())
}
