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
use super::config::{DpopSetting, EnterpriseAuthorization, Grant};
use super::{OAuth, OAuthError, SigningKey, StoredTokens};

/// The largest metadata, registration or token document read.
const MAX_DOCUMENT: usize = 256 * 1024;
/// How long one request of the flow may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long before its expiry a token is refreshed instead of sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(10);
/// RFC 7523 section 2.1.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// RFC 8693 section 2.1.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The identity assertion authorization grant's token type (SEP-990).
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// RFC 8693 section 3.
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// RFC 7521 section 4.2 (`private_key_jwt`).
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// The header that carries a DPoP proof, and the one that carries a server's nonce.
const DPOP: &str = "dpop";
const DPOP_NONCE: &str = "dpop-nonce";

/// The `DPoP-Nonce` a response carries, if it is a plausible one.
fn dpop_nonce(headers: &reqwest::header::HeaderMap) -> Option<&str> {
    headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()).filter(|n| !n.is_empty() && n.len() <= 1024)
}

/// What the protected resource metadata (RFC 9728) says.
#[derive(Debug, Clone)]
struct ResourceMetadata {
    /// `resource`, exactly as published (sent back as the `resource` parameter).
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Option<Vec<String>>,
    /// No metadata was published (a 2025-03-26 server): the authorization server is at the
    /// server's origin.
    legacy: bool,
}

/// What the authorization server metadata (RFC 8414) says, as far as the flow needs it.
#[derive(Debug, Clone)]
struct ServerMetadata {
    issuer: String,
    /// Absent for servers that only serve grants without a person (client credentials…).
    authorization_endpoint: Option<String>,
    /// Whether it supports PKCE with `S256` (the authorization code flow requires it).
    pkce_s256: bool,
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
    /// The key for `private_key_jwt`.
    key: Option<SigningKey>,
}

/// Token endpoint authentication (RFC 6749 section 2.3, RFC 7591 section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthMethod {
    Basic,
    Post,
    None,
    /// RFC 7523 section 2.2: a JWT signed with the client's key.
    PrivateKeyJwt,
}

impl AuthMethod {
    fn name(self) -> &'static str {
        match self {
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
            AuthMethod::None => "none",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(AuthMethod::Basic),
            "client_secret_post" => Some(AuthMethod::Post),
            "none" => Some(AuthMethod::None),
            "private_key_jwt" => Some(AuthMethod::PrivateKeyJwt),
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
    /// The authorization server's last DPoP nonce.
    as_nonce: Option<String>,
}

/// The access token requests carry now.
#[derive(Clone)]
struct Current {
    token: String,
    expires_at: Option<SystemTime>,
    /// Sent with the `DPoP` scheme and a proof.
    dpop: bool,
}

/// The OAuth side of one HTTP connection.
pub(crate) struct OAuthSession {
    config: OAuth,
    http: reqwest::Client,
    server_url: Url,
    /// The access token requests carry, and when it expires.
    current: RwLock<Option<Current>>,
    state: tokio::sync::Mutex<FlowState>,
    /// The DPoP key (or why there is none although one was asked for).
    dpop: Option<Result<SigningKey, OAuthError>>,
    /// The MCP server's last DPoP nonce.
    rs_nonce: RwLock<Option<String>>,
}

impl std::fmt::Debug for OAuthSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSession").field("server_url", &self.server_url.as_str()).finish_non_exhaustive()
    }
}

impl OAuthSession {
    pub(crate) fn new(config: OAuth, http: reqwest::Client, server_url: Url) -> Self {
        let http = config.http.clone().unwrap_or(http);
        let dpop = config.dpop.as_ref().map(|setting| match setting {
            DpopSetting::Generate => SigningKey::generate(),
            DpopSetting::Key(key) => Ok(key.clone()),
        });
        OAuthSession {
            config,
            http,
            server_url,
            current: RwLock::default(),
            state: tokio::sync::Mutex::default(),
            dpop,
            rs_nonce: RwLock::default(),
        }
    }

    /// The DPoP key, when the configuration asks for one.
    fn dpop_key(&self) -> Result<Option<&SigningKey>, OAuthError> {
        match &self.dpop {
            None => Ok(None),
            Some(Ok(key)) => Ok(Some(key)),
            Some(Err(e)) => Err(e.clone()),
        }
    }

    /// Adds the authorization of a `method` request to the MCP server carrying `token`:
    /// `Authorization: Bearer`, or for a DPoP-bound token `Authorization: DPoP` and a fresh
    /// proof (with the server's last nonce).
    pub(crate) fn authorize_request(
        &self,
        request: reqwest::RequestBuilder,
        token: &str,
        method: &str,
    ) -> reqwest::RequestBuilder {
        let bound = self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.dpop && c.token == token));
        let key = self.dpop.as_ref().and_then(|k| k.as_ref().ok());
        match (bound, key) {
            (Some(true), Some(key)) => {
                let nonce = self.rs_nonce.read().ok().and_then(|n| n.clone());
                let request = request.header(AUTHORIZATION, format!("DPoP {token}"));
                match key.dpop_proof(method, &self.server_url, nonce.as_deref(), Some(token)) {
                    Ok(proof) => request.header(DPOP, proof),
                    Err(e) => {
                        tracing::warn!(error = %e, "could not sign a DPoP proof");
                        request
                    }
                }
            }
            _ => request.bearer_auth(token),
        }
    }

    /// Remembers the `DPoP-Nonce` a response of the MCP server carries; true when it is new.
    pub(crate) fn observe_nonce(&self, headers: &reqwest::header::HeaderMap) -> bool {
        let Some(nonce) = dpop_nonce(headers) else { return false };
        if self.dpop.is_none() {
            return false;
        }
        let Ok(mut current) = self.rs_nonce.write() else { return false };
        if current.as_deref() == Some(nonce) {
            return false;
        }
        *current = Some(nonce.to_owned());
        true
    }

    /// Whether a flow (discovery, the person's authorization, a token request) is under way.
    pub(crate) fn authorizing(&self) -> bool {
        self.state.try_lock().is_err()
    }

    /// The access token held now, without waiting (for GET streams and `DELETE`).
    pub(crate) fn current(&self) -> Option<String> {
        self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.token.clone()))
    }

    /// The access token to send now, loading it from the store the first time and refreshing
    /// it when it has expired.
    pub(crate) async fn bearer(&self) -> Option<String> {
        let now = SystemTime::now();
        let current = self.current.read().ok().and_then(|c| c.clone());
        match current {
            Some(Current { token, expires_at: None, .. }) => return Some(token),
            Some(Current { token, expires_at: Some(expiry), .. }) if expiry > now + EXPIRY_MARGIN => {
                return Some(token);
            }
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
        self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.token.clone()))
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
        let resource = self.discover_resource_or_legacy(challenge.resource_metadata.as_deref()).await?;
        let issuer = self.issuer_of(&resource, &state);
        let server = match &state.server {
            Some(s) if s.issuer == issuer => s.clone(),
            _ => self.discover_server_or_legacy(&issuer, resource.legacy).await?,
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
            let resource = self.discover_resource_or_legacy(challenge.resource_metadata.as_deref()).await?;
            let server = self.discover_server_or_legacy(&self.issuer_of(&resource, &state), resource.legacy).await?;
            state.resource = Some(resource);
            state.server = Some(server);
        }
        tracing::info!(scope = %union, "stepping up authorization for more scopes");
        self.authorize(&mut state, Some(union)).await
    }

    /// Whether the token changed since a request was sent with `used` (another request
    /// already authorized): then that request is simply retried.
    fn replaced_since(&self, used: Option<&str>) -> bool {
        let current = self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.token.clone()));
        current.is_some() && current.as_deref() != used
    }

    fn set_current(&self, tokens: Option<&StoredTokens>) {
        if let Ok(mut current) = self.current.write() {
            *current =
                tokens.map(|t| Current { token: t.access_token.clone(), expires_at: t.expires_at, dpop: t.dpop_bound });
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

    /// The authorization server to use among those the resource names: the one the client's
    /// credentials are registered with, else one it registered with dynamically, else the
    /// first.
    fn issuer_of(&self, resource: &ResourceMetadata, state: &FlowState) -> String {
        let servers = &resource.authorization_servers;
        let registered = self.config.credentials.as_ref().and_then(|c| c.issuer.as_ref());
        if let Some(issuer) = registered.filter(|i| servers.contains(i)) {
            return issuer.clone();
        }
        if let Some(issuer) = servers.iter().find(|s| state.registrations.contains_key(*s)) {
            return issuer.clone();
        }
        servers.first().cloned().unwrap_or_else(|| origin(&self.server_url))
    }

    /// Scopes for a first authorization: the challenge's, else the resource's
    /// `scopes_supported`, else none; with `offline_access` when the server offers it.
    fn initial_scope(
        &self,
        challenge: &BearerChallenge,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
    ) -> Option<String> {
        if let Some(scope) = &self.config.scope {
            return Some(scope.clone());
        }
        let base = challenge
            .scope
            .clone()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| resource.scopes_supported.as_ref().filter(|s| !s.is_empty()).map(|s| s.join(" ")));
        let offline = self.config.offline_access
            && matches!(self.config.grant, Grant::AuthorizationCode(_))
            && server.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        match (base, offline) {
            (Some(base), true) => Some(union_scopes(&base, "offline_access")),
            (None, true) => Some("offline_access".into()),
            (base, false) => base,
        }
    }

    // ----- discovery -----

    /// The protected resource metadata; when the server publishes none (a server of the
    /// 2025-03-26 revision), the authorization server is taken to be at the server's origin.
    async fn discover_resource_or_legacy(&self, from_challenge: Option<&str>) -> Result<ResourceMetadata, OAuthError> {
        match self.discover_resource(from_challenge).await {
            Err(OAuthError::NoResourceMetadata { .. }) => {
                tracing::debug!("no protected resource metadata: using the server's origin as authorization server");
                Ok(ResourceMetadata {
                    resource: self.server_url.to_string(),
                    authorization_servers: vec![origin(&self.server_url)],
                    scopes_supported: None,
                    legacy: true,
                })
            }
            other => other,
        }
    }

    /// The authorization server's metadata; for a server of the 2025-03-26 revision without
    /// any, its default endpoints (`/authorize`, `/token`, `/register` at the origin).
    async fn discover_server_or_legacy(&self, issuer: &str, legacy: bool) -> Result<ServerMetadata, OAuthError> {
        match self.discover_server(issuer).await {
            Err(OAuthError::NoAuthorizationServerMetadata { .. }) if legacy => {
                tracing::debug!(issuer, "no authorization server metadata: using the default endpoints");
                let base = issuer.trim_end_matches('/');
                Ok(ServerMetadata {
                    issuer: issuer.to_owned(),
                    authorization_endpoint: Some(format!("{base}/authorize")),
                    pkce_s256: true,
                    token_endpoint: format!("{base}/token"),
                    registration_endpoint: Some(format!("{base}/register")),
                    scopes_supported: None,
                    token_endpoint_auth_methods: None,
                    iss_parameter_supported: false,
                    client_id_metadata_document_supported: false,
                })
            }
            other => other,
        }
    }

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
    /// preference: pre-registered, client ID metadata document, dynamic registration. Grants
    /// without a person use the configured credentials (or none, for workload identity).
    async fn registration(&self, state: &mut FlowState, server: &ServerMetadata) -> Result<Registration, OAuthError> {
        let key = self.config.client_key.clone();
        if let Some(credentials) = &self.config.credentials
            && credentials.issuer.as_ref().is_none_or(|i| *i == server.issuer)
        {
            let method = if key.is_some() {
                AuthMethod::PrivateKeyJwt
            } else {
                AuthMethod::for_client(
                    credentials.client_secret.is_some(),
                    server.token_endpoint_auth_methods.as_deref(),
                )
            };
            return Ok(Registration {
                client_id: credentials.client_id.clone(),
                client_secret: credentials.client_secret.clone(),
                method,
                key,
            });
        }
        match &self.config.grant {
            Grant::AuthorizationCode(_) => {}
            Grant::WorkloadIdentity(_) => {
                // The platform token identifies the workload; no client authentication.
                return Ok(Registration {
                    client_id: String::new(),
                    client_secret: None,
                    method: AuthMethod::None,
                    key: None,
                });
            }
            Grant::ClientCredentials | Grant::Enterprise(_) => {
                return Err(OAuthError::NoRegistration { issuer: server.issuer.clone() });
            }
        }
        if let (true, Some(url)) = (server.client_id_metadata_document_supported, &self.config.metadata_url) {
            return Ok(Registration {
                client_id: url.clone(),
                client_secret: None,
                method: AuthMethod::None,
                key: None,
            });
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
                key: None,
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
        let Grant::AuthorizationCode(authorizer) = &self.config.grant else {
            return Err(OAuthError::NoRegistration { issuer: server.issuer.clone() });
        };
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
            "redirect_uris": [authorizer.redirect_uri()],
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
            .filter(|m| *m != AuthMethod::PrivateKeyJwt)
            .unwrap_or_else(|| AuthMethod::for_client(client_secret.is_some(), supported));
        tracing::info!(client_id, method = method.name(), "registered with the authorization server");
        Ok(Registration { client_id: client_id.to_owned(), client_secret, method, key: None })
    }

    // ----- grants and tokens -----

    /// Obtains tokens with the configured grant and keeps them.
    async fn authorize(&self, state: &mut FlowState, scope: Option<String>) -> Result<(), OAuthError> {
        let (Some(resource), Some(server)) = (state.resource.clone(), state.server.clone()) else {
            return Err(OAuthError::NoResourceMetadata { server: self.server_url.to_string() });
        };
        let registration = self.registration(state, &server).await?;
        let mut form = match &self.config.grant {
            Grant::AuthorizationCode(authorizer) => {
                self.authorization_code(authorizer.as_ref(), &resource, &server, &registration, scope.as_deref())
                    .await?
            }
            Grant::ClientCredentials => {
                tracing::info!(issuer = %server.issuer, "requesting a token with client credentials");
                vec![("grant_type", "client_credentials".to_owned())]
            }
            Grant::WorkloadIdentity(source) => {
                tracing::info!(issuer = %server.issuer, "requesting a token with the workload's identity");
                vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", source.token().await?)]
            }
            Grant::Enterprise(enterprise) => {
                let grant = self.identity_assertion(enterprise, &resource, &server, scope.as_deref()).await?;
                tracing::info!(issuer = %server.issuer, "requesting a token with the identity assertion grant");
                vec![("grant_type", JWT_BEARER.to_owned()), ("assertion", grant)]
            }
        };
        form.push(("resource", resource.resource.clone()));
        if let (false, Some(scope)) = (matches!(self.config.grant, Grant::AuthorizationCode(_)), &scope) {
            form.push(("scope", scope.clone()));
        }
        let answer = self.token_request(state, &server, &registration, &form).await?;
        let tokens = self.tokens_from(answer, None, scope, &server, &registration)?;
        self.save(state, tokens).await;
        Ok(())
    }

    /// The authorization code flow with PKCE: the token request's form.
    async fn authorization_code(
        &self,
        authorizer: &dyn super::Authorizer,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
        registration: &Registration,
        scope: Option<&str>,
    ) -> Result<Vec<(&'static str, String)>, OAuthError> {
        if !server.pkce_s256 {
            return Err(OAuthError::PkceNotSupported { issuer: server.issuer.clone() });
        }
        let Some(endpoint) = &server.authorization_endpoint else {
            return Err(OAuthError::MalformedMetadata {
                url: server.issuer.clone(),
                reason: "no `authorization_endpoint`".into(),
            });
        };
        let redirect_uri = authorizer.redirect_uri();
        let verifier = random_token()?;
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let expected_state = random_token()?;
        let mut url = Url::parse(endpoint)
            .map_err(|e| OAuthError::InvalidUrl { url: endpoint.clone(), reason: e.to_string() })?;
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
            if let Some(scope) = scope {
                query.append_pair("scope", scope);
            }
        }
        tracing::info!(issuer = %server.issuer, scope = scope.unwrap_or(""), "authorization required");
        let redirect = authorizer.authorize(url.to_string()).await?;
        let code = check_redirect(&redirect, &expected_state, server)?;
        Ok(vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ])
    }

    /// Enterprise-managed authorization, first step: exchanges the person's identity provider
    /// token for an identity assertion authorization grant for `server` (RFC 8693).
    async fn identity_assertion(
        &self,
        enterprise: &EnterpriseAuthorization,
        resource: &ResourceMetadata,
        server: &ServerMetadata,
        scope: Option<&str>,
    ) -> Result<String, OAuthError> {
        let subject = enterprise.id_token.token().await?;
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE.to_owned()),
            ("requested_token_type", ID_JAG.to_owned()),
            ("audience", server.issuer.clone()),
            ("resource", resource.resource.clone()),
            ("subject_token", subject),
            ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
        ];
        if let Some(scope) = scope {
            form.push(("scope", scope.to_owned()));
        }
        let idp = Registration {
            client_id: enterprise.idp_client_id.clone(),
            client_secret: enterprise.idp_client_secret.clone(),
            method: if enterprise.idp_client_secret.is_some() { AuthMethod::Basic } else { AuthMethod::None },
            key: None,
        };
        tracing::info!(idp = %enterprise.idp_token_endpoint, "exchanging the identity token for an authorization grant");
        let mut no_nonce = None;
        let answer = self
            .post_token(
                &enterprise.idp_token_endpoint,
                &enterprise.idp_token_endpoint,
                &idp,
                &form,
                None,
                &mut no_nonce,
            )
            .await?;
        match answer.get("issued_token_type").and_then(Value::as_str) {
            Some(ID_JAG) => {}
            other => {
                return Err(OAuthError::MalformedTokenResponse(format!(
                    "the identity provider issued {} instead of an identity assertion grant",
                    other.unwrap_or("no issued_token_type")
                )));
            }
        }
        answer
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| OAuthError::MalformedTokenResponse("no access_token in the token exchange answer".into()))
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
            key: None,
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", resource),
        ];
        let answer = match self.token_request(state, &server, &registration, &form).await {
            Ok(answer) => answer,
            Err(e) => {
                // The refresh token is spent or revoked: forget it.
                if let Some(t) = state.tokens.as_mut() {
                    t.refresh_token = None;
                }
                return Err(e);
            }
        };
        let refreshed = self.tokens_from(answer, Some(refresh_token), tokens.scope.clone(), &server, &registration)?;
        tracing::debug!("refreshed the access token");
        self.save(state, refreshed).await;
        Ok(())
    }

    /// POSTs to `server`'s token endpoint with the client's authentication (and a DPoP proof
    /// when tokens are bound).
    async fn token_request(
        &self,
        state: &mut FlowState,
        server: &ServerMetadata,
        registration: &Registration,
        form: &[(&'static str, String)],
    ) -> Result<Value, OAuthError> {
        let key = self.dpop_key()?;
        self.post_token(&server.token_endpoint, &server.issuer, registration, form, key, &mut state.as_nonce).await
    }

    /// POSTs `form` to the token endpoint `endpoint` authenticated as `registration` (a client
    /// assertion names `audience`), with a DPoP proof signed by `dpop` carrying the server's
    /// `nonce`, retried once with a new nonce when the server asks (`use_dpop_nonce`).
    async fn post_token(
        &self,
        endpoint: &str,
        audience: &str,
        registration: &Registration,
        form: &[(&'static str, String)],
        dpop: Option<&SigningKey>,
        nonce: &mut Option<String>,
    ) -> Result<Value, OAuthError> {
        let url = Url::parse(endpoint)
            .map_err(|e| OAuthError::InvalidUrl { url: endpoint.to_owned(), reason: e.to_string() })?;
        let mut retried = false;
        loop {
            let mut form = form.to_vec();
            let mut request = self
                .http
                .post(url.clone())
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(ACCEPT, "application/json")
                .timeout(REQUEST_TIMEOUT);
            match (registration.method, &registration.client_secret, &registration.key) {
                (AuthMethod::PrivateKeyJwt, _, Some(key)) => {
                    form.push(("client_id", registration.client_id.clone()));
                    form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
                    form.push(("client_assertion", key.client_assertion(&registration.client_id, audience)?));
                }
                (AuthMethod::Basic, Some(secret), _) => {
                    // RFC 6749 section 2.3.1: each part form-encoded, then Basic.
                    let id: String = form_urlencoded::byte_serialize(registration.client_id.as_bytes()).collect();
                    let secret: String = form_urlencoded::byte_serialize(secret.as_bytes()).collect();
                    request =
                        request.header(AUTHORIZATION, format!("Basic {}", STANDARD.encode(format!("{id}:{secret}"))));
                }
                (AuthMethod::Post, Some(secret), _) => {
                    form.push(("client_id", registration.client_id.clone()));
                    form.push(("client_secret", secret.clone()));
                }
                _ if registration.client_id.is_empty() => {}
                _ => form.push(("client_id", registration.client_id.clone())),
            }
            if let Some(key) = dpop {
                request = request.header(DPOP, key.dpop_proof("POST", &url, nonce.as_deref(), None)?);
            }
            let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
            let response = request.body(body).send().await.map_err(|e| http_error(endpoint, &e))?;
            let status = response.status();
            let new_nonce = dpop_nonce(response.headers()).map(str::to_owned);
            let body = read_limited(endpoint, response).await?;
            let document: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let error = document.get("error").and_then(Value::as_str);
            if dpop.is_some()
                && let Some(new_nonce) = new_nonce
            {
                let fresh = nonce.as_deref() != Some(new_nonce.as_str());
                *nonce = Some(new_nonce);
                if status == StatusCode::BAD_REQUEST && error == Some("use_dpop_nonce") && fresh && !retried {
                    tracing::debug!("the authorization server asks for a DPoP nonce; retrying with it");
                    retried = true;
                    continue;
                }
            }
            if status != StatusCode::OK {
                return Err(OAuthError::TokenEndpoint {
                    status: status.as_u16(),
                    error: error.unwrap_or("refused").to_owned(),
                    description: document.get("error_description").and_then(Value::as_str).map(str::to_owned),
                });
            }
            if !document.is_object() {
                return Err(OAuthError::MalformedTokenResponse("not a JSON object".into()));
            }
            return Ok(document);
        }
    }

    /// The tokens of a token response (`DPoP` ones only when the client asked for them).
    fn tokens_from(
        &self,
        answer: Value,
        previous_refresh: Option<String>,
        requested_scope: Option<String>,
        server: &ServerMetadata,
        registration: &Registration,
    ) -> Result<StoredTokens, OAuthError> {
        tokens_from(answer, previous_refresh, requested_scope, server, registration, self.dpop.is_some())
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
    dpop: bool,
) -> Result<StoredTokens, OAuthError> {
    let Some(access_token) = answer.get("access_token").and_then(Value::as_str).filter(|t| !t.is_empty()) else {
        return Err(OAuthError::MalformedTokenResponse("no access_token".into()));
    };
    if access_token.len() > 16 * 1024 || reqwest::header::HeaderValue::from_str(access_token).is_err() {
        return Err(OAuthError::MalformedTokenResponse("the access token cannot be sent in a header".into()));
    }
    let dpop_bound = match answer.get("token_type").and_then(Value::as_str) {
        Some(t) if t.eq_ignore_ascii_case("bearer") => false,
        Some(t) if dpop && t.eq_ignore_ascii_case("dpop") => true,
        Some(t) => return Err(OAuthError::MalformedTokenResponse(format!("token type `{t}` is not Bearer"))),
        None => return Err(OAuthError::MalformedTokenResponse("no token_type".into())),
    };
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
        dpop_bound,
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
        legacy: false,
    })
}

fn parse_server_metadata(url: &str, document: &Value) -> Result<ServerMetadata, OAuthError> {
    let malformed = |reason: &str| OAuthError::MalformedMetadata { url: url.to_owned(), reason: reason.to_owned() };
    let text = |name: &str| document.get(name).and_then(Value::as_str).map(str::to_owned);
    Ok(ServerMetadata {
        issuer: text("issuer").ok_or_else(|| malformed("no `issuer`"))?,
        authorization_endpoint: text("authorization_endpoint"),
        pkce_s256: document
            .get("code_challenge_methods_supported")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|m| m == "S256")),
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
            authorization_endpoint: Some("http://as.test/authorize".into()),
            pkce_s256: true,
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
        let r = Registration { client_id: "c".into(), client_secret: None, method: AuthMethod::None, key: None };
        let ok = tokens_from(
            serde_json::json!({"access_token": "t", "token_type": "bearer", "expires_in": 60}),
            None,
            None,
            &s,
            &r,
            false,
        )
        .unwrap();
        assert_eq!(ok.access_token, "t");
        assert!(ok.expires_at.is_some());
        assert!(tokens_from(serde_json::json!({"token_type": "Bearer"}), None, None, &s, &r, false).is_err());
        assert!(
            tokens_from(serde_json::json!({"access_token": "t", "token_type": "DPoP"}), None, None, &s, &r, false)
                .is_err()
        );
        assert!(
            tokens_from(serde_json::json!({"access_token": "t\n", "token_type": "Bearer"}), None, None, &s, &r, false)
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
