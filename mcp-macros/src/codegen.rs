//! Helpers for the code the macros generate: private identifiers, spans, and the hidden item
//! that carries a function's definition.

use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::Ident;

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
