//! Reading numbers off the wire the way the served document states them, for every transport.
//!
//! JSON Schema's `integer` takes a number written with a zero fraction (`93.0`): clients that
//! compute a page or a position in floating point send it so. A fraction (`93.5`) is still
//! refused, with the message of the integer's own visitor.

use serde::de::{Deserializer, Visitor};
use std::fmt;

/// An integer's visitor that also takes a float with no fraction (within 64 bits) as that
/// integer; everything else goes to the inner visitor, whose messages name what it expected.
/// `api::extract` wraps every integer a JSON body's struct reads in it.
pub struct Whole<V>(pub V);

impl<'de, V: Visitor<'de>> Visitor<'de> for Whole<V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(formatter)
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<V::Value, E> {
        self.0.visit_i64(value)
    }

    fn visit_i128<E: serde::de::Error>(self, value: i128) -> Result<V::Value, E> {
        self.0.visit_i128(value)
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<V::Value, E> {
        self.0.visit_u64(value)
    }

    fn visit_u128<E: serde::de::Error>(self, value: u128) -> Result<V::Value, E> {
        self.0.visit_u128(value)
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<V::Value, E> {
        // 2^63 and 2^64 are exact in f64; below them every whole f64 fits the integer.
        const I64_END: f64 = 9_223_372_036_854_775_808.0;
        const U64_END: f64 = 18_446_744_073_709_551_616.0;
        match value {
            v if v.fract() != 0.0 || !v.is_finite() => self.0.visit_f64(value),
            v if (-I64_END..I64_END).contains(&v) => self.0.visit_i64(v as i64),
            v if (0.0..U64_END).contains(&v) => self.0.visit_u64(v as u64),
            _ => self.0.visit_f64(value),
        }
    }
}

/// `deserialize_with` for an `i64` that serde reads where `api::extract`'s wrapping does not
/// reach: from its own buffer (the fields of a `#[serde(flatten)]`ed struct) or from a
/// `Value` a service decodes itself (`fs::request::parse`).
pub fn whole_i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    struct I64;
    impl Visitor<'_> for I64 {
        type Value = i64;

        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            formatter.write_str("i64")
        }

        fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<i64, E> {
            Ok(value)
        }

        fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<i64, E> {
            i64::try_from(value).map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(value), &self))
        }
    }
    // serde's buffer hands an integer's visitor only integers: read it as any value.
    deserializer.deserialize_any(Whole(I64))
}

/// [`whole_i64`] for an optional field (with `#[serde(default)]`): null is `None`.
pub fn whole_i64_opt<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    struct Opt;
    impl<'de> Visitor<'de> for Opt {
        type Value = Option<i64>;

        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            formatter.write_str("i64 or null")
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<i64>, D::Error> {
            whole_i64(deserializer).map(Some)
        }
    }
    deserializer.deserialize_option(Opt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct Inner {
        #[serde(deserialize_with = "whole_i64")]
        n: i64,
    }

    #[derive(serde::Deserialize, Debug)]
    struct Outer {
        #[serde(flatten)]
        inner: Inner,
    }

    #[derive(serde::Deserialize, Debug)]
    struct Optional {
        #[serde(default, deserialize_with = "whole_i64_opt")]
        n: Option<i64>,
    }

    #[test]
    fn an_optional_integer_read_from_a_value_takes_a_whole_float_and_null() {
        let read = |body: serde_json::Value| serde_json::from_value::<Optional>(body).map(|o| o.n);
        assert_eq!(read(serde_json::json!({"n": 5.0})).unwrap(), Some(5));
        assert_eq!(read(serde_json::json!({"n": null})).unwrap(), None);
        assert_eq!(read(serde_json::json!({})).unwrap(), None);
        assert!(read(serde_json::json!({"n": 5.5})).is_err());
    }

    #[test]
    fn a_flattened_integer_takes_a_whole_float_and_refuses_a_fraction() {
        let read = |n: &str| serde_json::from_str::<Outer>(&format!(r#"{{"n": {n}}}"#));
        assert_eq!(read("3.0").unwrap().inner.n, 3);
        assert_eq!(read("-7").unwrap().inner.n, -7);
        let refused = read("3.5").unwrap_err().to_string();
        assert!(refused.contains("invalid type: floating point `3.5`, expected i64"), "{refused}");
        assert!(read("9223372036854775808").is_err(), "past i64");
    }
}
