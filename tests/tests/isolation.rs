//! Isolation: sessions (over stdio) and users (over HTTP, by `Principal`) eliciting at the same
//! time never see each other's questions, answers, URL-mode completions or `requestState`; and
//! the ids that name sessions and URL flows are unguessable (128 random bits, hex: checked for
//! length, alphabet and distinctness, and that every digit position varies).

use crate::support;

use std::collections::HashSet;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::http::{Endpoint, Sse, json_body, principal_from_header, text_of};
use tests::serve::connect_with;
use tests::stdio::{LineClient, error_code, within};
use typed_mcp::prelude::*;
use typed_mcp::server::CompleteError;
use typed_mcp::transport::http::HttpConfig;

#[derive(Deserialize, JsonSchema, Elicit)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks for a name, saying who asks.
#[tool]
async fn ask(ctx: Context, tag: String) -> String {
    match ctx.elicit::<Name>(format!("question for {tag}")).await {
        Ok(Elicitation::Accept(n)) => format!("{tag} answered {}", n.name),
        Ok(_) => format!("{tag} refused"),
        Err(e) => format!("{tag} failed: {e}"),
    }
}

/// Starts a URL-mode flow; returns its id at once (the flow completes out of band).
#[tool]
fn start_flow(ctx: Context) -> String {
    ctx.new_url_elicitation_id()
}

/// Makes `count` URL elicitation ids, one per line.
#[tool]
fn mint(ctx: Context, count: usize) -> String {
    (0..count).map(|_| ctx.new_url_elicitation_id()).collect::<Vec<_>>().join("\n")
}

/// Asks for a URL-mode flow the 2026 way; returns the flow's id once the user went there.
#[tool]
async fn visit(ctx: Context) -> Result<String, String> {
    match ctx.elicit_url("https://example.test/flow?id={elicitationId}", "Go there").await {
        Ok(Elicitation::Accept(id)) => Ok(id),
        Ok(_) => Ok("refused".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn server() -> Server {
    Server::builder("isolation", "1.0.0")
        .tools(tools![ask, start_flow, mint, visit])
        .build()
        .expect("the server builds")
}

fn capable() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}})
}

async fn with_users(server: &Server) -> Endpoint {
    Endpoint::serve_with(server, HttpConfig::default(), |router| {
        router.layer(axum::middleware::from_fn(principal_from_header))
    })
    .await
}

/// Asserts an id is 32 lowercase hex digits (128 bits).
fn assert_id_shape(id: &str) {
    assert_eq!(id.len(), 32, "{id}");
    assert!(id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{id}");
}

/// Asserts `ids` are distinct, shaped like random 128-bit ids, and that no digit position is
/// fixed (as a counter or a timestamp would leave it).
fn assert_unguessable(ids: &[String]) {
    for id in ids {
        assert_id_shape(id);
    }
    let distinct: HashSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "ids repeat");
    for position in 0..32 {
        let digits: HashSet<u8> = ids.iter().map(|id| id.as_bytes()[position]).collect();
        assert!(digits.len() >= 12, "digit {position} takes only {} values over {} ids", digits.len(), ids.len());
    }
}

// ---------------------------------------------------------------------------------------------
// Two sessions over stdio.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn two_stdio_sessions_eliciting_at_once_see_only_their_own_questions_and_answers() {
    let server = server();
    let (mut a, _) = connect_with(&server, capable()).await;
    let (mut b, _) = connect_with(&server, capable()).await;
    a.send_request(1, "tools/call", json!({"name": "ask", "arguments": {"tag": "A"}})).await;
    b.send_request(1, "tools/call", json!({"name": "ask", "arguments": {"tag": "B"}})).await;
    let qa = a.recv().await;
    let qb = b.recv().await;
    assert_eq!(qa["params"]["message"], "question for A");
    assert_eq!(qb["params"]["message"], "question for B");
    // The two sessions' questions may carry the same id: each session has its own id space, and
    // an answer reaches only the session it was sent on.
    assert_eq!(qa["id"], qb["id"]);
    b.send(&json!({"jsonrpc": "2.0", "id": qb["id"], "result": {"action": "accept", "content": {"name": "bob"}}}))
        .await;
    a.send(&json!({"jsonrpc": "2.0", "id": qa["id"], "result": {"action": "accept", "content": {"name": "alice"}}}))
        .await;
    assert_eq!(text_of(&a.recv().await["result"]), "A answered alice");
    assert_eq!(text_of(&b.recv().await["result"]), "B answered bob");
    // Nothing of one reached the other.
    for client in [&mut a, &mut b] {
        client.result("ping", json!({})).await;
    }
}

#[tokio::test]
async fn a_url_flow_completes_only_in_the_session_that_started_it() {
    let server = server();
    let (mut a, _) = connect_with(&server, capable()).await;
    let (mut b, _) = connect_with(&server, capable()).await;
    let id = text_of(&a.result("tools/call", json!({"name": "start_flow", "arguments": {}})).await);
    server.url_elicitations().complete(&id).await.expect("the flow completes");
    let done = a.recv().await;
    assert_eq!(
        (&done["method"], &done["params"]["elicitationId"]),
        (&json!("notifications/elicitation/complete"), &json!(id))
    );
    // Session B got nothing: its next message is the answer to its own request.
    assert_eq!(b.result("ping", json!({})).await, json!({}));
    assert_eq!(server.url_elicitations().complete(&id).await, Err(CompleteError::AlreadyCompleted(id)));
}

// ---------------------------------------------------------------------------------------------
// Two users over HTTP.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn two_users_eliciting_at_once_over_http_see_only_their_own() {
    let server = server();
    let endpoint = with_users(&server).await;
    let alice = endpoint.session_as(capable(), Some("alice")).await;
    let bob = endpoint.session_as(capable(), Some("bob")).await;
    let (a_id, mut a_reply) = alice.start("tools/call", json!({"name": "ask", "arguments": {"tag": "alice"}})).await;
    let (b_id, mut b_reply) = bob.start("tools/call", json!({"name": "ask", "arguments": {"tag": "bob"}})).await;
    let qa = a_reply.message().await;
    let qb = b_reply.message().await;
    assert_eq!(
        (qa["params"]["message"].as_str(), qb["params"]["message"].as_str()),
        (Some("question for alice"), Some("question for bob"))
    );

    // Bob cannot use Alice's session: not to answer her question, not to read her stream.
    let mallory = alice.as_user(Some("bob"));
    let answer =
        json!({"jsonrpc": "2.0", "id": qa["id"], "result": {"action": "accept", "content": {"name": "mallory"}}});
    assert_eq!(mallory.send(&answer).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(within("GET", mallory.get().send()).await.unwrap().status(), StatusCode::NOT_FOUND);
    let anonymous = alice.as_user(None);
    assert_eq!(anonymous.send(&answer).await.status(), StatusCode::NOT_FOUND);

    bob.answer(&qb, json!({"action": "accept", "content": {"name": "bob"}})).await;
    alice.answer(&qa, json!({"action": "accept", "content": {"name": "alice"}})).await;
    let (ra, rb) = (a_reply.message().await, b_reply.message().await);
    assert_eq!((&ra["id"], text_of(&ra["result"])), (&json!(a_id), "alice answered alice".to_owned()));
    assert_eq!((&rb["id"], text_of(&rb["result"])), (&json!(b_id), "bob answered bob".to_owned()));
}

#[tokio::test]
async fn a_users_url_flow_is_completed_for_that_user_only_and_announced_to_that_session_only() {
    let server = server();
    let endpoint = with_users(&server).await;
    let alice = endpoint.session_as(capable(), Some("alice")).await;
    let bob = endpoint.session_as(capable(), Some("bob")).await;
    let mut alice_stream = Sse::new(within("GET", alice.get().send()).await.unwrap());
    let mut bob_stream = Sse::new(within("GET", bob.get().send()).await.unwrap());
    let id = text_of(&alice.call("start_flow", json!({})).await);

    let flows = server.url_elicitations();
    assert!(matches!(flows.complete_for(&id, "bob").await, Err(CompleteError::Foreign(_))));
    assert!(!flows.is_completed(&id), "another user cannot complete it");
    let done = flows.complete_for(&id, "alice").await.expect("its own user completes it");
    assert_eq!(done.principal.as_deref(), Some("alice"));
    let note = alice_stream.message().await;
    assert_eq!(
        (&note["method"], &note["params"]["elicitationId"]),
        (&json!("notifications/elicitation/complete"), &json!(id))
    );
    // Bob's stream stays silent.
    assert!(tokio::time::timeout(Duration::from_millis(300), bob_stream.next()).await.is_err(), "bob heard of it");
}

/// A 2026-era request as `user`.
async fn with_meta(endpoint: &Endpoint, user: &str, id: i64, params: Value) -> (StatusCode, Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capable(),
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let post = endpoint
        .client
        .post(&endpoint.url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", params["name"].as_str().unwrap())
        .header("x-user", user)
        .body(body.to_string());
    let response = within("a 2026 response", post.send()).await.unwrap();
    (response.status(), json_body(response).await)
}

#[tokio::test]
async fn a_users_request_state_and_url_flows_do_not_carry_over_to_another_user() {
    let server = server();
    let endpoint = with_users(&server).await;
    let call = json!({"name": "ask", "arguments": {"tag": "alice"}});
    let (_, first) = with_meta(&endpoint, "alice", 1, call.clone()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].clone();
    let mut retry = call.clone();
    retry["requestState"] = state;
    retry["inputResponses"] = json!({"input-0": {"action": "accept", "content": {"name": "mallory"}}});
    // Bob presents Alice's state, with the same tool and arguments: refused before it runs.
    let (status, stolen) = with_meta(&endpoint, "bob", 2, retry.clone()).await;
    assert_eq!((status, error_code(&stolen)), (StatusCode::BAD_REQUEST, -32602), "{stolen}");
    assert!(stolen["error"]["message"].as_str().unwrap().contains("user"), "{stolen}");
    // Alice herself completes.
    retry["inputResponses"] = json!({"input-0": {"action": "accept", "content": {"name": "alice"}}});
    let (_, done) = with_meta(&endpoint, "alice", 3, retry).await;
    assert_eq!(text_of(&done["result"]), "alice answered alice");

    // A URL flow of Alice's 2026 request cannot be completed for Bob.
    let (_, asked) = with_meta(&endpoint, "alice", 4, json!({"name": "visit", "arguments": {}})).await;
    let url = asked["result"]["inputRequests"]["input-0"]["params"]["url"].as_str().unwrap().to_owned();
    let flow = url.rsplit("id=").next().unwrap().to_owned();
    assert_id_shape(&flow);
    let flows = server.url_elicitations();
    assert!(matches!(flows.complete_for(&flow, "bob").await, Err(CompleteError::Foreign(_))));
    assert!(flows.complete_for(&flow, "alice").await.is_ok());
}

// ---------------------------------------------------------------------------------------------
// Unguessable ids.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn session_ids_are_128_random_bits() {
    let server = server();
    let endpoint = Endpoint::serve(&server, HttpConfig::default()).await;
    let mut ids = Vec::new();
    for _ in 0..300 {
        let session = endpoint.session(json!({})).await;
        ids.push(session.id.clone());
        assert_eq!(session.delete().await, StatusCode::OK);
    }
    assert_unguessable(&ids);
}

#[tokio::test]
async fn url_elicitation_ids_are_128_random_bits_in_both_eras() {
    let server = server();
    let mut client: LineClient = connect_with(&server, capable()).await.0;
    let minted = client.result("tools/call", json!({"name": "mint", "arguments": {"count": 1000}})).await;
    let ids: Vec<String> = text_of(&minted).lines().map(str::to_owned).collect();
    assert_eq!(ids.len(), 1000);
    assert_unguessable(&ids);

    // 2026 era: one per request, each from the request's own random chain.
    let endpoint = with_users(&server).await;
    let mut ids_2026 = Vec::new();
    for n in 0..300 {
        let (_, asked) = with_meta(&endpoint, "alice", n, json!({"name": "visit", "arguments": {}})).await;
        let url = asked["result"]["inputRequests"]["input-0"]["params"]["url"].as_str().unwrap().to_owned();
        ids_2026.push(url.rsplit("id=").next().unwrap().to_owned());
    }
    assert_unguessable(&ids_2026);
    let all: HashSet<&String> = ids.iter().chain(&ids_2026).collect();
    assert_eq!(all.len(), ids.len() + ids_2026.len());
}

/// Reads the request's token details half a second after it starts.
#[tool]
async fn scopes_later(ctx: Context) -> String {
    tokio::time::sleep(Duration::from_millis(500)).await;
    ctx.auth().map(|a| a.scopes().collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

#[tokio::test]
async fn a_handler_sees_its_own_requests_token_not_a_concurrent_ones() {
    use crate::authorization::{Issuer, authorization, good};
    let issuer = Issuer::start().await;
    let server = Server::builder("t", "1").tools(tools![scopes_later]).build().unwrap();
    let endpoint = Endpoint::serve(&server, HttpConfig::default().authorization(authorization(&issuer))).await;
    let narrow = good(&issuer.url, "alice", "notes:read");
    let wide = good(&issuer.url, "alice", "notes:read notes:write");
    let post = |token: &str, session: Option<&str>, body: Value| {
        let bearer = format!("Bearer {token}");
        support::http::post_2025(&endpoint.client, &endpoint.url, session, &[("authorization", bearer.as_str())], &body)
            .send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let opened = post(&narrow, None, init).await.unwrap();
    assert_eq!(opened.status(), StatusCode::OK);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(&narrow, Some(&session), initialized).await.unwrap().status(), StatusCode::ACCEPTED);
    let call = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                "params": {"name": "scopes_later", "arguments": {}}})
    };
    // The narrow token's call starts first; the wide one's lands while it waits.
    let first = post(&narrow, Some(&session), call(1));
    let second = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        post(&wide, Some(&session), call(2)).await
    };
    let (first, second) = tokio::join!(first, second);
    let first = text_of(&json_body(first.unwrap()).await["result"]);
    let second = text_of(&json_body(second.unwrap()).await["result"]);
    assert_eq!(first, "notes:read", "the first call saw another request's token");
    assert_eq!(second, "notes:read notes:write");
}
