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
//! The page defends the button as any page that grants something must:
//!
//! - **Forgery (CSRF).** Showing the page gives the browser a one-time token twice, in a cookie
//!   (`HttpOnly`, `SameSite=Strict`, for `/auth` only) and in the form; the button counts only
//!   when both come back, for the flow the page was shown for, within ten minutes, and with no
//!   `Origin` but the page's own. Another site can neither read the token nor send the cookie,
//!   so it cannot press the button for the user. The tokens are kept by this process: behind a
//!   load balancer, send a browser's requests for the page to one instance.
//! - **Framing (clickjacking).** Every answer forbids being shown in a frame
//!   (`X-Frame-Options: DENY`, `Content-Security-Policy: frame-ancestors 'none'`), is not cached
//!   and sends no referrer.
//! - **The user.** A flow asked by a signed-in user (a session with a principal) can only be
//!   finished by that same user: give the page the way it tells who is in the browser
//!   ([`AuthPage::signed_in_user`]: the application's own login cookie, a header its sign-in
//!   proxy sets…), and the button completes the flow with `complete_for(id, user)`, which
//!   refuses a flow someone else started. Otherwise a person could be lured into finishing
//!   another's flow (a link forwarded by an attacker) and grant the attacker's session what
//!   they meant for their own. This example runs without sign-in (stdio, or HTTP without
//!   authorization): its flows have no principal, and the page completes them with
//!   `complete(id)`.
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

use std::collections::{HashMap, HashSet};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Form, Query, State as Extract};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use tracing_subscriber::EnvFilter;
use typed_mcp::prelude::*;
use typed_mcp::server::{CompleteError, SessionKey, UrlElicitations, UrlFlowState};

/// The cookie that carries the page's one-time token back with the button.
const FORM_COOKIE: &str = "mcp_auth_form";
/// How long a shown page's button stays good.
const FORM_LIFETIME: Duration = Duration::from_secs(600);
/// How many shown pages are remembered at once (the oldest are forgotten first).
const MAX_FORMS: usize = 4096;

/// Tells who is signed in, in the browser that sent these headers.
pub(crate) type SignedInUser = Arc<dyn Fn(&HeaderMap) -> Option<String> + Send + Sync>;

/// Where the authorization page lives, which sessions completed it, and the buttons it showed.
pub(crate) struct AuthPage {
    base: String,
    authorized: Mutex<HashSet<SessionKey>>,
    /// The token of each page shown: the flow it was shown for, and when.
    forms: Mutex<HashMap<String, (String, Instant)>>,
    user: Option<SignedInUser>,
}

impl AuthPage {
    /// The page served at `base` (such as `http://127.0.0.1:8931`), with nobody authorized yet.
    pub(crate) fn new(base: String) -> Self {
        AuthPage { base, authorized: Mutex::default(), forms: Mutex::default(), user: None }
    }

    /// How the page tells who is signed in in the browser (the application's own login): a flow
    /// is then finished only by the user whose session asked for it.
    #[allow(dead_code)]
    pub(crate) fn signed_in_user(mut self, user: SignedInUser) -> Self {
        self.user = Some(user);
        self
    }

    fn url(&self, id: &str) -> String {
        format!("{}/auth?id={id}", self.base)
    }

    /// A fresh one-time token for the button of the page shown for flow `id`.
    fn issue(&self, id: &str) -> Option<String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).ok()?;
        let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut forms = self.forms.lock().ok()?;
        let now = Instant::now();
        forms.retain(|_, (_, at)| now.duration_since(*at) < FORM_LIFETIME);
        if forms.len() >= MAX_FORMS
            && let Some(oldest) = forms.iter().min_by_key(|(_, (_, at))| *at).map(|(t, _)| t.clone())
        {
            forms.remove(&oldest);
        }
        forms.insert(token.clone(), (id.to_owned(), now));
        Some(token)
    }

    /// Whether the button press carries the token of a page shown for flow `id` in this very
    /// browser (the cookie and the form agree), recently; the token is spent either way.
    fn redeem(&self, id: &str, form_token: &str, headers: &HeaderMap) -> bool {
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == FORM_COOKIE && value == form_token);
        let shown = self.forms.lock().ok().and_then(|mut forms| forms.remove(form_token));
        let fresh = shown.is_some_and(|(flow, at)| flow == id && at.elapsed() < FORM_LIFETIME);
        cookie && fresh
    }

    /// Whether the request comes from the page itself: no `Origin`, or the page's own.
    fn same_origin(&self, headers: &HeaderMap) -> bool {
        headers.get(header::ORIGIN).is_none_or(|origin| origin.as_bytes() == self.base.as_bytes())
    }
}

/// An answer of the page, with the headers that keep it out of frames, caches and referrers.
fn page_answer(status: StatusCode, html: String) -> Response {
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; form-action 'self'; frame-ancestors 'none'"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
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

/// What the button sends: the flow, and the token of the page it was on.
#[derive(Deserialize)]
struct AuthForm {
    id: String,
    #[serde(default)]
    csrf: String,
}

/// What the page's handlers share: the server's URL flows and the page.
type PageState = (UrlElicitations, Arc<AuthPage>);

/// The page the user is sent to: says what is being authorized and asks for a button press.
/// Visiting it completes nothing, so a link previewer or a prefetching browser cannot
/// authorize anything for the user; only the button's POST does.
async fn auth_page(Extract((flows, page)): Extract<PageState>, Query(query): Query<AuthQuery>) -> Response {
    match flows.state(&query.id).await {
        None => page_answer(StatusCode::NOT_FOUND, "<h1>Unknown authorization request</h1>".into()),
        Some(UrlFlowState::Completed) => {
            page_answer(StatusCode::CONFLICT, "<h1>Already authorized</h1><p>You can close this page.</p>".into())
        }
        Some(UrlFlowState::Pending) => {
            let Some(token) = page.issue(&query.id) else {
                return page_answer(StatusCode::SERVICE_UNAVAILABLE, "<h1>Try again later</h1>".into());
            };
            let id = escape_html(&query.id);
            let html = format!(
                "<!doctype html><title>Authorize</title><h1>Authorize the example app</h1>\
                 <p>The example app asks to act for you. Authorize it only if you started this from your assistant.</p>\
                 <form method=\"post\" action=\"/auth\"><input type=\"hidden\" name=\"id\" value=\"{id}\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{token}\">\
                 <button type=\"submit\">Authorize</button></form>"
            );
            let mut response = page_answer(StatusCode::OK, html);
            let cookie = format!("{FORM_COOKIE}={token}; Path=/auth; HttpOnly; SameSite=Strict; Max-Age=600");
            if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            response
        }
    }
}

/// The page's button: checks that it was pressed on the page (and by the user who asked),
/// then completes the flow and remembers the session as authorized.
async fn authorize(
    Extract((flows, page)): Extract<PageState>,
    headers: HeaderMap,
    Form(form): Form<AuthForm>,
) -> Response {
    let refused = |why: &str| page_answer(StatusCode::FORBIDDEN, format!("<h1>Not authorized</h1><p>{why}</p>"));
    if !page.same_origin(&headers) {
        return refused("The request came from another site.");
    }
    if !page.redeem(&form.id, &form.csrf, &headers) {
        return refused("Open the authorization page again and press its button there.");
    }
    let completed = match &page.user {
        Some(user_of) => match user_of(&headers) {
            Some(user) => flows.complete_for(&form.id, &user).await,
            None => return refused("Sign in first: only the user who asked can authorize."),
        },
        None => flows.complete(&form.id).await,
    };
    match completed {
        Ok(done) => {
            if let Ok(mut authorized) = page.authorized.lock() {
                authorized.insert(done.session);
            }
            page_answer(
                StatusCode::OK,
                "<h1>Authorized</h1><p>You can close this page and return to your assistant.</p>".into(),
            )
        }
        Err(CompleteError::Foreign(_)) => refused("This authorization was asked for by another user."),
        Err(e) => {
            let status = match e {
                CompleteError::AlreadyCompleted(_) => StatusCode::CONFLICT,
                _ => StatusCode::NOT_FOUND,
            };
            page_answer(status, format!("<h1>Not authorized</h1><p>{}</p>", escape_html(&e.to_string())))
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
