//! Helpers shared by every macro: error accumulation and doc comments.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// Collects errors so that one build reports all of them.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(e) => e.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.0.map(|e| e.to_compile_error()).unwrap_or_default()
    }
}

/// The text of the `///` comments (`#[doc = "…"]` attributes), lines joined with `\n`, with the
/// one space after `///` removed.
pub(crate) fn doc_text(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &nv.value
        {
            let line = s.value();
            lines.push(line.strip_prefix(' ').map(str::to_owned).unwrap_or(line));
        }
    }
    lines.join("\n").trim().to_owned()
}

/// The doc attribute (one `///` line) holding the `# Arguments` entry for `name`, so that an
/// error about the entry can point at it.
pub(crate) fn doc_line_naming<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    attrs.iter().find(|attr| {
        let Meta::NameValue(nv) = &attr.meta else {
            return false;
        };
        let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &nv.value else {
            return false;
        };
        nv.path.is_ident("doc")
            && s.value().lines().any(|line| {
                let (_, entries) = split_arguments_section(&format!("# Arguments\n{line}"));
                entries.iter().any(|(n, _)| n == name)
            })
    })
}

/// Splits a doc comment into its description and the entries of an `# Arguments` section
/// (rustdoc's convention: ``* `name` - text``).
pub(crate) fn split_arguments_section(doc: &str) -> (String, Vec<(String, String)>) {
    let mut description = Vec::new();
    let mut args: Vec<(String, String)> = Vec::new();
    let mut in_args = false;
    for line in doc.lines() {
        let trimmed = line.trim();
        if let Some(heading) = trimmed.strip_prefix('#') {
            in_args = heading.trim_start_matches('#').trim().eq_ignore_ascii_case("arguments");
            if in_args {
                continue;
            }
        }
        if !in_args {
            description.push(line);
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("* ").or_else(|| trimmed.strip_prefix("- ")) {
            let item = item.trim();
            let (name, rest) = match item.strip_prefix('`') {
                Some(after) => match after.find('`') {
                    Some(end) => (&after[..end], &after[end + 1..]),
                    None => continue,
                },
                None => item.split_at(item.find(|c: char| c.is_whitespace() || c == ':').unwrap_or(item.len())),
            };
            let text = rest.trim_start().trim_start_matches(['-', ':', '\u{2013}', '\u{2014}']).trim();
            args.push((name.to_owned(), text.to_owned()));
        } else if let (Some(last), false) = (args.last_mut(), trimmed.is_empty()) {
            last.1.push(' ');
            last.1.push_str(trimmed);
        }
    }
    (description.join("\n").trim().to_owned(), args)
}

/// The candidate a misspelt `word` most likely meant, for "did you mean": the same word but
/// for case, `_` or `-` (`mimetype`, `mime_type`); a candidate the word begins (`mime`); else
/// the nearest within a third of the word's length in edits, a swap of two neighbouring
/// letters counting as one (`titel`, `title`).
pub(crate) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    fn normal(s: &str) -> String {
        s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
    }
    /// Optimal string alignment distance (Levenshtein plus adjacent swaps).
    fn distance(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[a.len()][b.len()]
    }
    let word_normal = normal(word);
    if word_normal.is_empty() {
        return None;
    }
    if let Some(c) = candidates.iter().find(|c| normal(c) == word_normal) {
        return Some(c);
    }
    if word_normal.chars().count() >= 3
        && let Some(c) = candidates.iter().find(|c| normal(c).starts_with(&word_normal))
    {
        return Some(c);
    }
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (distance(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Checks a tool name against MCP's rules (1 to 128 characters from `A-Z a-z 0-9 _ - .`).
pub(crate) fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("tool names cannot be empty".to_owned());
    }
    if name.len() > 128 {
        return Err(format!("tool name is {} characters long; MCP tool names have at most 128", name.len()));
    }
    match name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        Some(c) => Err(format!(
            "tool name `{name}` contains `{c}`; MCP tool names use only ASCII letters, digits, `_`, `-` and `.`"
        )),
        None => Ok(()),
    }
}

/// Why `uri` cannot name the view of an MCP App, if it cannot (as `typed_mcp::apps` checks it).
pub(crate) fn view_uri_problem(uri: &str) -> Option<String> {
    match uri.strip_prefix("ui://") {
        None => Some(format!("`{uri}` is not a `ui://` URI; a view's URI starts with `ui://`")),
        Some("") => Some(format!("`{uri}` names no view; write `ui://server/view` or similar")),
        Some(_) => None,
    }
}

/// Why `origin` cannot be an entry of a view's content security policy, if it cannot (as
/// `typed_mcp::apps::origin_problem` checks it).
pub(crate) fn origin_problem(origin: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Some("an origin is written with its scheme, e.g. `https://api.example.com`");
    };
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
        return Some("an origin starts with a scheme, e.g. `https://`");
    }
    let host = rest.strip_suffix('/').unwrap_or(rest);
    let host = host.strip_prefix("*.").unwrap_or(host);
    if host.is_empty() || !host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')) {
        return Some(
            "an origin is `scheme://host[:port]` (the host may start with `*.`), with no path, spaces, `;`, `,` or quotes",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_section() {
        let (d, a) = split_arguments_section(
            "Adds numbers.\n\nMore text.\n\n# Arguments\n* `a` - The first.\n  continues here\n- b: The second.\n\n# Examples\nx",
        );
        assert_eq!(d, "Adds numbers.\n\nMore text.\n\n# Examples\nx");
        assert_eq!(a, vec![("a".into(), "The first. continues here".into()), ("b".into(), "The second.".into())]);
    }

    #[test]
    fn suggestions() {
        let options = ["name", "title", "read_only"];
        assert_eq!(closest("nmae", &options), Some("name"));
        assert_eq!(closest("readonly", &options), Some("read_only"));
        assert_eq!(closest("titel", &options), Some("title"));
        assert_eq!(closest("color", &options), None);
        assert_eq!(closest("x", &options), None);
        let options = ["name", "title", "description", "mime_type"];
        assert_eq!(closest("mime", &options), Some("mime_type"));
        assert_eq!(closest("mime_tipe", &options), Some("mime_type"));
        assert_eq!(closest("mimetype", &options), Some("mime_type"));
        assert_eq!(closest("descripton", &options), Some("description"));
        assert_eq!(closest("size", &options), None);
    }

    #[test]
    fn tool_names() {
        assert!(check_tool_name("get_user.v2-beta").is_ok());
        assert!(check_tool_name("").is_err());
        assert!(check_tool_name("has space").is_err());
        assert!(check_tool_name(&"x".repeat(129)).is_err());
    }
}
