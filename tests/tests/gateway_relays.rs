//! What else crosses the gateway, with the conformance server (`src/bin/conformance.rs`)
//! behind it over HTTP in each era and our client in each era in front: completion, progress,
//! log messages, sampling and roots requests of the upstream answered by the client, resource
//! subscriptions and updates, list changes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tests::stdio::within;
use typed_mcp::client::{Client, ProtocolEra, ServerNotification, sampling_fn};
use typed_mcp::protocol::{CreateMessageResult, LoggingLevel, Role, Root, SamplingContent, SamplingMessageContent};
use typed_mcp::testing::ToolResultExt;
use typed_mcp_gateway::{Config, Gateway};

use crate::support::listening::Listening;
use crate::support::servers::CONFORMANCE;

async fn gateway(http: &Listening, era: &str) -> (Gateway, typed_mcp::Server) {
    let text = format!("[[upstream]]\nname = \"conf\"\nurl = \"{}\"\nera = \"{era}\"\n", http.url);
    let gateway = Gateway::from_config(Config::parse(&text, "test.toml").unwrap()).unwrap();
    let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
    (gateway, server)
}

async fn client(server: &typed_mcp::Server, era: ProtocolEra) -> Client {
    Client::builder("gateway-test", "1")
        .protocol_era(era)
        .sampling(sampling_fn(|_params| async move {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingMessageContent::Single(SamplingContent::text("Paris")),
                model: "test-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        }))
        .roots(vec![Root { uri: "file:///work".into(), name: None, meta: None }])
        .connect_in_process(server)
        .await
        .unwrap()
}

const UPSTREAM_ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];
const ERAS: [ProtocolEra; 2] = [ProtocolEra::Y2025, ProtocolEra::Y2026];

#[tokio::test]
async fn completion_sampling_and_roots_cross_the_gateway_in_every_combination() {
    let http = Listening::start(CONFORMANCE.as_ref(), "conformance", &[]);
    for upstream_era in UPSTREAM_ERAS {
        let (gateway, server) = gateway(&http, upstream_era).await;
        for era in ERAS {
            let what = format!("{upstream_era} upstream, {era:?} client");
            let client = client(&server, era).await;
            let completion = client.complete_prompt_argument("conf_test_prompt_with_arguments", "arg1", "pa").await;
            assert_eq!(completion.unwrap().values, ["paris", "park", "party"], "{what}");

            let sampled = within(&what, client.call_tool("conf_test_sampling", json!({"prompt": "Capital?"}))).await;
            assert_eq!(sampled.unwrap().text(), "LLM response: Paris", "{what}");
            let roots = within(&what, client.call_tool("conf_test_input_required_result_list_roots", ())).await;
            assert_eq!(roots.unwrap().text(), "The client has 1 root(s): file:///work", "{what}");
            client.close().await;
        }
        gateway.shutdown().await;
    }
}

#[tokio::test]
async fn progress_and_log_messages_of_a_call_reach_a_session_client() {
    let http = Listening::start(CONFORMANCE.as_ref(), "conformance", &[]);
    let (gateway, server) = gateway(&http, "2025-11-25").await;
    let client = client(&server, ProtocolEra::Y2025).await;
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let call =
        client.tool("conf_test_tool_with_progress").on_progress(move |p| seen.lock().unwrap().push(p.progress)).send();
    assert_eq!(within("progress", call).await.unwrap().text(), "Progress test completed");
    assert_eq!(*progress.lock().unwrap(), [0.0, 50.0, 100.0]);

    client.set_log_level(LoggingLevel::Debug).await.unwrap();
    let mut notifications = client.notifications();
    let logged = within("logging", client.call_tool("conf_test_tool_with_logging", ())).await.unwrap();
    assert_eq!(logged.text(), "Logging test completed");
    let mut messages = Vec::new();
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(500), notifications.recv()).await {
        if let ServerNotification::Log(params) = n {
            messages.push(params.data.as_str().unwrap_or_default().to_owned());
        }
        if messages.len() == 3 {
            break;
        }
    }
    assert_eq!(messages, ["Tool execution started", "Tool processing data", "Tool execution completed"]);
    client.close().await;
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_list_change_upstream_reaches_the_client_and_the_new_tool_is_served() {
    let http = Listening::start(CONFORMANCE.as_ref(), "conformance", &[]);
    let (gateway, server) = gateway(&http, "2025-11-25").await;
    let client = client(&server, ProtocolEra::Y2025).await;
    let mut notifications = client.notifications();
    let changed = within("trigger", client.call_tool("conf_test_trigger_tool_change", ())).await.unwrap().text();
    let present = changed.starts_with("Added");
    let heard = async {
        loop {
            if let Ok(ServerNotification::ToolListChanged) = notifications.recv().await {
                return;
            }
        }
    };
    within("tools/list_changed", heard).await;
    let listed = async {
        loop {
            let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
            if names.contains(&"conf_test_dynamic_tool".to_owned()) == present {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    within("the new list", listed).await;
    if present {
        let result = within("call", client.call_tool("conf_test_dynamic_tool", ())).await.unwrap();
        assert!(!result.is_error.unwrap_or(false));
    }
    client.close().await;
    gateway.shutdown().await;
}

#[tokio::test]
async fn a_client_subscribes_to_an_upstream_resource_through_the_gateway() {
    let http = Listening::start(CONFORMANCE.as_ref(), "conformance", &[]);
    let (gateway, server) = gateway(&http, "2025-11-25").await;
    let client = client(&server, ProtocolEra::Y2025).await;
    assert!(client.server_capabilities().resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false));
    within("subscribe", client.subscribe_resource("test://watched-resource")).await.unwrap();
    within("unsubscribe", client.unsubscribe_resource("test://watched-resource")).await.unwrap();
    let unknown = client.subscribe_resource("test://nothing-here").await.unwrap_err();
    assert_eq!(unknown.code(), Some(-32002), "{unknown}");
    client.close().await;
    gateway.shutdown().await;
}

/// The gateway asks an upstream for progress only when its own client gets it: when the call has
/// a progress token (a client that asked for none has nothing to receive it with, and the
/// upstream then need not work it out). Both upstream eras, both client eras.
#[tokio::test]
async fn an_upstream_is_asked_for_progress_only_when_the_client_asked_for_it() {
    use typed_mcp::ErrorObject;
    use typed_mcp::tool::{ToolCall, ToolDef};
    use typed_mcp::transport::http::HttpConfig;

    use crate::support::http::Endpoint;

    // Tells whether its call reports progress to anyone, and reports some when it does.
    let asked =
        ToolDef::new("asked", json!({"type": "object"}).as_object().unwrap().clone(), |call: ToolCall| async move {
            let reports = call.ctx.reports_progress();
            if reports {
                let _ = call.ctx.progress(1.0, Some(1.0), None).await;
            }
            Ok::<_, ErrorObject>(reports.to_string())
        });
    let upstream = typed_mcp::Server::builder("progress-upstream", "1.0.0").tool(asked).build().unwrap();
    let endpoint = Endpoint::serve(&upstream, HttpConfig::default()).await;
    for upstream_era in UPSTREAM_ERAS {
        let text = format!("[[upstream]]\nname = \"up\"\nurl = \"{}\"\nera = \"{upstream_era}\"\n", endpoint.url);
        let gateway = Gateway::from_config(Config::parse(&text, "test.toml").unwrap()).unwrap();
        let server = within("gateway start", gateway.start(gateway.server_builder())).await.unwrap();
        for era in ERAS {
            let what = format!("{upstream_era} upstream, {era:?} client");
            let client = client(&server, era).await;
            let plain = within(&what, client.call_tool("up_asked", ())).await.unwrap();
            assert_eq!(plain.text(), "false", "{what}: no progress token, yet the upstream was asked");
            let progress = Arc::new(Mutex::new(Vec::new()));
            let seen = progress.clone();
            let call = client.tool("up_asked").on_progress(move |p| seen.lock().unwrap().push(p.progress)).send();
            assert_eq!(within(&what, call).await.unwrap().text(), "true", "{what}");
            assert_eq!(*progress.lock().unwrap(), [1.0], "{what}");
            client.close().await;
        }
        gateway.shutdown().await;
    }
}
