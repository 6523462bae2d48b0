//! Who may act as an instance of a shared deployment: only what is sealed with the deployment
//! secret is heard on the bus or served as forwarded; a client cannot claim to be an instance;
//! deployments under two Redis prefixes never see each other.

use std::process::Command;
use std::time::Duration;

use base64::Engine as _;
use hmac::Mac as _;
use serde_json::json;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::HttpConfig;
use typed_mcp_redis::Redis;

use crate::support::backplane::{
    SECRET, add, in_process, initialize, open_get_stream, open_session, post, started_redis,
};
use crate::support::http::post_2025;

/// `PUBLISH channel payload` through `redis-cli`, as anyone with write access to the Redis can.
fn publish(redis_url: &str, channel: &str, payload: &str) {
    let out = Command::new("redis-cli")
        .args(["-u", redis_url, "PUBLISH", channel, payload])
        .output()
        .expect("redis-cli runs (install redis-tools, or Debian's redis-server package, which brings it)");
    assert!(out.status.success(), "redis-cli PUBLISH failed: {}", String::from_utf8_lossy(&out.stderr));
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The envelope of a message saying the tools changed, from `from`, sent at `at`, of version `v`.
fn list_changed(from: &str, at: u64, v: u32) -> String {
    json!({"v": v, "from": from, "at": at,
           "message": {"type": "list_changed", "method": "notifications/tools/list_changed"}})
    .to_string()
}

/// `json` sealed as an instance holding `secret` seals it: HMAC-SHA256 over the text, after its
/// length (8 bytes, big-endian), base64url, then a dot and the text.
fn sealed(secret: &[u8], json: &str) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).unwrap();
    mac.update(&(json.len() as u64).to_be_bytes());
    mac.update(json.as_bytes());
    let seal = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{seal}.{json}")
}

/// Reads `stream` until `text` arrives (true) or `wait` passes (false).
async fn hears(stream: &mut reqwest::Response, text: &str, wait: Duration) -> bool {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, stream.chunk()).await {
            Ok(Ok(Some(bytes))) => {
                seen.push_str(&String::from_utf8_lossy(&bytes));
                if seen.contains(text) {
                    return true;
                }
            }
            _ => return false,
        }
    }
}

/// A 2025-era session opened at `url`, initialized, with its GET stream open.
async fn session_with_stream(url: &str) -> (String, reqwest::Response) {
    let id = open_session(url).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(url, Some(&id), initialized).await.0, 202);
    let stream = open_get_stream(url, &id).await;
    assert_eq!(stream.status(), 200);
    (id, stream)
}

#[tokio::test]
async fn a_message_forged_on_the_bus_is_dropped_and_counted_and_one_sealed_with_the_secret_is_heard() {
    let (server, redis) = started_redis();
    let (url, http, _task) = in_process(&redis).await;
    let (_id, mut stream) = session_with_stream(&url).await;
    let channel = "mcp:bus:deployment";
    let changed = "notifications/tools/list_changed";

    // Forged: no seal, a made-up seal, a seal under another secret.
    publish(&server.url(), channel, &format!(".{}", list_changed("forger", now_ms(), 1)));
    publish(&server.url(), channel, &format!("AAAA.{}", list_changed("forger", now_ms(), 1)));
    let other = b"a secret of another deployment, 32 bytes or more";
    publish(&server.url(), channel, &sealed(other, &list_changed("forger", now_ms(), 1)));
    // Sealed, but stale (a replay), or of a version this instance does not speak.
    publish(&server.url(), channel, &sealed(SECRET, &list_changed("forger", now_ms() - 120_000, 1)));
    publish(&server.url(), channel, &sealed(SECRET, &list_changed("forger", now_ms(), 99)));
    assert!(!hears(&mut stream, changed, Duration::from_secs(1)).await, "a forged message reached the session");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while http.bus_messages_dropped() < 5 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(http.bus_messages_dropped(), 5, "each forgery is dropped and counted");

    // Sealed with the deployment's secret: heard, as from any instance.
    publish(&server.url(), channel, &sealed(SECRET, &list_changed("another-instance", now_ms(), 1)));
    assert!(hears(&mut stream, changed, Duration::from_secs(5)).await, "a sealed message is heard");
    assert_eq!(http.bus_messages_dropped(), 5);
}

#[tokio::test]
async fn a_client_claiming_to_be_an_instance_is_refused() {
    let (_server, redis) = started_redis();
    let (url, _http, _task) = in_process(&redis).await;
    let (_, id, _) = post(&url, None, initialize()).await;
    let id = id.unwrap();
    let http = crate::support::http_client();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    let send =
        |headers: &'static [(&'static str, &'static str)]| post_2025(&http, &url, Some(&id), headers, &call).send();
    for forged in [
        &[("mcp-forwarded-by", "someone")][..],
        &[("mcp-forwarded-by", "someone"), ("mcp-forwarded-seal", "eyJhdCI6MX0.AAAA")][..],
    ] {
        let response = send(forged).await.unwrap();
        assert_eq!(response.status(), 403, "{forged:?}");
        assert!(response.text().await.unwrap().contains("forwarded"));
    }
    let response = send(&[]).await.unwrap();
    assert_eq!(response.status(), 200, "the same call, as a client");
    assert!(response.text().await.unwrap().contains("\"3\""));
}

/// An instance of a deployment with no secret, sharing sessions through `redis`.
async fn unsealed_instance(redis: &Redis) -> (String, typed_mcp::transport::http::StreamableHttp) {
    let server = Server::builder("t", "1").tools(tools![add]).build().unwrap();
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let backplane = redis.backplane(url.clone()).heartbeat(Duration::from_millis(100));
    assert!(!backplane.is_authenticated());
    let http = server.streamable_http(HttpConfig::default().backplane(backplane));
    let serving = http.clone();
    tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (url, http)
}

#[tokio::test]
async fn without_a_secret_a_claim_to_be_forwarded_still_skips_nothing() {
    let (_server, redis) = started_redis();
    let (owner, _a) = unsealed_instance(&redis).await;
    let (other, _b) = unsealed_instance(&redis).await;
    let (_, id, _) = post(&owner, None, initialize()).await;
    let id = id.unwrap();
    // The other instance serves a call of the session on a replica.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    let (status, _, body) = post(&other, Some(&id), call).await;
    assert_eq!(status, 200, "{body}");
    // What only the owner does, sent there claiming to come from the owner's forwarder: not
    // served on the replica (the claim only says "I am the owner's", which it is not).
    let set_level = json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "error"}});
    let claim = [("mcp-forwarded-by", "someone")];
    let response =
        post_2025(&crate::support::http_client(), &other, Some(&id), &claim, &set_level).send().await.unwrap();
    assert_eq!(response.status(), 404, "owner-only work must not run on a replica");
    // Without the claim, it takes its hop to the owner.
    let set_level = json!({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": "error"}});
    let (status, _, body) = post(&other, Some(&id), set_level).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn two_deployments_under_two_prefixes_on_one_redis_never_see_each_other() {
    let (server, _) = started_redis();
    let one = Redis::connect(&server.url()).unwrap().with_prefix("one").unwrap();
    let two = Redis::connect(&server.url()).unwrap().with_prefix("two").unwrap();
    let (url_one, _a, _t1) = in_process(&one).await;
    let (url_two, _b, _t2) = in_process(&two).await;
    let (_, id, _) = post(&url_one, None, initialize()).await;
    let id = id.unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});
    assert_eq!(post(&url_one, Some(&id), call.clone()).await.0, 200);
    assert_eq!(post(&url_two, Some(&id), call).await.0, 404, "the other deployment does not know the session");
    assert_ne!(one.shared_secret("k").await.unwrap(), two.shared_secret("k").await.unwrap());
    let keys = typed_mcp_redis::testing::keys(&server.url(), "*").await;
    assert!(keys.iter().all(|k| k.starts_with("one:") || k.starts_with("two:")), "{keys:?}");
    // What is not a prefix is refused, naming the rule.
    for bad in ["", "a:b", "a{b}", "with space", &"x".repeat(65)] {
        let error = Redis::connect(&server.url()).unwrap().with_prefix(bad).expect_err("refused");
        assert!(error.to_string().contains("invalid Redis key prefix"), "{bad:?}: {error}");
    }
}

/// One instance of a protected deployment on the Redis at `redis_url`: DPoP proofs shared
/// through it (as the docs advise), sessions too.
async fn protected_instance(
    redis_url: &str,
    issuer: &crate::authorization::Issuer,
) -> (String, typed_mcp::transport::http::StreamableHttp) {
    let redis = Redis::connect(redis_url).unwrap().with_prefix("protected").unwrap();
    let dpop = typed_mcp::auth::Dpop::new().replay_cache(redis.replay_cache());
    let auth = crate::authorization::authorization(issuer).dpop(dpop);
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let backplane = redis.backplane(url.clone()).heartbeat(Duration::from_millis(100)).secret(SECRET);
    let http =
        crate::authorization::server().streamable_http(HttpConfig::default().authorization(auth).backplane(backplane));
    let serving = http.clone();
    tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (url, http)
}

#[tokio::test]
async fn with_dpop_and_a_shared_replay_cache_a_get_stream_a_call_and_delete_landing_on_a_non_owner_work() {
    use crate::authorization::{Issuer, bound, client_jwk, proof_with, thumbprint};
    let redis = typed_mcp_redis::testing::RedisServer::start();
    let issuer = Issuer::start().await;
    let (owner, _a) = protected_instance(&redis.url(), &issuer).await;
    let (other, _b) = protected_instance(&redis.url(), &issuer).await;
    let token = bound(&issuer.url, "alice", &thumbprint(&client_jwk()));
    let proof = |method: &str| {
        let method = method.to_owned();
        proof_with(&token, move |_, claims| claims["htm"] = json!(method))
    };
    let http = crate::support::http_client();
    let request = |method: reqwest::Method, url: &str, session: Option<&str>| {
        let mut r = http
            .request(method.clone(), url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .header("authorization", format!("DPoP {token}"))
            .header("dpop", proof(method.as_str()));
        if let Some(session) = session {
            r = r.header("mcp-session-id", session);
        }
        r
    };
    let init = initialize();
    let opened = request(reqwest::Method::POST, &owner, None).body(init.to_string()).send().await.unwrap();
    assert_eq!(opened.status(), 200, "{:?}", opened.headers().get("www-authenticate"));
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let ack = request(reqwest::Method::POST, &owner, Some(&session)).body(initialized).send().await.unwrap();
    assert_eq!(ack.status(), 202);

    // The GET stream is the owner's: one hop there, with the proof checked once.
    let stream = request(reqwest::Method::GET, &other, Some(&session)).send().await.unwrap();
    assert_eq!(stream.status(), 200, "{:?}", stream.headers().get("www-authenticate"));
    drop(stream);
    // `logging/setLevel` too; the owner knows the user from the hop's word.
    let set_level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}});
    let level =
        request(reqwest::Method::POST, &other, Some(&session)).body(set_level.to_string()).send().await.unwrap();
    assert_eq!(level.status(), 200, "{:?}", level.headers().get("www-authenticate"));
    // A call served where it lands sees the token's details.
    let whoami =
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}});
    let called = request(reqwest::Method::POST, &other, Some(&session)).body(whoami.to_string()).send().await.unwrap();
    assert_eq!(called.status(), 200);
    let text = called.text().await.unwrap();
    assert!(text.contains("alice via"), "{text}");
    // DELETE is the owner's as well; then the session is gone everywhere.
    let deleted = request(reqwest::Method::DELETE, &other, Some(&session)).send().await.unwrap();
    assert!(deleted.status().is_success(), "{} {:?}", deleted.status(), deleted.headers().get("www-authenticate"));
    let after =
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}});
    let gone = request(reqwest::Method::POST, &owner, Some(&session)).body(after.to_string()).send().await.unwrap();
    assert_eq!(gone.status(), 404);
}

#[tokio::test]
async fn an_owner_whose_address_the_hop_cannot_speak_is_not_taken_for_gone() {
    let (_server, redis) = started_redis();
    // The owner announces an https:// address but serves plain HTTP: the hop's TLS handshake
    // fails, and the owner, alive, is not taken for gone.
    let server = Server::builder("t", "1").tools(tools![add]).build().unwrap();
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let announced = url.replace("http://", "https://");
    let backplane = redis.backplane(announced.clone()).heartbeat(Duration::from_millis(100)).secret(SECRET);
    let owner = server.streamable_http(HttpConfig::default().backplane(backplane));
    let serving = owner.clone();
    tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    let (other, _b, _t) = in_process(&redis).await;
    let (_, id, _) = post(&url, None, initialize()).await;
    let id = id.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let set_level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}});
    let (status, _, body) = post(&other, Some(&id), set_level).await;
    assert_eq!(status, 503, "{body}");
    crate::support::backplane::assert_owned_by(&redis, &id, &announced, "a live owner keeps its session").await;
    assert_eq!(owner.session_count(), 1);
}

/// The `protected` example as one instance of a deployment on `redis_url`, every instance
/// announcing `resource`; killed when dropped.
async fn protected_example(redis_url: &str, issuer: &str, resource: &str) -> (tokio::process::Child, String) {
    let port = typed_mcp_redis::testing::free_port();
    let child = tokio::process::Command::new(tests::interop::example_binary("protected"))
        .args(["--port", &port.to_string(), "--issuer", issuer, "--resource", resource])
        .args(["--redis", redis_url, "--redis-prefix", "notes", "--secret", std::str::from_utf8(SECRET).unwrap()])
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the protected example");
    let started = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "protected did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test]
async fn protected_example_instances_share_sessions_and_keep_users_apart() {
    use crate::authorization::{Issuer, KEY_A, claims_for, sign};
    let redis = typed_mcp_redis::testing::RedisServer::start();
    let issuer = Issuer::start().await;
    let resource = "https://notes.example/mcp";
    let (_a, a) = protected_example(&redis.url(), &issuer.url, resource).await;
    let (_b, b) = protected_example(&redis.url(), &issuer.url, resource).await;
    let token = |sub: &str| sign(&claims_for(&issuer.url, sub, "notes:read", resource), "a", KEY_A);
    let (alice, bob) = (token("alice"), token("bob"));
    let http = crate::support::http_client();
    let send = |url: &str, token: &str, session: Option<&str>, body: serde_json::Value| {
        let bearer = format!("Bearer {token}");
        post_2025(&http, url, session, &[("authorization", bearer.as_str())], &body).send()
    };
    let opened = send(&a, &alice, None, initialize()).await.unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(send(&a, &alice, Some(&session), initialized).await.unwrap().status(), 202);
    let whoami =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}});
    // Alice's session, served by the other instance.
    let served = send(&b, &alice, Some(&session), whoami.clone()).await.unwrap();
    assert_eq!(served.status(), 200);
    assert!(served.text().await.unwrap().contains("alice"));
    // Bob naming it, on either instance: as unknown as any session id.
    for url in [&a, &b] {
        let refused = send(url, &bob, Some(&session), whoami.clone()).await.unwrap();
        assert_eq!(refused.status(), 404, "{url}");
    }
}
