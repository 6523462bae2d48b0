//! The test server with the whole surface the `elicitation` example had before it was split
//! into `elicitation`, `url_elicitation`, `tasks` and `shared`: forms (`create_project`,
//! `create_project_from`, `process_data`), URL mode (`auth_via_url`, `protected_action`, the page
//! on `--url-port`), a task (`deploy`), over stdio or Streamable HTTP (`--port`), alone or as one
//! instance of a Redis deployment (`--redis`). It names itself `elicitation`, as the interop
//! scripts and the bad-input catalog that drive it expect.
//!
//! The tests that cross these features in one session (the HTTP interop scripts, the bad-input
//! catalog, the backplane tests of URL flows and of the pinned clients across instances) start
//! it; the examples themselves are tested on their own.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State as Extract};
use axum::http::StatusCode;
use axum::response::Html;
use schemars::JsonSchema;
use serde::Deserialize;
use typed_mcp::prelude::*;
use typed_mcp::server::{CompleteError, SessionKey, UrlElicitations, UrlFlowState};

/// The page's port when none is configured.
const DEFAULT_URL_PORT: u16 = 8931;

/// A front-end framework for a new project.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "lowercase")]
enum Framework {
    React,
    Vue,
    Angular,
    // No framework: plain HTML and JavaScript.
    #[serde(rename = "none")]
    Plain,
}

impl Framework {
    fn name(&self) -> &'static str {
        match self {
            Framework::React => "react",
            Framework::Vue => "vue",
            Framework::Angular => "angular",
            Framework::Plain => "none",
        }
    }
}

/// What `create_project` asks for. The same struct is `create_project_from`'s input: there its
/// schema is schemars' full JSON Schema, in the form MCP's restricted subset of it.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct ProjectDetails {
    /// Name of the project.
    #[schemars(length(min = 1))]
    project_name: String,
    /// Front-end framework to use.
    framework: Option<Framework>,
    /// Include a test setup.
    #[serde(default = "yes")]
    include_tests: bool,
}

/// Tests are set up unless the user says otherwise.
fn yes() -> bool {
    true
}

/// What `process_data` asks before handling a large input.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Confirmation {
    /// Process the data anyway?
    proceed: bool,
}

/// Creates a new project, asking the user for its details.
#[tool]
async fn create_project(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<ProjectDetails>("Please provide the project details.").await {
        Ok(Elicitation::Accept(details)) => {
            let framework = details.framework.as_ref().map_or("none", Framework::name);
            tracing::info!(project = %details.project_name, framework, tests = details.include_tests, "creating a project");
            Ok(format!("Created project '{}' with framework: {framework}", details.project_name))
        }
        Ok(Elicitation::Decline) => Ok("The user declined to provide project details; no project was created.".into()),
        Ok(Elicitation::Cancel) => Err("The user cancelled project creation.".into()),
        Err(e) => Err(format!("Could not ask for the project details: {e}")),
    }
}

/// Creates a new project from details given as the call's arguments (the fields of the form
/// `create_project` asks for), without asking.
#[tool]
fn create_project_from(details: Params<ProjectDetails>) -> String {
    let framework = details.framework.as_ref().map_or("none", Framework::name);
    format!("Created project '{}' with framework: {framework}", details.project_name)
}

/// Processes data, asking for confirmation first when it is large (over 100 characters).
///
/// # Arguments
/// * `data` - The data to process.
#[tool]
async fn process_data(ctx: Context, data: String) -> Result<String, String> {
    let length = data.chars().count();
    if length > 100 {
        let question = format!("The data is {length} characters long. Process it anyway?");
        let answer =
            ctx.elicit::<Confirmation>(question).await.map_err(|e| format!("Could not ask for confirmation: {e}"))?;
        if !answer.accepted().is_some_and(|c| c.proceed) {
            return Ok("Processing cancelled by the user.".into());
        }
    }
    Ok(format!("Processed {length} characters"))
}

/// Where the authorization page lives, and which sessions completed it.
struct AuthPage {
    base: String,
    authorized: Mutex<HashSet<SessionKey>>,
}

impl AuthPage {
    fn url(&self, id: &str) -> String {
        format!("{}/auth?id={id}", self.base)
    }
}

/// Starts an authorization flow in the browser (URL-mode elicitation).
#[tool]
async fn auth_via_url(ctx: Context, page: State<AuthPage>) -> Result<String, String> {
    let url = page.url("{elicitationId}");
    match ctx.elicit_url(url, "Authorize the example app to act for you.").await {
        Ok(Elicitation::Accept(id)) => {
            Ok(format!("Authorization flow {id} started: finish it in the browser, then call protected_action."))
        }
        Ok(other) => Ok(format!("The user declined to authorize (action: {}).", action_name(&other))),
        Err(e) => Err(format!("Could not start the authorization flow: {e}")),
    }
}

fn action_name<T>(e: &Elicitation<T>) -> &'static str {
    match e {
        Elicitation::Accept(_) => "accept",
        Elicitation::Decline => "decline",
        Elicitation::Cancel => "cancel",
    }
}

/// Does something that needs authorization; asks for it (error -32042) until it is given.
#[tool(destructive = false)]
async fn protected_action(ctx: Context, page: State<AuthPage>) -> Result<String, UrlElicitationRequired> {
    let authorized = page.authorized.lock().map(|a| a.contains(&ctx.session_key())).unwrap_or(false);
    if authorized {
        return Ok("Protected action completed: you are authorized.".into());
    }
    let id = ctx.new_url_elicitation_id();
    Err(UrlElicitationRequired::single(&id, page.url(&id), "Authorize the example app before using this action."))
}

/// Builds a service, asks the user to confirm once it is built, then deploys it.
///
/// For a client that supports tasks (revision 2026-07-28), the call is answered at once with a
/// task: the confirmation waits in the task's `inputRequests` until the client answers it with
/// `tasks/update`, and the build is not done again. Other clients see an ordinary call that
/// asks a question.
///
/// # Arguments
/// * `service` - The service to deploy.
#[tool(destructive, task = "optional")]
async fn deploy(ctx: Context, service: String) -> Result<String, ElicitError> {
    // Building takes a while.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let go = ctx.confirm(format!("{service} is built. Deploy it to production?")).key("deploy").await?;
    if !go {
        return Ok(format!("{service} was built but not deployed."));
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    Ok(format!("Deployed {service} to production."))
}

#[derive(Deserialize)]
struct AuthQuery {
    id: String,
}

/// The page the user is sent to: says what is being authorized and asks for a button press.
/// Visiting it completes nothing, so a link previewer or a prefetching browser that fetches the
/// URL on its own cannot authorize anything for the user; only the button's POST does.
async fn auth_page(
    Extract((flows, _)): Extract<(UrlElicitations, Arc<AuthPage>)>,
    Query(query): Query<AuthQuery>,
) -> (StatusCode, Html<String>) {
    // With `--redis`, a flow another instance started is found there.
    match flows.state(&query.id).await {
        None => return (StatusCode::NOT_FOUND, Html("<h1>Unknown authorization request</h1>".into())),
        Some(UrlFlowState::Completed) => {
            return (StatusCode::CONFLICT, Html("<h1>Already authorized</h1><p>You can close this page.</p>".into()));
        }
        Some(UrlFlowState::Pending) => {}
    }
    let id = escape_html(&query.id);
    let page = format!(
        "<!doctype html><title>Authorize</title><h1>Authorize the example app</h1>\
         <p>The example app asks to act for you. Authorize it only if you started this from your assistant.</p>\
         <form method=\"post\" action=\"/auth\"><input type=\"hidden\" name=\"id\" value=\"{id}\">\
         <button type=\"submit\">Authorize</button></form>"
    );
    (StatusCode::OK, Html(page))
}

/// The page's button: completes the flow and remembers the session as authorized.
async fn authorize(
    Extract((flows, page)): Extract<(UrlElicitations, Arc<AuthPage>)>,
    Form(form): Form<AuthQuery>,
) -> (StatusCode, Html<String>) {
    // A real server would check here that the person pressing the button is the user the flow
    // was created for (for example with its own login cookie) before completing it.
    match flows.complete(&form.id).await {
        Ok(done) => {
            if let Ok(mut authorized) = page.authorized.lock() {
                authorized.insert(done.session);
            }
            (
                StatusCode::OK,
                Html("<h1>Authorized</h1><p>You can close this page and return to your assistant.</p>".into()),
            )
        }
        Err(e) => {
            let status = match e {
                CompleteError::AlreadyCompleted(_) => StatusCode::CONFLICT,
                _ => StatusCode::NOT_FOUND,
            };
            (status, Html(format!("<h1>Not authorized</h1><p>{}</p>", escape_html(&e.to_string()))))
        }
    }
}

/// Escapes text for an HTML page (the id in an error message comes from the visitor).
fn escape_html(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '&' => "&amp;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tests::programs::init_logging();
    let listener = match tests::programs::port_option("url-port", "ELICITATION_URL_PORT", None)? {
        Some(port) => tests::programs::bind(port, "--url-port / ELICITATION_URL_PORT").await,
        // Nobody asked for a port: the usual one when it is free, else any free one (a second
        // copy, started by another host, must not fail). The URLs name whichever it is.
        None => match tokio::net::TcpListener::bind(("127.0.0.1", DEFAULT_URL_PORT)).await {
            Ok(listener) => listener,
            Err(_) => tests::programs::bind(0, "--url-port / ELICITATION_URL_PORT").await,
        },
    };
    let address = listener.local_addr()?;
    tracing::info!("authorization page on http://{address}/auth");
    let page = Arc::new(AuthPage { base: format!("http://{address}"), authorized: Mutex::default() });

    let builder = Server::builder("elicitation", env!("CARGO_PKG_VERSION"))
        .title("Elicitation examples")
        .tools(tools![create_project, create_project_from, process_data, auth_via_url, protected_action, deploy])
        .state_arc(page.clone());
    let server = tests::programs::shared_state_key(builder).await.build()?;

    let app = axum::Router::new()
        .route("/auth", axum::routing::get(auth_page).post(authorize))
        .with_state((server.url_elicitations().clone(), page));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the authorization page stopped");
        }
    });
    // The page's authorizations are kept in this process, by session: the flow and the action
    // checking it run where the session is owned.
    tests::programs::serve_keeping_on_owner(server, &["auth_via_url", "protected_action"]).await
}
