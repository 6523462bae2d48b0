//! Resources end to end, in process: listing, templates, reading text and blobs, unknown URIs,
//! subscriptions with updates, run-time list changes, pagination and capabilities.

use serde_json::{Value, json};
use tests::serve::{connect, connect_with, serve};
use tests::stdio::{LineClient, error_code};
use typed_mcp::prelude::*;
use typed_mcp::resource::{ResourceCall, ResourceUri};

/// The project's readme.
#[resource("test://static/readme", name = "readme", mime_type = "text/markdown")]
fn readme() -> &'static str {
    "# Readme"
}

/// A small PNG-ish blob.
#[resource("test://static/logo", name = "logo", mime_type = "image/png")]
fn logo() -> Blob {
    Blob(vec![0x89, b'P', b'N', b'G'])
}

/// Data of one item.
///
/// # Arguments
/// * `id` - The item's number.
#[resource("test://template/{id}/data", name = "item-data", mime_type = "application/json")]
async fn item(id: u32, uri: ResourceUri) -> Option<String> {
    (id < 100).then(|| json!({"id": id, "uri": uri.0}).to_string())
}

fn hand_written() -> ResourceDef {
    ResourceDef::template("files:///{+path}", "files", |call: ResourceCall| async move {
        Ok::<_, ErrorObject>(vec![
            ResourceContents::text(&call.uri, Some("text/plain".into()), format!("path={}", call.variables["path"])),
            ResourceContents::blob(&call.uri, None, b"\x00\x01"),
        ])
    })
    .title("Files")
    .description("Any file.")
}

fn server() -> Server {
    Server::builder("resources", "1.0.0")
        .resources(resources![readme, logo, item])
        .resource(hand_written())
        .resource_subscriptions()
        .build()
        .expect("valid server")
}

#[tokio::test]
async fn lists_resources_and_templates_exactly() {
    let (mut client, init) = connect_with(&server(), json!({})).await;
    assert_eq!(init["capabilities"], json!({"logging": {}, "resources": {"subscribe": true}}));
    let list = client.result("resources/list", json!({})).await;
    assert_eq!(
        list,
        json!({"resources": [
            {"uri": "test://static/readme", "name": "readme", "description": "The project's readme.", "mimeType": "text/markdown"},
            {"uri": "test://static/logo", "name": "logo", "description": "A small PNG-ish blob.", "mimeType": "image/png"}
        ]})
    );
    let templates = client.result("resources/templates/list", json!({})).await;
    assert_eq!(
        templates,
        json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "item-data", "description": "Data of one item.", "mimeType": "application/json"},
            {"uriTemplate": "files:///{+path}", "name": "files", "title": "Files", "description": "Any file."}
        ]})
    );
}

#[tokio::test]
async fn reads_text_blobs_and_templates() {
    let mut client = connect(&server()).await;
    let read = |uri: &str| json!({"uri": uri});
    assert_eq!(
        client.result("resources/read", read("test://static/readme")).await,
        json!({"contents": [{"uri": "test://static/readme", "mimeType": "text/markdown", "text": "# Readme"}]})
    );
    assert_eq!(
        client.result("resources/read", read("test://static/logo")).await,
        json!({"contents": [{"uri": "test://static/logo", "mimeType": "image/png", "blob": "iVBORw=="}]})
    );
    assert_eq!(
        client.result("resources/read", read("test://template/42/data")).await,
        json!({"contents": [{"uri": "test://template/42/data", "mimeType": "application/json", "text": "{\"id\":42,\"uri\":\"test://template/42/data\"}"}]})
    );
    assert_eq!(
        client.result("resources/read", read("files:///src/a%20b.rs")).await,
        json!({"contents": [
            {"uri": "files:///src/a%20b.rs", "mimeType": "text/plain", "text": "path=src/a b.rs"},
            {"uri": "files:///src/a%20b.rs", "blob": "AAE="}
        ]})
    );
}

#[tokio::test]
async fn unknown_uris_are_resource_not_found_with_the_uri() {
    let mut client = connect(&server()).await;
    for uri in ["test://nothing", "test://template/x/data", "test://template/100/data", "test://template//data"] {
        let response = client.request("resources/read", json!({"uri": uri})).await;
        assert_eq!(error_code(&response), -32002, "{response}");
        assert_eq!(response["error"]["data"], json!({"uri": uri}), "{response}");
    }
    let response = client.request("resources/read", json!({"uri": "test://nothing"})).await;
    assert_eq!(
        response["error"],
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "test://nothing"}})
    );
    let response = client.request("resources/read", json!({})).await;
    assert_eq!(error_code(&response), -32602, "{response}");
}

async fn subscribe(client: &mut LineClient, uri: &str) -> Value {
    client.request("resources/subscribe", json!({"uri": uri})).await
}

#[tokio::test]
async fn subscribers_and_only_they_hear_of_updates() {
    let server = server();
    let mut a = connect(&server).await;
    let mut b = connect(&server).await;
    assert_eq!(subscribe(&mut a, "test://static/readme").await["result"], json!({}));
    assert_eq!(subscribe(&mut a, "test://template/7/data").await["result"], json!({}));
    assert_eq!(subscribe(&mut b, "test://template/7/data").await["result"], json!({}));

    assert_eq!(server.notify_resource_updated("test://static/readme").await, 1);
    assert_eq!(
        a.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://static/readme"}})
    );
    assert_eq!(server.notify_resource_updated("test://template/7/data").await, 2);
    for client in [&mut a, &mut b] {
        assert_eq!(client.recv().await["params"], json!({"uri": "test://template/7/data"}));
    }

    assert_eq!(a.request("resources/unsubscribe", json!({"uri": "test://static/readme"})).await["result"], json!({}));
    assert_eq!(server.notify_resource_updated("test://static/readme").await, 0);
    assert_eq!(server.notify_resource_updated("test://never-subscribed").await, 0);
    // Nothing was queued for either client: the next message each reads is its own response.
    a.result("ping", json!({})).await;
    b.result("ping", json!({})).await;

    let response = subscribe(&mut a, "test://nothing").await;
    assert_eq!(
        response["error"],
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "test://nothing"}})
    );
}

#[tokio::test]
async fn closed_sessions_are_forgotten() {
    let server = server();
    let mut a = connect(&server).await;
    subscribe(&mut a, "test://static/readme").await;
    assert_eq!(server.session_count(), 1);
    a.close_input().await;
    assert!(a.rest().await.is_empty());
    for _ in 0..100 {
        if server.session_count() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(server.session_count(), 0);
    assert_eq!(server.notify_resource_updated("test://static/readme").await, 0);
}

#[tokio::test]
async fn without_subscriptions_subscribe_is_unknown() {
    let server = Server::builder("r", "1").resources(resources![readme]).build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"]["resources"], json!({}));
    let response = subscribe(&mut client, "test://static/readme").await;
    assert_eq!(error_code(&response), -32601);
}

#[tokio::test]
async fn without_resources_the_methods_are_unknown() {
    let server = Server::builder("r", "1").build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"], json!({"logging": {}}));
    for method in ["resources/list", "resources/templates/list", "resources/read", "prompts/list", "tools/list"] {
        let response = client.request(method, json!({"uri": "x"})).await;
        assert_eq!(error_code(&response), -32601, "{method}: {response}");
    }
}

#[tokio::test]
async fn dynamic_resources_announce_list_changes() {
    let server = Server::builder("r", "1").dynamic_resources().build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"]["resources"], json!({"listChanged": true}));
    assert_eq!(client.result("resources/list", json!({})).await, json!({"resources": []}));

    server.add_resource(<readme as typed_mcp::resource::ResourceFn>::definition()).await.unwrap();
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {}})
    );
    assert_eq!(client.result("resources/list", json!({})).await["resources"][0]["uri"], "test://static/readme");
    let again = server.add_resource(<readme as typed_mcp::resource::ResourceFn>::definition()).await;
    assert!(matches!(again, Err(typed_mcp::server::ChangeError::Duplicate { .. })), "{again:?}");

    server.add_resource(hand_written()).await.unwrap();
    client.recv().await;
    assert_eq!(client.result("resources/templates/list", json!({})).await["resourceTemplates"][0]["name"], "files");
    assert!(server.remove_resource("files:///{+path}").await.unwrap());
    client.recv().await;
    assert_eq!(client.result("resources/templates/list", json!({})).await, json!({"resourceTemplates": []}));
    assert!(!server.remove_resource("files:///{+path}").await.unwrap());

    let fixed = Server::builder("r", "1").resources(resources![readme]).build().unwrap();
    let err = fixed.add_resource(hand_written()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the resources list is fixed; call `ServerBuilder::dynamic_resources` to change it at run time"
    );
}

#[tokio::test]
async fn lists_are_paginated_by_the_builder_page_size() {
    let mut builder = Server::builder("r", "1").page_size(2);
    for i in 0..5 {
        builder =
            builder.resource(ResourceDef::new(format!("test://r/{i}"), format!("r{i}"), |_: ResourceCall| async {
                Ok::<_, ErrorObject>("x")
            }));
    }
    let server = builder.build().unwrap();
    let mut client = connect(&server).await;
    let mut uris = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = client.result("resources/list", params).await;
        pages += 1;
        uris.extend(page["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap().to_owned()));
        match page.get("nextCursor") {
            Some(Value::String(c)) => cursor = Some(c.clone()),
            _ => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(uris, (0..5).map(|i| format!("test://r/{i}")).collect::<Vec<_>>());
    for bad in [json!({"cursor": "bogus"}), json!({"cursor": 3}), json!({"cursor": "dG9vbHM6Mg=="})] {
        let response = client.request("resources/list", bad.clone()).await;
        assert_eq!(error_code(&response), -32602, "{bad}: {response}");
    }
    // Templates have their own (here empty) single page.
    assert_eq!(client.result("resources/templates/list", json!({})).await, json!({"resourceTemplates": []}));
}

#[tokio::test]
async fn invalid_definitions_fail_the_build() {
    let bad = ResourceDef::template("test://{a b}", "bad", |_: ResourceCall| async { Ok::<_, ErrorObject>("x") });
    let err = Server::builder("r", "1").resource(bad).build().unwrap_err();
    assert!(err.to_string().starts_with("invalid URI template `test://{a b}`"), "{err}");
    let twice = Server::builder("r", "1").resources(resources![readme, readme]).build().unwrap_err();
    assert_eq!(twice.to_string(), "a resource with URI (or template) `test://static/readme` is already registered");
}

#[tokio::test]
async fn reading_before_initialize_is_refused() {
    let mut client = serve(&server());
    let response = client.request("resources/read", json!({"uri": "test://static/readme"})).await;
    assert_eq!(error_code(&response), -32600, "{response}");
}

fn echo_tool(name: &str) -> ToolDef {
    let schema = json!({"type": "object"}).as_object().unwrap().clone();
    ToolDef::new(name, schema, |_: typed_mcp::tool::ToolCall| async { Ok::<_, ErrorObject>("echo") })
}

#[tokio::test]
async fn tools_page_like_the_other_lists_and_change_at_run_time() {
    let server = Server::builder("t", "1").page_size(1).dynamic_tools().build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"], json!({"logging": {}, "tools": {"listChanged": true}}));
    assert_eq!(client.result("tools/list", json!({})).await, json!({"tools": []}));

    for name in ["a", "b"] {
        server.add_tool(echo_tool(name)).await.unwrap();
        assert_eq!(
            client.recv().await,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
        );
    }
    let first = client.result("tools/list", json!({})).await;
    assert_eq!(first["tools"], json!([{"name": "a", "inputSchema": {"type": "object"}}]));
    let second = client.result("tools/list", json!({"cursor": first["nextCursor"]})).await;
    assert_eq!(second, json!({"tools": [{"name": "b", "inputSchema": {"type": "object"}}]}));
    assert_eq!(server.tools().tools.len(), 2);

    assert!(server.remove_tool("a").await.unwrap());
    client.recv().await;
    let response = client.request("tools/call", json!({"name": "a", "arguments": {}})).await;
    assert_eq!(response["error"], json!({"code": -32602, "message": "unknown tool: `a`"}));
    assert_eq!(client.result("tools/call", json!({"name": "b"})).await["content"][0]["text"], "echo");

    let invalid = server.add_tool(echo_tool("has space")).await.unwrap_err();
    assert!(matches!(invalid, typed_mcp::server::ChangeError::Invalid(_)), "{invalid:?}");
    let duplicate = server.add_tool(echo_tool("b")).await.unwrap_err();
    assert_eq!(duplicate.to_string(), "`b` is already registered");
}

#[tokio::test]
async fn a_fixed_tool_list_is_one_page_without_list_changed() {
    let server = Server::builder("t", "1").tools([echo_tool("a"), echo_tool("b")]).build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"]["tools"], json!({}));
    assert_eq!(client.result("tools/list", json!({})).await["tools"].as_array().unwrap().len(), 2);
    assert!(server.add_tool(echo_tool("c")).await.is_err());
    assert!(server.remove_tool("a").await.is_err());
}

#[tokio::test]
async fn a_client_that_stops_reading_does_not_hold_up_updates() {
    let server = server();
    let mut stalled = connect(&server).await;
    let mut reader = connect(&server).await;
    subscribe(&mut stalled, "test://static/readme").await;
    subscribe(&mut reader, "test://static/readme").await;
    let reading = tokio::spawn(async move {
        loop {
            reader.recv().await;
        }
    });
    // `stalled` never reads again: once its pipe and queue are full, each update waits a
    // bounded time for it and still reaches the session that reads.
    let mut reached = 2;
    let mut rounds = 0;
    while reached == 2 {
        rounds += 1;
        assert!(rounds < 20_000, "the stalled session never filled up");
        reached = server.notify_resource_updated("test://static/readme").await;
    }
    let started = std::time::Instant::now();
    assert_eq!(server.notify_resource_updated("test://static/readme").await, 1);
    let waited = started.elapsed();
    assert!(waited < std::time::Duration::from_secs(5), "waited {waited:?}");
    reading.abort();
}
