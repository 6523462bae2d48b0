//! `#[tool]` and `#[toolbox]`.

mod expand;
mod parse;
mod valid;

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ImplItem, ItemFn, ItemImpl};

use crate::common::Errors;
use expand::Callee;
use valid::Site;

/// `#[tool]` on a free function.
pub(crate) fn expand_free(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut item: ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let e = syn::Error::new_spanned(
                &input,
                "`#[tool]` applies to functions (and to methods inside a `#[toolbox]` impl block)",
            );
            let e = e.to_compile_error();
            return quote!(#e #input);
        }
    };
    let mut errors = Errors::default();
    let attr = parse::tool_attr(args, &mut errors);
    let spec = parse::tool_fn(attr, &item.attrs, &mut item.sig, &mut errors);
    valid::check(&spec, Site::Free, &mut errors);
    let body = errors.is_empty().then(|| expand::definition(&spec, Callee::Free));
    let items = expand::free_items(&spec, &item.vis, body);
    let errors = errors.into_compile_errors();
    quote! {
        #item
        #items
        #errors
    }
}

/// `#[toolbox]` on an impl block.
pub(crate) fn expand_toolbox(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    if !args.is_empty() {
        errors.spanned(&args, "`#[toolbox]` takes no options; put options on each `#[tool(…)]`");
    }
    let mut item: ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let e = syn::Error::new_spanned(&input, "`#[toolbox]` applies to an inherent `impl` block");
            let e = e.to_compile_error();
            return quote!(#e #input);
        }
    };
    if let Some((_, path, _)) = &item.trait_ {
        errors.spanned(path, "`#[toolbox]` applies to an inherent `impl` block, not a trait impl");
    }
    let this = format_ident!("__mcp_this");
    let mut definitions = Vec::new();
    let mut names: HashMap<String, syn::Ident> = HashMap::new();
    for impl_item in item.items.iter_mut() {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(pos) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else {
            continue;
        };
        let tool_attr = method.attrs.remove(pos);
        let args = match &tool_attr.meta {
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::NameValue(nv) => {
                errors.spanned(nv, "write `#[tool]` or `#[tool(…)]`");
                TokenStream::new()
            }
        };
        let attr = parse::tool_attr(args, &mut errors);
        let spec = parse::tool_fn(attr, &method.attrs, &mut method.sig, &mut errors);
        valid::check(&spec, Site::Toolbox, &mut errors);
        let name = valid::tool_name(&spec);
        if let Some(first) = names.get(&name) {
            let mut e = syn::Error::new_spanned(
                &spec.sig.ident,
                format!("duplicate tool name `{name}` in this toolbox; rename one with `#[tool(name = \"…\")]`"),
            );
            e.combine(syn::Error::new_spanned(first, format!("`{name}` is first defined here")));
            errors.push(e);
        } else {
            names.insert(name, spec.sig.ident.clone());
        }
        let callee = match spec.receiver {
            parse::Receiver::Shared => Callee::Method(&this),
            _ => Callee::Associated,
        };
        definitions.push(expand::definition(&spec, callee));
    }
    if names.is_empty() && errors.is_empty() {
        errors.spanned(&item.self_ty, "this `#[toolbox]` has no `#[tool]` methods");
    }
    let self_ty = &item.self_ty;
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let body = if errors.is_empty() {
        quote!(::mcp_core::__private::vec![#(#definitions),*])
    } else {
        quote!(::core::unreachable!())
    };
    let errors = errors.into_compile_errors();
    quote! {
        #item

        const _: () = {
            #[automatically_derived]
            impl #impl_generics ::mcp_core::__private::ToolBox for #self_ty #where_clause {
                fn tools(self: ::mcp_core::__private::Arc<Self>) -> ::mcp_core::__private::Vec<::mcp_core::__private::ToolDef> {
                    let #this = self;
                    #body
                }
            }
        };
        #errors
    }
}
