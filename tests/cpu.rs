//! CPU time from `/proc/self/stat`, for the benchmarks: this process's own and that of its
//! waited-for children (and theirs). Linux counts both in clock ticks of 1/100 s (USER_HZ);
//! `None` where `/proc` has no such line.

/// The fields after the command name (which is in parentheses and may hold spaces).
fn fields() -> Option<Vec<f64>> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(
        rest.split_whitespace()
            .map(|x| x.parse().unwrap_or(0.0))
            .collect(),
    )
}

/// Seconds of two fields after the name, in ticks.
fn seconds(a: usize, b: usize) -> Option<f64> {
    let f = fields()?;
    Some((f.get(a)? + f.get(b)?) / 100.0)
}

/// This process's CPU time (user and system, all threads), in seconds: utime and stime,
/// the 12th and 13th fields after the name.
pub fn own_seconds() -> Option<f64> {
    seconds(11, 12)
}

/// The CPU time of this process's waited-for children and their descendants, in seconds:
/// cutime and cstime, the 14th and 15th fields after the name.
pub fn children_seconds() -> Option<f64> {
    seconds(13, 14)
}
