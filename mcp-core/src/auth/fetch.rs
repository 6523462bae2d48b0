//! Bounded HTTP fetches of JSON documents from an authorization server (metadata, keys,
//! introspection): a time limit, a size limit, no redirects.

use std::time::Duration;

use serde::de::DeserializeOwned;

use super::TokenError;

/// The largest document accepted from an authorization server.
const MAX_DOCUMENT: usize = 1024 * 1024;

/// The roots a verifier trusts besides the platform's (none without the `rustls` feature).
#[cfg(feature = "rustls")]
pub(crate) type Roots = Option<crate::tls::RootCertificates>;
/// The roots a verifier trusts besides the platform's (none without the `rustls` feature).
#[cfg(not(feature = "rustls"))]
pub(crate) type Roots = Option<std::convert::Infallible>;

/// The HTTP client the verifiers use, trusting `roots` besides the platform's certificate store.
pub(crate) fn client(timeout: Duration, roots: &Roots) -> reqwest::Client {
    let builder = reqwest::Client::builder().timeout(timeout).redirect(reqwest::redirect::Policy::none());
    #[cfg(feature = "rustls")]
    let builder = match roots {
        Some(roots) => roots.apply(builder),
        None => builder,
    };
    #[cfg(not(feature = "rustls"))]
    let _ = roots;
    builder.build().unwrap_or_else(|e| {
        tracing::error!(error = %e, "cannot build the HTTP client of the token verifier; using a default one");
        reqwest::Client::new()
    })
}

/// The error for a request that failed before an answer arrived.
fn send_error(error: &reqwest::Error) -> TokenError {
    let url = error.url().map(|u| u.to_string()).unwrap_or_default();
    #[cfg(feature = "rustls")]
    if let Some(reason) = crate::tls::untrusted_certificate(error) {
        return TokenError::Unavailable(format!("the TLS certificate of {url} was not trusted: {reason}"));
    }
    TokenError::Unavailable(format!("request to {url} failed: {error}"))
}

/// Sends `request` and reads a JSON body of at most [`MAX_DOCUMENT`] bytes. `Ok(None)` for a
/// 404 (a well-known path the server does not have).
pub(crate) async fn json<T: DeserializeOwned>(request: reqwest::RequestBuilder) -> Result<Option<T>, TokenError> {
    let unavailable = |what: String| TokenError::Unavailable(what);
    let mut response = request.send().await.map_err(|e| send_error(&e))?;
    let url = response.url().to_string();
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !response.status().is_success() {
        return Err(unavailable(format!("{url} answered {}", response.status())));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| unavailable(format!("reading {url}: {e}")))? {
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(unavailable(format!("{url} sent more than {MAX_DOCUMENT} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map(Some).map_err(|e| unavailable(format!("{url} sent invalid JSON: {e}")))
}

/// The URLs where an issuer's metadata may be found, in the order they are tried: RFC 8414's
/// `oauth-authorization-server` (inserted before the issuer's path), then OpenID Connect's
/// `openid-configuration` (inserted, then appended).
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let (origin, path) = match trimmed.find("://").map(|i| i + 3) {
        Some(start) => match trimmed[start..].find('/') {
            Some(slash) => trimmed.split_at(start + slash),
            None => (trimmed, ""),
        },
        None => (trimmed, ""),
    };
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{trimmed}/.well-known/openid-configuration"));
    }
    urls
}

/// The metadata fields the verifiers use.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct IssuerMetadata {
    pub(crate) issuer: String,
    pub(crate) jwks_uri: Option<String>,
}

/// Fetches `issuer`'s metadata from the first well-known URL that has it, and checks that it
/// names `issuer` (RFC 8414 §3.3: otherwise anyone able to serve that path could stand in).
pub(crate) async fn issuer_metadata(client: &reqwest::Client, issuer: &str) -> Result<IssuerMetadata, TokenError> {
    let mut last = None;
    for url in metadata_urls(issuer) {
        match json::<IssuerMetadata>(client.get(&url).header("accept", "application/json")).await {
            Ok(Some(m)) if m.issuer.trim_end_matches('/') == issuer.trim_end_matches('/') => return Ok(m),
            Ok(Some(m)) => {
                return Err(TokenError::Unavailable(format!("{url} names the issuer `{}`, not `{issuer}`", m.issuer)));
            }
            Ok(None) => {}
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| TokenError::Unavailable(format!("no metadata found for the issuer `{issuer}`"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_urls() {
        assert_eq!(
            metadata_urls("https://as.example.com/"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://as.example.com/tenant/1"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example.com/.well-known/openid-configuration/tenant/1",
                "https://as.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
    }
}
