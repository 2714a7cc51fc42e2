//! `specc adopt`'s work on an existing code base: finding its packages, modules and test
//! commands (`scan`), writing the spec that describes them (`spec`), the optional prose a
//! planner writes for each section (`prose`), and re-recording the adopted digests
//! (`refresh`). The command itself (arguments, presets, what it prints) is the driver's.
//! design: driver.adopt, project.library

pub mod prose;
pub mod refresh;
pub mod scan;
pub mod spec;
