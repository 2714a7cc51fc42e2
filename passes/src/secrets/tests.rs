//! Each kind of secret found and replaced, in the files people keep them in; real code and
//! data that must not be touched pass through byte for byte; an allowed value passes.

use super::Redactor;

fn redactor() -> Redactor {
    Redactor::new(&[]).expect("patterns")
}

/// `(kind, text holding one secret, the secret)`: every secret below is made up.
const SECRETS: &[(&str, &str, &str)] = &[
    (
        "aws-access-key",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLQ",
        "AKIAIOSFODNN7EXAMPLQ",
    ),
    (
        "assigned-secret",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9KeyQW",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9KeyQW",
    ),
    (
        "github-token",
        "token: ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    ),
    (
        "github-token",
        "GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    ),
    (
        "gitlab-token",
        "CI_TOKEN glpat-x1Y2z3W4v5U6t7S8r9Q0",
        "glpat-x1Y2z3W4v5U6t7S8r9Q0",
    ),
    (
        "slack-token",
        "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "slack-webhook",
        "url = https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/abcdefghij1234567890ABCD",
        "https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/abcdefghij1234567890ABCD",
    ),
    (
        "stripe-key",
        "stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ),
    (
        "google-api-key",
        "const k = \"AIzaSyD-1234567890abcdefghijklmnopqrstu\";",
        "AIzaSyD-1234567890abcdefghijklmnopqrstu",
    ),
    (
        "anthropic-key",
        "ANTHROPIC=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "openai-key",
        "client = OpenAI(api='sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd')",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
    ),
    (
        "jwt",
        "Cookie: session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "sendgrid-key",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    ),
    (
        "npm-token",
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    ),
    (
        "pypi-token",
        "password = pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMg",
        "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTAxMg",
    ),
    (
        "digitalocean-token",
        "do: dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ),
    (
        "shopify-token",
        "shpat_0123456789abcdef0123456789abcdef",
        "shpat_0123456789abcdef0123456789abcdef",
    ),
    (
        "huggingface-token",
        "HF hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
    ),
    (
        "twilio-key",
        "sid SK0123456789abcdef0123456789abcdef",
        "SK0123456789abcdef0123456789abcdef",
    ),
    (
        "mailgun-key",
        "mg key-0123456789abcdefghijklmnopqrstuv",
        "key-0123456789abcdefghijklmnopqrstuv",
    ),
    (
        "telegram-bot-token",
        "bot 123456789:AAEhBP0av28eUgBhRmjZ3P2xE4VKyDaC-tA",
        "123456789:AAEhBP0av28eUgBhRmjZ3P2xE4VKyDaC-tA",
    ),
    (
        "bearer-token",
        "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789'",
        "abcDEF123456ghiJKL789",
    ),
    (
        "connection-password",
        "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/app",
        "s3cr3t-Pa55",
    ),
    (
        "connection-password",
        "mongodb+srv://admin:hunter2xyz@cluster0.example.net/test",
        "hunter2xyz",
    ),
    (
        "assigned-secret",
        "export API_TOKEN=\"9f8e7d6c5b4a3f2e1d\"",
        "9f8e7d6c5b4a3f2e1d",
    ),
    (
        "assigned-secret",
        "db:\n  password: Tr0ub4dor&3\n",
        "Tr0ub4dor&3",
    ),
    (
        "assigned-secret",
        "{\"client_secret\": \"Xy9Zk2Lm4Np6Qr8St\"}",
        "Xy9Zk2Lm4Np6Qr8St",
    ),
    (
        "assigned-secret",
        "[auth]\nsigning_key = \"c0ffee-B4BE-d00d-2024\"\n",
        "c0ffee-B4BE-d00d-2024",
    ),
];

#[test]
fn every_kind_of_secret_is_replaced_by_a_stable_placeholder() {
    let r = redactor();
    let mut kinds = std::collections::BTreeSet::new();
    for (kind, text, secret) in SECRETS {
        let out = r.redact(text);
        assert!(!out.contains(secret), "{kind} kept: {out}");
        assert!(out.contains(&format!("[redacted:{kind}:")), "{kind}: {out}");
        // The same secret, the same placeholder, wherever it is.
        assert_eq!(r.redact(text), out, "{kind}");
        kinds.insert(*kind);
    }
    assert!(kinds.len() >= 20, "{} kinds", kinds.len());
    assert!(r.counts().values().sum::<usize>() >= SECRETS.len() - 1);
}

#[test]
fn a_private_key_block_is_replaced_whole() {
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB\n-----END OPENSSH PRIVATE KEY-----";
    let text = format!("before\n{key}\nafter\n");
    let out = redactor().redact(&text).into_owned();
    assert!(out.starts_with("before\n[redacted:private-key:"), "{out}");
    assert!(out.ends_with("]\nafter\n"), "{out}");
    assert!(!out.contains("b3BlbnNz"), "{out}");
}

#[test]
fn code_and_data_that_are_not_secrets_pass_byte_for_byte() {
    let negatives = [
        // Hashes and checksums, as lock files hold them.
        "checksum = \"a3f5b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b\"",
        "\"integrity\": \"sha512-Vc7Ba5Lj5Kn2RX0kW4Cz9F1h3p0zXq6nq6VbZa1mZ0PzJ4aYQ==\"",
        "version = \"1.0.197\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        // UUIDs and base64 test data.
        "id = \"123e4567-e89b-12d3-a456-426614174000\"",
        "assert_eq!(decode(\"SGVsbG8gd29ybGQ=\"), b\"Hello world\");",
        // Code that names keys, tokens and passwords without holding one.
        "let key = map.get(&name);\nlet token = lexer.next_token()?;",
        "password = os.environ[\"DB_PASSWORD\"]",
        "api_key: ${API_KEY}",
        "TOKEN=$GITHUB_TOKEN",
        "secret_key = settings.SECRET_KEY",
        "sorted(items, key=lambda x: x.name)",
        "password_field = \"password\"",
        "max_tokens = 8192",
        "self.token_count += 1",
        "API_KEY=<your key here>",
        "connect(\"postgres://localhost:5432/app\")",
        "git@github.com:specc/specc.git",
    ];
    let r = redactor();
    for text in negatives {
        assert_eq!(r.redact(text), text, "touched: {text}");
    }
}

#[test]
fn an_allowed_value_passes() {
    let r = Redactor::new(&[
        "AKIAIOSFODNN7EXAMPLQ".to_owned(),
        "test-[a-z]+-12345678".to_owned(),
    ])
    .expect("allow");
    assert_eq!(
        r.redact("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLQ"),
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLQ"
    );
    assert_eq!(
        r.redact("token = test-fixture-12345678"),
        "token = test-fixture-12345678"
    );
    assert!(Redactor::new(&["(".to_owned()]).is_err());
}

#[test]
fn json_strings_are_redacted_in_place() {
    let mut v = serde_json::json!({"text": "AKIAIOSFODNN7EXAMPLQ", "n": 1, "list": ["ok"]});
    assert!(redactor().redact_json(&mut v));
    assert!(
        v["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[redacted:aws-access-key:"))
    );
    assert_eq!(v["list"][0], "ok");
    assert_eq!(
        super::placeholders(&v.to_string()).get("aws-access-key"),
        Some(&1)
    );
}

/// In JSON (a request's user message, a journaled body) a line break is `\n`: a value
/// stops there, so the next line's secret is found too.
#[test]
fn secrets_on_consecutive_lines_are_found_inside_json() {
    let text = "A_KEY=AKIAIOSFODNN7QWERTYU\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9KeyQW\npassword: Tr0ub4dor&3zz\n";
    let json = serde_json::json!({"t": text}).to_string();
    let out = redactor().redact(&json).into_owned();
    for secret in ["AKIAIOSFODNN7QWERTYU", "wJalrXUtnFEMI", "Tr0ub4dor"] {
        assert!(!out.contains(secret), "{secret}: {out}");
    }
}

/// Inside a request's JSON text, a quoted value's quotes are `\"`: found all the same; a
/// `#` inside a value is part of it; a password with a `$` or a `(` is still a password.
#[test]
fn quoted_values_inside_json_and_awkward_passwords_are_found() {
    let texts = [
        "API_TOKEN=\"9f8e7d6c5b4a3f2e1d\"",
        "{\"client_secret\": \"Xy9Zk2Lm4Np6Qr8St\"}",
        "password = \"Tr0ub4dor&3x\"",
        "SECRET_KEY='django-insecure-5c&b#x(9zQ1'",
    ];
    let r = redactor();
    for t in texts {
        let json = serde_json::json!({"t": t}).to_string();
        for text in [t.to_owned(), json] {
            let out = r.redact(&text).into_owned();
            assert!(out.contains("[redacted:"), "{text} -> {out}");
        }
    }
    for (text, secret) in [
        ("DB_PASSWORD=abc#12345xyzQ", "abc#12345xyzQ"),
        ("password: Pa$$w0rd(1)x", "Pa$$w0rd(1"),
    ] {
        let out = r.redact(text).into_owned();
        assert!(!out.contains(secret), "{text} -> {out}");
    }
}

/// A worker rewrites a file it was shown redacted: the file's own secrets come back; a
/// placeholder the file does not hold is refused.
#[test]
fn placeholders_are_put_back_from_the_file_they_came_from() {
    let r = redactor();
    let file = "api: AKIAIOSFODNN7QWERTYU\nmax = 1\n";
    let shown = r.redact(file).into_owned();
    let rewritten = shown.replace("max = 1", "max = 2");
    assert_eq!(
        r.restore(&rewritten, file).expect("restored"),
        "api: AKIAIOSFODNN7QWERTYU\nmax = 2\n"
    );
    let other = r.redact("k: AKIAZZZZZZZZZZZZZZZZ").into_owned();
    assert!(r.restore(&other, file).is_err());
}
