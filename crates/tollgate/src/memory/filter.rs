//! Filters every listing and search applies before its cut: thread, source, tags (any of),
//! content type, metadata (equality and the 16 operators, on nested paths) and a creation date
//! range; and the page (limit, offset).

use serde_json::Value;

use super::{ContentType, MemoryError, Source};

/// What entries a listing or search may return. Empty: every entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub thread_id: Option<String>,
    pub source: Option<Source>,
    /// Any of these (already normalised like stored tags).
    pub tags: Vec<String>,
    pub content_type: Option<ContentType>,
    /// All of these.
    pub metadata: Vec<MetadataCondition>,
    /// Created at or after (Unix ms).
    pub created_from_ms: Option<i64>,
    /// Created at or before (Unix ms).
    pub created_to_ms: Option<i64>,
}

impl Filter {
    /// How many conditions the filter holds (a search's `stats`).
    pub fn n_conditions(&self) -> usize {
        usize::from(self.thread_id.is_some())
            + usize::from(self.source.is_some())
            + usize::from(!self.tags.is_empty())
            + usize::from(self.content_type.is_some())
            + self.metadata.len()
            + usize::from(self.created_from_ms.is_some())
            + usize::from(self.created_to_ms.is_some())
    }
}

/// A page of results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub limit: usize,
    pub offset: usize,
}

/// The metadata operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    NotIn,
    Exists,
    NotExists,
    Contains,
    StartsWith,
    EndsWith,
    IsNull,
    IsNotNull,
    ArrayContains,
}

impl Operator {
    pub const ALL: [Operator; 16] = [
        Operator::Eq,
        Operator::Ne,
        Operator::Gt,
        Operator::Gte,
        Operator::Lt,
        Operator::Lte,
        Operator::In,
        Operator::NotIn,
        Operator::Exists,
        Operator::NotExists,
        Operator::Contains,
        Operator::StartsWith,
        Operator::EndsWith,
        Operator::IsNull,
        Operator::IsNotNull,
        Operator::ArrayContains,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Eq => "eq",
            Operator::Ne => "ne",
            Operator::Gt => "gt",
            Operator::Gte => "gte",
            Operator::Lt => "lt",
            Operator::Lte => "lte",
            Operator::In => "in",
            Operator::NotIn => "not_in",
            Operator::Exists => "exists",
            Operator::NotExists => "not_exists",
            Operator::Contains => "contains",
            Operator::StartsWith => "starts_with",
            Operator::EndsWith => "ends_with",
            Operator::IsNull => "is_null",
            Operator::IsNotNull => "is_not_null",
            Operator::ArrayContains => "array_contains",
        }
    }

    pub fn parse(text: &str) -> Option<Operator> {
        Operator::ALL.into_iter().find(|op| op.as_str() == text)
    }

    /// Whether the operator reads a `value`.
    fn takes_value(self) -> bool {
        !matches!(
            self,
            Operator::Exists | Operator::NotExists | Operator::IsNull | Operator::IsNotNull
        )
    }
}

/// A metadata key: `status`, or a nested path `references.issue` (one segment per level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataPath(Vec<String>);

impl MetadataPath {
    pub fn parse(field: &str, key: &str) -> Result<MetadataPath, MemoryError> {
        let segments: Vec<String> = key.split('.').map(str::to_string).collect();
        let bad = segments.iter().any(|segment| {
            segment.is_empty()
                || segment.len() > 128
                || segment
                    .chars()
                    .any(|c| c == '"' || c == '\\' || c.is_control())
        });
        if bad || segments.len() > 8 {
            return Err(MemoryError::invalid(
                field,
                format!(
                    "`{key}` is not a metadata key: dot-separated names (at most 8 levels), without quotes, backslashes or control characters"
                ),
            ));
        }
        Ok(MetadataPath(segments))
    }

    /// The SQLite JSON path (`$."references"."issue"`); segments are quoted, and quotes and
    /// backslashes were refused, so a key never changes the path's structure.
    pub fn json_path(&self) -> String {
        let mut path = String::from("$");
        for segment in &self.0 {
            path.push_str(".\"");
            path.push_str(segment);
            path.push('"');
        }
        path
    }
}

/// One metadata condition.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataCondition {
    pub(crate) path: MetadataPath,
    pub(crate) operator: Operator,
    pub(crate) value: Value,
    pub(crate) case_sensitive: bool,
}

impl MetadataCondition {
    /// Checks that `value` suits `operator`; `field` names the condition in errors.
    pub fn new(
        field: &str,
        path: MetadataPath,
        operator: Operator,
        value: Option<Value>,
        case_sensitive: bool,
    ) -> Result<MetadataCondition, MemoryError> {
        let value_field = format!("{field}.value");
        let value = match (operator.takes_value(), value) {
            (false, _) => Value::Null,
            (true, None) => {
                return Err(MemoryError::invalid(
                    value_field,
                    format!("operator `{}` needs a value", operator.as_str()),
                ));
            }
            (true, Some(value)) => value,
        };
        let scalar = |value: &Value| {
            matches!(
                value,
                Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null
            )
        };
        let ok = match operator {
            Operator::Eq | Operator::Ne | Operator::ArrayContains => scalar(&value),
            Operator::Gt | Operator::Gte | Operator::Lt | Operator::Lte => {
                matches!(value, Value::Number(_) | Value::String(_))
            }
            Operator::In | Operator::NotIn => value.as_array().is_some_and(|items| {
                !items.is_empty() && items.len() <= 100 && items.iter().all(scalar)
            }),
            Operator::Contains | Operator::StartsWith | Operator::EndsWith => {
                value.as_str().is_some_and(|text| !text.is_empty())
            }
            Operator::Exists | Operator::NotExists | Operator::IsNull | Operator::IsNotNull => true,
        };
        if !ok {
            let expected = match operator {
                Operator::Gt | Operator::Gte | Operator::Lt | Operator::Lte => {
                    "a number or a string"
                }
                Operator::In | Operator::NotIn => "a non-empty list of at most 100 scalars",
                Operator::Contains | Operator::StartsWith | Operator::EndsWith => {
                    "a non-empty string"
                }
                _ => "a string, number, boolean or null",
            };
            return Err(MemoryError::invalid(
                value_field,
                format!(
                    "operator `{}` takes {expected}, got {value}",
                    operator.as_str()
                ),
            ));
        }
        Ok(MetadataCondition {
            path,
            operator,
            value,
            case_sensitive,
        })
    }

    /// `metadata = {key: value}`: exact equality.
    pub fn equals(path: MetadataPath, value: Value) -> MetadataCondition {
        MetadataCondition {
            path,
            operator: Operator::Eq,
            value,
            case_sensitive: true,
        }
    }

    pub fn path(&self) -> &MetadataPath {
        &self.path
    }

    pub fn operator(&self) -> Operator {
        self.operator
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    pub fn case_sensitive(&self) -> bool {
        self.case_sensitive
    }
}

/// Which end of a date range a date bounds: a date-only end date means the whole day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateBound {
    Start,
    End,
}

/// An ISO 8601 date (`2025-11-29`), date-time (`2025-11-29T10:00:00`, naive = UTC), or one with
/// `Z` or an offset, as Unix milliseconds.
pub fn parse_date(field: &str, text: &str, bound: DateBound) -> Result<i64, MemoryError> {
    use time::format_description::well_known::Rfc3339;
    let text = text.trim();
    let ms = |t: time::OffsetDateTime| {
        i64::try_from(t.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
    };
    if let Ok(t) = time::OffsetDateTime::parse(text, &Rfc3339) {
        return Ok(ms(t));
    }
    let naive = time::macros::format_description!(
        version = 2,
        "[year]-[month]-[day][first [T][ ]][hour]:[minute][optional [:[second][optional [.[subsecond]]]]]"
    );
    if let Ok(t) = time::PrimitiveDateTime::parse(text, &naive) {
        return Ok(ms(t.assume_utc()));
    }
    let date_only = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(date) = time::Date::parse(text, &date_only) {
        let start = ms(date.midnight().assume_utc());
        return Ok(match bound {
            DateBound::Start => start,
            DateBound::End => start + 86_400_000 - 1,
        });
    }
    Err(MemoryError::invalid(
        field,
        format!(
            "`{text}` is not an ISO 8601 date (2025-11-29, 2025-11-29T10:00:00, 2025-11-29T10:00:00Z or with an offset)"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_every_iso_form_and_end_dates_cover_the_day() {
        let day = parse_date("d", "2025-11-29", DateBound::Start).unwrap();
        assert_eq!(super::super::format_ms(day), "2025-11-29T00:00:00.000Z");
        let end = parse_date("d", "2025-11-29", DateBound::End).unwrap();
        assert_eq!(super::super::format_ms(end), "2025-11-29T23:59:59.999Z");
        let naive = parse_date("d", "2025-11-29T10:00:00", DateBound::Start).unwrap();
        let zulu = parse_date("d", "2025-11-29T10:00:00Z", DateBound::Start).unwrap();
        let offset = parse_date("d", "2025-11-29T12:00:00+02:00", DateBound::Start).unwrap();
        assert_eq!(naive, zulu);
        assert_eq!(zulu, offset);
        let err = parse_date("start_date", "yesterday-ish", DateBound::Start).unwrap_err();
        assert_eq!(err.field(), Some("start_date"));
    }

    #[test]
    fn keys_become_quoted_paths_and_odd_keys_are_refused() {
        let path = MetadataPath::parse("k", "references.issue").unwrap();
        assert_eq!(path.json_path(), r#"$."references"."issue""#);
        for bad in ["", "a..b", "a\"b", "a\\b", "x\ny"] {
            assert!(MetadataPath::parse("k", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn operators_check_their_values() {
        let path = || MetadataPath::parse("k", "p").unwrap();
        assert!(
            MetadataCondition::new("f", path(), Operator::In, Some(Value::from(3)), false).is_err()
        );
        assert!(MetadataCondition::new("f", path(), Operator::Gt, None, false).is_err());
        assert!(MetadataCondition::new("f", path(), Operator::Exists, None, false).is_ok());
        assert_eq!(Operator::ALL.len(), 16);
        for op in Operator::ALL {
            assert_eq!(Operator::parse(op.as_str()), Some(op));
        }
    }
}
