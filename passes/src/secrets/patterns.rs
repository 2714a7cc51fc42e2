//! The secret patterns: each a kind (the placeholder's name) and a regular expression whose
//! group `s` (or the whole match) is the secret. Written for specc from the providers'
//! published token formats; broad patterns (`NAME=value`) demand a value that looks like a
//! secret, not a word or a reference to one.
//! design: secrets.redaction

/// One kind of secret.
pub(super) struct Pattern {
    pub(super) kind: &'static str,
    pub(super) regex: &'static str,
}

/// Every pattern, the specific ones first: a text's span is claimed by the first that
/// matches it.
pub(super) const PATTERNS: &[Pattern] = &[
    Pattern {
        kind: "private-key",
        regex: r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    },
    Pattern {
        kind: "aws-access-key",
        regex: r"\b(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})\b",
    },
    Pattern {
        kind: "github-token",
        regex: r"\b(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    },
    Pattern {
        kind: "gitlab-token",
        regex: r"\b(?P<s>glpat-[A-Za-z0-9_\-]{20,})",
    },
    Pattern {
        kind: "slack-token",
        regex: r"\b(?P<s>xox[abposr]-[A-Za-z0-9-]{10,})",
    },
    Pattern {
        kind: "slack-webhook",
        regex: r"(?P<s>https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+)",
    },
    Pattern {
        kind: "stripe-key",
        regex: r"\b(?P<s>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})\b",
    },
    Pattern {
        kind: "google-api-key",
        regex: r"\b(?P<s>AIza[0-9A-Za-z_\-]{35})",
    },
    Pattern {
        kind: "anthropic-key",
        regex: r"\b(?P<s>sk-ant-[A-Za-z0-9_\-]{20,})",
    },
    Pattern {
        kind: "openai-key",
        regex: r"\b(?P<s>sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{32,})",
    },
    Pattern {
        kind: "jwt",
        regex: r"\b(?P<s>eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})",
    },
    Pattern {
        kind: "sendgrid-key",
        regex: r"\b(?P<s>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})",
    },
    Pattern {
        kind: "npm-token",
        regex: r"\b(?P<s>npm_[A-Za-z0-9]{36})\b",
    },
    Pattern {
        kind: "pypi-token",
        regex: r"\b(?P<s>pypi-AgE[A-Za-z0-9_\-]{50,})",
    },
    Pattern {
        kind: "digitalocean-token",
        regex: r"\b(?P<s>do[opr]_v1_[a-f0-9]{64})\b",
    },
    Pattern {
        kind: "shopify-token",
        regex: r"\b(?P<s>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})\b",
    },
    Pattern {
        kind: "huggingface-token",
        regex: r"\b(?P<s>hf_[A-Za-z]{34})\b",
    },
    Pattern {
        kind: "twilio-key",
        regex: r"\b(?P<s>SK[0-9a-f]{32})\b",
    },
    Pattern {
        kind: "mailgun-key",
        regex: r"\b(?P<s>key-[0-9a-z]{32})\b",
    },
    Pattern {
        kind: "telegram-bot-token",
        regex: r"\b(?P<s>[0-9]{8,10}:AA[A-Za-z0-9_\-]{33})",
    },
    Pattern {
        kind: "bearer-token",
        regex: r"(?i)\bauthorization:\s*bearer\s+(?P<s>[A-Za-z0-9._~+/=\-]{16,})",
    },
    Pattern {
        kind: "connection-password",
        regex: r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@'\x22\\]+:(?P<s>[^\s@/'\x22\\]+)@[^\s/]",
    },
    Pattern {
        // `NAME=value`, `NAME: value`, `"name": "value"`, `name = "value"`: a name that
        // says key, token, secret or password, and a literal value (checked by
        // `looks_secret`).
        kind: "assigned-secret",
        regex: r#"(?im)(?:^|[^A-Za-z0-9_])(?:\\?["'])?(?P<name>[A-Za-z0-9_.\-]*(?:key|token|secret|passw(?:or)?d|pwd|credential)[A-Za-z0-9_.\-]*)(?:\\?["'])?\s*(?::|=|:=)\s*(?:\\?["'])?(?P<s>[^\s"',;}\]\\]{8,})"#,
    },
];

/// Whether an assigned value is a secret rather than a word, a number, a placeholder or a
/// reference to one (`${VAR}`, `$VAR`, `os.environ[...]`, a call).
pub(super) fn looks_secret(value: &str) -> bool {
    let v = value.trim_end_matches(['.', ')']);
    if v.len() < 8 || v.chars().all(|c| c.is_ascii_digit() || c == '.') || reference(v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let placeholders = [
        "changeme",
        "example",
        "xxxxxxxx",
        "placeholder",
        "your_",
        "your-",
        "redacted",
        "environ",
        "process.env",
        "getenv",
    ];
    if placeholders.iter().any(|p| lower.contains(p)) {
        return false;
    }
    if ["none", "null", "true", "false", "undefined"].contains(&lower.as_str()) {
        return false;
    }
    // A dotted or path-like identifier (`module.attr`, `settings.SECRET_KEY`) is code.
    if v.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
        && v.contains('.')
        && !v.chars().any(|c| c.is_ascii_digit())
    {
        return false;
    }
    let digit = v.chars().any(|c| c.is_ascii_digit());
    let upper = v.chars().any(|c| c.is_ascii_uppercase());
    let lower_c = v.chars().any(|c| c.is_ascii_lowercase());
    let symbol = v.chars().any(|c| !c.is_ascii_alphanumeric());
    // A plain word (all one case, letters only) is a name, not a secret.
    (digit && (upper || lower_c))
        || (upper && lower_c && v.len() >= 12)
        || (symbol && (digit || upper))
}

/// Whether a value refers to a secret rather than holding one: `$VAR`, `${VAR}`, a
/// template (`{{ x }}`, `<your key>`), an attribute (`self.x`, `settings.X`) or a call
/// (`get_key()`, `os.environ["X"]`).
fn reference(v: &str) -> bool {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    // The value stops before a `}`: `${VAR}` arrives as `${VAR`.
    let var = v
        .strip_prefix("${")
        .map(|r| r.trim_end_matches('}'))
        .or(v.strip_prefix('$'));
    if var.is_some_and(|n| ident(n.split([':', '-']).next().unwrap_or(n))) {
        return true;
    }
    if v.starts_with("{{") || v.starts_with("{%") || (v.starts_with('<') && v.ends_with('>')) {
        return true;
    }
    // `name(` or `a.b.c(`/`a.b[`: code.
    let head: String = v
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    let rest = &v[head.len()..];
    (rest.starts_with('(') || rest.starts_with('[')) && head.split('.').all(ident)
        || ["self.", "this.", "settings.", "config.", "env."]
            .iter()
            .any(|p| v.starts_with(p))
}
