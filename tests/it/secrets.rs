//! Secrets never leave the machine (design: secrets.redaction): a person's committed file
//! holding two dozen kinds of secret is read by a worker, printed by its command and changed
//! in a diff a reviewer reads; no captured request and no row of the state database holds
//! any of them, a `.env` file is not readable, and the build and `specc show` say how many
//! were replaced. Code that only looks like secrets passes through unchanged, and a value
//! specc.toml allows passes. Scripted models; the answers are hand-written.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use specc_tests::answers::AnswerBook;

use crate::build::{TOML, child, done, git, project, rebuild, write};

/// Made-up secrets of many kinds, one per line, as people keep them.
const SECRETS: &[(&str, &str)] = &[
    ("AWS_ACCESS_KEY_ID=", "AKIAIOSFODNN7QWERTYU"),
    (
        "aws_secret_access_key = ",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9KeyQW",
    ),
    ("GITHUB=", "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"),
    ("GITLAB=", "glpat-x1Y2z3W4v5U6t7S8r9Q0"),
    (
        "SLACK=",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "HOOK=",
        "https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/abcdefghij1234567890ABCD",
    ),
    ("STRIPE=", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("GOOGLE=", "AIzaSyD-1234567890abcdefghijklmnopqrstu"),
    (
        "ANTHROPIC=",
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "OPENAI=",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
    ),
    (
        "SESSION=",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "SENDGRID=",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    ),
    ("NPM=", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
    (
        "PYPI=",
        "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMg",
    ),
    (
        "DO=",
        "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ),
    ("SHOPIFY=", "shpat_0123456789abcdef0123456789abcdef"),
    ("HF=", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
    ("TWILIO=", "SK0123456789abcdef0123456789abcdef"),
    ("MAILGUN=", "key-0123456789abcdefghijklmnopqrstuv"),
    ("TELEGRAM=", "123456789:AAEhBP0av28eUgBhRmjZ3P2xE4VKyDaC-tA"),
    ("HEADER=Authorization: Bearer ", "abcDEF123456ghiJKL789"),
    ("DATABASE_URL=postgres://app:", "s3cr3t-Pa55"),
    ("export API_TOKEN=", "9f8e7d6c5b4a3f2e1d"),
    ("password: ", "Tr0ub4dor&3zz"),
    ("KEY_LINE=", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
];

/// Lines that look like secrets and are not: they must arrive unchanged.
const PLAIN: &str = "checksum = \"a3f5b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b\"\nid = \"123e4567-e89b-12d3-a456-426614174000\"\nlet token = lexer.next_token()?;\nmax_tokens = 8192\n";

fn secrets_file() -> String {
    let mut out = String::new();
    for (prefix, secret) in SECRETS {
        if prefix.starts_with("DATABASE_URL") {
            out.push_str(&format!("{prefix}{secret}@db.internal:5432/app\n"));
        } else if prefix.starts_with("KEY_LINE") {
            out.push_str(&format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n-----END OPENSSH PRIVATE KEY-----\n"
            ));
        } else {
            out.push_str(&format!("{prefix}{secret}\n"));
        }
    }
    out.push_str(PLAIN);
    out
}

const SPEC: &str =
    "# Pair\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n\n## Beta\n\n- [R-2] Beta MUST exist.\n";

/// The person's file with its secrets and an allowed fixture key.
fn persons_file() -> String {
    format!("{}fixture = AKIAALLOWEDFIXTURE12\n", secrets_file())
}

fn book() -> Arc<AnswerBook> {
    let run = |c: &str| json!({"name": "run", "arguments": {"command": c}});
    let read = |p: &str| json!({"name": "read", "arguments": {"path": p}});
    // The worker rewrites the file whole from what it was shown: placeholders and all.
    let allowed = specc_passes::secrets::Redactor::new(&["AKIAALLOWEDFIXTURE12".to_owned()])
        .expect("redactor");
    let shown = allowed.redact(&persons_file()).into_owned();
    assert!(shown.contains("[redacted:"), "{shown}");
    let edit = write(
        "config.txt",
        &shown.replace("max_tokens = 8192", "max_tokens = 4096"),
    );
    Arc::new(AnswerBook::new(json!({
        "planner": {"": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
            child("b", "R-2", "config.txt", &[], &[]),
        ]}},
        "workers": {
            "a": [[[write("a.txt", "alpha\n")], [done()]]],
            "b": [[[write("config.txt", "max_tokens = 8192\n")], [done()]],
                  [[read("config.txt")], [read(".env")], [run("cat config.txt; grep -c = .env")],
                   [edit], [done()]]],
        },
        "reviewer": {"b": {"diff": {"findings": []}}},
    })))
}

/// Every text cell of every table of the state database, as one string.
fn dump(db: &Path) -> String {
    let c = rusqlite::Connection::open(db).expect("db");
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .expect("tables")
        .query_map([], |r| r.get(0))
        .expect("rows")
        .filter_map(Result::ok)
        .collect();
    let mut out = String::new();
    for t in tables {
        let mut stmt = c
            .prepare(&format!("SELECT * FROM \"{t}\""))
            .expect("select");
        let n = stmt.column_count();
        let mut rows = stmt.query([]).expect("query");
        while let Ok(Some(row)) = rows.next() {
            for i in 0..n {
                if let Ok(Some(s)) = row.get::<_, Option<String>>(i) {
                    out.push_str(&s);
                    out.push('\n');
                }
            }
        }
    }
    out
}

#[test]
fn secrets_a_worker_reads_runs_and_diffs_reach_no_model_and_no_row() {
    let toml = format!(
        "{TOML}\n[roles.reviewer]\nprovider = \"scripted\"\nmodel = \"reviewer\"\n\
         [review]\nlenses = [\"diff\"]\nsample = 1.0\n\
         [secrets]\nallow = [\"AKIAALLOWEDFIXTURE12\"]\n"
    );
    let dir = project(&toml);
    std::fs::write(dir.path().join("spec.md"), SPEC).expect("spec");
    let b = book();
    let first = rebuild(dir.path(), &b, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.err, first.out);
    // A person commits their configuration, secrets and all, and an allowed fixture key.
    let out = dir.path().join("out");
    let file = persons_file();
    std::fs::write(out.join("config.txt"), &file).expect("config");
    std::fs::write(out.join(".env"), "DB_PASSWORD=Zx9-Qw8-Er7-Ty6\n").expect("env");
    assert!(git(&out, &["add", "-A"]).0);
    assert!(
        git(
            &out,
            &[
                "-c",
                "user.name=Pat",
                "-c",
                "user.email=pat@example.com",
                "commit",
                "-q",
                "-m",
                "config"
            ]
        )
        .0
    );
    // Beta changes: b reads the file, tries .env, prints both, and edits the file.
    let edited = SPEC.replace("Beta MUST exist.", "Beta MUST exist, tuned.");
    std::fs::write(dir.path().join("spec.md"), edited).expect("spec");
    let second = rebuild(dir.path(), &b, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.err, second.out);

    let requests = b.requests().join("\n");
    let db = dump(&dir.path().join(".specc/state.db"));
    for (what, text) in [("the requests", &requests), ("the state database", &db)] {
        for (_, secret) in SECRETS {
            assert!(!text.contains(secret), "{what} hold {secret}");
        }
        assert!(
            !text.contains("Zx9-Qw8-Er7-Ty6"),
            "{what} hold .env's password"
        );
        assert!(text.contains("[redacted:aws-access-key:"), "{what}");
    }
    // The worker did read the file, ran the command and the reviewer saw the diff: the
    // placeholders stand in them, the plain lines arrive as written, the allowed key too.
    for plain in PLAIN
        .lines()
        .chain(["AKIAALLOWEDFIXTURE12", "max_tokens = 4096"])
    {
        assert!(
            requests.contains(&serde_json::to_string(plain).expect("json")[1..plain.len()]),
            "{plain} did not arrive"
        );
    }
    let reads = b
        .requests()
        .iter()
        .filter(|r| r.contains("holds secrets (an environment or key file)"))
        .count();
    assert!(reads > 0, ".env was not refused");
    assert!(second.out.contains("redacted: "), "{}", second.out);
    let spec = dir.path().join("spec.md").display().to_string();
    let show = crate::support::specc(&["show", "b", &spec]);
    assert!(show.stdout.contains("redacted: "), "{}", show.stdout);
    // The file the worker rewrote from placeholders holds the person's secrets again.
    let landed = std::fs::read_to_string(out.join("config.txt")).expect("landed");
    assert_eq!(
        landed,
        file.replace("max_tokens = 8192", "max_tokens = 4096")
    );
}
