//! Shared application state, as a handler receives it.

use std::ops::Deref;
use std::sync::Arc;

/// Shared application state registered with
/// [`ServerBuilder::state`](crate::server::ServerBuilder::state), injected into tools that take
/// a `State<T>` argument.
#[derive(Debug)]
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
