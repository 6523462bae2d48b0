//! What the application gives the flow: the [`Authorizer`], credentials, the token store.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use super::{MemoryTokenStore, OAuthError, SigningKey, TokenStore};
use crate::engine::BoxFuture;

/// The person's part of the authorization code flow: show them the authorization server's
/// page and return where it redirected to.
///
/// [`authorizer_fn`] makes one of a closure; [`LoopbackAuthorizer`](super::LoopbackAuthorizer) serves command-line apps.
pub trait Authorizer: Send + Sync + 'static {
    /// The redirect URI registered for the client (where the authorization server sends the
    /// person back, with the code).
    fn redirect_uri(&self) -> String;

    /// Has the person visit `authorization_url` and returns the full URL the authorization
    /// server redirected to (with `code`, `state` and perhaps `iss` in its query). The flow
    /// checks `state` and `iss` itself.
    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, OAuthError>>;
}

/// An [`Authorizer`] made of a redirect URI and a closure (see [`authorizer_fn`]).
pub struct AuthorizerFn<F> {
    redirect_uri: String,
    authorize: F,
}

impl<F> fmt::Debug for AuthorizerFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizerFn").field("redirect_uri", &self.redirect_uri).finish_non_exhaustive()
    }
}

/// An authorizer whose redirect URI is `redirect_uri` and which gets the redirect for an
/// authorization URL with `authorize(url).await`.
pub fn authorizer_fn<F, Fut>(redirect_uri: impl Into<String>, authorize: F) -> AuthorizerFn<F>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, OAuthError>> + Send + 'static,
{
    AuthorizerFn { redirect_uri: redirect_uri.into(), authorize }
}

impl<F, Fut> Authorizer for AuthorizerFn<F>
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, OAuthError>> + Send + 'static,
{
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, OAuthError>> {
        Box::pin((self.authorize)(authorization_url))
    }
}

/// Credentials registered with the authorization server beforehand (the first choice of the
/// specification's order of preference).
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client id.
    pub client_id: String,
    /// The client secret, for a confidential client.
    pub client_secret: Option<String>,
    /// The authorization server these credentials belong to (its issuer). Credentials are
    /// never presented to another server than theirs. `None` leaves it to
    /// [`OAuth::issuer`]; with neither, credentials with a secret are refused (see
    /// [`OAuthError::IssuerRequired`]) unless [`OAuth::trust_any_issuer`] says otherwise.
    pub issuer: Option<String>,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// Where a token the client presents as an assertion comes from: a workload's platform token
/// ([`OAuth::workload_identity`]) or a person's identity provider token
/// ([`EnterpriseAuthorization`]).
///
/// The source is asked each time a token is needed, so a file that the platform rotates (a
/// Kubernetes projected service-account token, say) is read afresh.
#[derive(Clone)]
pub struct TokenSource {
    read: Arc<dyn Fn() -> BoxFuture<'static, Result<String, OAuthError>> + Send + Sync>,
    label: String,
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TokenSource").field(&self.label).finish()
    }
}

impl TokenSource {
    /// The token in the file at `path` (surrounding whitespace removed), read each time it is
    /// needed.
    pub fn file(path: impl Into<std::path::PathBuf>) -> Self {
        let path: std::path::PathBuf = path.into();
        let label = format!("file {}", path.display());
        let read = move || -> BoxFuture<'static, Result<String, OAuthError>> {
            let path = path.clone();
            Box::pin(async move {
                let read = {
                    let path = path.clone();
                    tokio::task::spawn_blocking(move || std::fs::read_to_string(path))
                };
                let text = read
                    .await
                    .map_err(|e| OAuthError::Assertion(e.to_string()))?
                    .map_err(|e| OAuthError::Assertion(format!("cannot read {}: {e}", path.display())))?;
                let token = text.trim();
                if token.is_empty() {
                    return Err(OAuthError::Assertion(format!("{} is empty", path.display())));
                }
                Ok(token.to_owned())
            })
        };
        TokenSource { read: Arc::new(read), label }
    }

    /// The token `callback` returns, asked each time one is needed.
    pub fn callback<F, Fut>(callback: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, OAuthError>> + Send + 'static,
    {
        TokenSource { read: Arc::new(move || Box::pin(callback())), label: "callback".into() }
    }

    /// Always `token` (for tokens that outlive the connection, and tests).
    pub fn fixed(token: impl Into<String>) -> Self {
        let token = token.into();
        TokenSource {
            read: Arc::new(move || {
                let token = token.clone();
                Box::pin(async move { Ok(token) })
            }),
            label: "fixed".into(),
        }
    }

    /// A token now.
    pub(crate) async fn token(&self) -> Result<String, OAuthError> {
        (self.read)().await
    }
}

/// Enterprise-managed authorization (the `io.modelcontextprotocol/enterprise-managed-authorization`
/// extension): the person's identity provider token is exchanged at the identity provider for
/// an identity assertion authorization grant (ID-JAG, RFC 8693 token exchange), which the MCP
/// server's authorization server exchanges for an access token (RFC 7523 JWT bearer grant).
///
/// ```
/// use typed_mcp::client::oauth::{ClientCredentials, EnterpriseAuthorization, OAuth, TokenSource};
///
/// let oauth = OAuth::enterprise(EnterpriseAuthorization::new(
///     "https://idp.example.com/oauth2/token",
///     "idp-client-id",
///     TokenSource::fixed("eyJ…the person's ID token"),
///     ClientCredentials { client_id: "mcp-client".into(), client_secret: Some("s3cret".into()), issuer: None },
/// ))
/// .issuer("https://auth.example.com");
/// # let _ = oauth;
/// ```
#[derive(Clone, Debug)]
pub struct EnterpriseAuthorization {
    pub(crate) idp_token_endpoint: String,
    pub(crate) idp_client_id: String,
    pub(crate) idp_client_secret: Option<String>,
    pub(crate) id_token: TokenSource,
    pub(crate) client: ClientCredentials,
}

impl EnterpriseAuthorization {
    /// Exchanges the ID token `id_token` gives at the identity provider's
    /// `idp_token_endpoint` (as its client `idp_client_id`), then the grant at the MCP
    /// server's authorization server as `client`.
    pub fn new(
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: TokenSource,
        client: ClientCredentials,
    ) -> Self {
        EnterpriseAuthorization {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
            id_token,
            client,
        }
    }

    /// The client secret at the identity provider, for a confidential client there
    /// (`client_secret_basic`).
    pub fn idp_client_secret(mut self, secret: impl Into<String>) -> Self {
        self.idp_client_secret = Some(secret.into());
        self
    }
}

/// How the client obtains its tokens.
#[derive(Clone)]
pub(crate) enum Grant {
    /// Authorization code with PKCE: a person approves in a browser.
    AuthorizationCode(Arc<dyn Authorizer>),
    /// Client credentials (RFC 6749 section 4.4): the client acts for itself.
    ClientCredentials,
    /// A platform token presented as an RFC 7523 JWT bearer grant.
    WorkloadIdentity(TokenSource),
    /// RFC 8693 token exchange at the identity provider, then an RFC 7523 JWT bearer grant.
    Enterprise(Arc<EnterpriseAuthorization>),
}

/// The DPoP key the client proves possession of: generated for the connection, or given.
#[derive(Clone, Debug)]
pub(crate) enum DpopSetting {
    Generate,
    Key(SigningKey),
}

/// The extension identifier of client credentials (SEP-1046).
pub const CLIENT_CREDENTIALS_EXTENSION: &str = "io.modelcontextprotocol/oauth-client-credentials";
/// The extension identifier of enterprise-managed authorization (SEP-990).
pub const ENTERPRISE_AUTHORIZATION_EXTENSION: &str = "io.modelcontextprotocol/enterprise-managed-authorization";
/// The extension identifier of DPoP-bound tokens (SEP-1932).
pub const DPOP_EXTENSION: &str = "io.modelcontextprotocol/auth/dpop";
/// The extension identifier of workload identity federation (SEP-1933).
pub const WORKLOAD_IDENTITY_EXTENSION: &str = "io.modelcontextprotocol/auth/wif";

/// How the client authorizes a connection to a protected server: given to
/// [`ClientBuilder::oauth`](crate::client::ClientBuilder::oauth).
///
/// Pick the grant in one line, then add options:
///
/// | who is there | constructor |
/// |---|---|
/// | a person with a browser | [`OAuth::new`] with an [`Authorizer`] |
/// | a backend with a client secret | [`OAuth::client_secret`] |
/// | a backend with a registered key | [`OAuth::private_key_jwt`] |
/// | a workload with a platform token | [`OAuth::workload_identity`] |
/// | a person signed in to the company's identity provider | [`OAuth::enterprise`] |
///
/// Any of them binds its tokens to a key with [`dpop`](OAuth::dpop). Every grant but the
/// person's (without a client secret) sends the authorization server credentials, so it needs
/// to know which server that is: [`issuer`](OAuth::issuer).
///
/// ```
/// use typed_mcp::client::oauth::{OAuth, OAuthError, authorizer_fn};
///
/// let oauth = OAuth::new(authorizer_fn("http://127.0.0.1:8765/callback", |url| async move {
///     println!("Open {url} and paste the address you land on:");
///     let mut line = String::new();
///     std::io::stdin().read_line(&mut line).map_err(|e| OAuthError::Callback(e.to_string()))?;
///     Ok(line.trim().to_owned())
/// }))
/// .client_name("My MCP app");
/// # let _ = oauth;
/// ```
#[derive(Clone)]
pub struct OAuth {
    pub(crate) grant: Grant,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) client_name: String,
    pub(crate) credentials: Option<ClientCredentials>,
    pub(crate) client_key: Option<SigningKey>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) max_step_ups: u32,
    pub(crate) offline_access: bool,
    pub(crate) scope: Option<String>,
    pub(crate) dpop: Option<DpopSetting>,
    pub(crate) http: Option<reqwest::Client>,
    #[cfg(feature = "rustls")]
    pub(crate) roots: Option<crate::tls::RootCertificates>,
    pub(crate) issuer: Option<String>,
    pub(crate) any_issuer: bool,
    pub(crate) allow_private: bool,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match &self.grant {
            Grant::AuthorizationCode(a) => format!("authorization_code (redirect {})", a.redirect_uri()),
            Grant::ClientCredentials => "client_credentials".into(),
            Grant::WorkloadIdentity(source) => format!("workload identity ({source:?})"),
            Grant::Enterprise(e) => format!("enterprise-managed (identity provider {})", e.idp_token_endpoint),
        };
        f.debug_struct("OAuth")
            .field("grant", &grant)
            .field("client_name", &self.client_name)
            .field("credentials", &self.credentials)
            .field("client_key", &self.client_key)
            .field("metadata_url", &self.metadata_url)
            .field("max_step_ups", &self.max_step_ups)
            .field("dpop", &self.dpop.is_some())
            .field("issuer", &self.issuer)
            .field("trust_any_issuer", &self.any_issuer)
            .field("allow_private_addresses", &self.allow_private)
            .finish_non_exhaustive()
    }
}

/// How many step-up authorizations one request may cause by default.
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;

impl OAuth {
    fn with_grant(grant: Grant) -> Self {
        OAuth {
            grant,
            store: Arc::new(MemoryTokenStore::default()),
            client_name: "MCP client".into(),
            credentials: None,
            client_key: None,
            metadata_url: None,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            offline_access: true,
            scope: None,
            dpop: None,
            http: None,
            #[cfg(feature = "rustls")]
            roots: None,
            issuer: None,
            any_issuer: false,
            allow_private: false,
        }
    }

    /// Authorizes through `authorizer` (a person approves in a browser; authorization code
    /// with PKCE), registering dynamically unless told otherwise, with tokens kept in memory
    /// ([`MemoryTokenStore`]).
    pub fn new(authorizer: impl Authorizer) -> Self {
        Self::with_grant(Grant::AuthorizationCode(Arc::new(authorizer)))
    }

    /// Client credentials with a client secret (`client_secret_basic`, or
    /// `client_secret_post` when that is all the authorization server supports): a backend
    /// acting for itself, no person involved.
    pub fn client_secret(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        let mut oauth = Self::with_grant(Grant::ClientCredentials);
        oauth.credentials =
            Some(ClientCredentials { client_id: client_id.into(), client_secret: Some(secret.into()), issuer: None });
        oauth
    }

    /// Client credentials authenticated with a JWT the client signs with `key`
    /// (`private_key_jwt`, RFC 7523): no shared secret; the authorization server knows the
    /// public key.
    pub fn private_key_jwt(client_id: impl Into<String>, key: SigningKey) -> Self {
        let mut oauth = Self::with_grant(Grant::ClientCredentials);
        oauth.credentials = Some(ClientCredentials { client_id: client_id.into(), client_secret: None, issuer: None });
        oauth.client_key = Some(key);
        oauth
    }

    /// Workload identity federation: the platform's token for this workload (a Kubernetes
    /// service-account token, a cloud instance identity…) is presented as an RFC 7523 JWT
    /// bearer grant, read from `source` each time a token is requested. Add
    /// [`client_credentials`](Self::client_credentials) when the authorization server also
    /// wants the client identified.
    pub fn workload_identity(source: TokenSource) -> Self {
        Self::with_grant(Grant::WorkloadIdentity(source))
    }

    /// Enterprise-managed authorization (see [`EnterpriseAuthorization`]).
    pub fn enterprise(enterprise: EnterpriseAuthorization) -> Self {
        let mut oauth = Self::with_grant(Grant::Enterprise(Arc::new(enterprise.clone())));
        oauth.credentials = Some(enterprise.client);
        oauth
    }

    /// The `client_name` sent in dynamic client registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Uses credentials registered beforehand instead of registering.
    pub fn client_credentials(mut self, credentials: ClientCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// Authenticates to the token endpoint with a JWT signed by `key` (`private_key_jwt`)
    /// rather than with a client secret, whatever the grant.
    pub fn client_key(mut self, key: SigningKey) -> Self {
        self.client_key = Some(key);
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as its `client_id`
    /// with authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// The scopes to ask for (space-separated) instead of those the server's challenge or
    /// metadata name.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// Binds the tokens to a P-256 key generated for the connection (DPoP, RFC 9449): every
    /// token request and MCP request carries a proof signed with it, and a stolen token is
    /// useless without the key.
    pub fn dpop(mut self) -> Self {
        self.dpop = Some(DpopSetting::Generate);
        self
    }

    /// Binds the tokens to `key` (DPoP, RFC 9449), for a key that outlives the connection
    /// (tokens kept in a [`TokenStore`] stay usable).
    pub fn dpop_key(mut self, key: SigningKey) -> Self {
        self.dpop = Some(DpopSetting::Key(key));
        self
    }

    /// Keeps tokens (and dynamic registrations) in `store` instead of in memory.
    pub fn token_store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How many times one request may re-authorize for more scopes after 403
    /// `insufficient_scope` (default [`DEFAULT_MAX_STEP_UPS`]).
    pub fn max_step_ups(mut self, max: u32) -> Self {
        self.max_step_ups = max;
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) when the authorization server
    /// lists it in `scopes_supported` (default true; authorization code only).
    pub fn offline_access(mut self, request: bool) -> Self {
        self.offline_access = request;
        self
    }

    /// The extensions (by identifier) this configuration uses, which the client declares in
    /// its capabilities.
    pub fn extensions(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        match self.grant {
            Grant::AuthorizationCode(_) => {}
            Grant::ClientCredentials => out.push(CLIENT_CREDENTIALS_EXTENSION),
            Grant::WorkloadIdentity(_) => out.push(WORKLOAD_IDENTITY_EXTENSION),
            Grant::Enterprise(_) => out.push(ENTERPRISE_AUTHORIZATION_EXTENSION),
        }
        if self.dpop.is_some() {
            out.push(DPOP_EXTENSION);
        }
        out
    }

    /// The authorization server this client deals with (its issuer identifier, as its
    /// metadata's `issuer` says it): the flow uses it and no other, and fails with
    /// [`OAuthError::UnexpectedIssuer`] when the MCP server names only others.
    ///
    /// Required (or [`ClientCredentials::issuer`], or [`trust_any_issuer`](Self::trust_any_issuer))
    /// for every grant that sends the authorization server something worth stealing: a client
    /// secret, a signed client assertion ([`private_key_jwt`](Self::private_key_jwt),
    /// [`client_key`](Self::client_key)), a workload's platform token, an identity assertion
    /// grant. Without it, connecting fails with [`OAuthError::IssuerRequired`]: otherwise a
    /// server could name an authorization server of its own, collect the credentials and
    /// replay them at the real one.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sends the credentials to whatever authorization server the MCP server names: only for
    /// an MCP server trusted as much as the authorization server itself (the same operator),
    /// or for a test harness that picks the authorization server at run time. Prefer
    /// [`issuer`](Self::issuer).
    pub fn trust_any_issuer(mut self) -> Self {
        self.any_issuer = true;
        self
    }

    /// Lets the flow contact loopback, private and link-local addresses although the MCP server
    /// is on a public one (by default refused: see the [policy](crate::client::oauth#where-the-flow-sends-requests)).
    pub fn allow_private_addresses(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// The issuer the flow must use, if one was named.
    pub(crate) fn expected_issuer(&self) -> Option<&str> {
        self.issuer.as_deref().or_else(|| self.credentials.as_ref().and_then(|c| c.issuer.as_deref()))
    }

    /// Whether the grant sends the authorization server a secret, a signed assertion or a
    /// platform token.
    fn sends_credentials(&self) -> bool {
        let secret = self.credentials.as_ref().is_some_and(|c| c.client_secret.is_some());
        secret || self.client_key.is_some() || !matches!(self.grant, Grant::AuthorizationCode(_))
    }

    /// Fails when the grant sends credentials and no expected issuer says where they may go.
    pub(crate) fn check_issuer(&self) -> Result<(), OAuthError> {
        if self.sends_credentials() && self.expected_issuer().is_none() && !self.any_issuer {
            return Err(OAuthError::IssuerRequired);
        }
        Ok(())
    }

    /// Uses `client` for the flow's requests (metadata, registration, tokens); by default an
    /// HTTP client of the flow's own that follows no redirects (with the connection's root
    /// certificates), or the connection's client when the application gave one
    /// ([`HttpClientConfig::http_client`](crate::client::http::HttpClientConfig::http_client)).
    ///
    /// A client given here (or to the connection) is used as it is: build it with
    /// `redirect(reqwest::redirect::Policy::none())`, since a client that follows a `307` or
    /// `308` answer of a token endpoint re-sends the client's credentials to where it points.
    /// The flow refuses the answer of a request that was redirected all the same.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Trusts `roots` for the flow's requests (metadata, registration, tokens) besides the
    /// platform's certificate store and the connection's
    /// [`root_certificates`](crate::client::http::HttpClientConfig::root_certificates): for an
    /// authorization server whose certificate comes from another private CA than the MCP
    /// server's (feature `rustls`). Not used with [`http_client`](Self::http_client).
    #[cfg(feature = "rustls")]
    pub fn root_certificates(mut self, roots: crate::tls::RootCertificates) -> Self {
        self.roots = Some(roots);
        self
    }
}
