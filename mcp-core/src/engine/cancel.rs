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

impl Cancellation {
    /// A request not cancelled (yet).
    pub fn new() -> Self {
        Self::default()
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
