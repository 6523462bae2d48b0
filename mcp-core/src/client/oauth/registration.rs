//! How the client identifies itself to an authorization server, in the specification's order
//! of preference: pre-registered credentials, a client ID metadata document, dynamic client
//! registration (RFC 7591).

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use super::OAuthError;
use super::client_auth::{AuthMethod, Registration};
use super::config::Grant;
use super::fetch::{REQUEST_TIMEOUT, http_error, read_limited};
use super::metadata::ServerMetadata;
use super::tokens::{FlowState, OAuthLogin};

impl OAuthLogin {
    /// How the client identifies itself to `server`, in the specification's order of
    /// preference: pre-registered, client ID metadata document, dynamic registration. Grants
    /// without a person use the configured credentials (or none, for workload identity).
    pub(super) async fn registration(
        &self,
        state: &mut FlowState,
        server: &ServerMetadata,
    ) -> Result<Registration, OAuthError> {
        let key = self.config.client_key.clone();
        if let Some(credentials) = &self.config.credentials
            && credentials.issuer.as_ref().is_none_or(|i| *i == server.issuer)
        {
            let method = if key.is_some() {
                AuthMethod::PrivateKeyJwt
            } else {
                AuthMethod::for_client(
                    credentials.client_secret.is_some(),
                    server.token_endpoint_auth_methods.as_deref(),
                )
            };
            return Ok(Registration {
                client_id: credentials.client_id.clone(),
                client_secret: credentials.client_secret.clone(),
                method,
                key,
            });
        }
        match &self.config.grant {
            Grant::AuthorizationCode(_) => {}
            Grant::WorkloadIdentity(_) => {
                // The platform token identifies the workload; no client authentication.
                return Ok(Registration {
                    client_id: String::new(),
                    client_secret: None,
                    method: AuthMethod::None,
                    key: None,
                });
            }
            Grant::ClientCredentials | Grant::Enterprise(_) => {
                return Err(OAuthError::NoRegistration { issuer: server.issuer.clone() });
            }
        }
        if let (true, Some(url)) = (server.client_id_metadata_document_supported, &self.config.metadata_url) {
            return Ok(Registration {
                client_id: url.clone(),
                client_secret: None,
                method: AuthMethod::None,
                key: None,
            });
        }
        if let Some(known) = state.registrations.get(&server.issuer) {
            return Ok(known.clone());
        }
        if let Some(tokens) = state.tokens.as_ref().filter(|t| t.issuer == server.issuer) {
            let method =
                AuthMethod::for_client(tokens.client_secret.is_some(), server.token_endpoint_auth_methods.as_deref());
            return Ok(Registration {
                client_id: tokens.client_id.clone(),
                client_secret: tokens.client_secret.clone(),
                method,
                key: None,
            });
        }
        let Some(endpoint) = &server.registration_endpoint else {
            return Err(OAuthError::NoRegistration { issuer: server.issuer.clone() });
        };
        let registration = self.register(endpoint, server).await?;
        state.registrations.insert(server.issuer.clone(), registration.clone());
        Ok(registration)
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(&self, endpoint: &str, server: &ServerMetadata) -> Result<Registration, OAuthError> {
        let Grant::AuthorizationCode(authorizer) = &self.config.grant else {
            return Err(OAuthError::NoRegistration { issuer: server.issuer.clone() });
        };
        let supported = server.token_endpoint_auth_methods.as_deref();
        let wanted = match supported {
            None => AuthMethod::None,
            Some(s) if s.iter().any(|m| m == "none") => AuthMethod::None,
            Some(s) if s.iter().any(|m| m == "client_secret_basic") => AuthMethod::Basic,
            Some(s) if s.iter().any(|m| m == "client_secret_post") => AuthMethod::Post,
            Some(_) => AuthMethod::None,
        };
        let body = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [authorizer.redirect_uri()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted.name(),
            "application_type": "native",
        });
        let url = self.policy.check(endpoint)?;
        let response = self
            .http
            .post(url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .timeout(REQUEST_TIMEOUT)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| http_error(endpoint, &e))?;
        let status = response.status();
        if status.is_redirection() || *response.url() != url {
            return Err(OAuthError::Redirected { url: endpoint.to_owned(), status: status.as_u16() });
        }
        let body = read_limited(endpoint, response).await?;
        let document: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if !status.is_success() {
            let error = document.get("error").and_then(Value::as_str).unwrap_or("refused").to_owned();
            return Err(OAuthError::Registration { status: status.as_u16(), error });
        }
        let Some(client_id) = document.get("client_id").and_then(Value::as_str).filter(|s| !s.is_empty()) else {
            return Err(OAuthError::Registration {
                status: status.as_u16(),
                error: "no client_id in the answer".into(),
            });
        };
        let client_secret = document.get("client_secret").and_then(Value::as_str).map(str::to_owned);
        let method = document
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .and_then(AuthMethod::parse)
            .filter(|m| *m != AuthMethod::PrivateKeyJwt)
            .unwrap_or_else(|| AuthMethod::for_client(client_secret.is_some(), supported));
        tracing::info!(client_id, method = method.name(), "registered with the authorization server");
        Ok(Registration { client_id: client_id.to_owned(), client_secret, method, key: None })
    }
}
