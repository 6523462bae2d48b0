//! Semantic checks on a parsed `#[tool]` function. Every problem is reported, spanned.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::Type;

use super::parse::{Receiver, ToolFn};
use crate::common::{Errors, check_tool_name};

/// Where the function stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Site {
    /// A free function under `#[tool]`.
    Free,
    /// A method in a `#[toolbox]` impl block.
    Toolbox,
}

/// The tool's name: the attribute's, else the function's.
pub(crate) fn tool_name(f: &ToolFn) -> String {
    match &f.attr.name {
        Some(n) => n.value(),
        None => f.sig.ident.to_string().trim_start_matches("r#").to_owned(),
    }
}

/// The tokens that give the tool its name, for errors about the name.
pub(crate) fn tool_name_tokens(f: &ToolFn) -> TokenStream {
    match &f.attr.name {
        Some(n) => n.to_token_stream(),
        None => f.sig.ident.to_token_stream(),
    }
}

pub(crate) fn check(f: &ToolFn, site: Site, errors: &mut Errors) {
    let sig = &f.sig;
    match &f.attr.name {
        Some(lit) => {
            if let Err(why) = check_tool_name(&lit.value()) {
                errors.spanned(lit, why);
            }
        }
        None => {
            if let Err(why) = check_tool_name(&tool_name(f)) {
                errors.spanned(&sig.ident, format!("{why}; give the tool a valid name with `#[tool(name = \"…\")]`"));
            }
        }
    }
    if !sig.generics.params.is_empty() {
        errors.spanned(&sig.generics, "`#[tool]` functions cannot be generic: a tool needs one concrete input schema");
    }
    if let Some(w) = &sig.generics.where_clause {
        errors.spanned(w, "`#[tool]` functions cannot have a `where` clause: a tool needs one concrete input schema");
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(u, "`#[tool]` functions cannot be `unsafe`: the server calls them with input from the wire");
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "`#[tool]` functions cannot have an `extern` ABI; remove it");
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, "`#[tool]` functions cannot be variadic");
    }
    match (&f.receiver, site) {
        (Receiver::None, _) | (Receiver::Shared(_), Site::Toolbox) => {}
        (Receiver::Shared(r) | Receiver::Unsupported(r), Site::Free) => errors.spanned(
            r,
            "a `#[tool]` method needs `#[toolbox]` on its `impl` block, which registers the block's tools together",
        ),
        (Receiver::Unsupported(r), Site::Toolbox) => {
            let why = if r.mutability.is_some() && r.reference.is_some() {
                "not `&mut self`: tools may run concurrently; keep mutable state behind a `Mutex` or an atomic"
            } else if r.reference.is_none() && r.colon_token.is_none() {
                "not `self`: the toolbox is shared by every call, so no call can consume it"
            } else {
                "or no receiver: the toolbox is shared by every call"
            };
            errors.spanned(r, format!("`#[tool]` methods take `&self`, {why}"));
        }
    }
    let mut seen: HashMap<String, TokenStream> = HashMap::new();
    for p in &f.params {
        if p.ident.is_none() {
            errors.spanned(
                &p.pat,
                "`#[tool]` arguments must be plain identifiers: the name becomes the argument's name in the input schema",
            );
            continue;
        }
        match &*p.ty {
            Type::ImplTrait(t) => {
                errors.spanned(t, "`impl Trait` arguments are not supported in `#[tool]` functions; use a concrete type")
            }
            // Arguments are deserialized from the request into values the handler owns, so a
            // borrowed argument can never work: say so instead of a lifetime error.
            Type::Reference(r) => errors.spanned(
                r,
                format!(
                    "`#[tool]` arguments cannot be references: each argument is deserialized from the request into an owned value; take {} instead",
                    owned_suggestion(r)
                ),
            ),
            _ => {}
        }
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
                format!(
                    "two arguments are named `{name}` in the input schema; rename one with `#[arg(rename = \"…\")]`"
                ),
            );
            e.combine(syn::Error::new_spanned(first, format!("`{name}` is first used here")));
            errors.push(e);
        } else {
            seen.insert(name, here);
        }
    }
    for (name, line) in &f.documented {
        let arguments: Vec<String> = f
            .params
            .iter()
            .filter_map(|p| p.ident.as_ref())
            .map(|i| format!("`{}`", i.to_string().trim_start_matches("r#")))
            .collect();
        let have = match arguments.len() {
            0 => "this function has no arguments".to_owned(),
            _ => format!("the arguments are {}", arguments.join(", ")),
        };
        let message = format!("the `# Arguments` section documents `{name}`, which is not an argument; {have}");
        match line {
            Some(attr) => errors.spanned(attr, message),
            None => errors.spanned(&sig.ident, message),
        }
    }
}

/// What to take instead of a borrowed argument type.
fn owned_suggestion(r: &syn::TypeReference) -> String {
    match &*r.elem {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => "`String`".to_owned(),
        Type::Slice(s) => format!("`Vec<{}>`", type_text(&s.elem)),
        other => format!("`{}`", type_text(other)),
    }
}

/// A type as a person would write it (`Vec<u8>`, not `Vec < u8 >`).
fn type_text(ty: &Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (from, to) in
        [(" < ", "<"), ("< ", "<"), (" <", "<"), (" >", ">"), (" ,", ","), (" :: ", "::"), (":: ", "::"), ("& ", "&")]
    {
        text = text.replace(from, to);
    }
    text
}
