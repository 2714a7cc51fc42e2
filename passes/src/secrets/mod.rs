//! Secrets found in text and replaced before anything leaves the machine (design:
//! secrets.redaction): private keys, cloud and VCS tokens of the common providers, JWTs,
//! connection strings with a password, and `NAME=value` assignments whose name says key,
//! token, secret or password, in `.env`, shell, YAML, JSON and TOML alike. A secret becomes
//! `[redacted:<kind>:<tag>]`, where the tag is the first six hex digits of its blake3 hash:
//! the same secret gets the same placeholder in every request and every build, and the
//! placeholder says nothing else about it. Pure: the numbers of what was redacted are kept
//! behind a mutex for the summary, nothing is written.

mod patterns;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Mutex;

use regex::{Regex, RegexSet};

use patterns::{PATTERNS, looks_secret};

/// Finds and replaces secrets; counts what it replaced.
pub struct Redactor {
    set: RegexSet,
    regexes: Vec<Regex>,
    /// Values that look like secrets and are not (specc.toml's `[secrets] allow`).
    allow: Vec<Regex>,
    /// Distinct secrets replaced, by kind and tag.
    seen: Mutex<BTreeMap<&'static str, std::collections::BTreeSet<String>>>,
}

/// A secret found in a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub kind: &'static str,
    pub range: std::ops::Range<usize>,
}

impl Redactor {
    /// A redactor that lets through every secret value one of `allow`'s regular
    /// expressions matches whole; `Err` names an expression that does not parse.
    pub fn new(allow: &[String]) -> Result<Redactor, String> {
        let regexes = PATTERNS
            .iter()
            .map(|p| Regex::new(p.regex).map_err(|e| format!("{}: {e}", p.kind)))
            .collect::<Result<Vec<_>, _>>()?;
        let set = RegexSet::new(PATTERNS.iter().map(|p| p.regex)).map_err(|e| e.to_string())?;
        let allow = allow
            .iter()
            .map(|a| Regex::new(&format!("^(?:{a})$")).map_err(|e| format!("`{a}`: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Redactor {
            set,
            regexes,
            allow,
            seen: Mutex::new(BTreeMap::new()),
        })
    }

    /// A redactor with no allow list, for when the configured one cannot be made.
    pub fn none() -> Redactor {
        Redactor::new(&[]).unwrap_or_else(|e| unreachable!("specc's own patterns: {e}"))
    }

    /// The secrets in `text`, in order, none overlapping.
    pub fn scan(&self, text: &str) -> Vec<Hit> {
        let matched = self.set.matches(text);
        if !matched.matched_any() {
            return Vec::new();
        }
        let mut hits: Vec<(usize, Hit)> = Vec::new();
        for i in matched.iter() {
            let kind = PATTERNS[i].kind;
            for c in self.regexes[i].captures_iter(text) {
                let Some(m) = c.name("s").or_else(|| c.get(0)) else {
                    continue;
                };
                if kind == "assigned-secret" && !looks_secret(m.as_str()) {
                    continue;
                }
                if self.allow.iter().any(|a| a.is_match(m.as_str())) {
                    continue;
                }
                hits.push((
                    i,
                    Hit {
                        kind,
                        range: m.range(),
                    },
                ));
            }
        }
        // The earliest first; at one place, the more specific pattern.
        hits.sort_by_key(|(i, h)| (h.range.start, *i));
        let mut out: Vec<Hit> = Vec::new();
        for (_, h) in hits {
            if out
                .last()
                .is_none_or(|last| h.range.start >= last.range.end)
            {
                out.push(h);
            }
        }
        out
    }

    /// `text` with every secret replaced by its placeholder (borrowed when it has none).
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let hits = self.scan(text);
        if hits.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        let mut seen = self.seen.lock().ok();
        for h in hits {
            out.push_str(&text[at..h.range.start]);
            let tag = tag(&text[h.range.clone()]);
            out.push_str(&format!("[redacted:{}:{tag}]", h.kind));
            if let Some(seen) = seen.as_mut() {
                seen.entry(h.kind).or_default().insert(tag);
            }
            at = h.range.end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// `text` (a model's, written against what it was shown) with each placeholder of a
    /// secret `source` holds put back to that secret: a worker that rewrites a file it read
    /// keeps the file's secrets. `Err` names a placeholder `source` does not explain.
    pub fn restore(&self, text: &str, source: &str) -> Result<String, String> {
        if !text.contains("[redacted:") {
            return Ok(text.to_owned());
        }
        let mut out = text.to_owned();
        for h in self.scan(source) {
            let secret = &source[h.range.clone()];
            let placeholder = format!("[redacted:{}:{}]", h.kind, tag(secret));
            out = out.replace(&placeholder, secret);
        }
        match out.find("[redacted:") {
            Some(at) => {
                let end = out[at..].find(']').map_or(out.len(), |e| at + e + 1);
                Err(out[at..end].to_owned())
            }
            None => Ok(out),
        }
    }

    /// Every string of `value`, redacted in place; whether anything was.
    pub fn redact_json(&self, value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::String(s) => match self.redact(s) {
                Cow::Owned(r) => {
                    *s = r;
                    true
                }
                Cow::Borrowed(_) => false,
            },
            // Every element, not only up to the first that held a secret.
            serde_json::Value::Array(a) => {
                let mut any = false;
                for v in a {
                    any |= self.redact_json(v);
                }
                any
            }
            serde_json::Value::Object(o) => {
                let mut any = false;
                for v in o.values_mut() {
                    any |= self.redact_json(v);
                }
                any
            }
            _ => false,
        }
    }

    /// How many distinct secrets were replaced so far, by kind.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        self.seen
            .lock()
            .map(|s| s.iter().map(|(k, v)| ((*k).to_owned(), v.len())).collect())
            .unwrap_or_default()
    }
}

/// A secret's tag: six hex digits of its blake3 hash.
fn tag(secret: &str) -> String {
    blake3::hash(secret.as_bytes()).to_hex()[..6].to_owned()
}

/// How many placeholders `text` holds, by kind: what `specc show` counts in a journal.
pub fn placeholders(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (i, _) in text.match_indices("[redacted:") {
        let rest = &text[i + "[redacted:".len()..];
        if let Some(kind) = rest.split(':').next().filter(|k| k.len() < 40) {
            *out.entry(kind.to_owned()).or_default() += 1;
        }
    }
    out
}
