//! Semantic checks for `#[derive(Elicit)]`: names, sensitive fields, option values.

use syn::spanned::Spanned;

use super::case::{Rule, words};
use super::parse::{Bounds, Container, FORMATS, Field, Spanned_, Variant};
use crate::common::Errors;

const STYLES: &[&str] = &["plain", "titled", "enum_names"];

/// The rename rule. An unknown rule is serde's to report (its derive runs beside ours), so it
/// is not reported twice; the caller then emits no impl, which would only add errors.
pub(crate) fn rule(container: &Container) -> Result<Option<Rule>, ()> {
    match &container.rename_all {
        None => Ok(None),
        Some(spec) => Rule::parse(&spec.value).map(Some).ok_or(()),
    }
}

/// Serde container options that make the type deserialize from something other than what the
/// form asks for.
pub(crate) fn check_container(container: &Container, what: &str, errors: &mut Errors) {
    for (key, span) in &container.reshaping {
        errors.push(syn::Error::new(
            *span,
            format!(
                "`#[serde({key})]` changes what this {what} deserializes from, so it would not match the form MCP sends back; remove it, or elicit a separate type without it and convert"
            ),
        ));
    }
}

/// Words that mark a secret wherever they appear inside a word (`userpassword`).
const SECRET_WORDS: &[&str] = &["password", "passwd", "passphrase", "credential", "apikey", "privatekey"];
/// Words that mark a secret at the end of a word (`accesstoken`, `clientsecret`), so that
/// `tokenizer` or `secretary` are not taken for one.
const SECRET_ENDINGS: &[&str] = &["token", "secret", "secrets"];
/// Words that mark a secret only as a whole word.
const SECRET_EXACT: &[&str] = &["pwd", "pin", "cvv", "cvc", "ssn", "iban", "otp", "totp"];
/// Adjacent word pairs that mark a secret.
const SECRET_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("private", "key"),
    ("access", "key"),
    ("secret", "key"),
    ("signing", "key"),
    ("card", "number"),
    ("credit", "card"),
    ("security", "code"),
    ("account", "number"),
];
/// Last words that make a name describe a secret rather than hold one (`token_count`,
/// `password_length`, `token_type`).
const ABOUT_SECRET: &[&str] = &["count", "limit", "budget", "length", "usage", "type", "kind", "policy", "hint"];

/// Why `name` looks like a secret, if it does.
pub(crate) fn secret_reason(name: &str) -> Option<String> {
    let w = words(name);
    if w.last().is_some_and(|last| ABOUT_SECRET.contains(&last.as_str())) {
        return None;
    }
    let is_secret = |word: &str| {
        let stem = word.trim_end_matches(|c: char| c.is_ascii_digit());
        SECRET_WORDS.iter().any(|s| stem.contains(s))
            || SECRET_ENDINGS.iter().any(|s| stem.ends_with(s))
            || SECRET_EXACT.contains(&stem)
    };
    if let Some(word) = w.iter().find(|x| is_secret(x)) {
        return Some(format!("`{word}`"));
    }
    w.windows(2)
        .find(|pair| SECRET_PAIRS.contains(&(pair[0].as_str(), pair[1].as_str())))
        .map(|pair| format!("`{} {}`", pair[0], pair[1]))
}

pub(crate) fn check_field(field: &Field, wire: &str, errors: &mut Errors) {
    if let Some(span) = field.flatten {
        errors.push(syn::Error::new(
            span,
            "`#[serde(flatten)]` cannot be used in a form: MCP forms are flat, so list the inner fields in this struct directly",
        ));
    }
    if field.skip {
        return;
    }
    let o = &field.options;
    if !o.not_secret {
        let ident = field.ident.to_string();
        let ident = ident.trim_start_matches("r#");
        let reason = match (secret_reason(ident), secret_reason(wire)) {
            (Some(word), _) => Some(format!("field `{ident}` looks like a secret ({word})")),
            (None, Some(word)) => {
                Some(format!("field `{ident}`, named `{wire}` on the wire, looks like a secret ({word})"))
            }
            (None, None) => None,
        };
        if let Some(reason) = reason {
            errors.spanned(
                &field.ident,
                format!(
                    "{reason}: MCP forbids asking for passwords, API keys, access tokens or payment credentials in form mode; send the user to your own page with URL-mode elicitation (`ctx.elicit_url`) instead, or mark the field `#[elicit(not_secret)]` if it is not a secret"
                ),
            );
        }
    }
    if let Some(s) = &o.style {
        check_style_value(s, errors);
    }
    let schema = &field.schema;
    for (written, span, instead) in &schema.outside {
        errors.push(syn::Error::new(
            *span,
            format!("`{written}` puts a key into the field's schema that MCP forms do not allow; {instead}"),
        ));
    }
    if let Some(f) = &schema.format
        && !FORMATS.contains(&f.value.as_str())
    {
        errors.push(syn::Error::new(
            f.value_span,
            format!(
                "unknown `format` \"{}\"; MCP forms allow only \"email\", \"uri\", \"date\" and \"date-time\"",
                f.value
            ),
        ));
    }
    for (what, bounds) in [("length", &schema.length), ("range", &schema.range)] {
        if let Some(Bounds { min: Some(min), max: Some(max), .. }) = bounds
            && min.value > max.value
        {
            errors.push(syn::Error::new(
                    min.span,
                    format!(
                        "`{what}(min = {}, max = {})`: the minimum is greater than the maximum, so no answer could satisfy both",
                        min.value, max.value
                    ),
                ));
        }
    }
    if let Some(Bounds { min, max, .. }) = &schema.length {
        for bound in [min, max].into_iter().flatten() {
            if bound.value < 0.0 || bound.value.fract() != 0.0 {
                errors.push(syn::Error::new(bound.span, "a `length` bound is a count: write a non-negative integer"));
            }
        }
    }
}

fn check_style_value(style: &Spanned_<String>, errors: &mut Errors) {
    if !STYLES.contains(&style.value.as_str()) {
        errors.push(syn::Error::new(
            style.value_span,
            format!("unknown `style` \"{}\"; expected \"plain\", \"titled\" or \"enum_names\"", style.value),
        ));
    }
}

pub(crate) fn check_style(container: &Container, errors: &mut Errors) {
    if let Some(s) = &container.style {
        check_style_value(s, errors);
    }
}

pub(crate) fn check_variant(variant: &Variant, errors: &mut Errors) {
    if let Some(span) = variant.data {
        errors.push(syn::Error::new(
            span,
            format!(
                "variant `{}` carries data, but the options of a choice are unit variants only (the answer is one plain string); remove the data, or ask for it in a field of its own",
                variant.ident
            ),
        ));
    }
}

pub(crate) fn duplicate_names<'a>(
    names: impl Iterator<Item = (String, &'a syn::Ident)>,
    what: &str,
    errors: &mut Errors,
) {
    let mut seen: Vec<(String, &syn::Ident)> = Vec::new();
    for (name, ident) in names {
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
            let mut e = syn::Error::new(
                ident.span(),
                format!(
                    "two {what} are named `{name}` on the wire (after serde's `rename`/`rename_all`); give this one another name with `#[serde(rename = \"…\")]`"
                ),
            );
            e.combine(syn::Error::new(first.span(), format!("`{name}` is first used here")));
            errors.push(e);
        } else {
            seen.push((name, ident));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets() {
        for name in [
            "password",
            "user_password",
            "apiKey",
            "API_KEY",
            "access_token",
            "client_secret",
            "card_number",
            "pin",
            "privateKey",
            "refresh_token",
            "clientSecret",
            "password2",
            "accesstoken",
        ] {
            assert!(secret_reason(name).is_some(), "{name}");
        }
        for name in [
            "project_name",
            "email",
            "keyboard_layout",
            "pinned",
            "spinner",
            "description",
            "max_tokens",
            "token_count",
            "tokenizer",
            "secretary",
            "password_length",
        ] {
            assert!(secret_reason(name).is_none(), "{name}");
        }
    }
}
