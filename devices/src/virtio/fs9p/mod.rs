//! virtio-9p (device id 9): a host directory shared with the guest over 9P2000.L, served by the
//! `p9` crate (crosvm's server) on a worker thread of its own.
//!
//! One request queue. Each descriptor chain holds one 9P request (driver-readable) and room
//! for its reply (device-writable); Linux's zero-copy reads and writes split these into a
//! header buffer and the user's pages, which the device reads and writes as one byte stream.
//! Every request passes [`guard::screen`] first (confinement to the shared directory, the
//! read-only policy, ownership); see there for what the guest can and cannot do.
//!
//! The configuration space is the mount tag (`le16 tag_len` then the tag bytes, feature
//! `VIRTIO_9P_MOUNT_TAG`): the guest mounts the share with
//! `mount -t 9p -o trans=virtio,version=9p2000.L TAG DIR`.

pub(crate) mod guard;

use std::io;
use std::path::{Path, PathBuf};

use self::guard::{error_reply, Header, HEADER_LEN};
use super::chain::ChainBuffers;
use super::worker::{ActiveQueues, Flow, Worker, WorkerInbox};
use super::{Chain, GuestMemoryMmap, VirtioDevice};

/// virtio device type of a 9P transport.
pub const VIRTIO_ID_9P: u32 = 9;
/// Feature: the configuration space holds a mount tag.
pub const VIRTIO_9P_MOUNT_TAG: u64 = 1 << 0;
/// Size of the request queue (QEMU's, and what Linux's 9P transport expects).
pub const QUEUE_SIZE: u16 = 128;
/// The largest 9P message the server accepts (the client asks for at most 500 KiB on virtio,
/// `PAGE_SIZE * (VIRTQUEUE_NUM - 3)`, and the smaller of the two wins).
pub const MAX_MESSAGE_SIZE: u32 = 1 << 20;
/// The longest mount tag.
pub const MAX_TAG_LEN: usize = 64;
/// The mount tag when none is given.
pub const DEFAULT_TAG: &str = "host";

const NAME: &str = "virtio-9p";

/// How a directory is shared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareOptions {
    /// The mount tag the guest names the share by.
    pub tag: String,
    /// Refuse every change with `EROFS`.
    pub read_only: bool,
}

impl Default for ShareOptions {
    fn default() -> Self {
        Self {
            tag: DEFAULT_TAG.into(),
            read_only: false,
        }
    }
}

/// Why a directory cannot be shared.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// The directory does not exist or cannot be resolved.
    #[error("cannot share {path}: {source}")]
    Resolve {
        /// The directory as given.
        path: PathBuf,
        /// What the host said.
        source: io::Error,
    },
    /// The path is not a directory.
    #[error("cannot share {0}: not a directory")]
    NotADirectory(PathBuf),
    /// The tag is empty, too long, or has characters other than letters, digits, `_`, `-`, `.`.
    #[error("bad mount tag `{0}`: use 1 to {MAX_TAG_LEN} letters, digits, `_`, `-` or `.`")]
    BadTag(String),
    /// The 9P server could not start (it needs `/proc`).
    #[error("cannot start the 9P server for {path}: {source}")]
    Server {
        /// The shared directory.
        path: PathBuf,
        /// What the host said.
        source: io::Error,
    },
    /// The worker thread could not be started.
    #[error("cannot start the 9P worker thread: {0}")]
    Thread(io::Error),
}

/// Whether `tag` is a mount tag we accept.
pub fn is_valid_tag(tag: &str) -> bool {
    (1..=MAX_TAG_LEN).contains(&tag.len())
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// A shared host directory as a virtio device.
pub struct Virtio9p {
    root: PathBuf,
    options: ShareOptions,
    config: Vec<u8>,
    queue_sizes: [u16; 1],
    worker: Worker,
}

impl std::fmt::Debug for Virtio9p {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Virtio9p")
            .field("root", &self.root)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Virtio9p {
    /// Shares `dir` (resolved to a canonical path once, here) and starts its worker thread.
    pub fn new(dir: &Path, options: ShareOptions) -> Result<Self, ShareError> {
        if !is_valid_tag(&options.tag) {
            return Err(ShareError::BadTag(options.tag));
        }
        let root = dir.canonicalize().map_err(|source| ShareError::Resolve {
            path: dir.to_path_buf(),
            source,
        })?;
        if !root.is_dir() {
            return Err(ShareError::NotADirectory(dir.to_path_buf()));
        }
        let server = p9::Server::with_config(p9::Config {
            root: root.clone().into_boxed_path(),
            msize: MAX_MESSAGE_SIZE,
            uid_map: Default::default(),
            gid_map: Default::default(),
            ascii_casefold: false,
        })
        .map_err(|source| ShareError::Server {
            path: root.clone(),
            source,
        })?;
        let read_only = options.read_only;
        let worker = Worker::spawn("rv32vm-9p", move |inbox| {
            serve_forever(inbox, server, read_only)
        })
        .map_err(ShareError::Thread)?;
        let mut config = (options.tag.len() as u16).to_le_bytes().to_vec();
        config.extend_from_slice(options.tag.as_bytes());
        Ok(Self {
            root,
            options,
            config,
            queue_sizes: [QUEUE_SIZE],
            worker,
        })
    }

    /// The shared directory (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The mount tag.
    pub fn tag(&self) -> &str {
        &self.options.tag
    }

    /// Whether the share refuses changes.
    pub fn read_only(&self) -> bool {
        self.options.read_only
    }
}

impl VirtioDevice for Virtio9p {
    fn device_type(&self) -> u32 {
        VIRTIO_ID_9P
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn features(&self) -> u64 {
        VIRTIO_9P_MOUNT_TAG
    }

    fn queue_max_sizes(&self) -> &[u16] {
        &self.queue_sizes
    }

    fn config(&self) -> &[u8] {
        &self.config
    }

    fn reset(&mut self) {
        self.worker.deactivate();
    }

    fn has_worker(&self) -> bool {
        true
    }

    fn activate(&mut self, queues: ActiveQueues) {
        self.worker.activate(queues);
    }

    fn kick(&mut self, _queue_index: u16) {
        self.worker.kick();
    }
}

/// The worker thread: serve the request queue whenever it is kicked.
fn serve_forever(mut inbox: WorkerInbox, mut server: p9::Server, read_only: bool) {
    let mut request = Vec::new();
    let mut reply = Vec::new();
    loop {
        if inbox.take_messages() == Flow::Stop {
            return;
        }
        if let Some(active) = inbox.active.as_mut() {
            active.drain(0, NAME, |chain, memory| {
                serve_request(
                    &mut server,
                    chain,
                    memory,
                    read_only,
                    &mut request,
                    &mut reply,
                )
            });
        }
        inbox.wake.wait(None);
    }
}

/// Serves one request chain: screen it, run it through the server, write the reply. Returns
/// the reply's length (0 when nothing could be answered).
fn serve_request(
    server: &mut p9::Server,
    chain: Chain<'_>,
    memory: &GuestMemoryMmap,
    read_only: bool,
    request: &mut Vec<u8>,
    reply: &mut Vec<u8>,
) -> u32 {
    let buffers = ChainBuffers::parse(chain, memory);
    if let Some(fault) = buffers.fault() {
        tracing::warn!(%fault, "virtio-9p request refused");
        return 0;
    }
    reply.clear();
    let readable = buffers.readable_len();
    // A request longer than any message the server accepts: answer from its header alone.
    let limit = u64::from(MAX_MESSAGE_SIZE);
    let take = readable.min(limit) as usize;
    request.clear();
    request.resize(take, 0);
    if let Err(error) = buffers.read_at(memory, 0, request) {
        tracing::warn!(%error, "virtio-9p: cannot read the request");
        return 0;
    }
    let Some(header) = Header::parse(request) else {
        tracing::warn!(
            len = readable,
            "virtio-9p: request shorter than a 9P header"
        );
        return 0;
    };
    if readable > limit || u64::from(header.size) > readable || (header.size as usize) < HEADER_LEN
    {
        tracing::warn!(size = header.size, readable, "virtio-9p: bad request size");
        reply.extend_from_slice(&error_reply(header.tag, libc::EMSGSIZE));
    } else {
        request.truncate(header.size as usize);
        match guard::screen(request, read_only) {
            Err(refusal) => {
                tracing::debug!(kind = header.kind, ?refusal, "virtio-9p request refused");
                reply.extend_from_slice(&error_reply(header.tag, refusal.errno()));
            }
            Ok(()) => {
                // A bug in the server must fail this request, not the device: a panic becomes
                // an EIO reply (and the default hook reports it on stderr).
                let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    server.handle_message(&mut &request[..], reply)
                }));
                let failure = match handled {
                    Ok(Ok(())) => None,
                    Ok(Err(error)) => Some(error.to_string()),
                    Err(_) => Some("the 9P server panicked".to_string()),
                };
                if let Some(error) = failure {
                    tracing::warn!(kind = header.kind, %error, "virtio-9p: no reply");
                    reply.clear();
                    reply.extend_from_slice(&error_reply(header.tag, libc::EIO));
                }
            }
        }
    }
    if reply.len() as u64 > buffers.writable_len() {
        tracing::warn!(
            reply = reply.len(),
            room = buffers.writable_len(),
            "virtio-9p: reply does not fit the request's buffers"
        );
        reply.clear();
        reply.extend_from_slice(&error_reply(header.tag, libc::ENOBUFS));
        if reply.len() as u64 > buffers.writable_len() {
            return 0;
        }
    }
    match buffers.write_at(memory, 0, reply) {
        // A reply is at most MAX_MESSAGE_SIZE bytes (the server's msize).
        Ok(()) => reply.len() as u32,
        Err(error) => {
            tracing::warn!(%error, "virtio-9p: cannot write the reply");
            0
        }
    }
}

#[cfg(test)]
mod tests;
