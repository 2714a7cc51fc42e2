//! A run's eval series as the report draws it: its points and the unit of its x axis.

use specc_runtime::eval::series::Point;
use std::path::PathBuf;

/// One run's series, named for the legend.
pub(in crate::commands) struct Run {
    pub(in crate::commands) label: String,
    pub(in crate::commands) db: PathBuf,
    pub(in crate::commands) points: Vec<Point>,
}

/// The time axis' unit: seconds for builds under two minutes, minutes otherwise.
#[derive(Clone, Copy)]
pub(in crate::commands) enum Unit {
    Seconds,
    Minutes,
}
