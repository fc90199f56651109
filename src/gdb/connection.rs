//! The connection to gdb: a TCP stream whose blocking reads give up when the host asks the
//! machine to stop (a signal, the quit key, `--timeout`), so a gdb that holds the guest
//! stopped, or never sends anything, cannot keep rv32vm from stopping.

use std::io::{self, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use gdbstub::conn::{Connection, ConnectionExt};

use crate::exec::platform::HostStopProbe;

/// How often a wait for gdb looks at the host's stop requests.
pub const HOST_STOP_POLL: Duration = Duration::from_millis(100);

/// A gdb connection (see the module documentation).
pub struct GdbConnection {
    stream: TcpStream,
    host_stop: Option<HostStopProbe>,
}

impl GdbConnection {
    pub fn new(stream: TcpStream, host_stop: Option<HostStopProbe>) -> GdbConnection {
        if host_stop.is_some() {
            // Blocking reads wake up this often to look at the probe.
            if let Err(e) = stream.set_read_timeout(Some(HOST_STOP_POLL)) {
                tracing::warn!("gdb: cannot set a read timeout: {e}");
            }
        }
        GdbConnection { stream, host_stop }
    }

    /// The stream itself (for a clone to watch, or to shut down).
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// The probe this connection gives up on.
    pub fn host_stop_probe(&self) -> Option<HostStopProbe> {
        self.host_stop.clone()
    }

    /// Whether the host asked the machine to stop.
    pub fn host_stopping(&self) -> bool {
        self.host_stop.as_ref().is_some_and(|stop| stop())
    }
}

impl Connection for GdbConnection {
    type Error = io::Error;

    fn write(&mut self, byte: u8) -> io::Result<()> {
        Write::write_all(&mut self.stream, &[byte])
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        Write::write_all(&mut self.stream, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Write::flush(&mut self.stream)
    }

    fn on_session_start(&mut self) -> io::Result<()> {
        // Small packets go out at once (gdbstub's advice for TCP).
        self.stream.set_nodelay(true)
    }
}

impl ConnectionExt for GdbConnection {
    fn read(&mut self) -> io::Result<u8> {
        self.stream.set_nonblocking(false)?;
        let mut byte = [0u8];
        loop {
            match Read::read(&mut self.stream, &mut byte) {
                Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
                Ok(_) => return Ok(byte[0]),
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) =>
                {
                    if self.host_stopping() {
                        return Err(io::Error::other("the host stops the machine"));
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn peek(&mut self) -> io::Result<Option<u8>> {
        self.stream.set_nonblocking(true)?;
        let mut byte = [0u8];
        let peeked = match TcpStream::peek(&self.stream, &mut byte) {
            Ok(0) => Err(ErrorKind::UnexpectedEof.into()),
            Ok(_) => Ok(Some(byte[0])),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        };
        self.stream.set_nonblocking(false)?;
        peeked
    }
}
