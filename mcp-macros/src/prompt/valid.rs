//! Semantic checks on a parsed `#[prompt]` function. Every problem is reported, spanned.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::ToTokens;

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
    if let Some(lit) = &f.attr.name {
        if lit.value().trim().is_empty() {
            errors.spanned(lit, "`#[prompt(name = …)]` cannot be empty");
        }
    }
    check_signature(&f.sig, &f.params, "prompt", errors);
    let mut seen: HashMap<String, TokenStream> = HashMap::new();
    for p in f.params.iter().filter(|p| p.ident.is_some()) {
        if let Some(lit) = &p.rename {
            if lit.value().is_empty() {
                errors.spanned(lit, "`#[arg(rename = …)]` cannot be empty");
            }
        }
        let name = p.wire_name();
        let here = match &p.rename {
            Some(lit) => lit.to_token_stream(),
            None => p.pat.to_token_stream(),
        };
        if let Some(first) = seen.get(&name) {
            let mut e = syn::Error::new_spanned(
                &here,
                format!("two prompt arguments are named `{name}`; rename one with `#[arg(rename = \"…\")]`"),
            );
            e.combine(syn::Error::new_spanned(first, format!("`{name}` is first used here")));
            errors.push(e);
        } else {
            seen.insert(name, here);
        }
    }
    for (name, line) in &f.documented {
        let arguments: Vec<String> =
            f.params.iter().filter_map(|p| p.ident.as_ref()).map(|i| format!("`{i}`")).collect();
        let have = match arguments.len() {
            0 => "this function has no arguments".to_owned(),
            _ => format!("the arguments are {}", arguments.join(", ")),
        };
        let message = format!("the `# Arguments` section documents `{name}`, which is not an argument; {have}");
        match line {
            Some(attr) => errors.spanned(attr, message),
            None => errors.spanned(&f.sig.ident, message),
        }
    }
}
