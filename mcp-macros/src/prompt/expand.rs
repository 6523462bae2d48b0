//! Code generation for `#[prompt]`. Generated code only calls into `::typed_mcp::__private_v0_1`;
//! the logic lives in `typed-mcp`'s traits. Calls that may fail a trait bound are spanned at the
//! user's type: a wrong argument type is reported at the argument, a wrong return type at the
//! `-> Type`.

use proc_macro2::{Delimiter, Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ReturnType;

use super::parse::PromptFn;
use super::valid::prompt_name;
use crate::codegen::{group, opt_str, private_ident, span_range};
use crate::options::Param;

fn describe(p: &Param, list: &Ident) -> TokenStream {
    let ty = &p.ty;
    let name = p.wire_name();
    let description = opt_str(p.description.as_deref());
    let (first, last) = span_range(ty);
    let args = group(Delimiter::Parenthesis, last, quote!(&mut #list, #name, #description));
    quote_spanned! {first=>
        <#ty as ::typed_mcp::__private_v0_1::PromptArg>::describe #args;
    }
}

fn extract(p: &Param, call: &Ident) -> TokenStream {
    let ty = &p.ty;
    let name = p.wire_name();
    let ident = p.ident.clone().unwrap_or_else(|| private_ident("__unnamed"));
    let (first, last) = span_range(ty);
    let args = group(Delimiter::Parenthesis, last, quote!(&mut #call, #name));
    quote_spanned! {first=>
        let #ident = <#ty as ::typed_mcp::__private_v0_1::PromptArg>::extract #args?;
    }
}

/// The expression building the prompt's `PromptDef`.
pub(crate) fn definition(f: &PromptFn) -> TokenStream {
    let list = private_ident("__arguments");
    let call_arg = private_ident("__call");
    let name = prompt_name(f);
    let fn_ident = &f.sig.ident;
    let describes = f.params.iter().map(|p| describe(p, &list));
    let extracts = f.params.iter().map(|p| extract(p, &call_arg));
    let idents: Vec<_> = f.params.iter().filter_map(|p| p.ident.clone()).collect();
    let call = quote!(#fn_ident(#(#idents),*));
    let call = if f.sig.asyncness.is_some() { quote!(#call.await) } else { call };
    let (first, last) = match &f.sig.output {
        ReturnType::Type(_, ty) => span_range(ty),
        ReturnType::Default => span_range(&f.sig.ident),
    };
    let handler = Ident::new("__handler", Span::mixed_site().located_at(first));
    let body = group(
        Delimiter::Brace,
        last,
        quote! {
            async move {
                #(#extracts)*
                ::core::result::Result::Ok::<_, ::typed_mcp::__private_v0_1::ErrorObject>(#call)
            }
        },
    );
    let closure = quote_spanned!(first=> move |mut #call_arg: ::typed_mcp::__private_v0_1::PromptCall| #body);
    let args = group(Delimiter::Parenthesis, last, quote!(#name, #handler));
    let new = quote_spanned!(first=> ::typed_mcp::__private_v0_1::PromptDef::new #args);
    let mut setters = vec![quote!(.arguments(#list))];
    if let Some(d) = &f.description {
        setters.push(quote!(.description(#d)));
    }
    if let Some(t) = &f.attr.title {
        setters.push(quote!(.title(#t)));
    }
    quote! {{
        let mut #list = ::typed_mcp::__private_v0_1::Vec::<::typed_mcp::__private_v0_1::PromptArgument>::new();
        #(#describes)*
        let #handler = #closure;
        #new
        #(#setters)*
    }}
}
