//! The process-level layers of the sandbox, each one function over safe APIs: namespaces
//! with the user mapping, loopback up over netlink, rlimits, Landlock, capabilities and
//! `NO_NEW_PRIVS`. (Cgroups, mounts and seccomp have their own modules.)
//! design: runtime.sandbox

use std::path::PathBuf;

use nix::sched::CloneFlags;

use super::error::LayerError;
use super::spec::{Rlimits, Stage1};

/// The host's directories every sandboxed command may read (where they exist).
pub const SYSTEM_READABLE: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys",
];

/// Enters new user (where it can), network, pid, IPC, UTS and cgroup namespaces, as many as
/// the host allows; the calling process must be single-threaded. (Stage 2 makes its own
/// mount namespace, so its mounts never hide the host's /sys — and the cgroups — from
/// stage 1.)
pub(super) fn enter_namespaces(s: &mut Stage1) {
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    s.user_namespace = match nix::sched::unshare(CloneFlags::CLONE_NEWUSER) {
        Ok(()) => {
            // Map this user to root inside, so mounts and loopback are ours to set up.
            let mapped = std::fs::write("/proc/self/setgroups", "deny")
                .and_then(|()| std::fs::write("/proc/self/uid_map", format!("0 {uid} 1")))
                .and_then(|()| std::fs::write("/proc/self/gid_map", format!("0 {gid} 1")));
            match mapped {
                Ok(()) => true,
                Err(e) => {
                    s.notes.push(format!("user mapping: {e}"));
                    false
                }
            }
        }
        Err(e) => {
            s.notes.push(format!("no user namespace: {e}"));
            false
        }
    };
    let mut try_one = |flags: CloneFlags, what: &str| match nix::sched::unshare(flags) {
        Ok(()) => true,
        Err(e) => {
            s.notes.push(format!("no {what} namespace: {e}"));
            false
        }
    };
    s.network_namespace = try_one(CloneFlags::CLONE_NEWNET, "network");
    s.pid_namespace = try_one(CloneFlags::CLONE_NEWPID, "pid");
    s.ipc_namespace = try_one(
        CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS | CloneFlags::CLONE_NEWCGROUP,
        "IPC, UTS and cgroup",
    );
}

/// Sets `lo` up in this network namespace: one RTM_NEWLINK request over rtnetlink.
pub(super) fn loopback_up() -> Result<(), LayerError> {
    use nix::sys::socket::{
        AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto,
        socket,
    };
    use std::os::fd::AsRawFd;
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(|error| LayerError::Netlink {
        step: "socket",
        error,
    })?;
    // nlmsghdr (len, type RTM_NEWLINK, flags REQUEST|ACK, seq, pid) + ifinfomsg (family,
    // pad, type, index 1 = lo, flags IFF_UP, change IFF_UP).
    let mut msg = Vec::with_capacity(32);
    msg.extend_from_slice(&32u32.to_ne_bytes());
    msg.extend_from_slice(&(libc::RTM_NEWLINK).to_ne_bytes());
    msg.extend_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16).to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(&[libc::AF_UNSPEC as u8, 0]);
    msg.extend_from_slice(&0u16.to_ne_bytes());
    msg.extend_from_slice(&1i32.to_ne_bytes());
    msg.extend_from_slice(&(libc::IFF_UP as u32).to_ne_bytes());
    msg.extend_from_slice(&(libc::IFF_UP as u32).to_ne_bytes());
    sendto(
        fd.as_raw_fd(),
        &msg,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )
    .map_err(|error| LayerError::Netlink {
        step: "send",
        error,
    })?;
    let mut answer = [0u8; 256];
    let n = recv(fd.as_raw_fd(), &mut answer, MsgFlags::empty()).map_err(|error| {
        LayerError::Netlink {
            step: "receive",
            error,
        }
    })?;
    // An NLMSG_ERROR whose error field (after the 16-byte header) is 0 is the ack.
    let kind = answer.get(4..6).map(|b| u16::from_ne_bytes([b[0], b[1]]));
    let error = answer
        .get(16..20)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match (n >= 20, kind, error) {
        (true, Some(k), Some(0)) if k == libc::NLMSG_ERROR as u16 => Ok(()),
        (_, _, Some(e)) => Err(LayerError::NetlinkAnswer(Some(e))),
        _ => Err(LayerError::NetlinkAnswer(None)),
    }
}

/// Address space, file size, open files, processes (when `nproc` is given), no core dumps:
/// each set on its own, none above the hard limit the process already has. Returns whether
/// all were set, and what failed.
pub(super) fn set_rlimits(l: &Rlimits, nproc: Option<u64>) -> (bool, Vec<String>) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let mut limits = vec![
        (Resource::RLIMIT_AS, l.address_space),
        (Resource::RLIMIT_FSIZE, l.file_size),
        (Resource::RLIMIT_NOFILE, l.open_files),
        (Resource::RLIMIT_CORE, 0),
    ];
    if let Some(n) = nproc {
        limits.push((Resource::RLIMIT_NPROC, n));
    }
    let mut failed = Vec::new();
    for (r, want) in limits {
        let v = getrlimit(r).map_or(want, |(_, hard)| want.min(hard));
        if let Err(e) = setrlimit(r, v, v) {
            failed.push(format!("{r:?}: {e}"));
        }
    }
    (failed.is_empty(), failed)
}

/// The newest Landlock ABI this kernel accepts a ruleset for (0 without Landlock). ABIs
/// that add no filesystem right are not told apart from the one before.
pub(super) fn landlock_abi() -> u32 {
    use landlock::{ABI, Access, AccessFs, Compatible, Ruleset, RulesetAttr};
    for (abi, n) in [
        (ABI::V10, 10),
        (ABI::V9, 9),
        (ABI::V8, 8),
        (ABI::V7, 7),
        (ABI::V6, 6),
        (ABI::V5, 5),
        (ABI::V4, 4),
        (ABI::V3, 3),
        (ABI::V2, 2),
        (ABI::V1, 1),
    ] {
        let strict = Ruleset::default()
            .set_compatibility(landlock::CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create());
        if strict.is_ok() {
            return n;
        }
    }
    0
}

/// Restricts this process and its children: read (and execute) `readable` and the system
/// directories, read and write `writable` (but make no device nodes there), read and write
/// the harmless devices, nothing else. Returns whether the kernel enforced every rule.
pub(super) fn landlock(readable: &[PathBuf], writable: &[PathBuf]) -> Result<bool, LayerError> {
    use landlock::{
        ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        path_beneath_rules,
    };
    let abi = ABI::V5;
    let existing = |paths: &[&str]| -> Vec<PathBuf> {
        paths
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect()
    };
    let system = existing(SYSTEM_READABLE);
    let devices = existing(&[
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
    ]);
    let readable: Vec<&PathBuf> = readable.iter().filter(|p| p.exists()).collect();
    let writable: Vec<&PathBuf> = writable.iter().filter(|p| p.exists()).collect();
    let write = AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let e = LayerError::Landlock;
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(e)?
        .create()
        .map_err(e)?
        .add_rules(path_beneath_rules(&system, AccessFs::from_read(abi)))
        .map_err(e)?
        .add_rules(path_beneath_rules(&readable, AccessFs::from_read(abi)))
        .map_err(e)?
        .add_rules(path_beneath_rules(&writable, write))
        .map_err(e)?
        .add_rules(path_beneath_rules(
            &devices,
            AccessFs::ReadFile | AccessFs::WriteFile,
        ))
        .map_err(e)?
        .restrict_self()
        .map_err(e)?;
    Ok(status.ruleset == RulesetStatus::FullyEnforced)
}

/// Drops every capability: bounding, ambient, inheritable, effective and permitted sets, so
/// the command is an ordinary process even as root of its user namespace.
pub(super) fn drop_capabilities() -> Result<(), LayerError> {
    use caps::CapSet;
    for set in [
        CapSet::Bounding,
        CapSet::Ambient,
        CapSet::Inheritable,
        CapSet::Effective,
        CapSet::Permitted,
    ] {
        caps::clear(None, set).map_err(|error| LayerError::Capabilities { set, error })?;
    }
    Ok(())
}

/// `NoNewPrivs` as the process reads it in /proc/self/status.
pub(super) fn no_new_privs() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.replace(' ', "") == "NoNewPrivs:\t1"))
}

/// How many processes `uid` has now.
pub(super) fn processes_of(uid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mine = |status: String| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next()?.parse::<u32>().ok())
            == Some(uid)
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| std::fs::read_to_string(e.path().join("status")).is_ok_and(mine))
        .count() as u64
}
