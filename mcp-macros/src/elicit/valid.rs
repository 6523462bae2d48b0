//! Semantic checks for `#[derive(Elicit)]`: names, sensitive fields, option values.

use syn::spanned::Spanned;

use super::case::{RULES, Rule, words};
use super::parse::{Container, Field, Variant};
use crate::common::Errors;

const FORMATS: &[&str] = &["email", "uri", "date", "date-time"];
const STYLES: &[&str] = &["plain", "titled", "enum_names"];

/// The rename rule, if valid.
pub(crate) fn rule(container: &Container, errors: &mut Errors) -> Option<Rule> {
    let spec = container.rename_all.as_ref()?;
    let rule = Rule::parse(&spec.value);
    if rule.is_none() {
        errors.push(syn::Error::new(
            spec.span,
            format!("unknown `rename_all` rule `{}`; expected one of {RULES}", spec.value),
        ));
    }
    rule
}

/// Words that mark a secret wherever they appear in a name.
const SECRET_WORDS: &[&str] =
    &["password", "passwd", "passphrase", "secret", "token", "credential", "apikey", "privatekey"];
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

/// Why `name` looks like a secret, if it does.
pub(crate) fn secret_reason(name: &str) -> Option<String> {
    let w = words(name);
    if let Some(word) =
        w.iter().find(|x| SECRET_WORDS.iter().any(|s| x.contains(s)) || SECRET_EXACT.contains(&x.as_str()))
    {
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
            "`#[serde(flatten)]` cannot be used in a form: MCP forms are flat, list the fields directly",
        ));
    }
    if field.skip {
        return;
    }
    let o = &field.options;
    if !o.not_secret {
        let reason = secret_reason(&field.ident.to_string()).or_else(|| secret_reason(wire));
        if let Some(word) = reason {
            errors.spanned(
                &field.ident,
                format!(
                    "field `{}` looks like a secret ({word}): MCP forbids asking for passwords, API keys, access tokens or payment credentials in form mode; send the user to your own page with URL-mode elicitation (`ctx.elicit_url`) instead, or mark the field `#[elicit(not_secret)]` if it is not a secret",
                    field.ident
                ),
            );
        }
    }
    if let Some(f) = &o.format {
        if !FORMATS.contains(&f.value.as_str()) {
            errors.push(syn::Error::new(f.span, format!("`format` must be one of \"email\", \"uri\", \"date\", \"date-time\" (MCP forms allow no other), not \"{}\"", f.value)));
        }
    }
    if let Some(s) = &o.style {
        if !STYLES.contains(&s.value.as_str()) {
            errors.push(syn::Error::new(
                s.span,
                format!("`style` must be \"plain\", \"titled\" or \"enum_names\", not \"{}\"", s.value),
            ));
        }
    }
    if let (Some(min), Some(max)) = (&o.min_length, &o.max_length) {
        if min.value > max.value {
            errors.push(syn::Error::new(min.span, "`min_length` is greater than `max_length`"));
        }
    }
    if let (Some(min), Some(max)) = (&o.min_items, &o.max_items) {
        if min.value > max.value {
            errors.push(syn::Error::new(min.span, "`min_items` is greater than `max_items`"));
        }
    }
    if let (Some(min), Some(max)) = (&o.minimum, &o.maximum) {
        if min.value > max.value {
            errors.push(syn::Error::new(min.span, "`minimum` is greater than `maximum`"));
        }
    }
    if o.default.is_some() && !matches!(field.serde_default, super::parse::SerdeDefault::None) {
        errors.spanned(&field.ident, "give the default once: either `#[elicit(default = …)]` or `#[serde(default)]`");
    }
}

pub(crate) fn check_style(container: &Container, errors: &mut Errors) {
    if let Some(s) = &container.style {
        if !STYLES.contains(&s.value.as_str()) {
            errors.push(syn::Error::new(
                s.span,
                format!("`style` must be \"plain\", \"titled\" or \"enum_names\", not \"{}\"", s.value),
            ));
        }
    }
}

pub(crate) fn check_variant(variant: &Variant, errors: &mut Errors) {
    if let Some(span) = variant.data {
        errors.push(syn::Error::new(
            span,
            format!(
                "variant `{}` carries data; form options are unit variants only (a choice is a plain string)",
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
            let mut e = syn::Error::new(ident.span(), format!("two {what} are named `{name}` on the wire"));
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
        ] {
            assert!(secret_reason(name).is_some(), "{name}");
        }
        for name in ["project_name", "email", "keyboard_layout", "pinned", "spinner", "description"] {
            assert!(secret_reason(name).is_none(), "{name}");
        }
    }
}
