//! Our client on the wire, against a scripted server (the test writes and reads the server's
//! JSON-RPC lines): what `initialize` sends, what the client refuses and with which codes, the
//! shape of its answers, `notifications/cancelled`, and malformed input.

use std::time::Duration;

use serde_json::{Value, json};
use tests::stdio::{LineClient, within};
use typed_mcp::client::{CancellationToken, Client, ClientBuilder, ClientError, ElicitationModes, ServerNotification};
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::ElicitationScript;

/// A scripted server end, and the client connected to it.
struct Wire {
    server: LineClient,
    client: Client,
    initialize: Value,
}

/// Connects `builder` to a scripted server that answers `initialize` with `version`.
async fn connect_as(builder: ClientBuilder, version: &str) -> Result<Wire, ClientError> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (client_read, client_write) = tokio::io::split(client_io);
    let (server_read, server_write) = tokio::io::split(server_io);
    let mut server = LineClient::new(server_read, server_write);
    let connecting = tokio::spawn(builder.connect_io(client_read, client_write));
    let initialize = server.recv().await;
    assert_eq!(initialize["method"], "initialize", "{initialize}");
    server
        .send(&json!({
            "jsonrpc": "2.0",
            "id": initialize["id"],
            "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted", "version": "0"}}
        }))
        .await;
    let client = within("the handshake", connecting).await.expect("the connecting task")?;
    let initialized = server.recv().await;
    assert_eq!(initialized["method"], "notifications/initialized", "{initialized}");
    Ok(Wire { server, client, initialize })
}

async fn connect(builder: ClientBuilder) -> Wire {
    connect_as(builder, "2025-11-25").await.expect("the handshake succeeds")
}

fn builder() -> ClientBuilder {
    Client::builder("wire-test", "0.1.0")
}

impl Wire {
    /// Sends a server request and returns the client's response.
    async fn ask(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.server.send_request(id, method, params).await;
        let response = self.server.recv().await;
        assert_eq!(response["id"], id, "{response}");
        response
    }
}

fn form(schema: Value) -> Value {
    json!({"mode": "form", "message": "Fill this in", "requestedSchema": schema})
}

#[tokio::test]
async fn initialize_says_who_and_what() {
    let wire = connect(builder().title("Wire Test").elicitation(ElicitationScript::new())).await;
    assert_eq!(
        wire.initialize["params"],
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}, "url": {}}},
            "clientInfo": {"name": "wire-test", "title": "Wire Test", "version": "0.1.0"}
        })
    );
    assert_eq!(wire.client.server_info().name, "scripted");
}

#[tokio::test]
async fn older_revisions_are_accepted_and_unknown_ones_refused() {
    let wire = connect_as(builder(), "2025-06-18").await.unwrap();
    assert_eq!(wire.client.protocol_version(), "2025-06-18");
    let refused = connect_as(builder(), "1999-01-01").await;
    assert!(matches!(refused, Err(ClientError::UnsupportedProtocolVersion(v)) if v == "1999-01-01"));
}

#[tokio::test]
async fn elicitation_requests_are_checked_before_the_handler_sees_them() {
    let script = ElicitationScript::new().modes(ElicitationModes::FORM);
    let mut wire = connect(builder().elicitation(script.clone())).await;

    let nested = wire
        .ask(1, "elicitation/create", form(json!({"type": "object", "properties": {"a": {"type": "object"}}})))
        .await;
    assert_eq!(nested["error"]["code"], -32602, "{nested}");
    let pattern = wire
        .ask(
            2,
            "elicitation/create",
            form(json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}})),
        )
        .await;
    assert_eq!(pattern["error"]["code"], -32602, "{pattern}");
    let url = wire
        .ask(
            3,
            "elicitation/create",
            json!({"mode": "url", "message": "Go", "elicitationId": "e1", "url": "https://x.test/"}),
        )
        .await;
    assert_eq!(url["error"]["code"], -32602, "a mode the client did not declare: {url}");
    let no_schema = wire.ask(4, "elicitation/create", json!({"message": "m"})).await;
    assert_eq!(no_schema["error"]["code"], -32602, "{no_schema}");
    let not_object = wire.ask(5, "elicitation/create", json!("nope")).await;
    assert_eq!(not_object["error"]["code"], -32602, "{not_object}");
    assert!(script.requests().is_empty(), "the handler saw none of them");

    // Without a handler, elicitation is a mode not declared either.
    let mut plain = connect(builder()).await;
    let refused = plain.ask(1, "elicitation/create", form(json!({"type": "object", "properties": {}}))).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[tokio::test]
async fn answers_carry_defaults_and_only_what_the_mode_allows() {
    let script = ElicitationScript::new()
        .accept(json!({"name": "Ada", "extra": "dropped"}))
        .decline()
        .answer_with(|_| ElicitResult::accept(json!({"age": "old"}).as_object().unwrap().clone()))
        .accept(json!({"ignored": true}));
    let mut wire = connect(builder().elicitation(script.clone())).await;
    // No `mode`: a form, as the 2025-06-18 revision sends it.
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "default": 30},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"}
        },
        "required": ["name"]
    });
    let accepted = wire.ask(1, "elicitation/create", json!({"message": "Who?", "requestedSchema": schema})).await;
    assert_eq!(
        accepted["result"],
        json!({"action": "accept", "content": {"name": "Ada", "age": 30, "status": "active"}})
    );
    let declined = wire.ask(2, "elicitation/create", form(schema.clone())).await;
    assert_eq!(declined["result"], json!({"action": "decline"}));
    let invalid = wire.ask(3, "elicitation/create", form(schema)).await;
    assert_eq!(invalid["error"]["code"], -32603, "content that breaks the schema is not sent: {invalid}");
    let url = wire
        .ask(
            4,
            "elicitation/create",
            json!({"mode": "url", "message": "Go", "elicitationId": "e1", "url": "https://x.test/a"}),
        )
        .await;
    assert_eq!(url["result"], json!({"action": "accept"}), "URL mode never carries content");
    script.assert_done();
}

#[tokio::test]
async fn requests_without_a_handler_are_refused_and_ping_is_answered() {
    let mut wire = connect(builder()).await;
    let ping = wire.ask(1, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    for (id, method) in [(2, "sampling/createMessage"), (3, "roots/list"), (4, "tools/call")] {
        let response = wire.ask(id, method, json!({})).await;
        assert_eq!(response["error"]["code"], -32601, "{method}: {response}");
    }
    // Garbage from the server is answered, never fatal.
    wire.server.send_line("{not json").await;
    let parse_error = wire.server.recv().await;
    assert_eq!(parse_error["error"]["code"], -32700, "{parse_error}");
    wire.server.send_line(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"nope":1}}"#).await;
    wire.server.send_line(r#"{"jsonrpc":"2.0","id":999,"result":{}}"#).await;
    let ping = wire.ask(5, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

#[tokio::test]
async fn abandoned_and_cancelled_requests_are_withdrawn() {
    let mut wire = connect(builder()).await;
    let client = wire.client.clone();
    let token = CancellationToken::new();
    let call = tokio::spawn({
        let token = token.clone();
        async move { client.tool("slow").arguments(json!({"x": 1})).cancel_on(token).await }
    });
    let request = wire.server.recv().await;
    assert_eq!(request["method"], "tools/call");
    assert_eq!(request["params"], json!({"name": "slow", "arguments": {"x": 1}}));
    token.cancel();
    assert_eq!(within("the call", call).await.unwrap(), Err(ClientError::Cancelled));
    let cancelled = wire.server.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);

    // Dropped after a timeout.
    let client = wire.client.clone();
    let dropped = tokio::time::timeout(Duration::from_millis(100), client.call_tool("slow", ())).await;
    assert!(dropped.is_err());
    let request = wire.server.recv().await;
    let cancelled = wire.server.recv().await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    // A late answer to a withdrawn request is ignored.
    wire.server.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}})).await;
    let ping = wire.ask(7, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
}

#[tokio::test]
async fn progress_tokens_route_notifications_to_their_call() {
    let mut wire = connect(builder()).await;
    let mut events = wire.client.notifications();
    let (tx, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let client = wire.client.clone();
    let call = tokio::spawn(async move {
        client
            .tool("work")
            .on_progress(move |p| {
                let _ = tx.send(p.progress);
            })
            .await
    });
    let request = wire.server.recv().await;
    let token = request["params"]["_meta"]["progressToken"].clone();
    assert!(token.is_string(), "{request}");
    for (i, t) in [(1, token.clone()), (2, json!("someone-else")), (3, token)] {
        wire.server.notify("notifications/progress", json!({"progressToken": t, "progress": i})).await;
    }
    wire.server
        .send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": "ok"}]}}))
        .await;
    within("the call", call).await.unwrap().unwrap();
    let mut mine = Vec::new();
    while let Ok(p) = progress.try_recv() {
        mine.push(p);
    }
    assert_eq!(mine, [1.0, 3.0]);
    let mut all = 0;
    while let Ok(ServerNotification::Progress(_)) = events.try_recv() {
        all += 1;
    }
    assert_eq!(all, 3, "every progress notification is also broadcast");
}

#[tokio::test]
async fn completion_notifications_are_delivered_once() {
    let mut wire = connect(builder()).await;
    let mut events = wire.client.notifications();
    for _ in 0..2 {
        wire.server.notify("notifications/elicitation/complete", json!({"elicitationId": "e7"})).await;
    }
    wire.server.notify("notifications/tools/list_changed", json!({})).await;
    assert_eq!(
        within("the first event", events.recv()).await.unwrap(),
        ServerNotification::ElicitationComplete { elicitation_id: "e7".into() }
    );
    assert_eq!(within("the second event", events.recv()).await.unwrap(), ServerNotification::ToolListChanged);
    assert!(wire.client.elicitation_completed("e7"));
    wire.client.wait_for_elicitations(["e7"], Duration::from_secs(1)).await.unwrap();
}

#[tokio::test]
async fn the_server_closing_its_output_closes_the_client() {
    let wire = connect(builder()).await;
    let Wire { server, client, .. } = wire;
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("anything", ()).await }
    });
    drop(server);
    assert_eq!(within("the waiting call", waiting).await.unwrap(), Err(ClientError::Closed));
    within("closed()", client.closed()).await;
    assert!(client.is_closed());
}
