use super::*;

fn scope(p: &[&str]) -> Scope {
    Scope::new(&p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
}

#[test]
fn globs_match_for_real() {
    let s = scope(&["src/parse/*.rs", "Cargo.toml", "tests"]);
    assert!(s.allows("src/parse/lexer.rs"));
    assert!(
        !s.allows("src/parse/deep/lexer.rs"),
        "* stays in one directory"
    );
    assert!(!s.allows("src/main.rs"));
    assert!(s.allows("Cargo.toml"));
    assert!(
        s.allows("tests/cli.rs"),
        "a plain directory covers what is below it"
    );
    assert!(s.allows("./tests//cli.rs"));
    assert_eq!(s.check("../etc/passwd"), Err(Denied::NotRelative));
    assert_eq!(s.check("/etc/passwd"), Err(Denied::NotRelative));
    assert_eq!(s.check("src/main.rs"), Err(Denied::OutsideScope));
    let all = scope(&["**"]);
    assert_eq!(all.check(".specc/state.db"), Err(Denied::Reserved));
    assert_eq!(all.check("sub/.git/config"), Err(Denied::Reserved));
}

#[test]
fn overlap_is_conservative() {
    assert!(!scope(&["src/a/**"]).overlaps(&scope(&["src/b/**"])));
    assert!(scope(&["src/**"]).overlaps(&scope(&["src/b/x.rs"])));
    assert!(scope(&["src/lib.rs"]).overlaps(&scope(&["src/lib.rs"])));
    assert!(scope(&["src/*.rs"]).overlaps(&scope(&["src/lib.rs"])));
    assert!(!scope(&["src/parse.rs"]).overlaps(&scope(&["src/fmt.rs"])));
    assert!(!scope(&[]).overlaps(&scope(&["src/fmt.rs"])));
}

#[test]
fn literal_paths_match_as_the_globs_would() {
    // A literal is matched by comparison, not compiled: the same answers as its glob.
    let literal = scope(&["src/store", "./docs/a.md"]);
    let glob = scope(&["src/stor[e]", "./docs/[a].md"]);
    for (path, allowed) in [
        ("src/store", true),
        ("src/store/page.rs", true),
        ("src/store/deep/x.rs", true),
        ("src/storefront.rs", false),
        ("src", false),
        ("docs/a.md", true),
        ("docs/a.md/x", true),
        ("docs/a.mdx", false),
    ] {
        assert_eq!(literal.allows(path), allowed, "{path}");
        assert_eq!(glob.allows(path), allowed, "{path} (glob)");
    }
}
