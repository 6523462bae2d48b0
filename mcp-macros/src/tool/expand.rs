//! Code generation for `#[tool]` and `#[toolbox]`. Generated code only calls into
//! `::mcp_core::__private`; the logic lives in `mcp-core`'s traits.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ReturnType};

use super::parse::{Flag, Param, ToolFn};
use super::valid::tool_name;

/// How the generated handler reaches the function.
pub(crate) enum Callee<'a> {
    /// A free function: `name(args)`.
    Free,
    /// A `&self` method through the toolbox's `Arc<Self>`: `this.name(args)`.
    Method(&'a Ident),
    /// An associated function: `Self::name(args)`.
    Associated,
}

fn opt_str(value: Option<&str>) -> TokenStream {
    match value {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
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

fn describe(p: &Param) -> TokenStream {
    let ty = &p.ty;
    let name = p.wire_name();
    let description = opt_str(p.description.as_deref());
    quote_spanned! {ty.span()=>
        <#ty as ::mcp_core::__private::ToolArgument>::describe(&mut __schema, #name, #description);
    }
}

fn extract(p: &Param) -> TokenStream {
    let ty = &p.ty;
    let name = p.wire_name();
    let ident = p.ident.clone().unwrap_or_else(|| Ident::new("__unnamed", Span::call_site()));
    quote_spanned! {ty.span()=>
        let #ident = <#ty as ::mcp_core::__private::ToolArgument>::extract(&mut __call, #name)?;
    }
}

/// The expression building the tool's `ToolDef`.
pub(crate) fn definition(f: &ToolFn, callee: Callee<'_>) -> TokenStream {
    let name = tool_name(f);
    let fn_ident = &f.sig.ident;
    let describes = f.params.iter().map(describe);
    let extracts = f.params.iter().map(extract);
    let idents: Vec<_> = f.params.iter().filter_map(|p| p.ident.clone()).collect();
    let call = match callee {
        Callee::Free => quote!(#fn_ident(#(#idents),*)),
        Callee::Method(this) => quote!(#this.#fn_ident(#(#idents),*)),
        Callee::Associated => quote!(Self::#fn_ident(#(#idents),*)),
    };
    let call = if f.sig.asyncness.is_some() { quote!(#call.await) } else { call };
    // The result check is spanned at the return type, so a wrong type is reported there.
    let check_span = match &f.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => f.sig.ident.span(),
    };
    let checked = quote_spanned!(check_span=> ::mcp_core::__private::tool_result(__out));
    let mut setters = Vec::new();
    if let Some(d) = &f.description {
        setters.push(quote!(.description(#d)));
    }
    if let Some(t) = &f.attr.title {
        setters.push(quote!(.title(#t)));
    }
    let a = &f.attr;
    if a.read_only.is_some() || a.destructive.is_some() || a.idempotent.is_some() || a.open_world.is_some() {
        let (r, d, i, o) = (hint(a.read_only), hint(a.destructive), hint(a.idempotent), hint(a.open_world));
        setters.push(quote! {
            .annotations(::mcp_core::__private::ToolAnnotations {
                read_only_hint: #r,
                destructive_hint: #d,
                idempotent_hint: #i,
                open_world_hint: #o,
                ..::core::default::Default::default()
            })
        });
    }
    let capture = match callee {
        Callee::Method(this) => quote!(let #this = ::mcp_core::__private::Arc::clone(&#this);),
        _ => quote!(),
    };
    quote! {{
        let mut __schema = ::mcp_core::__private::InputSchema::new();
        #(#describes)*
        ::mcp_core::__private::ToolDef::new(
            #name,
            __schema.finish(),
            move |mut __call: ::mcp_core::__private::ToolCall| {
                #capture
                async move {
                    #(#extracts)*
                    let __out = #call;
                    ::core::result::Result::Ok::<_, ::mcp_core::__private::ErrorObject>(#checked)
                }
            },
        )
        #(#setters)*
    }}
}

/// The items emitted beside a free `#[tool]` function: a hidden type named like the function
/// (types and functions live in different namespaces) implementing `ToolFn`.
pub(crate) fn free_items(f: &ToolFn, vis: &syn::Visibility, body: Option<TokenStream>) -> TokenStream {
    let ident = &f.sig.ident;
    let definition = body.unwrap_or_else(|| quote!(::core::unreachable!()));
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code, missing_docs, unreachable_pub)]
        #vis struct #ident {}

        const _: () = {
            #[automatically_derived]
            impl ::mcp_core::__private::ToolFn for #ident {
                fn definition() -> ::mcp_core::__private::ToolDef {
                    #definition
                }
            }
        };
    }
}
