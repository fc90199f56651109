//! Guest loads and stores for the interpreter (and, as out-of-line helpers, for JIT tiers): a
//! TLB hit is one compare and a host access; everything else goes through the platform.

use super::platform::{Platform, Target};
use crate::cpu::{Access, Exception, Hart, Trap};

/// A value that can be loaded or stored: 1, 2, 4 or 8 bytes.
pub trait MemValue: Copy {
    const SIZE: u32;
    fn to_u64(self) -> u64;
    fn from_u64(v: u64) -> Self;
}

macro_rules! mem_value {
    ($($t:ty),*) => {$(
        impl MemValue for $t {
            const SIZE: u32 = std::mem::size_of::<$t>() as u32;
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    )*};
}
mem_value!(u8, u16, u32, u64);

/// The fast path of [`load`]: `Some` on an aligned TLB hit, `None` when the slow path must run.
#[inline(always)]
pub fn load_fast<T: MemValue>(hart: &Hart, va: u32) -> Option<T> {
    if va & (T::SIZE - 1) == 0 {
        if let Some(host) = hart.tlb.lookup(va, Access::Read) {
            // SAFETY: a TLB read entry maps a whole guest RAM page to valid host memory that
            // outlives the hart's use of it, and an aligned access stays within that page.
            return Some(unsafe { std::ptr::read_unaligned(host as *const T) });
        }
    }
    None
}

/// The fast path of [`store`]: true if the store was done (aligned TLB hit), false when the
/// slow path must run.
#[inline(always)]
pub fn store_fast<T: MemValue>(hart: &mut Hart, va: u32, value: T) -> bool {
    if va & (T::SIZE - 1) == 0 {
        if let Some(host) = hart.tlb.lookup(va, Access::Write) {
            // SAFETY: as in `load_fast`; write entries exist only for writable RAM pages.
            unsafe { std::ptr::write_unaligned(host as *mut T, value) };
            return true;
        }
    }
    false
}

/// Load a `T` from virtual address `va`.
#[inline(always)]
pub fn load<T: MemValue, P: Platform>(hart: &mut Hart, plat: &mut P, va: u32) -> Result<T, Trap> {
    match load_fast(hart, va) {
        Some(v) => Ok(v),
        None => load_slow(hart, plat, va),
    }
}

/// Store a `T` to virtual address `va`.
#[inline(always)]
pub fn store<T: MemValue, P: Platform>(
    hart: &mut Hart,
    plat: &mut P,
    va: u32,
    value: T,
) -> Result<(), Trap> {
    if store_fast(hart, va, value) {
        return Ok(());
    }
    store_slow(hart, plat, va, value)
}

/// Translate through the platform and remember the page in the TLB when allowed.
#[inline]
fn translate<P: Platform>(
    hart: &mut Hart,
    plat: &mut P,
    va: u32,
    access: Access,
) -> Result<Target, Trap> {
    let target = plat.translate(hart, va, access)?;
    if let Target::Ram {
        host,
        cacheable: true,
    } = target
    {
        // Stores to a page holding code must keep taking the slow path (see `CodePages`).
        if access == Access::Write && hart.code_pages.contains(host as usize) {
            return Ok(target);
        }
        let page_offset = (va & crate::cpu::tlb::PAGE_MASK) as usize;
        hart.tlb.insert(va, access, host.wrapping_sub(page_offset));
    }
    Ok(target)
}

#[cold]
#[inline(never)]
fn load_slow<T: MemValue, P: Platform>(hart: &mut Hart, plat: &mut P, va: u32) -> Result<T, Trap> {
    if va & (T::SIZE - 1) != 0 {
        if !plat.allow_misaligned() {
            return Err(Trap::new(Exception::LoadMisaligned, va));
        }
        let mut v = 0u64;
        for i in 0..T::SIZE {
            let b: u8 = load(hart, plat, va.wrapping_add(i))?;
            v |= (b as u64) << (8 * i);
        }
        return Ok(T::from_u64(v));
    }
    let target = translate(hart, plat, va, Access::Read)?;
    plat.watch_access(hart, va, T::SIZE, Access::Read)?;
    match target {
        // SAFETY: the platform returned a host pointer to guest RAM valid for this access.
        Target::Ram { host, .. } => Ok(unsafe { std::ptr::read_unaligned(host as *const T) }),
        Target::Mmio { paddr } => plat.mmio_read(hart, paddr, T::SIZE).map(T::from_u64),
    }
}

#[cold]
#[inline(never)]
fn store_slow<T: MemValue, P: Platform>(
    hart: &mut Hart,
    plat: &mut P,
    va: u32,
    value: T,
) -> Result<(), Trap> {
    if va & (T::SIZE - 1) != 0 {
        if !plat.allow_misaligned() {
            return Err(Trap::new(Exception::StoreMisaligned, va));
        }
        // Check every byte is writable before changing any, so a fault leaves memory intact.
        for i in 0..T::SIZE {
            translate(hart, plat, va.wrapping_add(i), Access::Write)?;
        }
        let v = value.to_u64();
        for i in 0..T::SIZE {
            store(hart, plat, va.wrapping_add(i), (v >> (8 * i)) as u8)?;
        }
        return Ok(());
    }
    let target = translate(hart, plat, va, Access::Write)?;
    plat.watch_access(hart, va, T::SIZE, Access::Write)?;
    match target {
        Target::Ram { host, .. } => {
            // SAFETY: the platform returned a host pointer to writable guest RAM.
            unsafe { std::ptr::write_unaligned(host as *mut T, value) };
            hart.code_pages.note_store(host as usize);
            Ok(())
        }
        Target::Mmio { paddr } => plat.mmio_write(hart, paddr, T::SIZE, value.to_u64()),
    }
}

/// Read-modify-write of an aligned `T` for AMOs: `f` maps the old value to the one to store,
/// or to `None` to store nothing (a compare-and-swap whose compare failed; it still needs
/// write permission, as the Zacas spec requires). Faults are reported as store/AMO faults, and
/// a misaligned address raises the store/AMO misaligned exception (never emulated).
#[inline]
pub fn amo<T: MemValue, P: Platform>(
    hart: &mut Hart,
    plat: &mut P,
    va: u32,
    f: impl FnOnce(T) -> Option<T>,
) -> Result<T, Trap> {
    if va & (T::SIZE - 1) != 0 {
        return Err(Trap::new(Exception::StoreMisaligned, va));
    }
    let (host, translated) = match hart.tlb.lookup(va, Access::Write) {
        Some(h) if hart.tlb.lookup(va, Access::Read).is_some() => (h, false),
        _ => {
            // An AMO needs both permissions; a failing read permission is a store/AMO fault.
            let read = translate(hart, plat, va, Access::Read).map_err(as_store_fault)?;
            let write = translate(hart, plat, va, Access::Write)?;
            plat.watch_access(hart, va, T::SIZE, Access::Read)?;
            plat.watch_access(hart, va, T::SIZE, Access::Write)?;
            match (read, write) {
                (Target::Ram { .. }, Target::Ram { host, .. }) => (host as usize, true),
                (_, Target::Mmio { paddr }) | (Target::Mmio { paddr }, _) => {
                    let old = plat
                        .mmio_read(hart, paddr, T::SIZE)
                        .map_err(as_store_fault)?;
                    let old = T::from_u64(old);
                    if let Some(new) = f(old) {
                        plat.mmio_write(hart, paddr, T::SIZE, new.to_u64())?;
                    }
                    return Ok(old);
                }
            }
        }
    };
    let p = host as *mut T;
    // SAFETY: `host` points at an aligned `T` of writable guest RAM (TLB entry or fresh
    // translation; an aligned access stays within its page).
    let old = unsafe { p.read() };
    if let Some(new) = f(old) {
        // SAFETY: as above.
        unsafe { p.write(new) };
        // Code pages never have write TLB entries, so only a translated access can hit one.
        if translated {
            hart.code_pages.note_store(host);
        }
    }
    Ok(old)
}

/// Turn a load fault into the corresponding store/AMO fault (AMOs report store causes).
fn as_store_fault(t: Trap) -> Trap {
    let cause = match t.exception() {
        Some(Exception::LoadPageFault) => Exception::StorePageFault,
        Some(Exception::LoadAccessFault) => Exception::StoreAccessFault,
        Some(Exception::LoadMisaligned) => Exception::StoreMisaligned,
        _ => return t,
    };
    Trap::new(cause, t.tval)
}
