//! Our client against our server, in process (the in-memory transport): the handshake and
//! declared capabilities, tools, resources, prompts, completion, logging, progress, list
//! changes, cancellation, elicitation (form and URL, scripted, typed, by closure), sampling and
//! roots, and closing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tests::stdio::within;
use tokio::sync::{Notify, mpsc};
use typed_mcp::client::{
    CancellationToken, Client, ClientError, ElicitationModes, ElicitationRequest, ServerNotification, elicitation_fn,
    sampling_fn, typed_elicitation,
};
use typed_mcp::prelude::*;
use typed_mcp::prompt::PromptCall;
use typed_mcp::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitResult, Root, SamplingContent, SamplingMessage,
    SamplingMessageContent,
};
use typed_mcp::resource::ResourceCall;
use typed_mcp::server::{Completer, SessionKey, UrlElicitations};
use typed_mcp::testing::{self, ElicitationScript, ToolResultExt};

#[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct Profile {
    /// Your name.
    #[schemars(length(min = 1))]
    name: String,
    /// Your age.
    #[schemars(extend("default" = 30))]
    age: i64,
}

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Asks for a profile.
#[tool]
async fn ask_profile(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<Profile>("Who are you?").await {
        Ok(Elicitation::Accept(p)) => Ok(format!("{} is {}", p.name, p.age)),
        Ok(Elicitation::Decline) => Ok("declined".into()),
        Ok(Elicitation::Cancel) => Ok("cancelled".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Sends the user to a page.
#[tool]
async fn ask_url(ctx: Context) -> Result<String, String> {
    match ctx.elicit_url("https://auth.example.test/flow?id={elicitationId}", "Sign in").await {
        Ok(e) => Ok(format!("{:?}", e.action())),
        Err(e) => Err(e.to_string()),
    }
}

/// The sessions that completed the sign-in flow.
#[derive(Default)]
struct Authorized(Mutex<Vec<SessionKey>>);

/// Works once the session signed in (error -32042 until then).
#[tool]
fn protected(ctx: Context, authorized: State<Authorized>) -> Result<String, UrlElicitationRequired> {
    if authorized.0.0.lock().unwrap().contains(&ctx.session_key()) {
        return Ok("protected work done".into());
    }
    let id = ctx.new_url_elicitation_id();
    Err(UrlElicitationRequired::single(&id, format!("https://auth.example.test/flow?id={id}"), "Sign in first"))
}

/// Reports progress three times.
#[tool]
async fn steps(ctx: Context) -> String {
    for i in 1..=3 {
        let _ = ctx.progress(f64::from(i), Some(3.0), Some(&format!("step {i}"))).await;
    }
    "three steps".into()
}

/// Logs at two levels.
#[tool]
async fn chatty(ctx: Context) -> String {
    ctx.debug("a detail").await;
    ctx.warning(json!({"disk": "low"})).await;
    "logged".into()
}

/// Tells the test when it starts and when its future is dropped.
struct Probe {
    started: Notify,
    dropped: mpsc::UnboundedSender<()>,
}

struct DropSignal(mpsc::UnboundedSender<()>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Never finishes on its own.
#[tool]
async fn forever(probe: State<Probe>) -> String {
    let _signal = DropSignal(probe.dropped.clone());
    probe.started.notify_one();
    std::future::pending::<()>().await;
    "unreachable".into()
}

/// Asks the client's model.
#[tool]
async fn ask_model(ctx: Context) -> Result<String, String> {
    let params = CreateMessageParams::new(vec![SamplingMessage::user("What is 2+2?")], 16);
    let result = ctx.sample(params).await.map_err(|e| e.to_string())?;
    Ok(format!("{} said {}", result.model, result.text().unwrap_or_default()))
}

/// Lists the client's roots.
#[tool]
async fn list_roots(ctx: Context) -> Result<String, String> {
    let roots = ctx.roots().await.map_err(|e| e.to_string())?;
    Ok(roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(","))
}

struct Fixture {
    server: Server,
    dropped: mpsc::UnboundedReceiver<()>,
    probe: Arc<Probe>,
}

fn fixture() -> Fixture {
    let (tx, dropped) = mpsc::unbounded_channel();
    let probe = Arc::new(Probe { started: Notify::new(), dropped: tx });
    let readme =
        ResourceDef::new("test://readme", "readme", |_: ResourceCall| async { Ok::<_, ErrorObject>("# Readme") })
            .mime_type("text/markdown");
    let item = ResourceDef::template("test://items/{id}", "item", |call: ResourceCall| async move {
        Ok::<_, ErrorObject>(format!("item {}", call.variables["id"]))
    })
    .complete("id", Completer::values(["alpha", "beta", "albatross"]));
    let greet = PromptDef::new("greet", |call: PromptCall| async move {
        let name = call.arguments.get("name").cloned().unwrap_or_default();
        Ok::<_, ErrorObject>(vec![PromptMessage::user(format!("Say hello to {name}."))])
    })
    .description("Greets someone.")
    .argument("name", Some("Who to greet."), true)
    .complete("name", Completer::values(["Ada", "Alan", "Grace"]));
    let server = Server::builder("in-process", "1.0.0")
        .instructions("Use the tools.")
        .tools(tools![add, ask_profile, ask_url, protected, steps, chatty, forever, ask_model, list_roots])
        .resource(readme)
        .resource(item)
        .resource_subscriptions()
        .prompt(greet)
        .dynamic_tools()
        .state(Authorized::default())
        .state_arc(probe.clone())
        .build()
        .expect("a valid server");
    Fixture { server, dropped, probe }
}

#[tokio::test]
async fn handshake_declares_what_the_handlers_support() {
    let f = fixture();
    let plain = testing::connect(&f.server).await;
    assert_eq!(plain.server_info().name, "in-process");
    assert_eq!(plain.protocol_version(), "2025-11-25");
    assert_eq!(plain.instructions(), Some("Use the tools."));
    assert!(plain.server_capabilities().tools.is_some());
    assert_eq!(serde_json::to_value(plain.capabilities()).unwrap(), json!({}));
    plain.ping().await.unwrap();

    let form_only = testing::client()
        .elicitation(ElicitationScript::new().modes(ElicitationModes::FORM))
        .connect_in_process(&f.server)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(form_only.capabilities()).unwrap(), json!({"elicitation": {"form": {}}}));

    let everything = testing::client()
        .elicitation(ElicitationScript::new())
        .sampling(sampling_fn(|_| async { Err(ErrorObject::internal("unused")) }))
        .roots(vec![Root { uri: "file:///tmp".into(), name: None, meta: None }])
        .connect_in_process(&f.server)
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(everything.capabilities()).unwrap(),
        json!({"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}})
    );
}

#[tokio::test]
async fn calls_tools_and_lists_them() {
    let f = fixture();
    let client = testing::connect(&f.server).await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"add".to_owned()) && names.contains(&"ask_profile".to_owned()), "{names:?}");
    let result = client.call_tool("add", json!({"a": 2, "b": 40})).await.unwrap();
    assert_eq!(result.text(), "42");
    assert!(!result.is_error());
    // The same call's result as the server sent it, unparsed.
    let raw = client.tool("add").arguments(json!({"a": 2, "b": 40})).send_raw().await.unwrap();
    let parsed: typed_mcp::protocol::CallToolResult = serde_json::from_str(raw.get()).unwrap();
    assert_eq!(parsed, result);
    // A tool's own failure is a result, not an error.
    let bad = client.call_tool("add", json!({"a": "two"})).await;
    match bad {
        Ok(r) => assert!(r.is_error(), "{r:?}"),
        Err(e) => assert_eq!(e.code(), Some(-32602), "{e}"),
    }
    let unknown = client.call_tool("nope", ()).await.unwrap_err();
    assert_eq!(unknown.code(), Some(-32602), "{unknown}");
    assert!(matches!(client.call_tool("add", json!([1, 2])).await, Err(ClientError::Codec(_))));
}

#[tokio::test]
async fn resources_prompts_and_completion() {
    let f = fixture();
    let client = testing::connect(&f.server).await;
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["test://readme"]);
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "test://items/{id}");
    let read = client.read_resource("test://items/7").await.unwrap();
    assert_eq!(serde_json::to_value(&read.contents[0]).unwrap()["text"], "item 7");
    let missing = client.read_resource("test://nothing").await.unwrap_err();
    assert_eq!(missing.code(), Some(-32002), "{missing}");

    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greet");
    let prompt = client.get_prompt("greet", &[("name", "Ada")]).await.unwrap();
    assert_eq!(prompt.messages[0].content.as_text(), Some("Say hello to Ada."));

    let names = client.complete_prompt_argument("greet", "name", "a").await.unwrap();
    assert_eq!(names.values, ["Ada", "Alan"]);
    let ids = client.complete_resource_argument("test://items/{id}", "id", "al").await.unwrap();
    assert_eq!(ids.values, ["alpha", "albatross"]);

    let mut events = client.notifications();
    client.subscribe_resource("test://readme").await.unwrap();
    f.server.notify_resource_updated("test://readme").await;
    let event = within("the update", events.recv()).await.unwrap();
    assert_eq!(event, ServerNotification::ResourceUpdated { uri: "test://readme".into() });
    client.unsubscribe_resource("test://readme").await.unwrap();
}

#[tokio::test]
async fn progress_logs_and_list_changes_reach_the_application() {
    let f = fixture();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_by_callback = seen.clone();
    let client = testing::client()
        .on_notification(move |n| seen_by_callback.lock().unwrap().push(n.clone()))
        .connect_in_process(&f.server)
        .await
        .unwrap();
    let mut events = client.notifications();

    let (tx, mut progress) = mpsc::unbounded_channel();
    let result = client.tool("steps").on_progress(move |p| drop(tx.send(p))).await.unwrap();
    assert_eq!(result.text(), "three steps");
    let mut reported = Vec::new();
    while let Ok(p) = progress.try_recv() {
        reported.push((p.progress, p.total, p.message));
    }
    assert_eq!(
        reported,
        [
            (1.0, Some(3.0), Some("step 1".into())),
            (2.0, Some(3.0), Some("step 2".into())),
            (3.0, Some(3.0), Some("step 3".into()))
        ]
    );

    client.set_log_level(LoggingLevel::Debug).await.unwrap();
    client.call_tool("chatty", ()).await.unwrap();
    client.set_log_level(LoggingLevel::Warning).await.unwrap();
    client.call_tool("chatty", ()).await.unwrap();
    let mut logs = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ServerNotification::Log(l) = event {
            logs.push((l.level, l.data));
        }
    }
    assert_eq!(
        logs,
        [
            (LoggingLevel::Debug, json!("a detail")),
            (LoggingLevel::Warning, json!({"disk": "low"})),
            (LoggingLevel::Warning, json!({"disk": "low"}))
        ]
    );

    let schema = json!({"type": "object"}).as_object().unwrap().clone();
    let late = ToolDef::new("late", schema, |_| async { Ok::<_, ErrorObject>(CallToolResult::success(vec![])) });
    f.server.add_tool(late).await.unwrap();
    loop {
        if within("tools/list_changed", events.recv()).await.unwrap() == ServerNotification::ToolListChanged {
            break;
        }
    }
    assert!(client.list_all_tools().await.unwrap().iter().any(|t| t.name == "late"));
    let seen = seen.lock().unwrap();
    assert!(seen.iter().any(|n| matches!(n, ServerNotification::Progress(_))));
    assert!(seen.contains(&ServerNotification::ToolListChanged));
}

#[tokio::test]
async fn dropping_or_cancelling_a_call_cancels_it_on_the_server() {
    let mut f = fixture();
    let client = testing::connect(&f.server).await;

    // Dropped: the future is abandoned after the tool has started.
    let started = f.probe.started.notified();
    let call = client.call_tool("forever", ());
    tokio::select! {
        _ = call => panic!("`forever` finished"),
        () = started => {}
    }
    within("the server dropping the tool", f.dropped.recv()).await;

    // Cancelled with a token.
    let token = CancellationToken::new();
    let started = f.probe.started.notified();
    let call = tokio::spawn({
        let client = client.clone();
        let token = token.clone();
        async move { client.tool("forever").cancel_on(token).await }
    });
    within("the tool to start", started).await;
    token.cancel();
    assert_eq!(within("the call to end", call).await.unwrap(), Err(ClientError::Cancelled));
    within("the server dropping the tool", f.dropped.recv()).await;

    // A timeout withdraws the request too.
    let timed_out = client.tool("forever").timeout(Duration::from_millis(200)).await;
    assert!(matches!(timed_out, Err(ClientError::Timeout { .. })), "{timed_out:?}");
    within("the server dropping the tool", f.dropped.recv()).await;
    client.call_tool("add", json!({"a": 1, "b": 1})).await.unwrap();
}

#[tokio::test]
async fn scripted_elicitation_answers() {
    let f = fixture();
    let script = ElicitationScript::new()
        .accept(json!({"name": "Ada"}))
        .accept_value(&Profile { name: "Alan".into(), age: 41 })
        .decline()
        .cancel()
        // Content breaking the schema, answered on purpose (`accept` would fail the test).
        .answer_with(|_| ElicitResult::accept(json!({"name": ""}).as_object().cloned().unwrap_or_default()))
        .answer_with(|request| {
            let form = request.as_form().expect("a form");
            form.typed::<Profile>()
                .expect("the Profile form")
                .accept(&Profile { name: "Grace".into(), age: 85 })
                .unwrap()
        });
    let client = testing::connect_with(&f.server, &script).await;
    let mut texts = Vec::new();
    for _ in 0..6 {
        let result = client.call_tool("ask_profile", ()).await.unwrap();
        texts.push((result.is_error(), result.text()));
    }
    assert_eq!(texts[0], (false, "Ada is 30".to_owned()), "the default age is filled in");
    assert_eq!(texts[1], (false, "Alan is 41".to_owned()));
    assert_eq!(texts[2], (false, "declined".to_owned()));
    assert_eq!(texts[3], (false, "cancelled".to_owned()));
    // Content breaking the schema never reaches the server as an answer: it gets an error.
    assert!(texts[4].0 && texts[4].1.contains("name"), "{:?}", texts[4]);
    assert_eq!(texts[5], (false, "Grace is 85".to_owned()));
    let requests = script.requests();
    assert_eq!(requests.len(), 6);
    assert_eq!(requests[0].message(), "Who are you?");
    let form = requests[0].as_form().unwrap();
    assert!(form.is_form_of::<Profile>());
    assert_eq!(form.fields().collect::<Vec<_>>(), ["name", "age"]);
    assert_eq!(form.typed::<Profile>().unwrap().from_defaults(), None, "`name` has no default");
    script.assert_done();

    // No answer left: declined, and reported.
    let result = client.call_tool("ask_profile", ()).await.unwrap();
    assert_eq!(result.text(), "declined");
    let unexpected = std::panic::catch_unwind(|| script.assert_done());
    assert!(unexpected.is_err());
}

#[tokio::test]
async fn typed_and_closure_handlers() {
    let f = fixture();
    let typed = testing::client()
        .elicitation(typed_elicitation(|message: String| async move {
            assert_eq!(message, "Who are you?");
            Elicitation::Accept(Profile { name: "Typed".into(), age: 7 })
        }))
        .connect_in_process(&f.server)
        .await
        .unwrap();
    assert_eq!(typed.call_tool("ask_profile", ()).await.unwrap().text(), "Typed is 7");
    // URL mode was not declared: the server does not even ask.
    assert!(typed.call_tool("ask_url", ()).await.unwrap().is_error());

    let closure = testing::client()
        .elicitation(elicitation_fn(ElicitationModes::ALL, |request| async move {
            match request {
                ElicitationRequest::Url(url) => {
                    assert_eq!(url.domain(), Some("auth.example.test"));
                    assert!(url.url.ends_with(&url.elicitation_id));
                    ElicitResult::accept_url()
                }
                ElicitationRequest::Form(form) => form.accept_defaults().unwrap_or_else(|_| ElicitResult::decline()),
                _ => ElicitResult::cancel(),
            }
        }))
        .connect_in_process(&f.server)
        .await
        .unwrap();
    assert_eq!(closure.call_tool("ask_url", ()).await.unwrap().text(), "Accept");
    assert_eq!(closure.call_tool("ask_profile", ()).await.unwrap().text(), "declined");
}

/// A URL handler standing for the user: visits the page, which completes the flow on the server.
fn signs_in(flows: UrlElicitations, authorized: Arc<Authorized>) -> impl typed_mcp::client::ElicitationHandler {
    elicitation_fn(ElicitationModes::URL, move |request| {
        let flows = flows.clone();
        let authorized = authorized.clone();
        async move {
            let Some(url) = request.as_url() else { return ElicitResult::decline() };
            let id = url.elicitation_id.clone();
            // The user finishes in the browser a moment after consenting.
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let done = flows.complete(&id).await.expect("a pending flow");
                authorized.0.lock().unwrap().push(done.session);
            });
            ElicitResult::accept_url()
        }
    })
}

#[tokio::test]
async fn url_elicitation_required_then_complete_then_retry() {
    let authorized = Arc::new(Authorized::default());
    let f = fixture();
    let server =
        Server::builder("url", "1.0.0").tools(tools![protected]).state_arc(authorized.clone()).build().unwrap();
    drop(f);
    let client = testing::client()
        .elicitation(signs_in(server.url_elicitations().clone(), authorized.clone()))
        .connect_in_process(&server)
        .await
        .unwrap();

    // By hand: the typed error, the flow, the completion, the retry.
    let Err(ClientError::UrlElicitationRequired(required)) = client.call_tool("protected", ()).await else {
        panic!("expected -32042");
    };
    assert_eq!(required.elicitations.len(), 1);
    let id = required.elicitations[0].elicitation_id.clone();
    assert!(!client.elicitation_completed(&id));
    assert!(client.complete_url_elicitations(&required).await.unwrap());
    assert!(client.elicitation_completed(&id));
    assert_eq!(client.call_tool("protected", ()).await.unwrap().text(), "protected work done");

    // In one call, on a fresh session.
    let other = testing::client()
        .elicitation(signs_in(server.url_elicitations().clone(), authorized.clone()))
        .connect_in_process(&server)
        .await
        .unwrap();
    let mut events = other.notifications();
    let result = other.call_tool_with_url_elicitation("protected", ()).await.unwrap();
    assert_eq!(result.text(), "protected work done");
    assert!(matches!(events.try_recv(), Ok(ServerNotification::ElicitationComplete { .. })));

    // A client that will not open URLs gets the error back.
    let refusing =
        testing::client().elicitation(ElicitationScript::new().decline()).connect_in_process(&server).await.unwrap();
    let err = refusing.call_tool_with_url_elicitation("protected", ()).await.unwrap_err();
    assert!(matches!(err, ClientError::UrlElicitationRequired(_)), "{err}");

    // Waiting for an id that never completes times out.
    let waited = client.wait_for_elicitations(["never"], Duration::from_millis(50)).await;
    assert!(matches!(waited, Err(ClientError::Timeout { .. })), "{waited:?}");
}

#[tokio::test]
async fn sampling_and_roots_handlers() {
    let f = fixture();
    let client = testing::client()
        .sampling(sampling_fn(|params: CreateMessageParams| async move {
            let asked = params.messages[0].content.blocks()[0].as_text().unwrap_or_default().to_owned();
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingMessageContent::Single(SamplingContent::text(format!("4 (to {asked:?})"))),
                model: "test-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        }))
        .roots(vec![
            Root { uri: "file:///work/a".into(), name: Some("a".into()), meta: None },
            Root { uri: "file:///work/b".into(), name: None, meta: None },
        ])
        .connect_in_process(&f.server)
        .await
        .unwrap();
    assert_eq!(client.call_tool("ask_model", ()).await.unwrap().text(), "test-model said 4 (to \"What is 2+2?\")");
    assert_eq!(client.call_tool("list_roots", ()).await.unwrap().text(), "file:///work/a,file:///work/b");
    client.notify_roots_list_changed().await.unwrap();

    // Without handlers the server does not ask.
    let plain = testing::connect(&f.server).await;
    assert!(plain.call_tool("ask_model", ()).await.unwrap().is_error());
    assert!(plain.call_tool("list_roots", ()).await.unwrap().is_error());
}

#[tokio::test]
async fn closing_fails_waiting_calls_and_later_ones() {
    let f = fixture();
    let client = testing::connect(&f.server).await;
    let started = f.probe.started.notified();
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("forever", ()).await }
    });
    within("the tool to start", started).await;
    within("closing", client.close()).await;
    assert_eq!(within("the waiting call", waiting).await.unwrap(), Err(ClientError::Closed));
    assert!(client.is_closed());
    within("closed()", client.closed()).await;
    assert_eq!(client.call_tool("add", json!({"a": 1, "b": 2})).await, Err(ClientError::Closed));
    // Closing twice is harmless.
    within("closing again", client.close()).await;
}

#[tokio::test]
async fn a_client_over_any_reader_and_writer() {
    let f = fixture();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = f.server.clone();
    let served = tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (read, write) = tokio::io::split(client_io);
    let client = Client::builder("io", "1").connect_io(read, write).await.unwrap();
    assert_eq!(client.call_tool("add", json!({"a": 20, "b": 22})).await.unwrap().text(), "42");
    client.close().await;
    // The server saw the end of its input and stopped.
    within("the server to stop", served).await.unwrap().unwrap();
}
