//! Values read from a string: prompt arguments and URI-template variables are strings on the
//! wire, parsed into the type the function asks for.

use std::borrow::Cow;
use std::path::PathBuf;

/// A value parsed from the string a client sent for a prompt argument or a URI-template
/// variable. Implemented for `String`, numbers, `bool`, `char` and `PathBuf`; implement it for
/// your own types (an enum of choices, an id newtype) to take them as arguments.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be parsed from a prompt argument or URI-template variable",
    label = "not parsed from a string",
    note = "prompt arguments and URI-template variables are strings on the wire; take `String`, a number, `bool`, `char`, `PathBuf`, `Option` of one of these, or implement `typed_mcp::ArgumentValue` for your type"
)]
pub trait ArgumentValue: Sized + Send {
    /// Parses the value; the error says what was expected.
    fn parse_argument(value: String) -> Result<Self, String>;
}

impl ArgumentValue for String {
    fn parse_argument(value: String) -> Result<Self, String> {
        Ok(value)
    }
}

impl ArgumentValue for Cow<'static, str> {
    fn parse_argument(value: String) -> Result<Self, String> {
        Ok(Cow::Owned(value))
    }
}

impl ArgumentValue for PathBuf {
    fn parse_argument(value: String) -> Result<Self, String> {
        Ok(PathBuf::from(value))
    }
}

macro_rules! parsed {
    ($($t:ty => $what:literal),* $(,)?) => {$(
        impl ArgumentValue for $t {
            fn parse_argument(value: String) -> Result<Self, String> {
                value.trim().parse().map_err(|_| format!("expected {}, got `{value}`", $what))
            }
        }
    )*};
}
parsed!(
    i8 => "an integer", i16 => "an integer", i32 => "an integer", i64 => "an integer", i128 => "an integer",
    isize => "an integer", u8 => "a non-negative integer", u16 => "a non-negative integer",
    u32 => "a non-negative integer", u64 => "a non-negative integer", u128 => "a non-negative integer",
    usize => "a non-negative integer", f32 => "a number", f64 => "a number", bool => "`true` or `false`",
);

impl ArgumentValue for char {
    fn parse_argument(value: String) -> Result<Self, String> {
        let mut chars = value.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(c),
            _ => Err(format!("expected one character, got `{value}`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(i64::parse_argument(" 42".into()), Ok(42));
        assert_eq!(u8::parse_argument("-1".into()), Err("expected a non-negative integer, got `-1`".into()));
        assert_eq!(bool::parse_argument("true".into()), Ok(true));
        assert!(char::parse_argument("ab".into()).is_err());
    }
}
