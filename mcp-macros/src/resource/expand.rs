//! Code generation for `#[resource]`. Generated code only calls into `::typed_mcp::__private_v0_1`;
//! the logic lives in `typed-mcp`'s traits. An argument named like a template variable is
//! parsed from it (`ResourceVariable`); any other argument must be supplied by the server
//! (`ResourceInjected`), and a wrong type is reported at the argument.

use proc_macro2::{Delimiter, Ident, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::ReturnType;

use super::parse::ResourceFn;
use super::valid::resource_name;
use crate::codegen::{group, private_ident, span_range};
use crate::options::Param;

fn extract(p: &Param, call: &Ident, vars: &[String]) -> TokenStream {
    let ty = &p.ty;
    let name = p.wire_name();
    let ident = p.ident.clone().unwrap_or_else(|| private_ident("__unnamed"));
    let (first, last) = span_range(ty);
    if vars.contains(&name) {
        let args = group(Delimiter::Parenthesis, last, quote!(&mut #call, #name));
        quote_spanned! {first=>
            let #ident = <#ty as ::typed_mcp::__private_v0_1::ResourceVariable>::extract #args?;
        }
    } else {
        let args = group(Delimiter::Parenthesis, last, quote!(&#call));
        quote_spanned! {first=>
            let #ident = <#ty as ::typed_mcp::__private_v0_1::ResourceInjected>::inject #args?;
        }
    }
}

/// The expression building the resource's `ResourceDef`.
pub(crate) fn definition(f: &ResourceFn, vars: &[String]) -> TokenStream {
    let call_arg = private_ident("__call");
    let name = resource_name(f);
    let uri = f.attr.uri.as_ref().map(syn::LitStr::value).unwrap_or_default();
    let fn_ident = &f.sig.ident;
    let extracts = f.params.iter().map(|p| extract(p, &call_arg, vars));
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
    let closure = quote_spanned!(first=> move |mut #call_arg: ::typed_mcp::__private_v0_1::ResourceCall| #body);
    let constructor = if vars.is_empty() { quote!(new) } else { quote!(template) };
    let args = group(Delimiter::Parenthesis, last, quote!(#uri, #name, #handler));
    let new = quote_spanned!(first=> ::typed_mcp::__private_v0_1::ResourceDef::#constructor #args);
    let mut setters = Vec::new();
    if let Some(d) = &f.description {
        setters.push(quote!(.description(#d)));
    }
    if let Some(t) = &f.attr.title {
        setters.push(quote!(.title(#t)));
    }
    if let Some(m) = &f.attr.mime_type {
        setters.push(quote!(.mime_type(#m)));
    }
    if f.attr.app.as_ref().is_some_and(|(_, flag)| flag.value) {
        setters.push(app_meta(&f.attr.app_options));
    }
    quote! {{
        let #handler = #closure;
        #new
        #(#setters)*
    }}
}

/// `.app(…)` with the view's `_meta.ui`.
fn app_meta(options: &super::parse::AppOptions) -> TokenStream {
    let mut calls = Vec::new();
    let lists = [
        (&options.connect_domains, "connect_domains"),
        (&options.resource_domains, "resource_domains"),
        (&options.frame_domains, "frame_domains"),
        (&options.base_uri_domains, "base_uri_domains"),
    ];
    for (list, method) in lists {
        if let Some((_, origins)) = list {
            let method = Ident::new(method, Span::call_site());
            calls.push(quote!(.#method([#(#origins),*])));
        }
    }
    if let Some((_, names)) = &options.permissions {
        let names: Vec<Ident> = names.iter().map(|n| Ident::new(&n.value(), n.span())).collect();
        calls.push(quote!(.permissions(::typed_mcp::__private_v0_1::Permissions::new()#(.#names())*)));
    }
    if let Some((_, domain)) = &options.domain {
        calls.push(quote!(.domain(#domain)));
    }
    if let Some((_, flag)) = &options.prefers_border {
        let value = flag.value;
        calls.push(quote!(.prefers_border(#value)));
    }
    quote!(.app(::typed_mcp::__private_v0_1::UiResourceMeta::new()#(#calls)*))
}
