//! `#[prompt]`: parse → validate → expand.

mod expand;
mod parse;
mod valid;

use crate::options::LooseFn;
use proc_macro2::TokenStream;
use quote::quote;

use crate::codegen::{hidden_definition, item_head};
use crate::common::Errors;

/// `#[prompt]` on a function.
pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let Ok(mut item) = syn::parse2::<LooseFn>(input.clone()) else {
        let e = syn::Error::new_spanned(item_head(&input), "`#[prompt]` applies to functions").to_compile_error();
        return quote!(#e #input);
    };
    let mut errors = Errors::default();
    let attr = parse::prompt_attr(args, &mut errors);
    let spec = parse::prompt_fn(attr, &item.attrs, &mut item.sig, &mut errors);
    valid::check(&spec, &mut errors);
    let body = errors.is_empty().then(|| expand::definition(&spec));
    // A method sits in an `impl` block, where the hidden type cannot go: emit the function and
    // the errors only (one of them says to use a free function).
    let has_receiver = matches!(item.sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
    let items = if has_receiver {
        TokenStream::new()
    } else {
        hidden_definition(
            &spec.sig.ident,
            &item.vis,
            quote!(::typed_mcp::__private_v0_1::PromptFn),
            quote!(::typed_mcp::__private_v0_1::PromptDef),
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
    fn expands_a_prompt() {
        let out = expand(
            quote!(title = "Review"),
            quote! {
                /// Reviews code.
                ///
                /// # Arguments
                /// * `code` - The code.
                async fn review(code: String, style: Option<String>) -> String { code }
            },
        )
        .to_string();
        assert!(out.contains("PromptFn for review"), "{out}");
        assert!(out.contains("\"Reviews code.\""), "{out}");
        assert!(out.contains("\"The code.\""), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn reports_every_mistake_and_keeps_a_stub() {
        let out =
            expand(quote!(nme = "x", title = 1), quote! { const fn f<T>(x: &str) -> String { todo!() } }).to_string();
        assert_eq!(out.matches("compile_error").count(), 4, "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }
}
