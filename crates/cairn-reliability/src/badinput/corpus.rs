//! The bad-input corpus of `cairn reliability badinput`: every request it sends, one
//! function per kind of input or group of routes.
use super::cases::Case;
use super::queries::{
    auth_cases, filter_cases, id_traversal_cases, query_parameter_cases, recall_option_cases,
    space_name_cases,
};
use super::writes::{
    batch_and_method_cases, cross_site_cases, deep_metadata_cases, group_and_trajectory_cases,
    malformed_session_cases, rewrite_and_bound_cases, session_type_cases, session_value_cases,
    year_cases,
};

/// The corpus: every route that takes input, fed what it must refuse.
pub fn corpus() -> Vec<Case> {
    [
        session_type_cases(),
        session_value_cases(),
        year_cases(),
        deep_metadata_cases(),
        cross_site_cases(),
        rewrite_and_bound_cases(),
        malformed_session_cases(),
        batch_and_method_cases(),
        group_and_trajectory_cases(),
        recall_option_cases(),
        filter_cases(),
        query_parameter_cases(),
        space_name_cases(),
        id_traversal_cases(),
        auth_cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
