//! What the instances of a shared deployment say to each other: one message type for all of it
//! (sessions, the server's announcements, URL-mode flows, tasks), in one envelope that names
//! the sender, the instance meant, the time and the version of this vocabulary.
//!
//! Two channels per instance: [`EVERYONE`], which every instance reads, and
//! [`to_instance`]`(tag)`, which the instances with that tag read (a tag is 20 bits of the id;
//! the envelope's `to` names the instance meant, in full, and the others sharing the tag ignore
//! the message).

use serde::{Deserialize, Serialize};

use crate::protocol::ErrorObject;
use crate::task::{RelayOp, TaskRecord};

/// The version of this vocabulary. An instance drops (and counts) a message of another version:
/// during a rolling upgrade that changes it, the instances of each version hear only their own.
pub(crate) const VERSION: u32 = 1;

/// The channel every instance reads.
pub(crate) const EVERYONE: &str = "deployment";

/// The channel the instances tagged `tag` read.
pub(crate) fn to_instance(tag: u64) -> String {
    format!("deployment:{tag}")
}

/// The tag of `instance`: 20 bits of a hash of its id, which picks its channel. Two instances
/// with one tag both receive what is meant for either; the envelope's `to` tells them apart.
pub(crate) fn tag_of(instance: &str) -> u64 {
    // FNV-1a: stable across processes and versions, unlike the standard library's hasher.
    let hash =
        instance.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    hash & 0xF_FFFF
}

/// One message on the bus, with who sent it, for whom and when.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Envelope {
    /// [`VERSION`] of the sender.
    pub(crate) v: u32,
    /// The sending instance's id.
    pub(crate) from: String,
    /// The instance meant, on a direct channel; `None` for every instance the channel reaches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) to: Option<String>,
    /// When it was sent, in milliseconds since the Unix epoch.
    pub(crate) at: u64,
    /// What it says.
    pub(crate) message: Message,
}

/// What one instance tells others.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Message {
    /// A client's message (an answer, a cancellation) for whichever instance holds `session`
    /// and waits for it (others ignore it).
    Deliver { session: String, principal: Option<String>, frame: String },
    /// What a replica of `session` sent outside any request, for the owner's GET stream.
    Notify { session: String, frame: String },
    /// To their owner: these sessions were used on another instance (they are not idle).
    Touch { sessions: Vec<String> },
    /// The record of `session` changed, or the session ended: replicas start again from the
    /// record (or find it gone).
    SessionChanged { session: String },
    /// The server's resource `uri` was updated.
    ResourceUpdated { uri: String },
    /// One of the server's lists changed (`method` is the notification).
    ListChanged { method: String },
    /// A task the sender runs changed (for the `subscriptions/listen` streams naming it).
    TaskChanged { record: Box<TaskRecord> },
    /// A question for the instance that can answer it; answered with a [`Message::Reply`] of
    /// the same `token`, to the asker.
    Ask { token: u64, question: Question },
    /// The answer to the sender's question `token`.
    Reply { token: u64, reply: Reply },
}

/// What an instance asks the others.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Question {
    /// Complete the URL-mode flow `id`, for `principal` (asked of everyone; the owner answers).
    CompleteFlow { id: String, principal: Option<String> },
    /// The state of the URL-mode flow `id` (asked of everyone; the owner answers).
    FlowState { id: String },
    /// Do `op` to the task `task_id` you run, for `principal`.
    Task { task_id: String, principal: Option<String>, op: RelayOp },
    /// The client ended `session`: drop any replica of it (asked of everyone; each instance
    /// answers once it has, so that the client's next request finds it gone wherever it lands).
    SessionEnded { session: String },
}

/// An answer to a [`Question`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Reply {
    /// The flow was completed; its session, and the user it was bound to.
    FlowCompleted { session: u64, principal: Option<String> },
    /// The flow was completed before.
    FlowAlreadyCompleted,
    /// The flow belongs to another user.
    FlowForeign,
    /// The flow is known, but its completion could not be sent.
    FlowNotSent { reason: String },
    /// The flow waits for its completion.
    FlowPending,
    /// The flow was completed.
    FlowDone,
    /// What became of a task's `op`.
    Task { outcome: Result<(), ErrorObject> },
    /// No replica of the ended session is left on the instance replying.
    SessionDropped,
}

#[cfg(test)]
mod tests {
    use super::tag_of;

    #[test]
    fn the_instances_of_the_tests_on_colliding_tags_share_one_tag() {
        // `backplane_sharing` serves one session on two instances with these ids: they share a
        // channel, and only the envelope's `to` tells their messages apart.
        assert_eq!(tag_of("instance-559"), tag_of("instance-14222"));
        assert_ne!(tag_of("instance-559"), tag_of("instance-560"));
    }
}
