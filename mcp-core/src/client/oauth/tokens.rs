//! The tokens of one connection: the [`OAuthLogin`] and what its flow knows, the access
//! token requests carry (`Bearer`, or bound with DPoP: a proof and the server's nonce), and
//! the token store they are loaded from and saved to.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::SystemTime;

use reqwest::Url;
use reqwest::header::AUTHORIZATION;

use super::client_auth::Registration;
use super::config::DpopSetting;
use super::metadata::{ResourceMetadata, ServerMetadata};
use super::policy::UrlPolicy;
use super::{OAuth, OAuthError, SigningKey, StoredTokens};

/// The header that carries a DPoP proof, and the one that carries a server's nonce.
pub(super) const DPOP: &str = "dpop";
const DPOP_NONCE: &str = "dpop-nonce";

/// The `DPoP-Nonce` a response carries, if it is a plausible one.
pub(super) fn dpop_nonce(headers: &reqwest::header::HeaderMap) -> Option<&str> {
    headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()).filter(|n| !n.is_empty() && n.len() <= 1024)
}

/// What the flow knows, kept between authorizations.
#[derive(Default)]
pub(super) struct FlowState {
    pub(super) loaded: bool,
    pub(super) resource: Option<ResourceMetadata>,
    pub(super) server: Option<ServerMetadata>,
    /// Dynamic registrations, by issuer.
    pub(super) registrations: HashMap<String, Registration>,
    pub(super) tokens: Option<StoredTokens>,
    /// The authorization server's last DPoP nonce.
    pub(super) as_nonce: Option<String>,
}

/// The access token requests carry now.
#[derive(Clone)]
pub(super) struct Current {
    pub(super) token: String,
    pub(super) expires_at: Option<SystemTime>,
    /// Sent with the `DPoP` scheme and a proof.
    pub(super) dpop: bool,
}

/// One connection's login at an authorization server: its configuration, the tokens it holds, and the flow that gets and renews them (not a session of MCP).
pub(crate) struct OAuthLogin {
    pub(super) config: OAuth,
    pub(super) http: reqwest::Client,
    pub(super) server_url: Url,
    /// The access token requests carry, and when it expires.
    pub(super) current: RwLock<Option<Current>>,
    pub(super) state: tokio::sync::Mutex<FlowState>,
    /// The DPoP key (or why there is none although one was asked for).
    pub(super) dpop: Option<Result<SigningKey, OAuthError>>,
    /// The MCP server's last DPoP nonce.
    rs_nonce: RwLock<Option<String>>,
    /// Where the flow may send requests.
    pub(super) policy: UrlPolicy,
}

impl std::fmt::Debug for OAuthLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthLogin").field("server_url", &self.server_url.as_str()).finish_non_exhaustive()
    }
}

impl OAuthLogin {
    pub(crate) fn new(config: OAuth, http: reqwest::Client, server_url: Url) -> Self {
        let http = config.http.clone().unwrap_or(http);
        let dpop = config.dpop.as_ref().map(|setting| match setting {
            DpopSetting::Generate => SigningKey::generate(),
            DpopSetting::Key(key) => Ok(key.clone()),
        });
        let policy = UrlPolicy::new(&server_url, config.allow_private);
        OAuthLogin {
            config,
            http,
            policy,
            server_url,
            current: RwLock::default(),
            state: tokio::sync::Mutex::default(),
            dpop,
            rs_nonce: RwLock::default(),
        }
    }

    /// The DPoP key, when the configuration asks for one.
    pub(super) fn dpop_key(&self) -> Result<Option<&SigningKey>, OAuthError> {
        match &self.dpop {
            None => Ok(None),
            Some(Ok(key)) => Ok(Some(key)),
            Some(Err(e)) => Err(e.clone()),
        }
    }

    /// Adds the authorization of a `method` request to the MCP server carrying `token`:
    /// `Authorization: Bearer`, or for a DPoP-bound token `Authorization: DPoP` and a fresh
    /// proof (with the server's last nonce).
    pub(crate) fn authorize_request(
        &self,
        request: reqwest::RequestBuilder,
        token: &str,
        method: &str,
    ) -> reqwest::RequestBuilder {
        let bound = self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.dpop && c.token == token));
        let key = self.dpop.as_ref().and_then(|k| k.as_ref().ok());
        match (bound, key) {
            (Some(true), Some(key)) => {
                let nonce = self.rs_nonce.read().ok().and_then(|n| n.clone());
                let request = request.header(AUTHORIZATION, format!("DPoP {token}"));
                match key.dpop_proof(method, &self.server_url, nonce.as_deref(), Some(token)) {
                    Ok(proof) => request.header(DPOP, proof),
                    Err(e) => {
                        tracing::warn!(error = %e, "could not sign a DPoP proof");
                        request
                    }
                }
            }
            _ => request.bearer_auth(token),
        }
    }

    /// Remembers the `DPoP-Nonce` a response of the MCP server carries; true when it is new.
    pub(crate) fn observe_nonce(&self, headers: &reqwest::header::HeaderMap) -> bool {
        let Some(nonce) = dpop_nonce(headers) else { return false };
        if self.dpop.is_none() {
            return false;
        }
        let Ok(mut current) = self.rs_nonce.write() else { return false };
        if current.as_deref() == Some(nonce) {
            return false;
        }
        *current = Some(nonce.to_owned());
        true
    }

    /// Whether a flow (discovery, the person's authorization, a token request) is under way.
    pub(crate) fn authorizing(&self) -> bool {
        self.state.try_lock().is_err()
    }

    /// The access token held now, without waiting (for GET streams and `DELETE`).
    pub(crate) fn current(&self) -> Option<String> {
        self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.token.clone()))
    }

    /// Whether the token changed since a request was sent with `used` (another request
    /// already authorized): then that request is simply retried.
    pub(super) fn replaced_since(&self, used: Option<&str>) -> bool {
        let current = self.current.read().ok().and_then(|c| c.as_ref().map(|c| c.token.clone()));
        current.is_some() && current.as_deref() != used
    }

    pub(super) fn set_current(&self, tokens: Option<&StoredTokens>) {
        if let Ok(mut current) = self.current.write() {
            *current =
                tokens.map(|t| Current { token: t.access_token.clone(), expires_at: t.expires_at, dpop: t.dpop_bound });
        }
    }

    /// Loads what the store kept for this server, once.
    pub(super) async fn load(&self, state: &mut FlowState) {
        if state.loaded {
            return;
        }
        state.loaded = true;
        match self.config.store.load(self.server_url.as_str()).await {
            Ok(Some(tokens)) => {
                self.set_current(Some(&tokens));
                state.tokens = Some(tokens);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "the token store failed to load"),
        }
    }

    pub(super) async fn save(&self, state: &mut FlowState, tokens: StoredTokens) {
        self.set_current(Some(&tokens));
        if let Err(e) = self.config.store.save(self.server_url.as_str(), tokens.clone()).await {
            tracing::warn!(error = %e, "the token store failed to save");
        }
        state.tokens = Some(tokens);
    }
}
