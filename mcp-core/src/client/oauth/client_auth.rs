//! How the client authenticates to an authorization server: the registration it uses (client
//! ID, secret or key) and its token endpoint authentication method.

use super::SigningKey;

/// How the client identifies itself to one authorization server.
#[derive(Debug, Clone)]
pub(super) struct Registration {
    pub(super) client_id: String,
    pub(super) client_secret: Option<String>,
    pub(super) method: AuthMethod,
    /// The key for `private_key_jwt`.
    pub(super) key: Option<SigningKey>,
}

/// Token endpoint authentication (RFC 6749 section 2.3, RFC 7591 section 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AuthMethod {
    Basic,
    Post,
    None,
    /// RFC 7523 section 2.2: a JWT signed with the client's key.
    PrivateKeyJwt,
}

impl AuthMethod {
    pub(super) fn name(self) -> &'static str {
        match self {
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
            AuthMethod::None => "none",
            AuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub(super) fn parse(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(AuthMethod::Basic),
            "client_secret_post" => Some(AuthMethod::Post),
            "none" => Some(AuthMethod::None),
            "private_key_jwt" => Some(AuthMethod::PrivateKeyJwt),
            _ => None,
        }
    }

    /// The method for a client with (or without) a secret, among those the server supports
    /// (RFC 8414: `client_secret_basic` when it does not say).
    pub(super) fn for_client(has_secret: bool, supported: Option<&[String]>) -> Self {
        if !has_secret {
            return AuthMethod::None;
        }
        let supports = |m: &str| supported.is_none_or(|s| s.iter().any(|x| x == m));
        if supports("client_secret_basic") {
            AuthMethod::Basic
        } else if supports("client_secret_post") {
            AuthMethod::Post
        } else {
            AuthMethod::Basic
        }
    }
}
