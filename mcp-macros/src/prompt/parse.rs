//! Reading `#[prompt(…)]`, `#[arg(…)]` and the function signature. No semantic checks here.

use proc_macro2::TokenStream;
use syn::{Attribute, LitStr, Signature};

use crate::common::{Errors, doc_text, split_arguments_section};
use crate::options::{Param, doc_line_mentioning, key, metas, params, set_once, string_value, unknown_option};

/// The options of `#[prompt(…)]`.
#[derive(Default)]
pub(crate) struct PromptAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
}

const OPTIONS: &[&str] = &["name", "title", "description"];

/// Parses the tokens inside `#[prompt(…)]`.
pub(crate) fn prompt_attr(tokens: TokenStream, errors: &mut Errors) -> PromptAttr {
    let mut attr = PromptAttr::default();
    for meta in metas(tokens, "prompt", errors) {
        let slot = match key(&meta).as_str() {
            "name" => &mut attr.name,
            "title" => &mut attr.title,
            "description" => &mut attr.description,
            _ => {
                unknown_option(&meta, "prompt", OPTIONS, errors);
                continue;
            }
        };
        let value = string_value(&meta, "prompt", errors);
        set_once(slot, value, &meta, "prompt", errors);
    }
    attr
}

/// A parsed `#[prompt]` function.
pub(crate) struct PromptFn {
    pub(crate) attr: PromptAttr,
    pub(crate) sig: Signature,
    pub(crate) params: Vec<Param>,
    /// The description: the attribute's, else the doc comment without its `# Arguments` section.
    pub(crate) description: Option<String>,
    /// Names from `# Arguments` that match no argument, with the doc line naming them.
    pub(crate) documented: Vec<(String, Option<Attribute>)>,
}

/// Reads the function, taking `#[arg]` attributes off its arguments.
pub(crate) fn prompt_fn(attr: PromptAttr, attrs: &[Attribute], sig: &mut Signature, errors: &mut Errors) -> PromptFn {
    let (doc, arg_docs) = split_arguments_section(&doc_text(attrs));
    let mut params = params(sig, "prompt", true, errors);
    let mut documented = Vec::new();
    for (name, text) in arg_docs {
        match params.iter_mut().find(|p| p.ident.as_ref().is_some_and(|i| *i == name) || p.wire_name() == name) {
            Some(p) if p.description.is_none() => p.description = Some(text),
            Some(_) => {}
            None => documented.push((name.clone(), doc_line_mentioning(attrs, &name).cloned())),
        }
    }
    let description = match &attr.description {
        Some(d) => Some(d.value()),
        None => (!doc.is_empty()).then_some(doc),
    };
    PromptFn { attr, sig: sig.clone(), params, description, documented }
}
