//! The resource-server side of OAuth on the Streamable HTTP endpoint: protected resource
//! metadata (RFC 9728), bearer tokens (RFC 6750) and their challenges.

// An error here is the response to a rejected request, built once per rejection.
#![allow(clippy::result_large_err)]

use std::sync::{Arc, OnceLock};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::auth::{AuthInfo, Authorization, TokenError};

/// The path of the protected resource metadata, before the resource's own path.
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The longest `Authorization` header looked at; a longer one is refused unread.
const MAX_AUTHORIZATION: usize = 8 * 1024 + 16;

/// An endpoint's authorization: the setting, and the resource identifier once known.
pub(crate) struct Guard {
    pub(crate) settings: Authorization,
    resource: OnceLock<String>,
}

impl Guard {
    pub(crate) fn new(settings: Authorization) -> Self {
        let resource = OnceLock::new();
        if let Some(r) = &settings.resource {
            let _ = resource.set(r.clone());
        }
        Guard { settings, resource }
    }

    /// Sets the resource identifier from the address served, unless one was configured.
    pub(crate) fn default_resource(&self, scheme: &str, addr: std::net::SocketAddr) {
        if self.resource.get().is_none() {
            if addr.ip().is_unspecified() {
                tracing::warn!(
                    %addr,
                    "serving a protected endpoint on an unspecified address without `Authorization::resource`: \
                     tokens must then name {scheme}://{addr}/mcp as their audience"
                );
            }
            let _ = self.resource.set(format!("{scheme}://{addr}/mcp"));
        }
    }

    fn resource(&self) -> Result<&str, Response> {
        self.resource.get().map(String::as_str).ok_or_else(|| {
            tracing::error!("a protected endpoint has no resource identifier: set `Authorization::resource`");
            oauth_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "the server's authorization is not configured",
            )
        })
    }

    /// The URL of the resource's metadata document (RFC 9728 §3.1: the well-known path is
    /// inserted between the host and the resource's path).
    fn metadata_url(&self, resource: &str) -> String {
        let (origin, path) = split_origin(resource);
        format!("{origin}{METADATA_PATH}{}", path.trim_end_matches('/'))
    }

    /// Whether `path` is one this endpoint serves the metadata at.
    pub(crate) fn is_metadata_path(path: &str) -> bool {
        path == METADATA_PATH || path.strip_prefix(METADATA_PATH).is_some_and(|rest| rest.starts_with('/'))
    }

    /// The protected resource metadata document.
    pub(crate) fn metadata(&self) -> Response {
        let resource = match self.resource() {
            Ok(r) => r,
            Err(r) => return r,
        };
        let s = &self.settings;
        let mut doc = serde_json::Map::new();
        doc.insert("resource".into(), resource.into());
        doc.insert("authorization_servers".into(), s.authorization_servers.clone().into());
        if !s.scopes_supported.is_empty() {
            doc.insert("scopes_supported".into(), s.scopes_supported.clone().into());
        }
        doc.insert("bearer_methods_supported".into(), vec!["header"].into());
        if let Some(name) = &s.resource_name {
            doc.insert("resource_name".into(), name.clone().into());
        }
        let body = serde_json::Value::Object(doc).to_string();
        (StatusCode::OK, [(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "max-age=3600")], body)
            .into_response()
    }

    /// Checks the request's access token (a bearer token, or with DPoP a bound token and its
    /// proof for `method` on `path`): the identity it carries, or the 401 (or 503) that
    /// answers the request. The reason a token failed is logged, never sent.
    pub(crate) async fn authenticate(
        &self,
        method: &str,
        path: &str,
        headers: &HeaderMap,
    ) -> Result<Arc<AuthInfo>, Response> {
        let resource = self.resource()?;
        let challenge_scope = self.challenge_scope(&self.settings.initial_scopes);
        let Some(raw) = headers.get(header::AUTHORIZATION) else {
            return Err(self.unauthorized(resource, None, challenge_scope.as_deref(), false));
        };
        let presented = if raw.len() > MAX_AUTHORIZATION {
            None
        } else {
            raw.to_str().ok().and_then(|v| {
                let (scheme, token) = v.split_once(' ')?;
                let token = token.trim();
                let dpop = scheme.eq_ignore_ascii_case("dpop") && self.dpop_enabled();
                ((scheme.eq_ignore_ascii_case("bearer") || dpop) && !token.is_empty() && !token.contains(' '))
                    .then_some((token, dpop))
            })
        };
        let Some((token, dpop)) = presented else {
            tracing::debug!("refused a request: malformed or oversized Authorization header");
            let invalid = Some(("invalid_request", "The Authorization header must be `Bearer <token>`"));
            return Err(self.unauthorized(resource, invalid, challenge_scope.as_deref(), false));
        };
        #[cfg(feature = "auth")]
        if let Some(settings) = &self.settings.dpop
            && (dpop || settings.require)
        {
            let scope = challenge_scope.as_deref();
            return self.authenticate_dpop(settings, (method, path), headers, token, dpop, resource, scope).await;
        }
        let _ = (method, path, dpop);
        match self.verify(token, resource, challenge_scope.as_deref(), false).await {
            Ok(info) if crate::auth::is_bound(&info) => {
                // RFC 9449 section 7.2: a bound token is no bearer token, and without DPoP
                // this server cannot check the proof of possession that would make it good.
                tracing::debug!("refused a DPoP-bound access token sent as a bearer token");
                let description = if self.dpop_enabled() {
                    "The access token is bound to a key: use the DPoP scheme"
                } else {
                    "The access token is bound to a key, and this server does not accept DPoP"
                };
                Err(self.unauthorized(
                    resource,
                    Some(("invalid_token", description)),
                    challenge_scope.as_deref(),
                    false,
                ))
            }
            Ok(info) => Ok(Arc::new(info)),
            Err(refused) => Err(refused),
        }
    }

    /// Verifies `token`: the identity it carries, or the 401 (its challenge's error on the
    /// `DPoP` one when `dpop_error`) or 503 that refuses it.
    async fn verify(
        &self,
        token: &str,
        resource: &str,
        scope: Option<&str>,
        dpop_error: bool,
    ) -> Result<AuthInfo, Response> {
        match self.settings.verifier.verify(token, resource).await {
            Ok(info) => Ok(info),
            Err(TokenError::Invalid(reason)) => {
                tracing::debug!(%reason, "refused an access token");
                let invalid = Some(("invalid_token", "The access token is invalid"));
                Err(self.unauthorized(resource, invalid, scope, dpop_error))
            }
            Err(TokenError::Unavailable(reason)) => {
                tracing::warn!(%reason, "could not verify an access token");
                Err(unavailable("The access token cannot be verified now"))
            }
        }
    }

    fn dpop_enabled(&self) -> bool {
        #[cfg(feature = "auth")]
        return self.settings.dpop.is_some();
        #[cfg(not(feature = "auth"))]
        false
    }

    /// Checks a request under DPoP: its token must be bound and presented with the `DPoP`
    /// scheme and one valid proof.
    #[cfg(feature = "auth")]
    #[allow(clippy::too_many_arguments)]
    async fn authenticate_dpop(
        &self,
        settings: &crate::auth::Dpop,
        (method, path): (&str, &str),
        headers: &HeaderMap,
        token: &str,
        dpop_scheme: bool,
        resource: &str,
        scope: Option<&str>,
    ) -> Result<Arc<AuthInfo>, Response> {
        use crate::auth::DpopRefusal;
        let refuse =
            |code: &str, description: &str| self.unauthorized(resource, Some((code, description)), scope, true);
        if !dpop_scheme {
            tracing::debug!("refused a bearer token: this server requires DPoP-bound tokens");
            return Err(refuse("invalid_token", "This server requires a DPoP-bound access token"));
        }
        let mut proofs = headers.get_all("dpop").iter();
        let (Some(proof), None) = (proofs.next(), proofs.next()) else {
            tracing::debug!("refused a DPoP request without exactly one proof");
            return Err(refuse("invalid_dpop_proof", "The request must carry exactly one DPoP proof"));
        };
        let Ok(proof) = proof.to_str() else {
            return Err(refuse("invalid_dpop_proof", "The DPoP proof is invalid"));
        };
        let info = self.verify(token, resource, scope, true).await?;
        let (origin, _) = split_origin(resource);
        let url = format!("{origin}{path}");
        match settings.check(proof, method, &url, token, &info).await {
            Ok(()) => Ok(Arc::new(info)),
            Err(DpopRefusal::Proof(reason)) => {
                tracing::debug!(%reason, "refused a DPoP proof");
                Err(refuse("invalid_dpop_proof", "The DPoP proof is invalid"))
            }
            Err(DpopRefusal::Binding(reason)) => {
                tracing::debug!(%reason, "refused a DPoP request");
                Err(refuse("invalid_token", "The access token is not bound to the proof's key"))
            }
            Err(DpopRefusal::Nonce(nonce)) => {
                let mut r = refuse("use_dpop_nonce", "Resend the request with the DPoP nonce");
                if let Ok(v) = HeaderValue::from_str(&nonce) {
                    r.headers_mut().insert("dpop-nonce", v);
                }
                Err(r)
            }
            Err(DpopRefusal::Unavailable(reason)) => {
                tracing::warn!(%reason, "could not check a DPoP proof for replay");
                Err(unavailable("The DPoP proof cannot be checked now"))
            }
        }
    }

    /// The `WWW-Authenticate` value of a 401: a `Bearer` challenge unless DPoP is required,
    /// and a `DPoP` one with the accepted `algs` when DPoP is on; `error` goes to the DPoP
    /// challenge when `dpop_error`, else to the Bearer one.
    fn challenge(&self, resource: &str, error: Option<(&str, &str)>, scope: Option<&str>, dpop_error: bool) -> String {
        let metadata = self.metadata_url(resource);
        let params = |with_error: bool| {
            let mut p = format!("resource_metadata=\"{metadata}\"");
            if let Some(scope) = scope {
                p.push_str(&format!(", scope=\"{scope}\""));
            }
            if let (true, Some((code, description))) = (with_error, error) {
                p.push_str(&format!(", error=\"{code}\", error_description=\"{description}\""));
            }
            p
        };
        #[cfg(feature = "auth")]
        if let Some(dpop) = &self.settings.dpop {
            let dpop_challenge = format!("DPoP algs=\"{}\", {}", dpop.algs(), params(dpop_error));
            if dpop.require {
                return dpop_challenge;
            }
            return format!("Bearer {}, {dpop_challenge}", params(!dpop_error));
        }
        let _ = dpop_error;
        format!("Bearer {}", params(true))
    }

    /// The `scope` of a challenge: the scopes every request needs, and `extra`.
    fn challenge_scope(&self, extra: &[String]) -> Option<String> {
        let mut scopes: Vec<&str> = self.settings.required_scopes.iter().map(String::as_str).collect();
        for s in extra {
            if !scopes.contains(&s.as_str()) {
                scopes.push(s);
            }
        }
        (!scopes.is_empty()).then(|| scopes.join(" "))
    }

    /// 401 with a `Bearer` (and with DPoP on, a `DPoP`) challenge naming the metadata; `error`
    /// goes on the `DPoP` one when `dpop_error`.
    fn unauthorized(
        &self,
        resource: &str,
        error: Option<(&str, &str)>,
        scope: Option<&str>,
        dpop_error: bool,
    ) -> Response {
        let challenge = self.challenge(resource, error, scope, dpop_error);
        let (code, description) = error.unwrap_or(("invalid_token", "Authorization required"));
        let mut r = oauth_error(StatusCode::UNAUTHORIZED, code, description);
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        r
    }

    /// The 403 `insufficient_scope` answer to a request of `auth` that needs `needed` and
    /// lacks `missing` of them: its `scope` lists what the token has and what it lacks, so that
    /// a client that asks for exactly that keeps what it could already do.
    pub(crate) fn insufficient_scope(&self, auth: &AuthInfo, needed: &[String], missing: &[String]) -> Response {
        let resource = match self.resource() {
            Ok(resource) => resource,
            Err(response) => return response,
        };
        let mut scopes: Vec<String> = auth.scopes().map(str::to_owned).collect();
        for s in needed {
            if !scopes.contains(s) {
                scopes.push(s.clone());
            }
        }
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"{}\"",
            scopes.join(" "),
            self.metadata_url(resource),
            "The access token lacks a scope this request needs",
        );
        let mut r = oauth_error(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            &format!("this request needs the scope(s): {}", missing.join(" ")),
        );
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        r
    }
}

/// An OAuth error body (RFC 6750 §3): no JSON-RPC, nothing beyond `error` and its description.
/// 503 `temporarily_unavailable`, to retry in a few seconds.
fn unavailable(description: &str) -> Response {
    let mut r = oauth_error(StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable", description);
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

fn oauth_error(status: StatusCode, code: &str, description: &str) -> Response {
    let body = serde_json::json!({"error": code, "error_description": description}).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `scheme://authority` and the path of a URL.
fn split_origin(url: &str) -> (&str, &str) {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].find('/') {
        Some(slash) => url.split_at(start + slash),
        None => (url, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_insert_the_well_known_path() {
        struct Never;
        impl crate::auth::TokenVerifier for Never {
            fn verify<'a>(
                &'a self,
                _: &'a str,
                _: &'a str,
            ) -> crate::engine::BoxFuture<'a, Result<AuthInfo, TokenError>> {
                Box::pin(async { Err(TokenError::Invalid("never".into())) })
            }
        }
        let g = Guard::new(Authorization::new(Never));
        assert_eq!(
            g.metadata_url("http://127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(g.metadata_url("https://a.example"), "https://a.example/.well-known/oauth-protected-resource");
        assert!(Guard::is_metadata_path("/.well-known/oauth-protected-resource"));
        assert!(Guard::is_metadata_path("/.well-known/oauth-protected-resource/mcp"));
        assert!(!Guard::is_metadata_path("/.well-known/oauth-protected-resourcex"));
    }
}
