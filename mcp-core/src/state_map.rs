//! The application's shared state, one value per type: what
//! [`ServerBuilder::state`](crate::server::ServerBuilder::state) registers and
//! [`Context::state`](crate::Context::state) and the `State<T>` argument read.
//!
//! A map keyed by type, like `http::Extensions`: the one place the crate keeps values whose
//! type only the application knows. It imports nothing of the crate.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Values of the application's own types, at most one per type.
#[derive(Default)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for StateMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateMap").field("values", &self.values.len()).finish()
    }
}

impl StateMap {
    /// Keeps `value` as the value of type `T`, in place of any before it.
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T`, if one was inserted.
    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        // Keyed by `T`'s id, so the value under it is a `T`.
        self.values.get(&TypeId::of::<T>())?.clone().downcast::<T>().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type_read_back_as_that_type() {
        let mut map = StateMap::default();
        assert!(map.get::<u32>().is_none());
        map.insert(Arc::new(7_u32));
        map.insert(Arc::new(String::from("a")));
        map.insert(Arc::new(8_u32));
        assert_eq!(map.get::<u32>().as_deref(), Some(&8));
        assert_eq!(map.get::<String>().as_deref().map(String::as_str), Some("a"));
        assert!(map.get::<u64>().is_none(), "another type of the same size is not found");
    }
}
