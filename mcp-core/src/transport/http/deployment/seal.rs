//! The deployment secret at work: a MAC (HMAC-SHA256) over what one instance sends another,
//! on the bus and on the forwarding hop, so that what does not come from an instance holding
//! the secret is dropped. Keys are rotated by giving every instance the new secret with the old
//! one still accepted ([`Backplane::previous_secret`](super::Backplane::previous_secret)), then
//! the old one withdrawn.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac as _};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// How far a message's time may be from this instance's clock: older ones are replays (or an
/// instance whose clock is off), dropped.
pub(crate) const FRESHNESS_MS: u64 = 60_000;

/// The deployment's secrets: the one sealing what this instance sends, and those still accepted.
#[derive(Clone, Default)]
pub(crate) struct Keys {
    current: Option<Vec<u8>>,
    previous: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys").field("set", &self.current.is_some()).field("previous", &self.previous.len()).finish()
    }
}

impl Keys {
    /// Seals with `secret` from now on (what sealed before stays accepted only if given as
    /// previous).
    pub(crate) fn set(&mut self, secret: Vec<u8>) {
        self.current = Some(secret);
    }

    /// Accepts what `secret` sealed too.
    pub(crate) fn accept(&mut self, secret: Vec<u8>) {
        self.previous.push(secret);
    }

    /// Whether the deployment has a secret: what arrives must then be sealed with it.
    pub(crate) fn enforced(&self) -> bool {
        self.current.is_some()
    }

    /// The seal of `data` (base64url), empty without a secret.
    pub(crate) fn seal(&self, data: &[&[u8]]) -> String {
        let Some(key) = &self.current else { return String::new() };
        keyed(key, data).map_or_else(String::new, |m| URL_SAFE_NO_PAD.encode(m.finalize().into_bytes()))
    }

    /// Whether `seal` is the seal of `data` under one of the secrets (compared in constant time).
    pub(crate) fn verify(&self, data: &[&[u8]], seal: &str) -> bool {
        let Ok(seal) = URL_SAFE_NO_PAD.decode(seal) else { return false };
        self.current
            .iter()
            .chain(&self.previous)
            .any(|key| keyed(key, data).is_some_and(|m| m.verify_slice(&seal).is_ok()))
    }
}

/// The MAC of `data` under `key`, before its finalization. Each part goes in with its length
/// first: no two sequences of parts seal the same bytes.
fn keyed(key: &[u8], data: &[&[u8]]) -> Option<HmacSha256> {
    let mut m = HmacSha256::new_from_slice(key).ok()?;
    for part in data {
        m.update(&(part.len() as u64).to_be_bytes());
        m.update(part);
    }
    Some(m)
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> u64 {
    u64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis())
        .unwrap_or(u64::MAX)
}

/// Whether a message sent at `at` (milliseconds since the epoch) is fresh now.
pub(crate) fn fresh(at: u64) -> bool {
    now_ms().abs_diff(at) <= FRESHNESS_MS
}

#[cfg(test)]
mod tests {
    use super::Keys;

    #[test]
    fn a_seal_verifies_under_its_secret_and_a_previous_one_only() {
        let mut old = Keys::default();
        old.set(b"old secret of the deployment....".to_vec());
        let mut new = Keys::default();
        new.set(b"new secret of the deployment....".to_vec());
        let sealed_old = old.seal(&[b"from", b"message"]);
        assert!(old.verify(&[b"from", b"message"], &sealed_old));
        assert!(!new.verify(&[b"from", b"message"], &sealed_old), "another secret does not verify it");
        new.accept(b"old secret of the deployment....".to_vec());
        assert!(new.verify(&[b"from", b"message"], &sealed_old), "a previous secret still does");
        assert!(!old.verify(&[b"from", b"messagf"], &sealed_old), "nor does it seal other bytes");
        assert!(!old.verify(&[b"frommessage"], &sealed_old), "parts are not concatenated");
        assert!(!old.verify(&[b"from", b"message"], "not base64!"));
        assert_eq!(Keys::default().seal(&[b"x"]), "", "no secret, no seal");
    }
}
