//! The settings of the Streamable HTTP client transport, and the HTTP client they build.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::client::ClientError;
use crate::client::oauth::OAuth;

/// How long sending waits for the session's GET stream to open (its response headers) by default.
const STANDALONE_STREAM_WAIT: Duration = Duration::from_secs(5);

/// Settings of the Streamable HTTP client transport.
#[derive(Debug, Clone)]
pub struct HttpClientConfig {
    pub(super) client: Option<reqwest::Client>,
    #[cfg(feature = "rustls")]
    pub(super) roots: Option<crate::tls::RootCertificates>,
    pub(super) headers: HeaderMap,
    pub(super) standalone_stream: bool,
    pub(super) standalone_wait: Duration,
    pub(super) max_message_size: usize,
    pub(super) max_reconnects: u32,
    pub(super) default_retry: Duration,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        HttpClientConfig {
            client: None,
            #[cfg(feature = "rustls")]
            roots: None,
            headers: HeaderMap::new(),
            standalone_stream: true,
            standalone_wait: STANDALONE_STREAM_WAIT,
            max_message_size: crate::transport::DEFAULT_MAX_LINE,
            max_reconnects: 3,
            default_retry: Duration::from_secs(1),
        }
    }
}

impl HttpClientConfig {
    /// Sends `name: value` with every HTTP request (for example `Authorization`).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request: a token obtained
    /// elsewhere. Connecting fails when [`ClientBuilder::oauth`](crate::client::ClientBuilder::oauth)
    /// is also set, since the OAuth flow obtains the token and sends the header itself.
    pub fn bearer_token(self, token: &str) -> Result<Self, ClientError> {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ClientError::Transport("the token is not a valid header value".into()))?;
        Ok(self.header(reqwest::header::AUTHORIZATION, value))
    }

    /// Uses `client` for every HTTP request (its TLS, proxy and timeout settings). Connecting
    /// fails when `root_certificates` (feature `rustls`) are also set: add them to
    /// `client` instead.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Trusts `roots` for `https://` besides the platform's certificate store: the MCP server's
    /// and, unless [`OAuth`] is given other roots or a client of its own, the authorization
    /// server's certificates may be issued by them (feature `rustls`).
    #[cfg(feature = "rustls")]
    pub fn root_certificates(mut self, roots: crate::tls::RootCertificates) -> Self {
        self.roots = Some(roots);
        self
    }

    /// The HTTP client of the connection: the application's, or one of ours.
    pub(super) fn build_client(&self) -> Result<reqwest::Client, ClientError> {
        #[cfg(feature = "rustls")]
        if self.client.is_some() && self.roots.is_some() {
            return Err(ClientError::Transport(
                "root certificates are configured along with an HTTP client of the application's: \
                 add them to that client instead"
                    .into(),
            ));
        }
        if let Some(client) = &self.client {
            return Ok(client.clone());
        }
        #[cfg(feature = "rustls")]
        return new_client(self.roots.as_ref(), true);
        #[cfg(not(feature = "rustls"))]
        new_client(true)
    }
}

/// A client of ours, trusting `roots` besides the platform's roots; following redirects or not.
#[cfg(feature = "rustls")]
fn new_client(roots: Option<&crate::tls::RootCertificates>, redirects: bool) -> Result<reqwest::Client, ClientError> {
    let builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(10));
    build(builder, roots, redirects)
}

/// Builds `builder` into a client trusting `roots` besides the platform's roots; following
/// redirects or not.
#[cfg(feature = "rustls")]
fn build(
    builder: reqwest::ClientBuilder,
    roots: Option<&crate::tls::RootCertificates>,
    redirects: bool,
) -> Result<reqwest::Client, ClientError> {
    let builder = if redirects { builder } else { builder.redirect(reqwest::redirect::Policy::none()) };
    let builder = match roots {
        Some(roots) => roots.apply(builder),
        None => builder,
    };
    builder.build().map_err(|e| ClientError::Transport(format!("cannot build the HTTP client: {e}")))
}

/// A client of ours (plain HTTP); following redirects or not.
#[cfg(not(feature = "rustls"))]
fn new_client(redirects: bool) -> Result<reqwest::Client, ClientError> {
    build(reqwest::Client::builder().connect_timeout(Duration::from_secs(10)), redirects)
}

/// Builds `builder` into a client (plain HTTP); following redirects or not.
#[cfg(not(feature = "rustls"))]
fn build(builder: reqwest::ClientBuilder, redirects: bool) -> Result<reqwest::Client, ClientError> {
    let builder = if redirects { builder } else { builder.redirect(reqwest::redirect::Policy::none()) };
    builder.build().map_err(|e| ClientError::Transport(format!("cannot build the HTTP client: {e}")))
}

impl HttpClientConfig {
    /// The OAuth flow's own client for the MCP server at `server`, which follows no
    /// redirects, trusts the connection's roots and the flow's, and (for a public server)
    /// connects to no internal address a name resolves to: `None` when the application gave a
    /// client (to the flow or to the connection), which the flow then uses as it is.
    pub(super) fn oauth_client(
        &self,
        oauth: &OAuth,
        server: &reqwest::Url,
    ) -> Result<Option<reqwest::Client>, ClientError> {
        if let Some(client) = &oauth.http {
            return Ok(Some(client.clone()));
        }
        if self.client.is_some() {
            return Ok(None);
        }
        let mut builder = reqwest::Client::builder().connect_timeout(Duration::from_secs(10));
        if let Some(resolver) = crate::client::oauth::flow_resolver(server, oauth.allow_private) {
            builder = builder.dns_resolver(std::sync::Arc::new(resolver));
        }
        #[cfg(feature = "rustls")]
        {
            let roots = match (&self.roots, &oauth.roots) {
                (Some(mine), Some(extra)) => Some(mine.merged(extra)),
                (mine, extra) => mine.clone().or_else(|| extra.clone()),
            };
            build(builder, roots.as_ref(), false).map(Some)
        }
        #[cfg(not(feature = "rustls"))]
        build(builder, false).map(Some)
    }

    /// Whether to open the session's `GET` stream after initialization (default true).
    pub fn standalone_stream(mut self, open: bool) -> Self {
        self.standalone_stream = open;
        self
    }

    /// How long sending waits for the session's `GET` stream to open, after initialization,
    /// before it goes on (default 5 seconds). The stream is not given up then: its request
    /// stays open, and what the server sends there is read as soon as it answers.
    pub fn standalone_stream_wait(mut self, wait: Duration) -> Self {
        self.standalone_wait = wait;
        self
    }

    /// The largest accepted message from the server (default 4 MiB).
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1024);
        self
    }

    /// How many times in a row a stream is resumed, and how long to wait before resuming when
    /// the server gave no `retry:` (defaults: 3 times, 1 second).
    pub fn reconnect(mut self, max_attempts: u32, default_retry: Duration) -> Self {
        self.max_reconnects = max_attempts;
        self.default_retry = default_retry;
        self
    }
}
