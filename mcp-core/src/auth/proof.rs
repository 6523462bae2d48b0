//! The signature of a DPoP proof (RFC 9449): the public key its header carries, read into
//! what verification and the key's thumbprint need, and the signature over the JWS signing
//! input checked with that key.
//!
//! With the feature `rustls`, the signature is verified by aws-lc-rs, the crypto that feature
//! already brings for TLS (its ECDSA is several times faster than RustCrypto's, and every
//! request of a DPoP client pays one verification); without it, by `jsonwebtoken` with
//! RustCrypto. Reading the proof and every check around the signature are this one code for
//! both.

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

#[cfg(feature = "rustls")]
use aws_lc::signature_verifies;
#[cfg(not(feature = "rustls"))]
use rust_crypto::signature_verifies;

/// Verification by aws-lc-rs.
#[cfg(feature = "rustls")]
mod aws_lc {
    use aws_lc_rs::signature::{
        ECDSA_P256_SHA256_FIXED, ECDSA_P384_SHA384_FIXED, RSA_PKCS1_2048_8192_SHA256, RSA_PSS_2048_8192_SHA256,
        RsaPublicKeyComponents, UnparsedPublicKey,
    };
    use jsonwebtoken::Algorithm;

    use super::PublicKey;

    /// Whether `signature` is `key`'s signature of `message` by `alg`.
    pub(super) fn signature_verifies(alg: Algorithm, key: &PublicKey, message: &[u8], signature: &[u8]) -> bool {
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

/// Verification by `jsonwebtoken` (RustCrypto). Built with `rustls` too when testing, so that
/// the tests hold both verifiers to the same answers.
#[cfg(any(not(feature = "rustls"), test))]
mod rust_crypto {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use jsonwebtoken::{Algorithm, DecodingKey};

    use super::PublicKey;

    /// Whether `signature` is `key`'s signature of `message` by `alg`.
    pub(super) fn signature_verifies(alg: Algorithm, key: &PublicKey, message: &[u8], signature: &[u8]) -> bool {
        let key = match key {
            // `jsonwebtoken` reads an EC key given this way as the SEC1 point it is.
            PublicKey::Ec(point) => DecodingKey::from_ec_der(point),
            PublicKey::Rsa { n, e } => DecodingKey::from_rsa_raw_components(n, e),
        };
        jsonwebtoken::crypto::verify(&URL_SAFE_NO_PAD.encode(signature), message, &key, alg).unwrap_or(false)
    }
}
