//! Our client against a server written with the official TypeScript SDK
//! (`tests/interop/elicitation_server.mjs`, `@modelcontextprotocol/sdk` pinned in
//! `tests/interop/`), over stdio and over Streamable HTTP: the TypeScript server elicits in form
//! and URL mode, raises -32042, sends a schema outside the form subset, samples and lists
//! roots, and our handlers answer.
//!
//! The pinned SDK is installed on first use (`tests::provision`).

use std::time::Duration;

use serde_json::{Value, json};
use tests::interop::{interop_dir, require_node_package};
use tests::stdio::within;
use tokio::process::Command;
use typed_mcp::client::{
    Client, ClientBuilder, ClientError, ElicitationModes, ElicitationRequest, ProtocolEra, elicitation_fn, sampling_fn,
};
use typed_mcp::protocol::{CreateMessageResult, ElicitResult, Role, Root, SamplingContent, SamplingMessageContent};
use typed_mcp::testing::ToolResultExt;

fn server_script() -> Command {
    require_node_package("@modelcontextprotocol/sdk");
    let mut command = Command::new(tests::interop::node_program());
    command.arg(interop_dir().join("elicitation_server.mjs")).current_dir(interop_dir());
    command
}

/// Our client with every handler: forms are filled in (the name only; the rest from defaults),
/// URLs consented to, the model answers "4", and two roots are offered.
fn client() -> ClientBuilder {
    Client::builder("rust-interop-client", "1.0.0")
        .elicitation(elicitation_fn(ElicitationModes::ALL, |request| async move {
            match request {
                ElicitationRequest::Form(form) => {
                    let mut content = form.defaults();
                    content.insert("name".into(), json!("Ada"));
                    form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
                }
                ElicitationRequest::Url(url) => {
                    assert_eq!(url.domain(), Some("connect.example.test"));
                    ElicitResult::accept_url()
                }
                _ => ElicitResult::decline(),
            }
        }))
        .sampling(sampling_fn(|params| async move {
            assert_eq!(params.max_tokens, 10);
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingMessageContent::Single(SamplingContent::text("4")),
                model: "rust-test-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        }))
        .roots(vec![
            Root { uri: "file:///projects/one".into(), name: Some("one".into()), meta: None },
            Root { uri: "file:///projects/two".into(), name: None, meta: None },
        ])
}

/// Every tool of the script, checked.
async fn exercise(client: &Client) {
    assert_eq!(client.server_info().name, "ts-elicitation-server");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.list_all_tools().await.unwrap().len(), 6);

    let form = client.call_tool("ask_form", ()).await.unwrap();
    let answer: Value = serde_json::from_str(&form.text()).unwrap();
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {"name": "Ada", "age": 30, "color": "green", "subscribe": false, "topics": ["tech"]}})
    );

    let mut events = client.notifications();
    let url = client.call_tool("ask_url", ()).await.unwrap().text();
    let id = url.strip_prefix("accept ").unwrap_or_else(|| panic!("{url}")).to_owned();
    within("the flow to complete", client.wait_for_elicitations([id.as_str()], Duration::from_secs(10))).await.unwrap();
    assert!(
        matches!(events.try_recv(), Ok(typed_mcp::client::ServerNotification::ElicitationComplete { elicitation_id }) if elicitation_id == id)
    );

    let Err(ClientError::UrlElicitationRequired(required)) = client.call_tool("needs_url", ()).await else {
        panic!("needs_url should fail with -32042 first");
    };
    assert_eq!(required.elicitations.len(), 1);
    assert_eq!(required.elicitations[0].message, "Authorize first");
    let retried = within("the -32042 flow", client.call_tool_with_url_elicitation("needs_url", ())).await.unwrap();
    assert_eq!(retried.text(), "needs_url: authorized");

    assert_eq!(client.call_tool("bad_schema", ()).await.unwrap().text(), "-32602");
    assert_eq!(client.call_tool("ask_model", ()).await.unwrap().text(), "rust-test-model: 4");
    assert_eq!(client.call_tool("ask_roots", ()).await.unwrap().text(), "file:///projects/one,file:///projects/two");
}

#[tokio::test]
async fn typescript_server_over_stdio() {
    let client = within("connecting", client().connect_stdio(server_script())).await.unwrap();
    exercise(&client).await;
    within("closing", client.close()).await;
}

/// In `ProtocolEra::Auto`, `server/discover` is refused by the TypeScript server (it speaks
/// sessions only), and the client falls back to `initialize`: everything then works as in a
/// session.
#[tokio::test]
async fn typescript_server_in_auto_mode_over_stdio_falls_back_to_a_session() {
    let client =
        within("connecting", client().protocol_era(ProtocolEra::Auto).connect_stdio(server_script())).await.unwrap();
    assert_eq!(client.era(), ProtocolEra::Y2025);
    exercise(&client).await;
    within("closing", client.close()).await;
}

#[tokio::test]
async fn typescript_server_in_auto_mode_over_http_falls_back_to_a_session() {
    let (mut child, url) = http_server().await;
    let auto = within("connecting", client().protocol_era(ProtocolEra::Auto).connect_http(&url)).await.unwrap();
    assert_eq!(auto.era(), ProtocolEra::Y2025);
    exercise(&auto).await;
    within("closing", auto.close()).await;
    // Asked for the 2026-07-28 era only, the client refuses a server that does not speak it.
    let refused = client().protocol_era(ProtocolEra::Y2026).connect_http(&url).await;
    assert!(refused.is_err(), "{refused:?}");
    let _ = child.kill().await;
}

/// The script serving Streamable HTTP, and its URL.
async fn http_server() -> (tokio::process::Child, String) {
    crate::support::listening::script_listening(server_script()).await
}

#[tokio::test]
async fn typescript_server_over_http() {
    let (mut child, url) = http_server().await;

    let client = within("connecting", client().connect_http(&url)).await.unwrap();
    exercise(&client).await;
    within("closing", client.close()).await;

    // A form-only client is never sent a URL request: the TypeScript server refuses it itself.
    let form_only = Client::builder("rust-interop-client", "1.0.0")
        .elicitation(elicitation_fn(ElicitationModes::FORM, |_| async { ElicitResult::decline() }))
        .connect_http(&url)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(form_only.capabilities()).unwrap(), json!({"elicitation": {"form": {}}}));
    let refused = form_only.call_tool("ask_url", ()).await;
    match refused {
        Ok(result) => assert!(result.is_error(), "{result:?}"),
        Err(e) => assert!(matches!(e, ClientError::Rpc(_)), "{e:?}"),
    }
    let declined: Value = serde_json::from_str(&form_only.call_tool("ask_form", ()).await.unwrap().text()).unwrap();
    assert_eq!(declined, json!({"action": "decline", "content": null}));
    form_only.close().await;
    let _ = child.kill().await;
}
