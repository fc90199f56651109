//! Syscalls that move data from one descriptor to another inside the kernel: `sendfile64`,
//! `copy_file_range`, `splice` and `tee`. The host does the moving; rv32vm translates the
//! descriptors and the optional 64-bit file offsets the guest passes by pointer (read before,
//! written back after, as the kernel updates them). The guest's `/proc/self/mem` is served
//! from guest memory, not by a host file, so it cannot take part (EINVAL).

use super::fs::FdKind;
use super::syscall::{errno, host_result, SysError, SysResult};
use super::Process;

/// The most bytes one call moves (the kernel's MAX_RW_COUNT).
const MAX_COUNT: u32 = 0x7fff_f000;

impl Process {
    /// The host descriptor behind guest `fd`, if it is a plain host file (EBADF, or EINVAL for
    /// one served by rv32vm). `/proc/self/maps` copies as it was last made (at open or at
    /// the last read from its start).
    fn transfer_fd(&self, fd: u32) -> Result<i32, SysError> {
        if !matches!(self.fds.entry(fd)?.kind, FdKind::Plain | FdKind::ProcMaps) {
            return Err(errno(libc::EINVAL));
        }
        self.fds.host(fd)
    }

    /// The guest's optional `loff_t *` at `va` (0: none), read.
    fn read_offset(&self, va: u32) -> Result<Option<i64>, SysError> {
        if va == 0 {
            return Ok(None);
        }
        self.mem.check(va, 8, super::mem::perm::W)?;
        Ok(Some(self.mem.read_u64(va)? as i64))
    }

    /// Write an updated offset back to the guest's `loff_t *` at `va`, if there was one.
    fn write_offset(&mut self, va: u32, offset: Option<i64>) -> Result<(), SysError> {
        if let Some(off) = offset {
            self.mem.write(va, &off.to_le_bytes())?;
        }
        Ok(())
    }

    /// `sendfile64(out_fd, in_fd, loff_t *offset, count)`.
    pub(super) fn sys_sendfile64(
        &mut self,
        out_fd: u32,
        in_fd: u32,
        offset: u32,
        count: u32,
    ) -> SysResult {
        let (out_host, in_host) = (self.transfer_fd(out_fd)?, self.transfer_fd(in_fd)?);
        let mut off = self.read_offset(offset)?;
        let ptr = off.as_mut().map_or(std::ptr::null_mut(), |o| o as *mut i64);
        // SAFETY: `ptr` is null or points at `off`, alive for the call.
        let r = unsafe { libc::sendfile(out_host, in_host, ptr, count.min(MAX_COUNT) as usize) };
        let n = host_result(r as i64)?;
        self.write_offset(offset, off)?;
        Ok(n)
    }

    /// `copy_file_range(fd_in, loff_t *off_in, fd_out, loff_t *off_out, len, flags)` and
    /// `splice` (same arguments), told apart by `splice`.
    pub(super) fn sys_copy_range(&mut self, a: [u32; 6], splice: bool) -> SysResult {
        let [fd_in, off_in, fd_out, off_out, len, flags] = a;
        let (in_host, out_host) = (self.transfer_fd(fd_in)?, self.transfer_fd(fd_out)?);
        let mut offsets = [self.read_offset(off_in)?, self.read_offset(off_out)?];
        let [p_in, p_out] = offsets
            .each_mut()
            .map(|o| o.as_mut().map_or(std::ptr::null_mut(), |o| o as *mut i64));
        let len = len.min(MAX_COUNT) as usize;
        // SAFETY: the offset pointers are null or point into `offsets`, alive for the call;
        // neither call touches other memory of this process.
        let r = unsafe {
            if splice {
                libc::splice(in_host, p_in, out_host, p_out, len, flags)
            } else {
                libc::copy_file_range(in_host, p_in, out_host, p_out, len, flags)
            }
        };
        let n = host_result(r as i64)?;
        self.write_offset(off_in, offsets[0])?;
        self.write_offset(off_out, offsets[1])?;
        Ok(n)
    }

    /// `tee(fd_in, fd_out, len, flags)`.
    pub(super) fn sys_tee(&mut self, fd_in: u32, fd_out: u32, len: u32, flags: u32) -> SysResult {
        let (in_host, out_host) = (self.transfer_fd(fd_in)?, self.transfer_fd(fd_out)?);
        // SAFETY: tee has no memory effects in this process.
        let r = unsafe { libc::tee(in_host, out_host, len.min(MAX_COUNT) as usize, flags) };
        host_result(r as i64)
    }
}
