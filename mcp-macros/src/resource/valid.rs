//! Semantic checks on a parsed `#[resource]` function: the URI template's syntax, and its
//! variables against the function's arguments. Every problem is reported, spanned.

use super::parse::ResourceFn;
use crate::common::Errors;
use crate::options::check_signature;

/// The resource's name: the attribute's, else the function's.
pub(crate) fn resource_name(f: &ResourceFn) -> String {
    match &f.attr.name {
        Some(n) => n.value(),
        None => f.sig.ident.to_string().trim_start_matches("r#").to_owned(),
    }
}

/// The variables of a URI template (RFC 6570 as `typed-mcp` matches it), or what is wrong.
pub(crate) fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut vars: Vec<String> = Vec::new();
    let mut rest = template;
    let mut after_expression = false;
    while !rest.is_empty() {
        let Some(open) = rest.find(['{', '}']) else { break };
        if rest[open..].starts_with('}') {
            return Err("`}` without a matching `{`".into());
        }
        if open > 0 {
            after_expression = false;
        }
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or("`{` without a matching `}`")?;
        let body = &after[..close];
        rest = &after[close + 1..];
        let (op, names) = match body.chars().next() {
            Some(c @ ('+' | '#' | '.' | '/' | '?' | '&')) => (Some(c), &body[1..]),
            Some(c @ (';' | '=' | ',' | '!' | '@' | '|')) => {
                return Err(format!("the `{c}` operator in `{{{body}}}` is not supported"));
            }
            _ => (None, body),
        };
        let query = matches!(op, Some('?' | '&'));
        let names: Vec<&str> = names.split(',').collect();
        for var in &names {
            if var.ends_with('*') || var.contains(':') {
                return Err(format!("`{{{body}}}`: prefix (`:n`) and explode (`*`) modifiers are not supported"));
            }
            if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                return Err(format!(
                    "`{{{body}}}`: variable names use ASCII letters, digits, `_` and `.`, and cannot be empty"
                ));
            }
            if vars.iter().any(|v| v == var) {
                return Err(format!("variable `{var}` appears twice"));
            }
            vars.push((*var).to_owned());
        }
        if names.len() > 1 && !query {
            return Err(format!(
                "`{{{body}}}`: only query expressions (`{{?a,b}}`, `{{&a,b}}`) may hold several variables"
            ));
        }
        if after_expression && matches!(op, None | Some('+')) {
            return Err(format!(
                "`{{{body}}}` directly follows another expression, so a URI cannot be split between them; put a literal between"
            ));
        }
        after_expression = true;
    }
    Ok(vars)
}

/// Checks the function; returns the template's variables (empty for a static resource or when
/// the template is invalid).
pub(crate) fn check(f: &ResourceFn, errors: &mut Errors) -> Vec<String> {
    check_signature(&f.parts, "resource", false, errors);
    if let Some(lit) = &f.attr.name
        && lit.value().trim().is_empty()
    {
        errors.spanned(lit, "`#[resource(name = …)]` cannot be empty");
    }
    check_app(f, errors);
    let Some(uri) = &f.attr.uri else {
        return Vec::new();
    };
    let text = uri.value();
    if !text.contains(':') {
        errors
            .spanned(uri, format!("`{text}` is not an absolute URI: give it a scheme, e.g. `file:///…` or `app://…`"));
    }
    let vars = match template_variables(&text) {
        Ok(vars) => vars,
        Err(why) => {
            errors.spanned(uri, format!("invalid URI template: {why}"));
            return Vec::new();
        }
    };
    let args: Vec<String> = f.params.iter().filter_map(|p| p.ident.as_ref()).map(|i| i.to_string()).collect();
    for var in &vars {
        if !args.iter().any(|a| a.trim_start_matches("r#") == var) {
            let hint = if var.contains('.') {
                "rename the variable: a name with `.` cannot be a Rust argument".to_owned()
            } else {
                format!(
                    "add an argument `{var}: String` (or any type parsed from a string, `Option<…>` if a URI may leave it out)"
                )
            };
            errors.spanned(
                uri,
                format!(
                    "the URI template has the variable `{{{var}}}`, but the function has no argument `{var}`; {hint}"
                ),
            );
        }
    }
    vars
}

/// Checks the options of a view: given only with `app`, on a `ui://` URI that is no template,
/// without a `mime_type` of its own.
fn check_app(f: &ResourceFn, errors: &mut Errors) {
    let attr = &f.attr;
    let is_app = attr.app.as_ref().is_some_and(|(_, flag)| flag.value);
    if !is_app {
        for meta in attr.app_options.given() {
            errors.spanned(
                meta,
                format!(
                    "`{}` is an option of an MCP App's view; add `app` to the options: `#[resource(\"ui://…\", app, …)]`",
                    crate::options::key(meta)
                ),
            );
        }
        return;
    }
    let Some((app, _)) = &attr.app else { return };
    if let Some(mime) = &attr.mime_type {
        errors.spanned(mime, "a view (`app`) is served as `text/html;profile=mcp-app`; remove `mime_type`");
    }
    let Some(uri) = &attr.uri else { return };
    let text = uri.value();
    if let Some(problem) = crate::common::view_uri_problem(&text) {
        errors.spanned(uri, format!("`#[resource(…, app)]`: {problem}"));
    } else if text.contains('{') {
        errors.spanned(app, "a view (`app`) has one URI; it cannot be a URI template");
    }
}
