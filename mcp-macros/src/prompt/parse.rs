//! Reading `#[prompt(…)]`, `#[arg(…)]` and the function signature. No semantic checks here.

use proc_macro2::TokenStream;
use syn::{Attribute, LitStr, Signature};

use crate::common::Errors;
use crate::options::{FnParts, key, metas, read_fn, set_once, string_value, unknown_option};

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

/// A parsed `#[prompt]` function: its options and what every function macro reads.
pub(crate) struct PromptFn {
    pub(crate) attr: PromptAttr,
    pub(crate) parts: FnParts,
}

impl std::ops::Deref for PromptFn {
    type Target = FnParts;
    fn deref(&self) -> &FnParts {
        &self.parts
    }
}

/// Reads the function, taking `#[arg]` attributes off its arguments.
pub(crate) fn prompt_fn(attr: PromptAttr, attrs: &[Attribute], sig: &mut Signature, errors: &mut Errors) -> PromptFn {
    let parts = read_fn(attrs, sig, attr.description.as_ref(), "prompt", true, errors);
    PromptFn { attr, parts }
}
