//! The client as the host of MCP Apps ([`crate::apps`]): declaring the extension, finding the
//! tools that have views, reading a view to render it.

use super::{Client, ClientBuilder, ClientError};
use crate::apps::{ToolUi, UiResourceMeta};
use crate::protocol::{ResourceContents, Tool};

/// The view of an MCP App as read from the server, ready to render: its HTML and the
/// `_meta.ui` the host builds the iframe's sandbox and content security policy from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AppView {
    /// The view's `ui://` URI.
    pub uri: String,
    /// The MIME type the server gave (`text/html;profile=mcp-app`).
    pub mime_type: String,
    /// The HTML document.
    pub html: String,
    /// Its content security policy, permissions, domain and border preference: from the
    /// contents, else from the view's entry in `resources/list`, else empty.
    pub meta: UiResourceMeta,
}

impl ClientBuilder {
    /// Declares the MCP Apps extension (`io.modelcontextprotocol/ui`, with the MIME type
    /// `text/html;profile=mcp-app`) in the client's capabilities, in either era: the client
    /// is a host that renders the views of tools. Servers may then offer tools with views, or
    /// answer differently; each tool still answers in text for hosts without apps.
    pub fn apps(mut self) -> Self {
        self.apps = true;
        self
    }
}

impl Client {
    /// Whether the server declared the MCP Apps extension.
    pub fn server_supports_apps(&self) -> bool {
        self.server_capabilities().has_extension(crate::apps::EXTENSION)
    }

    /// Every tool with its `_meta.ui` (its view and visibility), for the tools that have one.
    pub async fn list_app_tools(&self) -> Result<Vec<(Tool, ToolUi)>, ClientError> {
        let tools = self.list_all_tools().await?;
        Ok(tools.into_iter().filter_map(|t| ToolUi::of(&t).map(|ui| (t, ui))).collect())
    }

    /// The tools a host offers the model: every tool but those whose `_meta.ui.visibility`
    /// leaves the model out (only their view may call them, through the host).
    pub async fn list_model_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let tools = self.list_all_tools().await?;
        Ok(tools.into_iter().filter(crate::apps::visible_to_model).collect())
    }

    /// Reads the view at `uri` (`resources/read`), for rendering: its HTML and `_meta.ui`.
    /// Fails with [`ClientError::Codec`] when the URI is not `ui://`, or the contents are not
    /// one HTML text of the MCP Apps MIME type.
    pub async fn read_app_view(&self, uri: &str) -> Result<AppView, ClientError> {
        if let Some(problem) = crate::apps::view_uri_problem(uri) {
            return Err(ClientError::Codec(problem));
        }
        let result = self.read_resource(uri).await?;
        let Some(ResourceContents::Text { uri: got, mime_type, text, meta }) =
            result.contents.into_iter().find(|c| c.uri() == uri)
        else {
            return Err(ClientError::Codec(format!("the server's contents of `{uri}` hold no text for that URI")));
        };
        let mime_type = mime_type.unwrap_or_default();
        if !is_app_mime_type(&mime_type) {
            return Err(ClientError::Codec(format!(
                "`{uri}` is `{mime_type}`, not an MCP App's view (`{}`)",
                crate::apps::MIME_TYPE
            )));
        }
        let from_contents = meta.as_ref().and_then(UiResourceMeta::from_meta);
        let meta = match from_contents {
            Some(meta) => meta,
            None => self.listed_view_meta(uri).await.unwrap_or_default(),
        };
        Ok(AppView { uri: got, mime_type, html: text, meta })
    }

    /// The `_meta.ui` of the view's entry in `resources/list`, if it is listed with one.
    async fn listed_view_meta(&self, uri: &str) -> Option<UiResourceMeta> {
        let resources = self.list_all_resources().await.ok()?;
        resources.into_iter().find(|r| r.uri == uri)?.meta.as_ref().and_then(UiResourceMeta::from_meta)
    }
}

/// Whether `mime_type` is the MCP Apps one, up to case and spaces around the parameter.
fn is_app_mime_type(mime_type: &str) -> bool {
    let Some((essence, parameters)) = mime_type.split_once(';') else { return false };
    essence.trim().eq_ignore_ascii_case("text/html")
        && parameters.split(';').any(|p| {
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("profile") && v.trim().trim_matches('"') == "mcp-app"
            })
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mime_type_is_read_loosely() {
        assert!(super::is_app_mime_type("text/html;profile=mcp-app"));
        assert!(super::is_app_mime_type("TEXT/HTML; charset=utf-8; profile=\"mcp-app\""));
        assert!(!super::is_app_mime_type("text/html"));
        assert!(!super::is_app_mime_type("text/plain;profile=mcp-app"));
    }
}
