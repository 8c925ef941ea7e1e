//! `compare_plan_versions`: compare two versions of a saved plan: steps added, removed and modified field by field (keyed by step number), files added and removed, scope and risk changes, every other changed field; text fields come with a unified diff.

use tollgate::api::lifecycle::{ComparePlanVersionsRequest, compare_plan_versions};
use tollgate::plan::lifecycle::history::PlanComparison;

use crate::error::ToolError;
use crate::profile::Profile;
use crate::tool::{Group, Hints, Tool, ToolContext};

pub(crate) struct ComparePlanVersions;

impl Tool for ComparePlanVersions {
    const NAME: &'static str = "compare_plan_versions";
    const TITLE: &'static str = "Compare plan versions";
    const DESCRIPTION: &'static str = "Diff two versions of a saved plan: steps added, removed or \
changed field by field, files, scope and risk.";
    const GROUP: Group = Group::In(Profile::Plan);
    const VERSION: &'static str = "1.0.0";
    const HINTS: Hints = Hints::READ_ONLY;

    type Input = ComparePlanVersionsRequest;
    type Output = PlanComparison;

    fn call(
        ctx: &ToolContext,
        input: ComparePlanVersionsRequest,
    ) -> Result<PlanComparison, ToolError> {
        Ok(compare_plan_versions(&super::plan_store(ctx)?, input)?)
    }
}
