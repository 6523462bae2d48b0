//! The benchmark server, written with typed-mcp: `echo {text}` and `form`, which elicits a
//! three-field form and returns what the user entered.
//!
//! `ours-server` serves stdio; `ours-server --http 0` serves Streamable HTTP on a free loopback
//! port and prints that port as its first line. With `--jwt` too, the endpoint is an OAuth
//! protected resource (`JwtVerifier`): the process publishes a key set on another loopback port,
//! as an issuer would, mints an access token for the endpoint, and prints it after the port on
//! the same line, for the driver to send.

use schemars::JsonSchema;
use serde::Deserialize;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;

/// The form `form` asks for.
#[derive(Debug, Deserialize, JsonSchema, Elicit)]
struct Contact {
    /// Your name.
    name: String,
    /// Your age in years.
    age: u32,
    /// Send me the newsletter.
    subscribe: bool,
}

/// Returns the text it is given.
///
/// # Arguments
/// * `text` - The text to send back.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Asks the user for their contact details and returns them.
#[tool]
async fn form(ctx: Context) -> Result<String, String> {
    let label = "contact"; // bench: edited line
    match ctx.elicit::<Contact>("Please enter your contact details.").await {
        Ok(Elicitation::Accept(c)) => Ok(format!("{label}: {} ({}), newsletter: {}", c.name, c.age, c.subscribe)),
        Ok(Elicitation::Decline | Elicitation::Cancel) => Ok(format!("{label}: none given")),
        Err(e) => Err(e.to_string()),
    }
}

/// The issuer's signing key (P-256), made for the benchmark, and its public half as a JWK.
const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5pziGwZKa5NDLQt4
h8md4rR5XJ7kpjmnNJ8GCmbwcEOhRANCAASFZm2xouyqEXXsSl6ylQ9toRP8VNLf
Tt5uKonh1EhDApSlhNjWQF7DSIO+ldZ08hgxc1o4D12lub4i5h/MayHr
-----END PRIVATE KEY-----
";
const JWKS: &str = r#"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"bench","x":"hWZtsaLsqhF17EpespUPbaET_FTS307ebiqJ4dRIQwI","y":"lKWE2NZAXsNIg76V1nTyGDFzWjgPXaW5viLmH8xrIes"}]}"#;

/// Serves the key set to whoever asks, on a free loopback port; returns its URL.
async fn publish_keys() -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let url = format!("http://{}/jwks", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{JWKS}",
                    JWKS.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(url)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("bench-ours", "0.0.0").tools(tools![echo, form]).build()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let jwt = args.iter().any(|a| a == "--jwt");
    let port = args.iter().position(|a| a == "--http").and_then(|i| args.get(i + 1));
    match port {
        Some(port) => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>()?)).await?;
            let address = listener.local_addr()?;
            // The scenarios open more sessions than the default cap (1,000, sized for a small
            // server) allows; the other servers have no cap, so neither does this one here.
            let mut config = HttpConfig::default().max_sessions(1 << 20);
            if jwt {
                let issuer = "https://issuer.bench";
                let resource = format!("http://{address}/mcp");
                let verifier = typed_mcp::auth::JwtVerifier::new(issuer).jwks_uri(publish_keys().await?);
                // Every session of the driver is the same user, with the one token printed here.
                config = config
                    .authorization(typed_mcp::auth::Authorization::new(verifier).resource(&resource))
                    .max_sessions_per_subject(1000);
                let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
                header.kid = Some("bench".into());
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
                let claims = serde_json::json!({"iss": issuer, "aud": resource, "sub": "bench", "exp": now + 3600,
                                                "iat": now, "scope": "echo", "client_id": "bench"});
                let key = jsonwebtoken::EncodingKey::from_ec_pem(KEY.as_bytes())?;
                println!("{} {}", address.port(), jsonwebtoken::encode(&header, &claims, &key)?);
            } else {
                println!("{}", address.port());
            }
            if let Some(url) = args.iter().position(|a| a == "--redis").and_then(|i| args.get(i + 1)) {
                let redis = typed_mcp_redis::Redis::connect(url)?;
                config = config.backplane(redis.backplane(format!("http://{address}/mcp")));
            }
            server.streamable_http(config).serve(listener, std::future::pending()).await?;
        }
        None if args.is_empty() => server.serve_stdio().await?,
        None => return Err("usage: ours-server [--http PORT [--jwt] [--redis URL]]".into()),
    }
    Ok(())
}
