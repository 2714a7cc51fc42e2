//! Reference extraction parses single lines when it can prove they begin in plain code
//! (`passes/src/references/window.rs`). This differential test holds it to the whole-file
//! parse: on every file of the corpus, and on every variant with a `design:` inserted at the
//! start of each line, in the middle of each line and as a comment line of its own, both ways
//! give the same references.

use std::path::Path;

use specc_ir::FileId;
use specc_passes::references::{
    Method, Syntax, extract, extract_full_parse, extract_windowed, parses_cleanly,
};

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
    // Found in review: C23 digit separators, CRLF continuations, JSX the scan must not miss,
    // and a JavaScript line that continues a division.
    (
        "c",
        "int x = 1'0; /* it's\nchar *s = \"design: no.a\";\n*/\n",
    ),
    ("c", "// note \\\r\nchar *s = \"design: no.b\";\r\n"),
    (
        "js",
        "const a = <_Row>\n// design: no.a\n</_Row>;\nconst b = < p>\n// design: no.b\n</p>;\n",
    ),
    (
        "js",
        "const w = a / 2, el = <p>\n  // design: no.c\n</p>;\n",
    ),
    ("js", "let r = a\n/[//design: yes.a]/\n0]\n"),
    // Found in a second review: directive values, odd line breaks in JS comments, HTML-like
    // comments, Python backticks and `\{` in f-strings, `//*` in Rust block comments.
    (
        "c",
        "#define GLOB \"src/*.c\"\nstatic const char *s = \"design: no.a\";\n/* end */\n",
    ),
    ("c", "#define X a /\n// design: no.b\nint y;\n"),
    (
        "cpp",
        "#define X 1 // see ///*\nchar *s = \"design: no.c\";\n/* */\n",
    ),
    ("js", "// a\rs = `\n// design: no.a\n`;\n"),
    ("ts", "// a\u{2028}s = `\n// design: no.b\n`;\n"),
    (
        "js",
        "--> see /*\nx = \"*/\"; y = `\"` + `\n// design: no.c\n`;\n",
    ),
    ("js", "y = (a\n--> design ? design: 2);\n"),
    ("py", "x = `a#b` + \"\"\"\n# design: no.a\n\"\"\"\n"),
    ("py", "x = f\"\\{'\"'}\" + '''\n# design: no.b\n'''\n"),
    (
        "rs",
        "/* a //* b */\nlet s = \"*/\"; let m = r#\"\n// design: no.a\n\"#;\n",
    ),
    // Plain code in every language, so that the windowed path is taken and compared.
    (
        "rs",
        "use std::io;\n/// Docs.\npub fn f(x: u32) -> u32 {\n    let s = \"text\"; // trailing\n    x + 1\n}\n",
    ),
    (
        "py",
        "import os\n\ndef f(x):\n    s = 'text'  # trailing\n    return x + 1\n",
    ),
    (
        "js",
        "'use strict';\nfunction f(x) {\n  const s = 'text'; // trailing\n  return x + 1;\n}\n",
    ),
    (
        "ts",
        "export function f(x: number): number {\n  const s: string = \"text\"; // trailing\n  return x + 1;\n}\n",
    ),
    (
        "go",
        "package m\n\nfunc f(x int) int {\n\ts := \"text\" // trailing\n\treturn x + 1\n}\n",
    ),
    (
        "c",
        "#include <stdio.h>\nint f(int x) {\n    const char *s = \"text\"; // trailing\n    return x + 1;\n}\n",
    ),
    (
        "cpp",
        "#include <string>\nint f(int x) {\n    std::string s = \"text\"; // trailing\n    return x + 1;\n}\n",
    ),
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
    // A slice of the benchmark's generated tree: every language, ~30-line files.
    let generated = tempfile::tempdir().expect("temp dir");
    let shape = specc_tests::CheckTree {
        files: 48,
        lines: 30,
        decisions: 30,
        reference_every: 2,
        requirements: 20,
    };
    specc_tests::generate_check_tree(generated.path(), shape).expect("generate");
    collect(&generated.path().join("src"), &mut corpus);
    assert!(corpus.len() >= 60, "{} files", corpus.len());

    let mut compared = 0;
    let mut windowed: std::collections::BTreeMap<String, usize> = Default::default();
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
            // Requirement references take the same paths.
            variants.push(format!("{} req: R-7 {}", &text[..mid], &text[mid..]));
            variants.push(format!(
                "{}{marker} req: R-1, a/b#2\n{}",
                &text[..s],
                &text[s..]
            ));
        }
        for v in &variants {
            let full = extract_full_parse(FileId(0), *syntax, v);
            assert_eq!(extract(FileId(0), Method::Syntax(*syntax), v), full);
            if let Some(fast) = extract_windowed(FileId(0), *syntax, v) {
                assert_eq!(
                    fast, full,
                    "{name}: windowed and whole-file parses differ on:\n{v}"
                );
                *windowed.entry(format!("{syntax:?}")).or_insert(0) += 1;
            }
            compared += 1;
        }
    }
    assert!(compared > 5_000, "{compared} variants");
    // The fast path must actually have been compared, in every language that has one.
    for syntax in [
        "Rust",
        "Python",
        "JavaScript",
        "TypeScript",
        "Go",
        "C",
        "Cpp",
    ] {
        let n = windowed.get(syntax).copied().unwrap_or(0);
        assert!(
            n >= 10,
            "{syntax}: only {n} variants took the windowed path: {windowed:?}"
        );
    }
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

/// Random token soup per language, dense in the characters that open and close strings and
/// comments: the windowed and the whole-file extraction must agree on every case.
#[test]
fn windowed_extraction_agrees_on_random_token_soup() {
    const TOKENS: &[&str] = &[
        "\"",
        "'",
        "`",
        "/",
        "*",
        "/*",
        "*/",
        "//",
        "#",
        "\\",
        "\n",
        "\n",
        "\n",
        " ",
        "x",
        "1",
        "r#\"",
        "\"#",
        "R\"(",
        ")\"",
        "${",
        "}",
        "{",
        "<",
        ">",
        "<!--",
        "-->",
        "'''",
        "\"\"\"",
        "f\"",
        "b'",
        "design: a.b",
        "design: c.d",
        "// design: e.f",
        "# design: g.h",
        ";",
        "=",
        "(",
        ")",
        "\r",
        "\u{2028}",
    ];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let syntaxes = [
        Syntax::Rust,
        Syntax::Python,
        Syntax::JavaScript,
        Syntax::TypeScript,
        Syntax::Go,
        Syntax::C,
        Syntax::Cpp,
    ];
    let mut windowed = 0;
    let mut clean = 0;
    let cases: usize = std::env::var("SPECC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            8_000
        } else {
            30_000
        });
    for case in 0..cases {
        let syntax = syntaxes[case % syntaxes.len()];
        let len = 3 + (next() % 24) as usize;
        let text: String = (0..len)
            .map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize])
            .collect();
        // The promise holds for files that parse; on broken ones tree-sitter's error
        // recovery, not the language, decides what is a comment.
        if !parses_cleanly(syntax, &text) {
            continue;
        }
        clean += 1;
        let full = extract_full_parse(FileId(0), syntax, &text);
        if let Some(fast) = extract_windowed(FileId(0), syntax, &text) {
            assert_eq!(
                fast, full,
                "{syntax:?}: windowed and whole-file parses differ on {text:?}"
            );
            windowed += 1;
        }
    }
    assert!(
        windowed > 200,
        "only {windowed} of {clean} clean cases took the windowed path"
    );
}
