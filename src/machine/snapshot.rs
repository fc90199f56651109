//! The snapshot file: the whole machine (hart, devices, RAM, disks' unsaved writes) in one
//! versioned, checksummed file. `docs/snapshot.md` documents the format; this module is the
//! one place that reads and writes it.
//!
//! Layout: an 16-byte header (magic `RV32SNAP`, format version, flags), then sections, each
//! `tag (4 bytes) | payload length (u64) | CRC-32 of the payload (u32) | payload`, ending with
//! an `END\0` section. Everything is little endian. Sections appear in a fixed order and each
//! exactly once (`DISK` once per disk): `MACH`, `HART`, `DEVS`, `CONS`, `BOOT`, `DETM` (only
//! with the header's [`FLAG_DETERMINISTIC`]), `DISK`..., `RAM\0`, `END\0`.
//!
//! RAM is saved sparsely: a bitmap of the 4 KiB pages that hold anything but zeros, then those
//! pages in groups of [`RAM_GROUP_PAGES`], each group LZ4-compressed (block format). A page of
//! zeros costs one bit.
//!
//! Reading checks everything before the machine is touched: magic, version, every section's
//! length and checksum, the order of sections, and each payload's own structure. A truncated,
//! corrupt or foreign file, or a newer format, is one [`SnapshotError`]; nothing panics.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rv32vm_devices::virtio::DiskOptions;
use rv32vm_devices::{StateError, StateReader, StateWriter};

use super::power::PowerOn;
use super::ram::GuestRam;
use super::system::{FirmwareMode, System};
use crate::cpu::{Hart, HartState};

/// The first 8 bytes of every snapshot file.
pub const MAGIC: [u8; 8] = *b"RV32SNAP";
/// The format version this build writes and reads.
pub const VERSION: u32 = 2;
/// The largest snapshot file read (it is read whole): 2 GiB of RAM at worst, plus the writes
/// of snapshot-mode disks.
pub const MAX_FILE_SIZE: u64 = 16 << 30;
/// Guest pages per compressed RAM group (1 MiB).
pub const RAM_GROUP_PAGES: usize = 256;
/// Size of a RAM page in the snapshot.
pub const PAGE_SIZE: usize = 4096;

/// Header flag: the machine ran in deterministic mode (`--deterministic`); a `DETM` section
/// follows `CONS`, and a restore goes on deterministically. Readers before this flag existed
/// refuse such a file ("unknown header flags").
pub const FLAG_DETERMINISTIC: u32 = 1;

const HEADER_LEN: usize = 16;
const SECTION_HEADER_LEN: usize = 16;

const TAG_MACHINE: [u8; 4] = *b"MACH";
const TAG_HART: [u8; 4] = *b"HART";
const TAG_DEVICES: [u8; 4] = *b"DEVS";
const TAG_CONSOLE: [u8; 4] = *b"CONS";
const TAG_POWER_ON: [u8; 4] = *b"BOOT";
const TAG_DETERMINISTIC: [u8; 4] = *b"DETM";
const TAG_DISK: [u8; 4] = *b"DISK";
const TAG_RAM: [u8; 4] = *b"RAM\0";
const TAG_END: [u8; 4] = *b"END\0";

/// Why a snapshot could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// `--share` or `--net` devices or `--semihosting` are attached: their state is partly on
    /// the host (open files, sockets, a NAT) and a snapshot cannot hold it.
    #[error("cannot save a machine with --share, --net or --semihosting: their state lives on the host (open files, connections); save without them")]
    HostDevices,
    /// The file could not be created or written.
    #[error("cannot write snapshot {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file could not be opened or read, is not a regular file, is empty or is larger
    /// than [`MAX_FILE_SIZE`].
    #[error("{0}")]
    Read(#[from] crate::hostfile::InputError),
    /// The file does not start with the snapshot magic.
    #[error("{} is not an rv32vm snapshot (it does not start with RV32SNAP)", path.display())]
    Foreign { path: PathBuf },
    /// The file is of a format version this build cannot read.
    #[error(
        "{} is a snapshot of format version {found}; this rv32vm reads version {VERSION} only",
        path.display()
    )]
    Version { path: PathBuf, found: u32 },
    /// The file ends before its last section.
    #[error("snapshot {} is truncated ({detail}); it cannot be restored", path.display())]
    Truncated { path: PathBuf, detail: String },
    /// A checksum does not match, or a section's content is impossible.
    #[error("snapshot {} is corrupt ({detail}); it cannot be restored", path.display())]
    Corrupt { path: PathBuf, detail: String },
    /// A disk of the machine cannot be described (its modification time is unknown, say).
    #[error("cannot save disk {}: {source}", path.display())]
    Disk {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A disk as the snapshot records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskRecord {
    /// The image file (absolute when it could be resolved at save time).
    pub path: PathBuf,
    pub size: u64,
    /// The image's modification time at save time (since the Unix epoch).
    pub modified: Duration,
    pub options: DiskOptions,
    /// A snapshot-mode disk's overlay: (byte offset, data) of every chunk the guest wrote.
    pub overlay: Vec<(u64, Vec<u8>)>,
}

/// A deterministic run's state beyond the machine's (the `DETM` section).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeterministicRecord {
    /// The seeded entropy generator's state (`None`: the machine had no entropy device).
    pub entropy: Option<[u64; 4]>,
}

/// A snapshot read back and checked, ready to be put into a new machine.
pub struct Snapshot {
    /// Guest RAM size in bytes.
    pub memory: u32,
    pub firmware: FirmwareMode,
    pub hart: HartState,
    /// The devices' state ([`System::save_devices`]).
    pub devices: Vec<u8>,
    /// The console line the guest was printing (the prompt), for the restored script.
    pub console_line: Vec<u8>,
    /// What the machine was powered on with (for a guest reboot after the restore).
    pub power_on: Option<PowerOn>,

    /// Saved from a deterministic run: what it needs beyond the machine's state.
    pub deterministic: Option<DeterministicRecord>,
    pub disks: Vec<DiskRecord>,
    /// The RAM section's payload, checked; [`Snapshot::load_ram`] expands it.
    ram: Vec<u8>,
    /// Where it came from (for messages).
    path: PathBuf,
}

/// What a save wrote.
#[derive(Clone, Debug)]
pub struct SaveSummary {
    /// Size of the file in bytes.
    pub file_bytes: u64,
    /// Guest RAM pages that are not all zeros (the ones saved).
    pub ram_pages_saved: usize,
    /// Guest RAM pages in all.
    pub ram_pages: usize,
    pub elapsed: Duration,
}

/// Writes sections into a buffer.
struct FileWriter {
    bytes: Vec<u8>,
}

impl FileWriter {
    fn new(flags: u32) -> Self {
        let mut bytes = Vec::with_capacity(1 << 20);
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&flags.to_le_bytes());
        Self { bytes }
    }

    fn section(&mut self, tag: [u8; 4], payload: &[u8]) {
        self.bytes.extend_from_slice(&tag);
        self.bytes
            .extend_from_slice(&(payload.len() as u64).to_le_bytes());
        self.bytes
            .extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        self.bytes.extend_from_slice(payload);
    }
}

/// Save the machine to `path`. Call only while the engine is stopped between blocks (after
/// it returned a [`crate::exec::Stop`]), so the hart's state is complete. The file is written
/// under a temporary name and renamed, so `path` never holds half a snapshot.
pub fn save(path: &Path, hart: &Hart, system: &System) -> Result<SaveSummary, SnapshotError> {
    if system.has_host_devices() {
        return Err(SnapshotError::HostDevices);
    }
    let started = Instant::now();
    let deterministic = system.is_deterministic();
    let mut file = FileWriter::new(if deterministic { FLAG_DETERMINISTIC } else { 0 });

    let mut machine = StateWriter::new();
    machine.u32(system.ram.size());
    machine.u8(match system.firmware() {
        FirmwareMode::Builtin => 0,
        FirmwareMode::External => 1,
        FirmwareMode::None => 2,
    });
    machine.bytes(env!("CARGO_PKG_VERSION").as_bytes());
    file.section(TAG_MACHINE, machine.as_bytes());

    let mut state = StateWriter::new();
    hart.state().save(&mut state);
    file.section(TAG_HART, state.as_bytes());

    let mut devices = StateWriter::new();
    system.save_devices(&mut devices);
    file.section(TAG_DEVICES, devices.as_bytes());

    let mut console = StateWriter::new();
    console.bytes(&system.console().current_line());
    file.section(TAG_CONSOLE, console.as_bytes());

    // What power-on put in RAM, so the restored guest can reboot.
    let mut power_on = StateWriter::new();
    match system.power_on_image() {
        Some(image) => {
            power_on.bool(true);
            image.save(&mut power_on);
        }
        None => power_on.bool(false),
    }
    file.section(TAG_POWER_ON, power_on.as_bytes());

    if deterministic {
        let mut det = StateWriter::new();
        let entropy = system.entropy_state();
        det.bool(entropy.is_some());
        entropy.unwrap_or_default().iter().for_each(|&w| det.u64(w));
        file.section(TAG_DETERMINISTIC, det.as_bytes());
    }

    for blk in system.disks() {
        let disk = blk.disk();
        let disk_error = |source| SnapshotError::Disk {
            path: disk.path().to_path_buf(),
            source,
        };
        let modified = disk
            .modified()
            .map_err(disk_error)?
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let path = std::fs::canonicalize(disk.path()).unwrap_or_else(|_| disk.path().into());
        let mut out = StateWriter::new();
        out.bytes(path.as_os_str().as_bytes());
        out.u64(disk.size());
        out.u64(modified.as_secs());
        out.u32(modified.subsec_nanos());
        out.bool(disk.is_read_only());
        out.bool(disk.is_snapshot());
        let mut chunks = StateWriter::new();
        let mut count = 0u64;
        disk.for_each_overlay_chunk(|offset, data| {
            chunks.u64(offset);
            chunks.bytes(data);
            count += 1;
            Ok(())
        })
        .map_err(disk_error)?;
        out.u64(count);
        let mut payload = out.into_bytes();
        payload.extend_from_slice(chunks.as_bytes());
        file.section(TAG_DISK, &payload);
    }

    let (ram, ram_pages_saved) = encode_ram(&system.ram);
    file.section(TAG_RAM, &ram);
    file.section(TAG_END, &[]);

    let write_error = |source| SnapshotError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".partial");
    let temporary = PathBuf::from(temporary);
    let written = std::fs::File::create(&temporary)
        .and_then(|mut f| f.write_all(&file.bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&temporary, path));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(write_error(error));
    }
    let summary = SaveSummary {
        file_bytes: file.bytes.len() as u64,
        ram_pages_saved,
        ram_pages: system.ram.size() as usize / PAGE_SIZE,
        elapsed: started.elapsed(),
    };
    tracing::info!(path = %path.display(), ?summary, "machine saved");
    Ok(summary)
}

/// The RAM section: page size, page count, the bitmap of saved pages, then the groups.
fn encode_ram(ram: &GuestRam) -> (Vec<u8>, usize) {
    let size = ram.size() as usize;
    let pages = size / PAGE_SIZE;
    let Some(bytes) = ram.bytes(ram.base() as u64, size as u64) else {
        return (Vec::new(), 0);
    };
    let mut bitmap = vec![0u8; pages.div_ceil(8)];
    let mut saved: Vec<usize> = Vec::new();
    for (index, page) in bytes.chunks_exact(PAGE_SIZE).enumerate() {
        if !is_zero(page) {
            bitmap[index / 8] |= 1 << (index % 8);
            saved.push(index);
        }
    }
    let mut out = StateWriter::new();
    out.u32(PAGE_SIZE as u32);
    out.u32(pages as u32);
    let mut payload = out.into_bytes();
    payload.extend_from_slice(&bitmap);
    let mut group = Vec::with_capacity(RAM_GROUP_PAGES * PAGE_SIZE);
    for indices in saved.chunks(RAM_GROUP_PAGES) {
        group.clear();
        for &index in indices {
            group.extend_from_slice(&bytes[index * PAGE_SIZE..(index + 1) * PAGE_SIZE]);
        }
        let compressed = lz4_flex::block::compress(&group);
        payload.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
        payload.extend_from_slice(&compressed);
    }
    (payload, saved.len())
}

fn is_zero(page: &[u8]) -> bool {
    page.chunks_exact(8).all(|word| {
        u64::from_ne_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]) == 0
    })
}

/// The sections of a file, checked.
struct Sections<'a> {
    rest: &'a [u8],
    offset: usize,
    path: &'a Path,
}

impl<'a> Sections<'a> {
    /// The next section, which must carry `tag`.
    fn expect(&mut self, tag: [u8; 4]) -> Result<&'a [u8], SnapshotError> {
        let name = tag_name(tag);
        let truncated = |detail: String| SnapshotError::Truncated {
            path: self.path.to_path_buf(),
            detail,
        };
        if self.rest.len() < SECTION_HEADER_LEN {
            return Err(truncated(format!(
                "the file ends at byte {} where section {name} should begin",
                self.offset + self.rest.len()
            )));
        }
        let (header, body) = self.rest.split_at(SECTION_HEADER_LEN);
        let found: [u8; 4] = [header[0], header[1], header[2], header[3]];
        if found != tag {
            return Err(SnapshotError::Corrupt {
                path: self.path.to_path_buf(),
                detail: format!(
                    "section {} at byte {} where {name} was expected",
                    tag_name(found),
                    self.offset
                ),
            });
        }
        let mut fields = StateReader::new(&header[4..]);
        let len = fields.u64("length").unwrap_or(u64::MAX);
        let crc = fields.u32("checksum").unwrap_or(0);
        let len = match usize::try_from(len) {
            Ok(len) if len <= body.len() => len,
            _ => {
                return Err(truncated(format!(
                    "section {name} should hold {len} bytes, {} are left",
                    body.len()
                )))
            }
        };
        let (payload, rest) = body.split_at(len);
        if crc32fast::hash(payload) != crc {
            return Err(SnapshotError::Corrupt {
                path: self.path.to_path_buf(),
                detail: format!("checksum mismatch in section {name}"),
            });
        }
        self.offset += SECTION_HEADER_LEN + len;
        self.rest = rest;
        Ok(payload)
    }

    /// Whether the next section carries `tag` (without consuming it).
    fn next_is(&self, tag: [u8; 4]) -> bool {
        self.rest.len() >= 4 && self.rest[..4] == tag
    }
}

fn tag_name(tag: [u8; 4]) -> String {
    String::from_utf8_lossy(&tag)
        .trim_end_matches('\0')
        .escape_debug()
        .to_string()
}

/// Read and check the snapshot at `path`.
pub fn read(path: &Path) -> Result<Snapshot, SnapshotError> {
    let bytes = crate::hostfile::read_bounded("snapshot", path, MAX_FILE_SIZE)?;
    parse(path, bytes)
}

fn parse(path: &Path, bytes: Vec<u8>) -> Result<Snapshot, SnapshotError> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(SnapshotError::Foreign {
            path: path.to_path_buf(),
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(SnapshotError::Truncated {
            path: path.to_path_buf(),
            detail: "the header is incomplete".into(),
        });
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if version != VERSION {
        return Err(SnapshotError::Version {
            path: path.to_path_buf(),
            found: version,
        });
    }
    let flags = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
    if flags & !FLAG_DETERMINISTIC != 0 {
        return Err(SnapshotError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("unknown header flags {flags:#x}"),
        });
    }
    let mut sections = Sections {
        rest: &bytes[HEADER_LEN..],
        offset: HEADER_LEN,
        path,
    };
    let machine = sections.expect(TAG_MACHINE)?;
    let hart = sections.expect(TAG_HART)?;
    let devices = sections.expect(TAG_DEVICES)?;
    let console = sections.expect(TAG_CONSOLE)?;
    let power_on = sections.expect(TAG_POWER_ON)?;
    let deterministic = if flags & FLAG_DETERMINISTIC != 0 {
        Some(sections.expect(TAG_DETERMINISTIC)?)
    } else {
        None
    };
    let mut disks = Vec::new();
    while sections.next_is(TAG_DISK) {
        disks.push(sections.expect(TAG_DISK)?);
    }
    let ram = sections.expect(TAG_RAM)?;
    sections.expect(TAG_END)?;
    if !sections.rest.is_empty() {
        return Err(SnapshotError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("{} bytes after the end section", sections.rest.len()),
        });
    }

    let corrupt = |section: &str, error: StateError| SnapshotError::Corrupt {
        path: path.to_path_buf(),
        detail: format!("section {section}: {error}"),
    };
    let mut input = StateReader::new(machine);
    let (memory, firmware) = (|| {
        let memory = input.u32("memory size")?;
        let firmware = match input.u8("firmware")? {
            0 => FirmwareMode::Builtin,
            1 => FirmwareMode::External,
            2 => FirmwareMode::None,
            other => return Err(StateError::invalid(format!("firmware kind {other}"))),
        };
        input.bytes(256, "writer version")?;
        input.finish("the machine section")?;
        if memory == 0 || !(memory as usize).is_multiple_of(PAGE_SIZE) {
            return Err(StateError::invalid(format!("memory size {memory}")));
        }
        Ok((memory, firmware))
    })()
    .map_err(|e| corrupt("MACH", e))?;

    let mut input = StateReader::new(hart);
    let hart = HartState::load(&mut input)
        .and_then(|state| input.finish("the hart").map(|()| state))
        .map_err(|e| corrupt("HART", e))?;

    let mut input = StateReader::new(console);
    let console_line = input
        .bytes(1 << 16, "console line")
        .and_then(|line| input.finish("the console").map(|()| line.to_vec()))
        .map_err(|e| corrupt("CONS", e))?;

    let mut input = StateReader::new(power_on);
    let power_on = (|| {
        let image = match input.bool("power-on image present")? {
            true => Some(PowerOn::load(&mut input)?),
            false => None,
        };
        input.finish("the power-on image")?;
        Ok(image)
    })()
    .map_err(|e| corrupt("BOOT", e))?;
    let deterministic = deterministic
        .map(|payload| {
            let mut input = StateReader::new(payload);
            let has_entropy = input.bool("entropy device")?;
            let mut state = [0u64; 4];
            for word in &mut state {
                *word = input.u64("entropy generator state")?;
            }
            input.finish("the deterministic state")?;
            Ok(DeterministicRecord {
                entropy: has_entropy.then_some(state),
            })
        })
        .transpose()
        .map_err(|e| corrupt("DETM", e))?;

    let disks = disks
        .into_iter()
        .map(|payload| parse_disk(payload).map_err(|e| corrupt("DISK", e)))
        .collect::<Result<Vec<_>, _>>()?;

    // The RAM groups are decompressed (and checked) once, by `load_ram`, straight into the
    // new machine's RAM, before it runs; here only the checksum vouches for them.
    let ram_offset = ram.as_ptr() as usize - bytes.as_ptr() as usize;
    let ram_len = ram.len();
    let devices = devices.to_vec();
    let mut bytes = bytes;
    bytes.truncate(ram_offset + ram_len);
    bytes.drain(..ram_offset);
    Ok(Snapshot {
        memory,
        firmware,
        hart,
        devices,
        console_line,
        power_on,
        deterministic,
        disks,
        ram: bytes,
        path: path.to_path_buf(),
    })
}

fn parse_disk(payload: &[u8]) -> Result<DiskRecord, StateError> {
    let mut input = StateReader::new(payload);
    let path = PathBuf::from(OsString::from_vec(
        input.bytes(1 << 16, "disk path")?.to_vec(),
    ));
    let size = input.u64("disk size")?;
    let secs = input.u64("disk modification time")?;
    let nanos = input.u32("disk modification time")?;
    if nanos >= 1_000_000_000 {
        return Err(StateError::invalid("disk modification time"));
    }
    let read_only = input.bool("disk read-only")?;
    let snapshot = input.bool("disk snapshot mode")?;
    let count = input.u64("overlay chunks")?;
    let mut overlay = Vec::new();
    for _ in 0..count {
        let offset = input.u64("overlay chunk offset")?;
        let data = input.bytes(
            rv32vm_devices::virtio::disk::OVERLAY_CHUNK_SIZE as usize,
            "overlay chunk",
        )?;
        if offset
            .checked_add(data.len() as u64)
            .is_none_or(|end| end > size)
        {
            return Err(StateError::invalid("overlay chunk beyond the disk"));
        }
        overlay.push((offset, data.to_vec()));
    }
    input.finish("a disk")?;
    if !overlay.is_empty() && !snapshot {
        return Err(StateError::invalid(
            "overlay data for a disk not in snapshot mode",
        ));
    }
    Ok(DiskRecord {
        path,
        size,
        modified: Duration::new(secs, nanos),
        options: DiskOptions {
            read_only,
            snapshot,
        },
        overlay,
    })
}

/// Walk the RAM section (page size, page count for `memory`, bitmap, and as many groups as the
/// bitmap needs, each decompressing to its size), calling `page(index, data)` for every saved
/// page.
fn decode_ram(
    payload: &[u8],
    memory: u32,
    mut page: impl FnMut(usize, &[u8]),
) -> Result<(), StateError> {
    let mut input = StateReader::new(payload);
    let page_size = input.u32("page size")? as usize;
    let pages = input.u32("page count")? as usize;
    if page_size != PAGE_SIZE || pages * PAGE_SIZE != memory as usize {
        return Err(StateError::invalid(format!(
            "{pages} pages of {page_size} bytes for {memory} bytes of RAM"
        )));
    }
    let bitmap_len = pages.div_ceil(8);
    let rest = &payload[8..];
    if rest.len() < bitmap_len {
        return Err(StateError::Truncated {
            what: "page bitmap",
        });
    }
    let (bitmap, mut groups) = rest.split_at(bitmap_len);
    let saved: Vec<usize> = (0..pages)
        .filter(|&i| bitmap[i / 8] & (1 << (i % 8)) != 0)
        .collect();
    let mut buffer = vec![0u8; RAM_GROUP_PAGES * PAGE_SIZE];
    for indices in saved.chunks(RAM_GROUP_PAGES) {
        let mut input = StateReader::new(groups);
        let len = input.u32("page group length")? as usize;
        if groups.len() < 4 + len {
            return Err(StateError::Truncated { what: "page group" });
        }
        let compressed = &groups[4..4 + len];
        groups = &groups[4 + len..];
        let expected = indices.len() * PAGE_SIZE;
        let out = &mut buffer[..expected];
        match lz4_flex::block::decompress_into(compressed, out) {
            Ok(n) if n == expected => {}
            Ok(n) => {
                return Err(StateError::invalid(format!(
                    "a page group holds {n} bytes, not {expected}"
                )))
            }
            Err(error) => {
                return Err(StateError::invalid(format!("a page group: {error}")));
            }
        }
        for (k, &index) in indices.iter().enumerate() {
            page(index, &out[k * PAGE_SIZE..(k + 1) * PAGE_SIZE]);
        }
    }
    if !groups.is_empty() {
        return Err(StateError::invalid("data after the last page group"));
    }
    Ok(())
}

impl Snapshot {
    /// Fill `ram` (fresh, all zeros, of the saved size) with the saved pages.
    pub fn load_ram(&self, ram: &mut GuestRam) -> Result<(), SnapshotError> {
        let base = ram.base() as u64;
        let mut misplaced = false;
        decode_ram(&self.ram, self.memory, |index, data| {
            misplaced |= !ram.write(base + (index * PAGE_SIZE) as u64, data);
        })
        .map_err(|error| SnapshotError::Corrupt {
            path: self.path.clone(),
            detail: format!("section RAM: {error}"),
        })?;
        if misplaced {
            return Err(SnapshotError::Corrupt {
                path: self.path.clone(),
                detail: "RAM pages beyond the machine's RAM".into(),
            });
        }
        Ok(())
    }

    /// Where the snapshot was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A file name for a snapshot saved from the console (`Ctrl-A S`), in the current directory,
/// not naming an existing file.
pub fn console_snapshot_path() -> PathBuf {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let mut n = 0u32;
    loop {
        let name = if n == 0 {
            format!("rv32vm-{stamp}.snap")
        } else {
            format!("rv32vm-{stamp}-{n}.snap")
        };
        let path = PathBuf::from(name);
        if !path.exists() {
            return path;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_file() -> Vec<u8> {
        sample_file_with(None)
    }

    /// A small file; with `entropy`, saved from a deterministic run.
    fn sample_file_with(entropy: Option<Option<[u64; 4]>>) -> Vec<u8> {
        let flags = if entropy.is_some() {
            FLAG_DETERMINISTIC
        } else {
            0
        };
        let mut file = FileWriter::new(flags);
        let mut machine = StateWriter::new();
        machine.u32(16 << 12);
        machine.u8(0);
        machine.bytes(b"test");
        file.section(TAG_MACHINE, machine.as_bytes());
        let mut hart = StateWriter::new();
        Hart::new().state().save(&mut hart);
        file.section(TAG_HART, hart.as_bytes());
        file.section(TAG_DEVICES, b"devices");
        let mut console = StateWriter::new();
        console.bytes(b"~ # ");
        file.section(TAG_CONSOLE, console.as_bytes());
        let mut power_on = StateWriter::new();
        power_on.bool(true);
        PowerOn {
            writes: vec![(0x8000_1000, b"kernel".to_vec())],
            hart: Hart::new().state(),
        }
        .save(&mut power_on);
        file.section(TAG_POWER_ON, power_on.as_bytes());

        if let Some(entropy) = entropy {
            let mut det = StateWriter::new();
            det.bool(entropy.is_some());
            entropy.unwrap_or_default().iter().for_each(|&w| det.u64(w));
            file.section(TAG_DETERMINISTIC, det.as_bytes());
        }
        let mut ram = GuestRam::new(0x8000_0000, 16 << 12).unwrap();
        assert!(ram.write(0x8000_3000, b"hello"));
        assert!(ram.write(0x8000_f000 - 1, &[1, 2]));
        let (payload, saved) = encode_ram(&ram);
        assert_eq!(saved, 3, "pages 3, 14 and 15");
        file.section(TAG_RAM, &payload);
        file.section(TAG_END, &[]);
        file.bytes
    }

    fn parse_and_load(bytes: Vec<u8>) -> Result<GuestRam, SnapshotError> {
        let snapshot = parse(Path::new("t"), bytes)?;
        let mut ram = GuestRam::new(0x8000_0000, snapshot.memory).unwrap();
        snapshot.load_ram(&mut ram)?;
        Ok(ram)
    }

    #[test]
    fn a_file_round_trips_with_sparse_ram() {
        let bytes = sample_file();
        let snapshot = parse(Path::new("t"), bytes).unwrap();
        assert_eq!(snapshot.memory, 16 << 12);
        assert_eq!(snapshot.console_line, b"~ # ");
        let power_on = snapshot.power_on.as_ref().expect("power-on image");
        assert_eq!(power_on.writes, vec![(0x8000_1000, b"kernel".to_vec())]);
        assert_eq!(snapshot.devices, b"devices");
        let mut ram = GuestRam::new(0x8000_0000, 16 << 12).unwrap();
        snapshot.load_ram(&mut ram).unwrap();
        assert_eq!(ram.bytes(0x8000_3000, 5), Some(&b"hello"[..]));
        assert_eq!(ram.bytes(0x8000_f000 - 1, 2), Some(&[1u8, 2][..]));
    }

    #[test]
    fn a_deterministic_run_is_recorded() {
        let plain = parse(Path::new("t"), sample_file()).unwrap();
        assert_eq!(plain.deterministic, None);
        for entropy in [Some([1, 2, 3, u64::MAX]), None] {
            let snapshot = parse(Path::new("t"), sample_file_with(Some(entropy))).unwrap();
            assert_eq!(
                snapshot.deterministic,
                Some(DeterministicRecord { entropy })
            );
            assert_eq!(snapshot.console_line, b"~ # ");
        }
        // The flag without its section, and unknown flags, are refused.
        let mut bytes = sample_file();
        bytes[12] |= FLAG_DETERMINISTIC as u8;
        let error = parse(Path::new("t"), bytes).err().unwrap().to_string();
        assert!(error.contains("DETM"), "{error}");
        let mut bytes = sample_file();
        bytes[12] |= 2;
        let error = parse(Path::new("t"), bytes).err().unwrap().to_string();
        assert!(error.contains("unknown header flags"), "{error}");
    }

    #[test]
    fn every_truncation_and_every_bit_flip_is_a_clean_error() {
        let bytes = sample_file();
        for cut in 0..bytes.len() {
            let error = parse_and_load(bytes[..cut].to_vec())
                .err()
                .unwrap_or_else(|| panic!("a file cut at {cut} was accepted"));
            let text = error.to_string();
            assert!(
                text.contains("truncated") || (cut < 8 && text.contains("not an rv32vm")),
                "cut {cut}: {text}"
            );
        }
        for byte in 0..bytes.len() {
            for bit in [0, 3, 7] {
                let mut flipped = bytes.clone();
                flipped[byte] ^= 1 << bit;
                let result = parse_and_load(flipped);
                assert!(
                    result.is_err(),
                    "a flip of bit {bit} in byte {byte} was accepted"
                );
            }
        }
    }

    #[test]
    fn foreign_files_and_other_versions_are_named_as_such() {
        let error = parse(Path::new("x"), b"\x7fELF and more".to_vec())
            .err()
            .unwrap();
        assert!(
            error.to_string().contains("not an rv32vm snapshot"),
            "{error}"
        );
        let mut bytes = sample_file();
        bytes[8] = VERSION as u8 + 1;
        let error = parse(Path::new("x"), bytes).err().unwrap();
        let named = format!("format version {}", VERSION + 1);
        assert!(error.to_string().contains(&named), "{error}");
        // Version 1 files have no power-on image: refused as an older format.
        let mut bytes = sample_file();
        bytes[8] = 1;
        let error = parse(Path::new("x"), bytes).err().unwrap();
        assert!(error.to_string().contains("format version 1"), "{error}");
    }
}
