//! A run's eval series as the report draws it: its points and the unit of its x axis.

use specc_runtime::eval::series::Point;
use std::path::PathBuf;

/// One run's series, named for the legend.
pub(in crate::commands) struct Run {
    pub(in crate::commands) label: String,
    pub(in crate::commands) db: PathBuf,
    pub(in crate::commands) points: Vec<Point>,
    /// Its attempts in time, for the swarm's timeline (empty when the database predates
    /// their times).
    pub(in crate::commands) timeline: specc_state::Timeline,
    /// When its series started (ms since the epoch): the origin of every time axis.
    pub(in crate::commands) started_ms: Option<i64>,
}

/// The time axis' unit: seconds for builds under two minutes, minutes otherwise.
#[derive(Clone, Copy)]
pub(in crate::commands) enum Unit {
    Seconds,
    Minutes,
}

impl Run {
    /// Tokens (input and output) and dollars the run had spent at its last point.
    pub(in crate::commands) fn spent(&self) -> (u64, f64) {
        self.points.last().map_or((0, 0.0), |p| {
            p.costs.iter().fold((0, 0.0), |(t, d), c| {
                (t + c.input_tokens + c.output_tokens, d + c.dollars)
            })
        })
    }
}
