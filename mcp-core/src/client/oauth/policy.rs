//! Where the flow may send a request, and to which authorization server it may show its
//! credentials.
//!
//! Every URL the flow contacts comes from somewhere: the MCP server's challenge and metadata,
//! the authorization server's metadata, or the application. Before a request leaves:
//!
//! - the URL must be `https://`; plain `http://` only to a loopback address (`localhost`,
//!   `127.0.0.0/8`, `::1`), for development;
//! - a URL that names a loopback, private (RFC 1918, `fc00::/7`), link-local (such as the cloud
//!   metadata address `169.254.169.254`), shared (`100.64.0.0/10`), unspecified, broadcast or
//!   multicast address is refused when the MCP server itself is on a public address: a public
//!   server cannot turn the client against the machines of its own network. When the MCP
//!   server is on such an address itself (an internal deployment, a test), so may its
//!   authorization server be. [`OAuth::allow_private_addresses`](super::OAuth::allow_private_addresses)
//!   lifts the rule. The flow's own HTTP client applies the same rule to what host names
//!   resolve to ([`PublicOnly`]), so a name that points inside is refused too; a client the
//!   application gives is used as it is;
//! - URLs the application gave itself (the identity provider's token endpoint of
//!   [`EnterpriseAuthorization`](super::EnterpriseAuthorization)) are held to the first rule only.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::OAuthError;

/// What a URL's host is: an address, or a name.
enum Host {
    Address(IpAddr),
    Name(String),
}

fn host(url: &Url) -> Option<Host> {
    let text = url.host_str()?;
    let bare = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
    Some(match bare.parse::<IpAddr>() {
        Ok(ip) => Host::Address(ip),
        Err(_) => Host::Name(text.trim_end_matches('.').to_ascii_lowercase()),
    })
}

/// Whether the URL's host is a name or address of this machine.
fn is_loopback_host(url: &Url) -> bool {
    match host(url) {
        Some(Host::Name(name)) => name == "localhost" || name.ends_with(".localhost"),
        Some(Host::Address(IpAddr::V4(ip))) => ip.is_loopback(),
        Some(Host::Address(IpAddr::V6(ip))) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => false,
    }
}

/// Whether `url` names this machine or an address of a private network (written as an
/// address, or as `localhost`).
pub(super) fn is_internal(url: &Url) -> bool {
    match host(url) {
        Some(Host::Address(ip)) => internal(ip),
        Some(Host::Name(_)) => is_loopback_host(url),
        None => true,
    }
}

fn internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => internal_v6(v6),
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || (a == 100 && (64..128).contains(&b))
        || a == 0
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return internal_v4(v4);
    }
    let first = ip.segments()[0];
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
}

/// The resolver of the flow's own HTTP client when internal addresses are refused: the
/// system's answer for a name, without its internal addresses; a name with only internal ones
/// fails with [`ResolvedInside`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct PublicOnly;

/// Why a name could not be used: it resolves only to internal addresses.
#[derive(Debug, thiserror::Error)]
#[error("{0} resolves only to loopback, private or link-local addresses")]
pub(super) struct ResolvedInside(String);

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = found.into_iter().filter(|a| !internal(a.ip())).collect();
            if public.is_empty() {
                return Err(Box::new(ResolvedInside(host)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// The resolver the flow's own client needs for the MCP server at `server`: `None` when
/// internal addresses are allowed (the server is on one, or the application said so).
pub(crate) fn resolver(server: &Url, allow_private: bool) -> Option<PublicOnly> {
    (!UrlPolicy::new(server, allow_private).internal_ok).then_some(PublicOnly)
}

/// Whether `error` (a failed request) failed because its host resolves only inside.
pub(super) fn resolved_inside(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if e.is::<ResolvedInside>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// The rules for the URLs of one connection's flow.
#[derive(Debug, Clone, Copy)]
pub(super) struct UrlPolicy {
    /// Internal addresses may be contacted (the MCP server is on one, or the application
    /// allows it).
    pub(super) internal_ok: bool,
}

impl UrlPolicy {
    /// The policy for a flow on behalf of the MCP server at `server`.
    pub(super) fn new(server: &Url, allow_private: bool) -> Self {
        UrlPolicy { internal_ok: allow_private || is_internal(server) }
    }

    /// Parses `url` and checks it may be contacted: `https://` (or `http://` to loopback),
    /// and not internal unless allowed.
    pub(super) fn check(&self, url: &str) -> Result<Url, OAuthError> {
        let parsed = parse(url)?;
        check_scheme(&parsed)?;
        if !self.internal_ok && is_internal(&parsed) {
            return Err(OAuthError::PrivateAddress { url: url.to_owned() });
        }
        Ok(parsed)
    }
}

/// Parses a URL the application configured and checks its scheme only.
pub(super) fn check_configured(url: &str) -> Result<Url, OAuthError> {
    let parsed = parse(url)?;
    check_scheme(&parsed)?;
    Ok(parsed)
}

fn parse(url: &str) -> Result<Url, OAuthError> {
    let parsed = Url::parse(url).map_err(|e| OAuthError::InvalidUrl { url: url.to_owned(), reason: e.to_string() })?;
    if parsed.host().is_none() {
        return Err(OAuthError::InvalidUrl { url: url.to_owned(), reason: "no host".into() });
    }
    Ok(parsed)
}

fn check_scheme(url: &Url) -> Result<(), OAuthError> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback_host(url) => Ok(()),
        _ => Err(OAuthError::InsecureUrl { url: url.to_string() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn https_everywhere_plain_http_only_to_loopback() {
        let public = UrlPolicy::new(&url("https://mcp.example.com/mcp"), false);
        assert!(public.check("https://auth.example.com/token").is_ok());
        for insecure in ["http://auth.example.com/token", "ftp://auth.example.com/", "file:///etc/passwd"] {
            assert!(
                matches!(
                    public.check(insecure),
                    Err(OAuthError::InsecureUrl { .. }) | Err(OAuthError::InvalidUrl { .. })
                ),
                "{insecure}"
            );
        }
        let local = UrlPolicy::new(&url("http://127.0.0.1:3000/mcp"), false);
        for ok in ["http://127.0.0.1:9000/token", "http://localhost:9000/", "http://[::1]:9/", "http://a.localhost/"] {
            assert!(local.check(ok).is_ok(), "{ok}");
        }
        assert!(matches!(local.check("http://10.0.0.5/token"), Err(OAuthError::InsecureUrl { .. })));
        assert!(check_configured("http://idp.example.com/token").is_err());
        assert!(check_configured("http://localhost:8080/token").is_ok());
    }

    #[tokio::test]
    async fn names_that_resolve_inside_are_refused_by_the_flows_resolver() {
        assert!(resolver(&url("https://10.0.0.4/mcp"), false).is_none());
        assert!(resolver(&url("https://mcp.example.com/mcp"), true).is_none());
        let resolver = resolver(&url("https://mcp.example.com/mcp"), false).expect("a public server");
        let refused = resolver.resolve("localhost".parse().unwrap()).await.err().expect("localhost is inside");
        assert!(resolved_inside(refused.as_ref()), "{refused}");
        // Through a client, as the flow sends its requests: the error says why.
        let client = reqwest::Client::builder().dns_resolver(std::sync::Arc::new(resolver)).build().unwrap();
        let error = client.get("http://localhost:9/").send().await.unwrap_err();
        assert!(resolved_inside(&error), "{error:?}");
    }

    #[test]
    fn a_public_server_cannot_point_the_client_inside() {
        let public = UrlPolicy::new(&url("https://mcp.example.com/mcp"), false);
        for inside in [
            "https://169.254.169.254/latest/meta-data/",
            "https://10.1.2.3/token",
            "https://192.168.1.1/",
            "https://172.16.0.1/",
            "https://100.64.0.1/",
            "https://0.0.0.0/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://[::ffff:10.0.0.1]/",
            "http://127.0.0.1:8080/admin",
            "http://localhost:6379/",
        ] {
            assert!(matches!(public.check(inside), Err(OAuthError::PrivateAddress { .. })), "{inside}");
        }
        // Allowed by the application, or by a server that is inside itself.
        assert!(UrlPolicy::new(&url("https://mcp.example.com/mcp"), true).check("https://10.1.2.3/token").is_ok());
        assert!(UrlPolicy::new(&url("https://10.0.0.4/mcp"), false).check("https://10.1.2.3/token").is_ok());
        assert!(!internal("8.8.8.8".parse().unwrap()));
        assert!(!internal("2001:4860::8888".parse().unwrap()));
        assert!(internal("100.127.255.255".parse().unwrap()));
        assert!(!internal("100.128.0.1".parse().unwrap()));
    }
}
