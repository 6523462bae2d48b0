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
//! Among several authorization servers, the flow uses the one its credentials name
//! ([`ClientCredentials::issuer`]), else one it registered with, else the first. A server
//! without protected resource metadata (revision 2025-03-26) is taken to have its
//! authorization server at its origin, with `/authorize`, `/token` and `/register` when that
//! publishes no metadata either.

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
pub use store::{MemoryTokenStore, StoredTokens, TokenStore};
pub(crate) use tokens::OAuthSession;

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
