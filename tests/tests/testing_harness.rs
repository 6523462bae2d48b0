//! `typed_mcp::testing` used the way a server author would: tools equivalent to those of the
//! `elicitation` example, tested in process with scripted answers, a few lines per test.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use typed_mcp::client::{ClientError, ElicitationModes, ElicitationRequest, ProtocolEra};
use typed_mcp::prelude::*;
use typed_mcp::protocol::ElicitResult;
use typed_mcp::server::SessionKey;
use typed_mcp::testing::{self, ElicitationScript, ToolResultExt};

#[derive(Debug, Deserialize, Serialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Framework {
    React,
    Vue,
    Angular,
    #[serde(rename = "none")]
    Plain,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct ProjectDetails {
    /// Name of the project.
    #[schemars(length(min = 1))]
    project_name: String,
    /// Front-end framework to use.
    framework: Option<Framework>,
    /// Include a test setup.
    #[schemars(extend("default" = true))]
    include_tests: bool,
}

#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Confirmation {
    /// Process the data anyway?
    proceed: bool,
}

/// Creates a new project, asking the user for its details.
#[tool]
async fn create_project(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<ProjectDetails>("Please provide the project details.").await {
        Ok(Elicitation::Accept(d)) => {
            let framework = match d.framework {
                Some(Framework::React) => "react",
                Some(Framework::Vue) => "vue",
                Some(Framework::Angular) => "angular",
                Some(Framework::Plain) | None => "none",
            };
            Ok(format!("Created project '{}' with framework: {framework} (tests: {})", d.project_name, d.include_tests))
        }
        Ok(Elicitation::Decline) => Ok("The user declined to provide project details; no project was created.".into()),
        Ok(Elicitation::Cancel) => Err("The user cancelled project creation.".into()),
        Err(e) => Err(format!("Could not ask for the project details: {e}")),
    }
}

/// Processes data, asking for confirmation first when it is large.
///
/// # Arguments
/// * `data` - The data to process.
#[tool]
async fn process_data(ctx: Context, data: String) -> Result<String, String> {
    let length = data.chars().count();
    if length > 100 {
        let question = format!("The data is {length} characters long. Process it anyway?");
        let answer = ctx.elicit::<Confirmation>(question).await.map_err(|e| format!("Could not ask: {e}"))?;
        if !answer.accepted().is_some_and(|c| c.proceed) {
            return Ok("Processing cancelled by the user.".into());
        }
    }
    Ok(format!("Processed {length} characters"))
}

/// Starts an authorization flow in the browser.
#[tool]
async fn auth_via_url(ctx: Context) -> Result<String, String> {
    match ctx.elicit_url("https://auth.example.test/auth?id={elicitationId}", "Authorize the app.").await {
        Ok(Elicitation::Accept(id)) => Ok(format!("Authorization flow {id} started.")),
        Ok(_) => Ok("The user declined to authorize.".into()),
        Err(e) => Err(format!("Could not start the authorization flow: {e}")),
    }
}

#[derive(Default)]
struct Authorized(Mutex<HashSet<SessionKey>>);

/// Needs authorization; asks for it with -32042 until it is given.
#[tool]
async fn protected_action(ctx: Context, authorized: State<Authorized>) -> Result<String, UrlElicitationRequired> {
    if authorized.0.0.lock().unwrap().contains(&ctx.session_key()) {
        return Ok("Protected action completed.".into());
    }
    let id = ctx.new_url_elicitation_id();
    Err(UrlElicitationRequired::single(&id, format!("https://auth.example.test/auth?id={id}"), "Authorize first."))
}

fn server() -> Server {
    Server::builder("elicitation", "1.0.0")
        .tools(tools![create_project, process_data, auth_via_url, protected_action])
        .state(Authorized::default())
        .build()
        .expect("a valid server")
}

#[tokio::test]
async fn create_project_with_the_users_details() {
    let script = ElicitationScript::new().accept(json!({"projectName": "demo", "framework": "vue"}));
    let client = testing::connect_with(&server(), &script).await;
    let result = client.call_tool("create_project", ()).await.unwrap();
    assert_eq!(result.text(), "Created project 'demo' with framework: vue (tests: true)");
    script.assert_done();
}

#[tokio::test]
async fn create_project_asks_for_the_declared_form() {
    let script = ElicitationScript::new().accept_value(&ProjectDetails {
        project_name: "typed".into(),
        framework: None,
        include_tests: false,
    });
    let client = testing::connect_with(&server(), &script).await;
    let result = client.call_tool("create_project", ()).await.unwrap();
    assert_eq!(result.text(), "Created project 'typed' with framework: none (tests: false)");
    let asked = script.requests();
    let form = asked[0].as_form().unwrap();
    assert_eq!(form.message, "Please provide the project details.");
    assert!(form.is_form_of::<ProjectDetails>());
    assert_eq!(form.schema().as_object()["required"], json!(["projectName"]));
}

#[tokio::test]
async fn create_project_declined_or_cancelled() {
    let script = ElicitationScript::new().decline().cancel();
    let client = testing::connect_with(&server(), &script).await;
    let declined = client.call_tool("create_project", ()).await.unwrap();
    assert!(!declined.is_error());
    assert!(declined.text().contains("declined"));
    let cancelled = client.call_tool("create_project", ()).await.unwrap();
    assert!(cancelled.is_error());
    assert_eq!(cancelled.text(), "The user cancelled project creation.");
}

#[tokio::test]
async fn process_data_confirms_only_large_inputs() {
    let script = ElicitationScript::new().accept(json!({"proceed": true})).accept(json!({"proceed": false}));
    let client = testing::connect_with(&server(), &script).await;
    let small = client.call_tool("process_data", json!({"data": "short"})).await.unwrap();
    assert_eq!(small.text(), "Processed 5 characters");
    assert!(script.requests().is_empty(), "nothing was asked for a small input");
    let large = "x".repeat(150);
    let yes = client.call_tool("process_data", json!({"data": large})).await.unwrap();
    assert_eq!(yes.text(), "Processed 150 characters");
    let no = client.call_tool("process_data", json!({"data": large})).await.unwrap();
    assert_eq!(no.text(), "Processing cancelled by the user.");
    assert_eq!(script.requests()[0].message(), "The data is 150 characters long. Process it anyway?");
}

#[tokio::test]
async fn auth_via_url_needs_a_client_with_url_mode() {
    let script = ElicitationScript::new().accept(json!({}));
    let client = testing::connect_with(&server(), &script).await;
    let started = client.call_tool("auth_via_url", ()).await.unwrap();
    let ElicitationRequest::Url(url) = &script.requests()[0] else { panic!("a URL request") };
    assert_eq!(started.text(), format!("Authorization flow {} started.", url.elicitation_id));
    assert_eq!(url.domain(), Some("auth.example.test"));

    let form_only = testing::connect_with(&server(), &ElicitationScript::new().modes(ElicitationModes::FORM)).await;
    let refused = form_only.call_tool("auth_via_url", ()).await.unwrap();
    assert!(refused.is_error(), "{refused:?}");
}

#[tokio::test]
async fn protected_action_after_the_flow_completes() {
    let authorized = Arc::new(Authorized::default());
    let server = Server::builder("elicitation", "1.0.0")
        .tools(tools![protected_action])
        .state_arc(authorized.clone())
        .build()
        .unwrap();
    let flows = server.url_elicitations().clone();
    // The user consents, and the page they open authorizes the session and completes the flow.
    let script = ElicitationScript::new().answer_with(move |request| {
        let id = request.as_url().expect("a URL request").elicitation_id.clone();
        let session = flows.owner(&id).expect("a flow of this server");
        authorized.0.lock().unwrap().insert(session);
        let flows = flows.clone();
        tokio::spawn(async move { flows.complete(&id).await.map(drop) });
        ElicitResult::accept_url()
    });
    let client = testing::connect_with(&server, &script).await;

    let Err(ClientError::UrlElicitationRequired(required)) = client.call_tool("protected_action", ()).await else {
        panic!("-32042 expected");
    };
    assert_eq!(required.elicitations[0].message, "Authorize first.");
    assert!(client.complete_url_elicitations(&required).await.unwrap());
    assert_eq!(client.call_tool("protected_action", ()).await.unwrap().text(), "Protected action completed.");
    script.assert_done();
}

/// Asks for a confirmation (the form's one field is `confirm`).
#[tool]
async fn guarded(ctx: Context) -> Result<String, String> {
    let yes = ctx.confirm("Go ahead?").await.map_err(|e| e.to_string())?;
    Ok(if yes { "done" } else { "skipped" }.into())
}

#[tokio::test]
async fn a_scripted_answer_that_does_not_fit_the_form_fails_the_test_at_once() {
    use futures_util::FutureExt;
    let server = Server::builder("guarded", "1.0.0").tools(tools![guarded]).build().unwrap();
    // The right field: the tool goes ahead.
    let script = ElicitationScript::new().accept(json!({"confirm": true}));
    let client = testing::connect_with(&server, &script).await;
    assert_eq!(client.call_tool("guarded", ()).await.unwrap().text(), "done");
    script.assert_done();

    // A field the form does not have: the call panics, showing the form and the answer.
    let script = ElicitationScript::new().accept(json!({"proceed": true}));
    let client = testing::connect_with(&server, &script).await;
    let panic = std::panic::AssertUnwindSafe(client.call_tool("guarded", ()))
        .catch_unwind()
        .await
        .expect_err("a misfit answer fails the test at once");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    println!("{message}");
    assert!(message.contains("does not fit the form"), "{message}");
    assert!(message.contains("the form") && message.contains("the scripted answer"), "{message}");
    assert!(message.contains("\"confirm\"") && message.contains("\"proceed\""), "side by side: {message}");
    assert!(message.contains("Go ahead?"), "the question is named: {message}");
}

#[tokio::test]
async fn structured_content_that_cannot_be_read_says_why() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Wrong {
        missing_field: u32,
    }
    let text_only = CallToolResult::error_text("boom");
    let error = text_only.structured::<Wrong>().unwrap_err().to_string();
    assert!(error.contains("no structured content") && error.contains("boom"), "{error}");
    let structured = CallToolResult { structured_content: Some(json!({"other": 1})), ..Default::default() };
    let error = structured.structured::<Wrong>().unwrap_err().to_string();
    assert!(error.contains("missing_field") && error.contains("Wrong"), "{error}");
}

/// Charges the card, then asks where the receipt goes: the charge comes before the question,
/// so in the 2026-07-28 era it happens on every round.
#[tool]
async fn checkout_charging_first(ctx: Context, effects: State<testing::Effects>) -> Result<String, String> {
    effects.record("charged 10 EUR");
    let email = ctx.elicit_value::<String>("Where should the receipt go?").await.map_err(|e| e.to_string())?;
    Ok(format!("receipt to {}", email.accepted().unwrap_or_default()))
}

/// The same, charging after the question: once per call in either era.
#[tool]
async fn checkout_charging_last(ctx: Context, effects: State<testing::Effects>) -> Result<String, String> {
    let email = ctx.elicit_value::<String>("Where should the receipt go?").await.map_err(|e| e.to_string())?;
    effects.record("charged 10 EUR");
    Ok(format!("receipt to {}", email.accepted().unwrap_or_default()))
}

/// How many times `flip_flop` has run.
#[derive(Default)]
struct Runs(std::sync::atomic::AtomicUsize);

/// Asks about one side or the other depending on how often it has run: the questions change
/// when the handler runs again.
#[tool]
async fn flip_flop(ctx: Context, runs: State<Runs>) -> Result<String, String> {
    let side =
        if runs.0.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst).is_multiple_of(2) { "left" } else { "right" };
    let first = ctx.confirm(format!("Go {side}?")).await.map_err(|e| e.to_string())?;
    let second = ctx.confirm(format!("Really {side}?")).await.map_err(|e| e.to_string())?;
    Ok(format!("{side}: {first}, {second}"))
}

fn shop(effects: &testing::Effects) -> typed_mcp::ServerBuilder {
    Server::builder("shop", "1").state(effects.clone()).state(Runs::default())
}

#[tokio::test]
async fn both_eras_harness_catches_a_side_effect_before_a_question() {
    let setup = |effects: &testing::Effects| {
        let server = shop(effects).tools(tools![checkout_charging_first]).build().unwrap();
        (server, ElicitationScript::new().accept(json!({"value": "ada@example.com"})))
    };
    let call = |client: testing::TestClient| async move {
        client.call_tool("checkout_charging_first", ()).await.unwrap().text()
    };
    let mismatch = testing::compare_eras(setup, call).await.unwrap_err();
    assert_eq!(
        mismatch.differences,
        [testing::EraDifference::Effects {
            y2025: vec!["charged 10 EUR".into()],
            y2026: vec!["charged 10 EUR".into(), "charged 10 EUR".into()],
        }],
        "the outcome and the questions agree; only the charge is repeated"
    );
    let message = mismatch.to_string();
    assert!(message.contains("the side effects differ"), "{message}");
    assert!(message.contains("code before a question runs once per round"), "{message}");

    // The panicking form says the same.
    let panicked = tokio::spawn(testing::assert_same_in_both_eras(setup, call)).await.unwrap_err();
    let text = panicked.into_panic().downcast::<String>().map(|s| *s).unwrap_or_default();
    assert!(text.contains("the side effects differ"), "{text}");

    // Charged after the question: the same in both eras.
    let fixed = testing::assert_same_in_both_eras(
        |effects| {
            let server = shop(effects).tools(tools![checkout_charging_last]).build().unwrap();
            (server, ElicitationScript::new().accept(json!({"value": "ada@example.com"})))
        },
        |client| async move { client.call_tool("checkout_charging_last", ()).await.unwrap().text() },
    )
    .await;
    assert_eq!(fixed, "receipt to ada@example.com");
}

#[tokio::test]
async fn both_eras_harness_catches_questions_that_change_on_replay() {
    let mismatch = testing::compare_eras(
        |effects| {
            let server = shop(effects).tools(tools![flip_flop]).build().unwrap();
            let yes = json!({"confirm": true});
            (server, ElicitationScript::new().accept(yes.clone()).accept(yes))
        },
        |client| async move { client.call_tool("flip_flop", ()).await.unwrap().text() },
    )
    .await
    .unwrap_err();
    let questions = mismatch.differences.iter().find_map(|d| match d {
        testing::EraDifference::Questions { y2025, y2026 } => Some((y2025.clone(), y2026.clone())),
        _ => None,
    });
    let (y2025, y2026) = questions.unwrap_or_else(|| panic!("no difference in the questions: {mismatch}"));
    assert_eq!(y2025, ["Go left?", "Really left?"]);
    assert_eq!(y2026, ["Go left?", "Really right?"]);
    assert!(mismatch.to_string().contains("the questions differ"), "{mismatch}");
}

#[tokio::test]
async fn a_script_works_the_same_in_either_era() {
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let script = ElicitationScript::new().accept(json!({"projectName": "demo", "framework": "vue"})).decline();
        let client = testing::connect_in_era(&server(), &script, era).await;
        assert_eq!(client.era(), era);
        let created = client.call_tool("create_project", ()).await.unwrap();
        assert_eq!(created.text(), "Created project 'demo' with framework: vue (tests: true)", "{era:?}");
        let declined = client.call_tool("create_project", ()).await.unwrap();
        assert!(declined.text().contains("declined"), "{era:?}: {declined:?}");
        script.assert_done();
        client.close().await;
    }
}
