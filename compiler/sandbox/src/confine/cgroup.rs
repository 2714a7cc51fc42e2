//! Cgroups for one sandbox: a pids cgroup (the fork-bomb guard) and a memory cgroup (the
//! whole sandbox's memory), made beneath the caller's own cgroups so the limits an
//! administrator set above still hold. cgroup v1 hierarchies by controller, or the v2
//! hierarchy where it offers the controller.
//! design: runtime.sandbox

use std::path::{Path, PathBuf};

use super::error::LayerError;

/// A cgroup made for this sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Made {
    pub dir: PathBuf,
}

/// Makes a cgroup under `controller` (`pids`, `memory`) beneath the caller's own, with
/// `settings` (file, value) written. Stale ones of dead helpers are swept first.
pub(super) fn make(controller: &str, settings: &[(&str, String)]) -> Result<Made, LayerError> {
    let pid = std::process::id();
    let mut last = LayerError::NoCgroupHierarchy {
        controller: controller.to_owned(),
    };
    for root in roots(controller) {
        if !root.join("cgroup.procs").exists() {
            continue;
        }
        sweep_stale(&root);
        let dir = root.join(format!("specc-{pid}"));
        let made = std::fs::create_dir_all(&dir).and_then(|()| {
            settings
                .iter()
                .try_for_each(|(file, value)| std::fs::write(dir.join(file), value))
        });
        match made {
            Ok(()) => return Ok(Made { dir }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                last = LayerError::Cgroup { dir, error: e };
            }
        }
    }
    Err(last)
}

/// Where a `controller` cgroup of this process lives: its v1 hierarchy's path for this
/// process, then the v2 one.
fn roots(controller: &str) -> Vec<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut out = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, names, path) = (parts.next(), parts.next(), parts.next());
        let (Some(names), Some(path)) = (names, path) else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        if names.split(',').any(|n| n == controller) {
            out.push(Path::new("/sys/fs/cgroup").join(controller).join(rel));
        } else if names.is_empty() {
            out.push(Path::new("/sys/fs/cgroup").join(rel));
        }
    }
    out
}

/// Removes the empty cgroups of helpers that are gone (one killed at a timeout cannot
/// remove its own).
fn sweep_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("specc-")
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path()); // fails, harmlessly, while it is in use
        }
    }
}

/// Moves the calling process (and so everything it starts) into `dir`.
pub(super) fn join(dir: &Path) -> Result<(), LayerError> {
    std::fs::write(dir.join("cgroup.procs"), "0").map_err(|error| LayerError::Cgroup {
        dir: dir.to_path_buf(),
        error,
    })
}

/// Removes a cgroup once the processes in it are gone (a killed namespace takes a moment).
pub(super) fn remove(dir: &Path) {
    for _ in 0..200 {
        if std::fs::remove_dir(dir).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
