//! Every diagnostic code specc emits, with its default severity and a one-line summary.
//!
//! Codes are stable: a code is never reused for a different problem. The long explanation
//! printed by `specc explain CODE` lives in the driver (`compiler/driver/src/explain/`); a
//! test checks both lists agree.
//! design: diagnostics.codes

use crate::severity::Severity;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    pub code: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
}

macro_rules! codes {
    ($($name:ident = $code:literal, $sev:ident, $summary:literal;)*) => {
        $(pub const $name: &str = $code;)*
        /// All codes, in numeric order.
        pub const ALL: &[CodeInfo] = &[
            $(CodeInfo { code: $code, severity: Severity::$sev, summary: $summary },)*
        ];
    };
}

codes! {
    // E00xx: reading input (the driver reports these; exit status 2).
    FILE_NOT_FOUND = "E0001", Error, "input file not found";
    NOT_A_FILE = "E0002", Error, "input path is not a regular file";
    NOT_UTF8 = "E0003", Error, "input file is not valid UTF-8";
    IO_ERROR = "E0004", Error, "input file could not be read";
    FILE_TOO_LARGE = "E0005", Error, "input file is larger than specc accepts";
    PLAN_CACHE_DAMAGED = "W0007", Warning, "the planner cache in .specc/ could not be read or saved: its answers are asked for again";
    RECORDING_INCOMPLETE = "W0008", Warning, "some model exchanges could not be written to the --record file; the answers were used and paid for";
    INVALID_CONFIG = "E0006", Error, "specc.toml could not be used: invalid TOML, an unknown table or key, or a value out of range";
    // E01xx: the spec front end.
    DUPLICATE_NODE_ID = "E0101", Error, "two sections have the same id";
    DUPLICATE_REQUIREMENT_TAG = "E0102", Error, "two requirements have the same tag";
    EMPTY_SPEC = "E0103", Error, "the spec has no content";
    INVALID_FRONT_MATTER = "E0104", Error, "the +++ front matter is not valid TOML";
    UNKNOWN_TEST_RUNNER = "E0105", Error, "an acceptance check names no runner specc knows";
    EMPTY_HEADING = "W0106", Warning, "a heading has no text to make an id from";
    EMPTY_DECISION = "W0107", Warning, "a Decision: blockquote has no text";
    INVALID_NODE_ID = "E0108", Error, "an explicit {#id} is not a valid node id";
    TAG_WITHOUT_KEYWORD = "W0109", Warning, "a requirement tag on text with no RFC 2119 keyword";
    ADOPTED_EDITED = "W0110", Warning, "a section adopted as existing code was edited: it is planned and built again";
    ADOPTED_UNKNOWN = "W0111", Warning, "the [adopted] front matter names a section the spec does not have";
    // E02xx: design documents.
    MALFORMED_DECISION = "E0201", Error, "a decision heading has no Decision: line";
    CONFLICTING_DECISION = "E0202", Error, "one decision id with two different Decision texts";
    DUPLICATE_DECISION = "W0203", Warning, "the same decision is recorded twice";
    UNKNOWN_STATUS = "E0204", Error, "a decision's Status: is not one specc knows";
    REPEATED_FIELD = "W0205", Warning, "a decision field appears twice in one decision";
    UNKNOWN_DECISION = "E0206", Error, "code references a decision id that does not exist";
    STALE_PIN = "E0207", Error, "code is pinned to an older text of a decision";
    SUPERSEDED_REFERENCE = "W0208", Warning, "code references a superseded decision";
    UNREFERENCED_DECISION = "W0209", Warning, "no code references an accepted decision";
    CONTRADICTS_SPEC = "E0210", Error, "a design decision contradicts the spec's Decision: of the same id";
    PATH_SKIPPED = "W0211", Warning, "a path under the checked tree could not be walked (a symlink loop, a permission)";
    SOURCE_TOO_LARGE = "W0212", Warning, "a source file is larger than specc check searches";
    SOURCE_NOT_TEXT = "W0213", Warning, "a source file is not UTF-8 text and was not searched";
    NO_REFERENCE_TO_PIN = "E0214", Error, "specc pin found no reference to pin at the place given";
    UNKNOWN_REQUIREMENT = "E0215", Error, "code references a requirement id the spec does not have (misspelt, or removed from the spec)";
    // E03xx: plan validation (after each planner answer).
    DECISION_OWNED_ELSEWHERE = "E0301", Error, "a planner decided an id another part of the tree owns";
    CONTRADICTS_SPEC_DECISION = "E0302", Error, "a planner decision contradicts a spec-fixed decision";
    WRITE_SCOPE_OVERLAP = "W0303", Warning, "two siblings that may run concurrently can write the same paths; they were serialised";
    REQUIREMENT_NOT_COVERED = "E0304", Error, "a MUST, MUST NOT, SHALL or SHALL NOT requirement is covered by no work leaf";
    PLAN_TOO_DEEP = "E0305", Error, "the task tree is deeper than the depth limit";
    PLAN_TOO_WIDE = "E0306", Error, "a node has more children than the width limit";
    DEPENDENCY_CYCLE = "E0307", Error, "siblings depend on each other in a cycle";
    UNKNOWN_DEPENDENCY = "E0308", Error, "a child depends on a sibling key that does not exist";
    PLANNING_FAILED = "E0309", Error, "the planner could not produce a valid plan (a model error, or still invalid after two repairs)";
    DECISIONS_MERGED = "W0310", Warning, "planners decided one question differently; the coordinator merged their decisions and they were asked again";
    INVALID_CHILD_KEY = "E0312", Error, "a child's key is empty, not a short name, or repeats a sibling's";
    INVALID_SCOPE = "E0313", Error, "a child's write or read scope is not a relative path or glob inside the repository";
    EMPTY_WORK_LEAF = "E0314", Error, "a work leaf has no instructions or no write scope";
    INVALID_DECISION_ID = "E0315", Error, "a planned decision's id is not a dotted name";
    ACCEPTANCE_NOT_A_COMMAND = "E0317", Error, "a child's acceptance entry is not a shell command (prose, broken syntax, or a command the sandbox cannot find)";
    UNKNOWN_COVERED_ID = "E0318", Error, "a child covers a node or requirement id that the planned node's part of the spec does not have";
    CONTEST_INVALID = "E0320", Error, "a planner contested a decision it was not given, without a text or evidence, or while deciding it too";
    DECISION_CONTESTED = "W0321", Warning, "a planner or a worker contested a decision; the coordinator settled it";
    ADOPT_PROSE_INVALID = "E0319", Error, "`specc adopt --prose`: the model described a section it was not shown, or wrote a requirement keyword in capitals";
    PLANNER_CALL_FAILED = "E0316", Error, "a planner call failed after its retries: the provider, the key, the request's size, the budget or a recording stopped it";
    FIELD_GUIDE_TRIMMED = "W0311", Warning, "the field guide could not be given to planners in full (over its line budget, or unreadable)";
    // E04xx: building (`specc build`).
    TASK_FAILED = "E0401", Error, "a work task failed (acceptance, a limit, a give-up, a refusal) and its dependents were skipped";
    BUILD_STOPPED = "E0402", Error, "the build stopped early (the budget cap, or the journal could not be written)";
    OUT_DIR_CHANGED = "E0403", Error, "the output repository holds changes specc cannot build on; nothing was overwritten";
    WEAKER_SANDBOX = "E0404", Error, "live models would run commands without the full sandbox";
    CHECK_NOT_RUN = "W0405", Warning, "a spec test block's runner cannot be run by specc build yet";
    WEAKER_SANDBOX_ALLOWED = "W0407", Warning, "models' commands run with partial confinement, as specc.toml allows";
    NO_ACCEPTANCE = "W0408", Warning, "a work task has no acceptance check: whatever it writes lands";
    BUILD_SETUP = "E0406", Error, "specc build could not start (configuration, state, VCS or output directory)";
    MERGE_ADDS_LINES = "E0409", Error, "the merge agent's resolution adds lines found in neither side of the conflict";
    PLAN_NOT_APPROVED = "E0410", Error, "specc build --approve found no approved plan, or the plan the spec gives now is not the one approved";
    NOTHING_LANDED = "W0412", Warning, "no work landed: the output repository was left as it was";
    NARROW_PROVIDER = "W0413", Warning, "more jobs than the workers' provider lets calls out at once: the other attempts wait";
    PLAN_EDIT_AT_STAKE = "W0411", Warning, "a decision edited by hand was re-planned: the spec above it changed, and the planner's new text is used";
    // E05xx: scoring and reporting (`specc eval`, `specc report`).
    EVAL_SETUP = "E0501", Error, "specc eval could not run: no [eval] in specc.toml, nothing built yet, a build holds the state, or an unknown commit";
    REPORT_SETUP = "E0502", Error, "specc report could not run: no state database, no run with an eval series, or the page could not be written";
    // E06xx: the way in for coding agents and editors (`specc mcp`, hooks).
    MCP_SPEND_REFUSED = "E0601", Error, "a tool that spends money on models was called on a specc mcp server started without --allow-spend";
    MCP_NO_NODE = "E0602", Error, "the spec has no node with the id a specc mcp tool was given";
    BENCH_SETUP = "E0604", Error, "specc bench could not run: its bench.toml is missing or invalid, a case lacks its spec or specc.toml, or its runs' folder cannot be written";
    HOOK_FAILED = "W0603", Warning, "a hook of [hooks] failed, ran past its timeout or did not start; the build went on";
}

pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    ALL.iter().find(|c| c.code == code)
}
