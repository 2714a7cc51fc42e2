use std::collections::{BTreeMap, HashSet};

use specc_ir::plan::{ChildKind, PlannedChild, PlannedDecision, PlannerAnswer};
use specc_ir::{FileId, codes};

use super::*;

fn child(key: &str, writes: &[&str], deps: &[&str]) -> PlannedChild {
    PlannedChild {
        key: key.to_owned(),
        kind: ChildKind::Work,
        title: key.to_owned(),
        covers_nodes: Vec::new(),
        covers_requirements: Vec::new(),
        instructions: "do it".to_owned(),
        write_scope: writes.iter().map(|s| s.to_string()).collect(),
        read_scope: Vec::new(),
        acceptance: Vec::new(),
        depends_on: deps.iter().map(|s| s.to_string()).collect(),
    }
}

fn answer(children: Vec<PlannedChild>, decisions: &[(&str, &str)]) -> PlannerAnswer {
    PlannerAnswer {
        decisions: decisions
            .iter()
            .map(|(id, d)| PlannedDecision {
                id: id.to_string(),
                decision: d.to_string(),
                rationale: "r".into(),
            })
            .collect(),
        children,
        contested: Vec::new(),
        no_code: Vec::new(),
    }
}

fn codes_of(d: &[specc_ir::Diagnostic]) -> Vec<&str> {
    d.iter().map(|d| d.code).collect()
}

fn owned_by(entries: &[(&str, &str, &str)]) -> BTreeMap<String, Owned> {
    entries
        .iter()
        .map(|(id, owner, text)| {
            (
                id.to_string(),
                Owned {
                    owner: owner.to_string(),
                    decision: PlannedDecision {
                        id: id.to_string(),
                        decision: text.to_string(),
                        rationale: "r".into(),
                    },
                },
            )
        })
        .collect()
}

#[test]
fn an_id_is_decided_once() {
    let owned = owned_by(&[("storage.pages", "storage", "4 KiB")]);
    let a = answer(
        vec![],
        &[
            ("storage.pages", "8 KiB"),
            ("net.framing", "length-prefixed"),
            ("net.framing", "again"),
        ],
    );
    let d = check_ownership("net", &a, &owned);
    assert_eq!(
        codes_of(&d),
        [
            codes::DECISION_OWNED_ELSEWHERE,
            codes::DECISION_OWNED_ELSEWHERE
        ]
    );
    assert!(d[0].message.contains("`storage` owns"), "{}", d[0].message);
    assert!(
        d[1].message.contains("twice, differently"),
        "{}",
        d[1].message
    );
    // Repeating the owner's text, or one's own, is no taking.
    let same = answer(
        vec![],
        &[("storage.pages", "4  KiB"), ("a.b", "x"), ("a.b", "x")],
    );
    assert!(check_ownership("net", &same, &owned).is_empty());
}

#[test]
fn a_second_decision_of_an_owned_id_is_a_repetition_or_a_conflict() {
    let mut owned = BTreeMap::new();
    let root = answer(
        vec![],
        &[("store.pages", "4 KiB pages"), ("net.port", "7000")],
    );
    assert!(claim_decisions("", &root, &mut owned).is_empty());
    // The same text (whitespace aside) is a repetition, kept in the answer but not owned;
    // another text is a conflict.
    let below = answer(
        vec![],
        &[
            ("store.pages", "4 KiB   pages"),
            ("net.port", "7001"),
            ("net.port", "7002"),
            ("net.port", "7001"),
            ("net.framing", "length-prefixed"),
        ],
    );
    let conflicts = claim_decisions("net", &below, &mut owned);
    assert_eq!(conflicts.len(), 1, "one conflict per id");
    let sides: Vec<(&str, &str)> = conflicts[0]
        .sides
        .iter()
        .map(|s| (s.owner.as_str(), s.decision.decision.as_str()))
        .collect();
    assert_eq!(sides, [("", "7000"), ("net", "7001"), ("net", "7002")]);
    assert_eq!(
        owned["store.pages"].owner, "",
        "a repetition does not move the owner"
    );
    assert_eq!(owned["net.port"].decision.decision, "7000");
    assert_eq!(owned["net.framing"].owner, "net");
    // Twice in one answer: the first stands.
    let twice = answer(vec![], &[("a.b", "x"), ("a.b", "y")]);
    let conflicts = claim_decisions("t", &twice, &mut owned);
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].sides[0].owner, "t");
}

#[test]
fn spec_fixed_decisions_bind_planners() {
    let spec = crate::parse_spec(
        FileId(0),
        "# S\n\n## Storage\n\n> Decision: 4096-byte pages. {#storage.pages}\n",
    )
    .tree;
    let agree = answer(vec![], &[("storage.pages", "4096-byte  pages.")]);
    assert!(check_spec_decisions(&agree, &spec).is_empty());
    let differ = answer(vec![], &[("storage.pages", "8 KiB pages.")]);
    assert_eq!(
        codes_of(&check_spec_decisions(&differ, &spec)),
        [codes::CONTRADICTS_SPEC_DECISION]
    );
}

#[test]
fn overlapping_write_scopes_are_serialised() {
    assert!(scopes_may_overlap("src/store/*", "src/store/pages.rs"));
    assert!(scopes_may_overlap("src/store", "src/store/pages.rs"));
    assert!(!scopes_may_overlap("src/store/*", "src/net/*"));
    assert!(!scopes_may_overlap("src/store.rs", "src/store_test.rs"));
    let mut a = answer(
        vec![
            child("pages", &["src/store/pages.rs"], &[]),
            child("log", &["src/store/*"], &[]),
            child("net", &["src/net/*"], &[]),
            child("later", &["src/store/pages.rs"], &["log"]),
        ],
        &[],
    );
    let d = serialise_overlapping_writes(&mut a);
    assert_eq!(codes_of(&d), [codes::WRITE_SCOPE_OVERLAP]);
    assert_eq!(
        a.children[1].depends_on,
        ["pages"],
        "log now waits for pages"
    );
    assert_eq!(
        a.children[3].depends_on,
        ["log"],
        "later already waits for pages through log"
    );
    assert!(a.children[2].depends_on.is_empty());
}

#[test]
fn binding_requirements_need_a_work_leaf() {
    let spec = crate::parse_spec(FileId(0), "# S\n\n- [R-1] The store MUST persist data.\n- [R-2] It SHOULD be fast.\n- [R-3] It SHALL NOT lose writes.\n").tree;
    let covered: HashSet<String> = ["R-1".to_owned()].into();
    let d = uncovered(&spec, &covered);
    assert_eq!(
        codes_of(&d),
        [codes::REQUIREMENT_NOT_COVERED],
        "R-3; the SHOULD is not binding"
    );
    assert!(d[0].message.contains("R-3"), "{}", d[0].message);
}

#[test]
fn limits_and_cycles() {
    let wide = answer(
        (0..5).map(|i| child(&format!("c{i}"), &[], &[])).collect(),
        &[],
    );
    assert_eq!(
        codes_of(&check_limits("n", 1, &wide, 3, 4)),
        [codes::PLAN_TOO_WIDE]
    );
    assert_eq!(
        codes_of(&check_limits("n", 3, &wide, 3, 8)),
        [codes::PLAN_TOO_DEEP]
    );
    assert!(check_limits("n", 1, &wide, 3, 8).is_empty());
    // A plan child at the depth limit is refused at its parent, which can change it.
    let mut planned = wide.clone();
    planned.children[2].kind = ChildKind::Plan;
    let d = check_limits("n", 2, &planned, 3, 8);
    assert_eq!(codes_of(&d), [codes::PLAN_TOO_DEEP]);
    assert!(d[0].message.contains("`c2` under `n`"), "{}", d[0].message);
    assert!(check_limits("n", 1, &planned, 3, 8).is_empty());
    // A leaf's answer with no children is fine at any depth.
    assert!(check_limits("n", 3, &answer(vec![], &[]), 3, 8).is_empty());
    let keys = answer(
        vec![
            child("a", &[], &[]),
            child("a", &[], &[]),
            child("", &[], &[]),
            child("x/y", &[], &[]),
        ],
        &[],
    );
    let d = check_keys("", &keys);
    assert_eq!(codes_of(&d), [codes::INVALID_CHILD_KEY; 3]);
    assert!(
        d[0].message
            .contains("under the root is used by another sibling"),
        "{}",
        d[0].message
    );
    let cyclic = answer(
        vec![
            child("a", &[], &["c"]),
            child("b", &[], &["a"]),
            child("c", &[], &["b"]),
            child("d", &[], &["x"]),
        ],
        &[],
    );
    let d = check_cycles("n", &cyclic);
    assert_eq!(
        codes_of(&d),
        [codes::UNKNOWN_DEPENDENCY, codes::DEPENDENCY_CYCLE]
    );
    assert!(d[1].message.contains("a → c → b → a"), "{}", d[1].message);
    let fine = answer(
        vec![
            child("a", &[], &[]),
            child("b", &[], &["a"]),
            child("c", &[], &["a", "b"]),
        ],
        &[],
    );
    assert!(check_cycles("n", &fine).is_empty());
}

#[test]
fn lowering_gives_ids_roles_inherited_decisions_and_stable_fingerprints() {
    let mut answers = std::collections::BTreeMap::new();
    let mut root_plan = child("storage", &["src/store/*"], &[]);
    root_plan.kind = ChildKind::Plan;
    answers.insert(
        String::new(),
        answer(
            vec![root_plan, child("net", &["src/net/*"], &["storage"])],
            &[("arch.layers", "two layers")],
        ),
    );
    answers.insert(
        "storage".to_owned(),
        answer(
            vec![child("pages", &["src/store/pages.rs"], &[])],
            &[("storage.pages", "4 KiB")],
        ),
    );
    let o = LowerOptions {
        planner_model: "big".into(),
        worker_model: "small".into(),
        planner_budget: 8000,
        worker_budget: 4000,
    };
    let tasks = lower(&answers, &["spec.fixed".to_owned()], &o);
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["storage", "storage/pages", "net"],
        "depth first, in the planner's order"
    );
    assert_eq!(
        (tasks[0].role.as_str(), tasks[0].model.as_str()),
        ("planner", "big")
    );
    assert_eq!(
        (
            tasks[1].role.as_str(),
            tasks[1].model.as_str(),
            tasks[1].budget
        ),
        ("worker", "small", 4000)
    );
    assert_eq!(tasks[2].dependencies, ["storage"]);
    assert_eq!(
        tasks[1].decisions_to_read,
        ["spec.fixed", "arch.layers", "storage.pages"]
    );
    assert_eq!(tasks[1].parent.as_deref(), Some("storage"));
    // `net` depends on `storage`: it reads the decisions of storage's subtree as well.
    assert_eq!(
        tasks[2].decisions_to_read,
        ["spec.fixed", "arch.layers", "storage.pages"],
        "a dependent sees its sibling's decision"
    );
    assert_eq!(tasks[0].decisions_to_read, ["spec.fixed", "arch.layers"]);
    // Fingerprints depend on content only.
    assert_eq!(
        lower(&answers, &["spec.fixed".to_owned()], &o)[1].fingerprint,
        tasks[1].fingerprint
    );
    answers.get_mut("storage").expect("storage").children[0].instructions = "other".into();
    assert_ne!(
        lower(&answers, &["spec.fixed".to_owned()], &o)[1].fingerprint,
        tasks[1].fingerprint
    );
}

#[test]
fn planned_decisions_round_trip_through_design_docs() {
    let decisions = vec![
        PlannedDecision {
            id: "storage.page-size".into(),
            decision: "4096-byte\n\npages.".into(),
            rationale: "the OS page".into(),
        },
        PlannedDecision {
            id: "net.framing".into(),
            decision: "Length-prefixed frames.".into(),
            rationale: "simple".into(),
        },
    ];
    let docs = design_docs(&decisions);
    assert_eq!(docs.keys().collect::<Vec<_>>(), ["net.md", "storage.md"]);
    let (read, diags) = crate::design_docs::parse_design_doc(FileId(0), &docs["storage.md"]);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(read[0].id, "storage.page-size");
    assert_eq!(read[0].decision, "4096-byte pages.");
    assert_eq!(read[0].pin, crate::design_docs::pin("4096-byte pages."));
}
