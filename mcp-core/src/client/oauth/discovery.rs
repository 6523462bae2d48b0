//! Discovery: the protected resource metadata and the authorization server's metadata, found
//! at their well-known URLs (or the 2025-03-26 defaults when a server publishes none).

use reqwest::header::ACCEPT;
use serde_json::Value;

use super::OAuthError;
use super::fetch::{REQUEST_TIMEOUT, http_error, read_limited};
use super::metadata::{
    ResourceMetadata, ServerMetadata, covers, origin, parse_resource_metadata, parse_server_metadata,
};
use super::tokens::OAuthLogin;

impl OAuthLogin {
    /// The protected resource metadata; when the server publishes none (a server of the
    /// 2025-03-26 revision), the authorization server is taken to be at the server's origin.
    pub(super) async fn discover_resource_or_legacy(
        &self,
        from_challenge: Option<&str>,
    ) -> Result<ResourceMetadata, OAuthError> {
        match self.discover_resource(from_challenge).await {
            Err(OAuthError::NoResourceMetadata { .. }) => {
                tracing::debug!("no protected resource metadata: using the server's origin as authorization server");
                Ok(ResourceMetadata {
                    resource: self.server_url.to_string(),
                    authorization_servers: vec![origin(&self.server_url)],
                    scopes_supported: None,
                    legacy: true,
                })
            }
            other => other,
        }
    }

    /// The authorization server's metadata; for a server of the 2025-03-26 revision without
    /// any, its default endpoints (`/authorize`, `/token`, `/register` at the origin).
    pub(super) async fn discover_server_or_legacy(
        &self,
        issuer: &str,
        legacy: bool,
    ) -> Result<ServerMetadata, OAuthError> {
        match self.discover_server(issuer).await {
            Err(OAuthError::NoAuthorizationServerMetadata { .. }) if legacy => {
                tracing::debug!(issuer, "no authorization server metadata: using the default endpoints");
                let base = issuer.trim_end_matches('/');
                Ok(ServerMetadata {
                    issuer: issuer.to_owned(),
                    authorization_endpoint: Some(format!("{base}/authorize")),
                    pkce_s256: true,
                    token_endpoint: format!("{base}/token"),
                    registration_endpoint: Some(format!("{base}/register")),
                    scopes_supported: None,
                    token_endpoint_auth_methods: None,
                    iss_parameter_supported: false,
                    client_id_metadata_document_supported: false,
                })
            }
            other => other,
        }
    }

    /// Finds the protected resource metadata and checks that it covers the server's URL.
    async fn discover_resource(&self, from_challenge: Option<&str>) -> Result<ResourceMetadata, OAuthError> {
        let mut candidates = Vec::new();
        if let Some(url) = from_challenge {
            candidates.push(url.to_owned());
        }
        let origin = origin(&self.server_url);
        let path = self.server_url.path().trim_end_matches('/');
        if !path.is_empty() {
            candidates.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
        }
        candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
        let mut last_error = None;
        for url in candidates {
            match self.get_json(&url).await {
                Ok(Some(document)) => {
                    let metadata = parse_resource_metadata(&url, &document)?;
                    if !covers(&metadata.resource, &self.server_url) {
                        return Err(OAuthError::ResourceMismatch {
                            server: self.server_url.to_string(),
                            found: metadata.resource,
                        });
                    }
                    tracing::debug!(%url, resource = %metadata.resource, "found the protected resource metadata");
                    return Ok(metadata);
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or(OAuthError::NoResourceMetadata { server: self.server_url.to_string() }))
    }

    /// Finds the authorization server's metadata (RFC 8414, then OpenID Connect Discovery,
    /// with path insertion) and checks its issuer.
    pub(super) async fn discover_server(&self, issuer: &str) -> Result<ServerMetadata, OAuthError> {
        let parsed = self.policy.check(issuer)?;
        let origin = origin(&parsed);
        let path = parsed.path().trim_end_matches('/');
        let candidates = if path.is_empty() {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server"),
                format!("{origin}/.well-known/openid-configuration"),
            ]
        } else {
            vec![
                format!("{origin}/.well-known/oauth-authorization-server{path}"),
                format!("{origin}/.well-known/openid-configuration{path}"),
                format!("{origin}{path}/.well-known/openid-configuration"),
            ]
        };
        let mut last_error = None;
        for url in candidates {
            match self.get_json(&url).await {
                Ok(Some(document)) => {
                    let metadata = parse_server_metadata(&url, &document)?;
                    if metadata.issuer != issuer {
                        return Err(OAuthError::MetadataIssuerMismatch {
                            expected: issuer.to_owned(),
                            found: metadata.issuer,
                        });
                    }
                    tracing::debug!(%url, issuer, "found the authorization server metadata");
                    return Ok(metadata);
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or(OAuthError::NoAuthorizationServerMetadata { issuer: issuer.to_owned() }))
    }

    /// GETs a JSON document: `None` when the server has none there (an HTTP error status, or
    /// a redirect, which is not followed).
    async fn get_json(&self, url: &str) -> Result<Option<Value>, OAuthError> {
        let parsed = self.policy.check(url)?;
        let request = self.http.get(parsed.clone()).header(ACCEPT, "application/json").timeout(REQUEST_TIMEOUT);
        let response = request.send().await.map_err(|e| http_error(url, &e))?;
        if response.status().is_redirection() || *response.url() != parsed {
            tracing::debug!(%url, status = %response.status(), "a redirect at a metadata location: not followed");
            return Ok(None);
        }
        if !response.status().is_success() {
            tracing::debug!(%url, status = %response.status(), "no metadata here");
            return Ok(None);
        }
        let body = read_limited(url, response).await?;
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| OAuthError::MalformedMetadata { url: url.to_owned(), reason: format!("not JSON: {e}") })
    }
}
