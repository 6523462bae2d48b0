//! Semantic checks on a parsed `#[prompt]` function. Every problem is reported, spanned.

use super::parse::PromptFn;
use crate::common::Errors;
use crate::options::check_signature;

/// The prompt's name: the attribute's, else the function's.
pub(crate) fn prompt_name(f: &PromptFn) -> String {
    match &f.attr.name {
        Some(n) => n.value(),
        None => f.sig.ident.to_string().trim_start_matches("r#").to_owned(),
    }
}

pub(crate) fn check(f: &PromptFn, errors: &mut Errors) {
    if let Some(lit) = &f.attr.name
        && lit.value().trim().is_empty()
    {
        errors.spanned(lit, "`#[prompt(name = …)]` cannot be empty");
    }
    check_signature(&f.parts, "prompt", false, errors);
}
