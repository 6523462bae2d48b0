//! The client's OAuth flow under bad input: a resource server and an authorization server
//! served here on loopback answer with a defect each (malformed or mismatched metadata, no
//! PKCE, a redirect with the wrong `state` or `iss`, a refused or malformed token response, a
//! server that refuses every token…). Each case must end the flow with its typed
//! [`OAuthError`] — never a panic, never a token sent where it does not belong. The good path
//! is proven against real servers: the conformance suite's `auth/*` scenarios
//! (`conformance_client.rs`) and oidc-provider (`interop_oauth.rs`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use typed_mcp::client::oauth::{ClientCredentials, OAuth, OAuthError, authorizer_fn};
use typed_mcp::client::{Client, ClientError, ProtocolEra};

use crate::support::http::serve_router;

/// What the servers get wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Defect {
    /// The protected resource metadata names another resource.
    ResourceMismatch,
    /// The protected resource metadata is not JSON.
    ResourceMetadataNotJson,
    /// The protected resource metadata has no `resource`.
    ResourceMetadataIncomplete,
    /// The authorization server's metadata names another issuer.
    IssuerMismatch,
    /// The authorization server does not offer S256.
    NoPkce,
    /// The authorization server's metadata has no token endpoint.
    NoTokenEndpoint,
    /// No registration endpoint (and no credentials, no metadata document support).
    NoRegistration,
    /// The redirect carries another `state`.
    WrongState,
    /// The redirect's `iss` is another server's.
    WrongIss,
    /// The server promises `iss` and the redirect has none.
    MissingIss,
    /// The person (or the server) refused.
    Denied,
    /// The redirect has no code.
    NoCode,
    /// The token endpoint refuses the code.
    TokenRefused,
    /// The token endpoint answers something that is not a token response.
    TokenMalformed,
    /// The token endpoint issues a DPoP token to a Bearer client.
    TokenNotBearer,
    /// The resource server refuses every token.
    AlwaysUnauthorized,
    /// Registration is refused.
    RegistrationRefused,
    /// The token endpoint answers 307 to another server (which would get the form again).
    TokenRedirects,
    /// The registration endpoint answers 308 to another server.
    RegistrationRedirects,
    /// The metadata names a token endpoint over plain HTTP on a public host.
    InsecureTokenEndpoint,
}

struct Servers {
    defect: Defect,
    base: OnceLock<String>,
    /// Authorization headers the resource server received.
    bearers: Mutex<Vec<String>>,
    /// Requests to the token endpoint.
    token_requests: AtomicUsize,
    /// Requests that reached where a redirect pointed.
    stolen: AtomicUsize,
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

async fn serve(State(servers): State<Arc<Servers>>, request: Request) -> Response {
    let base = servers.base.get().cloned().unwrap_or_default();
    let defect = servers.defect;
    let path = request.uri().path().to_owned();
    let query: Vec<(String, String)> = request
        .uri()
        .query()
        .map(|q| {
            q.split('&').filter_map(|p| p.split_once('=')).map(|(k, v)| (k.to_owned(), percent_decode(v))).collect()
        })
        .unwrap_or_default();
    let param = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    match path.as_str() {
        "/mcp" => {
            if let Some(auth) = request.headers().get(header::AUTHORIZATION) {
                servers.bearers.lock().unwrap().push(auth.to_str().unwrap_or_default().to_owned());
            }
            let mut response = json_response(StatusCode::UNAUTHORIZED, &json!({"error": "invalid_token"}));
            let challenge = format!(r#"Bearer error="invalid_token", resource_metadata="{base}/prm""#);
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_str(&challenge).unwrap());
            response
        }
        "/prm" => match defect {
            Defect::ResourceMetadataNotJson => {
                let mut response = Response::new(Body::from("<html>not json</html>"));
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                response
            }
            Defect::ResourceMetadataIncomplete => {
                json_response(StatusCode::OK, &json!({"authorization_servers": [base]}))
            }
            Defect::ResourceMismatch => json_response(
                StatusCode::OK,
                &json!({"resource": "https://elsewhere.example/mcp", "authorization_servers": [base]}),
            ),
            _ => json_response(
                StatusCode::OK,
                &json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}),
            ),
        },
        "/.well-known/oauth-authorization-server" => {
            let mut metadata = json!({
                "issuer": if defect == Defect::IssuerMismatch { "https://attacker.example".to_owned() } else { base.clone() },
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": defect == Defect::MissingIss,
            });
            match defect {
                Defect::NoPkce => drop(metadata.as_object_mut().unwrap().remove("code_challenge_methods_supported")),
                Defect::NoTokenEndpoint => drop(metadata.as_object_mut().unwrap().remove("token_endpoint")),
                Defect::NoRegistration => drop(metadata.as_object_mut().unwrap().remove("registration_endpoint")),
                Defect::InsecureTokenEndpoint => metadata["token_endpoint"] = json!("http://auth.example.com/token"),
                _ => {}
            }
            json_response(StatusCode::OK, &metadata)
        }
        "/stolen" => {
            servers.stolen.fetch_add(1, Ordering::SeqCst);
            json_response(StatusCode::OK, &json!({"client_id": "stolen", "access_token": "t", "token_type": "Bearer"}))
        }
        "/register" if defect == Defect::RegistrationRedirects => redirect(StatusCode::PERMANENT_REDIRECT, &base),
        "/token" if defect == Defect::TokenRedirects => {
            servers.token_requests.fetch_add(1, Ordering::SeqCst);
            redirect(StatusCode::TEMPORARY_REDIRECT, &base)
        }
        "/register" if defect == Defect::RegistrationRefused => {
            json_response(StatusCode::BAD_REQUEST, &json!({"error": "invalid_client_metadata"}))
        }
        "/register" => json_response(StatusCode::CREATED, &json!({"client_id": "registered-client"})),
        "/authorize" => {
            let redirect = param("redirect_uri").unwrap_or_default();
            let state = param("state").unwrap_or_default();
            let state = if defect == Defect::WrongState { "forged".to_owned() } else { state };
            let mut location = format!("{redirect}?state={state}");
            match defect {
                Defect::Denied => location.push_str("&error=access_denied&error_description=no"),
                Defect::NoCode => {}
                _ => location.push_str("&code=the-code"),
            }
            if defect == Defect::WrongIss {
                location.push_str("&iss=https%3A%2F%2Fattacker.example");
            }
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::FOUND;
            response.headers_mut().insert(header::LOCATION, HeaderValue::from_str(&location).unwrap());
            response
        }
        "/token" => {
            servers.token_requests.fetch_add(1, Ordering::SeqCst);
            match defect {
                Defect::TokenRefused => json_response(
                    StatusCode::BAD_REQUEST,
                    &json!({"error": "invalid_grant", "error_description": "the code is spent"}),
                ),
                Defect::TokenMalformed => json_response(StatusCode::OK, &json!(["not", "a", "token"])),
                Defect::TokenNotBearer => {
                    json_response(StatusCode::OK, &json!({"access_token": "t", "token_type": "DPoP"}))
                }
                _ => json_response(
                    StatusCode::OK,
                    &json!({"access_token": "issued-token", "token_type": "Bearer", "expires_in": 60}),
                ),
            }
        }
        _ => json_response(StatusCode::NOT_FOUND, &json!({"error": "not_found"})),
    }
}

/// A redirect with `status` (307 and 308 keep the method and the body) to `/stolen`.
fn redirect(status: StatusCode, base: &str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response.headers_mut().insert(header::LOCATION, HeaderValue::from_str(&format!("{base}/stolen")).unwrap());
    response
}

fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs the flow against servers with `defect`, in `era`; the error connecting ends with, and
/// the servers' record.
async fn run(defect: Defect, era: ProtocolEra, credentials: Option<ClientCredentials>) -> (ClientError, Arc<Servers>) {
    run_with(defect, era, |oauth, _| match credentials {
        Some(credentials) => oauth.client_credentials(credentials),
        None => oauth,
    })
    .await
}

/// Runs the flow against servers with `defect`, in `era`, with the authorization code
/// configuration that `configure` returns given the servers' base URL (it may replace it with
/// another grant).
async fn run_with(
    defect: Defect,
    era: ProtocolEra,
    configure: impl FnOnce(OAuth, &str) -> OAuth,
) -> (ClientError, Arc<Servers>) {
    let servers = Arc::new(Servers {
        defect,
        base: OnceLock::new(),
        bearers: Mutex::default(),
        token_requests: AtomicUsize::new(0),
        stolen: AtomicUsize::new(0),
    });
    let app = axum::Router::new().fallback(serve).with_state(servers.clone());
    let (url, _stop) = serve_router(app).await;
    servers.base.set(url.trim_end_matches("/mcp").to_owned()).unwrap();
    let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let authorizer = authorizer_fn("http://127.0.0.1:1/callback", move |url: String| {
        let browser = browser.clone();
        async move {
            let response = browser.get(&url).send().await.map_err(|e| OAuthError::Callback(e.to_string()))?;
            let location = response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok());
            location.map(str::to_owned).ok_or_else(|| OAuthError::Callback(format!("HTTP {}", response.status())))
        }
    });
    let oauth = configure(OAuth::new(authorizer), servers.base.get().unwrap());
    let connected = Client::builder("oauth-bad-input", "1.0.0").protocol_era(era).oauth(oauth).connect_http(&url).await;
    match connected {
        Ok(_) => panic!("{defect:?}: the client connected"),
        Err(e) => (e, servers),
    }
}

#[tokio::test]
async fn every_defect_ends_the_flow_with_its_error_and_no_token_is_sent() {
    type Check = fn(&OAuthError) -> bool;
    let table: &[(Defect, Check)] = &[
        (
            Defect::ResourceMismatch,
            |e| matches!(e, OAuthError::ResourceMismatch { found, .. } if found == "https://elsewhere.example/mcp"),
        ),
        (
            Defect::ResourceMetadataNotJson,
            |e| matches!(e, OAuthError::MalformedMetadata { reason, .. } if reason.contains("not JSON")),
        ),
        (
            Defect::ResourceMetadataIncomplete,
            |e| matches!(e, OAuthError::MalformedMetadata { reason, .. } if reason.contains("resource")),
        ),
        (
            Defect::IssuerMismatch,
            |e| matches!(e, OAuthError::MetadataIssuerMismatch { found, .. } if found == "https://attacker.example"),
        ),
        (Defect::NoPkce, |e| matches!(e, OAuthError::PkceNotSupported { .. })),
        (
            Defect::NoTokenEndpoint,
            |e| matches!(e, OAuthError::MalformedMetadata { reason, .. } if reason.contains("token_endpoint")),
        ),
        (Defect::NoRegistration, |e| matches!(e, OAuthError::NoRegistration { .. })),
        (
            Defect::RegistrationRefused,
            |e| matches!(e, OAuthError::Registration { status: 400, error } if error == "invalid_client_metadata"),
        ),
        (Defect::WrongState, |e| *e == OAuthError::StateMismatch),
        (
            Defect::WrongIss,
            |e| matches!(e, OAuthError::IssuerMismatch { found, .. } if found == "https://attacker.example"),
        ),
        (Defect::MissingIss, |e| *e == OAuthError::MissingIssuer),
        (Defect::Denied, |e| matches!(e, OAuthError::AuthorizationDenied { error, .. } if error == "access_denied")),
        (Defect::NoCode, |e| *e == OAuthError::MissingCode),
        (
            Defect::TokenRefused,
            |e| matches!(e, OAuthError::TokenEndpoint { status: 400, error, .. } if error == "invalid_grant"),
        ),
        (Defect::TokenMalformed, |e| matches!(e, OAuthError::MalformedTokenResponse(_))),
        (Defect::TokenNotBearer, |e| matches!(e, OAuthError::MalformedTokenResponse(r) if r.contains("DPoP"))),
        (Defect::AlwaysUnauthorized, |e| *e == OAuthError::Unauthorized { status: 401 }),
        (Defect::TokenRedirects, |e| matches!(e, OAuthError::Redirected { status: 307, .. })),
        (Defect::RegistrationRedirects, |e| matches!(e, OAuthError::Redirected { status: 308, .. })),
        (
            Defect::InsecureTokenEndpoint,
            |e| matches!(e, OAuthError::InsecureUrl { url } if url.starts_with("http://auth.example.com")),
        ),
    ];
    let mut problems = Vec::new();
    for (defect, check) in table {
        for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
            let (error, servers) = run(*defect, era, None).await;
            match error.authorization() {
                Some(e) if check(e) => {}
                _ => problems.push(format!("{defect:?} ({era:?}): {error:?}")),
            }
            // A token is only ever sent after a good token response.
            let bearers = servers.bearers.lock().unwrap().clone();
            let expected: Vec<String> =
                if *defect == Defect::AlwaysUnauthorized { vec!["Bearer issued-token".into()] } else { vec![] };
            if bearers != expected {
                problems.push(format!("{defect:?} ({era:?}): the resource server got {bearers:?}"));
            }
            // A rejected redirect never reaches the token endpoint.
            let redirect_refused = matches!(
                defect,
                Defect::WrongState | Defect::WrongIss | Defect::MissingIss | Defect::Denied | Defect::NoCode
            );
            if redirect_refused && servers.token_requests.load(Ordering::SeqCst) != 0 {
                problems.push(format!("{defect:?} ({era:?}): the code went to the token endpoint"));
            }
            // A redirect of the token or registration endpoint is never followed.
            if servers.stolen.load(Ordering::SeqCst) != 0 {
                problems.push(format!("{defect:?} ({era:?}): a request followed a redirect"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test]
async fn pre_registered_credentials_stay_with_their_issuer() {
    // Credentials for another authorization server are not presented to this one: with no
    // registration endpoint either, there is no way to identify the client.
    let elsewhere = ClientCredentials {
        client_id: "id-for-elsewhere".into(),
        client_secret: Some("secret".into()),
        issuer: Some("https://elsewhere.example".into()),
    };
    let (error, servers) = run(Defect::NoRegistration, ProtocolEra::Y2025, Some(elsewhere)).await;
    assert!(
        matches!(error.authorization(), Some(OAuthError::UnexpectedIssuer { expected, .. }) if expected == "https://elsewhere.example"),
        "{error:?}"
    );
    assert_eq!(servers.token_requests.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn grants_that_send_credentials_need_the_expected_issuer() {
    use typed_mcp::client::oauth::{EnterpriseAuthorization, SigningKey, TokenSource};
    let key = SigningKey::generate().unwrap();
    let secret = || ClientCredentials { client_id: "c".into(), client_secret: Some("s".into()), issuer: None };
    let grants: Vec<(&str, OAuth)> = vec![
        ("client secret", OAuth::client_secret("c", "s")),
        ("private_key_jwt", OAuth::private_key_jwt("c", key.clone())),
        ("workload identity", OAuth::workload_identity(TokenSource::fixed("platform"))),
        (
            "enterprise",
            OAuth::enterprise(EnterpriseAuthorization::new(
                "http://127.0.0.1:1/token",
                "idp-client",
                TokenSource::fixed("id-token"),
                secret(),
            )),
        ),
    ];
    for (name, grant) in grants {
        // Without an expected issuer: refused at once, before anything is sent anywhere.
        let (error, servers) = run_with(Defect::AlwaysUnauthorized, ProtocolEra::Y2025, |_, _| grant.clone()).await;
        assert_eq!(error.authorization(), Some(&OAuthError::IssuerRequired), "{name}: {error:?}");
        assert!(error.to_string().contains("OAuth::issuer"), "{name}: {error}");
        assert_eq!(servers.token_requests.load(Ordering::SeqCst), 0, "{name}");
        // With one the MCP server does not name: refused, nothing sent to the server it names.
        let (error, servers) = run_with(Defect::AlwaysUnauthorized, ProtocolEra::Y2025, |_, _| {
            grant.clone().issuer("https://auth.example.com")
        })
        .await;
        assert!(
            matches!(error.authorization(), Some(OAuthError::UnexpectedIssuer { expected, offered })
                if expected == "https://auth.example.com" && offered.len() == 1),
            "{name}: {error:?}"
        );
        assert_eq!(servers.token_requests.load(Ordering::SeqCst), 0, "{name}");
    }
    // A person's flow with a pre-registered secret too.
    let (error, servers) =
        run_with(Defect::AlwaysUnauthorized, ProtocolEra::Y2025, |oauth, _| oauth.client_credentials(secret())).await;
    assert_eq!(error.authorization(), Some(&OAuthError::IssuerRequired), "{error:?}");
    assert_eq!(servers.token_requests.load(Ordering::SeqCst), 0);
    // The opt-out: the credentials go to the server the MCP server names.
    let (error, servers) = run_with(Defect::AlwaysUnauthorized, ProtocolEra::Y2025, |_, _| {
        OAuth::client_secret("c", "s").trust_any_issuer()
    })
    .await;
    assert_eq!(error.authorization(), Some(&OAuthError::Unauthorized { status: 401 }), "{error:?}");
    assert!(servers.token_requests.load(Ordering::SeqCst) >= 1);
    // A public client's person flow needs none: nothing it sends is worth anything elsewhere.
    let (error, _) = run_with(Defect::AlwaysUnauthorized, ProtocolEra::Y2025, |oauth, _| oauth).await;
    assert_eq!(error.authorization(), Some(&OAuthError::Unauthorized { status: 401 }), "{error:?}");
}

#[tokio::test]
async fn credentials_go_to_the_expected_issuer_when_the_server_names_it() {
    let (error, servers) =
        run_with(Defect::AlwaysUnauthorized, ProtocolEra::Y2025, |_, base| OAuth::client_secret("c", "s").issuer(base))
            .await;
    assert_eq!(error.authorization(), Some(&OAuthError::Unauthorized { status: 401 }), "{error:?}");
    assert!(servers.token_requests.load(Ordering::SeqCst) >= 1);
}

#[tokio::test]
async fn without_oauth_a_refusal_is_a_typed_authorization_error() {
    let servers = Arc::new(Servers {
        defect: Defect::AlwaysUnauthorized,
        base: OnceLock::new(),
        bearers: Mutex::default(),
        token_requests: AtomicUsize::new(0),
        stolen: AtomicUsize::new(0),
    });
    let app = axum::Router::new().fallback(serve).with_state(servers.clone());
    let (url, _stop) = serve_router(app).await;
    servers.base.set(url.trim_end_matches("/mcp").to_owned()).unwrap();
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let error = Client::builder("no-oauth", "1.0.0").protocol_era(era).connect_http(&url).await.err();
        assert_eq!(
            error.as_ref().and_then(ClientError::authorization),
            Some(&OAuthError::Unauthorized { status: 401 }),
            "{era:?}: {error:?}"
        );
    }
    assert!(servers.bearers.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_fixed_authorization_header_and_oauth_are_refused_together() {
    let authorizer = authorizer_fn("http://127.0.0.1:1/callback", |_url: String| async {
        Err::<String, _>(OAuthError::Callback("never asked".into()))
    });
    let config = typed_mcp::client::http::HttpClientConfig::default().bearer_token("fixed").unwrap();
    let error = Client::builder("both", "1.0.0")
        .oauth(OAuth::new(authorizer))
        .connect_http_with("http://127.0.0.1:1/mcp", config)
        .await
        .err();
    match error {
        Some(ClientError::Transport(message)) => assert!(message.contains("Authorization"), "{message}"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

// ----- workload identity: the platform token is read again for each token request -----

/// An authorization server for the JWT bearer grant: it records each assertion, and answers
/// `token-<assertion>` (or `invalid_grant` when `refuse` is set).
#[derive(Default)]
struct BearerGrants {
    assertions: Mutex<Vec<String>>,
    refuse: bool,
}

async fn bearer_grant_server(grants: Arc<BearerGrants>) -> String {
    let as_url: Arc<OnceLock<String>> = Arc::default();
    let for_metadata = as_url.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || {
                let url = for_metadata.get().cloned().unwrap_or_default();
                async move {
                    json_response(
                        StatusCode::OK,
                        &json!({"issuer": url, "token_endpoint": format!("{url}/token"),
                                "grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"]}),
                    )
                }
            }),
        )
        .route(
            "/token",
            axum::routing::post(move |body: String| {
                let grants = grants.clone();
                async move {
                    let form: std::collections::HashMap<String, String> =
                        reqwest::Url::parse(&format!("http://form/?{body}"))
                            .unwrap()
                            .query_pairs()
                            .into_owned()
                            .collect();
                    assert_eq!(form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer", "{form:?}");
                    assert!(!form.contains_key("client_secret"), "{form:?}");
                    let assertion = form["assertion"].clone();
                    grants.assertions.lock().unwrap().push(assertion.clone());
                    if grants.refuse {
                        return json_response(StatusCode::BAD_REQUEST, &json!({"error": "invalid_grant"}));
                    }
                    json_response(
                        StatusCode::OK,
                        &json!({"access_token": format!("token-{assertion}"), "token_type": "Bearer"}),
                    )
                }
            }),
        );
    let (url, stop) = serve_router(app).await;
    std::mem::forget(stop);
    let url = url.trim_end_matches("/mcp").to_owned();
    as_url.set(url.clone()).unwrap();
    url
}

/// Accepts only `token-<what the platform file holds now>`.
struct CurrentPlatformToken(std::path::PathBuf);

impl typed_mcp::auth::TokenVerifier for CurrentPlatformToken {
    fn verify<'a>(
        &'a self,
        token: &'a str,
        _resource: &'a str,
    ) -> typed_mcp::engine::BoxFuture<'a, Result<typed_mcp::auth::AuthInfo, typed_mcp::auth::TokenError>> {
        let now = std::fs::read_to_string(&self.0).unwrap_or_default();
        let ok = token == format!("token-{}", now.trim());
        Box::pin(async move {
            if ok {
                Ok(typed_mcp::auth::AuthInfo::new("workload"))
            } else {
                Err(typed_mcp::auth::TokenError::Invalid("not the current platform token".into()))
            }
        })
    }
}

fn workload_server() -> typed_mcp::Server {
    let whoami = typed_mcp::ToolDef::new(
        "whoami",
        json!({"type": "object"}).as_object().unwrap().clone(),
        |call: typed_mcp::tool::ToolCall| async move {
            Ok::<_, typed_mcp::protocol::ErrorObject>(
                call.ctx.auth().map(|a| a.subject().to_owned()).unwrap_or_default(),
            )
        },
    );
    typed_mcp::Server::builder("workload-test", "1.0.0").tool(whoami).build().unwrap()
}

/// The workload test server behind `verifier`, trusting `issuer`; returns its URL.
struct Protected {
    url: String,
}

async fn serve_workload(verifier: CurrentPlatformToken, issuer: &str) -> Protected {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let auth = typed_mcp::auth::Authorization::new(verifier).authorization_server(issuer).resource(&url);
    let http = workload_server().streamable_http(typed_mcp::transport::http::HttpConfig::default().authorization(auth));
    tokio::spawn(async move { http.serve(listener, std::future::pending()).await });
    Protected { url }
}

#[tokio::test]
async fn workload_identity_reads_the_rotated_platform_token_for_the_next_grant() {
    let dir = std::env::temp_dir().join(format!("wif-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "platform-1\n").unwrap();
    let grants = Arc::new(BearerGrants::default());
    let issuer = bearer_grant_server(grants.clone()).await;
    let endpoint = serve_workload(CurrentPlatformToken(file.clone()), &issuer).await;
    let oauth = OAuth::workload_identity(typed_mcp::client::oauth::TokenSource::file(&file)).issuer(&issuer);
    assert_eq!(oauth.extensions(), ["io.modelcontextprotocol/auth/wif"]);
    let client = Client::builder("wif", "1").oauth(oauth).connect_http(&endpoint.url).await.expect("connect");
    let first = client.call_tool("whoami", json!({})).await.expect("whoami");
    assert_eq!(first.content[0].as_text(), Some("workload"));
    // The platform rotates the token: the server refuses the old access token, and the client's
    // next grant presents the new platform token.
    std::fs::write(&file, "platform-2\n").unwrap();
    let second = client.call_tool("whoami", json!({})).await.expect("whoami after rotation");
    assert_eq!(second.content[0].as_text(), Some("workload"));
    assert_eq!(*grants.assertions.lock().unwrap(), ["platform-1", "platform-2"]);
    client.close().await;

    // A refused grant is an error, asked once: no retry, no other grant.
    let refusing = Arc::new(BearerGrants { refuse: true, ..Default::default() });
    let issuer = bearer_grant_server(refusing.clone()).await;
    let endpoint = serve_workload(CurrentPlatformToken(file.clone()), &issuer).await;
    let oauth = OAuth::workload_identity(typed_mcp::client::oauth::TokenSource::file(&file)).issuer(&issuer);
    let error = match Client::builder("wif", "1").oauth(oauth).connect_http(&endpoint.url).await {
        Ok(client) => client.call_tool("whoami", json!({})).await.expect_err("refused"),
        Err(e) => e,
    };
    assert!(
        matches!(&error, ClientError::Authorization(OAuthError::TokenEndpoint { error, .. }) if error == "invalid_grant"),
        "{error:?}"
    );
    assert_eq!(refusing.assertions.lock().unwrap().len(), 1);

    // A missing file is an error saying which.
    let oauth =
        OAuth::workload_identity(typed_mcp::client::oauth::TokenSource::file(dir.join("missing"))).issuer(&issuer);
    let error = match Client::builder("wif", "1").oauth(oauth).connect_http(&endpoint.url).await {
        Ok(client) => client.call_tool("whoami", json!({})).await.expect_err("no token"),
        Err(e) => e,
    };
    assert!(error.to_string().contains("missing"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}
