//! What the application gives the flow: the [`Authorizer`], credentials, the token store.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use super::{MemoryTokenStore, OAuthError, TokenStore};
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
    /// The authorization server these credentials belong to (its issuer); `None` uses them
    /// with any. Credentials are never presented to another server than theirs.
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

/// How the client authorizes a connection to a protected server: given to
/// [`ClientBuilder::oauth`](crate::client::ClientBuilder::oauth).
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
    pub(crate) authorizer: Arc<dyn Authorizer>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) client_name: String,
    pub(crate) credentials: Option<ClientCredentials>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) max_step_ups: u32,
    pub(crate) offline_access: bool,
    pub(crate) http: Option<reqwest::Client>,
    #[cfg(feature = "rustls")]
    pub(crate) roots: Option<crate::tls::RootCertificates>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.authorizer.redirect_uri())
            .field("client_name", &self.client_name)
            .field("credentials", &self.credentials)
            .field("metadata_url", &self.metadata_url)
            .field("max_step_ups", &self.max_step_ups)
            .finish_non_exhaustive()
    }
}

/// How many step-up authorizations one request may cause by default.
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;

impl OAuth {
    /// Authorizes through `authorizer`, registering dynamically unless told otherwise, with
    /// tokens kept in memory ([`MemoryTokenStore`]).
    pub fn new(authorizer: impl Authorizer) -> Self {
        OAuth {
            authorizer: Arc::new(authorizer),
            store: Arc::new(MemoryTokenStore::default()),
            client_name: "MCP client".into(),
            credentials: None,
            metadata_url: None,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            offline_access: true,
            http: None,
            #[cfg(feature = "rustls")]
            roots: None,
        }
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

    /// The HTTPS URL of this client's Client ID Metadata Document, used as its `client_id`
    /// with authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
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
    /// lists it in `scopes_supported` (default true).
    pub fn offline_access(mut self, request: bool) -> Self {
        self.offline_access = request;
        self
    }

    /// Uses `client` for the flow's requests (metadata, registration, tokens); by default the
    /// connection's HTTP client.
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
