//! A PostgreSQL database for a test: a fresh database in the cluster `SPECC_TEST_PG_URL`
//! names (`postgres://USER@127.0.0.1:PORT`, no path or query: the database's name is
//! appended; `.ci/run` starts one with
//! `scripts/pg-throwaway.sh`), or else in a throwaway cluster this process starts itself
//! from the server binaries on the machine (initdb in a temporary directory, as the
//! `postgres` user when run as root, on a free loopback port), stopped when the test ends.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// A throwaway cluster, stopped and removed when the process's last database is dropped.
struct Cluster {
    url: String,
    dir: Option<(PathBuf, PathBuf)>,
}

static CLUSTER: OnceLock<Mutex<Option<Cluster>>> = OnceLock::new();
static NEXT: AtomicUsize = AtomicUsize::new(0);
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// A database of its own for one test: its URL; dropped, the cluster stops with the last.
pub struct TestDb {
    pub url: String,
}

impl Drop for TestDb {
    fn drop(&mut self) {
        // The count is changed under the cluster's lock, so no test can be handed the URL
        // of a cluster that is about to stop.
        let Some(m) = CLUSTER.get() else { return };
        let Ok(mut c) = m.lock() else { return };
        if OPEN.fetch_sub(1, Ordering::AcqRel) == 1
            && let Some(Cluster {
                dir: Some((bin, data)),
                ..
            }) = c.take()
        {
            let _ = as_postgres(&bin.join("pg_ctl"))
                .args(["-D", &data.to_string_lossy(), "-m", "immediate", "stop"])
                .output();
            if let Some(parent) = data.parent() {
                let _ = std::fs::remove_dir_all(parent);
            }
        }
    }
}

/// A fresh database.
pub async fn database() -> TestDb {
    let admin = {
        let mut c = CLUSTER
            .get_or_init(|| Mutex::new(None))
            .lock()
            .expect("cluster lock");
        if c.is_none() {
            *c = Some(match std::env::var("SPECC_TEST_PG_URL") {
                Ok(url) => Cluster {
                    url: url.trim_end_matches('/').to_owned(),
                    dir: None,
                },
                Err(_) => start(),
            });
        }
        OPEN.fetch_add(1, Ordering::AcqRel);
        c.as_ref().expect("cluster").url.clone()
    };
    let name = format!(
        "t_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let (client, conn) =
        tokio_postgres::connect(&format!("{admin}/postgres"), tokio_postgres::NoTls)
            .await
            .expect("connect to the test cluster");
    tokio::spawn(conn);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create a test database");
    TestDb {
        url: format!("{admin}/{name}"),
    }
}

fn server_bin() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    versions.sort();
    versions.pop().filter(|b| b.join("initdb").exists()).expect(
        "the state tests need PostgreSQL's server binaries (apt-get install postgresql) \
             or SPECC_TEST_PG_URL=postgres://USER@127.0.0.1:PORT",
    )
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// `program`, run as the `postgres` user when this process is root (initdb refuses root).
fn as_postgres(program: &std::path::Path) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

fn start() -> Cluster {
    let bin = server_bin();
    let dir = tempfile::Builder::new()
        .prefix("specc-pg-")
        .tempdir()
        .expect("temp dir")
        .keep();
    if is_root() {
        let ok = Command::new("chown")
            .args(["postgres", &dir.to_string_lossy()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "chown of the cluster's directory to postgres");
    }
    let data = dir.join("data");
    let out = as_postgres(&bin.join("initdb"))
        .args([
            "-D",
            &data.to_string_lossy(),
            "-A",
            "trust",
            "-U",
            "specc",
            "-E",
            "UTF8",
        ])
        .output()
        .expect("initdb");
    assert!(
        out.status.success(),
        "initdb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let opts = format!("-h 127.0.0.1 -p {port} -k {} -F", dir.to_string_lossy());
    let out = as_postgres(&bin.join("pg_ctl"))
        .args(["-D", &data.to_string_lossy(), "-o", &opts, "-l"])
        .arg(dir.join("log"))
        .args(["-w", "start"])
        .output()
        .expect("pg_ctl start");
    assert!(
        out.status.success(),
        "pg_ctl start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Cluster {
        url: format!("postgres://specc@127.0.0.1:{port}"),
        dir: Some((bin, data)),
    }
}
