//! The built-in SBI: what M-mode firmware provides to an S-mode kernel (SBI spec v2.0). The
//! machine calls [`handle_ecall`] for every `ecall` from S-mode; everything the firmware needs
//! from the machine goes through [`SbiHost`], so this module knows nothing of the CPU.

/// SBI extension IDs.
pub mod eid {
    pub const LEGACY_SET_TIMER: u32 = 0x00;
    pub const LEGACY_CONSOLE_PUTCHAR: u32 = 0x01;
    pub const LEGACY_CONSOLE_GETCHAR: u32 = 0x02;
    pub const LEGACY_CLEAR_IPI: u32 = 0x03;
    pub const LEGACY_SEND_IPI: u32 = 0x04;
    pub const LEGACY_REMOTE_FENCE_I: u32 = 0x05;
    pub const LEGACY_REMOTE_SFENCE_VMA: u32 = 0x06;
    pub const LEGACY_REMOTE_SFENCE_VMA_ASID: u32 = 0x07;
    pub const LEGACY_SHUTDOWN: u32 = 0x08;
    pub const BASE: u32 = 0x10;
    pub const TIME: u32 = 0x5449_4d45;
    pub const IPI: u32 = 0x0073_5049;
    pub const RFENCE: u32 = 0x5246_4e43;
    pub const HSM: u32 = 0x0048_534d;
    pub const SRST: u32 = 0x5352_5354;
    pub const DBCN: u32 = 0x4442_434e;
}

/// SBI error codes (returned in a0).
pub mod error {
    pub const SUCCESS: i32 = 0;
    pub const FAILED: i32 = -1;
    pub const NOT_SUPPORTED: i32 = -2;
    pub const INVALID_PARAM: i32 = -3;
    pub const INVALID_ADDRESS: i32 = -5;
    pub const ALREADY_AVAILABLE: i32 = -6;
}

/// SBI specification version implemented: 2.0.
pub const SPEC_VERSION: u32 = 2 << 24;
/// Implementation ID (not in the SBI registry; identifies rv32vm's built-in firmware).
pub const IMPL_ID: u32 = 0x7276_3332; // "rv32"
/// Implementation version.
pub const IMPL_VERSION: u32 = 1;

/// System reset types (SRST).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetKind {
    Shutdown,
    ColdReboot,
    WarmReboot,
}

/// What the firmware needs from the machine.
pub trait SbiHost {
    /// Program the S-mode timer: STIP is raised when `time >= deadline` (and cleared now).
    fn set_timer(&mut self, deadline: u64);
    /// Write bytes to the console.
    fn console_write(&mut self, bytes: &[u8]);
    /// One byte of console input, if any.
    fn console_read(&mut self) -> Option<u8>;
    /// Read `len` bytes of guest physical memory, or `None` if the range is not RAM.
    fn read_phys(&mut self, pa: u64, len: usize) -> Option<Vec<u8>>;
    /// Write guest physical memory; `false` if the range is not RAM.
    fn write_phys(&mut self, pa: u64, bytes: &[u8]) -> bool;
    /// Raise a supervisor software interrupt on this (the only) hart.
    fn send_ipi(&mut self);
    /// Flush the instruction cache / decoded code (remote fence.i).
    fn fence_i(&mut self);
    /// Flush address translations (remote sfence.vma).
    fn sfence_vma(&mut self);
    /// Power off or reboot.
    fn reset(&mut self, kind: ResetKind, reason: u32);
}

/// The registers an SBI call reads and writes: a0..a7.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SbiCall {
    pub args: [u32; 6],
    pub fid: u32,
    pub eid: u32,
}

/// The result registers: a0 (error, or the value for legacy calls) and a1 (value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbiReturn {
    pub a0: u32,
    /// `None` for legacy calls, which leave a1 untouched.
    pub a1: Option<u32>,
}

impl SbiReturn {
    fn ok(value: u32) -> Self {
        SbiReturn {
            a0: error::SUCCESS as u32,
            a1: Some(value),
        }
    }
    fn err(code: i32) -> Self {
        SbiReturn {
            a0: code as u32,
            a1: Some(0),
        }
    }
    fn legacy(a0: u32) -> Self {
        SbiReturn { a0, a1: None }
    }
}

/// Hart 0 is the only hart; its HSM state is always STARTED.
const HSM_STARTED: u32 = 0;

/// True if extension `id` is implemented (BASE probe_extension).
pub fn has_extension(id: u32) -> bool {
    matches!(
        id,
        eid::BASE | eid::TIME | eid::IPI | eid::RFENCE | eid::HSM | eid::SRST | eid::DBCN
    ) || (eid::LEGACY_SET_TIMER..=eid::LEGACY_SHUTDOWN).contains(&id)
}

/// Whether hart mask arguments select hart 0.
fn selects_hart0(mask: u32, mask_base: u32) -> bool {
    mask_base == u32::MAX || (mask_base == 0 && mask & 1 != 0)
}

/// Handle one SBI call.
pub fn handle_ecall<H: SbiHost>(host: &mut H, call: SbiCall) -> SbiReturn {
    let a = call.args;
    match call.eid {
        eid::LEGACY_SET_TIMER => {
            host.set_timer(a[0] as u64 | (a[1] as u64) << 32);
            SbiReturn::legacy(0)
        }
        eid::LEGACY_CONSOLE_PUTCHAR => {
            host.console_write(&[a[0] as u8]);
            SbiReturn::legacy(0)
        }
        eid::LEGACY_CONSOLE_GETCHAR => {
            SbiReturn::legacy(host.console_read().map_or(u32::MAX, u32::from))
        }
        eid::LEGACY_CLEAR_IPI => SbiReturn::legacy(0),
        eid::LEGACY_SEND_IPI => {
            host.send_ipi();
            SbiReturn::legacy(0)
        }
        eid::LEGACY_REMOTE_FENCE_I => {
            host.fence_i();
            SbiReturn::legacy(0)
        }
        eid::LEGACY_REMOTE_SFENCE_VMA | eid::LEGACY_REMOTE_SFENCE_VMA_ASID => {
            host.sfence_vma();
            SbiReturn::legacy(0)
        }
        eid::LEGACY_SHUTDOWN => {
            host.reset(ResetKind::Shutdown, 0);
            SbiReturn::legacy(0)
        }
        eid::BASE => match call.fid {
            0 => SbiReturn::ok(SPEC_VERSION),
            1 => SbiReturn::ok(IMPL_ID),
            2 => SbiReturn::ok(IMPL_VERSION),
            3 => SbiReturn::ok(has_extension(a[0]) as u32),
            4..=6 => SbiReturn::ok(0), // mvendorid, marchid, mimpid
            _ => SbiReturn::err(error::NOT_SUPPORTED),
        },
        eid::TIME => match call.fid {
            0 => {
                host.set_timer(a[0] as u64 | (a[1] as u64) << 32);
                SbiReturn::ok(0)
            }
            _ => SbiReturn::err(error::NOT_SUPPORTED),
        },
        eid::IPI => match call.fid {
            0 => {
                if selects_hart0(a[0], a[1]) {
                    host.send_ipi();
                }
                SbiReturn::ok(0)
            }
            _ => SbiReturn::err(error::NOT_SUPPORTED),
        },
        eid::RFENCE => match call.fid {
            0 => {
                host.fence_i();
                SbiReturn::ok(0)
            }
            1 | 2 => {
                host.sfence_vma();
                SbiReturn::ok(0)
            }
            _ => SbiReturn::err(error::NOT_SUPPORTED), // hypervisor fences
        },
        eid::HSM => match call.fid {
            // hart_start: hart 0 is already running; other harts do not exist.
            0 => SbiReturn::err(if a[0] == 0 {
                error::ALREADY_AVAILABLE
            } else {
                error::INVALID_PARAM
            }),
            1 => SbiReturn::err(error::FAILED), // the last hart cannot stop
            2 => {
                if a[0] == 0 {
                    SbiReturn::ok(HSM_STARTED)
                } else {
                    SbiReturn::err(error::INVALID_PARAM)
                }
            }
            _ => SbiReturn::err(error::NOT_SUPPORTED),
        },
        eid::SRST => match call.fid {
            0 => {
                let kind = match a[0] {
                    0 => ResetKind::Shutdown,
                    1 => ResetKind::ColdReboot,
                    2 => ResetKind::WarmReboot,
                    _ => return SbiReturn::err(error::INVALID_PARAM),
                };
                if a[1] > 1 && a[1] < 0xe000_0000 {
                    return SbiReturn::err(error::INVALID_PARAM);
                }
                host.reset(kind, a[1]);
                SbiReturn::ok(0)
            }
            _ => SbiReturn::err(error::NOT_SUPPORTED),
        },
        eid::DBCN => {
            let pa = a[1] as u64 | (a[2] as u64) << 32;
            let len = a[0] as usize;
            match call.fid {
                0 => match host.read_phys(pa, len) {
                    Some(bytes) => {
                        host.console_write(&bytes);
                        SbiReturn::ok(len as u32)
                    }
                    None => SbiReturn::err(error::INVALID_PARAM),
                },
                1 => {
                    let mut buf = Vec::new();
                    while buf.len() < len {
                        match host.console_read() {
                            Some(b) => buf.push(b),
                            None => break,
                        }
                    }
                    if host.write_phys(pa, &buf) {
                        SbiReturn::ok(buf.len() as u32)
                    } else {
                        SbiReturn::err(error::INVALID_PARAM)
                    }
                }
                2 => {
                    host.console_write(&[a[0] as u8]);
                    SbiReturn::ok(0)
                }
                _ => SbiReturn::err(error::NOT_SUPPORTED),
            }
        }
        _ => SbiReturn::err(error::NOT_SUPPORTED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct FakeHost {
        timer: Option<u64>,
        out: Vec<u8>,
        input: Vec<u8>,
        mem: Vec<u8>,
        reset: Option<(ResetKind, u32)>,
        ipis: u32,
    }

    impl SbiHost for FakeHost {
        fn set_timer(&mut self, deadline: u64) {
            self.timer = Some(deadline);
        }
        fn console_write(&mut self, bytes: &[u8]) {
            self.out.extend_from_slice(bytes);
        }
        fn console_read(&mut self) -> Option<u8> {
            if self.input.is_empty() {
                None
            } else {
                Some(self.input.remove(0))
            }
        }
        fn read_phys(&mut self, pa: u64, len: usize) -> Option<Vec<u8>> {
            let start = usize::try_from(pa).ok()?;
            self.mem
                .get(start..start.checked_add(len)?)
                .map(<[u8]>::to_vec)
        }
        fn write_phys(&mut self, pa: u64, bytes: &[u8]) -> bool {
            let Ok(start) = usize::try_from(pa) else {
                return false;
            };
            match self.mem.get_mut(start..start + bytes.len()) {
                Some(dst) => {
                    dst.copy_from_slice(bytes);
                    true
                }
                None => false,
            }
        }
        fn send_ipi(&mut self) {
            self.ipis += 1;
        }
        fn fence_i(&mut self) {}
        fn sfence_vma(&mut self) {}
        fn reset(&mut self, kind: ResetKind, reason: u32) {
            self.reset = Some((kind, reason));
        }
    }

    fn call(eid: u32, fid: u32, args: &[u32]) -> SbiCall {
        let mut a = [0; 6];
        a[..args.len()].copy_from_slice(args);
        SbiCall { args: a, fid, eid }
    }

    #[test]
    fn base_reports_version_and_probes() {
        let mut h = FakeHost::default();
        assert_eq!(
            handle_ecall(&mut h, call(eid::BASE, 0, &[])),
            SbiReturn::ok(SPEC_VERSION)
        );
        assert_eq!(
            handle_ecall(&mut h, call(eid::BASE, 3, &[eid::TIME])),
            SbiReturn::ok(1)
        );
        assert_eq!(
            handle_ecall(&mut h, call(eid::BASE, 3, &[0x1234_5678])),
            SbiReturn::ok(0)
        );
    }

    #[test]
    fn timer_takes_64_bit_deadline_from_two_registers() {
        let mut h = FakeHost::default();
        handle_ecall(&mut h, call(eid::TIME, 0, &[0x89ab_cdef, 0x1]));
        assert_eq!(h.timer, Some(0x1_89ab_cdef));
    }

    #[test]
    fn dbcn_writes_from_guest_memory() {
        let mut h = FakeHost {
            mem: b"..hello..".to_vec(),
            ..Default::default()
        };
        let r = handle_ecall(&mut h, call(eid::DBCN, 0, &[5, 2, 0]));
        assert_eq!(r, SbiReturn::ok(5));
        assert_eq!(h.out, b"hello");
        let r = handle_ecall(&mut h, call(eid::DBCN, 0, &[5, 100, 0]));
        assert_eq!(r, SbiReturn::err(error::INVALID_PARAM));
    }

    #[test]
    fn srst_shutdown_and_bad_type() {
        let mut h = FakeHost::default();
        assert_eq!(
            handle_ecall(&mut h, call(eid::SRST, 0, &[7, 0])),
            SbiReturn::err(error::INVALID_PARAM)
        );
        assert_eq!(h.reset, None);
        handle_ecall(&mut h, call(eid::SRST, 0, &[0, 0]));
        assert_eq!(h.reset, Some((ResetKind::Shutdown, 0)));
    }

    #[test]
    fn legacy_getchar_returns_minus_one_without_input() {
        let mut h = FakeHost::default();
        assert_eq!(
            handle_ecall(&mut h, call(eid::LEGACY_CONSOLE_GETCHAR, 0, &[])),
            SbiReturn::legacy(u32::MAX)
        );
        h.input.push(b'x');
        assert_eq!(
            handle_ecall(&mut h, call(eid::LEGACY_CONSOLE_GETCHAR, 0, &[])),
            SbiReturn::legacy(b'x' as u32)
        );
    }

    #[test]
    fn unknown_extension_is_not_supported() {
        let mut h = FakeHost::default();
        assert_eq!(
            handle_ecall(&mut h, call(0x0a00_0000, 0, &[])),
            SbiReturn::err(error::NOT_SUPPORTED)
        );
    }

    #[test]
    fn ipi_to_hart0_only() {
        let mut h = FakeHost::default();
        handle_ecall(&mut h, call(eid::IPI, 0, &[1, 0]));
        handle_ecall(&mut h, call(eid::IPI, 0, &[2, 0]));
        assert_eq!(h.ipis, 1);
    }
}
