//! Code generation for `#[derive(Elicit)]`: calls into `mcp_core::__private`'s form builder.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit};

use super::parse::{Field, SerdeDefault, Variant};

fn style_tokens(style: Option<&str>) -> TokenStream {
    let variant = match style {
        Some("plain") => quote!(Plain),
        Some("titled") => quote!(Titled),
        Some("enum_names") => quote!(EnumNames),
        _ => quote!(Auto),
    };
    quote!(::mcp_core::__private::OptionStyle::#variant)
}

/// A compile-time check that an option fits the field's kind, spanned at the option.
fn kind_check(ty: &syn::Type, span: proc_macro2::Span, predicate: &str, message: &str) -> TokenStream {
    let predicate = Ident::new(predicate, span);
    quote_spanned! {span=>
        const _: () = ::core::assert!(
            <#ty as ::mcp_core::__private::ElicitField>::KIND.#predicate(),
            #message
        );
    }
}

/// The compile-time checks of one field's options.
pub(crate) fn field_checks(field: &Field) -> TokenStream {
    let ty = &field.ty;
    let o = &field.options;
    let mut checks = Vec::new();
    // The field type must be a form field; the error lands on the type.
    checks.push(quote_spanned! {ty.span()=>
        const _: ::mcp_core::__private::FieldKind = <#ty as ::mcp_core::__private::ElicitField>::KIND;
    });
    let string = "this option applies to string fields only (`min_length`, `max_length`, `format`)";
    for span in [
        o.min_length.as_ref().map(|x| x.span),
        o.max_length.as_ref().map(|x| x.span),
        o.format.as_ref().map(|x| x.span),
    ]
    .into_iter()
    .flatten()
    {
        checks.push(kind_check(ty, span, "is_string", string));
    }
    let numeric = "`minimum` and `maximum` apply to number and integer fields only";
    for span in [o.minimum.as_ref().map(|x| x.span), o.maximum.as_ref().map(|x| x.span)].into_iter().flatten() {
        checks.push(kind_check(ty, span, "is_numeric", numeric));
    }
    let multi = "`min_items` and `max_items` apply to multi-select fields (`Vec` of an enum) only";
    for span in [o.min_items.as_ref().map(|x| x.span), o.max_items.as_ref().map(|x| x.span)].into_iter().flatten() {
        checks.push(kind_check(ty, span, "is_multi_select", multi));
    }
    if let Some(s) = &o.style {
        checks.push(kind_check(
            ty,
            s.span,
            "has_options",
            "`style` applies to choice fields (an enum, or a `Vec` of one) only",
        ));
    }
    quote!(#(#checks)*)
}

/// The statements adding one field to `__form`.
pub(crate) fn field_statement(field: &Field, wire: &str, self_ty: &Ident, container_default: bool) -> TokenStream {
    let ty = &field.ty;
    let o = &field.options;
    let ident = &field.ident;
    let style = style_tokens(o.style.as_ref().map(|s| s.value.as_str()));
    let mut calls = Vec::new();
    if let Some(t) = &o.title {
        calls.push(quote!(.title(#t)));
    }
    match (&o.description, field.doc.is_empty()) {
        (Some(d), _) => calls.push(quote!(.description(#d))),
        (None, false) => {
            let d = &field.doc;
            calls.push(quote!(.description(#d)));
        }
        (None, true) => {}
    }
    if let Some(n) = &o.min_length {
        let v = n.value;
        calls.push(quote!(.min_length(#v)));
    }
    if let Some(n) = &o.max_length {
        let v = n.value;
        calls.push(quote!(.max_length(#v)));
    }
    if let Some(f) = &o.format {
        let v = &f.value;
        calls.push(quote!(.format(#v)));
    }
    if let Some(n) = &o.minimum {
        let v = n.value;
        calls.push(quote!(.minimum(#v)));
    }
    if let Some(n) = &o.maximum {
        let v = n.value;
        calls.push(quote!(.maximum(#v)));
    }
    if let Some(n) = &o.min_items {
        let v = n.value;
        calls.push(quote!(.min_items(#v)));
    }
    if let Some(n) = &o.max_items {
        let v = n.value;
        calls.push(quote!(.max_items(#v)));
    }
    let field_trait = quote!(::mcp_core::__private::ElicitField);
    let default_value = match (&o.default, &field.serde_default) {
        (Some(expr), _) => {
            // A string literal converts into the field's type (`String`); anything else must
            // already have it. Either way the compiler checks it against the field.
            let value = match expr {
                Expr::Lit(ExprLit { lit: Lit::Str(_), .. }) => {
                    quote_spanned!(expr.span()=> ::core::convert::Into::into(#expr))
                }
                _ => quote!(#expr),
            };
            Some(quote_spanned! {expr.span()=> {
                let __default: #ty = #value;
                <#ty as #field_trait>::default_json(&__default)
            }})
        }
        (None, SerdeDefault::Default) => {
            Some(quote!(<#ty as #field_trait>::default_json(&<#ty as ::core::default::Default>::default())))
        }
        (None, SerdeDefault::Path(path)) => Some(quote!(<#ty as #field_trait>::default_json(&#path()))),
        (None, SerdeDefault::None) if container_default => {
            Some(quote!(<#ty as #field_trait>::default_json(&<#self_ty as ::core::default::Default>::default().#ident)))
        }
        (None, SerdeDefault::None) => None,
    };
    if let Some(d) = default_value {
        calls.push(quote!(.default_value(#d)));
    }
    quote! {
        __form.field::<#ty>(#wire, #style) #(#calls)* .add();
    }
}

/// `impl Elicit` for a struct.
pub(crate) fn struct_impl(ident: &Ident, statements: Option<Vec<TokenStream>>, checks: TokenStream) -> TokenStream {
    let body = match statements {
        Some(statements) => quote! {
            static SCHEMA: ::mcp_core::__private::OnceLock<
                ::core::result::Result<::mcp_core::__private::FormSchema, ::mcp_core::__private::SchemaError>,
            > = ::mcp_core::__private::OnceLock::new();
            SCHEMA
                .get_or_init(|| {
                    let mut __form = ::mcp_core::__private::FormBuilder::new();
                    #(#statements)*
                    __form.build()
                })
                .as_ref()
        },
        None => quote!(::core::unreachable!()),
    };
    quote! {
        const _: () = {
            #checks

            #[automatically_derived]
            impl ::mcp_core::__private::Elicit for #ident {
                fn form_schema() -> ::core::result::Result<
                    &'static ::mcp_core::__private::FormSchema,
                    &'static ::mcp_core::__private::SchemaError,
                > {
                    #body
                }
            }
        };
    }
}

/// `impl ElicitOptions` and `impl ElicitField` for a unit-only enum.
pub(crate) fn enum_impl(ident: &Ident, variants: &[(&Variant, String)], style: Option<&str>, ok: bool) -> TokenStream {
    let style = style_tokens(style);
    let options = variants.iter().filter(|(v, _)| !v.skip).map(|(v, wire)| {
        let title = match (&v.title, v.doc.is_empty()) {
            (Some(t), _) => quote!(::core::option::Option::Some(#t)),
            (None, false) => {
                let d = &v.doc;
                quote!(::core::option::Option::Some(#d))
            }
            (None, true) => quote!(::core::option::Option::None),
        };
        quote!(::mcp_core::__private::ChoiceOption { value: #wire, title: #title })
    });
    let arms = variants.iter().map(|(v, wire)| {
        let vi = &v.ident;
        quote!(Self::#vi => #wire)
    });
    let value_body = if ok { quote!(match self { #(#arms,)* }) } else { quote!(::core::unreachable!()) };
    quote! {
        const _: () = {
            #[automatically_derived]
            impl ::mcp_core::__private::ElicitOptions for #ident {
                fn options() -> &'static [::mcp_core::__private::ChoiceOption] {
                    &[#(#options),*]
                }
                fn style() -> ::mcp_core::__private::OptionStyle {
                    #style
                }
                fn value(&self) -> &'static str {
                    #value_body
                }
            }

            #[automatically_derived]
            impl ::mcp_core::__private::ElicitField for #ident {
                const KIND: ::mcp_core::__private::FieldKind = ::mcp_core::__private::FieldKind::SingleSelect;
                fn field_schema(style: ::mcp_core::__private::OptionStyle) -> ::mcp_core::__private::JsonObject {
                    ::mcp_core::__private::single_select_schema::<Self>(style)
                }
                fn default_json(&self) -> ::core::option::Option<::mcp_core::__private::serde_json::Value> {
                    ::core::option::Option::Some(::mcp_core::__private::serde_json::Value::from(
                        <Self as ::mcp_core::__private::ElicitOptions>::value(self),
                    ))
                }
            }
        };
    }
}
