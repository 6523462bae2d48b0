//! # Using servers: the client
//!
//! `typed_mcp::client` connects to any MCP server, calls what it offers and answers what it asks:
//!
//! ```rust,no_run
//! use typed_mcp::client::{Client, ElicitationModes, elicitation_fn};
//! use typed_mcp::protocol::ElicitResult;
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), typed_mcp::client::ClientError> {
//! let client = Client::builder("my-app", "1.0.0")
//!     .elicitation(elicitation_fn(ElicitationModes::FORM, |request| async move {
//!         // Show `request.message()` and the form to the user; here: submit its defaults.
//!         request.as_form().and_then(|form| form.accept_defaults().ok()).unwrap_or_else(ElicitResult::decline)
//!     }))
//!     .connect_stdio(tokio::process::Command::new("target/debug/quickstart"))
//!     .await?;
//! let sum = client.call_tool("add", json!({"a": 2, "b": 40})).await?;
//! assert_eq!(sum.content[0].as_text(), Some("42"));
//! client.close().await;
//! # Ok(())
//! # }
//! ```
//!
//! - Transports: `connect_stdio(command)` (the child's input is closed on `close()`, and it is
//!   killed if it does not exit), `connect_http(url)` with the `http-client` feature (each message
//!   a POST with `Mcp-Session-Id` and `MCP-Protocol-Version`, JSON or SSE answers, the session's GET
//!   stream, streams resumed with `Last-Event-ID` after the server's `retry:`, `DELETE` on close),
//!   `connect_io(reader, writer)`, and `connect_in_process(&server)`.
//! - The capabilities declared in `initialize` follow from the handlers registered:
//!   `ElicitationHandler` (its `modes()`: form, URL or both — `{"form": {}}` for a form-only
//!   client), `SamplingHandler`, `RootsHandler` (a `Vec<Root>` is one). Closures work through
//!   `elicitation_fn` and `sampling_fn`; `typed_elicitation::<T>(…)` answers the forms of a
//!   `#[derive(Elicit)]` type with an `Elicitation<T>`, and `FormRequest::typed::<T>()` reads any
//!   form request as `T`'s when its schema is exactly `T::form_schema()`.
//! - Before a handler sees a form, its schema is checked against MCP's restricted subset; a schema
//!   outside it, or a mode the client did not declare, is answered with -32602. Accepted content
//!   is completed with the schema's defaults and validated before it is sent.
//! - `list_all_tools`, `call_tool`, resources (`read_resource`, `subscribe_resource`…), prompts,
//!   `complete_*`, `set_log_level`, `ping`. `client.tool(name).on_progress(…).timeout(…)
//!   .cancel_on(token)` configures one call; dropping a call's future, a timeout or the token
//!   withdraws it with `notifications/cancelled`.
//! - Notifications (progress, logs, list changes, resource updates, completed URL elicitations)
//!   arrive on `client.notifications()`, a broadcast receiver, or an `on_notification` callback.
//! - URL mode: error -32042 is `ClientError::UrlElicitationRequired` with the elicitations;
//!   `complete_url_elicitations` offers them to the handler and waits for
//!   `notifications/elicitation/complete`, and `call_tool_with_url_elicitation` does that and
//!   retries.
//! - Protocol eras: `.protocol_era(ProtocolEra::Y2025)` (the default: `initialize`, revisions up
//!   to 2025-11-25), `ProtocolEra::Y2026` (2026-07-28: no handshake, the revision and
//!   capabilities in every request's `_meta`) or `ProtocolEra::Auto` (`server/discover`, falling
//!   back to `initialize` with a server that does not speak it); `client.era()` says which was
//!   chosen. The handlers and calls are the same in both: a 2026-07-28 result that asks for input
//!   (`input_required`) is answered by the same handlers, every question of a round at once, and
//!   the request retried with the answers and the server's `requestState` until it completes
//!   (`max_input_rounds` bounds the rounds; the call's timeout and token cover them all). Over HTTP
//!   each 2026-07-28 request carries `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers of the
//!   arguments its tool marks with `x-mcp-header` (a tool with invalid marks is left out of
//!   `list_tools` and refused). List results are kept as long as the server's `ttlMs`/`cacheScope`
//!   allow (`clear_cache()` forgets them), and `client.listen(filter)` opens a
//!   `subscriptions/listen` stream whose list changes also refresh that cache.
//!
//! # Connecting to a protected server
//!
//! With the `http-client` feature the client does the OAuth 2.1 side of MCP's authorization spec
//! itself, in both protocol eras. The application supplies the person's part — show them the
//! authorization server's page, hand back where it redirected to — and everything else happens
//! when the server first answers `401`:
//!
//! ```rust,no_run
//! # #[cfg(feature = "http-client")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::client::Client;
//! use typed_mcp::client::oauth::{LoopbackAuthorizer, OAuth};
//! use serde_json::json;
//!
//! // Listens on 127.0.0.1:<free port> for the redirect, opens the browser (and prints the URL).
//! let authorizer = LoopbackAuthorizer::bind().await?.open_browser();
//! let client = Client::builder("my-app", "1.0.0")
//!     .oauth(OAuth::new(authorizer).client_name("My app"))
//!     .connect_http("https://notes.example.com/mcp")
//!     .await?;
//! let note = client.call_tool("write_note", json!({"title": "hi", "body": "there"})).await?;
//! # let _ = note;
//! # Ok(())
//! # }
//! ```
//!
//! - **Discovery.** The protected resource metadata (RFC 9728) comes from the challenge's
//!   `resource_metadata`, else `/.well-known/oauth-protected-resource/<path>`, else the root one;
//!   its `resource` must cover the server's URL (another resource is refused). The authorization
//!   server's metadata comes from `oauth-authorization-server`, then `openid-configuration`, with
//!   the issuer's path inserted as RFC 8414 and OpenID Connect Discovery say; its `issuer` must be
//!   exactly the one asked for, and it must offer PKCE `S256`.
//! - **Registration,** in the spec's order: credentials registered beforehand
//!   (`OAuth::client_credentials`, bound to their issuer — they are never shown to another),
//!   else a Client ID Metadata Document URL (`OAuth::client_metadata_url`) when the
//!   server advertises `client_id_metadata_document_supported`, else dynamic client registration
//!   (RFC 7591, remembered per authorization server: a server that moves to another authorization
//!   server gets a fresh registration there).
//! - **Authorization.** Authorization code with PKCE `S256`, a random `state` and the `resource`
//!   parameter (RFC 8707, exactly as the metadata publishes it). Scopes: the challenge's `scope`,
//!   else the resource's `scopes_supported`, else none — plus `offline_access` when the
//!   authorization server lists it, for a refresh token. The redirect must carry the same
//!   `state`; its `iss` (RFC 9207) must be the issuer, compared as plain strings, and must be there
//!   when the server promises it. The token endpoint gets `client_secret_basic`,
//!   `client_secret_post` or no secret, as the server's metadata and the registration say.
//! - **Afterwards.** Tokens live in a `TokenStore` (`MemoryTokenStore` by default; implement the
//!   trait to keep users signed in across runs). A token the server refuses is refreshed with the
//!   refresh token, or the flow runs again (once per request); a `403` with
//!   `error="insufficient_scope"` re-authorizes with the scopes held plus those asked for
//!   ("step-up"), at most `OAuth::max_step_ups` (2) times for one request, and not at all when it
//!   would ask for nothing new. The person's time in the browser counts against the request's
//!   timeout (`request_timeout`, 5 minutes by default), except for `ProtocolEra::Auto`'s
//!   `server/discover` probe, whose short timer waits while the client authorizes.
//! - **Failures are typed**: `ClientError::Authorization(OAuthError)` says what was wrong —
//!   `ResourceMismatch`, `MetadataIssuerMismatch`, `MalformedMetadata`, `PkceNotSupported`,
//!   `StateMismatch`, `IssuerMismatch`, `MissingIssuer`, `AuthorizationDenied`, `TokenEndpoint`,
//!   `InsufficientScope`…
//!
//! ## Without a browser: choosing the grant
//!
//! The constructor of `OAuth` picks how tokens are obtained; everything else (discovery,
//! refusals, step-up, the store) stays the same:
//!
//! ```rust,no_run
//! # #[cfg(feature = "http-client")]
//! # fn run(pem: &str, id_token: String) -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::client::oauth::{ClientCredentials, EnterpriseAuthorization, OAuth, SigningKey, TokenSource};
//!
//! // A backend with a client secret (client credentials, SEP-1046).
//! // Each names the authorization server its credentials belong to: they go nowhere else.
//! let issuer = "https://auth.example.com";
//! let a = OAuth::client_secret("reporting-job", "s3cret").issuer(issuer);
//! // The same without a shared secret: it signs a JWT with its registered key (private_key_jwt).
//! let b = OAuth::private_key_jwt("reporting-job", SigningKey::from_pem(pem)?).issuer(issuer);
//! // A workload whose platform mounts a token that rotates (RFC 7523 JWT bearer, SEP-1933).
//! let c = OAuth::workload_identity(TokenSource::file("/var/run/secrets/tokens/mcp")).issuer(issuer);
//! // A person signed in to the company's identity provider (SEP-990: token exchange, then JWT bearer).
//! let d = OAuth::enterprise(EnterpriseAuthorization::new(
//!     "https://idp.example.com/oauth2/token",
//!     "idp-client-id",
//!     TokenSource::fixed(id_token),
//!     ClientCredentials { client_id: "mcp-client".into(), client_secret: Some("s3cret".into()), issuer: None },
//! ))
//! .issuer(issuer);
//! // Any of them with tokens bound to a key (DPoP, RFC 9449): a stolen token is useless alone.
//! let e = OAuth::client_secret("reporting-job", "s3cret").issuer(issuer).dpop();
//! # let _ = (a, b, c, d, e);
//! # Ok(())
//! # }
//! ```
//!
//! Which to use:
//!
//! | situation | grant |
//! |---|---|
//! | a person at the keyboard, any authorization server | `OAuth::new` (authorization code + PKCE) |
//! | a service acting for itself, a secret in its vault | `OAuth::client_secret` |
//! | a service acting for itself, no shared secret wanted | `OAuth::private_key_jwt` |
//! | a workload on a platform that issues it tokens (Kubernetes, cloud instance identity) | `OAuth::workload_identity` with `TokenSource::file` or `TokenSource::callback` |
//! | an employee's agent, the company's identity provider deciding | `OAuth::enterprise` |
//! | any of these where a leaked token must not be replayable | add `.dpop()` (or `.dpop_key(key)` to keep tokens valid across runs) |
//!
//! The grant's extension (`io.modelcontextprotocol/oauth-client-credentials`,
//! `…/enterprise-managed-authorization`, `…/auth/wif`, `…/auth/dpop`) is declared in the client's
//! capabilities. With DPoP, the token request and every MCP request carry a fresh proof
//! (`htm`, `htu`, `iat`, `jti`, and `ath` for the token), the token goes out as
//! `Authorization: DPoP`, and a `use_dpop_nonce` answer (a token endpoint's `400` or the server's
//! `401`) is retried once with the nonce given. A workload token source is read again for each
//! token request, so a rotated file is picked up; a refused JWT bearer grant is reported, never
//! retried with another grant. Every grant that sends credentials (a secret, a signed
//! assertion, a platform token, an identity assertion grant) needs the expected issuer,
//! `OAuth::issuer` (or `ClientCredentials::issuer`): connecting without one fails with
//! `OAuthError::IssuerRequired`, and a server that names only other authorization servers gets
//! `OAuthError::UnexpectedIssuer`, so a server cannot collect credentials that work at the real
//! one (`OAuth::trust_any_issuer` opts out). The flow's requests go over `https://` only
//! (`http://` to loopback), never to private addresses named by a public server, and never
//! follow a redirect (the policy is in `client::oauth`'s docs). Among several authorization
//! servers the flow uses the expected issuer, else one it registered with, else the first;
//! a server without protected resource metadata (2025-03-26) is asked at its origin, with the
//! default `/authorize`, `/token` and `/register` when that has no metadata either.
//!
//! `authorizer_fn(redirect_uri, |url| async { … })` makes any other UI an `Authorizer` (a desktop
//! app's web view, a URL pasted back by the user). The flow is checked by the official
//! conformance suite's `auth/*` client scenarios (see `CONTRIBUTING.md` in the repository), against
//! [oidc-provider](https://github.com/panva/node-oidc-provider) in
//! `tests/tests/interop_oauth.rs` (dynamic registration, login and consent through its real pages
//! ending at the loopback redirect, `whoami`, the step-up for `write_note`, a refresh), and under
//! bad input in `tests/tests/oauth_client.rs` (a table of defective metadata, redirects and token
//! answers, each ending with its error and no token sent where it does not belong).
