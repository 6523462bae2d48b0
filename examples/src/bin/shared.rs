//! One server run as several instances behind a load balancer, sharing their sessions through
//! Redis: any instance serves any request of any session. It needs typed-mcp's features `http`
//! and `otel-otlp`, besides the default ones, and typed-mcp-redis.
//!
//! Start a Redis, then two or more instances on different ports with the same `--redis URL`
//! (or `REDIS_URL`), and put any HTTP load balancer in front of them (no sticky sessions
//! needed):
//!
//! ```sh
//! redis-server --port 6379 &
//! cargo run -p examples --bin shared -- --port 8081 --redis redis://127.0.0.1:6379 &
//! cargo run -p examples --bin shared -- --port 8082 --redis redis://127.0.0.1:6379 &
//! ```
//!
//! `--redis` takes one connection string for each topology:
//!
//! - one node: `redis://host:6379/0`, or `rediss://host:6380/0` over TLS;
//! - a Redis Cluster: some of its nodes, comma-separated:
//!   `redis://redis-a:7000,redis://redis-b:7000,redis://redis-c:7000` (`rediss://` for TLS);
//! - a primary behind Sentinels: `redis+sentinel://s1:26379,s2:26379,s3:26379/mymaster`
//!   (`rediss+sentinel://` when the primary speaks TLS; `user:password@` before the hosts).
//!
//! Every instance of one deployment takes the same `--secret S` (or `DEPLOYMENT_SECRET`, 32
//! bytes or more): it seals what the instances tell each other, so that neither a client nor
//! whoever can write to Redis can act as an instance. Without it, one kept in Redis is used
//! (shielding the instances from clients, not from Redis). Deployments sharing one Redis each
//! take a `--redis-prefix P` (or `REDIS_PREFIX`) of their own.
//!
//! A Redis whose certificate a private authority signed is trusted with `--redis-ca FILE` (or
//! `REDIS_CA_FILE`): the authority's certificate, PEM.
//!
//! Each serves Streamable HTTP at `http://127.0.0.1:N/mcp` (`--port N`, or `PORT=N`: there is no
//! stdio), `/ready` and `/live` for a load balancer's checks. What they share:
//!
//! - sessions (the backplane): a request is served by the instance it lands on, from the
//!   session's state in Redis; only what must run on the session's owner (its `GET` stream,
//!   `DELETE`, `logging/setLevel`, subscriptions) takes one hop there, and an owner that is gone
//!   is taken over by the first instance that needs it;
//! - questions: `create_project` asks for a form, and the answer may reach any instance;
//! - tasks: `deploy` runs as a task kept in Redis, so any instance answers `tasks/get` and
//!   `tasks/update`, and a finished task's result outlives the instance that ran it;
//! - the key sealing 2026-07-28 `requestState`, so a retry may land on any instance.
//!
//! `served_by` says which instance ran the call: the one the call landed on, in either era.
//!
//! On SIGTERM or Ctrl-C an instance drains (see the guide's rolling restarts): `/ready` turns
//! `503`, what runs finishes (30 s at most), its events are written to Redis, and it leaves its
//! sessions to the others. Without `--redis` the program is a lone instance.
//!
//! Try it, from the repository's root after `cargo build -p examples`: with
//!
//! ```sh
//! redis-server --port 6379
//! target/debug/shared --port 8081 --redis redis://127.0.0.1:6379
//! ```
//!
//! running, each in a terminal of its own,
//!
//! ```sh
//! npx @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:8081/mcp --method tools/call --tool-name served_by
//! ```
//!
//! answers `Served by http://127.0.0.1:8081/mcp`.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use typed_mcp::multi_round::state::StateKey;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;
use typed_mcp_redis::Redis;

/// This instance's address, as clients reach it.
struct Address(String);

/// Says which instance ran this call.
#[tool(read_only)]
fn served_by(address: State<Address>) -> String {
    let Address(address) = &*address;
    format!("Served by {address}")
}

/// What `create_project` asks for.
#[derive(Deserialize, JsonSchema, Elicit)]
#[serde(rename_all = "camelCase")]
struct NewProject {
    /// Name of the project.
    #[schemars(length(min = 1))]
    project_name: String,
}

/// Creates a project, asking the user for its name.
#[tool]
async fn create_project(ctx: Context) -> Result<String, String> {
    match ctx.elicit::<NewProject>("Please provide the project details.").await {
        Ok(Elicitation::Accept(project)) => Ok(format!("Created project '{}'", project.project_name)),
        Ok(_) => Ok("No project was created.".into()),
        Err(e) => Err(format!("Could not ask for the project details: {e}")),
    }
}

/// Builds a service, asks the user to confirm once it is built, then deploys it.
///
/// # Arguments
/// * `service` - The service to deploy.
#[tool(destructive, task = "optional")]
async fn deploy(ctx: Context, service: String) -> Result<String, ElicitError> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    if !ctx.confirm(format!("{service} is built. Deploy it to production?")).key("deploy").await? {
        return Ok(format!("{service} was built but not deployed."));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Deployed {service} to production."))
}

/// The value after `flag` on the command line, else the environment variable `env`.
fn option(flag: &str, env: &str) -> Option<String> {
    let mut args = std::env::args();
    args.position(|arg| arg == flag).and_then(|_| args.next()).or_else(|| std::env::var(env).ok())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port = option("--port", "PORT").ok_or("--port N (or PORT) is required")?;
    let port: u16 = port.parse().map_err(|_| format!("--port: `{port}` is not a port number"))?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port} (--port): {e}"))?;
    let address = format!("http://{}/mcp", listener.local_addr()?);

    // Traces and metrics go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the other
    // standard OTEL_* variables apply), and are flushed when the program stops.
    let otlp = typed_mcp::telemetry::otlp_from_env()?;
    let mut builder = Server::builder("shared", env!("CARGO_PKG_VERSION"))
        .tools(tools![served_by, create_project, deploy])
        .state(Address(address.clone()))
        .telemetry(typed_mcp::telemetry::Telemetry::global());
    let mut config = HttpConfig::default().shutdown_grace(Duration::from_secs(30));
    if let Some(url) = option("--redis", "REDIS_URL") {
        let redis = match option("--redis-ca", "REDIS_CA_FILE") {
            Some(file) => {
                let ca = std::fs::read(&file).map_err(|e| format!("--redis-ca: cannot read `{file}`: {e}"))?;
                Redis::connect_with_ca(&url, ca)
            }
            None => Redis::connect(&url),
        }
        .map_err(|e| format!("--redis: {e}"))?;
        // Each deployment sharing a Redis keeps its records under a prefix of its own.
        let redis = match option("--redis-prefix", "REDIS_PREFIX") {
            Some(prefix) => redis.with_prefix(prefix).map_err(|e| format!("--redis-prefix: {e}"))?,
            None => redis,
        };
        // The deployment secret seals what the instances tell each other. Give every instance
        // the same one (`--secret`, or DEPLOYMENT_SECRET: 32 bytes or more); without it, one
        // is made in Redis by the first instance, which shields the instances from clients
        // but not from whoever can write to Redis. Both secrets are fetched at once.
        let given = option("--secret", "DEPLOYMENT_SECRET");
        if given.is_none() {
            eprintln!("no --secret: the deployment secret is kept in Redis, trusted like Redis itself");
        }
        let (key, secret) = tokio::join!(redis.shared_secret("request-state"), async {
            match given {
                Some(secret) => Ok(secret.into_bytes()),
                None => redis.shared_secret("deployment").await.map(|k| k.to_vec()),
            }
        });
        let key = key.map_err(|e| format!("--redis: {e}"))?;
        let secret = secret.map_err(|e| format!("--redis: {e}"))?;
        builder = builder.task_store(redis.task_store()).request_state_key(StateKey::from_bytes(key));
        if secret.len() < typed_mcp::transport::http::MIN_SECRET {
            return Err(format!("--secret: {} bytes at least", typed_mcp::transport::http::MIN_SECRET).into());
        }
        config = config.backplane(redis.backplane(address.clone()).secret(secret));
    }
    let server = builder.build()?;
    eprintln!("serving MCP at {address}");
    // SIGTERM (what a rolling deploy sends) or Ctrl-C: drain, then flush the telemetry.
    let shutdown = typed_mcp::telemetry::shutdown_signal();
    server.streamable_http(config).serve(listener, shutdown).await?;
    drop(otlp);
    Ok(())
}
