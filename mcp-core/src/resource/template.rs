//! RFC 6570 URI templates, for matching URIs: `{var}` (level 1), `{+var}` and `{#var}`
//! (level 2), and `{.var}`, `{/var}`, `{?a,b}`, `{&a,b}` (level 3, one variable per expression
//! except in query expressions). Prefix (`:n`) and explode (`*`) modifiers are not supported.

use std::collections::HashMap;
use std::fmt;

/// Why a URI template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template `{template}`: {reason}")]
pub struct UriTemplateError {
    /// The template.
    pub template: String,
    /// What is wrong with it.
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    Query,
    QueryMore,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr(Op, Vec<String>),
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// The longest URI matched against a template (matching takes memory proportional to the URI's
/// length times the template's parts).
pub const MAX_MATCHED_URI: usize = 16 * 1024;

fn is_reserved(c: char) -> bool {
    matches!(
        c,
        ':' | '/' | '?' | '#' | '[' | ']' | '@' | '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '='
    )
}

impl UriTemplate {
    /// Parses a template.
    pub fn parse(template: &str) -> Result<Self, UriTemplateError> {
        let fail = |reason: String| UriTemplateError { template: template.to_owned(), reason };
        let mut parts = Vec::new();
        let mut rest = template;
        let mut seen: Vec<String> = Vec::new();
        while !rest.is_empty() {
            let Some(open) = rest.find(['{', '}']) else {
                parts.push(Part::Literal(rest.to_owned()));
                break;
            };
            if rest[open..].starts_with('}') {
                return Err(fail("`}` without a matching `{`".into()));
            }
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let after = &rest[open + 1..];
            let close = after.find('}').ok_or_else(|| fail("`{` without a matching `}`".into()))?;
            let body = &after[..close];
            rest = &after[close + 1..];
            let (op, names) = match body.chars().next() {
                Some('+') => (Op::Reserved, &body[1..]),
                Some('#') => (Op::Fragment, &body[1..]),
                Some('.') => (Op::Label, &body[1..]),
                Some('/') => (Op::Path, &body[1..]),
                Some('?') => (Op::Query, &body[1..]),
                Some('&') => (Op::QueryMore, &body[1..]),
                Some(c @ (';' | '=' | ',' | '!' | '@' | '|')) => {
                    return Err(fail(format!("the `{c}` operator in `{{{body}}}` is not supported")));
                }
                _ => (Op::Simple, body),
            };
            let vars: Vec<String> = names.split(',').map(str::to_owned).collect();
            for var in &vars {
                if var.ends_with('*') || var.contains(':') {
                    return Err(fail(format!(
                        "`{{{body}}}`: prefix (`:n`) and explode (`*`) modifiers are not supported"
                    )));
                }
                if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    return Err(fail(format!(
                        "`{{{body}}}`: variable names use ASCII letters, digits, `_` and `.`, and cannot be empty"
                    )));
                }
                if seen.contains(var) {
                    return Err(fail(format!("variable `{var}` appears twice")));
                }
                seen.push(var.clone());
            }
            if vars.len() > 1 && !matches!(op, Op::Query | Op::QueryMore) {
                return Err(fail(format!(
                    "`{{{body}}}`: only query expressions (`{{?a,b}}`, `{{&a,b}}`) may hold several variables"
                )));
            }
            if let (Some(Part::Expr(_, _)), true) = (parts.last(), matches!(op, Op::Simple | Op::Reserved)) {
                return Err(fail(format!(
                    "`{{{body}}}` directly follows another expression, so a URI cannot be split between them; put a literal between"
                )));
            }
            parts.push(Part::Expr(op, vars));
        }
        Ok(UriTemplate { source: template.to_owned(), parts })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|p| match p {
                Part::Expr(_, vars) => vars.as_slice(),
                Part::Literal(_) => &[],
            })
            .map(String::as_str)
    }

    /// Whether the template has no variables (it names one URI).
    pub fn is_literal(&self) -> bool {
        self.variables().next().is_none()
    }

    /// The variables of `uri` if it matches, percent-decoded. Variables of `{?…}`, `{&…}`,
    /// `{#…}`, `{/…}` and `{.…}` expressions that the URI leaves out are absent from the map.
    /// A URI longer than [`MAX_MATCHED_URI`] bytes matches no template.
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        if uri.len() > MAX_MATCHED_URI {
            return None;
        }
        self.match_uri(uri)
    }
}

/// Whether byte `c` may appear in the value of an expression with operator `op` (non-ASCII
/// bytes only where any character may).
fn allowed(op: Op, c: u8) -> bool {
    let unreserved = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~' | b'%');
    match op {
        Op::Simple | Op::Label => unreserved,
        Op::Reserved => c != b'#',
        Op::Fragment => true,
        Op::Path => (unreserved || (c.is_ascii() && is_reserved(char::from(c)))) && !matches!(c, b'/' | b'?' | b'#'),
        Op::Query | Op::QueryMore => false,
    }
}

fn prefix(op: Op) -> Option<u8> {
    match op {
        Op::Fragment => Some(b'#'),
        Op::Label => Some(b'.'),
        Op::Path => Some(b'/'),
        _ => None,
    }
}

/// Whether `query` (from the expression's position up to `#` or the end) is what a query
/// expression over `names` can produce: empty, or `lead` then `name=value` pairs joined by `&`,
/// each name one of `names` and given once.
fn query_ok(query: &[u8], lead: u8, names: &[String]) -> bool {
    let Some((&first, pairs)) = query.split_first() else {
        return true;
    };
    let mut seen: Vec<&[u8]> = Vec::new();
    first == lead
        && pairs.split(|&c| c == b'&').all(|pair| {
            let key = pair.split(|&c| c == b'=').next().unwrap_or_default();
            let fresh = !seen.contains(&key);
            seen.push(key);
            fresh && names.iter().any(|n| n.as_bytes() == key)
        })
}

impl UriTemplate {
    /// Matches in time linear in the URI (times the number of parts): `can[p][i]` says whether
    /// the parts from `p` on match the URI from byte `i` on, computed from the last part back;
    /// then the values are read front to back, each one as short as the rest allows.
    fn match_uri(&self, uri: &str) -> Option<HashMap<String, String>> {
        let b = uri.as_bytes();
        let n = b.len();
        let k = self.parts.len();
        let mut next_hash = vec![n; n + 1];
        for i in (0..n).rev() {
            next_hash[i] = if b[i] == b'#' { i } else { next_hash[i + 1] };
        }
        let mut can = vec![vec![false; n + 1]; k + 1];
        can[k][n] = true;
        // next[p][i]: the first e >= i where the parts from p on match.
        let mut next = vec![vec![usize::MAX; n + 2]; k + 1];
        let fill = |can: &[bool], next: &mut [usize]| {
            for i in (0..=n).rev() {
                next[i] = if can[i] { i } else { next[i + 1] };
            }
        };
        fill(&can[k], &mut next[k]);
        // run[p][i]: where the run of bytes allowed in part p's value, starting at i, ends.
        let mut runs: Vec<Vec<usize>> = vec![Vec::new(); k];
        for p in (0..k).rev() {
            match &self.parts[p] {
                Part::Literal(lit) => {
                    let lit = lit.as_bytes();
                    for i in 0..=n {
                        can[p][i] = b[i..].starts_with(lit) && can[p + 1][i + lit.len()];
                    }
                }
                Part::Expr(op @ (Op::Query | Op::QueryMore), names) => {
                    let lead = if *op == Op::Query { b'?' } else { b'&' };
                    for i in 0..=n {
                        let j = next_hash[i];
                        can[p][i] = can[p + 1][j] && query_ok(&b[i..j], lead, names);
                    }
                }
                Part::Expr(op, _) => {
                    let mut run = vec![n; n + 1];
                    for i in (0..n).rev() {
                        run[i] = if allowed(*op, b[i]) { run[i + 1] } else { i };
                    }
                    for i in 0..=n {
                        let start = match prefix(*op) {
                            Some(c) => (i < n && b[i] == c).then_some(i + 1),
                            None => Some(i),
                        };
                        let included = start.is_some_and(|s| s < n && next[p + 1][s + 1] <= run[s]);
                        can[p][i] = included || (prefix(*op).is_some() && can[p + 1][i]);
                    }
                    runs[p] = run;
                }
            }
            fill(&can[p], &mut next[p]);
        }
        if !can[0][0] {
            return None;
        }
        let mut vars = HashMap::new();
        let mut pos = 0;
        for (p, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(lit) => pos += lit.len(),
                Part::Expr(Op::Query | Op::QueryMore, _) => {
                    let j = next_hash[pos];
                    let query = uri.get(pos..j)?;
                    if let Some(pairs) = query.get(1..).filter(|_| !query.is_empty()) {
                        for pair in pairs.split('&') {
                            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                            vars.insert(key.to_owned(), decode(value)?);
                        }
                    }
                    pos = j;
                }
                Part::Expr(op, names) => {
                    let start = match prefix(*op) {
                        Some(c) => (pos < n && b[pos] == c).then_some(pos + 1),
                        None => Some(pos),
                    };
                    let end = start.and_then(|s| {
                        let e = *next[p + 1].get(s + 1)?;
                        (s < n && e <= runs[p][s]).then_some((s, e))
                    });
                    if let Some((s, e)) = end {
                        vars.insert(names[0].clone(), decode(uri.get(s..e)?)?);
                        pos = e;
                    }
                }
            }
        }
        Some(vars)
    }
}

/// Percent-decodes `text`; `None` when an escape is malformed or the bytes are not UTF-8.
fn decode(text: &str) -> Option<String> {
    // `percent-encoding` keeps a malformed escape as it is; a URI holding one matches nothing.
    let well_formed = text
        .split('%')
        .skip(1)
        .all(|after| after.as_bytes().get(..2).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)));
    if !well_formed {
        return None;
    }
    percent_encoding::percent_decode_str(text).decode_utf8().ok().map(std::borrow::Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let mut v: Vec<_> = UriTemplate::parse(template).unwrap().matches(uri)?.into_iter().collect();
        v.sort();
        Some(v)
    }

    fn pairs(p: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(p.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect())
    }

    #[test]
    fn level_one() {
        assert_eq!(vars("test://template/{id}/data", "test://template/42/data"), pairs(&[("id", "42")]));
        assert_eq!(vars("test://template/{id}/data", "test://template/a%20b/data"), pairs(&[("id", "a b")]));
        assert_eq!(vars("test://template/{id}/data", "test://template/4/2/data"), None);
        assert_eq!(vars("test://template/{id}/data", "test://template/42/datum"), None);
        assert_eq!(vars("users://{org}/{user}", "users://acme/bob"), pairs(&[("org", "acme"), ("user", "bob")]));
        assert_eq!(vars("test://static", "test://static"), pairs(&[]));
        assert_eq!(vars("x://{a}", "x://%zz"), None);
    }

    #[test]
    fn higher_levels() {
        assert_eq!(vars("file:///{+path}", "file:///src/main.rs"), pairs(&[("path", "src/main.rs")]));
        assert_eq!(vars("doc://{id}{#section}", "doc://7#intro"), pairs(&[("id", "7"), ("section", "intro")]));
        assert_eq!(vars("doc://{id}{#section}", "doc://7"), pairs(&[("id", "7")]));
        assert_eq!(vars("repo://x{/branch}", "repo://x/main"), pairs(&[("branch", "main")]));
        assert_eq!(
            vars("search://q{?term,page}", "search://q?term=rust&page=2"),
            pairs(&[("page", "2"), ("term", "rust")])
        );
        assert_eq!(vars("search://q{?term,page}", "search://q"), pairs(&[]));
        assert_eq!(vars("search://q{?term}", "search://q?other=1"), None);
        assert_eq!(vars("img://{name}{.ext}", "img://cat.png"), pairs(&[("ext", "png"), ("name", "cat")]));
        assert_eq!(vars("img://{name}{.ext}", "img://cat"), pairs(&[("name", "cat")]));
        assert_eq!(vars("search://q{?term}", "search://q?term=a%20b"), pairs(&[("term", "a b")]));
        assert_eq!(vars("search://q{?term}", "search://q?term=1&term=2"), None);
        assert_eq!(vars("files:///{+path}", "files:///\u{fc}ber/x"), pairs(&[("path", "\u{fc}ber/x")]));
        assert_eq!(vars("test://{id}", "test://\u{fc}"), None);
        assert_eq!(vars("test://{id}", "test://%C3%BC"), pairs(&[("id", "\u{fc}")]));
        assert_eq!(vars("test://{id}", "test://%C3"), None);
        assert_eq!(vars("a://{x}/b{?q}#{+f}", "a://1/b?q=2#3/4"), pairs(&[("f", "3/4"), ("q", "2"), ("x", "1")]));
    }

    #[test]
    fn hostile_uris_stay_cheap() {
        let t = UriTemplate::parse("x:///{+a}/{+b}/{+c}/end").unwrap();
        let uri = format!("x:///{}", "/".repeat(MAX_MATCHED_URI - 10));
        let started = std::time::Instant::now();
        assert_eq!(t.matches(&uri), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(t.matches(&format!("x:///{}", "a".repeat(MAX_MATCHED_URI))), None);
    }

    #[test]
    fn refused_templates() {
        for bad in [
            "x://{",
            "x://}",
            "x://{}",
            "x://{a b}",
            "x://{a*}",
            "x://{a:3}",
            "x://{;a}",
            "x://{a,b}",
            "x://{a}{b}",
            "x://{a}/{a}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        let t = UriTemplate::parse("x://{a}/y{?b,c}").unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), ["a", "b", "c"]);
    }
}
