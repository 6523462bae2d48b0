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
    let generic = !input.generics.params.is_empty();
    if generic {
        errors.spanned(
            &input.generics,
            "`#[derive(Elicit)]` does not support generic types: a form has one fixed schema; derive it on a concrete type",
        );
    }
    let container = parse::container(&input.attrs, &mut errors);
    // With a `rename_all` rule serde rejects, serde reports it and emits no `Deserialize`.
    let (rule, mut serde_broken) = match valid::rule(&container) {
        Ok(rule) => (rule, container.broken),
        Err(()) => (None, true),
    };
    let ident = &input.ident;
    let output = match &input.data {
        Data::Struct(data) => {
            valid::check_container(&container, "struct", &mut errors);
            if let Some(style) = &container.style {
                errors.push(syn::Error::new(
                    style.span,
                    "`#[elicit(style = …)]` on a type applies to enums; on a struct, put it on the choice field",
                ));
            }
            match data.fields {
                Fields::Named(_) => {}
                Fields::Unnamed(_) => errors.spanned(
                    ident,
                    "`#[derive(Elicit)]` needs named fields, since each field's name is a form field's name; a tuple struct has none: write `struct Name { field: Type, … }`",
                ),
                Fields::Unit => errors.spanned(
                    ident,
                    "a form needs at least one field: give this unit struct named fields, `struct Name { field: Type, … }`",
                ),
            }
            let fields = parse::fields(&data.fields, &mut errors);
            serde_broken |= fields.iter().any(|f| f.serde_broken);
            let wire: Vec<String> = fields
                .iter()
                .map(|f| {
                    let name = f.ident.to_string();
                    let name = name.trim_start_matches("r#");
                    match (&f.rename, rule) {
                        (Some(r), _) => r.clone(),
                        (None, Some(rule)) => rule.field(name),
                        (None, None) => name.to_owned(),
                    }
                })
                .collect();
            for (f, w) in fields.iter().zip(&wire) {
                valid::check_field(f, w, &mut errors);
            }
            // Flattened fields are reported above; checking their type too would only repeat it.
            let live: Vec<(&parse::Field, &String)> =
                fields.iter().zip(&wire).filter(|(f, _)| !f.skip && f.flatten.is_none()).collect();
            valid::duplicate_names(live.iter().map(|(f, w)| ((*w).clone(), &f.ident)), "fields", &mut errors);
            if fields.iter().all(|f| f.skip) && matches!(data.fields, Fields::Named(_)) {
                errors.spanned(ident, "a form needs at least one field: this struct has none that serde deserializes");
            }
            // A generic parameter is not in scope of the checks; the generics error says it all.
            let checks: TokenStream =
                if generic { TokenStream::new() } else { live.iter().map(|(f, _)| expand::field_checks(f)).collect() };
            let statements = errors.is_empty().then(|| {
                live.iter().map(|(f, w)| expand::field_statement(f, w, ident, &container.serde_default)).collect()
            });
            // Without serde's impl (or with generics), an impl would only add errors.
            let implement = !generic && !serde_broken;
            expand::struct_impl(ident, statements, checks, implement)
        }
        Data::Enum(data) => {
            valid::check_container(&container, "enum", &mut errors);
            valid::check_style(&container, &mut errors);
            let variants = parse::variants(data, &mut errors);
            let named: Vec<(&parse::Variant, String)> = variants
                .iter()
                .map(|v| {
                    let name = v.ident.to_string();
                    let name = name.trim_start_matches("r#");
                    let wire = match (&v.rename, rule) {
                        (Some(r), _) => r.clone(),
                        (None, Some(rule)) => rule.variant(name),
                        (None, None) => name.to_owned(),
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
            if generic || serde_broken {
                TokenStream::new()
            } else {
                expand::enum_impl(ident, &named, container.style.as_ref().map(|s| s.value.as_str()), errors.is_empty())
            }
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
