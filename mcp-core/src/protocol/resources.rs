//! `resources/*` messages (MCP 2025-11-25).

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Annotations, ErrorObject, JsonObject, ResourceContents, codes};

/// A resource the server can read, as listed by `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Display annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Size of the raw content in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Value>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A family of resources named by an RFC 6570 URI template, as listed by `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The MIME type of every matching resource, when they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Display annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Value>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// `resources/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources.
    pub resources: Vec<Resource>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `resources/templates/list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Where the next page starts, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Parameters of `resources/read`, `resources/subscribe` and `resources/unsubscribe`, and of
/// `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceUriParams {
    /// The resource's URI.
    pub uri: String,
}

/// `resources/read` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The contents: usually one item, several for a resource with parts.
    pub contents: Vec<ResourceContents>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ResourceContents {
    /// Text contents.
    pub fn text(uri: impl Into<String>, mime_type: Option<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text { uri: uri.into(), mime_type, text: text.into(), meta: None }
    }

    /// Binary contents, base64-encoded here.
    pub fn blob(uri: impl Into<String>, mime_type: Option<String>, bytes: &[u8]) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type,
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        }
    }

    /// The URI of the contents.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }

    /// The MIME type of the contents.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => mime_type.as_deref(),
        }
    }

    /// The metadata of the contents (`_meta`).
    pub fn meta(&self) -> Option<&JsonObject> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => meta.as_ref(),
        }
    }

    /// The metadata of the contents, to fill in.
    pub fn meta_mut(&mut self) -> &mut Option<JsonObject> {
        match self {
            ResourceContents::Text { meta, .. } | ResourceContents::Blob { meta, .. } => meta,
        }
    }
}

impl ErrorObject {
    /// -32002 with `data.uri`: no resource has this URI.
    pub fn resource_not_found(uri: &str) -> Self {
        ErrorObject::new(codes::RESOURCE_NOT_FOUND, "Resource not found").with_data(serde_json::json!({ "uri": uri }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wire_shapes() {
        let r = Resource {
            uri: "test://a".into(),
            name: "a".into(),
            title: None,
            description: Some("d".into()),
            mime_type: Some("text/plain".into()),
            annotations: None,
            size: Some(3),
            icons: None,
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"uri": "test://a", "name": "a", "description": "d", "mimeType": "text/plain", "size": 3})
        );
        assert_eq!(
            serde_json::to_value(ResourceContents::blob("test://b", None, b"hi")).unwrap(),
            json!({"uri": "test://b", "blob": "aGk="})
        );
        assert_eq!(
            serde_json::to_value(ErrorObject::resource_not_found("test://x")).unwrap(),
            json!({"code": -32002, "message": "Resource not found", "data": {"uri": "test://x"}})
        );
    }
}
