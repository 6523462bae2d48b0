//! Logging end to end, in process: `logging/setLevel` per session, `notifications/message` at
//! or above the level (nothing before a level is set, unless the server chose a default),
//! broadcasts from the application, and turning logging off.

use serde_json::{Value, json};
use tests::serve::{connect, connect_with};
use tests::stdio::{LineClient, error_code};
use typed_mcp::prelude::*;

/// Logs one message at each level, then answers.
#[tool]
async fn chatty(ctx: Context) -> String {
    for level in LoggingLevel::ALL {
        ctx.log(level, format!("{level} message")).await;
    }
    ctx.log_to(LoggingLevel::Error, Some("db"), json!({"error": "Connection failed", "port": 5432})).await;
    format!("logs warning: {}", ctx.logs(LoggingLevel::Warning))
}

fn builder() -> typed_mcp::ServerBuilder {
    Server::builder("logging", "1.0.0").tools(tools![chatty])
}

/// Calls `chatty` and returns the notifications that came before its response.
async fn chatter(client: &mut LineClient) -> (Vec<Value>, Value) {
    let (response, before) = client.request_collect("tools/call", json!({"name": "chatty", "arguments": {}})).await;
    (before, response["result"]["content"][0]["text"].clone())
}

fn message(level: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": format!("{level} message")}})
}

#[tokio::test]
async fn nothing_is_sent_before_the_client_sets_a_level() {
    let (mut client, init) = connect_with(&builder().build().unwrap(), json!({})).await;
    assert_eq!(init["capabilities"]["logging"], json!({}));
    let (before, text) = chatter(&mut client).await;
    assert_eq!(before, Vec::<Value>::new());
    assert_eq!(text, "logs warning: false");
}

#[tokio::test]
async fn messages_at_or_above_the_level_are_sent() {
    let mut client = connect(&builder().build().unwrap()).await;
    assert_eq!(client.result("logging/setLevel", json!({"level": "error"})).await, json!({}));
    let (before, text) = chatter(&mut client).await;
    assert_eq!(text, "logs warning: false");
    assert_eq!(
        before,
        vec![
            message("error"),
            message("critical"),
            message("alert"),
            message("emergency"),
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": "error", "logger": "db", "data": {"error": "Connection failed", "port": 5432}
            }}),
        ]
    );
    // Lowering the level lets more through.
    client.result("logging/setLevel", json!({"level": "debug"})).await;
    let (before, text) = chatter(&mut client).await;
    assert_eq!(text, "logs warning: true");
    assert_eq!(before.len(), 9);
    assert_eq!(before[0], message("debug"));
}

#[tokio::test]
async fn an_unknown_level_is_invalid_params() {
    let mut client = connect(&builder().build().unwrap()).await;
    for params in [json!({"level": "verbose"}), json!({}), json!({"level": 3})] {
        let response = client.request("logging/setLevel", params.clone()).await;
        assert_eq!(error_code(&response), -32602, "{params}: {response}");
    }
}

#[tokio::test]
async fn levels_are_per_session_and_broadcasts_respect_them() {
    let server = builder().build().unwrap();
    let mut loud = connect(&server).await;
    let mut quiet = connect(&server).await;
    let mut unset = connect(&server).await;
    loud.result("logging/setLevel", json!({"level": "info"})).await;
    quiet.result("logging/setLevel", json!({"level": "critical"})).await;
    assert_eq!(chatter(&mut quiet).await.0.len(), 3);

    assert_eq!(server.log(LoggingLevel::Warning, Some("app"), "disk at 91%").await, 1);
    assert_eq!(
        loud.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "app", "data": "disk at 91%"}})
    );
    assert_eq!(server.log(LoggingLevel::Alert, None, "on fire").await, 2);
    assert_eq!(loud.recv().await["params"], json!({"level": "alert", "data": "on fire"}));
    assert_eq!(quiet.recv().await["params"], json!({"level": "alert", "data": "on fire"}));
    // Nothing else was sent to anyone.
    for client in [&mut loud, &mut quiet, &mut unset] {
        client.result("ping", json!({})).await;
    }
}

#[tokio::test]
async fn a_default_level_applies_until_the_client_sets_one() {
    let server = builder().default_log_level(LoggingLevel::Critical).build().unwrap();
    let mut client = connect(&server).await;
    let (before, _) = chatter(&mut client).await;
    assert_eq!(before, vec![message("critical"), message("alert"), message("emergency")]);
    client.result("logging/setLevel", json!({"level": "emergency"})).await;
    assert_eq!(chatter(&mut client).await.0, vec![message("emergency")]);
}

#[tokio::test]
async fn logging_can_be_turned_off() {
    let server = builder().disable_logging().default_log_level(LoggingLevel::Debug).build().unwrap();
    let (mut client, init) = connect_with(&server, json!({})).await;
    assert_eq!(init["capabilities"], json!({"tools": {}}));
    let response = client.request("logging/setLevel", json!({"level": "debug"})).await;
    assert_eq!(error_code(&response), -32601);
    assert_eq!(chatter(&mut client).await.0, Vec::<Value>::new());
    assert_eq!(server.log(LoggingLevel::Emergency, None, "x").await, 0);
}

#[tokio::test]
async fn tracing_events_reach_clients_through_the_layer() {
    use tracing_subscriber::layer::SubscriberExt;

    let server = builder().build().unwrap();
    let mut client = connect(&server).await;
    client.result("logging/setLevel", json!({"level": "info"})).await;
    let subscriber = tracing_subscriber::registry().with(server.client_log_layer());
    tracing::subscriber::with_default(subscriber, || {
        tracing::debug!("too detailed for this client");
        tracing::warn!("disk almost full");
        tracing::error!(disk = "/var", used = 97, "disk full");
    });
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
            "level": "warning", "logger": module_path!(), "data": "disk almost full"
        }})
    );
    assert_eq!(
        client.recv().await["params"],
        json!({"level": "error", "logger": module_path!(), "data": {"message": "disk full", "disk": "/var", "used": 97}})
    );
    client.result("ping", json!({})).await;
}
