//! A protected server: Streamable HTTP behind OAuth 2.1, trusting one authorization server. It
//! needs typed-mcp's features `auth`, `http-tls` and `otel-otlp`, besides the default ones, and
//! typed-mcp-redis with `dpop` (for `--redis`).
//!
//! Run it with `cargo run -p examples --bin protected -- --port 8080 --issuer https://auth.example.com`.
//! It serves `http://127.0.0.1:N/mcp` (`--port N`, or `PORT=N`: there is no stdio), whose resource identifier is that
//! URL: access tokens must be JWTs (RFC 9068) from the issuer given by `--issuer URL` (or
//! `ISSUER`), signed with a key the issuer publishes in its metadata, and issued for that
//! resource. A request without one is answered `401` with a challenge that points to
//! `http://127.0.0.1:N/.well-known/oauth-protected-resource/mcp`, where a client learns which
//! authorization server to ask and which scopes there are (`notes:read`, `notes:write`); the
//! challenge names `notes:read`, the scope a client asks for first.
//!
//! Tools:
//! - `whoami` (any valid token): the token's subject;
//! - `write_note` (needs `notes:write`): asks the user to confirm with a form, then keeps the
//!   note for that user. A token without the scope gets `403 insufficient_scope`, naming the
//!   scope, so that the client can ask the user for it and retry.
//!
//! Over TLS: `--tls-cert FILE --tls-key FILE` (PEM: the certificate chain, and its key) serve
//! `https://127.0.0.1:N/mcp` instead, which is then the resource identifier. `--issuer-ca FILE` (PEM)
//! trusts that CA, besides the platform's roots, when fetching the issuer's metadata and keys
//! (an issuer whose certificate comes from a private CA).
//!
//! DPoP-bound tokens (RFC 9449): `--dpop` accepts them (with a proof per request, replays
//! refused) besides bearer tokens; `--dpop-required` refuses bearer tokens; `--dpop-nonces`
//! also makes proofs carry a nonce the server hands out.
//!
//! Several instances: `--redis URL` (or `REDIS_URL`) makes this one instance of a deployment
//! sharing its sessions, and the DPoP proofs seen (and the nonce secret), through that Redis: a
//! session opened on one instance is served by any. Behind a load balancer, give every instance
//! the URL clients use as `--resource URL` (tokens are issued for it), the same `--secret S`
//! (or `DEPLOYMENT_SECRET`, 32 bytes or more: it seals what the instances tell each other;
//! without it one kept in Redis is used), and, when other deployments share the Redis,
//! `--redis-prefix P`. Sessions are shared between plain-HTTP instances (the hop between them
//! speaks `http://`); with `--tls-cert`, only the DPoP proofs are.
//!
//! Logs go to stderr (`RUST_LOG`, default `info`).
//!
//! Try it, from the repository's root after `cargo build -p examples`: with
//!
//! ```sh
//! target/debug/protected --port 8080 --issuer https://auth.example.com
//! ```
//!
//! running, a request without a token
//!
//! ```sh
//! curl -i http://127.0.0.1:8080/mcp
//! ```
//!
//! is answered `401 Unauthorized`, with the challenge
//! `www-authenticate: Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"`
//! (and `scope="notes:read"`). A client with a token from the issuer gets in; the guide's
//! authorization chapter shows one.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;
use tracing_subscriber::EnvFilter;
use typed_mcp::auth::{Authorization, Dpop, JwtVerifier};
use typed_mcp::prelude::*;
use typed_mcp::tls::{RootCertificates, ServerCertificate};
use typed_mcp::transport::http::HttpConfig;

/// The notes written so far, by user.
#[derive(Default)]
struct Notes {
    by_user: Mutex<HashMap<String, Vec<(String, String)>>>,
}

/// Returns the subject of the access token the request came with.
#[tool]
async fn whoami(ctx: Context) -> Result<String, String> {
    ctx.auth().map(|auth| auth.subject().to_owned()).ok_or_else(|| "this request carries no verified identity".into())
}

/// What `write_note` asks before writing.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Confirm {
    /// Write the note?
    confirm: bool,
}

/// Writes a note, after the user confirms it.
///
/// # Arguments
/// * `title` - The note's title.
/// * `body` - The note's text.
#[tool(scopes = ["notes:write"])]
async fn write_note(ctx: Context, notes: State<Notes>, title: String, body: String) -> Result<String, String> {
    let user = ctx.auth().map(|a| a.subject().to_owned()).ok_or("this request carries no verified identity")?;
    let question = format!("Write the note \"{title}\"?");
    let answer = ctx.elicit::<Confirm>(question).await.map_err(|e| format!("could not ask for confirmation: {e}"))?;
    if !answer.accepted().is_some_and(|c| c.confirm) {
        return Ok("The note was not written.".into());
    }
    let mut all = notes.by_user.lock().map_err(|_| "the notes are unavailable")?;
    let mine = all.entry(user.clone()).or_default();
    mine.push((title.clone(), body));
    Ok(format!("Wrote note \"{title}\" for {user} ({} in all)", mine.len()))
}

/// Whether `flag` is on the command line.
fn flag(flag: &str) -> bool {
    std::env::args().any(|arg| arg == flag)
}

/// The value after `flag` on the command line, else the environment variable `env`.
fn option(flag: &str, env: &str) -> Option<String> {
    let mut args = std::env::args();
    args.position(|arg| arg == flag).and_then(|_| args.next()).or_else(|| std::env::var(env).ok())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .init();
    let port = option("--port", "PORT").ok_or("--port N (or PORT) is required")?;
    let port: u16 = port.parse().map_err(|_| format!("--port: `{port}` is not a port number"))?;
    let issuer = option("--issuer", "ISSUER").ok_or("--issuer URL (or ISSUER) is required")?;

    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the other
    // standard OTEL_* variables apply), and are flushed when the program stops.
    let otlp = typed_mcp::telemetry::otlp_from_env()?;

    let server = Server::builder("protected", env!("CARGO_PKG_VERSION"))
        .title("Protected notes")
        .tools(tools![whoami, write_note])
        .state(Notes::default())
        .telemetry(typed_mcp::telemetry::Telemetry::global())
        .build()?;

    let mut config = HttpConfig::default();
    let scheme = match (option("--tls-cert", "TLS_CERT"), option("--tls-key", "TLS_KEY")) {
        (Some(cert), Some(key)) => {
            config = config.tls(ServerCertificate::from_pem_files(cert, key)?);
            "https"
        }
        (None, None) => "http",
        _ => return Err("--tls-cert and --tls-key go together".into()),
    };
    let mut verifier = JwtVerifier::new(issuer.clone());
    if let Some(ca) = option("--issuer-ca", "ISSUER_CA") {
        verifier = verifier.root_certificates(RootCertificates::from_pem_file(ca)?);
    }

    let redis = match option("--redis", "REDIS_URL") {
        Some(url) => {
            let redis = typed_mcp_redis::Redis::connect(&url).map_err(|e| format!("--redis: {e}"))?;
            Some(match option("--redis-prefix", "REDIS_PREFIX") {
                Some(prefix) => redis.with_prefix(prefix).map_err(|e| format!("--redis-prefix: {e}"))?,
                None => redis,
            })
        }
        None => None,
    };

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port} (--port): {e}"))?;
    let address = listener.local_addr()?;
    // The resource identifier defaults to {scheme}://{address}/mcp, the URL clients use.
    let authorization = Authorization::new(verifier)
        .authorization_server(issuer.clone())
        .scopes_supported(["notes:read", "notes:write"])
        // Clients ask for reading first, and for writing when they first write.
        .initial_scopes(["notes:read"])
        .resource_name("Protected notes");
    // Behind a load balancer: the URL clients use, the same on every instance.
    let authorization = match option("--resource", "RESOURCE") {
        Some(resource) => authorization.resource(resource),
        None => authorization,
    };
    let authorization = if flag("--dpop") || flag("--dpop-required") || flag("--dpop-nonces") {
        let mut dpop = Dpop::new().require(flag("--dpop-required"));
        let mut nonce_secret = None;
        if let Some(redis) = &redis {
            nonce_secret = Some(redis.shared_secret("dpop-nonce").await?);
            dpop = dpop.replay_cache(redis.replay_cache());
        }
        if flag("--dpop-nonces") {
            dpop = dpop.nonces(nonce_secret);
        }
        tracing::info!(?dpop, "accepting DPoP-bound tokens");
        authorization.dpop(dpop)
    } else {
        authorization
    };
    if let Some(redis) = &redis {
        if scheme == "http" {
            let secret = match option("--secret", "DEPLOYMENT_SECRET") {
                Some(secret) => secret.into_bytes(),
                None => redis.shared_secret("deployment").await?.to_vec(),
            };
            if secret.len() < typed_mcp::transport::http::MIN_SECRET {
                return Err(format!("--secret: {} bytes at least", typed_mcp::transport::http::MIN_SECRET).into());
            }
            config = config.backplane(redis.backplane(format!("http://{address}/mcp")).secret(secret));
            tracing::info!("sharing sessions with the other instances on this Redis");
        } else {
            tracing::warn!("with --tls-cert, sessions stay with their instance: only DPoP proofs are shared");
        }
    }
    tracing::info!(%issuer, "serving MCP at {scheme}://{address}/mcp, protected by OAuth");
    let shutdown = typed_mcp::telemetry::shutdown_signal();
    server.streamable_http(config.authorization(authorization)).serve(listener, shutdown).await?;
    drop(otlp);
    Ok(())
}
