//! Semantic checks on a parsed `#[tool]` function. Every problem is reported, spanned.

use std::collections::HashMap;

use syn::Type;
use syn::spanned::Spanned;

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
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(&sig.generics, "`#[tool]` functions cannot be generic: a tool needs one concrete input schema");
    }
    if let Some(c) = &sig.constness {
        errors.spanned(c, "`#[tool]` functions cannot be `const`");
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(u, "`#[tool]` functions cannot be `unsafe`: the server calls them with input from the wire");
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "`#[tool]` functions cannot have an `extern` ABI");
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, "`#[tool]` functions cannot be variadic");
    }
    match (&f.receiver, site) {
        (Receiver::None, _) | (Receiver::Shared, Site::Toolbox) => {}
        (Receiver::Shared, Site::Free) | (Receiver::Unsupported(_), Site::Free) => errors.spanned(
            &sig.inputs,
            "a `#[tool]` method must be in an `impl` block marked `#[toolbox]`, which registers its tools together",
        ),
        (Receiver::Unsupported(span), Site::Toolbox) => errors.push(syn::Error::new(
            *span,
            "`#[tool]` methods take `&self` (or no receiver): tools may run concurrently, so they share the toolbox",
        )),
    }
    let mut seen: HashMap<String, &syn::Pat> = HashMap::new();
    for p in &f.params {
        if p.ident.is_none() {
            errors.spanned(&p.pat, "`#[tool]` arguments must be plain identifiers: the name becomes the argument's name in the input schema");
            continue;
        }
        if let Type::ImplTrait(t) = &*p.ty {
            errors.spanned(t, "`impl Trait` arguments are not supported in `#[tool]` functions; use a concrete type");
        }
        if let Some(lit) = &p.rename {
            if lit.value().is_empty() {
                errors.spanned(lit, "`#[arg(rename = …)]` cannot be empty");
            }
        }
        let name = p.wire_name();
        if let Some(first) = seen.get(&name) {
            let mut e = syn::Error::new(p.pat.span(), format!("two arguments are named `{name}` in the input schema"));
            e.combine(syn::Error::new(first.span(), format!("`{name}` is first used here")));
            errors.push(e);
        } else {
            seen.insert(name, &p.pat);
        }
    }
    for name in &f.documented {
        errors.spanned(
            &sig.ident,
            format!("the `# Arguments` section documents `{name}`, which is not an argument of this function"),
        );
    }
}
