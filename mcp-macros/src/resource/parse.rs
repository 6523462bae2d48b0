//! Reading `#[resource("uri", …)]` and the function signature. No semantic checks here.

use proc_macro2::{TokenStream, TokenTree};
use syn::{Attribute, LitStr, Signature};

use crate::common::Errors;
use crate::options::{FnParts, key, metas, read_fn, set_once, string_value, unknown_option};

/// The options of `#[resource(…)]`.
#[derive(Default)]
pub(crate) struct ResourceAttr {
    pub(crate) uri: Option<LitStr>,
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
}

const OPTIONS: &[&str] = &["name", "title", "description", "mime_type"];
const USAGE: &str = "`#[resource]` expects the URI (or URI template) first, as a string: `#[resource(\"scheme://path/{id}\", name = \"…\")]`";

/// Parses the tokens inside `#[resource(…)]`.
pub(crate) fn resource_attr(tokens: TokenStream, errors: &mut Errors) -> ResourceAttr {
    let mut attr = ResourceAttr::default();
    let mut tokens = tokens.into_iter().peekable();
    let first: Option<TokenTree> = tokens.peek().cloned();
    let rest: TokenStream = match &first {
        Some(TokenTree::Literal(lit)) => match syn::parse2::<LitStr>(TokenTree::Literal(lit.clone()).into()) {
            Ok(s) => {
                attr.uri = Some(s);
                tokens.next();
                match tokens.next() {
                    None => TokenStream::new(),
                    Some(TokenTree::Punct(p)) if p.as_char() == ',' => tokens.collect(),
                    Some(other) => {
                        errors.spanned(other, "expected `,` after the URI");
                        return attr;
                    }
                }
            }
            Err(_) => {
                errors.spanned(lit, USAGE);
                tokens.skip(1).skip_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == ',')).skip(1).collect()
            }
        },
        Some(TokenTree::Ident(_)) => {
            // Options without a URI: report once, still read the options.
            errors.spanned(first.clone().into_iter().collect::<TokenStream>(), USAGE);
            tokens.collect()
        }
        Some(other) => {
            errors.spanned(other, USAGE);
            return attr;
        }
        None => {
            errors.push(syn::Error::new(proc_macro2::Span::call_site(), USAGE));
            return attr;
        }
    };
    for meta in metas(rest, "resource", errors) {
        let slot = match key(&meta).as_str() {
            "name" => &mut attr.name,
            "title" => &mut attr.title,
            "description" => &mut attr.description,
            "mime_type" => &mut attr.mime_type,
            _ => {
                unknown_option(&meta, "resource", OPTIONS, errors);
                continue;
            }
        };
        let value = string_value(&meta, "resource", errors);
        set_once(slot, value, &meta, "resource", errors);
    }
    attr
}

/// A parsed `#[resource]` function: its options and what every function macro reads.
pub(crate) struct ResourceFn {
    pub(crate) attr: ResourceAttr,
    pub(crate) parts: FnParts,
}

impl std::ops::Deref for ResourceFn {
    type Target = FnParts;
    fn deref(&self) -> &FnParts {
        &self.parts
    }
}

/// Reads the function.
pub(crate) fn resource_fn(
    attr: ResourceAttr,
    attrs: &[Attribute],
    sig: &mut Signature,
    errors: &mut Errors,
) -> ResourceFn {
    let parts = read_fn(attrs, sig, attr.description.as_ref(), "resource", false, errors);
    ResourceFn { attr, parts }
}
