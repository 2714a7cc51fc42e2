//! Reference extraction parses single lines when it can prove they begin in plain code
//! (`passes/src/references/window.rs`). This differential test holds it to the whole-file
//! parse: on every file of the corpus, and on every variant with a `design:` inserted at the
//! start of each line, in the middle of each line and as a comment line of its own, both ways
//! give the same references.

use std::path::Path;

use specc_ir::FileId;
use specc_passes::references::{Method, Syntax, extract, extract_full_parse};

use crate::support::root;

/// Tricky inputs the fixtures do not cover, per language.
const EXTRA: &[(&str, &str)] = &[
    (
        "rs",
        "fn f<'a>(x: &'a str) -> char { '\"' }\nlet s = \"multi\nline // design: no.a\";\nlet r = r##\"raw \"# // design: no.b\n\"##;\n/* outer /* inner */ still // design: no.c\n*/\nlet c = '\\''; let u = 'é';\nlet b = br#\"x\"#; let id = r#type;\n",
    ),
    (
        "py",
        "s = '''\n# design: no.a\n'''\nt = f\"{x} {{y}}\"\nu = rb'\\'' # c\nv = \"\"\"a\"\"\" + 'b'\ndef f():\n    return 1  # design: yes.a\n",
    ),
    (
        "js",
        "const a = 1 / 2; const r = /\"/;\nconst t = `a\n${b}\n// design: no.a`;\nconst j = <div>\n// design: no.b\n</div>;\n/* multi\n design: no.c */\n",
    ),
    (
        "ts",
        "let x: Array<string> = [];\nconst t = `plain\n// design: no.a`;\nconst y = a / b; // c\n",
    ),
    (
        "go",
        "var s = `raw\n// design: no.a\n`\nvar r = '\\''\n/* block\n design: no.b */\n",
    ),
    (
        "c",
        "#include \"a.h\"\n#define M(x) \\\n  x // design: in.macro\nconst char *s = \"a\\\n// design: no.a\";\nchar c = '\\'';\n",
    ),
    (
        "cpp",
        "auto s = R\"xy(\n// design: no.a\n)xy\";\nint n = 1'000'000;\nauto t = u8R\"(x)\";\n",
    ),
    ("tsx", "const v = <p>\n// design: no.a\n</p>;\n"),
];

#[test]
fn windowed_extraction_agrees_with_whole_file_parses() {
    let mut corpus: Vec<(String, Syntax, String)> = Vec::new();
    for (ext, text) in EXTRA {
        let syntax = Syntax::for_extension(ext).expect("a grammar");
        corpus.push((format!("extra.{ext}"), syntax, (*text).to_owned()));
    }
    collect(&root().join("fixtures/check"), &mut corpus);
    collect(&root().join("passes/src"), &mut corpus);
    assert!(corpus.len() >= 60, "{} files", corpus.len());

    let mut compared = 0;
    for (name, syntax, text) in &corpus {
        let marker = if *syntax == Syntax::Python { "#" } else { "//" };
        let mut variants = vec![text.clone()];
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len())
            .collect();
        // Every line of small files; an even spread of 120 lines of large ones.
        let step = starts.len().div_ceil(120).max(1);
        for &s in starts.iter().step_by(step) {
            let line_end = text[s..].find('\n').map_or(text.len(), |p| s + p);
            let mid = (s + line_end) / 2;
            let mid = (mid..=line_end)
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(line_end);
            variants.push(format!("{}design: ins.a {}", &text[..s], &text[s..]));
            variants.push(format!("{} design: ins.b {}", &text[..mid], &text[mid..]));
            variants.push(format!(
                "{}{marker} design: ins.c\n{}",
                &text[..s],
                &text[s..]
            ));
        }
        for v in &variants {
            let fast = extract(FileId(0), Method::Syntax(*syntax), v);
            let full = extract_full_parse(FileId(0), *syntax, v);
            assert_eq!(
                fast, full,
                "{name}: windowed and whole-file parses differ on:\n{v}"
            );
            compared += 1;
        }
    }
    assert!(compared > 5_000, "{compared} variants");
}

fn collect(dir: &Path, out: &mut Vec<(String, Syntax, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
            continue;
        }
        let syntax = path
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Syntax::for_extension);
        if let (Some(syntax), Ok(text)) = (syntax, std::fs::read_to_string(&path)) {
            out.push((path.display().to_string(), syntax, text));
        }
    }
}
