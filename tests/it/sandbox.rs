//! The sandbox, command by command, through the runner a build uses (`SandboxRunner` over
//! the specc binary). Each escape is tried and must fail; what a worker needs (a Rust crate
//! built and tested offline, a server on its own 127.0.0.1) must work. Nothing here sends a
//! packet beyond the loopback range: the network cut is shown with a listener on the host's
//! loopback and the interface list.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use specc_sandbox::{
    CommandResult, CommandSpec, Exit, ProcessRunner, Rlimits, Runner, SandboxRunner,
};

/// A project as a build lays it out: the spec and specc.toml, `.specc/state.db`, a hidden
/// eval tests directory, and a task's checkout under `.specc/work/`.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    checkout: PathBuf,
    runner: SandboxRunner,
    rt: tokio::runtime::Runtime,
}

impl Project {
    fn new(limits: Rlimits) -> Project {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().to_path_buf();
        let checkout = root.join(".specc/work/task");
        std::fs::create_dir_all(&checkout).expect("checkout");
        std::fs::create_dir_all(root.join("hidden-tests")).expect("eval dir");
        for (p, text) in [
            ("spec.md", "# spec\n"),
            ("specc.toml", "[budget]\ndollars = 1\n"),
            (".specc/state.db", "state"),
            ("hidden-tests/secret_test.rs", "// hidden\n"),
            ("outside.txt", "keep\n"),
        ] {
            std::fs::write(root.join(p), text).expect("write");
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let process = ProcessRunner {
            secret_vars: vec!["MY_PROVIDER_KEY_VAR".to_owned()],
        };
        let runner = rt.block_on(SandboxRunner::new(
            specc_tests::specc_binary(),
            process,
            limits,
        ));
        Project {
            _tmp: tmp,
            root,
            checkout,
            runner,
            rt,
        }
    }

    fn run(&self, script: &str, timeout: Duration) -> CommandResult {
        self.rt.block_on(self.runner.run(CommandSpec {
            script: script.to_owned(),
            dir: self.checkout.clone(),
            read_only: Vec::new(),
            timeout,
            output_cap: 64 << 10,
            env: vec![
                ("OPENAI_API_KEY".to_owned(), "sk-test".to_owned()),
                ("MY_PROVIDER_KEY_VAR".to_owned(), "secret".to_owned()),
            ],
            log: self.root.join(".specc/work/task.logs/1/run.log"),
            home: None,
        }))
    }

    fn sh(&self, script: &str) -> CommandResult {
        self.run(script, Duration::from_secs(60))
    }

    fn path(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }
}

fn out(r: &CommandResult) -> String {
    format!("{}{}", r.stdout.text(), r.stderr.text())
}

#[test]
fn this_host_offers_the_full_sandbox() {
    let p = Project::new(Rlimits::default());
    assert!(
        p.runner.probe.full(),
        "missing: {:?}; notes: {:?} {:?}",
        p.runner.probe.missing(),
        p.runner.probe.stage1.notes,
        p.runner.probe.notes
    );
}

#[test]
fn writes_outside_the_checkout_are_refused() {
    let p = Project::new(Rlimits::default());
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    let stamp = format!("specc-sandbox-test-{}", std::process::id());
    let targets = [
        format!("{home}/{stamp}"),
        format!("/tmp/{stamp}"),
        p.path("spec.md"),
        p.path(".specc/state.db"),
        p.path(".specc/work/escaped.txt"),
    ];
    for t in &targets {
        let r = p.sh(&format!("echo pwned >> '{t}'"));
        assert_ne!(r.exit, Exit::Code(0), "wrote {t}: {}", out(&r));
    }
    assert!(!Path::new(&targets[0]).exists() && !Path::new(&targets[1]).exists());
    assert_eq!(
        std::fs::read_to_string(p.path("spec.md")).expect("spec"),
        "# spec\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.path(".specc/state.db")).expect("db"),
        "state"
    );
    // Through a link in the checkout that points outside.
    let r = p.sh(&format!(
        "ln -s '{}' link && echo pwned > link",
        p.path("outside.txt")
    ));
    assert_ne!(r.exit, Exit::Code(0), "{}", out(&r));
    assert_eq!(
        std::fs::read_to_string(p.path("outside.txt")).expect("outside"),
        "keep\n"
    );
    // Inside the checkout and the private tmp, writes work.
    let r = p.sh("echo ok > inside.txt && echo ok > \"$TMPDIR/t\" && cat inside.txt");
    assert_eq!(
        (r.exit.clone(), r.stdout.text()),
        (Exit::Code(0), "ok\n".to_owned())
    );
}

#[test]
fn state_config_and_hidden_tests_cannot_be_read() {
    let p = Project::new(Rlimits::default());
    for f in [
        ".specc/state.db",
        "specc.toml",
        "hidden-tests/secret_test.rs",
        "spec.md",
    ] {
        let r = p.sh(&format!("cat '{}'", p.path(f)));
        assert_ne!(r.exit, Exit::Code(0), "read {f}: {}", out(&r));
    }
    let r = p.sh(&format!("ls '{}'", p.path("hidden-tests")));
    assert_ne!(r.exit, Exit::Code(0), "{}", out(&r));
}

#[test]
fn the_network_is_loopback_of_its_own() {
    let p = Project::new(Rlimits::default());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let r = p.sh(&format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3)'"
    ));
    assert_ne!(
        r.exit,
        Exit::Code(0),
        "reached the host's listener: {}",
        out(&r)
    );
    assert!(listener.accept().is_err(), "nothing connected to the host");
    let r = p.sh("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; ls /sys/class/net");
    assert_eq!(r.stdout.text(), "lo\nlo\n", "{}", out(&r));
    // Its own loopback works: a server and a client inside.
    let r = p.sh(
        "python3 -c 'import socket\ns=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen()\nc=socket.create_connection(s.getsockname()); a,_=s.accept(); a.sendall(b\"hi\"); print(c.recv(2).decode())'",
    );
    assert_eq!(r.stdout.text(), "hi\n", "{}", out(&r));
}

#[test]
fn no_keys_no_privileges() {
    let p = Project::new(Rlimits::default());
    let r = p.sh("env; grep NoNewPrivs /proc/self/status");
    let text = r.stdout.text();
    assert!(
        !text.contains("sk-test") && !text.contains("MY_PROVIDER_KEY_VAR"),
        "{text}"
    );
    assert!(text.contains("NoNewPrivs:\t1"), "{text}");
    // An ordinary process even as root of its namespace: no capabilities, no device nodes,
    // no new namespaces, no UNIX sockets (the host's live on paths Landlock does not
    // govern), no chmod of the host's files.
    let r = p.sh("grep -E '^Cap(Eff|Bnd)' /proc/self/status");
    assert_eq!(
        r.stdout.text(),
        "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
    );
    let r = p.sh("mknod ./disk b 8 0");
    assert_ne!(r.exit, Exit::Code(0), "{}", out(&r));
    let r = p.sh("unshare -U true");
    assert_ne!(r.exit, Exit::Code(0), "{}", out(&r));
    let r = p.sh("python3 -c 'import socket; socket.socket(socket.AF_UNIX)'");
    assert!(out(&r).contains("Operation not permitted"), "{}", out(&r));
    let r = p.sh(&format!("chmod 666 '{}'", p.path("outside.txt")));
    assert_ne!(r.exit, Exit::Code(0), "{}", out(&r));
    // Threads and forks still work (clone3 falls back to clone).
    let r = p.sh("python3 -c 'import os, threading; t = threading.Thread(target=print, args=(\"t\",)); t.start(); t.join(); os.wait() if os.fork() else os._exit(0)'");
    assert_eq!(
        (r.exit.clone(), r.stdout.text()),
        (Exit::Code(0), "t\n".to_owned()),
        "{}",
        out(&r)
    );
}

#[test]
fn daemons_die_with_the_command() {
    let p = Project::new(Rlimits::default());
    let r = p.sh("(sleep 1; touch late1) & setsid sh -c 'sleep 1; touch late2' & nohup sh -c 'sleep 1; touch late3' >/dev/null 2>&1 & echo started");
    assert_eq!(r.stdout.text(), "started\n", "{}", out(&r));
    std::thread::sleep(Duration::from_millis(2500));
    for f in ["late1", "late2", "late3"] {
        assert!(!p.checkout.join(f).exists(), "{f} outlived its command");
    }
}

#[test]
fn floods_hogs_bombs_and_sleepers_are_contained() {
    let p = Project::new(Rlimits {
        address_space: 2 << 30,
        pids: 64,
        ..Rlimits::default()
    });
    let r = p.sh("yes | head -c 100000000");
    assert_eq!(r.exit, Exit::Code(0));
    assert_eq!(r.stdout.total, 100_000_000);
    assert!(r.stdout.head.len() + r.stdout.tail.len() <= 64 << 10);
    let r = p.sh("python3 -c 'b = bytearray(4 * 1024**3); print(len(b))'");
    assert_ne!(
        r.exit,
        Exit::Code(0),
        "allocated 4 GiB under a 2 GiB limit: {}",
        out(&r)
    );
    assert!(out(&r).contains("MemoryError"), "{}", out(&r));
    let started = Instant::now();
    let r = p.run(
        "f() { f | f & }; f; sleep 2; echo done",
        Duration::from_secs(20),
    );
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", r.exit);
    if p.runner.probe.stage1.has_pids_limit() {
        // The limit, not the machine, stopped it (dash and bash word it differently).
        let text = out(&r);
        assert!(
            text.contains("Cannot fork") || text.contains("Resource temporarily unavailable"),
            "{text}"
        );
    }
    let started = Instant::now();
    let r = p.run("sleep 30", Duration::from_secs(1));
    assert_eq!(r.exit, Exit::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_rust_crate_builds_and_tests_offline_inside() {
    let p = Project::new(Rlimits::default());
    let c = &p.checkout;
    std::fs::create_dir_all(c.join("src")).expect("src");
    std::fs::write(
        c.join("Cargo.toml"),
        "[package]\nname = \"inside\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("manifest");
    std::fs::write(
        c.join("src/lib.rs"),
        "pub fn two() -> u8 { 2 }\n#[test]\nfn adds() { assert_eq!(two(), 2); }\n",
    )
    .expect("lib");
    let r = p.run("cargo test --offline 2>&1", Duration::from_secs(300));
    assert_eq!(r.exit, Exit::Code(0), "{}", out(&r));
    assert!(r.stdout.text().contains("test adds ... ok"), "{}", out(&r));
    assert!(
        c.join("target").is_dir(),
        "the target directory is inside the checkout"
    );
}

#[test]
fn specc_sandbox_probes_and_runs_a_command_as_a_worker_would() {
    let bin = specc_tests::specc_binary();
    let probe = std::process::Command::new(&bin)
        .args(["sandbox", "--probe"])
        .output()
        .expect("specc runs");
    let text = String::from_utf8_lossy(&probe.stdout);
    assert_eq!(probe.status.code(), Some(0), "{text}");
    for layer in [
        "network namespace",
        "pid namespace",
        "Landlock",
        "seccomp",
        "full sandbox",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(layer) && !l.contains("NO")),
            "{text}"
        );
    }
    let dir = tempfile::tempdir().expect("dir");
    let dir_arg = dir.path().display().to_string();
    let run = std::process::Command::new(&bin)
        .args([
            "sandbox",
            "--dir",
            &dir_arg,
            "--",
            "sh",
            "-c",
            "echo here > f && cat f && touch /tmp/specc-sandbox-cli-escape; exit 3",
        ])
        .output()
        .expect("specc runs");
    assert_eq!(run.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "here\n");
    assert!(String::from_utf8_lossy(&run.stderr).contains("cannot touch"));
    assert!(!Path::new("/tmp/specc-sandbox-cli-escape").exists());
}
