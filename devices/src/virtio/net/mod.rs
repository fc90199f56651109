//! virtio-net (device id 1) with a user-mode network behind it ([`slirp`]: libslirp, as QEMU's
//! `-netdev user`), served on a worker thread of its own.
//!
//! Queues: 0 receive, 1 transmit. Every frame carries the 12-byte `virtio_net_hdr_v1` (virtio
//! 1.x); no offloads are offered, so the header is all zeros apart from `num_buffers` = 1 on
//! received frames, and each receive buffer chain takes one whole frame (Linux posts
//! 1518-byte buffers without `VIRTIO_NET_F_MRG_RXBUF`). Features: `MAC` (52:54:00:12:34:56, as
//! QEMU) and `STATUS` (link up).
//!
//! The worker thread owns libslirp. It sleeps in `poll` on libslirp's host sockets and its
//! wake-up eventfd (kicked by `QueueNotify`), passes transmitted frames to libslirp, and copies
//! the frames libslirp produces into receive buffers, raising the interrupt as the driver asks.
//! While the driver has no receive buffers, up to [`slirp::MAX_PENDING_FRAMES`] frames wait;
//! while the device is reset (no driver), frames for the guest are dropped. Host ports given as
//! [`HostForward`]s are bound when the device is created, so a busy port is an error at
//! start-up.

pub mod slirp;

use std::io;
use std::os::fd::AsRawFd;
use std::sync::mpsc;

use virtio_queue::QueueT;

use self::slirp::Slirp;
pub use self::slirp::{HostForward, HostForwardParseError, Protocol};
use super::chain::ChainBuffers;
use super::mmio::INT_USED_BUFFER;
use super::worker::{self, ActiveQueues, Flow, Worker, WorkerInbox};
use super::VirtioDevice;

/// virtio device type of a network card.
pub const VIRTIO_ID_NET: u32 = 1;
/// Feature: the configuration space holds the MAC address.
pub const VIRTIO_NET_F_MAC: u64 = 1 << 5;
/// Feature: the configuration space holds the link status.
pub const VIRTIO_NET_F_STATUS: u64 = 1 << 16;
/// Link status bit: up.
pub const VIRTIO_NET_S_LINK_UP: u16 = 1;
/// The guest's MAC address (QEMU's default).
pub const GUEST_MAC: [u8; 6] = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56];
/// Size of `virtio_net_hdr_v1`, before every frame in both directions.
pub const NET_HEADER_LEN: usize = 12;
/// Offset of `num_buffers` in the header.
const NUM_BUFFERS_OFFSET: usize = 10;
/// Size of each queue.
pub const QUEUE_SIZE: u16 = 256;
/// Index of the receive queue.
pub const RX_QUEUE: u16 = 0;
/// Index of the transmit queue.
pub const TX_QUEUE: u16 = 1;
/// The longest frame accepted from the guest (64 KiB, a GSO-sized frame, which it never sends
/// without offloads).
pub const MAX_FRAME_LEN: usize = 65_536;
/// The shortest Ethernet frame (header only).
const MIN_FRAME_LEN: usize = 14;

const NAME: &str = "virtio-net";

/// What the network offers the guest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetOptions {
    /// Host ports forwarded into the guest.
    pub forwards: Vec<HostForward>,
}

/// Why the network device could not start.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// A forwarded host port cannot be bound (in use, no permission, no such address).
    #[error("cannot forward host port {forward}: {source}")]
    Forward {
        /// The forward that failed.
        forward: HostForward,
        /// bind's error.
        source: io::Error,
    },
    /// The worker thread could not be started.
    #[error("cannot start the network thread: {0}")]
    Thread(io::Error),
    /// libslirp did not start (the worker thread ended without a word).
    #[error("the user-mode network (libslirp) did not start")]
    Slirp,
}

/// A network card on a user-mode network.
pub struct VirtioNet {
    options: NetOptions,
    config: [u8; 8],
    queue_sizes: [u16; 2],
    worker: Worker,
}

impl std::fmt::Debug for VirtioNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtioNet")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl VirtioNet {
    /// Starts the network thread (libslirp) and binds every forwarded port.
    pub fn new(options: NetOptions) -> Result<Self, NetError> {
        let (started_tx, started) = mpsc::channel();
        let forwards = options.forwards.clone();
        let worker = Worker::spawn("rv32vm-net", move |inbox| match Slirp::new(&forwards) {
            Ok(slirp) => {
                let _ = started_tx.send(Ok(()));
                serve_forever(inbox, slirp);
            }
            Err((forward, source)) => {
                let _ = started_tx.send(Err(NetError::Forward { forward, source }));
            }
        })
        .map_err(NetError::Thread)?;
        started.recv().map_err(|_| NetError::Slirp)??;
        let mut config = [0u8; 8];
        config[..6].copy_from_slice(&GUEST_MAC);
        config[6..].copy_from_slice(&VIRTIO_NET_S_LINK_UP.to_le_bytes());
        Ok(Self {
            options,
            config,
            queue_sizes: [QUEUE_SIZE, QUEUE_SIZE],
            worker,
        })
    }

    /// The forwarded ports.
    pub fn forwards(&self) -> &[HostForward] {
        &self.options.forwards
    }
}

impl VirtioDevice for VirtioNet {
    fn device_type(&self) -> u32 {
        VIRTIO_ID_NET
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn features(&self) -> u64 {
        VIRTIO_NET_F_MAC | VIRTIO_NET_F_STATUS
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

/// The worker thread: poll libslirp and the wake-up eventfd, move frames both ways.
fn serve_forever(mut inbox: WorkerInbox, mut slirp: Slirp) {
    let mut frame = Vec::new();
    let mut dropped_reported = 0;
    loop {
        if inbox.take_messages() == Flow::Stop {
            return;
        }
        match inbox.active.as_mut() {
            Some(active) => {
                active.drain(usize::from(TX_QUEUE), NAME, |chain, memory| {
                    let buffers = ChainBuffers::parse(chain, memory);
                    if let Some(fault) = buffers.fault() {
                        tracing::warn!(%fault, "virtio-net: transmit chain refused");
                        return 0;
                    }
                    match read_frame(&buffers, memory, &mut frame) {
                        Ok(()) => slirp.input(&frame),
                        Err(reason) => tracing::warn!(reason, "virtio-net: frame dropped"),
                    }
                    0
                });
                deliver(active, &mut slirp);
            }
            // No driver: nobody takes frames.
            None => slirp.to_guest().clear(),
        }
        if slirp.dropped() != dropped_reported {
            dropped_reported = slirp.dropped();
            tracing::debug!(
                dropped = dropped_reported,
                "virtio-net: frames for the guest dropped"
            );
        }
        slirp.poll(inbox.wake.as_raw_fd());
    }
}

/// Copies the frame of a transmit chain (after its header) into `frame`.
fn read_frame(
    buffers: &ChainBuffers,
    memory: &super::GuestMemoryMmap,
    frame: &mut Vec<u8>,
) -> Result<(), &'static str> {
    let total = buffers.readable_len();
    let header = NET_HEADER_LEN as u64;
    if total < header + MIN_FRAME_LEN as u64 {
        return Err("shorter than a header and an Ethernet header");
    }
    if total - header > MAX_FRAME_LEN as u64 {
        return Err("longer than the largest frame");
    }
    frame.resize((total - header) as usize, 0);
    buffers
        .read_at(memory, header, frame)
        .map_err(|_| "cannot read the frame")
}

/// Moves frames libslirp produced into the guest's receive buffers, one frame per chain.
fn deliver(active: &mut ActiveQueues, slirp: &mut Slirp) {
    let memory = &active.memory;
    let Some(queue) = active.queues.get_mut(usize::from(RX_QUEUE)) else {
        return;
    };
    if !queue.ready() {
        return;
    }
    let mut to_guest = slirp.to_guest();
    let mut used = 0usize;
    let mut header = [0u8; NET_HEADER_LEN];
    header[NUM_BUFFERS_OFFSET..].copy_from_slice(&1u16.to_le_bytes());
    while !to_guest.is_empty() {
        let Some(chain) = queue.pop_descriptor_chain(memory) else {
            // Out of buffers: ask for a notification, and look once more in case buffers
            // arrived meanwhile.
            match queue.enable_notification(memory) {
                Ok(true) => continue,
                Ok(false) => break,
                Err(error) => {
                    tracing::warn!(%error, "virtio-net: receive ring unreadable");
                    break;
                }
            }
        };
        let head = chain.head_index();
        let buffers = ChainBuffers::parse(chain, memory);
        let mut len = 0u32;
        if let Some(fault) = buffers.fault() {
            tracing::warn!(%fault, "virtio-net: receive chain refused");
        } else {
            // Frames too large for the buffer are dropped; the chain takes the next one.
            while let Some(frame) = to_guest.pop_front() {
                let needed = (NET_HEADER_LEN + frame.len()) as u64;
                if needed > buffers.writable_len() {
                    tracing::debug!(
                        len = frame.len(),
                        "virtio-net: frame larger than the buffer"
                    );
                    continue;
                }
                let written = buffers
                    .write_at(memory, 0, &header)
                    .and_then(|()| buffers.write_at(memory, NET_HEADER_LEN as u64, &frame));
                match written {
                    // At most NET_HEADER_LEN + a slirp frame (MTU-sized): fits in u32.
                    Ok(()) => len = needed as u32,
                    Err(error) => tracing::warn!(%error, "virtio-net: cannot write a frame"),
                }
                break;
            }
        }
        match queue.add_used(memory, head, len) {
            Ok(()) => used += 1,
            Err(error) => tracing::warn!(head, %error, "virtio-net: cannot add to used ring"),
        }
    }
    drop(to_guest);
    if used > 0 && worker::needs_interrupt(queue, memory, NAME) {
        active.interrupt.raise(INT_USED_BUFFER);
    }
}

#[cfg(test)]
mod tests;
