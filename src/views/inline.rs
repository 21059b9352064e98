//! Reading a view sent whole beside a request's own fields (table-data, aggregation-data).
//!
//! `#[serde(flatten)]` would read the view out of serde's buffer of the whole body, where the
//! API's reading rules do not reach: a refusal inside it named no field ("invalid body: … at
//! line 1 column 223"), a column sent as an array was taken field by field, and an integer
//! took a whole float only through `wire::whole_i64`. Here the request's own fields are set
//! aside as their keys come, and every other key goes straight to `ViewInput`, so each value
//! is read as any body's is and a refusal names its path (`columns[0].displayOrderIndex`).
//! The request types keep `flatten` for their documented schema and read through
//! `#[serde(from = …)]` an [`Inline`] of their own fields.

use super::model::{AggregationDataInput, TableDataInput, TimeWindow, ViewInput};
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// A request's own fields, read as their keys come.
pub(crate) trait Own: Default {
    /// The JSON names of the request's own fields.
    const FIELDS: &'static [&'static str];
    /// The request read.
    type Request;

    /// Reads the value of `key` (one of [`Own::FIELDS`]).
    fn read<'de, A: MapAccess<'de>>(&mut self, key: &'static str, map: &mut A) -> Result<(), A::Error>;

    /// The request, from its view and these fields (a required one missing is refused).
    fn finish<E: de::Error>(self, view: ViewInput) -> Result<Self::Request, E>;
}

/// A request read as the module's docs say: its view inline beside `O`'s fields.
pub(crate) struct Inline<O: Own>(O::Request);

impl<'de, O: Own> Deserialize<'de> for Inline<O> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (view, own) = read_inline::<D, O>(deserializer)?;
        own.finish(view).map(Inline)
    }
}

/// Hands a view's visitor every key but the request's own, which go to `own`.
struct SetAside<'a, A, O> {
    map: A,
    own: &'a mut O,
    seen: Vec<&'static str>,
}

impl<'de, A: MapAccess<'de>, O: Own> MapAccess<'de> for SetAside<'_, A, O> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        while let Some(key) = self.map.next_key::<String>()? {
            let Some(&field) = O::FIELDS.iter().find(|field| **field == key) else {
                return seed.deserialize(key.into_deserializer()).map(Some);
            };
            if self.seen.contains(&field) {
                return Err(de::Error::duplicate_field(field));
            }
            self.seen.push(field);
            self.own.read(field, &mut self.map)?;
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// Reads a JSON object into a view and the request's own fields.
fn read_inline<'de, D: Deserializer<'de>, O: Own>(deserializer: D) -> Result<(ViewInput, O), D::Error> {
    struct Visit<O>(std::marker::PhantomData<O>);
    impl<'de, O: Own> Visitor<'de> for Visit<O> {
        type Value = (ViewInput, O);

        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            formatter.write_str("an object holding a view's fields and the request's own")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let mut own = O::default();
            let aside = SetAside { map, own: &mut own, seen: Vec::new() };
            let view = ViewInput::deserialize(de::value::MapAccessDeserializer::new(aside))?;
            Ok((view, own))
        }
    }
    deserializer.deserialize_map(Visit(std::marker::PhantomData))
}

fn required<T, E: de::Error>(value: Option<T>, field: &'static str) -> Result<T, E> {
    value.ok_or_else(|| E::missing_field(field))
}

/// table-data's own fields.
#[derive(Default)]
pub(crate) struct TableOwn {
    time_window: Option<TimeWindow>,
    limit: Option<i64>,
    offset: Option<i64>,
}

impl Own for TableOwn {
    const FIELDS: &'static [&'static str] = &["timeWindow", "limit", "offset"];
    type Request = TableDataInput;

    fn read<'de, A: MapAccess<'de>>(&mut self, key: &'static str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "timeWindow" => self.time_window = Some(map.next_value()?),
            "limit" => self.limit = map.next_value()?,
            _ => self.offset = map.next_value()?,
        }
        Ok(())
    }

    fn finish<E: de::Error>(self, view: ViewInput) -> Result<TableDataInput, E> {
        let time_window = required(self.time_window, "timeWindow")?;
        Ok(TableDataInput { view, time_window, limit: self.limit, offset: self.offset })
    }
}

/// aggregation-data's own field.
#[derive(Default)]
pub(crate) struct AggregationOwn {
    time_window: Option<TimeWindow>,
}

impl Own for AggregationOwn {
    const FIELDS: &'static [&'static str] = &["timeWindow"];
    type Request = AggregationDataInput;

    fn read<'de, A: MapAccess<'de>>(&mut self, _key: &'static str, map: &mut A) -> Result<(), A::Error> {
        self.time_window = Some(map.next_value()?);
        Ok(())
    }

    fn finish<E: de::Error>(self, view: ViewInput) -> Result<AggregationDataInput, E> {
        Ok(AggregationDataInput { view, time_window: required(self.time_window, "timeWindow")? })
    }
}

impl From<Inline<TableOwn>> for TableDataInput {
    fn from(read: Inline<TableOwn>) -> Self {
        read.0
    }
}

impl From<Inline<AggregationOwn>> for AggregationDataInput {
    fn from(read: Inline<AggregationOwn>) -> Self {
        read.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_table_request_reads_its_own_fields_beside_the_view_s_and_refuses_a_repeated_one() {
        let body = json!({"name": "v", "columns": [], "filters": [], "aggregations": [],
                          "functions": [{"name": "f"}], "limit": 5, "offset": null,
                          "timeWindow": {"start": "a", "end": "b"}, "other": 1});
        let read: TableDataInput = serde_json::from_value(body).unwrap();
        assert_eq!((read.view.name.as_str(), read.limit, read.offset), ("v", Some(5), None));
        assert_eq!(read.time_window.end, "b");
        let missing = json!({"name": "v", "columns": [], "filters": [], "aggregations": [], "functions": []});
        let refused = serde_json::from_value::<AggregationDataInput>(missing).unwrap_err().to_string();
        assert_eq!(refused, "missing field `timeWindow`");
        let twice = r#"{"limit": 1, "limit": 2}"#;
        let refused = serde_json::from_str::<TableDataInput>(twice).unwrap_err().to_string();
        assert!(refused.starts_with("duplicate field `limit`"), "{refused}");
    }
}
