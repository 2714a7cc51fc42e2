//! `specc explain [CODE]`.

use std::io::Write;

use specc_ir::codes;

use crate::cli::ExplainArgs;
use crate::exit;

/// The long explanation of every code, one Markdown file each under `src/explain/`.
pub(crate) const EXPLANATIONS: &[(&str, &str)] = &[
    ("E0001", include_str!("../explain/E0001.md")),
    ("E0002", include_str!("../explain/E0002.md")),
    ("E0003", include_str!("../explain/E0003.md")),
    ("E0004", include_str!("../explain/E0004.md")),
    ("E0005", include_str!("../explain/E0005.md")),
    ("E0006", include_str!("../explain/E0006.md")),
    ("W0007", include_str!("../explain/W0007.md")),
    ("W0008", include_str!("../explain/W0008.md")),
    ("E0101", include_str!("../explain/E0101.md")),
    ("E0102", include_str!("../explain/E0102.md")),
    ("E0103", include_str!("../explain/E0103.md")),
    ("E0104", include_str!("../explain/E0104.md")),
    ("E0105", include_str!("../explain/E0105.md")),
    ("W0106", include_str!("../explain/W0106.md")),
    ("W0107", include_str!("../explain/W0107.md")),
    ("E0108", include_str!("../explain/E0108.md")),
    ("W0109", include_str!("../explain/W0109.md")),
    ("W0110", include_str!("../explain/W0110.md")),
    ("W0111", include_str!("../explain/W0111.md")),
    ("E0201", include_str!("../explain/E0201.md")),
    ("E0202", include_str!("../explain/E0202.md")),
    ("W0203", include_str!("../explain/W0203.md")),
    ("E0204", include_str!("../explain/E0204.md")),
    ("W0205", include_str!("../explain/W0205.md")),
    ("E0206", include_str!("../explain/E0206.md")),
    ("E0207", include_str!("../explain/E0207.md")),
    ("W0208", include_str!("../explain/W0208.md")),
    ("W0209", include_str!("../explain/W0209.md")),
    ("E0210", include_str!("../explain/E0210.md")),
    ("W0211", include_str!("../explain/W0211.md")),
    ("W0212", include_str!("../explain/W0212.md")),
    ("W0213", include_str!("../explain/W0213.md")),
    ("E0214", include_str!("../explain/E0214.md")),
    ("E0215", include_str!("../explain/E0215.md")),
    ("E0301", include_str!("../explain/E0301.md")),
    ("E0302", include_str!("../explain/E0302.md")),
    ("W0303", include_str!("../explain/W0303.md")),
    ("E0304", include_str!("../explain/E0304.md")),
    ("E0305", include_str!("../explain/E0305.md")),
    ("E0306", include_str!("../explain/E0306.md")),
    ("E0307", include_str!("../explain/E0307.md")),
    ("E0308", include_str!("../explain/E0308.md")),
    ("E0309", include_str!("../explain/E0309.md")),
    ("W0310", include_str!("../explain/W0310.md")),
    ("W0321", include_str!("../explain/W0321.md")),
    ("E0320", include_str!("../explain/E0320.md")),
    ("W0311", include_str!("../explain/W0311.md")),
    ("E0312", include_str!("../explain/E0312.md")),
    ("E0313", include_str!("../explain/E0313.md")),
    ("E0314", include_str!("../explain/E0314.md")),
    ("E0315", include_str!("../explain/E0315.md")),
    ("E0316", include_str!("../explain/E0316.md")),
    ("E0317", include_str!("../explain/E0317.md")),
    ("E0318", include_str!("../explain/E0318.md")),
    ("E0319", include_str!("../explain/E0319.md")),
    ("E0401", include_str!("../explain/E0401.md")),
    ("E0402", include_str!("../explain/E0402.md")),
    ("E0403", include_str!("../explain/E0403.md")),
    ("E0404", include_str!("../explain/E0404.md")),
    ("W0405", include_str!("../explain/W0405.md")),
    ("E0406", include_str!("../explain/E0406.md")),
    ("W0407", include_str!("../explain/W0407.md")),
    ("W0408", include_str!("../explain/W0408.md")),
    ("E0409", include_str!("../explain/E0409.md")),
    ("E0410", include_str!("../explain/E0410.md")),
    ("W0411", include_str!("../explain/W0411.md")),
    ("W0412", include_str!("../explain/W0412.md")),
    ("W0413", include_str!("../explain/W0413.md")),
    ("E0501", include_str!("../explain/E0501.md")),
    ("E0502", include_str!("../explain/E0502.md")),
    ("E0601", include_str!("../explain/E0601.md")),
    ("E0602", include_str!("../explain/E0602.md")),
    ("W0603", include_str!("../explain/W0603.md")),
    ("E0604", include_str!("../explain/E0604.md")),
];

/// The explanation of `code` (case-insensitive), if it has one.
pub fn explanation(code: &str) -> Option<&'static str> {
    EXPLANATIONS
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(code))
        .map(|(_, text)| *text)
}

pub(crate) fn run(args: &ExplainArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let Some(code) = &args.code else {
        for c in codes::ALL {
            let _ = writeln!(out, "{}  {:<7}  {}", c.code, c.severity.as_str(), c.summary);
        }
        return exit::OK;
    };
    match explanation(code) {
        Some(text) => {
            let _ = write!(out, "{text}");
            exit::OK
        }
        None => {
            let _ = writeln!(
                err,
                "error: `{code}` is not a specc diagnostic code\n  help: run `specc explain` to list every code"
            );
            exit::USAGE
        }
    }
}
