//! virtio-9p driven as Linux drives it: 9P2000.L requests in descriptor chains on the request
//! queue, replies read back from guest memory, effects checked on the host.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use super::guard::msg;
use super::*;
use crate::bus::MmioDevice;
use crate::virtio::test_driver::{Buffer, Driver, BUFFERS, RAM_BASE};
use crate::virtio::{take_dma_written_pages, DMA_PAGE_SIZE};

const TVERSION: u8 = 100;
const TATTACH: u8 = 104;
const TREAD: u8 = 116;
const TCLUNK: u8 = 120;
const TGETATTR: u8 = 24;
const NOFID: u32 = u32::MAX;
const ROOT: u32 = 0;
/// O_RDONLY, O_WRONLY, O_RDWR as 9P sends them.
const RDONLY: u32 = 0;
const WRONLY: u32 = 1;

/// A scratch directory with `share/` (the shared directory) and `outside/` (must never be
/// reached), removed on drop.
struct Scratch {
    base: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let base =
            std::env::temp_dir().join(format!("rv32vm-9p-{}-{unique}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("share")).unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside/secret"), b"host secret\n").unwrap();
        Self { base }
    }

    fn share(&self) -> PathBuf {
        self.base.join("share")
    }

    fn outside(&self) -> PathBuf {
        self.base.join("outside")
    }

    /// Everything under `outside/`, for "nothing changed" checks.
    fn outside_listing(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        for entry in fs::read_dir(self.outside()).unwrap() {
            let path = entry.unwrap().path();
            let data = fs::read(&path).unwrap_or_default();
            out.push((path, data));
        }
        out.sort();
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

/// Builds 9P message bodies.
#[derive(Default)]
struct Body(Vec<u8>);

impl Body {
    fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn str(mut self, s: &str) -> Self {
        self = self.u16(s.len() as u16);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn bytes(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }
}

/// A reply: its type and body.
#[derive(Debug)]
struct Reply {
    kind: u8,
    body: Vec<u8>,
}

impl Reply {
    /// The errno of an Rlerror, or None for a success reply.
    fn errno(&self) -> Option<i32> {
        (self.kind == msg::RLERROR)
            .then(|| u32::from_le_bytes(self.body[..4].try_into().unwrap()) as i32)
    }

    fn ok(self) -> Self {
        assert!(self.errno().is_none(), "9P error {:?}", self.errno());
        self
    }
}

/// A 9P client over the device's request queue.
struct Client {
    driver: Driver<Virtio9p>,
    tag: u16,
}

impl Client {
    fn new(dir: &Path, options: ShareOptions) -> Self {
        let device = Virtio9p::new(dir, options).expect("share");
        let driver = Driver::start(device, VIRTIO_9P_MOUNT_TAG, 1);
        let mut client = Self { driver, tag: 0 };
        let reply = client.rpc(TVERSION, Body::default().u32(65536).str("9P2000.L"));
        assert_eq!(reply.kind, TVERSION + 1);
        let attach = Body::default()
            .u32(ROOT)
            .u32(NOFID)
            .str("root")
            .str("")
            .u32(0);
        assert_eq!(client.rpc(TATTACH, attach).ok().kind, TATTACH + 1);
        client
    }

    /// Sends raw message bytes with `reply_room` bytes of reply space; returns the reply
    /// bytes (used length).
    fn raw(&mut self, message: &[u8], reply_room: u32) -> Vec<u8> {
        self.driver.free_buffers();
        let request = self.driver.readable(message);
        let reply = self.driver.writable(reply_room);
        let len = self.driver.round_trip(0, &[request, reply]);
        self.driver.bytes(reply.addr, len as usize)
    }

    fn rpc(&mut self, kind: u8, body: Body) -> Reply {
        self.tag = self.tag.wrapping_add(1);
        let mut message = ((7 + body.0.len()) as u32).to_le_bytes().to_vec();
        message.push(kind);
        message.extend_from_slice(&self.tag.to_le_bytes());
        message.extend_from_slice(&body.0);
        let reply = self.raw(&message, 128 * 1024);
        assert!(reply.len() >= 7, "short reply {reply:?}");
        assert_eq!(
            u32::from_le_bytes(reply[..4].try_into().unwrap()) as usize,
            reply.len()
        );
        assert_eq!(u16::from_le_bytes([reply[5], reply[6]]), self.tag);
        Reply {
            kind: reply[4],
            body: reply[7..].to_vec(),
        }
    }

    fn walk(&mut self, fid: u32, newfid: u32, names: &[&str]) -> Reply {
        let mut body = Body::default().u32(fid).u32(newfid).u16(names.len() as u16);
        for name in names {
            body = body.str(name);
        }
        self.rpc(msg::TWALK, body)
    }

    fn lopen(&mut self, fid: u32, flags: u32) -> Reply {
        self.rpc(msg::TLOPEN, Body::default().u32(fid).u32(flags))
    }

    fn lcreate(&mut self, dfid: u32, name: &str, flags: u32, mode: u32) -> Reply {
        let body = Body::default()
            .u32(dfid)
            .str(name)
            .u32(flags)
            .u32(mode)
            .u32(0);
        self.rpc(msg::TLCREATE, body)
    }

    fn mkdir(&mut self, dfid: u32, name: &str) -> Reply {
        let body = Body::default().u32(dfid).str(name).u32(0o755).u32(0);
        self.rpc(msg::TMKDIR, body)
    }

    fn read(&mut self, fid: u32, offset: u64, count: u32) -> Vec<u8> {
        let reply = self
            .rpc(TREAD, Body::default().u32(fid).u64(offset).u32(count))
            .ok();
        let len = u32::from_le_bytes(reply.body[..4].try_into().unwrap()) as usize;
        reply.body[4..4 + len].to_vec()
    }

    fn read_all(&mut self, fid: u32) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let chunk = self.read(fid, out.len() as u64, 8192);
            if chunk.is_empty() {
                return out;
            }
            out.extend_from_slice(&chunk);
        }
    }

    fn write(&mut self, fid: u32, offset: u64, data: &[u8]) -> Reply {
        let body = Body::default()
            .u32(fid)
            .u64(offset)
            .u32(data.len() as u32)
            .bytes(data);
        self.rpc(msg::TWRITE, body)
    }

    fn clunk(&mut self, fid: u32) {
        self.rpc(TCLUNK, Body::default().u32(fid)).ok();
    }

    /// Walks `path` from the root to `fid`, opens it read-only and reads it whole.
    fn cat(&mut self, fid: u32, path: &[&str]) -> Result<Vec<u8>, i32> {
        let walked = self.walk(ROOT, fid, path);
        if let Some(errno) = walked.errno() {
            return Err(errno);
        }
        // A walk that stops early answers with fewer qids and no new fid (Linux: ENOENT).
        if usize::from(u16::from_le_bytes([walked.body[0], walked.body[1]])) != path.len() {
            return Err(libc::ENOENT);
        }
        let opened = self.lopen(fid, RDONLY);
        if let Some(errno) = opened.errno() {
            self.clunk(fid);
            return Err(errno);
        }
        let data = self.read_all(fid);
        self.clunk(fid);
        Ok(data)
    }
}

/// sha256 is not available here; a strong enough content check is the bytes themselves.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 251) as u8).collect()
}

#[test]
fn config_space_holds_the_mount_tag() {
    let scratch = Scratch::new("config");
    let options = ShareOptions {
        tag: "work".into(),
        read_only: false,
    };
    let client = Client::new(&scratch.share(), options);
    let mut driver = client.driver;
    assert_eq!(driver.read(DEVICE_ID_REG), VIRTIO_ID_9P);
    assert_eq!(driver.dev.read(0x100, 2), 4);
    assert_eq!(
        driver.dev.read(0x102, 4),
        u64::from_le_bytes(*b"work\0\0\0\0")
    );
}

const DEVICE_ID_REG: u64 = crate::virtio::mmio::DEVICE_ID;

#[test]
fn bad_tags_and_paths_are_refused() {
    let scratch = Scratch::new("bad");
    for tag in ["", "a b", "x,ro", &"t".repeat(MAX_TAG_LEN + 1)] {
        let options = ShareOptions {
            tag: tag.into(),
            read_only: false,
        };
        assert!(matches!(
            Virtio9p::new(&scratch.share(), options),
            Err(ShareError::BadTag(_))
        ));
    }
    assert!(matches!(
        Virtio9p::new(&scratch.base.join("missing"), ShareOptions::default()),
        Err(ShareError::Resolve { .. })
    ));
    assert!(matches!(
        Virtio9p::new(&scratch.outside().join("secret"), ShareOptions::default()),
        Err(ShareError::NotADirectory(_))
    ));
}

#[test]
fn guest_reads_a_host_file() {
    let scratch = Scratch::new("read");
    let data = pattern(300_000);
    fs::create_dir(scratch.share().join("dir")).unwrap();
    fs::write(scratch.share().join("dir/big"), &data).unwrap();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    assert_eq!(client.cat(1, &["dir", "big"]), Ok(data));
    assert_eq!(client.cat(1, &["dir", "missing"]), Err(libc::ENOENT));
}

/// What the worker thread writes into guest memory lands in the dirty bitmap of the memory
/// the transport was given, so the machine's fence.i sees code a 9P read replaced.
#[test]
fn replies_written_by_the_worker_mark_guest_pages_dirty() {
    let scratch = Scratch::new("dirty");
    let data = pattern(3 * DMA_PAGE_SIZE);
    fs::write(scratch.share().join("code"), &data).unwrap();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    assert!(client.walk(ROOT, 1, &["code"]).errno().is_none());
    client.lopen(1, RDONLY).ok();
    // A Tread for the whole file, with a reply buffer of exactly the reply's size.
    let body = Body::default().u32(1).u64(0).u32(data.len() as u32);
    let mut message = ((7 + body.0.len()) as u32).to_le_bytes().to_vec();
    message.push(TREAD);
    message.extend_from_slice(&0x77u16.to_le_bytes());
    message.extend_from_slice(&body.0);
    client.driver.free_buffers();
    let request = client.driver.readable(&message);
    let reply = client.driver.writable(11 + data.len() as u32);
    // Forget everything written so far (the driver's own writes included).
    take_dma_written_pages(&client.driver.mem, |_| {});
    let len = client.driver.round_trip(0, &[request, reply]);
    assert_eq!(len, reply.len);
    assert_eq!(client.driver.bytes(reply.addr + 11, data.len()), data);
    let mut dirty = Vec::new();
    take_dma_written_pages(&client.driver.mem, |offset| dirty.push(offset));
    let first = (reply.addr - RAM_BASE) as usize / DMA_PAGE_SIZE;
    let last = (reply.addr - RAM_BASE + u64::from(len) - 1) as usize / DMA_PAGE_SIZE;
    for page in first..=last {
        assert!(
            dirty.contains(&(page * DMA_PAGE_SIZE)),
            "page {page} of the reply not marked (dirty: {dirty:x?})"
        );
    }
    // Besides the reply, the device wrote only its used ring (the ring areas are below the
    // buffers).
    let buffers = (BUFFERS - RAM_BASE) as usize;
    for &offset in &dirty {
        let page = offset / DMA_PAGE_SIZE;
        assert!(
            offset < buffers || (first..=last).contains(&page),
            "page {page} marked, but the device did not write it"
        );
    }
}

#[test]
fn guest_writes_files_and_directories_the_host_sees() {
    let scratch = Scratch::new("write");
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    client.mkdir(ROOT, "tree").ok();
    client.walk(ROOT, 1, &["tree"]).ok();
    client.mkdir(1, "sub").ok();
    client.walk(1, 2, &["sub"]).ok();
    client.lcreate(2, "file", WRONLY, 0o644).ok();
    let data = pattern(100_000);
    for (i, chunk) in data.chunks(30_000).enumerate() {
        let reply = client.write(2, (i * 30_000) as u64, chunk).ok();
        assert_eq!(reply.body[..4], (chunk.len() as u32).to_le_bytes());
    }
    client.clunk(2);
    let path = scratch.share().join("tree/sub/file");
    assert_eq!(fs::read(&path).unwrap(), data);
    let meta = fs::metadata(&path).unwrap();
    // SAFETY: getuid has no preconditions.
    assert_eq!(meta.uid(), unsafe { libc::getuid() });
    assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
    assert!(scratch.share().join("tree/sub").is_dir());
}

#[test]
fn read_only_share_refuses_every_change() {
    let scratch = Scratch::new("ro");
    fs::write(scratch.share().join("file"), b"original").unwrap();
    let options = ShareOptions {
        tag: "host".into(),
        read_only: true,
    };
    let mut client = Client::new(&scratch.share(), options);
    assert_eq!(client.cat(1, &["file"]), Ok(b"original".to_vec()));
    assert_eq!(
        client.lcreate(ROOT, "new", WRONLY, 0o644).errno(),
        Some(libc::EROFS)
    );
    assert_eq!(client.mkdir(ROOT, "dir").errno(), Some(libc::EROFS));
    client.walk(ROOT, 2, &["file"]).ok();
    assert_eq!(client.lopen(2, WRONLY).errno(), Some(libc::EROFS));
    assert_eq!(client.lopen(2, 0o1000).errno(), Some(libc::EROFS));
    client.lopen(2, RDONLY).ok();
    assert_eq!(client.write(2, 0, b"changed").errno(), Some(libc::EROFS));
    let unlink = Body::default().u32(ROOT).str("file").u32(0);
    assert_eq!(
        client.rpc(msg::TUNLINKAT, unlink).errno(),
        Some(libc::EROFS)
    );
    let rename = Body::default().u32(ROOT).str("file").u32(ROOT).str("moved");
    assert_eq!(
        client.rpc(msg::TRENAMEAT, rename).errno(),
        Some(libc::EROFS)
    );
    let setattr = Body::default().u32(2).u32(1).u32(0o777).bytes(&[0; 52]);
    assert_eq!(
        client.rpc(msg::TSETATTR, setattr).errno(),
        Some(libc::EROFS)
    );
    assert_eq!(fs::read(scratch.share().join("file")).unwrap(), b"original");
    let names: Vec<_> = fs::read_dir(scratch.share()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn dot_dot_and_slashes_never_leave_the_share() {
    let scratch = Scratch::new("dotdot");
    fs::create_dir(scratch.share().join("sub")).unwrap();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    for path in [
        &[".."][..],
        &["sub", "..", ".."],
        &["../outside/secret"],
        &["sub/../../outside"],
        &["."],
        &[""],
    ] {
        assert_eq!(
            client.walk(ROOT, 5, path).errno(),
            Some(libc::EINVAL),
            "{path:?}"
        );
    }
    let before = scratch.outside_listing();
    assert_eq!(
        client
            .lcreate(ROOT, "../outside/planted", WRONLY, 0o644)
            .errno(),
        Some(libc::EINVAL)
    );
    assert_eq!(
        client.mkdir(ROOT, "../outside/dir").errno(),
        Some(libc::EINVAL)
    );
    let unlink = Body::default().u32(ROOT).str("../outside/secret").u32(0);
    assert_eq!(
        client.rpc(msg::TUNLINKAT, unlink).errno(),
        Some(libc::EINVAL)
    );
    let rename = Body::default()
        .u32(ROOT)
        .str("sub")
        .u32(ROOT)
        .str("../outside/sub");
    assert_eq!(
        client.rpc(msg::TRENAMEAT, rename).errno(),
        Some(libc::EINVAL)
    );
    assert_eq!(scratch.outside_listing(), before);
    assert!(scratch.share().join("sub").is_dir());
}

#[test]
fn symlinks_pointing_out_are_never_followed_on_the_host() {
    let scratch = Scratch::new("symlink");
    let outside = scratch.outside();
    std::os::unix::fs::symlink(&outside, scratch.share().join("abs")).unwrap();
    std::os::unix::fs::symlink("../outside", scratch.share().join("rel")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), scratch.share().join("file")).unwrap();
    let before = scratch.outside_listing();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    for link in ["abs", "rel"] {
        // Through the link: the walk stops at the symlink itself.
        assert!(client.cat(1, &[link, "secret"]).is_err(), "{link}");
        // The link as a directory fid: nothing can be created in it.
        client.walk(ROOT, 2, &[link]).ok();
        assert!(client
            .lcreate(2, "planted", WRONLY, 0o644)
            .errno()
            .is_some());
        assert!(client.mkdir(2, "planted").errno().is_some());
        client.clunk(2);
    }
    // Opening a symlink fid refuses (ELOOP) instead of opening its target.
    assert_eq!(client.cat(1, &["file"]), Err(libc::ELOOP));
    client.walk(ROOT, 3, &["file"]).ok();
    assert_eq!(client.lopen(3, WRONLY | 0o1000).errno(), Some(libc::ELOOP));
    // A hard link of the symlink fid links the symlink, not its target.
    let link = Body::default().u32(ROOT).u32(3).str("hard");
    let _ = client.rpc(msg::TLINK, link);
    if let Ok(meta) = fs::symlink_metadata(scratch.share().join("hard")) {
        assert!(meta.file_type().is_symlink());
    }
    // The guest reads the link text and resolves it in its own namespace.
    let readlink = client.rpc(22, Body::default().u32(3)).ok();
    assert!(String::from_utf8_lossy(&readlink.body).contains("outside/secret"));
    assert_eq!(scratch.outside_listing(), before);
}

#[test]
fn a_symlink_swapped_in_during_walks_never_leads_out() {
    let scratch = Scratch::new("swap");
    let dir = scratch.share().join("swap");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("secret"), b"inside\n").unwrap();
    let parked = scratch.share().join("parked");
    let before = scratch.outside_listing();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());

    // A fid held on the directory keeps naming that directory after it is swapped away.
    client.walk(ROOT, 7, &["swap"]).ok();
    fs::rename(&dir, &parked).unwrap();
    std::os::unix::fs::symlink(scratch.outside(), &dir).unwrap();
    client.lcreate(7, "created", WRONLY, 0o644).ok();
    assert!(parked.join("created").exists());
    assert_eq!(client.cat(1, &["swap", "secret"]), Err(libc::ENOENT));
    fs::remove_file(&dir).unwrap();
    fs::rename(&parked, &dir).unwrap();

    // Walks racing a host thread that swaps the directory and a symlink to outside.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, dir, parked, outside) =
            (stop.clone(), dir.clone(), parked.clone(), scratch.outside());
        std::thread::spawn(move || {
            let mut swaps = 0u32;
            while !stop.load(Ordering::Relaxed) {
                fs::rename(&dir, &parked).unwrap();
                std::os::unix::fs::symlink(&outside, &dir).unwrap();
                std::thread::yield_now();
                fs::remove_file(&dir).unwrap();
                fs::rename(&parked, &dir).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let mut inside_reads = 0;
    for i in 0..400u32 {
        match client.cat(1, &["swap", "secret"]) {
            Ok(data) => {
                assert_eq!(data, b"inside\n", "read through a swapped-in symlink");
                inside_reads += 1;
            }
            Err(errno) => assert!(
                [libc::ENOENT, libc::ENOTDIR, libc::ELOOP].contains(&errno),
                "errno {errno}"
            ),
        }
        if client.walk(ROOT, 2, &["swap"]).errno().is_none() {
            let _ = client.lcreate(2, &format!("raced{i}"), WRONLY, 0o644);
            client.clunk(2);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0);
    assert_eq!(
        scratch.outside_listing(),
        before,
        "something reached outside/"
    );
    let _ = inside_reads;
}

#[test]
fn ownership_stays_with_the_host_user_and_set_id_bits_go() {
    let scratch = Scratch::new("owner");
    fs::write(scratch.share().join("prog"), b"#!/bin/sh\n").unwrap();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    client.walk(ROOT, 1, &["prog"]).ok();
    // chmod 4755 + chown 4242:4242 in one setattr (MODE | UID | GID).
    let setattr = Body::default()
        .u32(1)
        .u32(0x7)
        .u32(0o104_755)
        .u32(4242)
        .u32(4242)
        .bytes(&[0; 40]);
    client.rpc(msg::TSETATTR, setattr).ok();
    let meta = fs::metadata(scratch.share().join("prog")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o755);
    // SAFETY: getuid has no preconditions.
    assert_eq!(meta.uid(), unsafe { libc::getuid() });
    client.lcreate(ROOT, "suid", WRONLY, 0o4755).ok();
    let meta = fs::metadata(scratch.share().join("suid")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7000, 0);
    let getattr = client.rpc(TGETATTR, Body::default().u32(1).u64(0x7ff)).ok();
    assert_eq!(getattr.kind, TGETATTR + 1);
}

#[test]
fn hostile_requests_fail_alone() {
    let scratch = Scratch::new("hostile");
    fs::write(scratch.share().join("file"), b"still here").unwrap();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..300 {
        let len = 7 + round % 90;
        let mut message: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        if round % 3 == 0 {
            message[..4].copy_from_slice(&(len as u32).to_le_bytes());
            // Types the server knows, with garbage fields (never a Tversion: that would
            // clunk the root fid).
            message[4] = [110, 12, 14, 26, 72, 74, 76, 116, 118, 120, 24, 40][round % 12];
        }
        let _ = client.raw(&message, 4096);
    }
    // Reply space too small for any reply, a request buffer outside RAM, an empty chain.
    let walk = Body::default().u32(ROOT).u32(9).u16(0);
    let mut message = 11u32.to_le_bytes().to_vec();
    message.extend_from_slice(&[msg::TWALK, 0, 0]);
    message.extend_from_slice(&walk.0);
    let len = message.len() as u32;
    message[..4].copy_from_slice(&len.to_le_bytes());
    assert!(client.raw(&message, 4).is_empty());
    let outside = Buffer {
        addr: 0x1000,
        len: 64,
        writable: false,
    };
    let reply = client.driver.writable(64);
    assert_eq!(client.driver.round_trip(0, &[outside, reply]), 0);
    // A request claiming to be longer than its buffers.
    let mut lying = message.clone();
    lying[..4].copy_from_slice(&1000u32.to_le_bytes());
    let reply = client.raw(&lying, 64);
    assert_eq!(reply[4], msg::RLERROR);
    // The device still works.
    assert_eq!(client.cat(20, &["file"]), Ok(b"still here".to_vec()));
}

#[test]
fn completions_raise_the_interrupt_until_acknowledged() {
    let scratch = Scratch::new("irq");
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    client.driver.ack_interrupt();
    assert!(!client.driver.irq());
    client.mkdir(ROOT, "d").ok();
    assert!(client.driver.wait_irq(), "a completion raises the line");
    assert_eq!(client.driver.ack_interrupt(), INT_USED);
    assert!(!client.driver.irq());
}

const INT_USED: u32 = crate::virtio::mmio::INT_USED_BUFFER;

#[test]
fn reset_and_drop_stop_the_worker() {
    let scratch = Scratch::new("reset");
    fs::write(scratch.share().join("f"), b"x").unwrap();
    let mut client = Client::new(&scratch.share(), ShareOptions::default());
    client.driver.write(crate::virtio::mmio::STATUS, 0);
    // After a reset, a request is not served (the queues are the driver's again).
    let request = client.driver.readable(&[0; 16]);
    let reply = client.driver.writable(64);
    client.driver.push(0, &[request, reply]);
    client.driver.notify(0);
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(client.driver.take_used(0).is_empty());
    assert_eq!(client.driver.read(crate::virtio::mmio::INTERRUPT_STATUS), 0);
    drop(client);
}
