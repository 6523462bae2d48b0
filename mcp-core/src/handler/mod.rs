//! What a handler may ask of the request it serves: its [`Context`] (cancellation, progress,
//! the client, elicitation and sampling), shared [`State`], and [`Completer`]s for its
//! arguments. Tools, prompts and resources are written against this module; the server
//! implements what a context reaches of the session.

mod completion;
pub(crate) mod context;
mod extract;
mod request;
mod state;

#[cfg(feature = "http")]
pub use crate::engine::HttpRequestParts;
pub use completion::{Completer, CompletionCall};
pub use context::Context;
pub(crate) use context::ServerSide;
pub(crate) use extract::for_each_extractor;
#[cfg(feature = "http")]
pub use extract::{Extension, Headers};
pub use extract::{Extract, FromContext, Identity};
pub use request::Meta;
pub use state::State;
