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

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

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
    pub fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

fn match_parts(parts: &[Part], uri: &str, vars: &mut HashMap<String, String>) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(lit) => uri.strip_prefix(lit.as_str()).is_some_and(|tail| match_parts(rest, tail, vars)),
        Part::Expr(op @ (Op::Query | Op::QueryMore), names) => {
            let end = uri.find('#').unwrap_or(uri.len());
            let (query, tail) = uri.split_at(end);
            let lead = if *op == Op::Query { '?' } else { '&' };
            let mut found = HashMap::new();
            if !query.is_empty() {
                let Some(pairs) = query.strip_prefix(lead) else {
                    return false;
                };
                for pair in pairs.split('&') {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    let Some(value) = decode(value) else { return false };
                    if !names.iter().any(|n| n == key) || found.insert(key.to_owned(), value).is_some() {
                        return false;
                    }
                }
            }
            let before = vars.len();
            vars.extend(found);
            if match_parts(rest, tail, vars) {
                return true;
            }
            vars.retain(|k, _| !names.contains(k));
            debug_assert_eq!(vars.len(), before);
            false
        }
        Part::Expr(op, names) => {
            let name = &names[0];
            let (prefix, allowed): (Option<char>, fn(char) -> bool) = match op {
                Op::Simple => (None, |c| is_unreserved(c) || c == '%'),
                Op::Reserved => (None, |c| c != '#'),
                Op::Fragment => (Some('#'), |_| true),
                Op::Label => (Some('.'), |c| is_unreserved(c) || c == '%'),
                Op::Path => {
                    (Some('/'), |c| (is_unreserved(c) || c == '%' || is_reserved(c)) && !matches!(c, '/' | '?' | '#'))
                }
                Op::Query | Op::QueryMore => return false,
            };
            let body = match prefix {
                Some(p) => match uri.strip_prefix(p) {
                    Some(b) => b,
                    // A prefixed expression may be left out entirely (its variable undefined).
                    None => return match_parts(rest, uri, vars),
                },
                None => uri,
            };
            let longest = body.char_indices().find(|&(_, c)| !allowed(c)).map_or(body.len(), |(i, _)| i);
            // Shortest first, so a value stops at the first place the rest of the template can
            // take over (`{name}{.ext}` splits `cat.png` at the dot). A matched value is never
            // empty: an empty value names no resource.
            let ends = body[..longest].char_indices().map(|(i, _)| i).skip(1).chain((longest > 0).then_some(longest));
            for end in ends {
                let Some(value) = decode(&body[..end]) else { continue };
                vars.insert(name.clone(), value);
                if match_parts(rest, &body[end..], vars) {
                    return true;
                }
                vars.remove(name);
            }
            prefix.is_some() && match_parts(rest, uri, vars)
        }
    }
}

/// Percent-decodes `text`; `None` when an escape is malformed or the bytes are not UTF-8.
fn decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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
