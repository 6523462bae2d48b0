//! Why authorizing with a protected server failed: what was wrong in the documents and
//! redirects of the OAuth 2.1 exchange (pure data, no I/O; the flow is the client's).

/// Why the client's OAuth flow (`typed_mcp::client::oauth`, feature `http-client`) could not
/// give it an access token (or the server still refused the one it got).
///
/// Every problem found in what a server, an authorization server or the redirect sent is one of
/// these, never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL (the server's, one found in metadata, the redirect) could not be used.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as found.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A URL the flow was to contact is not `https://` (plain `http://` is accepted only to a
    /// loopback address): nothing was sent to it.
    #[error("refused {url}: the OAuth flow only uses https:// (http:// only to a loopback address)")]
    InsecureUrl {
        /// The URL as found.
        url: String,
    },
    /// A URL the flow was to contact names a loopback, private or link-local address while the
    /// MCP server is on a public one: nothing was sent to it (`OAuth::allow_private_addresses`
    /// lifts the rule).
    #[error(
        "refused {url}: a public MCP server named a private or local address (OAuth::allow_private_addresses allows it)"
    )]
    PrivateAddress {
        /// The URL as found.
        url: String,
    },
    /// A token or registration endpoint, or a metadata location, answered with a redirect: the
    /// flow does not follow them (a redirect would re-send the client's credentials elsewhere).
    #[error("{url} answered with a redirect (HTTP {status}), which the OAuth flow does not follow")]
    Redirected {
        /// Where the request went.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The grant sends a secret, a signed assertion or a platform token to the authorization
    /// server, and no expected issuer was configured: the flow will not show them to whatever
    /// server the MCP server names. Name it with `OAuth::issuer` (or `ClientCredentials::issuer`),
    /// or accept any with `OAuth::trust_any_issuer`.
    #[error(
        "this OAuth grant sends credentials to the authorization server: name the one they belong to with          OAuth::issuer (or ClientCredentials::issuer)"
    )]
    IssuerRequired,
    /// The MCP server names other authorization servers than the expected issuer: the flow
    /// does not use them.
    #[error("the MCP server names the authorization servers {offered:?}, not the expected issuer {expected}")]
    UnexpectedIssuer {
        /// The issuer configured (`OAuth::issuer` or `ClientCredentials::issuer`).
        expected: String,
        /// The authorization servers the protected resource metadata names.
        offered: Vec<String>,
    },
    /// An HTTP request of the flow failed before any answer arrived.
    #[error("could not reach {url}: {reason}")]
    Http {
        /// Where the request went.
        url: String,
        /// Why it failed.
        reason: String,
    },
    /// An HTTP request of the flow reached a server over TLS whose certificate was not trusted
    /// (not issued by a trusted authority, not valid for the host name, expired…).
    #[error("the TLS certificate of {url} was not trusted: {reason}")]
    UntrustedCertificate {
        /// Where the request went.
        url: String,
        /// What is wrong with the certificate.
        reason: String,
    },
    /// A metadata document (protected resource or authorization server) is not what the
    /// specifications describe.
    #[error("malformed metadata at {url}: {reason}")]
    MalformedMetadata {
        /// Where the document came from.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No protected resource metadata was found (neither the challenge's `resource_metadata`
    /// nor the well-known locations answered with one).
    #[error("no protected resource metadata for {server}")]
    NoResourceMetadata {
        /// The MCP server's URL.
        server: String,
    },
    /// The protected resource metadata names a resource the MCP server's URL does not belong to.
    #[error("the protected resource metadata names resource {found}, which does not cover {server}")]
    ResourceMismatch {
        /// The MCP server's URL.
        server: String,
        /// The `resource` in the metadata.
        found: String,
    },
    /// None of the authorization server's well-known metadata locations answered.
    #[error("no authorization server metadata for issuer {issuer}")]
    NoAuthorizationServerMetadata {
        /// The authorization server, as the protected resource metadata names it.
        issuer: String,
    },
    /// The authorization server's metadata names another issuer than the one it was fetched
    /// for (RFC 8414 section 3.3): it is not used.
    #[error("the authorization server metadata for {expected} names issuer {found}")]
    MetadataIssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The `issuer` in the metadata.
        found: String,
    },
    /// The authorization server does not advertise PKCE with `S256`, which MCP requires.
    #[error("the authorization server {issuer} does not support PKCE with S256")]
    PkceNotSupported {
        /// The authorization server.
        issuer: String,
    },
    /// The client has no way to identify itself to the authorization server: no pre-registered
    /// credentials, no client ID metadata document the server accepts, no registration endpoint.
    #[error("no way to register with the authorization server {issuer}")]
    NoRegistration {
        /// The authorization server.
        issuer: String,
    },
    /// Dynamic client registration was refused.
    #[error("client registration failed (HTTP {status}): {error}")]
    Registration {
        /// The HTTP status.
        status: u16,
        /// The OAuth error code or a short reason.
        error: String,
    },
    /// The authorization callback (the person's part) failed or was abandoned.
    #[error("authorization was not completed: {0}")]
    Callback(String),
    /// The authorization server redirected back with an error (`access_denied`…).
    #[error("the authorization server refused: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    AuthorizationDenied {
        /// The `error` parameter.
        error: String,
        /// The `error_description` parameter.
        description: Option<String>,
    },
    /// The redirect's `state` is not the one this flow sent: it does not answer this request.
    #[error("the redirect's state does not match the authorization request")]
    StateMismatch,
    /// The authorization server advertises `authorization_response_iss_parameter_supported`
    /// but the redirect has no `iss` (RFC 9207).
    #[error("the redirect has no `iss` although the authorization server promises one")]
    MissingIssuer,
    /// The redirect's `iss` is not the authorization server's issuer (RFC 9207): the response
    /// may come from another server (mix-up attack).
    #[error("the redirect's iss {found:?} is not the authorization server's issuer {expected:?}")]
    IssuerMismatch {
        /// The issuer whose authorization endpoint was used.
        expected: String,
        /// The `iss` in the redirect.
        found: String,
    },
    /// The redirect carries no authorization code.
    #[error("the redirect carries no authorization code")]
    MissingCode,
    /// The token endpoint refused the request.
    #[error("the token endpoint refused (HTTP {status}): {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    TokenEndpoint {
        /// The HTTP status.
        status: u16,
        /// The OAuth error code.
        error: String,
        /// The `error_description`.
        description: Option<String>,
    },
    /// The token endpoint's answer is not a token response.
    #[error("malformed token response: {0}")]
    MalformedTokenResponse(String),
    /// The server refused the request (401 or 403): still, after the client authorized (or
    /// refreshed) for it, or at once when the client has no OAuth configured.
    #[error("the server refused the request's authorization (HTTP {status})")]
    Unauthorized {
        /// The HTTP status.
        status: u16,
    },
    /// The server keeps asking for more scopes (403 `insufficient_scope`) than the client
    /// obtained, after the allowed number of step-up authorizations.
    #[error("the server requires scope {scope:?}, which step-up authorization did not obtain")]
    InsufficientScope {
        /// The scopes the server asked for.
        scope: String,
    },
    /// The token store failed.
    #[error("token store: {0}")]
    Store(String),
    /// A signing key (for `private_key_jwt` or DPoP) could not be read or used.
    #[error("signing key: {0}")]
    InvalidKey(String),
    /// The token to present as an assertion (a workload's platform token, an identity
    /// provider's token) could not be obtained.
    #[error("assertion: {0}")]
    Assertion(String),
}
