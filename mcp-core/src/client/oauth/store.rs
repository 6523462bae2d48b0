//! Where tokens are kept between requests (and, with a store of the application's, between runs).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::SystemTime;

use crate::engine::BoxFuture;

/// What the flow obtained for one protected server: its tokens, and the client registration
/// and authorization server they belong to (a refresh goes to that server, as that client).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredTokens {
    /// The access token sent in `Authorization`.
    pub access_token: String,
    /// The refresh token, if the authorization server issued one.
    pub refresh_token: Option<String>,
    /// When the access token expires, if the server said (`expires_in`).
    pub expires_at: Option<SystemTime>,
    /// The scopes asked for (space-separated), for step-up to add to.
    pub scope: Option<String>,
    /// The authorization server (issuer) that issued the tokens.
    pub issuer: String,
    /// The client id the tokens were issued to.
    pub client_id: String,
    /// The client secret, for a confidential client.
    pub client_secret: Option<String>,
    /// Whether the access token is bound to the client's DPoP key (`token_type` `DPoP`): it
    /// is sent with the `DPoP` scheme and a proof.
    pub dpop_bound: bool,
}

impl StoredTokens {
    /// Tokens as the flow obtains them (for stores that rebuild what they saved).
    pub fn new(access_token: impl Into<String>, issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        StoredTokens {
            access_token: access_token.into(),
            refresh_token: None,
            expires_at: None,
            scope: None,
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret: None,
            dpop_bound: false,
        }
    }
}

impl fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredTokens")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Keeps the tokens of each protected server, by the server's resource identifier.
///
/// The default, [`MemoryTokenStore`], forgets them when the process ends; an application that
/// wants its users to stay signed in implements this over its own (secure) storage.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens kept for `resource`, if any.
    fn load(&self, resource: &str) -> BoxFuture<'_, Result<Option<StoredTokens>, String>>;
    /// Keeps `tokens` for `resource`, replacing what was there.
    fn save(&self, resource: &str, tokens: StoredTokens) -> BoxFuture<'_, Result<(), String>>;
    /// Forgets the tokens of `resource` (they were refused and could not be refreshed).
    fn clear(&self, resource: &str) -> BoxFuture<'_, Result<(), String>>;
}

/// A shared store: several clients (or the application and a client) use the same tokens.
impl<T: TokenStore + ?Sized> TokenStore for std::sync::Arc<T> {
    fn load(&self, resource: &str) -> BoxFuture<'_, Result<Option<StoredTokens>, String>> {
        (**self).load(resource)
    }

    fn save(&self, resource: &str, tokens: StoredTokens) -> BoxFuture<'_, Result<(), String>> {
        (**self).save(resource, tokens)
    }

    fn clear(&self, resource: &str) -> BoxFuture<'_, Result<(), String>> {
        (**self).clear(resource)
    }
}

/// A [`TokenStore`] in memory: tokens live as long as the process.
#[derive(Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, StoredTokens>>,
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.tokens.lock().map(|t| t.len()).unwrap_or(0);
        f.debug_struct("MemoryTokenStore").field("resources", &count).finish()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, resource: &str) -> BoxFuture<'_, Result<Option<StoredTokens>, String>> {
        let found = self.tokens.lock().map(|t| t.get(resource).cloned()).map_err(|e| e.to_string());
        Box::pin(async move { found })
    }

    fn save(&self, resource: &str, tokens: StoredTokens) -> BoxFuture<'_, Result<(), String>> {
        let saved =
            self.tokens.lock().map(|mut t| drop(t.insert(resource.to_owned(), tokens))).map_err(|e| e.to_string());
        Box::pin(async move { saved })
    }

    fn clear(&self, resource: &str) -> BoxFuture<'_, Result<(), String>> {
        let cleared = self.tokens.lock().map(|mut t| drop(t.remove(resource))).map_err(|e| e.to_string());
        Box::pin(async move { cleared })
    }
}
