//! OAuth 2.1 authorization for Streamable HTTP servers: the server as a *resource server*.
//!
//! MCP makes a remote server an OAuth 2.1 resource server (the authorization section of the
//! specification, from revision 2025-06-18 on). Every request carries `Authorization: Bearer
//! <access token>`; the server checks the token, was issued for *this* server (its audience is
//! the server's resource identifier, RFC 8707), and answers a request without a valid one with
//! `401` and a `WWW-Authenticate` challenge naming its protected resource metadata (RFC 9728),
//! where the client learns which authorization server to ask.
//!
//! - [`Authorization`] is the setting given to
//!   `HttpConfig::authorization` (feature `http`): the
//!   resource identifier, the authorization servers, the scopes, and the [`TokenVerifier`].
//! - Two verifiers are shipped with the `auth` feature: `JwtVerifier` (JWT access tokens,
//!   RFC 9068, checked against the keys the issuer publishes) and `IntrospectionVerifier`
//!   (RFC 7662). They reach the authorization server over `https://` with the default
//!   feature `rustls`, trusting the platform's roots; an issuer whose certificate comes from a
//!   private CA is trusted with their `root_certificates` (`typed_mcp::tls::RootCertificates`).
//!   A certificate that is not trusted makes the check fail as `TokenError::Unavailable`
//!   (`503`), saying so.
//! - With `Authorization::dpop` (feature `auth`), tokens bound to the client's key (DPoP,
//!   RFC 9449) are accepted with `Authorization: DPoP` and a proof per request (`Dpop`).
//! - A tool, prompt or resource may require scopes ([`ToolDef::scopes`](crate::ToolDef::scopes));
//!   a call whose token lacks them is answered `403` with `error="insufficient_scope"` and the
//!   scopes to ask for, so the client can step up.
//! - Handlers see the verified identity through [`Context::auth`](crate::Context::auth), never
//!   the token itself. The token's subject becomes the request's
//!   `Principal` (`transport::http::Principal`): a 2025-era session belongs to the subject
//!   that opened it, and URL-mode elicitations and 2026-era `requestState` are bound to it.

#[cfg(feature = "auth")]
mod cache;
#[cfg(feature = "auth")]
mod dpop;
#[cfg(feature = "auth")]
mod fetch;
#[cfg(feature = "auth")]
mod introspection;
#[cfg(feature = "auth")]
mod jwt;
#[cfg(feature = "auth")]
mod proof;

use std::collections::BTreeSet;
use std::sync::Arc;
#[cfg(feature = "auth")]
use std::time::Duration;
use std::time::SystemTime;

use crate::engine::BoxFuture;

#[cfg(feature = "auth")]
pub(crate) use dpop::DpopRefusal;
#[cfg(feature = "auth")]
pub use dpop::{Dpop, MemoryReplayCache, ReplayCache};
#[cfg(feature = "auth")]
pub use introspection::IntrospectionVerifier;
#[cfg(feature = "auth")]
pub use jwt::JwtVerifier;

/// Whether a token's identity says it is bound to a key (`cnf.jkt`, RFC 9449 section 6): such
/// a token is never accepted as a bearer token, DPoP configured or not.
#[cfg(feature = "http")]
pub(crate) fn is_bound(info: &AuthInfo) -> bool {
    info.claims().get("cnf").and_then(|c| c.get("jkt")).is_some()
}

/// The verified identity behind a request: what a [`TokenVerifier`] learned from its access
/// token. The token itself is not kept: a server must not pass it on to other services.
/// Cheap to clone (verifiers hand out copies of what they cache).
#[derive(Debug, Clone, PartialEq)]
pub struct AuthInfo {
    subject: Arc<str>,
    client_id: Option<Arc<str>>,
    scopes: Arc<BTreeSet<String>>,
    expires_at: Option<SystemTime>,
    claims: Arc<serde_json::Map<String, serde_json::Value>>,
}

impl AuthInfo {
    /// The identity of `subject` (the token's `sub`), with no scopes.
    pub fn new(subject: impl Into<String>) -> Self {
        AuthInfo {
            subject: Arc::from(subject.into()),
            client_id: None,
            scopes: Arc::default(),
            expires_at: None,
            claims: Arc::default(),
        }
    }

    /// The OAuth client the token was issued to.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(Arc::from(client_id.into()));
        self
    }

    /// The scopes the token grants.
    pub fn with_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = Arc::new(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// When the token expires.
    pub fn with_expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// Every claim of the token (or of the introspection response).
    pub fn with_claims(mut self, claims: serde_json::Map<String, serde_json::Value>) -> Self {
        self.claims = Arc::new(claims);
        self
    }

    /// The user (or service) the token speaks for.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The OAuth client the token was issued to, when the token says.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes the token grants.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.scopes.iter().map(String::as_str)
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }

    /// When the token expires, when it says.
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_at
    }

    /// Every claim of the token, for what the fields above do not cover.
    pub fn claims(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.claims
    }

    /// The scopes of `required` this identity lacks.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required.iter().filter(|s| !self.scopes.contains(*s)).map(String::as_str).collect()
    }
}

/// The verified identity of one HTTP request, as the transport checked it: carried in the
/// request's extensions to the handler serving it (a type no layer outside the crate can
/// insert), so that two requests of one session in flight at once each see their own token.
#[cfg(feature = "http")]
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestIdentity {
    /// The token's details; `None` when the request carried none (no authorization configured).
    pub(crate) identity: Option<Arc<AuthInfo>>,
    /// Whether lists leave out what the identity may not use.
    pub(crate) hide_unauthorized: bool,
}

/// Why a token was refused. What the client is told is only `error` and a fixed
/// `error_description`; the reason goes to the server's log.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TokenError {
    /// The token is malformed, forged, expired, not yet valid, for another audience or from an
    /// issuer not trusted: `401 invalid_token`.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked now (the authorization server or its keys could not be
    /// reached): `503`, the client may retry.
    #[error("the token could not be verified now: {0}")]
    Unavailable(String),
}

/// Checks an access token and says whose it is. Implement it to verify tokens some other way
/// than the shipped `JwtVerifier` and `IntrospectionVerifier` (feature `auth`).
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token`, which must have been issued for `resource` (the audience to check),
    /// and returns the identity it carries.
    fn verify<'a>(&'a self, token: &'a str, resource: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>>;
}

/// The authorization setting of a protected Streamable HTTP server (see the
/// [module documentation](self)).
///
/// ```
/// # #[cfg(feature = "auth")] {
/// use typed_mcp::auth::{Authorization, JwtVerifier};
/// use typed_mcp::transport::http::HttpConfig;
///
/// let issuer = "https://auth.example.com";
/// let config = HttpConfig::default().authorization(
///     Authorization::new(JwtVerifier::new(issuer))
///         .resource("https://mcp.example.com/mcp")
///         .authorization_server(issuer)
///         .scopes_supported(["notes:read", "notes:write"]),
/// );
/// # let _ = config;
/// # }
/// ```
#[derive(Clone)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub struct Authorization {
    pub(crate) resource: Option<String>,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) required_scopes: Vec<String>,
    pub(crate) initial_scopes: Vec<String>,
    pub(crate) resource_name: Option<String>,
    pub(crate) hide_unauthorized: bool,
    pub(crate) verifier: Arc<dyn TokenVerifier>,
    #[cfg(feature = "auth")]
    pub(crate) dpop: Option<Arc<Dpop>>,
}

impl std::fmt::Debug for Authorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorization")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("hide_unauthorized", &self.hide_unauthorized)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// Requests must carry a token `verifier` accepts.
    pub fn new(verifier: impl TokenVerifier) -> Self {
        Self::with_verifier(Arc::new(verifier))
    }

    /// Like [`new`](Self::new), with a verifier already shared.
    pub fn with_verifier(verifier: Arc<dyn TokenVerifier>) -> Self {
        Authorization {
            resource: None,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            initial_scopes: Vec::new(),
            resource_name: None,
            hide_unauthorized: false,
            verifier,
            #[cfg(feature = "auth")]
            dpop: None,
        }
    }

    /// The resource identifier: the canonical URL clients use for this server, which tokens
    /// must name as their audience. By default it is `http://{address}/mcp` for the address
    /// `StreamableHttp::serve` listens on; a
    /// server mounted in an application with `router_at`, or behind a proxy, must set it.
    pub fn resource(mut self, uri: impl Into<String>) -> Self {
        self.resource = Some(uri.into());
        self
    }

    /// An authorization server (its issuer URL) clients may get tokens from; listed in the
    /// protected resource metadata. Call once per server.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes this server understands, listed in its metadata; a client with no better
    /// hint asks for these.
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes every request needs, whatever it calls (none by default).
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes a `401` challenge tells a client to ask for first (besides the
    /// [`required_scopes`](Self::required_scopes)): the least a client needs to get going, so
    /// that it asks for more (a `403 insufficient_scope` names them) only when it calls
    /// something that needs them. Without any, the challenge names no scope and a client asks
    /// for all of [`scopes_supported`](Self::scopes_supported).
    pub fn initial_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.initial_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A human-readable name for the metadata's `resource_name`.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Accepts DPoP-bound tokens (RFC 9449) as `dpop` says: proofs checked, replays refused,
    /// nonces if asked for, and whether bearer tokens are still accepted. The challenges then
    /// name the `DPoP` scheme with the accepted `algs`.
    #[cfg(feature = "auth")]
    pub fn dpop(mut self, dpop: Dpop) -> Self {
        self.dpop = Some(Arc::new(dpop));
        self
    }

    /// Whether `tools/list`, `prompts/list` and `resources/list` leave out what the request's
    /// token lacks the scopes to use (default: everything is listed, and a call without the
    /// scopes is answered `403` so the client can step up). A list filtered so comes in one
    /// page.
    pub fn hide_unauthorized(mut self, hide: bool) -> Self {
        self.hide_unauthorized = hide;
        self
    }
}

/// The default time a verified token (or an introspection answer) is remembered.
#[cfg(feature = "auth")]
pub(crate) const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(30);

#[cfg(feature = "auth")]
/// The clock skew allowed on `exp` and `nbf`.
pub(crate) const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

#[cfg(feature = "auth")]
/// Seconds since the epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(feature = "auth")]
/// The time `secs` seconds after the epoch.
pub(crate) fn from_unix(secs: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
}

#[cfg(feature = "auth")]
/// Scopes from a `scope` claim (space-separated string) or a `scp` claim (array or string).
pub(crate) fn scopes_of(claims: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    let split = |s: &str| s.split_ascii_whitespace().map(str::to_owned).collect::<Vec<_>>();
    match (claims.get("scope"), claims.get("scp")) {
        (Some(serde_json::Value::String(s)), _) => split(s),
        (_, Some(serde_json::Value::Array(a))) => a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect(),
        (_, Some(serde_json::Value::String(s))) => split(s),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "auth")]
    use serde_json::json;

    #[cfg(feature = "auth")]
    #[test]
    fn scopes_from_either_claim() {
        let c = json!({"scope": "a b  c"});
        assert_eq!(scopes_of(c.as_object().unwrap()), ["a", "b", "c"]);
        let c = json!({"scp": ["x", "y"]});
        assert_eq!(scopes_of(c.as_object().unwrap()), ["x", "y"]);
        let c = json!({"scope": 3});
        assert!(scopes_of(c.as_object().unwrap()).is_empty());
    }

    #[test]
    fn missing_scopes() {
        let info = AuthInfo::new("alice").with_scopes(["notes:read"]);
        let required = vec!["notes:read".to_owned(), "notes:write".to_owned()];
        assert_eq!(info.missing(&required), ["notes:write"]);
        assert!(info.has_scope("notes:read"));
        assert_eq!(info.subject(), "alice");
    }
}
