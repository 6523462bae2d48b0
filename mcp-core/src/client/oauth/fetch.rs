//! The flow's own HTTP requests: a time limit for each, bodies of a bounded size, and the
//! error for a server that could not be reached.

use std::time::Duration;

use super::OAuthError;

/// The largest metadata, registration or token document read.
const MAX_DOCUMENT: usize = 256 * 1024;
/// How long one request of the flow may take.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The error for a request to `url` that failed before an answer arrived: a certificate that
/// was not trusted, or any other failure to reach the server.
pub(super) fn http_error(url: &str, error: &reqwest::Error) -> OAuthError {
    if super::policy::resolved_inside(error) {
        return OAuthError::PrivateAddress { url: url.to_owned() };
    }
    #[cfg(feature = "rustls")]
    if let Some(reason) = crate::tls::untrusted_certificate(error) {
        return OAuthError::UntrustedCertificate { url: url.to_owned(), reason };
    }
    OAuthError::Http { url: url.to_owned(), reason: error.to_string() }
}

/// Reads a body of at most [`MAX_DOCUMENT`] bytes.
pub(super) async fn read_limited(url: &str, mut response: reqwest::Response) -> Result<Vec<u8>, OAuthError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| http_error(url, &e))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(OAuthError::MalformedMetadata {
                url: url.to_owned(),
                reason: "the document is too large".into(),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
