//! OAuth against a real authorization server: `oidc-provider` (pinned in `tests/interop/`)
//! issues JWT access tokens for the `protected` example, which verifies them with the keys the
//! provider publishes; the official TypeScript SDK client, with its OAuth provider, registers,
//! authorizes (PKCE, resource indicator), calls `whoami`, and steps up to `notes:write` for
//! `write_note`. Our own client does the same: it discovers, registers dynamically, authorizes
//! with PKCE through a [`LoopbackAuthorizer`] (the test plays the browser: it goes through the
//! provider's real login and consent pages and lands on the loopback redirect), calls `whoami`,
//! steps up to `notes:write` on the 403 for `write_note`, later refreshes a refused token (and,
//! before sending it, an expired one) with the provider's refresh token instead of asking the
//! person again, and with `ProtocolEra::Auto` waits for a slow person without giving up on the
//! 2026-07-28 era. The person's part (log
//! in, consent) always goes through the provider's own interaction pages. The pinned packages
//! are installed on first use (`tests::provision`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};
use typed_mcp_redis::testing::free_port;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tests::interop::{example_binary, interop_dir, require_node_package, run_with_deadline};
use typed_mcp::client::oauth::{LoopbackAuthorizer, MemoryTokenStore, OAuth, SigningKey, StoredTokens, TokenStore};
use typed_mcp::client::{Client, ElicitationModes, ProtocolEra, elicitation_fn};
use typed_mcp::protocol::ElicitResult;

const SCRIPT_DEADLINE: Duration = Duration::from_secs(120);
const STARTUP: Duration = Duration::from_secs(30);

/// A child process killed when dropped, with its log.
struct Running {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Running {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until something accepts connections on `port`.
    fn wait_for(&mut self, port: u16) {
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited ({status}) before listening:\n{}", self.name, self.log_text());
            }
            assert!(
                started.elapsed() < STARTUP,
                "{} did not listen within {STARTUP:?}:\n{}",
                self.name,
                self.log_text()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

fn log_file(name: &str, port: u16) -> (PathBuf, File) {
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("interop-oauth-{name}-{port}.log"));
    let file = File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
    (log, file)
}

/// The Node.js 22 the interop folder pins (oidc-provider does not support older ones).
fn node22() -> PathBuf {
    let node = interop_dir().join("node_modules").join(".bin").join("node");
    assert!(node.is_file(), "{} is missing: run tests/interop/setup.sh", node.display());
    node
}

/// oidc-provider on a free port, issuing tokens for `resource`; returns it and its issuer.
fn start_provider(resource: &str) -> (Running, String) {
    start_provider_with(resource, &[])
}

/// oidc-provider on a free port, issuing tokens for `resource`, with `tls` (its certificate
/// chain and key, PEM files: it then serves https); returns it and its issuer.
fn start_provider_with(resource: &str, tls: &[&Path]) -> (Running, String) {
    start_provider_env(resource, tls, &[])
}

/// oidc-provider as [`start_provider_with`], with environment variables `env`.
fn start_provider_env(resource: &str, tls: &[&Path], env: &[(&str, String)]) -> (Running, String) {
    let port = free_port();
    let (log, file) = log_file("oidc-provider", port);
    let child = Command::new(node22())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .arg("oidc_provider.mjs")
        .arg(port.to_string())
        .arg(resource)
        .args(tls)
        .current_dir(interop_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(file)
        .spawn()
        .expect("start oidc_provider.mjs");
    let mut running = Running { name: "oidc-provider", child, log };
    let stdout = running.child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("read oidc_provider.mjs output");
    let issuer = line.trim().strip_prefix("listening ").unwrap_or_else(|| {
        panic!("oidc_provider.mjs did not start: {line:?}\n{}", running.log_text());
    });
    let issuer = issuer.to_owned();
    running.wait_for(port);
    (running, issuer)
}

/// The `protected` example on `port`, trusting `issuer`.
fn start_protected(port: u16, issuer: &str) -> Running {
    start_protected_with(port, issuer, &[])
}

/// The `protected` example on `port`, trusting `issuer`, with more arguments.
fn start_protected_with(port: u16, issuer: &str, more: &[&std::ffi::OsStr]) -> Running {
    let binary = example_binary("protected");
    let (log, file) = log_file("protected", port);
    let child = Command::new(&binary)
        .args(["--port", &port.to_string(), "--issuer", issuer])
        .args(more)
        .env("RUST_LOG", "info,typed_mcp=debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let mut running = Running { name: "protected", child, log };
    running.wait_for(port);
    running
}

#[test]
fn typescript_client_authorizes_with_oidc_provider_and_calls_the_protected_example() {
    println!("node {}", require_node_package("oidc-provider"));
    require_node_package("@modelcontextprotocol/sdk");

    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (provider, issuer) = start_provider(&resource);
    let protected = start_protected(port, &issuer);
    let output = run_with_deadline(
        Command::new(node22()).arg("protected_client.mjs").arg(&resource).arg(&issuer).current_dir(interop_dir()),
        SCRIPT_DEADLINE,
    );
    print!("{}", output.stdout);
    assert!(
        output.success() && output.stdout.contains("all checks passed"),
        "the TypeScript client failed against protected + oidc-provider: {}\n--- protected ---\n{}\n--- oidc-provider ---\n{}",
        output.describe(),
        protected.log_text(),
        provider.log_text()
    );
    // The server verified the provider's tokens with the keys from its metadata.
    assert!(protected.log_text().contains("fetched the issuer's keys"), "{}", protected.log_text());
}

/// The login name the test's "person" uses.
const USER: &str = "alice";

/// Goes through the authorization server's pages from `start` as a browser would: follows
/// redirects with its cookies, logs in as `login` and consents on the provider's interaction
/// forms, and finally visits the client's redirect URI (`redirect_prefix`), which ends the
/// flow at the client's loopback listener. With `ca` (PEM), the browser trusts that CA too.
async fn browse(start: String, redirect_prefix: String, login: &str, ca: Option<&str>) -> Result<(), String> {
    use reqwest::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
    let mut builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none());
    if let Some(ca) = ca {
        // The browser's own trust store, so to speak (reqwest's TLS comes with the SDK's `rustls`).
        builder = builder.tls_certs_merge([reqwest::Certificate::from_pem(ca.as_bytes()).map_err(|e| e.to_string())?]);
    }
    let http = builder.build().map_err(|e| e.to_string())?;
    let mut jar: BTreeMap<String, String> = BTreeMap::new();
    let mut url = reqwest::Url::parse(&start).map_err(|e| e.to_string())?;
    let mut form: Option<String> = None;
    for _ in 0..20 {
        if url.as_str().starts_with(&redirect_prefix) {
            let answer = http.get(url.clone()).send().await.map_err(|e| e.to_string())?;
            return if answer.status().is_success() {
                Ok(())
            } else {
                Err(format!("the loopback listener answered {}", answer.status()))
            };
        }
        let cookies = jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
        let request = match form.take() {
            Some(body) => http.post(url.clone()).header(CONTENT_TYPE, "application/x-www-form-urlencoded").body(body),
            None => http.get(url.clone()),
        };
        let response = request.header(COOKIE, cookies).send().await.map_err(|e| e.to_string())?;
        for cookie in response.headers().get_all(SET_COOKIE) {
            let pair = cookie.to_str().unwrap_or_default().split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                jar.insert(name.trim().to_owned(), value.to_owned());
            }
        }
        if response.status().is_redirection() {
            let location =
                response.headers().get(LOCATION).and_then(|v| v.to_str().ok()).ok_or("redirect without Location")?;
            url = url.join(location).map_err(|e| e.to_string())?;
            continue;
        }
        let status = response.status();
        let html = response.text().await.map_err(|e| e.to_string())?;
        let attribute = |marker: &str| {
            let start = html.find(marker)? + marker.len();
            html[start..].split('"').next().map(str::to_owned)
        };
        let (Some(action), Some(prompt)) = (attribute("action=\""), attribute("name=\"prompt\" value=\"")) else {
            return Err(format!(
                "no interaction form at {url} ({status}): {}",
                html.chars().take(400).collect::<String>()
            ));
        };
        let mut fields = vec![("prompt", prompt.clone())];
        if prompt == "login" {
            fields.push(("login", login.to_owned()));
            fields.push(("password", "unused".to_owned()));
        }
        let body = fields.iter().map(|(k, v)| format!("{k}={}", percent(v))).collect::<Vec<_>>().join("&");
        form = Some(body);
        url = url.join(&action).map_err(|e| e.to_string())?;
    }
    Err("too many steps through the authorization server".into())
}

/// Form-encodes a value (the test's values are plain words).
fn percent(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A loopback authorizer whose "person" is [`browse`]; the authorization URLs it was asked
/// to open, and what went wrong in the browser, are kept for the test.
async fn person(
    opened: Arc<Mutex<Vec<String>>>,
    failures: Arc<Mutex<Vec<String>>>,
    delay: Duration,
) -> LoopbackAuthorizer {
    person_trusting(opened, failures, delay, None).await
}

/// [`person`], whose browser trusts the CA `ca` (PEM) besides the platform's roots.
async fn person_trusting(
    opened: Arc<Mutex<Vec<String>>>,
    failures: Arc<Mutex<Vec<String>>>,
    delay: Duration,
    ca: Option<String>,
) -> LoopbackAuthorizer {
    let authorizer = LoopbackAuthorizer::bind().await.expect("a loopback listener");
    let prefix = format!("http://127.0.0.1:{}/callback", authorizer.port());
    authorizer.timeout(Duration::from_secs(60)).on_open(move |url| {
        opened.lock().unwrap().push(url.to_owned());
        let (url, prefix, failures, ca) = (url.to_owned(), prefix.clone(), failures.clone(), ca.clone());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Err(e) = browse(url, prefix, USER, ca.as_deref()).await {
                failures.lock().unwrap().push(e);
            }
        });
    })
}

fn query(url: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

#[test]
fn our_client_authorizes_with_oidc_provider_steps_up_and_refreshes() {
    println!("node {}", require_node_package("oidc-provider"));

    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (provider, issuer) = start_provider(&resource);
    let protected = start_protected(port, &issuer);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let outcome = runtime.block_on(async {
        let store = Arc::new(MemoryTokenStore::default());
        let opened = Arc::new(Mutex::new(Vec::new()));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let confirm = elicitation_fn(ElicitationModes::FORM, |request| async move {
            assert!(request.message().contains("Write the note \"hello\""), "{}", request.message());
            let mut content = typed_mcp::protocol::JsonObject::new();
            content.insert("confirm".into(), serde_json::json!(true));
            ElicitResult::accept(content)
        });
        let oauth = OAuth::new(person(opened.clone(), failures.clone(), Duration::ZERO).await)
            .client_name("mcp-sdk interop (Rust)")
            .token_store(store.clone());
        let client = Client::builder("interop-protected-rust", "1.0.0")
            .elicitation(confirm)
            .oauth(oauth)
            .connect_http(&resource)
            .await
            .map_err(|e| format!("connecting: {e}; browser: {:?}", failures.lock().unwrap()))?;

        // The first authorization: the challenge's scope, PKCE S256, the resource indicator.
        let whoami = client.call_tool("whoami", serde_json::json!({})).await.map_err(|e| format!("whoami: {e}"))?;
        assert_eq!(whoami.content[0].as_text(), Some(USER), "{whoami:?}");
        {
            let opened = opened.lock().unwrap();
            assert_eq!(opened.len(), 1, "one authorization so far: {opened:?}");
            let first = &opened[0];
            assert_eq!(query(first, "code_challenge_method").as_deref(), Some("S256"));
            assert_eq!(query(first, "resource").as_deref(), Some(resource.as_str()));
            let scope = query(first, "scope").unwrap_or_default();
            assert!(scope.split(' ').any(|s| s == "notes:read"), "first scope {scope}");
            assert!(!scope.split(' ').any(|s| s == "notes:write"), "first scope {scope}");
        }

        // write_note needs notes:write: a 403 insufficient_scope, then a step-up.
        let note = client
            .call_tool("write_note", serde_json::json!({"title": "hello", "body": "world"}))
            .await
            .map_err(|e| format!("write_note: {e}; browser: {:?}", failures.lock().unwrap()))?;
        assert!(!note.is_error.unwrap_or(false), "{note:?}");
        let text = note.content[0].as_text().unwrap_or_default();
        assert!(text.contains("Wrote note \"hello\" for alice"), "{text}");
        {
            let opened = opened.lock().unwrap();
            assert_eq!(opened.len(), 2, "a step-up authorization: {opened:?}");
            let scope = query(&opened[1], "scope").unwrap_or_default();
            for wanted in ["notes:read", "notes:write"] {
                assert!(scope.split(' ').any(|s| s == wanted), "step-up scope {scope} lacks {wanted}");
            }
        }
        client.close().await;
        assert!(failures.lock().unwrap().is_empty(), "browser: {:?}", failures.lock().unwrap());

        // The provider issued a refresh token; a refused access token is refreshed with it,
        // without the person (in the 2026-07-28 era this time).
        let kept: StoredTokens = store.load(&resource).await?.ok_or("no tokens were stored")?;
        assert!(kept.refresh_token.is_some(), "oidc-provider issued no refresh token");
        assert_eq!(kept.issuer, issuer);
        let mut stale = kept.clone();
        stale.access_token = "refused-by-the-server".into();
        store.save(&resource, stale).await?;
        let later = Arc::new(Mutex::new(Vec::new()));
        let oauth =
            OAuth::new(person(later.clone(), failures.clone(), Duration::ZERO).await).token_store(store.clone());
        let client = Client::builder("interop-protected-rust", "1.0.0")
            .protocol_era(ProtocolEra::Y2026)
            .oauth(oauth)
            .connect_http(&resource)
            .await
            .map_err(|e| format!("connecting with a stale token: {e}"))?;
        let whoami = client.call_tool("whoami", serde_json::json!({})).await.map_err(|e| format!("whoami: {e}"))?;
        assert_eq!(whoami.content[0].as_text(), Some(USER), "{whoami:?}");
        assert!(later.lock().unwrap().is_empty(), "refreshing needed no authorization: {:?}", later.lock().unwrap());
        let refreshed = store.load(&resource).await?.ok_or("the refreshed tokens were not stored")?;
        assert_ne!(refreshed.access_token, "refused-by-the-server");
        assert_ne!(refreshed.access_token, kept.access_token);
        client.close().await;

        // A token past its expiry is refreshed before it is sent: the server would still take
        // this one, so a new token in the store proves the client refreshed on its own.
        let mut expired = refreshed.clone();
        expired.expires_at = Some(std::time::SystemTime::UNIX_EPOCH);
        store.save(&resource, expired).await?;
        let oauth =
            OAuth::new(person(later.clone(), failures.clone(), Duration::ZERO).await).token_store(store.clone());
        let client = Client::builder("interop-protected-rust", "1.0.0")
            .oauth(oauth)
            .connect_http(&resource)
            .await
            .map_err(|e| format!("connecting with an expired token: {e}"))?;
        let whoami = client.call_tool("whoami", serde_json::json!({})).await.map_err(|e| format!("whoami: {e}"))?;
        assert_eq!(whoami.content[0].as_text(), Some(USER), "{whoami:?}");
        assert!(later.lock().unwrap().is_empty(), "refreshing needed no authorization: {:?}", later.lock().unwrap());
        let renewed = store.load(&resource).await?.ok_or("the renewed tokens were not stored")?;
        assert_ne!(renewed.access_token, refreshed.access_token, "the expired token was sent as it was");
        assert!(renewed.expires_at.is_some_and(|e| e > std::time::SystemTime::now()));
        client.close().await;

        // ProtocolEra::Auto with a person slower than the probe's timeout (here the request
        // timeout, 3 s): the time spent authorizing does not count, so the probe is not taken
        // for a session-era server and the person is asked once.
        let slow = Arc::new(Mutex::new(Vec::new()));
        let oauth = OAuth::new(person(slow.clone(), failures.clone(), Duration::from_secs(4)).await);
        let client = Client::builder("interop-protected-rust", "1.0.0")
            .protocol_era(ProtocolEra::Auto)
            .request_timeout(Some(Duration::from_secs(3)))
            .oauth(oauth)
            .connect_http(&resource)
            .await
            .map_err(|e| format!("connecting with Auto and a slow person: {e}"))?;
        assert_eq!(client.era(), ProtocolEra::Y2026);
        assert_eq!(slow.lock().unwrap().len(), 1, "{:?}", slow.lock().unwrap());
        let whoami = client.call_tool("whoami", serde_json::json!({})).await.map_err(|e| format!("whoami: {e}"))?;
        assert_eq!(whoami.content[0].as_text(), Some(USER), "{whoami:?}");
        client.close().await;
        assert!(failures.lock().unwrap().is_empty(), "browser: {:?}", failures.lock().unwrap());
        Ok::<_, String>(())
    });
    if let Err(e) = outcome {
        panic!(
            "our client failed against protected + oidc-provider: {e}\n--- protected ---\n{}\n--- oidc-provider ---\n{}",
            protected.log_text(),
            provider.log_text()
        );
    }
    assert!(protected.log_text().contains("fetched the issuer's keys"), "{}", protected.log_text());
}

/// The whole flow over https: the `protected` example serves TLS with a certificate of one
/// test CA, oidc-provider serves https with a certificate of another, and the example trusts
/// the provider's CA for the issuer's metadata and keys. Our client, given only the MCP
/// server's CA, is stopped by the authorization server's certificate with a typed error before
/// anyone is sent to log in; given the provider's CA for its OAuth flow as well, it authorizes
/// and calls `whoami` in both eras. A `JwtVerifier` checks the token it got against the keys
/// fetched over https only when it trusts the provider's CA.
#[test]
fn our_client_authorizes_over_https_with_oidc_provider_and_a_tls_protected_server() {
    use std::ffi::OsStr;
    use typed_mcp::auth::{JwtVerifier, TokenError, TokenVerifier};
    use typed_mcp::client::http::HttpClientConfig;
    use typed_mcp::client::oauth::OAuthError;

    use crate::support::pki::TestCa;

    println!("node {}", require_node_package("oidc-provider"));
    let port = free_port();
    let server_ca = TestCa::new("typed-mcp test CA (MCP server)");
    let provider_ca = TestCa::new("typed-mcp test CA (authorization server)");
    let (_, server_cert, server_key) = server_ca.write_files(&format!("interop-oauth-mcp-{port}"));
    let (provider_ca_file, provider_cert, provider_key) =
        provider_ca.write_files(&format!("interop-oauth-provider-{port}"));
    let resource = format!("https://127.0.0.1:{port}/mcp");
    let (provider, issuer) = start_provider_with(&resource, &[&provider_cert, &provider_key]);
    assert!(issuer.starts_with("https://"), "{issuer}");
    let protected = start_protected_with(
        port,
        &issuer,
        &[
            OsStr::new("--tls-cert"),
            server_cert.as_os_str(),
            OsStr::new("--tls-key"),
            server_key.as_os_str(),
            OsStr::new("--issuer-ca"),
            provider_ca_file.as_os_str(),
        ],
    );
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let outcome = runtime.block_on(async {
        let opened = Arc::new(Mutex::new(Vec::new()));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let browser_ca = Some(provider_ca.pem.clone());
        let config = || HttpClientConfig::default().root_certificates(server_ca.roots());

        // The MCP server is trusted, the authorization server is not.
        let oauth =
            OAuth::new(person_trusting(opened.clone(), failures.clone(), Duration::ZERO, browser_ca.clone()).await);
        let refused = Client::builder("interop-protected-rust-tls", "1.0.0")
            .oauth(oauth)
            .connect_http_with(&resource, config())
            .await
            .err()
            .ok_or("connected although the authorization server's certificate is not trusted")?;
        match refused.authorization() {
            Some(OAuthError::UntrustedCertificate { url, reason }) => {
                assert!(url.starts_with(&issuer), "{url} is not the authorization server's");
                assert!(reason.contains("not signed by a trusted certificate authority"), "{reason}");
            }
            _ => return Err(format!("expected OAuthError::UntrustedCertificate, got {refused:?}")),
        }
        assert!(
            opened.lock().unwrap().is_empty(),
            "nobody is sent to an untrusted server: {:?}",
            opened.lock().unwrap()
        );

        // Trusting the provider's CA for the flow: the whole authorization over https.
        let store = Arc::new(MemoryTokenStore::default());
        let oauth =
            OAuth::new(person_trusting(opened.clone(), failures.clone(), Duration::ZERO, browser_ca.clone()).await)
                .client_name("mcp-sdk interop over TLS (Rust)")
                .root_certificates(provider_ca.roots())
                .token_store(store.clone());
        let client = Client::builder("interop-protected-rust-tls", "1.0.0")
            .oauth(oauth)
            .connect_http_with(&resource, config())
            .await
            .map_err(|e| format!("connecting over https: {e}; browser: {:?}", failures.lock().unwrap()))?;
        let whoami = client.call_tool("whoami", serde_json::json!({})).await.map_err(|e| format!("whoami: {e}"))?;
        assert_eq!(whoami.content[0].as_text(), Some(USER), "{whoami:?}");
        assert_eq!(opened.lock().unwrap().len(), 1, "one authorization: {:?}", opened.lock().unwrap());
        client.close().await;

        // The 2026-07-28 era, with the stored token.
        let oauth = OAuth::new(person_trusting(opened.clone(), failures.clone(), Duration::ZERO, browser_ca).await)
            .root_certificates(provider_ca.roots())
            .token_store(store.clone());
        let client = Client::builder("interop-protected-rust-tls", "1.0.0")
            .protocol_era(ProtocolEra::Y2026)
            .oauth(oauth)
            .connect_http_with(&resource, config())
            .await
            .map_err(|e| format!("connecting over https, 2026-07-28: {e}"))?;
        let whoami = client.call_tool("whoami", serde_json::json!({})).await.map_err(|e| format!("whoami: {e}"))?;
        assert_eq!(whoami.content[0].as_text(), Some(USER), "{whoami:?}");
        assert_eq!(opened.lock().unwrap().len(), 1, "the stored token served: {:?}", opened.lock().unwrap());
        client.close().await;
        assert!(failures.lock().unwrap().is_empty(), "browser: {:?}", failures.lock().unwrap());

        // The resource server's side: the provider's keys over https, with and without its CA.
        let token = store.load(&resource).await?.ok_or("no tokens were stored")?.access_token;
        match JwtVerifier::new(issuer.clone()).verify(&token, &resource).await {
            Err(TokenError::Unavailable(why)) if why.contains("was not trusted") => {}
            other => return Err(format!("a verifier without the provider's CA: {other:?}")),
        }
        let verifier = JwtVerifier::new(issuer.clone()).root_certificates(provider_ca.roots());
        let info = verifier.verify(&token, &resource).await.map_err(|e| format!("verifying with the CA: {e}"))?;
        assert_eq!(info.subject(), USER);
        Ok::<_, String>(())
    });
    if let Err(e) = outcome {
        panic!(
            "our client failed over https against protected + oidc-provider: {e}\n--- protected ---\n{}\n--- oidc-provider ---\n{}",
            protected.log_text(),
            provider.log_text()
        );
    }
    assert!(protected.log_text().contains("fetched the issuer's keys"), "{}", protected.log_text());
}

// ----- machines: client credentials and DPoP-bound tokens -----

/// The DPoP key the test's machine client holds (P-256, made for this test).
const DPOP_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg3gdJ/8C1/XIVZYox
NddyfKRABFuLLi3w+tPNgYeusX6hRANCAARcCW7qv+hCovwFltSHssXET3/6fOrP
4JF6PKkKagCXzgzMLIzkkZzss2pskNHKbUi7PhRWr6ojBUkUfID/UD4M
-----END PRIVATE KEY-----
";

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// A DPoP proof by `DPOP_KEY` for `method url` with `token`, then `tweak`ed.
fn manual_proof(
    method: &str,
    url: &str,
    token: &str,
    nonce: Option<&str>,
    tweak: impl FnOnce(&mut serde_json::Value),
) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let public = SigningKey::from_pem(DPOP_KEY).unwrap().public_jwk();
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.typ = Some("dpop+jwt".into());
    header.jwk = Some(serde_json::from_value(public).unwrap());
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let ath = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token.as_bytes()));
    let mut claims = serde_json::json!({
        "jti": format!("manual-{}-{}", unix_now(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
        "htm": method, "htu": url, "iat": unix_now(), "ath": ath,
    });
    if let Some(nonce) = nonce {
        claims["nonce"] = serde_json::json!(nonce);
    }
    tweak(&mut claims);
    let key = jsonwebtoken::EncodingKey::from_ec_pem(DPOP_KEY.as_bytes()).unwrap();
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

#[test]
fn machines_get_dpop_bound_tokens_by_client_credentials_and_stolen_tokens_are_refused() {
    println!("node {}", require_node_package("oidc-provider"));

    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let assertion_key = SigningKey::generate().unwrap().key_id("machine-key");
    let mut public = assertion_key.public_jwk();
    public["kid"] = serde_json::json!("machine-key");
    public["alg"] = serde_json::json!("ES256");
    public["use"] = serde_json::json!("sig");
    let jwks = serde_json::json!({"keys": [public]}).to_string();
    let (provider, issuer) = start_provider_env(&resource, &[], &[("MACHINE_JWKS", jwks)]);
    let flags: Vec<&std::ffi::OsStr> = ["--dpop-required", "--dpop-nonces"].iter().map(std::ffi::OsStr::new).collect();
    let protected = start_protected_with(port, &issuer, &flags);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let outcome: Result<(), String> = runtime.block_on(async {
        let dpop_key = SigningKey::from_pem(DPOP_KEY).map_err(|e| e.to_string())?;
        let mut store = Arc::new(MemoryTokenStore::default());
        let machines = [
            ("machine-secret", OAuth::client_secret("machine-secret", "machine-secret-value").issuer(&issuer)),
            ("machine-jwt", OAuth::private_key_jwt("machine-jwt", assertion_key.clone()).issuer(&issuer)),
        ];
        for (name, oauth) in machines {
            // Each machine its own tokens; the last one's are stolen below.
            store = Arc::new(MemoryTokenStore::default());
            let oauth = oauth.dpop_key(dpop_key.clone()).token_store(store.clone());
            let client = Client::builder("interop-machine", "1.0.0")
                .oauth(oauth)
                .connect_http(&resource)
                .await
                .map_err(|e| format!("{name}: connecting: {e}"))?;
            let whoami = client.call_tool("whoami", serde_json::json!({})).await.map_err(|e| format!("{name}: whoami: {e}"))?;
            assert_eq!(whoami.content[0].as_text(), Some(name), "{whoami:?}");
            client.close().await;
        }
        let tokens = store.load(&resource).await?.ok_or("no token kept")?;
        assert!(tokens.dpop_bound, "the token is DPoP-bound");
        let token = tokens.access_token;
        let claims: serde_json::Value = {
            use base64::Engine as _;
            let payload = token.split('.').nth(1).ok_or("the token is not a JWT")?;
            serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
        };
        assert_eq!(claims["cnf"]["jkt"], dpop_key.thumbprint(), "{claims}");

        // Someone holding the token but not the key.
        let http = reqwest::Client::new();
        let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "thief", "version": "1"}}});
        let send = |authorization: String, proof: Option<String>| {
            let mut request = http
                .post(&resource)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("authorization", authorization)
                .body(init.to_string());
            if let Some(proof) = proof {
                request = request.header("dpop", proof);
            }
            async move { request.send().await.expect("POST") }
        };
        let challenge =
            |r: &reqwest::Response| r.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        // The nonce round trip: a proof without one gets `use_dpop_nonce` and a nonce.
        let first = send(format!("DPoP {token}"), Some(manual_proof("POST", &resource, &token, None, |_| {}))).await;
        assert_eq!(first.status(), 401);
        assert!(challenge(&first).contains("error=\"use_dpop_nonce\""), "{}", challenge(&first));
        let nonce = first.headers()["dpop-nonce"].to_str().unwrap().to_owned();
        let nonce = Some(nonce.as_str());
        let good = manual_proof("POST", &resource, &token, nonce, |_| {});
        let served = send(format!("DPoP {token}"), Some(good.clone())).await;
        assert_eq!(served.status(), 200, "the key holder is served: {}", challenge(&served));
        let refusals = [
            ("as a bearer token", format!("Bearer {token}"), None),
            ("without a proof", format!("DPoP {token}"), None),
            ("with the proof used already (jti)", format!("DPoP {token}"), Some(good)),
            ("with a proof for GET", format!("DPoP {token}"), Some(manual_proof("GET", &resource, &token, nonce, |_| {}))),
            (
                "with a proof for another URL",
                format!("DPoP {token}"),
                Some(manual_proof("POST", &format!("http://127.0.0.1:{port}/other"), &token, nonce, |_| {})),
            ),
            (
                "with a stale proof",
                format!("DPoP {token}"),
                Some(manual_proof("POST", &resource, &token, nonce, |c| c["iat"] = serde_json::json!(unix_now() - 600))),
            ),
            (
                "with a proof for another token (ath)",
                format!("DPoP {token}"),
                Some(manual_proof("POST", &resource, "another token", nonce, |_| {})),
            ),
        ];
        for (name, authorization, proof) in refusals {
            let response = send(authorization, proof).await;
            assert_eq!(response.status(), 401, "{name}");
            let www = challenge(&response);
            assert!(www.starts_with("DPoP algs=\"ES256"), "{name}: {www}");
            assert!(www.contains("error="), "{name}: {www}");
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}\n--- protected ---\n{}\n--- oidc-provider ---\n{}", protected.log_text(), provider.log_text());
    }
}
