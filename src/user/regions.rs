//! What each part of the guest address space is: anonymous memory, a named area (`[heap]`,
//! `[stack]`) or a file, and for shared mappings the host object behind them. The page table in
//! `mem` holds only permissions; this table names the mappings for `/proc/self/maps` and keeps
//! the host file of a shared mapping so `mremap` can map more of it.

use std::collections::BTreeMap;
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::rc::Rc;

/// The file a mapping shows in `/proc/self/maps`.
#[derive(Debug, PartialEq, Eq)]
pub struct FileId {
    /// The path as `/proc/self/maps` prints it.
    pub path: Vec<u8>,
    /// Host device number (`st_dev`).
    pub dev: u64,
    /// Host inode number.
    pub inode: u64,
}

impl FileId {
    /// The identity of the open host file `fd`, shown as `path`.
    pub fn of_fd(fd: std::os::fd::RawFd, path: Vec<u8>) -> FileId {
        // SAFETY: all-zero is a valid stat; fstat only writes it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer; a bad fd only makes fstat fail (then dev/inode stay 0).
        unsafe { libc::fstat(fd, &mut st) };
        FileId {
            path,
            dev: st.st_dev,
            inode: st.st_ino,
        }
    }
}

/// How a mapping is named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapName {
    /// Anonymous memory (no name).
    Anonymous,
    /// A kernel-named area: `[heap]`, `[stack]`.
    Special(&'static str),
    /// A file (or shared memory, shown as `/dev/zero (deleted)` as Linux does).
    File(Rc<FileId>),
}

/// The host object behind a shared mapping.
#[derive(Clone, Debug)]
pub struct SharedObject {
    pub host: SharedHost,
    /// The host file was opened for writing (a System V segment attached read-write): the
    /// guest may make the mapping writable.
    pub writable: bool,
}

/// What a shared mapping's host pages are.
#[derive(Clone, Debug)]
pub enum SharedHost {
    /// A host file (or memfd) mapped MAP_SHARED.
    File(Rc<OwnedFd>),
    /// A host System V shared memory segment (`shmat`), by its host id.
    SysvShm { id: i32 },
}

impl SharedHost {
    /// Whether both are the same host object.
    fn same(&self, other: &SharedHost) -> bool {
        match (self, other) {
            (SharedHost::File(a), SharedHost::File(b)) => Rc::ptr_eq(a, b),
            (SharedHost::SysvShm { id: a }, SharedHost::SysvShm { id: b }) => a == b,
            _ => false,
        }
    }
}

/// One mapping's description (its address range is the table key and `end`).
#[derive(Clone, Debug)]
pub struct Mapping {
    pub name: MapName,
    /// File offset of the mapping's first byte (0 for anonymous memory).
    pub offset: u64,
    /// The host object of a MAP_SHARED mapping; `None` for private mappings.
    pub shared: Option<SharedObject>,
}

impl Mapping {
    /// Private anonymous memory.
    pub fn anonymous() -> Mapping {
        Mapping {
            name: MapName::Anonymous,
            offset: 0,
            shared: None,
        }
    }

    /// Private anonymous memory with a kernel name (`[heap]`, `[stack]`).
    pub fn special(name: &'static str) -> Mapping {
        Mapping {
            name: MapName::Special(name),
            offset: 0,
            shared: None,
        }
    }

    /// The same mapping seen from `delta` bytes further on (a split tail).
    fn advanced(&self, delta: u64) -> Mapping {
        let mut m = self.clone();
        if matches!(m.name, MapName::File(_)) {
            m.offset += delta;
        }
        m
    }

    /// True if `next`, starting right where this mapping (of `len` bytes) ends, continues it:
    /// the same object at the following offset, so the two can show as one line.
    pub fn continues_into(&self, len: u64, next: &Mapping) -> bool {
        let same_object = match (&self.shared, &next.shared) {
            (None, None) => true,
            (Some(a), Some(b)) => a.host.same(&b.host),
            _ => false,
        };
        let same_name = match (&self.name, &next.name) {
            (MapName::File(a), MapName::File(b)) => {
                (Rc::ptr_eq(a, b) || a == b) && self.offset + len == next.offset
            }
            (a, b) => a == b,
        };
        same_object && same_name
    }
}

/// Non-overlapping mappings keyed by start address; `end` is exclusive (up to 4 GiB).
#[derive(Clone, Debug, Default)]
pub struct RegionTable {
    regions: BTreeMap<u32, (u64, Mapping)>,
}

impl RegionTable {
    /// Forget `range` (splitting mappings that straddle its ends).
    pub fn remove(&mut self, range: Range<u64>) {
        if range.is_empty() {
            return;
        }
        // A mapping starting below the range may reach into it: cut it at range.start, and
        // keep its part past range.end.
        let before = self
            .regions
            .range(..range.start.min(u32::MAX as u64 + 1) as u32)
            .next_back()
            .filter(|(&s, _)| (s as u64) < range.start)
            .map(|(&s, (e, m))| (s, *e, m.clone()));
        if let Some((start, end, mapping)) = before {
            if end > range.start {
                if let Some(entry) = self.regions.get_mut(&start) {
                    entry.0 = range.start;
                }
                if end > range.end {
                    let tail = mapping.advanced(range.end - start as u64);
                    self.regions.insert(range.end as u32, (end, tail));
                    return;
                }
            }
        }
        let inside: Vec<u32> = self
            .regions
            .range(range.start as u32..)
            .take_while(|(&s, _)| (s as u64) < range.end)
            .map(|(&s, _)| s)
            .collect();
        for start in inside {
            if let Some((end, mapping)) = self.regions.remove(&start) {
                if end > range.end {
                    let tail = mapping.advanced(range.end - start as u64);
                    self.regions.insert(range.end as u32, (end, tail));
                }
            }
        }
    }

    /// Describe `range` as `mapping`, replacing whatever was there.
    pub fn insert(&mut self, range: Range<u64>, mapping: Mapping) {
        if range.is_empty() || range.start > u32::MAX as u64 {
            return;
        }
        self.remove(range.clone());
        self.regions
            .insert(range.start as u32, (range.end, mapping));
    }

    /// The mapping holding `addr` and its range.
    pub fn at(&self, addr: u32) -> Option<(Range<u64>, &Mapping)> {
        self.regions
            .range(..=addr)
            .next_back()
            .filter(|(_, (end, _))| *end > addr as u64)
            .map(|(&s, (end, m))| (s as u64..*end, m))
    }

    /// The mappings overlapping `range`, clipped to it, in address order.
    pub fn within(&self, range: Range<u64>) -> Vec<(Range<u64>, Mapping)> {
        let mut out = Vec::new();
        if let Some((r, m)) = self.at(range.start.min(u32::MAX as u64) as u32) {
            if r.start < range.start {
                let clipped = range.start..r.end.min(range.end);
                out.push((clipped, m.advanced(range.start - r.start)));
            }
        }
        if range.start <= u32::MAX as u64 {
            for (&s, (end, m)) in self.regions.range(range.start as u32..) {
                if s as u64 >= range.end {
                    break;
                }
                out.push((s as u64..(*end).min(range.end), m.clone()));
            }
        }
        out
    }

    /// Every mapping in address order.
    pub fn iter(&self) -> impl Iterator<Item = (Range<u64>, &Mapping)> {
        self.regions
            .iter()
            .map(|(&s, (end, m))| (s as u64..*end, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(offset: u64) -> Mapping {
        Mapping {
            name: MapName::File(Rc::new(FileId {
                path: b"/f".to_vec(),
                dev: 1,
                inode: 2,
            })),
            offset,
            shared: None,
        }
    }

    fn ranges(t: &RegionTable) -> Vec<(u64, u64, u64)> {
        t.iter().map(|(r, m)| (r.start, r.end, m.offset)).collect()
    }

    #[test]
    fn remove_splits_and_advances_file_offsets() {
        let mut t = RegionTable::default();
        t.insert(0x1000..0x5000, file(0x10000));
        t.remove(0x2000..0x3000);
        assert_eq!(
            ranges(&t),
            [(0x1000, 0x2000, 0x10000), (0x3000, 0x5000, 0x12000)]
        );
        t.insert(0x8000..0x9000, Mapping::anonymous());
        t.remove(0x4000..0x8800);
        assert_eq!(
            ranges(&t),
            [
                (0x1000, 0x2000, 0x10000),
                (0x3000, 0x4000, 0x12000),
                (0x8800, 0x9000, 0)
            ]
        );
        assert!(t.at(0x2000).is_none());
        assert_eq!(t.at(0x3fff).map(|(r, _)| r), Some(0x3000..0x4000));
    }

    #[test]
    fn insert_replaces_and_within_clips() {
        let mut t = RegionTable::default();
        t.insert(0x1000..0x4000, file(0));
        t.insert(0x2000..0x3000, Mapping::special("[heap]"));
        assert_eq!(
            ranges(&t),
            [
                (0x1000, 0x2000, 0),
                (0x2000, 0x3000, 0),
                (0x3000, 0x4000, 0x2000)
            ]
        );
        let w = t.within(0x1800..0x3800);
        assert_eq!(w.len(), 3);
        assert_eq!(w[0].0, 0x1800..0x2000);
        assert_eq!(w[0].1.offset, 0x800);
        assert_eq!(w[2].0, 0x3000..0x3800);
    }

    #[test]
    fn file_continuation_needs_contiguous_offsets() {
        let a = file(0);
        assert!(a.continues_into(0x1000, &a.advanced(0x1000)));
        assert!(!a.continues_into(0x1000, &a.advanced(0x2000)));
        assert!(!a.continues_into(0x1000, &Mapping::anonymous()));
        assert!(Mapping::anonymous().continues_into(0x1000, &Mapping::anonymous()));
    }
}
