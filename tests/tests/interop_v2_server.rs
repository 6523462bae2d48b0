//! Our client against a server written with the TypeScript SDK v2 (`@modelcontextprotocol/server`,
//! pinned in `tests/interop/`; the script is `tests/interop/v2_server.mjs`), in both eras that
//! server speaks, over Streamable HTTP and over stdio.
//!
//! The server has a tool returning plain (and structured) content, `greet`, and one that asks the
//! user for a color with a form, `ask_color`: written once as an `input_required` result, which
//! the SDK turns into an `elicitation/create` request for a 2025-11-25 session. Our client
//! answers accept (the schema's default filled in for the field left out), decline and cancel.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tests::interop::{interop_dir, require_node_package};
use tests::stdio::within;
use tokio::process::Command;
use typed_mcp::client::{Client, ElicitationModes, ElicitationRequest, ProtocolEra, elicitation_fn};
use typed_mcp::protocol::ElicitResult;
use typed_mcp::testing::ToolResultExt;

/// What the user does with the next form.
#[derive(Clone, Copy, Debug)]
enum Reply {
    /// Picks a color, leaving the optional `shade` to its default.
    Accept(&'static str),
    Decline,
    Cancel,
}

/// The forms the client was shown, and the replies still to give.
#[derive(Default)]
struct User {
    shown: Mutex<Vec<(String, Value)>>,
    replies: Mutex<VecDeque<Reply>>,
}

fn server_script() -> Command {
    require_node_package("@modelcontextprotocol/server");
    let mut command = Command::new(tests::interop::node_program());
    command.arg(interop_dir().join("v2_server.mjs")).current_dir(interop_dir()).kill_on_drop(true);
    command
}

/// The script serving Streamable HTTP, and its URL.
async fn http_server() -> (tokio::process::Child, String) {
    crate::support::listening::script_listening(server_script()).await
}

/// A client in `era` whose user answers forms from `user`.
fn builder(era: ProtocolEra, user: &Arc<User>) -> typed_mcp::client::ClientBuilder {
    let user = user.clone();
    Client::builder("rust-interop-client", "1.0.0").protocol_era(era).elicitation(elicitation_fn(
        ElicitationModes::FORM,
        move |request| {
            let user = user.clone();
            async move {
                let ElicitationRequest::Form(form) = request else {
                    panic!("the v2 server only asks with forms: {request:?}");
                };
                let schema = Value::Object(form.schema().as_object().clone());
                user.shown.lock().unwrap().push((form.message.clone(), schema));
                let reply = user.replies.lock().unwrap().pop_front().expect("a scripted reply for every form");
                match reply {
                    Reply::Accept(color) => {
                        let content = json!({"color": color}).as_object().cloned().expect("an object");
                        form.accept(content).expect("the answer fits the form")
                    }
                    Reply::Decline => ElicitResult::decline(),
                    Reply::Cancel => ElicitResult::cancel(),
                }
            }
        },
    ))
}

/// Both tools, checked, in the era the client connected in.
async fn exercise(client: &Client, user: &User, version: &str) {
    assert_eq!(client.protocol_version(), version);
    assert_eq!(client.server_info().name, "ts-v2-server");
    let mut tools: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    tools.sort();
    assert_eq!(tools, ["ask_color", "greet"]);

    let greeting = within("greet", client.call_tool("greet", json!({"name": "Ada"}))).await.unwrap();
    assert!(!greeting.is_error(), "{greeting:?}");
    assert_eq!(greeting.text(), "Hello, Ada!");
    assert_eq!(greeting.structured_content, Some(json!({"greeting": "Hello, Ada!"})));

    user.replies.lock().unwrap().extend([Reply::Accept("green"), Reply::Decline, Reply::Cancel]);
    let accepted = within("ask_color (accept)", client.call_tool("ask_color", ())).await.unwrap();
    assert!(!accepted.is_error(), "{accepted:?}");
    // `shade` was left out: the client filled in the schema's default.
    assert_eq!(accepted.text(), "color: green (plain)");
    let declined = within("ask_color (decline)", client.call_tool("ask_color", ())).await.unwrap();
    assert_eq!((declined.text().as_str(), declined.is_error()), ("no color (decline)", false));
    let cancelled = within("ask_color (cancel)", client.call_tool("ask_color", ())).await.unwrap();
    assert_eq!((cancelled.text().as_str(), cancelled.is_error()), ("no color (cancel)", true));

    let shown = std::mem::take(&mut *user.shown.lock().unwrap());
    assert_eq!(shown.len(), 3, "one form per call: {shown:?}");
    for (message, schema) in &shown {
        assert_eq!(message, "Which color do you like best?");
        assert_eq!(schema["properties"]["color"]["enum"], json!(["red", "green", "blue"]), "{schema}");
        assert_eq!(schema["required"], json!(["color"]), "{schema}");
    }
    assert!(user.replies.lock().unwrap().is_empty());
}

#[tokio::test]
async fn our_client_over_http_in_a_2025_11_25_session() {
    let (mut child, url) = http_server().await;
    let user = Arc::new(User::default());
    let client = within("connecting", builder(ProtocolEra::Y2025, &user).connect_http(&url)).await.unwrap();
    assert_eq!(client.era(), ProtocolEra::Y2025);
    exercise(&client, &user, "2025-11-25").await;
    within("closing", client.close()).await;
    let _ = child.kill().await;
}

#[tokio::test]
async fn our_client_over_http_in_2026_07_28() {
    let (mut child, url) = http_server().await;
    let user = Arc::new(User::default());
    let client = within("connecting", builder(ProtocolEra::Y2026, &user).connect_http(&url)).await.unwrap();
    assert_eq!(client.era(), ProtocolEra::Y2026);
    exercise(&client, &user, "2026-07-28").await;
    within("closing", client.close()).await;

    // Left to choose, the client finds the newer era on the same endpoint.
    let auto = within("connecting", builder(ProtocolEra::Auto, &user).connect_http(&url)).await.unwrap();
    assert_eq!(auto.era(), ProtocolEra::Y2026);
    exercise(&auto, &user, "2026-07-28").await;
    within("closing", auto.close()).await;
    let _ = child.kill().await;
}

#[tokio::test]
async fn our_client_over_stdio_in_a_2025_11_25_session() {
    let user = Arc::new(User::default());
    let client = within("connecting", builder(ProtocolEra::Y2025, &user).connect_stdio(server_script())).await.unwrap();
    exercise(&client, &user, "2025-11-25").await;
    within("closing", client.close()).await;
}

#[tokio::test]
async fn our_client_over_stdio_in_2026_07_28() {
    let user = Arc::new(User::default());
    let client = within("connecting", builder(ProtocolEra::Y2026, &user).connect_stdio(server_script())).await.unwrap();
    assert_eq!(client.era(), ProtocolEra::Y2026);
    exercise(&client, &user, "2026-07-28").await;
    within("closing", client.close()).await;
}
