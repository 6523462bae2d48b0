//! `#[resource]`: parse → validate → expand.

mod expand;
mod parse;
mod valid;

use crate::options::LooseFn;
use proc_macro2::TokenStream;
use quote::quote;

use crate::codegen::{hidden_definition, item_head};
use crate::common::Errors;

/// `#[resource("uri", …)]` on a function.
pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let Ok(mut item) = syn::parse2::<LooseFn>(input.clone()) else {
        let e = syn::Error::new_spanned(item_head(&input), "`#[resource]` applies to functions").to_compile_error();
        return quote!(#e #input);
    };
    let mut errors = Errors::default();
    let attr = parse::resource_attr(args, &mut errors);
    let spec = parse::resource_fn(attr, &item.attrs, &mut item.sig, &mut errors);
    let vars = valid::check(&spec, &mut errors);
    let body = errors.is_empty().then(|| expand::definition(&spec, &vars));
    // A method sits in an `impl` block, where the hidden type cannot go: emit the function and
    // the errors only (one of them says to use a free function).
    let has_receiver = matches!(item.sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
    let items = if has_receiver {
        TokenStream::new()
    } else {
        hidden_definition(
            &spec.sig.ident,
            &item.vis,
            quote!(::typed_mcp::__private_v0_1::ResourceFn),
            quote!(::typed_mcp::__private_v0_1::ResourceDef),
            body,
        )
    };
    let errors = errors.into_compile_errors();
    quote! {
        #item
        #items
        #errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_variables() {
        assert_eq!(valid::template_variables("test://template/{id}/data").unwrap(), ["id"]);
        assert_eq!(valid::template_variables("s://q{?a,b}").unwrap(), ["a", "b"]);
        assert_eq!(valid::template_variables("img://{name}{.ext}").unwrap(), ["name", "ext"]);
        for bad in
            ["x://{", "x://}", "x://{}", "x://{a b}", "x://{a*}", "x://{;a}", "x://{a,b}", "x://{a}{b}", "x://{a}/{a}"]
        {
            assert!(valid::template_variables(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn expands_a_template() {
        let out = expand(
            quote!("test://template/{id}/data", mime_type = "application/json"),
            quote! { fn item(id: u32, ctx: Context) -> String { String::new() } },
        )
        .to_string();
        assert!(out.contains("ResourceVariable"), "{out}");
        assert!(out.contains("ResourceInjected"), "{out}");
        assert!(out.contains(":: template"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn a_variable_without_argument_is_named() {
        let out =
            expand(quote!("test://template/{id}/data"), quote! { fn item() -> String { String::new() } }).to_string();
        assert!(out.contains("has the variable `{id}`, but the function has no argument `id`"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }
}
