use specc_ir::FileId;

use super::{in_line_comments, line_comment_markers};

/// `id[@pin] "spanned text"` per reference.
fn refs(text: &str, ext: &str) -> Vec<String> {
    let markers = line_comment_markers(ext).expect("known extension");
    in_line_comments(FileId(0), text, markers)
        .into_iter()
        .map(|r| {
            let pin = r.pin.map(|p| format!("@{p}")).unwrap_or_default();
            format!("{}{pin} {:?}", r.id, &text[r.span.range()])
        })
        .collect()
}

#[test]
fn comments_count_and_strings_never_do() {
    let rust = "let s = \"design: not.this\"; // design: storage.page-size@0a1b2c3d\nlet t = '\"'; // see design: net.framing.\nfn f<'a>(x: &'a str) {} // design: x-y_z\n/// design: docs.too\nlet u = \"// design: nor.this\";\n";
    assert_eq!(
        refs(rust, "rs"),
        [
            "storage.page-size@0a1b2c3d \"design: storage.page-size@0a1b2c3d\"",
            "net.framing \"design: net.framing\"",
            "x-y_z \"design: x-y_z\"",
            "docs.too \"design: docs.too\"",
        ]
    );
    let python = "x = 'design: no'  # design: yes\ns = \"# design: no\"\n# mydesign: no, design: also.yes@ABCDEF12\n";
    assert_eq!(
        refs(python, "py"),
        [
            "yes \"design: yes\"",
            "also.yes@abcdef12 \"design: also.yes@ABCDEF12\""
        ]
    );
}

#[test]
fn malformed_pins_are_not_pins() {
    let text = "// design: a@123\n// design: b@0123456789\n// design: c@\n// design:\n";
    assert_eq!(
        refs(text, "c"),
        ["a \"design: a\"", "b \"design: b\"", "c \"design: c\""]
    );
}

/// `design: <a>, <b>` names both (a worker wrote it and believed both referenced); an id after a
/// comma must look like a decision's (dotted, a part of two characters or more), so `e.g.`
/// and `etc.` after a comma name nothing, while any dotted name does.
#[test]
fn a_design_comment_may_list_decisions_and_prose_after_a_comma_is_not_one() {
    let py = "# design: fares.base, fares.round-5c@0A1B2C3D,fares.bands\n# design: cli.exit, e.g. see below\n# design: cli.args, etc.\n# design: only.one, and.x then\n";
    assert_eq!(
        refs(py, "py"),
        [
            "fares.base \"design: fares.base\"",
            "fares.round-5c@0a1b2c3d \"fares.round-5c@0A1B2C3D\"",
            "fares.bands \"fares.bands\"",
            "cli.exit \"design: cli.exit\"",
            "cli.args \"design: cli.args\"",
            "only.one \"design: only.one\"",
            "and.x \"and.x\"",
        ]
    );
}

#[test]
fn unknown_extensions_are_not_searched() {
    assert!(line_comment_markers("png").is_none());
    assert!(line_comment_markers("txt").is_none());
}

#[test]
fn markdown_is_searched_in_html_comments_only() {
    let md = "# Tool\n\nThe design: prose.that.is.no.reference, nor req: R-9.\n<!-- req: R-8 -->\n<!--design: a.b-->\n";
    assert_eq!(refs(md, "md"), ["R-8 \"R-8\"", "a.b \"design: a.b\""]);
}

/// For every grammar: the same reference text in a string is never a reference, in a
/// comment it always is.
#[test]
fn every_grammar_finds_comments_and_skips_strings() {
    use super::{Method, Syntax, extract};
    let cases: &[(&str, Syntax, &str)] = &[
        (
            "rs",
            Syntax::Rust,
            "let s = \"design: a.b\"; let r = r#\"design: a.b\"#;\n// design: a.b\n",
        ),
        (
            "py",
            Syntax::Python,
            "s = 'design: a.b'\n'''design: a.b'''\n# design: a.b\n",
        ),
        (
            "js",
            Syntax::JavaScript,
            "const s = `design: a.b ${x}`; const r = /design: a.b/;\n/* design: a.b */\n",
        ),
        (
            "ts",
            Syntax::TypeScript,
            "const s: string = \"design: a.b\";\n// design: a.b\n",
        ),
        (
            "tsx",
            Syntax::Tsx,
            "const v = <p title=\"design: a.b\">design: a.b</p>;\n// design: a.b\n",
        ),
        ("go", Syntax::Go, "var s = `design: a.b`\n// design: a.b\n"),
        (
            "c",
            Syntax::C,
            "const char *s = \"design: a.b\";\n/* design: a.b */\n",
        ),
        (
            "cpp",
            Syntax::Cpp,
            "auto s = R\"(design: a.b)\";\n// design: a.b\n",
        ),
    ];
    for (ext, syntax, text) in cases {
        assert_eq!(Method::for_extension(ext), Some(Method::Syntax(*syntax)));
        let found = extract(FileId(0), Method::Syntax(*syntax), text);
        assert_eq!(found.len(), 1, "{ext}: {found:?}");
        let line_start = text.trim_end().rfind('\n').map_or(0, |p| p + 1);
        assert!(
            found[0].span.start as usize > line_start,
            "{ext}: the comment's, not a string's"
        );
        assert_eq!(found[0].id, "a.b");
    }
}

/// The window scan says "plain code" where it is, and "not sure" wherever a line may begin
/// inside something it does not model.
#[test]
fn window_scan_knows_where_lines_begin() {
    use super::Syntax;
    use super::window::starts_in_code;
    // The offset of the line holding `needle`.
    let line_of = |text: &str, needle: &str| {
        let at = text.find(needle).expect("needle");
        text[..at].rfind('\n').map_or(0, |p| p + 1)
    };
    let sure = |syntax, text: &str, needle| {
        starts_in_code(syntax, text.as_bytes(), &[line_of(text, needle)])
    };
    let rust = "fn f<'a>(x: &'a str) -> char { '\"' }\n/* a /* nested */ comment */\nlet r = r#\"raw \" string\"#;\n// design: here\n";
    assert!(sure(Syntax::Rust, rust, "// design: here"));
    let rust_in_string = "let s = \"multi\n// design: inside\";\n";
    assert!(!sure(Syntax::Rust, rust_in_string, "// design: inside"));
    let rust_in_comment = "/* outer /* inner */\n design: inside */\n";
    assert!(!sure(Syntax::Rust, rust_in_comment, " design: inside"));

    let python = "s = '''\n# design: inside\n'''\nx = 'a' + \"b\"  # c\n# design: here\n";
    assert!(sure(Syntax::Python, python, "# design: here"));
    assert!(!sure(Syntax::Python, python, "# design: inside"));
    assert!(!sure(
        Syntax::Python,
        "f = f\"{x}\"\n# design: here\n",
        "# design: here"
    ));

    let go = "var s = `raw\n// design: inside\n`\n// design: here\n";
    assert!(sure(Syntax::Go, go, "// design: here"));
    assert!(!sure(Syntax::Go, go, "// design: inside"));

    assert!(sure(
        Syntax::C,
        "#include \"a.h\"\nchar c = '\\'';\n// design: here\n",
        "// design: here"
    ));
    assert!(!sure(
        Syntax::C,
        "#define M \\\n  x\n// design: here\n",
        "// design: here"
    ));
    assert!(sure(
        Syntax::Cpp,
        "auto s = R\"x(\n)\"\n)x\";\n// design: here\n",
        "// design: here"
    ));
    assert!(!sure(
        Syntax::Cpp,
        "auto s = R\"x(\n// design: inside\n)x\";\n",
        "// design: inside"
    ));

    assert!(sure(
        Syntax::JavaScript,
        "const a = 1 / 2;\n// design: here\n",
        "// design: here"
    ));
    assert!(!sure(
        Syntax::JavaScript,
        "const r = /\"/;\n// design: here\n",
        "// design: here"
    ));
    assert!(!sure(
        Syntax::JavaScript,
        "const j = <div>\n// design: here\n",
        "// design: here"
    ));
    assert!(!sure(
        Syntax::TypeScript,
        "const t = `${a}\n// design: here`;\n",
        "// design: here"
    ));
    assert!(!sure(Syntax::Tsx, "// design: here\n", "// design: here"));
}

/// `kind id "spanned text"` per reference, decisions and requirements alike.
fn kinds(text: &str, ext: &str) -> Vec<String> {
    let markers = line_comment_markers(ext).expect("known extension");
    in_line_comments(FileId(0), text, markers)
        .into_iter()
        .map(|r| format!("{:?} {} {:?}", r.kind, r.id, &text[r.span.range()]))
        .collect()
}

#[test]
fn requirement_references_are_tags_or_full_ids_and_lists_of_them() {
    let rust = "fn handle(req: Request) {} // req: R-3
// req: R-1, storage/pages#2 ,#4 and more
// prereq: R-9; req: r-1; req: R-12x; req: RR-; req: a#b
let s = \"// req: R-8\"; // design: a.b req: R-5.\n";
    assert_eq!(
        kinds(rust, "rs"),
        [
            "Requirement R-3 \"R-3\"",
            "Requirement R-1 \"R-1\"",
            "Requirement storage/pages#2 \"storage/pages#2\"",
            "Requirement #4 \"#4\"",
            "Decision a.b \"design: a.b\"",
            "Requirement R-5 \"R-5\"",
        ]
    );
}

#[test]
fn a_req_parameter_is_not_a_reference_and_spares_the_parse() {
    use super::may_hold_references;
    assert!(!may_hold_references(
        b"fn f(req: Request) {}\nlet req: &str = x;\n"
    ));
    assert!(may_hold_references(b"// req: R-1\n"));
    assert!(may_hold_references(b"# req:  a/b#1\n"));
    assert!(may_hold_references(b"// design: x\n"));
}

#[test]
fn build_files_without_an_extension_are_sources() {
    use super::Method;
    for name in [
        "Dockerfile",
        "Makefile",
        "Justfile",
        "CMakeLists.txt",
        "Dockerfile.dev",
        "x.bzl",
    ] {
        assert!(Method::for_file_name(name).is_some(), "{name}");
    }
    assert_eq!(
        Method::for_file_name("main.rs"),
        Some(Method::Syntax(super::Syntax::Rust))
    );
    assert_eq!(Method::for_file_name("notes.txt"), None);
    assert_eq!(Method::for_file_name("LICENSE"), None);
}

#[test]
fn every_requirement_id_the_front_end_makes_is_read_back_whole() {
    use super::requirement_id_len;
    let spec = "# Root\n\n- The root MUST hold.\n\n## Über Größe\n\n- It MUST be big.\n\n## Limits {#API-2}\n\n- It MUST limit.\n\n### List\n\n- It MUST list.\n- [R-12] It MUST be tagged.\n\n## 数据 {#data.store_v2}\n\n- It MUST store.\n";
    let parsed = crate::parse_spec(FileId(0), spec);
    let ids: Vec<String> = parsed
        .tree
        .nodes()
        .flat_map(|n| n.requirements.iter().map(|r| r.id.as_str().to_owned()))
        .collect();
    assert!(ids.len() >= 6, "{ids:?}");
    for id in &ids {
        for after in ["", " ", ",", ".", " -->", ")"] {
            let text = format!("{id}{after}");
            assert_eq!(requirement_id_len(&text), Some(id.len()), "{text:?}");
        }
    }
    assert_eq!(requirement_id_len("R-1x"), None);
    assert_eq!(requirement_id_len("Request"), None);
}
