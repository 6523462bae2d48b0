//! Wire types only: the JSON-RPC envelope, MCP messages and error codes. Nothing here does I/O.

pub mod base64;
pub mod completion;
pub mod elicitation;
pub mod jsonrpc;
pub mod logging;
pub mod prompts;
pub mod resources;
pub mod sampling;
pub mod stateless;
pub mod subscriptions;
pub mod types;

pub use completion::*;
pub use elicitation::*;
pub use jsonrpc::{ErrorObject, Message, Method, Notification, Request, RequestId, Response, codes};
pub use logging::*;
pub use prompts::*;
pub use resources::*;
pub use sampling::*;
pub use subscriptions::*;
pub use types::*;
