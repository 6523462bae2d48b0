//! `completion/complete` (MCP 2025-11-25).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// The most values one completion may carry.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What is being completed: an argument of a prompt, or a variable of a resource template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// A prompt, by name.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// Its human-readable name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// A resource template (or resource), by URI template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// Its name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// Values already chosen for other arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteContext {
    /// The other arguments, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<HashMap<String, String>>,
}

/// `completion/complete` parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// The prompt or template.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument to complete.
    pub argument: CompleteArgument,
    /// Other arguments' values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompleteContext>,
}

/// The suggestions of a completion.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most [`MAX_COMPLETION_VALUES`] suggestions.
    pub values: Vec<String>,
    /// How many suggestions there are in all, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more suggestions than those sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// Suggestions; more than [`MAX_COMPLETION_VALUES`] are cut down to that many, with
    /// `total` and `hasMore` telling how many there were.
    pub fn new(values: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Completion { values: values.into_iter().map(Into::into).collect(), total: None, has_more: None }.limited()
    }

    /// Keeps at most [`MAX_COMPLETION_VALUES`] values; when some are cut, sets `hasMore` and
    /// (unless already known) `total`.
    pub fn limited(mut self) -> Self {
        if self.values.len() > MAX_COMPLETION_VALUES {
            let all = self.values.len() as u64;
            self.values.truncate(MAX_COMPLETION_VALUES);
            self.total = Some(self.total.unwrap_or(all).max(all));
            self.has_more = Some(true);
        }
        self
    }
}

impl<S: Into<String>> From<Vec<S>> for Completion {
    fn from(values: Vec<S>) -> Self {
        Completion::new(values)
    }
}

/// `completion/complete` result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_shapes_and_limits() {
        let p: CompleteParams = serde_json::from_value(json!({
            "ref": {"type": "ref/resource", "uri": "test://{id}"},
            "argument": {"name": "id", "value": "1"},
            "context": {"arguments": {"x": "y"}}
        }))
        .unwrap();
        assert_eq!(p.reference, CompletionReference::Resource { uri: "test://{id}".into() });
        let many = Completion::new((0..150).map(|i| i.to_string()));
        assert_eq!(many.values.len(), 100);
        assert_eq!((many.total, many.has_more), (Some(150), Some(true)));
        assert_eq!(serde_json::to_value(Completion::new(["a"])).unwrap(), json!({"values": ["a"]}));
    }
}
