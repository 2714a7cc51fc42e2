//! The front end against pulldown-cmark's bare event iteration over the same ~2 MB spec.
//!
//! Run: `cargo bench -p specc-tests --bench front_end`. The bar (issue 2): the front end takes
//! at most 3× the bare iteration. The ratios are printed at the end, twice: with each side
//! dropping what it built inside the timed region, and with the drop left out on both sides
//! (the parse alone; the CLI exits without freeing the IR).

// The binary's allocator, so the benchmark measures what users run.
// design: driver.allocator
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use pulldown_cmark::{Options, Parser};
use specc_ir::FileId;

const SIZE: usize = 2 * 1024 * 1024;

/// Every event with its offsets, as the front end asks for them. Returns the iterator, so
/// that dropping pulldown-cmark's tree can be timed or not.
fn bare_keep(text: &str) -> (usize, impl Sized + '_) {
    let options = Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES;
    let mut events = Parser::new_ext(text, options).into_offset_iter();
    ((&mut events).count(), events)
}

fn front_end_keep(text: &str) -> (usize, specc_passes::Parsed) {
    let parsed = specc_passes::parse_spec(FileId(0), text);
    (parsed.diagnostics.len(), parsed)
}

fn bare(text: &str) -> usize {
    bare_keep(text).0
}

fn front_end(text: &str) -> usize {
    front_end_keep(text).0
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
/// that drift in the machine's speed affects both alike. What each returns is dropped after
/// its clock stops.
fn medians<A, B>(n: usize, a: impl Fn() -> A, b: impl Fn() -> B) -> (Duration, Duration) {
    fn time<T>(f: &dyn Fn() -> T) -> Duration {
        let t = Instant::now();
        let kept = std::hint::black_box(f());
        let elapsed = t.elapsed();
        drop(kept);
        elapsed
    }
    let (mut ta, mut tb): (Vec<Duration>, Vec<Duration>) =
        (0..n).map(|_| (time(&a), time(&b))).unzip();
    ta.sort();
    tb.sort();
    (ta[n / 2], tb[n / 2])
}

/// CPU time per run of `f` over `n` runs.
fn cpu_per_run<T>(n: usize, f: impl Fn() -> T) -> Option<f64> {
    let start = specc_tests::cpu::own_seconds()?;
    for _ in 0..n {
        std::hint::black_box(f());
    }
    Some((specc_tests::cpu::own_seconds()? - start) / n as f64)
}

fn ratio(name: &str, text: &str) {
    let requirements = specc_passes::parse_spec(FileId(0), text)
        .tree
        .requirements()
        .count();
    let events = bare(text);
    let mb = text.len() as f64 / (1024.0 * 1024.0);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (bare_t, fe_t) = medians(41, || bare(text), || front_end(text));
    let (bare_k, fe_k) = medians(41, || bare_keep(text), || front_end_keep(text));
    #[allow(clippy::print_stdout)]
    {
        println!("{name} ({mb:.2} MiB, {requirements} requirements, {events} events):");
        println!(
            "  with drop:    front end {:.2} ms / bare pulldown-cmark {:.2} ms = {:.2}x (bar: <= 3x)",
            ms(fe_t),
            ms(bare_t),
            fe_t.as_secs_f64() / bare_t.as_secs_f64()
        );
        println!(
            "  parse alone:  front end {:.2} ms / bare pulldown-cmark {:.2} ms = {:.2}x (bar: <= 3x)",
            ms(fe_k),
            ms(bare_k),
            fe_k.as_secs_f64() / bare_k.as_secs_f64()
        );
        // The front end uses a second and third thread on a large spec: say what it costs
        // in CPU time too, not only in wall time.
        if let (Some(fe_c), Some(bare_c)) = (
            cpu_per_run(100, || front_end(text)),
            cpu_per_run(100, || bare(text)),
        ) {
            println!(
                "  cpu time:     front end {:.2} ms / bare pulldown-cmark {:.2} ms = {:.2}x (all threads; not the bar)",
                fe_c * 1e3,
                bare_c * 1e3,
                fe_c / bare_c
            );
        }
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
