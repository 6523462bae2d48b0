//! Helpers shared by the integration tests.

pub mod backplane;
pub mod gateway;
pub mod http;
pub mod inspector;
pub mod listening;
pub mod pki;
pub mod processes;
pub mod registry;
pub mod tasks;

/// The test servers of this package (`tests/src/bin/`), built by cargo with the test binary.
pub mod servers {
    /// The whole former surface of the `elicitation` example: forms, URL mode, a task, over
    /// stdio or HTTP, alone or with `--redis` (`src/bin/combined.rs`).
    pub const COMBINED: &str = env!("CARGO_BIN_EXE_combined");
    /// Small surfaces (`--surface quickstart|notes`) as instances of a Redis deployment
    /// (`src/bin/backplane-server.rs`).
    pub const BACKPLANE_SERVER: &str = env!("CARGO_BIN_EXE_backplane-server");
    /// Everything the conformance suite asks a server for (`src/bin/conformance.rs`).
    pub const CONFORMANCE: &str = env!("CARGO_BIN_EXE_conformance");
    /// The client of the conformance suite's client scenarios (`src/bin/conformance-client.rs`).
    pub const CONFORMANCE_CLIENT: &str = env!("CARGO_BIN_EXE_conformance-client");
}

/// One HTTP client for the whole test process. Building a `reqwest::Client` sets up TLS and
/// loads the platform's root certificates, which a test that makes hundreds of sessions cannot
/// afford per request. No connection is kept idle, so a connection opened on one test's
/// runtime is never reused by another test after that runtime has gone.
pub fn http_client() -> reqwest::Client {
    static CLIENT: std::sync::LazyLock<reqwest::Client> = std::sync::LazyLock::new(|| {
        reqwest::Client::builder().pool_max_idle_per_host(0).build().expect("an HTTP client")
    });
    CLIENT.clone()
}

/// Does what a user does on the `elicitation` example's authorization page at `page`: opens it
/// (a GET, which completes nothing) and presses its button (a POST of the flow's id and the
/// page's token, with the page's cookie). Returns
/// the status of the POST.
///
/// # Panics
///
/// Panics when the page does not answer 200 with a form that POSTs.
pub async fn press_authorize(page: &str) -> reqwest::StatusCode {
    let http = http_client();
    let shown = http.get(page).send().await.expect("the example's page answers");
    assert_eq!(shown.status(), reqwest::StatusCode::OK, "{page}");
    // The page's one-time token comes back twice, as a browser sends it: its cookie, and the
    // form's hidden field.
    let cookie = shown
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .to_owned();
    let html = shown.text().await.expect("the page has a body");
    assert!(html.contains("method=\"post\""), "{page} shows no button: {html}");
    let csrf = html.split("name=\"csrf\" value=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap_or_default();
    let url = reqwest::Url::parse(page).expect("the page's URL parses");
    let id = url.query_pairs().find(|(k, _)| k == "id").map(|(_, v)| v.into_owned()).expect("the URL names its flow");
    // The form's body, encoded as a query string is.
    let mut form = reqwest::Url::parse("http://form.invalid/").expect("a URL");
    form.query_pairs_mut().append_pair("id", &id).append_pair("csrf", csrf);
    let body = form.query().unwrap_or_default().to_owned();
    let pressed = http
        .post(url.join("/auth").expect("a URL"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", cookie)
        .body(body)
        .send()
        .await
        .expect("the example's page answers");
    pressed.status()
}
