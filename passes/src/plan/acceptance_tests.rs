//! The plan-time checks a capable model's first build missed: acceptance entries that are
//! prose or broken shell, and ids the node does not have.

use specc_ir::plan::{ChildKind, PlannedChild, PlannerAnswer};
use specc_ir::{FileId, codes};

use super::*;

fn with_acceptance(entries: &[&str]) -> PlannerAnswer {
    PlannerAnswer {
        decisions: Vec::new(),
        children: vec![PlannedChild {
            key: "lib".into(),
            kind: ChildKind::Work,
            title: "lib".into(),
            covers_nodes: Vec::new(),
            covers_requirements: Vec::new(),
            instructions: "do it".into(),
            write_scope: vec!["src/**".into()],
            read_scope: Vec::new(),
            acceptance: entries.iter().map(|s| s.to_string()).collect(),
            depends_on: Vec::new(),
        }],
        contested: Vec::new(),
        no_code: Vec::new(),
    }
}

fn known() -> Commands {
    Commands::new(["cargo", "python3", "grep", "sh"].map(str::to_owned))
}

fn problems(entry: &str, commands: &Commands) -> Vec<String> {
    check_acceptance("lib", &with_acceptance(&[entry]), commands)
        .iter()
        .map(|d| {
            assert_eq!(d.code, codes::ACCEPTANCE_NOT_A_COMMAND);
            d.message.clone()
        })
        .collect()
}

#[test]
fn commands_pass_and_prose_is_sent_back() {
    for good in [
        "cargo test --lib version",
        "cargo build -q && echo build ok",
        "test -f README.md",
        "./scripts/check.sh",
        "RUST_LOG=debug cargo test",
        "! grep -q TODO src/lib.rs",
        "if cargo test; then echo ok; else exit 1; fi",
        "for f in src/*.rs; do grep -q 'design:' \"$f\" || exit 1; done",
        "case \"$(uname)\" in Linux) true ;; *) false ;; esac",
        "python3 - <<'PY'\nprint(\"(unbalanced in a heredoc is fine\")\nPY",
        "[ -d src ] && [ -f Cargo.toml ]",
        "true && cargo test",
        "echo \"$(cargo --version)\" | grep -q cargo",
    ] {
        assert_eq!(problems(good, &known()), Vec::<String>::new(), "{good}");
    }
    for (bad, says) in [
        ("The parser rejects invalid versions", "starts with `The`"),
        (
            "succeeds on all unit tests (cargo test)",
            "starts with `succeeds`",
        ),
        ("cargo test && echo 'done", "quote that is never closed"),
        ("echo $(cargo --version", "never closes it"),
        ("if cargo test; then echo ok", "no `fi` closes"),
        ("cargo test |", "ends with an operator"),
        ("python3 - <<PY\nprint(1)", "never ends"),
        ("cargo test)", "never opened"),
        ("[[ -f Cargo.toml ]]", "starts with `[[`"),
        ("true when all the tests pass", "the entry always passes"),
        ("", "is empty"),
    ] {
        let p = problems(bad, &known());
        assert_eq!(p.len(), 1, "{bad}: {p:?}");
        assert!(p[0].contains(says), "{bad}: {}", p[0]);
    }
}

#[test]
fn without_the_sandbox_commands_only_the_syntax_is_checked() {
    let none = Commands::default();
    assert!(problems("anything-goes --here", &none).is_empty());
    assert_eq!(
        problems("it isn't done", &none).len(),
        1,
        "the quote still counts"
    );
}

#[test]
fn an_id_the_node_does_not_have_is_sent_back_with_the_ones_it_has() {
    let spec = crate::parse_spec(
        FileId(0),
        "# S\n\n- [R-1] The store MUST persist data.\n\n## Pages\n\nThe pages MUST be 4 KiB.\n",
    )
    .tree;
    let mut a = with_acceptance(&[]);
    a.children[0].covers_requirements = vec!["R-1".into(), "pages#R-1".into()];
    a.children[0].covers_nodes = vec!["pages".into(), "page".into()];
    let d = check_known_ids(&spec.root, &[], &a);
    assert_eq!(d.len(), 2, "{d:#?}");
    assert!(d.iter().all(|d| d.code == codes::UNKNOWN_COVERED_ID));
    assert!(d[0].message.contains("`page`"), "{}", d[0].message);
    assert!(
        d[0].help
            .as_deref()
            .is_some_and(|h| h.ends_with("are `pages`"))
    );
    assert!(d[1].message.contains("`pages#R-1`"), "{}", d[1].message);
    let help = d[1].help.as_deref().unwrap_or_default();
    assert!(
        help.contains("`R-1`") && help.contains("`pages#1`"),
        "{help}"
    );
    a.children[0].covers_requirements = vec!["R-1".into(), "pages#1".into()];
    a.children[0].covers_nodes = vec!["pages".into()];
    assert!(check_known_ids(&spec.root, &[], &a).is_empty());
}

#[test]
fn the_command_word_is_found_past_assignments_that_hold_spaces() {
    let commands = Commands::new(["printf", "python3", "cargo"].map(str::to_owned));
    // A capable model's re-plan, refused as "starts with `'Zm9v!'`" before.
    let capture = r#"err=$(printf 'Zm9v!' | python3 -m basen -d base64 2>&1 >/dev/null); st=$?; test $st -eq 1 && test -n "$err""#;
    assert!(
        problems(capture, &commands).is_empty(),
        "{:?}",
        problems(capture, &commands)
    );
    assert!(problems("A='x y' B=\"$(pwd)\" cargo test", &commands).is_empty());
    assert!(problems("{ cargo build; } && (cd src && cargo test)", &commands).is_empty());
    let unknown = problems("st=$?; frobnicate --all", &commands);
    assert!(
        unknown.len() == 1 && unknown[0].contains("starts with `frobnicate`"),
        "an assignment-only command hands on to the next: {unknown:?}"
    );
    let prose = problems("The tool's output matches", &commands);
    assert_eq!(prose.len(), 1, "{prose:?}");
}
