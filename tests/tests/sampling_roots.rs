//! Sampling and roots end to end, in process: `ctx.sample` and `ctx.roots` send typed
//! requests to the client only when it declared the capability, and the application hears of
//! `notifications/roots/list_changed` through its callback.

use serde_json::{Value, json};
use tests::serve::connect_with;
use tests::stdio::{LineClient, within};
use tokio::sync::mpsc;
use typed_mcp::prelude::*;
use typed_mcp::protocol::{CreateMessageParams, SamplingMessage, Tool, ToolChoiceMode};
use typed_mcp::server::SessionHandle;

/// Asks the client's model for a haiku.
#[tool]
async fn haiku(ctx: Context, topic: String) -> String {
    let params = CreateMessageParams::new(vec![SamplingMessage::user(format!("A haiku about {topic}"))], 60)
        .system_prompt("You are a poet.")
        .temperature(0.5);
    match ctx.sample(params).await {
        Ok(result) => format!("{} said: {}", result.model, result.text().unwrap_or_default()),
        Err(e) => format!("error: {e:?}"),
    }
}

/// Lets the client's model use a tool.
#[tool]
async fn with_tools(ctx: Context) -> String {
    let weather = Tool {
        name: "weather".into(),
        title: None,
        description: Some("Current weather".into()),
        input_schema: json!({"type": "object"}).as_object().unwrap().clone(),
        output_schema: None,
        annotations: None,
        execution: None,
        icons: None,
        meta: None,
    };
    let params = CreateMessageParams::new(vec![SamplingMessage::user("Weather?")], 10)
        .tools(vec![weather], Some(ToolChoiceMode::Auto));
    match ctx.sample(params).await {
        Ok(result) => format!("stop: {:?}, blocks: {}", result.stop_reason, result.content.blocks().len()),
        Err(e) => format!("error: {e:?}"),
    }
}

/// Lists the client's roots.
#[tool]
async fn roots(ctx: Context) -> String {
    match ctx.roots().await {
        Ok(roots) => roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(","),
        Err(e) => format!("error: {e:?}"),
    }
}

fn server(reports: mpsc::UnboundedSender<String>) -> Server {
    Server::builder("sampling", "1.0.0")
        .tools(tools![haiku, with_tools, roots])
        .on_roots_list_changed(move |session: SessionHandle| {
            let reports = reports.clone();
            async move {
                let client = session.client_info().map(|c| c.name.clone()).unwrap_or_default();
                let roots = match session.roots().await {
                    Ok(roots) => roots.into_iter().map(|r| r.name.unwrap_or_default()).collect::<Vec<_>>().join(","),
                    Err(e) => format!("error: {e:?}"),
                };
                let _ = reports.send(format!("{client}: {roots}"));
            }
        })
        .build()
        .expect("valid server")
}

async fn connect(capabilities: Value) -> (LineClient, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (connect_with(&server(tx), capabilities).await.0, rx)
}

async fn call(client: &mut LineClient, tool: &str, arguments: Value) {
    client.send_request(1, "tools/call", json!({"name": tool, "arguments": arguments})).await;
}

async fn answer(client: &mut LineClient, request: &Value, result: Value) {
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
}

async fn tool_text(client: &mut LineClient) -> String {
    let response = client.recv().await;
    assert_eq!(response["id"], 1, "{response}");
    response["result"]["content"][0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn sampling_sends_the_typed_request_and_returns_the_answer() {
    let (mut client, _) = connect(json!({"sampling": {}})).await;
    call(&mut client, "haiku", json!({"topic": "rust"})).await;
    let request = client.recv().await;
    assert_eq!(
        request,
        json!({"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "A haiku about rust"}}],
            "systemPrompt": "You are a poet.",
            "temperature": 0.5,
            "maxTokens": 60
        }})
    );
    answer(
        &mut client,
        &request,
        json!({"role": "assistant", "content": {"type": "text", "text": "Borrowed, never owned"}, "model": "poet-1", "stopReason": "endTurn"}),
    )
    .await;
    assert_eq!(tool_text(&mut client).await, "poet-1 said: Borrowed, never owned");
}

#[tokio::test]
async fn without_the_capability_nothing_is_sent() {
    for capabilities in [json!({}), json!({"roots": {}}), json!({"elicitation": {}})] {
        let (mut client, _) = connect(capabilities.clone()).await;
        // `request` fails if anything but the response arrives first.
        let response = client.request("tools/call", json!({"name": "haiku", "arguments": {"topic": "x"}})).await;
        assert_eq!(
            response["result"]["content"][0]["text"], "error: NotSupported { capability: \"sampling\" }",
            "{capabilities}"
        );
    }
    let (mut client, _) = connect(json!({"sampling": {}})).await;
    let response = client.request("tools/call", json!({"name": "with_tools", "arguments": {}})).await;
    assert_eq!(response["result"]["content"][0]["text"], "error: NotSupported { capability: \"sampling.tools\" }");
    let (mut client, _) = connect(json!({"sampling": {}})).await;
    let response = client.request("tools/call", json!({"name": "roots", "arguments": {}})).await;
    assert_eq!(response["result"]["content"][0]["text"], "error: NotSupported { capability: \"roots\" }");
}

#[tokio::test]
async fn tool_enabled_sampling_needs_sampling_tools() {
    let (mut client, _) = connect(json!({"sampling": {"tools": {}}})).await;
    call(&mut client, "with_tools", json!({})).await;
    let request = client.recv().await;
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(
        request["params"]["tools"],
        json!([{"name": "weather", "description": "Current weather", "inputSchema": {"type": "object"}}])
    );
    assert_eq!(request["params"]["toolChoice"], json!({"mode": "auto"}));
    answer(
        &mut client,
        &request,
        json!({"role": "assistant", "model": "m", "stopReason": "toolUse", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "u1", "name": "weather", "input": {"city": "Paris"}}
        ]}),
    )
    .await;
    assert_eq!(tool_text(&mut client).await, "stop: Some(\"toolUse\"), blocks: 2");
}

#[tokio::test]
async fn client_errors_and_malformed_answers_are_typed() {
    let (mut client, _) = connect(json!({"sampling": {}})).await;
    call(&mut client, "haiku", json!({"topic": "x"})).await;
    let request = client.recv().await;
    client
        .send(&json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "User rejected sampling request"}}))
        .await;
    let text = tool_text(&mut client).await;
    assert!(
        text.starts_with("error: Peer(Rpc(ErrorObject { code: -1, message: \"User rejected sampling request\""),
        "{text}"
    );

    call(&mut client, "haiku", json!({"topic": "x"})).await;
    let request = client.recv().await;
    answer(&mut client, &request, json!({"role": "assistant"})).await;
    let text = tool_text(&mut client).await;
    assert!(text.starts_with("error: Peer(Codec("), "{text}");
}

#[tokio::test]
async fn roots_are_listed_on_request() {
    let (mut client, _) = connect(json!({"roots": {"listChanged": true}})).await;
    call(&mut client, "roots", json!({})).await;
    let request = client.recv().await;
    assert_eq!(request, json!({"jsonrpc": "2.0", "id": 0, "method": "roots/list", "params": {}}));
    answer(
        &mut client,
        &request,
        json!({"roots": [{"uri": "file:///home/a", "name": "a"}, {"uri": "file:///home/b"}]}),
    )
    .await;
    assert_eq!(tool_text(&mut client).await, "file:///home/a,file:///home/b");
}

#[tokio::test]
async fn the_application_hears_when_roots_change() {
    let (mut client, mut reports) = connect(json!({"roots": {"listChanged": true}})).await;
    client.notify("notifications/roots/list_changed", json!({})).await;
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    answer(&mut client, &request, json!({"roots": [{"uri": "file:///w", "name": "work"}]})).await;
    assert_eq!(within("the callback's report", reports.recv()).await.unwrap(), "t: work");

    // A client without the capability is not asked; the callback still runs.
    let (mut client, mut reports) = connect(json!({})).await;
    client.notify("notifications/roots/list_changed", json!({})).await;
    assert_eq!(
        within("the callback's report", reports.recv()).await.unwrap(),
        "t: error: NotSupported { capability: \"roots\" }"
    );
}
