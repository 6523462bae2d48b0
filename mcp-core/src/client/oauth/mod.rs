//! OAuth 2.1 authorization for Streamable HTTP connections to protected servers (MCP's
//! authorization specification, revisions 2025-11-25 and 2026-07-28).
//!
//! Give [`ClientBuilder::oauth`](crate::client::ClientBuilder::oauth) an [`OAuth`] and connect with
//! [`connect_http`](crate::client::ClientBuilder::connect_http). When the server answers 401, the
//! client:
//!
//! 1. reads the protected resource metadata (RFC 9728) from the challenge's
//!    `resource_metadata`, else from `/.well-known/oauth-protected-resource` with the
//!    server's path appended, then at the root, and checks that its `resource` covers the
//!    server's URL;
//! 2. reads the authorization server's metadata (RFC 8414 `oauth-authorization-server`, then
//!    OpenID `openid-configuration`, with path insertion for issuers that have a path) and
//!    checks its `issuer`;
//! 3. identifies itself: pre-registered credentials ([`OAuth::client_credentials`]), else a
//!    client ID metadata document URL ([`OAuth::client_metadata_url`]) when the server
//!    advertises `client_id_metadata_document_supported`, else dynamic client registration
//!    (RFC 7591);
//! 4. sends the person to the authorization endpoint (authorization code with PKCE `S256`,
//!    `state`, and the `resource` parameter of RFC 8707) through the [`Authorizer`], checks the
//!    redirect's `state` and `iss` (RFC 9207), and exchanges the code at the token endpoint
//!    with the authentication method the server supports (`client_secret_basic`,
//!    `client_secret_post` or `none`);
//! 5. retries the request with the token, keeps the tokens in a [`TokenStore`] and refreshes
//!    them when the server refuses an old one.
//!
//! Scopes are those of the challenge's `scope`, else the resource's `scopes_supported`, else
//! none (plus `offline_access` when the authorization server lists it, for a refresh token).
//! A 403 with `error="insufficient_scope"` re-authorizes with the union of the scopes held and
//! those asked for ("step-up"), at most [`OAuth::max_step_ups`] times for one request.
//!
//! The person's part is the [`Authorizer`]: open a URL, hand back the redirect. For
//! command-line programs, [`LoopbackAuthorizer`] listens on `127.0.0.1` for the redirect.
//!
//! Without a person, step 4 is another grant, chosen with the constructor:
//! [`OAuth::client_secret`] and [`OAuth::private_key_jwt`] (client credentials),
//! [`OAuth::workload_identity`] (a platform token as an RFC 7523 JWT bearer grant) and
//! [`OAuth::enterprise`] (RFC 8693 token exchange at the identity provider, then RFC 7523 at
//! the server's authorization server). [`OAuth::dpop`] binds the tokens of any grant to a key
//! (RFC 9449): the token request and every MCP request carry a fresh proof, the token is sent
//! as `Authorization: DPoP`, and a server's `use_dpop_nonce` is answered with its nonce. The
//! client declares the extension of each (such as [`CLIENT_CREDENTIALS_EXTENSION`]) in its
//! capabilities.
//!
//! Among several authorization servers, the flow uses the expected issuer ([`OAuth::issuer`]
//! or [`ClientCredentials::issuer`]) and no other, else one it registered with, else the
//! first. A server without protected resource metadata (revision 2025-03-26) is taken to have
//! its authorization server at its origin, with `/authorize`, `/token` and `/register` when
//! that publishes no metadata either.
//!
//! # Where the flow sends credentials
//!
//! A grant that sends the authorization server a client secret, a signed client assertion, a
//! workload's platform token or an identity assertion grant requires the expected issuer:
//! connecting without one fails at once with [`OAuthError::IssuerRequired`], and an MCP
//! server that names only other authorization servers gets
//! [`OAuthError::UnexpectedIssuer`]. Otherwise any server could name an authorization server
//! of its own and collect credentials that work at the real one. The authorization code flow
//! of a public client (no secret) may follow the server's choice: what it sends is worthless
//! elsewhere (PKCE, the `resource` parameter, the `iss` check). [`OAuth::trust_any_issuer`]
//! opts out, for a server trusted as much as its authorization server.
//!
//! # Where the flow sends requests
//!
//! Every URL the flow contacts (metadata, the authorization, token and registration endpoints)
//! must be `https://`; plain `http://` is accepted only to a loopback address (`localhost`,
//! `127.0.0.0/8`, `::1`), for development ([`OAuthError::InsecureUrl`] otherwise). When the MCP
//! server is on a public address, URLs that name a loopback, private (RFC 1918, `fc00::/7`),
//! link-local (such as the cloud metadata address `169.254.169.254`), shared (`100.64.0.0/10`),
//! unspecified, broadcast or multicast address are refused ([`OAuthError::PrivateAddress`]):
//! a public server cannot point the client at the machines of its own network. A server on
//! such an address itself (an internal deployment) may name others like it;
//! [`OAuth::allow_private_addresses`] lifts the rule. The flow's own HTTP client holds host
//! names to it too: a name is used only with the public addresses it resolves to, and one that
//! resolves only inside is refused. An HTTP client the application gives
//! ([`OAuth::http_client`], or the connection's) resolves names its own way. URLs the
//! application configures itself (the identity provider's token endpoint) need only be
//! `https://`.
//!
//! The flow follows no redirect: its own HTTP client is built without, and an answer that is
//! a redirect (or, with an application's client that follows them, one that was redirected)
//! is refused with [`OAuthError::Redirected`] on the token and registration endpoints and
//! read as "no document here" at a metadata location. A redirect of a token request would
//! re-send the client's credentials to wherever it points.

mod challenge;
mod client_auth;
mod config;
mod discovery;
mod fetch;
mod flow;
mod grants;
mod keys;
mod loopback;
mod metadata;
mod policy;
mod registration;
mod store;
mod token_endpoint;
mod tokens;

pub use crate::protocol::OAuthError;

pub use config::{
    Authorizer, AuthorizerFn, CLIENT_CREDENTIALS_EXTENSION, ClientCredentials, DEFAULT_MAX_STEP_UPS, DPOP_EXTENSION,
    ENTERPRISE_AUTHORIZATION_EXTENSION, EnterpriseAuthorization, OAuth, TokenSource, WORKLOAD_IDENTITY_EXTENSION,
    authorizer_fn,
};
pub use keys::SigningKey;
pub use loopback::LoopbackAuthorizer;
pub(crate) use policy::resolver as flow_resolver;
pub use store::{MemoryTokenStore, StoredTokens, TokenStore};
pub(crate) use tokens::OAuthLogin;

/// The `error` of the `Bearer` (or `DPoP`) challenge in a `WWW-Authenticate` header.
pub(crate) fn challenge_error(header: &str) -> Option<String> {
    challenge::parse(header)?.error
}

/// The `scope` of the `Bearer` challenge in a `WWW-Authenticate` header (empty if none).
pub(crate) fn challenge_scope(header: &str) -> String {
    challenge::parse(header).and_then(|c| c.scope).unwrap_or_default()
}

/// Whether a `WWW-Authenticate` header holds a `Bearer` or `DPoP` challenge.
pub(crate) fn is_bearer_challenge(header: &str) -> bool {
    challenge::parse(header).is_some()
}
