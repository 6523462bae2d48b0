//! `sampling/createMessage` and `roots/list` (server-to-client requests, MCP 2025-11-25).

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{Annotations, Content, JsonObject, Role, Tool};

/// One block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingContent {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Display annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// An image.
    Image {
        /// Base64-encoded bytes.
        data: String,
        /// e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Display annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// Audio.
    Audio {
        /// Base64-encoded bytes.
        data: String,
        /// e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Display annotations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Annotations>,
    },
    /// The model asks for a tool call.
    ToolUse {
        /// Identifies this use; the matching result carries it.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments.
        input: JsonObject,
        /// Metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
    /// The result of a tool call, given back to the model.
    ToolResult {
        /// The `id` of the tool use.
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        /// The result's content.
        content: Vec<Content>,
        /// Structured result.
        #[serde(rename = "structuredContent", default, skip_serializing_if = "Option::is_none")]
        structured_content: Option<JsonObject>,
        /// Whether the call failed.
        #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        /// Metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<JsonObject>,
    },
}

impl SamplingContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingContent::Text { text: text.into(), annotations: None }
    }

    /// An image block from raw bytes (base64-encoded here).
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        SamplingContent::Image {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.into(),
            annotations: None,
        }
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            SamplingContent::Text { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// The content of a sampling message: one block or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingMessageContent {
    /// One block (what most messages have).
    Single(SamplingContent),
    /// Several blocks.
    Multiple(Vec<SamplingContent>),
}

impl SamplingMessageContent {
    /// The blocks, whichever way they were sent.
    pub fn blocks(&self) -> &[SamplingContent] {
        match self {
            SamplingMessageContent::Single(one) => std::slice::from_ref(one),
            SamplingMessageContent::Multiple(many) => many,
        }
    }
}

/// A message to or from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: SamplingMessageContent,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl SamplingMessage {
    /// A message of one block.
    pub fn new(role: Role, content: SamplingContent) -> Self {
        SamplingMessage { role, content: SamplingMessageContent::Single(content), meta: None }
    }

    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, SamplingContent::text(text))
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::new(Role::Assistant, SamplingContent::text(text))
    }
}

/// A hint for choosing a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelHint {
    /// A (part of a) model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The server's preferences for the model the client picks. Advisory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// 0 to 1: how much cost matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_priority: Option<f64>,
    /// 0 to 1: how much speed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_priority: Option<f64>,
    /// 0 to 1: how much capability matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intelligence_priority: Option<f64>,
}

/// Which MCP servers' context the client should add to the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// None (the default).
    None,
    /// This server's (soft-deprecated; needs the client's `sampling.context`).
    ThisServer,
    /// Every server's (soft-deprecated; needs the client's `sampling.context`).
    AllServers,
}

/// How the model may use tools during sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// The model decides (the default).
    Auto,
    /// The model must use at least one tool.
    Required,
    /// The model must not use tools.
    None,
}

/// `toolChoice` of a sampling request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolChoice {
    /// The mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// `sampling/createMessage` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Model preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Context to include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to sample.
    pub max_tokens: u32,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use (needs the client's `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them (needs the client's `sampling.tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CreateMessageParams {
    /// A request for at most `max_tokens` tokens continuing `messages`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u32) -> Self {
        CreateMessageParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            meta: None,
        }
    }

    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the model preferences.
    pub fn model_preferences(mut self, preferences: ModelPreferences) -> Self {
        self.model_preferences = Some(preferences);
        self
    }

    /// Offers tools to the model.
    pub fn tools(mut self, tools: Vec<Tool>, choice: Option<ToolChoiceMode>) -> Self {
        self.tools = Some(tools);
        self.tool_choice = choice.map(|mode| ToolChoice { mode: Some(mode) });
        self
    }

    /// Whether the request uses tools (`tools` or `toolChoice`).
    pub fn uses_tools(&self) -> bool {
        self.tools.is_some() || self.tool_choice.is_some()
    }
}

/// `sampling/createMessage` result: the model's message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who says it (the assistant).
    pub role: Role,
    /// What the model said.
    pub content: SamplingMessageContent,
    /// The model that answered.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, `toolUse`, or the
    /// provider's own reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CreateMessageResult {
    /// The text of the answer's text blocks, joined, if it has any.
    pub fn text(&self) -> Option<String> {
        let texts: Vec<&str> = self.content.blocks().iter().filter_map(SamplingContent::as_text).collect();
        (!texts.is_empty()).then(|| texts.concat())
    }
}

/// A root the client lets the server work in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (`file://…`).
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// `roots/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_shapes() {
        let p = CreateMessageParams::new(vec![SamplingMessage::user("hi")], 50).system_prompt("be brief");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "systemPrompt": "be brief", "maxTokens": 50})
        );
        let r: CreateMessageResult = serde_json::from_value(json!({
            "role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "1", "name": "t", "input": {}}],
            "model": "m", "stopReason": "toolUse"
        }))
        .unwrap();
        assert_eq!(r.content.blocks().len(), 2);
        assert_eq!(r.text().as_deref(), Some("a"));
    }
}
