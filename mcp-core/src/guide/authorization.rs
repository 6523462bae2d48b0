//! # Protecting an HTTP server
//!
//! A server on a network is an OAuth 2.1 *resource server* (MCP's authorization spec): every
//! request carries `Authorization: Bearer <access token>` from an authorization server the server
//! trusts. With the `auth` feature, one setting does the rest:
//!
//! ```rust,no_run
//! # #[cfg(feature = "auth")]
//! # async fn run(server: typed_mcp::Server) -> std::io::Result<()> {
//! use typed_mcp::auth::{Authorization, JwtVerifier};
//! use typed_mcp::transport::http::HttpConfig;
//!
//! let issuer = "https://auth.example.com";
//! let config = HttpConfig::default().disable_host_checks().authorization(
//!     Authorization::new(JwtVerifier::new(issuer)) // JWT access tokens, keys from the issuer
//!         .resource("https://notes.example.com/mcp") // what tokens must name as their audience
//!         .authorization_server(issuer)
//!         .scopes_supported(["notes:read", "notes:write"])
//!         .initial_scopes(["notes:read"]), // what a client asks for first
//! );
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
//! server.streamable_http(config).serve(listener, std::future::pending()).await
//! # }
//! ```
//!
//! - **Metadata and challenges.** The server serves its protected resource metadata (RFC 9728) at
//!   `/.well-known/oauth-protected-resource` and `/.well-known/oauth-protected-resource/mcp`,
//!   naming the resource, the authorization servers and the scopes. A request without a valid
//!   token gets `401` with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`; the body
//!   and the challenge say `invalid_token` (or `invalid_request`) and nothing about why — the
//!   reason goes to the server's log. Clients find everything else from there.
//! - **Verifying tokens.** `JwtVerifier` checks JWT access tokens (RFC 9068): it finds the issuer's
//!   keys through its metadata (`oauth-authorization-server`, then `openid-configuration`),
//!   accepts asymmetric signatures only (`alg: none` and HMAC are refused, so a token "signed"
//!   with the public key goes nowhere), and checks the header's `typ` (`at+jwt`: an ID token
//!   is no access token; `JwtVerifier::accept_any_token_type` for issuers that do not set it),
//!   `iss`, `aud` (this server's resource, RFC 8707), `sub`, `exp` and `nbf` (30 s of clock
//!   skew). Keys are cached and fetched again when a
//!   token names an unknown one, at most once a minute; verified tokens are remembered for 30 s by
//!   digest, so the hot path does no signature check and no network. `IntrospectionVerifier`
//!   asks the authorization server instead (RFC 7662, answers cached 30 s; an answer whose
//!   `token_type` is not an access token's, such as a refresh token's, is refused); any other scheme is an
//!   implementation of the `TokenVerifier` trait. An authorization server that cannot be reached
//!   makes requests fail with `503` and `Retry-After`, never pass.
//! - **Scopes per tool.** `#[tool(scopes = ["notes:write"])]` or `ToolDef::scopes(["notes:write"])`
//!   (and `scopes` on `PromptDef` and `ResourceDef`) names what a call needs (a scope that is not
//!   an RFC 6749 scope token is a compile error at the attribute); a token without it gets `403` with
//!   `WWW-Authenticate: Bearer error="insufficient_scope", scope="notes:read notes:write"` (what
//!   the token has plus what it lacks), so the client asks the user for more and retries.
//!   `Authorization::hide_unauthorized(true)` leaves out of `tools/list`, `prompts/list` and
//!   `resources/list` what the token cannot use.
//! - **Who is calling.** A handler gets the verified identity with `ctx.auth()`: subject, client
//!   id, scopes, expiry and claims, never the token (which must not be passed on to other
//!   services). The subject is the request's `Principal`: a 2025-era session belongs to the user
//!   who opened it (another user's token on its `Mcp-Session-Id` gets `404`), and URL-mode
//!   elicitations and 2026-era `requestState` are bound to the user; 2026-era requests are each
//!   authorized on their own.
//!
//! ## DPoP-bound tokens
//!
//! A bearer token works for whoever holds it; a DPoP-bound one (RFC 9449) only with a proof
//! signed by the client's key. `Authorization::dpop(Dpop::new())` accepts them:
//!
//! ```rust,no_run
//! # #[cfg(feature = "auth")]
//! # fn run() {
//! use typed_mcp::auth::{Authorization, Dpop, JwtVerifier};
//!
//! let auth = Authorization::new(JwtVerifier::new("https://auth.example.com"))
//!     .dpop(Dpop::new().require(true).nonces(None));
//! # let _ = auth;
//! # }
//! ```
//!
//! A request with `Authorization: DPoP <token>` must carry exactly one `DPoP` proof: typed
//! `dpop+jwt`, signed with an accepted asymmetric algorithm by the public key in its header (a
//! JWK with private parameters, `alg: none` or HMAC are refused), for the request's method
//! (`htm`) and URL (`htu`, compared with the resource's origin and the request's path), recent
//! (`iat` within `Dpop::max_age`, 60 s), for this token (`ath`), by the key the token is bound to
//! (`cnf.jkt` against the key's RFC 7638 thumbprint — in the JWT's claims, or in the introspection
//! answer), and never seen before (`jti`, in a `ReplayCache`: `MemoryReplayCache` by default,
//! bounded in all and per client key, so that one client sending proofs as fast as it can fills
//! only its own share; `typed_mcp_redis::Redis::replay_cache` shares it across instances, so a
//! proof replayed on another instance is refused too). `Dpop::nonces` adds server nonces (a `401
//! use_dpop_nonce` hands one out in `DPoP-Nonce`; instances given the same secret accept each
//! other's). `Dpop::require(true)` refuses bearer tokens; otherwise they are still accepted,
//! except a bound token sent as a bearer token (refused on a server without DPoP as well:
//! nothing there could check its proof). Challenges then carry
//! `DPoP algs="ES256 ES384 RS256 PS256", resource_metadata="…"` (after the `Bearer` one unless DPoP
//! is required), with `error="invalid_dpop_proof"`, `"invalid_token"` or `"use_dpop_nonce"`.
//! The `protected` example takes `--dpop`, `--dpop-required`, `--dpop-nonces` and `--redis URL`.
//!
//! The resource identifier defaults to `http://{address}/mcp` for the address `serve` listens
//! on; behind a proxy, or mounted with `router_at`, set it. `examples/src/bin/protected.rs` is a
//! complete server (`--port N --issuer URL`, tools `whoami` and `write_note`, which needs
//! `notes:write`). `tests/tests/interop_oauth.rs` runs it against a real authorization server,
//! [oidc-provider](https://github.com/panva/node-oidc-provider), with the TypeScript SDK's client
//! and ours (see [Connecting to a protected server](super::client#connecting-to-a-protected-server)) each
//! registering, authorizing with PKCE and stepping up to `notes:write`;
//! `tests/tests/authorization.rs` holds the forged, expired, wrong-audience, `alg: none` and other
//! bad tokens, each answered with its status and challenge while the server keeps serving.
