//! Tool arguments mirrored into `Mcp-Param-*` headers (`x-mcp-header`, MCP 2026-07-28) over
//! Streamable HTTP: the header must come with the argument and agree with it, plain or
//! Base64-encoded; invalid annotations are refused when the server is built.

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};
use tests::stdio::within;
use tokio::sync::oneshot;
use typed_mcp::prelude::*;
use typed_mcp::tool::{ToolCall, header_params};
use typed_mcp::transport::http::HttpConfig;
use typed_mcp::{BuildError, ServerBuilder};

const VERSION: &str = "2026-07-28";

/// Runs a query in a region.
///
/// # Arguments
/// * `region` - Where to run it.
/// * `query` - What to run.
/// * `shard` - Which shard.
/// * `dry_run` - Whether to only pretend.
#[tool]
fn execute(region: String, query: String, shard: Option<i64>, dry_run: Option<bool>) -> String {
    format!("{query} in {region} (shard {shard:?}, dry run {dry_run:?})")
}

fn server() -> Server {
    let tools = tools![execute]
        .into_iter()
        .map(|t| t.header_param("region", "Region").header_param("shard", "Shard").header_param("dry_run", "Dry-Run"));
    Server::builder("headers", "1.0.0").tools(tools).build().expect("the server builds")
}

struct Http {
    url: String,
    client: reqwest::Client,
    _stop: oneshot::Sender<()>,
}

impl Http {
    async fn start() -> Self {
        let app = server().streamable_http(HttpConfig::default()).router_at("/mcp");
        let (url, stop) = crate::support::http::serve_router(app).await;
        Http { url, client: reqwest::Client::builder().no_proxy().build().unwrap(), _stop: stop }
    }

    /// Calls `execute` with `arguments` and the extra `headers`; the status and the body.
    async fn call(&self, arguments: Value, headers: &[(&str, &str)]) -> (StatusCode, Value) {
        let params = json!({
            "name": "execute",
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        let mut post = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", VERSION)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "execute");
        for (name, value) in headers {
            post = post.header(*name, *value);
        }
        let response = within("a response", post.body(body.to_string()).send()).await.expect("POST");
        let status = response.status();
        let text = within("the body", response.text()).await.expect("a body");
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {text}")))
    }
}

fn code(body: &Value) -> i64 {
    body["error"]["code"].as_i64().unwrap_or_else(|| panic!("expected an error: {body}"))
}

#[tokio::test]
async fn listed_tools_carry_the_annotations() {
    let server = server();
    let mut c = tests::serve::serve(&server);
    let listed = c
        .result(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    let properties = &listed["tools"][0]["inputSchema"]["properties"];
    assert_eq!(properties["region"]["x-mcp-header"], "Region", "{listed}");
    assert_eq!(properties["shard"]["x-mcp-header"], "Shard", "{listed}");
    assert!(properties["query"].get("x-mcp-header").is_none(), "{listed}");
}

#[tokio::test]
async fn matching_headers_are_accepted_plain_or_encoded() {
    let h = Http::start().await;
    let accepted = [
        (json!({"region": "us-west1", "query": "q"}), vec![("mcp-param-region", "us-west1")]),
        // Base64 of "Hello"; header names ignore case.
        (json!({"region": "Hello", "query": "q"}), vec![("MCP-PARAM-REGION", "=?base64?SGVsbG8=?=")]),
        // Without both markers a value is literal.
        (json!({"region": "=?base64?SGVsbG8=", "query": "q"}), vec![("mcp-param-region", "=?base64?SGVsbG8=")]),
        // Integers compare as numbers, booleans as `true`/`false`.
        (
            json!({"region": "r", "query": "q", "shard": 42, "dry_run": false}),
            vec![("mcp-param-region", "r"), ("mcp-param-shard", "42.0"), ("mcp-param-dry-run", "false")],
        ),
        // A null argument has no header.
        (json!({"region": "r", "query": "q", "shard": null}), vec![("mcp-param-region", "r")]),
    ];
    for (arguments, headers) in accepted {
        let (status, body) = h.call(arguments.clone(), &headers).await;
        assert_eq!(status, StatusCode::OK, "{arguments}: {body}");
        assert!(body["result"]["content"][0]["text"].is_string(), "{arguments}: {body}");
    }
}

#[tokio::test]
async fn missing_mismatched_or_malformed_headers_are_refused() {
    let h = Http::start().await;
    let refused = [
        ("missing", json!({"region": "eu", "query": "q"}), vec![]),
        ("other value", json!({"region": "eu", "query": "q"}), vec![("mcp-param-region", "us")]),
        ("bad padding", json!({"region": "Hello", "query": "q"}), vec![("mcp-param-region", "=?base64?SGVsbG8?=")]),
        (
            "bad alphabet",
            json!({"region": "Hello", "query": "q"}),
            vec![("mcp-param-region", "=?base64?SGVs!!!bG8=?=")],
        ),
        (
            "no argument",
            json!({"region": "eu", "query": "q"}),
            vec![("mcp-param-region", "eu"), ("mcp-param-shard", "1")],
        ),
        (
            "other number",
            json!({"region": "eu", "query": "q", "shard": 1}),
            vec![("mcp-param-region", "eu"), ("mcp-param-shard", "2")],
        ),
    ];
    for (what, arguments, headers) in refused {
        let (status, body) = h.call(arguments, &headers).await;
        assert_eq!((status, code(&body)), (StatusCode::BAD_REQUEST, -32020), "{what}: {body}");
        assert_eq!(body["id"], 1, "{what}: {body}");
    }
}

#[test]
fn invalid_annotations_fail_the_build() {
    let tool = |schema: Value| {
        ToolDef::new("t", schema.as_object().unwrap().clone(), |_: ToolCall| async { Ok::<_, ErrorObject>("") })
    };
    let build = |t: ToolDef| Server::builder("s", "1").tool(t).build().map(|_| ());
    let number = tool(json!({"type": "object", "properties": {"n": {"type": "number"}}})).header_param("n", "N");
    assert!(matches!(build(number), Err(BuildError::InvalidInputSchema { .. })));
    let spaced = tool(json!({"type": "object", "properties": {"s": {"type": "string"}}})).header_param("s", "A B");
    assert!(matches!(build(spaced), Err(BuildError::InvalidInputSchema { .. })));
    let nested = tool(
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
    );
    assert!(matches!(build(nested), Err(BuildError::InvalidInputSchema { .. })));
    let fine = tool(json!({"type": "object", "properties": {"s": {"type": "string"}}})).header_param("s", "S");
    assert_eq!(header_params(&fine.tool().input_schema).unwrap().len(), 1);
    let builder: ServerBuilder = Server::builder("s", "1").tool(fine);
    assert!(builder.build().is_ok());
}

/// Our client, in the 2026-07-28 era, mirrors the marked arguments itself: the server checks
/// every header against the body (a missing or wrong one is -32020), so each call succeeding
/// is the proof; values that are not plain header text go Base64-encoded.
#[tokio::test]
async fn our_client_2026_sends_the_headers_the_server_checks() {
    use typed_mcp::client::{Client, ProtocolEra};
    use typed_mcp::testing::ToolResultExt;

    let http = Http::start().await;
    let client = within(
        "connecting",
        Client::builder("headers-test", "1").protocol_era(ProtocolEra::Y2026).connect_http(&http.url),
    )
    .await
    .unwrap();
    // Not listed first: the client lists the tools itself to learn the marks.
    for (arguments, expected) in [
        (json!({"region": "eu-west", "query": "q"}), "q in eu-west (shard None, dry run None)"),
        (json!({"region": " padded ", "query": "q", "shard": 7}), "q in  padded  (shard Some(7), dry run None)"),
        (json!({"region": "Zürich", "query": "q", "dry_run": true}), "q in Zürich (shard None, dry run Some(true))"),
        (json!({"region": "a\nb", "query": "q", "shard": null}), "q in a\nb (shard None, dry run None)"),
    ] {
        let result = within("a call", client.call_tool("execute", arguments.clone())).await;
        let result = result.unwrap_or_else(|e| panic!("{arguments}: {e}"));
        assert_eq!(result.text(), expected, "{arguments}");
    }
    within("closing", client.close()).await;
}
