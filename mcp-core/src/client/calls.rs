//! The requests of MCP as methods of the client: `ping`, tools, resources, prompts,
//! completion, logging and roots.

use super::ClientError;
use super::connected::Client;
use crate::protocol::{
    CompleteArgument, CompleteContext, CompleteParams, CompleteResult, Completion, CompletionReference, EmptyResult,
    GetPromptParams, GetPromptResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceTemplate, ResourceUriParams,
    SetLevelParams, Tool,
};

impl Client {
    /// `ping`: checks that the server answers. (The 2026-07-28 era has no `ping`: the client
    /// asks `server/discover` instead.)
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.inner.era_2026.is_some() {
            return self.request::<_, JsonObject>("server/discover", &serde_json::json!({})).await.map(drop);
        }
        self.request::<_, EmptyResult>("ping", &serde_json::json!({})).await.map(drop)
    }

    /// One page of `tools/list` (`cursor`: where the previous page said the next starts).
    ///
    /// In the 2026-07-28 era, a tool whose input schema marks arguments for HTTP headers
    /// (`x-mcp-header`) against the specification's rules is left out (and refused if called
    /// by name): the page may then hold fewer tools than the server sent.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, ClientError> {
        let mut result: ListToolsResult = self.list_page("tools/list", cursor).await?;
        if let Some(era_2026) = &self.inner.era_2026 {
            result.tools.retain(|tool| match era_2026.headers.learn(tool) {
                Ok(()) => true,
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, %reason, "left out a tool with invalid `x-mcp-header` declarations");
                    false
                }
            });
        }
        Ok(result)
    }

    /// Every tool, following the pages.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.all_pages(|c| async move { self.list_tools(c.as_deref()).await.map(|r| (r.tools, r.next_cursor)) }).await
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult, ClientError> {
        self.list_page("resources/list", cursor).await
    }

    /// Every resource, following the pages.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.all_pages(|c| async move { self.list_resources(c.as_deref()).await.map(|r| (r.resources, r.next_cursor)) })
            .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.list_page("resources/templates/list", cursor).await
    }

    /// Every resource template, following the pages.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.all_pages(|c| async move {
            self.list_resource_templates(c.as_deref()).await.map(|r| (r.resource_templates, r.next_cursor))
        })
        .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.request("resources/read", &ResourceUriParams { uri: uri.to_owned() }).await
    }

    /// `resources/subscribe`: the server will send
    /// [`ServerNotification::ResourceUpdated`](super::ServerNotification::ResourceUpdated) when
    /// the resource changes.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.request::<_, EmptyResult>("resources/subscribe", &ResourceUriParams { uri: uri.to_owned() })
            .await
            .map(drop)
    }

    /// `resources/unsubscribe`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.request::<_, EmptyResult>("resources/unsubscribe", &ResourceUriParams { uri: uri.to_owned() })
            .await
            .map(drop)
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult, ClientError> {
        self.list_page("prompts/list", cursor).await
    }

    /// Every prompt, following the pages.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.all_pages(|c| async move { self.list_prompts(c.as_deref()).await.map(|r| (r.prompts, r.next_cursor)) })
            .await
    }

    /// `prompts/get` with string arguments (`&[]` for none).
    pub async fn get_prompt(&self, name: &str, arguments: &[(&str, &str)]) -> Result<GetPromptResult, ClientError> {
        let arguments = (!arguments.is_empty())
            .then(|| arguments.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        self.request("prompts/get", &GetPromptParams { name: name.to_owned(), arguments }).await
    }

    /// `completion/complete`.
    pub async fn complete(&self, params: &CompleteParams) -> Result<Completion, ClientError> {
        self.request::<_, CompleteResult>("completion/complete", params).await.map(|r| r.completion)
    }

    /// Completes the value of a prompt's argument.
    pub async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<Completion, ClientError> {
        let reference = CompletionReference::Prompt { name: prompt.to_owned(), title: None };
        self.complete(&completion_params(reference, argument, value)).await
    }

    /// Completes the value of a resource template's variable.
    pub async fn complete_resource_argument(
        &self,
        uri_template: &str,
        argument: &str,
        value: &str,
    ) -> Result<Completion, ClientError> {
        let reference = CompletionReference::Resource { uri: uri_template.to_owned() };
        self.complete(&completion_params(reference, argument, value)).await
    }

    /// The server sends log messages at `level` and above: in a session (2025-11-25 and
    /// before), `logging/setLevel`; in the 2026-07-28 era, which has no such request, every
    /// request from now on asks for them in its `_meta` (`io.modelcontextprotocol/logLevel`),
    /// and the messages come with the request they belong to.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if let Some(era_2026) = &self.inner.era_2026 {
            era_2026.set_log_level(level);
            return Ok(());
        }
        self.request::<_, EmptyResult>("logging/setLevel", &SetLevelParams { level }).await.map(drop)
    }

    /// Tells the server the roots changed (`notifications/roots/list_changed`).
    pub async fn notify_roots_list_changed(&self) -> Result<(), ClientError> {
        self.notify("notifications/roots/list_changed", &serde_json::json!({})).await
    }
}

fn completion_params(reference: CompletionReference, argument: &str, value: &str) -> CompleteParams {
    CompleteParams {
        reference,
        argument: CompleteArgument { name: argument.to_owned(), value: value.to_owned() },
        context: None::<CompleteContext>,
    }
}
