//! What the helper is told: a JSON file in the command's private home, written by the
//! parent runner and read by both stages (stage 2 also gets stage 1's report). It holds
//! paths and limits, never a secret: the environment carries what the command may see,
//! already scrubbed.
//! design: runtime.sandbox

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Limits every sandboxed command gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimits {
    /// Address space of one process, bytes.
    pub address_space: u64,
    /// Memory of the whole sandbox, bytes (a memory cgroup, where the host has one).
    #[serde(default = "default_memory")]
    pub memory: u64,
    /// Largest file it may write, bytes.
    pub file_size: u64,
    pub open_files: u64,
    /// Processes and threads, through the pids cgroup (or `RLIMIT_NPROC`).
    pub pids: u64,
}

fn default_memory() -> u64 {
    8 << 30
}

impl Default for Rlimits {
    fn default() -> Rlimits {
        Rlimits {
            address_space: 16 << 30,
            memory: default_memory(),
            file_size: 2 << 30,
            open_files: 4096,
            pids: 512,
        }
    }
}

/// One sandboxed command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Spec {
    /// Run by `sh -c` (unused by a probe).
    pub script: String,
    /// The writable root: the command's working directory (canonical).
    pub dir: PathBuf,
    /// Other writable directories: the private home and tmp.
    pub writable: Vec<PathBuf>,
    /// Readable directories besides the system's: toolchains, extra read-only paths.
    pub readable: Vec<PathBuf>,
    pub limits: Rlimits,
    /// Report what is enforced instead of running anything.
    #[serde(default)]
    pub probe: bool,
    /// Refuse to run unless every layer holds (the runner's probe found them all).
    #[serde(default)]
    pub require_full: bool,
}

/// What stage 1 set up.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage1 {
    pub user_namespace: bool,
    pub network_namespace: bool,
    pub loopback_up: bool,
    pub pid_namespace: bool,
    /// IPC, UTS and cgroup namespaces (host shared memory and message queues unreachable).
    #[serde(default)]
    pub ipc_namespace: bool,
    pub mount_namespace: bool,
    /// The cgroups it made (pids, memory), if any.
    pub pids_cgroup: Option<String>,
    #[serde(default)]
    pub memory_cgroup: Option<String>,
    /// Without a pids cgroup: `RLIMIT_NPROC` for the sandbox's user, where the kernel
    /// counts it (not for root).
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
    /// `/` remounted read-only, only the checkout and private home writable (so no chmod
    /// or chown of the host's files, which Landlock does not govern).
    #[serde(default)]
    pub read_only_root: bool,
    /// The Landlock ABI the kernel speaks (0: none), and whether the rules were fully
    /// enforced.
    pub landlock_abi: u32,
    pub landlock_enforced: bool,
    pub no_new_privs: bool,
    /// Every capability dropped, the bounding set included.
    #[serde(default)]
    pub capabilities_dropped: bool,
    pub seccomp: bool,
    pub rlimits: bool,
    pub notes: Vec<String>,
}

impl Probe {
    /// Every layer of the design's sandbox is in force.
    pub fn full(&self) -> bool {
        self.missing().is_empty()
    }

    /// What is missing, in words.
    pub fn missing(&self) -> Vec<&'static str> {
        let s = &self.stage1;
        let checks = [
            (s.user_namespace, "a user namespace"),
            (s.network_namespace, "a network namespace"),
            (s.loopback_up, "loopback in the network namespace"),
            (s.pid_namespace, "a pid namespace"),
            (s.ipc_namespace, "IPC and UTS namespaces"),
            (s.mount_namespace, "a mount namespace"),
            (
                s.has_pids_limit(),
                "a pids limit (a cgroup, or RLIMIT_NPROC when not root)",
            ),
            (self.proc_mounted, "a private /proc"),
            (self.read_only_root, "a read-only root"),
            (self.landlock_enforced, "Landlock"),
            (self.no_new_privs, "no_new_privs"),
            (self.capabilities_dropped, "dropped capabilities"),
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
