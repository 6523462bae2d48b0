//! URL-mode elicitation: sending the user to a page of the server's own, for what must not pass
//! through the client (signing in, paying, granting access).
//!
//! - `auth_via_url` asks the client to open the page (`elicitation/create` in mode `url`) and
//!   returns once the user agreed to go there;
//! - `protected_action` fails with error -32042 (`UrlElicitationRequired`, naming the page)
//!   until the user has been there, then succeeds. A client that did not declare URL mode is
//!   refused: it could not send the user anywhere.
//!
//! The page is served by this process, at `http://127.0.0.1:8931/auth?id=<elicitationId>`. It
//! shows what is being authorized and completes the flow only when the user presses its button
//! (a POST), never on a plain visit, which a link previewer may make on its own. Completing it
//! sends `notifications/elicitation/complete` to the session that asked.
//!
//! It needs typed-mcp's features `http` and `otel-otlp`, besides the default ones (and `axum`
//! for the page). Run it with `cargo run -p examples --bin url_elicitation` (stdio; the host
//! must support URL mode), or start it with `--port N` (or `PORT=N`) to serve Streamable HTTP
//! at `http://127.0.0.1:N/mcp`. The page's port is `--url-port N` (or `ELICITATION_URL_PORT`;
//! `0` picks a free one); without either it is 8931 when that is free and any free port when it
//! is not, so that several copies run side by side. Logs go to stderr (`RUST_LOG`).
//!
//! The same tools serve 2026-07-28 clients, whose requests have no session: the authorization
//! `protected_action` asks for then lasts for the request that asked, and its error becomes a
//! URL input request that the client's retry answers once the user has been to the page.
//!
//! Try it, from the repository's root after `cargo build -p examples`:
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli target/debug/url_elicitation --method tools/call --tool-name protected_action
//! ```
//!
//! The Inspector's CLI opens no page, so it does not declare URL mode, and the tool says so:
//! `the client did not declare elicitation.url`. A host that supports URL mode opens the page.

use std::collections::HashSet;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use axum::extract::{Form, Query, State as Extract};
use axum::http::StatusCode;
use axum::response::Html;
use serde::Deserialize;
use tracing_subscriber::EnvFilter;
use typed_mcp::prelude::*;
use typed_mcp::server::{CompleteError, SessionKey, UrlElicitations, UrlFlowState};

/// Where the authorization page lives, and which sessions completed it.
pub(crate) struct AuthPage {
    base: String,
    authorized: Mutex<HashSet<SessionKey>>,
}

impl AuthPage {
    /// The page served at `base` (such as `http://127.0.0.1:8931`), with nobody authorized yet.
    pub(crate) fn new(base: String) -> Self {
        AuthPage { base, authorized: Mutex::default() }
    }

    fn url(&self, id: &str) -> String {
        format!("{}/auth?id={id}", self.base)
    }
}

/// Starts an authorization flow in the browser (URL-mode elicitation).
#[tool]
pub(crate) async fn auth_via_url(ctx: Context, page: State<AuthPage>) -> Result<String, String> {
    // The SDK puts the flow's id where `{elicitationId}` stands.
    let url = page.url("{elicitationId}");
    match ctx.elicit_url(url, "Authorize the example app to act for you.").await {
        Ok(Elicitation::Accept(id)) => {
            Ok(format!("Authorization flow {id} started: finish it in the browser, then call protected_action."))
        }
        Ok(Elicitation::Decline) => Ok("The user declined to authorize (action: decline).".into()),
        Ok(Elicitation::Cancel) => Ok("The user declined to authorize (action: cancel).".into()),
        Err(e) => Err(format!("Could not start the authorization flow: {e}")),
    }
}

/// Does something that needs authorization; asks for it (error -32042) until it is given.
#[tool(destructive = false)]
pub(crate) async fn protected_action(ctx: Context, page: State<AuthPage>) -> Result<String, UrlElicitationRequired> {
    let authorized = page.authorized.lock().map(|a| a.contains(&ctx.session_key())).unwrap_or(false);
    if authorized {
        return Ok("Protected action completed: you are authorized.".into());
    }
    let id = ctx.new_url_elicitation_id();
    Err(UrlElicitationRequired::single(&id, page.url(&id), "Authorize the example app before using this action."))
}

#[derive(Deserialize)]
struct AuthQuery {
    id: String,
}

/// What the page's handlers share: the server's URL flows and the page.
type PageState = (UrlElicitations, Arc<AuthPage>);

/// The page the user is sent to: says what is being authorized and asks for a button press.
/// Visiting it completes nothing, so a link previewer or a prefetching browser cannot
/// authorize anything for the user; only the button's POST does.
async fn auth_page(
    Extract((flows, _)): Extract<PageState>,
    Query(query): Query<AuthQuery>,
) -> (StatusCode, Html<String>) {
    match flows.state(&query.id).await {
        None => (StatusCode::NOT_FOUND, Html("<h1>Unknown authorization request</h1>".into())),
        Some(UrlFlowState::Completed) => {
            (StatusCode::CONFLICT, Html("<h1>Already authorized</h1><p>You can close this page.</p>".into()))
        }
        Some(UrlFlowState::Pending) => {
            let id = escape_html(&query.id);
            let page = format!(
                "<!doctype html><title>Authorize</title><h1>Authorize the example app</h1>\
                 <p>The example app asks to act for you. Authorize it only if you started this from your assistant.</p>\
                 <form method=\"post\" action=\"/auth\"><input type=\"hidden\" name=\"id\" value=\"{id}\">\
                 <button type=\"submit\">Authorize</button></form>"
            );
            (StatusCode::OK, Html(page))
        }
    }
}

/// The page's button: completes the flow and remembers the session as authorized.
async fn authorize(
    Extract((flows, page)): Extract<PageState>,
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

/// The page's routes: `GET /auth?id=…` shows it, `POST /auth` is its button.
pub(crate) fn page_routes(flows: UrlElicitations, page: Arc<AuthPage>) -> axum::Router {
    axum::Router::new().route("/auth", axum::routing::get(auth_page).post(authorize)).with_state((flows, page))
}

/// Escapes text for an HTML page (the id comes from the visitor).
fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The page's listener: on `--url-port N` (or `ELICITATION_URL_PORT`) when given, else on 8931
/// when it is free and on any free port when it is not.
pub(crate) async fn page_listener() -> Result<tokio::net::TcpListener, String> {
    let mut args = std::env::args();
    let asked = args.position(|arg| arg == "--url-port").and_then(|_| args.next());
    let asked = asked.or_else(|| std::env::var("ELICITATION_URL_PORT").ok().filter(|v| !v.is_empty()));
    let listen = |port: u16| tokio::net::TcpListener::bind(("127.0.0.1", port));
    match asked {
        Some(port) => {
            let port: u16 = port.parse().map_err(|_| format!("--url-port: `{port}` is not a port number"))?;
            listen(port).await.map_err(|e| format!("cannot serve the page on 127.0.0.1:{port} (--url-port): {e}"))
        }
        None => match listen(8931).await {
            Ok(listener) => Ok(listener),
            Err(_) => listen(0).await.map_err(|e| format!("cannot serve the page (--url-port): {e}")),
        },
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let listener = page_listener().await?;
    let address = listener.local_addr()?;
    tracing::info!("authorization page on http://{address}/auth");
    let page = Arc::new(AuthPage::new(format!("http://{address}")));

    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the other
    // standard OTEL_* variables apply), and are flushed when the program stops.
    let otlp = typed_mcp::telemetry::otlp_from_env()?;
    let server = Server::builder("url_elicitation", env!("CARGO_PKG_VERSION"))
        .title("URL-mode elicitation")
        .tools(tools![auth_via_url, protected_action])
        .state_arc(page.clone())
        .telemetry(typed_mcp::telemetry::Telemetry::global())
        .build()?;

    let app = page_routes(server.url_elicitations().clone(), page);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the authorization page stopped");
        }
    });
    // `--port N` (or `PORT`): Streamable HTTP at http://127.0.0.1:N/mcp; otherwise stdio.
    tokio::select! {
        served = server.serve_stdio_or_http() => served?,
        () = typed_mcp::telemetry::shutdown_signal() => {}
    }
    drop(otlp);
    Ok(())
}
