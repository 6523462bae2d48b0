//! The client's signing keys: `private_key_jwt` client assertions (RFC 7523 section 2.2) and
//! DPoP proofs (RFC 9449 section 4). Signing and key handling are `jsonwebtoken`'s and
//! RustCrypto's; this module only assembles the claims.

use std::fmt;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::OAuthError;

/// A private key the client signs with: its client assertions for `private_key_jwt`
/// ([`OAuth::private_key_jwt`](super::OAuth::private_key_jwt)) or its DPoP proofs
/// ([`OAuth::dpop_key`](super::OAuth::dpop_key)).
///
/// Read one from PEM ([`from_pem`](Self::from_pem): PKCS#8 EC P-256 or P-384, or RSA) or
/// generate a P-256 key ([`generate`](Self::generate)). Cloning shares the key.
#[derive(Clone)]
pub struct SigningKey {
    inner: Arc<KeyInner>,
}

struct KeyInner {
    key: EncodingKey,
    algorithm: Algorithm,
    /// The public half, as a JWK (no private parameters).
    public: Jwk,
    key_id: Option<String>,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.inner.algorithm)
            .field("key_id", &self.inner.key_id)
            .field("thumbprint", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A new P-256 key (ES256), from the operating system's randomness.
    pub fn generate() -> Result<Self, OAuthError> {
        use p256::pkcs8::EncodePrivateKey as _;
        // A uniformly random 32-byte string is a valid scalar except with negligible
        // probability; try again in that case.
        for _ in 0..4 {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| OAuthError::InvalidKey(format!("no randomness: {e}")))?;
            let Ok(secret) = p256::SecretKey::from_bytes(&bytes.into()) else { continue };
            let der = secret.to_pkcs8_der().map_err(|e| OAuthError::InvalidKey(e.to_string()))?;
            return Self::from_der(EncodingKey::from_ec_der(der.as_bytes()), Algorithm::ES256);
        }
        Err(OAuthError::InvalidKey("could not generate a P-256 key".into()))
    }

    /// Reads a PKCS#8 private key in PEM: EC P-256 (signs with ES256), EC P-384 (ES384) or
    /// RSA (RS256).
    pub fn from_pem(pem: &str) -> Result<Self, OAuthError> {
        let bytes = pem.as_bytes();
        if let Ok(key) = EncodingKey::from_ec_pem(bytes) {
            for algorithm in [Algorithm::ES256, Algorithm::ES384] {
                if let Ok(key) = Self::from_der(key.clone(), algorithm) {
                    return Ok(key);
                }
            }
            return Err(OAuthError::InvalidKey("an EC key on a curve other than P-256 or P-384".into()));
        }
        match EncodingKey::from_rsa_pem(bytes) {
            Ok(key) => Self::from_der(key, Algorithm::RS256),
            Err(e) => Err(OAuthError::InvalidKey(format!("not a PKCS#8 EC or RSA private key in PEM: {e}"))),
        }
    }

    fn from_der(key: EncodingKey, algorithm: Algorithm) -> Result<Self, OAuthError> {
        let mut public = Jwk::from_encoding_key(&key, algorithm).map_err(|e| OAuthError::InvalidKey(e.to_string()))?;
        // The public JWK in a DPoP header names no algorithm of its own (RFC 9449 section 4.2).
        public.common.key_algorithm = None;
        // Signing once proves that the key works with the algorithm.
        jsonwebtoken::encode(&Header::new(algorithm), &json!({}), &key)
            .map_err(|e| OAuthError::InvalidKey(e.to_string()))?;
        Ok(SigningKey { inner: Arc::new(KeyInner { key, algorithm, public, key_id: None }) })
    }

    /// The key id (`kid`) to put in client assertions, as registered with the authorization
    /// server.
    pub fn key_id(self, kid: impl Into<String>) -> Self {
        let inner = KeyInner {
            key: self.inner.key.clone(),
            algorithm: self.inner.algorithm,
            public: self.inner.public.clone(),
            key_id: Some(kid.into()),
        };
        SigningKey { inner: Arc::new(inner) }
    }

    /// The JWS algorithm the key signs with (`ES256`, `ES384`, `RS256`).
    pub fn algorithm(&self) -> &'static str {
        match self.inner.algorithm {
            Algorithm::ES384 => "ES384",
            Algorithm::RS256 => "RS256",
            _ => "ES256",
        }
    }

    /// The public key as a JWK (JSON), for registering it with an authorization server.
    pub fn public_jwk(&self) -> Value {
        serde_json::to_value(&self.inner.public).unwrap_or(Value::Null)
    }

    /// The RFC 7638 SHA-256 thumbprint of the public key (what a DPoP-bound token's
    /// `cnf.jkt` holds).
    pub fn thumbprint(&self) -> String {
        self.inner.public.thumbprint(ThumbprintHash::SHA256)
    }

    fn sign(&self, header: Header, claims: &Value) -> Result<String, OAuthError> {
        jsonwebtoken::encode(&header, claims, &self.inner.key).map_err(|e| OAuthError::InvalidKey(e.to_string()))
    }

    /// A client assertion for `private_key_jwt` (RFC 7523 section 3): issued by and about
    /// `client_id`, for the authorization server `audience`, valid for five minutes.
    pub(crate) fn client_assertion(&self, client_id: &str, audience: &str) -> Result<String, OAuthError> {
        let now = now();
        let mut header = Header::new(self.inner.algorithm);
        header.kid = self.inner.key_id.clone();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": crate::engine::random_id(),
        });
        self.sign(header, &claims)
    }

    /// A DPoP proof (RFC 9449 section 4.2) for a `method` request to `url` (its query and
    /// fragment left out), with the server's `nonce` and, for a resource request, the hash of
    /// the `access_token` it carries.
    pub(crate) fn dpop_proof(
        &self,
        method: &str,
        url: &reqwest::Url,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, OAuthError> {
        let mut htu = url.clone();
        htu.set_query(None);
        htu.set_fragment(None);
        let mut header = Header::new(self.inner.algorithm);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.inner.public.clone());
        let mut claims = json!({
            "jti": crate::engine::random_id(),
            "htm": method,
            "htu": htu.as_str(),
            "iat": now(),
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        if let Some(token) = access_token {
            claims["ath"] = json!(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
        }
        self.sign(header, &claims)
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    #[test]
    fn generated_keys_sign_proofs_their_public_jwk_verifies() {
        let key = SigningKey::generate().unwrap();
        assert_eq!(key.algorithm(), "ES256");
        assert!(key.public_jwk().get("d").is_none());
        let url = reqwest::Url::parse("https://mcp.example/mcp?x=1#f").unwrap();
        let proof = key.dpop_proof("POST", &url, Some("n1"), Some("tok")).unwrap();
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.unwrap();
        assert_eq!(jwk.thumbprint(ThumbprintHash::SHA256), key.thumbprint());
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let data = jsonwebtoken::decode::<Value>(&proof, &DecodingKey::from_jwk(&jwk).unwrap(), &validation).unwrap();
        assert_eq!(data.claims["htu"], "https://mcp.example/mcp");
        assert_eq!(data.claims["htm"], "POST");
        assert_eq!(data.claims["nonce"], "n1");
        assert_eq!(data.claims["ath"], URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok")));
        let other = key.dpop_proof("POST", &url, None, None).unwrap();
        assert_ne!(proof, other);
    }

    #[test]
    fn pem_keys_are_read_and_garbage_is_an_error() {
        assert!(matches!(SigningKey::from_pem("not a key"), Err(OAuthError::InvalidKey(_))));
        let generated = SigningKey::generate().unwrap();
        let pem = pem_of(&generated);
        let read = SigningKey::from_pem(&pem).unwrap().key_id("k1");
        assert_eq!(read.thumbprint(), generated.thumbprint());
        let assertion = read.client_assertion("client", "https://as.example").unwrap();
        let header = jsonwebtoken::decode_header(&assertion).unwrap();
        assert_eq!(header.kid.as_deref(), Some("k1"));
    }

    fn pem_of(key: &SigningKey) -> String {
        let der = key.inner.key.inner();
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n")
    }
}
