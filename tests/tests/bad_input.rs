//! The bad-input catalog: malformed and hostile input, one table, sent to real servers over
//! real transports: the `quickstart` example and the `combined` test server (forms, URL mode
//! and a task in one server) over their stdio, and `combined` over Streamable HTTP on loopback. Each case is checked for the
//! answer it must get (error code and id, HTTP status), or for getting none where the spec
//! says to ignore it; after each one, the server must still answer a normal tool call, with
//! nothing else in between.

use crate::support;

use std::future::Future;
use std::pin::Pin;
use std::process::Stdio;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};
use support::http::{Endpoint, Reply, Session, principal_from_header, text_of};
use tests::stdio::{LineClient, ServerProcess, error_code, example_binary, within};
use tokio::io::{AsyncBufReadExt, BufReader};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const SESSION_NOT_FOUND: i64 = -32001;
const HEADER_MISMATCH: i64 = -32020;
const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

const MODERN: &str = "2026-07-28";

// ---------------------------------------------------------------------------------------------
// The catalog
// ---------------------------------------------------------------------------------------------

/// When a case runs: on a connection that has not initialized yet, or in a session.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    Fresh,
    Session,
}

/// What a case sends as its one frame.
#[derive(Clone)]
enum Frame {
    Text(&'static str),
    Bytes(&'static [u8]),
    Json(Value),
    Made(fn() -> Vec<u8>),
}

impl Frame {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Frame::Text(t) => t.as_bytes().to_vec(),
            Frame::Bytes(b) => b.to_vec(),
            Frame::Json(v) => v.to_string().into_bytes(),
            Frame::Made(f) => f(),
        }
    }
}

/// What must come back.
#[derive(Clone, Debug)]
enum Expect {
    /// One error response with this code, answering this id (`null`: none).
    Error(i64, Value),
    /// Nothing at all: over stdio no line, over HTTP 202 with no body.
    Ignored,
    /// One response with a result, answering this id.
    Result(Value),
    /// One response with a tool's error result (`isError: true`), answering this id: invalid
    /// tool input, since revision 2025-11-25 (SEP-1303).
    ToolError(Value),
}

type Flow = for<'a> fn(&'a mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// One entry of the catalog.
#[derive(Clone)]
struct Case {
    name: &'static str,
    stage: Stage,
    /// The tools it needs: `Some(true)` the `combined` server's, `Some(false)` the
    /// `quickstart` example's (`add`), `None` any.
    elicitation: Option<bool>,
    /// A word the error message must contain.
    mentions: Option<&'static str>,
    stdio: bool,
    /// The HTTP status it must get; `None`: not sent over HTTP.
    http: Option<u16>,
    /// Headers to set (`Some`) or remove (`None`) over HTTP.
    headers: Vec<(&'static str, Option<String>)>,
    frame: Option<Frame>,
    expect: Expect,
    /// What HTTP gets instead, where it differs.
    http_expect: Option<Expect>,
    flow: Option<Flow>,
}

/// A case sending `frame` (both transports; expectation still to be set).
fn send(name: &'static str, frame: Frame) -> Case {
    Case {
        name,
        stage: Stage::Session,
        elicitation: None,
        mentions: None,
        stdio: true,
        http: None,
        headers: Vec::new(),
        frame: Some(frame),
        expect: Expect::Ignored,
        http_expect: None,
        flow: None,
    }
}

/// A case that runs `flow` (a few exchanges of its own).
fn flow(name: &'static str, flow: Flow) -> Case {
    Case { frame: None, flow: Some(flow), http: Some(200), ..send(name, Frame::Text("")) }
}

fn text(name: &'static str, frame: &'static str) -> Case {
    send(name, Frame::Text(frame))
}

fn request(name: &'static str, id: Value, method: &str, params: Value) -> Case {
    send(name, Frame::Json(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})))
}

impl Case {
    /// An error response from the frame decoder: 400 over HTTP.
    fn rejected(self, code: i64, id: Value) -> Self {
        Case { expect: Expect::Error(code, id), http: Some(400), ..self }
    }
    /// An error response from the session (a 2025-era request): 200 over HTTP.
    fn refused(self, code: i64, id: Value) -> Self {
        Case { expect: Expect::Error(code, id), http: Some(200), ..self }
    }
    fn ignored(self) -> Self {
        Case { expect: Expect::Ignored, http: Some(202), ..self }
    }
    fn answered(self, id: Value) -> Self {
        Case { expect: Expect::Result(id), http: Some(200), ..self }
    }
    /// A tool error result (`isError: true`): 200 over HTTP.
    fn tool_error(self, id: Value) -> Self {
        Case { expect: Expect::ToolError(id), http: Some(200), ..self }
    }
    /// Over HTTP, this error instead.
    fn http_error(self, code: i64, id: Value) -> Self {
        Case { http_expect: Some(Expect::Error(code, id)), ..self }
    }
    fn http(self, status: u16) -> Self {
        Case { http: Some(status), ..self }
    }
    fn stdio_only(self) -> Self {
        Case { http: None, ..self }
    }
    fn http_only(self) -> Self {
        Case { stdio: false, ..self }
    }
    fn fresh(self) -> Self {
        Case { stage: Stage::Fresh, ..self }
    }
    fn elicitation(self) -> Self {
        Case { elicitation: Some(true), ..self }
    }
    fn quickstart(self) -> Self {
        Case { elicitation: Some(false), ..self }
    }
    fn mentioning(self, word: &'static str) -> Self {
        Case { mentions: Some(word), ..self }
    }
    fn header(mut self, name: &'static str, value: Option<&str>) -> Self {
        self.headers.push((name, value.map(str::to_owned)));
        self
    }
}

/// `_meta` of a 2026-era request that declares what the `combined` server needs.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "catalog", "version": "1"},
    })
}

/// `_meta` of a 2026-era request that also declares the tasks extension.
fn task_meta() -> Value {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"]["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    meta
}

/// A 2026-era request of the tasks extension, declaring it.
fn task_request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = task_meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A 2026-era `tools/call` of `process_data`, with `change` applied to its parameters.
fn call_2026(id: i64, change: fn(&mut Value)) -> Value {
    let mut params = json!({"name": "process_data", "arguments": {"data": "short"}, "_meta": meta()});
    change(&mut params);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn deep(open: &str, inner: &str, close: &str, depth: usize) -> Vec<u8> {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth)).into_bytes()
}

fn catalog() -> Vec<Case> {
    let call = |id: Value, params: Value| request("", id, "tools/call", params);
    let named = |name: &'static str, c: Case| Case { name, ..c };
    vec![
        // Before `initialize`.
        request("ping before initialize", json!(1), "ping", json!({})).fresh().answered(json!(1)).stdio_only(),
        named("a tool call before initialize", call(json!(2), json!({"name": "add", "arguments": {}})))
            .fresh()
            .rejected(INVALID_REQUEST, json!(2))
            .http_error(INVALID_REQUEST, Value::Null),
        request("tools/list before initialize", json!(3), "tools/list", json!({}))
            .fresh()
            .rejected(INVALID_REQUEST, json!(3))
            .http_error(INVALID_REQUEST, Value::Null),
        // Not JSON.
        text("invalid JSON", "{not json").rejected(PARSE_ERROR, Value::Null),
        text("a truncated frame", r#"{"jsonrpc":"2.0","id":1,"method":"ping""#).rejected(PARSE_ERROR, Value::Null),
        text("trailing garbage", r#"{"jsonrpc":"2.0","id":1,"method":"ping"}}"#).rejected(PARSE_ERROR, Value::Null),
        text("two messages in one frame", r#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
            .rejected(PARSE_ERROR, Value::Null),
        text("a bare word", "nul").rejected(PARSE_ERROR, Value::Null),
        send("invalid UTF-8", Frame::Bytes(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"pi\xffng\"}"))
            .rejected(PARSE_ERROR, Value::Null),
        send("an unpaired surrogate escape", Frame::Text(r#"{"jsonrpc":"2.0","id":9,"method":"\ud800"}"#))
            .rejected(PARSE_ERROR, Value::Null),
        // Not one JSON-RPC object.
        text("a number", "42").rejected(INVALID_REQUEST, Value::Null),
        text("a boolean", "true").rejected(INVALID_REQUEST, Value::Null),
        text("a string", "\"ping\"").rejected(INVALID_REQUEST, Value::Null),
        text("null", "null").rejected(INVALID_REQUEST, Value::Null),
        text("an empty batch", "[]").rejected(INVALID_REQUEST, Value::Null),
        text("a batch of requests", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#)
            .rejected(INVALID_REQUEST, Value::Null),
        text("a batch whose first element looks like an id", "[1]").rejected(INVALID_REQUEST, Value::Null),
        text("a request spelled as an array", r#"["2.0",70,"ping"]"#).rejected(INVALID_REQUEST, Value::Null),
        text("an array under an unsupported version header", r#"[71,"ping"]"#)
            .header("mcp-protocol-version", Some("1999-01-01"))
            .rejected(UNSUPPORTED_PROTOCOL_VERSION, Value::Null)
            .http_only(),
        text("an object with neither method nor id", r#"{"jsonrpc":"2.0"}"#).rejected(INVALID_REQUEST, Value::Null),
        // The envelope.
        text("wrong jsonrpc version", r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#).rejected(INVALID_REQUEST, json!(5)),
        text("no jsonrpc member", r#"{"id":6,"method":"ping"}"#).rejected(INVALID_REQUEST, json!(6)),
        text("a method that is not a string", r#"{"jsonrpc":"2.0","id":7,"method":17}"#)
            .rejected(INVALID_REQUEST, json!(7)),
        text("a request carrying a result", r#"{"jsonrpc":"2.0","id":"x","method":"ping","result":{}}"#)
            .rejected(INVALID_REQUEST, json!("x")),
        text("params that are a string", r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":"all"}"#)
            .refused(INVALID_PARAMS, json!(10)),
        // Ids.
        text("a null id", r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).rejected(INVALID_REQUEST, Value::Null),
        text("a fractional id", r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).rejected(INVALID_REQUEST, Value::Null),
        text("an id in exponent form", r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#)
            .rejected(INVALID_REQUEST, Value::Null),
        text("an object id", r#"{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}"#).rejected(INVALID_REQUEST, Value::Null),
        text("an array id", r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#).rejected(INVALID_REQUEST, Value::Null),
        text("a boolean id", r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#).rejected(INVALID_REQUEST, Value::Null),
        text("an id just past i64::MAX", r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#)
            .rejected(INVALID_REQUEST, Value::Null),
        text("an id just below i64::MIN", r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#)
            .rejected(INVALID_REQUEST, Value::Null),
        text("a 30-digit id", r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#)
            .rejected(INVALID_REQUEST, Value::Null),
        request("id i64::MAX is echoed exactly", json!(i64::MAX), "ping", json!({})).answered(json!(i64::MAX)),
        request("id i64::MIN is echoed exactly", json!(i64::MIN), "ping", json!({})).answered(json!(i64::MIN)),
        request("an empty string id is echoed", json!(""), "ping", json!({})).answered(json!("")),
        request("a string id with quotes and non-ASCII is echoed", json!("ünï \"q\" \n"), "ping", json!({}))
            .answered(json!("ünï \"q\" \n")),
        send("a 64 KiB string id is echoed", Frame::Json(json!({"jsonrpc": "2.0", "id": "i".repeat(65536), "method": "ping"})))
            .answered(json!("i".repeat(65536))),
        text("a number out of range in a member nobody reads", r#"{"jsonrpc":"2.0","id":61,"method":"ping","pad":1e999999}"#)
            .answered(json!(61)),
        text("an id beside a number out of range, and no method", r#"{"jsonrpc":"2.0","id":62,"pad":9E999999999999999}"#)
            .rejected(INVALID_REQUEST, json!(62)),
        // Size and depth.
        send("JSON nested 100,000 deep", Frame::Made(|| deep("[", "", "]", 100_000))).rejected(INVALID_REQUEST, Value::Null),
        send("an object nested 100,000 deep", Frame::Made(|| deep("{\"a\":", "1", "}", 100_000)))
            .rejected(INVALID_REQUEST, Value::Null),
        send(
            "params nested 100,000 deep",
            Frame::Made(|| {
                let mut frame = br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"x","arguments":"#.to_vec();
                frame.extend(deep("[", "", "]", 100_000));
                frame.extend(b"}}");
                frame
            }),
        )
        .refused(INVALID_PARAMS, json!(11)),
        send("a line over the 4 MiB limit", Frame::Made(|| format!("\"{}\"", "z".repeat(4 << 20)).into_bytes()))
            .rejected(INVALID_REQUEST, Value::Null)
            .stdio_only(),
        send("a body over the 4 MiB limit", Frame::Made(|| format!("\"{}\"", "z".repeat(4 << 20)).into_bytes()))
            .rejected(INVALID_REQUEST, Value::Null)
            .http(413)
            .http_only(),
        text("a blank line", "").ignored().stdio_only(),
        text("a line of whitespace", " \t ").ignored().stdio_only(),
        send("a CRLF line ending", Frame::Text("{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r"))
            .answered(json!("crlf"))
            .stdio_only(),
        text("an empty body", "").rejected(PARSE_ERROR, Value::Null).http_only(),
        // Methods and parameters.
        request("an unknown method", json!(20), "no/such/method", json!({})).refused(METHOD_NOT_FOUND, json!(20)),
        request("a method this server does not offer", json!(32), "resources/list", json!({}))
            .refused(METHOD_NOT_FOUND, json!(32)),
        request("server/discover without a 2026 _meta", json!(33), "server/discover", json!({}))
            .refused(INVALID_PARAMS, json!(33))
            .mentioning("protocol version")
            .stdio_only(),
        request("initialize with a numeric protocolVersion", json!(34), "initialize", json!({"protocolVersion": 2025}))
            .refused(INVALID_PARAMS, json!(34)),
        named("tools/call with params as an array", call(json!(21), json!([1, 2]))).refused(INVALID_PARAMS, json!(21)),
        named("tools/call without a name", call(json!(22), json!({}))).refused(INVALID_PARAMS, json!(22)),
        named("tools/call with a numeric name", call(json!(23), json!({"name": 5}))).refused(INVALID_PARAMS, json!(23)),
        named("an unknown tool", call(json!(24), json!({"name": "nope", "arguments": {}})))
            .refused(INVALID_PARAMS, json!(24))
            .mentioning("nope"),
        named("an argument of the wrong type (add)", call(json!(35), json!({"name": "add", "arguments": {"a": "two", "b": 1}})))
            .tool_error(json!(35))
            .mentioning("`a`")
            .quickstart(),
        named("a fraction for an integer argument", call(json!(36), json!({"name": "add", "arguments": {"a": 1, "b": 2.5}})))
            .tool_error(json!(36))
            .mentioning("`b`")
            .quickstart(),
        named("a missing argument (add)", call(json!(37), json!({"name": "add", "arguments": {"a": 1}})))
            .tool_error(json!(37))
            .mentioning("`b`")
            .quickstart(),
        named("arguments as an array", call(json!(25), json!({"name": "process_data", "arguments": ["x"]})))
            .refused(INVALID_PARAMS, json!(25)),
        named("an argument of the wrong type", call(json!(26), json!({"name": "process_data", "arguments": {"data": 5}})))
            .tool_error(json!(26))
            .mentioning("`data`")
            .elicitation(),
        named("a missing argument", call(json!(27), json!({"name": "process_data", "arguments": {}})))
            .tool_error(json!(27))
            .mentioning("`data`")
            .elicitation(),
        request("a cursor that is a number", json!(28), "tools/list", json!({"cursor": 5})).refused(INVALID_PARAMS, json!(28)),
        request("a cursor never issued", json!(29), "tools/list", json!({"cursor": "page-2"}))
            .refused(INVALID_PARAMS, json!(29)),
        request("logging/setLevel with an unknown level", json!(30), "logging/setLevel", json!({"level": "loud"}))
            .refused(INVALID_PARAMS, json!(30)),
        request(
            "a second initialize",
            json!(31),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
        )
        .refused(INVALID_REQUEST, json!(31)),
        // Notifications and responses the server must not answer.
        send("an unknown notification", Frame::Json(json!({"jsonrpc": "2.0", "method": "notifications/no-such-thing"})))
            .ignored(),
        send(
            "a tool call sent as a notification",
            Frame::Json(json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "add", "arguments": {}}})),
        )
        .ignored(),
        send(
            "a cancellation of no request in flight",
            Frame::Json(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 424242}})),
        )
        .ignored(),
        send(
            "a cancellation with malformed params",
            Frame::Json(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}})),
        )
        .ignored(),
        text("a response to an id never issued", r#"{"jsonrpc":"2.0","id":424242,"result":{}}"#).ignored(),
        text("an error response to an id never issued", r#"{"jsonrpc":"2.0","id":424243,"error":{"code":1,"message":"stray"}}"#)
            .ignored(),
        text("an error response with a null id", r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#)
            .ignored()
            // Over HTTP the POST must be refused with an error status; the body may be an
            // error response without an id.
            .http_error(INVALID_REQUEST, Value::Null)
            .http(400),
        text("a response with both result and error", r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#)
            .ignored()
            // Over HTTP the POST must be refused with an error status; the body may be an
            // error response without an id.
            .http_error(INVALID_REQUEST, Value::Null)
            .http(400),
        text("a response with a string id the server never uses", r#"{"jsonrpc":"2.0","id":"0","result":{}}"#).ignored(),
        // The 2026-07-28 era: `_meta` of each request.
        send("a 2026 request naming an unsupported revision", Frame::Json(call_2026(40, |p| {
            p["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
        })))
        .refused(UNSUPPORTED_PROTOCOL_VERSION, json!(40))
        .http(400)
        .elicitation(),
        send("a 2026 request whose revision is not a string", Frame::Json(call_2026(41, |p| {
            p["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(20260728);
        })))
        .refused(INVALID_PARAMS, json!(41))
        .http(400)
        .elicitation(),
        send("a 2026 call missing an argument", Frame::Json(call_2026(63, |p| p["arguments"] = json!({}))))
            .tool_error(json!(63))
            .mentioning("`data`")
            .elicitation(),
        send("a 2026 call with an argument of the wrong type", Frame::Json(call_2026(64, |p| {
            p["arguments"] = json!({"data": [1]});
        })))
        .tool_error(json!(64))
        .mentioning("`data`")
        .elicitation(),
        send("a 2026 request without client capabilities", Frame::Json(call_2026(42, |p| {
            p["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities");
        })))
        .refused(INVALID_PARAMS, json!(42))
        .http(400)
        .elicitation(),
        send("2026 client capabilities of the wrong type", Frame::Json(call_2026(43, |p| {
            p["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!(["elicitation"]);
        })))
        .refused(INVALID_PARAMS, json!(43))
        .http(400)
        .elicitation(),
        send("a 2026 log level that does not exist", Frame::Json(call_2026(44, |p| {
            p["_meta"]["io.modelcontextprotocol/logLevel"] = json!("loud");
        })))
        .refused(INVALID_PARAMS, json!(44))
        .http(400)
        .elicitation(),
        send("a requestState that was never sealed", Frame::Json(call_2026(45, |p| {
            p["requestState"] = json!("eyJ2IjoxfQ.AAAA");
        })))
        .refused(INVALID_PARAMS, json!(45))
        .http(400)
        .elicitation(),
        send("a requestState that is not a string", Frame::Json(call_2026(46, |p| {
            p["requestState"] = json!({"answers": {}});
        })))
        .refused(INVALID_PARAMS, json!(46))
        .http(400)
        .elicitation(),
        send("inputResponses that are not an object", Frame::Json(call_2026(47, |p| {
            p["inputResponses"] = json!([{"action": "accept"}]);
        })))
        .refused(INVALID_PARAMS, json!(47))
        .http(400)
        .elicitation(),
        send("an input response that is not an object", Frame::Json(call_2026(48, |p| {
            p["inputResponses"] = json!({"input-0": "accept"});
        })))
        .refused(INVALID_PARAMS, json!(48))
        .http(400)
        .elicitation(),
        send(
            "a 2025-only method in a 2026 request",
            Frame::Json(json!({"jsonrpc": "2.0", "id": 49, "method": "logging/setLevel", "params": {"level": "info", "_meta": meta()}})),
        )
        .refused(METHOD_NOT_FOUND, json!(49))
        .http(404),
        flow("a requestState presented on another tool", state_of_another_tool).elicitation().http(400),
        // The tasks extension (2026-07-28).
        send("tasks/get of an unknown task", Frame::Json(task_request(54, "tasks/get", json!({"taskId": "no-such-task"}))))
            .refused(INVALID_PARAMS, json!(54))
            .http(400)
            .mentioning("unknown task")
            .elicitation(),
        send(
            "tasks/cancel of an unknown task",
            Frame::Json(task_request(55, "tasks/cancel", json!({"taskId": "no-such-task"}))),
        )
        .refused(INVALID_PARAMS, json!(55))
        .http(400)
        .elicitation(),
        send(
            "tasks/update whose inputResponses are not an object",
            Frame::Json(task_request(56, "tasks/update", json!({"taskId": "no-such-task", "inputResponses": "yes"}))),
        )
        .refused(INVALID_PARAMS, json!(56))
        .http(400)
        .mentioning("inputResponses")
        .elicitation(),
        send("tasks/get without a task id", Frame::Json(task_request(57, "tasks/get", json!({}))))
            .refused(INVALID_PARAMS, json!(57))
            .http(400)
            // Over HTTP, the `Mcp-Name` header has no task id to match.
            .http_error(HEADER_MISMATCH, json!(57))
            .elicitation(),
        send("tasks/get from a client without the tasks extension", Frame::Json(json!({"jsonrpc": "2.0", "id": 58,
            "method": "tasks/get", "params": {"taskId": "no-such-task", "_meta": meta()}})))
        .refused(MISSING_REQUIRED_CLIENT_CAPABILITY, json!(58))
        .http(400)
        .elicitation(),
        send("tasks/result, which the extension removed", Frame::Json(task_request(59, "tasks/result", json!({"taskId": "t"}))))
            .refused(METHOD_NOT_FOUND, json!(59))
            .http(404),
        send("tasks/get whose Mcp-Name is not its task", Frame::Json(task_request(65, "tasks/get", json!({"taskId": "t"}))))
            .header("mcp-name", Some("another-task"))
            .refused(HEADER_MISMATCH, json!(65))
            .http(400)
            .http_only()
            .elicitation(),
        flow("tasks/update of a finished task", update_of_a_finished_task).elicitation().http(400),
        flow("tasks/update answering a question with something else", wrong_answer_to_a_task).elicitation().http(400),
        // Streamable HTTP: headers.
        send("a 2026 request without Mcp-Method", Frame::Json(call_2026(50, |_| {})))
            .header("mcp-method", None)
            .refused(HEADER_MISMATCH, json!(50))
            .http(400)
            .http_only()
            .elicitation(),
        send("a 2026 request whose Mcp-Method disagrees", Frame::Json(call_2026(51, |_| {})))
            .header("mcp-method", Some("tools/list"))
            .refused(HEADER_MISMATCH, json!(51))
            .http(400)
            .http_only()
            .elicitation(),
        send("a 2026 request whose Mcp-Name disagrees", Frame::Json(call_2026(52, |_| {})))
            .header("mcp-name", Some("create_project"))
            .refused(HEADER_MISMATCH, json!(52))
            .http(400)
            .http_only()
            .elicitation(),
        send("a 2026 request whose version header disagrees with _meta", Frame::Json(call_2026(53, |_| {})))
            .header("mcp-protocol-version", Some("2025-11-25"))
            .refused(HEADER_MISMATCH, json!(53))
            .http(400)
            .http_only()
            .elicitation(),
        request("an unsupported MCP-Protocol-Version header", json!(54), "ping", json!({}))
            .header("mcp-protocol-version", Some("1999-01-01"))
            .refused(UNSUPPORTED_PROTOCOL_VERSION, json!(54))
            .http(400)
            .http_only(),
        request("an unknown session id", json!(55), "ping", json!({}))
            .header("mcp-session-id", Some("0123456789abcdef0123456789abcdef"))
            .refused(SESSION_NOT_FOUND, Value::Null)
            .http(404)
            .http_only(),
        request("a request without a session id", json!(56), "tools/list", json!({}))
            .header("mcp-session-id", None)
            .refused(INVALID_REQUEST, Value::Null)
            .http(400)
            .http_only(),
        request("a body that is not JSON by its Content-Type", json!(57), "ping", json!({}))
            .header("content-type", Some("text/plain"))
            .refused(INVALID_REQUEST, Value::Null)
            .http(415)
            .http_only(),
        request("an Accept header without text/event-stream", json!(58), "ping", json!({}))
            .header("accept", Some("application/json"))
            .refused(INVALID_REQUEST, Value::Null)
            .http(406)
            .http_only(),
        request("a foreign Host (DNS rebinding)", json!(59), "ping", json!({}))
            .header("host", Some("evil.example"))
            .refused(INVALID_REQUEST, Value::Null)
            .http(403)
            .http_only(),
        request("a foreign Origin", json!(60), "ping", json!({}))
            .header("origin", Some("http://evil.example"))
            .refused(INVALID_REQUEST, Value::Null)
            .http(403)
            .http_only(),
        flow("PUT, GET without text/event-stream, a malformed Last-Event-ID", other_http_methods).http_only(),
        // Elicitation: answers to the server's own request.
        flow("an elicitation answered with an unknown action", |c| {
            Box::pin(elicit_expecting_error(c, json!({"action": "maybe"}), "maybe"))
        })
        .elicitation(),
        flow("an elicitation answered without an action", |c| {
            Box::pin(elicit_expecting_error(c, json!({"content": {"projectName": "p"}}), "action"))
        })
        .elicitation(),
        flow("an elicitation answered with a result that is not an object", |c| {
            Box::pin(elicit_expecting_error(c, json!(5), "elicitation/create"))
        })
        .elicitation(),
        flow("accepted content that breaks the schema", |c| {
            Box::pin(elicit_expecting_error(c, json!({"action": "accept", "content": {"projectName": ""}}), "projectName"))
        })
        .elicitation(),
        flow("accepted content of the wrong type", |c| {
            let content = json!({"projectName": "p", "includeTests": "yes"});
            Box::pin(elicit_expecting_error(c, json!({"action": "accept", "content": content}), "includeTests"))
        })
        .elicitation(),
        flow("accepted content missing a required field", |c| {
            Box::pin(elicit_expecting_error(c, json!({"action": "accept"}), "projectName"))
        })
        .elicitation(),
        flow("accepted content choosing no offered option", |c| {
            let content = json!({"projectName": "p", "framework": "svelte"});
            Box::pin(elicit_expecting_error(c, json!({"action": "accept", "content": content}), "framework"))
        })
        .elicitation(),
        flow("accepted content that is not an object", |c| {
            Box::pin(elicit_expecting_error(c, json!({"action": "accept", "content": ["p"]}), "expected a map"))
        })
        .elicitation(),
        flow("an elicitation answered with an error", |c| {
            Box::pin(elicit_expecting_error_response(c))
        })
        .elicitation(),
        flow("unknown fields and nulls in accepted content", |c| {
            let content = json!({"projectName": "p", "framework": null, "admin": true});
            Box::pin(elicit_expecting(c, json!({"action": "accept", "content": content}), "Created project 'p' with framework: none"))
        })
        .elicitation(),
        flow("a duplicate answer to an elicitation", duplicate_answer).elicitation(),
        flow("an answer with the id as a string", answer_with_a_string_id).elicitation(),
        flow("a request id reused while its request is in flight", reused_id).elicitation(),
    ]
}

// ---------------------------------------------------------------------------------------------
// Connections
// ---------------------------------------------------------------------------------------------

/// What the catalog talks to.
enum Conn {
    Stdio { client: LineClient, probes: u64, elicitation: bool },
    Http { endpoint: Endpoint, session: Option<Session> },
}

/// A request in progress: over HTTP, the reply to its POST.
enum Pending {
    Stdio,
    Http(Reply),
}

impl Conn {
    fn elicitation(&self) -> bool {
        match self {
            Conn::Stdio { elicitation, .. } => *elicitation,
            Conn::Http { .. } => true,
        }
    }

    fn session(&self) -> &Session {
        match self {
            Conn::Http { session: Some(s), .. } => s,
            _ => panic!("no HTTP session"),
        }
    }

    async fn initialize(&mut self) {
        let capabilities = json!({"elicitation": {"form": {}}});
        match self {
            Conn::Stdio { client, .. } => {
                let params = json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                    "clientInfo": {"name": "catalog", "version": "1"}});
                client.result("initialize", params).await;
                client.notify("notifications/initialized", json!({})).await;
            }
            Conn::Http { endpoint, session } => *session = Some(endpoint.session(capabilities).await),
        }
    }

    /// A normal call, which must be answered at once and with nothing before it.
    async fn assert_serving(&mut self, case: &str) {
        let (tool, arguments, expected) = if self.elicitation() {
            ("process_data", json!({"data": "short"}), "Processed 5 characters")
        } else {
            ("add", json!({"a": 2, "b": 40}), "42")
        };
        let params = json!({"name": tool, "arguments": arguments});
        let result = match self {
            Conn::Stdio { client, .. } => client.result("tools/call", params).await,
            Conn::Http { session: Some(s), .. } => s.call(tool, arguments).await,
            Conn::Http { session: None, .. } => return,
        };
        assert_eq!(text_of(&result), expected, "after `{case}`: {result}");
    }

    /// Sends one frame; returns the HTTP status (over HTTP) and the messages it got back.
    async fn exchange(&mut self, case: &Case, frame: &[u8]) -> (Option<u16>, Vec<Value>) {
        match self {
            Conn::Stdio { client, probes, .. } => {
                let mut line = frame.to_vec();
                line.push(b'\n');
                client.send_bytes(&line).await;
                // A ping after it: whatever the frame got comes first.
                *probes += 1;
                let probe = format!("probe-{probes}");
                client.send_request(probe.as_str(), "ping", json!({})).await;
                let mut got = Vec::new();
                loop {
                    let message = client.recv().await;
                    if message["id"] == probe.as_str() {
                        assert_eq!(message["result"], json!({}), "{message}");
                        return (None, got);
                    }
                    got.push(message);
                }
            }
            Conn::Http { endpoint, session } => {
                let post = http_post(endpoint, session.as_ref(), case, frame);
                let response = within("a POST response", post.send()).await.expect("POST");
                let status = response.status().as_u16();
                let mut reply = Reply::new(response).await;
                (Some(status), reply.rest().await)
            }
        }
    }

    /// Starts a request; its messages are read with [`next`](Self::next).
    async fn begin(&mut self, id: i64, method: &str, params: Value) -> Pending {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        match self {
            Conn::Stdio { client, .. } => {
                client.send(&message).await;
                Pending::Stdio
            }
            Conn::Http { session: Some(s), .. } => Pending::Http(Reply::new(s.send(&message).await).await),
            Conn::Http { .. } => panic!("no session"),
        }
    }

    async fn next(&mut self, pending: &mut Pending) -> Value {
        match (self, pending) {
            (Conn::Stdio { client, .. }, Pending::Stdio) => client.recv().await,
            (_, Pending::Http(reply)) => reply.message().await,
            _ => unreachable!(),
        }
    }

    /// Sends a client message that gets no response of its own (an answer to a request).
    async fn post(&mut self, message: Value) {
        match self {
            Conn::Stdio { client, .. } => client.send(&message).await,
            Conn::Http { session: Some(s), .. } => {
                assert_eq!(s.send(&message).await.status(), StatusCode::ACCEPTED, "for {message}");
            }
            Conn::Http { .. } => panic!("no session"),
        }
    }
}

/// The POST of a case's frame over HTTP: the session's headers (none before `initialize`, nor
/// for a 2026-era request, which carries its own), then the case's own.
fn http_post(endpoint: &Endpoint, session: Option<&Session>, case: &Case, frame: &[u8]) -> reqwest::RequestBuilder {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(CONTENT_TYPE, "application/json".parse().unwrap());
    headers.insert(ACCEPT, "application/json, text/event-stream".parse().unwrap());
    let parsed: Option<Value> = serde_json::from_slice(frame).ok();
    let version_2026 =
        parsed.as_ref().and_then(|m| m["params"]["_meta"].get("io.modelcontextprotocol/protocolVersion").cloned());
    if let Some(version) = version_2026 {
        let message = parsed.as_ref().unwrap();
        headers.insert("mcp-protocol-version", version.as_str().unwrap_or(MODERN).parse().unwrap());
        headers.insert("mcp-method", message["method"].as_str().unwrap_or_default().parse().unwrap());
        let params = &message["params"];
        if let Some(name) = params["name"].as_str().or(params["uri"].as_str()).or(params["taskId"].as_str()) {
            headers.insert("mcp-name", name.parse().unwrap());
        }
    } else if let Some(s) = session {
        headers.insert("mcp-session-id", s.id.parse().unwrap());
        headers.insert("mcp-protocol-version", support::http::PROTOCOL.parse().unwrap());
    }
    for (name, value) in &case.headers {
        let name = reqwest::header::HeaderName::from_static(name);
        match value {
            Some(v) => {
                headers.insert(name, v.parse().unwrap());
            }
            None => {
                headers.remove(name);
            }
        }
    }
    endpoint.client.post(&endpoint.url).headers(headers).body(frame.to_vec())
}

// ---------------------------------------------------------------------------------------------
// Flows: cases of a few exchanges
// ---------------------------------------------------------------------------------------------

/// Calls `create_project`, which asks for a form, and returns its request and the question.
async fn ask_project(c: &mut Conn, id: i64) -> (Pending, Value) {
    let mut pending = c.begin(id, "tools/call", json!({"name": "create_project", "arguments": {}})).await;
    let question = c.next(&mut pending).await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    (pending, question)
}

/// The tool's result, which must be the next message of its request.
async fn tool_result(c: &mut Conn, pending: &mut Pending, id: i64) -> Value {
    let response = c.next(pending).await;
    assert_eq!(response["id"], id, "the tool's response was expected: {response}");
    response["result"].clone()
}

/// Answers `create_project`'s question with `result`; the tool must end with an error result
/// mentioning `mentions`.
async fn elicit_expecting_error(c: &mut Conn, result: Value, mentions: &str) {
    let (mut pending, question) = ask_project(c, 100).await;
    c.post(json!({"jsonrpc": "2.0", "id": question["id"], "result": result})).await;
    let result = tool_result(c, &mut pending, 100).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(&result);
    assert!(text.contains("Could not ask for the project details") && text.contains(mentions), "{text}");
}

/// Answers `create_project`'s question with `result`; the tool must succeed with `expected`.
async fn elicit_expecting(c: &mut Conn, result: Value, expected: &str) {
    let (mut pending, question) = ask_project(c, 101).await;
    c.post(json!({"jsonrpc": "2.0", "id": question["id"], "result": result})).await;
    let result = tool_result(c, &mut pending, 101).await;
    assert_eq!(text_of(&result), expected, "{result}");
}

async fn elicit_expecting_error_response(c: &mut Conn) {
    let (mut pending, question) = ask_project(c, 102).await;
    let error = json!({"code": -32000, "message": "the user is away"});
    c.post(json!({"jsonrpc": "2.0", "id": question["id"], "error": error})).await;
    let result = tool_result(c, &mut pending, 102).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(text_of(&result).contains("the user is away"), "{result}");
}

fn duplicate_answer(c: &mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        let (mut pending, question) = ask_project(c, 103).await;
        let accept = json!({"action": "accept", "content": {"projectName": "first"}});
        c.post(json!({"jsonrpc": "2.0", "id": question["id"], "result": accept})).await;
        let result = tool_result(c, &mut pending, 103).await;
        assert_eq!(text_of(&result), "Created project 'first' with framework: none");
        // Too late, and a second time: nothing may come of it.
        let decline = json!({"action": "decline"});
        c.post(json!({"jsonrpc": "2.0", "id": question["id"], "result": decline})).await;
        c.post(json!({"jsonrpc": "2.0", "id": question["id"], "error": {"code": 1, "message": "late"}})).await;
    })
}

fn answer_with_a_string_id(c: &mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        let (mut pending, question) = ask_project(c, 104).await;
        let id = question["id"].as_i64().expect("the server's ids are numbers");
        // The server asked with a number; an answer under the same digits as a string is
        // another id, and must not resolve it.
        let wrong = json!({"action": "accept", "content": {"projectName": "wrong"}});
        c.post(json!({"jsonrpc": "2.0", "id": id.to_string(), "result": wrong})).await;
        let right = json!({"action": "accept", "content": {"projectName": "right"}});
        c.post(json!({"jsonrpc": "2.0", "id": id, "result": right})).await;
        let result = tool_result(c, &mut pending, 104).await;
        assert_eq!(text_of(&result), "Created project 'right' with framework: none");
    })
}

fn reused_id(c: &mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        let (mut pending, question) = ask_project(c, 105).await;
        let again = json!({"jsonrpc": "2.0", "id": 105, "method": "tools/call",
            "params": {"name": "process_data", "arguments": {"data": "x"}}});
        let refusal = match c {
            Conn::Stdio { client, .. } => {
                client.send(&again).await;
                client.recv().await
            }
            Conn::Http { session: Some(s), .. } => {
                let response = s.send(&again).await;
                assert_eq!(response.status(), StatusCode::BAD_REQUEST);
                support::http::json_body(response).await
            }
            Conn::Http { .. } => unreachable!(),
        };
        assert_eq!((error_code(&refusal), &refusal["id"]), (INVALID_REQUEST, &json!(105)), "{refusal}");
        // The request in flight goes on.
        let accept = json!({"action": "decline"});
        c.post(json!({"jsonrpc": "2.0", "id": question["id"], "result": accept})).await;
        let result = tool_result(c, &mut pending, 105).await;
        assert!(text_of(&result).contains("declined"), "{result}");
    })
}

fn state_of_another_tool(c: &mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        // A 2026-era `create_project` asks its question in an `input_required` result...
        let first = json!({"jsonrpc": "2.0", "id": 106, "method": "tools/call",
            "params": {"name": "create_project", "arguments": {}, "_meta": meta()}});
        let state = exchange_2026(c, &first).await.1["result"]["requestState"].clone();
        assert!(state.is_string(), "create_project asks in the 2026 era and seals its state");
        // ...whose sealed state must not carry over to another tool.
        let mut other = call_2026(107, |_| {});
        other["params"]["requestState"] = state;
        let (status, response) = exchange_2026(c, &other).await;
        assert_eq!((error_code(&response), &response["id"]), (INVALID_PARAMS, &json!(107)), "{response}");
        assert!(status.is_none_or(|s| s == 400), "{status:?}");
        assert!(response["error"]["message"].as_str().unwrap().contains("requestState"), "{response}");
    })
}

/// Starts `deploy` as a task and waits until it asks for its confirmation; the task's id.
async fn deploy_task_waiting(c: &mut Conn, id: i64) -> String {
    let call = task_request(id, "tools/call", json!({"name": "deploy", "arguments": {"service": "catalog"}}));
    let (_, created) = exchange_2026(c, &call).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().expect("a task id").to_owned();
    within("the task to ask", async {
        loop {
            let get = task_request(id + 1, "tasks/get", json!({"taskId": task}));
            let (_, got) = exchange_2026(c, &get).await;
            match got["result"]["status"].as_str() {
                Some("input_required") => break,
                Some("working") => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
                _ => panic!("unexpected task state: {got}"),
            }
        }
    })
    .await;
    task
}

/// The status of `task`, once it is over.
async fn final_status(c: &mut Conn, id: i64, task: &str) -> Value {
    within("the task to end", async {
        loop {
            let (_, got) = exchange_2026(c, &task_request(id, "tasks/get", json!({"taskId": task}))).await;
            if !matches!(got["result"]["status"].as_str(), Some("working" | "input_required")) {
                return got["result"].clone();
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
}

fn update_of_a_finished_task(c: &mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        let task = deploy_task_waiting(c, 110).await;
        let answer =
            json!({"taskId": task, "inputResponses": {"deploy": {"action": "accept", "content": {"confirm": false}}}});
        let (_, acked) = exchange_2026(c, &task_request(112, "tasks/update", answer.clone())).await;
        assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
        let done = final_status(c, 113, &task).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"]["content"][0]["text"], "catalog was built but not deployed.", "{done}");
        // Finished: it takes no more answers.
        let (status, refused) = exchange_2026(c, &task_request(114, "tasks/update", answer)).await;
        assert_eq!((error_code(&refused), &refused["id"]), (INVALID_PARAMS, &json!(114)), "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains("completed"), "{refused}");
        assert!(status.is_none_or(|s| s == 400), "{status:?}");
    })
}

fn wrong_answer_to_a_task(c: &mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        let task = deploy_task_waiting(c, 115).await;
        // Not an `elicitation/create` result: refused, and nothing reaches the tool.
        let wrong = json!({"taskId": task, "inputResponses": {"deploy": {"action": "maybe"}}});
        let (status, refused) = exchange_2026(c, &task_request(117, "tasks/update", wrong)).await;
        assert_eq!((error_code(&refused), &refused["id"]), (INVALID_PARAMS, &json!(117)), "{refused}");
        assert!(status.is_none_or(|s| s == 400), "{status:?}");
        let (_, still) = exchange_2026(c, &task_request(118, "tasks/get", json!({"taskId": task}))).await;
        assert_eq!(still["result"]["status"], "input_required", "{still}");
        assert!(still["result"]["inputRequests"]["deploy"].is_object(), "{still}");
        // An answer to a question nobody asked is ignored; the task stays as it is.
        let stray = json!({"taskId": task, "inputResponses": {"not-asked": {"action": "accept"}}});
        let (_, acked) = exchange_2026(c, &task_request(119, "tasks/update", stray)).await;
        assert_eq!(acked["result"]["resultType"], "complete", "{acked}");
        let (_, cancelled) = exchange_2026(c, &task_request(120, "tasks/cancel", json!({"taskId": task}))).await;
        assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
        assert_eq!(final_status(c, 121, &task).await["status"], "cancelled");
    })
}

/// One 2026-era request and its response (with the HTTP status over HTTP).
async fn exchange_2026(c: &mut Conn, message: &Value) -> (Option<u16>, Value) {
    let case = send("", Frame::Json(message.clone()));
    let (status, mut got) = c.exchange(&case, message.to_string().as_bytes()).await;
    assert_eq!(got.len(), 1, "{got:?}");
    (status, got.remove(0))
}

fn other_http_methods(c: &mut Conn) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        let Conn::Http { endpoint, session: Some(s) } = c else { unreachable!() };
        let put = s.with_headers(endpoint.client.put(&endpoint.url)).body("{}");
        let put = within("PUT", put.send()).await.unwrap();
        assert_eq!(put.status(), StatusCode::METHOD_NOT_ALLOWED);
        let get = s.with_headers(endpoint.client.get(&endpoint.url).header(ACCEPT, "application/json"));
        assert_eq!(within("GET", get.send()).await.unwrap().status(), StatusCode::NOT_ACCEPTABLE);
        let resume = s.get().header("last-event-id", "not-an-event");
        assert_eq!(within("GET", resume.send()).await.unwrap().status(), StatusCode::BAD_REQUEST);
        let unknown = s.get().header("last-event-id", "999-1");
        assert_eq!(within("GET", unknown.send()).await.unwrap().status(), StatusCode::NOT_FOUND);
        let delete = endpoint.client.delete(&endpoint.url).header("mcp-session-id", "not-a-session");
        assert_eq!(within("DELETE", delete.send()).await.unwrap().status(), StatusCode::NOT_FOUND);
    })
}

// ---------------------------------------------------------------------------------------------
// Running the catalog
// ---------------------------------------------------------------------------------------------

fn applies(case: &Case, c: &Conn) -> bool {
    let transport = match c {
        Conn::Stdio { .. } => case.stdio,
        Conn::Http { .. } => case.http.is_some(),
    };
    transport && case.elicitation.is_none_or(|e| e == c.elicitation())
}

async fn run_case(c: &mut Conn, case: &Case) {
    if let Some(flow) = case.flow {
        flow(c).await;
        return;
    }
    let frame = case.frame.as_ref().expect("a frame").bytes();
    let (status, got) = c.exchange(case, &frame).await;
    if let (Some(status), Some(expected)) = (status, case.http) {
        assert_eq!(status, expected, "HTTP status for `{}`: {got:?}", case.name);
    }
    let expect = match (&c, &case.http_expect) {
        (Conn::Http { .. }, Some(e)) => e,
        _ => &case.expect,
    };
    match expect {
        Expect::Ignored => assert_eq!(got, Vec::<Value>::new(), "`{}` must get no answer", case.name),
        Expect::Error(code, id) => {
            assert_eq!(got.len(), 1, "`{}` must get one answer: {got:?}", case.name);
            let response = &got[0];
            assert_eq!(response["jsonrpc"], "2.0", "`{}`: {response}", case.name);
            assert_eq!(error_code(response), *code, "`{}`: {response}", case.name);
            assert_eq!(&response["id"], id, "`{}`: {response}", case.name);
            assert!(response.get("result").is_none(), "`{}`: {response}", case.name);
            if let Some(word) = case.mentions {
                let message = response["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains(word), "`{}` must mention {word}: {response}", case.name);
            }
        }
        Expect::Result(id) => {
            assert_eq!(got.len(), 1, "`{}` must get one answer: {got:?}", case.name);
            assert_eq!(&got[0]["id"], id, "`{}`", case.name);
            assert!(got[0].get("result").is_some(), "`{}`: {}", case.name, got[0]);
        }
        Expect::ToolError(id) => {
            assert_eq!(got.len(), 1, "`{}` must get one answer: {got:?}", case.name);
            let result = &got[0]["result"];
            assert_eq!(&got[0]["id"], id, "`{}`", case.name);
            assert_eq!(result["isError"], true, "`{}` must get a tool error result: {}", case.name, got[0]);
            if let Some(word) = case.mentions {
                let text = result["content"][0]["text"].as_str().unwrap_or_default();
                assert!(text.contains(word), "`{}` must mention {word}: {}", case.name, got[0]);
            }
        }
    }
}

/// Runs every case that applies to `c`: the fresh-connection ones, `initialize`, then the rest,
/// each followed by a normal call. Returns how many ran.
async fn run_catalog(c: &mut Conn) -> usize {
    let catalog = catalog();
    let mut ran = 0;
    for stage in [Stage::Fresh, Stage::Session] {
        if stage == Stage::Session {
            c.initialize().await;
            c.assert_serving("initialize").await;
        }
        let cases: Vec<&Case> = catalog.iter().filter(|case| case.stage == stage && applies(case, c)).collect();
        for case in cases {
            run_case(c, case).await;
            if stage == Stage::Session {
                c.assert_serving(case.name).await;
            }
            ran += 1;
        }
    }
    ran
}

#[test]
fn the_catalog_has_over_thirty_distinct_cases_on_each_transport() {
    let catalog = catalog();
    let mut names: Vec<&str> = catalog.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), catalog.len(), "case names are unique");
    let stdio = catalog.iter().filter(|c| c.stdio).count();
    let http = catalog.iter().filter(|c| c.http.is_some()).count();
    assert!(stdio >= 30 && http >= 30, "{stdio} stdio cases, {http} HTTP cases");
    println!("{} cases: {stdio} over stdio, {http} over HTTP", catalog.len());
}

#[tokio::test]
async fn quickstart_over_stdio() {
    // Debug logs make sure logging has something to say; none of it may reach stdout, which
    // `LineClient` checks line by line.
    let mut p = ServerProcess::spawn(&example_binary("quickstart"), &[("RUST_LOG", "debug")]);
    let mut conn =
        Conn::Stdio { client: std::mem::replace(&mut p.client, placeholder()), probes: 0, elicitation: false };
    let ran = run_catalog(&mut conn).await;
    let Conn::Stdio { client, .. } = conn else { unreachable!() };
    p.client = client;
    let (status, rest, stderr) = p.finish().await;
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    assert_eq!(rest, Vec::<Value>::new());
    assert!(stderr.contains("DEBUG"), "logs go to stderr; got:\n{stderr}");
    println!("quickstart over stdio: {ran} cases");
}

#[tokio::test]
async fn elicitation_over_stdio() {
    let mut p =
        ServerProcess::spawn(std::path::Path::new(crate::support::servers::COMBINED), &[("ELICITATION_URL_PORT", "0")]);
    let mut conn =
        Conn::Stdio { client: std::mem::replace(&mut p.client, placeholder()), probes: 0, elicitation: true };
    let ran = run_catalog(&mut conn).await;
    let Conn::Stdio { client, .. } = conn else { unreachable!() };
    p.client = client;
    let (status, rest, stderr) = p.finish().await;
    assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
    assert_eq!(rest, Vec::<Value>::new());
    println!("elicitation over stdio: {ran} cases");
}

#[tokio::test]
async fn elicitation_over_http() {
    let mut child = tokio::process::Command::new(crate::support::servers::COMBINED)
        .envs([("PORT", "0"), ("ELICITATION_URL_PORT", "0"), ("RUST_LOG", "info")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the combined test server");
    // The port it chose is in its log: `... serving MCP over Streamable HTTP at /mcp address=127.0.0.1:N`.
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let port = within("the server to log its address", async {
        while let Some(line) = stderr.next_line().await.expect("read stderr") {
            if line.contains("Streamable HTTP") {
                let address = line.rsplit("address=").next().expect("an address");
                return address.trim().rsplit(':').next().unwrap().parse::<u16>().expect("a port");
            }
        }
        panic!("the server exited before serving");
    })
    .await;
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let mut conn = Conn::Http { endpoint: Endpoint::at(port), session: None };
    let ran = run_catalog(&mut conn).await;
    assert_eq!(conn.session().delete().await, StatusCode::OK);
    println!("elicitation over HTTP: {ran} cases");
    let _ = child.kill().await;
}

/// A client on nothing, to move the real one out of a [`ServerProcess`] for a while.
fn placeholder() -> LineClient {
    LineClient::new(tokio::io::empty(), tokio::io::sink())
}

// ---------------------------------------------------------------------------------------------
// Another user's task (over HTTP, with users known to the server)
// ---------------------------------------------------------------------------------------------

/// Waits for a confirmation that never comes, as a task.
#[typed_mcp::tool(task = "optional")]
async fn awaiting(ctx: typed_mcp::Context) -> Result<String, typed_mcp::ElicitError> {
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    Ok(format!("confirmed: {}", ctx.confirm("Go on?").await?))
}

/// A 2026-era request of the tasks extension, as `user` (anonymous when `None`).
async fn as_user(endpoint: &Endpoint, user: Option<&str>, id: i64, method: &str, params: Value) -> (StatusCode, Value) {
    let body = task_request(id, method, params.clone());
    let name = params["taskId"].as_str().or(params["name"].as_str()).unwrap_or_default().to_owned();
    let mut post = endpoint
        .client
        .post(&endpoint.url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(body.to_string());
    if let Some(user) = user {
        post = post.header("x-user", user);
    }
    let response = within("a 2026 response", post.send()).await.unwrap();
    (response.status(), support::http::json_body(response).await)
}

#[tokio::test]
async fn another_users_task_is_unknown_to_them() {
    let server = typed_mcp::Server::builder("tasks", "1").tools(typed_mcp::tools![awaiting]).build().unwrap();
    let endpoint = Endpoint::serve_with(&server, typed_mcp::transport::http::HttpConfig::default(), |router| {
        router.layer(axum::middleware::from_fn(principal_from_header))
    })
    .await;
    let (_, created) = as_user(&endpoint, Some("alice"), 1, "tools/call", json!({"name": "awaiting"})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let answer =
        json!({"taskId": task, "inputResponses": {"input-0": {"action": "accept", "content": {"confirm": true}}}});
    for user in [Some("bob"), None] {
        for (id, method, params) in [
            (2, "tasks/get", json!({"taskId": task})),
            (3, "tasks/update", answer.clone()),
            (4, "tasks/cancel", json!({"taskId": task})),
        ] {
            let (status, refused) = as_user(&endpoint, user, id, method, params).await;
            assert_eq!((status, error_code(&refused)), (StatusCode::BAD_REQUEST, INVALID_PARAMS), "{user:?} {refused}");
            let message = refused["error"]["message"].as_str().unwrap();
            assert!(message.contains("unknown task"), "the same answer as for an id that does not exist: {refused}");
        }
    }
    // Alice's task is untouched: still hers, and it comes to wait for her answer (nothing
    // cancelled it, nothing answered it).
    within("Alice's task to wait for her answer", async {
        loop {
            let (status, got) = as_user(&endpoint, Some("alice"), 5, "tasks/get", json!({"taskId": task})).await;
            assert_eq!(status, StatusCode::OK, "{got}");
            match got["result"]["status"].as_str() {
                Some("input_required") => break,
                Some("working") => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
                _ => panic!("Alice's task was changed by others: {got}"),
            }
        }
    })
    .await;
    let (_, cancelled) = as_user(&endpoint, Some("alice"), 6, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
}
