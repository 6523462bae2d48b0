//! `subscriptions/listen` (revision 2026-07-28): the long-lived stream of change notifications
//! that replaces the 2025-era GET stream and `resources/subscribe`.

use serde::{Deserialize, Serialize};

use super::JsonObject;

/// The `_meta` key tying a notification (and the closing response) to the
/// `subscriptions/listen` request that opened its stream; the value is that request's id.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Which change notifications a subscription carries. Every field is optional; an omitted
/// one is not subscribed to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these tasks (the tasks extension; the client must declare it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

impl SubscriptionFilter {
    /// Whether the filter asks for nothing at all.
    pub fn is_empty(&self) -> bool {
        self.tools_list_changed != Some(true)
            && self.prompts_list_changed != Some(true)
            && self.resources_list_changed != Some(true)
            && self.resource_subscriptions.as_ref().is_none_or(Vec::is_empty)
            && self.task_ids.as_ref().is_none_or(Vec::is_empty)
    }
}

/// `subscriptions/listen` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenParams {
    /// What the client opts in to.
    pub notifications: SubscriptionFilter,
    /// Request metadata (protocol version, client capabilities…).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// `notifications/subscriptions/acknowledged` parameters: the subset of the requested
/// notifications the server agreed to send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedParams {
    /// What the server will send on this subscription.
    pub notifications: SubscriptionFilter,
    /// Carries [`META_SUBSCRIPTION_ID`].
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn filters_read_and_write_the_wire_names() {
        let filter: SubscriptionFilter =
            serde_json::from_value(json!({"toolsListChanged": true, "resourceSubscriptions": ["a://b"]})).unwrap();
        assert_eq!(filter.tools_list_changed, Some(true));
        assert!(!filter.is_empty());
        assert_eq!(
            serde_json::to_value(&filter).unwrap(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["a://b"]})
        );
        assert!(SubscriptionFilter { tools_list_changed: Some(false), ..Default::default() }.is_empty());
        assert!(serde_json::from_value::<SubscriptionsListenParams>(json!({})).is_err(), "`notifications` is required");
    }
}
