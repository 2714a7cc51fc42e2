//! Input tokens per planner call as a spec grows: the kvstore fixture repeated 1, 3 and 10
//! times under one root, planned cold by the outline planner (its usage is the prompt's
//! characters / 4), through the real `plan_tree`. The bar: tokens per call within 1.2× from
//! 1 to 10 copies (a request holds only what its answer depends on, never the whole tree).
//! `cargo bench -p specc-tests --bench planner_tokens`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use specc_ir::FileId;
use specc_llm::{BoxFuture, Client, LlmConfig, LlmError, Provider, Request, Response};
use specc_plan::{Cache, Limits, OutlinePlanner, plan_tree};

/// The outline planner, summing the input tokens it reports.
struct Summing {
    inner: OutlinePlanner,
    input: AtomicU64,
    calls: AtomicU64,
    /// The largest request's (the root's, which lists every copy): reported so a growth
    /// the average hides shows.
    max: AtomicU64,
}

impl Provider for Summing {
    fn name(&self) -> &str {
        "p"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        Box::pin(async move {
            let r = self.inner.complete(request).await?;
            self.input.fetch_add(r.usage.input, Ordering::Relaxed);
            self.calls.fetch_add(1, Ordering::Relaxed);
            self.max.fetch_max(r.usage.input, Ordering::Relaxed);
            Ok(r)
        })
    }
}

/// kvstore's body `n` times, each copy a section of one root with its ids prefixed.
fn repeated(n: usize) -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/specs/valid/kvstore.md"
    ))
    .expect("fixture");
    let body = text
        .split_once("\n# ")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map(|(_, body)| body)
        .expect("a title");
    let mut out = String::from("# kvstore, repeated\n\nCopies of one store.\n");
    for k in 1..=n {
        out.push_str(&format!("\n## Copy {k} {{#c{k}}}\n"));
        for line in body.lines() {
            let line = line
                .replace("{#", &format!("{{#c{k}-"))
                .replace("[KV-", &format!("[KV{k}-"));
            if line.starts_with('#') {
                out.push('#');
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[allow(clippy::print_stdout)] // a bench binary reports on stdout
fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let mut per_call = Vec::new();
    println!("copies  nodes  calls  input tokens  tokens/call  max/call");
    for n in [1, 3, 10] {
        let spec = repeated(n);
        let parsed = specc_passes::parse_spec(FileId(0), &spec);
        let errors: Vec<_> = parsed.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        let provider = Arc::new(Summing {
            inner: OutlinePlanner::new("p"),
            input: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            max: AtomicU64::new(0),
        });
        let config = LlmConfig::parse(
            "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"outline\"\n",
        )
        .expect("config");
        let client =
            Client::from_config(config, &|_| None, None).with_provider("p", provider.clone(), 1);
        let mut cache = Cache::new();
        let planned = rt
            .block_on(plan_tree(
                &client,
                &parsed.tree,
                Limits::default(),
                "",
                &specc_passes::plan::Commands::default(),
                &mut cache,
            ))
            .expect("planned");
        let calls = provider.calls.load(Ordering::Relaxed);
        let input = provider.input.load(Ordering::Relaxed);
        assert_eq!(calls as usize, planned.calls);
        let max = provider.max.load(Ordering::Relaxed);
        let avg = input as f64 / calls as f64;
        per_call.push(avg);
        println!(
            "{n:>6}  {:>5}  {calls:>5}  {input:>12}  {avg:>11.0}  {max:>8}",
            parsed.tree.nodes().count()
        );
    }
    println!(
        "tokens per call, 10 copies / 1 copy: {:.2}x (bar: 1.2x)",
        per_call[2] / per_call[0]
    );
}
