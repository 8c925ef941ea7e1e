//! The JSON report: the [`ReviewResult`] exactly as serde writes it, pretty-printed, plus the
//! JSON Schema of that shape.
//!
//! The field names are a contract with CI scripts, so this renderer adds nothing of its own and
//! keeps the result's order of findings. `schemas/review-result.schema.json` is generated from
//! the types by [`review_result_schema`]; a test fails when the committed file is stale and
//! rewrites it when `TOLLGATE_UPDATE_SCHEMAS=1` is set.

use std::io;

use schemars::generate::SchemaSettings;

use super::{Format, ReportError};
use crate::findings::ReviewResult;

/// The JSON Schema (draft 2020-12) of the JSON report, describing what Tollgate writes: fields
/// that are always present are required.
pub fn review_result_schema() -> serde_json::Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<ReviewResult>()
        .to_value()
}

pub(super) fn render(result: &ReviewResult, out: &mut dyn io::Write) -> Result<(), ReportError> {
    serde_json::to_writer_pretty(&mut *out, result).map_err(ReportError::json(Format::Json))?;
    out.write_all(b"\n").map_err(ReportError::io(Format::Json))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testutil::{render_to_string, sample_result};

    #[test]
    fn renders_the_sample_result() {
        let json = render_to_string(Format::Json, &sample_result());
        insta::assert_snapshot!(json);
    }

    #[test]
    fn round_trips_and_validates_against_its_schema() {
        let result = sample_result();
        let json = render_to_string(Format::Json, &result);
        let back: ReviewResult = serde_json::from_str(&json).unwrap();
        // `anchor_text` is never serialised.
        let mut expected = result.clone();
        for finding in &mut expected.findings {
            finding.anchor_text.clear();
        }
        assert_eq!(back, expected);

        let instance: serde_json::Value = serde_json::from_str(&json).unwrap();
        let validator = jsonschema::validator_for(&review_result_schema()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|err| format!("{} at {}", err, err.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        assert!(!json.contains("anchor_text"));
    }
}
