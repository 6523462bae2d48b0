//! TLS settings: extra roots to trust for `https://` requests, and the certificate a server
//! presents when it serves Streamable HTTP over TLS (feature `rustls`, on by default).
//!
//! Out of the box, `https://` requests of the HTTP client (`ClientBuilder::connect_http`, the
//! OAuth flow) and of the token verifiers (`JwtVerifier`, `IntrospectionVerifier`) trust the
//! platform's certificate store. A server whose certificate comes from a private CA (a test
//! CA, a company CA not installed on the machine) is trusted once its CA is added as
//! [`RootCertificates`], read from PEM; the platform's roots are still trusted too.
//!
//! ```no_run
//! # #[cfg(feature = "http-client")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::client::{Client, ClientError, http::HttpClientConfig};
//! use typed_mcp::tls::RootCertificates;
//!
//! let roots = RootCertificates::from_pem_file("company-ca.pem")?;
//! let config = HttpClientConfig::default().root_certificates(roots);
//! match Client::builder("my-app", "1.0.0").connect_http_with("https://mcp.internal/mcp", config).await {
//!     Ok(client) => client.close().await,
//!     Err(ClientError::UntrustedCertificate { url, reason }) => eprintln!("{url} is not trusted: {reason}"),
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! A server serves `https://` when its `HttpConfig` has a [`ServerCertificate`] (feature
//! `http-tls`):
//!
//! ```no_run
//! # #[cfg(feature = "http-tls")]
//! # async fn run(server: typed_mcp::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::tls::ServerCertificate;
//! use typed_mcp::transport::http::HttpConfig;
//!
//! let certificate = ServerCertificate::from_pem_files("cert.pem", "key.pem")?;
//! let config = HttpConfig::default().tls(certificate);
//! server.serve_http("127.0.0.1:8443".parse()?, Some(config)).await?;
//! # Ok(())
//! # }
//! ```
//!
//! The TLS stack is rustls with the aws-lc-rs crypto provider (unless the application installed
//! a process-wide default provider, which is then used). Without the `rustls` feature nothing
//! here exists: pass a `reqwest::Client` of your own to `HttpClientConfig::http_client`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// Why certificates or a key could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The input is not valid PEM.
    #[error("invalid PEM: {0}")]
    Pem(String),
    /// The input holds no `CERTIFICATE` block.
    #[error("no certificate found in the PEM input")]
    NoCertificate,
    /// The input holds no private key block (`PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY`).
    #[error("no private key found in the PEM input")]
    NoPrivateKey,
    /// A certificate could not be parsed, or the certificate and key do not go together.
    #[error("the certificate cannot be used: {0}")]
    Invalid(String),
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read { path: path.to_owned(), source })
}

/// Every `CERTIFICATE` block of `pem`, in order (other blocks are skipped).
fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs =
        CertificateDer::pem_slice_iter(pem).collect::<Result<Vec<_>, _>>().map_err(|e| TlsError::Pem(e.to_string()))?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate);
    }
    Ok(certs)
}

/// Certificates of certification authorities to trust for `https://` requests, in addition to
/// the platform's roots. Cheap to clone.
///
/// Give them to `HttpClientConfig::root_certificates` (the MCP connection and, unless it has its
/// own, its OAuth flow), `OAuth::root_certificates` (the OAuth flow alone),
/// `JwtVerifier::root_certificates`, `IntrospectionVerifier::root_certificates`, or
/// `Backplane::hop_roots` (the hop between the instances of a shared deployment, feature
/// `http-tls`).
#[cfg(any(feature = "http-client", feature = "auth", feature = "http-tls"))]
#[derive(Clone)]
pub struct RootCertificates {
    certs: Arc<[CertificateDer<'static>]>,
}

#[cfg(any(feature = "http-client", feature = "auth", feature = "http-tls"))]
impl std::fmt::Debug for RootCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootCertificates").field("len", &self.certs.len()).finish()
    }
}

#[cfg(any(feature = "http-client", feature = "auth", feature = "http-tls"))]
impl RootCertificates {
    /// The `CERTIFICATE` blocks of `pem` (one CA, or a bundle of several). Each must parse as
    /// an X.509 certificate usable as a trust anchor.
    pub fn from_pem(pem: &[u8]) -> Result<Self, TlsError> {
        let certs = certificates(pem)?;
        for der in &certs {
            rustls::RootCertStore::empty().add(der.clone()).map_err(|e| TlsError::Invalid(e.to_string()))?;
        }
        Ok(RootCertificates { certs: Arc::from(certs) })
    }

    /// The certificates of the PEM file at `path` (see [`from_pem`](Self::from_pem)).
    pub fn from_pem_file(path: impl AsRef<Path>) -> Result<Self, TlsError> {
        Self::from_pem(&read(path.as_ref())?)
    }

    /// How many certificates there are.
    pub fn len(&self) -> usize {
        self.certs.len()
    }

    /// Whether there are none (never, for certificates read with [`from_pem`](Self::from_pem)).
    pub fn is_empty(&self) -> bool {
        self.certs.is_empty()
    }

    /// These roots and `other`'s.
    pub fn merged(&self, other: &RootCertificates) -> RootCertificates {
        RootCertificates { certs: self.certs.iter().chain(other.certs.iter()).cloned().collect() }
    }

    /// `builder`, trusting these roots besides the platform's.
    #[cfg(any(feature = "http-client", feature = "auth"))]
    pub(crate) fn apply(&self, builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
        // Each was parsed as a trust anchor in `from_pem`, so none is left out here.
        let certs = self.certs.iter().filter_map(|der| reqwest::Certificate::from_der(der).ok());
        builder.tls_certs_merge(certs.collect::<Vec<_>>())
    }

    /// The certificates, DER-encoded.
    #[cfg(feature = "http-tls")]
    pub(crate) fn der(&self) -> &[CertificateDer<'static>] {
        &self.certs
    }
}

/// The process-wide default crypto provider, or aws-lc-rs when the application installed none.
#[cfg(feature = "http-tls")]
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
}

/// The TLS settings of an `https://` client that trusts the platform's roots and `roots`
/// (the hop between the instances of a deployment).
#[cfg(feature = "http-tls")]
pub(crate) fn client_config(roots: Option<&RootCertificates>) -> Result<rustls::ClientConfig, TlsError> {
    let provider = provider();
    let extra = roots.map(|r| r.der().to_vec()).unwrap_or_default();
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
        .map_err(|e| TlsError::Invalid(e.to_string()))?;
    // No ALPN here: the HTTP client names the protocols it speaks.
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Invalid(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(config)
}

#[cfg(any(feature = "http-client", feature = "auth"))]
/// Why a request failed, when it is because the server's certificate was not trusted (an
/// unknown issuer, a name that does not match, an expired certificate…): the TLS error found in
/// `error`'s chain of sources.
pub(crate) fn untrusted_certificate(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    match tls_error(error)? {
        rustls::Error::InvalidCertificate(why) => Some(describe(why)),
        _ => None,
    }
}

/// The TLS error in `error`'s chain of sources, if the request failed in TLS (a certificate
/// refused, a handshake with something that does not speak TLS…).
#[cfg(any(feature = "http-client", feature = "auth", feature = "http-tls"))]
pub(crate) fn tls_error<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        // `io::Error::source` skips the error it wraps: step into it instead.
        next = match e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => e.source(),
        };
    }
    None
}

/// Why a TLS connection failed, in words.
#[cfg(feature = "http-tls")]
pub(crate) fn tls_failure(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    match tls_error(error)? {
        rustls::Error::InvalidCertificate(why) => Some(describe(why)),
        other => Some(other.to_string()),
    }
}

#[cfg(any(feature = "http-client", feature = "auth", feature = "http-tls"))]
fn describe(error: &rustls::CertificateError) -> String {
    use rustls::CertificateError as E;
    match error {
        E::UnknownIssuer => "it is not signed by a trusted certificate authority".into(),
        E::NotValidForName | E::NotValidForNameContext { .. } => "it is not valid for this host name".into(),
        E::Expired | E::ExpiredContext { .. } => "it has expired".into(),
        E::NotValidYet | E::NotValidYetContext { .. } => "it is not valid yet".into(),
        E::Revoked => "it has been revoked".into(),
        other => format!("{other:?}"),
    }
}

/// The certificate chain and private key a server presents for `https://` (feature
/// `http-tls`), given to `HttpConfig::tls`. Cheap to clone.
#[cfg(feature = "http-tls")]
#[derive(Clone)]
pub struct ServerCertificate {
    config: Arc<rustls::ServerConfig>,
}

#[cfg(feature = "http-tls")]
impl std::fmt::Debug for ServerCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCertificate").finish_non_exhaustive()
    }
}

#[cfg(feature = "http-tls")]
impl ServerCertificate {
    /// The certificate chain `chain_pem` (the server's certificate first, then the
    /// intermediates) and its private key `key_pem` (PKCS#8, PKCS#1 or SEC1). Fails when the
    /// key does not belong to the first certificate.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self, TlsError> {
        use rustls::pki_types::PrivateKeyDer;
        let chain = certificates(chain_pem)?;
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| match e {
            rustls::pki_types::pem::Error::NoItemsFound => TlsError::NoPrivateKey,
            e => TlsError::Pem(e.to_string()),
        })?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Invalid(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| TlsError::Invalid(e.to_string()))?;
        // The endpoint speaks HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ServerCertificate { config: Arc::new(config) })
    }

    /// The chain and key of the PEM files at `chain_path` and `key_path` (see
    /// [`from_pem`](Self::from_pem)).
    pub fn from_pem_files(chain_path: impl AsRef<Path>, key_path: impl AsRef<Path>) -> Result<Self, TlsError> {
        Self::from_pem(&read(chain_path.as_ref())?, &read(key_path.as_ref())?)
    }

    /// The acceptor for incoming connections.
    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(self.config.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_without_certificates_is_refused() {
        assert!(matches!(certificates(b"nothing here"), Err(TlsError::NoCertificate)));
        let garbage = b"-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n";
        assert!(matches!(certificates(garbage), Err(TlsError::Pem(_))));
    }

    #[cfg(any(feature = "http-client", feature = "auth"))]
    #[test]
    fn a_certificate_error_is_found_inside_nested_io_errors() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let nested = std::io::Error::other(std::io::Error::new(std::io::ErrorKind::InvalidData, tls));
        let reason = untrusted_certificate(&nested).expect("found");
        assert!(reason.contains("not signed by a trusted certificate authority"), "{reason}");
        let unrelated = std::io::Error::other(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert_eq!(untrusted_certificate(&unrelated), None);
    }

    #[cfg(any(feature = "http-client", feature = "auth", feature = "http-tls"))]
    #[test]
    fn a_block_that_is_no_certificate_is_refused() {
        // Valid base64, but not DER of a certificate.
        let pem = b"-----BEGIN CERTIFICATE-----\nAAECAwQF\n-----END CERTIFICATE-----\n";
        assert!(matches!(RootCertificates::from_pem(pem), Err(TlsError::Invalid(_))));
    }
}
