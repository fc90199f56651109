//! The system-mode platform: guest RAM, the device bus, Sv32 translation, interrupt wiring
//! between devices and `mip`, the built-in SBI (or an external M-mode firmware), and idling.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rv32vm_devices::virtio::{
    self, Virtio9p, VirtioBlk, VirtioDevice, VirtioMmio, VirtioNet, VirtioRng, Waker,
};
use rv32vm_devices::{
    Bus, Clint, DeviceId, GoldfishRtc, Plic, PowerEvent, StateError, StateReader, StateWriter,
    Syscon, Uart, UartInput,
};
use rv32vm_firmware::sbi::{self, ResetKind, SbiCall, SbiHost};

use super::console::ConsoleOut;
use super::determinism::{Deterministic, VirtualTime};
use super::map;
use super::power::PowerOn;
use super::ram::GuestRam;
use super::semihosting::{self, Semihosting};
use super::terminal::{self, HostRequests};
use crate::cpu::csr::{IRQ_MEI, IRQ_MSI, IRQ_MTI, IRQ_SEI, IRQ_STI};
use crate::cpu::mmu::access_fault;
use crate::cpu::{Access, Exception, Hart, Trap};
use crate::exec::{Platform, Resume, Stop, Target};

/// Blocks between polls of the host clock and console (a poll costs a clock read).
const POLL_INTERVAL_BLOCKS: u32 = 256;
/// Longest single host sleep while the guest waits for an interrupt.
const MAX_IDLE_SLEEP: Duration = Duration::from_millis(10);
/// Nanoseconds per machine-clock tick.
const NS_PER_TICK: u64 = 1_000_000_000 / crate::cpu::clock::TIMEBASE_HZ;
/// Jump of virtual time at one WFI in a deterministic run (10 ms in ticks) when no timer is
/// armed, or when console input waits and no timer deadline comes sooner.
const VIRTUAL_IDLE_STEP: u64 = crate::cpu::clock::TIMEBASE_HZ / 100;
/// Timer deadlines from here on (29 000 years of ticks) count as disarmed when a
/// deterministic run's WFI looks for the next event (`mtimecmp` and `stimecmp` reset to all
/// ones).
const DISARMED_DEADLINE: u64 = 1 << 63;
/// Traps delivered to the guest in a row with no instruction retired in between before the
/// machine gives up: the guest's trap handler itself traps (no handler installed, a garbage
/// kernel or firmware). A working guest retires handler instructions between any two traps.
const TRAP_LOOP_LIMIT: u32 = 64;

/// A request to save the machine, which pauses it at the next block boundary
/// ([`Stop::Pause`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveRequest {
    /// `Ctrl-A S` on the console: save to a file named on the console, then go on.
    Console,
    /// The `--expect` script's last pattern appeared with `--save FILE`: save, then exit.
    Script,
}

/// Which firmware serves the S-mode kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirmwareMode {
    /// rv32vm's SBI: the hart starts in S-mode and ecalls from S are handled here.
    Builtin,
    /// An M-mode firmware (OpenSBI fw_dynamic) loaded at RAM base handles everything.
    External,
    /// No firmware (`--bios none`, as QEMU's `-bios none`): the kernel itself runs in M-mode.
    /// Misaligned loads and stores are performed, as QEMU performs them, since no firmware
    /// is there to emulate them.
    None,
}

/// The machine as the engine sees it.
pub struct System {
    /// Before `ram`: devices hold views of RAM (virtio DMA) and must go first.
    pub bus: Bus,
    /// The devices' view of RAM, whose dirty bitmap says which pages they wrote (before `ram`
    /// too).
    dma_view: virtio::GuestMemoryMmap,
    /// Host address of guest RAM's first byte.
    ram_host: usize,
    pub ram: GuestRam,
    plic: DeviceId<Plic>,
    clint: DeviceId<Clint>,
    uart: DeviceId<Uart<ConsoleOut>>,
    syscon: DeviceId<Syscon>,
    rtc: DeviceId<GoldfishRtc>,
    /// virtio-blk disks, in slot order (slot n = /dev/vd<a+n> in a Linux guest).
    disks: Vec<DeviceId<VirtioMmio<VirtioBlk>>>,
    /// virtio-9p shares (`--share`), after the disks.
    shares: Vec<DeviceId<VirtioMmio<Virtio9p>>>,
    /// The virtio-net card (`--net`), after the shares.
    net: Option<DeviceId<VirtioMmio<VirtioNet>>>,
    /// The entropy device, in the slot after the disks.
    rng: Option<DeviceId<VirtioMmio<VirtioRng>>>,
    /// `--semihosting`: the guest's semihosting calls are served, not delivered as breakpoints.
    semihosting: Option<Semihosting>,
    /// A snapshot the host asked for, waiting for the next block boundary.
    save_requested: Option<SaveRequest>,
    /// What this machine was powered on with (saved in snapshots, for reboots after a
    /// restore).
    power_on: Option<Arc<PowerOn>>,
    pub console_input: UartInput,
    /// The console output's shared state (for reports).
    console: ConsoleOut,
    /// Quit and statistics requests from the console's escape keys.
    requests: Arc<HostRequests>,
    firmware: FirmwareMode,
    /// The built-in SBI's S-mode timer deadline.
    sbi_timer: u64,
    polls: u32,
    /// A stop the host asked for (signal, `Ctrl-A x`, `--timeout`). The first one wins, and it
    /// beats anything the guest asks for.
    host_stop: Option<Stop>,
    /// A stop the guest asked for: poweroff/exit beats reset, the first exit wins.
    guest_stop: Option<Stop>,
    /// `Ctrl-A s`: report statistics once no stop is pending.
    stats_requested: bool,
    /// Traps delivered in a row with no instruction retired (trap-loop detection).
    trap_streak: u32,
    /// `hart.instret` at the last delivered trap; `None` after progress the engine does not
    /// count (an emulated SBI call or misaligned access).
    instret_at_last_trap: Option<u64>,
    /// The first trap of the current streak, with the privilege and pc it was raised at.
    streak_start: Option<(Trap, crate::cpu::Priv, u32)>,
    /// Wall-clock limit (`--timeout`): when it passes, the run stops with status 124.
    pub deadline: Option<(Instant, Duration)>,
    /// In a deterministic run: the virtual time devices read (the RTC, the UART's input
    /// pacing), kept equal to the machine clock.
    virtual_time: Option<VirtualTime>,
}

/// Building the device set failed (a programming error in the memory map, reported cleanly).
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    #[error(transparent)]
    Ram(#[from] super::ram::RamError),
    #[error("device map: {0}")]
    Bus(#[from] rv32vm_devices::BusError),
    #[error("interrupt wiring: {0}")]
    Irq(#[from] rv32vm_devices::IrqError),
    #[error("guest memory for virtio: {0}")]
    VirtioMemory(String),
    #[error("too many disks: at most {0} (virtio-mmio slots, one is the entropy device)")]
    TooManyDisks(u32),
    /// Host devices (`--share`, `--net`) complete requests on worker threads at host speed.
    #[error(
        "--share and --net cannot be used with --deterministic: they are served by host \
         threads at host speed"
    )]
    HostDevicesNotDeterministic,
    /// Disks, shares and the network card need more virtio-mmio slots than the machine has.
    #[error(
        "too many virtio devices: {disks} disks + {shares} shares + {nets} network cards; at most \
         {max} in all (virtio-mmio slots, one is the entropy device)"
    )]
    TooManyDevices {
        disks: usize,
        shares: usize,
        nets: usize,
        max: u32,
    },
}

/// The devices that connect the guest to the host (`--share`, `--net`). Their worker threads
/// and host state (bound ports, open directories) survive guest reboots: the machine takes
/// them back with [`System::take_host_devices`] and hands them to the next one.
#[derive(Debug, Default)]
pub struct HostDevices {
    /// One virtio-9p device per `--share`, in order.
    pub shares: Vec<Virtio9p>,
    /// The virtio-net card, with `--net`.
    pub net: Option<VirtioNet>,
    /// The host side of semihosting, with `--semihosting` (its open host files).
    pub semihosting: Option<Semihosting>,
}

impl HostDevices {
    /// How many virtio-mmio slots these take.
    pub fn slots(&self) -> usize {
        self.shares.len() + usize::from(self.net.is_some())
    }
}

impl System {
    /// A machine with `ram_size` bytes of RAM and the standard devices; with `deterministic`,
    /// on virtual time with a seeded entropy device (see [`super::determinism`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ram_size: u32,
        firmware: FirmwareMode,
        console: ConsoleOut,
        console_input: UartInput,
        requests: Arc<HostRequests>,
        disks: Vec<VirtioBlk>,
        host: HostDevices,
        deterministic: Option<Deterministic>,
    ) -> Result<System, SystemError> {
        let ram = GuestRam::new(map::RAM_BASE, ram_size)?;
        if deterministic.is_some() && host.slots() > 0 {
            return Err(SystemError::HostDevicesNotDeterministic);
        }
        let virtual_time = deterministic.map(|_| VirtualTime::new());
        if disks.len() as u32 >= map::VIRTIO_SLOTS {
            return Err(SystemError::TooManyDisks(map::VIRTIO_SLOTS - 1));
        }
        if (disks.len() + host.slots()) as u32 >= map::VIRTIO_SLOTS {
            return Err(SystemError::TooManyDevices {
                disks: disks.len(),
                shares: host.shares.len(),
                nets: usize::from(host.net.is_some()),
                max: map::VIRTIO_SLOTS - 1,
            });
        }
        let mut plic = Plic::new();
        let uart_irq = plic.irq_line(map::UART_IRQ)?;
        let rtc_irq = plic.irq_line(map::RTC_IRQ)?;
        // One line per populated virtio slot: the disks, the shares, the network card, then
        // the entropy device.
        let virtio_irqs = (0..Self::virtio_slots(disks.len(), host.slots()))
            .map(|slot| plic.irq_line(map::VIRTIO_IRQ_BASE + slot))
            .collect::<Result<Vec<_>, _>>()?;
        let mut uart = Uart::with_input(uart_irq, console.clone(), console_input.clone());
        let rtc = match (&virtual_time, deterministic) {
            (Some(time), Some(det)) => {
                uart.set_rx_pacing(Some(time.rx_pacing()));
                GoldfishRtc::new(rtc_irq, time.wall_clock(det.rtc_start_ns))
            }
            _ => GoldfishRtc::with_system_clock(rtc_irq),
        };
        let mut bus = Bus::new();
        let syscon = bus.insert(map::SYSCON_BASE as u64, map::SYSCON_SIZE, Syscon::new())?;
        let rtc = bus.insert(map::RTC_BASE as u64, map::RTC_SIZE, rtc)?;
        let clint = bus.insert(map::CLINT_BASE as u64, map::CLINT_SIZE, Clint::new())?;
        let plic = bus.insert(map::PLIC_BASE as u64, map::PLIC_SIZE, plic)?;
        let uart = bus.insert(map::UART_BASE as u64, map::UART_SIZE, uart)?;
        let ram_host = ram
            .host(map::RAM_BASE as u64, ram_size as u64)
            .ok_or_else(|| SystemError::VirtioMemory("RAM has no host mapping".into()))?;
        // SAFETY: `ram` is moved into the returned System, whose field order drops `bus` (and
        // every device holding this memory view) before `ram` unmaps it.
        let memory = unsafe {
            virtio::guest_memory_from_raw(ram_host, map::RAM_BASE as u64, ram_size as usize)
        }
        .map_err(|e| SystemError::VirtioMemory(e.to_string()))?;
        let slot_base =
            |slot: usize| map::VIRTIO_BASE as u64 + slot as u64 * map::VIRTIO_STRIDE as u64;
        let mut slots = virtio_irqs.into_iter().enumerate();
        let mut disk_ids = Vec::new();
        let dma_view = memory.clone();
        for (disk, (slot, irq)) in disks.into_iter().zip(&mut slots) {
            let dev = VirtioMmio::new(disk, memory.clone(), irq);
            disk_ids.push(bus.insert(slot_base(slot), virtio::mmio::MMIO_SIZE, dev)?);
        }
        // Host devices complete requests on worker threads: their interrupts wake this (the
        // CPU) thread when it idles in WFI.
        let cpu_thread = std::thread::current();
        let waker: Waker = Arc::new(move || cpu_thread.unpark());
        let mut share_ids = Vec::new();
        for (share, (slot, irq)) in host.shares.into_iter().zip(&mut slots) {
            let dev = VirtioMmio::new(share, memory.clone(), irq);
            dev.set_waker(waker.clone());
            share_ids.push(bus.insert(slot_base(slot), virtio::mmio::MMIO_SIZE, dev)?);
        }
        let mut net_id = None;
        if let Some(net) = host.net {
            if let Some((slot, irq)) = slots.next() {
                let dev = VirtioMmio::new(net, memory.clone(), irq);
                dev.set_waker(waker.clone());
                net_id = Some(bus.insert(slot_base(slot), virtio::mmio::MMIO_SIZE, dev)?);
            }
        }
        // The one line left is the entropy device's.
        let rng = match slots.next() {
            Some((slot, irq)) => {
                let device = match deterministic {
                    Some(det) => VirtioRng::seeded(det.rng_seed()),
                    None => VirtioRng::new(),
                };
                let rng = VirtioMmio::new(device, memory, irq);
                Some(bus.insert(slot_base(slot), virtio::mmio::MMIO_SIZE, rng)?)
            }
            None => None,
        };
        // The other slots answer as empty virtio-mmio transports (device ID 0), as QEMU's
        // virt machine does, so a user's device tree listing all of them still boots.
        for slot in Self::virtio_slots(
            disk_ids.len(),
            share_ids.len() + usize::from(net_id.is_some()),
        )..map::VIRTIO_SLOTS
        {
            bus.insert(
                slot_base(slot as usize),
                virtio::mmio::MMIO_SIZE,
                virtio::empty::EmptySlot,
            )?;
        }
        Ok(System {
            ram,
            bus,
            dma_view,
            ram_host: ram_host as usize,
            plic,
            clint,
            uart,
            syscon,
            rtc,
            disks: disk_ids,
            shares: share_ids,
            net: net_id,
            rng,
            semihosting: host.semihosting,
            save_requested: None,
            power_on: None,
            console_input,
            console,
            requests,
            firmware,
            sbi_timer: u64::MAX,
            polls: 0,
            host_stop: None,
            guest_stop: None,
            stats_requested: false,
            trap_streak: 0,
            instret_at_last_trap: None,
            streak_start: None,
            deadline: None,
            virtual_time,
        })
    }

    /// The virtio-mmio slots a machine with `disks` disks and `host_slots` host devices
    /// ([`HostDevices::slots`]) populates (disks, shares, network card, then the entropy
    /// device), for the device tree.
    pub fn virtio_slots(disks: usize, host_slots: usize) -> u32 {
        (disks + host_slots) as u32 + 1
    }

    /// Write every disk's data to its host file (fsync); errors are logged.
    pub fn flush_disks(&mut self) {
        for &id in &self.disks {
            if let Some(dev) = self.bus.device_mut(id) {
                if let Err(e) = dev.device_mut().flush() {
                    tracing::error!(
                        "disk {}: flush failed: {e}",
                        dev.device().disk().path().display()
                    );
                }
            }
        }
    }

    /// Take the disks off the machine (for the next one, after a guest reboot), flushed.
    pub fn take_disks(&mut self) -> Vec<VirtioBlk> {
        self.flush_disks();
        let ids = std::mem::take(&mut self.disks);
        ids.into_iter()
            .filter_map(|id| self.bus.take(id).map(VirtioMmio::into_device))
            .collect()
    }

    /// Take the shares and the network card off the machine (for the next one, after a guest
    /// reboot). Each is reset first: its worker lets go of this machine's RAM.
    pub fn take_host_devices(&mut self) -> HostDevices {
        let shares = std::mem::take(&mut self.shares)
            .into_iter()
            .filter_map(|id| self.bus.take(id).map(VirtioMmio::into_device))
            .map(|mut share| {
                share.reset();
                share
            })
            .collect();
        let net = self
            .net
            .take()
            .and_then(|id| self.bus.take(id).map(VirtioMmio::into_device))
            .map(|mut net| {
                net.reset();
                net
            });
        HostDevices {
            shares,
            net,
            semihosting: self.semihosting.take(),
        }
    }

    /// Whether host devices (`--share`, `--net`, `--semihosting`) are attached: their state
    /// lives partly on the host (open files, sockets) and is not saved in snapshots.
    pub fn has_host_devices(&self) -> bool {
        !self.shares.is_empty() || self.net.is_some() || self.semihosting.is_some()
    }

    /// The firmware serving the kernel.
    pub fn firmware(&self) -> FirmwareMode {
        self.firmware
    }

    /// Power on: put `image` in RAM (fresh, all zeros) and return the hart at its first
    /// instruction; the image is kept for snapshots.
    pub fn power_on(&mut self, image: Arc<PowerOn>) -> Result<Hart, super::power::DoesNotFit> {
        let hart = image.apply(&mut self.ram)?;
        self.power_on = Some(image);
        Ok(hart)
    }

    /// What this machine was powered on with, if known.
    pub fn power_on_image(&self) -> Option<&Arc<PowerOn>> {
        self.power_on.as_ref()
    }

    /// Record what a restored machine was powered on with (from its snapshot).
    pub fn set_power_on_image(&mut self, image: Option<Arc<PowerOn>>) {
        self.power_on = image;
    }

    /// The disks, in slot order.
    pub fn disks(&self) -> impl Iterator<Item = &VirtioBlk> + '_ {
        self.disks
            .iter()
            .filter_map(|&id| self.bus.device(id).map(VirtioMmio::device))
    }

    /// The console output's shared state.
    pub fn console(&self) -> &ConsoleOut {
        &self.console
    }

    /// Writes the state of the platform (the built-in SBI's timer) and of every device, in a
    /// fixed order, for a snapshot: syscon, RTC, CLINT, PLIC, UART (with the host input not
    /// yet in its FIFO), then each virtio-mmio slot. RAM, the hart and disk contents are saved
    /// apart.
    pub fn save_devices(&self, out: &mut StateWriter) {
        out.u64(self.sbi_timer);
        let missing = || tracing::error!("a device of the machine is missing from its bus");
        match self.bus.device(self.syscon) {
            Some(d) => d.save_state(out),
            None => missing(),
        }
        match self.bus.device(self.rtc) {
            Some(d) => d.save_state(out),
            None => missing(),
        }
        match self.bus.device(self.clint) {
            Some(d) => d.save_state(out),
            None => missing(),
        }
        match self.bus.device(self.plic) {
            Some(d) => d.save_state(out),
            None => missing(),
        }
        match self.bus.device(self.uart) {
            Some(d) => d.save_state(out),
            None => missing(),
        }
        out.bytes(&self.console_input.pending_bytes());
        out.u32(self.disks.len() as u32);
        for &id in &self.disks {
            match self.bus.device(id) {
                Some(d) => d.save_state(out),
                None => missing(),
            }
        }
        out.bool(self.rng.is_some());
        if let Some(d) = self.rng.and_then(|id| self.bus.device(id)) {
            d.save_state(out);
        }
    }

    /// Restores what [`System::save_devices`] wrote into this machine, which must have the
    /// same devices (the same number of disks).
    pub fn restore_devices(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        let missing = || StateError::invalid("a device of the machine is missing from its bus");
        self.sbi_timer = input.u64("sbi timer")?;
        self.bus
            .device_mut(self.syscon)
            .ok_or_else(missing)?
            .restore_state(input)?;
        self.bus
            .device_mut(self.rtc)
            .ok_or_else(missing)?
            .restore_state(input)?;
        self.bus
            .device_mut(self.clint)
            .ok_or_else(missing)?
            .restore_state(input)?;
        self.bus
            .device_mut(self.plic)
            .ok_or_else(missing)?
            .restore_state(input)?;
        self.bus
            .device_mut(self.uart)
            .ok_or_else(missing)?
            .restore_state(input)?;
        let pending_input = input.bytes(usize::MAX, "console input")?;
        self.console_input.push(pending_input);
        let disks = input.u32("disk count")?;
        if disks as usize != self.disks.len() {
            return Err(StateError::invalid(format!(
                "the snapshot has {disks} disks, the machine {}",
                self.disks.len()
            )));
        }
        for &id in &self.disks {
            self.bus
                .device_mut(id)
                .ok_or_else(missing)?
                .restore_state(input)?;
        }
        let has_rng = input.bool("entropy device")?;
        if has_rng != self.rng.is_some() {
            return Err(StateError::invalid(
                "entropy device present in only one machine",
            ));
        }
        if let Some(id) = self.rng {
            self.bus
                .device_mut(id)
                .ok_or_else(missing)?
                .restore_state(input)?;
        }
        Ok(())
    }

    /// Flush console output still buffered.
    pub fn flush_console(&mut self) {
        if let Some(u) = self.bus.device_mut(self.uart) {
            let _ = u.output_mut().flush();
        }
    }

    /// Sample the devices' interrupt outputs into `mip`.
    fn sync_interrupts(&mut self, hart: &mut Hart) {
        // One machine clock: a guest write to CLINT mtime sets it, for `time` too.
        if let Some(written) = self
            .bus
            .device_mut(self.clint)
            .and_then(|c| c.take_mtime_write())
        {
            hart.set_time(written);
        }
        let now = hart.time();
        if let Some(time) = &self.virtual_time {
            time.set_ticks(now);
        }
        let mut set = 0;
        if let Some(clint) = self.bus.device_mut(self.clint) {
            clint.set_time(now);
            if clint.msip_pending() {
                set |= IRQ_MSI;
            }
            if clint.mtip_pending() {
                set |= IRQ_MTI;
            }
        }
        if let Some(uart) = self.bus.device_mut(self.uart) {
            uart.poll_input();
        }
        if let Some(rtc) = self.bus.device_mut(self.rtc) {
            rtc.poll();
        }
        if let Some(plic) = self.bus.device(self.plic) {
            if plic.m_external_pending() {
                set |= IRQ_MEI;
            }
            if plic.s_external_pending() {
                set |= IRQ_SEI;
            }
        }
        let stce = hart.csr.menvcfg >> 63 != 0;
        let stimer = if stce {
            hart.csr.stimecmp
        } else {
            self.sbi_timer
        };
        let driven_sti = stce || self.firmware == FirmwareMode::Builtin;
        let mut mask = IRQ_MSI | IRQ_MTI | IRQ_MEI | IRQ_SEI;
        if driven_sti {
            mask |= IRQ_STI;
            if now >= stimer {
                set |= IRQ_STI;
            }
        }
        hart.csr.mip = hart.csr.mip & !mask | set;
        self.poll_host_requests();
        if self.requests.take_stats() {
            self.stats_requested = true;
        }
        if self.save_requested.is_none() {
            if self.console.take_save_request() {
                self.save_requested = Some(SaveRequest::Script);
            } else if self.requests.take_save() {
                self.save_requested = Some(SaveRequest::Console);
            }
        }
        if let Some(event) = self
            .bus
            .device_mut(self.syscon)
            .and_then(|s| s.take_event())
        {
            self.request_guest_stop(match event {
                PowerEvent::PowerOff { exit_code } => Stop::Exit(exit_code as i32),
                PowerEvent::Failure { exit_code } => Stop::Exit(exit_code.max(1) as i32),
                PowerEvent::Reset => Stop::Reset,
            });
        }
    }

    /// Notice a termination signal, `Ctrl-A x` or the `--timeout` deadline. Once a host stop is
    /// pending nothing more is taken, so a later request stays for whoever looks next.
    fn poll_host_requests(&mut self) {
        if self.host_stop.is_some() {
            return;
        }
        if let Some(sig) = terminal::take_signal() {
            self.host_stop = Some(Stop::Fatal {
                status: 128 + sig,
                message: format!("terminated by signal {sig}"),
            });
        } else if self.requests.take_quit() {
            self.host_stop = Some(Stop::Fatal {
                status: 0,
                message: "quit (Ctrl-A x)".into(),
            });
        } else if let Some((deadline, limit)) = self.deadline {
            if Instant::now() >= deadline {
                self.host_stop = Some(self.timeout_stop(limit));
            }
        }
    }

    /// A stop the host asked for, checked now (used between guest reboots, so a guest that
    /// resets at once can still be stopped by a signal, `Ctrl-A x` or `--timeout`).
    pub fn take_host_stop(&mut self) -> Option<Stop> {
        self.poll_host_requests();
        self.host_stop.take()
    }

    /// Record a guest poweroff/exit or reset: an exit is never replaced, a reset never
    /// replaces an exit.
    fn request_guest_stop(&mut self, stop: Stop) {
        let keep = matches!(
            (&self.guest_stop, &stop),
            (Some(Stop::Exit(_)), _) | (Some(_), Stop::Reset)
        );
        if !keep {
            self.guest_stop = Some(stop);
        }
    }

    /// Whether a stop (or a statistics report, or a snapshot) is waiting for the run loop.
    fn stop_pending(&self) -> bool {
        self.host_stop.is_some()
            || self.guest_stop.is_some()
            || self.stats_requested
            || self.save_requested.is_some()
    }

    /// Sample every device into the hart's `mip` and the CLINT's `mtime` now (after a
    /// restore, before the first block runs).
    pub fn sample_devices(&mut self, hart: &mut Hart) {
        self.sync_interrupts(hart);
    }

    /// Whether the script's `--save` point was reached but not taken (the guest stopped in the
    /// same step).
    pub fn script_save_point_missed(&mut self) -> bool {
        matches!(self.save_requested.take(), Some(SaveRequest::Script))
            || self.console.take_save_request()
    }

    /// The snapshot request that paused the machine ([`Stop::Pause`]), if any.
    pub fn take_save_request(&mut self) -> Option<SaveRequest> {
        self.save_requested.take()
    }

    /// Count a trap about to be delivered to the guest; stop the machine when traps keep
    /// coming with no instruction retired in between (a trap loop never ends on its own).
    fn check_trap_loop(&mut self, hart: &Hart, trap: Trap) -> Result<(), Stop> {
        if self.instret_at_last_trap != Some(hart.instret) {
            self.instret_at_last_trap = Some(hart.instret);
            self.trap_streak = 0;
            self.streak_start = Some((trap, hart.prv, hart.pc));
            return Ok(());
        }
        self.trap_streak += 1;
        if self.trap_streak < TRAP_LOOP_LIMIT {
            return Ok(());
        }
        let describe = |t: Trap, prv: crate::cpu::Priv, pc: u32| {
            format!(
                "{} (cause {}) in {prv:?} mode at pc {pc:#010x}, tval {:#010x}",
                cause_name(t),
                t.cause,
                t.tval
            )
        };
        let now = describe(trap, hart.prv, hart.pc);
        let began = match self.streak_start {
            Some((t, prv, pc)) if (t, prv, pc) != (trap, hart.prv, hart.pc) => {
                format!("; it began with {}", describe(t, prv, pc))
            }
            _ => String::new(),
        };
        Err(Stop::Fatal {
            status: 1,
            message: format!(
                "error: the guest is stuck in a trap loop ({TRAP_LOOP_LIMIT} traps with no \
                 instruction retired): {now}{began}"
            ),
        })
    }

    /// Progress the engine does not count as retired instructions (an emulated trap).
    fn trap_emulated(&mut self) {
        self.instret_at_last_trap = None;
        self.trap_streak = 0;
    }

    /// The stop for `--timeout`: what the script waited for and the last console lines.
    fn timeout_stop(&mut self, limit: Duration) -> Stop {
        self.flush_console();
        let waiting = match self.console.pending_step() {
            Some((n, pattern)) => format!(" (still waiting for --expect {pattern}, step {n})"),
            None => String::new(),
        };
        let tail = self.console.tail_report();
        Stop::Fatal {
            status: 124,
            message: format!(
                "timeout: the guest did not finish within {} s{waiting}{tail}",
                limit.as_secs(),
            ),
        }
    }

    /// The earliest time (in timer ticks) at which an interrupt could become pending.
    fn next_deadline(&mut self, hart: &Hart) -> Option<u64> {
        let mut deadline = self.bus.device(self.clint).and_then(|c| c.next_deadline());
        let stimer = if hart.csr.menvcfg >> 63 != 0 {
            hart.csr.stimecmp
        } else {
            self.sbi_timer
        };
        if stimer != u64::MAX {
            deadline = Some(deadline.map_or(stimer, |d| d.min(stimer)));
        }
        deadline
    }

    /// In a deterministic run, make the devices' virtual time the machine clock's (before a
    /// device access, and on restore before the devices' state goes back: the RTC and the
    /// UART's input pacing read it).
    #[inline]
    pub fn note_virtual_time(&self, hart: &Hart) {
        if let Some(time) = &self.virtual_time {
            time.set_ticks(hart.time());
        }
    }

    /// Whether the machine runs on virtual time (`--deterministic`).
    pub fn is_deterministic(&self) -> bool {
        self.virtual_time.is_some()
    }

    /// The seeded entropy generator's state, in a deterministic machine (for a snapshot).
    pub fn entropy_state(&self) -> Option<[u64; 4]> {
        let id = self.rng?;
        self.bus.device(id)?.device().seeded_state()
    }

    /// Make the entropy device go on from a saved generator state.
    pub fn set_entropy_state(&mut self, state: [u64; 4]) {
        if let Some(rng) = self.rng.and_then(|id| self.bus.device_mut(id)) {
            rng.device_mut().set_seeded_state(state);
        }
    }

    /// WFI: sleep the host thread until a timer deadline, console input or a device interrupt
    /// raised by a worker thread (which unparks this thread), in short slices. In a
    /// deterministic run, jump virtual time instead ([`System::idle_virtual`]).
    pub fn idle(&mut self, hart: &mut Hart) {
        self.flush_console();
        if self.virtual_time.is_some() {
            self.idle_virtual(hart);
            return;
        }
        loop {
            self.sync_interrupts(hart);
            if hart.csr.mip & hart.csr.mie != 0 || self.stop_pending() {
                return;
            }
            if self.console_input.has_pending() {
                continue;
            }
            let now = hart.time();
            let wait = match self.next_deadline(hart) {
                Some(d) if d <= now => return,
                Some(d) => Duration::from_nanos((d - now) * 100).min(MAX_IDLE_SLEEP),
                None => MAX_IDLE_SLEEP,
            };
            std::thread::park_timeout(wait);
        }
    }

    /// WFI in a deterministic run: nothing happens while the guest waits but the passing of
    /// time, so the machine clock jumps to the next event, as QEMU's `-icount sleep=off`:
    /// the earliest timer deadline (CLINT, Sstc or the SBI timer, the RTC alarm), or
    /// [`VIRTUAL_IDLE_STEP`] ahead if that is sooner and console input waits for the UART's
    /// pacing, or if there is no deadline at all. The guest then runs on; if it is still idle
    /// it executes WFI again.
    fn idle_virtual(&mut self, hart: &mut Hart) {
        self.sync_interrupts(hart);
        if hart.csr.mip & hart.csr.mie != 0 || self.stop_pending() {
            return;
        }
        let now = hart.time();
        // A comparator at all ones (or thousands of years ahead) is a disarmed timer.
        let mut next = self.next_deadline(hart).filter(|&d| d < DISARMED_DEADLINE);
        if let Some(alarm_ns) = self
            .bus
            .device(self.rtc)
            .and_then(GoldfishRtc::next_alarm_in_ns)
        {
            let alarm = now.saturating_add(alarm_ns.div_ceil(NS_PER_TICK).max(1));
            next = Some(next.map_or(alarm, |d| d.min(alarm)));
        }
        let step = now.saturating_add(VIRTUAL_IDLE_STEP);
        let target = match next {
            Some(deadline) if self.console_input.has_pending() => deadline.min(step),
            Some(deadline) => deadline,
            None => step,
        };
        if target > now {
            hart.set_time(target);
            self.sync_interrupts(hart);
        }
    }

    /// Emulate a misaligned load or store that trapped to M-mode, as OpenSBI does: bytewise
    /// accesses at the trapping privilege, then resume after the instruction.
    fn emulate_misaligned(&mut self, hart: &mut Hart, trap: Trap) -> Result<(), Trap> {
        let bits = crate::exec::misaligned::fetch_insn(hart, self, hart.pc)?;
        let insn = crate::isa::decode(bits);
        crate::exec::misaligned::emulate(hart, self, &insn).map_err(|t| {
            if t.exception() == trap.exception() {
                trap
            } else {
                t
            }
        })?;
        hart.pc = hart.pc.wrapping_add(insn.len as u32);
        Ok(())
    }
}

/// A readable name for an exception cause, for messages.
fn cause_name(trap: Trap) -> &'static str {
    match trap.exception() {
        Some(Exception::InsnMisaligned) => "instruction address misaligned",
        Some(Exception::InsnAccessFault) => "instruction access fault",
        Some(Exception::IllegalInsn) => "illegal instruction",
        Some(Exception::Breakpoint) => "breakpoint",
        Some(Exception::LoadMisaligned) => "load address misaligned",
        Some(Exception::LoadAccessFault) => "load access fault",
        Some(Exception::StoreMisaligned) => "store address misaligned",
        Some(Exception::StoreAccessFault) => "store access fault",
        Some(Exception::EcallFromU) => "ecall from U-mode",
        Some(Exception::EcallFromS) => "ecall from S-mode",
        Some(Exception::EcallFromM) => "ecall from M-mode",
        Some(Exception::InsnPageFault) => "instruction page fault",
        Some(Exception::LoadPageFault) => "load page fault",
        Some(Exception::StorePageFault) => "store page fault",
        None => "unknown exception",
    }
}

/// The SBI's view of the machine during one call.
struct SbiView<'a> {
    system: &'a mut System,
    hart: &'a mut Hart,
    flush_code: bool,
}

impl SbiHost for SbiView<'_> {
    fn set_timer(&mut self, deadline: u64) {
        self.system.sbi_timer = deadline;
        self.hart.csr.mip &= !IRQ_STI;
    }
    fn console_write(&mut self, bytes: &[u8]) {
        if let Some(u) = self.system.bus.device_mut(self.system.uart) {
            let _ = u.output_mut().write_all(bytes);
        }
    }
    fn console_read(&mut self) -> Option<u8> {
        let uart = self.system.bus.device_mut(self.system.uart)?;
        uart.read_for_firmware()
    }
    fn read_phys(&mut self, pa: u64, len: usize) -> Option<Vec<u8>> {
        self.system.ram.bytes(pa, len as u64).map(<[u8]>::to_vec)
    }
    fn write_phys(&mut self, pa: u64, bytes: &[u8]) -> bool {
        // Firmware writes are not the hart's stores: code they change must be noticed too.
        if let Some(host) = self.system.ram.host(pa, bytes.len() as u64) {
            let host = host as usize;
            for page in (host & !0xfff..host + bytes.len()).step_by(4096) {
                self.hart.code_pages.note_store(page);
            }
        }
        self.system.ram.write(pa, bytes)
    }
    fn send_ipi(&mut self) {
        self.hart.csr.mip |= crate::cpu::csr::IRQ_SSI;
    }
    fn fence_i(&mut self) {
        self.flush_code = true;
    }
    fn sfence_vma(&mut self) {
        self.hart.tlb.flush();
    }
    fn reset(&mut self, kind: ResetKind, reason: u32) {
        self.system.request_guest_stop(match kind {
            ResetKind::Shutdown => Stop::Exit(if reason == 0 { 0 } else { 1 }),
            ResetKind::ColdReboot | ResetKind::WarmReboot => Stop::Reset,
        });
    }
}

impl Platform for System {
    fn allow_misaligned(&self) -> bool {
        self.firmware == FirmwareMode::None
    }

    fn host_stop_probe(&self) -> Option<crate::exec::platform::HostStopProbe> {
        let requests = Arc::clone(&self.requests);
        let deadline = self.deadline.map(|(at, _)| at);
        Some(Arc::new(move || {
            terminal::signal_pending()
                || requests.quit_pending()
                || deadline.is_some_and(|at| Instant::now() >= at)
        }))
    }

    fn translate(&mut self, hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap> {
        let t = hart.translate(&mut self.ram, va, access)?;
        if let Some(host) = self.ram.host(t.pa, 1) {
            return Ok(Target::Ram {
                host,
                cacheable: t.page_cacheable,
            });
        }
        if t.pa < 1 << 32 && self.bus.is_mapped(t.pa) {
            return Ok(Target::Mmio { paddr: t.pa as u32 });
        }
        Err(access_fault(access, va))
    }

    fn mmio_read(&mut self, hart: &mut Hart, paddr: u32, size: u32) -> Result<u64, Trap> {
        self.note_virtual_time(hart);
        let v = self
            .bus
            .read(paddr as u64, size as u8)
            .ok_or(Trap::new(Exception::LoadAccessFault, paddr))?;
        self.sync_interrupts(hart);
        Ok(v)
    }

    fn mmio_write(
        &mut self,
        hart: &mut Hart,
        paddr: u32,
        size: u32,
        value: u64,
    ) -> Result<(), Trap> {
        self.note_virtual_time(hart);
        self.bus
            .write(paddr as u64, size as u8, value)
            .ok_or(Trap::new(Exception::StoreAccessFault, paddr))?;
        self.sync_interrupts(hart);
        Ok(())
    }

    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
        if let Some(semi) = self.semihosting.as_mut() {
            if semihosting::is_call(&mut self.ram, hart, trap) {
                return match semihosting::serve(semi, &mut self.ram, hart) {
                    semihosting::Outcome::Return(_) => {
                        self.trap_emulated();
                        Ok(Resume::Continue)
                    }
                    // As the host process's exit status, like QEMU's.
                    semihosting::Outcome::Exit(status) => Err(Stop::Exit(status & 0xff)),
                };
            }
        }
        if self.firmware == FirmwareMode::Builtin {
            let to_m = hart.csr.medeleg >> (trap.cause & 31) & 1 == 0
                || hart.prv == crate::cpu::Priv::Machine;
            match trap.exception() {
                Some(Exception::EcallFromS) => {
                    let x = &hart.x;
                    let call = SbiCall {
                        args: [x[10], x[11], x[12], x[13], x[14], x[15]],
                        fid: x[16],
                        eid: x[17],
                    };
                    let mut view = SbiView {
                        system: self,
                        hart,
                        flush_code: false,
                    };
                    let ret = sbi::handle_ecall(&mut view, call);
                    let flush = view.flush_code;
                    self.trap_emulated();
                    hart.x[10] = ret.a0;
                    if let Some(a1) = ret.a1 {
                        hart.x[11] = a1;
                    }
                    hart.pc = hart.pc.wrapping_add(4);
                    return Ok(if flush {
                        Resume::FenceI
                    } else {
                        Resume::Continue
                    });
                }
                Some(Exception::LoadMisaligned | Exception::StoreMisaligned) if to_m => {
                    match self.emulate_misaligned(hart, trap) {
                        Ok(()) => self.trap_emulated(),
                        Err(t) => {
                            self.check_trap_loop(hart, t)?;
                            hart.take_trap(t);
                        }
                    }
                    return Ok(Resume::Continue);
                }
                _ if to_m => {
                    return Err(Stop::Fatal {
                        status: 1,
                        message: format!(
                            "unhandled trap to M-mode: cause {} at pc {:#010x}, tval {:#010x}",
                            trap.cause, hart.pc, trap.tval
                        ),
                    });
                }
                _ => {}
            }
        }
        self.check_trap_loop(hart, trap)?;
        hart.take_trap(trap);
        Ok(Resume::Continue)
    }

    #[inline(always)]
    fn between_blocks(&mut self, hart: &mut Hart) -> Option<Stop> {
        if self.between_blocks_quiet(hart) {
            return None;
        }
        self.polls = self.polls.wrapping_add(1);
        if self.polls.is_multiple_of(POLL_INTERVAL_BLOCKS) {
            self.sync_interrupts(hart);
        }
        if self.stop_pending() {
            self.flush_console();
            let stop = self.host_stop.take().or_else(|| self.guest_stop.take());
            return Some(stop.unwrap_or_else(|| {
                if self.save_requested.is_some() {
                    // Taken by the run loop with `take_save_request`.
                    Stop::Pause
                } else {
                    self.stats_requested = false;
                    Stop::Stats
                }
            }));
        }
        if hart.csr.mip & hart.csr.mie != 0 {
            if let Some(irq) = hart.pending_interrupt() {
                hart.take_trap(irq);
            }
        }
        None
    }

    /// Count the block, unless devices are due to be polled, a stop is pending or an
    /// interrupt may be taken (then `between_blocks` does all of it, counting included).
    #[inline(always)]
    fn between_blocks_quiet(&mut self, hart: &mut Hart) -> bool {
        let polls = self.polls.wrapping_add(1);
        if polls.is_multiple_of(POLL_INTERVAL_BLOCKS)
            || self.stop_pending()
            || hart.csr.mip & hart.csr.mie != 0
        {
            return false;
        }
        self.polls = polls;
        true
    }

    fn wait_for_interrupt(&mut self, hart: &mut Hart) {
        self.idle(hart);
    }

    fn debug_read(&mut self, hart: &Hart, va: u32, buf: &mut [u8]) -> usize {
        self.ram.debug_read(hart, va, buf)
    }

    fn debug_write(&mut self, hart: &Hart, va: u32, data: &[u8]) -> usize {
        self.ram.debug_write(hart, va, data)
    }

    fn note_external_writes(&mut self, hart: &mut Hart) -> bool {
        let ram_host = self.ram_host;
        virtio::take_dma_written_pages(&self.dma_view, |offset| {
            hart.code_pages.note_store(ram_host + offset);
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::console::Script;

    /// One second of the machine clock.
    const TIMEBASE_TICKS_PER_SECOND: u64 = crate::cpu::csr::TIMEBASE_HZ;

    fn machine(firmware: FirmwareMode) -> System {
        machine_with(firmware, None)
    }

    fn machine_with(firmware: FirmwareMode, deterministic: Option<Deterministic>) -> System {
        let input = UartInput::new();
        let console = ConsoleOut::new(None, Script::default(), input.clone());
        System::new(
            16 << 20,
            firmware,
            console,
            input,
            Arc::new(HostRequests::default()),
            Vec::new(),
            HostDevices::default(),
            deterministic,
        )
        .expect("a machine")
    }

    #[test]
    fn deterministic_idle_jumps_virtual_time_to_the_next_deadline() {
        let mut m = machine_with(FirmwareMode::Builtin, Some(Deterministic::new(0)));
        assert!(m.is_deterministic());
        let mut hart = Hart::new();
        hart.clock.set_deterministic(true, 0);
        hart.set_time(0);
        hart.csr.menvcfg = 0; // the SBI timer, not Sstc
        hart.instret = 1_000;
        let start = hart.time();
        assert_eq!(
            start,
            1_000 / crate::cpu::clock::DETERMINISTIC_INSNS_PER_TICK
        );
        // The built-in SBI's timer, 2 s ahead: WFI takes the guest there at once, with no
        // host sleep and no instruction retired.
        hart.csr.mie = IRQ_STI;
        m.sbi_timer = start + 2 * TIMEBASE_TICKS_PER_SECOND;
        let host = Instant::now();
        m.idle(&mut hart);
        assert!(
            host.elapsed() < Duration::from_millis(5),
            "{:?}",
            host.elapsed()
        );
        assert_eq!(hart.time(), start + 2 * TIMEBASE_TICKS_PER_SECOND);
        assert_ne!(hart.csr.mip & IRQ_STI, 0, "the timer is pending");
        // Pending already: time stays.
        m.idle(&mut hart);
        assert_eq!(hart.time(), start + 2 * TIMEBASE_TICKS_PER_SECOND);
        // No deadline at all: one bounded step per WFI.
        m.sbi_timer = u64::MAX;
        m.sync_interrupts(&mut hart);
        let before = hart.time();
        m.idle(&mut hart);
        assert_eq!(hart.time(), before + VIRTUAL_IDLE_STEP);
        // The RTC reads the fixed date plus virtual time.
        let rtc_low = map::RTC_BASE + rv32vm_devices::rtc::TIME_LOW as u32;
        let rtc_high = map::RTC_BASE + rv32vm_devices::rtc::TIME_HIGH as u32;
        let low = m.mmio_read(&mut hart, rtc_low, 4).unwrap();
        let high = m.mmio_read(&mut hart, rtc_high, 4).unwrap();
        let epoch = super::super::determinism::RTC_EPOCH_SECS * 1_000_000_000;
        assert_eq!(high << 32 | low, epoch + hart.time() * NS_PER_TICK);
    }

    #[test]
    fn host_stops_beat_guest_exits_which_beat_resets() {
        let mut hart = Hart::new();
        // A reset, then a poweroff in the same stretch: the poweroff wins, whatever the order.
        let mut m = machine(FirmwareMode::Builtin);
        m.request_guest_stop(Stop::Reset);
        m.request_guest_stop(Stop::Exit(7));
        m.request_guest_stop(Stop::Reset);
        assert_eq!(m.between_blocks(&mut hart), Some(Stop::Exit(7)));
        // The first exit stays.
        m.request_guest_stop(Stop::Exit(1));
        m.request_guest_stop(Stop::Exit(2));
        assert_eq!(m.between_blocks(&mut hart), Some(Stop::Exit(1)));
        // A passed deadline beats a reset asked for in the same poll.
        let mut m = machine(FirmwareMode::Builtin);
        m.deadline = Some((Instant::now(), Duration::from_secs(1)));
        m.request_guest_stop(Stop::Reset);
        m.sync_interrupts(&mut hart);
        assert!(matches!(
            m.between_blocks(&mut hart),
            Some(Stop::Fatal { status: 124, .. })
        ));
        // Between reboots the deadline is still seen.
        let mut m = machine(FirmwareMode::Builtin);
        m.deadline = Some((Instant::now(), Duration::from_secs(1)));
        assert!(matches!(
            m.take_host_stop(),
            Some(Stop::Fatal { status: 124, .. })
        ));
        // A statistics request waits behind a stop and is not lost.
        let mut m = machine(FirmwareMode::Builtin);
        m.stats_requested = true;
        m.request_guest_stop(Stop::Reset);
        assert_eq!(m.between_blocks(&mut hart), Some(Stop::Reset));
        assert_eq!(m.between_blocks(&mut hart), Some(Stop::Stats));
        assert_eq!(m.between_blocks(&mut hart), None);
    }

    #[test]
    fn a_guest_write_to_mtime_moves_the_time_csr_too() {
        let mut m = machine(FirmwareMode::External);
        let mut hart = Hart::new();
        let mtime = map::CLINT_BASE + rv32vm_devices::clint::MTIME_OFFSET as u32;
        let target = 5_000_000_000u64;
        m.mmio_write(&mut hart, mtime, 8, target).unwrap();
        let time = hart.csr_read(crate::cpu::csr::TIME, 0).unwrap() as u64
            | (hart.csr_read(crate::cpu::csr::TIMEH, 0).unwrap() as u64) << 32;
        assert!(
            (target..target + TIMEBASE_TICKS_PER_SECOND).contains(&time),
            "rdtime reads {time} after mtime was set to {target}"
        );
        let read_back = m.mmio_read(&mut hart, mtime, 8).unwrap();
        assert!(
            read_back >= target && read_back <= hart.time(),
            "{read_back}"
        );
        // And the timer compares against the same clock.
        let mtimecmp = map::CLINT_BASE + rv32vm_devices::clint::MTIMECMP_OFFSET as u32;
        m.mmio_write(&mut hart, mtimecmp, 8, target).unwrap();
        assert_ne!(hart.csr.mip & IRQ_MTI, 0, "mtime >= mtimecmp at once");
    }

    #[test]
    fn traps_without_progress_stop_the_machine_and_progress_resets_the_count() {
        for firmware in [FirmwareMode::Builtin, FirmwareMode::External] {
            let mut m = machine(firmware);
            let mut hart = Hart::new();
            hart.prv = crate::cpu::Priv::Supervisor;
            hart.csr.medeleg = 0xffff;
            hart.pc = map::RAM_BASE;
            // Traps with instructions retired in between: never a loop.
            for _ in 0..1000 {
                hart.instret += 3;
                let fault = Trap::new(Exception::LoadPageFault, 0x1000);
                assert!(m.handle_trap(&mut hart, fault).is_ok());
                hart.prv = crate::cpu::Priv::Supervisor;
            }
            // An illegal instruction, then the handler's first instruction faults, over and over.
            hart.instret += 1;
            let first = Trap::illegal(0xffff_ffff);
            assert!(m.handle_trap(&mut hart, first).is_ok());
            let fetch = Trap::new(Exception::InsnAccessFault, 0);
            let mut outcome = Ok(Resume::Continue);
            for _ in 0..TRAP_LOOP_LIMIT {
                hart.prv = crate::cpu::Priv::Supervisor;
                outcome = m.handle_trap(&mut hart, fetch);
            }
            match outcome {
                Err(Stop::Fatal { status: 1, message }) => {
                    assert!(message.contains("trap loop"), "{message}");
                    assert!(message.contains("instruction access fault"), "{message}");
                    assert!(
                        message.contains("began with illegal instruction"),
                        "{message}"
                    );
                }
                other => panic!("{firmware:?}: expected a trap-loop stop, got {other:?}"),
            }
        }
    }
}
