//! The servers alive in this process, by number: what lets a request's context hand its
//! handler the server serving it ([`Context::server_handle`]) while the context, a layer below
//! the server, holds nothing of the server's own type but its number.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use super::ServerInner;
use crate::handler::Context;

/// Every live server, weakly: the table keeps none of them alive.
static LIVE: LazyLock<Mutex<HashMap<u64, Weak<ServerInner>>>> = LazyLock::new(Mutex::default);

/// A server's number in the table of live servers; dropped with the server, which leaves the
/// table then.
#[derive(Debug)]
pub(crate) struct LiveNumber(u64);

impl LiveNumber {
    /// Enters `server` in the table.
    pub(crate) fn enter(server: Weak<ServerInner>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let number = NEXT.fetch_add(1, Ordering::Relaxed);
        LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(number, server);
        LiveNumber(number)
    }

    /// The number.
    pub(crate) fn get(&self) -> u64 {
        self.0
    }
}

impl Drop for LiveNumber {
    fn drop(&mut self) {
        LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.0);
    }
}

/// The live server numbered `number`.
fn server(number: u64) -> Option<Arc<ServerInner>> {
    LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&number)?.upgrade()
}

impl Context {
    /// A handle to the server serving this request, to change its lists or announce resource
    /// updates from inside a handler.
    pub fn server_handle(&self) -> super::Server {
        // The context's side holds its server, so the server is alive, and in the table.
        let inner = server(self.side().server_number()).expect("the server of a live context is in the table");
        super::Server { inner }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_leaves_the_table_when_dropped() {
        let server = crate::Server::builder("live", "1").build().unwrap();
        let number = server.inner.number.get();
        assert!(super::server(number).is_some_and(|s| Arc::ptr_eq(&s, &server.inner)));
        let other = crate::Server::builder("other", "1").build().unwrap();
        assert_ne!(other.inner.number.get(), number);
        drop(server);
        assert!(super::server(number).is_none(), "a dropped server is not found");
        assert!(super::server(other.inner.number.get()).is_some());
    }
}
