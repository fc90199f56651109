//! The code cache: region objects kept on disk across processes, so a region compiled once
//! (a boot's kernel code, a program's loops) is loaded, not compiled, by the next run that
//! plans the same region. Under `--tier t2`, where the guest waits for every compile, this is
//! what makes a second boot fast.
//!
//! A region's code depends on its plan (pcs and instructions of its blocks, predictions), the
//! code generator's settings ([`CodegenEnv`]'s flags and level), the host CPU the code was
//! tuned for and the `rv32vm` build; the key hashes all of them (128 bits) and names the file.
//! Helper addresses are not part of it: objects name their helpers (`loader`). Files are
//! written whole under a temporary name and renamed, so concurrent runs never see half a file;
//! a file whose header or checksum does not match is removed and the region compiled. The
//! cache is trimmed to its size limit (oldest files first; the blocks they take on disk) when
//! it is opened, at most once an hour.
//!
//! Only the `rv32vm` binary turns the cache on ([`set_code_cache`]); the library's tests
//! always compile.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::codegen::CodegenEnv;
use super::region::RegionPlan;

/// Bumped whenever the file layout or what a key covers changes.
const FORMAT: u32 = 2;
const MAGIC: &[u8; 8] = b"rv32vmT2";
/// Magic, key, object length, object checksum.
const HEADER_LEN: usize = 8 + 16 + 8 + 8;
/// Default size limit: at the default, about ten different kernels' boots.
pub const DEFAULT_MAX_BYTES: u64 = 512 << 20;
/// How often a cache is trimmed: walking a full cache stats a hundred thousand files, CPU
/// that a short run should not spend beside its compile thread every time it starts.
const TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);
/// The file whose modification time says when a trim of the cache last finished.
const TRIM_STAMP: &str = "last-trim";
/// The file whose modification time says when a run last started a trim, and for how long
/// other runs leave the trim to it.
const TRIM_CLAIM_STAMP: &str = "trim-started";
const TRIM_CLAIM: std::time::Duration = std::time::Duration::from_secs(60);

/// A code cache directory in use.
#[derive(Debug)]
pub struct CodeCache {
    dir: PathBuf,
    /// Hash of everything a key covers besides the region: build, host CPU, format.
    base: u64,
    max_bytes: u64,
}

static CODE_CACHE: OnceLock<CodeCache> = OnceLock::new();

/// Use `dir` as the code cache for this process (once; later calls are ignored): the
/// directory is made if need be and trimmed to `max_bytes` in the background. An error
/// (unwritable directory) leaves the cache off.
pub fn set_code_cache(dir: &Path, max_bytes: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let cache = CodeCache {
        dir: dir.to_path_buf(),
        base: build_identity(),
        max_bytes,
    };
    if CODE_CACHE.set(cache).is_ok() {
        let spawned = super::worker::spawn_without_signals("rv32vm-cache-trim", || {
            if let Some(cache) = CODE_CACHE.get() {
                if cache.trim_due(std::time::SystemTime::now()) {
                    cache.trim();
                    cache.stamp(TRIM_STAMP, std::time::SystemTime::now());
                }
            }
        });
        if let Err(e) = spawned {
            tracing::debug!("code cache: not trimmed: {e}");
        }
    }
    Ok(())
}

/// The process's code cache, if one was set.
pub fn code_cache() -> Option<&'static CodeCache> {
    CODE_CACHE.get()
}

/// What identifies the code generator and its target: this executable (its size and
/// modification time: any rebuild changes them), the host CPU and the file format.
fn build_identity() -> u64 {
    let mut h = DefaultHasher::new();
    FORMAT.hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    match std::env::current_exe().and_then(std::fs::metadata) {
        Ok(meta) => {
            meta.len().hash(&mut h);
            meta.modified().ok().hash(&mut h);
        }
        // No way to tell builds apart: a key no other process makes.
        Err(_) => std::process::id().hash(&mut h),
    }
    host_cpu().hash(&mut h);
    h.finish()
}

/// What LLVM's choice of host CPU and features depends on: the processor's identification and
/// feature words (CPUID), and which of its features the kernel lets programs use. Read here,
/// not through LLVM, which the process has not loaded yet when it opens the cache.
fn host_cpu() -> Vec<u32> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let mut words = Vec::new();
    for leaf in [
        0,
        1,
        0x8000_0000,
        0x8000_0001,
        0x8000_0002,
        0x8000_0003,
        0x8000_0004,
    ] {
        let r = __cpuid(leaf);
        // Leaf 1's EBX holds the APIC id of the core this runs on: not the CPU's identity.
        let ebx = if leaf == 1 { 0 } else { r.ebx };
        words.extend([r.eax, ebx, r.ecx, r.edx]);
    }
    for subleaf in [0, 1] {
        let r = __cpuid_count(7, subleaf);
        words.extend([r.eax, r.ebx, r.ecx, r.edx]);
    }
    let usable = [
        std::arch::is_x86_feature_detected!("avx"),
        std::arch::is_x86_feature_detected!("avx2"),
        std::arch::is_x86_feature_detected!("avx512f"),
    ];
    words.extend(usable.map(u32::from));
    words
}

/// 128 bits identifying a region's code apart from the helpers it calls: its plan and the
/// code generator's settings ([`fingerprint`]).
pub type Fingerprint = [u8; 16];

/// The fingerprint of `plan` compiled with `env` (its flags and level; not its helper
/// addresses, which objects do not hold).
pub fn fingerprint(plan: &RegionPlan, env: &CodegenEnv) -> Fingerprint {
    hash128(&(env.opt, env.flat, env.unchecked, env.inline_tlb, plan))
}

/// Two 64-bit SipHashes of `value` with different seeds.
fn hash128(value: &impl Hash) -> [u8; 16] {
    let half = |seed: u8| {
        let mut h = DefaultHasher::new();
        (seed, value).hash(&mut h);
        h.finish()
    };
    let mut out = [0; 16];
    out[..8].copy_from_slice(&half(0).to_le_bytes());
    out[8..].copy_from_slice(&half(1).to_le_bytes());
    out
}

/// Temporary files made by this process (names them uniquely).
static TEMP_FILES: AtomicU64 = AtomicU64::new(0);

impl CodeCache {
    /// The key of a region with `fingerprint` in this cache: the fingerprint and what
    /// identifies the build and host.
    pub fn key(&self, fingerprint: &Fingerprint) -> [u8; 16] {
        hash128(&(self.base, fingerprint))
    }

    fn path(&self, key: &[u8; 16]) -> PathBuf {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(&hex[..2]).join(format!("{}.o", &hex[2..]))
    }

    /// The object stored under `key`, if there is a valid one.
    pub fn get(&self, key: &[u8; 16]) -> Option<Vec<u8>> {
        let path = self.path(key);
        let mut file = std::fs::read(&path).ok()?;
        match check(&file, key) {
            Ok(()) => {
                file.drain(..HEADER_LEN);
                Some(file)
            }
            Err(why) => {
                tracing::debug!("code cache: removing {}: {why}", path.display());
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Forget what is stored under `key`.
    pub fn remove(&self, key: &[u8; 16]) {
        let _ = std::fs::remove_file(self.path(key));
    }

    /// Store `object` under `key` (best effort: a full disk only costs a compile later).
    pub fn put(&self, key: &[u8; 16], object: &[u8]) {
        let path = self.path(key);
        let Some(dir) = path.parent() else { return };
        let temp = dir.join(format!(
            ".{}.{}.tmp",
            std::process::id(),
            TEMP_FILES.fetch_add(1, Ordering::Relaxed)
        ));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::File::create(&temp))
            .and_then(|mut f| {
                f.write_all(MAGIC)?;
                f.write_all(key)?;
                f.write_all(&(object.len() as u64).to_le_bytes())?;
                f.write_all(&checksum(object).to_le_bytes())?;
                f.write_all(object)
            })
            .and_then(|()| std::fs::rename(&temp, &path));
        if let Err(e) = written {
            tracing::debug!("code cache: cannot store {}: {e}", path.display());
            let _ = std::fs::remove_file(&temp);
        }
    }

    /// Whether the cache is due a trim at `now`: not trimmed within [`TRIM_INTERVAL`], and no
    /// other run started a trim within [`TRIM_CLAIM`]. If so, claims the trim: a run that
    /// ends before its trim does (most short ones) leaves it to a later run.
    fn trim_due(&self, now: std::time::SystemTime) -> bool {
        let recent = |name: &str, within: std::time::Duration| {
            let last = std::fs::metadata(self.dir.join(name)).and_then(|m| m.modified());
            last.is_ok_and(|last| now.duration_since(last).is_ok_and(|age| age < within))
        };
        if recent(TRIM_STAMP, TRIM_INTERVAL) || recent(TRIM_CLAIM_STAMP, TRIM_CLAIM) {
            return false;
        }
        self.stamp(TRIM_CLAIM_STAMP, now);
        true
    }

    /// Set the modification time of the file `name` in the cache directory to `when`.
    fn stamp(&self, name: &str, when: std::time::SystemTime) {
        let path = self.dir.join(name);
        if let Err(e) = std::fs::File::create(&path).and_then(|f| f.set_modified(when)) {
            tracing::debug!("code cache: cannot stamp {}: {e}", path.display());
        }
    }

    /// Remove the oldest files (by modification time) until the cache holds at most
    /// three quarters of its limit, if it holds more than the limit; and temporary files
    /// an interrupted run left behind.
    fn trim(&self) {
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
        let Ok(subdirs) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for sub in subdirs.flatten() {
            let Ok(entries) = std::fs::read_dir(sub.path()) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                let name = entry.file_name();
                if name.to_string_lossy().ends_with(".tmp") {
                    if modified < hour_ago {
                        let _ = std::fs::remove_file(entry.path());
                    }
                    continue;
                }
                files.push((modified, disk_usage(&meta), entry.path()));
            }
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= self.max_bytes {
            return;
        }
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes / 4 * 3 {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Whether `file` is a whole, intact entry for `key`.
fn check(file: &[u8], key: &[u8; 16]) -> Result<(), &'static str> {
    if file.len() < HEADER_LEN || &file[..8] != MAGIC {
        return Err("not a code cache file");
    }
    if &file[8..24] != key {
        return Err("another key");
    }
    let len = u64::from_le_bytes(file[24..32].try_into().expect("8 bytes"));
    let sum = u64::from_le_bytes(file[32..40].try_into().expect("8 bytes"));
    let object = &file[HEADER_LEN..];
    if object.len() as u64 != len {
        return Err("truncated");
    }
    if checksum(object) != sum {
        return Err("checksum mismatch");
    }
    Ok(())
}

/// The space a file takes on disk: small objects fill whole blocks, which is what the
/// limit is about.
fn disk_usage(meta: &std::fs::Metadata) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.blocks() * 512
    }
    #[cfg(not(unix))]
    {
        meta.len()
    }
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_cache(max_bytes: u64) -> CodeCache {
        let dir = std::env::temp_dir().join(format!(
            "rv32vm-code-cache-test-{}-{}",
            std::process::id(),
            TEMP_FILES.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        CodeCache {
            dir,
            base: build_identity(),
            max_bytes,
        }
    }

    #[test]
    fn stores_finds_and_rejects_damaged_files() {
        let cache = temp_cache(DEFAULT_MAX_BYTES);
        let (a, b) = ([1; 16], [2; 16]);
        assert_eq!(cache.get(&a), None);
        cache.put(&a, b"object a");
        assert_eq!(cache.get(&a).as_deref(), Some(&b"object a"[..]));
        assert_eq!(cache.get(&b), None);
        // A file under the wrong name, a flipped byte, a truncated file: each is removed.
        std::fs::create_dir_all(cache.path(&b).parent().expect("subdirectory")).expect("mkdir");
        std::fs::copy(cache.path(&a), cache.path(&b)).expect("copy");
        assert_eq!(cache.get(&b), None);
        assert!(!cache.path(&b).exists());
        let mut bytes = std::fs::read(cache.path(&a)).expect("read");
        bytes[HEADER_LEN + 1] ^= 1;
        std::fs::write(cache.path(&a), &bytes).expect("write");
        assert_eq!(cache.get(&a), None);
        assert!(!cache.path(&a).exists());
        cache.put(&a, b"object a");
        let bytes = std::fs::read(cache.path(&a)).expect("read");
        std::fs::write(cache.path(&a), &bytes[..bytes.len() - 1]).expect("write");
        assert_eq!(cache.get(&a), None);
        let _ = std::fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn trimming_removes_the_oldest_files() {
        let mut cache = temp_cache(DEFAULT_MAX_BYTES);
        let keys: Vec<[u8; 16]> = (0..8u8).map(|i| [i; 16]).collect();
        for (i, key) in keys.iter().enumerate() {
            cache.put(key, &[0; 100]);
            let file = std::fs::File::options()
                .write(true)
                .open(cache.path(key))
                .expect("open");
            let age = std::time::Duration::from_secs(100 - i as u64);
            file.set_modified(std::time::SystemTime::now() - age)
                .expect("set mtime");
        }
        // The limit counts the blocks each file takes on this file system.
        let per_file = disk_usage(&std::fs::metadata(cache.path(&keys[0])).expect("stat"));
        cache.max_bytes = 4 * per_file;
        cache.trim();
        let kept: Vec<bool> = keys.iter().map(|k| cache.path(k).exists()).collect();
        assert_eq!(
            kept,
            [false, false, false, false, false, true, true, true],
            "the newest three quarters of the limit stay"
        );
        let _ = std::fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn a_cache_is_trimmed_at_most_once_an_hour() {
        let cache = temp_cache(DEFAULT_MAX_BYTES);
        let now = std::time::SystemTime::now();
        let minutes = |m: u64| std::time::Duration::from_secs(60 * m);
        assert!(cache.trim_due(now), "a cache never trimmed is due");
        // A run that started a trim and ended before it finished: the next minute's runs
        // leave it to that one, later runs take it over.
        assert!(!cache.trim_due(now + minutes(0)));
        assert!(cache.trim_due(now + minutes(2)));
        cache.stamp(TRIM_STAMP, now + minutes(3));
        assert!(!cache.trim_due(now + minutes(30)));
        assert!(cache.trim_due(now + minutes(64)));
        // A clock that went back does not stop trims for good.
        assert!(cache.trim_due(now - minutes(120)));
        let _ = std::fs::remove_dir_all(&cache.dir);
    }
}
