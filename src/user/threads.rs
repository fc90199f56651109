//! Guest threads: `clone` with CLONE_VM|CLONE_THREAD (`pthread_create`). They are green
//! threads. The VM runs on one host thread and the engine on one hart, so a thread switch
//! stores the running thread's registers and loads another's into the hart: between blocks once
//! the running thread has used its time slice ([`TIME_SLICE`] instructions), and in the
//! syscalls that give way (a futex wait, a sleep, `sched_yield`, a thread's `exit`, and a
//! syscall that would block the host thread: a read of an empty pipe or terminal, a write to
//! a full pipe (a long write goes in turns, [`super::long_write`]),
//! `ppoll`/`pselect6`/`epoll_pwait` with nothing ready, a socket's accept, receive or send,
//! `wait4`/`waitid` with no child to report, `rt_sigsuspend` and `rt_sigtimedwait` with no
//! signal, which runs again on the thread's next turn). With one host
//! thread every guest load, store and atomic sequence is as atomic as on one CPU, an LR/SC
//! pair loses its reservation at a switch (as the kernel's trap return makes an SC fail), and
//! a run depends only on its inputs.
//!
//! Each thread has its own signal mask (a thread that exits blocks every signal first, as
//! musl's `pthread_exit` does, and that must not outlive it) and its own pending signals: one
//! sent to a thread (`tkill`, `tgkill`, `rt_tgsigqueueinfo`: `pthread_kill`, `pthread_cancel`)
//! waits for that thread. A signal a parked thread would take (its own, or one for the process
//! that the running thread blocks) ends that thread's futex wait or sleep with EINTR, as a
//! signal interrupts a blocking call on Linux; a thread whose call gave way finds the signal
//! when the call runs again, and the call fails with EINTR or restarts as on Linux. Not
//! modelled: other host syscalls that block (an `open` of a FIFO, a `connect` that waits)
//! hold every thread.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::signal::{SigInfo, SignalState, ThreadSignals};
use crate::cpu::Hart;

/// Instructions a thread runs before the next runnable thread gets the hart (about 0.1 ms
/// of compiled code). A thread that spins on a flag another thread sets (a spin lock, a
/// busy-wait hand-off) spins for its whole slice: a ping-pong of 2000 hand-offs took 1.9 s
/// under `auto` with 2^20, 0.25 s with 2^17, 0.14 s with 2^16 (qemu-riscv32, whose threads
/// run in parallel: 2 ms); four compute-bound threads took 2% longer with 2^17 than with
/// 2^20, 4% with 2^16 (a switch costs about 0.4 us).
pub const TIME_SLICE: u64 = 1 << 17;

/// A futex wait: the thread sleeps until a wake on `uaddr` matching `bitset`, or until
/// `deadline`, when its syscall returns `on_timeout` (a sleep is a wait with an empty
/// bitset, which no wake matches), or until a signal interrupts it (EINTR; a sleep then writes
/// the time left to `rem`, if not 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FutexWait {
    pub uaddr: u32,
    pub bitset: u32,
    pub deadline: Option<Instant>,
    pub on_timeout: u32,
    pub rem: u32,
}

impl FutexWait {
    /// A futex wait on `uaddr` (ETIMEDOUT at `deadline`).
    pub fn futex(uaddr: u32, bitset: u32, deadline: Option<Instant>) -> FutexWait {
        FutexWait {
            uaddr,
            bitset,
            deadline,
            on_timeout: (-libc::ETIMEDOUT) as u32,
            rem: 0,
        }
    }

    /// A sleep until `deadline` (the syscall then returns 0); interrupted, it writes the time
    /// left to `rem` (if not 0).
    pub fn sleep(deadline: Instant, rem: u32) -> FutexWait {
        FutexWait {
            uaddr: 0,
            bitset: 0,
            deadline: Some(deadline),
            on_timeout: 0,
            rem,
        }
    }
}

/// A sleep a signal cut short: the guest's `rem` timespec gets the time `left`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SleepLeft {
    pub rem: u32,
    pub left: Duration,
}

/// What the running syscall asks of the scheduler once its result is in the hart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveWay {
    /// Sleep in a futex wait (the syscall's result, 0, is what a wake returns).
    Wait(FutexWait),
    /// `sched_yield`: the next runnable thread runs, this one stays runnable.
    Yield,
    /// The syscall would block ([`super::syscall::SysError::WouldBlock`]): as `Yield`, with pc
    /// at the ecall, which runs again on the thread's next turn.
    Retry,
    /// The thread ended (`exit`); its `clear_child_tid` was handled.
    Exit,
}

/// A thread that is not running: its registers and what it waits for.
#[derive(Clone, Debug)]
struct Parked {
    tid: u32,
    clear_child_tid: u32,
    x: [u32; 32],
    f: [u64; 32],
    pc: u32,
    fflags: u8,
    frm: u8,
    signals: ThreadSignals,
    wait: Option<FutexWait>,
    retry: Option<Retry>,
    written: Option<Written>,
    /// Its syscall gave way ([`GiveWay::Retry`]): pc is at the ecall that runs again.
    at_retry: bool,
}

/// A poll-style syscall with a timeout that gave way ([`super::syscall::SysError::WouldBlock`])
/// and runs again: the ecall at `pc` times out at `deadline`, however often it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Retry {
    pc: u32,
    deadline: Instant,
}

/// A write that gave way with part of its bytes written ([`super::long_write`]): the ecall at
/// `pc` has written `done` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Written {
    pc: u32,
    done: u64,
}

impl Parked {
    fn wakes_on(&self, uaddr: u32, bitset: u32) -> bool {
        self.wait
            .is_some_and(|w| w.uaddr == uaddr && w.bitset & bitset != 0)
    }

    /// A signal this thread takes ends its wait, if it waits: the call fails with EINTR.
    fn interrupt(&mut self) -> Option<SleepLeft> {
        let wait = self.wait.take()?;
        self.x[10] = (-libc::EINTR) as u32;
        (wait.rem != 0).then(|| SleepLeft {
            rem: wait.rem,
            left: wait.deadline.map_or(Duration::ZERO, |d| {
                d.saturating_duration_since(Instant::now())
            }),
        })
    }
}

/// The process's threads: the running one (whose registers are in the hart) and the others.
#[derive(Debug)]
pub struct Threads {
    /// The running thread's id (the process id for the first thread).
    tid: u32,
    /// Where the running thread's id is cleared (and a futex woken) when it exits.
    clear_child_tid: u32,
    /// The other threads, in round-robin order.
    parked: VecDeque<Parked>,
    next_tid: u32,
    /// `hart.instret` at which the running thread gives way, if another is runnable (never
    /// while there is one thread: the run loop's check costs one compare).
    pub slice_end: u64,
    give_way: Option<GiveWay>,
    /// The running thread's syscall that gave way and will run again, if it has a timeout.
    retry: Option<Retry>,
    /// The running thread's write that gave way part-written, if any.
    written: Option<Written>,
    /// The running thread was parked at a syscall that gave way, at this pc: no signal is
    /// delivered before that ecall runs again (the call itself sees it and fails with EINTR
    /// or restarts, as a blocking call interrupted on Linux).
    resumes_syscall_at: Option<u32>,
    /// The warning that every thread waits for good was given (once per process).
    warned_stuck: bool,
}

impl Threads {
    /// One thread, whose id is the process id `pid`.
    pub fn new(pid: u32) -> Threads {
        Threads {
            tid: pid,
            clear_child_tid: 0,
            parked: VecDeque::new(),
            next_tid: pid.wrapping_add(1),
            slice_end: u64::MAX,
            give_way: None,
            retry: None,
            written: None,
            resumes_syscall_at: None,
            warned_stuck: false,
        }
    }

    /// Only the running thread goes on, as process `pid` (after `fork` in the child, and
    /// after `execve`).
    pub fn keep_only_running(&mut self, pid: u32) {
        *self = Threads::new(pid);
    }

    /// The running thread's id.
    pub fn tid(&self) -> u32 {
        self.tid
    }

    /// Whether `tid` is a thread of this process.
    pub fn has(&self, tid: u32) -> bool {
        tid == self.tid || self.parked.iter().any(|p| p.tid == tid)
    }

    /// Whether the running thread is not the only one.
    /// How many threads the process has, the running one included.
    pub fn count(&self) -> usize {
        self.parked.len() + 1
    }

    pub fn has_others(&self) -> bool {
        !self.parked.is_empty()
    }

    /// Until when the running thread may wait on the host in a syscall without holding up
    /// another thread: now if another is runnable, else the first deadline of the others'
    /// waits; `None` if no other thread could run before something this one does wakes it.
    /// A syscall that would wait longer gives way instead
    /// ([`super::syscall::SysError::WouldBlock`]).
    pub fn others_need_hart_at(&self) -> Option<Instant> {
        if self.parked.iter().any(|p| p.wait.is_none()) {
            return Some(Instant::now());
        }
        self.parked
            .iter()
            .filter_map(|p| p.wait.and_then(|w| w.deadline))
            .min()
    }

    /// The deadline of the running thread's call at `pc` with a timeout of `timeout` from
    /// now: the one it was given when this call first gave way, if it did.
    pub fn retry_deadline(&self, pc: u32, timeout: Duration) -> Instant {
        match self.retry {
            Some(r) if r.pc == pc => r.deadline,
            _ => deadline_after(timeout),
        }
    }

    /// Whether the running thread's call at `pc` has a retry deadline that has passed.
    pub fn retry_passed(&self, pc: u32) -> bool {
        self.retry
            .is_some_and(|r| r.pc == pc && r.deadline <= Instant::now())
    }

    /// The running thread's call at `pc` gives way and will time out at `deadline`.
    pub fn retry_until(&mut self, pc: u32, deadline: Instant) {
        self.retry = Some(Retry { pc, deadline });
    }

    /// The running thread's syscall finished: the next one starts afresh.
    pub fn end_retry(&mut self) {
        self.retry = None;
        self.written = None;
    }

    /// The bytes the running thread's write at `pc` wrote in its earlier turns (0 for a new
    /// write).
    pub fn written_before(&self, pc: u32) -> u64 {
        self.written.filter(|w| w.pc == pc).map_or(0, |w| w.done)
    }

    /// The running thread's write at `pc` gives way with `done` bytes written.
    pub fn write_gives_way(&mut self, pc: u32, done: u64) {
        self.written = Some(Written { pc, done });
    }

    /// Whether the running thread is about to run again, at `pc`, a syscall that gave way
    /// (signals wait for that call, which sees them itself).
    pub fn resumes_syscall_at(&self, pc: u32) -> bool {
        self.resumes_syscall_at == Some(pc)
    }

    /// A syscall of the running thread starts.
    pub fn syscall_started(&mut self) {
        self.resumes_syscall_at = None;
    }

    /// `tkill` of parked thread `tid`: `signo` (not ignored: the caller checks) waits for that
    /// thread, and ends its wait if its mask lets the signal through. `Err` if `tid` is not
    /// parked; the sleep cut short, if any, in the `Ok`.
    pub fn raise_for(
        &mut self,
        tid: u32,
        signo: i32,
        info: SigInfo,
    ) -> Result<Option<SleepLeft>, ()> {
        let p = self.parked.iter_mut().find(|p| p.tid == tid).ok_or(())?;
        p.signals.raise(signo, info);
        Ok(if p.signals.would_take(1 << (signo - 1)) {
            p.interrupt()
        } else {
            None
        })
    }

    /// Process-wide pending signals `set` that the running thread blocks: if no runnable
    /// parked thread would take one, the first waiting thread that would is interrupted (Linux
    /// wakes one thread that does not block the signal). Returns the sleep cut short, if any.
    pub fn wake_to_take(&mut self, set: u64) -> Option<SleepLeft> {
        if self
            .parked
            .iter()
            .any(|p| p.wait.is_none() && p.signals.would_take(set))
        {
            return None;
        }
        self.parked
            .iter_mut()
            .find(|p| p.wait.is_some() && p.signals.would_take(set))
            .and_then(Parked::interrupt)
    }

    /// `signo` is ignored now: parked threads drop it too.
    pub fn discard_signal(&mut self, signo: i32) {
        for p in self.parked.iter_mut() {
            p.signals.pending.discard(signo);
        }
    }

    /// `set_tid_address`: where the running thread's id is cleared when it exits.
    pub fn set_clear_child_tid(&mut self, addr: u32) {
        self.clear_child_tid = addr;
    }

    /// The running thread's `clear_child_tid` (0: none).
    pub fn clear_child_tid(&self) -> u32 {
        self.clear_child_tid
    }

    /// A new thread that starts where the running one returns from `clone` (the ecall at
    /// `hart.pc`), with `clone` returning 0, on `stack` (if not 0), with `tls` (if any) in
    /// `tp` and the running thread's signal mask `sigmask`. Returns its id.
    pub fn spawn(
        &mut self,
        hart: &Hart,
        stack: u32,
        tls: Option<u32>,
        clear_child_tid: u32,
        sigmask: u64,
    ) -> u32 {
        let tid = self.unused_tid();
        let mut child = Parked {
            tid,
            clear_child_tid,
            x: hart.x,
            f: hart.f,
            pc: hart.pc.wrapping_add(4),
            fflags: hart.fflags,
            frm: hart.frm,
            signals: ThreadSignals::with_mask(sigmask),
            wait: None,
            retry: None,
            written: None,
            at_retry: false,
        };
        child.x[10] = 0;
        if stack != 0 {
            child.x[2] = stack;
        }
        if let Some(tls) = tls {
            child.x[4] = tls;
        }
        self.parked.push_back(child);
        if self.slice_end == u64::MAX {
            self.slice_end = hart.instret.saturating_add(TIME_SLICE);
        }
        tid
    }

    fn unused_tid(&mut self) -> u32 {
        loop {
            let tid = self.next_tid;
            self.next_tid = self.next_tid.wrapping_add(1).max(2);
            if tid > 1 && !self.has(tid) {
                return tid;
            }
        }
    }

    /// Wake up to `n` threads waiting on `uaddr` with a bit of `bitset`; returns how many.
    pub fn wake(&mut self, uaddr: u32, bitset: u32, n: u32) -> u32 {
        let mut woken = 0;
        for p in self.parked.iter_mut() {
            if woken >= n {
                break;
            }
            if p.wakes_on(uaddr, bitset) {
                p.wait = None;
                woken += 1;
            }
        }
        woken
    }

    /// `FUTEX_REQUEUE`: wake up to `wake` waiters on `uaddr`, move up to `requeue` of the
    /// others to `uaddr2`; returns (woken, moved).
    pub fn requeue(&mut self, uaddr: u32, wake: u32, uaddr2: u32, requeue: u32) -> (u32, u32) {
        let woken = self.wake(uaddr, u32::MAX, wake);
        let mut moved = 0;
        for p in self.parked.iter_mut() {
            if moved >= requeue {
                break;
            }
            if let Some(w) = p.wait.as_mut().filter(|w| w.uaddr == uaddr) {
                w.uaddr = uaddr2;
                moved += 1;
            }
        }
        (woken, moved)
    }

    /// Ask the scheduler to give way once the running syscall has its result in the hart.
    pub fn give_way(&mut self, how: GiveWay) {
        self.give_way = Some(how);
    }

    /// What the syscall just finished asked for, if anything.
    pub fn take_give_way(&mut self) -> Option<GiveWay> {
        self.give_way.take()
    }

    /// Between blocks, the time slice is used up: the next runnable thread runs, if any (its
    /// signal state replaces the running thread's in `signals`). Returns whether one did.
    pub fn preempt(&mut self, hart: &mut Hart, signals: &mut SignalState) -> bool {
        self.expire_deadlines(Instant::now());
        if !self.parked.iter().any(|p| p.wait.is_none()) {
            self.slice_end = hart.instret.saturating_add(TIME_SLICE);
            return false;
        }
        self.switch(hart, None, false, signals);
        true
    }

    /// The running thread gives way as `how` says (a syscall's [`GiveWay`]); the thread that
    /// runs next has its registers in `hart` and its signal state in `signals`.
    pub fn switch_after_syscall(
        &mut self,
        hart: &mut Hart,
        how: GiveWay,
        signals: &mut SignalState,
    ) {
        match how {
            GiveWay::Wait(wait) => self.switch(hart, Some(wait), false, signals),
            GiveWay::Yield => self.switch(hart, None, false, signals),
            GiveWay::Retry => self.switch(hart, None, true, signals),
            GiveWay::Exit => {
                let next = self.next_to_run();
                self.load(hart, next, signals);
            }
        }
    }

    /// Park the running thread (waiting for `wait`, if any; `at_retry`: its syscall gave way)
    /// and run the next one.
    fn switch(
        &mut self,
        hart: &mut Hart,
        wait: Option<FutexWait>,
        at_retry: bool,
        signals: &mut SignalState,
    ) {
        let running = Parked {
            tid: self.tid,
            clear_child_tid: self.clear_child_tid,
            x: hart.x,
            f: hart.f,
            pc: hart.pc,
            fflags: hart.fflags,
            frm: hart.frm,
            signals: signals.park_thread(),
            wait,
            retry: self.retry,
            written: self.written,
            at_retry,
        };
        self.parked.push_back(running);
        let next = self.next_to_run();
        self.load(hart, next, signals);
    }

    /// Take the next thread to run out of the parked ones: the first runnable one, else the
    /// one whose wait times out first (after sleeping until then). When every thread waits
    /// with no deadline, nothing could ever wake them: the first one's wait ends with EINTR
    /// (futex waits may end spuriously; the caller checks its condition again), as a lone
    /// thread's wait always did.
    fn next_to_run(&mut self) -> Parked {
        self.expire_deadlines(Instant::now());
        if let Some(i) = self.parked.iter().position(|p| p.wait.is_none()) {
            return self.parked.remove(i).expect("index from position");
        }
        let earliest = self
            .parked
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.wait.and_then(|w| w.deadline).map(|d| (d, i)))
            .min();
        let index = match earliest {
            Some((deadline, i)) => {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                self.expire_deadlines(deadline.max(Instant::now()));
                i
            }
            None => {
                if !self.warned_stuck {
                    self.warned_stuck = true;
                    tracing::warn!("every guest thread waits on a futex that nothing can wake");
                }
                let p = &mut self.parked[0];
                p.wait = None;
                p.x[10] = (-libc::EINTR) as u32;
                0
            }
        };
        self.parked.remove(index).expect("index of a parked thread")
    }

    /// Waits whose deadline is at or before `now` end (with their `on_timeout` result).
    fn expire_deadlines(&mut self, now: Instant) {
        for p in self.parked.iter_mut() {
            if let Some(w) = p.wait.filter(|w| w.deadline.is_some_and(|d| d <= now)) {
                p.wait = None;
                p.x[10] = w.on_timeout;
            }
        }
    }

    /// Run `next`: its registers into the hart, its signal state into `signals`.
    fn load(&mut self, hart: &mut Hart, next: Parked, signals: &mut SignalState) {
        hart.x = next.x;
        hart.f = next.f;
        hart.pc = next.pc;
        hart.fflags = next.fflags;
        hart.frm = next.frm;
        hart.reservation = None;
        self.tid = next.tid;
        self.clear_child_tid = next.clear_child_tid;
        self.retry = next.retry;
        self.written = next.written;
        self.resumes_syscall_at = next.at_retry.then_some(next.pc);
        self.slice_end = if self.parked.is_empty() {
            u64::MAX
        } else {
            hart.instret.saturating_add(TIME_SLICE)
        };
        signals.run_thread(next.signals);
    }
}

/// The instant `d` from now; a guest's timeout too long for an `Instant` (which panics on
/// overflow) waits a century instead.
pub fn deadline_after(d: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    let now = Instant::now();
    now.checked_add(d.min(CENTURY)).unwrap_or(now)
}

/// The deadline of a futex wait with timeout `t`: relative for FUTEX_WAIT, else absolute on
/// CLOCK_MONOTONIC, or on CLOCK_REALTIME when `realtime`.
pub fn futex_deadline(t: &libc::timespec, relative: bool, realtime: bool) -> Instant {
    let t = Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    );
    if relative {
        return deadline_after(t);
    }
    let clock = if realtime {
        libc::CLOCK_REALTIME
    } else {
        libc::CLOCK_MONOTONIC
    };
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    let clock_now = Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    );
    deadline_after(t.saturating_sub(clock_now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hart_at(pc: u32) -> Hart {
        let mut hart = Hart::new();
        hart.pc = pc;
        hart
    }

    /// The running thread's signal state with mask `mask` (tests leave host signals alone).
    fn signals_with_mask(mask: u64) -> SignalState {
        let mut signals = SignalState::default();
        signals.set_mask(mask);
        signals
    }

    #[test]
    fn a_futex_wait_gives_the_hart_to_the_next_thread_and_a_wake_brings_it_back() {
        let mut threads = Threads::new(100);
        let mut hart = hart_at(0x1000);
        hart.x[2] = 0x8000;
        let child = threads.spawn(&hart, 0x4000, Some(0x5000), 0x6000, 0b100);
        assert_eq!(child, 101);
        assert!(threads.slice_end < u64::MAX);
        // The parent returns from clone with the child's id; then waits on a futex.
        hart.x[10] = child;
        hart.pc += 4;
        let wait = FutexWait::futex(0x6000, u32::MAX, None);
        let mut signals = signals_with_mask(0b10);
        threads.switch_after_syscall(&mut hart, GiveWay::Wait(wait), &mut signals);
        assert_eq!(signals.mask, 0b100);
        assert_eq!(threads.tid(), 101);
        assert_eq!(
            (hart.pc, hart.x[2], hart.x[4], hart.x[10]),
            (0x1004, 0x4000, 0x5000, 0)
        );
        assert_eq!(threads.clear_child_tid(), 0x6000);
        // A wake on another address or bitset finds nobody.
        assert_eq!(threads.wake(0x6004, u32::MAX, 1), 0);
        assert_eq!(threads.wake(0x6000, u32::MAX, 1), 1);
        signals.set_mask(!0);
        threads.switch_after_syscall(&mut hart, GiveWay::Exit, &mut signals);
        assert_eq!(signals.mask, 0b10);
        assert_eq!(threads.tid(), 100);
        assert_eq!((hart.pc, hart.x[2], hart.x[10]), (0x1004, 0x8000, child));
        assert!(!threads.has_others());
        assert_eq!(threads.slice_end, u64::MAX);
    }

    #[test]
    fn preemption_rotates_runnable_threads_and_skips_waiting_ones() {
        let mut threads = Threads::new(7);
        let mut hart = hart_at(0x100);
        let mut signals = SignalState::default();
        let a = threads.spawn(&hart, 0, None, 0, 0);
        let b = threads.spawn(&hart, 0, None, 0, 0);
        hart.instret = threads.slice_end;
        assert!(threads.preempt(&mut hart, &mut signals));
        assert_eq!(threads.tid(), a);
        // `a` waits; preemption of `b` goes to the first thread, never to `a`.
        threads.switch_after_syscall(
            &mut hart,
            GiveWay::Wait(FutexWait::futex(4, 1, None)),
            &mut signals,
        );
        assert_eq!(threads.tid(), b);
        threads.preempt(&mut hart, &mut signals);
        assert_eq!(threads.tid(), 7);
        threads.preempt(&mut hart, &mut signals);
        assert_eq!(threads.tid(), b);
        // FUTEX_REQUEUE moves `a` to another word; a wake there finds it.
        assert_eq!(threads.requeue(4, 0, 8, 1), (0, 1));
        assert_eq!(threads.wake(8, 2, 1), 0, "bitsets do not meet");
        assert_eq!(threads.wake(8, 1, 5), 1);
    }

    #[test]
    fn a_wait_with_a_deadline_times_out_when_nothing_else_can_run() {
        let mut threads = Threads::new(1);
        let mut hart = hart_at(0);
        let mut signals = SignalState::default();
        threads.spawn(&hart, 0, None, 0, 0);
        threads.switch_after_syscall(&mut hart, GiveWay::Exit, &mut signals);
        let deadline = Instant::now() + Duration::from_millis(5);
        threads.switch_after_syscall(
            &mut hart,
            GiveWay::Wait(FutexWait::futex(0, u32::MAX, Some(deadline))),
            &mut signals,
        );
        // The waiter was the only thread left: it times out and runs.
        assert_eq!(hart.x[10], (-libc::ETIMEDOUT) as u32);
        assert!(Instant::now() >= deadline);
    }

    #[test]
    fn a_call_that_gave_way_keeps_its_deadline_across_switches_and_only_its_own() {
        let mut threads = Threads::new(100);
        let mut hart = hart_at(0x1000);
        let mut signals = SignalState::default();
        assert_eq!(threads.others_need_hart_at(), None);
        threads.spawn(&hart, 0x4000, None, 0, 0);
        // The new thread is runnable: the running one may not wait on the host at all.
        assert!(threads
            .others_need_hart_at()
            .is_some_and(|t| t <= Instant::now()));
        let deadline = threads.retry_deadline(0x1000, Duration::from_secs(5));
        threads.retry_until(0x1000, deadline);
        threads.switch_after_syscall(&mut hart, GiveWay::Yield, &mut signals);
        assert_eq!(threads.tid(), 101);
        // The other thread has no retry of its own.
        let fresh = threads.retry_deadline(0x1000, Duration::from_secs(60));
        assert!(fresh > deadline);
        threads.switch_after_syscall(&mut hart, GiveWay::Yield, &mut signals);
        assert_eq!((threads.tid(), hart.pc), (100, 0x1000));
        // The same ecall runs again: same deadline, whatever timeout it reads now.
        assert_eq!(
            threads.retry_deadline(0x1000, Duration::from_secs(60)),
            deadline
        );
        // Another ecall, or the same one after the call ended, starts afresh.
        assert!(threads.retry_deadline(0x2000, Duration::from_secs(60)) > deadline);
        threads.end_retry();
        assert!(threads.retry_deadline(0x1000, Duration::from_secs(60)) > deadline);
    }

    #[test]
    fn a_timeout_too_long_for_an_instant_is_a_century() {
        let far = deadline_after(Duration::MAX);
        assert!(far > Instant::now() + Duration::from_secs(99 * 365 * 24 * 3600));
        let t = libc::timespec {
            tv_sec: i64::MAX,
            tv_nsec: 999_999_999,
        };
        assert!(futex_deadline(&t, true, false) > Instant::now());
        assert!(futex_deadline(&t, false, true) > Instant::now());
    }

    #[test]
    fn others_need_the_hart_at_the_first_deadline_of_their_waits() {
        let mut threads = Threads::new(100);
        let mut hart = hart_at(0x1000);
        let mut signals = SignalState::default();
        threads.spawn(&hart, 0x4000, None, 0, 0);
        threads.spawn(&hart, 0x4000, None, 0, 0);
        let later = Instant::now() + Duration::from_secs(30);
        // The running thread (100) sleeps until `later`; 101 runs and waits on a futex with
        // no deadline; 102 runs: the others need the hart at `later`.
        threads.switch_after_syscall(
            &mut hart,
            GiveWay::Wait(FutexWait::sleep(later, 0)),
            &mut signals,
        );
        assert_eq!(threads.tid(), 101);
        let wait = FutexWait::futex(0x6000, u32::MAX, None);
        threads.switch_after_syscall(&mut hart, GiveWay::Wait(wait), &mut signals);
        assert_eq!(threads.tid(), 102);
        assert_eq!(threads.others_need_hart_at(), Some(later));
        // 102 sleeps briefly: every thread waits, 102's sleep ends first and it runs on.
        let soon = Instant::now() + Duration::from_millis(20);
        threads.switch_after_syscall(
            &mut hart,
            GiveWay::Wait(FutexWait::sleep(soon, 0)),
            &mut signals,
        );
        assert_eq!(threads.tid(), 102);
        assert!(Instant::now() >= soon);
        assert_eq!(threads.others_need_hart_at(), Some(later));
    }

    #[test]
    fn a_signal_for_a_parked_thread_waits_for_it_and_ends_its_wait_unless_blocked() {
        let usr1 = 1u64 << 9;
        let mut threads = Threads::new(100);
        let mut hart = hart_at(0x1000);
        let mut signals = SignalState::default();
        let blocking = threads.spawn(&hart, 0, None, 0, usr1);
        let sleeping = threads.spawn(&hart, 0, None, 0, 0);
        // 100 yields; `blocking` waits on a futex; `sleeping` sleeps 5 s.
        let wait = FutexWait::futex(0x6000, u32::MAX, None);
        threads.switch_after_syscall(&mut hart, GiveWay::Yield, &mut signals);
        assert_eq!(threads.tid(), blocking);
        threads.switch_after_syscall(&mut hart, GiveWay::Wait(wait), &mut signals);
        assert_eq!(threads.tid(), sleeping);
        hart.x[10] = 0;
        let later = Instant::now() + Duration::from_secs(5);
        threads.switch_after_syscall(
            &mut hart,
            GiveWay::Wait(FutexWait::sleep(later, 0x7000)),
            &mut signals,
        );
        assert_eq!(threads.tid(), 100);
        let info = SigInfo::default();
        // `blocking` blocks SIGUSR1: the signal waits for it, its wait goes on.
        assert_eq!(threads.raise_for(blocking, 10, info), Ok(None));
        assert!(threads
            .parked
            .iter()
            .any(|p| p.tid == blocking && p.wait.is_some()));
        // `sleeping` does not: its sleep ends with EINTR and the time left for `rem`.
        let cut = threads.raise_for(sleeping, 10, info).unwrap().unwrap();
        assert_eq!(cut.rem, 0x7000);
        assert!(cut.left > Duration::from_secs(4) && cut.left <= Duration::from_secs(5));
        assert_eq!(threads.raise_for(555, 10, info), Err(()));
        // The sleeper runs next, with its signal pending for it alone.
        threads.switch_after_syscall(&mut hart, GiveWay::Yield, &mut signals);
        assert_eq!(threads.tid(), sleeping);
        assert_eq!(hart.x[10], (-libc::EINTR) as u32);
        let own = signals.park_thread();
        assert_eq!((own.mask, own.pending.bits), (0, usr1));
    }

    #[test]
    fn a_process_signal_the_running_thread_blocks_wakes_one_thread_that_takes_it() {
        let usr2 = 1u64 << 11;
        let mut threads = Threads::new(100);
        let mut hart = hart_at(0x1000);
        let mut signals = SignalState::default();
        let blocks_it = threads.spawn(&hart, 0, None, 0, usr2);
        let takes_it = threads.spawn(&hart, 0, None, 0, 0);
        let wait = FutexWait::futex(0x6000, u32::MAX, None);
        threads.switch_after_syscall(&mut hart, GiveWay::Yield, &mut signals);
        threads.switch_after_syscall(&mut hart, GiveWay::Wait(wait), &mut signals);
        threads.switch_after_syscall(&mut hart, GiveWay::Wait(wait), &mut signals);
        assert_eq!(threads.tid(), 100);
        assert!(threads.parked.iter().all(|p| p.wait.is_some()));
        assert_eq!(threads.wake_to_take(usr2), None);
        let woken: Vec<u32> = threads
            .parked
            .iter()
            .filter(|p| p.wait.is_none())
            .map(|p| p.tid)
            .collect();
        assert_eq!(woken, [takes_it]);
        assert!(threads
            .parked
            .iter()
            .any(|p| p.tid == blocks_it && p.wait.is_some()));
        // Runnable now, it will take the signal on its turn: nothing more is woken.
        assert_eq!(threads.wake_to_take(usr2), None);
        assert!(threads
            .parked
            .iter()
            .any(|p| p.tid == blocks_it && p.wait.is_some()));
    }

    #[test]
    fn a_thread_whose_call_gave_way_resumes_at_that_call_until_a_syscall_starts() {
        let mut threads = Threads::new(100);
        let mut hart = hart_at(0x1000);
        let mut signals = SignalState::default();
        threads.spawn(&hart, 0, None, 0, 0);
        threads.switch_after_syscall(&mut hart, GiveWay::Retry, &mut signals);
        assert!(
            !threads.resumes_syscall_at(hart.pc),
            "the new thread was not in a call"
        );
        threads.switch_after_syscall(&mut hart, GiveWay::Yield, &mut signals);
        assert_eq!((threads.tid(), hart.pc), (100, 0x1000));
        assert!(threads.resumes_syscall_at(0x1000));
        assert!(!threads.resumes_syscall_at(0x1004));
        threads.syscall_started();
        assert!(!threads.resumes_syscall_at(0x1000));
    }
}
