//! URL mode: sending the user to a page for an interaction that must not pass through the
//! client (authorizing a third party, entering a secret on the server's own page).

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::protocol::{ErrorObject, codes};

/// One URL-mode elicitation, as listed in a [`UrlElicitationRequired`] error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlElicitation {
    /// The elicitation's id (see [`Context::new_url_elicitation_id`](crate::Context::new_url_elicitation_id)).
    pub elicitation_id: String,
    /// Where the user should go.
    pub url: String,
    /// Why.
    pub message: String,
}

/// A tool cannot proceed until the user completes one or more URL-mode elicitations.
///
/// Return it as the error of a tool (`Result<T, UrlElicitationRequired>`, or convert it into
/// an [`ErrorObject`] with `?`): the client receives JSON-RPC error -32042 with
/// `data.elicitations`, as MCP 2025-11-25 specifies, and can retry once the flows complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct UrlElicitationRequired {
    /// The error message.
    pub message: String,
    /// The flows the user must complete.
    pub elicitations: Vec<UrlElicitation>,
}

impl UrlElicitationRequired {
    /// The error for several flows.
    pub fn new(elicitations: Vec<UrlElicitation>) -> Self {
        let message = if elicitations.len() == 1 {
            "This request requires the user to complete an action in the browser first.".to_owned()
        } else {
            format!("This request requires the user to complete {} actions in the browser first.", elicitations.len())
        };
        UrlElicitationRequired { message, elicitations }
    }

    /// The error for one flow.
    pub fn single(elicitation_id: impl Into<String>, url: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(vec![UrlElicitation {
            elicitation_id: elicitation_id.into(),
            url: url.into(),
            message: message.into(),
        }])
    }

    /// The JSON-RPC error (-32042) this becomes on the wire.
    pub fn to_error_object(&self) -> ErrorObject {
        let elicitations: Vec<_> = self
            .elicitations
            .iter()
            .map(|e| json!({"mode": "url", "elicitationId": e.elicitation_id, "url": e.url, "message": e.message}))
            .collect();
        ErrorObject::new(codes::URL_ELICITATION_REQUIRED, self.message.clone())
            .with_data(json!({ "elicitations": elicitations }))
    }

    /// Reads the error back from a JSON-RPC error, if it is one.
    pub fn from_error_object(error: &ErrorObject) -> Option<Self> {
        if error.code != codes::URL_ELICITATION_REQUIRED {
            return None;
        }
        let list = error.data.as_ref()?.get("elicitations")?.clone();
        let elicitations: Vec<UrlElicitation> = serde_json::from_value(list).ok()?;
        Some(UrlElicitationRequired { message: error.message.clone(), elicitations })
    }
}

/// The error for a request whose user must complete a flow in the browser, from a client that
/// did not declare URL-mode elicitation (`elicitation.url`): -32021, naming that capability, in
/// either era. Such a client is never sent the flow (no -32042, no URL request, no completion
/// notification): it could not show it.
pub(crate) fn url_mode_not_declared() -> ErrorObject {
    let mut required = serde_json::Map::new();
    required.insert("elicitation".to_owned(), serde_json::json!({"url": {}}));
    ErrorObject::missing_client_capabilities(
        "this request needs the user to complete a flow in the browser (URL-mode elicitation)",
        required,
    )
}

impl From<UrlElicitationRequired> for ErrorObject {
    fn from(e: UrlElicitationRequired) -> Self {
        e.to_error_object()
    }
}

/// A new elicitation id: 128 bits from the operating system's secure random source, as
/// 32 hex digits.
pub fn new_elicitation_id() -> String {
    crate::engine::random_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shape_of_the_error() {
        let e = UrlElicitationRequired::single("abc", "https://x.test/a", "Authorize");
        let o = e.to_error_object();
        assert_eq!(o.code, -32042);
        assert_eq!(
            o.data,
            Some(
                json!({"elicitations": [{"mode": "url", "elicitationId": "abc", "url": "https://x.test/a", "message": "Authorize"}]})
            )
        );
        assert_eq!(UrlElicitationRequired::from_error_object(&o), Some(e));
    }

    #[test]
    fn ids_are_long_and_distinct() {
        let a = new_elicitation_id();
        let b = new_elicitation_id();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
