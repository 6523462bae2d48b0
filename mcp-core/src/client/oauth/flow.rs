//! The flow itself: discovery, registration, authorization code with PKCE, tokens, refresh.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::challenge::{self, BearerChallenge};
use super::{OAuth, OAuthError, StoredTokens};

/// The largest metadata, registration or token document read.
const MAX_DOCUMENT: usize = 256 * 1024;
/// How long one request of the flow may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long before its expiry a token is refreshed instead of sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(10);

/// What the protected resource metadata (RFC 9728) says.
#[derive(Debug, Clone)]
struct ResourceMetadata {
    /// `resource`, exactly as published (sent back as the `resource` parameter).
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
}

/// What the authorization server metadata (RFC 8414) says, as far as the flow needs it.
#[derive(Debug, Clone)]
struct ServerMetadata {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    registration_endpoint: Option<String>,
    scopes_supported: Option<Vec<String>>,
    token_endpoint_auth_methods: Option<Vec<String>>,
    iss_parameter_supported: bool,
    client_id_metadata_document_supported: bool,
}

/// How the client identifies itself to one authorization server.
#[derive(Debug, Clone)]
struct Registration {
    client_id: String,
    client_secret: Option<String>,
    method: AuthMethod,
}

/// Token endpoint authentication (RFC 6749 section 2.3, RFC 7591 section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthMethod {
    Basic,
    Post,
    None,
}

impl AuthMethod {
    fn name(self) -> &'static str {
        match self {
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
            AuthMethod::None => "none",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(AuthMethod::Basic),
            "client_secret_post" => Some(AuthMethod::Post),
            "none" => Some(AuthMethod::None),
            _ => None,
        }
    }

    /// The method for a client with (or without) a secret, among those the server supports
    /// (RFC 8414: `client_secret_basic` when it does not say).
    fn for_client(has_secret: bool, supported: Option<&[String]>) -> Self {
        if !has_secret {
            return AuthMethod::None;
        }
        let supports = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
        if supports("client_secret_basic") {
            AuthMethod::Basic
        } else if supports("client_secret_post") {
            AuthMethod::Post
        } else {
            AuthMethod::Basic
        }
    }
}

/// What the flow knows, kept between authorizations.
#[derive(Default)]
struct FlowState {
    loaded: bool,
    resource: Option<ResourceMetadata>,
    server: Option<ServerMetadata>,
    /// Dynamic registrations, by issuer.
    registrations: HashMap<String, Registration>,
    tokens: Option<StoredTokens>,
}

/// The OAuth side of one HTTP connection.
pub(crate) struct OAuthSession {
    config: OAuth,
    http: reqwest::Client,
    server_url: Url,
    /// The access token requests carry, and when it expires.
    current: RwLock<Option<(String, Option<SystemTime>)>>,
    state: tokio::sync::Mutex<FlowState>,
}

impl std::fmt::Debug for OAuthSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSession").field("server_url", &self.server_url.as_str()).finish_non_exhaustive()
    }
}

impl OAuthSession {
    pub(crate) fn new(config: OAuth, http: reqwest::Client, server_url: Url) -> Self {
        let http = config.http.clone().unwrap_or(http);
        OAuthSession { config, http, server_url, current: RwLock::default(), state: tokio::sync::Mutex::default() }
    }

    /// Whether a flow (discovery, the person's authorization, a token request) is under way.
    pub(crate) fn authorizing(&self) -> bool {
        self.state.try_lock().is_err()
    }

    /// The access token held now, without waiting (for GET streams and `DELETE`).
    pub(crate) fn current(&self) -> Option<String> {
        self.current.read().ok().and_then(|c| c.as_ref().map(|(t, _)| t.clone()))
    }

    /// The access token to send now, loading it from the store the first time and refreshing
    /// it when it has expired.
    pub(crate) async fn bearer(&self) -> Option<String> {
        let now = SystemTime::now();
        let current = self.current.read().ok().and_then(|c| c.clone());
        match current {
            Some((token, None)) => return Some(token),
            Some((token, Some(expiry))) if expiry > now + EXPIRY_MARGIN => return Some(token),
            _ => {}
        }
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        let expired = state
            .tokens
            .as_ref()
            .is_some_and(|t| t.refresh_token.is_some() && t.expires_at.is_some_and(|e| e <= now + EXPIRY_MARGIN));
        if expired && let Err(e) = self.refresh(&mut state).await {
            tracing::debug!(error = %e, "refreshing an expired access token failed");
        }
        self.current.read().ok().and_then(|c| c.as_ref().map(|(t, _)| t.clone()))
    }

    /// The request sent with `used` was answered 401 with `header` as `WWW-Authenticate`:
    /// refreshes or authorizes so that it can be retried.
    pub(crate) async fn unauthorized(&self, used: Option<&str>, header: Option<&str>) -> Result<(), OAuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        if self.replaced_since(used) {
            return Ok(());
        }
        let challenge = header.and_then(challenge::parse).unwrap_or_default();
        let resource = self.discover_resource(challenge.resource_metadata.as_deref()).await?;
        let issuer = self.issuer_of(&resource);
        let server = match &state.server {
            Some(s) if s.issuer == issuer => s.clone(),
            _ => self.discover_server(&issuer).await?,
        };
        state.resource = Some(resource.clone());
        state.server = Some(server.clone());
        let same_server = state.tokens.as_ref().is_some_and(|t| t.issuer == server.issuer);
        if !same_server && state.tokens.is_some() {
            tracing::info!(issuer = %server.issuer, "the protected resource moved to another authorization server");
            state.tokens = None;
            self.set_current(None);
        }
        if used.is_some() && state.tokens.as_ref().is_some_and(|t| t.refresh_token.is_some()) {
            match self.refresh(&mut state).await {
                Ok(()) => return Ok(()),
                Err(e) => tracing::debug!(error = %e, "refreshing the refused token failed; authorizing anew"),
            }
        }
        let scope = self.initial_scope(&challenge, &resource, &server);
        self.authorize(&mut state, scope).await
    }

    /// The request sent with `used` was answered 403 `insufficient_scope`: authorizes again
    /// with the scopes held and those the challenge asks for. Fails when that would ask for
    /// nothing new.
    pub(crate) async fn insufficient_scope(&self, used: Option<&str>, header: &str) -> Result<(), OAuthError> {
        let mut state = self.state.lock().await;
        self.load(&mut state).await;
        if self.replaced_since(used) {
            return Ok(());
        }
        let challenge = challenge::parse(header).unwrap_or_default();
        let Some(wanted) = challenge.scope.clone().filter(|s| !s.trim().is_empty()) else {
            return Err(OAuthError::InsufficientScope { scope: String::new() });
        };
        let held = state.tokens.as_ref().and_then(|t| t.scope.clone()).unwrap_or_default();
        let union = union_scopes(&held, &wanted);
        if scope_set(&union) == scope_set(&held) {
            return Err(OAuthError::InsufficientScope { scope: wanted });
        }
        if state.resource.is_none() || state.server.is_none() {
            let resource = self.discover_resource(challenge.resource_metadata.as_deref()).await?;
            let server = self.discover_server(&self.issuer_of(&resource)).await?;
            state.resource = Some(resource);
            state.server = Some(server);
        }
        tracing::info!(scope = %union, "stepping up authorization for more scopes");
        self.authorize(&mut state, Some(union)).await
    }

    /// Whether the token changed since a request was sent with `used` (another request
    /// already authorized): then that request is simply retried.
    fn replaced_since(&self, used: Option<&str>) -> bool {
        let current = self.current.read().ok().and_then(|c| c.as_ref().map(|(t, _)| t.clone()));
        current.is_some() && current.as_deref() != used
    }

    fn set_current(&self, tokens: Option<&StoredTokens>) {
        if let Ok(mut current) = self.current.write() {
            *current = tokens.map(|t| (t.access_token.clone(), t.expires_at));
        }
    }

    /// Loads what the store kept for this server, once.
    async fn load(&self, state: &mut FlowState) {
        if state.loaded {
            return;
        }
        state.loaded = true;
        match self.config.store.load(self.server_url.as_str()).await {
            Ok(Some(tokens)) => {
                self.set_current(Some(&tokens));
                state.tokens = Some(tokens);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "the token store failed to load"),
        }
    }

    async fn save(&self, state: &mut FlowState, tokens: StoredTokens) {
        self.set_current(Some(&tokens));
        if let Err(e) = self.config.store.save(self.server_url.as_str(), tokens.clone()).await {
            tracing::warn!(error = %e, "the token store failed to save");
        }
        state.tokens = Some(tokens);
    }

    /// The authorization server to use: the first the resource names.
    fn issuer_of(&self, resource: &ResourceMetadata) -> String {
        resource.authorization_servers.first().cloned().unwrap_or_else(|| origin(&self.server_url))
    }

    /// Scopes for a first authorization: the challenge's, else the resource's
    /// `scopes_supported`, else none; with `offline_access` when the server offers it.
    fn initial_scope(
        &self,
        challenge: &BearerChallenge,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
    ) -> Option<String> {
        let base = challenge
            .scope
            .clone()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| resource.scopes_supported.as_ref().filter(|s| !s.is_empty()).map(|s| s.join(" ")));
        let offline = self.config.offline_access
            && server.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        match (base, offline) {
            (Some(base), true) => Some(union_scopes(&base, "offline_access")),
            (None, true) => Some("offline_access".into()),
            (base, false) => base,
        }
    }

    // ----- discovery -----

    /// Finds the protected resource metadata and checks that it covers the server's URL.
    async fn discover_resource(&self, from_challenge: Option<&str>) -> Result<ResourceMetadata, OAuthError> {
        let mut candidates = Vec::new();
        if let Some(url) = from_challenge {
            candidates.push(url.to_owned());
        }
        let origin = origin(&self.server_url);
        let path = self.server_url.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
        }
        candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
        let mut last_error = None;
        for url in candidates {
            match self.get_json(&url).await {
                Ok(Some(document)) => {
                    let metadata = parse_resource_metadata(&url, &document)?;
                    if !covers(&metadata.resource, &self.server_url) {
                        return Err(OAuthError::ResourceMismatch {
                            server: self.server_url.to_string(),
                            found: metadata.resource,
                        });
                    }
                    tracing::debug!(%url, resource = %metadata.resource, "found the protected resource metadata");
                    return Ok(metadata);
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or(OAuthError::NoResourceMetadata { server: self.server_url.to_string() }))
    }

    /// Finds the authorization server's metadata (RFC 8414, then OpenID Connect Discovery,
    /// with path insertion) and checks its issuer.
    async fn discover_server(&self, issuer: &str) -> Result<ServerMetadata, OAuthError> {
        let parsed =
            Url::parse(issuer).map_err(|e| OAuthError::InvalidUrl { url: issuer.to_owned(), reason: e.to_string() })?;
        let origin = origin(&parsed);
        let path = parsed.path().trim_end_matches('/');
        let candidates = if path.is_empty() {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server"),
                format!("{origin}/.well-known/openid-configuration"),
            ]
        } else {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server{path}"),
                format!("{origin}/.well-known/openid-configuration{path}"),
                format!("{origin}{path}/.well-known/openid-configuration"),
            ]
        };
        let mut last_error = None;
        for url in candidates {
            match self.get_json(&url).await {
                Ok(Some(document)) => {
                    let metadata = parse_server_metadata(&url, &document)?;
                    if metadata.issuer != issuer {
                        return Err(OAuthError::MetadataIssuerMismatch {
                            expected: issuer.to_owned(),
                            found: metadata.issuer,
                        });
                    }
                    let pkce = document
                        .get("code_challenge_methods_supported")
                        .and_then(Value::as_array)
                        .is_some_and(|m| m.iter().any(|m| m == "S256"));
                    if !pkce {
                        return Err(OAuthError::PkceNotSupported { issuer: issuer.to_owned() });
                    }
                    tracing::debug!(%url, issuer, "found the authorization server metadata");
                    return Ok(metadata);
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or(OAuthError::NoAuthorizationServerMetadata { issuer: issuer.to_owned() }))
    }

    /// GETs a JSON document: `None` when the server has none there (an HTTP error status).
    async fn get_json(&self, url: &str) -> Result<Option<Value>, OAuthError> {
        let parsed =
            Url::parse(url).map_err(|e| OAuthError::InvalidUrl { url: url.to_owned(), reason: e.to_string() })?;
        let request = self.http.get(parsed).header(ACCEPT, "application/json").timeout(REQUEST_TIMEOUT);
        let response = request.send().await.map_err(|e| http_error(url, &e))?;
        if !response.status().is_success() {
            tracing::debug!(%url, status = %response.status(), "no metadata here");
            return Ok(None);
        }
        let body = read_limited(url, response).await?;
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| OAuthError::MalformedMetadata { url: url.to_owned(), reason: format!("not JSON: {e}") })
    }

    // ----- registration -----

    /// How the client identifies itself to `server`, in the specification's order of
    /// preference: pre-registered, client ID metadata document, dynamic registration.
    async fn registration(&self, state: &mut FlowState, server: &ServerMetadata) -> Result<Registration, OAuthError> {
        if let Some(credentials) = &self.config.credentials
            && credentials.issuer.as_ref().is_none_or(|i| *i == server.issuer)
        {
            let method = AuthMethod::for_client(
                credentials.client_secret.is_some(),
                server.token_endpoint_auth_methods.as_deref(),
            );
            return Ok(Registration {
                client_id: credentials.client_id.clone(),
                client_secret: credentials.client_secret.clone(),
                method,
            });
        }
        if let (true, Some(url)) = (server.client_id_metadata_document_supported, &self.config.metadata_url) {
            return Ok(Registration { client_id: url.clone(), client_secret: None, method: AuthMethod::None });
        }
        if let Some(known) = state.registrations.get(&server.issuer) {
            return Ok(known.clone());
        }
        if let Some(tokens) = state.tokens.as_ref().filter(|t| t.issuer == server.issuer) {
            let method =
                AuthMethod::for_client(tokens.client_secret.is_some(), server.token_endpoint_auth_methods.as_deref());
            return Ok(Registration {
                client_id: tokens.client_id.clone(),
                client_secret: tokens.client_secret.clone(),
                method,
            });
        }
        let Some(endpoint) = &server.registration_endpoint else {
            return Err(OAuthError::NoRegistration { issuer: server.issuer.clone() });
        };
        let registration = self.register(endpoint, server).await?;
        state.registrations.insert(server.issuer.clone(), registration.clone());
        Ok(registration)
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(&self, endpoint: &str, server: &ServerMetadata) -> Result<Registration, OAuthError> {
        let supported = server.token_endpoint_auth_methods.as_deref();
        let wanted = match supported {
            None => AuthMethod::None,
            Some(s) if s.iter().any(|m| m == "none") => AuthMethod::None,
            Some(s) if s.iter().any(|m| m == "client_secret_basic") => AuthMethod::Basic,
            Some(s) if s.iter().any(|m| m == "client_secret_post") => AuthMethod::Post,
            Some(_) => AuthMethod::None,
        };
        let body = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.authorizer.redirect_uri()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted.name(),
            "application_type": "native",
        });
        let url = Url::parse(endpoint)
            .map_err(|e| OAuthError::InvalidUrl { url: endpoint.to_owned(), reason: e.to_string() })?;
        let response = self
            .http
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .timeout(REQUEST_TIMEOUT)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| http_error(endpoint, &e))?;
        let status = response.status();
        let body = read_limited(endpoint, response).await?;
        let document: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if !status.is_success() {
            let error = document.get("error").and_then(Value::as_str).unwrap_or("refused").to_owned();
            return Err(OAuthError::Registration { status: status.as_u16(), error });
        }
        let Some(client_id) = document.get("client_id").and_then(Value::as_str).filter(|s| !s.is_empty()) else {
            return Err(OAuthError::Registration {
                status: status.as_u16(),
                error: "no client_id in the answer".into(),
            });
        };
        let client_secret = document.get("client_secret").and_then(Value::as_str).map(str::to_owned);
        let method = document
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .and_then(AuthMethod::parse)
            .unwrap_or_else(|| AuthMethod::for_client(client_secret.is_some(), supported));
        tracing::info!(client_id, method = method.name(), "registered with the authorization server");
        Ok(Registration { client_id: client_id.to_owned(), client_secret, method })
    }

    // ----- authorization and tokens -----

    /// The authorization code flow with PKCE, then the token request.
    async fn authorize(&self, state: &mut FlowState, scope: Option<String>) -> Result<(), OAuthError> {
        let (Some(resource), Some(server)) = (state.resource.clone(), state.server.clone()) else {
            return Err(OAuthError::NoResourceMetadata { server: self.server_url.to_string() });
        };
        let registration = self.registration(state, &server).await?;
        let redirect_uri = self.config.authorizer.redirect_uri();
        let verifier = random_token()?;
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let expected_state = random_token()?;
        let mut url = Url::parse(&server.authorization_endpoint).map_err(|e| OAuthError::InvalidUrl {
            url: server.authorization_endpoint.clone(),
            reason: e.to_string(),
        })?;
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &expected_state)
                .append_pair("resource", &resource.resource);
            if let Some(scope) = &scope {
                query.append_pair("scope", scope);
            }
        }
        tracing::info!(issuer = %server.issuer, scope = scope.as_deref().unwrap_or(""), "authorization required");
        let redirect = self.config.authorizer.authorize(url.to_string()).await?;
        let code = check_redirect(&redirect, &expected_state, &server)?;
        let mut form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
            ("resource", resource.resource.clone()),
        ];
        let answer = self.token_request(&server, &registration, &mut form).await?;
        let tokens = tokens_from(answer, None, scope, &server, &registration)?;
        self.save(state, tokens).await;
        Ok(())
    }

    /// Exchanges the refresh token for new tokens.
    async fn refresh(&self, state: &mut FlowState) -> Result<(), OAuthError> {
        let Some(tokens) = state.tokens.clone() else { return Err(OAuthError::Unauthorized { status: 401 }) };
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Err(OAuthError::Unauthorized { status: 401 });
        };
        let server = match &state.server {
            Some(s) if s.issuer == tokens.issuer => s.clone(),
            _ => {
                let server = self.discover_server(&tokens.issuer).await?;
                state.server = Some(server.clone());
                server
            }
        };
        let resource = state.resource.as_ref().map_or_else(|| self.server_url.to_string(), |r| r.resource.clone());
        let registration = Registration {
            client_id: tokens.client_id.clone(),
            client_secret: tokens.client_secret.clone(),
            method: AuthMethod::for_client(
                tokens.client_secret.is_some(),
                server.token_endpoint_auth_methods.as_deref(),
            ),
        };
        let mut form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", resource),
        ];
        let answer = match self.token_request(&server, &registration, &mut form).await {
            Ok(answer) => answer,
            Err(e) => {
                // The refresh token is spent or revoked: forget it.
                if let Some(t) = state.tokens.as_mut() {
                    t.refresh_token = None;
                }
                return Err(e);
            }
        };
        let refreshed = tokens_from(answer, Some(refresh_token), tokens.scope.clone(), &server, &registration)?;
        tracing::debug!("refreshed the access token");
        self.save(state, refreshed).await;
        Ok(())
    }

    /// POSTs to the token endpoint with the client's authentication.
    async fn token_request(
        &self,
        server: &ServerMetadata,
        registration: &Registration,
        form: &mut Vec<(&'static str, String)>,
    ) -> Result<Value, OAuthError> {
        let endpoint = &server.token_endpoint;
        let url = Url::parse(endpoint)
            .map_err(|e| OAuthError::InvalidUrl { url: endpoint.clone(), reason: e.to_string() })?;
        let mut request = self
            .http
            .post(url)
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json")
            .timeout(REQUEST_TIMEOUT);
        match (registration.method, &registration.client_secret) {
            (AuthMethod::Basic, Some(secret)) => {
                // RFC 6749 section 2.3.1: each part form-encoded, then Basic.
                let id: String = form_urlencoded::byte_serialize(registration.client_id.as_bytes()).collect();
                let secret: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
                request = request.header(AUTHORIZATION, format!("Basic {}", STANDARD.encode(format!("{id}:{secret}"))));
            }
            (AuthMethod::Post, Some(secret)) => {
                form.push(("client_id", registration.client_id.clone()));
                form.push(("client_secret", secret.clone()));
            }
            _ => form.push(("client_id", registration.client_id.clone())),
        }
        let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
        let response = request.body(body).send().await.map_err(|e| http_error(endpoint, &e))?;
        let status = response.status();
        let body = read_limited(endpoint, response).await?;
        let document: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status != StatusCode::OK {
            return Err(OAuthError::TokenEndpoint {
                status: status.as_u16(),
                error: document.get("error").and_then(Value::as_str).unwrap_or("refused").to_owned(),
                description: document.get("error_description").and_then(Value::as_str).map(str::to_owned),
            });
        }
        if !document.is_object() {
            return Err(OAuthError::MalformedTokenResponse("not a JSON object".into()));
        }
        Ok(document)
    }
}

/// Checks the redirect (RFC 6749 section 4.1.2, RFC 9207) and returns its code.
fn check_redirect(redirect: &str, expected_state: &str, server: &ServerMetadata) -> Result<String, OAuthError> {
    let url = Url::parse(redirect.trim())
        .map_err(|e| OAuthError::InvalidUrl { url: redirect.to_owned(), reason: e.to_string() })?;
    let mut params: HashMap<String, String> = HashMap::new();
    for (name, value) in url.query_pairs() {
        if params.insert(name.clone().into_owned(), value.into_owned()).is_some() {
            return Err(OAuthError::InvalidUrl {
                url: redirect.to_owned(),
                reason: format!("the parameter `{name}` appears more than once"),
            });
        }
    }
    if params.get("state").map(String::as_str) != Some(expected_state) {
        return Err(OAuthError::StateMismatch);
    }
    match params.get("iss") {
        // Simple string comparison: no normalization (RFC 9207 section 2.4).
        Some(iss) if *iss != server.issuer => {
            return Err(OAuthError::IssuerMismatch { expected: server.issuer.clone(), found: iss.clone() });
        }
        None if server.iss_parameter_supported => return Err(OAuthError::MissingIssuer),
        _ => {}
    }
    if let Some(error) = params.get("error") {
        return Err(OAuthError::AuthorizationDenied {
            error: error.clone(),
            description: params.get("error_description").cloned(),
        });
    }
    params.remove("code").filter(|c| !c.is_empty()).ok_or(OAuthError::MissingCode)
}

/// The tokens of a token response.
fn tokens_from(
    answer: Value,
    previous_refresh: Option<String>,
    requested_scope: Option<String>,
    server: &ServerMetadata,
    registration: &Registration,
) -> Result<StoredTokens, OAuthError> {
    let Some(access_token) = answer.get("access_token").and_then(Value::as_str).filter(|t| !t.is_empty()) else {
        return Err(OAuthError::MalformedTokenResponse("no access_token".into()));
    };
    if access_token.len() > 16 * 1024 || reqwest::header::HeaderValue::from_str(access_token).is_err() {
        return Err(OAuthError::MalformedTokenResponse("the access token cannot be sent in a header".into()));
    }
    match answer.get("token_type").and_then(Value::as_str) {
        Some(t) if t.eq_ignore_ascii_case("bearer") => {}
        Some(t) => return Err(OAuthError::MalformedTokenResponse(format!("token type `{t}` is not Bearer"))),
        None => return Err(OAuthError::MalformedTokenResponse("no token_type".into())),
    }
    let expires_at = answer
        .get("expires_in")
        .and_then(Value::as_u64)
        .and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s.min(10 * 365 * 24 * 3600))));
    let scope = requested_scope.or_else(|| answer.get("scope").and_then(Value::as_str).map(str::to_owned));
    Ok(StoredTokens {
        access_token: access_token.to_owned(),
        refresh_token: answer.get("refresh_token").and_then(Value::as_str).map(str::to_owned).or(previous_refresh),
        expires_at,
        scope,
        issuer: server.issuer.clone(),
        client_id: registration.client_id.clone(),
        client_secret: registration.client_secret.clone(),
    })
}

fn parse_resource_metadata(url: &str, document: &Value) -> Result<ResourceMetadata, OAuthError> {
    let malformed = |reason: &str| OAuthError::MalformedMetadata { url: url.to_owned(), reason: reason.to_owned() };
    let resource = document.get("resource").and_then(Value::as_str).ok_or_else(|| malformed("no `resource`"))?;
    let authorization_servers = match document.get("authorization_servers") {
        None => Vec::new(),
        Some(Value::Array(servers)) => servers
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| malformed("`authorization_servers` holds something other than strings"))?,
        Some(_) => return Err(malformed("`authorization_servers` is not an array")),
    };
    Ok(ResourceMetadata {
        resource: resource.to_owned(),
        authorization_servers,
        scopes_supported: strings(document.get("scopes_supported")),
    })
}

fn parse_server_metadata(url: &str, document: &Value) -> Result<ServerMetadata, OAuthError> {
    let malformed = |reason: &str| OAuthError::MalformedMetadata { url: url.to_owned(), reason: reason.to_owned() };
    let text = |name: &str| document.get(name).and_then(Value::as_str).map(str::to_owned);
    Ok(ServerMetadata {
        issuer: text("issuer").ok_or_else(|| malformed("no `issuer`"))?,
        authorization_endpoint: text("authorization_endpoint")
            .ok_or_else(|| malformed("no `authorization_endpoint`"))?,
        token_endpoint: text("token_endpoint").ok_or_else(|| malformed("no `token_endpoint`"))?,
        registration_endpoint: text("registration_endpoint"),
        scopes_supported: strings(document.get("scopes_supported")),
        token_endpoint_auth_methods: strings(document.get("token_endpoint_auth_methods_supported")),
        iss_parameter_supported: document.get("authorization_response_iss_parameter_supported")
            == Some(&Value::Bool(true)),
        client_id_metadata_document_supported: document.get("client_id_metadata_document_supported")
            == Some(&Value::Bool(true)),
    })
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value?.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
}

/// `scheme://host[:port]`.
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Whether the resource identifier `resource` covers the server at `server`: same origin,
/// and the server's path is the resource's or below it.
fn covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else { return false };
    if resource.origin() != server.origin() {
        return false;
    }
    let base = resource.path().trim_end_matches('/');
    let path = server.path();
    path == base || path.starts_with(&format!("{base}/")) || base.is_empty()
}

/// The union of two space-separated scope lists, in order, without duplicates.
fn union_scopes(first: &str, second: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for scope in first.split_whitespace().chain(second.split_whitespace()) {
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    out.join(" ")
}

fn scope_set(scopes: &str) -> std::collections::BTreeSet<&str> {
    scopes.split_whitespace().collect()
}

/// 32 random bytes, base64url: a PKCE verifier (43 characters) or a `state`.
fn random_token() -> Result<String, OAuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| OAuthError::Callback(format!("no randomness available: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The error for a request to `url` that failed before an answer arrived: a certificate that
/// was not trusted, or any other failure to reach the server.
fn http_error(url: &str, error: &reqwest::Error) -> OAuthError {
    #[cfg(feature = "rustls")]
    if let Some(reason) = crate::tls::untrusted_certificate(error) {
        return OAuthError::UntrustedCertificate { url: url.to_owned(), reason };
    }
    OAuthError::Http { url: url.to_owned(), reason: error.to_string() }
}

/// Reads a body of at most [`MAX_DOCUMENT`] bytes.
async fn read_limited(url: &str, mut response: reqwest::Response) -> Result<Vec<u8>, OAuthError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(OAuthError::MalformedMetadata {
                url: url.to_owned(),
                reason: "the document is too large".into(),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(iss_supported: bool) -> ServerMetadata {
        ServerMetadata {
            issuer: "http://as.test".into(),
            authorization_endpoint: "http://as.test/authorize".into(),
            token_endpoint: "http://as.test/token".into(),
            registration_endpoint: None,
            scopes_supported: None,
            token_endpoint_auth_methods: None,
            iss_parameter_supported: iss_supported,
            client_id_metadata_document_supported: false,
        }
    }

    #[test]
    fn redirect_checks_state_and_issuer() {
        let s = server(true);
        assert_eq!(check_redirect("http://cb/?code=c&state=s&iss=http%3A%2F%2Fas.test", "s", &s), Ok("c".into()));
        assert_eq!(
            check_redirect("http://cb/?code=c&state=x&iss=http%3A%2F%2Fas.test", "s", &s),
            Err(OAuthError::StateMismatch)
        );
        assert_eq!(
            check_redirect("http://cb/?code=c&iss=http%3A%2F%2Fas.test", "s", &s),
            Err(OAuthError::StateMismatch)
        );
        assert_eq!(check_redirect("http://cb/?code=c&state=s", "s", &s), Err(OAuthError::MissingIssuer));
        assert!(matches!(
            check_redirect("http://cb/?code=c&state=s&iss=http%3A%2F%2Fas.test%2F", "s", &s),
            Err(OAuthError::IssuerMismatch { .. })
        ));
        // Not advertised: absent is fine, a wrong one is still refused.
        let quiet = server(false);
        assert_eq!(check_redirect("http://cb/?code=c&state=s", "s", &quiet), Ok("c".into()));
        assert!(matches!(
            check_redirect("http://cb/?code=c&state=s&iss=https%3A%2F%2Fevil.example.com", "s", &quiet),
            Err(OAuthError::IssuerMismatch { .. })
        ));
        assert_eq!(check_redirect("http://cb/?state=s", "s", &quiet), Err(OAuthError::MissingCode));
        assert!(matches!(
            check_redirect("http://cb/?state=s&error=access_denied", "s", &quiet),
            Err(OAuthError::AuthorizationDenied { .. })
        ));
        assert!(matches!(check_redirect("not a url", "s", &quiet), Err(OAuthError::InvalidUrl { .. })));
        assert!(matches!(
            check_redirect("http://cb/?code=a&code=b&state=s", "s", &quiet),
            Err(OAuthError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn resource_must_cover_the_server() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(covers("http://localhost:3000/mcp", &server));
        assert!(covers("http://localhost:3000", &server));
        assert!(covers("http://localhost:3000/", &server));
        assert!(!covers("https://evil.example.com/mcp", &server));
        assert!(!covers("http://localhost:3000/mc", &server));
        assert!(!covers("http://localhost:3000/mcp/other", &server));
        assert!(!covers("http://localhost:3001/mcp", &server));
        assert!(!covers("::", &server));
    }

    #[test]
    fn scopes_unite_in_order() {
        assert_eq!(union_scopes("a b", "b c"), "a b c");
        assert_eq!(union_scopes("", "x"), "x");
    }

    #[test]
    fn metadata_parsing_refuses_malformed_documents() {
        let url = "http://x/.well-known/oauth-protected-resource";
        assert!(parse_resource_metadata(url, &serde_json::json!({"authorization_servers": []})).is_err());
        assert!(
            parse_resource_metadata(url, &serde_json::json!({"resource": "r", "authorization_servers": "x"})).is_err()
        );
        assert!(
            parse_resource_metadata(url, &serde_json::json!({"resource": "r", "authorization_servers": [1]})).is_err()
        );
        let ok =
            parse_resource_metadata(url, &serde_json::json!({"resource": "r", "scopes_supported": ["a"]})).unwrap();
        assert_eq!(ok.scopes_supported, Some(vec!["a".to_owned()]));
        assert!(parse_server_metadata(url, &serde_json::json!({"issuer": "i"})).is_err());
        assert!(parse_server_metadata(url, &serde_json::json!([])).is_err());
    }

    #[test]
    fn token_responses_are_checked() {
        let s = server(false);
        let r = Registration { client_id: "c".into(), client_secret: None, method: AuthMethod::None };
        let ok = tokens_from(
            serde_json::json!({"access_token": "t", "token_type": "bearer", "expires_in": 60}),
            None,
            None,
            &s,
            &r,
        )
        .unwrap();
        assert_eq!(ok.access_token, "t");
        assert!(ok.expires_at.is_some());
        assert!(tokens_from(serde_json::json!({"token_type": "Bearer"}), None, None, &s, &r).is_err());
        assert!(
            tokens_from(serde_json::json!({"access_token": "t", "token_type": "DPoP"}), None, None, &s, &r).is_err()
        );
        assert!(
            tokens_from(serde_json::json!({"access_token": "t\n", "token_type": "Bearer"}), None, None, &s, &r)
                .is_err()
        );
    }

    #[test]
    fn pkce_verifier_is_43_url_safe_characters() {
        let v = random_token().unwrap();
        assert_eq!(v.len(), 43);
        assert!(v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_ne!(v, random_token().unwrap());
    }
}
