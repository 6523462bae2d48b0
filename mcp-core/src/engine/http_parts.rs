//! What an HTTP request carried besides its JSON-RPC message, for whatever serves it (kept
//! here, below the handlers and the transports that both use it).

/// What a request that came over HTTP carried besides its body: its headers (the
/// `Authorization` header left out: a verified identity is read with
/// `Context::auth`, never the token), the extensions that layers in
/// front of the endpoint set (see `handler::Extension`), and the client's address.
#[cfg(feature = "http")]
#[derive(Debug, Default)]
pub struct HttpRequestParts {
    pub(crate) headers: axum::http::HeaderMap,
    pub(crate) extensions: axum::http::Extensions,
    pub(crate) remote: Option<std::net::SocketAddr>,
}

#[cfg(feature = "http")]
impl HttpRequestParts {
    /// The parts of a request: `Authorization` (and `Cookie`, which may carry credentials too)
    /// are taken out of `headers`.
    pub(crate) fn new(
        mut headers: axum::http::HeaderMap,
        extensions: axum::http::Extensions,
        remote: Option<std::net::SocketAddr>,
    ) -> Self {
        headers.remove(axum::http::header::AUTHORIZATION);
        headers.remove(axum::http::header::COOKIE);
        HttpRequestParts { headers, extensions, remote }
    }

    /// The request's headers, without `Authorization` and `Cookie`.
    pub fn headers(&self) -> &axum::http::HeaderMap {
        &self.headers
    }

    /// What layers in front of the endpoint put in the request's extensions.
    pub fn extensions(&self) -> &axum::http::Extensions {
        &self.extensions
    }

    /// The address the connection came from.
    pub fn remote_address(&self) -> Option<std::net::SocketAddr> {
        self.remote
    }
}
