//! The front end against pulldown-cmark's bare event iteration over the same ~2 MB spec.
//!
//! Run: `cargo bench -p specc-tests --bench front_end`. The bar (issue 2): the front end takes
//! at most 3× the bare iteration. The ratio is printed at the end.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use pulldown_cmark::{Options, Parser};
use specc_ir::FileId;

const SIZE: usize = 2 * 1024 * 1024;

fn bare(text: &str) -> usize {
    let options = Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES;
    Parser::new_ext(text, options).into_offset_iter().count()
}

fn front_end(text: &str) -> usize {
    specc_passes::parse_spec(FileId(0), text)
        .tree
        .requirements()
        .count()
}

/// The two inputs: a synthetic spec dense with requirements, and the bundled key-value store
/// spec repeated to the same size.
fn inputs() -> [(&'static str, String); 2] {
    let kv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/specs/valid/kvstore.md"
    ))
    .expect("fixtures/specs/valid/kvstore.md");
    [
        ("synthetic", specc_tests::generate_spec(SIZE)),
        ("kvstore", specc_tests::repeat_spec(&kv, SIZE)),
    ]
}

fn bench(c: &mut Criterion) {
    for (name, text) in inputs() {
        bench_one(c, name, &text);
    }
}

fn bench_one(c: &mut Criterion, name: &str, text: &str) {
    let mut group = c.benchmark_group(format!("{name}-2MB"));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(20);
    group.bench_function("pulldown-cmark events", |b| {
        b.iter(|| bare(std::hint::black_box(text)))
    });
    group.bench_function("specc front end", |b| {
        b.iter(|| front_end(std::hint::black_box(text)))
    });
    group.finish();
}

/// Median of `n` timed runs of `f`.
fn median(n: usize, f: impl Fn() -> usize) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}

fn ratio(name: &str, text: &str) {
    let requirements = front_end(text);
    let bare_t = median(21, || bare(text));
    let fe_t = median(21, || front_end(text));
    let ratio = fe_t.as_secs_f64() / bare_t.as_secs_f64();
    let mb = text.len() as f64 / (1024.0 * 1024.0);
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{name} ({mb:.2} MiB, {requirements} requirements): front end {:.2} ms / bare pulldown-cmark {:.2} ms = {ratio:.2}x (bar: <= 3x)",
            fe_t.as_secs_f64() * 1e3,
            bare_t.as_secs_f64() * 1e3,
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    fp_cost();
    benches();
    for (name, text) in inputs() {
        ratio(name, &text);
    }
    Criterion::default().configure_from_args().final_summary();
}
#[allow(dead_code, clippy::print_stdout)]
fn fp_cost() {
    let text = specc_tests::generate_spec(SIZE);
    let p = specc_passes::parse_spec(FileId(0), &text);
    for _ in 0..3 {
        let t = Instant::now();
        let mut acc = 0u8;
        for node in p.tree.nodes() {
            acc ^= specc_passes::front_end::fingerprint_node(node).0[0];
        }
        let a = t.elapsed();
        let t = Instant::now();
        for node in p.tree.nodes() {
            acc ^= blake3::hash(node.prose.as_bytes()).as_bytes()[0];
        }
        let t2 = Instant::now();
        for node in p.tree.nodes() {
            let mut h = blake3::Hasher::new();
            h.update(node.prose.as_bytes());
            acc ^= h.finalize().as_bytes()[0];
        }
        let c = t2.elapsed();
        let t3 = Instant::now();
        let mut n = 0usize;
        for node in p.tree.nodes() {
            n += node.prose.len()
                + node.checks.iter().map(|c| c.code.len()).sum::<usize>()
                + node.decisions.iter().map(|d| d.text.len()).sum::<usize>();
        }
        println!("hasher(prose): {c:?} walk {:?} bytes {n}", t3.elapsed());
        println!(
            "fingerprint_node all: {a:?}; blake3(prose) all: {:?} {acc}",
            t.elapsed()
        );
    }
}
