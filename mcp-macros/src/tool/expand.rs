//! Code generation for `#[tool]` and `#[toolbox]`. Generated code only calls into
//! `::typed_mcp::__private_v0_1`; the logic lives in `typed-mcp`'s traits.
//!
//! The generated locals (`__schema`, `__call`, …) have mixed-site hygiene, so they can never
//! clash with the user's argument names. Calls that may fail a trait bound are spanned at the
//! user's type: a wrong argument type is reported at the argument, a wrong return type at the
//! `-> Type`.

use proc_macro2::{Delimiter, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Ident, ReturnType};

use super::parse::{Flag, ToolFn};
use super::valid::tool_name;
pub(crate) use crate::codegen::private_ident;
use crate::codegen::{group, opt_str, span_range};
use crate::options::Param;

/// How the generated handler reaches the function.
pub(crate) enum Callee<'a> {
    /// A free function: `name(args)`.
    Free,
    /// A `&self` method through the toolbox's `Arc<Self>`: `this.name(args)`.
    Method(&'a Ident),
    /// An associated function: `Self::name(args)`.
    Associated,
}

fn hint(flag: Option<Flag>) -> TokenStream {
    match flag {
        Some(f) => {
            let v = f.value;
            quote!(::core::option::Option::Some(#v))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// Adds one argument to the input schema; spanned at its type.
fn describe(p: &Param, schema: &Ident) -> TokenStream {
    let ty = &p.ty;
    let name = p.wire_name();
    let description = opt_str(p.description.as_deref());
    let (first, last) = span_range(ty);
    let args = group(Delimiter::Parenthesis, last, quote!(&mut #schema, #name, #description));
    quote_spanned! {first=>
        <#ty as ::typed_mcp::__private_v0_1::ToolArgument>::describe #args;
    }
}

/// Takes one argument out of the call into a local named like the argument; spanned at its type.
fn extract(p: &Param, call: &Ident) -> TokenStream {
    let ty = &p.ty;
    let name = p.wire_name();
    let ident = p.ident.clone().unwrap_or_else(|| private_ident("__unnamed"));
    let (first, last) = span_range(ty);
    let args = group(Delimiter::Parenthesis, last, quote!(&mut #call, #name));
    quote_spanned! {first=>
        let #ident = <#ty as ::typed_mcp::__private_v0_1::ToolArgument>::extract #args?;
    }
}

/// The expression building the tool's `ToolDef`.
pub(crate) fn definition(f: &ToolFn, callee: Callee<'_>) -> TokenStream {
    let schema = private_ident("__schema");
    let call_arg = private_ident("__call");
    let name = tool_name(f);
    let fn_ident = &f.sig.ident;
    let describes = f.params.iter().map(|p| describe(p, &schema));
    let extracts = f.params.iter().map(|p| extract(p, &call_arg));
    let idents: Vec<_> = f.params.iter().filter_map(|p| p.ident.clone()).collect();
    let call = match callee {
        Callee::Free => quote!(#fn_ident(#(#idents),*)),
        Callee::Method(this) => quote!(#this.#fn_ident(#(#idents),*)),
        Callee::Associated => quote!(Self::#fn_ident(#(#idents),*)),
    };
    let is_async = f.sig.asyncness.is_some();
    // A method's handler holds its own `Arc` of the toolbox (the `move` closure would
    // otherwise take the one every tool of the box shares); an async tool's future needs one
    // more, cloned per call.
    let capture = match callee {
        Callee::Method(this) => quote!(let #this = ::typed_mcp::__private_v0_1::Arc::clone(&#this);),
        _ => quote!(),
    };
    // `ToolDef::new` requires the handler's output to be a tool result. The handler and the
    // call are spanned at the return type, so a wrong type is reported once, there.
    let (first, last) = match &f.sig.output {
        ReturnType::Type(_, ty) => span_range(ty),
        ReturnType::Default => span_range(&f.sig.ident),
    };
    let handler = Ident::new("__handler", Span::mixed_site().located_at(first));
    let result = quote!(::core::result::Result::Ok::<_, ::typed_mcp::__private_v0_1::ErrorObject>);
    // A function that is not `async` is called as soon as the call is read: no future.
    let body = if is_async {
        quote! {
            #capture
            async move {
                #(#extracts)*
                #result(#call.await)
            }
        }
    } else {
        quote! {
            #(#extracts)*
            #result(#call)
        }
    };
    let body = group(Delimiter::Brace, last, body);
    let closure = quote_spanned!(first=> move |mut #call_arg: ::typed_mcp::__private_v0_1::ToolCall| #body);
    let args = group(Delimiter::Parenthesis, last, quote!(#name, #schema.finish(), #handler));
    let new = if is_async {
        quote_spanned!(first=> ::typed_mcp::__private_v0_1::ToolDef::new #args)
    } else {
        quote_spanned!(first=> ::typed_mcp::__private_v0_1::ToolDef::new_sync #args)
    };
    let mut setters = Vec::new();
    if let Some(d) = &f.description {
        setters.push(quote!(.description(#d)));
    }
    if let Some(t) = &f.attr.title {
        setters.push(quote!(.title(#t)));
    }
    if let Some(scopes) = &f.attr.scopes {
        setters.push(quote!(.scopes([#(#scopes),*])));
    }
    if let Some(uri) = &f.attr.ui {
        setters.push(quote!(.ui(#uri)));
    }
    if let Some(visibility) = f.attr.visibility {
        let variant = match visibility {
            super::parse::Visibility::ModelAndApp => quote!(ModelAndApp),
            super::parse::Visibility::Model => quote!(Model),
            super::parse::Visibility::App => quote!(App),
        };
        setters.push(quote!(.visibility(::typed_mcp::__private_v0_1::Visibility::#variant)));
    }
    match f.attr.task {
        Some(super::parse::TaskMode::Optional) => {
            setters.push(quote!(.task_support(::typed_mcp::__private_v0_1::TaskSupport::Optional)));
        }
        Some(super::parse::TaskMode::Required) => {
            setters.push(quote!(.task_support(::typed_mcp::__private_v0_1::TaskSupport::Required)));
        }
        None => {}
    }
    let a = &f.attr;
    if a.read_only.is_some() || a.destructive.is_some() || a.idempotent.is_some() || a.open_world.is_some() {
        let (r, d, i, o) = (hint(a.read_only), hint(a.destructive), hint(a.idempotent), hint(a.open_world));
        setters.push(quote! {
            .annotations(::typed_mcp::__private_v0_1::ToolAnnotations {
                read_only_hint: #r,
                destructive_hint: #d,
                idempotent_hint: #i,
                open_world_hint: #o,
                ..::core::default::Default::default()
            })
        });
    }
    let mutability = (!f.params.is_empty()).then(|| quote!(mut));
    quote! {{
        let #mutability #schema = ::typed_mcp::__private_v0_1::InputSchema::new();
        #(#describes)*
        #capture
        let #handler = #closure;
        #new
        #(#setters)*
    }}
}

/// The items emitted beside a free `#[tool]` function: a hidden type named like the function
/// (types and functions live in different namespaces) implementing `ToolFn`. Without a body
/// (the function had errors), `definition` is a stub, so uses of the tool still compile.
pub(crate) fn free_items(f: &ToolFn, vis: &syn::Visibility, body: Option<TokenStream>) -> TokenStream {
    crate::codegen::hidden_definition(
        &f.sig.ident,
        vis,
        quote!(::typed_mcp::__private_v0_1::ToolFn),
        quote!(::typed_mcp::__private_v0_1::ToolDef),
        body,
    )
}
