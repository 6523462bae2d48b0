//! `Host` and `Origin` checks against DNS rebinding.

use axum::http::{HeaderMap, header};

use super::HttpConfig;

/// The host of a `Host` header value or an origin's authority, without the port.
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.split_inclusive(']').next().unwrap_or(authority);
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(h, port)| if port.bytes().all(|b| b.is_ascii_digit()) { h } else { authority })
}

fn allowed(host: &str, list: &[String]) -> bool {
    list.iter().any(|h| h.eq_ignore_ascii_case(host))
}

/// Whether the request may be served; the reason when not.
pub(crate) fn check(config: &HttpConfig, headers: &HeaderMap) -> Result<(), String> {
    let Some(hosts) = &config.allowed_hosts else { return Ok(()) };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !allowed(host_of(host), hosts) {
        return Err(format!("Host `{host}` is not allowed (configure `HttpConfig::allowed_hosts`)"));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let ok = match &config.allowed_origins {
            Some(list) => list.iter().any(|o| o.eq_ignore_ascii_case(origin)),
            None => origin.split_once("://").is_some_and(|(scheme, authority)| {
                matches!(scheme, "http" | "https") && allowed(host_of(authority), hosts)
            }),
        };
        if !ok {
            return Err(format!("Origin `{origin}` is not allowed (configure `HttpConfig::allowed_origins`)"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
        }
        h
    }

    #[test]
    fn loopback_only_by_default() {
        let c = HttpConfig::default();
        assert!(check(&c, &headers("127.0.0.1:8080", None)).is_ok());
        assert!(check(&c, &headers("localhost", Some("http://localhost:3000"))).is_ok());
        assert!(check(&c, &headers("[::1]:9", None)).is_ok());
        assert!(check(&c, &headers("evil.example:8080", None)).is_err());
        assert!(check(&c, &headers("127.0.0.1:8080", Some("http://evil.example"))).is_err());
        assert!(check(&c.clone().disable_host_checks(), &headers("evil.example", Some("http://evil.example"))).is_ok());
        let c = HttpConfig::default().allowed_hosts(["api.example.com"]).allowed_origins(["https://app.example.com"]);
        assert!(check(&c, &headers("api.example.com", Some("https://app.example.com"))).is_ok());
        assert!(check(&c, &headers("api.example.com", Some("https://other.example.com"))).is_err());
    }
}
