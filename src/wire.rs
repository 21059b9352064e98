//! Reading numbers off the wire the way the served document states them, for every transport.
//!
//! JSON Schema's `integer` takes a number written with a zero fraction (`93.0`): clients that
//! compute a page or a position in floating point send it so. A fraction (`93.5`) is still
//! refused, with the message of the integer's own visitor.

use serde::de::{Deserializer, Error as _, Unexpected, Visitor};
use serde::Deserialize;
use std::fmt;

// 2^63 and 2^64 are exact in f64; below them every whole f64 fits the integer.
const I64_END: f64 = 9_223_372_036_854_775_808.0;
const U64_END: f64 = 18_446_744_073_709_551_616.0;

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

/// An `i64` read by [`whole_i64`], for the containers below.
#[derive(serde::Deserialize)]
struct WholeI64(#[serde(deserialize_with = "whole_i64")] i64);

/// [`whole_i64`] for an optional integer field of any width (with `#[serde(default)]`): null
/// is `None`; a value out of the type's range is refused.
pub fn whole_opt<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64>,
{
    match Option::<WholeI64>::deserialize(deserializer)? {
        None => Ok(None),
        Some(WholeI64(n)) => T::try_from(n)
            .map(Some)
            .map_err(|_| D::Error::invalid_value(Unexpected::Signed(n), &std::any::type_name::<T>())),
    }
}

/// [`whole_i64`] for an optional list of integers (with `#[serde(default)]`).
pub fn whole_i64_list_opt<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<i64>>, D::Error> {
    let list = Option::<Vec<WholeI64>>::deserialize(deserializer)?;
    Ok(list.map(|list| list.into_iter().map(|whole| whole.0).collect()))
}

/// The integer a JSON value a service reads itself stands for: an integer, or a float with no
/// fraction within `i64` (as [`Whole`] reads one); `None` for anything else.
pub fn whole_of(value: &serde_json::Value) -> Option<i64> {
    whole_i64(value).ok()
}

/// [`whole_of`] for a count that cannot be negative.
pub fn whole_u64_of(value: &serde_json::Value) -> Option<u64> {
    value.as_u64().or_else(|| whole_of(value).and_then(|n| u64::try_from(n).ok()))
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
        #[serde(default, deserialize_with = "whole_opt")]
        n: Option<i64>,
        #[serde(default, deserialize_with = "whole_opt")]
        small: Option<u32>,
    }

    #[test]
    fn an_optional_integer_read_from_a_value_takes_a_whole_float_and_null() {
        let read = |body: serde_json::Value| serde_json::from_value::<Optional>(body).map(|o| o.n);
        assert_eq!(read(serde_json::json!({"n": 5.0})).unwrap(), Some(5));
        assert_eq!(read(serde_json::json!({"n": null})).unwrap(), None);
        assert_eq!(read(serde_json::json!({})).unwrap(), None);
        assert!(read(serde_json::json!({"n": 5.5})).is_err());
        let small = |body: serde_json::Value| serde_json::from_value::<Optional>(body).map(|o| o.small);
        assert_eq!(small(serde_json::json!({"small": 7.0})).unwrap(), Some(7));
        let refused = small(serde_json::json!({"small": -1})).unwrap_err().to_string();
        assert!(refused.contains("invalid value: integer `-1`, expected u32"), "{refused}");
    }

    #[test]
    fn a_list_of_integers_and_a_number_read_by_a_service_take_whole_floats_only() {
        #[derive(serde::Deserialize)]
        struct Listed {
            #[serde(default, deserialize_with = "whole_i64_list_opt")]
            pages: Option<Vec<i64>>,
        }
        let read = |body: serde_json::Value| serde_json::from_value::<Listed>(body).map(|l| l.pages);
        assert_eq!(read(serde_json::json!({"pages": [1.0, 3]})).unwrap(), Some(vec![1, 3]));
        assert_eq!(read(serde_json::json!({})).unwrap(), None);
        assert!(read(serde_json::json!({"pages": [1.5]})).is_err());
        assert_eq!(whole_of(&serde_json::json!(30.0)), Some(30));
        assert_eq!(whole_of(&serde_json::json!(-2)), Some(-2));
        assert_eq!(whole_of(&serde_json::json!(30.5)), None);
        assert_eq!(whole_of(&serde_json::json!(1e19)), None);
        assert_eq!(whole_of(&serde_json::json!("3")), None);
        assert_eq!(whole_u64_of(&serde_json::json!(600.0)), Some(600));
        assert_eq!(whole_u64_of(&serde_json::json!(-1.0)), None);
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
