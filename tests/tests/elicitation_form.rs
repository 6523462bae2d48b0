//! Form-mode elicitation end to end, in process: a scripted client over a duplex pipe talks
//! JSON-RPC to a server whose tools call `ctx.elicit` and its shorthands.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tests::stdio::{LineClient, within};
use tokio::sync::mpsc;
use typed_mcp::elicit::{Elicit, ElicitError, Elicitation};
use typed_mcp::prelude::*;
use typed_mcp::protocol::{ElicitRequestParams, JsonObject};

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Framework {
    React,
    Vue,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Project {
    /// Name of the project.
    #[schemars(length(min = 1))]
    project_name: String,
    /// Framework.
    framework: Option<Framework>,
    /// Tests?
    #[schemars(extend("default" = true))]
    include_tests: bool,
    /// How many people work on it.
    #[schemars(range(min = 1, max = 10))]
    team_size: Option<u32>,
}

fn describe(result: Result<Elicitation<Project>, ElicitError>) -> String {
    match result {
        Ok(Elicitation::Accept(p)) => format!(
            "accept {} {:?} tests={} team={:?}",
            p.project_name,
            p.framework.map(|f| format!("{f:?}")),
            p.include_tests,
            p.team_size
        ),
        Ok(Elicitation::Decline) => "decline".into(),
        Ok(Elicitation::Cancel) => "cancel".into(),
        Err(e) => format!("error {e:?}"),
    }
}

/// Asks for a project and describes the answer.
#[tool]
async fn project(ctx: Context) -> String {
    describe(ctx.elicit::<Project>("Project details?").await)
}

/// Asks for a project, giving the user 50 ms.
#[tool]
async fn impatient(ctx: Context) -> String {
    describe(ctx.elicit::<Project>("Quick!").timeout(Duration::from_millis(50)).await)
}

/// Reports, on the side channel, how an elicitation ended (for ends with no response).
#[tool]
async fn watched(ctx: Context, reports: State<mpsc::UnboundedSender<String>>) -> String {
    let guard = Reporter((*reports).clone(), "dropped".into());
    let outcome = describe(ctx.elicit::<Project>("Watched").await);
    let _ = reports.send(outcome.clone());
    std::mem::forget(guard);
    outcome
}

struct Reporter(mpsc::UnboundedSender<String>, String);
impl Drop for Reporter {
    fn drop(&mut self) {
        let _ = self.0.send(self.1.clone());
    }
}

/// Asks for a project on behalf of `tag` and says which name came back.
#[tool]
async fn tagged(ctx: Context, tag: String) -> String {
    match ctx.elicit::<Project>(format!("for {tag}")).await {
        Ok(Elicitation::Accept(p)) => format!("{tag} got {}", p.project_name),
        other => format!("{tag} failed: {other:?}"),
    }
}

/// Asks yes or no.
#[tool]
async fn confirm(ctx: Context) -> String {
    format!("{:?}", ctx.confirm("Sure?").await)
}

/// Asks for one small number.
#[tool]
async fn number(ctx: Context) -> String {
    format!("{:?}", ctx.elicit_value::<u8>("How many?").await)
}

/// Asks for a choice made at run time.
#[tool]
async fn choose(ctx: Context) -> String {
    format!("{:?}", ctx.choose("Which?", [("a", "Alpha"), ("b", "Beta")]).await)
}

/// Whether the client can be asked.
#[tool]
fn can_elicit(ctx: Context) -> String {
    format!("form={} url={}", ctx.can_elicit(), ctx.can_elicit_url())
}

/// Sends a schema built at run time.
#[tool]
async fn raw(ctx: Context, schema: JsonObject) -> String {
    let params = ElicitRequestParams::Form { message: "Raw".into(), requested_schema: schema };
    format!("{:?}", ctx.elicit_raw(params, None).await.map(|r| (r.action, r.content)))
}

/// The test server: nothing but its tools and their channel, no elicitation set-up.
fn server() -> (Server, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let builder = Server::builder("elicit-tests", "1.0.0")
        .tools(tools![project, impatient, watched, tagged, confirm, number, choose, can_elicit, raw])
        .state(tx);
    (builder.build().expect("valid server"), rx)
}

async fn connect(server: Server, version: &str, capabilities: Value) -> LineClient {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    let mut client = LineClient::new(client_read, client_write);
    let init = client
        .result(
            "initialize",
            json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    assert_eq!(init["protocolVersion"], version);
    client.notify("notifications/initialized", json!({})).await;
    client
}

async fn form_client() -> (LineClient, mpsc::UnboundedReceiver<String>) {
    let (server, rx) = server();
    (connect(server, "2025-11-25", json!({"elicitation": {}})).await, rx)
}

const CALL_ID: i64 = 1;

async fn call(client: &mut LineClient, tool: &str, arguments: Value) {
    client.send_request(CALL_ID, "tools/call", json!({"name": tool, "arguments": arguments})).await;
}

/// Reads the next message, which must be `elicitation/create`.
async fn elicitation(client: &mut LineClient) -> Value {
    let request = client.recv().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    request
}

async fn answer(client: &mut LineClient, request: &Value, result: Value) {
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
}

/// Reads the response to the tool call and returns its text.
async fn tool_text(client: &mut LineClient) -> String {
    let response = client.recv().await;
    assert_eq!(response["id"], CALL_ID, "{response}");
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {response}")).to_owned()
}

async fn ask_project(client: &mut LineClient, result: Value) -> String {
    call(client, "project", json!({})).await;
    let request = elicitation(client).await;
    answer(client, &request, result).await;
    tool_text(client).await
}

#[tokio::test]
async fn accept_decline_cancel() {
    let (mut client, _) = form_client().await;
    let text =
        ask_project(&mut client, json!({"action": "accept", "content": {"projectName": "demo", "framework": "vue"}}))
            .await;
    assert_eq!(text, r#"accept demo Some("Vue") tests=true team=None"#);
    let text = ask_project(
        &mut client,
        json!({"action": "accept", "content": {"projectName": "x", "includeTests": false, "teamSize": 3}}),
    )
    .await;
    assert_eq!(text, "accept x None tests=false team=Some(3)");
    assert_eq!(ask_project(&mut client, json!({"action": "decline"})).await, "decline");
    assert_eq!(ask_project(&mut client, json!({"action": "cancel"})).await, "cancel");
}

#[tokio::test]
async fn the_request_carries_the_derived_schema_and_the_mode_of_the_revision() {
    let (mut client, _) = form_client().await;
    call(&mut client, "project", json!({})).await;
    let request = elicitation(&mut client).await;
    assert_eq!(request["params"]["mode"], "form");
    assert_eq!(request["params"]["message"], "Project details?");
    assert_eq!(request["params"]["requestedSchema"], Project::form_schema().unwrap().to_value());
    answer(&mut client, &request, json!({"action": "decline"})).await;
    tool_text(&mut client).await;

    // 2025-06-18 knows only forms, without `mode`.
    let (server, _) = server();
    let mut old = connect(server, "2025-06-18", json!({"elicitation": {}})).await;
    call(&mut old, "project", json!({})).await;
    let request = elicitation(&mut old).await;
    assert!(request["params"].get("mode").is_none(), "{request}");
    assert!(request["params"]["requestedSchema"].is_object());
}

#[tokio::test]
async fn content_breaking_the_schema_is_an_invalid_response_and_the_server_keeps_serving() {
    let (mut client, _) = form_client().await;
    let cases = [
        (json!({"projectName": ""}), "projectName", "at least 1"),
        (json!({"framework": "vue"}), "projectName", "required"),
        (json!({"projectName": "a", "framework": "svelte"}), "framework", "options"),
        (json!({"projectName": "a", "teamSize": 11}), "teamSize", "at most 10"),
        (json!({"projectName": "a", "includeTests": "yes"}), "includeTests", "boolean"),
    ];
    for (content, field, rule) in cases {
        let text = ask_project(&mut client, json!({"action": "accept", "content": content})).await;
        assert!(text.starts_with("error InvalidResponse"), "{content}: {text}");
        assert!(text.contains(&format!("field: Some(\"{field}\")")), "{content}: {text}");
        assert!(text.contains(rule), "{content}: {text}");
    }
    let text = ask_project(&mut client, json!({"action": "accept"})).await;
    assert!(text.contains("projectName"), "accept without content: {text}");
    // A malformed result object is an invalid response too.
    let text = ask_project(&mut client, json!({"action": "maybe"})).await;
    assert!(text.starts_with("error InvalidResponse"), "{text}");
    assert_eq!(
        ask_project(&mut client, json!({"action": "accept", "content": {"projectName": "ok"}})).await,
        "accept ok None tests=true team=None"
    );
}

#[tokio::test]
async fn a_client_error_keeps_its_code_and_message() {
    let (mut client, _) = form_client().await;
    call(&mut client, "project", json!({})).await;
    let request = elicitation(&mut client).await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32001, "message": "user is away"}}))
        .await;
    let text = tool_text(&mut client).await;
    assert!(text.contains("Client(ErrorObject { code: -32001, message: \"user is away\""), "{text}");
}

#[tokio::test]
async fn without_the_capability_nothing_is_sent() {
    for capabilities in [json!({}), json!({"elicitation": {"url": {}}}), json!({"sampling": {}})] {
        let (server, _) = server();
        let mut client = connect(server, "2025-11-25", capabilities.clone()).await;
        // `request` fails if anything but the response arrives first.
        let response = client.request("tools/call", json!({"name": "project", "arguments": {}})).await;
        let text = response["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, "error NotSupported { mode: \"form\" }", "{capabilities}");
        let response = client.request("tools/call", json!({"name": "can_elicit", "arguments": {}})).await;
        let expected =
            if capabilities["elicitation"]["url"].is_object() { "form=false url=true" } else { "form=false url=false" };
        assert_eq!(response["result"]["content"][0]["text"], expected);
    }
    let (mut client, _) = form_client().await;
    let response = client.request("tools/call", json!({"name": "can_elicit", "arguments": {}})).await;
    assert_eq!(response["result"]["content"][0]["text"], "form=true url=false");
}

/// A tool that calls `ctx.elicit` needs no switch on the builder: the question goes out and
/// its answer comes back, with the default timeout.
#[tokio::test]
async fn a_server_with_no_elicitation_set_up_asks() {
    let (server, _) = server();
    let mut client = connect(server, "2025-11-25", json!({"elicitation": {}})).await;
    call(&mut client, "project", json!({})).await;
    let request = elicitation(&mut client).await;
    assert_eq!(request["params"]["mode"], "form", "{request}");
    assert!(request["params"]["requestedSchema"]["properties"].is_object(), "{request}");
}

#[tokio::test]
async fn a_timeout_ends_the_wait_and_withdraws_the_request() {
    let (mut client, _) = form_client().await;
    call(&mut client, "impatient", json!({})).await;
    let request = elicitation(&mut client).await;
    let withdrawn = client.recv().await;
    assert_eq!(withdrawn["method"], "notifications/cancelled", "{withdrawn}");
    assert_eq!(withdrawn["params"]["requestId"], request["id"]);
    assert_eq!(tool_text(&mut client).await, "error Timeout(50ms)");
    // A late answer is ignored.
    answer(&mut client, &request, json!({"action": "decline"})).await;
    assert_eq!(ask_project(&mut client, json!({"action": "decline"})).await, "decline");
}

#[tokio::test]
async fn cancelling_the_tool_call_abandons_its_elicitation() {
    let (mut client, mut reports) = form_client().await;
    call(&mut client, "watched", json!({})).await;
    let request = elicitation(&mut client).await;
    client.notify("notifications/cancelled", json!({"requestId": CALL_ID, "reason": "changed my mind"})).await;
    assert_eq!(within("the handler to stop", reports.recv()).await.as_deref(), Some("dropped"));
    let withdrawn = client.recv().await;
    assert_eq!(withdrawn["method"], "notifications/cancelled", "{withdrawn}");
    assert_eq!(withdrawn["params"]["requestId"], request["id"]);
    // No response for the cancelled call; the next call is answered normally.
    answer(&mut client, &request, json!({"action": "decline"})).await;
    let response = client.request("tools/call", json!({"name": "can_elicit", "arguments": {}})).await;
    assert_eq!(response["result"]["content"][0]["text"], "form=true url=false");
}

#[tokio::test]
async fn closing_the_connection_fails_the_pending_elicitation() {
    let (mut client, mut reports) = form_client().await;
    call(&mut client, "watched", json!({})).await;
    elicitation(&mut client).await;
    client.close_input().await;
    let report = within("the handler to end", reports.recv()).await.unwrap();
    // Either the wait saw the closed connection, or the handler was cancelled with the session.
    assert!(report == "error ConnectionClosed" || report == "dropped", "{report}");
}

#[tokio::test]
async fn shorthands() {
    let (mut client, _) = form_client().await;
    for (result, expected) in [
        (json!({"action": "accept", "content": {"confirm": true}}), "Ok(true)"),
        (json!({"action": "accept", "content": {"confirm": false}}), "Ok(false)"),
        (json!({"action": "decline"}), "Ok(false)"),
    ] {
        call(&mut client, "confirm", json!({})).await;
        let request = elicitation(&mut client).await;
        assert_eq!(
            request["params"]["requestedSchema"],
            json!({"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Confirm"}}, "required": ["confirm"]})
        );
        answer(&mut client, &request, result).await;
        assert_eq!(tool_text(&mut client).await, expected);
    }

    call(&mut client, "number", json!({})).await;
    let request = elicitation(&mut client).await;
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["value"],
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
    answer(&mut client, &request, json!({"action": "accept", "content": {"value": 7}})).await;
    assert_eq!(tool_text(&mut client).await, "Ok(Accept(7))");
    call(&mut client, "number", json!({})).await;
    let request = elicitation(&mut client).await;
    answer(&mut client, &request, json!({"action": "accept", "content": {"value": 300}})).await;
    assert!(tool_text(&mut client).await.contains("at most 255"));

    call(&mut client, "choose", json!({})).await;
    let request = elicitation(&mut client).await;
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["choice"],
        json!({"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]})
    );
    answer(&mut client, &request, json!({"action": "accept", "content": {"choice": "b"}})).await;
    assert_eq!(tool_text(&mut client).await, "Ok(Accept(\"b\"))");
}

#[tokio::test]
async fn the_raw_api_checks_the_schema_before_sending() {
    let (mut client, _) = form_client().await;
    let nested = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}});
    let response = client.request("tools/call", json!({"name": "raw", "arguments": {"schema": nested}})).await;
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Err(InvalidRequest(") && text.contains("nested objects"), "{text}");

    let flat = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    call(&mut client, "raw", json!({"schema": flat})).await;
    let request = elicitation(&mut client).await;
    assert_eq!(request["params"]["requestedSchema"], flat);
    answer(&mut client, &request, json!({"action": "accept", "content": {"a": "free text"}})).await;
    assert_eq!(tool_text(&mut client).await, r#"Ok((Accept, Some({"a": String("free text")})))"#);
}

#[tokio::test]
async fn concurrent_elicitations_get_their_own_answers() {
    let (mut client, _) = form_client().await;
    let tags = ["alpha", "beta", "gamma"];
    for (i, tag) in tags.iter().enumerate() {
        client.send_request(100 + i as i64, "tools/call", json!({"name": "tagged", "arguments": {"tag": tag}})).await;
    }
    let mut requests = Vec::new();
    for _ in tags {
        requests.push(elicitation(&mut client).await);
    }
    // Answer in reverse order, each with the tag its message names.
    for request in requests.iter().rev() {
        let tag = request["params"]["message"].as_str().unwrap().trim_start_matches("for ").to_owned();
        answer(&mut client, request, json!({"action": "accept", "content": {"projectName": tag}})).await;
    }
    for _ in tags {
        let response = client.recv().await;
        let i = response["id"].as_i64().unwrap() - 100;
        let text = response["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, format!("{} got {}", tags[i as usize], tags[i as usize]), "{response}");
    }
}
