//! Stage 2's mount namespace: mounts made private, a /proc of the sandbox's own processes,
//! a /sys that shows only its network interfaces, an empty /run (the host's sockets —
//! D-Bus, Docker, systemd — out of reach), and `/` read-only with only the writable
//! directories bound read-write (Landlock does not govern chmod and chown).
//! design: runtime.sandbox

use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::CloneFlags;

use super::error::{LayerError, Mount};

fn mount_error(mount: Mount) -> impl FnOnce(nix::errno::Errno) -> LayerError {
    move |error| LayerError::Mount { mount, error }
}

/// A mount namespace of its own.
pub(super) fn enter_namespace() -> Result<(), LayerError> {
    nix::sched::unshare(CloneFlags::CLONE_NEWNS).map_err(mount_error(Mount::Namespace))
}

/// Mounts private, then a /proc for the new pid namespace and (with its own network
/// namespace) a read-only /sys.
pub(super) fn private_proc_and_sys(network: bool) -> Result<(), LayerError> {
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(mount_error(Mount::Private))?;
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some("proc"), "/proc", Some("proc"), flags, None::<&str>)
        .map_err(mount_error(Mount::Proc))?;
    if network {
        // Best effort: without it /sys/class/net shows the host's interfaces' names.
        let _ = mount(
            Some("sysfs"),
            "/sys",
            Some("sysfs"),
            flags | MsFlags::MS_RDONLY,
            None::<&str>,
        );
    }
    Ok(())
}

/// An empty tmpfs over /run, unless a writable directory lives there.
pub(super) fn empty_run(writable: &[PathBuf]) -> Result<(), LayerError> {
    let run = Path::new("/run");
    if !run.is_dir() || writable.iter().any(|w| w.starts_with(run)) {
        return Ok(());
    }
    mount(
        Some("tmpfs"),
        run,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        Some("size=1m,mode=755"),
    )
    .map_err(mount_error(Mount::EmptyRun))
}

/// Binds each writable directory onto itself (a mount of its own, read-write), then
/// remounts every other mount read-only, keeping the flags it has (a namespace may not
/// clear locked ones). Pseudo filesystems under /proc and /sys that refuse are left as they
/// are; any other refusal is an error.
pub(super) fn read_only_root(writable: &[PathBuf]) -> Result<(), LayerError> {
    for w in writable {
        mount(
            Some(w.as_path()),
            w.as_path(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(mount_error(Mount::Bind(w.clone())))?;
    }
    let info = std::fs::read_to_string("/proc/self/mountinfo").map_err(LayerError::MountInfo)?;
    for point in info.lines().filter_map(mount_point) {
        let p = Path::new(&point);
        if writable
            .iter()
            .any(|w| w.starts_with(p) && p.starts_with(w))
        {
            continue; // the writable bind itself
        }
        if let Err(e) = remount_read_only(p) {
            if p.starts_with("/proc") || p.starts_with("/sys") {
                continue;
            }
            return Err(LayerError::Mount {
                mount: Mount::ReadOnly(p.to_path_buf()),
                error: e,
            });
        }
    }
    Ok(())
}

/// Field 5 of a mountinfo line, with its octal escapes undone.
fn mount_point(line: &str) -> Option<String> {
    let raw = line.split(' ').nth(4)?;
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            out.push(u8::from_str_radix(&code, 8).map_or('?', char::from));
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn remount_read_only(p: &Path) -> Result<(), nix::Error> {
    use nix::sys::statvfs::{FsFlags, statvfs};
    let have = statvfs(p)?.flags();
    let mut flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY;
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if have.contains(fs) {
            flags |= ms;
        }
    }
    mount(None::<&str>, p, None::<&str>, flags, None::<&str>)
}
