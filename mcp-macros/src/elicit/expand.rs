//! Code generation for `#[derive(Elicit)]`: calls into `mcp_core::__private`'s form builder.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit};

use super::parse::{Field, SerdeDefault, Spanned_, Variant};

fn style_tokens(style: Option<&str>) -> TokenStream {
    let variant = match style {
        Some("plain") => quote!(Plain),
        Some("titled") => quote!(Titled),
        Some("enum_names") => quote!(EnumNames),
        _ => quote!(Auto),
    };
    quote!(::mcp_core::__private::OptionStyle::#variant)
}

/// A type as the user wrote it, spaced the way rustfmt would (`Option<Vec<Size>>`), for
/// messages.
fn type_text(ty: &syn::Type) -> String {
    let raw = quote!(#ty).to_string();
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' {
            let before = out.chars().last();
            let after = chars.peek().copied();
            let glue_before = matches!(before, Some('<' | '&' | '(' | '[' | ':' | '\''));
            let glue_after = matches!(after, Some('<' | '>' | ',' | ')' | ']' | ':' | ';'));
            if glue_before || glue_after {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The compile-time checks of one field: that its type is a form field (the error lands on the
/// type, with `ElicitField`'s explanation), and that each option fits the field's kind (the
/// error lands on the option). A type that is not a form field fails only the first check: the
/// option checks read the kind through `__KIND`, whose error is not reported again.
pub(crate) fn field_checks(field: &Field) -> TokenStream {
    let ty = &field.ty;
    let o = &field.options;
    let shown = type_text(ty);
    let mut checks = Vec::new();
    let mut check = |span: Span, predicate: &str, message: String| {
        let predicate = Ident::new(predicate, span);
        checks.push(quote_spanned! {span=>
            const _: () = ::core::assert!(__KIND.#predicate(), #message);
        });
    };
    for (key, option) in [("min_length", &o.min_length), ("max_length", &o.max_length)] {
        if let Some(option) = option {
            check(option.span, "is_string", format!("`{key}` applies to string fields only, and `{shown}` is not one"));
        }
    }
    if let Some(option) = &o.format {
        check(option.span, "is_string", format!("`format` applies to string fields only, and `{shown}` is not one"));
    }
    for (key, option) in [("minimum", &o.minimum), ("maximum", &o.maximum)] {
        if let Some(option) = option {
            check(
                option.span,
                "is_numeric",
                format!("`{key}` applies to number and integer fields only, and `{shown}` is not one"),
            );
        }
    }
    for (key, option) in [("min_items", &o.min_items), ("max_items", &o.max_items)] {
        if let Some(option) = option {
            check(
                option.span,
                "is_multi_select",
                format!(
                    "`{key}` applies to multi-select fields only (a `Vec` of a `#[derive(Elicit)]` enum), and `{shown}` is not one"
                ),
            );
        }
    }
    if let Some(Spanned_ { value: Expr::Lit(ExprLit { lit: Lit::Str(text), .. }), .. }) = &o.default {
        check(
            text.span(),
            "takes_text_default",
            format!(
                "a string `default` applies to string and single-choice fields only; for `{shown}`, write a value of that type, e.g. `default = 0` or `default = true`"
            ),
        );
    }
    if let Some(style) = &o.style {
        check(
            style.span,
            "has_options",
            format!(
                "`style` applies to choice fields only (a `#[derive(Elicit)]` enum, or a `Vec` of one), and `{shown}` is not one"
            ),
        );
        if style.value == "enum_names" {
            check(
                style.value_span,
                "is_single_select",
                format!(
                    "`style = \"enum_names\"` has no multi-select spelling in MCP forms; use \"plain\" or \"titled\" for `{shown}`"
                ),
            );
        }
    }
    let kind = quote_spanned! {ty.span()=>
        <#ty as ::mcp_core::__private::ElicitField>::KIND
    };
    // Bounds beyond what the type holds would let the client send a number serde then refuses.
    let mut range_checks = Vec::new();
    for (key, option) in [("minimum", &o.minimum), ("maximum", &o.maximum)] {
        if let Some(option) = option {
            let value = option.value;
            let message = format!(
                "`{key} = {value}` is outside the values `{shown}` can hold; the client could send a number the field cannot take"
            );
            range_checks.push(quote_spanned! {option.value_span=>
                const _: () = ::core::assert!(__RANGE.0 <= #value && #value <= __RANGE.1, #message);
            });
        }
    }
    let range = (!range_checks.is_empty()).then(|| {
        let range = quote_spanned! {ty.span()=>
            <#ty as ::mcp_core::__private::ElicitField>::RANGE
        };
        quote! {
            const __RANGE: (f64, f64) = #range;
            #(#range_checks)*
        }
    });
    quote! {
        const _: () = {
            const __KIND: ::mcp_core::__private::FieldKind = #kind;
            #(#checks)*
            #range
        };
    }
}

/// The statements adding one field to `__form`.
pub(crate) fn field_statement(
    field: &Field,
    wire: &str,
    self_ty: &Ident,
    container_default: &SerdeDefault,
) -> TokenStream {
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
    // `<T as ElicitField>` spanned at the type: if `T` is not a form field, these report the
    // very error of the type check in `field_checks`, which the compiler shows once.
    let field_trait = quote_spanned!(ty.span()=> <#ty as ::mcp_core::__private::ElicitField>);
    let default_value = match (o.default.as_ref().map(|d| &d.value), &field.serde_default) {
        // A string literal is the value on the wire: the text of a string field, or the value
        // of one option of a choice (`field_checks` rejects it on other kinds; building the
        // schema checks it against the options).
        (Some(Expr::Lit(ExprLit { lit: Lit::Str(text), .. })), _) => Some(quote_spanned! {text.span()=>
            ::core::option::Option::Some(::mcp_core::__private::serde_json::Value::from(#text))
        }),
        // Anything else must have the field's type, which the compiler checks.
        (Some(expr), _) => Some(quote_spanned! {expr.span()=> {
            let __default: #ty = #expr;
            #field_trait::default_json(&__default)
        }}),
        (None, SerdeDefault::Default(_)) => {
            Some(quote!(#field_trait::default_json(&<#ty as ::core::default::Default>::default())))
        }
        (None, SerdeDefault::Path(path, _)) => Some(quote!(#field_trait::default_json(&#path()))),
        (None, SerdeDefault::None) => match container_default {
            SerdeDefault::None => None,
            SerdeDefault::Default(_) => {
                Some(quote!(#field_trait::default_json(&<#self_ty as ::core::default::Default>::default().#ident)))
            }
            SerdeDefault::Path(path, _) => Some(quote!(#field_trait::default_json(&#path().#ident))),
        },
    };
    if let Some(d) = default_value {
        calls.push(quote!(.default_value(#d)));
    }
    quote! {
        __form
            .property(#wire, #field_trait::field_schema(#style), #field_trait::REQUIRED)
            #(#calls)*
            .add();
    }
}

/// `impl Elicit` for a struct.
pub(crate) fn struct_impl(
    ident: &Ident,
    statements: Option<Vec<TokenStream>>,
    checks: TokenStream,
    implement: bool,
) -> TokenStream {
    if !implement {
        return quote!(const _: () = { #checks };);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_read_as_written() {
        for (ty, text) in [
            (syn::parse_quote!(Option<Vec<Size>>), "Option<Vec<Size>>"),
            (syn::parse_quote!(std::collections::HashMap<String, u8>), "std::collections::HashMap<String, u8>"),
            (syn::parse_quote!((f64, f64)), "(f64, f64)"),
            (syn::parse_quote!(&'static str), "&'static str"),
            (syn::parse_quote!([u8; 4]), "[u8; 4]"),
        ] {
            let ty: syn::Type = ty;
            assert_eq!(type_text(&ty), text);
        }
    }
}
