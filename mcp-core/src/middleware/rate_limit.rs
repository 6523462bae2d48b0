//! A token-bucket rate limiter, per caller.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use super::{Answer, Incoming, Middleware, Next};
use crate::protocol::ErrorObject;
use crate::protocol::methods::Method;

/// The JSON-RPC error code of a request refused by [`RateLimit`] (a server-defined code; the
/// error's `data.retryAfterMs` says when a request of the same caller will be accepted).
pub const RATE_LIMITED: i32 = -32029;

/// A function naming the bucket of a request.
pub type KeyFn = Arc<dyn Fn(&Incoming) -> Option<String> + Send + Sync>;

/// Whose requests share one bucket.
#[derive(Clone)]
pub enum RateLimitKey {
    /// The authenticated caller: the verified identity's subject, else the transport's
    /// principal. Anonymous requests: the client's address over HTTP (the socket's peer, or
    /// the one `RateLimit::client_address_header` (feature `http`) names behind a proxy), else the session
    /// (stdio, in-process); requests with none of these share one bucket. Opening a new
    /// session never gives a caller a fresh bucket, except where there is no address to key on.
    Caller,
    /// The 2025-era session (2026-era requests, which have no session, fall back to
    /// [`Caller`](Self::Caller)).
    Session,
    /// A key of the application's choosing; `None` lets the request through unlimited.
    Custom(KeyFn),
}

impl std::fmt::Debug for RateLimitKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RateLimitKey::Caller => f.write_str("Caller"),
            RateLimitKey::Session => f.write_str("Session"),
            RateLimitKey::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// Limits how many requests each caller makes: a token bucket per caller, holding up to
/// `burst` tokens and refilled at `rate` per `per`; a request takes one, and a request that
/// finds none is refused at once with [`RATE_LIMITED`] (never queued, so a caller over its
/// limit slows no one else).
///
/// ```
/// use std::time::Duration;
/// use typed_mcp::middleware::RateLimit;
/// use typed_mcp::protocol::methods::Method;
///
/// // 10 calls a second per caller, bursts of up to 20; lists and pings are not counted.
/// let limit = RateLimit::new(10, Duration::from_secs(1)).burst(20).only_methods([Method::ToolsCall]);
/// # let _ = limit;
/// ```
pub struct RateLimit {
    rate: f64,
    burst: f64,
    key: RateLimitKey,
    methods: Option<Vec<Method>>,
    #[cfg(feature = "http")]
    address_header: Option<axum::http::HeaderName>,
    buckets: Mutex<Buckets>,
    seed: foldhash::fast::RandomState,
}

impl std::fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("per_second", &self.rate)
            .field("burst", &self.burst)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

struct Buckets {
    /// By the caller's key, hashed (with a seed of this process: no caller can aim at
    /// another's bucket), so that counting a request allocates nothing.
    map: HashMap<u64, Bucket, foldhash::fast::RandomState>,
    /// When full buckets were last dropped.
    swept: Instant,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// How many buckets are kept before the full ones (callers idle long enough) are dropped.
const SWEEP_ABOVE: usize = 10_000;

impl RateLimit {
    /// `rate` requests per `per` for each caller, with bursts of up to `rate`.
    pub fn new(rate: u32, per: Duration) -> Self {
        let per = per.as_secs_f64().max(f64::MIN_POSITIVE);
        RateLimit {
            rate: f64::from(rate) / per,
            burst: f64::from(rate.max(1)),
            key: RateLimitKey::Caller,
            methods: None,
            #[cfg(feature = "http")]
            address_header: None,
            seed: foldhash::fast::RandomState::default(),
            buckets: Mutex::new(Buckets { map: HashMap::default(), swept: Instant::now() }),
        }
    }

    /// The most requests a caller may make at once after being idle (at least 1).
    pub fn burst(mut self, burst: u32) -> Self {
        self.burst = f64::from(burst.max(1));
        self
    }

    /// Whose requests share a bucket (default: [`RateLimitKey::Caller`]).
    pub fn key(mut self, key: RateLimitKey) -> Self {
        self.key = key;
        self
    }

    /// Counts only these methods (say [`Method::ToolsCall`]); others pass unlimited.
    pub fn only_methods(mut self, methods: impl IntoIterator<Item = Method>) -> Self {
        self.methods = Some(methods.into_iter().collect());
        self
    }

    /// Behind a load balancer or reverse proxy, reads an anonymous caller's address from
    /// `header` (such as `x-forwarded-for`): its last value, the address the proxy in front
    /// of the server appended. Without it every anonymous request behind a proxy comes from
    /// the proxy's address, and all of them share one bucket. Set it only when every request
    /// reaches the server through that proxy: a client that reaches it directly can write
    /// the header itself. A request without the header (or with a value that is not an IP
    /// address) is keyed on its socket's peer.
    #[cfg(feature = "http")]
    pub fn client_address_header(mut self, header: axum::http::HeaderName) -> Self {
        self.address_header = Some(header);
        self
    }

    /// The anonymous caller's address: the proxy's header, else the socket's peer.
    #[cfg(feature = "http")]
    fn client_address(&self, http: &crate::engine::HttpRequestParts) -> Option<std::net::IpAddr> {
        let forwarded = self.address_header.as_ref().and_then(|name| {
            let last = http.headers().get_all(name).iter().next_back()?.to_str().ok()?;
            last.rsplit(',').next()?.trim().parse().ok()
        });
        forwarded.or_else(|| http.remote_address().map(|a| a.ip()))
    }

    /// The hash of the key of `request`'s bucket; `None` when it goes unlimited.
    fn key_of(&self, request: &Incoming) -> Option<u64> {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut hasher = self.seed.build_hasher();
        let caller = |hasher: &mut foldhash::fast::FoldHasher<'_>| {
            if let Some(auth) = request.auth() {
                (0u8, auth.subject()).hash(hasher);
            } else if let Some(user) = request.principal() {
                (1u8, user).hash(hasher);
            } else {
                #[cfg(feature = "http")]
                if let Some(address) = request.http().and_then(|h| self.client_address(h)) {
                    (3u8, address).hash(hasher);
                    return;
                }
                match request.session() {
                    Some(session) => (2u8, session).hash(hasher),
                    None => 4u8.hash(hasher),
                }
            }
        };
        match &self.key {
            RateLimitKey::Caller => caller(&mut hasher),
            RateLimitKey::Session => match request.session() {
                Some(session) => (2u8, session).hash(&mut hasher),
                None => caller(&mut hasher),
            },
            RateLimitKey::Custom(f) => (5u8, f(request)?).hash(&mut hasher),
        }
        Some(hasher.finish())
    }

    /// Takes a token from `key`'s bucket; how long until one is there when none is.
    fn take(&self, key: u64, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.map.len() > SWEEP_ABOVE && now.duration_since(buckets.swept) > Duration::from_secs(1) {
            let (rate, burst) = (self.rate, self.burst);
            buckets.map.retain(|_, b| b.tokens + now.duration_since(b.at).as_secs_f64() * rate < burst);
            buckets.swept = now;
        }
        let bucket = buckets.map.entry(key).or_insert(Bucket { tokens: self.burst, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * self.rate).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = if self.rate > 0.0 { (1.0 - bucket.tokens) / self.rate } else { f64::MAX };
            Err(Duration::try_from_secs_f64(wait).unwrap_or(Duration::MAX))
        }
    }
}

impl Middleware for RateLimit {
    fn handle(&self, request: Incoming, next: Next) -> BoxFuture<'static, Answer> {
        let counted = self.methods.as_ref().is_none_or(|m| m.contains(&request.method_id()));
        let Some(key) = self.key_of(&request).filter(|_| counted) else { return next.run() };
        match self.take(key, Instant::now()) {
            Ok(()) => next.run(),
            Err(wait) => {
                let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
                let error =
                    ErrorObject::new(RATE_LIMITED, format!("rate limit exceeded: too many requests; retry in {ms} ms"))
                        .with_data(serde_json::json!({ "retryAfterMs": ms }));
                Box::pin(std::future::ready(Err(error)))
            }
        }
    }
}
