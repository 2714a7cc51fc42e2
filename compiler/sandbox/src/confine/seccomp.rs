//! The seccomp filters: calls a build never needs answered with EPERM — ptrace and
//! process_vm_*, mounts (old and new API), pivot_root and chroot, bpf, the key calls,
//! namespace calls (unshare, setns, and clone with a CLONE_NEW* flag), modules and kexec,
//! reboot, swap, perf events, io_uring, file handles, userfaultfd, port I/O, clock setting
//! — and sockets of the UNIX family (a path socket is not governed by Landlock, and the
//! host's live in /tmp and /run), and, with no network namespace, IPv4 and IPv6 ones. A
//! second filter answers clone3 with ENOSYS, so the C library falls back to clone, whose
//! flags the first filter can see.
//! design: runtime.sandbox

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::error::LayerError;

const DENIED: &[i64] = &[
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
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_perf_event_open,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_mount_setattr,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_userfaultfd,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_settimeofday,
    libc::SYS_adjtimex,
];

const NEW_NAMESPACE: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

fn err(e: impl std::fmt::Display) -> LayerError {
    LayerError::Seccomp(e.to_string())
}

/// A rule: argument `arg` (32 bits) equals `value`.
fn arg_eq(arg: u8, value: u64) -> Result<SeccompRule, LayerError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(err)
}

/// Installs both filters. `inet`: IPv4 and IPv6 sockets stay allowed (a network namespace
/// of its own holds them to its loopback).
pub(super) fn install(inet: bool) -> Result<(), LayerError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|nr| (*nr, Vec::new())).collect();
    let mut families = vec![arg_eq(0, libc::AF_UNIX as u64)?];
    if !inet {
        families.push(arg_eq(0, libc::AF_INET as u64)?);
        families.push(arg_eq(0, libc::AF_INET6 as u64)?);
    }
    rules.insert(libc::SYS_socket, families);
    let flags = NEW_NAMESPACE
        .iter()
        .map(|f| {
            SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(*f), *f)
                .and_then(|c| SeccompRule::new(vec![c]))
                .map_err(err)
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, flags);
    apply(rules, libc::EPERM)?;
    apply(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
    )
}

fn apply(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<(), LayerError> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| err(format!("{e:?}")))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(err)?;
    let program: BpfProgram = filter.try_into().map_err(err)?;
    seccompiler::apply_filter(&program).map_err(err)
}
