//! `#[tool]` and `#[toolbox]`.

mod expand;
mod parse;
#[cfg(test)]
mod tests;
mod valid;

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Item};

use crate::codegen::item_head;
use crate::common::Errors;
use expand::Callee;
use valid::Site;

/// Whether an attribute is `#[tool]` (also when spelled `#[typed_mcp::tool]`).
fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "tool")
}

/// The attribute added to every tool function: arguments are deserialized from the request
/// into owned values (references are refused), so clippy's advice to borrow them instead
/// cannot be followed.
fn allow_owned_arguments() -> Attribute {
    syn::parse_quote!(#[allow(clippy::needless_pass_by_value)])
}

/// `#[tool]` on something that is not a function: one error at the item's head, and the item
/// left as it was. Input that is not even an item gets the parser's own, precise, error.
fn not_a_function(input: TokenStream) -> TokenStream {
    let e = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Impl(_)) => syn::Error::new_spanned(
            item_head(&input),
            "`#[tool]` applies to functions; for the methods of an `impl` block, put `#[toolbox]` on the block and `#[tool]` on each method",
        ),
        Ok(_) => syn::Error::new_spanned(
            item_head(&input),
            "`#[tool]` applies to functions (and to methods in a `#[toolbox]` impl block)",
        ),
        Err(e) => e,
    };
    let e = e.to_compile_error();
    quote!(#e #input)
}

/// `#[tool]` on a free function.
pub(crate) fn expand_free(args: TokenStream, input: TokenStream) -> TokenStream {
    let Ok(mut item) = syn::parse2::<parse::LooseFn>(input.clone()) else {
        return not_a_function(input);
    };
    let mut errors = Errors::default();
    let attr = parse::tool_attr(args, &mut errors);
    let spec = parse::tool_fn(attr, &item.attrs, &mut item.sig, &mut errors);
    valid::check(&spec, Site::Free, &mut errors);
    if !spec.params.is_empty() {
        item.attrs.push(allow_owned_arguments());
    }
    // A method outside `#[toolbox]` sits in an `impl` block, where the hidden type below
    // cannot go: emit the method and the error only.
    let items = match spec.receiver {
        parse::Receiver::None => {
            let body = errors.is_empty().then(|| expand::definition(&spec, Callee::Free));
            expand::free_items(&spec, &item.vis, body)
        }
        parse::Receiver::Shared(_) | parse::Receiver::Unsupported(_) => TokenStream::new(),
    };
    let errors = errors.into_compile_errors();
    quote! {
        #item
        #items
        #errors
    }
}

/// `#[toolbox]` on input that is not an `impl` block (or one with an item that does not parse,
/// which the compiler reports itself): the parser's error for an `impl` block, else where
/// `#[toolbox]` goes.
fn not_an_impl(input: TokenStream, parse_error: syn::Error) -> TokenStream {
    let e = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Impl(_)) | Err(_) => parse_error,
        Ok(_) => syn::Error::new_spanned(
            item_head(&input),
            "`#[toolbox]` applies to an inherent `impl` block (`impl Type { … }`) whose tool methods are marked `#[tool]`",
        ),
    };
    let e = e.to_compile_error();
    quote!(#e #input)
}

/// `#[toolbox]` on an impl block.
pub(crate) fn expand_toolbox(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    if !args.is_empty() {
        errors.spanned(&args, "`#[toolbox]` takes no options; put options on each `#[tool(…)]`");
    }
    let mut item: parse::ToolboxImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(parse_error) => return not_an_impl(input, parse_error),
    };
    if let Some((path, _)) = &item.trait_ {
        errors.spanned(
            path,
            "`#[toolbox]` applies to an inherent `impl` block, not a trait impl; move the tools to an `impl` of the type itself",
        );
    }
    let this = expand::private_ident("__this");
    let mut definitions = Vec::new();
    let mut names: HashMap<String, TokenStream> = HashMap::new();
    for impl_item in &mut item.items {
        let parse::ToolboxItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(pos) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        let tool_attr = method.attrs.remove(pos);
        let args = match &tool_attr.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => {
                errors.spanned(
                    nv,
                    "`#[tool = …]` is not a form `#[tool]` takes; write `#[tool]` or `#[tool(name = \"…\")]`",
                );
                TokenStream::new()
            }
        };
        let attr = parse::tool_attr(args, &mut errors);
        let spec = parse::tool_fn(attr, &method.attrs, &mut method.sig, &mut errors);
        valid::check(&spec, Site::Toolbox, &mut errors);
        if !spec.params.is_empty() {
            method.attrs.push(allow_owned_arguments());
        }
        let name = valid::tool_name(&spec);
        let here = valid::tool_name_tokens(&spec);
        if let Some(first) = names.get(&name) {
            let mut e = syn::Error::new_spanned(
                &here,
                format!("duplicate tool name `{name}` in this toolbox; rename one with `#[tool(name = \"…\")]`"),
            );
            e.combine(syn::Error::new_spanned(first, format!("`{name}` is first defined here")));
            errors.push(e);
        } else {
            names.insert(name, here);
        }
        let callee = match spec.receiver {
            parse::Receiver::Shared(_) => Callee::Method(&this),
            _ => Callee::Associated,
        };
        definitions.push(expand::definition(&spec, callee));
    }
    if names.is_empty() && errors.is_empty() {
        errors.spanned(
            &item.self_ty,
            "this `#[toolbox]` has no `#[tool]` methods; mark the methods to register with `#[tool]`",
        );
    }
    let self_ty = &item.self_ty;
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let body = if errors.is_empty() {
        quote!(::typed_mcp::__private_v0_1::vec![#(#definitions),*])
    } else {
        quote!(::core::unreachable!())
    };
    let errors = errors.into_compile_errors();
    quote! {
        #item

        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::typed_mcp::__private_v0_1::ToolBox for #self_ty #where_clause {
                fn tools(self: ::typed_mcp::__private_v0_1::Arc<Self>) -> ::typed_mcp::__private_v0_1::Vec<::typed_mcp::__private_v0_1::ToolDef> {
                    let #this = self;
                    #body
                }
            }
        };
        #errors
    }
}
