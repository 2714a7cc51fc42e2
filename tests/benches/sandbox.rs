//! The sandbox's overhead: `true` through the interim runner (a bare spawn in its own
//! process group, with output capture) and through the full sandbox (the helper's two
//! stages, namespaces, cgroup, Landlock, seccomp). `cargo bench -p specc-tests --bench sandbox`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use specc_sandbox::{CommandSpec, ProcessRunner, Rlimits, Runner, SandboxRunner};

fn spec(dir: &std::path::Path) -> CommandSpec {
    CommandSpec {
        script: "true".to_owned(),
        dir: dir.to_path_buf(),
        read_only: Vec::new(),
        timeout: Duration::from_secs(30),
        output_cap: 1 << 16,
        env: Vec::new(),
        log: dir.join("logs/true.log"),
        home: None,
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("dir");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let bare = ProcessRunner::default();
    let sandbox = rt.block_on(SandboxRunner::new(
        specc_tests::specc_binary(),
        ProcessRunner::default(),
        Rlimits::default(),
    ));
    assert!(sandbox.probe.full(), "{:?}", sandbox.probe.missing());
    let mut g = c.benchmark_group("true");
    g.sample_size(30);
    g.bench_function("bare spawn (process group, capture)", |b| {
        b.iter(|| rt.block_on(bare.run(spec(dir.path()))))
    });
    g.bench_function("full sandbox", |b| {
        b.iter(|| rt.block_on(sandbox.run(spec(dir.path()))))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
