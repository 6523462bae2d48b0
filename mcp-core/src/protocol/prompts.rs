//! `prompts/*` messages (MCP 2025-11-25).

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Content, JsonObject, ResourceContents, Role};

/// A prompt (or prompt template) the server offers, as listed by `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt provides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments used to fill in the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Value>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// One argument of a prompt. Its value is a string on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// Whether the argument must be given (absent means optional).
    pub fn is_required(&self) -> bool {
        self.required == Some(true)
    }
}

/// `prompts/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts.
    pub prompts: Vec<Prompt>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `prompts/get` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptParams {
    /// The prompt.
    pub name: String,
    /// Argument values, all strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<std::collections::HashMap<String, String>>,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message from `role` with this content.
    pub fn new(role: Role, content: Content) -> Self {
        PromptMessage { role, content }
    }

    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, Content::text(text))
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, Content::text(text))
    }

    /// An image (given as raw bytes, base64-encoded here) from `role`.
    pub fn image(role: Role, bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self::new(role, Content::image(base64::engine::general_purpose::STANDARD.encode(bytes), mime_type))
    }

    /// A resource embedded in a message from `role`.
    pub fn resource(role: Role, contents: ResourceContents) -> Self {
        Self::new(role, Content::Resource { resource: contents, annotations: None })
    }
}

/// `prompts/get` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// A description of the filled-in prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl GetPromptResult {
    /// A result with these messages and no description.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult { description: None, messages, meta: None }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn message_shapes() {
        assert_eq!(
            serde_json::to_value(PromptMessage::user("hi")).unwrap(),
            json!({"role": "user", "content": {"type": "text", "text": "hi"}})
        );
        assert_eq!(
            serde_json::to_value(PromptMessage::image(Role::Assistant, b"\x89PNG", "image/png")).unwrap(),
            json!({"role": "assistant", "content": {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}})
        );
        assert_eq!(
            serde_json::to_value(PromptMessage::resource(
                Role::User,
                ResourceContents::text("test://a", Some("text/plain".into()), "A")
            ))
            .unwrap(),
            json!({"role": "user", "content": {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "A"}}})
        );
    }
}
