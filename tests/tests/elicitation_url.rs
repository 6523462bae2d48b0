//! URL-mode elicitation in process: ids, capability checks, completion routed to the owning
//! session only, and the -32042 error.

use serde_json::{Value, json};
use tests::stdio::{LineClient, within};
use tokio::sync::mpsc;
use typed_mcp::prelude::*;
use typed_mcp::server::CompleteError;

/// Asks the user to open a page whose URL carries the elicitation id.
#[tool]
async fn open_page(ctx: Context) -> String {
    format!("{:?}", ctx.elicit_url("https://auth.example.test/flow?id={elicitationId}", "Sign in to the service").await)
}

/// Asks with an id chosen by the caller.
#[tool]
async fn open_page_with_id(ctx: Context, id: String) -> String {
    format!("{:?}", ctx.elicit_url_with_id(id, "https://auth.example.test/fixed", "Sign in").await)
}

/// Needs a finished flow first.
#[tool]
fn needs_flow(ctx: Context) -> Result<String, UrlElicitationRequired> {
    let id = ctx.new_url_elicitation_id();
    Err(UrlElicitationRequired::single(&id, format!("https://auth.example.test/flow?id={id}"), "Sign in first"))
}

/// Completes a flow from inside a request of this session.
#[tool]
async fn finish(ctx: Context, id: String) -> String {
    format!("{:?}", ctx.complete_url_elicitation(&id).await.map(|c| c.elicitation_id))
}

/// Reports this session's key on the side channel and returns a fresh id it owns.
#[tool]
fn mint(ctx: Context, keys: State<mpsc::UnboundedSender<typed_mcp::server::SessionKey>>) -> String {
    let _ = keys.send(ctx.session_key());
    ctx.new_url_elicitation_id()
}

fn server() -> (Server, mpsc::UnboundedReceiver<typed_mcp::server::SessionKey>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let server = Server::builder("url-tests", "1.0.0")
        .tools(tools![open_page, open_page_with_id, needs_flow, finish, mint])
        .state(tx)
        .build()
        .unwrap();
    (server, rx)
}

async fn connect(server: &Server, capabilities: Value) -> LineClient {
    connect_at(server, "2025-11-25", capabilities).await
}

/// Connects asking for protocol revision `version`.
async fn connect_at(server: &Server, version: &str, capabilities: Value) -> LineClient {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = server.clone();
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    let mut client = LineClient::new(client_read, client_write);
    client
        .result(
            "initialize",
            json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    client.notify("notifications/initialized", json!({})).await;
    client
}

fn url_capable() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}})
}

async fn text(client: &mut LineClient, tool: &str, arguments: Value) -> String {
    let response = client.request("tools/call", json!({"name": tool, "arguments": arguments})).await;
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {response}")).to_owned()
}

/// Calls `open_page`, answers the elicitation with `action`, and returns the request and the tool's text.
async fn open(client: &mut LineClient, action: &str) -> (Value, String) {
    client.send_request(7, "tools/call", json!({"name": "open_page", "arguments": {}})).await;
    let request = client.recv().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": action}})).await;
    let response = client.recv().await;
    assert_eq!(response["id"], 7);
    (request, response["result"]["content"][0]["text"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn accept_decline_cancel_and_the_wire_shape() {
    let (server, _) = server();
    let mut client = connect(&server, url_capable()).await;
    let (request, text) = open(&mut client, "accept").await;
    let params = &request["params"];
    assert_eq!(params["mode"], "url");
    assert_eq!(params["message"], "Sign in to the service");
    let id = params["elicitationId"].as_str().unwrap();
    assert_eq!(id.len(), 32, "128 random bits as hex: {id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(params["url"], format!("https://auth.example.test/flow?id={id}"));
    assert_eq!(params.as_object().unwrap().len(), 4, "only mode, message, elicitationId, url: {params}");
    assert_eq!(text, format!("Ok(Accept(\"{id}\"))"));
    assert!(server.url_elicitations().owner(id).is_some(), "the id is recorded as owned by the session");
    assert_eq!(open(&mut client, "decline").await.1, "Ok(Decline)");
    assert_eq!(open(&mut client, "cancel").await.1, "Ok(Cancel)");
}

#[tokio::test]
async fn a_form_only_client_gets_not_supported_and_nothing_is_sent() {
    let (server, _) = server();
    for capabilities in [json!({"elicitation": {}}), json!({"elicitation": {"form": {}}}), json!({})] {
        let mut client = connect(&server, capabilities.clone()).await;
        assert_eq!(
            text(&mut client, "open_page", json!({})).await,
            "Err(NotSupported { mode: \"url\" })",
            "{capabilities}"
        );
    }
    assert!(server.url_elicitations().is_empty(), "a refused request records no id");
}

#[tokio::test]
async fn a_session_before_2025_11_25_gets_not_supported_even_if_it_declares_url_mode() {
    // URL mode exists from 2025-11-25 on. An older revision's `elicitation/create` has no
    // `mode` and is always a form: sent there, a URL request would reach the client as a form
    // without a schema.
    let (server, _) = server();
    let mut client = connect_at(&server, "2025-06-18", url_capable()).await;
    assert_eq!(text(&mut client, "open_page", json!({})).await, "Err(NotSupported { mode: \"url\" })");
    assert!(server.url_elicitations().is_empty(), "a refused request records no id");
}

#[tokio::test]
async fn completion_reaches_only_the_owning_session() {
    let (server, mut keys) = server();
    let mut alice = connect(&server, url_capable()).await;
    let mut bob = connect(&server, url_capable()).await;
    let (request, _) = open(&mut alice, "accept").await;
    let id = request["params"]["elicitationId"].as_str().unwrap().to_owned();

    // Bob cannot complete Alice's flow from his session; nothing is sent to anyone.
    assert_eq!(text(&mut bob, "finish", json!({"id": id})).await, format!("Err(Foreign(\"{id}\"))"));

    // The application completes it (e.g. from the page's handler): only Alice is told.
    let done = within("completion", server.url_elicitations().complete(&id)).await.unwrap();
    assert_eq!(done.elicitation_id, id);
    let note = alice.recv().await;
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": id}})
    );
    text(&mut bob, "mint", json!({})).await;
    let bob_key = keys.recv().await.unwrap();
    assert_ne!(done.session, bob_key);
    // Bob's next response is the first thing he sees: he received no notification.
    assert_eq!(text(&mut bob, "finish", json!({"id": "nope"})).await, "Err(Unknown(\"nope\"))");

    // A second completion and an unknown id are refused.
    assert_eq!(server.url_elicitations().complete(&id).await, Err(CompleteError::AlreadyCompleted(id.clone())));
    assert!(matches!(server.url_elicitations().complete("missing").await, Err(CompleteError::Unknown(_))));
    assert!(server.url_elicitations().is_completed(&id));
}

#[tokio::test]
async fn a_session_completes_its_own_flow_directly() {
    let (server, _) = server();
    let mut client = connect(&server, url_capable()).await;
    let id = text(&mut client, "mint", json!({})).await;
    let (response, before) =
        client.request_collect("tools/call", json!({"name": "finish", "arguments": {"id": id}})).await;
    assert_eq!(response["result"]["content"][0]["text"], format!("Ok(\"{id}\")"));
    assert_eq!(
        before,
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": id}})
        ]
    );
}

#[tokio::test]
async fn caller_chosen_ids_are_owned_by_one_session() {
    let (server, _) = server();
    let mut alice = connect(&server, url_capable()).await;
    let mut bob = connect(&server, url_capable()).await;
    alice.send_request(9, "tools/call", json!({"name": "open_page_with_id", "arguments": {"id": "flow-1"}})).await;
    let request = alice.recv().await;
    assert_eq!(request["params"]["elicitationId"], "flow-1");
    alice.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}})).await;
    assert_eq!(alice.recv().await["result"]["content"][0]["text"], "Ok(Accept(\"flow-1\"))");
    let refused = text(&mut bob, "open_page_with_id", json!({"id": "flow-1"})).await;
    assert!(refused.starts_with("Err(InvalidRequest(") && refused.contains("another session"), "{refused}");
}

#[tokio::test]
async fn url_elicitation_required_is_error_32042_with_the_elicitations() {
    let (server, _) = server();
    let mut client = connect(&server, url_capable()).await;
    let response = client.request("tools/call", json!({"name": "needs_flow", "arguments": {}})).await;
    let error = &response["error"];
    assert_eq!(error["code"], -32042, "{response}");
    let list = error["data"]["elicitations"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    let id = list[0]["elicitationId"].as_str().unwrap();
    assert_eq!(
        list[0],
        json!({"mode": "url", "elicitationId": id, "url": format!("https://auth.example.test/flow?id={id}"), "message": "Sign in first"})
    );
    assert!(server.url_elicitations().owner(id).is_some(), "the id is recorded for completion");
}

#[tokio::test]
async fn ids_of_a_closed_session_are_forgotten() {
    let (server, _) = server();
    let mut client = connect(&server, url_capable()).await;
    let id = text(&mut client, "mint", json!({})).await;
    assert!(server.url_elicitations().owner(&id).is_some());
    client.close_input().await;
    client.rest().await;
    assert!(server.url_elicitations().owner(&id).is_none());
    assert!(matches!(server.url_elicitations().complete(&id).await, Err(CompleteError::Unknown(_))));
}

#[tokio::test]
async fn a_client_without_url_mode_is_never_sent_a_flow() {
    let (server, _) = server();
    let mut client = connect(&server, json!({"elicitation": {"form": {}}})).await;
    // The tool needs a flow in the browser, which this client cannot show: -32021 naming the
    // capability, not -32042 with a URL.
    let response = client.request("tools/call", json!({"name": "needs_flow", "arguments": {}})).await;
    assert_eq!(response["error"]["code"], -32021, "{response}");
    assert_eq!(response["error"]["data"]["requiredCapabilities"], json!({"elicitation": {"url": {}}}), "{response}");
    assert!(response["error"]["message"].as_str().unwrap_or_default().contains("elicitation.url"), "{response}");
    assert!(response["error"]["data"].get("elicitations").is_none(), "{response}");
    // A flow of this session completed anyway (the id came from `new_url_elicitation_id`)
    // sends it no `notifications/elicitation/complete`.
    let id = text(&mut client, "mint", json!({})).await;
    server.url_elicitations().complete(&id).await.expect("the flow completes");
    // Whatever the server sent before it answers the next request arrives first.
    let (_, before) = client.request_collect("tools/call", json!({"name": "mint", "arguments": {}})).await;
    assert!(
        before.iter().all(|m| m["method"] != "notifications/elicitation/complete"),
        "a client without URL mode was told of a flow: {before:?}"
    );
}
