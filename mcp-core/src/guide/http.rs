//! # Serving over HTTP
//!
//! With the `http` feature, `server.serve_http(addr, None)` serves MCP's Streamable HTTP transport
//! at `/mcp`, and `server.streamable_http(HttpConfig::default()).router()` is an axum router to
//! mount in an existing application. Messages a tool sends while handling a request (elicitation,
//! progress, logs) travel on that request's own SSE stream; event ids and `Last-Event-ID`
//! resumption, session ids, `Host`/`Origin` checks (loopback only by default) and idle expiry
//! are built in. `HttpConfig::sessionless(true)` serves 2025-era clients without sessions (no server-to-client
//! requests then). A dropped connection does not cancel a request, but one whose stream nobody
//! resumes within `HttpConfig::resume_window` (a minute by default) is cancelled, so a tool does
//! not wait on a user whose client is gone. Every example takes `--port N` to serve HTTP instead
//! of stdio.
//!
//! The same endpoint serves 2026-07-28 requests, which carry no session id: each POST is one
//! request, its `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers are
//! checked against its body (a mismatch is HTTP 400 with error -32020), and it is answered with
//! plain JSON, or with an SSE stream when the handler sends progress or log messages before its
//! answer. No session is made for it, so any instance behind a load balancer can answer it
//! (give them one `ServerBuilder::request_state_key` for the rounds of a request that asks the
//! user something). A client that disconnects cancels its request's handler.
//!
//! # HTTPS
//!
//! With the default features, `Client::connect_http("https://…")` works against any server
//! whose certificate the platform trusts, and so do the client's OAuth flow and the `auth`
//! feature's token verifiers (the `rustls` feature: rustls, with the operating system's
//! certificate store). A certificate that is not trusted is `ClientError::UntrustedCertificate`
//! (`OAuthError::UntrustedCertificate` during authorization), naming the URL and the reason,
//! rather than a failed request. For a private CA, load it once and hand it over:
//! `HttpClientConfig::root_certificates`, `OAuth::root_certificates`,
//! `JwtVerifier::root_certificates` and `IntrospectionVerifier::root_certificates` each take a
//! `typed_mcp::tls::RootCertificates`. Without default features there is no TLS stack at all:
//! bring your own `reqwest::Client` (`HttpClientConfig::http_client`).
//!
//! A server normally sits behind a proxy that terminates TLS. Where there is none, the
//! `http-tls` feature serves HTTPS itself: `HttpConfig::tls` takes the certificate chain and
//! its key, and a protected server's resource identifier becomes `https://…`.
//!
//! ```rust,no_run
//! # #[cfg(all(feature = "http-tls", feature = "http-client"))]
//! # async fn run(server: typed_mcp::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::client::http::HttpClientConfig;
//! use typed_mcp::client::{Client, ClientError};
//! use typed_mcp::tls::{RootCertificates, ServerCertificate};
//! use typed_mcp::transport::http::HttpConfig;
//!
//! let certificate = ServerCertificate::from_pem_files("cert.pem", "key.pem")?;
//! let config = HttpConfig::default().tls(certificate);
//! tokio::spawn(async move { server.serve_http("127.0.0.1:8443".parse().unwrap(), Some(config)).await });
//!
//! let roots = RootCertificates::from_pem_file("ca.pem")?;
//! let options = HttpClientConfig::default().root_certificates(roots);
//! match Client::builder("app", "1.0.0").connect_http_with("https://127.0.0.1:8443/mcp", options).await {
//!     Ok(client) => client.close().await,
//!     Err(ClientError::UntrustedCertificate { url, reason }) => eprintln!("{url}: {reason}"),
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(())
//! # }
//! ```
