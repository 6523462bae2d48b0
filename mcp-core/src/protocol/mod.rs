//! Wire types only: the JSON-RPC envelope, MCP messages and error codes. Nothing here does I/O.

pub mod elicitation;
pub mod jsonrpc;
pub mod types;

pub use elicitation::*;
pub use jsonrpc::{ErrorObject, Message, Notification, Request, RequestId, Response, codes};
pub use types::*;
