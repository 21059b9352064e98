//! Values between JSON and Bolt: parameters sent to Neo4j and the rows it returns, in the
//! shapes the shared Cypher and FalkorDB's adapter agree on.

use std::collections::HashMap;

use neo4rs::{BoltBoolean, BoltFloat, BoltInteger, BoltList, BoltMap, BoltNull, BoltString, BoltType};
use serde_json::{Map, Number, Value};

use super::super::{GraphError, Row};

/// Converts a JSON parameter into its Bolt value.
///
/// Integers become Bolt Integers (64-bit signed; larger `u64`s are an error rather than a silent
/// float), other numbers Floats, arrays Lists and objects Maps.
pub(super) fn to_bolt(value: &Value) -> Result<BoltType, GraphError> {
    Ok(match value {
        Value::Null => BoltType::Null(BoltNull),
        Value::Bool(flag) => BoltType::Boolean(BoltBoolean::new(*flag)),
        Value::Number(number) => number_to_bolt(number)?,
        Value::String(text) => BoltType::String(BoltString::new(text)),
        Value::Array(items) => {
            let mut list = Vec::with_capacity(items.len());
            for item in items {
                list.push(to_bolt(item)?);
            }
            BoltType::List(BoltList { value: list })
        }
        Value::Object(entries) => {
            // Sized up front: collected from an iterator of `Result`s, a map of a seed row's 17
            // keys grew and rehashed four times (neo4rs's `BoltMap` reserves nothing itself).
            let mut map = BoltMap::with_capacity(entries.len());
            for (key, item) in entries {
                map.put(BoltString::new(key), to_bolt(item)?);
            }
            BoltType::Map(map)
        }
    })
}

fn number_to_bolt(number: &Number) -> Result<BoltType, GraphError> {
    if let Some(integer) = number.as_i64() {
        return Ok(BoltType::Integer(BoltInteger::new(integer)));
    }
    if number.is_u64() {
        return Err(GraphError::Conversion(format!("integer {number} is beyond Bolt's 64-bit signed range")));
    }
    number
        .as_f64()
        .map(|float| BoltType::Float(BoltFloat::new(float)))
        .ok_or_else(|| GraphError::Conversion(format!("number {number} has no Bolt form")))
}

/// Converts a returned Bolt value into JSON.
///
/// Nodes and relationships become their property maps (the shared Cypher returns properties,
/// not identities, so both engines agree).
fn from_bolt(value: &BoltType) -> Result<Value, GraphError> {
    Ok(match value {
        BoltType::Null(_) => Value::Null,
        BoltType::Boolean(flag) => Value::Bool(flag.value),
        BoltType::Integer(integer) => Value::from(integer.value),
        BoltType::Float(float) => Number::from_f64(float.value)
            .map(Value::Number)
            .ok_or_else(|| GraphError::Conversion(format!("float {} has no JSON form", float.value)))?,
        BoltType::String(text) => Value::String(text.value.clone()),
        BoltType::List(items) => Value::Array(items.value.iter().map(from_bolt).collect::<Result<_, _>>()?),
        BoltType::Map(entries) => Value::Object(map_from_bolt(entries)?),
        BoltType::Node(node) => Value::Object(map_from_bolt(&node.properties)?),
        BoltType::Relation(relation) => Value::Object(map_from_bolt(&relation.properties)?),
        BoltType::UnboundedRelation(relation) => Value::Object(map_from_bolt(&relation.properties)?),
        // No JSON form both engines would agree on: fail loudly rather than invent a string one.
        other => {
            return Err(GraphError::Conversion(format!(
                "Neo4j {} values are not supported",
                kind_name(other)
            )))
        }
    })
}

fn map_from_bolt(entries: &BoltMap) -> Result<Map<String, Value>, GraphError> {
    entries.value.iter().map(|(key, item)| Ok((key.value.clone(), from_bolt(item)?))).collect()
}

fn kind_name(value: &BoltType) -> &'static str {
    match value {
        BoltType::String(_) => "string",
        BoltType::Boolean(_) => "boolean",
        BoltType::Map(_) => "map",
        BoltType::Null(_) => "null",
        BoltType::Integer(_) => "integer",
        BoltType::Float(_) => "float",
        BoltType::List(_) => "list",
        BoltType::Node(_) => "node",
        BoltType::Relation(_) | BoltType::UnboundedRelation(_) => "relationship",
        BoltType::Point2D(_) | BoltType::Point3D(_) => "point",
        BoltType::Bytes(_) => "byte array",
        BoltType::Path(_) => "path",
        BoltType::Duration(_) => "duration",
        BoltType::Date(_) => "date",
        BoltType::Time(_) => "time",
        BoltType::LocalTime(_) => "local time",
        BoltType::DateTime(_) | BoltType::DateTimeZoneId(_) => "date-time",
        BoltType::LocalDateTime(_) => "local date-time",
    }
}

/// Converts one `neo4rs` row into a JSON row keyed by column alias.
pub(super) fn row_to_json(row: &neo4rs::Row) -> Result<Row, GraphError> {
    // neo4rs keeps the column names private; deserializing the row as a map is its public way
    // to hand back every (alias, value) pair. Its deserializer is faithful except that a point
    // makes the row unreadable (a Conversion error) and a duration comes out as the list
    // `[seconds, nanoseconds]`; the shared Cypher returns neither.
    let columns: HashMap<String, BoltType> =
        row.to_strict().map_err(|error| GraphError::Conversion(format!("unreadable Neo4j row: {error}")))?;
    columns.iter().map(|(alias, value)| Ok((alias.clone(), from_bolt(value)?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use neo4rs::{BoltNode, BoltPoint2D, BoltRelation, BoltUnboundedRelation};
    use serde_json::json;

    fn bolt_map(entries: Vec<(&str, BoltType)>) -> BoltMap {
        entries.into_iter().map(|(key, value)| (BoltString::new(key), value)).collect()
    }

    fn neo4rs_row(columns: Vec<(&str, BoltType)>) -> neo4rs::Row {
        let (fields, data): (Vec<_>, Vec<_>) =
            columns.into_iter().map(|(alias, value)| (BoltType::from(alias), value)).unzip();
        neo4rs::Row::new(BoltList::from(fields), BoltList::from(data))
    }

    #[test]
    fn scalars_convert_to_their_bolt_kinds() {
        assert_eq!(to_bolt(&json!(null)).unwrap(), BoltType::Null(BoltNull));
        assert_eq!(to_bolt(&json!(true)).unwrap(), BoltType::Boolean(BoltBoolean::new(true)));
        assert_eq!(to_bolt(&json!("héllo")).unwrap(), BoltType::String(BoltString::new("héllo")));
    }

    #[test]
    fn integers_become_bolt_integers_and_fractions_become_floats() {
        assert_eq!(to_bolt(&json!(42)).unwrap(), BoltType::Integer(BoltInteger::new(42)));
        assert_eq!(to_bolt(&json!(-7)).unwrap(), BoltType::Integer(BoltInteger::new(-7)));
        assert_eq!(to_bolt(&json!(i64::MAX as u64)).unwrap(), BoltType::Integer(BoltInteger::new(i64::MAX)));
        assert_eq!(to_bolt(&json!(2.5)).unwrap(), BoltType::Float(BoltFloat::new(2.5)));
        // JSON `1.0` is a float on the wire too; it must not be silently narrowed.
        assert_eq!(to_bolt(&json!(1.0)).unwrap(), BoltType::Float(BoltFloat::new(1.0)));
    }

    #[test]
    fn a_u64_beyond_the_signed_range_is_a_conversion_error() {
        let error = to_bolt(&json!({ "big": [u64::MAX] })).unwrap_err();
        assert!(
            matches!(&error, GraphError::Conversion(text) if text.contains(&u64::MAX.to_string())),
            "{error:?}"
        );
    }

    #[test]
    fn arrays_and_objects_become_lists_and_maps() {
        let bolt = to_bolt(&json!({ "ids": ["a", 1], "empty": {} })).unwrap();
        let expected = BoltType::Map(bolt_map(vec![
            ("ids", BoltType::List(BoltList::from(vec![BoltType::from("a"), BoltType::from(1_i64)]))),
            ("empty", BoltType::Map(BoltMap::new())),
        ]));
        assert_eq!(bolt, expected);
    }

    #[test]
    fn nested_maps_and_lists_survive_a_round_trip() {
        let value = json!({
            "name": "bucket",
            "count": 3,
            "ratio": 0.25,
            "active": false,
            "missing": null,
            "tags": ["x", "y", []],
            "nested": { "deeper": { "list": [1, 2.5, "three", null, { "k": true }] } },
        });
        assert_eq!(from_bolt(&to_bolt(&value).unwrap()).unwrap(), value);
    }

    #[test]
    fn integer_and_float_kinds_are_kept_apart_on_the_way_back() {
        let integer = from_bolt(&BoltType::Integer(BoltInteger::new(2))).unwrap();
        let float = from_bolt(&BoltType::Float(BoltFloat::new(2.0))).unwrap();
        assert!(integer.is_i64());
        assert!(float.is_f64());
        assert_eq!(from_bolt(&BoltType::Integer(BoltInteger::new(i64::MIN))).unwrap(), json!(i64::MIN));
    }

    #[test]
    fn a_non_finite_float_is_a_conversion_error() {
        let error = from_bolt(&BoltType::Float(BoltFloat::new(f64::NAN))).unwrap_err();
        assert!(matches!(error, GraphError::Conversion(_)), "{error:?}");
    }

    #[test]
    fn nodes_and_relationships_become_their_property_maps() {
        let properties = bolt_map(vec![("id", BoltType::from("b1")), ("size", BoltType::from(10_i64))]);
        let node = BoltType::Node(BoltNode::new(
            BoltInteger::new(7),
            BoltList::from(vec![BoltType::from("Bucket")]),
            properties.clone(),
        ));
        let relation = BoltType::Relation(BoltRelation {
            id: BoltInteger::new(1),
            start_node_id: BoltInteger::new(7),
            end_node_id: BoltInteger::new(8),
            typ: BoltString::new("HAS"),
            properties: properties.clone(),
        });
        let unbounded = BoltType::UnboundedRelation(BoltUnboundedRelation::new(
            BoltInteger::new(1),
            BoltString::new("HAS"),
            properties,
        ));
        let expected = json!({ "id": "b1", "size": 10 });
        assert_eq!(from_bolt(&node).unwrap(), expected);
        assert_eq!(from_bolt(&relation).unwrap(), expected);
        assert_eq!(from_bolt(&unbounded).unwrap(), expected);
    }

    #[test]
    fn unsupported_kinds_are_conversion_errors_naming_the_kind() {
        let cases = [
            (BoltType::from(vec![1_u8, 2]), "byte array"),
            (BoltType::from(std::time::Duration::from_secs(5)), "duration"),
            (
                BoltType::Point2D(BoltPoint2D {
                    sr_id: BoltInteger::new(7203),
                    x: BoltFloat::new(1.0),
                    y: BoltFloat::new(2.0),
                }),
                "point",
            ),
        ];
        for (value, kind) in cases {
            let error = from_bolt(&BoltType::List(BoltList::from(vec![value]))).unwrap_err();
            assert!(
                matches!(&error, GraphError::Conversion(text) if text.contains(kind)),
                "{kind}: {error:?}"
            );
        }
    }

    #[test]
    fn a_row_with_several_columns_becomes_a_map_by_alias() {
        let row = neo4rs_row(vec![
            ("id", BoltType::from("b1")),
            ("count", BoltType::from(3_i64)),
            ("score", BoltType::from(0.5)),
            ("tags", BoltType::List(BoltList::from(vec![BoltType::from("t")]))),
            (
                "bucket",
                BoltType::Node(BoltNode::new(
                    BoltInteger::new(1),
                    BoltList::from(vec![BoltType::from("Bucket")]),
                    bolt_map(vec![("name", BoltType::from("Main"))]),
                )),
            ),
            ("meta", BoltType::Map(bolt_map(vec![("live", BoltType::from(true))]))),
        ]);
        let expected = json!({
            "id": "b1",
            "count": 3,
            "score": 0.5,
            "tags": ["t"],
            "bucket": { "name": "Main" },
            "meta": { "live": true },
        });
        assert_eq!(Value::Object(row_to_json(&row).unwrap()), expected);
    }

    #[test]
    fn a_null_column_stays_present_as_null() {
        let row = neo4rs_row(vec![("found", BoltType::Null(BoltNull)), ("id", BoltType::from("x"))]);
        let converted = row_to_json(&row).unwrap();
        assert_eq!(converted.get("found"), Some(&Value::Null));
        assert_eq!(converted.len(), 2);
    }

    #[test]
    fn a_row_without_columns_is_an_empty_map() {
        let row = neo4rs_row(vec![]);
        assert!(row_to_json(&row).unwrap().is_empty());
    }

    #[test]
    fn a_row_holding_an_unsupported_kind_is_a_conversion_error_naming_it() {
        let date = chrono::NaiveDate::from_ymd_opt(2024, 1, 2).unwrap();
        for (value, kind) in [(BoltType::from(date), "date"), (BoltType::from(vec![1_u8, 2]), "byte array")] {
            let row = neo4rs_row(vec![("id", BoltType::from("x")), ("when", value)]);
            let error = row_to_json(&row).unwrap_err();
            assert!(
                matches!(&error, GraphError::Conversion(text) if text.contains(kind)),
                "{kind}: {error:?}"
            );
        }
    }

    #[test]
    fn a_row_holding_a_point_is_a_conversion_error() {
        let point = BoltType::Point2D(BoltPoint2D {
            sr_id: BoltInteger::new(7203),
            x: BoltFloat::new(1.0),
            y: BoltFloat::new(2.0),
        });
        let error = row_to_json(&neo4rs_row(vec![("at", point)])).unwrap_err();
        assert!(matches!(error, GraphError::Conversion(_)), "{error:?}");
    }

    #[test]
    fn a_duration_in_a_row_arrives_flattened_by_neo4rs() {
        // Pins the neo4rs 0.8 quirk documented on `row_to_json`: if this starts failing, neo4rs
        // keeps durations now and they are rejected like the other temporal kinds.
        let took = BoltType::from(std::time::Duration::from_millis(1500));
        let row = row_to_json(&neo4rs_row(vec![("took", took)])).unwrap();
        assert_eq!(row.get("took"), Some(&json!([1, 500_000_000])));
    }
}
