//! `elicitation/create` and `notifications/elicitation/complete` (MCP 2025-06-18 and 2025-11-25).

use serde::{Deserialize, Serialize};

use super::JsonObject;

/// Parameters of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum ElicitRequestParams {
    /// Ask for structured input through a form the client renders.
    Form {
        /// What is asked and why.
        message: String,
        /// The form: a flat object schema in MCP's restricted subset of JSON Schema.
        #[serde(rename = "requestedSchema")]
        requested_schema: JsonObject,
    },
    /// Send the user to a URL for an interaction that must not pass through the client.
    Url {
        /// Why the interaction is needed.
        message: String,
        /// Identifies the elicitation; opaque to the client.
        #[serde(rename = "elicitationId")]
        elicitation_id: String,
        /// Where the user should go.
        url: String,
    },
}

impl ElicitRequestParams {
    /// The mode's wire name.
    pub fn mode(&self) -> &'static str {
        match self {
            ElicitRequestParams::Form { .. } => "form",
            ElicitRequestParams::Url { .. } => "url",
        }
    }

    /// The message shown to the user.
    pub fn message(&self) -> &str {
        match self {
            ElicitRequestParams::Form { message, .. } | ElicitRequestParams::Url { message, .. } => message,
        }
    }

    /// Reads parameters from the wire, where `mode` may be omitted for a form.
    pub fn from_wire(mut value: serde_json::Value) -> Result<Self, serde_json::Error> {
        if let Some(o) = value.as_object_mut() {
            o.entry("mode").or_insert_with(|| "form".into());
        }
        serde_json::from_value(value)
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form or agreed to open the URL.
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// The user's action.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// Parameters of `notifications/elicitation/complete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCompleteParams {
    /// The URL-mode elicitation that completed.
    pub elicitation_id: String,
}

impl ElicitationCompleteParams {
    /// The notification's parameters for `elicitation_id`.
    pub fn new(elicitation_id: impl Into<String>) -> Self {
        ElicitationCompleteParams { elicitation_id: elicitation_id.into() }
    }

    /// The whole notification as a JSON-RPC message, for transports of the application's own.
    pub fn to_notification(&self) -> serde_json::Value {
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": self})
    }
}
