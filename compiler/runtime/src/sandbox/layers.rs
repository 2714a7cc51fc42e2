//! The layers of the sandbox, each one function over safe APIs (nix, landlock,
//! seccompiler): the pids cgroup, namespaces with the user mapping, loopback up over
//! netlink, a private /proc and /sys, rlimits, Landlock and seccomp.
//! design: runtime.sandbox

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nix::sched::CloneFlags;

use super::spec::{Rlimits, Stage1};

/// Makes a new pids cgroup limited to `max` (cgroup v1's `pids` hierarchy, or a v2
/// hierarchy with the pids controller), which stage 2 joins ([`join_cgroup`]) and stage 1
/// removes when the command is over ([`remove_cgroup`]). Stage 1 stays out of it, so
/// nothing is left in it to keep it from being removed.
pub fn make_pids_cgroup(max: u64) -> Result<PathBuf, String> {
    let pid = std::process::id();
    let mut last = String::from("no pids cgroup hierarchy");
    for root in ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"].map(PathBuf::from) {
        if !root.join("cgroup.procs").exists() {
            continue;
        }
        sweep_stale(&root);
        let dir = root.join(format!("specc-{pid}"));
        let made = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("pids.max"), max.to_string()));
        match made {
            Ok(()) => return Ok(dir),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                last = format!("{}: {e}", dir.display());
            }
        }
    }
    Err(last)
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
pub fn join_cgroup(dir: &Path) -> Result<(), String> {
    std::fs::write(dir.join("cgroup.procs"), "0").map_err(|e| format!("{}: {e}", dir.display()))
}

/// Removes a cgroup once the processes in it are gone (a killed namespace takes a moment).
pub fn remove_cgroup(dir: &Path) {
    for _ in 0..200 {
        if std::fs::remove_dir(dir).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// How many processes `uid` has now (RLIMIT_NPROC counts them all).
pub fn processes_of(uid: u32) -> u64 {
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

/// Enters new user (where it can), network and pid namespaces, as many as the host allows;
/// the calling process must be single-threaded. (Stage 2 makes its own mount namespace, so
/// its mounts never hide the host's /sys — and the cgroup — from stage 1.)
pub fn enter_namespaces(s: &mut Stage1) {
    let uid = nix::unistd::getuid().as_raw();
    let gid = nix::unistd::getgid().as_raw();
    s.user_namespace = nix::sched::unshare(CloneFlags::CLONE_NEWUSER).is_ok();
    if s.user_namespace {
        // Map this user to root inside, so mounts and loopback are ours to set up.
        let mapped = std::fs::write("/proc/self/setgroups", "deny")
            .and_then(|()| std::fs::write("/proc/self/uid_map", format!("0 {uid} 1")))
            .and_then(|()| std::fs::write("/proc/self/gid_map", format!("0 {gid} 1")));
        if let Err(e) = mapped {
            s.notes.push(format!("user mapping: {e}"));
        }
    } else {
        s.notes
            .push("no user namespace (continuing with the caller's privileges)".to_owned());
    }
    let mut try_one = |flag: CloneFlags, what: &str| match nix::sched::unshare(flag) {
        Ok(()) => true,
        Err(e) => {
            s.notes.push(format!("no {what} namespace: {e}"));
            false
        }
    };
    s.network_namespace = try_one(CloneFlags::CLONE_NEWNET, "network");
    s.pid_namespace = try_one(CloneFlags::CLONE_NEWPID, "pid");
}

/// Sets `lo` up in this network namespace: one RTM_NEWLINK request over rtnetlink.
pub fn loopback_up() -> Result<(), String> {
    use nix::sys::socket::{
        AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, recv, sendto,
        socket,
    };
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkRoute,
    )
    .map_err(|e| format!("netlink socket: {e}"))?;
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
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &msg,
        &NetlinkAddr::new(0, 0),
        MsgFlags::empty(),
    )
    .map_err(|e| format!("netlink send: {e}"))?;
    let mut answer = [0u8; 256];
    let n = recv(
        std::os::fd::AsRawFd::as_raw_fd(&fd),
        &mut answer,
        MsgFlags::empty(),
    )
    .map_err(|e| format!("netlink receive: {e}"))?;
    // An NLMSG_ERROR whose error field (after the 16-byte header) is 0 is the ack.
    let kind = answer.get(4..6).map(|b| u16::from_ne_bytes([b[0], b[1]]));
    let error = answer
        .get(16..20)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    match (n >= 20, kind, error) {
        (true, Some(k), Some(0)) if k == libc::NLMSG_ERROR as u16 => Ok(()),
        (_, _, Some(e)) => Err(format!("netlink answered error {e}")),
        _ => Err("netlink: no answer".to_owned()),
    }
}

/// A mount namespace of its own, for [`private_proc_and_sys`].
pub fn enter_mount_namespace() -> Result<(), String> {
    nix::sched::unshare(CloneFlags::CLONE_NEWNS).map_err(|e| format!("no mount namespace: {e}"))
}

/// In the new mount namespace: mounts private, a /proc that shows only the sandbox's
/// processes, and (with its own network namespace) a /sys that shows only its interfaces.
pub fn private_proc_and_sys(network: bool) -> Result<(), String> {
    use nix::mount::{MsFlags, mount};
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| format!("making mounts private: {e}"))?;
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some("proc"), "/proc", Some("proc"), flags, None::<&str>)
        .map_err(|e| format!("mounting /proc: {e}"))?;
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

/// Address space, file size, open files, processes (when `nproc` is given); no core dumps.
pub fn set_rlimits(l: &Rlimits, nproc: Option<u64>) -> Result<(), String> {
    use nix::sys::resource::{Resource, setrlimit};
    let mut limits = vec![
        (Resource::RLIMIT_AS, l.address_space),
        (Resource::RLIMIT_FSIZE, l.file_size),
        (Resource::RLIMIT_NOFILE, l.open_files),
        (Resource::RLIMIT_CORE, 0),
    ];
    if let Some(n) = nproc {
        limits.push((Resource::RLIMIT_NPROC, n));
    }
    for (r, v) in limits {
        setrlimit(r, v, v).map_err(|e| format!("{r:?}: {e}"))?;
    }
    Ok(())
}

/// The Landlock ABI the kernel speaks (0 without Landlock).
pub fn landlock_abi() -> u32 {
    use landlock::{ABI, Access, AccessFs, Compatible, Ruleset, RulesetAttr};
    // The newest ABI this crate knows, downgraded by the kernel: ask for each in turn.
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
/// directories, read and write `writable`, write /dev/null, nothing else. Returns whether
/// the kernel enforced every rule.
pub fn landlock(readable: &[PathBuf], writable: &[PathBuf]) -> Result<bool, String> {
    use landlock::{
        ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        path_beneath_rules,
    };
    let abi = ABI::V5;
    let system = [
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/etc",
        "/opt",
        "/proc",
        "/sys",
        "/dev",
        "/run/systemd/resolve",
    ];
    let system: Vec<&Path> = system
        .iter()
        .map(Path::new)
        .filter(|p| p.exists())
        .collect();
    let readable: Vec<&PathBuf> = readable.iter().filter(|p| p.exists()).collect();
    let writable: Vec<&PathBuf> = writable.iter().filter(|p| p.exists()).collect();
    let e = |e: landlock::RulesetError| format!("Landlock: {e}");
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(e)?
        .create()
        .map_err(e)?
        .add_rules(path_beneath_rules(&system, AccessFs::from_read(abi)))
        .map_err(e)?
        .add_rules(path_beneath_rules(&readable, AccessFs::from_read(abi)))
        .map_err(e)?
        .add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi)))
        .map_err(e)?
        .add_rules(path_beneath_rules(
            ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"]
                .iter()
                .filter(|p| Path::new(p).exists()),
            AccessFs::from_read(abi) | AccessFs::WriteFile,
        ))
        .map_err(e)?
        .restrict_self()
        .map_err(e)?;
    Ok(status.ruleset == RulesetStatus::FullyEnforced)
}

/// Denies, with EPERM: ptrace, mount and friends, bpf, keyctl, module and kexec calls,
/// namespace calls (unshare, setns), and, when `inet` is false, opening IPv4 and IPv6
/// sockets (where no network namespace could be made).
pub fn seccomp(inet: bool) -> Result<(), String> {
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule,
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_bpf,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_perf_event_open,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
    ] {
        rules.insert(nr, Vec::new());
    }
    if !inet {
        let family = |f: i32| {
            SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, f as u64)
                .and_then(|c| SeccompRule::new(vec![c]))
        };
        let both = [family(libc::AF_INET), family(libc::AF_INET6)]
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("seccomp: {e}"))?;
        rules.insert(libc::SYS_socket, both);
    }
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| format!("seccomp: {e:?}"))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| format!("seccomp: {e}"))?;
    let program: BpfProgram = filter.try_into().map_err(|e| format!("seccomp: {e}"))?;
    seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))
}

/// `NoNewPrivs` as the process reads it in /proc/self/status.
pub fn no_new_privs() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.replace(' ', "") == "NoNewPrivs:\t1"))
}
