//! Parsing helpers for the attribute options of `#[prompt]` and `#[resource]`, the checks their
//! functions share, and span helpers for the code they generate.

use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, FnArg, Ident, Lit, LitStr, Meta, Pat, Signature, Token, Type};

use crate::common::Errors;

/// The key of an option (`name` in `name = "…"`).
pub(crate) fn key(meta: &Meta) -> String {
    meta.path().get_ident().map(Ident::to_string).unwrap_or_else(|| meta.path().to_token_stream().to_string())
}

/// Splits `a = 1, b` into the options of `#[attr(…)]`, reporting syntax errors.
pub(crate) fn metas(tokens: TokenStream, attr: &str, errors: &mut Errors) -> Vec<Meta> {
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(list) => list.into_iter().collect(),
        Err(e) => {
            errors.push(syn::Error::new(
                e.span(),
                format!("invalid `#[{attr}(…)]` options ({e}); write them as `key = \"value\"`, separated by commas"),
            ));
            Vec::new()
        }
    }
}

/// The string of `key = "…"`.
pub(crate) fn string_value(meta: &Meta, attr: &str, errors: &mut Errors) -> Option<LitStr> {
    let key = key(meta);
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.clone()),
            other => {
                errors.spanned(other, format!("`#[{attr}({key} = …)]` expects a string literal, e.g. `{key} = \"…\"`"));
                None
            }
        },
        _ => {
            errors.spanned(meta, format!("`#[{attr}({key})]` expects a string: write `{key} = \"…\"`"));
            None
        }
    }
}

/// Stores an option's value, reporting a repeated option at the repetition.
pub(crate) fn set_once<T>(slot: &mut Option<T>, value: Option<T>, meta: &Meta, attr: &str, errors: &mut Errors) {
    if slot.is_some() {
        errors.spanned(meta, format!("`{}` is given more than once in `#[{attr}(…)]`; keep one", key(meta)));
    } else if value.is_some() {
        *slot = value;
    }
}

/// The message for an option `#[attr(…)]` does not know, with a suggestion when the option
/// looks like a misspelling of a known one. Every macro words this mistake the same way.
pub(crate) fn unknown_message(attr: &str, key: &str, known: &[&str]) -> String {
    let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    match crate::common::closest(key, known) {
        Some(k) => format!("unknown `#[{attr}]` option `{key}`; did you mean `{k}`? (options: {list})"),
        None => format!("unknown `#[{attr}]` option `{key}`; the options are {list}"),
    }
}

/// The error for an option `#[attr(…)]` does not know.
pub(crate) fn unknown_option(meta: &Meta, attr: &str, known: &[&str], errors: &mut Errors) {
    errors.spanned(meta.path(), unknown_message(attr, &key(meta), known));
}

/// One argument of the function.
pub(crate) struct Param {
    /// The binding (`None` when the pattern is not a plain identifier).
    pub(crate) ident: Option<Ident>,
    pub(crate) pat: Box<Pat>,
    pub(crate) ty: Box<Type>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) description: Option<String>,
}

impl Param {
    /// The argument's name on the wire.
    pub(crate) fn wire_name(&self) -> String {
        match (&self.rename, &self.ident) {
            (Some(r), _) => r.value(),
            (None, Some(i)) => i.to_string().trim_start_matches("r#").to_owned(),
            (None, None) => String::new(),
        }
    }
}

/// Reads the typed arguments, taking `#[arg(…)]` off them (they are ours). `allow_arg` tells
/// whether the macro accepts `#[arg]` at all.
pub(crate) fn params(sig: &mut Signature, attr: &str, allow_arg: bool, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => errors.spanned(
                &*r,
                format!(
                    "`#[{attr}]` applies to free functions; take what the {attr} needs as arguments instead of `self`"
                ),
            ),
            FnArg::Typed(pt) => {
                let (rename, description) = arg_attrs(&mut pt.attrs, attr, allow_arg, errors);
                let ident = match &*pt.pat {
                    Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(pi.ident.clone()),
                    _ => None,
                };
                params.push(Param { ident, pat: pt.pat.clone(), ty: pt.ty.clone(), rename, description });
            }
        }
    }
    params
}

fn arg_attrs(
    attrs: &mut Vec<Attribute>,
    macro_name: &str,
    allow: bool,
    errors: &mut Errors,
) -> (Option<LitStr>, Option<String>) {
    let mut rename = None;
    let mut description = None;
    attrs.retain(|a| {
        if !a.path().is_ident("arg") {
            return true;
        }
        if !allow {
            errors.spanned(
                a,
                format!("`#[{macro_name}]` arguments take no `#[arg]` options: a URI-template variable is named by the argument"),
            );
            return false;
        }
        let tokens = match &a.meta {
            Meta::List(list) => list.tokens.clone(),
            other => {
                errors.spanned(other, "`#[arg]` expects options: `#[arg(rename = \"…\", description = \"…\")]`");
                return false;
            }
        };
        for meta in metas(tokens, "arg", errors) {
            match key(&meta).as_str() {
                "rename" => set_once(&mut rename, string_value(&meta, "arg", errors), &meta, "arg", errors),
                "description" => {
                    let value = string_value(&meta, "arg", errors).map(|s| s.value());
                    set_once(&mut description, value, &meta, "arg", errors)
                }
                _ => unknown_option(&meta, "arg", &["rename", "description"], errors),
            }
        }
        false
    });
    (rename, description)
}

/// Checks what no `#[prompt]` or `#[resource]` function may be.
pub(crate) fn check_signature(sig: &Signature, params: &[Param], attr: &str, errors: &mut Errors) {
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            format!("`#[{attr}]` functions cannot be generic: the server calls one concrete function"),
        );
    }
    if let Some(w) = &sig.generics.where_clause {
        errors.spanned(
            w,
            format!("`#[{attr}]` functions cannot have a `where` clause: the server calls one concrete function"),
        );
    }
    if let Some(c) = &sig.constness {
        errors.spanned(c, format!("`#[{attr}]` functions cannot be `const`; remove `const`"));
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(
            u,
            format!("`#[{attr}]` functions cannot be `unsafe`: the server calls them with input from the wire"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, format!("`#[{attr}]` functions cannot have an `extern` ABI; remove it"));
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, format!("`#[{attr}]` functions cannot be variadic"));
    }
    for p in params {
        if p.ident.is_none() {
            errors.spanned(
                &p.pat,
                format!("`#[{attr}]` arguments must be plain identifiers: the name is the argument's name on the wire"),
            );
        }
        match &*p.ty {
            Type::ImplTrait(t) => errors.spanned(t, format!("`impl Trait` arguments are not supported in `#[{attr}]` functions; use a concrete type")),
            Type::Reference(r) => errors.spanned(
                r,
                format!("`#[{attr}]` arguments cannot be references: each one is parsed from the request into an owned value (take `String` for `&str`)"),
            ),
            _ => {}
        }
    }
}

/// An identifier for generated code, invisible to the user's code.
pub(crate) fn private_ident(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// `Some("…")` or `None`, as tokens.
pub(crate) fn opt_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

/// The spans of the first and last tokens of `tokens`: code starting at the first and ending
/// with a group at the last spans all of `tokens`, so an error underlines the whole type.
pub(crate) fn span_range(tokens: &impl ToTokens) -> (Span, Span) {
    let mut spans = tokens.to_token_stream().into_iter().map(|t| t.span());
    let first = spans.next().unwrap_or_else(Span::call_site);
    (first, spans.last().unwrap_or(first))
}

/// `tokens` in a group with the given delimiter and span.
pub(crate) fn group(delimiter: Delimiter, span: Span, tokens: TokenStream) -> Group {
    let mut g = Group::new(delimiter, tokens);
    g.set_span(span);
    g
}

/// The items beside the function: a hidden type named like it implementing `trait_path`, whose
/// `definition` is `body`, or `unreachable!()` when the function had errors (so that uses of it
/// still compile and one mistake does not cascade).
pub(crate) fn hidden_definition(
    ident: &Ident,
    vis: &syn::Visibility,
    trait_path: TokenStream,
    def_type: TokenStream,
    body: Option<TokenStream>,
) -> TokenStream {
    let definition = body.unwrap_or_else(|| quote!(::core::unreachable!()));
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code, missing_docs, unreachable_pub)]
        #vis struct #ident {}

        const _: () = {
            #[automatically_derived]
            impl #trait_path for #ident {
                fn definition() -> #def_type {
                    #definition
                }
            }
        };
    }
}

/// The head of an item (`struct Add`), so that an error about a misplaced attribute points at
/// what the item is rather than underlining all of it.
pub(crate) fn item_head(item: &TokenStream) -> TokenStream {
    let mut head = Vec::new();
    let mut tokens = item.clone().into_iter();
    while let Some(token) = tokens.next() {
        match &token {
            proc_macro2::TokenTree::Punct(p) if p.as_char() == '#' && head.is_empty() => {
                tokens.next();
                continue;
            }
            proc_macro2::TokenTree::Punct(p) if matches!(p.as_char(), ';' | '=') => break,
            proc_macro2::TokenTree::Group(g) if g.delimiter() != Delimiter::None => {
                let after_pub = matches!(head.last(), Some(proc_macro2::TokenTree::Ident(i)) if i == "pub");
                if !(after_pub && g.delimiter() == Delimiter::Parenthesis) {
                    break;
                }
            }
            _ => {}
        }
        head.push(token);
    }
    if head.is_empty() { item.clone() } else { head.into_iter().collect() }
}

/// The `///` line that mentions `` `name` ``, for errors about an `# Arguments` entry.
pub(crate) fn doc_line_mentioning<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    let needle = format!("`{name}`");
    attrs.iter().find(|attr| match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("doc") => {
            matches!(&nv.value, Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value().contains(&needle))
        }
        _ => false,
    })
}
