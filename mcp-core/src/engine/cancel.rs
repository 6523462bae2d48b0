//! The cancellation state of one incoming request.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering, fence};

use tokio_util::sync::CancellationToken;

/// Whether an incoming request was cancelled: by the peer (`notifications/cancelled`), or by
/// the end of its session.
///
/// Every request gets one, and most requests finish without ever looking at it, so it is
/// built to cost little: cloning and dropping it are single atomic operations, and
/// [`is_cancelled`](Self::is_cancelled) is one atomic load. A [`CancellationToken`] (to await,
/// to pass to [`RequestOptions`](super::RequestOptions), to make child tokens from) is created
/// the first time [`token`](Self::token) asks for one, and is cancelled with the request.
#[derive(Debug, Clone, Default)]
pub struct Cancellation(Arc<State>);

#[derive(Debug, Default)]
struct State {
    cancelled: AtomicBool,
    token: OnceLock<CancellationToken>,
}

thread_local! {
    /// The state of a request answered on this thread whose cancellation nobody else held any
    /// more: the next request's, instead of a new allocation (see [`Cancellation::recycle`]).
    static SPARE: std::cell::Cell<Option<Arc<State>>> = const { std::cell::Cell::new(None) };
}

impl Cancellation {
    /// A request not cancelled (yet).
    pub fn new() -> Self {
        SPARE.take().map_or_else(Self::default, Cancellation)
    }

    /// Keeps this request's state for the next [`new`](Self::new) on this thread, as new, if no
    /// other handle to it is left (it is dropped otherwise). For the engine, once a request is
    /// answered.
    pub(crate) fn recycle(mut self) {
        if let Some(state) = Arc::get_mut(&mut self.0) {
            *state = State::default();
            SPARE.set(Some(self.0));
        }
    }

    /// For a request answered: cancels it if anything else still holds it (a task its handler
    /// left running is told that the request is over), else keeps it for the next request on
    /// this thread (see [`recycle`](Self::recycle)).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn end(self) {
        if Arc::strong_count(&self.0) == 1 {
            self.recycle();
        } else {
            self.cancel();
        }
    }

    /// Cancels the request. Calling it again does nothing.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        // Paired with the fence in `token`: either that sees the flag, or this sees the token.
        fence(Ordering::SeqCst);
        if let Some(token) = self.0.token.get() {
            token.cancel();
        }
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
    }

    /// A token cancelled with the request (already cancelled if the request is).
    pub fn token(&self) -> &CancellationToken {
        let token = self.0.token.get_or_init(CancellationToken::new);
        fence(Ordering::SeqCst);
        if self.0.cancelled.load(Ordering::SeqCst) {
            token.cancel();
        }
        token
    }

    /// Completes when the request is cancelled.
    pub async fn cancelled(&self) {
        if self.is_cancelled() {
            return;
        }
        self.token().cancelled().await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_token_asked_for_before_or_after_cancelling_is_cancelled() {
        let early = Cancellation::new();
        let token = early.token().clone();
        assert!(!token.is_cancelled() && !early.is_cancelled());
        early.clone().cancel();
        assert!(token.is_cancelled() && early.is_cancelled());

        let late = Cancellation::new();
        late.cancel();
        late.cancel();
        assert!(late.is_cancelled());
        assert!(late.token().is_cancelled());
    }

    #[test]
    fn a_recycled_state_comes_back_new_and_a_shared_one_is_never_recycled() {
        let first = Cancellation::new();
        let _ = first.token();
        first.cancel();
        let kept = Arc::as_ptr(&first.0);
        first.recycle();
        let second = Cancellation::new();
        assert_eq!(Arc::as_ptr(&second.0), kept, "the state was not reused");
        assert!(!second.is_cancelled() && !second.token().is_cancelled(), "a reused state must be new");

        // Still held elsewhere (a task the handler left behind, say): not reused.
        let held = second.clone();
        second.recycle();
        let third = Cancellation::new();
        assert_ne!(Arc::as_ptr(&third.0), Arc::as_ptr(&held.0));
        held.cancel();
        assert!(!third.is_cancelled());
    }

    #[tokio::test]
    async fn cancelled_completes_when_another_task_cancels() {
        let c = Cancellation::new();
        let waiter = tokio::spawn({
            let c = c.clone();
            async move { c.cancelled().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiter.is_finished());
        c.cancel();
        tokio::time::timeout(Duration::from_secs(5), waiter).await.expect("woken").expect("no panic");
    }

    #[test]
    fn a_token_and_a_cancel_racing_on_two_threads_always_agree() {
        for _ in 0..2_000 {
            let c = Cancellation::new();
            let other = c.clone();
            let asker = std::thread::spawn(move || other.token().clone());
            c.cancel();
            let token = asker.join().expect("no panic");
            assert!(token.is_cancelled());
        }
    }
}
