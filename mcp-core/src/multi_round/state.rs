//! Sealing `requestState`: what a multi round-trip request carries from one round to the next.
//!
//! The state travels through the client, so it is attacker-controlled input. It is sealed with
//! HMAC-SHA256 under a server key and bound to the request it belongs to (method, tool/prompt/
//! resource name, a digest of the original arguments, the authenticated principal) and to a
//! short expiry. Opening it checks all of that before anything runs.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::protocol::JsonObject;

type HmacSha256 = Hmac<Sha256>;

/// How long a sealed state stays valid by default: a person may be answering.
pub const DEFAULT_STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// The format version inside sealed state.
const FORMAT: u8 = 1;

/// The secret that seals `requestState`. Random per process by default; give every instance
/// of a deployment the same key so that a retry can land on any of them.
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(…)")
    }
}

impl StateKey {
    /// A key from 32 secret bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        StateKey(bytes)
    }

    /// A fresh random key (from the operating system's secure source).
    pub fn random() -> Self {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).expect("the operating system's random source is unavailable");
        StateKey(bytes)
    }
}

/// What a sealed state is bound to: the request it may be presented on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Binding {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub(crate) method: String,
    /// The tool or prompt name, or the resource URI.
    pub(crate) name: String,
    /// SHA-256 (hex) of the original arguments, keys sorted.
    pub(crate) digest: String,
    /// The authenticated user, where the transport knows one.
    pub(crate) principal: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    v: u8,
    #[serde(flatten)]
    binding: Binding,
    /// Expiry, milliseconds since the Unix epoch.
    exp: u64,
    /// What the request carries from round to round.
    #[serde(flatten)]
    carried: Carried,
}

/// What a sealed state carries from one round of a request to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Carried {
    /// Random, fixed in the first round: what stays the same across the rounds of one request
    /// (its session key, the URL elicitation ids the handler makes).
    pub(crate) chain: String,
    /// The answers gathered in earlier rounds, by input-request key.
    pub(crate) answers: JsonObject,
}

/// Why a presented `requestState` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Not something this server produced.
    #[error("requestState is malformed")]
    Malformed,
    /// The signature does not match: the state was altered, or sealed with another key.
    #[error("requestState failed verification")]
    Tampered,
    /// Its time has passed.
    #[error("requestState has expired")]
    Expired,
    /// It belongs to another request (or another user).
    #[error("requestState does not belong to this request ({0} differs)")]
    Mismatch(&'static str),
}

/// Seals and opens states with one key and time-to-live.
#[derive(Debug, Clone)]
pub(crate) struct Sealer {
    key: StateKey,
    ttl: Duration,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl Sealer {
    pub(crate) fn new(key: StateKey, ttl: Duration) -> Self {
        Sealer { key, ttl }
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC takes keys of any length; 32 bytes cannot fail.
        <HmacSha256 as Mac>::new_from_slice(&self.key.0).expect("HMAC accepts any key length")
    }

    /// How long a sealed state stays valid.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Seals what the request `binding` carries to its next round.
    pub(crate) fn seal(&self, binding: &Binding, carried: &Carried) -> String {
        let sealed = Sealed {
            v: FORMAT,
            binding: binding.clone(),
            exp: now_ms() + self.ttl.as_millis() as u64,
            carried: carried.clone(),
        };
        let payload = serde_json::to_vec(&sealed).unwrap_or_default();
        self.sign(&payload)
    }

    /// `payload` and its tag, in the form [`open`](Self::open) reads.
    pub(crate) fn sign(&self, payload: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(payload);
        let tag = mac.finalize().into_bytes();
        format!("{}.{}", URL_SAFE_NO_PAD.encode(payload), URL_SAFE_NO_PAD.encode(tag))
    }

    /// Opens a state presented on the request `expected`, returning what it carries.
    pub(crate) fn open(&self, text: &str, expected: &Binding) -> Result<Carried, StateError> {
        let (payload, tag) = text.split_once('.').ok_or(StateError::Malformed)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| StateError::Malformed)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| StateError::Malformed)?;
        let mut mac = self.mac();
        mac.update(&payload);
        mac.verify_slice(&tag).map_err(|_| StateError::Tampered)?;
        let sealed: Sealed = serde_json::from_slice(&payload).map_err(|_| StateError::Malformed)?;
        if sealed.v != FORMAT {
            return Err(StateError::Malformed);
        }
        if sealed.exp < now_ms() {
            return Err(StateError::Expired);
        }
        let b = &sealed.binding;
        if b.method != expected.method {
            return Err(StateError::Mismatch("method"));
        }
        if b.name != expected.name {
            return Err(StateError::Mismatch("name"));
        }
        if b.digest != expected.digest {
            return Err(StateError::Mismatch("arguments"));
        }
        if b.principal != expected.principal {
            return Err(StateError::Mismatch("user"));
        }
        Ok(sealed.carried)
    }
}

fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), canonical(&o[k]))).collect::<Map<_, _>>())
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// SHA-256 (hex) of a JSON value with object keys sorted, so that key order does not matter.
pub(crate) fn digest(value: &Value) -> String {
    let text = serde_json::to_string(&canonical(value)).unwrap_or_default();
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn binding() -> Binding {
        Binding {
            method: crate::protocol::Method::ToolsCall.name().into(),
            name: "create_project".into(),
            digest: digest(&json!({"b": 1, "a": [1, {"y": 2, "x": 1}]})),
            principal: None,
        }
    }

    fn answers() -> Carried {
        let answers = json!({"input-0": {"action": "accept", "content": {"name": "x"}}}).as_object().unwrap().clone();
        Carried { chain: "c0ffee".into(), answers }
    }

    #[test]
    fn round_trip_and_key_order_independence() {
        let sealer = Sealer::new(StateKey::random(), Duration::from_secs(60));
        let state = sealer.seal(&binding(), &answers());
        assert_eq!(sealer.open(&state, &binding()), Ok(answers()));
        assert_eq!(digest(&json!({"a": [1, {"x": 1, "y": 2}], "b": 1})), binding().digest);
    }

    #[test]
    fn numbers_carried_from_round_to_round_stay_exactly_as_answered() {
        // The shortest spelling of a double reads back as that double, however many rounds
        // it is sealed and opened in (a parser off by one unit in the last place drifts).
        let sealer = Sealer::new(StateKey::random(), Duration::from_secs(60));
        let answered: Value =
            serde_json::from_str(r#"{"x": 1.6666666666666665e55, "y": 9.999999900001845e33}"#).unwrap();
        assert_eq!(answered["x"].as_f64(), Some(1.6666666666666665e55));
        assert_eq!(answered["y"].as_f64(), Some(9.999999900001845e33));
        let mut carried = Carried { chain: "c".into(), answers: answered.as_object().unwrap().clone() };
        for _ in 0..3 {
            carried = sealer.open(&sealer.seal(&binding(), &carried), &binding()).unwrap();
        }
        assert_eq!(Value::Object(carried.answers), answered);
    }

    #[test]
    fn tampering_expiry_and_mismatches_are_refused() {
        let key = StateKey::random();
        let sealer = Sealer::new(key.clone(), Duration::from_secs(60));
        let state = sealer.seal(&binding(), &answers());
        // Flip one character of the payload.
        let mut bytes = state.clone().into_bytes();
        bytes[3] = if bytes[3] == b'A' { b'B' } else { b'A' };
        assert_eq!(sealer.open(&String::from_utf8(bytes).unwrap(), &binding()), Err(StateError::Tampered));
        assert_eq!(sealer.open("garbage", &binding()), Err(StateError::Malformed));
        assert_eq!(
            Sealer::new(StateKey::random(), Duration::from_secs(60)).open(&state, &binding()),
            Err(StateError::Tampered)
        );
        let expired = Sealer::new(key.clone(), Duration::ZERO).seal(&binding(), &answers());
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(sealer.open(&expired, &binding()), Err(StateError::Expired));
        let mut other = binding();
        other.name = "delete_project".into();
        assert_eq!(sealer.open(&state, &other), Err(StateError::Mismatch("name")));
        let mut other = binding();
        other.digest = digest(&json!({}));
        assert_eq!(sealer.open(&state, &other), Err(StateError::Mismatch("arguments")));
        let mut other = binding();
        other.principal = Some("mallory".into());
        assert_eq!(sealer.open(&state, &other), Err(StateError::Mismatch("user")));
        // The same key on another instance opens it: retries may land anywhere.
        assert!(Sealer::new(key, Duration::from_secs(60)).open(&state, &binding()).is_ok());
    }
}
