//! Extractors: what a `#[tool]`, `#[prompt]` or `#[resource]` function takes from the request
//! by naming it as an argument, as axum's handlers do. One trait, [`FromContext`], says how
//! each is read from the request's [`Context`]; the handler kinds take every extractor the
//! same way (see [`for_each_extractor`]).

use std::ops::Deref;
use std::sync::Arc;

use super::{Context, Meta, State};
use crate::auth::AuthInfo;
use crate::protocol::ErrorObject;

/// A value a handler takes from the request it serves, named as one of its arguments.
///
/// Implemented by [`Context`], [`State<T>`], [`Meta`] (the request's `_meta`), [`Identity`]
/// (the verified caller), and over HTTP `Headers` and `Extension<T>` (feature `http`). Implement it for a
/// type of yours and take it as [`Extract<YourType>`]:
///
/// ```
/// use typed_mcp::prelude::*;
/// use typed_mcp::handler::{Extract, FromContext};
///
/// /// The tenant a request is for, read from `_meta` (or refused).
/// struct Tenant(String);
///
/// impl FromContext for Tenant {
///     fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
///         ctx.meta()
///             .get_str("com.example/tenant")
///             .map(Tenant)
///             .ok_or_else(|| ErrorObject::invalid_params("`_meta` must name `com.example/tenant`"))
///     }
/// }
///
/// /// Lists the tenant's projects.
/// #[tool]
/// fn projects(who: Extract<Tenant>) -> String {
///     format!("projects of {}", who.0.0)
/// }
/// # let _ = <projects as typed_mcp::tool::ToolFn>::definition();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be taken from the request",
    label = "not an extractor",
    note = "implement `typed_mcp::handler::FromContext` for it and take it as `Extract<{Self}>`"
)]
pub trait FromContext: Sized + Send {
    /// Reads the value from the request's context; an error answers the request instead of
    /// running the handler.
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject>;
}

impl FromContext for Context {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.clone())
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        ctx.state::<T>().map(State).ok_or_else(|| {
            ErrorObject::internal(format!(
                "no state of type `{}` was registered with `ServerBuilder::state`",
                std::any::type_name::<T>()
            ))
        })
    }
}

impl FromContext for Meta {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(ctx.meta().clone())
    }
}

/// The verified identity of the caller, on a server with OAuth authorization (`None` without
/// one): subject, client, scopes and claims of its access token, never the token itself.
#[derive(Debug, Clone, Default)]
pub struct Identity(pub Option<Arc<AuthInfo>>);

impl Deref for Identity {
    type Target = Option<Arc<AuthInfo>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl FromContext for Identity {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(Identity(ctx.auth()))
    }
}

/// Over HTTP, the request's headers (without `Authorization` and `Cookie`); empty on other
/// transports.
#[cfg(feature = "http")]
#[derive(Debug, Clone, Default)]
pub struct Headers(pub axum::http::HeaderMap);

#[cfg(feature = "http")]
impl Deref for Headers {
    type Target = axum::http::HeaderMap;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

#[cfg(feature = "http")]
impl FromContext for Headers {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        Ok(Headers(ctx.headers().cloned().unwrap_or_default()))
    }
}

/// Over HTTP, a value a layer in front of the endpoint put in the request's extensions (as
/// axum's `Extension`). A request without one is answered with an internal error naming the
/// type; use [`Context::extension`] where it may be absent.
#[cfg(feature = "http")]
#[derive(Debug, Clone, Default)]
pub struct Extension<T>(pub T);

#[cfg(feature = "http")]
impl<T> Deref for Extension<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(feature = "http")]
impl<T: Clone + Send + Sync + 'static> FromContext for Extension<T> {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        ctx.extension::<T>().map(Extension).ok_or_else(|| {
            ErrorObject::internal(format!(
                "the request carries no extension of type `{}` (an HTTP layer in front of the endpoint sets it)",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// An extractor of the application's own: any type implementing [`FromContext`].
#[derive(Debug, Clone)]
pub struct Extract<T>(pub T);

impl<T> Deref for Extract<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: FromContext> FromContext for Extract<T> {
    fn from_context(ctx: &Context) -> Result<Self, ErrorObject> {
        T::from_context(ctx).map(Extract)
    }
}

/// Calls `$wire!` once per extractor type, as `$wire!([generics] Type)`: each kind of handler
/// (tools, prompts, resources) wires every extractor with one macro of its own.
macro_rules! for_each_extractor {
    ($wire:ident) => {
        $wire!([] $crate::handler::Context);
        $wire!([] $crate::handler::Meta);
        $wire!([] $crate::handler::Identity);
        $wire!([T: Send + Sync + 'static] $crate::handler::State<T>);
        $wire!([T: $crate::handler::FromContext] $crate::handler::Extract<T>);
        #[cfg(feature = "http")]
        $wire!([] $crate::handler::Headers);
        #[cfg(feature = "http")]
        $wire!([T: Clone + Send + Sync + 'static] $crate::handler::Extension<T>);
    };
}
pub(crate) use for_each_extractor;
