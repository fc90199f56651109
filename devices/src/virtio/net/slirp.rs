//! User-mode networking with libslirp: a virtual 10.0.2.0/24 network behind NAT, as QEMU's
//! `-netdev user` has it. The guest gets 10.0.2.15 by DHCP; 10.0.2.2 is the gateway and the
//! host's loopback, 10.0.2.3 the DNS proxy. Host ports can forward into the guest.
//!
//! libslirp is single-threaded and callback driven: everything here lives on the network
//! device's worker thread. [`Slirp`] wraps the `libslirp` crate's context: it collects the
//! frames libslirp sends to the guest, runs its timers, and polls its sockets together with the
//! worker's wake-up eventfd.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::RawFd;
use std::rc::Rc;
use std::str::FromStr;
use std::time::{Duration, Instant};

use libslirp::{Context, Handler, PollEvents};

/// The guest network (QEMU's user-mode defaults).
pub const NETWORK: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 0);
/// Its netmask.
pub const NETMASK: Ipv4Addr = Ipv4Addr::new(255, 255, 255, 0);
/// The gateway; connections to it reach the host's loopback.
pub const GATEWAY: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);
/// The DNS proxy.
pub const NAMESERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 3);
/// The first (and, with one guest, only) address DHCP hands out.
pub const GUEST: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 15);
/// Frames waiting for guest receive buffers beyond this are dropped (TCP resends them).
pub const MAX_PENDING_FRAMES: usize = 4096;
/// The longest a poll waits when libslirp has no timer due.
const MAX_POLL_WAIT: Duration = Duration::from_secs(1);

/// The transport protocol of a forwarded port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
}

/// A host port forwarded into the guest: `tcp:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostForward {
    /// TCP or UDP.
    pub protocol: Protocol,
    /// The host address to listen on (default 127.0.0.1).
    pub host_addr: Ipv4Addr,
    /// The host port to listen on.
    pub host_port: u16,
    /// The guest address to connect to (default 10.0.2.15).
    pub guest_addr: Ipv4Addr,
    /// The guest port.
    pub guest_port: u16,
}

impl fmt::Display for HostForward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let protocol = match self.protocol {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
        };
        write!(
            f,
            "{protocol}:{}:{}-{}:{}",
            self.host_addr, self.host_port, self.guest_addr, self.guest_port
        )
    }
}

/// Why a `hostfwd=` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostForwardParseError {
    /// Not of the form `[tcp|udp]:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT`.
    #[error("`{0}` is not of the form tcp:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT")]
    Syntax(String),
    /// The protocol is neither `tcp` nor `udp`.
    #[error("unknown protocol `{0}` (tcp or udp)")]
    Protocol(String),
    /// An address is not an IPv4 address.
    #[error("`{0}` is not an IPv4 address")]
    Address(String),
    /// A port is not a number in 1..=65535.
    #[error("`{0}` is not a port number (1-65535)")]
    Port(String),
}

impl FromStr for HostForward {
    type Err = HostForwardParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let syntax = || HostForwardParseError::Syntax(text.into());
        let (host, guest) = text.split_once('-').ok_or_else(syntax)?;
        let mut host_parts = host.split(':');
        let (protocol, host_addr, host_port) = match (
            host_parts.next(),
            host_parts.next(),
            host_parts.next(),
            host_parts.next(),
        ) {
            (Some(protocol), Some(addr), Some(port), None) => (protocol, addr, port),
            // `tcp:PORT` is a protocol with the address's colon missing, not an address.
            (Some("tcp" | "udp"), Some(_), None, None) => return Err(syntax()),
            (Some(addr), Some(port), None, None) => ("tcp", addr, port),
            _ => return Err(syntax()),
        };
        let protocol = match protocol {
            "tcp" | "" => Protocol::Tcp,
            "udp" => Protocol::Udp,
            other => return Err(HostForwardParseError::Protocol(other.into())),
        };
        let (guest_addr, guest_port) = guest.split_once(':').ok_or_else(syntax)?;
        let address = |text: &str, default: Ipv4Addr| {
            if text.is_empty() {
                Ok(default)
            } else {
                text.parse()
                    .map_err(|_| HostForwardParseError::Address(text.into()))
            }
        };
        let port = |text: &str| match text.parse::<u16>() {
            Ok(port) if port > 0 => Ok(port),
            _ => Err(HostForwardParseError::Port(text.into())),
        };
        Ok(Self {
            protocol,
            host_addr: address(host_addr, Ipv4Addr::LOCALHOST)?,
            host_port: port(host_port)?,
            guest_addr: address(guest_addr, GUEST)?,
            guest_port: port(guest_port)?,
        })
    }
}

/// One libslirp timer: when it is due and what it runs.
struct Timer {
    /// Due time in ms of the slirp clock; `None` when not armed.
    expire_ms: Cell<Option<i64>>,
    callback: RefCell<Box<dyn FnMut()>>,
}

/// What the handler shares with the loop: frames for the guest, timers, the clock.
struct Shared {
    to_guest: RefCell<VecDeque<Vec<u8>>>,
    timers: RefCell<Vec<Rc<Timer>>>,
    start: Instant,
    dropped: Cell<u64>,
}

impl Shared {
    fn now_ns(&self) -> i64 {
        i64::try_from(self.start.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }
}

/// The libslirp callbacks.
struct SlirpHandler {
    shared: Rc<Shared>,
}

/// A timer as libslirp holds it.
pub struct TimerHandle(Rc<Timer>);

impl Handler for SlirpHandler {
    type Timer = TimerHandle;

    fn clock_get_ns(&mut self) -> i64 {
        self.shared.now_ns()
    }

    fn send_packet(&mut self, frame: &[u8]) -> io::Result<usize> {
        let mut queue = self.shared.to_guest.borrow_mut();
        if queue.len() >= MAX_PENDING_FRAMES {
            self.shared.dropped.set(self.shared.dropped.get() + 1);
        } else {
            queue.push_back(frame.to_vec());
        }
        Ok(frame.len())
    }

    fn register_poll_fd(&mut self, _fd: RawFd) {}

    fn unregister_poll_fd(&mut self, _fd: RawFd) {}

    fn guest_error(&mut self, message: &str) {
        tracing::warn!(message, "virtio-net: libslirp reports a guest error");
    }

    fn notify(&mut self) {}

    fn timer_new(&mut self, callback: Box<dyn FnMut()>) -> Box<TimerHandle> {
        let timer = Rc::new(Timer {
            expire_ms: Cell::new(None),
            callback: RefCell::new(callback),
        });
        self.shared.timers.borrow_mut().push(timer.clone());
        Box::new(TimerHandle(timer))
    }

    fn timer_mod(&mut self, timer: &mut Box<TimerHandle>, expire_ms: i64) {
        timer.0.expire_ms.set(Some(expire_ms));
    }

    fn timer_free(&mut self, timer: Box<TimerHandle>) {
        self.shared
            .timers
            .borrow_mut()
            .retain(|t| !Rc::ptr_eq(t, &timer.0));
    }
}

/// libslirp with its callbacks, on the current thread.
pub(crate) struct Slirp {
    context: Context<SlirpHandler>,
    shared: Rc<Shared>,
    pollfds: Vec<libc::pollfd>,
}

impl Slirp {
    /// A user-mode network with QEMU's addresses and `forwards` bound. A port that cannot be
    /// bound fails with the host's error.
    pub(crate) fn new(forwards: &[HostForward]) -> Result<Self, (HostForward, io::Error)> {
        let shared = Rc::new(Shared {
            to_guest: RefCell::new(VecDeque::new()),
            timers: RefCell::new(Vec::new()),
            start: Instant::now(),
            dropped: Cell::new(0),
        });
        let config = libslirp_sys::SlirpConfig {
            version: 1,
            restricted: 0,
            in_enabled: true,
            vnetwork: NETWORK.into(),
            vnetmask: NETMASK.into(),
            vhost: GATEWAY.into(),
            in6_enabled: false,
            vprefix_addr6: std::net::Ipv6Addr::UNSPECIFIED.into(),
            vprefix_len: 0,
            vhost6: std::net::Ipv6Addr::UNSPECIFIED.into(),
            vhostname: std::ptr::null(),
            tftp_server_name: std::ptr::null(),
            tftp_path: std::ptr::null(),
            bootfile: std::ptr::null(),
            vdhcp_start: GUEST.into(),
            vnameserver: NAMESERVER.into(),
            vnameserver6: std::net::Ipv6Addr::UNSPECIFIED.into(),
            vdnssearch: std::ptr::null_mut(),
            vdomainname: std::ptr::null(),
            if_mtu: 0,
            if_mru: 0,
            disable_host_loopback: false,
            enable_emu: false,
            outbound_addr: std::ptr::null(),
            outbound_addr6: std::ptr::null(),
            disable_dns: false,
            disable_dhcp: false,
        };
        let handler = SlirpHandler {
            shared: shared.clone(),
        };
        let context = Context::new_with_config(&config, handler);
        for forward in forwards {
            let is_udp = i32::from(forward.protocol == Protocol::Udp);
            // SAFETY: the context pointer is live (owned by `context`), and the call only
            // copies its scalar arguments.
            let status = unsafe {
                libslirp_sys::slirp_add_hostfwd(
                    context.inner.context,
                    is_udp,
                    forward.host_addr.into(),
                    i32::from(forward.host_port),
                    forward.guest_addr.into(),
                    i32::from(forward.guest_port),
                )
            };
            if status < 0 {
                // libslirp keeps bind's errno.
                return Err((*forward, io::Error::last_os_error()));
            }
        }
        Ok(Self {
            context,
            shared,
            pollfds: Vec::new(),
        })
    }

    /// A frame from the guest.
    pub(crate) fn input(&mut self, frame: &[u8]) {
        self.context.input(frame);
    }

    /// Frames for the guest, oldest first (take them with `pop_front`).
    pub(crate) fn to_guest(&self) -> std::cell::RefMut<'_, VecDeque<Vec<u8>>> {
        self.shared.to_guest.borrow_mut()
    }

    /// Frames dropped so far because the guest did not take them.
    pub(crate) fn dropped(&self) -> u64 {
        self.shared.dropped.get()
    }

    /// Waits for libslirp's sockets, `wake` (readable) or the next timer, then lets libslirp
    /// handle what is ready and runs the due timers.
    pub(crate) fn poll(&mut self, wake: RawFd) {
        let mut timeout_ms = self.next_timer_wait().as_millis().min(u128::from(u32::MAX)) as u32;
        let pollfds = &mut self.pollfds;
        pollfds.clear();
        pollfds.push(libc::pollfd {
            fd: wake,
            events: libc::POLLIN,
            revents: 0,
        });
        self.context.pollfds_fill(&mut timeout_ms, |fd, events| {
            let mut wanted = 0;
            if events.has_in() {
                wanted |= libc::POLLIN;
            }
            if events.has_out() {
                wanted |= libc::POLLOUT;
            }
            if events.has_pri() {
                wanted |= libc::POLLPRI;
            }
            pollfds.push(libc::pollfd {
                fd,
                events: wanted,
                revents: 0,
            });
            (pollfds.len() - 1) as i32
        });
        let timeout = i32::try_from(timeout_ms).unwrap_or(i32::MAX);
        // SAFETY: `pollfds` is a live, exclusively borrowed array of `len` pollfd structs.
        let ready = unsafe {
            libc::poll(
                self.pollfds.as_mut_ptr(),
                self.pollfds.len() as libc::nfds_t,
                timeout,
            )
        };
        let pollfds = &self.pollfds;
        self.context.pollfds_poll(ready < 0, |index| {
            let Some(pollfd) = usize::try_from(index).ok().and_then(|i| pollfds.get(i)) else {
                return PollEvents::empty();
            };
            let mut events = PollEvents::empty();
            let revents = pollfd.revents;
            for (bit, event) in [
                (libc::POLLIN, PollEvents::poll_in()),
                (libc::POLLOUT, PollEvents::poll_out()),
                (libc::POLLPRI, PollEvents::poll_pri()),
                (libc::POLLERR, PollEvents::poll_err()),
                (libc::POLLHUP, PollEvents::poll_hup()),
            ] {
                if revents & bit != 0 {
                    events |= event;
                }
            }
            events
        });
        self.run_timers();
    }

    /// How long until the next armed timer is due (at most [`MAX_POLL_WAIT`]).
    fn next_timer_wait(&self) -> Duration {
        let now_ms = self.shared.now_ns() / 1_000_000;
        self.shared
            .timers
            .borrow()
            .iter()
            .filter_map(|timer| timer.expire_ms.get())
            .map(|due| Duration::from_millis(u64::try_from(due - now_ms).unwrap_or(0)))
            .min()
            .unwrap_or(MAX_POLL_WAIT)
            .min(MAX_POLL_WAIT)
    }

    fn run_timers(&mut self) {
        let now_ms = self.shared.now_ns() / 1_000_000;
        let due: Vec<Rc<Timer>> = self
            .shared
            .timers
            .borrow()
            .iter()
            .filter(|timer| timer.expire_ms.get().is_some_and(|at| at <= now_ms))
            .cloned()
            .collect();
        for timer in due {
            timer.expire_ms.set(None);
            // A callback may re-arm its own timer (timer_mod only touches `expire_ms`).
            if let Ok(mut callback) = timer.callback.try_borrow_mut() {
                callback();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_forwards_parse_as_qemu_writes_them() {
        let forward: HostForward = "tcp::8080-:80".parse().unwrap();
        assert_eq!(
            forward,
            HostForward {
                protocol: Protocol::Tcp,
                host_addr: Ipv4Addr::LOCALHOST,
                host_port: 8080,
                guest_addr: GUEST,
                guest_port: 80,
            }
        );
        let forward: HostForward = "udp:0.0.0.0:5353-10.0.2.15:53".parse().unwrap();
        assert_eq!(forward.protocol, Protocol::Udp);
        assert_eq!(forward.host_addr, Ipv4Addr::UNSPECIFIED);
        assert_eq!(forward.guest_port, 53);
        assert_eq!(":2222-:22".parse::<HostForward>().unwrap().host_port, 2222);
        assert_eq!(forward.to_string(), "udp:0.0.0.0:5353-10.0.2.15:53");
        for bad in [
            "",
            "tcp",
            "tcp::80",
            "tcp::80-",
            "tcp::80-:",
            "tcp::0-:80",
            "tcp::99999-:80",
            "sctp::80-:80",
            "tcp:localhost:80-:80",
            "tcp::80-:80:1",
            "tcp:1:2:3-:4",
        ] {
            assert!(bad.parse::<HostForward>().is_err(), "{bad}");
        }
        // A protocol without the address's colon is a syntax error, not a bad address.
        assert!(matches!(
            "tcp:18090-:80".parse::<HostForward>(),
            Err(HostForwardParseError::Syntax(_))
        ));
    }
}
