//! Why a layer of the sandbox could not be put in place. The helper reports it as a note of
//! its probe, or, when the build requires every layer, as the reason the command did not
//! run (the command's `could not start`); it never leaves the helper as a Rust value, so it
//! carries no diagnostic code of its own.
//! design: runtime.sandbox

use std::path::PathBuf;

/// A mount the helper makes.
#[derive(Debug)]
pub(crate) enum Mount {
    Namespace,
    Private,
    Proc,
    EmptyRun,
    Bind(PathBuf),
    ReadOnly(PathBuf),
}

/// Why a layer failed.
#[derive(Debug)]
pub(crate) enum LayerError {
    /// No hierarchy of the cgroup controller for this process.
    NoCgroupHierarchy {
        controller: String,
    },
    /// A cgroup directory could not be made, set or joined.
    Cgroup {
        dir: PathBuf,
        error: std::io::Error,
    },
    /// Setting `lo` up over rtnetlink: the step that failed, and the errno.
    Netlink {
        step: &'static str,
        error: nix::errno::Errno,
    },
    /// rtnetlink answered an error (its number), or nothing.
    NetlinkAnswer(Option<i32>),
    Landlock(landlock::RulesetError),
    Capabilities {
        set: caps::CapSet,
        error: caps::errors::CapsError,
    },
    Mount {
        mount: Mount,
        error: nix::errno::Errno,
    },
    /// `/proc/self/mountinfo` could not be read.
    MountInfo(std::io::Error),
    /// A seccomp filter could not be built or installed (seccompiler's message).
    Seccomp(String),
}

impl std::fmt::Display for LayerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayerError::NoCgroupHierarchy { controller } => {
                write!(f, "no {controller} cgroup hierarchy")
            }
            LayerError::Cgroup { dir, error } => write!(f, "{}: {error}", dir.display()),
            LayerError::Netlink { step, error } => write!(f, "netlink {step}: {error}"),
            LayerError::NetlinkAnswer(Some(e)) => write!(f, "netlink answered error {e}"),
            LayerError::NetlinkAnswer(None) => write!(f, "netlink: no answer"),
            LayerError::Landlock(e) => write!(f, "Landlock: {e}"),
            LayerError::Capabilities { set, error } => {
                write!(f, "capabilities ({set:?}): {error}")
            }
            LayerError::Mount { mount, error } => match mount {
                Mount::Namespace => write!(f, "no mount namespace: {error}"),
                Mount::Private => write!(f, "making mounts private: {error}"),
                Mount::Proc => write!(f, "mounting /proc: {error}"),
                Mount::EmptyRun => write!(f, "an empty /run: {error}"),
                Mount::Bind(p) => write!(f, "binding {}: {error}", p.display()),
                Mount::ReadOnly(p) => write!(f, "read-only {}: {error}", p.display()),
            },
            LayerError::MountInfo(e) => write!(f, "/proc/self/mountinfo: {e}"),
            LayerError::Seccomp(e) => write!(f, "seccomp: {e}"),
        }
    }
}

impl std::error::Error for LayerError {}
