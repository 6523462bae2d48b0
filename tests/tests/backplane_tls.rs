//! The hop between the instances of a shared deployment over TLS: instances serving `https://`
//! (a CA made at test time, `support::pki`) announce their `https://` addresses, and a request
//! for a session owned elsewhere reaches its owner over TLS, trusting the deployment's CA given
//! with `Backplane::hop_roots`. An instance that does not trust the owner's certificate is
//! answered `503` and the session is not taken over (taking a live session over would make two
//! instances serve it); an owner not speaking TLS at its `https://` address is in
//! `backplane_trust.rs`.

use std::net::Ipv4Addr;
use std::time::Duration;

use serde_json::json;
use tests::stdio::within;
use typed_mcp::prelude::*;
use typed_mcp::transport::http::{HttpConfig, StreamableHttp};
use typed_mcp_redis::Redis;

use crate::support::backplane::{SECRET, add, assert_owned_by, initialize, set_level, started_redis};
use crate::support::pki::TestCa;

/// An instance serving `https://` with a certificate of `ca`, sharing sessions through `redis`;
/// the hop trusts `hop_ca` when given. Returns its URL and its endpoint.
async fn tls_instance(redis: &Redis, ca: &TestCa, hop_ca: Option<&TestCa>) -> (String, StreamableHttp) {
    let server = Server::builder("t", "1").tools(tools![add]).build().unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let url = format!("https://{}/mcp", listener.local_addr().unwrap());
    let mut backplane = redis.backplane(url.clone()).heartbeat(Duration::from_millis(100)).secret(SECRET);
    if let Some(hop_ca) = hop_ca {
        backplane = backplane.hop_roots(hop_ca.roots());
    }
    let http = server.streamable_http(HttpConfig::default().tls(ca.server_certificate()).backplane(backplane));
    let serving = http.clone();
    tokio::spawn(async move {
        let _ = serving.serve(listener, std::future::pending()).await;
    });
    (url, http)
}

/// An HTTPS client trusting `ca`.
fn client(ca: &TestCa) -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(ca.pem.as_bytes()).unwrap();
    reqwest::Client::builder().tls_certs_merge([ca]).pool_max_idle_per_host(0).build().unwrap()
}

fn request(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    session: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut request = http
        .request(method, url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
}

/// A 2025-era session opened and initialized at `url`.
async fn open(http: &reqwest::Client, url: &str) -> String {
    let opened =
        within("initialize", request(http, reqwest::Method::POST, url, None).body(initialize().to_string()).send())
            .await
            .unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let ack = request(http, reqwest::Method::POST, url, Some(&session)).body(initialized).send().await.unwrap();
    assert_eq!(ack.status(), 202);
    session
}

#[tokio::test]
async fn the_hop_reaches_an_owner_over_https_trusting_the_deployment_ca() {
    let (_server, redis) = started_redis();
    let ca = TestCa::new("deployment CA");
    let (owner, owner_http) = tls_instance(&redis, &ca, Some(&ca)).await;
    let (other, other_http) = tls_instance(&redis, &ca, Some(&ca)).await;
    let http = client(&ca);
    let session = open(&http, &owner).await;

    // What only the owner serves goes over the hop: the owner listens for TLS alone.
    let level = within(
        "setLevel",
        request(&http, reqwest::Method::POST, &other, Some(&session)).body(set_level(2).to_string()).send(),
    )
    .await
    .unwrap();
    assert_eq!(level.status(), 200);
    let answer = level.text().await.unwrap();
    assert!(answer.contains(r#""result":{}"#), "{answer}");
    // The GET stream is the owner's too.
    let stream = within("GET", request(&http, reqwest::Method::GET, &other, Some(&session)).send()).await.unwrap();
    assert_eq!(stream.status(), 200);
    assert!(stream.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    drop(stream);
    // A call served where it lands still works, and the session stays the owner's.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
    let called =
        request(&http, reqwest::Method::POST, &other, Some(&session)).body(call.to_string()).send().await.unwrap();
    assert_eq!(called.status(), 200);
    assert!(called.text().await.unwrap().contains(r#""text":"5""#));
    assert_owned_by(&redis, &session, &owner, "the owner keeps its session").await;
    assert_eq!(owner_http.session_count(), 1);
    // DELETE over the hop ends it everywhere.
    let deleted = request(&http, reqwest::Method::DELETE, &other, Some(&session)).send().await.unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_eq!(owner_http.session_count(), 0);
    let gone = request(&http, reqwest::Method::POST, &other, Some(&session))
        .body(set_level(4).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    drop(other_http);
}

#[tokio::test]
async fn an_owner_whose_certificate_the_hop_does_not_trust_answers_503_and_keeps_its_session() {
    let (_server, redis) = started_redis();
    let ca = TestCa::new("deployment CA");
    let stranger = TestCa::new("another CA");
    let (owner, owner_http) = tls_instance(&redis, &ca, Some(&ca)).await;
    // This instance's hop trusts another CA (and the platform's roots), not the owner's.
    let (other, _other_http) = tls_instance(&redis, &ca, Some(&stranger)).await;
    let http = client(&ca);
    let session = open(&http, &owner).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let level = request(&http, reqwest::Method::POST, &other, Some(&session))
        .body(set_level(2).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(level.status(), 503, "{}", level.text().await.unwrap());
    assert_owned_by(&redis, &session, &owner, "a live owner keeps its session").await;
    assert_eq!(owner_http.session_count(), 1);
}
