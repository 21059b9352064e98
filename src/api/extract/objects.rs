//! A body's struct is read from a JSON object only. serde's derived structs also accept an
//! array, field by field in declaration order, so `["renamed"]` sent to a PATCH renamed a
//! bucket and `[null, null]` changed nothing and answered 200: a client's mistake (or a
//! fuzzer's) taken as an update. The API documents objects; an array is now a 400 naming
//! what was expected. (Top level only: nested structs of a body keep serde's leniency.)

use serde::de::{Deserializer, Visitor};

/// Deserializes as `inner` does, except that a struct must be a JSON object.
pub(super) struct ObjectsOnly<D>(pub D);

/// Forwards each named method, with its arguments before the visitor, to the inner
/// deserializer.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method($($arg,)* visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectsOnly<D> {
    type Error = D::Error;

    forward! {
        deserialize_any() deserialize_bool() deserialize_i8() deserialize_i16() deserialize_i32()
        deserialize_i64() deserialize_i128() deserialize_u8() deserialize_u16() deserialize_u32()
        deserialize_u64() deserialize_u128() deserialize_f32() deserialize_f64() deserialize_char()
        deserialize_str() deserialize_string() deserialize_bytes() deserialize_byte_buf()
        deserialize_option() deserialize_unit() deserialize_seq() deserialize_map()
        deserialize_identifier() deserialize_ignored_any()
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
    }

    /// A struct as a map: an array is "invalid type: sequence, expected struct …".
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_json;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Rename {
        name: Option<String>,
        description: Option<String>,
    }

    #[test]
    fn a_struct_sent_as_an_array_is_refused_naming_what_was_expected() {
        let refused = parse_json::<Rename>(br#"["renamed", null]"#).expect_err("an array is refused");
        assert_eq!(refused.status(), axum::http::StatusCode::BAD_REQUEST);
        assert!(refused.message().contains("expected struct Rename"), "{}", refused.message());
    }

    #[test]
    fn a_struct_sent_as_an_object_is_read_as_before() {
        let read: Rename = parse_json(br#"{"name": "renamed"}"#).unwrap();
        assert_eq!(read, Rename { name: Some("renamed".into()), description: None });
        assert!(parse_json::<serde_json::Value>(b"[1, 2]").is_ok(), "a body of any JSON stays any JSON");
    }

    #[test]
    fn text_after_the_body_is_refused_by_the_read_that_names_the_field_too() {
        let trailing =
            parse_json::<Rename>(br#"{"name": "renamed"} ["#).expect_err("trailing text is refused");
        assert!(trailing.message().starts_with("malformed JSON body"), "{}", trailing.message());
    }
}
