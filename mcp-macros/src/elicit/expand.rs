//! Code generation for `#[derive(Elicit)]`: calls into `typed_mcp::__private_v0_1`'s form builder.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use super::parse::{Field, Variant};

fn style_tokens(style: Option<&str>) -> TokenStream {
    let variant = match style {
        Some("plain") => quote!(Plain),
        Some("titled") => quote!(Titled),
        Some("enum_names") => quote!(EnumNames),
        _ => quote!(Auto),
    };
    quote!(::typed_mcp::__private_v0_1::OptionStyle::#variant)
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
/// type, with `ElicitField`'s explanation), and that each schemars attribute fits the field's
/// kind (the error lands on the attribute). A type that is not a form field fails only the
/// first check: the attribute checks read the kind through `__KIND`, whose error is not
/// reported again.
pub(crate) fn field_checks(field: &Field) -> TokenStream {
    let ty = &field.ty;
    let o = &field.options;
    let s = &field.schema;
    let shown = type_text(ty);
    let mut checks = Vec::new();
    let mut check = |span: Span, predicate: &str, message: String| {
        let predicate = Ident::new(predicate, span);
        checks.push(quote_spanned! {span=>
            const _: () = ::core::assert!(__KIND.#predicate(), #message);
        });
    };
    if let Some(length) = &s.length {
        check(
            length.span,
            "takes_length",
            format!(
                "`length` applies to string fields (`minLength`/`maxLength`) and multi-select fields (`minItems`/`maxItems`) only, and `{shown}` is neither"
            ),
        );
    }
    if let Some(range) = &s.range {
        check(
            range.span,
            "is_numeric",
            format!("`range` applies to number and integer fields only, and `{shown}` is not one"),
        );
    }
    if let Some(format) = &s.format {
        check(format.span, "is_string", format!("a `format` applies to string fields only, and `{shown}` is not one"));
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
        <#ty as ::typed_mcp::__private_v0_1::ElicitField>::KIND
    };
    // Bounds beyond what the type holds would let the client send a number serde then refuses.
    let mut range_checks = Vec::new();
    if let Some(range) = &s.range {
        for (key, bound) in [("min", &range.min), ("max", &range.max)] {
            if let Some(bound) = bound {
                let value = bound.value;
                let message = format!(
                    "`range({key} = {value})` is outside the values `{shown}` can hold; the client could send a number the field cannot take"
                );
                range_checks.push(quote_spanned! {bound.span=>
                    const _: () = ::core::assert!(__RANGE.0 <= #value && #value <= __RANGE.1, #message);
                });
            }
        }
    }
    let range = (!range_checks.is_empty()).then(|| {
        let range = quote_spanned! {ty.span()=>
            <#ty as ::typed_mcp::__private_v0_1::ElicitField>::RANGE
        };
        quote! {
            const __RANGE: (f64, f64) = #range;
            #(#range_checks)*
        }
    });
    quote! {
        const _: () = {
            const __KIND: ::typed_mcp::__private_v0_1::FieldKind = #kind;
            #(#checks)*
            #range
        };
    }
}

/// The field's entry in the table handed to `form_schema_for`: its wire name, its type (kind
/// and options) and its option style. `<T as ElicitField>` is spanned at the type: if `T` is
/// not a form field, this reports the very error of the type check in `field_checks`, which
/// the compiler shows once.
pub(crate) fn form_field(field: &Field, wire: &str) -> TokenStream {
    let ty = &field.ty;
    let style = style_tokens(field.options.style.as_ref().map(|s| s.value.as_str()));
    let field_trait = quote_spanned!(ty.span()=> <#ty as ::typed_mcp::__private_v0_1::ElicitField>);
    quote!(#field_trait::form_field(#wire, #style))
}

/// `impl Elicit` for a struct: schemars' schema through typed-mcp's form transform, built and
/// checked once.
pub(crate) fn struct_impl(
    ident: &Ident,
    fields: Option<Vec<TokenStream>>,
    checks: TokenStream,
    implement: bool,
) -> TokenStream {
    if !implement {
        return quote!(const _: () = { #checks };);
    }
    let body = match fields {
        Some(fields) => quote! {
            static SCHEMA: ::typed_mcp::__private_v0_1::OnceLock<
                ::core::result::Result<::typed_mcp::__private_v0_1::FormSchema, ::typed_mcp::__private_v0_1::SchemaError>,
            > = ::typed_mcp::__private_v0_1::OnceLock::new();
            SCHEMA
                .get_or_init(|| ::typed_mcp::__private_v0_1::form_schema_for::<Self>(&[#(#fields),*]))
                .as_ref()
        },
        None => quote!(::core::unreachable!()),
    };
    quote! {
        const _: () = {
            #checks

            #[automatically_derived]
            impl ::typed_mcp::__private_v0_1::Elicit for #ident {
                fn form_schema() -> ::core::result::Result<
                    &'static ::typed_mcp::__private_v0_1::FormSchema,
                    &'static ::typed_mcp::__private_v0_1::SchemaError,
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
        quote!(::typed_mcp::__private_v0_1::ChoiceOption { value: #wire, title: #title })
    });
    let arms = variants.iter().map(|(v, wire)| {
        let vi = &v.ident;
        quote!(Self::#vi => #wire)
    });
    let value_body = if ok { quote!(match self { #(#arms,)* }) } else { quote!(::core::unreachable!()) };
    quote! {
        const _: () = {
            #[automatically_derived]
            impl ::typed_mcp::__private_v0_1::ElicitOptions for #ident {
                fn options() -> &'static [::typed_mcp::__private_v0_1::ChoiceOption] {
                    &[#(#options),*]
                }
                fn style() -> ::typed_mcp::__private_v0_1::OptionStyle {
                    #style
                }
                fn value(&self) -> &'static str {
                    #value_body
                }
            }

            #[automatically_derived]
            impl ::typed_mcp::__private_v0_1::ElicitField for #ident {
                const KIND: ::typed_mcp::__private_v0_1::FieldKind = ::typed_mcp::__private_v0_1::FieldKind::SingleSelect;
                fn field_schema(style: ::typed_mcp::__private_v0_1::OptionStyle) -> ::typed_mcp::__private_v0_1::JsonObject {
                    ::typed_mcp::__private_v0_1::single_select_schema::<Self>(style)
                }
                fn default_json(&self) -> ::core::option::Option<::typed_mcp::__private_v0_1::serde_json::Value> {
                    ::core::option::Option::Some(::typed_mcp::__private_v0_1::serde_json::Value::from(
                        <Self as ::typed_mcp::__private_v0_1::ElicitOptions>::value(self),
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
