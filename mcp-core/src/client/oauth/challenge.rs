//! Reading a `WWW-Authenticate` header (RFC 9110 section 11.6.1) for its `Bearer` and `DPoP`
//! (RFC 9449 section 7.1) challenges.

/// The parameters of a `Bearer` challenge that the flow uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BearerChallenge {
    /// `resource_metadata` (RFC 9728 section 5.1).
    pub(crate) resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs.
    pub(crate) scope: Option<String>,
    /// `error` (`invalid_token`, `insufficient_scope`…).
    pub(crate) error: Option<String>,
}

/// Bounds what is read from a header a server controls.
const MAX_HEADER: usize = 8 * 1024;

/// The `Bearer` and `DPoP` challenges among those in `header` (several challenges may share
/// one header; a parameter found in both is taken from the first), or `None` when there are
/// none. Malformed text ends the parse with what was read so far.
pub(crate) fn parse(header: &str) -> Option<BearerChallenge> {
    if header.len() > MAX_HEADER {
        return None;
    }
    let mut parser = Parser { rest: header };
    let mut found: Option<BearerChallenge> = None;
    let mut in_bearer = false;
    loop {
        parser.skip_separators();
        if parser.rest.is_empty() {
            break;
        }
        let Some(token) = parser.token() else { break };
        parser.skip_spaces();
        if parser.rest.starts_with('=') {
            // An auth-param of the current challenge.
            parser.rest = &parser.rest[1..];
            parser.skip_spaces();
            let value = if parser.rest.starts_with('"') { parser.quoted() } else { parser.token().map(str::to_owned) };
            let Some(value) = value else { break };
            if in_bearer {
                let challenge = found.get_or_insert_with(BearerChallenge::default);
                let slot = match token.to_ascii_lowercase().as_str() {
                    "resource_metadata" => &mut challenge.resource_metadata,
                    "scope" => &mut challenge.scope,
                    "error" => &mut challenge.error,
                    _ => continue,
                };
                slot.get_or_insert(value);
            }
        } else {
            // A new challenge's scheme.
            in_bearer = token.eq_ignore_ascii_case("bearer") || token.eq_ignore_ascii_case("dpop");
            if in_bearer {
                found.get_or_insert_with(BearerChallenge::default);
            }
            // token68 (`Negotiate abc==`) is not a parameter list: skip it.
            parser.skip_spaces();
            parser.skip_token68();
        }
    }
    found
}

struct Parser<'a> {
    rest: &'a str,
}

impl<'a> Parser<'a> {
    fn skip_spaces(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t']);
    }

    fn skip_separators(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t', ',']);
    }

    /// Skips a token68 (RFC 9110 section 11.2) if that is what comes next: word characters,
    /// then `=` padding, then the end or a comma.
    fn skip_token68(&mut self) {
        let word =
            self.rest.find(|c: char| !(c.is_ascii_alphanumeric() || "-._~+/".contains(c))).unwrap_or(self.rest.len());
        if word == 0 {
            return;
        }
        let after = &self.rest[word..];
        let padded = after.trim_start_matches('=');
        let tail = padded.trim_start_matches([' ', '\t']);
        if tail.is_empty() || tail.starts_with(',') {
            self.rest = tail;
        }
    }

    /// A token (with the characters token68 adds, so `abc==` stays one word).
    fn token(&mut self) -> Option<&'a str> {
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~/:".contains(c)))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (token, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(token)
    }

    /// A quoted string, unescaped.
    fn quoted(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.rest[1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &self.rest[i + 2..];
                    return Some(out);
                }
                '\\' => out.push(chars.next()?.1),
                c => out.push(c),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = parse(r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp""#)
            .unwrap();
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://x/.well-known/oauth-protected-resource/mcp"));
    }

    #[test]
    fn finds_bearer_among_other_challenges() {
        let c = parse(r#"Basic realm="x", Bearer scope="s\"q", realm=r, DPoP algs="ES256", error="e""#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s\"q"));
        assert_eq!(c.error.as_deref(), Some("e"));
        let dpop = parse(r#"DPoP error="use_dpop_nonce", resource_metadata="http://x/m""#).unwrap();
        assert_eq!(dpop.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(dpop.resource_metadata.as_deref(), Some("http://x/m"));
        let token68 = parse("Negotiate abc==, Bearer error=invalid_token").unwrap();
        assert_eq!(token68.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn no_bearer_or_garbage_is_none_or_partial() {
        assert_eq!(parse("Basic realm=\"x\""), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("Bearer scope=\"unterminated"), Some(BearerChallenge::default()));
        assert_eq!(parse(&"x".repeat(MAX_HEADER + 1)), None);
        assert_eq!(parse("Bearer"), Some(BearerChallenge::default()));
    }
}
