//! Value parsers: core enums as command-line values.

use super::{CapiVersion, StrategyName};

/// A core enum as a command-line value: its names and their help come from the core, so the two
/// cannot drift (the orphan rule keeps clap's `ValueEnum` off the core's types, and the core
/// knows no clap).
fn core_values<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    about: fn(T) -> &'static str,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        all.iter()
            .map(|&v| PossibleValue::new(name(v)).help(about(v))),
    )
    .map(move |text| {
        // The parser above admits only these names.
        all.iter()
            .copied()
            .find(|&v| name(v) == text)
            .unwrap_or(all[0])
    })
}

pub(super) fn strategy_values() -> impl clap::builder::TypedValueParser<Value = StrategyName> {
    core_values(
        &StrategyName::ALL,
        StrategyName::as_str,
        StrategyName::about,
    )
}

pub(super) fn capi_version_values() -> impl clap::builder::TypedValueParser<Value = CapiVersion> {
    core_values(&CapiVersion::ALL, CapiVersion::as_str, CapiVersion::about)
}
