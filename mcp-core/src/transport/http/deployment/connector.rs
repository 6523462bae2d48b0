//! The HTTP clients of the hop: plain `http://` always, and `https://` with feature `http-tls`
//! (rustls, trusting the platform's roots and [`Backplane::hop_roots`](super::Backplane)).

use std::time::Duration;

use axum::body::Body;
use axum::http::Uri;
use hyper_util::client::legacy::ResponseFuture;
use hyper_util::client::legacy::connect::HttpConnector;

/// How long an owner is given to accept a connection before it counts as gone.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

type Plain = hyper_util::client::legacy::Client<HttpConnector, Body>;
#[cfg(feature = "http-tls")]
type Tls = hyper_util::client::legacy::Client<hyper_rustls::HttpsConnector<HttpConnector>, Body>;

/// The hop's clients: one for `http://` owners and, when TLS could be set up, one for
/// `https://` owners. Connections are kept for 30 s, sent without Nagle's delay, and given a
/// second to open.
pub(crate) struct Hop {
    plain: Plain,
    #[cfg(feature = "http-tls")]
    tls: Option<Tls>,
}

/// The request could not be sent: the owner's scheme is one the hop does not speak.
pub(crate) struct Unspoken;

fn connector() -> HttpConnector {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.set_connect_timeout(Some(CONNECT_TIMEOUT));
    http
}

fn builder() -> hyper_util::client::legacy::Builder {
    let mut builder = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new());
    builder.pool_idle_timeout(Duration::from_secs(30));
    builder
}

impl Hop {
    /// The clients for `backplane`'s hop.
    pub(crate) fn new(backplane: &super::Backplane) -> Self {
        let _ = backplane;
        Hop {
            plain: builder().build(connector()),
            #[cfg(feature = "http-tls")]
            tls: Self::tls(backplane),
        }
    }

    #[cfg(feature = "http-tls")]
    fn tls(backplane: &super::Backplane) -> Option<Tls> {
        match crate::tls::client_config(backplane.hop_roots.as_ref()) {
            Ok(config) => {
                let mut http = connector();
                http.enforce_http(false);
                let https = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(config)
                    .https_only()
                    .enable_http1()
                    .wrap_connector(http);
                Some(builder().build(https))
            }
            Err(e) => {
                tracing::error!(
                    error = %e,
                    "the hop cannot speak https:// (no certificate roots to trust): owners at https:// addresses \
                     will be answered 503; give the deployment's CA with Backplane::hop_roots"
                );
                None
            }
        }
    }

    /// Sends `request` on the client for its URI's scheme.
    pub(crate) fn request(&self, request: axum::http::Request<Body>) -> Result<ResponseFuture, Unspoken> {
        match request.uri().scheme_str() {
            Some("http") => Ok(self.plain.request(request)),
            #[cfg(feature = "http-tls")]
            Some("https") => self.tls.as_ref().map(|tls| tls.request(request)).ok_or(Unspoken),
            _ => Err(Unspoken),
        }
    }

    /// Whether the hop speaks the scheme of `uri`.
    pub(crate) fn speaks(&self, uri: &Uri) -> bool {
        match uri.scheme_str() {
            Some("http") => true,
            #[cfg(feature = "http-tls")]
            Some("https") => self.tls.is_some(),
            _ => false,
        }
    }
}

/// What the hop speaks, for messages.
pub(crate) const SCHEMES: &str =
    if cfg!(feature = "http-tls") { "http:// or, with certificate roots, https://" } else { "plain http:// only" };

/// Why a request over the hop failed, when it failed in TLS (the owner's certificate not
/// trusted, an owner not speaking TLS at its `https://` address): the owner's host answered, so
/// the owner is not to be taken for gone.
pub(crate) fn tls_failure(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    #[cfg(feature = "http-tls")]
    {
        crate::tls::tls_failure(error)
    }
    #[cfg(not(feature = "http-tls"))]
    {
        let _ = error;
        None
    }
}
