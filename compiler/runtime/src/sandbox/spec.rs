//! What the helper is told: one JSON argument, built by the parent runner, read by both
//! stages. It holds paths and limits, never a secret (the environment carries what the
//! command may see, already scrubbed).
//! design: runtime.sandbox

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Limits every sandboxed command gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimits {
    /// Address space, bytes.
    pub address_space: u64,
    /// Largest file it may write, bytes.
    pub file_size: u64,
    pub open_files: u64,
    /// Processes and threads, through the pids cgroup where the host has one.
    pub pids: u64,
}

impl Default for Rlimits {
    fn default() -> Rlimits {
        Rlimits {
            address_space: 16 << 30,
            file_size: 2 << 30,
            open_files: 4096,
            pids: 512,
        }
    }
}

/// One sandboxed command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// Run by `sh -c` (unused by a probe).
    pub script: String,
    /// The writable root: the command's working directory.
    pub dir: PathBuf,
    /// Other writable directories: the private home and tmp.
    pub writable: Vec<PathBuf>,
    /// Readable directories besides the system's: toolchains, extra read-only paths.
    pub readable: Vec<PathBuf>,
    pub limits: Rlimits,
    /// Report what is enforced instead of running anything.
    #[serde(default)]
    pub probe: bool,
    /// Filled in by stage 1 for stage 2: what it managed.
    #[serde(default)]
    pub stage1: Option<Stage1>,
}

/// What stage 1 set up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage1 {
    pub user_namespace: bool,
    pub network_namespace: bool,
    pub loopback_up: bool,
    pub pid_namespace: bool,
    pub mount_namespace: bool,
    /// The pids cgroup it made, if any.
    pub pids_cgroup: Option<String>,
    /// Without a cgroup, and not root (the kernel exempts root from it): `RLIMIT_NPROC`,
    /// the user's processes now plus the sandbox's allowance.
    #[serde(default)]
    pub nproc_limit: Option<u64>,
    /// Why something could not be set up.
    pub notes: Vec<String>,
}

impl Stage1 {
    pub fn has_pids_limit(&self) -> bool {
        self.pids_cgroup.is_some() || self.nproc_limit.is_some()
    }
}

/// What a probe reports: stage 1's part, and stage 2's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    pub stage1: Stage1,
    pub proc_mounted: bool,
    /// The Landlock ABI the kernel speaks (0: none), and whether the rules were fully
    /// enforced.
    pub landlock_abi: u32,
    pub landlock_enforced: bool,
    pub no_new_privs: bool,
    pub seccomp: bool,
    pub rlimits: bool,
    pub notes: Vec<String>,
}

impl Probe {
    /// Every layer of the design's sandbox is in force.
    pub fn full(&self) -> bool {
        let s = &self.stage1;
        s.network_namespace
            && s.loopback_up
            && s.pid_namespace
            && s.mount_namespace
            && s.has_pids_limit()
            && self.proc_mounted
            && self.landlock_enforced
            && self.no_new_privs
            && self.seccomp
            && self.rlimits
    }

    /// What is missing, in words.
    pub fn missing(&self) -> Vec<&'static str> {
        let s = &self.stage1;
        let checks = [
            (s.network_namespace, "a network namespace"),
            (s.loopback_up, "loopback in the network namespace"),
            (s.pid_namespace, "a pid namespace"),
            (s.mount_namespace, "a mount namespace"),
            (
                s.has_pids_limit(),
                "a pids limit (a cgroup, or RLIMIT_NPROC when not root)",
            ),
            (self.proc_mounted, "a private /proc"),
            (self.landlock_enforced, "Landlock"),
            (self.no_new_privs, "no_new_privs"),
            (self.seccomp, "seccomp"),
            (self.rlimits, "rlimits"),
        ];
        checks
            .iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, what)| *what)
            .collect()
    }
}
