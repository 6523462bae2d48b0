//! `#[derive(Elicit)]`: a form from a flat struct, or the options of a choice from a unit enum.

mod case;
mod expand;
mod parse;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::common::Errors;

pub(crate) fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Errors::default();
    if !input.generics.params.is_empty() {
        errors.spanned(
            &input.generics,
            "`#[derive(Elicit)]` does not support generic types: a form has one fixed schema",
        );
    }
    let container = parse::container(&input.attrs, &mut errors);
    let rule = valid::rule(&container, &mut errors);
    let ident = &input.ident;
    let output = match &input.data {
        Data::Struct(data) => {
            if container.style.is_some() {
                errors.spanned(
                    ident,
                    "`#[elicit(style = …)]` on a type applies to enums; on a struct, put it on the field",
                );
            }
            if !matches!(data.fields, Fields::Named(_)) {
                errors.spanned(
                    &input.ident,
                    "`#[derive(Elicit)]` needs a struct with named fields (each becomes a form field) or a unit-only enum",
                );
            }
            let fields = parse::fields(&data.fields, &mut errors);
            let wire: Vec<String> = fields
                .iter()
                .map(|f| match (&f.rename, rule) {
                    (Some(r), _) => r.clone(),
                    (None, Some(rule)) => rule.field(f.ident.to_string().trim_start_matches("r#")),
                    (None, None) => f.ident.to_string().trim_start_matches("r#").to_owned(),
                })
                .collect();
            for (f, w) in fields.iter().zip(&wire) {
                valid::check_field(f, w, &mut errors);
            }
            let live: Vec<(&parse::Field, &String)> = fields.iter().zip(&wire).filter(|(f, _)| !f.skip).collect();
            valid::duplicate_names(live.iter().map(|(f, w)| ((*w).clone(), &f.ident)), "fields", &mut errors);
            if live.is_empty() && matches!(data.fields, Fields::Named(_)) {
                errors.spanned(ident, "a form needs at least one field");
            }
            let checks: TokenStream = live.iter().map(|(f, _)| expand::field_checks(f)).collect();
            let statements = errors.is_empty().then(|| {
                live.iter().map(|(f, w)| expand::field_statement(f, w, ident, container.serde_default)).collect()
            });
            expand::struct_impl(ident, statements, checks)
        }
        Data::Enum(data) => {
            valid::check_style(&container, &mut errors);
            let variants = parse::variants(data, &mut errors);
            let named: Vec<(&parse::Variant, String)> = variants
                .iter()
                .map(|v| {
                    let wire = match (&v.rename, rule) {
                        (Some(r), _) => r.clone(),
                        (None, Some(rule)) => rule.variant(&v.ident.to_string()),
                        (None, None) => v.ident.to_string(),
                    };
                    (v, wire)
                })
                .collect();
            for (v, _) in &named {
                valid::check_variant(v, &mut errors);
            }
            valid::duplicate_names(
                named.iter().filter(|(v, _)| !v.skip).map(|(v, w)| (w.clone(), &v.ident)),
                "options",
                &mut errors,
            );
            if named.iter().all(|(v, _)| v.skip) {
                errors.spanned(ident, "a choice needs at least one option: this enum has no variants to offer");
            }
            expand::enum_impl(ident, &named, container.style.as_ref().map(|s| s.value.as_str()), errors.is_empty())
        }
        Data::Union(_) => {
            errors.spanned(
                ident,
                "`#[derive(Elicit)]` applies to structs with named fields and unit-only enums, not unions",
            );
            TokenStream::new()
        }
    };
    let errors = errors.into_compile_errors();
    quote!(#output #errors)
}
