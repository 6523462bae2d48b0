//! A shared deployment: several instances of one server behind any load balancer, each able to
//! serve any session (see [`Backplane`]).
//!
//! What is public here is what a deployment provides and configures: the [`SessionRegistry`]
//! and [`MessageBus`] traits (`store`) and the [`Backplane`] settings (`backplane`). The rest is
//! this instance at work:
//! - `messages`: the one vocabulary of the bus, in an envelope naming sender, time and version;
//! - `bus`: one subscriber per instance, the questions waiting for replies, one ordered queue;
//! - `forwarder`: the hop to a session's owner, the owners looked up, this instance's lease;
//! - `connector`: the hop's HTTP clients, plain and TLS;
//! - `hop`: what a forwarded request carries, sealed, from where it landed to the owner;
//! - `landing`: where a request for a session owned elsewhere is served;
//! - `replicas`: sessions owned elsewhere served here, and what the bus says about sessions;
//! - `kept_events`: the events of the streams replicas serve, and their replay once the
//!   instance that served them is gone;
//! - `takeover`: sessions changing hands (an owner gone, an instance draining);
//! - `heartbeat`: this instance's presence, and the renewal of its sessions' records;
//! - `release`: a session ending here, told to the others;
//! - `seal`: the deployment secret sealing all of it.

mod backplane;
pub(crate) mod bus;
mod connector;
pub(crate) mod forwarder;
pub(crate) mod heartbeat;
pub(crate) mod hop;
mod kept_events;
pub(crate) mod landing;
pub(crate) mod messages;
pub(crate) mod release;
pub(crate) mod replicas;
pub(crate) mod seal;
mod store;
pub(crate) mod takeover;

pub use backplane::{Backplane, DEFAULT_HEARTBEAT, FORWARDED_HEADER, MAX_INSTANCE_ID, MIN_SECRET, RECORDS_RENEWAL};
pub use heartbeat::RUNTIME_STALL_LIMIT;
pub use hop::HOP_HEADER;
pub use store::{BackplaneError, MessageBus, Owner, SessionRegistry};
