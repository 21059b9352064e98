//! A body's structs are read from JSON objects only, at every depth. serde's derived structs
//! also accept an array, field by field in declaration order, so `["renamed"]` sent to a PATCH
//! renamed a bucket, `[null, null]` changed nothing and answered 200, and a nested struct (a
//! correction, a workflow's node) sent as an array was read by position: a client's mistake (or
//! a fuzzer's) taken as data. The API documents objects; an array is a 400 naming what was
//! expected. The deserializer, and every visitor, access and seed it hands out, is wrapped so
//! that nested values go through the same rule (the way `serde_path_to_error` tracks paths).
//! Content serde buffers (untagged or flattened fields) is read by serde itself, leniently:
//! bodies avoid it (a view sent inline is read by `views::inline`).
//!
//! An integer field also takes a number written with a zero fraction (`93.0`): JSON Schema
//! counts it as the integer the document states, and clients that compute a page or a version
//! in floating point send it so. A fraction (`93.5`) is refused as before. Free-form JSON
//! (`Value` fields) is never touched: only a field typed as an integer reads it as one. Inside
//! content serde buffers, an integer field does so only through `wire::whole_i64`.

use crate::wire::Whole;
use serde::de::{DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use std::fmt;

/// Deserializes as `inner` does, except that a struct must be a JSON object.
pub(super) struct ObjectsOnly<D>(pub D);

/// The same rule for what a wrapped value hands its visitor, access or seed.
struct Strict<T>(T);

/// Forwards each named deserializer method, with its arguments before the visitor, to the
/// inner deserializer, the visitor wrapped.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method($($arg,)* Strict(visitor))
        }
    )*};
}

/// Forwards each named integer method to the inner deserializer, the visitor taking a whole
/// float as the integer it is.
macro_rules! whole {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(Whole(visitor))
        }
    )*};
}

/// Forwards each named visitor method, taking a plain value, to the inner visitor.
macro_rules! visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: serde::de::Error>(self, value: $ty) -> Result<V::Value, E> {
            self.0.$method(value)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectsOnly<D> {
    type Error = D::Error;

    forward! {
        deserialize_any() deserialize_bool() deserialize_f32() deserialize_f64() deserialize_char()
        deserialize_str() deserialize_string() deserialize_bytes() deserialize_byte_buf()
        deserialize_option() deserialize_unit() deserialize_seq() deserialize_map()
        deserialize_identifier() deserialize_ignored_any()
        deserialize_unit_struct(name: &'static str)
        deserialize_newtype_struct(name: &'static str)
        deserialize_tuple(len: usize)
        deserialize_tuple_struct(name: &'static str, len: usize)
        deserialize_enum(name: &'static str, variants: &'static [&'static str])
    }

    whole! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
    }

    /// A struct as a map: an array is "invalid type: sequence, expected struct …".
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Strict(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Strict<V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(formatter)
    }

    visit! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64) visit_i128(i128)
        visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64) visit_u128(u128) visit_f32(f32)
        visit_f64(f64) visit_char(char) visit_str(&str) visit_borrowed_str(&'de str)
        visit_string(String) visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8])
        visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(ObjectsOnly(inner))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(ObjectsOnly(inner))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Strict(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Strict(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Strict(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Strict<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(ObjectsOnly(inner))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Strict(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Strict<A> {
    type Error = A::Error;

    /// Keys as they are: a key is a string, never a struct (and serde_json's own values
    /// recognise their special keys by the seed they pass).
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Strict(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Strict<A> {
    type Error = A::Error;
    type Variant = Strict<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(seed)?;
        Ok((value, Strict(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Strict(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Strict(visitor))
    }

    /// As the inner format reads a struct variant (serde_json hands its own deserializer the
    /// visitor, so an array is still read by position there); no request body has one.
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Strict(visitor))
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_json;
    use serde::Deserialize;
    use serde_json::{json, Value};

    #[derive(Debug, Deserialize, PartialEq)]
    struct Rename {
        name: Option<String>,
        description: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Batch {
        items: Vec<Rename>,
        first: Option<Rename>,
    }

    #[test]
    fn a_struct_sent_as_an_array_is_refused_naming_what_was_expected() {
        let refused = parse_json::<Rename>(br#"["renamed", null]"#).expect_err("an array is refused");
        assert_eq!(refused.status(), axum::http::StatusCode::BAD_REQUEST);
        assert!(refused.message().contains("expected struct Rename"), "{}", refused.message());
    }

    #[test]
    fn a_nested_struct_sent_as_an_array_is_refused_naming_its_field() {
        let in_list = parse_json::<Batch>(br#"{"items": [{"name": "a"}, ["b", null]]}"#)
            .expect_err("an array in a list of structs is refused");
        assert!(in_list.message().starts_with("items[1]: invalid type: sequence"), "{}", in_list.message());
        let in_option =
            parse_json::<Batch>(br#"{"items": [], "first": ["b", null]}"#).expect_err("an optional one too");
        assert!(in_option.message().starts_with("first: invalid type: sequence"), "{}", in_option.message());
    }

    #[test]
    fn a_struct_sent_as_an_object_is_read_as_before() {
        let read: Rename = parse_json(br#"{"name": "renamed"}"#).unwrap();
        assert_eq!(read, Rename { name: Some("renamed".into()), description: None });
        let batch: Batch = parse_json(br#"{"items": [{"description": "d"}], "first": null}"#).unwrap();
        assert_eq!(batch.items, [Rename { name: None, description: Some("d".into()) }]);
        assert!(parse_json::<Value>(b"[1, 2]").is_ok(), "a body of any JSON stays any JSON");
        let nested: Value = parse_json(br#"{"a": [{"b": [1.5, "x", null, true]}]}"#).unwrap();
        assert_eq!(nested, json!({ "a": [{ "b": [1.5, "x", null, true] }] }), "values read whole");
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Numbers {
        page: i64,
        limit: Option<u32>,
        versions: Vec<i64>,
        extra: Value,
    }

    #[test]
    fn an_integer_field_takes_a_whole_float_and_refuses_a_fraction() {
        let read: Numbers =
            parse_json(br#"{"page": -3.0, "limit": 93.0, "versions": [1.0, 2], "extra": {"x": 3.0}}"#)
                .unwrap();
        assert_eq!((read.page, read.limit, read.versions), (-3, Some(93), vec![1, 2]));
        assert_eq!(read.extra, json!({ "x": 3.0 }), "free-form JSON keeps its float");
        assert!(read.extra["x"].is_f64());
        for (body, refused) in [
            (r#"{"page": 3.5, "versions": [], "extra": null}"#, "page: invalid type: floating point `3.5`"),
            (r#"{"page": 1, "limit": -1.0, "versions": [], "extra": null}"#, "limit: invalid value"),
            (r#"{"page": 1e19, "versions": [], "extra": null}"#, "page: invalid value"),
        ] {
            let message = parse_json::<Numbers>(body.as_bytes()).expect_err(body).message().to_string();
            assert!(message.starts_with(refused), "{body}: {message}");
        }
    }

    #[test]
    fn text_after_the_body_is_refused_by_the_read_that_names_the_field_too() {
        let trailing =
            parse_json::<Rename>(br#"{"name": "renamed"} ["#).expect_err("trailing text is refused");
        assert!(trailing.message().starts_with("malformed JSON body"), "{}", trailing.message());
    }
}
