//! Semantic checks on a parsed `#[tool]` function. Every problem is reported, spanned.

use proc_macro2::TokenStream;
use quote::ToTokens;

use super::parse::{Receiver, ToolFn};
use crate::common::{Errors, check_tool_name};
use crate::options::check_signature;

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
    if let Some(uri) = &f.attr.ui
        && let Some(problem) = crate::common::view_uri_problem(&uri.value())
    {
        errors.spanned(uri, format!("`#[tool(ui = …)]`: {problem}"));
    }
    check_signature(&f.parts, "tool", true, errors);
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
}
