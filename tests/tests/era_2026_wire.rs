//! MCP 2026-07-28 in raw JSON-RPC, in process (over `Server::serve_io`) and over Streamable
//! HTTP: `server/discover`, the per-request `_meta`, what every result carries, caching hints,
//! logging, and multi round-trip requests (`input_required`, `inputResponses`, `requestState`):
//! the handler replayed on each retry, sealed state refused when altered, expired or presented
//! on another request, a retry completing on another instance that shares the key, URL flows,
//! and the same process serving a 2025-era session alongside.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::http::principal_from_header;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tests::serve::serve;
use tests::stdio::{LineClient, error_code, error_message, within};
use tokio::sync::oneshot;
use typed_mcp::ServerBuilder;
use typed_mcp::multi_round::state::StateKey;
use typed_mcp::prelude::*;
use typed_mcp::server::{CacheHint, CacheScope, CompletionCall, SessionKey};
use typed_mcp::transport::http::HttpConfig;

const VERSION: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

// ---------------------------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------------------------

/// How many times each handler started: the side effect that shows whether a handler ran.
#[derive(Default)]
struct Runs(Mutex<Vec<&'static str>>);

impl Runs {
    fn record(&self, what: &'static str) {
        self.0.lock().unwrap().push(what);
    }

    fn count(&self, what: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|w| **w == what).count()
    }
}

/// The sessions whose authorization flow was completed (see `protected`).
#[derive(Default)]
struct Authorized(Mutex<HashSet<SessionKey>>);

#[derive(Deserialize, JsonSchema, Elicit)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks for a name.
#[tool]
async fn greet(ctx: Context, runs: State<Runs>, greeting: Option<String>) -> Result<String, String> {
    runs.record("greet");
    let greeting = greeting.unwrap_or_else(|| "Hello".into());
    match ctx.elicit::<Name>("What is your name?").await {
        Ok(Elicitation::Accept(n)) => Ok(format!("{greeting}, {}!", n.name)),
        Ok(Elicitation::Decline) => Ok("declined".into()),
        Ok(Elicitation::Cancel) => Err("cancelled".into()),
        Err(ElicitError::NotSupported { mode }) => Ok(format!("not supported: {mode}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Asks two questions at once.
#[tool]
async fn pair(ctx: Context, runs: State<Runs>) -> Result<String, String> {
    runs.record("pair");
    let (first, second) =
        tokio::join!(ctx.elicit_value::<String>("First word?"), ctx.elicit_value::<String>("Second word?"));
    let word = |e: Result<Elicitation<String>, ElicitError>| match e {
        Ok(Elicitation::Accept(w)) => Ok(w),
        Ok(_) => Ok("-".to_owned()),
        Err(e) => Err(e.to_string()),
    };
    Ok(format!("{} {}", word(first)?, word(second)?))
}

/// Asks one question, then another.
#[tool]
async fn steps(ctx: Context, runs: State<Runs>) -> Result<String, String> {
    runs.record("steps: start");
    if !ctx.confirm("Go on?").await.map_err(|e| e.to_string())? {
        return Ok("stopped".into());
    }
    runs.record("steps: confirmed");
    let count = match ctx.elicit_value::<u32>("How many?").await.map_err(|e| e.to_string())? {
        Elicitation::Accept(n) => n,
        _ => 0,
    };
    runs.record("steps: done");
    Ok(format!("{count} items"))
}

/// Asks with stable keys, and one question only when `extra` is set.
#[tool]
async fn keyed(ctx: Context, extra: bool) -> Result<String, String> {
    let mut words = Vec::new();
    if extra {
        let e = ctx.elicit_value::<String>("Extra?").key("extra").await.map_err(|e| e.to_string())?;
        words.push(e.accepted().unwrap_or_default());
    }
    let main = ctx.elicit_value::<String>("Main?").await.map_err(|e| e.to_string())?;
    words.push(main.accepted().unwrap_or_default());
    Ok(words.join(" "))
}

/// Asks for the client's roots.
#[tool]
async fn roots(ctx: Context) -> Result<String, String> {
    let roots = ctx.roots().await.map_err(|e| e.to_string())?;
    Ok(roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(","))
}

/// Sends the user to a page (URL mode) and reports the flow's id.
#[tool]
async fn url_flow(ctx: Context) -> Result<String, String> {
    match ctx.elicit_url("https://auth.example/flow?id={elicitationId}", "Sign in").await {
        Ok(Elicitation::Accept(id)) => Ok(format!("started {id}")),
        Ok(_) => Ok("refused".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Needs an authorization flow completed for this request first.
#[tool]
async fn protected(ctx: Context, runs: State<Runs>, done: State<Authorized>) -> Result<String, UrlElicitationRequired> {
    runs.record("protected");
    if done.0.0.lock().unwrap().contains(&ctx.session_key()) {
        return Ok("protected action done".into());
    }
    let id = ctx.new_url_elicitation_id();
    Err(UrlElicitationRequired::single(&id, format!("https://auth.example/flow?id={id}"), "Authorize first"))
}

/// Asks from a task of its own.
#[tool]
async fn delegate(ctx: Context, runs: State<Runs>) -> Result<String, String> {
    let task = {
        let (ctx, runs) = (ctx.clone(), runs.clone());
        tokio::spawn(async move {
            let answer = ctx.elicit_value::<String>("From a task?").await;
            if matches!(answer, Err(ElicitError::Cancelled)) {
                runs.record("delegate: task cancelled");
            }
            answer
        })
    };
    match task.await.map_err(|e| e.to_string())? {
        Ok(Elicitation::Accept(word)) => Ok(format!("task got {word}")),
        Ok(_) => Ok("task got nothing".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Payments made, by the request that made them.
#[derive(Default)]
struct Ledger(Mutex<HashSet<String>>);

/// Pays once the user confirms; once per request however often the handler runs.
#[tool]
async fn pay(ctx: Context, ledger: State<Ledger>, amount: u64) -> Result<String, String> {
    if !ctx.confirm(format!("Pay {amount}?")).key("confirm").await.map_err(|e| e.to_string())? {
        return Ok("nothing paid".into());
    }
    let id = ctx.round_trip_id().ok_or("a 2026-era request has a round-trip id")?;
    if !ledger.0.0.lock().unwrap().insert(id.to_owned()) {
        return Ok("already paid".into());
    }
    Ok(format!("paid {amount}"))
}

/// Logs at two levels.
#[tool]
async fn chatty(ctx: Context) -> String {
    ctx.debug("debug detail").await;
    ctx.info("working").await;
    "done".into()
}

/// Adds two integers (asks nothing).
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A note that is read only after the user confirms.
#[resource("notes://secret", mime_type = "text/plain")]
async fn secret(ctx: Context) -> String {
    match ctx.confirm("Reveal the secret note?").await {
        Ok(true) => "the secret".into(),
        _ => "hidden".into(),
    }
}

/// A note that exists only for id 1.
#[resource("notes://{id}")]
fn note(id: u32) -> Option<String> {
    (id == 1).then(|| "note one".to_owned())
}

/// Greets, asking for a name first.
///
/// # Arguments
/// * `topic` - What to talk about.
#[prompt]
async fn welcome(ctx: Context, topic: Option<String>) -> Vec<PromptMessage> {
    let _ = topic;
    let name = match ctx.elicit_value::<String>("Whom to welcome?").await {
        Ok(Elicitation::Accept(n)) => n,
        _ => "stranger".into(),
    };
    vec![PromptMessage::user(format!("Welcome {name}"))]
}

/// A server under test, with handles on its state.
struct Fixture {
    server: Server,
    runs: Arc<Runs>,
    authorized: Arc<Authorized>,
}

impl Fixture {
    fn runs(&self, what: &str) -> usize {
        self.runs.count(what)
    }
}

fn fixture_with(configure: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Fixture {
    let runs = Arc::new(Runs::default());
    let authorized = Arc::new(Authorized::default());
    let builder = Server::builder("tests-2026", "2.0.0")
        .state_arc(runs.clone())
        .state_arc(authorized.clone())
        .state(Ledger::default())
        .tools(tools![greet, pair, steps, keyed, roots, url_flow, protected, pay, delegate, chatty, add])
        .resources(resources![secret, note])
        .prompts(prompts![welcome])
        .complete_prompt_argument(
            "welcome",
            "topic",
            Completer::new(|call: CompletionCall| async move {
                // A completer that asks the user: there is nowhere to put the question.
                let _ = call.ctx.confirm("Complete?").await;
                Ok::<_, ErrorObject>(vec!["x".to_owned()])
            }),
        );
    let server = configure(builder).build().expect("the test server builds");
    Fixture { server, runs, authorized }
}

fn fixture() -> Fixture {
    fixture_with(|b| b)
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

const FORM: &str = r#"{"elicitation": {"form": {}}}"#;
const FORM_AND_URL: &str = r#"{"elicitation": {"form": {}, "url": {}}}"#;

fn caps(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The `_meta` of a 2026-era request whose client declares `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        META_VERSION: VERSION,
        META_CAPABILITIES: capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "tests-2026", "version": "0"},
    })
}

/// `params` with the 2026 `_meta` added.
fn with_meta(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(capabilities);
    params
}

fn call_params(name: &str, arguments: Value, capabilities: Value) -> Value {
    with_meta(json!({"name": name, "arguments": arguments}), capabilities)
}

/// The parameters of a retry of `first` with `responses` and the state of `previous`.
fn retry_params(first: &Value, previous: &Value, responses: Value) -> Value {
    let mut params = first.clone();
    params["inputResponses"] = responses;
    params["requestState"] = previous["requestState"].clone();
    params
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The result of an `input_required` answer, checked for its shape.
fn input_required(response: &Value) -> Value {
    let result = response.get("result").unwrap_or_else(|| panic!("expected a result, got {response}"));
    assert_eq!(result["resultType"], "input_required", "{response}");
    assert!(result["requestState"].is_string(), "input_required carries requestState: {response}");
    assert!(result.get("content").is_none(), "no tool content yet: {response}");
    result.clone()
}

/// The result of a completed request, checked for `resultType` and the server's identity.
fn complete(response: &Value) -> Value {
    let result = response.get("result").unwrap_or_else(|| panic!("expected a result, got {response}"));
    assert_eq!(result["resultType"], "complete", "{response}");
    assert_eq!(result["_meta"][META_SERVER_INFO]["name"], "tests-2026", "{response}");
    assert_eq!(result["_meta"][META_SERVER_INFO]["version"], "2.0.0", "{response}");
    result.clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("expected text content: {result}"))
}

/// The keys of an `input_required` result's `inputRequests`, in order.
fn keys(result: &Value) -> Vec<String> {
    result["inputRequests"].as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

/// A client of a server served in process; nothing is initialized.
struct Era2026 {
    client: LineClient,
}

impl Era2026 {
    fn new(server: &Server) -> Self {
        Era2026 { client: serve(server) }
    }

    /// Sends a request; nothing else may arrive before its response.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.client.request(method, params).await
    }

    async fn call(&mut self, params: &Value) -> Value {
        self.request("tools/call", params.clone()).await
    }
}

// ---------------------------------------------------------------------------------------------
// Discovery, `_meta`, what every result carries
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn discover_names_versions_capabilities_and_the_server() {
    let mut c = Era2026::new(&fixture().server);
    let response = c.request("server/discover", json!({"_meta": meta(json!({}))})).await;
    let result = complete(&response);
    let versions = result["supportedVersions"].as_array().expect("supportedVersions");
    assert_eq!(versions[0], VERSION, "{result}");
    assert!(versions.contains(&json!("2025-11-25")), "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    assert!(result["capabilities"]["prompts"].is_object(), "{result}");
    assert!(result["capabilities"]["resources"].is_object(), "{result}");
    assert!(result["capabilities"].get("elicitation").is_none(), "server capabilities only: {result}");
    assert_eq!(result["_meta"][META_SERVER_INFO]["name"], "tests-2026");
    assert_eq!(result["ttlMs"], 60_000, "{result}");
    assert_eq!(result["cacheScope"], "private", "{result}");
    // Capabilities are required on discovery too, as on every 2026-era request.
    let bare = c.request("server/discover", json!({"_meta": {META_VERSION: VERSION}})).await;
    assert_eq!(error_code(&bare), -32602, "{bare}");
    assert!(error_message(&bare).contains("clientCapabilities"), "{bare}");
}

#[tokio::test]
async fn missing_capabilities_are_invalid_params() {
    let mut c = Era2026::new(&fixture().server);
    let response = c
        .request("tools/call", json!({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {META_VERSION: VERSION}}))
        .await;
    assert_eq!(error_code(&response), -32602, "{response}");
    assert!(error_message(&response).contains("clientCapabilities"), "{response}");
    let response = c.request("tools/list", json!({"_meta": {META_VERSION: VERSION, META_CAPABILITIES: "all"}})).await;
    assert_eq!(error_code(&response), -32602, "{response}");
}

#[tokio::test]
async fn an_unsupported_version_is_refused_with_what_is_supported() {
    let mut c = Era2026::new(&fixture().server);
    for requested in ["2099-01-01", "2025-11-25"] {
        let mut params = with_meta(json!({}), json!({}));
        params["_meta"][META_VERSION] = json!(requested);
        let response = c.request("tools/list", params).await;
        assert_eq!(error_code(&response), -32022, "{response}");
        let data = &response["error"]["data"];
        assert_eq!(data["requested"], requested, "{response}");
        assert!(data["supported"].as_array().is_some_and(|s| s.contains(&json!(VERSION))), "{response}");
    }
}

#[tokio::test]
async fn methods_removed_in_2026_are_not_found() {
    let mut c = Era2026::new(&fixture().server);
    for (method, params) in [
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "debug"})),
        ("resources/subscribe", json!({"uri": "notes://secret"})),
        ("initialize", json!({})),
    ] {
        let response = c.request(method, with_meta(params, json!({}))).await;
        assert_eq!(error_code(&response), -32601, "{method}: {response}");
    }
}

#[tokio::test]
async fn results_say_complete_and_name_the_server() {
    let mut c = Era2026::new(&fixture().server);
    let result = complete(&c.call(&call_params("add", json!({"a": 2, "b": 40}), json!({}))).await);
    assert_eq!(text(&result), "42");
    assert!(result.get("ttlMs").is_none() && result.get("cacheScope").is_none(), "a tool call is not cached: {result}");
    for method in ["tools/list", "prompts/list", "resources/list", "resources/templates/list"] {
        let result = complete(&c.request(method, with_meta(json!({}), json!({}))).await);
        assert_eq!(result["ttlMs"], 60_000, "{method}: {result}");
        assert_eq!(result["cacheScope"], "private", "{method}: {result}");
    }
    let read = complete(&c.request("resources/read", with_meta(json!({"uri": "notes://1"}), json!({}))).await);
    assert_eq!(read["contents"][0]["text"], "note one");
    assert_eq!(read["ttlMs"], 60_000, "{read}");
}

#[tokio::test]
async fn cache_hints_follow_the_builder() {
    let f = fixture_with(|b| {
        b.cache_hint("*", CacheHint { ttl_ms: 0, scope: CacheScope::Private })
            .cache_hint("tools/list", CacheHint { ttl_ms: 3_600_000, scope: CacheScope::Public })
    });
    let mut c = Era2026::new(&f.server);
    let tools = complete(&c.request("tools/list", with_meta(json!({}), json!({}))).await);
    assert_eq!((tools["ttlMs"].clone(), tools["cacheScope"].clone()), (json!(3_600_000), json!("public")));
    let prompts = complete(&c.request("prompts/list", with_meta(json!({}), json!({}))).await);
    assert_eq!((prompts["ttlMs"].clone(), prompts["cacheScope"].clone()), (json!(0), json!("private")));
}

#[tokio::test]
async fn log_messages_only_at_the_level_the_request_asks_for() {
    let mut c = Era2026::new(&fixture().server);
    let quiet = c.call(&call_params("chatty", json!({}), json!({}))).await;
    assert_eq!(text(&complete(&quiet)), "done");

    let mut params = call_params("chatty", json!({}), json!({}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let (response, before) = c.client.request_collect("tools/call", params).await;
    assert_eq!(text(&complete(&response)), "done");
    assert_eq!(before.len(), 1, "only the info message: {before:?}");
    assert_eq!(before[0]["method"], "notifications/message");
    assert_eq!(before[0]["params"], json!({"level": "info", "data": "working"}));
}

#[tokio::test]
async fn an_unknown_resource_is_invalid_params() {
    let mut c = Era2026::new(&fixture().server);
    for uri in ["notes://2", "nothing://here"] {
        let response = c.request("resources/read", with_meta(json!({"uri": uri}), json!({}))).await;
        assert_eq!(error_code(&response), -32602, "{uri}: {response}");
    }
}

// ---------------------------------------------------------------------------------------------
// Multi round-trip requests
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_elicitation_becomes_input_required_and_the_retry_completes() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("greet", json!({"greeting": "Hi"}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    assert_eq!(keys(&round), ["input-0"]);
    let request = &round["inputRequests"]["input-0"];
    assert_eq!(request["method"], "elicitation/create", "{round}");
    assert_eq!(request["params"]["mode"], "form", "{round}");
    assert_eq!(request["params"]["message"], "What is your name?", "{round}");
    assert_eq!(request["params"]["requestedSchema"]["properties"]["name"]["type"], "string", "{round}");
    assert!(round.get("ttlMs").is_none(), "input_required is never cached: {round}");
    assert_eq!(round["_meta"][META_SERVER_INFO]["name"], "tests-2026");

    let done =
        complete(&c.call(&retry_params(&first, &round, json!({"input-0": accept(json!({"name": "Ada"}))}))).await);
    assert_eq!(text(&done), "Hi, Ada!");
    assert_eq!(f.runs("greet"), 2, "the handler ran once per round");

    let declined = c.call(&retry_params(&first, &round, json!({"input-0": {"action": "decline"}}))).await;
    assert_eq!(text(&complete(&declined)), "declined");
    let cancelled = complete(&c.call(&retry_params(&first, &round, json!({"input-0": {"action": "cancel"}}))).await);
    assert_eq!((text(&cancelled), &cancelled["isError"]), ("cancelled", &json!(true)));
}

#[tokio::test]
async fn requests_made_together_share_a_round() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("pair", json!({}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    assert_eq!(keys(&round), ["input-0", "input-1"]);
    assert_eq!(round["inputRequests"]["input-0"]["params"]["message"], "First word?");
    assert_eq!(round["inputRequests"]["input-1"]["params"]["message"], "Second word?");

    // Only one answered: the other is asked again, the answer given is kept.
    let half = input_required(
        &c.call(&retry_params(&first, &round, json!({"input-1": accept(json!({"value": "world"}))}))).await,
    );
    assert_eq!(keys(&half), ["input-0"]);
    let done = c.call(&retry_params(&first, &half, json!({"input-0": accept(json!({"value": "hello"}))}))).await;
    assert_eq!(text(&complete(&done)), "hello world");
    assert_eq!(f.runs("pair"), 3);
}

#[tokio::test]
async fn sequential_questions_take_a_round_each_and_earlier_code_runs_again() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("steps", json!({}), caps(FORM));
    let one = input_required(&c.call(&first).await);
    assert_eq!(keys(&one), ["input-0"]);
    assert_eq!(one["inputRequests"]["input-0"]["params"]["message"], "Go on?");

    let two = input_required(
        &c.call(&retry_params(&first, &one, json!({"input-0": accept(json!({"confirm": true}))}))).await,
    );
    assert_eq!(keys(&two), ["input-1"], "the first answer travels in requestState");
    assert_eq!(two["inputRequests"]["input-1"]["params"]["message"], "How many?");

    let done = c.call(&retry_params(&first, &two, json!({"input-1": accept(json!({"value": 3}))}))).await;
    assert_eq!(text(&complete(&done)), "3 items");
    // Code before a question runs on every round; code after the last one runs once.
    assert_eq!(f.runs("steps: start"), 3);
    assert_eq!(f.runs("steps: confirmed"), 2);
    assert_eq!(f.runs("steps: done"), 1);
}

#[tokio::test]
async fn a_retry_without_the_answer_is_asked_again_and_unknown_answers_are_ignored() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    let again = input_required(&c.call(&retry_params(&first, &round, json!({}))).await);
    assert_eq!(keys(&again), ["input-0"]);
    assert_eq!(again["inputRequests"], round["inputRequests"]);

    let extra = json!({"input-7": accept(json!({"name": "Eve"})), "input-0": accept(json!({"name": "Bo"}))});
    assert_eq!(text(&complete(&c.call(&retry_params(&first, &again, extra)).await)), "Hello, Bo!");
}

#[tokio::test]
async fn invalid_input_responses_are_invalid_params() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    let before = f.runs("greet");
    for responses in [json!([1, 2]), json!("yes"), json!({"input-0": "accept"})] {
        let response = c.call(&retry_params(&first, &round, responses.clone())).await;
        assert_eq!(error_code(&response), -32602, "{responses}: {response}");
    }
    let mut bad_state = retry_params(&first, &round, json!({}));
    bad_state["requestState"] = json!({"not": "a string"});
    assert_eq!(error_code(&c.call(&bad_state).await), -32602);
    assert_eq!(f.runs("greet"), before, "the handler never ran");
}

#[tokio::test]
async fn an_answer_that_does_not_fit_the_form_is_an_error_in_the_tool() {
    let mut c = Era2026::new(&fixture().server);
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    let wrong = complete(&c.call(&retry_params(&first, &round, json!({"input-0": accept(json!({"name": 7}))}))).await);
    assert_eq!(wrong["isError"], true, "{wrong}");
    assert!(text(&wrong).contains("name"), "{wrong}");
}

#[tokio::test]
async fn an_earlier_rounds_answer_cannot_be_replaced() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("steps", json!({}), caps(FORM));
    let one = input_required(&c.call(&first).await);
    let two = input_required(
        &c.call(&retry_params(&first, &one, json!({"input-0": accept(json!({"confirm": true}))}))).await,
    );
    // The retry tries to rewrite the sealed first answer: the sealed one stands.
    let responses = json!({"input-0": accept(json!({"confirm": false})), "input-1": accept(json!({"value": 2}))});
    let done = c.call(&retry_params(&first, &two, responses)).await;
    assert_eq!(text(&complete(&done)), "2 items");
}

async fn refused(c: &mut Era2026, f: &Fixture, params: Value, what: &str) -> Value {
    let before = f.runs("greet");
    let response = c.call(&params).await;
    assert_eq!(error_code(&response), -32602, "{what}: {response}");
    assert!(error_message(&response).contains("requestState"), "{what}: {response}");
    assert_eq!(f.runs("greet"), before, "{what}: the handler must not run");
    response
}

#[tokio::test]
async fn altered_or_misplaced_state_is_refused_before_the_handler_runs() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("greet", json!({"greeting": "Hi"}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    let answer = json!({"input-0": accept(json!({"name": "Ada"}))});

    let mut tampered = retry_params(&first, &round, answer.clone());
    let state = round["requestState"].as_str().unwrap();
    let flipped = match state.strip_prefix('A') {
        Some(rest) => format!("B{rest}"),
        None => format!("A{}", &state[1..]),
    };
    tampered["requestState"] = json!(flipped);
    refused(&mut c, &f, tampered, "tampered").await;

    let mut garbage = retry_params(&first, &round, answer.clone());
    garbage["requestState"] = json!("not-a-state");
    refused(&mut c, &f, garbage, "garbage").await;

    let other_arguments =
        retry_params(&call_params("greet", json!({"greeting": "Yo"}), caps(FORM)), &round, answer.clone());
    let response = refused(&mut c, &f, other_arguments, "other arguments").await;
    assert!(error_message(&response).contains("arguments"), "{response}");

    // Another tool that asks the same question.
    let other_tool = retry_params(&call_params("keyed", json!({"extra": false}), caps(FORM)), &round, answer.clone());
    let response = c.call(&other_tool).await;
    assert_eq!(error_code(&response), -32602, "{response}");
    assert!(error_message(&response).contains("name"), "{response}");

    // Another method.
    let mut as_prompt = retry_params(&with_meta(json!({"name": "greet"}), caps(FORM)), &round, answer.clone());
    as_prompt["name"] = json!("welcome");
    let response = c.request("prompts/get", as_prompt).await;
    assert_eq!(error_code(&response), -32602, "{response}");

    // The genuine retry still completes.
    assert_eq!(text(&complete(&c.call(&retry_params(&first, &round, answer)).await)), "Hi, Ada!");
}

#[tokio::test]
async fn expired_state_is_refused() {
    let f = fixture_with(|b| b.request_state_ttl(Duration::from_millis(50)));
    let mut c = Era2026::new(&f.server);
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    tokio::time::sleep(Duration::from_millis(120)).await;
    let response =
        refused(&mut c, &f, retry_params(&first, &round, json!({"input-0": accept(json!({"name": "A"}))})), "expired")
            .await;
    assert!(error_message(&response).contains("expired"), "{response}");
}

#[tokio::test]
async fn a_retry_completes_on_another_instance_that_shares_the_key() {
    let key = [7u8; 32];
    let a = fixture_with(|b| b.request_state_key(StateKey::from_bytes(key)));
    let b = fixture_with(|b| b.request_state_key(StateKey::from_bytes(key)));
    let stranger = fixture();

    let first = call_params("steps", json!({}), caps(FORM));
    let one = input_required(&Era2026::new(&a.server).call(&first).await);
    let two = input_required(
        &Era2026::new(&b.server)
            .call(&retry_params(&first, &one, json!({"input-0": accept(json!({"confirm": true}))})))
            .await,
    );
    let done = Era2026::new(&a.server)
        .call(&retry_params(&first, &two, json!({"input-1": accept(json!({"value": 5}))})))
        .await;
    assert_eq!(text(&complete(&done)), "5 items");
    assert_eq!((a.runs("steps: start"), b.runs("steps: start")), (2, 1));

    // An instance with a key of its own refuses the state, clearly, without running anything.
    let response = Era2026::new(&stranger.server)
        .call(&retry_params(&first, &two, json!({"input-1": accept(json!({"value": 5}))})))
        .await;
    assert_eq!(error_code(&response), -32602, "{response}");
    assert!(error_message(&response).contains("requestState failed verification"), "{response}");
    assert_eq!(stranger.runs("steps: start"), 0);
}

#[tokio::test]
async fn a_client_without_elicitation_is_not_asked() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let result = complete(&c.call(&call_params("greet", json!({}), json!({}))).await);
    assert_eq!(text(&result), "not supported: form");
    // A client declaring only forms is not sent the URL flow either: the tool fails for want of
    // URL mode, which the client is told.
    let response = c.call(&call_params("url_flow", json!({}), caps(FORM))).await;
    assert_eq!(error_code(&response), -32021, "{response}");
    assert_eq!(response["error"]["data"]["requiredCapabilities"], json!({"elicitation": {"url": {}}}), "{response}");
    // The message names the missing capability exactly: this client declared `elicitation`.
    assert!(error_message(&response).contains("did not declare elicitation.url"), "{response}");
}

#[tokio::test]
async fn a_handler_failing_for_want_of_a_capability_names_it() {
    let mut c = Era2026::new(&fixture().server);
    // `roots` fails when it cannot ask: -32021, naming what the client must declare.
    let response = c.call(&call_params("roots", json!({}), json!({}))).await;
    assert_eq!(error_code(&response), -32021, "{response}");
    assert_eq!(response["error"]["data"]["requiredCapabilities"], json!({"roots": {}}), "{response}");
    assert!(error_message(&response).contains("roots"), "{response}");
    // Declared, it asks as usual.
    let round = input_required(&c.call(&call_params("roots", json!({}), json!({"roots": {}}))).await);
    assert_eq!(round["inputRequests"]["input-0"]["method"], "roots/list", "{round}");
    // A handler that goes on without it (`greet` answers "not supported") completes as usual.
    let result = complete(&c.call(&call_params("greet", json!({}), json!({}))).await);
    assert_eq!(text(&result), "not supported: form");
}

#[tokio::test]
async fn an_answer_of_the_wrong_shape_is_invalid_params() {
    let f = fixture();
    let mut c = Era2026::new(&f.server);
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    // Not an `ElicitResult`: the client's mistake, reported as such rather than handed to the tool.
    for answer in [json!({"action": "maybe"}), json!({"content": {"name": "x"}})] {
        let response = c.call(&retry_params(&first, &round, json!({"input-0": answer.clone()}))).await;
        assert_eq!(error_code(&response), -32602, "{answer}: {response}");
        assert!(error_message(&response).contains("input-0"), "{response}");
        assert!(error_message(&response).contains("elicitation/create"), "{response}");
    }
    // Not a `ListRootsResult` either.
    let first = call_params("roots", json!({}), json!({"roots": {}}));
    let round = input_required(&c.call(&first).await);
    let response = c.call(&retry_params(&first, &round, json!({"input-0": {"roots": "file:///x"}}))).await;
    assert_eq!(error_code(&response), -32602, "{response}");
    // A right one completes.
    let answer = json!({"input-0": {"roots": [{"uri": "file:///x"}]}});
    assert_eq!(text(&complete(&c.call(&retry_params(&first, &round, answer)).await)), "file:///x");
}

#[tokio::test]
async fn stable_keys_do_not_move_with_the_questions_before_them() {
    let mut c = Era2026::new(&fixture().server);
    let plain = input_required(&c.call(&call_params("keyed", json!({"extra": false}), caps(FORM))).await);
    assert_eq!(keys(&plain), ["input-0"]);
    let first = call_params("keyed", json!({"extra": true}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    assert_eq!(keys(&round), ["extra"], "an explicit key, and it takes no place in the call order");
    let round =
        input_required(&c.call(&retry_params(&first, &round, json!({"extra": accept(json!({"value": "a"}))}))).await);
    assert_eq!(keys(&round), ["input-0"]);
    let done = c.call(&retry_params(&first, &round, json!({"input-0": accept(json!({"value": "b"}))}))).await;
    assert_eq!(text(&complete(&done)), "a b");
}

#[tokio::test]
async fn the_round_trip_id_guards_a_side_effect_against_replays() {
    let mut c = Era2026::new(&fixture().server);
    let first = call_params("pay", json!({"amount": 5}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    assert_eq!(keys(&round), ["confirm"]);
    let retry = retry_params(&first, &round, json!({"confirm": accept(json!({"confirm": true}))}));
    assert_eq!(text(&complete(&c.call(&retry).await)), "paid 5");
    // The client resends its last retry: the handler runs again, the payment does not.
    assert_eq!(text(&complete(&c.call(&retry).await)), "already paid");
    // The same arguments in a new request: a new id.
    let round = input_required(&c.call(&first).await);
    let retry = retry_params(&first, &round, json!({"confirm": accept(json!({"confirm": true}))}));
    assert_eq!(text(&complete(&c.call(&retry).await)), "paid 5");
}

#[tokio::test]
async fn a_question_from_a_spawned_task_ends_the_round_too() {
    let f = fixture();
    let mut c = Era2026::new(&f.server);
    let first = call_params("delegate", json!({}), caps(FORM));
    // The handler waits on its task, not on the question: the round must end all the same.
    let round = input_required(&c.call(&first).await);
    assert_eq!(round["inputRequests"]["input-0"]["params"]["message"], "From a task?");
    // The task does not wait forever for an answer that comes to another run.
    within("the task to end", async {
        while f.runs("delegate: task cancelled") == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let done = c.call(&retry_params(&first, &round, json!({"input-0": accept(json!({"value": "hi"}))}))).await;
    assert_eq!(text(&complete(&done)), "task got hi");
}

#[tokio::test]
async fn roots_and_prompts_and_resources_ask_too() {
    let mut c = Era2026::new(&fixture().server);
    let first = call_params("roots", json!({}), json!({"roots": {}}));
    let round = input_required(&c.call(&first).await);
    assert_eq!(round["inputRequests"]["input-0"]["method"], "roots/list", "{round}");
    let roots = json!({"input-0": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}});
    assert_eq!(text(&complete(&c.call(&retry_params(&first, &round, roots)).await)), "file:///a,file:///b");

    let first = with_meta(json!({"name": "welcome"}), caps(FORM));
    let round = input_required(&c.request("prompts/get", first.clone()).await);
    let answer = json!({"input-0": accept(json!({"value": "Ada"}))});
    let done = complete(&c.request("prompts/get", retry_params(&first, &round, answer)).await);
    assert_eq!(done["messages"][0]["content"]["text"], "Welcome Ada", "{done}");

    let first = with_meta(json!({"uri": "notes://secret"}), caps(FORM));
    let round = input_required(&c.request("resources/read", first.clone()).await);
    assert!(round.get("ttlMs").is_none() && round.get("cacheScope").is_none(), "never cached: {round}");
    let answer = json!({"input-0": accept(json!({"confirm": true}))});
    let done = complete(&c.request("resources/read", retry_params(&first, &round, answer)).await);
    assert_eq!(done["contents"][0]["text"], "the secret", "{done}");
    assert_eq!(done["ttlMs"], 60_000, "{done}");
}

#[tokio::test]
async fn input_required_only_on_the_methods_that_may_carry_it() {
    let mut c = Era2026::new(&fixture().server);
    let params = with_meta(
        json!({"ref": {"type": "ref/prompt", "name": "welcome"}, "argument": {"name": "topic", "value": ""}}),
        caps(FORM),
    );
    let response = c.request("completion/complete", params).await;
    assert!(response.get("result").is_none_or(|r| r["resultType"] != "input_required"), "{response}");
    assert!(response.get("error").is_some(), "a completer cannot ask the user: {response}");
}

// ---------------------------------------------------------------------------------------------
// URL mode in the 2026 era
// ---------------------------------------------------------------------------------------------

/// The elicitation id in a URL `…?id=<id>`.
fn id_in(url: &Value) -> String {
    let url = url.as_str().unwrap_or_else(|| panic!("a URL: {url}"));
    url.split_once("id=").map(|(_, id)| id.to_owned()).unwrap_or_else(|| panic!("no id in {url}"))
}

#[tokio::test]
async fn a_url_request_has_no_id_on_the_wire_and_keeps_its_id_across_rounds() {
    let mut c = Era2026::new(&fixture().server);
    let first = call_params("url_flow", json!({}), caps(FORM_AND_URL));
    let round = input_required(&c.call(&first).await);
    let params = &round["inputRequests"]["input-0"]["params"];
    assert_eq!(params["mode"], "url", "{round}");
    assert_eq!(params["message"], "Sign in", "{round}");
    assert!(params.get("elicitationId").is_none(), "no elicitationId in 2026-07-28: {round}");
    let visited = id_in(&params["url"]);

    let done = complete(&c.call(&retry_params(&first, &round, json!({"input-0": {"action": "accept"}}))).await);
    assert_eq!(text(&done), format!("started {visited}"), "the handler sees the flow the user was sent to");
}

#[tokio::test]
async fn url_elicitation_required_becomes_a_url_input_request() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("protected", json!({}), caps(FORM_AND_URL));
    let round = input_required(&c.call(&first).await);
    let keys = keys(&round);
    assert_eq!(keys.len(), 1, "{round}");
    let request = &round["inputRequests"][&keys[0]];
    assert_eq!(request["method"], "elicitation/create", "{round}");
    assert_eq!(request["params"]["mode"], "url", "{round}");
    assert_eq!(request["params"]["message"], "Authorize first", "{round}");
    assert!(request["params"].get("elicitationId").is_none(), "{round}");
    let id = id_in(&request["params"]["url"]);

    // The user accepts but has not finished in the browser yet: nothing new to ask; retry later.
    let accepted = json!({&keys[0]: {"action": "accept"}});
    let waiting = input_required(&c.call(&retry_params(&first, &round, accepted.clone())).await);
    assert!(waiting.get("inputRequests").is_none_or(|r| r == &json!({})), "nothing to ask again: {waiting}");

    // The flow's page completes it; in this era no notification goes to the client.
    let done = server.url_elicitations().complete(&id).await.expect("the flow is known");
    f.authorized.0.lock().unwrap().insert(done.session);
    let (response, before) = c.client.request_collect("tools/call", retry_params(&first, &waiting, json!({}))).await;
    assert_eq!(before, Vec::<Value>::new(), "no notifications/elicitation/complete in 2026-07-28");
    assert_eq!(text(&complete(&response)), "protected action done");

    // A later call is a new request: it must be authorized again.
    let again = input_required(&c.call(&first).await);
    assert_ne!(again["inputRequests"], round["inputRequests"]);
}

#[tokio::test]
async fn a_declined_url_flow_ends_the_request() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let first = call_params("protected", json!({}), caps(FORM_AND_URL));
    let round = input_required(&c.call(&first).await);
    let key = keys(&round).remove(0);
    for action in ["decline", "cancel"] {
        let response = c.call(&retry_params(&first, &round, json!({&key: {"action": action}}))).await;
        // 2026-07-28 has no -32042: the call fails as a tool result, naming no elicitation.
        assert!(response.get("error").is_none(), "{action}: no JSON-RPC error in this era: {response}");
        let result = complete(&response);
        assert_eq!(result["isError"], true, "{action}: {response}");
        assert!(text(&result).contains("did not complete the action"), "{action}: {response}");
        assert!(!response.to_string().contains("elicitationId"), "{action}: {response}");
    }
}

#[tokio::test]
async fn url_elicitation_required_needs_url_mode() {
    let mut c = Era2026::new(&fixture().server);
    let response = c.call(&call_params("protected", json!({}), caps(FORM))).await;
    assert_eq!(error_code(&response), -32021, "{response}");
}

// ---------------------------------------------------------------------------------------------
// Both eras at once
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn one_connection_serves_a_2025_session_and_2026_requests_at_once() {
    let f = fixture();
    let server = &f.server;
    let mut c = Era2026::new(server);
    let init = c
        .client
        .result(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": caps(FORM),
                "clientInfo": {"name": "old", "version": "1"},
            }),
        )
        .await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    c.client.notify("notifications/initialized", json!({})).await;

    // A 2025-era call that elicits: the server sends `elicitation/create` and waits.
    c.client.send_request(1, "tools/call", json!({"name": "greet", "arguments": {}})).await;
    let asked = c.client.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert!(asked["params"].get("mode").is_some(), "{asked}");

    // Meanwhile a 2026-era call on the same connection gets `input_required`.
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&c.call(&first).await);
    assert_eq!(keys(&round), ["input-0"]);

    // The 2025-era call finishes when its elicitation is answered.
    c.client.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": accept(json!({"name": "Old"}))})).await;
    let legacy = c.client.recv().await;
    assert_eq!(legacy["id"], 1, "{legacy}");
    assert_eq!(legacy["result"]["content"][0]["text"], "Hello, Old!");
    assert!(legacy["result"].get("resultType").is_none(), "2025-era results are unchanged: {legacy}");

    let done = c.call(&retry_params(&first, &round, json!({"input-0": accept(json!({"name": "New"}))}))).await;
    assert_eq!(text(&complete(&done)), "Hello, New!");
    // The session still works the old way.
    assert_eq!(c.client.result("ping", json!({})).await, json!({}));
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------------------------

struct Http {
    fixture: Fixture,
    url: String,
    client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Http {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// What an HTTP request came back with.
struct Reply {
    status: StatusCode,
    session: Option<String>,
    body: Value,
}

impl Http {
    async fn start(fixture: Fixture) -> Self {
        let app = fixture
            .server
            .streamable_http(HttpConfig::default())
            .router_at("/mcp")
            .layer(axum::middleware::from_fn(principal_from_header));
        let (url, stop) = crate::support::http::serve_router(app).await;
        let client = reqwest::Client::builder().no_proxy().build().expect("an HTTP client");
        Http { fixture, url, client, stop: Some(stop) }
    }

    /// POSTs a request with exactly `headers` besides the content headers.
    async fn post_raw(&self, body: &Value, headers: &[(&str, &str)]) -> Reply {
        let mut post = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body.to_string());
        for (name, value) in headers {
            post = post.header(*name, *value);
        }
        let response = within("an HTTP response", post.send()).await.expect("POST");
        let status = response.status();
        let session = response.headers().get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        let sse =
            response.headers().get(CONTENT_TYPE).is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
        let text = within("the body", response.text()).await.expect("read the body");
        let body = if sse {
            // The response is the last `data:` line that is a response.
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .rfind(|m| m.get("method").is_none())
                .unwrap_or(Value::Null)
        } else if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {text}"))
        };
        Reply { status, session, body }
    }

    /// POSTs a 2026-era request with the id `id` and the headers it needs.
    async fn post_with_id(&self, id: u64, method: &str, params: Value) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let name = body["params"].get("name").and_then(Value::as_str);
        let mut headers = vec![("mcp-protocol-version", VERSION), ("mcp-method", method)];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        self.post_raw(&body, &headers).await
    }

    /// POSTs a 2026-era request with the headers it needs (`MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name` where it applies) and, if given, a user.
    async fn post(&self, method: &str, params: &Value, user: Option<&str>) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str);
        let mut headers = vec![("mcp-protocol-version", VERSION), ("mcp-method", method)];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        if let Some(user) = user {
            headers.push(("x-user", user));
        }
        self.post_raw(&body, &headers).await
    }
}

#[tokio::test]
async fn http_serves_2026_requests_without_sessions() {
    let h = Http::start(fixture()).await;
    let discover = h.post("server/discover", &json!({"_meta": meta(json!({}))}), None).await;
    assert_eq!(discover.status, StatusCode::OK);
    assert_eq!(discover.session, None, "no Mcp-Session-Id in 2026-07-28");
    assert_eq!(complete(&discover.body)["supportedVersions"][0], VERSION);

    let listed = h.post("tools/list", &with_meta(json!({}), json!({})), None).await;
    assert_eq!((listed.status, listed.session), (StatusCode::OK, None));
    assert_eq!(complete(&listed.body)["ttlMs"], 60_000);

    // Elicitation is a round trip of its own per POST; nothing stays open in between.
    let first = call_params("greet", json!({}), caps(FORM));
    let round = h.post("tools/call", &first, None).await;
    assert_eq!((round.status, round.session), (StatusCode::OK, None));
    let round = input_required(&round.body);
    let done = h
        .post("tools/call", &retry_params(&first, &round, json!({"input-0": accept(json!({"name": "Web"}))})), None)
        .await;
    assert_eq!(text(&complete(&done.body)), "Hello, Web!");
    assert_eq!(h.fixture.runs("greet"), 2);
}

#[tokio::test]
async fn http_headers_must_match_the_body() {
    let h = Http::start(fixture()).await;
    let params = call_params("add", json!({"a": 1, "b": 2}), json!({}));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let base = [("mcp-protocol-version", VERSION)];
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no Mcp-Method", vec![base[0], ("mcp-name", "add")]),
        ("other Mcp-Method", vec![base[0], ("mcp-method", "tools/list"), ("mcp-name", "add")]),
        ("no Mcp-Name", vec![base[0], ("mcp-method", "tools/call")]),
        ("other Mcp-Name", vec![base[0], ("mcp-method", "tools/call"), ("mcp-name", "greet")]),
        ("other encoded Mcp-Name", vec![base[0], ("mcp-method", "tools/call"), ("mcp-name", "=?base64?Z3JlZXQ=?=")]),
        (
            "other version",
            vec![("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/call"), ("mcp-name", "add")],
        ),
    ];
    for (what, headers) in cases {
        let reply = h.post_raw(&body, &headers).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{what}: {}", reply.body);
        assert_eq!(error_code(&reply.body), -32020, "{what}: {}", reply.body);
    }
    // `=?base64?…?=` values decode (here "add" and "tools/call").
    let encoded = [base[0], ("mcp-method", "=?base64?dG9vbHMvY2FsbA==?="), ("mcp-name", "=?base64?YWRk?=")];
    let reply = h.post_raw(&body, &encoded).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(text(&complete(&reply.body)), "3");
    // Methods without a name need no Mcp-Name.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": with_meta(json!({}), json!({}))});
    let reply = h.post_raw(&list, &[base[0], ("mcp-method", "tools/list")]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

#[tokio::test]
async fn http_state_is_bound_to_the_user() {
    let h = Http::start(fixture()).await;
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&h.post("tools/call", &first, Some("alice")).await.body);
    let retry = retry_params(&first, &round, json!({"input-0": accept(json!({"name": "Alice"}))}));
    let before = h.fixture.runs("greet");
    for user in [Some("mallory"), None] {
        let reply = h.post("tools/call", &retry, user).await;
        assert_eq!(error_code(&reply.body), -32602, "{user:?}: {}", reply.body);
        assert!(error_message(&reply.body).contains("user"), "{}", reply.body);
    }
    assert_eq!(h.fixture.runs("greet"), before, "the handler never ran for another user");
    let done = h.post("tools/call", &retry, Some("alice")).await;
    assert_eq!(text(&complete(&done.body)), "Hello, Alice!");
}

#[tokio::test]
async fn http_serves_a_2025_session_and_2026_requests_side_by_side() {
    let h = Http::start(fixture()).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}});
    let opened = h.post_raw(&init, &[]).await;
    let session = opened.session.expect("a 2025-era session has an id");
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let ack = h.post_raw(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), &headers).await;
    assert_eq!(ack.status, StatusCode::ACCEPTED);

    let call_2026 = h.post("tools/call", &call_params("add", json!({"a": 1, "b": 1}), json!({})), None).await;
    assert_eq!(text(&complete(&call_2026.body)), "2");
    let add = json!({"name": "add", "arguments": {"a": 2, "b": 2}});
    let old_call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": add});
    let reply = h.post_raw(&old_call, &headers).await;
    assert_eq!(reply.body["result"]["content"][0]["text"], "4", "{}", reply.body);
    assert!(reply.body["result"].get("resultType").is_none(), "{}", reply.body);
}

#[tokio::test]
async fn http_statuses_follow_the_error_and_errors_name_the_request() {
    let h = Http::start(fixture()).await;
    let post = |id: u64, method: &'static str, params: Value| h.post_with_id(id, method, params);
    // A method the server does not have, or that 2026-07-28 removed: 404.
    for (id, method) in [(11, "unknown/method"), (12, "initialize"), (13, "ping"), (14, "resources/subscribe")] {
        let reply = post(id, method, with_meta(json!({}), json!({}))).await;
        assert_eq!(
            (reply.status, error_code(&reply.body)),
            (StatusCode::NOT_FOUND, -32601),
            "{method}: {}",
            reply.body
        );
        assert_eq!(reply.body["id"], id, "{}", reply.body);
    }
    // A malformed `_meta` (here none at all, on a request whose header says 2026-07-28): 400.
    let reply = post(21, "tools/list", json!({})).await;
    assert_eq!((reply.status, error_code(&reply.body)), (StatusCode::BAD_REQUEST, -32602), "{}", reply.body);
    assert_eq!(reply.body["id"], 21, "{}", reply.body);
    // A capability the client did not declare: 400.
    let reply = post(31, "tools/call", call_params("roots", json!({}), json!({}))).await;
    assert_eq!((reply.status, error_code(&reply.body)), (StatusCode::BAD_REQUEST, -32021), "{}", reply.body);
    // A sealed state that was altered: 400.
    let first = call_params("greet", json!({}), caps(FORM));
    let round = input_required(&post(41, "tools/call", first.clone()).await.body);
    let mut retry = retry_params(&first, &round, json!({"input-0": accept(json!({"name": "x"}))}));
    retry["requestState"] = json!(format!("{}x", round["requestState"].as_str().unwrap()));
    let reply = post(42, "tools/call", retry).await;
    assert_eq!((reply.status, error_code(&reply.body)), (StatusCode::BAD_REQUEST, -32602), "{}", reply.body);
    // A tool's own failure is a result, and a result is 200.
    let reply = post(51, "tools/call", call_params("add", json!({"a": 1, "b": 2}), json!({}))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    // Refused before the body is served, the request is still named: an unsupported revision…
    let mut params = with_meta(json!({}), json!({}));
    params["_meta"][META_VERSION] = json!("1999-01-01");
    let body = json!({"jsonrpc": "2.0", "id": 61, "method": "tools/list", "params": params});
    let reply = h.post_raw(&body, &[("mcp-protocol-version", "1999-01-01"), ("mcp-method", "tools/list")]).await;
    assert_eq!((reply.status, error_code(&reply.body)), (StatusCode::BAD_REQUEST, -32022), "{}", reply.body);
    assert_eq!(reply.body["id"], 61, "{}", reply.body);
    assert_eq!(reply.body["error"]["data"]["requested"], "1999-01-01", "{}", reply.body);
    // …and headers that disagree with the body.
    let body = json!({"jsonrpc": "2.0", "id": 62, "method": "tools/list", "params": with_meta(json!({}), json!({}))});
    let reply = h.post_raw(&body, &[("mcp-protocol-version", VERSION), ("mcp-method", "tools/call")]).await;
    assert_eq!((reply.status, error_code(&reply.body)), (StatusCode::BAD_REQUEST, -32020), "{}", reply.body);
    assert_eq!(reply.body["id"], 62, "{}", reply.body);
}
