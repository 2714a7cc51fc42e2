//! The front end against pulldown-cmark's bare event iteration over the same ~2 MB spec.
//!
//! Run: `cargo bench -p specc-tests --bench front_end`. The bar (issue 2): the front end takes
//! at most 3× the bare iteration. The ratio is printed at the end.

// The binary's allocator, so the benchmark measures what users run.
// design: driver.allocator
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

/// Median time of `a` and of `b` over `n` rounds, alternating the two within each round so
/// that drift in the machine's speed affects both alike.
fn medians(n: usize, a: impl Fn() -> usize, b: impl Fn() -> usize) -> (Duration, Duration) {
    let time = |f: &dyn Fn() -> usize| {
        let t = Instant::now();
        std::hint::black_box(f());
        t.elapsed()
    };
    let (mut ta, mut tb): (Vec<Duration>, Vec<Duration>) =
        (0..n).map(|_| (time(&a), time(&b))).unzip();
    ta.sort();
    tb.sort();
    (ta[n / 2], tb[n / 2])
}

fn ratio(name: &str, text: &str) {
    let requirements = front_end(text);
    let events = bare(text);
    let (bare_t, fe_t) = medians(41, || bare(text), || front_end(text));
    let ratio = fe_t.as_secs_f64() / bare_t.as_secs_f64();
    let mb = text.len() as f64 / (1024.0 * 1024.0);
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{name} ({mb:.2} MiB, {requirements} requirements, {events} events): front end {:.2} ms / bare pulldown-cmark {:.2} ms = {ratio:.2}x (bar: <= 3x)",
            fe_t.as_secs_f64() * 1e3,
            bare_t.as_secs_f64() * 1e3,
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    for (name, text) in inputs() {
        ratio(name, &text);
    }
    Criterion::default().configure_from_args().final_summary();
}
