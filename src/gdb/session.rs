//! One gdb connection: the hart, engine and platform as a `gdbstub` target, and the event loop
//! that runs the guest between gdb's commands.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use gdbstub::common::Signal;
use gdbstub::conn::ConnectionExt;
use gdbstub::stub::run_blocking::{self, BlockingEventLoop};
use gdbstub::stub::{DisconnectReason, GdbStub, SingleThreadStopReason};
use gdbstub::target::ext::base::single_register_access::{
    SingleRegisterAccess, SingleRegisterAccessOps,
};
use gdbstub::target::ext::base::singlethread::{
    SingleThreadBase, SingleThreadResume, SingleThreadResumeOps, SingleThreadSingleStep,
    SingleThreadSingleStepOps,
};
use gdbstub::target::ext::base::BaseOps;
use gdbstub::target::ext::breakpoints::{
    Breakpoints, BreakpointsOps, HwBreakpoint, HwBreakpointOps, HwWatchpoint, HwWatchpointOps,
    SwBreakpoint, SwBreakpointOps, WatchKind,
};
use gdbstub::target::{Target, TargetError, TargetResult};
use gdbstub_arch::riscv::reg::RiscvCoreRegs;

use super::arch::{self, Register, Rv32};
use super::connection::GdbConnection;
use super::platform::{DebugEvent, Debugged, Pausable, Watchpoint};
use crate::cpu::Hart;
use crate::exec::{Engine, Platform, Stop};

/// The exit status of a guest killed from gdb (as by SIGKILL).
const KILLED_STATUS: i32 = 128 + 9;

/// How a session ended.
pub enum SessionEnd {
    /// The guest stopped for good (exit, fatal error, kill, instruction limit): the run is over.
    Finished(Stop),
    /// gdb detached or went away: the guest runs on, and gdb may attach again.
    Detached,
}

/// What gdb asked the guest to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resumption {
    Continue,
    Step,
}

/// The debugged machine as gdb's target.
pub struct Session<'a, P: Platform + 'static> {
    engine: &'a mut Engine,
    hart: &'a mut Hart,
    /// The platform, moved into a wrapper while the guest runs.
    plat: Option<P>,
    pause: Arc<AtomicBool>,
    breakpoints: BTreeSet<u32>,
    watchpoints: Vec<Watchpoint>,
    resumption: Resumption,
    /// The breakpoints the engine's decoded code was split at, if it was built for
    /// [`Debugged`] (otherwise it must be dropped before a debugged run).
    code_split_at: Option<BTreeSet<u32>>,
    /// `hart.instret` at which the run must stop (`--max-insns`).
    limit: Option<u64>,
    /// Why the run is over, once it is.
    finished: Option<Stop>,
    /// Watches the connection for data while the guest runs.
    watcher: InterruptWatcher,
    /// This host process (a user-mode guest's fork must not talk to gdb).
    pid: u32,
    /// Where (pc, instret) a watchpoint stopped an instruction before its access.
    before_watched_access: Option<(u32, u64)>,
    /// Where (pc, instret) gdb resumed the guest, until the first debugged run starts: a
    /// breakpoint there does not stop that run at once.
    resumed_by_gdb: Option<(u32, u64)>,
}

impl<'a, P: Platform + 'static> Session<'a, P> {
    /// Serve gdb on `stream` with the hart stopped; returns the platform and how it ended.
    pub fn serve(
        engine: &'a mut Engine,
        hart: &'a mut Hart,
        plat: P,
        pause: Arc<AtomicBool>,
        limit: Option<u64>,
        conn: GdbConnection,
    ) -> (P, SessionEnd) {
        let watcher = match conn.stream().try_clone() {
            Ok(clone) => InterruptWatcher::spawn(clone, pause.clone()),
            Err(e) => {
                tracing::warn!("gdb: cannot watch the connection for Ctrl-C: {e}");
                InterruptWatcher::none()
            }
        };
        let shutdown = conn.stream().try_clone().ok();
        let mut session = Session {
            engine,
            hart,
            plat: Some(plat),
            pause,
            breakpoints: BTreeSet::new(),
            watchpoints: Vec::new(),
            resumption: Resumption::Continue,
            code_split_at: None,
            limit,
            finished: None,
            watcher,
            pid: std::process::id(),
            before_watched_access: None,
            resumed_by_gdb: None,
        };
        let host_stopping = conn.host_stop_probe();
        let outcome = GdbStub::new(conn).run_blocking::<EventLoop<'_, P>>(&mut session);
        if let Some(s) = shutdown.filter(|_| std::process::id() == session.pid) {
            // Ends the watcher's wait on the socket (not in a forked guest: the socket is the
            // parent's too).
            let _ = s.shutdown(Shutdown::Both);
        }
        session.watcher.stop();
        let end = match outcome {
            Ok(DisconnectReason::Disconnect) => {
                tracing::info!("gdb detached: the guest runs on");
                SessionEnd::Detached
            }
            Ok(DisconnectReason::Kill) => SessionEnd::Finished(Stop::Fatal {
                status: KILLED_STATUS,
                message: "killed from gdb".into(),
            }),
            Ok(DisconnectReason::TargetExited(_) | DisconnectReason::TargetTerminated(_)) => {
                SessionEnd::Finished(session.finished.take().unwrap_or(Stop::Exit(0)))
            }
            Err(e) => match session.finished.take() {
                Some(stop) => SessionEnd::Finished(stop),
                // The run loop takes the host's stop before the guest runs on.
                None if host_stopping.is_some_and(|stop| stop()) => {
                    tracing::info!("the host stops the machine: gdb is disconnected");
                    SessionEnd::Detached
                }
                None => {
                    tracing::warn!("gdb connection lost ({e}): the guest runs on");
                    SessionEnd::Detached
                }
            },
        };
        let plat = session
            .plat
            .take()
            .expect("the platform is back in the session whenever the guest is stopped");
        // Code split for breakpoints is dropped when the engine next runs another platform.
        (plat, end)
    }

    /// Instructions left before `--max-insns` is reached.
    fn remaining(&self) -> Option<u64> {
        self.limit.map(|l| l.saturating_sub(self.hart.instret))
    }

    /// Run at full speed until the platform stops or a pause is requested.
    fn run_free(&mut self) -> Stop {
        let inner = self.take_platform();
        let mut w = Pausable {
            inner,
            pause: self.pause.clone(),
        };
        self.engine.set_one_insn_blocks(self.hart, false);
        let stop = self.engine.run(self.hart, &mut w, self.remaining());
        self.plat = Some(w.inner);
        self.code_split_at = None;
        stop
    }

    /// Run interpreted with breakpoints and watchpoints: one instruction (`stepping`), or until
    /// something stops it.
    fn run_debugged(
        &mut self,
        stepping: bool,
        watch_suspended: bool,
    ) -> (Stop, Option<DebugEvent>) {
        let resumed_by_gdb = self.resumed_by_gdb.take();
        if self.code_split_at.as_ref() != Some(&self.breakpoints) {
            self.engine.flush_code(self.hart);
            self.code_split_at = Some(self.breakpoints.clone());
        }
        self.engine.set_one_insn_blocks(self.hart, stepping);
        if !self.watchpoints.is_empty() {
            // Watched pages must not be reachable through entries cached before.
            self.hart.tlb.flush();
        }
        let inner = self.take_platform();
        let mut d = Debugged::new(inner, self.pause.clone(), self.hart);
        d.breakpoints = self.breakpoints.clone();
        d.watchpoints = self.watchpoints.clone();
        d.stepping = stepping;
        d.watch_suspended = watch_suspended;
        d.ignore_breakpoint_at = resumed_by_gdb;
        let stop = self.engine.run(self.hart, &mut d, self.remaining());
        self.plat = Some(d.inner);
        (stop, d.event)
    }

    fn take_platform(&mut self) -> P {
        self.plat
            .take()
            .expect("the platform is back in the session whenever the guest is stopped")
    }

    /// Run as gdb asked until something gdb must hear about happens.
    fn run_until_event(&mut self) -> Outcome {
        self.resumed_by_gdb = Some((self.hart.pc, self.hart.instret));
        let at_watched_access =
            self.before_watched_access.take() == Some((self.hart.pc, self.hart.instret));
        if at_watched_access && !self.watchpoints.is_empty() {
            // The instruction here was stopped by a watchpoint before its access: run it
            // alone with watchpoints off (gdb itself steps over it with them removed, so this
            // only matters for a client that leaves them in).
            match self.run_debugged(true, true) {
                (Stop::Debug, _) if self.resumption == Resumption::Step => {
                    return Outcome::Stopped(SingleThreadStopReason::DoneStep);
                }
                (Stop::Debug, _) => {}
                (stop, _) => return Outcome::Over(stop),
            }
        }
        if self.resumption == Resumption::Step {
            return match self.run_debugged(true, false) {
                (Stop::Debug, Some(DebugEvent::Watch(w))) => self.watch_hit(w),
                (Stop::Debug, _) => Outcome::Stopped(SingleThreadStopReason::DoneStep),
                (stop, _) => Outcome::Over(stop),
            };
        }
        if self.breakpoints.is_empty() && self.watchpoints.is_empty() {
            return match self.run_free() {
                Stop::Debug => Outcome::Paused,
                stop => Outcome::Over(stop),
            };
        }
        match self.run_debugged(false, false) {
            (Stop::Debug, Some(DebugEvent::Breakpoint)) => {
                Outcome::Stopped(SingleThreadStopReason::SwBreak(()))
            }
            (Stop::Debug, Some(DebugEvent::Watch(w))) => self.watch_hit(w),
            (Stop::Debug, _) => Outcome::Paused,
            (stop, _) => Outcome::Over(stop),
        }
    }

    /// A watchpoint stopped the instruction at pc before its access. gdb's RISC-V target
    /// expects exactly that (its watchpoints are "non-steppable": gdb steps over the
    /// instruction itself, then compares the value).
    fn watch_hit(&mut self, w: Watchpoint) -> Outcome {
        self.before_watched_access = Some((self.hart.pc, self.hart.instret));
        Outcome::Stopped(SingleThreadStopReason::Watch {
            tid: (),
            kind: w.kind,
            addr: w.addr,
        })
    }

    /// The stop reply for a run that is over.
    fn final_reason(&mut self, stop: Stop) -> SingleThreadStopReason<u32> {
        let reason = match &stop {
            Stop::Exit(code) => SingleThreadStopReason::Exited(*code as u8),
            Stop::Fatal { status, .. } if *status > 128 => {
                SingleThreadStopReason::Terminated(Signal((*status - 128) as u8))
            }
            Stop::Fatal { status, .. } => SingleThreadStopReason::Exited(*status as u8),
            Stop::InsnLimit => SingleThreadStopReason::Exited(124),
            Stop::Reset => SingleThreadStopReason::Exited(0),
            Stop::Stats | Stop::Debug | Stop::Pause => SingleThreadStopReason::Exited(0),
        };
        self.finished = Some(stop);
        reason
    }
}

/// What running the guest for gdb came to.
enum Outcome {
    /// Stopped where gdb wanted (breakpoint, watchpoint, step).
    Stopped(SingleThreadStopReason<u32>),
    /// A pause request stopped it: maybe gdb's Ctrl-C, maybe not.
    Paused,
    /// The run is over.
    Over(Stop),
}

/// gdbstub's blocking event loop for a [`Session`].
struct EventLoop<'a, P>(std::marker::PhantomData<&'a mut P>);

impl<'a, P: Platform + 'static> BlockingEventLoop for EventLoop<'a, P> {
    type Target = Session<'a, P>;
    type Connection = GdbConnection;
    type StopReason = SingleThreadStopReason<u32>;

    fn wait_for_stop_reason(
        target: &mut Session<'a, P>,
        conn: &mut GdbConnection,
    ) -> Result<
        run_blocking::Event<SingleThreadStopReason<u32>>,
        run_blocking::WaitForStopReasonError<&'static str, std::io::Error>,
    > {
        loop {
            target.pause.store(false, Ordering::Relaxed);
            target.watcher.arm();
            let outcome = target.run_until_event();
            if std::process::id() != target.pid {
                // A user-mode guest forked: the child must leave gdb to its parent (and keep
                // a final stop of its own, such as its exit).
                if let Outcome::Over(stop) = outcome {
                    target.finished = Some(stop);
                }
                return Err(run_blocking::WaitForStopReasonError::Target(
                    "a forked guest process leaves gdb to its parent",
                ));
            }
            match outcome {
                Outcome::Stopped(reason) => {
                    return Ok(run_blocking::Event::TargetStopped(reason));
                }
                Outcome::Over(Stop::Stats) => {
                    crate::report_stats(target.engine, target.hart);
                }
                Outcome::Over(stop) => {
                    let reason = target.final_reason(stop);
                    return Ok(run_blocking::Event::TargetStopped(reason));
                }
                Outcome::Paused => {
                    let pending = conn
                        .peek()
                        .map_err(run_blocking::WaitForStopReasonError::Connection)?;
                    if pending.is_some() {
                        let byte = conn
                            .read()
                            .map_err(run_blocking::WaitForStopReasonError::Connection)?;
                        return Ok(run_blocking::Event::IncomingData(byte));
                    }
                    // A pause with nothing from gdb (a late wake-up, or another client
                    // knocking): go on.
                }
            }
        }
    }

    fn on_interrupt(
        _target: &mut Session<'a, P>,
    ) -> Result<Option<SingleThreadStopReason<u32>>, &'static str> {
        Ok(Some(SingleThreadStopReason::Signal(Signal::SIGINT)))
    }
}

impl<P: Platform + 'static> Target for Session<'_, P> {
    type Arch = Rv32;
    type Error = &'static str;

    #[inline(always)]
    fn base_ops(&mut self) -> BaseOps<'_, Rv32, &'static str> {
        BaseOps::SingleThread(self)
    }

    #[inline(always)]
    fn support_breakpoints(&mut self) -> Option<BreakpointsOps<'_, Self>> {
        Some(self)
    }
}

impl<P: Platform + 'static> SingleThreadBase for Session<'_, P> {
    fn read_registers(&mut self, regs: &mut RiscvCoreRegs<u32>) -> TargetResult<(), Self> {
        regs.x = self.hart.x;
        regs.pc = self.hart.pc;
        Ok(())
    }

    fn write_registers(&mut self, regs: &RiscvCoreRegs<u32>) -> TargetResult<(), Self> {
        self.hart.x = regs.x;
        self.hart.x[0] = 0;
        self.hart.pc = regs.pc & !1;
        Ok(())
    }

    #[inline(always)]
    fn support_single_register_access(&mut self) -> Option<SingleRegisterAccessOps<'_, (), Self>> {
        Some(self)
    }

    fn read_addrs(&mut self, start: u32, data: &mut [u8]) -> TargetResult<usize, Self> {
        let plat = self.plat.as_mut().ok_or(TargetError::NonFatal)?;
        let n = plat.debug_read(self.hart, start, data);
        if n == 0 && !data.is_empty() {
            return Err(TargetError::Errno(14)); // EFAULT
        }
        Ok(n)
    }

    fn write_addrs(&mut self, start: u32, data: &[u8]) -> TargetResult<(), Self> {
        let plat = self.plat.as_mut().ok_or(TargetError::NonFatal)?;
        let n = plat.debug_write(self.hart, start, data);
        // Decoded code may hold the old bytes.
        self.engine.flush_code(self.hart);
        self.code_split_at = None;
        if n < data.len() {
            return Err(TargetError::Errno(14));
        }
        Ok(())
    }

    #[inline(always)]
    fn support_resume(&mut self) -> Option<SingleThreadResumeOps<'_, Self>> {
        Some(self)
    }
}

impl<P: Platform + 'static> SingleRegisterAccess<()> for Session<'_, P> {
    fn read_register(
        &mut self,
        _tid: (),
        reg: Register,
        buf: &mut [u8],
    ) -> TargetResult<usize, Self> {
        let bytes = arch::read(self.hart, reg).ok_or(TargetError::NonFatal)?;
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn write_register(&mut self, _tid: (), reg: Register, val: &[u8]) -> TargetResult<(), Self> {
        if arch::write(self.hart, reg, val) {
            Ok(())
        } else {
            Err(TargetError::NonFatal)
        }
    }
}

impl<P: Platform + 'static> SingleThreadResume for Session<'_, P> {
    fn resume(&mut self, _signal: Option<Signal>) -> Result<(), &'static str> {
        // Signals are not passed to the guest: gdb's Ctrl-C is the debugger's own.
        self.resumption = Resumption::Continue;
        Ok(())
    }

    #[inline(always)]
    fn support_single_step(&mut self) -> Option<SingleThreadSingleStepOps<'_, Self>> {
        Some(self)
    }
}

impl<P: Platform + 'static> SingleThreadSingleStep for Session<'_, P> {
    fn step(&mut self, _signal: Option<Signal>) -> Result<(), &'static str> {
        self.resumption = Resumption::Step;
        Ok(())
    }
}

impl<P: Platform + 'static> Breakpoints for Session<'_, P> {
    #[inline(always)]
    fn support_sw_breakpoint(&mut self) -> Option<SwBreakpointOps<'_, Self>> {
        Some(self)
    }

    #[inline(always)]
    fn support_hw_breakpoint(&mut self) -> Option<HwBreakpointOps<'_, Self>> {
        Some(self)
    }

    #[inline(always)]
    fn support_hw_watchpoint(&mut self) -> Option<HwWatchpointOps<'_, Self>> {
        Some(self)
    }
}

impl<P: Platform + 'static> SwBreakpoint for Session<'_, P> {
    fn add_sw_breakpoint(&mut self, addr: u32, _kind: usize) -> TargetResult<bool, Self> {
        self.breakpoints.insert(addr);
        Ok(true)
    }

    fn remove_sw_breakpoint(&mut self, addr: u32, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.breakpoints.remove(&addr))
    }
}

impl<P: Platform + 'static> HwBreakpoint for Session<'_, P> {
    fn add_hw_breakpoint(&mut self, addr: u32, _kind: usize) -> TargetResult<bool, Self> {
        self.breakpoints.insert(addr);
        Ok(true)
    }

    fn remove_hw_breakpoint(&mut self, addr: u32, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.breakpoints.remove(&addr))
    }
}

impl<P: Platform + 'static> HwWatchpoint for Session<'_, P> {
    fn add_hw_watchpoint(
        &mut self,
        addr: u32,
        len: u32,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        self.watchpoints.push(Watchpoint { addr, len, kind });
        Ok(true)
    }

    fn remove_hw_watchpoint(
        &mut self,
        addr: u32,
        len: u32,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        let wanted = Watchpoint { addr, len, kind };
        match self.watchpoints.iter().position(|w| *w == wanted) {
            Some(i) => {
                self.watchpoints.remove(i);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// A thread that sets the pause flag when gdb sends something while the guest runs (Ctrl-C):
/// armed before each run, it waits on the socket (without consuming anything) and disarms
/// itself once it has seen data.
struct InterruptWatcher {
    state: Option<Arc<WatcherState>>,
}

#[derive(Default)]
struct WatcherState {
    /// (armed, stopping)
    flags: Mutex<(bool, bool)>,
    wake: Condvar,
}

impl InterruptWatcher {
    fn none() -> InterruptWatcher {
        InterruptWatcher { state: None }
    }

    fn spawn(stream: TcpStream, pause: Arc<AtomicBool>) -> InterruptWatcher {
        let state = Arc::new(WatcherState::default());
        let shared = state.clone();
        let spawned = std::thread::Builder::new()
            .name("gdb-interrupt".into())
            .spawn(move || watch(stream, pause, &shared));
        match spawned {
            Ok(_) => InterruptWatcher { state: Some(state) },
            Err(e) => {
                tracing::warn!("gdb: cannot watch the connection for Ctrl-C: {e}");
                InterruptWatcher::none()
            }
        }
    }

    /// Before the guest runs: clear the pause flag's stale state and watch for data.
    fn arm(&self) {
        if let Some(state) = &self.state {
            let mut flags = state.flags.lock().unwrap_or_else(|p| p.into_inner());
            flags.0 = true;
            state.wake.notify_all();
        }
    }

    fn stop(&self) {
        if let Some(state) = &self.state {
            let mut flags = state.flags.lock().unwrap_or_else(|p| p.into_inner());
            flags.1 = true;
            state.wake.notify_all();
        }
    }
}

/// The watcher thread's loop.
fn watch(stream: TcpStream, pause: Arc<AtomicBool>, state: &WatcherState) {
    let mut probe = [0u8; 1];
    loop {
        {
            let mut flags = state.flags.lock().unwrap_or_else(|p| p.into_inner());
            while !flags.0 && !flags.1 {
                flags = state.wake.wait(flags).unwrap_or_else(|p| p.into_inner());
            }
            if flags.1 {
                return;
            }
        }
        match stream.peek(&mut probe) {
            // The main thread reads with the socket non-blocking now and then.
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            outcome => {
                // Data, end of stream or an error: the main thread finds out which.
                let closed = matches!(outcome, Ok(0) | Err(_));
                let mut flags = state.flags.lock().unwrap_or_else(|p| p.into_inner());
                flags.0 = false;
                if !flags.1 {
                    pause.store(true, Ordering::Relaxed);
                }
                if closed {
                    return;
                }
            }
        }
    }
}
