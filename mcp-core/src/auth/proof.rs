//! The signature of a DPoP proof (RFC 9449): the public key its header carries, read into
//! what verification and the key's thumbprint need, and the signature over the JWS signing
//! input checked with that key.
//!
//! The signature is verified by aws-lc-rs (the crypto of rustls' default provider): its ECDSA
//! is several times faster than RustCrypto's, and every request of a DPoP client pays one
//! verification. The tests hold it to the answers of `jsonwebtoken` with RustCrypto.

use std::borrow::Cow;
use std::ops::RangeInclusive;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::Algorithm;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// The length of a SHA-256 digest in base64url.
const THUMBPRINT_LEN: usize = 43;

/// The sizes of RSA modulus accepted, in bits: RFC 7518 (section 3.3) asks for 2048 at least;
/// 4096 is the most RustCrypto verifies, so that both verifiers accept the same keys.
const RSA_BITS: RangeInclusive<usize> = 2048..=4096;

/// The largest RSA public exponent accepted (33 bits, as both verifiers allow).
const RSA_MAX_EXPONENT: u64 = (1 << 33) - 1;

/// The base64url SHA-256 thumbprint (RFC 7638) of a proof's key: what a bound token's
/// `cnf.jkt` names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Thumbprint([u8; THUMBPRINT_LEN]);

impl Thumbprint {
    /// The thumbprint of the canonical JWK whose JSON text is `pieces` joined.
    fn of(pieces: &[&str]) -> Self {
        let mut hash = Sha256::new();
        for piece in pieces {
            hash.update(piece.as_bytes());
        }
        let mut text = [0u8; THUMBPRINT_LEN];
        // 32 bytes are always 43 characters of base64url without padding.
        let _ = URL_SAFE_NO_PAD.encode_slice(hash.finalize(), &mut text);
        Thumbprint(text)
    }

    /// The thumbprint as text.
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Debug for Thumbprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A proof whose signature verified: its key's thumbprint, and its claims (JSON text, not yet
/// read).
#[derive(Debug)]
pub(crate) struct Verified {
    pub(crate) thumbprint: Thumbprint,
    pub(crate) claims: Vec<u8>,
}

/// The members of a proof's header that are read. A member missing reads as empty (and is
/// then refused as wrong); `jwk` is kept as text until it is known to be an object.
#[derive(Deserialize)]
struct Header<'a> {
    #[serde(borrow, default)]
    typ: Cow<'a, str>,
    #[serde(borrow, default)]
    alg: Cow<'a, str>,
    #[serde(borrow, default)]
    jwk: Option<&'a RawValue>,
}

/// The members of a proof's `jwk` that are read: the public parameters of an EC or RSA key,
/// and whether any private one is there (whatever its value).
#[derive(Deserialize)]
struct Jwk<'a> {
    #[serde(borrow, default)]
    kty: Cow<'a, str>,
    #[serde(borrow, default)]
    crv: Cow<'a, str>,
    #[serde(borrow, default)]
    x: Cow<'a, str>,
    #[serde(borrow, default)]
    y: Cow<'a, str>,
    #[serde(borrow, default)]
    n: Cow<'a, str>,
    #[serde(borrow, default)]
    e: Cow<'a, str>,
    #[serde(default, deserialize_with = "present")]
    d: bool,
    #[serde(default, deserialize_with = "present")]
    p: bool,
    #[serde(default, deserialize_with = "present")]
    q: bool,
    #[serde(default, deserialize_with = "present")]
    dp: bool,
    #[serde(default, deserialize_with = "present")]
    dq: bool,
    #[serde(default, deserialize_with = "present")]
    qi: bool,
    #[serde(default, deserialize_with = "present")]
    k: bool,
}

/// A member that is there, whatever its value (`null` included).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// A proof's public key, decoded for verification.
#[derive(Debug)]
enum PublicKey {
    /// An EC key: the uncompressed SEC1 point `04 ‖ x ‖ y`.
    Ec(Vec<u8>),
    /// An RSA key: modulus and exponent, big-endian without leading zeros.
    Rsa { n: Vec<u8>, e: Vec<u8> },
}

impl Jwk<'_> {
    fn holds_private_key(&self) -> bool {
        self.d || self.p || self.q || self.dp || self.dq || self.qi || self.k
    }

    /// The key, for signatures by `alg`, and its thumbprint.
    fn public_key(&self, alg: Algorithm) -> Result<(PublicKey, Thumbprint), &'static str> {
        match (&*self.kty, alg) {
            ("EC", Algorithm::ES256 | Algorithm::ES384) => {
                let (curve, size) = if alg == Algorithm::ES256 { ("P-256", 32) } else { ("P-384", 48) };
                if self.crv != curve {
                    return Err("the jwk's curve is not the one of alg");
                }
                let mut point = Vec::with_capacity(1 + 2 * size);
                point.push(4);
                for coordinate in [&self.x, &self.y] {
                    let bytes = URL_SAFE_NO_PAD
                        .decode(coordinate.as_bytes())
                        .ok()
                        .filter(|b| b.len() == size)
                        .ok_or("a coordinate of the jwk is not base64url of the curve's size")?;
                    point.extend_from_slice(&bytes);
                }
                let thumbprint = Thumbprint::of(&[
                    r#"{"crv":""#,
                    curve,
                    r#"","kty":"EC","x":""#,
                    &self.x,
                    r#"","y":""#,
                    &self.y,
                    r#""}"#,
                ]);
                Ok((PublicKey::Ec(point), thumbprint))
            }
            ("RSA", Algorithm::RS256 | Algorithm::PS256) => {
                let decode = |text: &str| URL_SAFE_NO_PAD.decode(text.as_bytes()).ok().map(strip_leading_zeros);
                let n = decode(&self.n).ok_or("n of the jwk is not base64url")?;
                let e = decode(&self.e).ok_or("e of the jwk is not base64url")?;
                let bits = n.first().map_or(0, |top| n.len() * 8 - top.leading_zeros() as usize);
                if !RSA_BITS.contains(&bits) {
                    return Err("the jwk's RSA modulus is not of 2048 to 4096 bits");
                }
                let exponent = (e.len() <= 8).then(|| e.iter().fold(0u64, |v, b| (v << 8) | u64::from(*b)));
                if !exponent.is_some_and(|v| v % 2 == 1 && (3..=RSA_MAX_EXPONENT).contains(&v)) {
                    return Err("the jwk's RSA exponent is not an odd number of at most 33 bits");
                }
                let thumbprint = Thumbprint::of(&[r#"{"e":""#, &self.e, r#"","kty":"RSA","n":""#, &self.n, r#""}"#]);
                Ok((PublicKey::Rsa { n, e }, thumbprint))
            }
            ("EC" | "RSA", _) => Err("alg is not one for the jwk's key type"),
            _ => Err("the jwk is not an EC or RSA public key"),
        }
    }
}

/// `bytes` without the zeros it starts with.
fn strip_leading_zeros(mut bytes: Vec<u8>) -> Vec<u8> {
    let zeros = bytes.iter().take_while(|b| **b == 0).count();
    bytes.drain(..zeros);
    bytes
}

/// Reads `T` from `json` if it is a JSON object (serde would read a struct from an array too).
pub(crate) fn object<'a, T: Deserialize<'a>>(json: &'a [u8]) -> Option<T> {
    if json.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    serde_json::from_slice(json).ok()
}

/// Reads the compact JWS `proof` and verifies its signature: its header must be of `typ`
/// `dpop+jwt`, name one of the `accepted` algorithms, and carry as `jwk` the public key of that
/// algorithm (and nothing private), which must verify the signature. Returns the key's
/// thumbprint and the claims, or why the proof is refused.
pub(crate) fn verify(proof: &str, accepted: &[Algorithm]) -> Result<Verified, &'static str> {
    let mut parts = proof.split('.');
    let (Some(header64), Some(claims64), Some(signature64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not a compact JWS");
    };
    let header_json = URL_SAFE_NO_PAD.decode(header64).map_err(|_| "the header is not base64url")?;
    let header: Header<'_> = object(&header_json).ok_or("the header is not a JSON object of a JWS")?;
    if header.typ != "dpop+jwt" {
        return Err("typ is not dpop+jwt");
    }
    let alg = header
        .alg
        .parse::<Algorithm>()
        .ok()
        .filter(|a| accepted.contains(a))
        .ok_or("alg is not an accepted asymmetric algorithm")?;
    let raw_jwk = header.jwk.map(RawValue::get).filter(|j| j.starts_with('{')).ok_or("no jwk")?;
    let jwk: Jwk<'_> = serde_json::from_str(raw_jwk).map_err(|_| "bad jwk")?;
    if jwk.holds_private_key() {
        return Err("the jwk holds a private key");
    }
    let (key, thumbprint) = jwk.public_key(alg)?;
    let signature = URL_SAFE_NO_PAD.decode(signature64).map_err(|_| "the signature is not base64url")?;
    if let PublicKey::Ec(point) = &key
        && signature.len() != point.len() - 1
    {
        return Err("the signature is not of the curve's size");
    }
    let signing_input = &proof.as_bytes()[..header64.len() + 1 + claims64.len()];
    if !signature_verifies(alg, &key, signing_input, &signature) {
        return Err("the signature does not verify");
    }
    let claims = URL_SAFE_NO_PAD.decode(claims64).map_err(|_| "the claims are not base64url")?;
    Ok(Verified { thumbprint, claims })
}

use aws_lc::signature_verifies;

/// Verification by aws-lc-rs.
mod aws_lc {
    use aws_lc_rs::signature::{
        ECDSA_P256_SHA256_FIXED, ECDSA_P384_SHA384_FIXED, RSA_PKCS1_2048_8192_SHA256, RSA_PSS_2048_8192_SHA256,
        RsaPublicKeyComponents, UnparsedPublicKey,
    };
    use jsonwebtoken::Algorithm;

    use super::PublicKey;

    /// Whether `signature` is `key`'s signature of `message` by `alg`.
    pub(crate) fn signature_verifies(alg: Algorithm, key: &PublicKey, message: &[u8], signature: &[u8]) -> bool {
        match (alg, key) {
            (Algorithm::ES256, PublicKey::Ec(point)) => {
                UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point).verify(message, signature).is_ok()
            }
            (Algorithm::ES384, PublicKey::Ec(point)) => {
                UnparsedPublicKey::new(&ECDSA_P384_SHA384_FIXED, point).verify(message, signature).is_ok()
            }
            (Algorithm::RS256, PublicKey::Rsa { n, e }) => {
                RsaPublicKeyComponents { n, e }.verify(&RSA_PKCS1_2048_8192_SHA256, message, signature).is_ok()
            }
            (Algorithm::PS256, PublicKey::Rsa { n, e }) => {
                RsaPublicKeyComponents { n, e }.verify(&RSA_PSS_2048_8192_SHA256, message, signature).is_ok()
            }
            _ => false,
        }
    }
}

/// Verification by `jsonwebtoken` (RustCrypto), which the tests hold aws-lc-rs's answers to.
#[cfg(test)]
mod rust_crypto {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use jsonwebtoken::{Algorithm, DecodingKey};

    use super::PublicKey;

    /// Whether `signature` is `key`'s signature of `message` by `alg`.
    pub(crate) fn signature_verifies(alg: Algorithm, key: &PublicKey, message: &[u8], signature: &[u8]) -> bool {
        let key = match key {
            // `jsonwebtoken` reads an EC key given this way as the SEC1 point it is.
            PublicKey::Ec(point) => DecodingKey::from_ec_der(point),
            PublicKey::Rsa { n, e } => DecodingKey::from_rsa_raw_components(n, e),
        };
        jsonwebtoken::crypto::verify(&URL_SAFE_NO_PAD.encode(signature), message, &key, alg).unwrap_or(false)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use jsonwebtoken::EncodingKey;
    use jsonwebtoken::jwk::ThumbprintHash;
    use serde_json::{Value, json};

    use super::*;

    /// A P-256 key (PKCS#8).
    pub(crate) const P256_A: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg11YsGN3jGc0fLWqK
X++1ojHrRZiVdgWfVzSCkQKqx3OhRANCAARSg1RnEgzFowtjSx5lWoCpmWL1ttB1
rkcOfEm4FqQhyH2DpX2yphyZOwsBBH2W2lm6bK8PV652C2kwlqsFsP85
-----END PRIVATE KEY-----
";
    /// Another P-256 key.
    pub(crate) const P256_B: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgSjyKHgqjUO3ApRVV
OZSG/AGtvV1Qao3FubJ64FoJeCqhRANCAATt2cCHgmbNRvVqA4h+ZqGPyfh9Z3gO
7n2YO+OeFHrSulqWEws21T9SLYbhAr9Z7FhbWzeNj0gbKUsPtvVhUUex
-----END PRIVATE KEY-----
";
    /// A P-384 key.
    pub(crate) const P384: &str = "-----BEGIN PRIVATE KEY-----
MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDAA7Algov9IqeCKYkEo
nI1pE2kJQN9UfryjDVYrivvBS64MLzlE/clIulf8zZLsjbyhZANiAATRzR9kkAmE
i5ZpGFqV8p3fkZZqCBrluxCPP1ZG0eE3CJu/ETtikh7Yr1tVArButfSvlcgdsElS
U2W01bA34l81wBMPqD769y1It9rfK4zx0jzkK3iGx5vGLFxV5YxHntw=
-----END PRIVATE KEY-----
";
    /// A 2048-bit RSA key.
    pub(crate) const RSA_2048: &str = "-----BEGIN PRIVATE KEY-----
MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQCZv6vr4dsPOF4y
P1DNMjWSHusGrRD+6qz0I2m4l3uLpwHRJQHKbHmvgIedJ85oXHDucrmvwsYQSM9w
jly2n7TRccmpAxEm0GloYofyEgXfHQHWUctPKHZvwHH/XeSAZmo6Ag+0scsUH8mH
wECCQ7JUF3wsvJrK4MInpIa16o2C31oi2Ic7uE1+qAWr5+X+hRCvPogvLjOVfE6q
ZMjFOHLK2A6KCTh/E7fFSDuFsFptYpE0Z8WK+5LxrkRyGmu0VYJP1qAILVBjx0BU
eXzx1LQeKUTClyd4WiQD1iSsZOGJzcgZk77SwEQe1G8wzhHl34T10+FMblu0Dm5s
qRaKG8gDAgMBAAECggEAApO6Y31JKTOmLIxwI8hcKoNXKCj9eHBhjsQLMRtk6D3X
43QN2CFCVuU+IK26oXgvMmf84cvPexVlWLsiJbN+meYg3bLd9jsXETdZlP6lV4yK
a9e6Iy0H8y6UGpYtztMoo6lGLx6tyzwPKjXYPva4hf1QyQUuSQlEZ9qzoVf5oEBs
fmNTmJxxJSewLIT+JpDtXKiOk9dF8dbfUjfFkZChk9i9DA9NdKHIZT0tOX5fGs6o
0RHvOFpQxa93c7QIDgiVcLg7BPfUUH7vmOfTmuJ/OQ09JtJHVvmfgtUdAPG5+tTa
lfxoKOWINvQ5CRpbrmih+LR0qjbIKH/lqQHRclepDQKBgQDSNgukNOH/nVhZc6aw
GpygIQCg/e6n3bF5Xv3gB7wCK11WKKOdPyggFizcJPuJ8WKwSb9XK3FGoMO40AUU
UOKQ2XtBmJDJNlaJTbVrSKcpqGy/DeGLz3ATm0RGGwLOvVU88G1XyJ+1bZa0PXSg
KpSODIZdeyGghOoyF12MMpTkdwKBgQC7PSBSFlNjw4UySe1kIs/exBgYRaypLAIH
B1TICRAKcBj7i2FKoaCLrVefir+gyPWYgK4wjKBKrz5o3q3PKJKkuETTB1vooY4O
kmCsPKvxVoRtdIWQLnUx+jGo9EHQe+BEld4CD3FIFTtm+ntnEN0clgGSk44hTw5K
zeakhaUX1QKBgQC6HpQMHa6EDiJtgRJzFfzbYp0V7f9irc03Mz4BH5f9K7wGTxEe
Zw716exqNmxoZEsG3yUE3zf6WtkwRy5YII2ZxpV1LMn0/aF9DEq25KrtHWy7dGTg
zxfipDS9BalktwpDXHTTppSRpKgsicU7ErhZVQmatyy83TImi72OJjLiXQKBgQCi
3xkuTp1bOsiyZfxKDr4jWRBcjL8UqWNaGdZ16uw5KCmTJjsLYGz3E2IVNexbQHPi
pIzhTnJghPAU6R7oBLMK9f9oUg5w3ZdktY/CQ0SOOmQXkjRcpwzq3Gg2P8LASAFd
p7/mqugve8igW2Lc1J6CLzpO9mu8LbiQ+WqX0mk5wQKBgQDNyTY/Kr7YrL5QEQJ0
MvfG1Zsx6pv/2iHFPL5FHc8QuCqhnTX8pyaYLowcAEeSyiFivF0N/ET5kmQZfSeh
pisz2kGYub3Bt1ASrHO9GiO9TvXXfV1Fh2v6eo+b+kim59k8Pfm9JdRWB47aqhy6
X36MTDnjGFphR72I4uJ/jGJ/9Q==
-----END PRIVATE KEY-----
";

    pub(crate) const ALL: &[Algorithm] = &[Algorithm::ES256, Algorithm::ES384, Algorithm::RS256, Algorithm::PS256];

    /// Each accepted algorithm with a key for it.
    pub(crate) const SIGNERS: [(&str, Algorithm); 4] = [
        (P256_A, Algorithm::ES256),
        (P384, Algorithm::ES384),
        (RSA_2048, Algorithm::RS256),
        (RSA_2048, Algorithm::PS256),
    ];

    fn private(pem: &str, alg: Algorithm) -> EncodingKey {
        match alg {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem.as_bytes()).unwrap(),
            _ => EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap(),
        }
    }

    /// The public JWK of a private key, with the members a client sends.
    pub(crate) fn public_jwk(pem: &str, alg: Algorithm) -> Value {
        let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&private(pem, alg), alg).unwrap();
        let mut jwk = serde_json::to_value(&jwk).unwrap();
        jwk.as_object_mut().unwrap().retain(|k, _| ["kty", "crv", "x", "y", "n", "e"].contains(&k.as_str()));
        jwk
    }

    pub(crate) fn b64(value: &Value) -> String {
        URL_SAFE_NO_PAD.encode(value.to_string())
    }

    pub(crate) fn header(alg: &str, jwk: Value) -> Value {
        json!({"typ": "dpop+jwt", "alg": alg, "jwk": jwk})
    }

    fn claims() -> Value {
        json!({"jti": "j-1", "htm": "POST", "htu": "https://a.test/mcp", "iat": 1_700_000_000})
    }

    /// `header.claims` signed by the key `pem` with `alg`, whatever the header says.
    pub(crate) fn signed(header: &Value, claims: &Value, pem: &str, alg: Algorithm) -> String {
        let input = format!("{}.{}", b64(header), b64(claims));
        let signature = jsonwebtoken::crypto::sign(input.as_bytes(), &private(pem, alg), alg).unwrap();
        format!("{input}.{signature}")
    }

    /// A good proof by `pem` with `alg`.
    fn good(pem: &str, alg: Algorithm) -> String {
        signed(&header(&format!("{alg:?}"), public_jwk(pem, alg)), &claims(), pem, alg)
    }

    /// `proof` with its signature replaced by `signature` (bytes).
    fn resigned(proof: &str, signature: &[u8]) -> String {
        let (input, _) = proof.rsplit_once('.').unwrap();
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature))
    }

    fn signature_of(proof: &str) -> Vec<u8> {
        URL_SAFE_NO_PAD.decode(proof.rsplit_once('.').unwrap().1).unwrap()
    }

    #[test]
    fn proofs_of_each_accepted_algorithm_verify_and_give_the_keys_rfc_7638_thumbprint() {
        for (pem, alg) in SIGNERS {
            let verified = verify(&good(pem, alg), ALL).unwrap_or_else(|e| panic!("{alg:?}: {e}"));
            let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(public_jwk(pem, alg)).unwrap();
            assert_eq!(verified.thumbprint.as_str(), jwk.thumbprint(ThumbprintHash::SHA256), "{alg:?}");
            assert_eq!(serde_json::from_slice::<Value>(&verified.claims).unwrap(), claims(), "{alg:?}");
            // Only the algorithms accepted are.
            let others: Vec<Algorithm> = ALL.iter().copied().filter(|a| *a != alg).collect();
            assert_eq!(verify(&good(pem, alg), &others).unwrap_err(), "alg is not an accepted asymmetric algorithm");
        }
    }

    #[test]
    fn bad_proofs_are_refused() {
        let es256 = good(P256_A, Algorithm::ES256);
        let rs256 = good(RSA_2048, Algorithm::RS256);
        let p256 = public_jwk(P256_A, Algorithm::ES256);
        let rsa = public_jwk(RSA_2048, Algorithm::RS256);
        let with_jwk = |edit: &dyn Fn(&mut Value)| {
            let mut jwk = p256.clone();
            edit(&mut jwk);
            signed(&header("ES256", jwk), &claims(), P256_A, Algorithm::ES256)
        };
        let mut small_rsa = rsa.clone();
        let n = URL_SAFE_NO_PAD.decode(rsa["n"].as_str().unwrap()).unwrap();
        small_rsa["n"] = json!(URL_SAFE_NO_PAD.encode(&n[..128]));
        let (input, signature) = es256.rsplit_once('.').unwrap();
        let (raw_header, _) = input.split_once('.').unwrap();
        let cases: Vec<(&str, String, &str)> = vec![
            (
                "signed by another key",
                signed(&header("ES256", p256.clone()), &claims(), P256_B, Algorithm::ES256),
                "the signature does not verify",
            ),
            (
                "a tampered payload",
                format!("{raw_header}.{}.{signature}", b64(&json!({"jti": "j-2"}))),
                "the signature does not verify",
            ),
            (
                "a tampered header",
                format!(
                    "{}.{}",
                    b64(&json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": p256, "kid": "x"})),
                    &es256[raw_header.len() + 1..]
                ),
                "the signature does not verify",
            ),
            (
                "a signature one byte short",
                resigned(&es256, &signature_of(&es256)[..63]),
                "the signature is not of the curve's size",
            ),
            (
                "a signature one byte long",
                resigned(&es256, &[signature_of(&es256), vec![0]].concat()),
                "the signature is not of the curve's size",
            ),
            ("an empty signature", resigned(&es256, &[]), "the signature is not of the curve's size"),
            (
                "an RSA signature one byte short",
                resigned(&rs256, &signature_of(&rs256)[1..]),
                "the signature does not verify",
            ),
            (
                "ES384 with a P-256 key",
                signed(&header("ES384", p256.clone()), &claims(), P256_A, Algorithm::ES256),
                "the jwk's curve is not the one of alg",
            ),
            (
                "ES256 with a P-384 key",
                signed(&header("ES256", public_jwk(P384, Algorithm::ES384)), &claims(), P384, Algorithm::ES384),
                "the jwk's curve is not the one of alg",
            ),
            (
                "a P-256 key said to be P-384",
                with_jwk(&|j| j["crv"] = json!("P-384")),
                "the jwk's curve is not the one of alg",
            ),
            (
                "RS256 with an EC key",
                signed(&header("RS256", p256.clone()), &claims(), RSA_2048, Algorithm::RS256),
                "alg is not one for the jwk's key type",
            ),
            (
                "ES256 with an RSA key",
                signed(&header("ES256", rsa.clone()), &claims(), P256_A, Algorithm::ES256),
                "alg is not one for the jwk's key type",
            ),
            (
                "PS256 signed as RS256",
                signed(&header("PS256", rsa.clone()), &claims(), RSA_2048, Algorithm::RS256),
                "the signature does not verify",
            ),
            (
                "RS256 signed as PS256",
                signed(&header("RS256", rsa.clone()), &claims(), RSA_2048, Algorithm::PS256),
                "the signature does not verify",
            ),
            (
                "a 1024-bit RSA key",
                signed(&header("RS256", small_rsa), &claims(), RSA_2048, Algorithm::RS256),
                "the jwk's RSA modulus is not of 2048 to 4096 bits",
            ),
            (
                "an even RSA exponent",
                signed(
                    &header("RS256", json!({"kty": "RSA", "n": rsa["n"], "e": "AQAA"})),
                    &claims(),
                    RSA_2048,
                    Algorithm::RS256,
                ),
                "the jwk's RSA exponent is not an odd number of at most 33 bits",
            ),
            (
                "an RSA exponent of 35 bits",
                signed(
                    &header("RS256", json!({"kty": "RSA", "n": rsa["n"], "e": "BAAAAAE"})),
                    &claims(),
                    RSA_2048,
                    Algorithm::RS256,
                ),
                "the jwk's RSA exponent is not an odd number of at most 33 bits",
            ),
            ("a private member, even null", with_jwk(&|j| j["d"] = Value::Null), "the jwk holds a private key"),
            ("an oct key", with_jwk(&|j| *j = json!({"kty": "oct", "k": "c2VjcmV0"})), "the jwk holds a private key"),
            (
                "an OKP key",
                with_jwk(&|j| *j = json!({"kty": "OKP", "crv": "Ed25519", "x": j["x"].clone()})),
                "the jwk is not an EC or RSA public key",
            ),
            (
                "a padded coordinate",
                with_jwk(&|j| j["x"] = json!(format!("{}=", j["x"].as_str().unwrap()))),
                "a coordinate of the jwk is not base64url of the curve's size",
            ),
            (
                "a short coordinate",
                with_jwk(&|j| j["y"] = json!(&j["y"].as_str().unwrap()[..40])),
                "a coordinate of the jwk is not base64url of the curve's size",
            ),
            ("a coordinate of another type", with_jwk(&|j| j["x"] = json!(7)), "bad jwk"),
            (
                "a jwk as an array",
                signed(
                    &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": ["EC", "P-256", p256["x"], p256["y"]]}),
                    &claims(),
                    P256_A,
                    Algorithm::ES256,
                ),
                "no jwk",
            ),
            (
                "a header as an array",
                signed(&json!(["dpop+jwt", "ES256", p256]), &claims(), P256_A, Algorithm::ES256),
                "the header is not a JSON object of a JWS",
            ),
            (
                "no jwk",
                signed(&json!({"typ": "dpop+jwt", "alg": "ES256"}), &claims(), P256_A, Algorithm::ES256),
                "no jwk",
            ),
            (
                "typ JWT",
                signed(&json!({"typ": "JWT", "alg": "ES256", "jwk": p256}), &claims(), P256_A, Algorithm::ES256),
                "typ is not dpop+jwt",
            ),
            (
                "no typ",
                signed(&json!({"alg": "ES256", "jwk": p256}), &claims(), P256_A, Algorithm::ES256),
                "typ is not dpop+jwt",
            ),
            (
                "alg none",
                format!("{}.{}.", b64(&header("none", p256.clone())), b64(&claims())),
                "alg is not an accepted asymmetric algorithm",
            ),
            (
                "alg HS256",
                signed(&header("HS256", p256.clone()), &claims(), P256_A, Algorithm::ES256),
                "alg is not an accepted asymmetric algorithm",
            ),
            ("four parts", format!("{es256}.x"), "not a compact JWS"),
            ("two parts", input.to_owned(), "not a compact JWS"),
            ("a header not base64url", format!("%%{}", &es256), "the header is not base64url"),
        ];
        for (name, proof, reason) in cases {
            assert_eq!(verify(&proof, ALL).map(|_| ()), Err(reason), "{name}");
        }
        assert!(verify(&es256, ALL).is_ok());
        assert!(verify(&rs256, ALL).is_ok());
    }

    /// `signature` (`r ‖ s` of P-256) with `s` replaced by `n - s`: the same signature, in its
    /// other form.
    fn high_s(signature: &[u8]) -> Vec<u8> {
        const ORDER: [u8; 32] = [
            0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xbc, 0xe6,
            0xfa, 0xad, 0xa7, 0x17, 0x9e, 0x84, 0xf3, 0xb9, 0xca, 0xc2, 0xfc, 0x63, 0x25, 0x51,
        ];
        let mut out = signature.to_vec();
        let mut borrow = 0i16;
        for i in (0..32).rev() {
            let d = i16::from(ORDER[i]) - i16::from(signature[32 + i]) - borrow;
            borrow = i16::from(d < 0);
            out[32 + i] = d.rem_euclid(256) as u8;
        }
        out
    }

    /// Whatever the key, algorithm, message and signature, the verifier in use answers as
    /// RustCrypto (through `jsonwebtoken`) does.
    #[test]
    fn the_verifier_in_use_answers_as_rust_crypto_does() {
        let key = |pem: &str, alg: Algorithm| {
            let json = public_jwk(pem, alg).to_string();
            let jwk: Jwk<'_> = serde_json::from_str(&json).unwrap();
            jwk.public_key(alg).unwrap().0
        };
        let message = b"header.claims";
        let sign = |pem: &str, alg: Algorithm, message: &[u8]| {
            let text = jsonwebtoken::crypto::sign(message, &private(pem, alg), alg).unwrap();
            URL_SAFE_NO_PAD.decode(text).unwrap()
        };
        let mut cases: Vec<(String, Algorithm, PublicKey, Vec<u8>, bool)> = Vec::new();
        for (pem, alg) in SIGNERS {
            let signature = sign(pem, alg, message);
            let other_key = if pem == P256_A { P256_B } else { pem };
            let other = sign(other_key, alg, message);
            let mut flipped = signature.clone();
            flipped[5] ^= 1;
            cases.push((format!("{alg:?} good"), alg, key(pem, alg), signature.clone(), true));
            cases.push((format!("{alg:?} one bit off"), alg, key(pem, alg), flipped, false));
            cases.push((format!("{alg:?} short"), alg, key(pem, alg), signature[1..].to_vec(), false));
            cases.push((format!("{alg:?} long"), alg, key(pem, alg), [&signature[..], &[0]].concat(), false));
            cases.push((format!("{alg:?} empty"), alg, key(pem, alg), Vec::new(), false));
            if other_key != pem {
                cases.push((format!("{alg:?} another key"), alg, key(pem, alg), other, false));
            }
        }
        let es256 = sign(P256_A, Algorithm::ES256, message);
        let rs256 = sign(RSA_2048, Algorithm::RS256, message);
        let ps256 = sign(RSA_2048, Algorithm::PS256, message);
        let (p256, p384) = (key(P256_A, Algorithm::ES256), key(P384, Algorithm::ES384));
        cases.extend([
            (
                "ES256 in its high-s form".to_owned(),
                Algorithm::ES256,
                key(P256_A, Algorithm::ES256),
                high_s(&es256),
                true,
            ),
            ("ES384 with a P-256 key".to_owned(), Algorithm::ES384, p256, es256.clone(), false),
            ("ES256 with a P-384 key".to_owned(), Algorithm::ES256, p384, es256.clone(), false),
            ("RS256 with an EC key".to_owned(), Algorithm::RS256, key(P256_A, Algorithm::ES256), rs256.clone(), false),
            ("ES256 with an RSA key".to_owned(), Algorithm::ES256, key(RSA_2048, Algorithm::RS256), es256, false),
            ("PS256 verifying RS256".to_owned(), Algorithm::PS256, key(RSA_2048, Algorithm::PS256), rs256, false),
            ("RS256 verifying PS256".to_owned(), Algorithm::RS256, key(RSA_2048, Algorithm::RS256), ps256, false),
        ]);
        for (name, alg, key, signature, expected) in cases {
            assert_eq!(rust_crypto::signature_verifies(alg, &key, message, &signature), expected, "RustCrypto: {name}");
            assert_eq!(signature_verifies(alg, &key, message, &signature), expected, "in use: {name}");
        }
    }
}
