//! Reading a `#[derive(Elicit)]` input: the serde attributes that shape the wire form and our
//! own `#[elicit(…)]` options. No semantic checks here.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Fields, Ident, Lit, LitStr, Meta, Token, Type};

use crate::common::{Errors, doc_text};
use crate::options;

/// An option's value, with the spans of its key (`min_length` in `min_length = 1`) and of its
/// value, for diagnostics.
pub(crate) struct Spanned_<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
    pub(crate) value_span: Span,
}

impl<T> Spanned_<T> {
    fn new(value: T, meta: &Meta) -> Self {
        let value_span = match meta {
            Meta::NameValue(nv) => nv.value.span(),
            _ => meta.span(),
        };
        Spanned_ { value, span: meta.path().span(), value_span }
    }
}

/// `#[elicit(…)]` on a field: only what schemars cannot say.
#[derive(Default)]
pub(crate) struct FieldOptions {
    pub(crate) style: Option<Spanned_<String>>,
    pub(crate) not_secret: bool,
}

/// A number in `length(…)` or `range(…)`, when written as a literal.
pub(crate) struct Bound {
    pub(crate) value: f64,
    pub(crate) span: Span,
}

/// `length(min = …, max = …)` or `range(min = …, max = …)`.
pub(crate) struct Bounds {
    /// The span of `length` or `range`.
    pub(crate) span: Span,
    pub(crate) min: Option<Bound>,
    pub(crate) max: Option<Bound>,
}

/// What a field's `#[schemars(…)]` (and `#[validate(…)]`, `#[garde(…)]`, which schemars also
/// reads) put into its schema, as far as the form's checks need to know.
#[derive(Default)]
pub(crate) struct SchemaAttrs {
    pub(crate) length: Option<Bounds>,
    pub(crate) range: Option<Bounds>,
    /// `email`, `url` or `extend("format" = "…")`.
    pub(crate) format: Option<Spanned_<String>>,
    /// Keys that put something outside MCP's form subset into the schema: the attribute as
    /// written, its span, and what to write instead.
    pub(crate) outside: Vec<(String, Span, &'static str)>,
}

/// One named field.
pub(crate) struct Field {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) rename: Option<String>,
    pub(crate) skip: bool,
    pub(crate) flatten: Option<Span>,
    /// Set when serde will reject one of the field's attributes itself (and report it).
    pub(crate) serde_broken: bool,
    pub(crate) options: FieldOptions,
    pub(crate) schema: SchemaAttrs,
}

/// One enum variant.
pub(crate) struct Variant {
    pub(crate) ident: Ident,
    pub(crate) doc: String,
    pub(crate) rename: Option<String>,
    pub(crate) skip: bool,
    pub(crate) title: Option<LitStr>,
    /// The span of the variant's data, if it has any.
    pub(crate) data: Option<Span>,
}

/// Container-level attributes.
pub(crate) struct Container {
    pub(crate) rename_all: Option<Spanned_<String>>,
    pub(crate) style: Option<Spanned_<String>>,
    /// Serde options that make the type deserialize from something other than its own
    /// fields or variant names (`transparent`, `from`, `tag`, …), with their spans.
    pub(crate) reshaping: Vec<(String, Span)>,
    /// Set when serde will reject one of the attributes itself (and report it).
    pub(crate) broken: bool,
}

fn list_tokens(attr: &Attribute, errors: &mut Errors) -> Option<proc_macro2::TokenStream> {
    match &attr.meta {
        Meta::List(list) => Some(list.tokens.clone()),
        other => {
            errors.spanned(other, "expected a list of options, e.g. `#[elicit(style = \"plain\")]`");
            None
        }
    }
}

fn lit_of(meta: &Meta) -> Option<&Lit> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit, .. }) => Some(lit),
            _ => None,
        },
        _ => None,
    }
}

/// The `#[elicit]` field options.
pub(crate) const FIELD_OPTIONS: &[&str] = &["style", "not_secret"];

/// Former `#[elicit]` field options and what schemars (or serde) attribute says the same.
const MOVED: &[(&str, &str)] = &[
    ("title", "`#[schemars(title = \"…\")]`"),
    ("description", "a doc comment or `#[schemars(description = \"…\")]`"),
    ("min_length", "`#[schemars(length(min = …))]`"),
    ("max_length", "`#[schemars(length(max = …))]`"),
    ("min_items", "`#[schemars(length(min = …))]`"),
    ("max_items", "`#[schemars(length(max = …))]`"),
    ("minimum", "`#[schemars(range(min = …))]`"),
    ("maximum", "`#[schemars(range(max = …))]`"),
    ("format", "`#[schemars(email)]`, `#[schemars(url)]` or `#[schemars(extend(\"format\" = \"date\"))]`"),
    ("default", "`#[serde(default)]`, `#[serde(default = \"path\")]` or `#[schemars(extend(\"default\" = …))]`"),
];

fn field_options(attrs: &[Attribute], errors: &mut Errors) -> FieldOptions {
    let mut o = FieldOptions::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("elicit")) {
        let Some(tokens) = list_tokens(attr, errors) else { continue };
        for meta in options::metas(tokens, "elicit", errors) {
            match options::key(&meta).as_str() {
                "style" => {
                    let v = options::string_value(&meta, "elicit", errors).map(|s| Spanned_::new(s.value(), &meta));
                    options::set_once(&mut o.style, v, &meta, "elicit", errors)
                }
                "not_secret" => match meta {
                    Meta::Path(_) => o.not_secret = true,
                    _ => errors.spanned(&meta, "`not_secret` takes no value: write `#[elicit(not_secret)]`"),
                },
                other => match MOVED.iter().find(|(key, _)| *key == other) {
                    Some((_, instead)) => errors.spanned(
                        meta.path(),
                        format!(
                            "`#[elicit({other})]` is not an option: the form's schema comes from schemars, so write {instead} instead"
                        ),
                    ),
                    None => errors.spanned(meta.path(), options::unknown_message("elicit", other, FIELD_OPTIONS)),
                },
            }
        }
    }
    o
}

/// The formats MCP forms allow.
pub(crate) const FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// Keys `extend(…)` may add to a field's schema.
const EXTEND_KEYS: &[&str] = &[
    "title",
    "description",
    "format",
    "default",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
];

/// schemars options that put keys outside MCP's subset, and what to do instead.
const OUTSIDE: &[(&str, &str)] = &[
    (
        "regex",
        "MCP forms have no `pattern`; check the answer's shape in your handler after it arrives, or offer the valid values as an enum",
    ),
    (
        "pattern",
        "MCP forms have no `pattern`; check the answer's shape in your handler after it arrives, or offer the valid values as an enum",
    ),
    ("contains", "MCP forms have no `pattern`; check the answer in your handler after it arrives"),
    (
        "inner",
        "a form field holds no list of free values; use a `Vec` of a `#[derive(Elicit)]` enum, with `#[schemars(length(…))]` for the number of choices",
    ),
    ("nested", "MCP forms are flat; list the inner fields in this struct directly"),
    ("dive", "MCP forms are flat; list the inner fields in this struct directly"),
    ("ip", "the formats MCP forms allow are email, uri, date and date-time; check the address in your handler"),
    ("ipv4", "the formats MCP forms allow are email, uri, date and date-time; check the address in your handler"),
    ("ipv6", "the formats MCP forms allow are email, uri, date and date-time; check the address in your handler"),
];

/// A literal number, possibly negative.
fn literal_number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit { lit: Lit::Float(f), .. }) => f.base10_parse::<f64>().ok(),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => literal_number(&u.expr).map(|v| -v),
        Expr::Group(g) => literal_number(&g.expr),
        _ => None,
    }
}

/// Consumes an option's value (`= expr` or `(…)`), whatever it is.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<proc_macro2::TokenStream>()?;
    }
    Ok(())
}

fn bounds(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Bounds> {
    let mut b = Bounds { span: meta.path.span(), min: None, max: None };
    meta.parse_nested_meta(|inner| {
        let slot = if inner.path.is_ident("min") {
            Some(&mut b.min)
        } else if inner.path.is_ident("max") {
            Some(&mut b.max)
        } else {
            None
        };
        let value: Expr = inner.value()?.parse()?;
        if let (Some(slot), Some(n)) = (slot, literal_number(&value)) {
            *slot = Some(Bound { value: n, span: value.span() });
        }
        Ok(())
    })?;
    Ok(b)
}

/// Reads `#[schemars(…)]`, `#[validate(…)]` and `#[garde(…)]` on a field. What does not parse
/// is schemars' to report (its derive reads the same attributes), so it is skipped here.
fn schema_attrs(attrs: &[Attribute]) -> SchemaAttrs {
    let mut s = SchemaAttrs::default();
    for attr in attrs {
        let Some(which) = ["schemars", "validate", "garde"].into_iter().find(|w| attr.path().is_ident(w)) else {
            continue;
        };
        let _ = attr.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
            if let Some((_, instead)) = OUTSIDE.iter().find(|(k, _)| *k == key) {
                let written = if meta.input.peek(syn::token::Paren) {
                    format!("#[{which}({key}(…))]")
                } else if meta.input.peek(Token![=]) {
                    format!("#[{which}({key} = …)]")
                } else {
                    format!("#[{which}({key})]")
                };
                s.outside.push((written, meta.path.span(), instead));
                return skip_value(&meta);
            }
            match key.as_str() {
                "length" => s.length = Some(bounds(&meta)?),
                "range" => s.range = Some(bounds(&meta)?),
                "email" | "url" => {
                    let format = if key == "email" { "email" } else { "uri" };
                    s.format = Some(Spanned_ { value: format.into(), span: meta.path.span(), value_span: meta.path.span() });
                    skip_value(&meta)?;
                }
                "extend" if which == "schemars" => {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    while !content.is_empty() {
                        let name: LitStr = content.parse()?;
                        content.parse::<Token![=]>()?;
                        let value: Expr = content.parse()?;
                        let k = name.value();
                        if k == "format" {
                            if let Expr::Lit(ExprLit { lit: Lit::Str(f), .. }) = &value {
                                s.format = Some(Spanned_ { value: f.value(), span: name.span(), value_span: f.span() });
                            }
                        } else if !EXTEND_KEYS.contains(&k.as_str()) {
                            s.outside.push((
                                format!("#[schemars(extend(\"{k}\" = …))]"),
                                name.span(),
                                "a form field's schema takes only `type`, `title`, `description`, `default`, `minLength`, `maxLength`, `format`, `minimum`, `maximum`, `minItems` and `maxItems`",
                            ));
                        }
                        if content.peek(Token![,]) {
                            content.parse::<Token![,]>()?;
                        }
                    }
                }
                _ => skip_value(&meta)?,
            }
            Ok(())
        });
    }
    s
}

/// The deserialize-side name in `rename = "…"` or `rename(deserialize = "…")`.
fn serde_name(meta: &Meta) -> Option<String> {
    match meta {
        Meta::NameValue(_) => match lit_of(meta) {
            Some(Lit::Str(s)) => Some(s.value()),
            _ => None,
        },
        Meta::List(list) => {
            let mut found = None;
            let _ = list.parse_nested_meta(|m| {
                if m.path.is_ident("deserialize") {
                    found = Some(m.value()?.parse::<LitStr>()?.value());
                } else if m.input.peek(Token![=]) {
                    m.value()?.parse::<LitStr>()?;
                }
                Ok(())
            });
            found
        }
        Meta::Path(_) => None,
    }
}

/// The serde attributes of a field or variant that change the form.
struct SerdeItem {
    rename: Option<String>,
    skip: bool,
    flatten: Option<Span>,
    /// Set when serde will reject the attribute itself (and report it).
    broken: bool,
}

/// The serde options in `#[serde(…)]` attributes. Unknown or malformed options are serde's to
/// report; we only read the ones that shape the form.
fn serde_metas(attrs: &[Attribute]) -> Vec<Meta> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .filter_map(|a| match &a.meta {
            Meta::List(list) => Some(options::metas(list.tokens.clone(), "serde", &mut Errors::default())),
            _ => None,
        })
        .flatten()
        .collect()
}

/// Whether serde will reject a `default` option (it takes nothing, or a string that is a path).
fn serde_default_broken(meta: &Meta) -> bool {
    match meta {
        Meta::Path(_) => false,
        _ => !matches!(lit_of(meta), Some(Lit::Str(s)) if s.parse::<syn::ExprPath>().is_ok()),
    }
}

fn serde_item(attrs: &[Attribute]) -> SerdeItem {
    let mut item = SerdeItem { rename: None, skip: false, flatten: None, broken: false };
    for meta in serde_metas(attrs) {
        match options::key(&meta).as_str() {
            "rename" => item.rename = serde_name(&meta).or(item.rename),
            "skip" | "skip_deserializing" => item.skip = true,
            "flatten" => item.flatten = Some(meta.span()),
            "default" => item.broken |= serde_default_broken(&meta),
            _ => {}
        }
    }
    item
}

/// Container options after which serde no longer reads the type as an object of its fields
/// (or, for an enum, as one of its variant names).
const RESHAPING: &[&str] = &["transparent", "from", "try_from", "tag", "content", "untagged"];

pub(crate) fn container(attrs: &[Attribute], errors: &mut Errors) -> Container {
    let mut c = Container { rename_all: None, style: None, reshaping: Vec::new(), broken: false };
    for meta in serde_metas(attrs) {
        let key = options::key(&meta);
        match key.as_str() {
            "rename_all" => {
                if let Some(rule) = serde_name(&meta) {
                    c.rename_all = Some(Spanned_::new(rule, &meta));
                }
            }
            "default" => c.broken |= serde_default_broken(&meta),
            _ if RESHAPING.contains(&key.as_str()) => c.reshaping.push((key, meta.path().span())),
            _ => {}
        }
    }
    for attr in attrs.iter().filter(|a| a.path().is_ident("elicit")) {
        let Some(tokens) = list_tokens(attr, errors) else { continue };
        for meta in options::metas(tokens, "elicit", errors) {
            match options::key(&meta).as_str() {
                "style" => {
                    let v = options::string_value(&meta, "elicit", errors).map(|s| Spanned_::new(s.value(), &meta));
                    options::set_once(&mut c.style, v, &meta, "elicit", errors)
                }
                other => errors.spanned(
                    meta.path(),
                    format!(
                        "{} (field options go on the fields)",
                        options::unknown_message_on("elicit", " on a type", other, &["style"])
                    ),
                ),
            }
        }
    }
    c
}

pub(crate) fn fields(fields: &Fields, errors: &mut Errors) -> Vec<Field> {
    fields
        .iter()
        .filter_map(|f| {
            let ident = f.ident.clone()?;
            let serde = serde_item(&f.attrs);
            Some(Field {
                ident,
                ty: f.ty.clone(),
                rename: serde.rename,
                skip: serde.skip,
                flatten: serde.flatten,
                serde_broken: serde.broken,
                options: field_options(&f.attrs, errors),
                schema: schema_attrs(&f.attrs),
            })
        })
        .collect()
}

pub(crate) fn variants(data: &syn::DataEnum, errors: &mut Errors) -> Vec<Variant> {
    data.variants
        .iter()
        .map(|v| {
            let serde = serde_item(&v.attrs);
            let mut title = None;
            for attr in v.attrs.iter().filter(|a| a.path().is_ident("elicit")) {
                let Some(tokens) = list_tokens(attr, errors) else { continue };
                for meta in options::metas(tokens, "elicit", errors) {
                    match options::key(&meta).as_str() {
                        "title" => options::set_once(
                            &mut title,
                            options::string_value(&meta, "elicit", errors),
                            &meta,
                            "elicit",
                            errors,
                        ),
                        other => errors.spanned(
                            meta.path(),
                            options::unknown_message_on("elicit", " on a variant", other, &["title"]),
                        ),
                    }
                }
            }
            Variant {
                ident: v.ident.clone(),
                doc: doc_text(&v.attrs),
                rename: serde.rename,
                skip: serde.skip,
                title,
                data: (!matches!(v.fields, Fields::Unit)).then(|| v.fields.span()),
            }
        })
        .collect()
}
