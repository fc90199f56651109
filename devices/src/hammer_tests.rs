//! Robustness: every device, alone and on a bus laid out like QEMU `virt`, takes a long stream
//! of random accesses (any offset, any size, any value) interleaved with host-side events
//! (input, time, clock steps, claims) without panicking, and keeps its invariants.

use crate::bus::{Bus, MmioDevice};
use crate::clint::{self, Clint};
use crate::irq::IrqLine;
use crate::plic::{self, Plic};
use crate::rtc::{self, GoldfishRtc, ManualClock};
use crate::syscon::{self, Syscon};
use crate::uart::{self, Uart};

/// xorshift64*: deterministic, so a failure can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    /// Mostly the sizes the CPU issues, sometimes nonsense.
    fn size(&mut self) -> u8 {
        const SIZES: [u8; 12] = [1, 2, 4, 8, 4, 4, 1, 0, 3, 5, 16, 255];
        SIZES[self.below(SIZES.len() as u64) as usize]
    }

    /// Mostly offsets inside (or just past) a window of `window` bytes, sometimes anywhere.
    fn offset(&mut self, window: u64) -> u64 {
        match self.below(8) {
            0 => self.next(),
            1 => u64::MAX - self.below(16),
            2 => window + self.below(64),
            _ => self.below(window),
        }
    }

    /// Values biased towards the ones devices decode (small numbers, all ones).
    fn value(&mut self) -> u64 {
        match self.below(4) {
            0 => self.below(64),
            1 => u64::MAX,
            2 => u64::from(self.next() as u32),
            _ => self.next(),
        }
    }
}

const ITERATIONS: usize = 500_000;

/// Offsets where each device keeps registers, so random accesses hit them often.
fn hot_offset(rng: &mut Rng, hot: &[u64], window: u64) -> u64 {
    if rng.below(2) == 0 {
        hot[rng.below(hot.len() as u64) as usize] + rng.below(8)
    } else {
        rng.offset(window)
    }
}

fn hammer(
    device: &mut dyn MmioDevice,
    rng: &mut Rng,
    iterations: usize,
    (hot, window): (&[u64], u64),
    mut host_event: impl FnMut(&mut Rng),
) {
    for _ in 0..iterations {
        let offset = hot_offset(rng, hot, window);
        let size = rng.size();
        if rng.below(2) == 0 {
            let value = device.read(offset, size);
            if let Some(mask) = crate::regs::access_mask(size) {
                assert_eq!(
                    value & !mask,
                    0,
                    "read wider than its size at {offset:#x}/{size}"
                );
            } else {
                assert_eq!(value, 0, "odd size {size} must read 0");
            }
        } else {
            let value = rng.value();
            device.write(offset, size, value);
        }
        if rng.below(16) == 0 {
            host_event(rng);
        }
    }
}

#[test]
fn uart_survives_random_accesses() {
    let mut rng = Rng(0x1234_5678);
    let mut uart = Uart::new(IrqLine::disconnected(), Vec::new());
    let input = uart.input();
    let hot: Vec<u64> = (0..8).collect();
    hammer(
        &mut uart,
        &mut rng,
        ITERATIONS,
        (&hot, uart::MMIO_SIZE),
        |rng| {
            let bytes = rng.next().to_le_bytes();
            input.push(&bytes[..rng.below(9) as usize]);
        },
    );
    uart.poll_input();
    for register in 0..8 {
        assert!(uart.read(register, 1) <= 0xff);
    }
    assert!(uart.rx_fifo_len_for_tests() <= uart::RX_FIFO_SIZE);
}

#[test]
fn plic_survives_random_accesses_and_claims_stay_valid() {
    let mut rng = Rng(0xdead_beef);
    let mut plic = Plic::new();
    let lines: Vec<IrqLine> = (1..=plic::NUM_SOURCES)
        .map(|id| plic.irq_line(id).unwrap())
        .collect();
    let hot = [
        0x0,
        0x28,
        plic::PENDING_BASE,
        plic::ENABLE_BASE,
        plic::ENABLE_BASE + plic::ENABLE_STRIDE,
        plic::CONTEXT_BASE,
        plic::CONTEXT_BASE + plic::CLAIM_OFFSET,
        plic::CONTEXT_BASE + plic::CONTEXT_STRIDE,
        plic::CONTEXT_BASE + plic::CONTEXT_STRIDE + plic::CLAIM_OFFSET,
    ];
    for _ in 0..ITERATIONS / 1000 {
        hammer(&mut plic, &mut rng, 1000, (&hot, plic::MMIO_SIZE), |rng| {
            let line = &lines[rng.below(lines.len() as u64) as usize];
            line.set(rng.below(2) == 0);
        });
        // Whatever the state, a claim returns 0 or a valid source, and a context that says it
        // has an interrupt hands out a source when claimed.
        for context in 0..plic::NUM_CONTEXTS {
            let pending = plic.context_pending(context);
            let claim_at =
                plic::CONTEXT_BASE + plic::CONTEXT_STRIDE * context as u64 + plic::CLAIM_OFFSET;
            let id = plic.read(claim_at, 4);
            assert!(id <= u64::from(plic::NUM_SOURCES));
            assert_eq!(pending, id != 0);
            plic.write(claim_at, 4, id);
        }
    }
}

#[test]
fn clint_survives_random_accesses() {
    let mut rng = Rng(42);
    let mut clint = Clint::new();
    let hot = [
        clint::MSIP_OFFSET,
        clint::MTIMECMP_OFFSET,
        clint::MTIME_OFFSET,
    ];
    let mut time = 0u64;
    hammer(
        &mut clint,
        &mut rng,
        ITERATIONS,
        (&hot, clint::MMIO_SIZE),
        |rng| {
            time = if rng.below(64) == 0 {
                rng.next()
            } else {
                time.wrapping_add(rng.below(1000))
            };
        },
    );
    clint.set_time(rng.next());
    if let Some(deadline) = clint.next_deadline() {
        clint.set_time(deadline);
        assert!(clint.mtip_pending(), "at its deadline the timer is pending");
    }
}

#[test]
fn syscon_survives_random_accesses() {
    let mut rng = Rng(7);
    let mut syscon = Syscon::new();
    hammer(
        &mut syscon,
        &mut rng,
        ITERATIONS,
        (&[0], syscon::MMIO_SIZE),
        |_| {},
    );
    // Random writes of all-ones / small values may or may not match a status word; taking the
    // event must leave the device empty either way.
    syscon.take_event();
    assert_eq!(syscon.pending_event(), None);
}

#[test]
fn rtc_survives_random_accesses() {
    let mut rng = Rng(99);
    let clock = ManualClock::new(1_700_000_000_000_000_000);
    let mut rtc = GoldfishRtc::new(IrqLine::disconnected(), Box::new(clock.clone()));
    let hot: Vec<u64> = (0..8).map(|i| i * 4).collect();
    hammer(
        &mut rtc,
        &mut rng,
        ITERATIONS,
        (&hot, rtc::MMIO_SIZE),
        |rng| match rng.below(4) {
            0 => clock.set(rng.next()),
            _ => clock.advance(rng.below(1 << 20)),
        },
    );
    rtc.poll();
    if let Some(wait) = rtc.next_alarm_in_ns() {
        assert!(wait > 0, "an alarm that is due has fired during poll");
    }
}

#[test]
fn bus_with_the_virt_layout_survives_random_addresses() {
    let mut rng = Rng(0xfeed);
    let mut bus = Bus::new();
    let mut plic = Plic::new();
    let uart_irq = plic.irq_line(10).unwrap();
    let rtc_irq = plic.irq_line(11).unwrap();
    let clock = ManualClock::new(0);
    bus.insert(0x0010_0000, syscon::MMIO_SIZE, Syscon::new())
        .unwrap();
    bus.insert(
        0x0010_1000,
        rtc::MMIO_SIZE,
        GoldfishRtc::new(rtc_irq, Box::new(clock.clone())),
    )
    .unwrap();
    let clint_id = bus
        .insert(0x0200_0000, clint::MMIO_SIZE, Clint::new())
        .unwrap();
    let plic_id = bus.insert(0x0c00_0000, plic::MMIO_SIZE, plic).unwrap();
    let uart_id = bus
        .insert(
            0x1000_0000,
            uart::MMIO_SIZE,
            Uart::new(uart_irq, Vec::new()),
        )
        .unwrap();
    let bases = [
        0x0010_0000u64,
        0x0010_1000,
        0x0200_0000,
        0x0200_4000,
        0x0200_bff8,
        0x0c00_0000,
        0x0c20_0000,
        0x0c20_1000,
        0x1000_0000,
    ];
    for step in 0..ITERATIONS as u64 {
        let addr = match rng.below(4) {
            0 => rng.next(),
            1 => u64::from(rng.next() as u32),
            _ => bases[rng.below(bases.len() as u64) as usize] + rng.below(0x20),
        };
        let size = rng.size();
        let mapped = bus.is_mapped(addr);
        let result = if rng.below(2) == 0 {
            bus.read(addr, size).map(|_| ())
        } else {
            bus.write(addr, size, rng.value())
        };
        if !mapped {
            assert_eq!(result, None, "{addr:#x}");
        }
        if step % 64 == 0 {
            clock.advance(rng.below(1 << 24));
            if let Some(clint) = bus.device_mut(clint_id) {
                clint.set_time(step);
            }
            if let Some(uart) = bus.device_mut(uart_id) {
                uart.enqueue_input(b"x");
            }
        }
    }
    // The typed handles still reach their devices.
    assert!(bus.device(plic_id).is_some());
    assert!(bus.device(uart_id).is_some());
    assert_eq!(bus.regions().count(), 5);
}
