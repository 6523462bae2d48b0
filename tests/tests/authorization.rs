//! A protected Streamable HTTP server (`HttpConfig::authorization` with `JwtVerifier`) against
//! tokens minted here, with keys this test controls, published by a tiny issuer served on
//! loopback (RFC 8414 metadata and a JWKS). The bad-token table: each case gets its status and
//! challenge, and the server then serves the next good request on the same session. Then:
//! metadata, scopes and step-up, hidden lists, sessions bound to their subject, 2026-era
//! requests authorized one by one, and the key cache.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};
use typed_mcp::auth::{Authorization, JwtVerifier, TokenError, TokenVerifier};
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;

use crate::support::http::{ACCEPT_BOTH, Endpoint, PROTOCOL, json_body, serve_router, text_of};

const RESOURCE: &str = "https://mcp.test/mcp";

/// The issuer's signing key (P-256), made for these tests.
pub(crate) const KEY_A: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5pziGwZKa5NDLQt4
h8md4rR5XJ7kpjmnNJ8GCmbwcEOhRANCAASFZm2xouyqEXXsSl6ylQ9toRP8VNLf
Tt5uKonh1EhDApSlhNjWQF7DSIO+ldZ08hgxc1o4D12lub4i5h/MayHr
-----END PRIVATE KEY-----
";
const KEY_A_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEhWZtsaLsqhF17EpespUPbaET/FTS
307ebiqJ4dRIQwKUpYTY1kBew0iDvpXWdPIYMXNaOA9dpbm+IuYfzGsh6w==
-----END PUBLIC KEY-----
";
const KEY_A_X: &str = "hWZtsaLsqhF17EpespUPbaET_FTS307ebiqJ4dRIQwI";
const KEY_A_Y: &str = "lKWE2NZAXsNIg76V1nTyGDFzWjgPXaW5viLmH8xrIes";
/// A key the issuer does not publish (until it rotates to it).
const KEY_B: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQggJcFkq8vIlZw6q+u
lU0+9OjDD4PlhsEeLnG4XmrIp92hRANCAARZVFBQ30r4rnBAPBzj2cqqpnv5l87X
qraeDdYOMTluQy84/jXReiJYVp9LOSwgmn6dFPfj7XkmKVdcd4l46Yn8
-----END PRIVATE KEY-----
";
const KEY_B_X: &str = "WVRQUN9K-K5wQDwc49nKqqZ7-ZfO16q2ng3WDjE5bkM";
const KEY_B_Y: &str = "Lzj-NdF6IlhWn0s5LCCafp0U9-PteSYpV1x3iXjpifw";

fn jwk(kid: &str, x: &str, y: &str) -> Value {
    json!({"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid, "x": x, "y": y})
}

/// The in-test authorization server: metadata and keys, counting key fetches.
pub(crate) struct Issuer {
    pub(crate) url: String,
    keys: Arc<std::sync::Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Issuer {
    pub(crate) async fn start() -> Issuer {
        let keys = Arc::new(std::sync::Mutex::new(vec![jwk("a", KEY_A_X, KEY_A_Y)]));
        let fetches = Arc::new(AtomicUsize::new(0));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let url = format!("http://127.0.0.1:{}", listener.local_addr().expect("address").port());
        drop(listener);
        let (metadata_url, k, f) = (url.clone(), keys.clone(), fetches.clone());
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || {
                    let url = metadata_url.clone();
                    async move { json_response(json!({"issuer": url, "jwks_uri": format!("{url}/jwks")})) }
                }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || {
                    let (k, f) = (k.clone(), f.clone());
                    async move {
                        f.fetch_add(1, Ordering::SeqCst);
                        json_response(json!({"keys": *k.lock().unwrap()}))
                    }
                }),
            );
        let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("rebind the issuer's port");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Issuer { url, keys, fetches, _stop: stop }
    }
}

fn json_response(v: Value) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    ([(axum::http::header::CONTENT_TYPE, "application/json")], v.to_string())
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Claims of a good token for `sub` with `scope`.
fn claims(issuer: &str, sub: &str, scope: &str) -> Value {
    claims_for(issuer, sub, scope, RESOURCE)
}

pub(crate) fn claims_for(issuer: &str, sub: &str, scope: &str, audience: &str) -> Value {
    json!({"iss": issuer, "sub": sub, "aud": audience, "exp": now() + 600, "iat": now(), "scope": scope, "client_id": "test-client"})
}

pub(crate) fn sign(claims: &Value, kid: &str, key: &str) -> String {
    sign_typed(claims, kid, key, Some("at+jwt"))
}

/// Signed like an access token of the issuer, with `typ` in the header (none when `None`).
fn sign_typed(claims: &Value, kid: &str, key: &str, typ: Option<&str>) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    header.typ = typ.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_pem(key.as_bytes()).unwrap()).unwrap()
}

pub(crate) fn good(issuer: &str, sub: &str, scope: &str) -> String {
    sign(&claims(issuer, sub, scope), "a", KEY_A)
}

fn b64(v: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

/// Whoami, and a tool that needs `notes:write`.
pub(crate) fn server() -> Server {
    let whoami = ToolDef::new(
        "whoami",
        json!({"type": "object"}).as_object().unwrap().clone(),
        |call: typed_mcp::tool::ToolCall| async move {
            let auth = call.ctx.auth().ok_or_else(|| ErrorObject::internal("no identity"))?;
            Ok::<_, ErrorObject>(format!(
                "{} via {} with [{}]",
                auth.subject(),
                auth.client_id().unwrap_or("?"),
                auth.scopes().collect::<Vec<_>>().join(" ")
            ))
        },
    );
    let write = ToolDef::new("write", json!({"type": "object"}).as_object().unwrap().clone(), |_call| async move {
        Ok::<_, ErrorObject>("written")
    })
    .scopes(["notes:write"]);
    Server::builder("protected-test", "1.0.0").tool(whoami).tool(write).build().unwrap()
}

pub(crate) fn authorization(issuer: &Issuer) -> Authorization {
    Authorization::new(JwtVerifier::new(issuer.url.clone()).refetch_interval(Duration::from_secs(60)))
        .resource(RESOURCE)
        .authorization_server(issuer.url.clone())
        .scopes_supported(["notes:read", "notes:write"])
        .initial_scopes(["notes:read"])
}

/// POSTs `message` with `authorization` (the whole header value) and the session id, if any.
async fn post(
    endpoint: &Endpoint,
    authorization: Option<&str>,
    session: Option<&str>,
    message: &Value,
) -> reqwest::Response {
    post_with_proofs(endpoint, authorization, &[], session, message).await
}

/// POSTs `message` with `authorization`, a `DPoP` header for each of `proofs`, and the
/// session id, if any.
async fn post_with_proofs(
    endpoint: &Endpoint,
    authorization: Option<&str>,
    proofs: &[String],
    session: Option<&str>,
    message: &Value,
) -> reqwest::Response {
    let mut request = endpoint
        .client
        .post(&endpoint.url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, ACCEPT_BOTH)
        .header("mcp-protocol-version", PROTOCOL)
        .body(message.to_string());
    if let Some(a) = authorization {
        request = request.header("authorization", a);
    }
    for p in proofs {
        request = request.header("dpop", p);
    }
    if let Some(s) = session {
        request = request.header("mcp-session-id", s);
    }
    request.send().await.expect("POST")
}

/// Opens a session with `token`; returns its id.
async fn open(endpoint: &Endpoint, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(endpoint, Some(&format!("Bearer {token}")), None, &init).await;
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let ack = post(
        endpoint,
        Some(&format!("Bearer {token}")),
        Some(&id),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(ack.status(), StatusCode::ACCEPTED);
    id
}

fn call(tool: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
}

fn challenge(response: &reqwest::Response) -> String {
    response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

/// One bad-token case: the `Authorization` header it sends (made from the issuer's URL), the
/// status and the `error` of the challenge it must get (`None`: no `error` attribute).
struct Case {
    name: &'static str,
    header: fn(&str) -> Option<String>,
    status: StatusCode,
    error: Option<&'static str>,
}

const BAD_TOKENS: &[Case] = &[
    Case { name: "no Authorization header", header: |_| None, status: StatusCode::UNAUTHORIZED, error: None },
    Case {
        name: "Basic credentials",
        header: |_| Some("Basic YWxpY2U6c2VjcmV0".into()),
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_request"),
    },
    Case {
        name: "Bearer without a token",
        header: |_| Some("Bearer ".into()),
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_request"),
    },
    Case {
        name: "not a JWT",
        header: |_| Some("Bearer not.a.jwt".into()),
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "alg: none",
        header: |iss| {
            let header = json!({"alg": "none", "typ": "at+jwt", "kid": "a"});
            Some(format!("Bearer {}.{}.", b64(&header), b64(&claims(iss, "alice", "notes:read"))))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "HS256 signed with the issuer's public key",
        header: |iss| {
            let mut header = Header::new(Algorithm::HS256);
            header.kid = Some("a".into());
            let key = EncodingKey::from_secret(KEY_A_PUBLIC.as_bytes());
            Some(format!(
                "Bearer {}",
                jsonwebtoken::encode(&header, &claims(iss, "alice", "notes:read"), &key).unwrap()
            ))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "signed with another key under the issuer's kid",
        header: |iss| Some(format!("Bearer {}", sign(&claims(iss, "alice", "notes:read"), "a", KEY_B))),
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "expired",
        header: |iss| {
            let mut c = claims(iss, "alice", "notes:read");
            c["exp"] = json!(now() - 3600);
            Some(format!("Bearer {}", sign(&c, "a", KEY_A)))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "not yet valid",
        header: |iss| {
            let mut c = claims(iss, "alice", "notes:read");
            c["nbf"] = json!(now() + 3600);
            Some(format!("Bearer {}", sign(&c, "a", KEY_A)))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "wrong iss",
        header: |_| Some(format!("Bearer {}", good("https://evil.example", "alice", "notes:read"))),
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "wrong aud",
        header: |iss| {
            let mut c = claims(iss, "alice", "notes:read");
            c["aud"] = json!("https://other.test/mcp");
            Some(format!("Bearer {}", sign(&c, "a", KEY_A)))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "no subject",
        header: |iss| {
            let mut c = claims(iss, "alice", "notes:read");
            c.as_object_mut().unwrap().remove("sub");
            Some(format!("Bearer {}", sign(&c, "a", KEY_A)))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "typ JWT (an ID token or another JWT of the issuer, not an access token)",
        header: |iss| {
            Some(format!("Bearer {}", sign_typed(&claims(iss, "alice", "notes:read"), "a", KEY_A, Some("JWT"))))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "no typ",
        header: |iss| Some(format!("Bearer {}", sign_typed(&claims(iss, "alice", "notes:read"), "a", KEY_A, None))),
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "unknown kid",
        header: |iss| Some(format!("Bearer {}", sign(&claims(iss, "alice", "notes:read"), "b", KEY_B))),
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_token"),
    },
    Case {
        name: "a 100 KiB token",
        header: |iss| {
            let mut c = claims(iss, "alice", "notes:read");
            c["padding"] = json!("x".repeat(100 * 1024));
            Some(format!("Bearer {}", sign(&c, "a", KEY_A)))
        },
        status: StatusCode::UNAUTHORIZED,
        error: Some("invalid_request"),
    },
    Case {
        name: "a valid token of another subject on the session",
        header: |iss| Some(format!("Bearer {}", good(iss, "mallory", "notes:read notes:write"))),
        status: StatusCode::NOT_FOUND,
        error: None,
    },
];

#[tokio::test]
async fn bad_tokens_get_their_status_and_challenge_and_the_server_keeps_serving() {
    let issuer = Issuer::start().await;
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(authorization(&issuer))).await;
    let alice = format!("Bearer {}", good(&issuer.url, "alice", "notes:read"));
    let session = open(&endpoint, alice.trim_start_matches("Bearer ")).await;
    let metadata = "resource_metadata=\"https://mcp.test/.well-known/oauth-protected-resource/mcp\"";
    for case in BAD_TOKENS {
        let header = (case.header)(&issuer.url);
        let response = post(&endpoint, header.as_deref(), Some(&session), &call("whoami")).await;
        assert_eq!(response.status(), case.status, "{}", case.name);
        let www = challenge(&response);
        if case.status == StatusCode::UNAUTHORIZED {
            assert!(www.starts_with("Bearer "), "{}: {www}", case.name);
            assert!(www.contains(metadata), "{}: {www}", case.name);
            assert!(www.contains("scope=\"notes:read\""), "{}: {www}", case.name);
            match case.error {
                Some(error) => assert!(www.contains(&format!("error=\"{error}\"")), "{}: {www}", case.name),
                None => assert!(!www.contains("error="), "{}: {www}", case.name),
            }
            // Nothing beyond `error` and a fixed description: no JSON-RPC, no reason.
            let body = json_body(response).await;
            assert_eq!(body.as_object().unwrap().len(), 2, "{}: {body}", case.name);
            assert!(body.get("jsonrpc").is_none(), "{}: {body}", case.name);
        }
        let next = json_body(post(&endpoint, Some(&alice), Some(&session), &call("whoami")).await).await;
        assert_eq!(text_of(&next["result"]), "alice via test-client with [notes:read]", "after {}: {next}", case.name);
    }
    // Unknown key ids made the server look at the issuer's keys once at most (the refetch
    // interval is a minute): the first good token fetched them.
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_issuer_that_does_not_set_typ_is_trusted_only_with_the_opt_out() {
    let issuer = Issuer::start().await;
    let untyped = sign_typed(&claims(&issuer.url, "alice", "notes:read"), "a", KEY_A, Some("JWT"));
    let strict = JwtVerifier::new(issuer.url.clone());
    assert!(matches!(strict.verify(&untyped, RESOURCE).await, Err(TokenError::Invalid(_))));
    let lenient = JwtVerifier::new(issuer.url.clone()).accept_any_token_type();
    let info = lenient.verify(&untyped, RESOURCE).await.unwrap();
    assert_eq!(info.subject(), "alice");
    // The opt-out relaxes `typ` only: everything else is still checked.
    let mut elsewhere = claims(&issuer.url, "alice", "notes:read");
    elsewhere["aud"] = json!("https://other.test/mcp");
    let elsewhere = sign_typed(&elsewhere, "a", KEY_A, None);
    assert!(matches!(lenient.verify(&elsewhere, RESOURCE).await, Err(TokenError::Invalid(_))));
    // Served: the lenient verifier lets the untyped token open a session.
    let auth = Authorization::new(JwtVerifier::new(issuer.url.clone()).accept_any_token_type())
        .resource(RESOURCE)
        .authorization_server(issuer.url.clone());
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(auth)).await;
    let session = open(&endpoint, &untyped).await;
    let body =
        json_body(post(&endpoint, Some(&format!("Bearer {untyped}")), Some(&session), &call("whoami")).await).await;
    assert_eq!(text_of(&body["result"]), "alice via test-client with [notes:read]", "{body}");
}

#[tokio::test]
async fn metadata_names_the_resource_the_issuer_and_the_scopes() {
    let issuer = Issuer::start().await;
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(authorization(&issuer))).await;
    let base = endpoint.url.trim_end_matches("/mcp").to_owned();
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let response = endpoint.client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let doc = json_body(response).await;
        assert_eq!(doc["resource"], RESOURCE);
        assert_eq!(doc["authorization_servers"], json!([issuer.url]));
        assert_eq!(doc["scopes_supported"], json!(["notes:read", "notes:write"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
}

#[tokio::test]
async fn a_call_without_its_scope_is_403_insufficient_scope_and_a_wider_token_steps_up() {
    let issuer = Issuer::start().await;
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(authorization(&issuer))).await;
    let reader = good(&issuer.url, "alice", "notes:read");
    let session = open(&endpoint, &reader).await;
    let response = post(&endpoint, Some(&format!("Bearer {reader}")), Some(&session), &call("write")).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let www = challenge(&response);
    assert!(www.contains("error=\"insufficient_scope\""), "{www}");
    assert!(www.contains("scope=\"notes:read notes:write\""), "{www}");
    assert!(www.contains("resource_metadata="), "{www}");
    // The same user with a token that has the scope: same session, the call goes through.
    let writer = good(&issuer.url, "alice", "notes:read notes:write");
    let response = post(&endpoint, Some(&format!("Bearer {writer}")), Some(&session), &call("write")).await;
    let body = json_body(response).await;
    assert_eq!(text_of(&body["result"]), "written", "{body}");
    // tools/list shows every tool by default.
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
    let body = json_body(post(&endpoint, Some(&format!("Bearer {reader}")), Some(&session), &list).await).await;
    assert_eq!(body["result"]["tools"].as_array().unwrap().len(), 2, "{body}");
}

#[tokio::test]
async fn lists_can_hide_what_the_token_cannot_call() {
    let issuer = Issuer::start().await;
    let config = HttpConfig::default().authorization(authorization(&issuer).hide_unauthorized(true));
    let endpoint = Endpoint::serve(&server(), config).await;
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
    let names = |body: &Value| -> Vec<String> {
        body["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let reader = good(&issuer.url, "alice", "notes:read");
    let session = open(&endpoint, &reader).await;
    let body = json_body(post(&endpoint, Some(&format!("Bearer {reader}")), Some(&session), &list).await).await;
    assert_eq!(names(&body), ["whoami"]);
    let writer = good(&issuer.url, "alice", "notes:read notes:write");
    let body = json_body(post(&endpoint, Some(&format!("Bearer {writer}")), Some(&session), &list).await).await;
    assert_eq!(names(&body), ["whoami", "write"]);
}

#[tokio::test]
async fn requests_of_2026_are_authorized_one_by_one() {
    let issuer = Issuer::start().await;
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(authorization(&issuer))).await;
    let request = |tool: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}})
    };
    let send = |token: Option<String>, tool: &'static str| {
        let mut r = endpoint
            .client
            .post(&endpoint.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .body(request(tool).to_string());
        if let Some(t) = token {
            r = r.header("authorization", format!("Bearer {t}"));
        }
        r.send()
    };
    let response = send(None, "whoami").await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = send(Some(good(&issuer.url, "bob", "notes:read")), "whoami").await.unwrap();
    let body = json_body(response).await;
    assert_eq!(text_of(&body["result"]), "bob via test-client with [notes:read]", "{body}");
    let response = send(Some(good(&issuer.url, "bob", "notes:read")), "write").await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = send(Some(good(&issuer.url, "carol", "notes:write")), "write").await.unwrap();
    assert_eq!(text_of(&json_body(response).await["result"]), "written");
}

#[tokio::test]
async fn a_2026_era_request_is_admitted_meta_then_scopes_then_headers() {
    let issuer = Issuer::start().await;
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(authorization(&issuer))).await;
    let send = |token: String, meta: &str, name_header: Option<&'static str>| {
        let body = format!(
            r#"{{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {{"name": "write", "arguments": {{}}, "_meta": {meta}}}}}"#
        );
        let mut r = endpoint
            .client
            .post(&endpoint.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("authorization", format!("Bearer {token}"))
            .body(body);
        if let Some(name) = name_header {
            r = r.header("mcp-name", name);
        }
        r.send()
    };
    let meta = r#"{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}"#;
    let reader = good(&issuer.url, "bob", "notes:read");
    // A token without the tool's scope is told to step up before its headers are looked at,
    // and before what its `_meta` says is read.
    for (meta, name) in
        [(meta, None), (meta, Some("other")), (meta.replace("{}}", "\"none\"}").as_str(), Some("write"))]
    {
        let response = send(reader.clone(), meta, name).await.unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{meta} {name:?}");
        assert!(challenge(&response).contains("error=\"insufficient_scope\""));
    }
    // A `_meta` naming a member twice is refused before the token's scopes.
    let twice = meta.replace("{}}", r#"{}, "io.modelcontextprotocol/clientCapabilities": {}}"#);
    let response = send(reader.clone(), &twice, Some("write")).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body = json_body(response).await;
    assert_eq!(body["id"], 1, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("duplicate"), "{body}");
    // With the scope, the missing header is what is refused.
    let writer = good(&issuer.url, "carol", "notes:write");
    let response = send(writer, meta, None).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body = json_body(response).await;
    assert!(body["error"]["message"].as_str().unwrap().contains("Mcp-Name"), "{body}");
}

#[tokio::test]
async fn a_rotated_key_is_fetched_when_a_token_names_it_at_most_once_per_interval() {
    let issuer = Issuer::start().await;
    let verifier = JwtVerifier::new(issuer.url.clone()).refetch_interval(Duration::from_millis(300));
    let config = HttpConfig::default().authorization(Authorization::new(verifier).resource(RESOURCE));
    let endpoint = Endpoint::serve(&server(), config).await;
    let rotated = format!("Bearer {}", sign(&claims(&issuer.url, "alice", ""), "b", KEY_B));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(post(&endpoint, Some(&rotated), None, &init).await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    // The issuer rotates; within the interval, unknown key ids do not make the server ask again.
    issuer.keys.lock().unwrap().push(jwk("b", KEY_B_X, KEY_B_Y));
    for _ in 0..5 {
        assert_eq!(post(&endpoint, Some(&rotated), None, &init).await.status(), StatusCode::UNAUTHORIZED);
    }
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(post(&endpoint, Some(&rotated), None, &init).await.status(), StatusCode::OK);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_unreachable_issuer_is_503_not_a_pass() {
    // Nothing listens there.
    let (dead, stop) = serve_router(axum::Router::new()).await;
    drop(stop);
    let dead = dead.trim_end_matches("/mcp").to_owned();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let config =
        HttpConfig::default().authorization(Authorization::new(JwtVerifier::new(dead.clone())).resource(RESOURCE));
    let endpoint = Endpoint::serve(&server(), config).await;
    let token = format!("Bearer {}", good(&dead, "alice", "notes:read"));
    let response = post(&endpoint, Some(&token), None, &call("whoami")).await;
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().contains_key("retry-after"));
}

/// The `protected` example, as the issue's acceptance list has it, with tokens from an issuer
/// it trusts (`--issuer`, keys from its metadata).
#[tokio::test]
async fn the_protected_example_with_tokens_from_its_issuer() {
    let issuer = Issuer::start().await;
    let port = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
    let binary = tests::interop::example_binary("protected");
    let mut child = tokio::process::Command::new(&binary)
        .args(["--port", &port.to_string(), "--issuer", &issuer.url])
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start protected");
    let started = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "protected did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let endpoint = Endpoint::at(port);
    let resource = endpoint.url.clone();
    let token = |sub: &str, scope: &str| sign(&claims_for(&issuer.url, sub, scope, &resource), "a", KEY_A);

    // No token: 401 naming the metadata, which names the issuer and the resource.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(&endpoint, None, None, &init).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let www = challenge(&response);
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    assert!(www.contains(&format!("resource_metadata=\"{metadata}\"")), "{www}");
    let doc = json_body(endpoint.client.get(&metadata).send().await.unwrap()).await;
    assert_eq!(doc["resource"], resource.as_str());
    assert_eq!(doc["authorization_servers"], json!([issuer.url]));
    assert_eq!(doc["scopes_supported"], json!(["notes:read", "notes:write"]));

    // whoami returns the subject.
    let reader = token("alice", "notes:read");
    let session = open(&endpoint, &reader).await;
    let bearer = format!("Bearer {reader}");
    let body = json_body(post(&endpoint, Some(&bearer), Some(&session), &call("whoami")).await).await;
    assert_eq!(text_of(&body["result"]), "alice", "{body}");

    // write_note with only notes:read: 403 insufficient_scope naming notes:write.
    let write = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "write_note", "arguments": {"title": "t", "body": "b"}}});
    let response = post(&endpoint, Some(&bearer), Some(&session), &write).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let www = challenge(&response);
    assert!(www.contains("error=\"insufficient_scope\"") && www.contains("notes:write"), "{www}");

    // Forged, expired, wrong-audience and `alg: none` tokens: 401.
    let mut expired = claims_for(&issuer.url, "alice", "notes:read", &resource);
    expired["exp"] = json!(now() - 3600);
    let none = format!("{}.{}.", b64(&json!({"alg": "none"})), b64(&claims_for(&issuer.url, "alice", "", &resource)));
    for (name, bad) in [
        ("forged", sign(&claims_for(&issuer.url, "alice", "notes:read", &resource), "a", KEY_B)),
        ("expired", sign(&expired, "a", KEY_A)),
        ("wrong audience", sign(&claims_for(&issuer.url, "alice", "notes:read", "http://other/mcp"), "a", KEY_A)),
        ("alg none", none),
    ] {
        let response = post(&endpoint, Some(&format!("Bearer {bad}")), Some(&session), &call("whoami")).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{name}");
        assert!(challenge(&response).contains("error=\"invalid_token\""), "{name}");
    }
    let body = json_body(post(&endpoint, Some(&bearer), Some(&session), &call("whoami")).await).await;
    assert_eq!(text_of(&body["result"]), "alice", "{body}");
    let _ = child.kill().await;
}

#[tokio::test]
async fn introspection_accepts_active_tokens_for_this_resource_and_caches_answers() {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: String| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                let answer = if body.contains("token=opaque-alice&") || body.ends_with("token=opaque-alice") {
                    json!({"active": true, "sub": "alice", "aud": RESOURCE, "scope": "notes:read",
                           "client_id": "introspected", "exp": now() + 600})
                } else if body.contains("token=opaque-elsewhere") {
                    json!({"active": true, "sub": "alice", "aud": "https://other.test/mcp", "exp": now() + 600})
                } else if body.contains("token=opaque-refresh") {
                    // An active refresh token of the same user, for this resource.
                    json!({"active": true, "sub": "alice", "aud": RESOURCE, "scope": "notes:read",
                           "client_id": "introspected", "exp": now() + 600, "token_type": "refresh_token"})
                } else if body.contains("token=opaque-typed") {
                    json!({"active": true, "sub": "alice", "aud": RESOURCE, "scope": "notes:read",
                           "client_id": "introspected", "exp": now() + 600, "token_type": "Bearer"})
                } else {
                    json!({"active": false})
                };
                json_response(answer)
            }
        }),
    );
    // serve_router answers at /mcp: that is the introspection endpoint here.
    let (introspection, _stop) = serve_router(app).await;
    let verifier =
        typed_mcp::auth::IntrospectionVerifier::new(introspection).client_credentials("resource-server", "secret");
    let config = HttpConfig::default().authorization(Authorization::new(verifier).resource(RESOURCE));
    let endpoint = Endpoint::serve(&server(), config).await;
    let session = open(&endpoint, "opaque-alice").await;
    for _ in 0..3 {
        let body = json_body(post(&endpoint, Some("Bearer opaque-alice"), Some(&session), &call("whoami")).await).await;
        assert_eq!(text_of(&body["result"]), "alice via introspected with [notes:read]", "{body}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 1, "the answer is cached");
    let body = json_body(post(&endpoint, Some("Bearer opaque-typed"), Some(&session), &call("whoami")).await).await;
    assert_eq!(text_of(&body["result"]), "alice via introspected with [notes:read]", "{body}");
    for bad in ["Bearer opaque-revoked", "Bearer opaque-elsewhere", "Bearer opaque-refresh"] {
        let response = post(&endpoint, Some(bad), Some(&session), &call("whoami")).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{bad}");
        assert!(challenge(&response).contains("error=\"invalid_token\""));
    }
}

// ----- DPoP (RFC 9449) -----

/// The client's DPoP key: `KEY_B` (the issuer never publishes it in these tests).
pub(crate) fn client_jwk() -> Value {
    json!({"kty": "EC", "crv": "P-256", "x": KEY_B_X, "y": KEY_B_Y})
}

pub(crate) fn thumbprint(jwk: &Value) -> String {
    let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwk.clone()).unwrap();
    jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
}

/// A token for `sub` bound to the key whose thumbprint is `jkt`.
pub(crate) fn bound(issuer: &str, sub: &str, jkt: &str) -> String {
    let mut c = claims(issuer, sub, "notes:read");
    c["cnf"] = json!({"jkt": jkt});
    sign(&c, "a", KEY_A)
}

fn ath(token: &str) -> String {
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token.as_bytes()))
}

/// A fresh, valid proof of `KEY_B` for POST `RESOURCE` with `token`, changed by `tweak`.
pub(crate) fn proof_with(token: &str, tweak: impl FnOnce(&mut Value, &mut Value)) -> String {
    let mut header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": client_jwk()});
    let mut claims = json!({"jti": uuid(), "htm": "POST", "htu": RESOURCE, "iat": now(), "ath": ath(token)});
    tweak(&mut header, &mut claims);
    // Signed over exactly the header the case asks for (private parameters, odd `typ`), so
    // that only what the case changes is wrong.
    let signing_input = format!("{}.{}", b64(&header), b64(&claims));
    let key = EncodingKey::from_ec_pem(KEY_B.as_bytes()).unwrap();
    let signature = jsonwebtoken::crypto::sign(signing_input.as_bytes(), &key, Algorithm::ES256).unwrap();
    format!("{signing_input}.{signature}")
}

fn proof(token: &str) -> String {
    proof_with(token, |_, _| {})
}

/// A `jti` not used before in this process.
fn uuid() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    format!("{nanos:x}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// POSTs `message` with `DPoP <token>` and each of `proofs`.
async fn post_dpop(
    endpoint: &Endpoint,
    token: &str,
    proofs: &[String],
    session: Option<&str>,
    message: &Value,
) -> reqwest::Response {
    post_with_proofs(endpoint, Some(&format!("DPoP {token}")), proofs, session, message).await
}

/// Opens a session with a DPoP-bound `token`; returns its id.
async fn open_dpop(endpoint: &Endpoint, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post_dpop(endpoint, token, &[proof(token)], None, &init).await;
    assert_eq!(response.status(), StatusCode::OK, "{}", challenge(&response));
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ack = post_dpop(endpoint, token, &[proof(token)], Some(&id), &initialized).await;
    assert_eq!(ack.status(), StatusCode::ACCEPTED);
    id
}

/// One bad DPoP request: what it sends (token, proofs) and the challenge `error` it must get.
struct DpopCase {
    name: &'static str,
    request: fn(&str, &str) -> (String, Vec<String>),
    error: &'static str,
}

const BAD_DPOP: &[DpopCase] = &[
    DpopCase { name: "no proof", request: |_, t| (t.into(), vec![]), error: "invalid_dpop_proof" },
    DpopCase { name: "two proofs", request: |_, t| (t.into(), vec![proof(t), proof(t)]), error: "invalid_dpop_proof" },
    DpopCase {
        name: "malformed proof",
        request: |_, t| (t.into(), vec!["not.a.jwt".into()]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "proof not base64",
        request: |_, t| (t.into(), vec!["%%%.%%%.%%%".into()]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "typ JWT",
        request: |_, t| (t.into(), vec![proof_with(t, |h, _| h["typ"] = json!("JWT"))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "alg none",
        request: |_, t| {
            let header = json!({"typ": "dpop+jwt", "alg": "none", "jwk": client_jwk()});
            let claims = json!({"jti": uuid(), "htm": "POST", "htu": RESOURCE, "iat": now(), "ath": ath(t)});
            (t.into(), vec![format!("{}.{}.", b64(&header), b64(&claims))])
        },
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "HS256 with the public key as secret",
        request: |_, t| {
            let header = Header { typ: Some("dpop+jwt".into()), ..Header::new(Algorithm::HS256) };
            let claims = json!({"jti": uuid(), "htm": "POST", "htu": RESOURCE, "iat": now(), "ath": ath(t)});
            let proof = jsonwebtoken::encode(&header, &claims, &EncodingKey::from_secret(KEY_B_X.as_bytes())).unwrap();
            (t.into(), vec![proof])
        },
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "private key in the jwk",
        request: |_, t| {
            (t.into(), vec![proof_with(t, |h, _| h["jwk"]["d"] = json!("5pziGwZKa5NDLQt4h8md4rR5XJ7kpjmnNJ8GCmbwcEM"))])
        },
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "another key's jwk (signature does not verify)",
        request: |_, t| {
            (
                t.into(),
                vec![proof_with(t, |h, _| h["jwk"] = json!({"kty": "EC", "crv": "P-256", "x": KEY_A_X, "y": KEY_A_Y}))],
            )
        },
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "ath of another token",
        request: |_, t| (t.into(), vec![proof_with(t, |_, c| c["ath"] = json!(ath("another")))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "no ath",
        request: |_, t| (t.into(), vec![proof_with(t, |_, c| drop(c.as_object_mut().unwrap().remove("ath")))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "htm GET on a POST",
        request: |_, t| (t.into(), vec![proof_with(t, |_, c| c["htm"] = json!("GET"))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "htu of another server",
        request: |_, t| (t.into(), vec![proof_with(t, |_, c| c["htu"] = json!("https://other.test/mcp"))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "stale iat",
        request: |_, t| (t.into(), vec![proof_with(t, |_, c| c["iat"] = json!(now() - 600))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "iat in the future",
        request: |_, t| (t.into(), vec![proof_with(t, |_, c| c["iat"] = json!(now() + 600))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "no jti",
        request: |_, t| (t.into(), vec![proof_with(t, |_, c| drop(c.as_object_mut().unwrap().remove("jti")))]),
        error: "invalid_dpop_proof",
    },
    DpopCase {
        name: "token bound to another key (cnf.jkt)",
        request: |iss, _| {
            let other =
                bound(iss, "alice", &thumbprint(&json!({"kty": "EC", "crv": "P-256", "x": KEY_A_X, "y": KEY_A_Y})));
            let p = proof(&other);
            (other, vec![p])
        },
        error: "invalid_token",
    },
    DpopCase {
        name: "unbound token with the DPoP scheme",
        request: |iss, _| {
            let plain = good(iss, "alice", "notes:read");
            let p = proof(&plain);
            (plain, vec![p])
        },
        error: "invalid_token",
    },
];

#[tokio::test]
async fn bad_dpop_proofs_get_401_and_the_dpop_challenge_and_the_server_keeps_serving() {
    let issuer = Issuer::start().await;
    let auth = authorization(&issuer).dpop(typed_mcp::auth::Dpop::new());
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(auth)).await;
    let token = bound(&issuer.url, "alice", &thumbprint(&client_jwk()));
    let session = open_dpop(&endpoint, &token).await;
    for case in BAD_DPOP {
        let (sent, proofs) = (case.request)(&issuer.url, &token);
        let response = post_dpop(&endpoint, &sent, &proofs, Some(&session), &call("whoami")).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{}", case.name);
        let www = challenge(&response);
        let (bearer, dpop) = www.split_once(", DPoP ").unwrap_or_else(|| panic!("{}: {www}", case.name));
        assert!(bearer.starts_with("Bearer resource_metadata="), "{}: {www}", case.name);
        assert!(!bearer.contains("error="), "{}: {www}", case.name);
        assert!(dpop.starts_with("algs=\"ES256 ES384 RS256 PS256\""), "{}: {www}", case.name);
        assert!(dpop.contains(&format!("error=\"{}\"", case.error)), "{}: {www}", case.name);
        let body = json_body(response).await;
        assert_eq!(body["error"], case.error, "{}: {body}", case.name);
        let next = post_dpop(&endpoint, &token, &[proof(&token)], Some(&session), &call("whoami")).await;
        let next = json_body(next).await;
        assert_eq!(text_of(&next["result"]), "alice via test-client with [notes:read]", "after {}: {next}", case.name);
    }

    // A proof is good once: the same one again is a replay.
    let once = proof(&token);
    let first = post_dpop(&endpoint, &token, std::slice::from_ref(&once), Some(&session), &call("whoami")).await;
    assert_eq!(first.status(), StatusCode::OK);
    let replay = post_dpop(&endpoint, &token, &[once], Some(&session), &call("whoami")).await;
    assert_eq!(replay.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&replay).contains("error=\"invalid_dpop_proof\""));

    // A bound token sent as a bearer token is refused; an unbound bearer token still works.
    let response = post(&endpoint, Some(&format!("Bearer {token}")), Some(&session), &call("whoami")).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).starts_with("Bearer resource_metadata="), "{}", challenge(&response));
    let bob = good(&issuer.url, "bob", "notes:read");
    let bob_session = open(&endpoint, &bob).await;
    let body =
        json_body(post(&endpoint, Some(&format!("Bearer {bob}")), Some(&bob_session), &call("whoami")).await).await;
    assert_eq!(text_of(&body["result"]), "bob via test-client with [notes:read]", "{body}");
}

/// A fresh proof of the P-256 key `pem` (public part `jwk`) for POST `RESOURCE` with `token`.
fn proof_of(token: &str, pem: &str, jwk: &Value) -> String {
    let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk});
    let claims = json!({"jti": uuid(), "htm": "POST", "htu": RESOURCE, "iat": now(), "ath": ath(token)});
    let signing_input = format!("{}.{}", b64(&header), b64(&claims));
    let key = EncodingKey::from_ec_pem(pem.as_bytes()).unwrap();
    let signature = jsonwebtoken::crypto::sign(signing_input.as_bytes(), &key, Algorithm::ES256).unwrap();
    format!("{signing_input}.{signature}")
}

#[tokio::test]
async fn one_dpop_client_filling_the_replay_cache_locks_out_no_other() {
    let issuer = Issuer::start().await;
    // 50 proofs at once, 5 per client (a tenth, the default share).
    let cache = typed_mcp::auth::MemoryReplayCache::with_capacity(50);
    let auth = authorization(&issuer).dpop(typed_mcp::auth::Dpop::new().replay_cache(cache));
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(auth)).await;
    let mallory = bound(&issuer.url, "mallory", &thumbprint(&client_jwk()));
    let session = open_dpop(&endpoint, &mallory).await;
    let mut accepted = 2; // the initialize request and its notification
    let mut refused = 0;
    for _ in 0..60 {
        let response = post_dpop(&endpoint, &mallory, &[proof(&mallory)], Some(&session), &call("whoami")).await;
        match response.status() {
            StatusCode::OK => accepted += 1,
            StatusCode::SERVICE_UNAVAILABLE => refused += 1,
            other => panic!("{other}"),
        }
    }
    assert_eq!((accepted, refused), (5, 57), "mallory keeps only her share");
    // Another client, with a token bound to its own key, is served as usual.
    let alice_jwk = json!({"kty": "EC", "crv": "P-256", "x": KEY_A_X, "y": KEY_A_Y});
    let alice = bound(&issuer.url, "alice", &thumbprint(&alice_jwk));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post_dpop(&endpoint, &alice, &[proof_of(&alice, KEY_A, &alice_jwk)], None, &init).await;
    assert_eq!(response.status(), StatusCode::OK);
    let alice_session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let proofs = [proof_of(&alice, KEY_A, &alice_jwk)];
    assert_eq!(post_dpop(&endpoint, &alice, &proofs, Some(&alice_session), &initialized).await.status(), 202);
    let proofs = [proof_of(&alice, KEY_A, &alice_jwk)];
    let body = json_body(post_dpop(&endpoint, &alice, &proofs, Some(&alice_session), &call("whoami")).await).await;
    assert_eq!(text_of(&body["result"]), "alice via test-client with [notes:read]", "{body}");
}

#[tokio::test]
async fn required_dpop_refuses_bearer_tokens_and_nonces_round_trip() {
    let issuer = Issuer::start().await;
    let auth = authorization(&issuer).dpop(typed_mcp::auth::Dpop::new().require(true).nonces(None));
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(auth)).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});

    // No token, then a bearer token: only the DPoP challenge.
    for authorization in [None, Some(format!("Bearer {}", good(&issuer.url, "bob", "notes:read")))] {
        let response = post(&endpoint, authorization.as_deref(), None, &init).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let www = challenge(&response);
        assert!(www.starts_with("DPoP algs=\"ES256 ES384 RS256 PS256\", resource_metadata="), "{www}");
        assert!(!www.contains("Bearer"), "{www}");
    }

    // Without a nonce: 401 use_dpop_nonce with one; with it, served.
    let token = bound(&issuer.url, "alice", &thumbprint(&client_jwk()));
    let response = post_dpop(&endpoint, &token, &[proof(&token)], None, &init).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&response).contains("error=\"use_dpop_nonce\""), "{}", challenge(&response));
    let nonce = response.headers()["dpop-nonce"].to_str().unwrap().to_owned();
    let with_nonce = |n: &str| {
        let n = n.to_owned();
        proof_with(&token, move |_, c| c["nonce"] = json!(n))
    };
    let wrong = post_dpop(&endpoint, &token, &[with_nonce("made-up")], None, &init).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.headers().contains_key("dpop-nonce"));
    let response = post_dpop(&endpoint, &token, &[with_nonce(&nonce)], None, &init).await;
    assert_eq!(response.status(), StatusCode::OK, "{}", challenge(&response));
}

#[tokio::test]
async fn a_proof_accepted_by_one_instance_is_refused_by_another_sharing_redis() {
    let redis = typed_mcp_redis::testing::RedisServer::start();
    let issuer = Issuer::start().await;
    let instance = || {
        let shared = typed_mcp_redis::Redis::connect(&redis.url()).expect("redis").replay_cache();
        authorization(&issuer).dpop(typed_mcp::auth::Dpop::new().replay_cache(shared))
    };
    let one = Endpoint::serve(&server(), HttpConfig::default().authorization(instance()).sessionless(true)).await;
    let two = Endpoint::serve(&server(), HttpConfig::default().authorization(instance()).sessionless(true)).await;
    let token = bound(&issuer.url, "alice", &thumbprint(&client_jwk()));
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let once = proof(&token);
    let first = post_dpop(&one, &token, std::slice::from_ref(&once), None, &list).await;
    assert_eq!(first.status(), StatusCode::OK, "{}", challenge(&first));
    for endpoint in [&two, &one] {
        let replay = post_dpop(endpoint, &token, std::slice::from_ref(&once), None, &list).await;
        assert_eq!(replay.status(), StatusCode::UNAUTHORIZED);
        assert!(challenge(&replay).contains("error=\"invalid_dpop_proof\""), "{}", challenge(&replay));
    }
    let fresh = post_dpop(&two, &token, &[proof(&token)], None, &list).await;
    assert_eq!(fresh.status(), StatusCode::OK, "{}", challenge(&fresh));
    let keys = typed_mcp_redis::testing::keys(&redis.url(), "mcp:dpop:*").await;
    assert_eq!(keys.len(), 2, "{keys:?}");
}

#[tokio::test]
async fn a_bound_token_is_no_bearer_token_on_a_server_without_dpop() {
    let issuer = Issuer::start().await;
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(authorization(&issuer))).await;
    let alice = good(&issuer.url, "alice", "notes:read");
    let session = open(&endpoint, &alice).await;
    // A token bound to the client's key, stolen and replayed without the key.
    let stolen = bound(&issuer.url, "alice", &thumbprint(&client_jwk()));
    let response = post(&endpoint, Some(&format!("Bearer {stolen}")), Some(&session), &call("whoami")).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let www = challenge(&response);
    assert!(www.starts_with("Bearer ") && www.contains("error=\"invalid_token\""), "{www}");
    // Nor does it open a session of its own.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let response = post(&endpoint, Some(&format!("Bearer {stolen}")), None, &init).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // The server keeps serving the bearer token it should.
    let body =
        json_body(post(&endpoint, Some(&format!("Bearer {alice}")), Some(&session), &call("whoami")).await).await;
    assert_eq!(text_of(&body["result"]), "alice via test-client with [notes:read]", "{body}");
}

#[tokio::test]
async fn introspected_tokens_are_bound_by_the_answers_cnf() {
    let jkt = thumbprint(&client_jwk());
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: String| {
            let jkt = jkt.clone();
            async move {
                let answer = if body.contains("token=opaque-bound") {
                    json!({"active": true, "sub": "alice", "aud": RESOURCE, "scope": "notes:read",
                           "client_id": "introspected", "exp": now() + 600, "cnf": {"jkt": jkt}, "token_type": "DPoP"})
                } else {
                    json!({"active": false})
                };
                json_response(answer)
            }
        }),
    );
    let (introspection, _stop) = serve_router(app).await;
    let verifier = typed_mcp::auth::IntrospectionVerifier::new(introspection).client_credentials("rs", "secret");
    let auth = Authorization::new(verifier).resource(RESOURCE).dpop(typed_mcp::auth::Dpop::new());
    let endpoint = Endpoint::serve(&server(), HttpConfig::default().authorization(auth)).await;
    let session = open_dpop(&endpoint, "opaque-bound").await;
    let body = json_body(
        post_dpop(&endpoint, "opaque-bound", &[proof("opaque-bound")], Some(&session), &call("whoami")).await,
    )
    .await;
    assert_eq!(text_of(&body["result"]), "alice via introspected with [notes:read]", "{body}");
    // Without the key: as a bearer token, or with a proof naming another key than its signer.
    let response = post(&endpoint, Some("Bearer opaque-bound"), Some(&session), &call("whoami")).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let other =
        proof_with("opaque-bound", |h, _| h["jwk"] = json!({"kty": "EC", "crv": "P-256", "x": KEY_A_X, "y": KEY_A_Y}));
    let response = post_dpop(&endpoint, "opaque-bound", &[other], Some(&session), &call("whoami")).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}
