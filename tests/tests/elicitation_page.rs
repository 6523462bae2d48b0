//! The `url_elicitation` example's authorization page under attack: a button pressed from
//! another site (no token, a foreign `Origin`), a page shown in a frame, a token used twice, and
//! a flow that one user asked for and another tries to finish.

use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;

use crate::support::http::{Endpoint, Session, principal_from_header};

#[allow(dead_code)]
#[path = "../../examples/src/bin/url_elicitation.rs"]
mod url_elicitation;

use url_elicitation::{AuthPage, auth_via_url, page_routes, protected_action};

/// The example's tools over HTTP (the `x-user` header is the session's principal) and its page,
/// which knows the browser's user by the same header; returns the endpoint and the page's base.
async fn serve() -> (Endpoint, String) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let user_of: url_elicitation::SignedInUser =
        Arc::new(|headers| headers.get("x-user").and_then(|v| v.to_str().ok()).map(str::to_owned));
    let page = Arc::new(AuthPage::new(base.clone()).signed_in_user(user_of));
    let server = Server::builder("page-test", "1")
        .tools(tools![auth_via_url, protected_action])
        .state_arc(page.clone())
        .build()
        .unwrap();
    let app = page_routes(server.url_elicitations().clone(), page);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let endpoint = Endpoint::serve_with(&server, HttpConfig::default(), |router| {
        router.layer(axum::middleware::from_fn(principal_from_header))
    })
    .await;
    (endpoint, base)
}

/// Calls `protected_action`: the page's URL it asks the user to visit, or `None` once allowed.
async fn protected(session: &Session) -> Option<String> {
    let answer = session.request("tools/call", json!({"name": "protected_action", "arguments": {}})).await;
    if answer.get("result").is_some() {
        return None;
    }
    assert_eq!(answer["error"]["code"], -32042, "{answer}");
    Some(answer["error"]["data"]["elicitations"][0]["url"].as_str().expect("a URL").to_owned())
}

/// A browser: what it sends along with each request.
struct Browser {
    http: reqwest::Client,
    user: Option<&'static str>,
}

/// What showing the page gave the browser: the cookie and the form's token.
struct Shown {
    cookie: String,
    csrf: String,
}

impl Browser {
    fn new(user: Option<&'static str>) -> Self {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Browser { http, user }
    }

    /// Opens the page at `url`; checks that it defends itself.
    async fn open(&self, url: &str) -> Shown {
        let mut get = self.http.get(url);
        if let Some(user) = self.user {
            get = get.header("x-user", user);
        }
        let response = get.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        assert_eq!(header("x-frame-options"), "DENY");
        assert!(
            header("content-security-policy").contains("frame-ancestors 'none'"),
            "{}",
            header("content-security-policy")
        );
        assert_eq!(header("cache-control"), "no-store");
        let set_cookie = header("set-cookie");
        assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Strict"), "{set_cookie}");
        let cookie = set_cookie.split(';').next().unwrap().to_owned();
        let html = response.text().await.unwrap();
        let csrf = html
            .split("name=\"csrf\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("the form carries a token: {html}"))
            .to_owned();
        Shown { cookie, csrf }
    }

    /// Presses the button for flow `id` of the page at `base`, sending `cookie` and `csrf`
    /// (and `origin` when given); the status.
    async fn press(&self, base: &str, id: &str, cookie: Option<&str>, csrf: &str, origin: Option<&str>) -> StatusCode {
        let mut form = reqwest::Url::parse("http://form.invalid/").unwrap();
        form.query_pairs_mut().append_pair("id", id).append_pair("csrf", csrf);
        let mut post = self
            .http
            .post(format!("{base}/auth"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.query().unwrap().to_owned());
        if let Some(cookie) = cookie {
            post = post.header("cookie", cookie);
        }
        if let Some(origin) = origin {
            post = post.header("origin", origin);
        }
        if let Some(user) = self.user {
            post = post.header("x-user", user);
        }
        let response = post.send().await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        assert_eq!(headers.get("x-frame-options").map(|v| v.as_bytes()), Some(&b"DENY"[..]), "{status}");
        status
    }
}

fn id_of(url: &str) -> String {
    let url = reqwest::Url::parse(url).unwrap();
    url.query_pairs().find(|(k, _)| k == "id").map(|(_, v)| v.into_owned()).unwrap()
}

#[tokio::test]
async fn the_page_completes_a_flow_only_for_its_user_from_its_own_form() {
    let (endpoint, base) = serve().await;
    let url_mode: Value = json!({"elicitation": {"url": {}}});
    let alice = endpoint.session_as(url_mode.clone(), Some("alice")).await;
    let page = protected(&alice).await.expect("alice is asked to authorize");
    let id = id_of(&page);
    let alices_browser = Browser::new(Some("alice"));
    let mallorys_browser = Browser::new(Some("mallory"));

    // Forged presses: no cookie, a made-up token, a foreign origin. None completes anything.
    let shown = alices_browser.open(&page).await;
    assert_eq!(alices_browser.press(&base, &id, None, &shown.csrf, None).await, StatusCode::FORBIDDEN);
    let shown = alices_browser.open(&page).await;
    let forged = "0".repeat(64);
    let cookie = format!("mcp_auth_form={forged}");
    assert_eq!(alices_browser.press(&base, &id, Some(&cookie), &forged, None).await, StatusCode::FORBIDDEN);
    assert_eq!(
        alices_browser.press(&base, &id, Some(&shown.cookie), &shown.csrf, Some("https://evil.example")).await,
        StatusCode::FORBIDDEN
    );
    // A token shown for another flow does not press this one's button.
    let other = protected(&endpoint.session_as(url_mode.clone(), Some("alice")).await).await.unwrap();
    let elsewhere = alices_browser.open(&other).await;
    assert_eq!(
        alices_browser.press(&base, &id, Some(&elsewhere.cookie), &elsewhere.csrf, None).await,
        StatusCode::FORBIDDEN
    );
    // Mallory, lured to alice's link (or forwarding her own): the page is hers to see, but the
    // flow is alice's to finish.
    let shown = mallorys_browser.open(&page).await;
    assert_eq!(mallorys_browser.press(&base, &id, Some(&shown.cookie), &shown.csrf, None).await, StatusCode::FORBIDDEN);
    // Nobody signed in: refused too.
    let anonymous = Browser::new(None);
    let shown = anonymous.open(&page).await;
    assert_eq!(anonymous.press(&base, &id, Some(&shown.cookie), &shown.csrf, None).await, StatusCode::FORBIDDEN);
    assert!(protected(&alice).await.is_some(), "a refused press authorized alice's session");

    // Alice, on her page, with its cookie: done, once.
    let shown = alices_browser.open(&page).await;
    let origin = Some(base.as_str());
    assert_eq!(alices_browser.press(&base, &id, Some(&shown.cookie), &shown.csrf, origin).await, StatusCode::OK);
    assert_eq!(protected(&alice).await, None, "alice is authorized");
    assert_eq!(
        alices_browser.press(&base, &id, Some(&shown.cookie), &shown.csrf, None).await,
        StatusCode::FORBIDDEN,
        "a token is good once"
    );
}
