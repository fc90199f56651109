//! The software TLB: virtual page -> host pointer for RAM pages, with separate read, write and
//! execute arrays. A hit costs one compare; the JIT inlines the same lookup using `offset_of!`.

/// Entries per access kind (direct mapped by virtual page number).
pub const TLB_ENTRIES: usize = 1024;
/// Guest page size.
pub const PAGE_SIZE: u32 = 4096;
/// Mask of the offset within a page.
pub const PAGE_MASK: u32 = PAGE_SIZE - 1;
/// A tag no page-aligned address can equal, nor an address masked for a tag compare that
/// also tests alignment (`va & (!PAGE_MASK | (size - 1))`, size up to 8: tier 1's loads and
/// stores do that), so its low three bits are clear and a middle bit is set.
pub const INVALID_TAG: u32 = 0x800;

/// The kind of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read = 0,
    Write = 1,
    Execute = 2,
}

/// One TLB entry: `tag` is the page-aligned virtual address; the host address of guest address
/// `va` in that page is `va as usize + addend` (wrapping).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct TlbEntry {
    pub tag: u32,
    pub _pad: u32,
    pub addend: usize,
}

impl TlbEntry {
    const EMPTY: TlbEntry = TlbEntry {
        tag: INVALID_TAG,
        _pad: 0,
        addend: 0,
    };
}

/// Slots a flush clears one by one before it clears whole arrays instead.
const FILL_LOG_LEN: usize = 256;
// The fill log packs an index into 10 bits.
const _: () = assert!(TLB_ENTRIES <= 1 << 10);

/// Read, write and execute TLBs.
#[repr(C)]
pub struct Tlb {
    pub read: [TlbEntry; TLB_ENTRIES],
    pub write: [TlbEntry; TLB_ENTRIES],
    pub exec: [TlbEntry; TLB_ENTRIES],
    /// Slots filled since the last flush (`kind << 10 | index`, kind 0 read, 1 write, 2
    /// execute), so a flush clears only those: a Linux guest flushes at every privilege
    /// change (each trap and return), usually after a handful of fills, and clearing all
    /// 3 x 16 KiB each time cost a quarter of a boot.
    filled: [u16; FILL_LOG_LEN],
    /// Entries in `filled`; `FILL_LOG_LEN + 1` once more slots were filled than it holds.
    filled_len: u16,
}

impl Default for Tlb {
    fn default() -> Self {
        Self::new()
    }
}

impl Tlb {
    pub const fn new() -> Self {
        Tlb {
            read: [TlbEntry::EMPTY; TLB_ENTRIES],
            write: [TlbEntry::EMPTY; TLB_ENTRIES],
            exec: [TlbEntry::EMPTY; TLB_ENTRIES],
            filled: [0; FILL_LOG_LEN],
            filled_len: 0,
        }
    }

    /// The slot index of virtual address `va`.
    #[inline(always)]
    pub fn index(va: u32) -> usize {
        (va >> 12) as usize & (TLB_ENTRIES - 1)
    }

    #[inline(always)]
    fn array(&self, access: Access) -> &[TlbEntry; TLB_ENTRIES] {
        match access {
            Access::Read => &self.read,
            Access::Write => &self.write,
            Access::Execute => &self.exec,
        }
    }

    /// Whether an aligned `size`-byte `access` at `va` would take compiled code's inline path:
    /// its page is in the TLB for `access` and `va` is aligned to `size` (the test the inline
    /// paths make, tag against page and alignment bits at once).
    #[inline(always)]
    pub fn hits(&self, va: u32, size: u32, access: Access) -> bool {
        self.array(access)[Self::index(va)].tag == va & (!PAGE_MASK | (size - 1))
    }

    /// Host address of `va` if its page is in the TLB for `access`.
    #[inline(always)]
    pub fn lookup(&self, va: u32, access: Access) -> Option<usize> {
        let e = &self.array(access)[Self::index(va)];
        if e.tag == va & !PAGE_MASK {
            Some((va as usize).wrapping_add(e.addend))
        } else {
            None
        }
    }

    /// Install a mapping of the page holding `va` to the host page at `host_page`.
    pub fn insert(&mut self, va: u32, access: Access, host_page: *mut u8) {
        let page = va & !PAGE_MASK;
        let entry = TlbEntry {
            tag: page,
            _pad: 0,
            addend: (host_page as usize).wrapping_sub(page as usize),
        };
        let index = Self::index(va);
        *self.slot_mut(access as u16, index) = entry;
        let len = self.filled_len as usize;
        if len < FILL_LOG_LEN {
            self.filled[len] = (access as u16) << 10 | index as u16;
        }
        if len <= FILL_LOG_LEN {
            self.filled_len += 1;
        }
    }

    /// The entry at `index` of the array for access kind `kind` (`Access as u16`).
    #[inline(always)]
    fn slot_mut(&mut self, kind: u16, index: usize) -> &mut TlbEntry {
        let arr = match kind {
            0 => &mut self.read,
            1 => &mut self.write,
            _ => &mut self.exec,
        };
        &mut arr[index]
    }

    /// Drop every entry: the slots filled since the last flush, or all of them when there
    /// were more than the log holds.
    pub fn flush(&mut self) {
        let len = self.filled_len as usize;
        if len <= FILL_LOG_LEN {
            for i in 0..len {
                let slot = self.filled[i];
                *self.slot_mut(slot >> 10, slot as usize & (TLB_ENTRIES - 1)) = TlbEntry::EMPTY;
            }
        } else {
            for arr in [&mut self.read, &mut self.write, &mut self.exec] {
                arr.fill(TlbEntry::EMPTY);
            }
        }
        self.filled_len = 0;
    }

    /// Drop every write entry that maps to the host page at `host_page`, whatever virtual page
    /// reaches it (the page now holds decoded code, so stores to it must take the slow path).
    pub fn flush_writes_to(&mut self, host_page: usize) {
        for e in self.write.iter_mut() {
            if e.tag != INVALID_TAG && (e.tag as usize).wrapping_add(e.addend) == host_page {
                *e = TlbEntry::EMPTY;
            }
        }
    }

    /// Drop the entries for the page holding `va`.
    pub fn flush_page(&mut self, va: u32) {
        let i = Self::index(va);
        let page = va & !PAGE_MASK;
        for arr in [&mut self.read, &mut self.write, &mut self.exec] {
            if arr[i].tag == page {
                arr[i] = TlbEntry::EMPTY;
            }
        }
    }
}

/// Host pages of guest RAM that hold decoded (or compiled) code, so that a store into one is
/// noticed: such pages never get a write TLB entry, every store to them takes the slow path,
/// which records the page as written; the engine then drops the page's blocks before running
/// more code. Keyed by host page address, like the block cache.
#[derive(Debug, Default)]
pub struct CodePages {
    pages: crate::addr_hash::AddrSet<usize>,
    written: Vec<usize>,
}

impl CodePages {
    /// Host page address of host address `host`.
    #[inline(always)]
    pub fn page_of(host: usize) -> usize {
        host & !(PAGE_MASK as usize)
    }

    /// Record that the page holding `host` holds code; true if it did not before (the caller
    /// must then drop write TLB entries to it).
    pub fn insert(&mut self, host: usize) -> bool {
        self.pages.insert(Self::page_of(host))
    }

    /// Whether the page holding `host` holds code.
    #[inline]
    pub fn contains(&self, host: usize) -> bool {
        !self.pages.is_empty() && self.pages.contains(&Self::page_of(host))
    }

    /// A store reached the page holding `host`: remember it for [`CodePages::take_written`]
    /// if it holds code. Returns whether it does.
    #[inline]
    pub fn note_store(&mut self, host: usize) -> bool {
        let page = Self::page_of(host);
        if self.pages.remove(&page) {
            self.written.push(page);
            true
        } else {
            false
        }
    }

    /// Whether stores hit code pages since the last [`CodePages::take_written`].
    #[inline(always)]
    pub fn any_written(&self) -> bool {
        !self.written.is_empty()
    }

    /// The code pages written since the last call (they are no longer code pages).
    pub fn take_written(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.written)
    }

    /// Forget every page (all code was dropped).
    pub fn clear(&mut self) {
        self.pages.clear();
        self.written.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(tlb: &Tlb) -> usize {
        [&tlb.read, &tlb.write, &tlb.exec]
            .iter()
            .map(|arr| arr.iter().filter(|e| e.tag != INVALID_TAG).count())
            .sum()
    }

    #[test]
    fn a_flush_drops_every_entry_whether_or_not_the_fill_log_overflowed() {
        let mut page = [0u8; 4096];
        for count in [1u32, 3, FILL_LOG_LEN as u32, FILL_LOG_LEN as u32 + 1, 3000] {
            let mut tlb = Tlb::new();
            for i in 0..count {
                let access = [Access::Read, Access::Write, Access::Execute][i as usize % 3];
                tlb.insert(i.wrapping_mul(0x1000_3000), access, page.as_mut_ptr());
            }
            assert!(filled(&tlb) > 0);
            tlb.flush();
            assert_eq!(filled(&tlb), 0, "{count} fills");
            // The log starts over: the next flush clears what was filled since.
            tlb.insert(0x4000, Access::Execute, page.as_mut_ptr());
            assert_eq!(
                tlb.lookup(0x4010, Access::Execute),
                Some(page.as_ptr() as usize + 0x10)
            );
            tlb.flush();
            assert_eq!(tlb.lookup(0x4010, Access::Execute), None);
        }
    }
}
