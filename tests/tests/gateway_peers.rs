//! The gateway (`mcp-gateway`) in front of servers written with the other SDKs, driven by our
//! client in both eras: the TypeScript SDK v1 server `elicitation_server.mjs` (2025-11-25 only),
//! the TypeScript SDK v2 server `v2_server.mjs` and the Python SDK server
//! `gateway_python_server.py` (both eras; `--legacy-only` makes the Python one speak 2025-11-25
//! alone). See `support::gateway`.
//!
//! What crosses the gateway: every upstream's tools under its prefix (structured content and
//! output schemas kept); forms asked by a 2025-11-25 upstream (`elicitation/create`) and by a
//! 2026-07-28 one (`input_required`), answered by a client of either era; the -32042 error of a
//! 2025 upstream, completed and retried (a URL input request for a 2026-07-28 client, which has
//! no such error); URL elicitation and its completion notification; sampling and roots.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use typed_mcp::client::{
    Client, ClientBuilder, ClientError, ElicitationModes, ElicitationRequest, ProtocolEra, ServerNotification,
    elicitation_fn, sampling_fn,
};
use typed_mcp::protocol::{CreateMessageResult, ElicitResult, Role, Root, SamplingContent, SamplingMessageContent};
use typed_mcp::testing::ToolResultExt;

use crate::support::gateway::{Gateway, Peer, Upstream, prefixed_tools, stdio_command, write_config};

/// How long one step may take: the gateway starts node and Python programs, on a machine that
/// may be busy with other tests.
const PATIENCE: Duration = Duration::from_secs(60);

/// Awaits `f`, failing the test if it takes longer than [`PATIENCE`].
async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(PATIENCE, f).await.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// Both eras our client speaks, with the version each negotiates.
const ERAS: [(ProtocolEra, &str); 2] = [(ProtocolEra::Y2025, "2025-11-25"), (ProtocolEra::Y2026, "2026-07-28")];

/// What the user does with the next question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reply {
    Accept,
    Decline,
    Cancel,
}

/// The questions the client was asked (message, and the URL of a URL request), and how it
/// answers the next one.
#[derive(Default)]
struct User {
    asked: Mutex<Vec<(String, Option<String>)>>,
    /// The `elicitationId` of each URL request, in order.
    url_ids: Mutex<Vec<String>>,
    reply: Mutex<Option<Reply>>,
}

impl User {
    fn replying(&self, reply: Reply) {
        *self.reply.lock().unwrap() = Some(reply);
    }

    fn take_asked(&self) -> Vec<(String, Option<String>)> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

/// Our client in `era`, answering every form of the three servers (each a field or two; the
/// rest from the schema's defaults), consenting to URLs, sampling ("4") and offering two roots.
fn client(era: ProtocolEra, user: &Arc<User>) -> ClientBuilder {
    let user = user.clone();
    Client::builder("rust-gateway-client", "1.0.0")
        .protocol_era(era)
        .elicitation(elicitation_fn(ElicitationModes::ALL, move |request| {
            let user = user.clone();
            async move {
                let url = request.as_url().map(|u| u.url.clone());
                if let Some(u) = request.as_url() {
                    user.url_ids.lock().unwrap().push(u.elicitation_id.clone());
                }
                user.asked.lock().unwrap().push((request.message().to_owned(), url));
                let reply = user.reply.lock().unwrap().unwrap_or(Reply::Accept);
                match (reply, request) {
                    (Reply::Decline, _) => ElicitResult::decline(),
                    (Reply::Cancel, _) => ElicitResult::cancel(),
                    (Reply::Accept, ElicitationRequest::Url(_)) => ElicitResult::accept_url(),
                    (Reply::Accept, ElicitationRequest::Form(form)) => {
                        let mut content = form.defaults();
                        let (field, value) = match form.message.as_str() {
                            "Tell us about you" => ("name", "Ada"),
                            "Which city do you live in?" => ("city", "Lyon"),
                            "Which color do you like best?" => ("color", "green"),
                            other => panic!("an unexpected form: {other:?}"),
                        };
                        content.insert(field.into(), json!(value));
                        form.accept(content).expect("the answer fits the form")
                    }
                    (Reply::Accept, other) => panic!("an unexpected request: {other:?}"),
                }
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

async fn connect(gateway: &Gateway, era: ProtocolEra, user: &Arc<User>) -> Client {
    let client = within("connecting to the gateway", client(era, user).connect_http(&gateway.url))
        .await
        .unwrap_or_else(|e| panic!("connecting in {era:?} to the gateway at {}: {e}", gateway.url));
    assert_eq!(client.era(), era);
    client
}

async fn tool_names(client: &Client) -> Vec<String> {
    let mut names: Vec<String> =
        within("tools/list", client.list_all_tools()).await.unwrap().into_iter().map(|t| t.name).collect();
    names.sort();
    names
}

async fn call(client: &Client, name: &str, arguments: Value) -> typed_mcp::protocol::CallToolResult {
    within(name, client.call_tool(name, arguments)).await.unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The TypeScript v1 server's form, answered with accept (the name, the rest from defaults) and
/// decline.
async fn ts_v1_form(client: &Client, user: &User) {
    user.replying(Reply::Accept);
    let answer: Value = serde_json::from_str(&call(client, "tsv1_ask_form", json!({})).await.text()).unwrap();
    assert_eq!(
        answer,
        json!({"action": "accept", "content": {"name": "Ada", "age": 30, "color": "green", "subscribe": false, "topics": ["tech"]}})
    );
    user.replying(Reply::Decline);
    let answer: Value = serde_json::from_str(&call(client, "tsv1_ask_form", json!({})).await.text()).unwrap();
    assert_eq!(answer, json!({"action": "decline", "content": null}));
    let asked = user.take_asked();
    assert_eq!(asked.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(), ["Tell us about you"; 2], "{asked:?}");
}

/// The Python server's form under `prefix`, answered with accept, decline and cancel.
async fn python_form(client: &Client, user: &User, prefix: &str) {
    let tool = format!("{prefix}_ask_city");
    for (reply, expected) in [
        (Reply::Accept, "city: Lyon, France"),
        (Reply::Decline, "no city (decline)"),
        (Reply::Cancel, "no city (cancel)"),
    ] {
        user.replying(reply);
        let result = call(client, &tool, json!({})).await;
        assert_eq!(result.text(), expected, "{reply:?}: {result:?}");
    }
    let asked = user.take_asked();
    assert_eq!(asked.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(), ["Which city do you live in?"; 3]);
}

/// The TypeScript v2 server's form (an `input_required` result where it speaks 2026-07-28),
/// answered with accept, decline and cancel.
async fn ts_v2_form(client: &Client, user: &User) {
    for (reply, expected, is_error) in [
        (Reply::Accept, "color: green (plain)", false),
        (Reply::Decline, "no color (decline)", false),
        (Reply::Cancel, "no color (cancel)", true),
    ] {
        user.replying(reply);
        let result = call(client, "tsv2_ask_color", json!({})).await;
        assert_eq!((result.text().as_str(), result.is_error()), (expected, is_error), "{reply:?}: {result:?}");
    }
    let asked = user.take_asked();
    assert_eq!(asked.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(), ["Which color do you like best?"; 3]);
}

/// The three servers behind one gateway, each started by it over stdio.
fn three_over_stdio() -> Vec<Upstream> {
    [Peer::TsV1, Peer::Python, Peer::TsV2].map(Upstream::stdio).to_vec()
}

#[tokio::test]
async fn tools_list_shows_every_upstream_under_its_prefix_in_both_eras() {
    let gateway = Gateway::start(&three_over_stdio()).await;
    let user = Arc::new(User::default());
    for (era, version) in ERAS {
        let client = connect(&gateway, era, &user).await;
        assert_eq!(client.protocol_version(), version);
        assert_eq!(tool_names(&client).await, prefixed_tools(&[Peer::TsV1, Peer::Python, Peer::TsV2]), "{era:?}");

        // What the upstream declared comes through: descriptions, input and output schemas.
        let tools = within("tools/list", client.list_all_tools()).await.unwrap();
        let greet = tools.iter().find(|t| t.name == "tsv2_greet").expect("tsv2_greet is listed");
        assert_eq!(greet.description.as_deref(), Some("Greets someone by name."));
        let greet = serde_json::to_value(greet).unwrap();
        assert_eq!(greet["inputSchema"]["required"], json!(["name"]), "{greet}");
        assert_eq!(greet["outputSchema"]["properties"]["greeting"]["type"], "string", "{greet}");
        let echo = serde_json::to_value(tools.iter().find(|t| t.name == "py_echo").expect("py_echo")).unwrap();
        assert_eq!(echo["inputSchema"]["properties"]["text"]["type"], "string", "{echo}");

        // Calls reach the right upstream under the original name, and structured content is kept.
        let greeting = call(&client, "tsv2_greet", json!({"name": "Ada"})).await;
        assert_eq!(greeting.text(), "Hello, Ada!");
        assert_eq!(greeting.structured_content, Some(json!({"greeting": "Hello, Ada!"})));
        let echoed = call(&client, "py_echo", json!({"text": "through"})).await;
        assert_eq!(echoed.structured_content, Some(json!({"echo": "through"})), "{echoed:?}");

        // A name under no upstream's prefix, or an upstream's tool without its prefix, is unknown.
        for unknown in ["greet", "tsv2_nothing", "nope_greet"] {
            let outcome = within(unknown, client.call_tool(unknown, json!({"name": "x"}))).await;
            assert!(
                matches!(&outcome, Err(ClientError::Rpc(_))) || outcome.as_ref().is_ok_and(|r| r.is_error()),
                "{unknown}: {outcome:?}"
            );
        }
        within("closing", client.close()).await;
    }
}

/// Done-when: a 2026-07-28 client answers a form that a 2025-only TypeScript SDK v1 server asked.
#[tokio::test]
async fn a_2026_client_answers_a_form_a_typescript_v1_server_asked() {
    let gateway = Gateway::start(&[Upstream::stdio(Peer::TsV1)]).await;
    let user = Arc::new(User::default());
    let client = connect(&gateway, ProtocolEra::Y2026, &user).await;
    assert_eq!(client.protocol_version(), "2026-07-28");
    ts_v1_form(&client, &user).await;
    within("closing", client.close()).await;

    // The same through a 2025-11-25 session.
    let client = connect(&gateway, ProtocolEra::Y2025, &user).await;
    ts_v1_form(&client, &user).await;
    within("closing", client.close()).await;
}

/// Done-when: a 2025 client answers a form from a Python SDK server, whether the gateway speaks
/// 2026-07-28 to it (the server's `input_required` becomes an `elicitation/create` request) or
/// 2025-11-25 (said in the configuration, or detected for the server that speaks only that: the
/// request is passed on); and a 2026-07-28 client answers the same three.
#[tokio::test]
async fn clients_of_both_eras_answer_forms_from_python_servers_of_both_eras() {
    let gateway = Gateway::start(&[
        Upstream::stdio(Peer::Python),
        Upstream::stdio(Peer::Python).named("py25").in_era("2025-11-25"),
        Upstream::stdio(Peer::PythonLegacy),
    ])
    .await;
    let user = Arc::new(User::default());
    for (era, _) in ERAS {
        let client = connect(&gateway, era, &user).await;
        let mut expected = prefixed_tools(&[Peer::Python, Peer::PythonLegacy]);
        expected.extend(Peer::Python.tools().iter().map(|t| format!("py25_{t}")));
        expected.sort();
        assert_eq!(tool_names(&client).await, expected);
        // Each server was reached in the era it was meant to be: the legacy-only one in the only
        // era it speaks, detected.
        assert_eq!(call(&client, "py_era", json!({})).await.text(), "2026-07-28");
        assert_eq!(call(&client, "py25_era", json!({})).await.text(), "2025-11-25");
        assert_eq!(call(&client, "pyold_era", json!({})).await.text(), "2025-11-25");
        for prefix in ["py", "py25", "pyold"] {
            python_form(&client, &user, prefix).await;
        }
        within("closing", client.close()).await;
    }
}

/// A 2026-07-28 upstream's `input_required` reaches a 2025 client as `elicitation/create`, and the
/// gateway retries upstream with the answer; a 2026-07-28 client answers it too.
#[tokio::test]
async fn clients_of_both_eras_answer_a_typescript_v2_form() {
    let gateway = Gateway::start(&[Upstream::stdio(Peer::TsV2)]).await;
    let user = Arc::new(User::default());
    for (era, _) in ERAS {
        let client = connect(&gateway, era, &user).await;
        ts_v2_form(&client, &user).await;
        within("closing", client.close()).await;
    }
}

/// Done-when: -32042 flows complete and retry. A 2025 client sees the error, the flow's
/// completion notification arrives, and the retried call succeeds; a 2026-07-28 client, which
/// has no such error, is asked the URL as an input request and the call then succeeds.
#[tokio::test]
async fn url_required_flows_of_a_typescript_v1_server_complete_and_retry() {
    // One gateway (hence one upstream session) per era: the server authorizes its session once
    // any flow of it is complete.
    let user = Arc::new(User::default());
    {
        let gateway = Gateway::start(&[Upstream::stdio(Peer::TsV1)]).await;
        let client = connect(&gateway, ProtocolEra::Y2025, &user).await;
        user.replying(Reply::Accept);
        let first = within("tsv1_needs_url", client.call_tool("tsv1_needs_url", json!({}))).await;
        let Err(ClientError::UrlElicitationRequired(required)) = first else {
            panic!("tsv1_needs_url should fail with -32042 first: {first:?}");
        };
        assert_eq!(required.elicitations.len(), 1);
        assert_eq!(required.elicitations[0].message, "Authorize first");
        let id = required.elicitations[0].elicitation_id.clone();
        within("the flow to complete", client.wait_for_elicitations([id.as_str()], Duration::from_secs(10)))
            .await
            .unwrap_or_else(|e| panic!("no notifications/elicitation/complete for {id}: {e}"));
        let retried =
            within("the -32042 flow", client.call_tool_with_url_elicitation("tsv1_needs_url", json!({}))).await;
        assert_eq!(retried.unwrap().text(), "needs_url: authorized");

        // URL mode asked by the upstream, and its completion notification, pass through.
        let mut events = client.notifications();
        let started = call(&client, "tsv1_ask_url", json!({})).await.text();
        let upstream_id = started.strip_prefix("accept ").unwrap_or_else(|| panic!("{started}")).to_owned();
        // The flow as the client was asked it (the gateway may name it its own way): the page of
        // the upstream's flow, and the id the completion must name.
        let id = user.url_ids.lock().unwrap().last().cloned().expect("the client was asked a URL");
        within("the flow to complete", client.wait_for_elicitations([id.as_str()], Duration::from_secs(10)))
            .await
            .unwrap_or_else(|e| panic!("no notifications/elicitation/complete for {id}: {e}"));
        let completion = within("the completion notification", async {
            loop {
                if let Ok(ServerNotification::ElicitationComplete { elicitation_id }) = events.recv().await {
                    break elicitation_id;
                }
            }
        })
        .await;
        assert_eq!(completion, id);
        let asked = user.take_asked();
        let page = format!("https://connect.example.test/flow?id={upstream_id}");
        assert!(
            asked.iter().any(|(m, url)| m == "Connect your account" && url.as_deref() == Some(page.as_str())),
            "{asked:?}"
        );
        within("closing", client.close()).await;
    }
    {
        let gateway = Gateway::start(&[Upstream::stdio(Peer::TsV1)]).await;
        let client = connect(&gateway, ProtocolEra::Y2026, &user).await;
        user.replying(Reply::Accept);
        let result = within("tsv1_needs_url", client.call_tool("tsv1_needs_url", json!({})))
            .await
            .unwrap_or_else(|e| panic!("a 2026-07-28 client gets no -32042; the flow is an input request: {e}"));
        assert_eq!(result.text(), "needs_url: authorized");
        let asked = user.take_asked();
        assert!(!asked.is_empty(), "the URL was offered to the user");
        for (message, url) in &asked {
            assert_eq!(message, "Authorize first");
            assert!(url.as_deref().is_some_and(|u| u.starts_with("https://connect.example.test/flow?id=")), "{url:?}");
        }
        within("closing", client.close()).await;
    }
    {
        // A 2026-07-28 user who declines the flow gets the call's end at once, as a tool error
        // naming the flow, without the gateway waiting for a completion that will not come
        // (it would wait 45 seconds) or asking again.
        let gateway = Gateway::start(&[Upstream::stdio(Peer::TsV1)]).await;
        let client = connect(&gateway, ProtocolEra::Y2026, &user).await;
        user.replying(Reply::Decline);
        let result = tokio::time::timeout(Duration::from_secs(30), client.call_tool("tsv1_needs_url", json!({})))
            .await
            .expect("a declined flow ends the call without waiting for the upstream")
            .unwrap_or_else(|e| panic!("a declined flow is a tool error in 2026-07-28, not {e}"));
        assert_eq!(result.is_error, Some(true), "{result:?}");
        assert!(result.text().contains("Authorize first"), "{}", result.text());
        assert_eq!(user.take_asked().len(), 1, "the user is asked once");
        within("closing", client.close()).await;
    }
}

/// Sampling and roots asked by a 2025 upstream reach the client, in both eras.
#[tokio::test]
async fn sampling_and_roots_of_a_typescript_v1_server_reach_clients_of_both_eras() {
    let gateway = Gateway::start(&[Upstream::stdio(Peer::TsV1)]).await;
    let user = Arc::new(User::default());
    for (era, _) in ERAS {
        let client = connect(&gateway, era, &user).await;
        assert_eq!(call(&client, "tsv1_ask_model", json!({})).await.text(), "rust-test-model: 4", "{era:?}");
        assert_eq!(
            call(&client, "tsv1_ask_roots", json!({})).await.text(),
            "file:///projects/one,file:///projects/two",
            "{era:?}"
        );
        // A schema outside the form subset is refused by the client, and the upstream hears
        // the error (-32602) whatever the era.
        assert_eq!(call(&client, "tsv1_bad_schema", json!({})).await.text(), "-32602", "{era:?}");
        within("closing", client.close()).await;
    }
}

/// The three servers as Streamable HTTP upstreams (`url`), in both client eras.
#[tokio::test]
async fn upstreams_over_streamable_http() {
    let (_v1, v1) = Peer::TsV1.listen().await;
    let (_v2, v2) = Peer::TsV2.listen().await;
    let (_py, py) = Peer::Python.listen().await;
    let gateway =
        Gateway::start(&[Upstream::url("tsv1", &v1), Upstream::url("tsv2", &v2), Upstream::url("py", &py)]).await;
    let user = Arc::new(User::default());
    for (era, _) in ERAS {
        let client = connect(&gateway, era, &user).await;
        assert_eq!(tool_names(&client).await, prefixed_tools(&[Peer::TsV1, Peer::Python, Peer::TsV2]), "{era:?}");
        ts_v1_form(&client, &user).await;
        python_form(&client, &user, "py").await;
        ts_v2_form(&client, &user).await;
        within("closing", client.close()).await;
    }
}

/// The gateway serving stdio, our client starting it, in both eras.
#[tokio::test]
async fn the_gateway_over_stdio() {
    let config = write_config(&three_over_stdio());
    let user = Arc::new(User::default());
    for (era, version) in ERAS {
        let client = within("connecting", client(era, &user).connect_stdio(stdio_command(&config)))
            .await
            .unwrap_or_else(|e| panic!("connecting in {era:?} to the gateway over stdio: {e}"));
        assert_eq!(client.protocol_version(), version);
        assert_eq!(tool_names(&client).await, prefixed_tools(&[Peer::TsV1, Peer::Python, Peer::TsV2]), "{era:?}");
        ts_v1_form(&client, &user).await;
        python_form(&client, &user, "py").await;
        ts_v2_form(&client, &user).await;
        within("closing", client.close()).await;
    }
}
