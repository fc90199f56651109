//! RISC-V semihosting: a bare-metal program asks the host for console and file I/O, the time,
//! its command line and its exit, as under `qemu-system-riscv32 -semihosting`. Libraries
//! built for it (picolibc's `--oslib=semihost`, newlib's librdimon) need nothing else.
//!
//! A call is an `ebreak` between two marker no-ops, all three uncompressed:
//! `slli x0, x0, 0x1f; ebreak; srai x0, x0, 7`. `a0` holds the operation, `a1` its argument
//! (mostly the address of a block of 32-bit words), and the result comes back in `a0`. The
//! operations and their numbers are Arm's semihosting 2.0 ones, with the RV32 word size; the
//! results follow QEMU's implementation, including its extensions (`:semihosting-features`,
//! `SYS_EXIT_EXTENDED`, stdout and stderr through `:tt`).
//!
//! Files are the host's, named relative to the current directory, as under QEMU: semihosting
//! is a debugging interface that trusts the program. `SYS_SYSTEM` (run a host command) is the
//! one operation refused.
//!
//! `rv32vm run --bare` always serves these calls; `rv32vm boot --semihosting` serves them on
//! the machine, as QEMU's `-semihosting`.

use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::ram::GuestRam;
use crate::cpu::{Exception, Hart, Priv, Trap};

/// `slli x0, x0, 0x1f`, the word before the `ebreak` of a semihosting call.
pub const ENTRY_MARKER: u32 = 0x01f0_1013;
/// The uncompressed `ebreak`.
pub const EBREAK: u32 = 0x0010_0073;
/// `srai x0, x0, 7`, the word after the `ebreak`.
pub const EXIT_MARKER: u32 = 0x4070_5013;

/// Whether the little-endian code bytes `code` contain a semihosting call sequence (at any
/// 2-byte alignment, as compressed code may leave it).
pub fn contains_call(code: &[u8]) -> bool {
    let mut pattern = [0u8; 12];
    for (chunk, word) in pattern
        .chunks_mut(4)
        .zip([ENTRY_MARKER, EBREAK, EXIT_MARKER])
    {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    code.windows(pattern.len()).step_by(2).any(|w| w == pattern)
}

/// Operation numbers (Arm semihosting 2.0).
mod op {
    pub const OPEN: u32 = 0x01;
    pub const CLOSE: u32 = 0x02;
    pub const WRITEC: u32 = 0x03;
    pub const WRITE0: u32 = 0x04;
    pub const WRITE: u32 = 0x05;
    pub const READ: u32 = 0x06;
    pub const READC: u32 = 0x07;
    pub const ISERROR: u32 = 0x08;
    pub const ISTTY: u32 = 0x09;
    pub const SEEK: u32 = 0x0a;
    pub const FLEN: u32 = 0x0c;
    pub const TMPNAM: u32 = 0x0d;
    pub const REMOVE: u32 = 0x0e;
    pub const RENAME: u32 = 0x0f;
    pub const CLOCK: u32 = 0x10;
    pub const TIME: u32 = 0x11;
    pub const SYSTEM: u32 = 0x12;
    pub const ERRNO: u32 = 0x13;
    pub const GET_CMDLINE: u32 = 0x15;
    pub const HEAPINFO: u32 = 0x16;
    pub const EXIT: u32 = 0x18;
    pub const EXIT_EXTENDED: u32 = 0x20;
    pub const ELAPSED: u32 = 0x30;
    pub const TICKFREQ: u32 = 0x31;
}

/// `SYS_EXIT`'s reason for a normal end of the program.
const ADP_STOPPED_APPLICATION_EXIT: u32 = 0x2_0026;
/// What `:semihosting-features` reads: magic, then feature byte 0 (SYS_EXIT_EXTENDED, and
/// stdout/stderr through `:tt`).
const FEATURES: &[u8] = b"SHFB\x03";
/// Longest NUL-terminated string read from the guest (SYS_WRITE0).
const MAX_STRING: usize = 1 << 20;
/// Largest single transfer (SYS_READ, SYS_WRITE): longer ones are done in pieces.
const CHUNK: usize = 1 << 20;
/// Where `SYS_WRITEC` and `SYS_WRITE0` write: stderr, as QEMU's semihosting console without a
/// chardev, so a program's stdout (`:tt` opened for writing) stays its own.
const CONSOLE_OUT: Stream = Stream::Stderr;
/// `SYS_ISERROR`'s and the error results' "-1".
const FAILED: u32 = u32::MAX;

/// Whether `trap` is a semihosting call: a breakpoint on the uncompressed `ebreak` between
/// the two marker instructions, outside U-mode (as QEMU takes them).
pub fn is_call(ram: &mut GuestRam, hart: &Hart, trap: Trap) -> bool {
    if trap.cause != Exception::Breakpoint as u32 || hart.prv == Priv::User {
        return false;
    }
    let mut words = [0u8; 12];
    let start = hart.pc.wrapping_sub(4);
    ram.debug_read(hart, start, &mut words) == words.len()
        && words
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .eq([ENTRY_MARKER, EBREAK, EXIT_MARKER])
}

/// Serve the semihosting call at `hart.pc` (see [`is_call`]): `a0` gets the result and the
/// hart goes on after the `ebreak`, or the outcome is the program's exit.
pub fn serve(semihosting: &mut Semihosting, ram: &mut GuestRam, hart: &mut Hart) -> Outcome {
    let (operation, arg) = (hart.x[10], hart.x[11]);
    let outcome = semihosting.call(&mut HartMemory { ram, hart }, operation, arg);
    if let Outcome::Return(value) = outcome {
        hart.x[10] = value;
        hart.pc = hart.pc.wrapping_add(4);
    }
    outcome
}

/// A call's view of guest memory: virtual addresses through the hart's translation, writes
/// dropping code they change.
struct HartMemory<'a> {
    ram: &'a mut GuestRam,
    hart: &'a mut Hart,
}

impl GuestMemory for HartMemory<'_> {
    fn read(&mut self, va: u32, buf: &mut [u8]) -> bool {
        self.ram.debug_read(self.hart, va, buf) == buf.len()
    }

    fn write(&mut self, va: u32, data: &[u8]) -> bool {
        self.ram.write_for_hart(self.hart, va, data) == data.len()
    }
}

/// The guest memory a call reads and writes (virtual addresses, as the program sees them).
pub trait GuestMemory {
    /// Read `buf.len()` bytes at `va`; false if any of them is not readable memory.
    fn read(&mut self, va: u32, buf: &mut [u8]) -> bool;
    /// Write `data` at `va`; false if any of it is not writable memory.
    fn write(&mut self, va: u32, data: &[u8]) -> bool;
}

/// Where the console streams go: the process's own, or buffers in tests.
pub trait Console {
    fn write(&mut self, stream: Stream, data: &[u8]) -> std::io::Result<usize>;
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize>;
    fn is_tty(&self, stream: Stream) -> bool;
}

/// One of the three console streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdin,
    Stdout,
    Stderr,
}

/// The process's standard streams.
pub struct HostConsole;

impl Console for HostConsole {
    fn write(&mut self, stream: Stream, data: &[u8]) -> std::io::Result<usize> {
        match stream {
            Stream::Stderr => std::io::stderr().write_all(data),
            _ => {
                let mut out = std::io::stdout().lock();
                out.write_all(data).and_then(|()| out.flush())
            }
        }
        .map(|()| data.len())
    }

    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        std::io::stdin().lock().read(buf)
    }

    fn is_tty(&self, stream: Stream) -> bool {
        match stream {
            Stream::Stdin => std::io::stdin().is_terminal(),
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }
}

/// An open semihosting handle.
enum Handle {
    Console(Stream),
    File(File),
    /// `:semihosting-features`, with the read position.
    Features(usize),
}

/// What a call asks of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Go on after the call with this value in `a0`.
    Return(u32),
    /// The program ends with this exit status.
    Exit(i32),
}

/// The heap and stack a program learns from `SYS_HEAPINFO`: as QEMU reports them, the heap
/// from the end of the loaded image to the end of RAM and the stack from the end of RAM down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapInfo {
    pub heap_base: u32,
    pub heap_limit: u32,
}

/// The host side of semihosting for one program.
pub struct Semihosting {
    /// Handle `n` is `handles[n - 1]`: handles start at 1, as 0 is not a valid one.
    handles: Vec<Option<Handle>>,
    /// The host errno of the last call that failed (`SYS_ERRNO`).
    errno: i32,
    started: Instant,
    cmdline: String,
    heap: HeapInfo,
    console: Box<dyn Console>,
}

impl std::fmt::Debug for Semihosting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semihosting")
            .field("cmdline", &self.cmdline)
            .field("open_handles", &self.handles.iter().flatten().count())
            .finish_non_exhaustive()
    }
}

impl Semihosting {
    /// Semihosting for a program started with `cmdline` (what `SYS_GET_CMDLINE` returns),
    /// its console on the process's standard streams.
    pub fn new(cmdline: String, heap: HeapInfo) -> Semihosting {
        Semihosting::with_console(cmdline, heap, Box::new(HostConsole))
    }

    pub fn with_console(cmdline: String, heap: HeapInfo, console: Box<dyn Console>) -> Self {
        Semihosting {
            handles: Vec::new(),
            errno: 0,
            started: Instant::now(),
            cmdline,
            heap,
            console,
        }
    }

    /// Perform operation `operation` with argument `arg` (`a0` and `a1` at the call).
    pub fn call(&mut self, mem: &mut dyn GuestMemory, operation: u32, arg: u32) -> Outcome {
        match self.dispatch(mem, operation, arg) {
            Ok(outcome) => outcome,
            Err(errno) => {
                self.errno = errno;
                Outcome::Return(FAILED)
            }
        }
    }

    fn dispatch(
        &mut self,
        mem: &mut dyn GuestMemory,
        operation: u32,
        arg: u32,
    ) -> Result<Outcome, i32> {
        // Field `i` of the argument block.
        let field = |mem: &mut dyn GuestMemory, i: u32| -> Result<u32, i32> {
            let mut word = [0u8; 4];
            if mem.read(arg.wrapping_add(4 * i), &mut word) {
                Ok(u32::from_le_bytes(word))
            } else {
                Err(libc::EFAULT)
            }
        };
        // The name whose address and length are fields `i` and `i + 1`.
        let name = |mem: &mut dyn GuestMemory, i: u32| -> Result<Vec<u8>, i32> {
            let (at, len) = (field(mem, i)?, field(mem, i + 1)?);
            read_bytes(mem, at, len)
        };
        let ret = |v: u32| Ok(Outcome::Return(v));
        match operation {
            op::OPEN => {
                let (name, mode, len) = (field(mem, 0)?, field(mem, 1)?, field(mem, 2)?);
                let name = read_bytes(mem, name, len)?;
                let handle = self.open(&name, mode)?;
                self.handles.push(Some(handle));
                ret(self.handles.len() as u32)
            }
            op::CLOSE => {
                let handle = field(mem, 0)?;
                self.handle(handle)?;
                self.handles[handle as usize - 1] = None;
                while matches!(self.handles.last(), Some(None)) {
                    self.handles.pop();
                }
                ret(0)
            }
            op::WRITEC => {
                let mut byte = [0u8];
                if !mem.read(arg, &mut byte) {
                    return Err(libc::EFAULT);
                }
                let _ = self.console.write(CONSOLE_OUT, &byte);
                ret(0)
            }
            op::WRITE0 => {
                let text = read_string(mem, arg)?;
                let _ = self.console.write(CONSOLE_OUT, &text);
                ret(0)
            }
            op::WRITE => {
                let (handle, buf, len) = (field(mem, 0)?, field(mem, 1)?, field(mem, 2)?);
                // The result is the number of bytes not written; an error writes none.
                let written = self.write(mem, handle, buf, len).unwrap_or_else(|e| {
                    self.errno = e;
                    0
                });
                ret(len - written)
            }
            op::READ => {
                let (handle, buf, len) = (field(mem, 0)?, field(mem, 1)?, field(mem, 2)?);
                let read = self.read(mem, handle, buf, len).unwrap_or_else(|e| {
                    self.errno = e;
                    0
                });
                ret(len - read)
            }
            op::READC => {
                let mut byte = [0u8];
                match self.console.read(&mut byte) {
                    Ok(1) => ret(byte[0] as u32),
                    Ok(_) => Err(0),
                    Err(e) => Err(errno_of(&e)),
                }
            }
            op::ISERROR => ret(((field(mem, 0)? as i32) < 0) as u32),
            op::ISTTY => {
                let stream = match self.handle(field(mem, 0)?)? {
                    Handle::Console(stream) => Some(*stream),
                    Handle::File(file) => return ret(file.is_terminal() as u32),
                    Handle::Features(_) => None,
                };
                let tty = stream.is_some_and(|s| self.console.is_tty(s));
                ret(tty as u32)
            }
            op::SEEK => {
                let (handle, pos) = (field(mem, 0)?, field(mem, 1)?);
                match self.handle(handle)? {
                    Handle::File(file) => {
                        file.seek(SeekFrom::Start(pos as u64))
                            .map_err(|e| errno_of(&e))?;
                    }
                    Handle::Features(at) => *at = (pos as usize).min(FEATURES.len()),
                    Handle::Console(_) => return Err(libc::ESPIPE),
                }
                ret(0)
            }
            op::FLEN => {
                let len = match self.handle(field(mem, 0)?)? {
                    Handle::File(file) => file.metadata().map_err(|e| errno_of(&e))?.len(),
                    Handle::Features(_) => FEATURES.len() as u64,
                    Handle::Console(_) => 0,
                };
                u32::try_from(len).map_or(Err(libc::EOVERFLOW), ret)
            }
            op::TMPNAM => {
                let (buf, id, len) = (field(mem, 0)?, field(mem, 1)?, field(mem, 2)?);
                let name = format!("/tmp/rv32vm-{:x}{:02x}\0", std::process::id(), id & 0xff);
                if name.len() > len as usize {
                    return ret(FAILED);
                }
                write_all(mem, buf, name.as_bytes())?;
                ret(0)
            }
            op::REMOVE => {
                std::fs::remove_file(host_path(&name(mem, 0)?)).map_err(|e| errno_of(&e))?;
                ret(0)
            }
            op::RENAME => {
                let (from, to) = (name(mem, 0)?, name(mem, 2)?);
                std::fs::rename(host_path(&from), host_path(&to)).map_err(|e| errno_of(&e))?;
                ret(0)
            }
            op::CLOCK => ret((self.started.elapsed().as_millis() / 10) as u32),
            op::TIME => {
                let now = SystemTime::now().duration_since(UNIX_EPOCH);
                ret(now.map_or(0, |d| d.as_secs() as u32))
            }
            op::SYSTEM => {
                tracing::warn!("semihosting: SYS_SYSTEM (run a host command) refused");
                Err(libc::ENOSYS)
            }
            op::ERRNO => ret(self.errno as u32),
            op::GET_CMDLINE => {
                let (buf, size) = (field(mem, 0)?, field(mem, 1)?);
                let mut text = self.cmdline.clone().into_bytes();
                text.push(0);
                if text.len() > size as usize {
                    return Err(libc::E2BIG);
                }
                write_all(
                    mem,
                    arg.wrapping_add(4),
                    &(text.len() as u32 - 1).to_le_bytes(),
                )?;
                write_all(mem, buf, &text)?;
                ret(0)
            }
            op::HEAPINFO => {
                let block = field(mem, 0)?;
                let HeapInfo {
                    heap_base,
                    heap_limit,
                } = self.heap;
                let words = [heap_base, heap_limit, heap_limit, heap_base];
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                write_all(mem, block, &bytes)?;
                ret(0)
            }
            // On RV32, SYS_EXIT's argument is the reason itself, not a block.
            op::EXIT => Ok(Outcome::Exit((arg != ADP_STOPPED_APPLICATION_EXIT) as i32)),
            op::EXIT_EXTENDED => {
                let (reason, code) = (field(mem, 0)?, field(mem, 1)?);
                Ok(Outcome::Exit(if reason == ADP_STOPPED_APPLICATION_EXIT {
                    code as i32
                } else {
                    1
                }))
            }
            op::ELAPSED => {
                let ticks = self.started.elapsed().as_nanos() as u64;
                write_all(mem, arg, &ticks.to_le_bytes())?;
                ret(0)
            }
            op::TICKFREQ => ret(1_000_000_000),
            _ => {
                tracing::warn!("semihosting: unknown operation {operation:#x}");
                Err(libc::ENOSYS)
            }
        }
    }

    /// The open handle `handle`, or EBADF.
    fn handle(&mut self, handle: u32) -> Result<&mut Handle, i32> {
        (handle as usize)
            .checked_sub(1)
            .and_then(|i| self.handles.get_mut(i))
            .and_then(Option::as_mut)
            .ok_or(libc::EBADF)
    }

    /// `SYS_OPEN` of `name` with `mode` (0-11: "r", "rb", "r+", "r+b", "w", ... "a+b").
    fn open(&mut self, name: &[u8], mode: u32) -> Result<Handle, i32> {
        if mode >= 12 {
            return Err(libc::EINVAL);
        }
        match name {
            b":tt" => Ok(Handle::Console(match mode {
                0..4 => Stream::Stdin,
                4..8 => Stream::Stdout,
                _ => Stream::Stderr,
            })),
            b":semihosting-features" if mode < 2 => Ok(Handle::Features(0)),
            b":semihosting-features" => Err(libc::EACCES),
            _ => {
                let plus = mode & 2 != 0;
                let mut options = OpenOptions::new();
                match mode / 4 {
                    0 => options.read(true).write(plus),
                    1 => options.write(true).read(plus).create(true).truncate(true),
                    _ => options.append(true).read(plus).create(true),
                };
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
                options
                    .open(host_path(name))
                    .map(Handle::File)
                    .map_err(|e| errno_of(&e))
            }
        }
    }

    /// Write `len` bytes at guest `buf` to `handle`; returns how many were written.
    fn write(
        &mut self,
        mem: &mut dyn GuestMemory,
        handle: u32,
        buf: u32,
        len: u32,
    ) -> Result<u32, i32> {
        let mut done = 0u32;
        while done < len {
            let piece = (len - done).min(CHUNK as u32);
            let data = read_bytes(mem, buf.wrapping_add(done), piece)?;
            let n = match self.handle(handle)? {
                Handle::Console(Stream::Stdin) | Handle::Features(_) => return Err(libc::EBADF),
                Handle::Console(stream) => {
                    let stream = *stream;
                    self.console.write(stream, &data)
                }
                Handle::File(file) => file.write(&data),
            }
            .map_err(|e| errno_of(&e))?;
            done += n as u32;
            if n < data.len() {
                break;
            }
        }
        Ok(done)
    }

    /// Read up to `len` bytes from `handle` into guest `buf`; returns how many were read.
    fn read(
        &mut self,
        mem: &mut dyn GuestMemory,
        handle: u32,
        buf: u32,
        len: u32,
    ) -> Result<u32, i32> {
        let mut data = vec![0u8; (len as usize).min(CHUNK)];
        let n = match self.handle(handle)? {
            Handle::Console(Stream::Stdin) => self.console.read(&mut data),
            Handle::Console(_) => return Err(libc::EBADF),
            Handle::File(file) => file.read(&mut data),
            Handle::Features(at) => {
                let rest = &FEATURES[*at..];
                let n = rest.len().min(data.len());
                data[..n].copy_from_slice(&rest[..n]);
                *at += n;
                Ok(n)
            }
        }
        .map_err(|e| errno_of(&e))?;
        write_all(mem, buf, &data[..n])?;
        Ok(n as u32)
    }
}

/// The host path a guest names with `name` (bytes, relative to the current directory).
fn host_path(name: &[u8]) -> &Path {
    Path::new(std::ffi::OsStr::from_bytes(name))
}

fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// `len` bytes of guest memory at `va`.
fn read_bytes(mem: &mut dyn GuestMemory, va: u32, len: u32) -> Result<Vec<u8>, i32> {
    if len as usize > CHUNK {
        return Err(libc::ENAMETOOLONG);
    }
    let mut buf = vec![0u8; len as usize];
    if mem.read(va, &mut buf) {
        Ok(buf)
    } else {
        Err(libc::EFAULT)
    }
}

fn write_all(mem: &mut dyn GuestMemory, va: u32, data: &[u8]) -> Result<(), i32> {
    if mem.write(va, data) {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// The NUL-terminated string at `va` (without the NUL).
fn read_string(mem: &mut dyn GuestMemory, va: u32) -> Result<Vec<u8>, i32> {
    let mut text = Vec::new();
    let mut at = va;
    loop {
        // Up to the end of the page, so a string that ends just before unmapped memory reads.
        let mut piece = vec![0u8; (4096 - (at & 0xfff)) as usize];
        if !mem.read(at, &mut piece) {
            return Err(libc::EFAULT);
        }
        if let Some(end) = piece.iter().position(|&b| b == 0) {
            text.extend_from_slice(&piece[..end]);
            return Ok(text);
        }
        text.extend_from_slice(&piece);
        if text.len() > MAX_STRING {
            return Err(libc::ENAMETOOLONG);
        }
        at = at.wrapping_add(piece.len() as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    const BASE: u32 = 0x8000_0000;

    /// 64 KiB of guest memory at BASE.
    struct Memory(Vec<u8>);

    impl GuestMemory for Memory {
        fn read(&mut self, va: u32, buf: &mut [u8]) -> bool {
            let Some(range) = self.range(va, buf.len()) else {
                return false;
            };
            buf.copy_from_slice(&self.0[range]);
            true
        }

        fn write(&mut self, va: u32, data: &[u8]) -> bool {
            let Some(range) = self.range(va, data.len()) else {
                return false;
            };
            self.0[range].copy_from_slice(data);
            true
        }
    }

    impl Memory {
        /// The indices of `len` bytes at `va`, if they are all memory.
        fn range(&self, va: u32, len: usize) -> Option<std::ops::Range<usize>> {
            let at = va.checked_sub(BASE)? as usize;
            (at + len <= self.0.len()).then_some(at..at + len)
        }

        fn put(&mut self, va: u32, data: &[u8]) -> u32 {
            assert!(GuestMemory::write(self, va, data));
            va
        }

        fn words(&mut self, va: u32, words: &[u32]) -> u32 {
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.put(va, &bytes)
        }

        fn word(&mut self, va: u32) -> u32 {
            let mut w = [0u8; 4];
            assert!(GuestMemory::read(self, va, &mut w));
            u32::from_le_bytes(w)
        }
    }

    #[derive(Default)]
    struct Captured {
        stdout: Vec<u8>,
        stderr: Vec<u8>,
        stdin: Vec<u8>,
    }

    struct TestConsole(Rc<RefCell<Captured>>);

    impl Console for TestConsole {
        fn write(&mut self, stream: Stream, data: &[u8]) -> std::io::Result<usize> {
            let mut c = self.0.borrow_mut();
            match stream {
                Stream::Stderr => c.stderr.extend_from_slice(data),
                _ => c.stdout.extend_from_slice(data),
            }
            Ok(data.len())
        }

        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let mut c = self.0.borrow_mut();
            let n = buf.len().min(c.stdin.len());
            buf[..n].copy_from_slice(&c.stdin[..n]);
            c.stdin.drain(..n);
            Ok(n)
        }

        fn is_tty(&self, _stream: Stream) -> bool {
            true
        }
    }

    fn setup() -> (Semihosting, Memory, Rc<RefCell<Captured>>) {
        let captured = Rc::new(RefCell::new(Captured::default()));
        let heap = HeapInfo {
            heap_base: BASE + 0x8000,
            heap_limit: BASE + 0x1_0000,
        };
        let semi = Semihosting::with_console(
            "prog.elf a b".into(),
            heap,
            Box::new(TestConsole(captured.clone())),
        );
        (semi, Memory(vec![0; 0x1_0000]), captured)
    }

    fn returned(outcome: Outcome) -> u32 {
        match outcome {
            Outcome::Return(v) => v,
            Outcome::Exit(code) => panic!("exit {code}"),
        }
    }

    /// The error number SYS_ERRNO reports now.
    fn errno(semi: &mut Semihosting, mem: &mut Memory) -> i32 {
        returned(semi.call(mem, op::ERRNO, 0)) as i32
    }

    /// Call `operation` with `arg`: it must fail (-1) with error number `expected`.
    fn assert_fails(
        semi: &mut Semihosting,
        mem: &mut Memory,
        operation: u32,
        arg: u32,
        expected: i32,
    ) {
        assert_eq!(semi.call(mem, operation, arg), Outcome::Return(FAILED));
        assert_eq!(errno(semi, mem), expected, "operation {operation:#x}");
    }

    /// Open `name` with `mode`; the handle or -1.
    fn open(semi: &mut Semihosting, mem: &mut Memory, name: &str, mode: u32) -> u32 {
        let at = mem.put(BASE + 0x100, name.as_bytes());
        let block = mem.words(BASE + 0x40, &[at, mode, name.len() as u32]);
        returned(semi.call(mem, op::OPEN, block))
    }

    #[test]
    fn the_call_sequence_is_found_at_any_halfword() {
        let mut code = vec![0x01, 0x45];
        for w in [ENTRY_MARKER, EBREAK, EXIT_MARKER] {
            code.extend_from_slice(&w.to_le_bytes());
        }
        assert!(contains_call(&code));
        assert!(!contains_call(&code[..code.len() - 1]));
        let plain_ebreak: Vec<u8> = [0x13, EBREAK, 0x13]
            .iter()
            .flat_map(|w: &u32| w.to_le_bytes())
            .collect();
        assert!(!contains_call(&plain_ebreak));
    }

    #[test]
    fn console_output_goes_to_stdout_and_stderr() {
        let (mut semi, mut mem, out) = setup();
        let c = mem.put(BASE, b"X");
        assert_eq!(semi.call(&mut mem, op::WRITEC, c), Outcome::Return(0));
        let s = mem.put(BASE + 0x10, b"hello\0junk");
        semi.call(&mut mem, op::WRITE0, s);
        let stdout = open(&mut semi, &mut mem, ":tt", 4);
        let stderr = open(&mut semi, &mut mem, ":tt", 8);
        assert_eq!((stdout, stderr), (1, 2));
        let text = mem.put(BASE + 0x200, b"out!err!");
        let block = mem.words(BASE + 0x40, &[stdout, text, 4]);
        assert_eq!(semi.call(&mut mem, op::WRITE, block), Outcome::Return(0));
        let block = mem.words(BASE + 0x40, &[stderr, text + 4, 4]);
        assert_eq!(semi.call(&mut mem, op::WRITE, block), Outcome::Return(0));
        assert_eq!(out.borrow().stdout, b"out!");
        assert_eq!(out.borrow().stderr, b"Xhelloerr!");
        // Stdin reads what the console has; what is not read is the result.
        out.borrow_mut().stdin = b"in".to_vec();
        let stdin = open(&mut semi, &mut mem, ":tt", 0);
        let block = mem.words(BASE + 0x40, &[stdin, BASE + 0x300, 5]);
        assert_eq!(semi.call(&mut mem, op::READ, block), Outcome::Return(3));
        assert_eq!(&mem.0[0x300..0x302], b"in");
        let block = mem.words(BASE + 0x40, &[stdin]);
        assert_eq!(semi.call(&mut mem, op::ISTTY, block), Outcome::Return(1));
    }

    #[test]
    fn features_exit_and_command_line() {
        let (mut semi, mut mem, _) = setup();
        let features = open(&mut semi, &mut mem, ":semihosting-features", 0);
        let block = mem.words(BASE + 0x40, &[features, BASE + 0x300, 16]);
        assert_eq!(semi.call(&mut mem, op::READ, block), Outcome::Return(11));
        assert_eq!(&mem.0[0x300..0x305], FEATURES);
        assert_eq!(
            open(&mut semi, &mut mem, ":semihosting-features", 4),
            FAILED
        );
        assert_eq!(errno(&mut semi, &mut mem), libc::EACCES);

        let block = mem.words(BASE + 0x40, &[ADP_STOPPED_APPLICATION_EXIT, 42]);
        assert_eq!(
            semi.call(&mut mem, op::EXIT_EXTENDED, block),
            Outcome::Exit(42)
        );
        let block = mem.words(BASE + 0x40, &[0x2_0023, 42]);
        assert_eq!(
            semi.call(&mut mem, op::EXIT_EXTENDED, block),
            Outcome::Exit(1)
        );
        let exit =
            |semi: &mut Semihosting, mem: &mut Memory, reason| semi.call(mem, op::EXIT, reason);
        assert_eq!(
            exit(&mut semi, &mut mem, ADP_STOPPED_APPLICATION_EXIT),
            Outcome::Exit(0)
        );
        assert_eq!(exit(&mut semi, &mut mem, 0x2_0023), Outcome::Exit(1));

        let block = mem.words(BASE + 0x40, &[BASE + 0x400, 64]);
        assert_eq!(
            semi.call(&mut mem, op::GET_CMDLINE, block),
            Outcome::Return(0)
        );
        assert_eq!(&mem.0[0x400..0x40d], b"prog.elf a b\0");
        assert_eq!(mem.word(BASE + 0x44), 12);
        let block = mem.words(BASE + 0x40, &[BASE + 0x400, 12]);
        assert_fails(&mut semi, &mut mem, op::GET_CMDLINE, block, libc::E2BIG);

        let block = mem.words(BASE + 0x40, &[BASE + 0x500]);
        assert_eq!(semi.call(&mut mem, op::HEAPINFO, block), Outcome::Return(0));
        let info: Vec<u32> = (0..4).map(|i| mem.word(BASE + 0x500 + 4 * i)).collect();
        assert_eq!(
            info,
            [
                BASE + 0x8000,
                BASE + 0x1_0000,
                BASE + 0x1_0000,
                BASE + 0x8000
            ]
        );
    }

    #[test]
    fn host_files_open_write_seek_read_and_go() {
        let (mut semi, mut mem, _) = setup();
        let dir = std::env::temp_dir().join(format!("rv32vm-semi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.txt");
        let name = path.to_str().unwrap();
        let fd = open(&mut semi, &mut mem, name, 6); // "w+"
        assert_ne!(fd, FAILED);
        let data = mem.put(BASE + 0x200, b"0123456789");
        let block = mem.words(BASE + 0x40, &[fd, data, 10]);
        assert_eq!(semi.call(&mut mem, op::WRITE, block), Outcome::Return(0));
        let block = mem.words(BASE + 0x40, &[fd]);
        assert_eq!(semi.call(&mut mem, op::FLEN, block), Outcome::Return(10));
        assert_eq!(semi.call(&mut mem, op::ISTTY, block), Outcome::Return(0));
        let block = mem.words(BASE + 0x40, &[fd, 6]);
        assert_eq!(semi.call(&mut mem, op::SEEK, block), Outcome::Return(0));
        let block = mem.words(BASE + 0x40, &[fd, BASE + 0x300, 8]);
        assert_eq!(semi.call(&mut mem, op::READ, block), Outcome::Return(4));
        assert_eq!(&mem.0[0x300..0x304], b"6789");
        let block = mem.words(BASE + 0x40, &[fd]);
        assert_eq!(semi.call(&mut mem, op::CLOSE, block), Outcome::Return(0));
        assert_fails(&mut semi, &mut mem, op::CLOSE, block, libc::EBADF);
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789");

        let renamed = dir.join("g.txt");
        let (from, to) = (name.as_bytes(), renamed.to_str().unwrap().as_bytes());
        let a = mem.put(BASE + 0x100, from);
        let b = mem.put(BASE + 0x600, to);
        let block = mem.words(BASE + 0x40, &[a, from.len() as u32, b, to.len() as u32]);
        assert_eq!(semi.call(&mut mem, op::RENAME, block), Outcome::Return(0));
        let block = mem.words(BASE + 0x40, &[b, to.len() as u32]);
        assert_eq!(semi.call(&mut mem, op::REMOVE, block), Outcome::Return(0));
        assert!(!renamed.exists());
        assert_fails(&mut semi, &mut mem, op::REMOVE, block, libc::ENOENT);
        // Opening what is not there for reading fails; a bad mode is EINVAL.
        assert_eq!(open(&mut semi, &mut mem, name, 0), FAILED);
        assert_eq!(open(&mut semi, &mut mem, name, 12), FAILED);
        assert_eq!(errno(&mut semi, &mut mem), libc::EINVAL);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_pointers_and_operations_fail_without_harm() {
        let (mut semi, mut mem, out) = setup();
        assert_fails(&mut semi, &mut mem, op::WRITE0, 0x10, libc::EFAULT);
        assert_eq!(semi.call(&mut mem, op::OPEN, 0x10), Outcome::Return(FAILED));
        // A write from unmapped memory writes nothing: all `len` bytes are left.
        let stdout = open(&mut semi, &mut mem, ":tt", 4);
        let block = mem.words(BASE + 0x40, &[stdout, 0x10, 7]);
        assert_eq!(semi.call(&mut mem, op::WRITE, block), Outcome::Return(7));
        // A string running off the end of memory.
        let end = mem.put(BASE + 0xfffc, b"abcd");
        assert_eq!(
            semi.call(&mut mem, op::WRITE0, end),
            Outcome::Return(FAILED)
        );
        assert!(out.borrow().stdout.is_empty() && out.borrow().stderr.is_empty());
        let cmd = mem.put(BASE + 0x100, b"true");
        let block = mem.words(BASE + 0x40, &[cmd, 4]);
        assert_eq!(
            semi.call(&mut mem, op::SYSTEM, block),
            Outcome::Return(FAILED)
        );
        assert_eq!(semi.call(&mut mem, 0x77, 0), Outcome::Return(FAILED));
        let negative = mem.words(BASE, &[-5i32 as u32]);
        assert_eq!(
            semi.call(&mut mem, op::ISERROR, negative),
            Outcome::Return(1)
        );
        let positive = mem.words(BASE, &[5]);
        assert_eq!(
            semi.call(&mut mem, op::ISERROR, positive),
            Outcome::Return(0)
        );
        assert_eq!(
            semi.call(&mut mem, op::TICKFREQ, 0),
            Outcome::Return(1_000_000_000)
        );
        let block = mem.words(BASE + 0x40, &[0, 0]);
        assert_eq!(semi.call(&mut mem, op::ELAPSED, block), Outcome::Return(0));
    }
}
