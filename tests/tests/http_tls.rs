//! `https://` end to end, with a CA made at test time (`support::pki`): our server serves
//! Streamable HTTP over TLS (`HttpConfig::tls`), our client reaches it in each protocol era
//! given nothing but the CA's PEM, and a client that does not trust the CA (the platform's
//! roots alone, another CA) or a certificate for another name is refused with
//! `ClientError::UntrustedCertificate`, while the server goes on serving. A protected server
//! over TLS names its `https://` URL as its resource. The OAuth flow against an authorization
//! server over https is in `interop_oauth.rs` (oidc-provider).

use serde_json::json;
use tests::stdio::within;
use tokio::sync::oneshot;
use typed_mcp::auth::{Authorization, JwtVerifier};
use typed_mcp::client::http::HttpClientConfig;
use typed_mcp::client::{Client, ClientError, ProtocolEra};
use typed_mcp::prelude::*;
use typed_mcp::testing::ToolResultExt;
use typed_mcp::tls::{RootCertificates, ServerCertificate, TlsError};
use typed_mcp::transport::http::HttpConfig;

use crate::support::pki::TestCa;

/// Adds two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn server() -> Server {
    Server::builder("tls-test", "1.0.0").tools(tools![add]).build().expect("the server builds")
}

/// Serves `server` with `config` on `127.0.0.1:<free port>` until the sender is dropped;
/// returns the port.
async fn serve(server: &Server, config: HttpConfig) -> (u16, oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("a local address").port();
    let (stop, stopped) = oneshot::channel::<()>();
    let endpoint = server.streamable_http(config);
    tokio::spawn(async move {
        endpoint
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await
    });
    (port, stop)
}

async fn connect(url: &str, era: ProtocolEra, config: HttpClientConfig) -> Result<Client, ClientError> {
    within("connecting", Client::builder("tls-test-client", "1.0.0").protocol_era(era).connect_http_with(url, config))
        .await
}

#[tokio::test]
async fn our_client_calls_a_tool_over_https_in_every_era() {
    let ca = TestCa::new("typed-mcp test CA");
    let (port, _stop) = serve(&server(), HttpConfig::default().tls(ca.server_certificate())).await;
    for host in ["127.0.0.1", "localhost"] {
        let url = format!("https://{host}:{port}/mcp");
        for era in [ProtocolEra::Y2025, ProtocolEra::Y2026, ProtocolEra::Auto] {
            let config = HttpClientConfig::default().root_certificates(ca.roots());
            let client = connect(&url, era, config).await.unwrap_or_else(|e| panic!("{url} in {era:?}: {e}"));
            let result = within("the call", client.call_tool("add", json!({"a": 2, "b": 40})))
                .await
                .unwrap_or_else(|e| panic!("add over {url} in {era:?}: {e}"));
            assert_eq!(result.text(), "42", "{era:?}");
            if era == ProtocolEra::Auto {
                assert_eq!(client.era(), ProtocolEra::Y2026, "our server speaks the 2026-07-28 era");
            }
            client.close().await;
        }
    }
}

/// The `reason` of an `UntrustedCertificate` error, or a panic saying what came instead.
fn untrusted(result: Result<Client, ClientError>, url: &str) -> String {
    match result {
        Err(ClientError::UntrustedCertificate { url: at, reason }) => {
            assert!(at.starts_with(url), "the error names {at}, not {url}");
            reason
        }
        Err(other) => panic!("expected UntrustedCertificate from {url}, got {other:?} ({other})"),
        Ok(_) => panic!("{url} was trusted"),
    }
}

#[tokio::test]
async fn a_certificate_the_client_does_not_trust_is_refused_with_a_clear_error() {
    let ca = TestCa::new("typed-mcp test CA");
    let (port, _stop) = serve(&server(), HttpConfig::default().tls(ca.server_certificate())).await;
    let url = format!("https://127.0.0.1:{port}/mcp");

    // The platform's roots alone: the test CA is in no certificate store.
    for era in [ProtocolEra::Y2025, ProtocolEra::Y2026] {
        let reason = untrusted(connect(&url, era, HttpClientConfig::default()).await, &url);
        assert!(reason.contains("not signed by a trusted certificate authority"), "{reason}");
    }
    // Another CA.
    let other = TestCa::new("another CA");
    let error = connect(&url, ProtocolEra::Y2025, HttpClientConfig::default().root_certificates(other.roots()))
        .await
        .expect_err("a certificate of another CA is refused");
    assert!(error.to_string().contains("was not trusted"), "{error}");
    untrusted(Err(error), &url);

    // The server goes on serving clients that trust it.
    let client = connect(&url, ProtocolEra::Y2025, HttpClientConfig::default().root_certificates(ca.roots()))
        .await
        .expect("a client that trusts the CA connects after refused handshakes");
    assert_eq!(client.call_tool("add", json!({"a": 1, "b": 1})).await.expect("add").text(), "2");
    client.close().await;

    // Plain HTTP to a TLS endpoint fails at once, as a transport error, not a hang.
    let plain = connect(&format!("http://127.0.0.1:{port}/mcp"), ProtocolEra::Y2025, HttpClientConfig::default())
        .await
        .expect_err("plain HTTP is not served");
    assert!(matches!(plain, ClientError::Transport(_)), "{plain:?}");
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused() {
    let ca = TestCa::new("typed-mcp test CA");
    let leaf = ca.leaf_for(&["mcp.example.test"]);
    let certificate = ServerCertificate::from_pem(leaf.chain_pem.as_bytes(), leaf.key_pem.as_bytes()).unwrap();
    let (port, _stop) = serve(&server(), HttpConfig::default().tls(certificate)).await;
    let url = format!("https://127.0.0.1:{port}/mcp");
    let config = HttpClientConfig::default().root_certificates(ca.roots());
    let reason = untrusted(connect(&url, ProtocolEra::Y2025, config).await, &url);
    assert!(reason.contains("not valid for this host name"), "{reason}");
}

#[tokio::test]
async fn roots_and_an_application_client_together_are_refused() {
    let ca = TestCa::new("typed-mcp test CA");
    let config = HttpClientConfig::default().root_certificates(ca.roots()).http_client(reqwest::Client::new());
    let error = connect("https://127.0.0.1:1/mcp", ProtocolEra::Y2025, config).await.expect_err("refused");
    assert!(error.to_string().contains("add them to that client"), "{error}");
}

#[test]
fn bad_pem_is_a_typed_error() {
    let ca = TestCa::new("typed-mcp test CA");
    assert!(matches!(RootCertificates::from_pem(b"no PEM here"), Err(TlsError::NoCertificate)));
    let bundle = format!("{}{}", ca.pem, TestCa::new("second CA").pem);
    assert_eq!(RootCertificates::from_pem(bundle.as_bytes()).expect("a bundle of two").len(), 2);
    let leaf = ca.leaf();
    assert!(matches!(ServerCertificate::from_pem(leaf.chain_pem.as_bytes(), b"no key"), Err(TlsError::NoPrivateKey)));
    // A key that is not the certificate's.
    let other = ca.leaf();
    let mismatched = ServerCertificate::from_pem(leaf.chain_pem.as_bytes(), other.key_pem.as_bytes());
    assert!(matches!(mismatched, Err(TlsError::Invalid(_))), "{mismatched:?}");
    let missing = RootCertificates::from_pem_file("/nonexistent/ca.pem").expect_err("no such file");
    assert!(missing.to_string().contains("/nonexistent/ca.pem"), "{missing}");
}

#[tokio::test]
async fn a_protected_server_over_tls_names_its_https_url_as_its_resource() {
    let ca = TestCa::new("typed-mcp test CA");
    let authorization =
        Authorization::new(JwtVerifier::new("https://127.0.0.1:9")).authorization_server("https://127.0.0.1:9");
    let config = HttpConfig::default().tls(ca.server_certificate()).authorization(authorization);
    let (port, _stop) = serve(&server(), config).await;
    // A browser-like client of the test's (reqwest, built with the TLS of the SDK's `rustls`).
    let http = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca.pem.as_bytes()).unwrap()])
        .build()
        .unwrap();
    let metadata = http
        .get(format!("https://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"))
        .send()
        .await
        .expect("the metadata is served over https")
        .text()
        .await
        .expect("a body");
    let metadata: serde_json::Value = serde_json::from_str(&metadata).expect("JSON metadata");
    assert_eq!(metadata["resource"], format!("https://127.0.0.1:{port}/mcp"), "{metadata}");
    let refused = connect(
        &format!("https://127.0.0.1:{port}/mcp"),
        ProtocolEra::Y2025,
        HttpClientConfig::default().root_certificates(ca.roots()),
    )
    .await
    .expect_err("no token, no session");
    assert!(refused.authorization().is_some(), "{refused:?}");
}
