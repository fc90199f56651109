//! A blocking `write` or `writev` to a pipe, FIFO or stream socket in a threaded process.
//!
//! Linux returns from such a write only when every byte is written, and meanwhile the reader
//! (often another thread of the same process) drains the pipe. The guest's threads share one
//! host thread ([`super::threads`]), so a host write that blocks would also hold the reader:
//! both hang. Instead, while another thread needs the hart, the write goes in turns: it
//! writes what fits now (a page at a time into a pipe, which POLLOUT guarantees room for;
//! with MSG_DONTWAIT into a socket), keeps the count across turns, and gives way
//! ([`SysError::WouldBlock`]) while nothing fits. It returns when every byte is written, or
//! with the count so far when a signal interrupts it or the reader is gone, as on Linux.

use super::syscall::{errno, host_result, nr, SysError, SysResult};
use super::Process;

/// At most this much goes into a pipe per host write: POLLOUT on a pipe promises one free
/// page, so a write of one page cannot block (and a write of up to PIPE_BUF stays atomic).
const PIPE_CHUNK: usize = 4096;

/// What a descriptor is, for writing in turns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sink {
    Pipe,
    Socket,
}

impl Process {
    /// `write(fd, buf, count)` or `writev(fd, iov, count)` (`number`, args `a`) at `pc`, in
    /// turns when another thread needs the hart (or this call already wrote part of its bytes
    /// in an earlier turn) and `fd` is a blocking pipe, FIFO or socket. `None`: not such a
    /// call; it runs as usual.
    pub(super) fn write_in_turns(
        &mut self,
        pc: u32,
        number: u32,
        a: [u32; 6],
    ) -> Option<SysResult> {
        let before = self.threads.written_before(pc);
        if self.wait_limit.is_none() && before == 0 {
            return None;
        }
        let sink = self.blocking_sink(a[0])?;
        let host = self.fds.host(a[0]).ok()?;
        let iovs = match number {
            nr::WRITE => match self.in_buffer(a[1], a[2]) {
                Ok((ptr, len)) => vec![libc::iovec {
                    iov_base: ptr.cast_mut().cast(),
                    iov_len: len,
                }],
                Err(e) => return Some(Err(e)),
            },
            _ => match self.host_iovecs(a[1], a[2], super::mem::perm::R) {
                Ok(iovs) => iovs,
                Err(e) => return Some(Err(e)),
            },
        };
        let total: u64 = iovs.iter().map(|v| v.iov_len as u64).sum();
        let mut done = before.min(total);
        let result = loop {
            if done == total {
                break Ok(done as u32);
            }
            if !self.writable_now(host) {
                if self.signal_deliverable() {
                    break if done > 0 {
                        Ok(done as u32)
                    } else {
                        Err(errno(libc::EINTR))
                    };
                }
                self.threads.write_gives_way(pc, done);
                return Some(Err(SysError::WouldBlock));
            }
            let limit = match sink {
                Sink::Pipe => PIPE_CHUNK,
                Sink::Socket => usize::MAX,
            };
            let chunk = iovecs_from(&iovs, done as usize, limit);
            match self.write_chunk(host, sink, &chunk) {
                Ok(n) => done += n as u64,
                Err(SysError::Errno(libc::EAGAIN)) => {
                    self.threads.write_gives_way(pc, done);
                    return Some(Err(SysError::WouldBlock));
                }
                Err(SysError::Errno(libc::EPIPE)) if done > 0 => {
                    // Linux raises SIGPIPE and returns the bytes written.
                    let _ = self.check_pipe(Err(errno(libc::EPIPE)));
                    break Ok(done as u32);
                }
                Err(e) if done > 0 => {
                    tracing::debug!(?e, done, "write in turns ends early");
                    break Ok(done as u32);
                }
                Err(e) => break Err(e),
            }
        };
        Some(self.check_pipe(result))
    }

    /// `fd` as a sink that a host write may block on: a pipe, FIFO or socket without
    /// O_NONBLOCK. `None` for anything else (files never block for long, a terminal's
    /// output drains by itself).
    fn blocking_sink(&self, fd: u32) -> Option<Sink> {
        let entry = self.fds.entry(fd).ok()?;
        if entry.kind != super::fs::FdKind::Plain {
            return None;
        }
        let host = self.fds.host(fd).ok()?;
        // SAFETY: fcntl(F_GETFL) only reads the descriptor's flags.
        let flags = unsafe { libc::fcntl(host, libc::F_GETFL) };
        if flags < 0 || flags & libc::O_NONBLOCK != 0 {
            return None;
        }
        // SAFETY: all-zero is a valid stat buffer; fstat only writes it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid descriptor number (or EBADF) and a valid out-pointer.
        if unsafe { libc::fstat(host, &mut st) } != 0 {
            return None;
        }
        match st.st_mode & libc::S_IFMT {
            libc::S_IFIFO => Some(Sink::Pipe),
            libc::S_IFSOCK => Some(Sink::Socket),
            _ => None,
        }
    }

    /// Whether `host` takes bytes now; waits for it until another thread needs the hart (or
    /// for good, when none could run), or until a signal for the guest comes.
    fn writable_now(&mut self, host: i32) -> bool {
        let timeout = self
            .wait_limit
            .map(|_| super::syscall::timespec_of(self.wait_left()));
        let mut poll = libc::pollfd {
            fd: host,
            events: libc::POLLOUT,
            revents: 0,
        };
        let mask = self.signals.mask;
        let ts = timeout
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: one valid pollfd and a valid timespec or NULL (no limit).
        let ready = self.wait_for_signals(mask, |m| unsafe { libc::ppoll(&mut poll, 1, ts, m) });
        // POLLERR/POLLHUP (the reader is gone) count as writable: the write then fails with
        // EPIPE, as it would on Linux.
        matches!(ready, Ok(n) if n > 0)
    }

    /// One host write of `chunk` that cannot block; the bytes written.
    fn write_chunk(&self, host: i32, sink: Sink, chunk: &[libc::iovec]) -> Result<usize, SysError> {
        let n = match sink {
            // SAFETY: the iovecs cover guest memory checked readable (`in_buffer`,
            // `host_iovecs`); the host only reads it.
            Sink::Pipe => unsafe { libc::writev(host, chunk.as_ptr(), chunk.len() as i32) },
            Sink::Socket => {
                // SAFETY: all-zero is a valid msghdr (no name, no control data).
                let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
                msg.msg_iov = chunk.as_ptr().cast_mut();
                msg.msg_iovlen = chunk.len();
                // SAFETY: as above; MSG_NOSIGNAL: EPIPE is the guest's SIGPIPE (check_pipe).
                unsafe { libc::sendmsg(host, &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) }
            }
        };
        host_result(n as i64).map(|n| n as usize)
    }
}

/// The part of `iovs` from byte `skip` on, at most `limit` bytes.
fn iovecs_from(iovs: &[libc::iovec], skip: usize, limit: usize) -> Vec<libc::iovec> {
    let mut skip = skip;
    let mut left = limit;
    let mut out = Vec::new();
    for v in iovs {
        if left == 0 {
            break;
        }
        if skip >= v.iov_len {
            skip -= v.iov_len;
            continue;
        }
        let len = (v.iov_len - skip).min(left);
        out.push(libc::iovec {
            // SAFETY: `skip` < `iov_len`: the pointer stays inside this iovec's buffer.
            iov_base: unsafe { v.iov_base.cast::<u8>().add(skip) }.cast(),
            iov_len: len,
        });
        left -= len;
        skip = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iovecs_from_skips_and_limits_across_buffers() {
        let a = [0u8; 10];
        let b = [0u8; 5];
        let iovs = [
            libc::iovec {
                iov_base: a.as_ptr().cast_mut().cast(),
                iov_len: a.len(),
            },
            libc::iovec {
                iov_base: b.as_ptr().cast_mut().cast(),
                iov_len: b.len(),
            },
        ];
        let lens = |v: &[libc::iovec]| v.iter().map(|v| v.iov_len).collect::<Vec<_>>();
        assert_eq!(lens(&iovecs_from(&iovs, 0, usize::MAX)), [10, 5]);
        assert_eq!(lens(&iovecs_from(&iovs, 4, 8)), [6, 2]);
        assert_eq!(lens(&iovecs_from(&iovs, 10, 100)), [5]);
        assert_eq!(lens(&iovecs_from(&iovs, 12, 100)), [3]);
        assert_eq!(lens(&iovecs_from(&iovs, 15, 100)), Vec::<usize>::new());
        let second = iovecs_from(&iovs, 12, 1);
        assert_eq!(second[0].iov_base as usize, b.as_ptr() as usize + 2);
    }
}
