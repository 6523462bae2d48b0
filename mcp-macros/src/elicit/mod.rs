//! `#[derive(Elicit)]`: a form from a flat struct, or the options of a choice from a unit enum.

mod case;
mod expand;
mod parse;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DataEnum, DeriveInput, Fields, Ident};

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
    let (rule, serde_broken) = match valid::rule(&container) {
        Ok(rule) => (rule, container.broken),
        Err(()) => (None, true),
    };
    let shape = Shape { ident: &input.ident, container: &container, rule, generic, serde_broken };
    let output = match &input.data {
        Data::Struct(data) => derive_struct(&shape, &data.fields, &mut errors),
        Data::Enum(data) => derive_enum(&shape, data, &mut errors),
        Data::Union(_) => {
            errors.spanned(
                &input.ident,
                "`#[derive(Elicit)]` applies to structs with named fields and unit-only enums, not unions",
            );
            TokenStream::new()
        }
    };
    let errors = errors.into_compile_errors();
    quote!(#output #errors)
}

/// What every kind of input shares.
struct Shape<'a> {
    ident: &'a Ident,
    container: &'a parse::Container,
    rule: Option<case::Rule>,
    generic: bool,
    /// Serde rejects one of the attributes (and says so); it then emits no `Deserialize`.
    serde_broken: bool,
}

/// The name of a field or variant on the wire, as serde reads it.
fn wire_name(ident: &Ident, rename: Option<&String>, rule: Option<case::Rule>, variant: bool) -> String {
    let name = ident.to_string();
    let name = name.trim_start_matches("r#");
    match (rename, rule) {
        (Some(r), _) => r.clone(),
        (None, Some(rule)) if variant => rule.variant(name),
        (None, Some(rule)) => rule.field(name),
        (None, None) => name.to_owned(),
    }
}

fn derive_struct(shape: &Shape<'_>, fields: &Fields, errors: &mut Errors) -> TokenStream {
    let ident = shape.ident;
    valid::check_container(shape.container, "struct", errors);
    if let Some(style) = &shape.container.style {
        errors.push(syn::Error::new(
            style.span,
            "`#[elicit(style = …)]` on a type applies to enums; on a struct, put it on the choice field",
        ));
    }
    match fields {
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
    let named = matches!(fields, Fields::Named(_));
    let fields = parse::fields(fields, errors);
    let serde_broken = shape.serde_broken || fields.iter().any(|f| f.serde_broken);
    let wire: Vec<String> = fields.iter().map(|f| wire_name(&f.ident, f.rename.as_ref(), shape.rule, false)).collect();
    for (f, w) in fields.iter().zip(&wire) {
        valid::check_field(f, w, errors);
    }
    // Flattened fields are reported above; checking their type too would only repeat it.
    let live: Vec<(&parse::Field, &String)> =
        fields.iter().zip(&wire).filter(|(f, _)| !f.skip && f.flatten.is_none()).collect();
    valid::duplicate_names(live.iter().map(|(f, w)| ((*w).clone(), &f.ident)), "fields", errors);
    if named && fields.iter().all(|f| f.skip) {
        errors.spanned(ident, "a form needs at least one field: this struct has none that serde deserializes");
    }
    // A generic parameter is not in scope of the checks; the generics error says it all.
    let checks: TokenStream =
        if shape.generic { TokenStream::new() } else { live.iter().map(|(f, _)| expand::field_checks(f)).collect() };
    let form_fields = errors.is_empty().then(|| live.iter().map(|(f, w)| expand::form_field(f, w)).collect());
    // Without serde's impl (or with generics), an impl would only add errors.
    let implement = !shape.generic && !serde_broken;
    expand::struct_impl(ident, form_fields, checks, implement)
}

fn derive_enum(shape: &Shape<'_>, data: &DataEnum, errors: &mut Errors) -> TokenStream {
    let ident = shape.ident;
    valid::check_container(shape.container, "enum", errors);
    valid::check_style(shape.container, errors);
    let variants = parse::variants(data, errors);
    let named: Vec<(&parse::Variant, String)> =
        variants.iter().map(|v| (v, wire_name(&v.ident, v.rename.as_ref(), shape.rule, true))).collect();
    for (v, _) in &named {
        valid::check_variant(v, errors);
    }
    valid::duplicate_names(
        named.iter().filter(|(v, _)| !v.skip).map(|(v, w)| (w.clone(), &v.ident)),
        "options",
        errors,
    );
    if named.iter().all(|(v, _)| v.skip) {
        errors.spanned(ident, "a choice needs at least one option: this enum has no variants to offer");
    }
    if shape.generic || shape.serde_broken {
        return TokenStream::new();
    }
    expand::enum_impl(ident, &named, shape.container.style.as_ref().map(|s| s.value.as_str()), errors.is_empty())
}
