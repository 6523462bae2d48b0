//! `#[tool]` and `#[toolbox]` at run time: the `tools/list` entries they produce, and calls
//! through a real server session over an in-memory pipe.
//!
//! Clippy's pedantic group is on for this file, so `cargo clippy --all-targets` also checks
//! that the code the macros generate stays clean under it.
#![warn(clippy::pedantic)]

use std::sync::atomic::{AtomicI64, Ordering};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use typed_mcp::prelude::*;

/// Adds two integers.
///
/// Overflow is reported as a tool error.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(title = "Addition", read_only, idempotent, open_world = false)]
async fn add(a: i64, b: i64) -> Result<i64, String> {
    std::future::ready(a.checked_add(b).ok_or_else(|| format!("{a} + {b} overflows"))).await
}

/// The greeting every `greet` call uses.
struct Greeting {
    word: &'static str,
}

/// Greets someone. This line is replaced by the attribute's description.
#[tool(name = "greet", description = "Greets someone by name.", destructive = false)]
fn greet_someone(
    #[arg(rename = "who", description = "Whom to greet.")] name: String,
    excited: Option<bool>,
    greeting: State<Greeting>,
    ctx: Context,
) -> String {
    let mark = if excited.unwrap_or(false) { "!" } else { "." };
    let _ = ctx.request_id();
    format!("{}, {name}{mark}", greeting.word)
}

/// Describes a value of some kind.
///
/// # Arguments
/// * `type` - The kind of value.
/// * `tags` - Labels to attach.
#[tool]
fn describe(r#type: String, tags: Vec<String>, limit: Option<u32>) -> String {
    let shown: Vec<&str> = tags.iter().take(limit.map_or(usize::MAX, |l| l as usize)).map(String::as_str).collect();
    format!("{type} [{}]", shown.join(", "), type = r#type)
}

/// Statistics about a text.
#[derive(Debug, Serialize, JsonSchema)]
struct TextStats {
    /// Number of characters.
    characters: usize,
    /// Number of words.
    words: usize,
}

/// Measures a text.
#[tool]
fn stats(text: String) -> Json<TextStats> {
    Json(TextStats { characters: text.chars().count(), words: text.split_whitespace().count() })
}

#[tool]
fn undocumented() {}

/// A counter whose tools share one value.
struct Counter {
    total: AtomicI64,
}

#[toolbox]
impl Counter {
    /// Adds `n` to the total and returns the new total.
    #[tool(name = "counter.add")]
    async fn bump(&self, n: i64) -> i64 {
        std::future::ready(self.total.fetch_add(n, Ordering::SeqCst) + n).await
    }

    /// The current total.
    #[tool(name = "counter.get", read_only)]
    fn get(&self) -> i64 {
        self.total.load(Ordering::SeqCst)
    }

    /// The counter's unit, from an associated function.
    #[tool(name = "counter.unit")]
    fn unit() -> &'static str {
        "clicks"
    }
}

fn server() -> Server {
    Server::builder("tool-macro", "1.0.0")
        .tools(tools![add, greet_someone, describe, stats, undocumented])
        .toolbox(Counter { total: AtomicI64::new(10) })
        .state(Greeting { word: "Hello" })
        .build()
        .expect("the server builds")
}

/// The `tools/list` entry named `name`, as JSON.
fn listed(server: &Server, name: &str) -> Value {
    let list = serde_json::to_value(server.tools()).expect("the list serializes");
    list["tools"]
        .as_array()
        .expect("tools is an array")
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool `{name}` in {list}"))
        .clone()
}

#[test]
fn tools_are_listed_in_registration_order() {
    let names: Vec<String> = server().tools().tools.into_iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        ["add", "greet", "describe", "stats", "undocumented", "counter.add", "counter.get", "counter.unit"]
    );
}

#[test]
fn doc_comments_and_arguments_sections_describe_the_tool() {
    let add = listed(&server(), "add");
    assert_eq!(
        add,
        json!({
            "name": "add",
            "title": "Addition",
            "description": "Adds two integers.\n\nOverflow is reported as a tool error.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "The first addend."},
                    "b": {"type": "integer", "description": "The second addend."}
                },
                "required": ["a", "b"]
            },
            "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
        })
    );
}

#[test]
fn arg_attributes_rename_and_describe_and_injected_arguments_are_hidden() {
    let greet = listed(&server(), "greet");
    assert_eq!(greet["description"], "Greets someone by name.");
    assert_eq!(greet["annotations"], json!({"destructiveHint": false}));
    assert_eq!(
        greet["inputSchema"],
        json!({
            "type": "object",
            "properties": {
                "who": {"type": "string", "description": "Whom to greet."},
                "excited": {"type": "boolean"}
            },
            "required": ["who"]
        }),
        "`Option` is optional and not nullable; `State` and `Context` are not in the schema"
    );
    assert!(greet.get("title").is_none());
    assert!(greet.get("outputSchema").is_none());
}

#[test]
fn raw_identifiers_lose_their_prefix() {
    let describe = listed(&server(), "describe");
    let schema = &describe["inputSchema"];
    assert_eq!(schema["properties"]["type"], json!({"type": "string", "description": "The kind of value."}));
    assert_eq!(
        schema["properties"]["tags"],
        json!({"type": "array", "items": {"type": "string"}, "description": "Labels to attach."})
    );
    assert_eq!(schema["properties"]["limit"]["type"], "integer");
    assert_eq!(schema["required"], json!(["type", "tags"]));
    assert_eq!(describe["description"], "Describes a value of some kind.");
    assert!(describe.get("annotations").is_none(), "no hints, no annotations");
}

#[test]
fn json_results_give_an_output_schema() {
    let stats = listed(&server(), "stats");
    let output = &stats["outputSchema"];
    assert_eq!(output["type"], "object");
    assert_eq!(output["properties"]["characters"]["description"], "Number of characters.");
    assert_eq!(output["properties"]["words"]["type"], "integer");
    assert_eq!(output["required"], json!(["characters", "words"]));
}

#[test]
fn tools_without_docs_or_arguments() {
    let tool = listed(&server(), "undocumented");
    assert_eq!(tool, json!({"name": "undocumented", "inputSchema": {"type": "object", "properties": {}}}));
}

#[test]
fn toolbox_tools_are_listed_with_their_names_and_hints() {
    let server = server();
    assert_eq!(listed(&server, "counter.add")["description"], "Adds `n` to the total and returns the new total.");
    assert_eq!(listed(&server, "counter.add")["inputSchema"]["required"], json!(["n"]));
    assert_eq!(listed(&server, "counter.get")["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(listed(&server, "counter.unit")["inputSchema"]["properties"], json!({}));
}

/// A client speaking newline-delimited JSON-RPC to a server in this process.
struct Client {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
    next_id: i64,
}

impl Client {
    /// Starts `server` on one end of a pipe and initializes a 2025-06-18 session from the other.
    async fn connect(server: Server) -> Client {
        Client::connect_with_version(server, "2025-06-18").await
    }

    /// Starts `server` on one end of a pipe and initializes a session of `version`.
    async fn connect_with_version(server: Server, version: &str) -> Client {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let (reader, writer) = tokio::io::split(server_end);
            server.serve_io(reader, writer).await
        });
        let (reader, writer) = tokio::io::split(client_end);
        let mut client = Client { lines: BufReader::new(reader).lines(), writer, next_id: 0 };
        let init = client
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}
                }),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        client
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.expect("the server reads");
    }

    /// Sends a request and returns its response (skipping notifications).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let line = self.lines.next_line().await.expect("the pipe is open").expect("a response");
            let message: Value = serde_json::from_str(&line).expect("valid JSON");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Calls a tool and returns the `result` (or the whole response when it is an error).
    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": name, "arguments": arguments})).await;
        response.get("result").cloned().unwrap_or(response)
    }
}

#[tokio::test]
async fn tools_run_through_a_session() {
    let mut client = Client::connect(server()).await;

    let listed = client.request("tools/list", json!({})).await;
    assert_eq!(listed["result"], serde_json::to_value(server().tools()).expect("serializes"));

    let sum = client.call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum, json!({"content": [{"type": "text", "text": "5"}]}));

    let overflow = client.call("add", json!({"a": i64::MAX, "b": 1})).await;
    assert_eq!(overflow["isError"], true, "an `Err(String)` is a tool error: {overflow}");
    assert_eq!(overflow["content"][0]["text"], format!("{} + 1 overflows", i64::MAX));

    let hello = client.call("greet", json!({"who": "Ada", "excited": true})).await;
    assert_eq!(hello["content"][0]["text"], "Hello, Ada!", "renamed and injected arguments reach the function");
    let calm = client.call("greet", json!({"who": "Ada"})).await;
    assert_eq!(calm["content"][0]["text"], "Hello, Ada.", "a missing `Option` argument is `None`");

    let described = client.call("describe", json!({"type": "fruit", "tags": ["red", "sweet"], "limit": 1})).await;
    assert_eq!(described["content"][0]["text"], "fruit [red]");

    let measured = client.call("stats", json!({"text": "two words"})).await;
    assert_eq!(measured["structuredContent"], json!({"characters": 9, "words": 2}));

    let nothing = client.call("undocumented", json!({})).await;
    assert_eq!(nothing["content"], json!([]));
}

#[tokio::test]
async fn toolbox_tools_share_their_value() {
    let mut client = Client::connect(server()).await;
    assert_eq!(client.call("counter.add", json!({"n": 5})).await["content"][0]["text"], "15");
    assert_eq!(client.call("counter.add", json!({"n": -1})).await["content"][0]["text"], "14");
    assert_eq!(client.call("counter.get", json!({})).await["content"][0]["text"], "14");
    assert_eq!(client.call("counter.unit", json!({})).await["content"][0]["text"], "clicks");
}

#[tokio::test]
async fn bad_arguments_are_tool_errors_naming_the_argument() {
    // The test client speaks 2025-06-18: there, invalid arguments are JSON-RPC errors.
    let mut client = Client::connect(server()).await;
    let missing = client.call("add", json!({"a": 1})).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(missing["error"]["message"], "missing required argument `b`");

    // From 2025-11-25 on (SEP-1303), they are tool errors the model can correct.
    let mut client = Client::connect_with_version(server(), "2025-11-25").await;
    let missing = client.call("add", json!({"a": 1})).await;
    assert_eq!(missing["isError"], true, "{missing}");
    assert_eq!(missing["content"][0]["text"], "missing required argument `b`");

    let wrong = client.call("greet", json!({"who": 7})).await;
    assert_eq!(wrong["isError"], true, "{wrong}");
    let message = wrong["content"][0]["text"].as_str().expect("a message");
    assert!(message.starts_with("invalid argument `who`: invalid type: integer `7`"), "{message}");

    // An unknown tool is still a protocol error.
    let original_name = client.call("greet_someone", json!({"who": "Ada"})).await;
    assert_eq!(original_name["error"]["code"], -32602, "the tool is only known by its `name`: {original_name}");
}

/// Words of a text, longest first: a list, which MCP cannot send as `structuredContent` as it is.
#[tool]
fn longest_words(text: String) -> Json<Vec<String>> {
    let mut words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    Json(words)
}

/// A search, as an existing parameter struct.
#[derive(Debug, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Search {
    /// What to look for.
    query: String,
    /// How many results at most.
    limit: Option<u32>,
}

/// Searches, taking the struct's fields as its arguments.
#[tool]
fn search(params: Params<Search>, ctx: Context) -> String {
    let _ = ctx.request_id();
    format!("{} (up to {})", params.query, params.limit.unwrap_or(10))
}

/// An enum is not an object: its variants cannot be arguments.
#[derive(Debug, serde::Deserialize, JsonSchema)]
enum Mode {
    Fast,
    Slow,
}

/// Cannot work: `Params` of a non-object.
#[tool]
fn moded(mode: Params<Mode>) -> String {
    format!("{:?}", mode.0)
}

fn wrapped_and_flattened() -> Server {
    Server::builder("wrapped", "1.0.0").tools(tools![longest_words, search]).build().expect("the server builds")
}

#[tokio::test]
async fn a_list_output_is_wrapped_as_result_with_a_matching_output_schema() {
    let server = wrapped_and_flattened();
    let schema = listed(&server, "longest_words")["outputSchema"].clone();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"type": "string"}}},
            "required": ["result"]
        })
    );
    let mut client = Client::connect(server).await;
    let words = client.call("longest_words", json!({"text": "a bbb cc"})).await;
    assert_eq!(words["structuredContent"], json!({"result": ["bbb", "cc", "a"]}), "{words}");
    assert_eq!(words["content"][0]["text"], r#"{"result":["bbb","cc","a"]}"#);
}

#[tokio::test]
async fn params_fields_are_the_tools_arguments() {
    let server = wrapped_and_flattened();
    let input = listed(&server, "search")["inputSchema"].clone();
    assert_eq!(
        input,
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "minimum": 0, "description": "How many results at most."}
            },
            "required": ["query"]
        })
    );
    let mut client = Client::connect(server).await;
    let found = client.call("search", json!({"query": "rust", "limit": 3})).await;
    assert_eq!(found["content"][0]["text"], "rust (up to 3)", "{found}");
    let defaulted = client.call("search", json!({"query": "rust"})).await;
    assert_eq!(defaulted["content"][0]["text"], "rust (up to 10)");
    let missing = client.call("search", json!({"limit": 3})).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(missing["error"]["message"], "invalid arguments: missing field `query`");
    let unknown = client.call("search", json!({"query": "x", "extra": 1})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[test]
fn params_of_a_non_object_is_refused_when_the_server_is_built() {
    let err = Server::builder("bad", "1.0.0").tools(tools![moded]).build().unwrap_err();
    let message = err.to_string();
    assert!(message.contains("`Params<Mode>`") && message.contains("moded"), "{message}");
}

/// Writes something that needs two scopes.
#[tool(scopes = ["notes:write", "audit"])]
fn scoped_write() -> &'static str {
    "written"
}

#[test]
fn the_scopes_option_sets_the_scopes_a_call_needs() {
    let tools = tools![scoped_write, add];
    assert_eq!(tools[0].required_scopes(), ["notes:write", "audit"]);
    assert!(tools[1].required_scopes().is_empty(), "a tool without the option needs no scope");
}

/// Runs for a while, as a task when the client supports tasks.
#[tool(task = "optional")]
async fn long_build() -> &'static str {
    tokio::task::yield_now().await;
    "built"
}

/// Runs only as a task.
#[tool(task = "required")]
async fn long_deploy() -> &'static str {
    tokio::task::yield_now().await;
    "deployed"
}

#[test]
fn the_task_option_sets_whether_the_tool_runs_as_a_task() {
    use typed_mcp::protocol::TaskSupport;
    let tools = tools![long_build, long_deploy, add];
    assert_eq!(tools[0].task_mode(), TaskSupport::Optional);
    assert_eq!(tools[1].task_mode(), TaskSupport::Required);
    assert_eq!(tools[2].task_mode(), TaskSupport::Forbidden, "a tool without the option never runs as a task");
    let listed = serde_json::to_value(tools[1].tool()).unwrap();
    assert_eq!(listed["execution"]["taskSupport"], "required");
    assert!(serde_json::to_value(tools[2].tool()).unwrap().get("execution").is_none());
}
