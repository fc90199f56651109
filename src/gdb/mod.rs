//! The GDB stub (`--gdb [HOST:]PORT`, `--gdb-wait`): gdb's remote protocol over TCP, served by
//! the `gdbstub` crate, for every kind of run (user mode, bare metal, the full machine).
//!
//! How the engine is driven (docs/architecture.md, "Debugging"):
//! - Without gdb attached, or attached with no breakpoint, watchpoint or step pending, the
//!   guest runs at full speed in every tier on [`platform::Pausable`]: one relaxed flag load
//!   between blocks, set when gdb attaches or sends Ctrl-C. A run without `--gdb` does not
//!   even pay that.
//! - With breakpoints or watchpoints, the engine interprets on [`platform::Debugged`]: blocks
//!   end before each breakpoint, which is checked at block entry (guest memory is never
//!   written); pages holding a watched address are never cached in the TLB, so every access to
//!   them reaches the watchpoint check, which stops the instruction before its access (pc at
//!   it, not retired): gdb's RISC-V watchpoints are "non-steppable", gdb steps over the
//!   instruction itself with the watchpoints removed, then compares the value.
//! - A step runs one-instruction blocks interpreted and stops once one instruction retired or
//!   a trap was taken (no interrupt is taken during a step).
//! - Memory reads and writes go through the hart's current translation without side effects
//!   ([`crate::exec::Platform::debug_read`]).

mod arch;
mod connection;
mod platform;
mod session;

use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;

use crate::cpu::Hart;
use crate::exec::platform::HostStopProbe;
use crate::exec::{Engine, Platform, Stop};
use connection::{GdbConnection, HOST_STOP_POLL};
use platform::Pausable;
use session::{Session, SessionEnd};

/// The host gdb listens on when `--gdb` names only a port.
pub const DEFAULT_HOST: &str = "127.0.0.1";

/// What the user asked for on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GdbOptions {
    /// `HOST:PORT` or `PORT`.
    pub address: String,
    /// Stop before the first instruction until gdb attaches and continues.
    pub wait: bool,
}

/// The stub could not start.
#[derive(Debug, thiserror::Error)]
pub enum GdbError {
    /// `--gdb` is not `PORT` or `HOST:PORT`.
    #[error("--gdb {0:?}: expected PORT or HOST:PORT (e.g. 1234 or 127.0.0.1:1234)")]
    BadAddress(String),
    /// The host name does not resolve.
    #[error("--gdb {address:?}: cannot resolve the host: {source}")]
    Resolve {
        /// The address as given.
        address: String,
        /// The resolver's error.
        source: std::io::Error,
    },
    /// The port cannot be listened on (in use, privileged, no such local address).
    #[error("--gdb {address}: cannot listen: {source}")]
    Listen {
        /// The address tried.
        address: String,
        /// Why the bind failed.
        source: std::io::Error,
    },
}

/// Parse `--gdb`: `PORT` (on [`DEFAULT_HOST`]) or `HOST:PORT`, `[V6]:PORT`.
pub fn parse_address(text: &str) -> Result<(String, u16), GdbError> {
    let bad = || GdbError::BadAddress(text.to_string());
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) => (host.trim_start_matches('[').trim_end_matches(']'), port),
        None => (DEFAULT_HOST, text),
    };
    if host.is_empty() {
        return Err(bad());
    }
    let port: u16 = port.parse().map_err(|_| bad())?;
    Ok((host.to_string(), port))
}

/// A listening stub: gdb may attach whenever the guest runs.
pub struct GdbServer {
    address: SocketAddr,
    /// Stop before the first instruction (`--gdb-wait`); cleared once used.
    wait_first: bool,
    /// Set by the accept thread (gdb attaching) and by a session's watcher (Ctrl-C).
    pause: Arc<AtomicBool>,
    /// Connections the accept thread took.
    incoming: Receiver<TcpStream>,
}

impl GdbServer {
    /// Listen as `opts` says; connections are accepted in the background from now on.
    pub fn listen(opts: &GdbOptions) -> Result<GdbServer, GdbError> {
        let (host, port) = parse_address(&opts.address)?;
        let addresses: Vec<SocketAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|source| GdbError::Resolve {
                address: opts.address.clone(),
                source,
            })?
            .collect();
        let listener = TcpListener::bind(&addresses[..]).map_err(|source| GdbError::Listen {
            address: format!("{host}:{port}"),
            source,
        })?;
        let address = listener.local_addr().map_err(|source| GdbError::Listen {
            address: format!("{host}:{port}"),
            source,
        })?;
        let pause = Arc::new(AtomicBool::new(false));
        let (sender, incoming) = mpsc::channel();
        let knock = pause.clone();
        std::thread::Builder::new()
            .name("gdb-accept".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    match stream {
                        Ok(stream) => {
                            tracing::info!("gdb connected from {:?}", stream.peer_addr().ok());
                            if sender.send(stream).is_err() {
                                return;
                            }
                            knock.store(true, Ordering::Relaxed);
                        }
                        Err(e) => tracing::warn!("gdb: accept failed: {e}"),
                    }
                }
            })
            .map_err(|source| GdbError::Listen {
                address: address.to_string(),
                source,
            })?;
        tracing::info!("gdb stub listening on {address}");
        Ok(GdbServer {
            address,
            wait_first: opts.wait,
            pause,
            incoming,
        })
    }

    /// The address the stub listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Run `hart` on `plat` like [`Engine::run`], serving gdb whenever it attaches; returns the
    /// platform and why the run stopped (never [`Stop::Debug`]).
    pub fn run<P: Platform + 'static>(
        &mut self,
        engine: &mut Engine,
        hart: &mut Hart,
        plat: P,
        max_insns: Option<u64>,
    ) -> (P, Stop) {
        let limit = max_insns.map(|n| hart.instret.saturating_add(n));
        let mut plat = plat;
        // A signal, the quit key or `--timeout` must end the wait for gdb and a session that
        // holds the guest stopped, as they end a run.
        let host_stop = plat.host_stop_probe();
        loop {
            let stream = if std::mem::take(&mut self.wait_first) {
                eprintln!(
                    "rv32vm: waiting for gdb on {} (target remote {})",
                    self.address, self.address
                );
                match self.wait_for_client(host_stop.as_ref()) {
                    Some(stream) => stream,
                    // The run loop takes the host's stop before the guest runs.
                    None => continue,
                }
            } else {
                self.pause.store(false, Ordering::Relaxed);
                match self.incoming.try_recv() {
                    Ok(stream) => stream,
                    Err(_) => {
                        let remaining = limit.map(|l| l.saturating_sub(hart.instret));
                        let mut free = Pausable {
                            inner: plat,
                            pause: self.pause.clone(),
                        };
                        let stop = engine.run(hart, &mut free, remaining);
                        plat = free.inner;
                        match stop {
                            Stop::Debug => continue,
                            stop => return (plat, stop),
                        }
                    }
                }
            };
            let (back, end) = Session::serve(
                engine,
                hart,
                plat,
                self.pause.clone(),
                limit,
                GdbConnection::new(stream, host_stop.clone()),
            );
            plat = back;
            match end {
                SessionEnd::Finished(stop) => return (plat, stop),
                SessionEnd::Detached => continue,
            }
        }
    }
}

impl GdbServer {
    /// Wait for a gdb connection; `None` if the host asked to stop first (or the listener
    /// thread is gone).
    fn wait_for_client(&self, host_stop: Option<&HostStopProbe>) -> Option<TcpStream> {
        loop {
            match self.incoming.recv_timeout(HOST_STOP_POLL) {
                Ok(stream) => return Some(stream),
                Err(RecvTimeoutError::Timeout) if !host_stop.is_some_and(|stop| stop()) => {}
                Err(_) => return None,
            }
        }
    }
}

/// Run `hart` on `plat`: under `gdb` when the user asked for a stub, else on the engine alone.
pub fn run<P: Platform + 'static>(
    gdb: Option<&mut GdbServer>,
    engine: &mut Engine,
    hart: &mut Hart,
    plat: P,
    max_insns: Option<u64>,
) -> (P, Stop) {
    match gdb {
        Some(server) => server.run(engine, hart, plat, max_insns),
        None => {
            let mut plat = plat;
            let stop = engine.run(hart, &mut plat, max_insns);
            (plat, stop)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_a_port_or_host_and_port() {
        assert_eq!(parse_address("1234").unwrap(), ("127.0.0.1".into(), 1234));
        assert_eq!(parse_address("0.0.0.0:99").unwrap(), ("0.0.0.0".into(), 99));
        assert_eq!(parse_address("[::1]:99").unwrap(), ("::1".into(), 99));
        for bad in ["", "x", ":12", "host:", "1:99999", "-1"] {
            assert!(parse_address(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_busy_port_is_a_clear_error() {
        let first = GdbServer::listen(&GdbOptions {
            address: "127.0.0.1:0".into(),
            wait: false,
        })
        .expect("listen on a free port");
        let taken = first.address().to_string();
        let second = GdbServer::listen(&GdbOptions {
            address: taken.clone(),
            wait: false,
        });
        match second {
            Err(e @ GdbError::Listen { .. }) => {
                assert!(e.to_string().contains(&taken), "{e}")
            }
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("a second listener on {taken}"),
        }
    }
}
