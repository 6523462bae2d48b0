//! What the protected resource metadata (RFC 9728) and the authorization server metadata
//! (RFC 8414) say, read from their documents, and whether a resource covers the server's URL.

use reqwest::Url;
use serde_json::Value;

use super::OAuthError;

/// What the protected resource metadata (RFC 9728) says.
#[derive(Debug, Clone)]
pub(super) struct ResourceMetadata {
    /// `resource`, exactly as published (sent back as the `resource` parameter).
    pub(super) resource: String,
    pub(super) authorization_servers: Vec<String>,
    pub(super) scopes_supported: Option<Vec<String>>,
    /// No metadata was published (a 2025-03-26 server): the authorization server is at the
    /// server's origin.
    pub(super) legacy: bool,
}

/// What the authorization server metadata (RFC 8414) says, as far as the flow needs it.
#[derive(Debug, Clone)]
pub(super) struct ServerMetadata {
    pub(super) issuer: String,
    /// Absent for servers that only serve grants without a person (client credentials…).
    pub(super) authorization_endpoint: Option<String>,
    /// Whether it supports PKCE with `S256` (the authorization code flow requires it).
    pub(super) pkce_s256: bool,
    pub(super) token_endpoint: String,
    pub(super) registration_endpoint: Option<String>,
    pub(super) scopes_supported: Option<Vec<String>>,
    pub(super) token_endpoint_auth_methods: Option<Vec<String>>,
    pub(super) iss_parameter_supported: bool,
    pub(super) client_id_metadata_document_supported: bool,
}

/// An authorization server at `http://as.test`, for the tests of the flow.
#[cfg(test)]
pub(super) fn test_server(iss_supported: bool) -> ServerMetadata {
    ServerMetadata {
        issuer: "http://as.test".into(),
        authorization_endpoint: Some("http://as.test/authorize".into()),
        pkce_s256: true,
        token_endpoint: "http://as.test/token".into(),
        registration_endpoint: None,
        scopes_supported: None,
        token_endpoint_auth_methods: None,
        iss_parameter_supported: iss_supported,
        client_id_metadata_document_supported: false,
    }
}

pub(super) fn parse_resource_metadata(url: &str, document: &Value) -> Result<ResourceMetadata, OAuthError> {
    let malformed = |reason: &str| OAuthError::MalformedMetadata { url: url.to_owned(), reason: reason.to_owned() };
    let resource = document.get("resource").and_then(Value::as_str).ok_or_else(|| malformed("no `resource`"))?;
    let authorization_servers = match document.get("authorization_servers") {
        None => Vec::new(),
        Some(Value::Array(servers)) => servers
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| malformed("`authorization_servers` holds something other than strings"))?,
        Some(_) => return Err(malformed("`authorization_servers` is not an array")),
    };
    Ok(ResourceMetadata {
        resource: resource.to_owned(),
        authorization_servers,
        scopes_supported: strings(document.get("scopes_supported")),
        legacy: false,
    })
}

pub(super) fn parse_server_metadata(url: &str, document: &Value) -> Result<ServerMetadata, OAuthError> {
    let malformed = |reason: &str| OAuthError::MalformedMetadata { url: url.to_owned(), reason: reason.to_owned() };
    let text = |name: &str| document.get(name).and_then(Value::as_str).map(str::to_owned);
    Ok(ServerMetadata {
        issuer: text("issuer").ok_or_else(|| malformed("no `issuer`"))?,
        authorization_endpoint: text("authorization_endpoint"),
        pkce_s256: document
            .get("code_challenge_methods_supported")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|m| m == "S256")),
        token_endpoint: text("token_endpoint").ok_or_else(|| malformed("no `token_endpoint`"))?,
        registration_endpoint: text("registration_endpoint"),
        scopes_supported: strings(document.get("scopes_supported")),
        token_endpoint_auth_methods: strings(document.get("token_endpoint_auth_methods_supported")),
        iss_parameter_supported: document.get("authorization_response_iss_parameter_supported")
            == Some(&Value::Bool(true)),
        client_id_metadata_document_supported: document.get("client_id_metadata_document_supported")
            == Some(&Value::Bool(true)),
    })
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value?.as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
}

/// `scheme://host[:port]`.
pub(super) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Whether the resource identifier `resource` covers the server at `server`: same origin,
/// and the server's path is the resource's or below it.
pub(super) fn covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else { return false };
    if resource.origin() != server.origin() {
        return false;
    }
    let base = resource.path().trim_end_matches('/');
    let path = server.path();
    path == base || path.starts_with(&format!("{base}/")) || base.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_must_cover_the_server() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(covers("http://localhost:3000/mcp", &server));
        assert!(covers("http://localhost:3000", &server));
        assert!(covers("http://localhost:3000/", &server));
        assert!(!covers("https://evil.example.com/mcp", &server));
        assert!(!covers("http://localhost:3000/mc", &server));
        assert!(!covers("http://localhost:3000/mcp/other", &server));
        assert!(!covers("http://localhost:3001/mcp", &server));
        assert!(!covers("::", &server));
    }

    #[test]
    fn metadata_parsing_refuses_malformed_documents() {
        let url = "http://x/.well-known/oauth-protected-resource";
        assert!(parse_resource_metadata(url, &serde_json::json!({"authorization_servers": []})).is_err());
        assert!(
            parse_resource_metadata(url, &serde_json::json!({"resource": "r", "authorization_servers": "x"})).is_err()
        );
        assert!(
            parse_resource_metadata(url, &serde_json::json!({"resource": "r", "authorization_servers": [1]})).is_err()
        );
        let ok =
            parse_resource_metadata(url, &serde_json::json!({"resource": "r", "scopes_supported": ["a"]})).unwrap();
        assert_eq!(ok.scopes_supported, Some(vec!["a".to_owned()]));
        assert!(parse_server_metadata(url, &serde_json::json!({"issuer": "i"})).is_err());
        assert!(parse_server_metadata(url, &serde_json::json!([])).is_err());
    }
}
