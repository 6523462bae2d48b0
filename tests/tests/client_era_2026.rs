//! Our client in the 2026-07-28 era against the `elicitation` and
//! `url_elicitation` examples over stdio, and the `combined` test server (the same tools in one
//! server) over Streamable HTTP: the questions come back as `input_required` results, the
//! client's handlers (the same as in a session) answer them, and the client retries until the
//! tool completes: a form (`create_project`), a confirmation asked only for large data
//! (`process_data`), and a URL flow the user completes in the browser (`protected_action`).
//! Also: `ProtocolEra::Auto` chooses the 2026-07-28 era with a server that speaks it, the
//! limits on rounds, `subscriptions/listen`, list results kept under caching hints, and the
//! `tasks` example's `deploy` run as a task (the tasks extension) over HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tests::interop::example_binary;
use tests::stdio::within;
use tokio::process::Command;
use typed_mcp::client::{
    Client, ClientBuilder, ClientError, ElicitationHandler, ElicitationModes, ElicitationRequest, ProtocolEra,
    ServerNotification, TaskStart,
};
use typed_mcp::prelude::*;
use typed_mcp::protocol::{ElicitResult, SubscriptionFilter, TaskStatus};
use typed_mcp::server::{CacheHint, CacheScope};
use typed_mcp::testing::ToolResultExt;

use crate::support::processes::{combined_server, http_server};

/// The user: fills in forms (a project named `stateless`; proceeds with large data), consents
/// to URLs, opens the example's page and presses its button (which completes the flow).
/// Records every question's message.
#[derive(Clone, Default)]
struct User {
    asked: Arc<Mutex<Vec<String>>>,
}

impl User {
    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl ElicitationHandler for User {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::ALL
    }

    async fn elicit(&self, request: ElicitationRequest) -> ElicitResult {
        self.asked.lock().unwrap().push(request.message().to_owned());
        if let Some(url) = request.as_url() {
            assert_eq!(url.domain(), Some("127.0.0.1"));
            let page = url.url.clone();
            tokio::spawn(async move {
                let status = crate::support::press_authorize(&page).await;
                assert!(status.is_success(), "{page}: {status}");
            });
            return ElicitResult::accept_url();
        }
        let Some(form) = request.as_form() else { return ElicitResult::decline() };
        let mut content = form.defaults();
        if form.fields().any(|f| f == "projectName") {
            content.insert("projectName".into(), json!("stateless"));
            content.insert("framework".into(), json!("vue"));
        } else if form.fields().any(|f| f == "confirm") {
            // The `tasks` example's `ctx.confirm`.
            content.insert("confirm".into(), json!(true));
        } else {
            content.insert("proceed".into(), json!(true));
        }
        form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
    }
}

fn client_2026(user: &User) -> ClientBuilder {
    Client::builder("client-2026-test", "1").protocol_era(ProtocolEra::Y2026).elicitation(user.clone())
}

/// The form flows, checked: each question is asked once, however many rounds.
async fn drive_forms(client: &Client, user: &User) {
    assert_eq!(client.era(), ProtocolEra::Y2026);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().name, "elicitation");

    let created = within("create_project", client.call_tool("create_project", ())).await.unwrap();
    assert_eq!(created.text(), "Created project 'stateless' with framework: vue");
    assert_eq!(user.asked(), ["Please provide the project details."]);

    let short = within("process_data", client.call_tool("process_data", json!({"data": "short"}))).await.unwrap();
    assert_eq!(short.text(), "Processed 5 characters");
    assert_eq!(user.asked().len(), 1, "small data needs no confirmation");
    let long = within("process_data", client.call_tool("process_data", json!({"data": "x".repeat(150)}))).await;
    assert_eq!(long.unwrap().text(), "Processed 150 characters");
    assert_eq!(user.asked()[1], "The data is 150 characters long. Continue?");
}

/// The URL flow, checked: the question is asked once, and the retry succeeds once the user has
/// been to the page.
async fn drive_url_flow(client: &Client, user: &User) {
    let before = user.asked().len();
    let done = within("protected_action", client.call_tool("protected_action", ())).await.unwrap();
    assert_eq!(done.text(), "Protected action completed: you are authorized.");
    let asked = user.asked();
    assert_eq!(asked.len(), before + 1, "{asked:?}");
    assert_eq!(asked[before], "Authorize the example app before using this action.");
}

#[tokio::test]
async fn elicitation_examples_in_2026_over_stdio() {
    let user = User::default();
    let mut command = Command::new(example_binary("elicitation"));
    command.env("RUST_LOG", "warn");
    let client = within("connecting", client_2026(&user).connect_stdio(command)).await.unwrap();
    drive_forms(&client, &user).await;
    within("closing", client.close()).await;

    let user = User::default();
    let mut command = Command::new(example_binary("url_elicitation"));
    command.args(["--url-port", "0"]).env("RUST_LOG", "warn");
    let client = within("connecting", client_2026(&user).connect_stdio(command)).await.unwrap();
    assert_eq!(client.server_info().name, "url_elicitation");
    drive_url_flow(&client, &user).await;
    within("closing", client.close()).await;
}

#[tokio::test]
async fn elicitation_in_2026_over_http() {
    let server = combined_server().await;
    let user = User::default();
    let client = within("connecting", client_2026(&user).connect_http(&server.url)).await.unwrap();
    drive_forms(&client, &user).await;
    drive_url_flow(&client, &user).await;
    within("closing", client.close()).await;
}

#[tokio::test]
async fn the_tasks_examples_deploy_runs_as_a_task_over_http() {
    let example = http_server(&example_binary("tasks"), &[]).await;
    let user = User::default();
    let client = within("connecting", client_2026(&user).connect_http(&example.url)).await.unwrap();
    assert!(client.server_capabilities().has_extension(typed_mcp::protocol::TASKS_EXTENSION));
    // As a task: the confirmation waits in the task, answered through `tasks/update`.
    let TaskStart::Task(task) = client.start_tool_task("deploy", json!({"service": "api"})).await.unwrap() else {
        panic!("deploy runs as a task for a client that supports tasks");
    };
    let waiting = within("the confirmation", async {
        loop {
            let task = client.get_task(&task.task_id).await.unwrap();
            if task.status == TaskStatus::InputRequired {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waiting.input_requests.unwrap().contains_key("deploy"), "the question keeps the key the tool gave it");
    client.cancel_task(&task.task_id).await.unwrap();
    assert_eq!(client.get_task(&task.task_id).await.unwrap().status, TaskStatus::Cancelled);
    assert!(user.asked().is_empty(), "nobody was asked: the raw requests leave the answering to the caller");
    // Followed by the client: polled, asked, updated, completed.
    let deployed = within("deploy", client.call_tool_as_task("deploy", json!({"service": "web"}))).await.unwrap();
    assert_eq!(deployed.text(), "Deployed web to production.");
    assert_eq!(user.asked(), ["web is built. Deploy it to production?"]);
    // Without the extension, the same tool asks in an ordinary multi round-trip call.
    let plain = within("deploy", client.call_tool("deploy", json!({"service": "db"}))).await.unwrap();
    assert_eq!(plain.text(), "Deployed db to production.");
    within("closing", client.close()).await;
}

#[tokio::test]
async fn auto_chooses_the_2026_era_when_the_server_speaks_it() {
    let example = combined_server().await;
    let user = User::default();
    let client = Client::builder("auto-test", "1")
        .protocol_era(ProtocolEra::Auto)
        .elicitation(user.clone())
        .connect_http(&example.url)
        .await
        .unwrap();
    assert_eq!(client.era(), ProtocolEra::Y2026);
    let created = client.call_tool("create_project", ()).await.unwrap();
    assert_eq!(created.text(), "Created project 'stateless' with framework: vue");
    client.close().await;
}

#[derive(Deserialize, schemars::JsonSchema, Elicit)]
struct Step {
    /// The step's answer.
    value: String,
}

/// Asks `n` questions one after the other (a round each in the 2026-07-28 era).
#[tool]
async fn many_steps(ctx: Context, n: u32) -> Result<String, String> {
    let mut answers = Vec::new();
    for i in 0..n {
        match ctx.elicit::<Step>(format!("Step {i}?")).await {
            Ok(Elicitation::Accept(s)) => answers.push(s.value),
            Ok(_) => return Err(format!("step {i} was not answered")),
            Err(e) => return Err(format!("step {i}: {e}")),
        }
    }
    Ok(answers.join(","))
}

#[tokio::test]
async fn rounds_are_bounded_and_timeouts_apply_to_the_whole_call() {
    let server = Server::builder("steps", "1").tools(tools![many_steps]).build().unwrap();
    let answering = typed_mcp::client::elicitation_fn(ElicitationModes::FORM, |request| async move {
        let n = request.message().trim_start_matches("Step ").trim_end_matches('?').to_owned();
        ElicitResult::accept(json!({"value": n}).as_object().unwrap().clone())
    });
    let client = Client::builder("rounds", "1")
        .protocol_era(ProtocolEra::Y2026)
        .max_input_rounds(3)
        .elicitation(answering)
        .connect_in_process(&server)
        .await
        .unwrap();
    assert_eq!(client.call_tool("many_steps", json!({"n": 3})).await.unwrap().text(), "0,1,2");
    assert_eq!(client.call_tool("many_steps", json!({"n": 4})).await, Err(ClientError::TooManyRounds(3)));

    // A user who never answers: the call's timeout covers the rounds and the answering.
    let slow = typed_mcp::client::elicitation_fn(ElicitationModes::FORM, |_| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        ElicitResult::decline()
    });
    let client = Client::builder("slow", "1")
        .protocol_era(ProtocolEra::Y2026)
        .elicitation(slow)
        .connect_in_process(&server)
        .await
        .unwrap();
    let timed = client.tool("many_steps").arguments(json!({"n": 1})).timeout(Duration::from_millis(300)).await;
    assert!(matches!(timed, Err(ClientError::Timeout { .. })), "{timed:?}");
    let token = typed_mcp::client::CancellationToken::new();
    let call = client.tool("many_steps").arguments(json!({"n": 1})).cancel_on(token.clone());
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    };
    let (cancelled, ()) = tokio::join!(call.send(), cancel);
    assert_eq!(cancelled, Err(ClientError::Cancelled));
}

/// Adds two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A server whose tool list changes, with list results fresh for a minute.
fn changing_server() -> Server {
    Server::builder("changing", "1")
        .tools(tools![many_steps])
        .dynamic_tools()
        .cache_hint("tools/list", CacheHint { ttl_ms: 60_000, scope: CacheScope::Private })
        .build()
        .unwrap()
}

async fn tool_names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect()
}

/// The list is kept as the hints allow, `subscriptions/listen` brings the change, and the
/// change drops what was kept.
async fn listen_and_cache(server: &Server, client: &Client) {
    assert_eq!(tool_names(client).await, ["many_steps"]);
    let subscription = within(
        "the acknowledgement",
        client.listen(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }),
    )
    .await
    .unwrap();
    assert_eq!(subscription.acknowledged().tools_list_changed, Some(true));
    let mut events = client.notifications();

    for tool in tools![add] {
        server.add_tool(tool).await.unwrap();
    }
    let changed = within("the change", async {
        loop {
            if let Ok(ServerNotification::ToolListChanged) = events.recv().await {
                return;
            }
        }
    });
    changed.await;
    // The cache is dropped by the same notification, on the client's own subscriber: wait
    // until the list shows the change (a stale cache would keep it hidden for a minute).
    within("the list to change", async {
        while tool_names(client).await.len() != 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;

    // Kept: a change the client was not told of stays unseen until the cache is cleared.
    subscription.end().await;
    within("the subscription to end on the server", async {
        while server.subscription_count() != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    server.remove_tool("add").await.unwrap();
    assert_eq!(tool_names(client).await.len(), 2, "served from the cache");
    client.clear_cache();
    assert_eq!(tool_names(client).await, ["many_steps"]);
}

#[tokio::test]
async fn listen_and_list_caching_in_process() {
    let server = changing_server();
    let client =
        Client::builder("listen", "1").protocol_era(ProtocolEra::Y2026).connect_in_process(&server).await.unwrap();
    listen_and_cache(&server, &client).await;
    within("closing", client.close()).await;
}

#[tokio::test]
async fn listen_and_list_caching_over_http() {
    let server = changing_server();
    let http = server.streamable_http(typed_mcp::transport::http::HttpConfig::default());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        http.serve(listener, async {
            let _ = stopped.await;
        })
        .await
    });
    let client = Client::builder("listen", "1").protocol_era(ProtocolEra::Y2026).connect_http(&url).await.unwrap();
    // Ending the subscription closes its stream: the server lets it go.
    listen_and_cache(&server, &client).await;
    within("closing", client.close()).await;
    let _ = stop.send(());
}

#[tokio::test]
async fn listen_needs_the_2026_era() {
    let server = changing_server();
    let client = Client::builder("listen", "1").connect_in_process(&server).await.unwrap();
    let refused = client.listen(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await;
    assert!(matches!(refused, Err(ClientError::WrongEra { .. })), "{refused:?}");
}

/// Asks the client's model, its roots and the user, all at once.
#[tool]
async fn everything_at_once(ctx: Context) -> Result<String, String> {
    let params = typed_mcp::protocol::CreateMessageParams::new(
        vec![typed_mcp::protocol::SamplingMessage::user("Name a colour")],
        10,
    );
    let (sampled, roots, confirmed) = tokio::join!(ctx.sample(params), ctx.roots(), ctx.confirm("Go on?"));
    let sampled = sampled.map_err(|e| format!("{e:?}"))?;
    let roots = roots.map_err(|e| format!("{e:?}"))?;
    let confirmed = confirmed.map_err(|e| e.to_string())?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("{}: {}; {}; {confirmed}", sampled.model, sampled.text().unwrap_or_default(), uris.join(",")))
}

#[tokio::test]
async fn sampling_roots_and_a_form_are_answered_in_one_round_concurrently() {
    use typed_mcp::protocol::{CreateMessageResult, Root, SamplingContent, SamplingMessageContent};

    let server = Server::builder("all", "1").tools(tools![everything_at_once]).build().unwrap();
    // Each handler waits until the other two have started: answered one after the other, the
    // round would never finish.
    let started = Arc::new(tokio::sync::Barrier::new(3));
    let (for_model, for_user, for_roots) = (started.clone(), started.clone(), started);
    let client = Client::builder("all", "1")
        .protocol_era(ProtocolEra::Y2026)
        .sampling(typed_mcp::client::sampling_fn(move |_| {
            let started = for_model.clone();
            async move {
                started.wait().await;
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: SamplingMessageContent::Single(SamplingContent::text("teal")),
                    model: "test-model".into(),
                    stop_reason: None,
                    meta: None,
                })
            }
        }))
        .elicitation(typed_mcp::client::elicitation_fn(ElicitationModes::FORM, move |_| {
            let started = for_user.clone();
            async move {
                started.wait().await;
                ElicitResult::accept(json!({"confirm": true}).as_object().unwrap().clone())
            }
        }))
        .roots(BarrierRoots(for_roots))
        .connect_in_process(&server)
        .await
        .unwrap();
    let result = within("the call", client.call_tool("everything_at_once", ())).await.unwrap();
    assert_eq!(result.text(), "test-model: teal; file:///work; true");
    client.close().await;

    /// Roots that wait for the other handlers to start.
    struct BarrierRoots(Arc<tokio::sync::Barrier>);
    impl typed_mcp::client::RootsHandler for BarrierRoots {
        async fn list_roots(&self) -> Result<Vec<Root>, ErrorObject> {
            self.0.wait().await;
            Ok(vec![Root { uri: "file:///work".into(), name: None, meta: None }])
        }
    }
}

/// A 2026-07-28 server that sends an `Mcp-Session-Id` anyway, recording what it is sent.
#[tokio::test]
async fn a_2026_connection_keeps_no_session_and_mirrors_the_body_in_headers() {
    use axum::http::{HeaderMap, Method, StatusCode};

    type Seen = Arc<Mutex<Vec<(String, Vec<(String, String)>)>>>;
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::any(move |method: Method, headers: HeaderMap, body: String| {
            let record = record.clone();
            async move {
                let mcp: Vec<(String, String)> = headers
                    .iter()
                    .filter(|(n, _)| n.as_str().starts_with("mcp-"))
                    .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("?").to_owned()))
                    .collect();
                record.lock().unwrap().push((method.to_string(), mcp));
                if method != Method::POST {
                    return (StatusCode::OK, [("mcp-session-id", "bogus")], String::new());
                }
                let request: serde_json::Value = serde_json::from_str(&body).unwrap();
                let result = match request["method"].as_str() {
                    Some("server/discover") => {
                        json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                        "serverInfo": {"name": "mock", "version": "1"}})
                    }
                    Some("tools/list") => json!({"resultType": "complete", "tools": [{"name": "t", "inputSchema": {
                        "type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}}]}),
                    _ => json!({"content": []}),
                };
                let response = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
                (StatusCode::OK, [("mcp-session-id", "bogus")], response.to_string())
            }
        }),
    );
    let (url, _stop) = crate::support::http::serve_router(app).await;
    let client = Client::builder("mock", "1").protocol_era(ProtocolEra::Y2026).connect_http(&url).await.unwrap();
    assert_eq!(client.server_info().name, "mock");
    client.call_tool("t", json!({"n": 3})).await.unwrap();
    client.close().await;

    let seen = seen.lock().unwrap().clone();
    let methods: Vec<&str> = seen.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(methods, ["POST", "POST", "POST"], "no GET stream, no DELETE: {seen:?}");
    let header = |i: usize, name: &str| seen[i].1.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    for i in 0..3 {
        assert_eq!(header(i, "mcp-session-id"), None, "{seen:?}");
        assert_eq!(header(i, "mcp-protocol-version").as_deref(), Some("2026-07-28"), "{seen:?}");
    }
    assert_eq!(header(0, "mcp-method").as_deref(), Some("server/discover"));
    assert_eq!(header(1, "mcp-method").as_deref(), Some("tools/list"), "the call lists the tools first");
    assert_eq!(header(2, "mcp-method").as_deref(), Some("tools/call"));
    assert_eq!(header(2, "mcp-name").as_deref(), Some("t"));
    assert_eq!(header(2, "mcp-param-n").as_deref(), Some("3"));
}

/// Logs two lines, one at debug and one at warning.
#[tool]
async fn chatty(ctx: Context) -> &'static str {
    ctx.debug("a detail").await;
    ctx.warning("a concern").await;
    "done"
}

/// `set_log_level` in the 2026-07-28 era (which has no `logging/setLevel`) asks for log
/// messages in each request's `_meta`: before it, a call brings none; after it, the messages at
/// that level and above come with the call.
#[tokio::test]
async fn set_log_level_asks_each_request_for_log_messages() {
    let server = Server::builder("chatty", "1").tools(tools![chatty]).build().unwrap();
    let client =
        Client::builder("logs", "1").protocol_era(ProtocolEra::Y2026).connect_in_process(&server).await.unwrap();
    let mut events = client.notifications();
    let logged = |events: &mut tokio::sync::broadcast::Receiver<ServerNotification>| {
        let mut lines = Vec::new();
        while let Ok(event) = events.try_recv() {
            if let ServerNotification::Log(params) = event {
                lines.push((params.level, params.data));
            }
        }
        lines
    };
    assert_eq!(client.call_tool("chatty", json!({})).await.unwrap().text(), "done");
    assert_eq!(logged(&mut events), vec![], "no level asked for: no log messages");

    client.set_log_level(LoggingLevel::Warning).await.unwrap();
    assert_eq!(client.call_tool("chatty", json!({})).await.unwrap().text(), "done");
    assert_eq!(logged(&mut events), vec![(LoggingLevel::Warning, json!("a concern"))]);

    client.set_log_level(LoggingLevel::Debug).await.unwrap();
    assert_eq!(client.call_tool("chatty", json!({})).await.unwrap().text(), "done");
    assert_eq!(
        logged(&mut events),
        vec![(LoggingLevel::Debug, json!("a detail")), (LoggingLevel::Warning, json!("a concern"))]
    );
    within("closing", client.close()).await;
}

/// A form of one string field `field`.
fn one_field_form(message: &str, field: &str) -> typed_mcp::protocol::ElicitRequestParams {
    let schema = json!({"type": "object", "properties": {field: {"type": "string"}}});
    typed_mcp::protocol::ElicitRequestParams::Form {
        message: message.into(),
        requested_schema: schema.as_object().cloned().unwrap_or_default(),
    }
}

/// Asks for a name under the key `user_name` and a city under its place in call order, both
/// in one round.
#[tool]
async fn named_questions(ctx: Context) -> Result<String, String> {
    let name = typed_mcp::multi_round::keyed("user_name", ctx.elicit_raw(one_field_form("Your name?", "name"), None));
    let city = ctx.elicit_raw(one_field_form("Your city?", "city"), None);
    let (name, city) = tokio::join!(name, city);
    let value = |r: Result<ElicitResult, typed_mcp::ElicitError>, field: &str| {
        r.map_err(|e| e.to_string()).map(|r| {
            r.content.and_then(|c| c.get(field).and_then(|v| v.as_str().map(str::to_owned))).unwrap_or_default()
        })
    };
    Ok(format!("{} from {}", value(name, "name")?, value(city, "city")?))
}

/// `multi_round::keyed` names a question's key in the `input_required` result, and the
/// client's handler reads it with `client::input_key()`; a question asked without it keeps its
/// place in call order. In a session the handler sees no key.
#[tokio::test]
async fn a_question_keyed_by_the_handler_reaches_the_clients_handler_with_its_key() {
    let server = Server::builder("keys", "1").tools(tools![named_questions]).build().unwrap();
    for (era, expected) in [
        (
            ProtocolEra::Y2026,
            vec![
                ("Your city?".to_owned(), Some("input-0".to_owned())),
                ("Your name?".to_owned(), Some("user_name".to_owned())),
            ],
        ),
        (ProtocolEra::Y2025, vec![("Your city?".to_owned(), None), ("Your name?".to_owned(), None)]),
    ] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let handler = typed_mcp::client::elicitation_fn(ElicitationModes::FORM, move |request: ElicitationRequest| {
            record.lock().unwrap().push((request.message().to_owned(), typed_mcp::client::input_key()));
            let field = if request.message() == "Your name?" { "name" } else { "city" };
            let value = if field == "name" { "Ada" } else { "London" };
            let answer = request.as_form().map(|form| {
                let mut content = form.defaults();
                content.insert(field.into(), json!(value));
                form.accept(content).unwrap_or_else(|_| ElicitResult::cancel())
            });
            async move { answer.unwrap_or_else(ElicitResult::decline) }
        });
        let client = Client::builder("keys", "1")
            .protocol_era(era)
            .elicitation(handler)
            .connect_in_process(&server)
            .await
            .unwrap();
        let result = within("the call", client.call_tool("named_questions", json!({}))).await.unwrap();
        assert_eq!(result.text(), "Ada from London", "{era:?}");
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        assert_eq!(seen, expected, "{era:?}");
        within("closing", client.close()).await;
    }
}
