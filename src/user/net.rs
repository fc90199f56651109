//! Sockets, epoll and eventfd. The guest's sockets, epoll instances and eventfds are host
//! ones, plain host fds in the guest's fd table, so `read`, `write`, `poll`, `fcntl` and
//! `close` on them need nothing from here.
//!
//! What crosses unchanged: `sockaddr`s (one layout on both sides; at most 128 bytes), flags
//! and plain-data socket options (ints, `SO_LINGER`, `ucred`, strings, ...). What is
//! translated: the ILP32 `msghdr`/`iovec`/`cmsghdr`/`mmsghdr`, SCM_RIGHTS (guest fds become
//! host fds on send, received host fds become new guest fds), the riscv32 `epoll_event`
//! (16 bytes, not packed) and the 32-bit `timeval` of the old SO_RCVTIMEO/SO_SNDTIMEO.
//! What is refused: domains other than AF_UNIX, AF_INET and AF_INET6 (EAFNOSUPPORT); socket
//! options whose value holds pointers, fds or the 32-bit time layout (ENOPROTOOPT); received
//! control messages that are not plain data are dropped with MSG_CTRUNC.
//!
//! Every host fd is created close-on-exec on the host (the guest's own close-on-exec flag
//! lives in the fd table), so a host program the guest execs inherits only what the table
//! places for it.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::mem::perm;
use super::syscall::{errno, host_result, nr, read_timespec, write_timespec, SysError, SysResult};
use super::Process;

// Guest flag values (asm-generic; x86-64 uses the same ones, so they also pass to the host).
const SOCK_NONBLOCK: u32 = 0o4000;
const SOCK_CLOEXEC: u32 = 0o2_000_000;
const SOCK_TYPE_MASK: u32 = 0xf;
const EPOLL_CLOEXEC: u32 = SOCK_CLOEXEC;
const EFD_SEMAPHORE: u32 = 1;
const EFD_NONBLOCK: u32 = SOCK_NONBLOCK;
const EFD_CLOEXEC: u32 = SOCK_CLOEXEC;
const MSG_NOSIGNAL: u32 = 0x4000;
const MSG_CTRUNC: u32 = 0x8;
const MSG_CMSG_CLOEXEC: u32 = 0x4000_0000;
const EPOLL_CTL_DEL: u32 = 2;

// Guest (and host) socket levels and options.
const SOL_SOCKET: i32 = 1;
const SCM_RIGHTS: i32 = 1;
const SCM_CREDENTIALS: i32 = 2;
const SCM_SECURITY: i32 = 3;
const SCM_PIDFD: i32 = 4;
const SO_RCVTIMEO_OLD: i32 = 20;
const SO_SNDTIMEO_OLD: i32 = 21;
const SO_RCVTIMEO_NEW: i32 = 66;
const SO_SNDTIMEO_NEW: i32 = 67;
const IPPROTO_IP: i32 = 0;
const IPPROTO_TCP: i32 = 6;
const IPPROTO_UDP: i32 = 17;
const IPPROTO_IPV6: i32 = 41;
const IPPROTO_ICMPV6: i32 = 58;
const IPPROTO_UDPLITE: i32 = 136;
const IPPROTO_RAW: i32 = 255;

/// Largest socket address (`struct sockaddr_storage`).
const SOCKADDR_MAX: u32 = 128;
/// Most iovecs in one message (UIO_MAXIOV).
const UIO_MAXIOV: u32 = 1024;
/// Largest byte count one call moves (the kernel's MAX_RW_COUNT).
const MAX_RW_COUNT: u32 = 0x7fff_f000;
/// Most fds in one SCM_RIGHTS message (SCM_MAX_FD).
const SCM_MAX_FD: usize = 253;
/// Most control-message bytes taken from or given to the guest per message (like the
/// kernel's optmem limit; SCM_MAX_FD fds need about 1 KiB).
const CONTROL_MAX: u32 = 64 << 10;
/// Largest socket option value passed through.
const OPTVAL_MAX: u32 = 64 << 10;
/// Guest `struct msghdr` and `struct mmsghdr` sizes (ILP32).
const MSGHDR_SIZE: u32 = 28;
const MMSGHDR_SIZE: u32 = 32;
/// Guest `struct cmsghdr` (u32 len, i32 level, i32 type); data aligned to 4 bytes.
const GUEST_CMSG_HDR: usize = 12;
const GUEST_CMSG_ALIGN: usize = 4;
/// Host `struct cmsghdr` (size_t len, int level, int type); data aligned to size_t.
const HOST_CMSG_HDR: usize = std::mem::size_of::<libc::cmsghdr>();
const HOST_CMSG_ALIGN: usize = std::mem::size_of::<usize>();
/// Guest `struct epoll_event`: u32 events, 4 bytes padding, u64 data.
const EPOLL_EVENT_SIZE: u32 = 16;
/// Largest maxevents (the kernel's EP_MAX_EVENTS for the guest's event size).
const EP_MAX_EVENTS: u32 = i32::MAX as u32 / EPOLL_EVENT_SIZE;
/// Most events taken from the host per wait: more stay queued for the next one (as they
/// would if the guest had passed a smaller maxevents), and the host buffer stays small.
const EPOLL_BATCH: u32 = 1024;

/// Whether `number` is one of this module's syscalls.
pub(super) fn is_net(number: u32) -> bool {
    use nr::*;
    matches!(
        number,
        EVENTFD2
            | EPOLL_CREATE1
            | EPOLL_CTL
            | EPOLL_PWAIT
            | SOCKET
            | SOCKETPAIR
            | BIND
            | LISTEN
            | ACCEPT
            | CONNECT
            | GETSOCKNAME
            | GETPEERNAME
            | SENDTO
            | RECVFROM
            | SETSOCKOPT
            | GETSOCKOPT
            | SHUTDOWN
            | SENDMSG
            | RECVMSG
            | ACCEPT4
            | SENDMMSG
            | RECVMMSG_TIME64
            | EPOLL_PWAIT2
    )
}

/// For the thread scheduler: the poll events (`libc::POLLIN`/`POLLOUT`) whose absence means
/// syscall `number` with arguments `a` on fd `a[0]` would block (accept/accept4/recvfrom/
/// recvmsg/recvmmsg: POLLIN; sendto/sendmsg/sendmmsg: POLLOUT), or None for calls this does
/// not apply to and for those with MSG_DONTWAIT in their flags. As for a read, this matters
/// only for a descriptor in blocking mode.
pub(super) fn blocking_events(number: u32, a: [u32; 6]) -> Option<i16> {
    use nr::*;
    const MSG_DONTWAIT: u32 = 0x40;
    let (events, flags) = match number {
        ACCEPT | ACCEPT4 => return Some(libc::POLLIN),
        RECVFROM | RECVMMSG_TIME64 => (libc::POLLIN, a[3]),
        RECVMSG => (libc::POLLIN, a[2]),
        SENDTO | SENDMMSG => (libc::POLLOUT, a[3]),
        SENDMSG => (libc::POLLOUT, a[2]),
        _ => return None,
    };
    (flags & MSG_DONTWAIT == 0).then_some(events)
}

/// The host `mmsghdr`s of `msgs` (for sendmmsg/recvmmsg), pointing into their buffers.
fn raw_mmsgs(msgs: &mut [HostMsg]) -> Vec<libc::mmsghdr> {
    msgs.iter_mut()
        .map(|m| libc::mmsghdr {
            msg_hdr: m.raw(),
            msg_len: 0,
        })
        .collect()
}

fn le_u32(b: &[u8], off: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(w)
}

/// The guest's `struct msghdr` (ILP32: seven 32-bit fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct GuestMsghdr {
    name: u32,
    namelen: u32,
    iov: u32,
    iovlen: u32,
    control: u32,
    controllen: u32,
    flags: u32,
}

/// Offsets of the fields the kernel writes back after a receive.
const MSGHDR_NAMELEN: u32 = 4;
const MSGHDR_CONTROLLEN: u32 = 20;
const MSGHDR_FLAGS: u32 = 24;
/// Offset of `msg_len` in the guest `struct mmsghdr`.
const MMSGHDR_LEN: u32 = 28;

impl GuestMsghdr {
    fn decode(b: &[u8; MSGHDR_SIZE as usize]) -> GuestMsghdr {
        GuestMsghdr {
            name: le_u32(b, 0),
            namelen: le_u32(b, 4),
            iov: le_u32(b, 8),
            iovlen: le_u32(b, 12),
            control: le_u32(b, 16),
            controllen: le_u32(b, 20),
            flags: le_u32(b, 24),
        }
    }

    #[cfg(test)]
    fn encode(&self) -> [u8; MSGHDR_SIZE as usize] {
        let mut b = [0u8; MSGHDR_SIZE as usize];
        let fields = [
            self.name,
            self.namelen,
            self.iov,
            self.iovlen,
            self.control,
            self.controllen,
            self.flags,
        ];
        for (i, f) in fields.iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&f.to_le_bytes());
        }
        b
    }
}

/// One control message: level, type and data.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Cmsg {
    level: i32,
    kind: i32,
    data: Vec<u8>,
}

fn align_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Split a guest control buffer into its messages the way the kernel walks it
/// (`for_each_cmsghdr` and `CMSG_OK`): a message shorter than its header or running past
/// the buffer is EINVAL; the walk ends where no further header fits.
fn parse_guest_cmsgs(buf: &[u8]) -> Result<Vec<Cmsg>, SysError> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while buf.len() - off >= GUEST_CMSG_HDR {
        let len = le_u32(buf, off) as usize;
        if len < GUEST_CMSG_HDR || len > buf.len() - off {
            return Err(errno(libc::EINVAL));
        }
        out.push(Cmsg {
            level: le_u32(buf, off + 4) as i32,
            kind: le_u32(buf, off + 8) as i32,
            data: buf[off + GUEST_CMSG_HDR..off + len].to_vec(),
        });
        off += align_up(len, GUEST_CMSG_ALIGN);
        if off > buf.len() {
            break;
        }
    }
    Ok(out)
}

/// Host control messages for `msgs`: `CMSG_SPACE` each, the last one included.
fn encode_host_cmsgs(msgs: &[Cmsg]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in msgs {
        let start = out.len();
        out.extend_from_slice(&(HOST_CMSG_HDR + m.data.len()).to_ne_bytes());
        out.extend_from_slice(&m.level.to_ne_bytes());
        out.extend_from_slice(&m.kind.to_ne_bytes());
        out.resize(start + HOST_CMSG_HDR, 0);
        out.extend_from_slice(&m.data);
        out.resize(
            start + HOST_CMSG_HDR + align_up(m.data.len(), HOST_CMSG_ALIGN),
            0,
        );
    }
    out
}

/// The messages in the control bytes a host receive filled; stops at anything malformed
/// (which the host kernel does not write).
fn parse_host_cmsgs(buf: &[u8]) -> Vec<Cmsg> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while buf.len() - off >= HOST_CMSG_HDR {
        let mut len = [0u8; HOST_CMSG_ALIGN];
        len.copy_from_slice(&buf[off..off + HOST_CMSG_ALIGN]);
        let len = usize::from_ne_bytes(len);
        if len < HOST_CMSG_HDR || len > buf.len() - off {
            break;
        }
        let int_at = |o: usize| i32::from_ne_bytes([buf[o], buf[o + 1], buf[o + 2], buf[o + 3]]);
        out.push(Cmsg {
            level: int_at(off + HOST_CMSG_ALIGN),
            kind: int_at(off + HOST_CMSG_ALIGN + 4),
            data: buf[off + HOST_CMSG_HDR..off + len].to_vec(),
        });
        off += align_up(len, HOST_CMSG_ALIGN);
        if off > buf.len() {
            break;
        }
    }
    out
}

/// The 32-bit fd values of SCM_RIGHTS data (trailing bytes that are no whole fd are
/// ignored, as the kernel does).
fn fds_of(data: &[u8]) -> impl Iterator<Item = i32> + '_ {
    data.chunks_exact(4)
        .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
}

/// Whether a received control message is plain data of one layout on both sides (passed
/// to the guest as it is); the others are dropped with MSG_CTRUNC.
fn plain_cmsg(level: i32, kind: i32) -> bool {
    match level {
        // Credentials, security label, the 64-bit (_NEW) timestamps, u32 counters and marks.
        SOL_SOCKET => {
            matches!(
                kind,
                SCM_CREDENTIALS | SCM_SECURITY | 36 | 40 | 41 | 54 | 58
            ) || (63..=65).contains(&kind)
        }
        // Addresses, packet info, TTLs, extended errors: fixed-size plain structs.
        IPPROTO_IP | IPPROTO_IPV6 | IPPROTO_TCP | IPPROTO_UDP => true,
        _ => false,
    }
}

/// Builds the control bytes of a received message in the guest's layout, with the
/// kernel's rules for a buffer that is too small (`put_cmsg`, `scm_detach_fds`): a message
/// is cut to what is left (its length says so), MSG_CTRUNC is set, and the last message
/// takes no padding past the end.
struct GuestCmsgWriter {
    out: Vec<u8>,
    /// Bytes of the guest's buffer still free.
    avail: usize,
    truncated: bool,
}

impl GuestCmsgWriter {
    fn new(avail: usize) -> GuestCmsgWriter {
        GuestCmsgWriter {
            out: Vec::new(),
            avail,
            truncated: false,
        }
    }

    /// Append one message (`put_cmsg`).
    fn put(&mut self, level: i32, kind: i32, data: &[u8]) {
        if self.avail < GUEST_CMSG_HDR {
            self.truncated = true;
            return;
        }
        let mut len = GUEST_CMSG_HDR + data.len();
        if len > self.avail {
            self.truncated = true;
            len = self.avail;
        }
        self.header(len, level, kind);
        self.out.extend_from_slice(&data[..len - GUEST_CMSG_HDR]);
        self.advance(len, GUEST_CMSG_HDR + data.len());
    }

    /// How many fds an SCM_RIGHTS message can still carry.
    fn fd_room(&self) -> usize {
        self.avail.saturating_sub(GUEST_CMSG_HDR) / 4
    }

    /// Append an SCM_RIGHTS message of `fds` (at most [`Self::fd_room`]; none: nothing).
    fn put_fds(&mut self, fds: &[u32]) {
        if fds.is_empty() {
            return;
        }
        let len = GUEST_CMSG_HDR + 4 * fds.len();
        self.header(len, SOL_SOCKET, SCM_RIGHTS);
        for fd in fds {
            self.out.extend_from_slice(&fd.to_le_bytes());
        }
        self.advance(len, len);
    }

    fn header(&mut self, len: usize, level: i32, kind: i32) {
        self.out.extend_from_slice(&(len as u32).to_le_bytes());
        self.out.extend_from_slice(&level.to_le_bytes());
        self.out.extend_from_slice(&kind.to_le_bytes());
    }

    /// After `written` bytes of a message `full` bytes long: pad to its CMSG_SPACE, or to
    /// the end of the buffer if that comes first.
    fn advance(&mut self, written: usize, full: usize) {
        let space = align_up(full, GUEST_CMSG_ALIGN).min(self.avail);
        self.out.resize(self.out.len() + space - written, 0);
        self.avail -= space;
    }
}

/// A guest `struct epoll_event` (riscv32: not packed, 16 bytes).
fn encode_epoll_event(events: u32, data: u64) -> [u8; EPOLL_EVENT_SIZE as usize] {
    let mut b = [0u8; EPOLL_EVENT_SIZE as usize];
    b[..4].copy_from_slice(&events.to_le_bytes());
    b[8..].copy_from_slice(&data.to_le_bytes());
    b
}

/// (events, data) of a guest `struct epoll_event`.
fn decode_epoll_event(b: &[u8; EPOLL_EVENT_SIZE as usize]) -> (u32, u64) {
    let mut data = [0u8; 8];
    data.copy_from_slice(&b[8..]);
    (le_u32(b, 0), u64::from_le_bytes(data))
}

/// How a socket option's value crosses between guest and host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OptValue {
    /// The same bytes on both sides (ints, SO_LINGER, plain structs, strings).
    Plain,
    /// The guest's 32-bit `struct timeval` of SO_RCVTIMEO_OLD/SO_SNDTIMEO_OLD; the host
    /// sets and reads it as this 64-bit (_NEW) option.
    OldTimeval(i32),
    /// Holds pointers, fds or a 32-bit time layout, or is unknown: ENOPROTOOPT.
    Refused,
}

/// How option `name` at `level` is set (`set`) or read.
fn sockopt_value(level: i32, name: i32, set: bool) -> OptValue {
    use OptValue::*;
    match level {
        SOL_SOCKET => match name {
            SO_RCVTIMEO_OLD => OldTimeval(SO_RCVTIMEO_NEW),
            SO_SNDTIMEO_OLD => OldTimeval(SO_SNDTIMEO_NEW),
            // SO_ATTACH_FILTER takes a struct with a pointer (read back, it is
            // SO_GET_FILTER: plain filter instructions); the old timestamps produce
            // control messages with 32-bit times.
            26 | 29 | 35 | 37 if set => Refused,
            // SO_ATTACH_BPF, SO_ATTACH_REUSEPORT_CBPF/EBPF (an fd, a pointer, an fd);
            // SO_PASSPIDFD, SO_PEERPIDFD (fds).
            50..=52 | 76 | 77 => Refused,
            1..=75 => Plain,
            _ => Refused,
        },
        IPPROTO_IP | IPPROTO_IPV6 => match name {
            // MCAST_*: `struct group_req` and kin put a sockaddr_storage at a
            // pointer-aligned offset (4 on the guest, 8 on the host).
            42..=48 => Refused,
            // IP_PKTOPTIONS, IPV6_2292PKTOPTIONS return host control messages.
            9 if level == IPPROTO_IP => Refused,
            6 if level == IPPROTO_IPV6 => Refused,
            _ => Plain,
        },
        // TCP_ZEROCOPY_RECEIVE carries addresses.
        IPPROTO_TCP if name == 35 => Refused,
        IPPROTO_TCP | IPPROTO_UDP | IPPROTO_UDPLITE | IPPROTO_ICMPV6 | IPPROTO_RAW => Plain,
        _ => Refused,
    }
}

/// Round a timeout up to whole milliseconds for the host's `epoll_pwait`.
fn millis_rounded_up(d: Duration) -> i32 {
    d.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32
}

/// A guest message made ready for the host: its own address and control buffers, and
/// iovecs over checked guest memory.
struct HostMsg {
    guest: GuestMsghdr,
    /// The address (send) or room for it (receive); None: no address.
    name: Option<Vec<u8>>,
    iov: Vec<libc::iovec>,
    /// Host-layout control messages (send) or room for them (receive).
    control: Vec<u8>,
    /// Receive: how many bytes of control messages the guest's buffer takes.
    guest_control_room: usize,
    send: bool,
}

impl HostMsg {
    /// The host `struct msghdr` over this message's buffers (valid while `self` is not
    /// changed or dropped).
    fn raw(&mut self) -> libc::msghdr {
        // SAFETY: all-zero is a valid msghdr (null pointers, zero lengths).
        let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
        if let Some(name) = &mut self.name {
            m.msg_name = name.as_mut_ptr().cast();
            m.msg_namelen = name.len() as libc::socklen_t;
        }
        if !self.iov.is_empty() {
            m.msg_iov = self.iov.as_mut_ptr();
            m.msg_iovlen = self.iov.len() as _;
        }
        if !self.control.is_empty() {
            m.msg_control = self.control.as_mut_ptr().cast();
            m.msg_controllen = self.control.len() as _;
        }
        // sendmsg takes some flags from here (MSG_EOR); receive flags are outputs.
        m.msg_flags = if self.send {
            self.guest.flags as i32
        } else {
            0
        };
        m
    }
}

/// The timeout of an `epoll_pwait` family call.
enum EpollTimeout {
    /// epoll_pwait: milliseconds, negative for none.
    Millis(i32),
    /// epoll_pwait2: a guest `struct __kernel_timespec *`, 0 for none.
    Timespec(u32),
}

impl Process {
    /// Run socket/epoll/eventfd syscall `number` with arguments `a`.
    pub(super) fn sys_net(&mut self, number: u32, a: [u32; 6]) -> SysResult {
        match number {
            nr::SOCKET => self.sys_socket(a[0], a[1], a[2]),
            nr::SOCKETPAIR => self.sys_socketpair(a[0], a[1], a[2], a[3]),
            nr::BIND | nr::CONNECT => {
                let host = self.fds.host(a[0])?;
                let (addr, len) = self.read_sockaddr(a[1], a[2])?;
                let ptr = addr.as_ptr().cast();
                // SAFETY: `addr` holds at least `len` bytes; no other memory is touched.
                let r = unsafe {
                    if number == nr::BIND {
                        libc::bind(host, ptr, len)
                    } else {
                        libc::connect(host, ptr, len)
                    }
                };
                host_result(r as i64)
            }
            nr::LISTEN => {
                let host = self.fds.host(a[0])?;
                // SAFETY: no memory effects.
                host_result(unsafe { libc::listen(host, a[1] as i32) } as i64)
            }
            nr::ACCEPT => self.sys_accept4(a[0], a[1], a[2], 0),
            nr::ACCEPT4 => self.sys_accept4(a[0], a[1], a[2], a[3]),
            nr::GETSOCKNAME | nr::GETPEERNAME => {
                self.sys_getname(a[0], a[1], a[2], number == nr::GETPEERNAME)
            }
            nr::SENDTO => self.sys_sendto(a[0], a[1], a[2], a[3], a[4], a[5]),
            nr::RECVFROM => self.sys_recvfrom(a[0], a[1], a[2], a[3], a[4], a[5]),
            nr::SETSOCKOPT => self.sys_setsockopt(a[0], a[1] as i32, a[2] as i32, a[3], a[4]),
            nr::GETSOCKOPT => self.sys_getsockopt(a[0], a[1] as i32, a[2] as i32, a[3], a[4]),
            nr::SHUTDOWN => {
                let host = self.fds.host(a[0])?;
                // SAFETY: no memory effects.
                host_result(unsafe { libc::shutdown(host, a[1] as i32) } as i64)
            }
            nr::SENDMSG => self.sys_sendmsg(a[0], a[1], a[2]),
            nr::RECVMSG => self.sys_recvmsg(a[0], a[1], a[2]),
            nr::SENDMMSG => self.sys_sendmmsg(a[0], a[1], a[2], a[3]),
            nr::RECVMMSG_TIME64 => self.sys_recvmmsg(a[0], a[1], a[2], a[3], a[4]),
            nr::EVENTFD2 => self.sys_eventfd2(a[0], a[1]),
            nr::EPOLL_CREATE1 => self.sys_epoll_create1(a[0]),
            nr::EPOLL_CTL => self.sys_epoll_ctl(a[0], a[1], a[2], a[3]),
            nr::EPOLL_PWAIT => self.sys_epoll_pwait(
                number,
                a[0],
                a[1],
                a[2],
                EpollTimeout::Millis(a[3] as i32),
                a[4],
                a[5],
            ),
            nr::EPOLL_PWAIT2 => self.sys_epoll_pwait(
                number,
                a[0],
                a[1],
                a[2],
                EpollTimeout::Timespec(a[3]),
                a[4],
                a[5],
            ),
            _ => Err(errno(libc::ENOSYS)),
        }
    }

    fn sys_socket(&mut self, domain: u32, ty: u32, protocol: u32) -> SysResult {
        check_socket_args(domain, ty)?;
        // SAFETY: no memory effects.
        let fd =
            unsafe { libc::socket(domain as i32, (ty | SOCK_CLOEXEC) as i32, protocol as i32) };
        self.install_new_fd(fd as i64, ty & SOCK_CLOEXEC != 0)
    }

    fn sys_socketpair(&mut self, domain: u32, ty: u32, protocol: u32, sv: u32) -> SysResult {
        check_socket_args(domain, ty)?;
        self.mem.check(sv, 8, perm::W)?;
        let mut host = [0i32; 2];
        // SAFETY: `host` has room for the two fds.
        let r = unsafe {
            libc::socketpair(
                domain as i32,
                (ty | SOCK_CLOEXEC) as i32,
                protocol as i32,
                host.as_mut_ptr(),
            )
        };
        host_result(r as i64)?;
        self.install_fd_pair(host, ty & SOCK_CLOEXEC != 0, sv)
    }

    /// A socket address argument: `len` bytes (at most 128, else EINVAL) at `va`, in a
    /// buffer of 128.
    fn read_sockaddr(&self, va: u32, len: u32) -> Result<([u8; 128], u32), SysError> {
        if len > SOCKADDR_MAX {
            return Err(errno(libc::EINVAL));
        }
        let mut addr = [0u8; SOCKADDR_MAX as usize];
        self.mem.read(va, &mut addr[..len as usize])?;
        Ok((addr, len))
    }

    /// The length the guest gives for an address out-parameter (`*addrlen_va`), checked
    /// writable for the length the call puts back.
    fn address_room(&self, addrlen_va: u32) -> Result<u32, SysError> {
        let len = self.mem.read_u32(addrlen_va)?;
        self.mem.check(addrlen_va, 4, perm::W)?;
        if (len as i32) < 0 {
            return Err(errno(libc::EINVAL));
        }
        Ok(len)
    }

    /// Hand an address the host returned to the guest (`move_addr_to_user`): the first
    /// min(`room`, `actual`) bytes to `va`, the actual length to `addrlen_va`.
    fn put_address(
        &mut self,
        va: u32,
        addrlen_va: u32,
        room: u32,
        addr: &[u8],
        actual: u32,
    ) -> Result<(), SysError> {
        let n = room.min(actual).min(addr.len() as u32) as usize;
        if n > 0 {
            self.mem.write(va, &addr[..n])?;
        }
        self.mem.write_u32(addrlen_va, actual)?;
        Ok(())
    }

    fn sys_accept4(&mut self, fd: u32, addr: u32, addrlen: u32, flags: u32) -> SysResult {
        if flags & !(SOCK_CLOEXEC | SOCK_NONBLOCK) != 0 {
            return Err(errno(libc::EINVAL));
        }
        let host = self.fds.host(fd)?;
        let room = if addr != 0 {
            Some(self.address_room(addrlen)?)
        } else {
            None
        };
        let mut name = [0u8; SOCKADDR_MAX as usize];
        let mut name_len = SOCKADDR_MAX as libc::socklen_t;
        let (name_ptr, len_ptr) = match room {
            Some(_) => (name.as_mut_ptr().cast(), &mut name_len as *mut _),
            None => (std::ptr::null_mut(), std::ptr::null_mut()),
        };
        // SAFETY: the address pointers are null or point to `name` (128 bytes, as
        // `name_len` says) and `name_len`.
        let r = unsafe {
            libc::accept4(
                host,
                name_ptr,
                len_ptr,
                ((flags & SOCK_NONBLOCK) | SOCK_CLOEXEC) as i32,
            )
        };
        // On a failure below the new connection is closed, as Linux drops it.
        let fd = host_result(r as i64)? as RawFd;
        // SAFETY: accept just created `fd`, and nothing else owns it.
        let new = unsafe { OwnedFd::from_raw_fd(fd) };
        if let Some(room) = room {
            self.put_address(addr, addrlen, room, &name, name_len)?;
        }
        self.fds.insert(new, flags & SOCK_CLOEXEC != 0, 0)
    }

    fn sys_getname(&mut self, fd: u32, addr: u32, addrlen: u32, peer: bool) -> SysResult {
        let host = self.fds.host(fd)?;
        let room = self.address_room(addrlen)?;
        let mut name = [0u8; SOCKADDR_MAX as usize];
        let mut name_len = SOCKADDR_MAX as libc::socklen_t;
        // SAFETY: `name` has the 128 bytes `name_len` says.
        let r = unsafe {
            if peer {
                libc::getpeername(host, name.as_mut_ptr().cast(), &mut name_len)
            } else {
                libc::getsockname(host, name.as_mut_ptr().cast(), &mut name_len)
            }
        };
        host_result(r as i64)?;
        self.put_address(addr, addrlen, room, &name, name_len)?;
        Ok(0)
    }

    /// A host pointer to `len` guest bytes at `va` the host will read (`need` = R) or
    /// write (W); the whole range must be accessible (a datagram must not be cut short).
    fn guest_buffer(&mut self, va: u32, len: u32, need: u8) -> Result<(*mut u8, usize), SysError> {
        let len = len.min(MAX_RW_COUNT);
        let ptr = if need & perm::W != 0 {
            self.mem.slice_mut(va, len)?.as_mut_ptr()
        } else {
            self.mem.slice(va, len)?.as_ptr().cast_mut()
        };
        Ok((ptr, len as usize))
    }

    /// A send's result: EPIPE raises SIGPIPE unless the guest asked for MSG_NOSIGNAL (the
    /// host call always has it, so rv32vm itself never gets the signal).
    fn sent(&mut self, r: SysResult, flags: u32) -> SysResult {
        if flags & MSG_NOSIGNAL != 0 {
            r
        } else {
            self.check_pipe(r)
        }
    }

    fn sys_sendto(
        &mut self,
        fd: u32,
        buf: u32,
        len: u32,
        flags: u32,
        addr: u32,
        addrlen: u32,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        let name = if addr != 0 {
            Some(self.read_sockaddr(addr, addrlen)?)
        } else {
            None
        };
        let (ptr, n) = self.guest_buffer(buf, len, perm::R)?;
        let (name_ptr, name_len) = match &name {
            Some((a, l)) => (a.as_ptr().cast(), *l),
            None => (std::ptr::null(), 0),
        };
        // SAFETY: `ptr..ptr+n` is guest-readable memory inside our reservation; the address
        // is null or `name_len` bytes of `name`.
        let r = unsafe {
            libc::sendto(
                host,
                ptr.cast(),
                n,
                (flags | MSG_NOSIGNAL) as i32,
                name_ptr,
                name_len,
            )
        };
        self.sent(host_result(r as i64), flags)
    }

    fn sys_recvfrom(
        &mut self,
        fd: u32,
        buf: u32,
        len: u32,
        flags: u32,
        addr: u32,
        addrlen: u32,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        let room = if addr != 0 {
            Some(self.address_room(addrlen)?)
        } else {
            None
        };
        let (ptr, n) = self.guest_buffer(buf, len, perm::W)?;
        let mut name = [0u8; SOCKADDR_MAX as usize];
        let mut name_len = SOCKADDR_MAX as libc::socklen_t;
        let (name_ptr, len_ptr) = match room {
            Some(_) => (name.as_mut_ptr().cast(), &mut name_len as *mut _),
            None => (std::ptr::null_mut(), std::ptr::null_mut()),
        };
        // SAFETY: `ptr..ptr+n` is guest-writable memory inside our reservation; the address
        // pointers are null or `name` (with its size in `name_len`).
        let r = unsafe { libc::recvfrom(host, ptr.cast(), n, flags as i32, name_ptr, len_ptr) };
        let received = host_result(r as i64)?;
        if let Some(room) = room {
            self.put_address(addr, addrlen, room, &name, name_len)?;
        }
        Ok(received)
    }

    fn sys_setsockopt(
        &mut self,
        fd: u32,
        level: i32,
        name: i32,
        optval: u32,
        optlen: u32,
    ) -> SysResult {
        let host = self.socket_fd(fd)?;
        if (optlen as i32) < 0 {
            return Err(errno(libc::EINVAL));
        }
        let (host_name, value) = match sockopt_value(level, name, true) {
            OptValue::Refused => return Err(errno(libc::ENOPROTOOPT)),
            OptValue::Plain => {
                if optlen > OPTVAL_MAX {
                    return Err(errno(libc::ENOBUFS));
                }
                let mut value = vec![0u8; optlen as usize];
                self.mem.read(optval, &mut value)?;
                (name, value)
            }
            OptValue::OldTimeval(host_name) => {
                if optlen < 8 {
                    return Err(errno(libc::EINVAL));
                }
                let sec = self.mem.read_u32(optval)? as i32 as i64;
                let usec = self.mem.read_u32(optval.wrapping_add(4))? as i32 as i64;
                let mut value = sec.to_ne_bytes().to_vec();
                value.extend_from_slice(&usec.to_ne_bytes());
                (host_name, value)
            }
        };
        // Never hand the host a dangling pointer, even with length 0.
        let ptr = if value.is_empty() {
            [0u8; 8].as_ptr()
        } else {
            value.as_ptr()
        };
        // SAFETY: `ptr` points to `value.len()` readable bytes (or 8 when that is 0).
        let r = unsafe {
            libc::setsockopt(
                host,
                level,
                host_name,
                ptr.cast(),
                value.len() as libc::socklen_t,
            )
        };
        host_result(r as i64)
    }

    fn sys_getsockopt(
        &mut self,
        fd: u32,
        level: i32,
        name: i32,
        optval: u32,
        optlen: u32,
    ) -> SysResult {
        let host = self.socket_fd(fd)?;
        let len = self.mem.read_u32(optlen)?;
        self.mem.check(optlen, 4, perm::W)?;
        if (len as i32) < 0 {
            return Err(errno(libc::EINVAL));
        }
        let (host_name, room) = match sockopt_value(level, name, false) {
            OptValue::Refused => return Err(errno(libc::ENOPROTOOPT)),
            OptValue::Plain => (name, len.min(OPTVAL_MAX)),
            OptValue::OldTimeval(host_name) => (host_name, 16),
        };
        // Some room even for length 0, so the pointer is never dangling.
        let mut value = vec![0u8; room.max(8) as usize];
        let mut value_len = room as libc::socklen_t;
        // SAFETY: `value` has at least `value_len` writable bytes.
        let r = unsafe {
            libc::getsockopt(
                host,
                level,
                host_name,
                value.as_mut_ptr().cast(),
                &mut value_len,
            )
        };
        if let Err(e) = host_result(r as i64) {
            // A buffer too small for a list (SO_PEERGROUPS, SO_PEERSEC): the length it needs.
            if matches!(e, SysError::Errno(libc::ERANGE)) {
                self.mem.write_u32(optlen, value_len)?;
            }
            return Err(e);
        }
        let (bytes, full) = match sockopt_value(level, name, false) {
            OptValue::OldTimeval(_) => {
                let mut sec = [0u8; 8];
                let mut usec = [0u8; 8];
                sec.copy_from_slice(&value[..8]);
                usec.copy_from_slice(&value[8..16]);
                let clamp = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
                let mut old = clamp(i64::from_ne_bytes(sec)).to_le_bytes().to_vec();
                old.extend_from_slice(&clamp(i64::from_ne_bytes(usec)).to_le_bytes());
                (old, 8)
            }
            _ => {
                value.truncate((value_len as usize).min(room as usize));
                let n = value.len() as u32;
                (value, n)
            }
        };
        let n = (len as usize).min(bytes.len());
        self.mem.write(optval, &bytes[..n])?;
        self.mem.write_u32(optlen, full.min(len))?;
        Ok(0)
    }

    /// The host fd of guest fd `fd`, which must be a socket (ENOTSOCK), for calls that may
    /// refuse an option before the host sees the fd.
    fn socket_fd(&self, fd: u32) -> Result<RawFd, SysError> {
        let host = self.fds.host(fd)?;
        // SAFETY: all-zero is a valid stat; fstat fills it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer.
        host_result(unsafe { libc::fstat(host, &mut st) } as i64)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
            return Err(errno(libc::ENOTSOCK));
        }
        Ok(host)
    }

    fn read_msghdr(&self, va: u32) -> Result<GuestMsghdr, SysError> {
        let mut b = [0u8; MSGHDR_SIZE as usize];
        self.mem.read(va, &mut b)?;
        Ok(GuestMsghdr::decode(&b))
    }

    /// Translate the guest message `g` for a host send (`send`) or receive: its address,
    /// iovecs and control messages, with the kernel's checks (`__copy_msghdr`).
    fn host_msg(&mut self, g: GuestMsghdr, send: bool) -> Result<HostMsg, SysError> {
        if (g.namelen as i32) < 0 {
            return Err(errno(libc::EINVAL));
        }
        if g.iovlen > UIO_MAXIOV {
            return Err(errno(libc::EMSGSIZE));
        }
        let name = match (g.name, send) {
            (0, _) => None,
            (_, true) if g.namelen == 0 => None,
            (va, true) => {
                // A longer address is cut to sockaddr_storage, as Linux does.
                let mut name = vec![0u8; g.namelen.min(SOCKADDR_MAX) as usize];
                self.mem.read(va, &mut name)?;
                Some(name)
            }
            (_, false) => Some(vec![0u8; SOCKADDR_MAX as usize]),
        };
        let iov = self.msg_iovecs(g.iov, g.iovlen, if send { perm::R } else { perm::W })?;
        let has_control = g.control != 0 && g.controllen != 0;
        let (control, guest_control_room) = if send {
            if g.controllen > CONTROL_MAX {
                return Err(errno(libc::ENOBUFS));
            }
            let control = if has_control {
                let mut raw = vec![0u8; g.controllen as usize];
                self.mem.read(g.control, &mut raw)?;
                self.host_control(&raw)?
            } else {
                Vec::new()
            };
            (control, 0)
        } else if has_control {
            // The guest's buffer (up to CONTROL_MAX) must take what we write; the host's
            // is big enough for everything that fits the guest's (host headers are larger).
            let room = g.controllen.min(CONTROL_MAX);
            self.mem.check(g.control, room as u64, perm::W)?;
            (vec![0u8; room as usize * 2 + 64], room as usize)
        } else {
            (Vec::new(), 0)
        };
        Ok(HostMsg {
            guest: g,
            name,
            iov,
            control,
            guest_control_room,
            send,
        })
    }

    /// Host iovecs over the guest's `count` iovecs at `va` (each `need`-accessible):
    /// a negative length is EINVAL, the total is capped at MAX_RW_COUNT (as Linux does).
    fn msg_iovecs(&mut self, va: u32, count: u32, need: u8) -> Result<Vec<libc::iovec>, SysError> {
        let mut raw = vec![0u8; count as usize * 8];
        self.mem.read(va, &mut raw)?;
        let mut out = Vec::with_capacity(count as usize);
        let mut total = 0u32;
        for pair in raw.chunks_exact(8) {
            let base = le_u32(pair, 0);
            let len = le_u32(pair, 4);
            if (len as i32) < 0 {
                return Err(errno(libc::EINVAL));
            }
            let len = len.min(MAX_RW_COUNT - total);
            if len == 0 {
                continue;
            }
            total += len;
            let (ptr, n) = self.guest_buffer(base, len, need)?;
            out.push(libc::iovec {
                iov_base: ptr.cast(),
                iov_len: n,
            });
        }
        Ok(out)
    }

    /// Host control messages for the guest's control bytes `raw`: SCM_RIGHTS with the host
    /// fds of the guest's, everything else (credentials, packet info, ...) as it is, for
    /// the host to check.
    fn host_control(&self, raw: &[u8]) -> Result<Vec<u8>, SysError> {
        let mut msgs = parse_guest_cmsgs(raw)?;
        for m in &mut msgs {
            if m.level == SOL_SOCKET && m.kind == SCM_RIGHTS {
                if m.data.len() / 4 > SCM_MAX_FD {
                    return Err(errno(libc::EINVAL));
                }
                let mut host = Vec::with_capacity(m.data.len());
                for fd in fds_of(&m.data) {
                    host.extend_from_slice(&self.fds.host(fd as u32)?.to_ne_bytes());
                }
                m.data = host;
            }
        }
        Ok(encode_host_cmsgs(&msgs))
    }

    /// After a host receive into `m` (whose host header came back as `raw`): give the guest
    /// the address, the control messages (installing received fds as guest fds, close-on-exec
    /// if `cloexec`) and the msghdr fields the kernel writes, at guest msghdr `va`.
    fn finish_recv(
        &mut self,
        va: u32,
        m: &HostMsg,
        raw: &libc::msghdr,
        cloexec: bool,
    ) -> Result<(), SysError> {
        let used = raw.msg_controllen.min(m.control.len());
        let msgs = parse_host_cmsgs(&m.control[..used]);
        // Own every received fd at once, so those the guest does not get are closed.
        let mut received: Vec<Vec<OwnedFd>> = Vec::with_capacity(msgs.len());
        for c in &msgs {
            let carries_fds =
                c.level == SOL_SOCKET && (c.kind == SCM_RIGHTS || c.kind == SCM_PIDFD);
            received.push(if carries_fds {
                // SAFETY: the host kernel just installed these fds for this receive, each
                // once, and nothing else owns them.
                fds_of(&c.data)
                    .filter(|&fd| fd >= 0)
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
                    .collect()
            } else {
                Vec::new()
            });
        }
        let mut writer = GuestCmsgWriter::new(m.guest_control_room);
        for (c, fds) in msgs.iter().zip(received) {
            if c.level == SOL_SOCKET && c.kind == SCM_RIGHTS {
                let count = fds.len();
                let room = writer.fd_room();
                let mut guest = Vec::new();
                for fd in fds.into_iter().take(room) {
                    match self.fds.insert(fd, cloexec, 0) {
                        Ok(g) => guest.push(g),
                        Err(_) => break,
                    }
                }
                writer.put_fds(&guest);
                if guest.len() < count {
                    writer.truncated = true;
                }
            } else if plain_cmsg(c.level, c.kind) {
                writer.put(c.level, c.kind, &c.data);
            } else {
                writer.truncated = true;
            }
        }
        if !writer.out.is_empty() {
            self.mem.write(m.guest.control, &writer.out)?;
        }
        // Linux echoes MSG_CMSG_CLOEXEC back when the caller passed it (we always do).
        let mut flags = raw.msg_flags as u32 & !MSG_CMSG_CLOEXEC;
        if cloexec {
            flags |= MSG_CMSG_CLOEXEC;
        }
        if writer.truncated {
            flags |= MSG_CTRUNC;
        }
        if let Some(name) = &m.name {
            self.put_address(
                m.guest.name,
                va.wrapping_add(MSGHDR_NAMELEN),
                m.guest.namelen,
                name,
                raw.msg_namelen,
            )?;
        }
        self.mem
            .write_u32(va.wrapping_add(MSGHDR_CONTROLLEN), writer.out.len() as u32)?;
        self.mem.write_u32(va.wrapping_add(MSGHDR_FLAGS), flags)?;
        Ok(())
    }

    fn sys_sendmsg(&mut self, fd: u32, msg: u32, flags: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        let g = self.read_msghdr(msg)?;
        let mut m = self.host_msg(g, true)?;
        let raw = m.raw();
        // SAFETY: `raw` points into `m`'s buffers and into guest memory checked readable.
        let r = unsafe { libc::sendmsg(host, &raw, (flags | MSG_NOSIGNAL) as i32) };
        self.sent(host_result(r as i64), flags)
    }

    fn sys_recvmsg(&mut self, fd: u32, msg: u32, flags: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        let g = self.read_msghdr(msg)?;
        self.mem.check(msg, MSGHDR_SIZE as u64, perm::W)?;
        let mut m = self.host_msg(g, false)?;
        let mut raw = m.raw();
        // SAFETY: `raw` points into `m`'s buffers and into guest memory checked writable.
        // Received fds are close-on-exec on the host whatever the guest asked.
        let r = unsafe { libc::recvmsg(host, &mut raw, (flags | MSG_CMSG_CLOEXEC) as i32) };
        let n = host_result(r as i64)?;
        self.finish_recv(msg, &m, &raw, flags & MSG_CMSG_CLOEXEC != 0)?;
        Ok(n)
    }

    /// The guest's `struct mmsghdr` array at `va`, translated up to the first entry that
    /// fails (whose error is returned if it is the first: later ones are for a later call,
    /// as Linux reports them).
    fn host_mmsgs(&mut self, va: u32, vlen: u32, send: bool) -> Result<Vec<HostMsg>, SysError> {
        let mut msgs = Vec::new();
        for i in 0..vlen.min(UIO_MAXIOV) {
            let entry = va.wrapping_add(i * MMSGHDR_SIZE);
            let m = self
                .mem
                .check(entry, MMSGHDR_SIZE as u64, perm::W)
                .map_err(SysError::from)
                .and_then(|()| self.read_msghdr(entry))
                .and_then(|g| self.host_msg(g, send));
            match m {
                Ok(m) => msgs.push(m),
                Err(e) if msgs.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        Ok(msgs)
    }

    fn sys_sendmmsg(&mut self, fd: u32, vec: u32, vlen: u32, flags: u32) -> SysResult {
        let host = self.fds.host(fd)?;
        let mut msgs = self.host_mmsgs(vec, vlen, true)?;
        if msgs.is_empty() {
            return Ok(0);
        }
        let mut raw = raw_mmsgs(&mut msgs);
        // SAFETY: every header points into `msgs`' buffers and guest memory checked
        // readable; `raw` holds `raw.len()` headers.
        let r = unsafe {
            libc::sendmmsg(
                host,
                raw.as_mut_ptr(),
                raw.len() as _,
                (flags | MSG_NOSIGNAL) as _,
            )
        };
        let n = self.sent(host_result(r as i64), flags)?;
        for (i, h) in raw.iter().take(n as usize).enumerate() {
            let entry = vec.wrapping_add(i as u32 * MMSGHDR_SIZE);
            self.mem
                .write_u32(entry.wrapping_add(MMSGHDR_LEN), h.msg_len)?;
        }
        Ok(n)
    }

    fn sys_recvmmsg(
        &mut self,
        fd: u32,
        vec: u32,
        vlen: u32,
        flags: u32,
        timeout: u32,
    ) -> SysResult {
        let host = self.fds.host(fd)?;
        let mut ts = if timeout != 0 {
            Some(read_timespec(&self.mem, timeout)?)
        } else {
            None
        };
        let mut msgs = self.host_mmsgs(vec, vlen, false)?;
        if msgs.is_empty() {
            return Ok(0);
        }
        let mut raw = raw_mmsgs(&mut msgs);
        let ts_ptr = ts
            .as_mut()
            .map_or(std::ptr::null_mut(), |t| t as *mut libc::timespec);
        // SAFETY: every header points into `msgs`' buffers and guest memory checked
        // writable; `raw` holds `raw.len()` headers; the timeout is null or a timespec.
        let r = unsafe {
            libc::recvmmsg(
                host,
                raw.as_mut_ptr(),
                raw.len() as _,
                (flags | MSG_CMSG_CLOEXEC) as _,
                ts_ptr,
            )
        };
        let n = host_result(r as i64)?;
        for (i, (m, h)) in msgs.iter().zip(&raw).take(n as usize).enumerate() {
            let entry = vec.wrapping_add(i as u32 * MMSGHDR_SIZE);
            self.finish_recv(entry, m, &h.msg_hdr, flags & MSG_CMSG_CLOEXEC != 0)?;
            self.mem
                .write_u32(entry.wrapping_add(MMSGHDR_LEN), h.msg_len)?;
        }
        if let Some(t) = ts {
            // The kernel leaves the time that was left.
            write_timespec(&mut self.mem, timeout, &t)?;
        }
        Ok(n)
    }

    fn sys_eventfd2(&mut self, initval: u32, flags: u32) -> SysResult {
        if flags & !(EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC) != 0 {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: no memory effects.
        let fd = unsafe { libc::eventfd(initval, (flags | EFD_CLOEXEC) as i32) };
        self.install_new_fd(fd as i64, flags & EFD_CLOEXEC != 0)
    }

    fn sys_epoll_create1(&mut self, flags: u32) -> SysResult {
        if flags & !EPOLL_CLOEXEC != 0 {
            return Err(errno(libc::EINVAL));
        }
        // SAFETY: no memory effects.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        self.install_new_fd(fd as i64, flags & EPOLL_CLOEXEC != 0)
    }

    /// epoll_ctl: the guest's 64-bit data goes to the host as it is (the guest gets it back
    /// from epoll_pwait); the watched fd is the host fd behind the guest's.
    fn sys_epoll_ctl(&mut self, epfd: u32, op: u32, fd: u32, event: u32) -> SysResult {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        if op != EPOLL_CTL_DEL {
            let mut b = [0u8; EPOLL_EVENT_SIZE as usize];
            self.mem.read(event, &mut b)?;
            let (events, data) = decode_epoll_event(&b);
            ev = libc::epoll_event { events, u64: data };
        }
        let host_ep = self.fds.host(epfd)?;
        let host_fd = self.fds.host(fd)?;
        // SAFETY: `ev` is a valid epoll_event the host only reads.
        let r = unsafe { libc::epoll_ctl(host_ep, op as i32, host_fd, &mut ev) };
        host_result(r as i64)
    }

    /// epoll_pwait / epoll_pwait2 (`number`): waits with `sigmask` (if given) as the
    /// guest's mask, so a signal for the guest ends the wait with EINTR. While another
    /// guest thread needs the hart the host wait is cut at `wait_limit` and the call gives
    /// way, keeping its deadline, as `ppoll` does.
    #[allow(clippy::too_many_arguments)]
    fn sys_epoll_pwait(
        &mut self,
        number: u32,
        epfd: u32,
        events: u32,
        maxevents: u32,
        timeout: EpollTimeout,
        sigmask: u32,
        sigsetsize: u32,
    ) -> SysResult {
        if maxevents as i32 <= 0 || maxevents > EP_MAX_EVENTS {
            return Err(errno(libc::EINVAL));
        }
        let batch = maxevents.min(EPOLL_BATCH);
        self.mem
            .check(events, (batch * EPOLL_EVENT_SIZE) as u64, perm::W)?;
        let host = self.fds.host(epfd)?;
        let timeout = match timeout {
            EpollTimeout::Millis(ms) if ms < 0 => None,
            EpollTimeout::Millis(ms) => Some(Duration::from_millis(ms as u64)),
            EpollTimeout::Timespec(0) => None,
            EpollTimeout::Timespec(va) => {
                let t = read_timespec(&self.mem, va)?;
                Some(Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
            }
        };
        let wait_mask = self.wait_mask(sigmask, sigsetsize)?;
        let mut buf = vec![libc::epoll_event { events: 0, u64: 0 }; batch as usize];
        // The thread scheduler keys a call that gave way by its pc; an odd value can be no
        // pc, so this key never matches another call's.
        let key = 1 | number << 1 | epfd << 10;
        let deadline = timeout.map(|t| self.threads.retry_deadline(key, t));
        let guest_left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let (wait, give_way) = self.host_wait(guest_left);
        let n = match self.host_epoll_wait(host, &mut buf, wait, wait_mask, sigmask)? {
            0 if give_way => {
                if let Some(d) = deadline {
                    self.threads.retry_until(key, d);
                }
                return Err(SysError::WouldBlock);
            }
            n => n,
        };
        let mut out = Vec::with_capacity(n as usize * EPOLL_EVENT_SIZE as usize);
        for e in buf.iter().take(n as usize) {
            // Copies: the host struct is packed.
            let (ev, data) = (e.events, e.u64);
            out.extend_from_slice(&encode_epoll_event(ev, data));
        }
        self.mem.write(events, &out)?;
        Ok(n)
    }

    /// Host `epoll_pwait` into `buf` for `timeout` (None: no limit) under the guest's signal
    /// mask `wait_mask` (the call's own when `sigmask` is not 0).
    fn host_epoll_wait(
        &mut self,
        host: RawFd,
        buf: &mut [libc::epoll_event],
        timeout: Option<Duration>,
        wait_mask: u64,
        sigmask: u32,
    ) -> SysResult {
        // A wait that a watched signal ends runs again for the time left.
        let deadline = timeout.map(|t| Instant::now() + t);
        let result = loop {
            let ms = deadline.map_or(-1, |d| {
                millis_rounded_up(d.saturating_duration_since(Instant::now()))
            });
            let watched = self.signalfd_watch();
            let result = self.wait_for_signals_watching(wait_mask, watched, |mask| {
                // SAFETY: `buf` holds its length of epoll_events; `mask` is a valid sigset.
                unsafe { libc::epoll_pwait(host, buf.as_mut_ptr(), buf.len() as i32, ms, mask) }
            });
            if !self.woken_for_signalfd(watched, wait_mask, &result) {
                break result;
            }
        };
        if sigmask != 0 {
            self.keep_wait_mask_for_handler(wait_mask);
        }
        result
    }
}

/// The checks `socket`/`socketpair` make before the host sees the call: type flags
/// (EINVAL), then the domain (EAFNOSUPPORT for all but AF_UNIX, AF_INET, AF_INET6).
fn check_socket_args(domain: u32, ty: u32) -> Result<(), SysError> {
    if ty & !(SOCK_TYPE_MASK | SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
        return Err(errno(libc::EINVAL));
    }
    match domain as i32 {
        libc::AF_UNIX | libc::AF_INET | libc::AF_INET6 => Ok(()),
        _ => Err(errno(libc::EAFNOSUPPORT)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guest_cmsg(level: i32, kind: i32, data: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&((GUEST_CMSG_HDR + data.len()) as u32).to_le_bytes());
        b.extend_from_slice(&level.to_le_bytes());
        b.extend_from_slice(&kind.to_le_bytes());
        b.extend_from_slice(data);
        b.resize(align_up(b.len(), 4), 0);
        b
    }

    #[test]
    fn msghdr_layout_is_seven_words() {
        let g = GuestMsghdr {
            name: 0x1000,
            namelen: 16,
            iov: 0x2000,
            iovlen: 3,
            control: 0x3000,
            controllen: 24,
            flags: 0x40,
        };
        let b = g.encode();
        assert_eq!(&b[8..12], &0x2000u32.to_le_bytes());
        assert_eq!(&b[20..24], &24u32.to_le_bytes());
        assert_eq!(le_u32(&b, MSGHDR_FLAGS as usize), 0x40);
        assert_eq!(GuestMsghdr::decode(&b), g);
    }

    #[test]
    fn guest_cmsgs_parse_with_4_byte_alignment() {
        let mut buf = guest_cmsg(SOL_SOCKET, SCM_RIGHTS, &[3, 0, 0, 0, 4, 0, 0, 0]);
        buf.extend(guest_cmsg(IPPROTO_IP, 2, &[64]));
        assert_eq!(buf.len(), 20 + 16);
        let msgs = parse_guest_cmsgs(&buf).unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(fds_of(&msgs[0].data).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!((msgs[1].level, msgs[1].kind), (IPPROTO_IP, 2));
        assert_eq!(msgs[1].data, vec![64]);
        // The last message's padding may be missing; a tail shorter than a header ends it.
        buf.truncate(buf.len() - 3);
        assert_eq!(parse_guest_cmsgs(&buf).unwrap().len(), 2);
        let mut tail = guest_cmsg(SOL_SOCKET, SCM_CREDENTIALS, &[0; 12]);
        tail.extend_from_slice(&[0; 11]);
        assert_eq!(parse_guest_cmsgs(&tail).unwrap().len(), 1);
    }

    #[test]
    fn malformed_guest_cmsgs_are_einval() {
        let mut short = guest_cmsg(SOL_SOCKET, SCM_RIGHTS, &[]);
        short[0] = 8;
        assert!(matches!(
            parse_guest_cmsgs(&short),
            Err(SysError::Errno(libc::EINVAL))
        ));
        let mut long = guest_cmsg(SOL_SOCKET, SCM_RIGHTS, &[1, 0, 0, 0]);
        long[0] = 40;
        assert!(matches!(
            parse_guest_cmsgs(&long),
            Err(SysError::Errno(libc::EINVAL))
        ));
        assert!(parse_guest_cmsgs(&[0; 11]).unwrap().is_empty());
    }

    #[test]
    fn host_cmsgs_have_size_t_lengths_and_8_byte_alignment() {
        let msgs = vec![
            Cmsg {
                level: SOL_SOCKET,
                kind: SCM_RIGHTS,
                data: 7i32.to_ne_bytes().to_vec(),
            },
            Cmsg {
                level: SOL_SOCKET,
                kind: SCM_CREDENTIALS,
                data: vec![9; 12],
            },
        ];
        let host = encode_host_cmsgs(&msgs);
        assert_eq!(host.len(), 24 + 32);
        assert_eq!(&host[..8], &20u64.to_ne_bytes());
        assert_eq!(&host[8..12], &SOL_SOCKET.to_ne_bytes());
        assert_eq!(&host[12..16], &SCM_RIGHTS.to_ne_bytes());
        assert_eq!(&host[16..20], &7i32.to_ne_bytes());
        assert_eq!(&host[24..32], &28u64.to_ne_bytes());
        assert_eq!(parse_host_cmsgs(&host), msgs);
        // A cut or malformed tail is ignored.
        assert_eq!(parse_host_cmsgs(&host[..40]), msgs[..1].to_vec());
    }

    #[test]
    fn guest_cmsg_writer_pads_and_truncates_like_put_cmsg() {
        let mut w = GuestCmsgWriter::new(64);
        w.put(SOL_SOCKET, SCM_CREDENTIALS, &[1; 12]);
        w.put_fds(&[5, 6]);
        assert!(!w.truncated);
        assert_eq!(w.out.len(), 24 + 20);
        let msgs = parse_guest_cmsgs(&w.out).unwrap();
        assert_eq!(msgs[0].data, vec![1; 12]);
        assert_eq!((msgs[1].level, msgs[1].kind), (SOL_SOCKET, SCM_RIGHTS));
        assert_eq!(fds_of(&msgs[1].data).collect::<Vec<_>>(), vec![5, 6]);
        assert_eq!(w.fd_room(), 2);

        // 3 data bytes: the message's length is 15, its space 16.
        let mut w = GuestCmsgWriter::new(40);
        w.put(IPPROTO_IP, 1, &[1, 2, 3]);
        assert_eq!(w.out.len(), 16);
        assert_eq!(le_u32(&w.out, 0), 15);
        // Too long for the 24 bytes left: cut to them, MSG_CTRUNC.
        w.put(IPPROTO_IP, 8, &[7; 20]);
        assert!(w.truncated);
        assert_eq!(w.out.len(), 40);
        assert_eq!(le_u32(&w.out, 16), 24);
        assert_eq!(w.avail, 0);

        let mut w = GuestCmsgWriter::new(10);
        assert_eq!(w.fd_room(), 0);
        w.put(SOL_SOCKET, SCM_CREDENTIALS, &[0; 12]);
        assert!(w.truncated && w.out.is_empty());
    }

    #[test]
    fn epoll_event_is_16_bytes_with_padding() {
        let b = encode_epoll_event(0x8000_0001, 0x1122_3344_5566_7788);
        assert_eq!(&b[..4], &[1, 0, 0, 0x80]);
        assert_eq!(&b[4..8], &[0; 4]);
        assert_eq!(&b[8..], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(decode_epoll_event(&b), (0x8000_0001, 0x1122_3344_5566_7788));
        assert_eq!(EP_MAX_EVENTS, 0x7ff_ffff);
    }

    #[test]
    fn socket_options_are_classified() {
        use OptValue::*;
        assert_eq!(sockopt_value(SOL_SOCKET, 2, true), Plain); // SO_REUSEADDR
        assert_eq!(sockopt_value(SOL_SOCKET, 13, true), Plain); // SO_LINGER
        assert_eq!(sockopt_value(SOL_SOCKET, SO_RCVTIMEO_NEW, true), Plain);
        assert_eq!(
            sockopt_value(SOL_SOCKET, SO_SNDTIMEO_OLD, false),
            OldTimeval(SO_SNDTIMEO_NEW)
        );
        assert_eq!(sockopt_value(SOL_SOCKET, 26, true), Refused);
        assert_eq!(sockopt_value(SOL_SOCKET, 26, false), Plain);
        assert_eq!(sockopt_value(SOL_SOCKET, 77, false), Refused);
        assert_eq!(sockopt_value(SOL_SOCKET, 1000, false), Refused);
        assert_eq!(sockopt_value(IPPROTO_IP, 42, true), Refused);
        assert_eq!(sockopt_value(IPPROTO_TCP, 1, true), Plain); // TCP_NODELAY
        assert_eq!(sockopt_value(270, 1, true), Refused); // SOL_NETLINK
    }

    #[test]
    fn only_plain_control_messages_pass() {
        assert!(plain_cmsg(SOL_SOCKET, SCM_CREDENTIALS));
        assert!(plain_cmsg(SOL_SOCKET, 63));
        assert!(!plain_cmsg(SOL_SOCKET, 29)); // SCM_TIMESTAMP_OLD: 32-bit times
        assert!(!plain_cmsg(SOL_SOCKET, SCM_PIDFD));
        assert!(plain_cmsg(IPPROTO_IPV6, 50));
        assert!(!plain_cmsg(282, 1)); // SOL_TLS
    }

    #[test]
    fn blocking_calls_and_their_events() {
        let no_flags = [3, 0, 0, 0, 0, 0];
        assert_eq!(blocking_events(nr::ACCEPT4, no_flags), Some(libc::POLLIN));
        assert_eq!(blocking_events(nr::SENDMSG, no_flags), Some(libc::POLLOUT));
        assert_eq!(blocking_events(nr::RECVFROM, no_flags), Some(libc::POLLIN));
        assert_eq!(blocking_events(nr::CONNECT, no_flags), None);
        // MSG_DONTWAIT: the call fails at once instead of blocking.
        assert_eq!(blocking_events(nr::RECVMSG, [3, 0, 0x40, 0, 0, 0]), None);
        assert_eq!(blocking_events(nr::SENDTO, [3, 0, 0, 0x40, 0, 0]), None);
        assert!(is_net(nr::EPOLL_PWAIT2) && is_net(nr::EVENTFD2) && !is_net(63));
    }

    #[test]
    fn millis_round_up() {
        assert_eq!(millis_rounded_up(Duration::ZERO), 0);
        assert_eq!(millis_rounded_up(Duration::from_micros(1)), 1);
        assert_eq!(millis_rounded_up(Duration::from_millis(20)), 20);
        assert_eq!(millis_rounded_up(Duration::from_secs(u64::MAX)), i32::MAX);
    }
}
