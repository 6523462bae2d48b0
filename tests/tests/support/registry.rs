//! A session registry that delegates to a real one (Redis) and can be made late or lapsed at
//! chosen points, to drive the deployment through the races a loaded host produces.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use typed_mcp::engine::BoxFuture;
use typed_mcp::transport::http::{BackplaneError, Owner, SessionRegistry};

/// What [`Hooked`] does besides delegating; shared by the registry and its heartbeat's copy.
#[derive(Default)]
pub struct Hooks {
    /// The first beat reaches the store this late (a busy host connecting at start).
    pub first_beat_late: Option<Duration>,
    /// Every release reaches the store this late (a loaded Redis).
    pub release_late: Option<Duration>,
    /// Set: the next beat reports the instance's announcement lapsed (as if its beats had not
    /// reached the store for a lease), so the instance records its sessions again.
    pub lapse_next_beat: AtomicBool,
    /// Set: a session being recorded again waits for [`go_on`](Self::go_on) after telling
    /// [`reclaiming`](Self::reclaiming).
    pub hold_reclaim: AtomicBool,
    /// Told when a held reclaim has started.
    pub reclaiming: Notify,
    /// Lets a held reclaim go on.
    pub go_on: Notify,
    /// Whether the first beat was made.
    pub beaten: AtomicBool,
}

/// A registry that delegates to `inner`, with [`Hooks`].
#[derive(Clone)]
pub struct Hooked {
    pub inner: Arc<dyn SessionRegistry>,
    pub hooks: Arc<Hooks>,
}

impl Hooked {
    /// `inner` with `hooks`.
    pub fn new(inner: impl SessionRegistry + 'static, hooks: Hooks) -> Self {
        Hooked { inner: Arc::new(inner), hooks: Arc::new(hooks) }
    }
}

impl SessionRegistry for Hooked {
    fn heartbeat<'a>(
        &'a self,
        instance: &'a str,
        address: &'a str,
        lease: Duration,
        active: &'a [String],
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, BackplaneError>> {
        Box::pin(async move {
            if let Some(late) = self.hooks.first_beat_late
                && !self.hooks.beaten.swap(true, Ordering::SeqCst)
            {
                tokio::time::sleep(late).await;
            }
            let known = self.inner.heartbeat(instance, address, lease, active, session_ttl).await?;
            Ok(known && !self.hooks.lapse_next_beat.swap(false, Ordering::SeqCst))
        })
    }

    fn reclaim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<bool, BackplaneError>> {
        Box::pin(async move {
            if self.hooks.hold_reclaim.swap(false, Ordering::SeqCst) {
                self.hooks.reclaiming.notify_one();
                self.hooks.go_on.notified().await;
            }
            self.inner.reclaim(session, instance, state, session_ttl).await
        })
    }

    fn claim<'a>(
        &'a self,
        session: &'a str,
        instance: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<(), BackplaneError>> {
        self.inner.claim(session, instance, state, session_ttl)
    }

    fn save_state<'a>(
        &'a self,
        session: &'a str,
        state: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<(), BackplaneError>> {
        self.inner.save_state(session, state, session_ttl)
    }

    fn take_over<'a>(
        &'a self,
        session: &'a str,
        gone: &'a str,
        instance: &'a str,
        session_ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        self.inner.take_over(session, gone, instance, session_ttl)
    }

    fn owner<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<Owner>, BackplaneError>> {
        self.inner.owner(session)
    }

    fn state<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        self.inner.state(session)
    }

    fn release<'a>(&'a self, session: &'a str, instance: &'a str) -> BoxFuture<'a, Result<(), BackplaneError>> {
        Box::pin(async move {
            if let Some(late) = self.hooks.release_late {
                tokio::time::sleep(late).await;
            }
            self.inner.release(session, instance).await
        })
    }

    fn leave<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<(), BackplaneError>> {
        self.inner.leave(instance)
    }

    fn address_of<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<Option<String>, BackplaneError>> {
        self.inner.address_of(instance)
    }

    fn for_heartbeat(&self) -> Option<Arc<dyn SessionRegistry>> {
        Some(Arc::new(Hooked {
            inner: self.inner.for_heartbeat().unwrap_or_else(|| self.inner.clone()),
            hooks: self.hooks.clone(),
        }))
    }
}
