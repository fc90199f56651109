//! The SiFive PLIC (platform-level interrupt controller), laid out as on QEMU `virt` for one
//! hart with two contexts: context 0 is hart 0's M-mode, context 1 its S-mode.
//!
//! Sources `1..=`[`NUM_SOURCES`] are level-triggered inputs driven through [`IrqLine`]s that
//! [`Plic::irq_line`] hands out. Gateway semantics:
//! - a source is pending while its line is high and it is not claimed (between a claim and its
//!   completion the source is "in flight" and cannot become pending again);
//! - a claim (read of a context's claim register) returns the pending source enabled for that
//!   context with the highest priority above the context's threshold (ties go to the lowest
//!   id), or 0 when there is none, and marks it in flight;
//! - a completion (write of the id to the claim register) ends the flight: if the line is still
//!   high the source is pending again at once.
//!
//! Because pending follows the line level, a device that lowers its line before the claim
//! withdraws the request (a real gateway would latch it and deliver a spurious claim). As in
//! QEMU, a completion is accepted whether or not the source is enabled for that context.
//!
//! Registers are 32 bits wide and take only aligned 32-bit accesses; anything else reads 0 and
//! ignores writes. The outputs [`Plic::m_external_pending`] and [`Plic::s_external_pending`] are
//! what the machine copies into mip.MEIP and mip.SEIP between blocks.

use crate::bus::MmioDevice;
use crate::irq::{IrqError, IrqLevels, IrqLine};
use crate::regs::is_word_access;
use crate::state::{StateError, StateReader, StateWriter};

/// Number of interrupt sources (`riscv,ndev` in the device tree); valid ids are `1..=NUM_SOURCES`.
pub const NUM_SOURCES: u32 = 32;
/// Number of contexts: hart 0 M-mode and hart 0 S-mode.
pub const NUM_CONTEXTS: usize = 2;
/// Context of hart 0 in M-mode.
pub const CONTEXT_M: usize = 0;
/// Context of hart 0 in S-mode.
pub const CONTEXT_S: usize = 1;
/// Largest priority (and threshold) value; QEMU virt implements 3 priority bits.
pub const MAX_PRIORITY: u32 = 7;
/// Size of the PLIC's MMIO window on the virt memory map.
pub const MMIO_SIZE: u64 = 0x60_0000;

/// Source priorities: one 32-bit register per source at `PRIORITY_BASE + 4 * id`.
pub const PRIORITY_BASE: u64 = 0x0;
/// Pending bits, 32 sources per 32-bit word (read-only).
pub const PENDING_BASE: u64 = 0x1000;
/// Enable bits of context `c`: 32 sources per word at `ENABLE_BASE + ENABLE_STRIDE * c`.
pub const ENABLE_BASE: u64 = 0x2000;
/// Distance between the enable blocks of consecutive contexts.
pub const ENABLE_STRIDE: u64 = 0x80;
/// Per-context registers of context `c` at `CONTEXT_BASE + CONTEXT_STRIDE * c`.
pub const CONTEXT_BASE: u64 = 0x20_0000;
/// Distance between the register blocks of consecutive contexts.
pub const CONTEXT_STRIDE: u64 = 0x1000;
/// Priority threshold, inside a context's block.
pub const THRESHOLD_OFFSET: u64 = 0x0;
/// Claim (read) / complete (write), inside a context's block.
pub const CLAIM_OFFSET: u64 = 0x4;

// The source levels live in one `IrqLevels` word.
const _: () = assert!(NUM_SOURCES <= crate::irq::MAX_SOURCE);

/// Number of 32-bit words of pending or enable bits (source 0 included).
const SOURCE_WORDS: u64 = (NUM_SOURCES as u64 + 1).div_ceil(32);
/// Bits of the valid sources `1..=NUM_SOURCES`.
const SOURCE_MASK: u64 = ((1u64 << NUM_SOURCES) - 1) << 1;

/// One context's registers.
#[derive(Debug, Clone, Copy, Default)]
struct Context {
    enabled: u64,
    threshold: u32,
}

/// Which register an offset names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Register {
    Priority(usize),
    Pending(u64),
    Enable { context: usize, word: u64 },
    Threshold(usize),
    Claim(usize),
}

/// The PLIC. See the [module documentation](self).
#[derive(Debug)]
pub struct Plic {
    levels: IrqLevels,
    /// Indexed by source id; entry 0 stays 0.
    priorities: [u32; NUM_SOURCES as usize + 1],
    /// Sources claimed and not completed yet.
    in_flight: u64,
    contexts: [Context; NUM_CONTEXTS],
}

impl Default for Plic {
    fn default() -> Self {
        Self::new()
    }
}

impl Plic {
    /// A PLIC in its reset state: every priority, enable and threshold 0.
    pub fn new() -> Self {
        let levels = match IrqLevels::new(NUM_SOURCES) {
            Ok(levels) => levels,
            // NUM_SOURCES is within the limit: checked at compile time above.
            Err(_) => unreachable!("NUM_SOURCES fits an IrqLevels word"),
        };
        Self {
            levels,
            priorities: [0; NUM_SOURCES as usize + 1],
            in_flight: 0,
            contexts: [Context::default(); NUM_CONTEXTS],
        }
    }

    /// The line that drives source `source` (`1..=NUM_SOURCES`, each once).
    pub fn irq_line(&mut self, source: u32) -> Result<IrqLine, IrqError> {
        self.levels.line(source)
    }

    /// The input levels (for diagnostics and tests).
    pub fn levels(&self) -> &IrqLevels {
        &self.levels
    }

    /// Writes priorities, enables, thresholds and the claimed sources for a snapshot. The
    /// source levels are not saved: each device drives its line again when it is restored.
    pub fn save_state(&self, out: &mut StateWriter) {
        for &priority in &self.priorities {
            out.u32(priority);
        }
        out.u64(self.in_flight);
        for context in &self.contexts {
            out.u64(context.enabled);
            out.u32(context.threshold);
        }
    }

    /// Restores what [`Plic::save_state`] wrote; values a guest could not have written are
    /// refused.
    pub fn restore_state(&mut self, input: &mut StateReader<'_>) -> Result<(), StateError> {
        let mut priorities = [0; NUM_SOURCES as usize + 1];
        for priority in priorities.iter_mut() {
            *priority = input.u32("plic priority")?;
        }
        let in_flight = input.u64("plic claimed sources")?;
        let mut contexts = [Context::default(); NUM_CONTEXTS];
        for context in contexts.iter_mut() {
            context.enabled = input.u64("plic enables")?;
            context.threshold = input.u32("plic threshold")?;
        }
        let bad_priority = priorities.iter().any(|&p| p > MAX_PRIORITY) || priorities[0] != 0;
        let bad_bits = (in_flight | contexts.iter().map(|c| c.enabled).fold(0, |a, b| a | b))
            & !SOURCE_MASK
            != 0;
        if bad_priority || bad_bits || contexts.iter().any(|c| c.threshold > MAX_PRIORITY) {
            return Err(StateError::invalid("plic register out of range"));
        }
        self.priorities = priorities;
        self.in_flight = in_flight;
        self.contexts = contexts;
        Ok(())
    }

    /// Pending sources: line high and not in flight.
    fn pending(&self) -> u64 {
        self.levels.bits() & !self.in_flight & SOURCE_MASK
    }

    /// The source a claim by `context` would return.
    fn best_source(&self, context: usize) -> Option<u32> {
        let ctx = self.contexts.get(context)?;
        let mut candidates = self.pending() & ctx.enabled;
        let mut best: Option<(u32, u32)> = None;
        while candidates != 0 {
            let id = candidates.trailing_zeros();
            candidates &= candidates - 1;
            let priority = self.priorities.get(id as usize).copied().unwrap_or(0);
            // Ascending ids and a strict comparison: ties go to the lowest id.
            if priority > ctx.threshold && best.is_none_or(|(_, p)| priority > p) {
                best = Some((id, priority));
            }
        }
        best.map(|(id, _)| id)
    }

    /// Whether `context` has an interrupt to take (its external-interrupt output).
    pub fn context_pending(&self, context: usize) -> bool {
        self.best_source(context).is_some()
    }

    /// The M-mode external interrupt output of hart 0 (mip.MEIP).
    pub fn m_external_pending(&self) -> bool {
        self.context_pending(CONTEXT_M)
    }

    /// The S-mode external interrupt output of hart 0 (mip.SEIP).
    pub fn s_external_pending(&self) -> bool {
        self.context_pending(CONTEXT_S)
    }

    fn claim(&mut self, context: usize) -> u32 {
        match self.best_source(context) {
            Some(id) => {
                self.in_flight |= 1u64 << id;
                id
            }
            None => 0,
        }
    }

    fn complete(&mut self, id: u64) {
        if (1..=u64::from(NUM_SOURCES)).contains(&id) {
            self.in_flight &= !(1u64 << id);
        }
    }

    fn decode(offset: u64) -> Option<Register> {
        let words_bytes = SOURCE_WORDS * 4;
        if offset <= u64::from(NUM_SOURCES) * 4 {
            return usize::try_from(offset / 4).ok().map(Register::Priority);
        }
        if let Some(relative) = offset.checked_sub(PENDING_BASE) {
            if relative < words_bytes {
                return Some(Register::Pending(relative / 4));
            }
        }
        if let Some(relative) = offset.checked_sub(ENABLE_BASE) {
            let context = usize::try_from(relative / ENABLE_STRIDE).ok()?;
            let within = relative % ENABLE_STRIDE;
            if context < NUM_CONTEXTS && within < words_bytes {
                return Some(Register::Enable {
                    context,
                    word: within / 4,
                });
            }
        }
        if let Some(relative) = offset.checked_sub(CONTEXT_BASE) {
            let context = usize::try_from(relative / CONTEXT_STRIDE).ok()?;
            if context < NUM_CONTEXTS {
                return match relative % CONTEXT_STRIDE {
                    THRESHOLD_OFFSET => Some(Register::Threshold(context)),
                    CLAIM_OFFSET => Some(Register::Claim(context)),
                    _ => None,
                };
            }
        }
        None
    }

    fn read_register(&mut self, register: Register) -> u32 {
        match register {
            Register::Priority(id) => self.priorities.get(id).copied().unwrap_or(0),
            Register::Pending(word) => word_of(self.pending(), word),
            Register::Enable { context, word } => {
                word_of(self.contexts.get(context).map_or(0, |c| c.enabled), word)
            }
            Register::Threshold(context) => self.contexts.get(context).map_or(0, |c| c.threshold),
            Register::Claim(context) => self.claim(context),
        }
    }

    fn write_register(&mut self, register: Register, value: u32) {
        match register {
            Register::Priority(id) => {
                // Source 0 does not exist; its priority stays 0.
                if id != 0 {
                    if let Some(priority) = self.priorities.get_mut(id) {
                        *priority = value & MAX_PRIORITY;
                    }
                }
            }
            // Pending bits are read-only on the SiFive PLIC.
            Register::Pending(_) => {}
            Register::Enable { context, word } => {
                if let Some(ctx) = self.contexts.get_mut(context) {
                    let shift = word * 32;
                    let cleared = ctx.enabled & !(0xffff_ffffu64 << shift);
                    ctx.enabled = (cleared | (u64::from(value) << shift)) & SOURCE_MASK;
                }
            }
            Register::Threshold(context) => {
                if let Some(ctx) = self.contexts.get_mut(context) {
                    ctx.threshold = value & MAX_PRIORITY;
                }
            }
            Register::Claim(_) => self.complete(u64::from(value)),
        }
    }
}

/// Word `word` (32 sources) of a source bit set.
fn word_of(bits: u64, word: u64) -> u32 {
    let shifted = bits.checked_shr((word * 32) as u32).unwrap_or(0);
    (shifted & 0xffff_ffff) as u32
}

impl MmioDevice for Plic {
    fn read(&mut self, offset: u64, size: u8) -> u64 {
        if !is_word_access(offset, size) {
            return 0;
        }
        Self::decode(offset).map_or(0, |register| u64::from(self.read_register(register)))
    }

    fn write(&mut self, offset: u64, size: u8, value: u64) {
        if !is_word_access(offset, size) {
            return;
        }
        if let Some(register) = Self::decode(offset) {
            self.write_register(register, value as u32);
        }
    }

    fn name(&self) -> &'static str {
        "plic"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context_reg(context: usize, register: u64) -> u64 {
        CONTEXT_BASE + CONTEXT_STRIDE * context as u64 + register
    }

    fn enable_reg(context: usize) -> u64 {
        ENABLE_BASE + ENABLE_STRIDE * context as u64
    }

    fn claim(plic: &mut Plic, context: usize) -> u64 {
        plic.read(context_reg(context, CLAIM_OFFSET), 4)
    }

    fn complete(plic: &mut Plic, context: usize, id: u64) {
        plic.write(context_reg(context, CLAIM_OFFSET), 4, id);
    }

    /// A PLIC with sources 1..=5 at priority 1, all enabled for S-mode, threshold 0.
    fn configured() -> (Plic, Vec<IrqLine>) {
        let mut plic = Plic::new();
        let lines = (1..=5).map(|id| plic.irq_line(id).unwrap()).collect();
        for id in 1..=5u64 {
            plic.write(PRIORITY_BASE + 4 * id, 4, 1);
        }
        plic.write(enable_reg(CONTEXT_S), 4, 0b11_1110);
        (plic, lines)
    }

    #[test]
    fn layout_matches_qemu_virt() {
        assert_eq!(Plic::decode(0x4), Some(Register::Priority(1)));
        assert_eq!(Plic::decode(0x28), Some(Register::Priority(10)));
        assert_eq!(Plic::decode(0x1000), Some(Register::Pending(0)));
        assert_eq!(Plic::decode(0x1004), Some(Register::Pending(1)));
        assert_eq!(
            Plic::decode(0x2080),
            Some(Register::Enable {
                context: 1,
                word: 0
            })
        );
        assert_eq!(Plic::decode(0x20_0000), Some(Register::Threshold(0)));
        assert_eq!(Plic::decode(0x20_1004), Some(Register::Claim(1)));
        assert_eq!(Plic::decode(0x20_2004), None, "only two contexts");
        assert_eq!(Plic::decode(0x2100), None);
        assert_eq!(Plic::decode(0x20_0008), None);
        assert_eq!(Plic::decode(u64::MAX), None);
        assert_eq!(SOURCE_WORDS, 2);
    }

    #[test]
    fn registers_round_trip_with_their_widths() {
        let mut plic = Plic::new();
        plic.write(4 * 10, 4, 0xffff_ffff);
        assert_eq!(plic.read(4 * 10, 4), u64::from(MAX_PRIORITY));
        plic.write(0, 4, 5);
        assert_eq!(plic.read(0, 4), 0, "source 0 has no priority");
        plic.write(enable_reg(CONTEXT_M), 4, 0xffff_ffff);
        assert_eq!(plic.read(enable_reg(CONTEXT_M), 4), 0xffff_fffe);
        plic.write(enable_reg(CONTEXT_M) + 4, 4, 0xffff_ffff);
        assert_eq!(plic.read(enable_reg(CONTEXT_M) + 4, 4), 1, "only source 32");
        plic.write(context_reg(CONTEXT_S, THRESHOLD_OFFSET), 4, 0x1f);
        assert_eq!(plic.read(context_reg(CONTEXT_S, THRESHOLD_OFFSET), 4), 7);
        // Sub-word and misaligned accesses are ignored.
        plic.write(4 * 11, 1, 3);
        plic.write(4 * 11 + 2, 4, 3);
        assert_eq!(plic.read(4 * 11, 4), 0);
        assert_eq!(plic.read(4 * 10, 2), 0);
    }

    #[test]
    fn claim_complete_cycle_with_level_line() {
        let (mut plic, lines) = configured();
        assert!(!plic.s_external_pending());
        lines[2].raise(); // source 3
        assert!(plic.s_external_pending());
        assert!(!plic.m_external_pending(), "not enabled for M-mode");
        assert_eq!(plic.read(PENDING_BASE, 4), 1 << 3);
        assert_eq!(claim(&mut plic, CONTEXT_S), 3);
        assert_eq!(plic.read(PENDING_BASE, 4), 0, "claim clears pending");
        assert!(!plic.s_external_pending(), "in flight: no new request");
        assert_eq!(claim(&mut plic, CONTEXT_S), 0);
        // Still high at completion: pending again at once.
        complete(&mut plic, CONTEXT_S, 3);
        assert!(plic.s_external_pending());
        assert_eq!(claim(&mut plic, CONTEXT_S), 3);
        lines[2].lower();
        complete(&mut plic, CONTEXT_S, 3);
        assert!(!plic.s_external_pending());
        assert_eq!(claim(&mut plic, CONTEXT_S), 0);
    }

    #[test]
    fn line_raised_while_in_flight_waits_for_completion() {
        let (mut plic, lines) = configured();
        lines[0].raise();
        assert_eq!(claim(&mut plic, CONTEXT_S), 1);
        lines[0].lower();
        lines[0].raise();
        assert!(!plic.s_external_pending());
        complete(&mut plic, CONTEXT_S, 1);
        assert_eq!(claim(&mut plic, CONTEXT_S), 1);
    }

    #[test]
    fn highest_priority_wins_and_ties_go_to_lowest_id() {
        let (mut plic, lines) = configured();
        for line in &lines {
            line.raise();
        }
        plic.write(PRIORITY_BASE + 4 * 4, 4, 3);
        plic.write(PRIORITY_BASE + 4 * 2, 4, 3);
        plic.write(PRIORITY_BASE + 4 * 5, 4, 2);
        let order: Vec<u64> = (0..6).map(|_| claim(&mut plic, CONTEXT_S)).collect();
        assert_eq!(order, [2, 4, 5, 1, 3, 0]);
    }

    #[test]
    fn threshold_masks_low_priorities() {
        let (mut plic, lines) = configured();
        lines[0].raise();
        plic.write(context_reg(CONTEXT_S, THRESHOLD_OFFSET), 4, 1);
        assert!(!plic.s_external_pending(), "priority must exceed threshold");
        assert_eq!(claim(&mut plic, CONTEXT_S), 0);
        plic.write(PRIORITY_BASE + 4, 4, 2);
        assert!(plic.s_external_pending());
        // Priority 0 never interrupts, even with threshold 0.
        plic.write(context_reg(CONTEXT_S, THRESHOLD_OFFSET), 4, 0);
        plic.write(PRIORITY_BASE + 4, 4, 0);
        assert!(!plic.s_external_pending());
    }

    #[test]
    fn contexts_are_independent_but_share_the_gateway() {
        let (mut plic, lines) = configured();
        plic.write(enable_reg(CONTEXT_M), 4, 1 << 2);
        lines[1].raise();
        assert!(plic.m_external_pending());
        assert!(plic.s_external_pending());
        assert_eq!(claim(&mut plic, CONTEXT_M), 2);
        assert!(
            !plic.s_external_pending(),
            "claimed by M: not pending for S"
        );
        complete(&mut plic, CONTEXT_M, 2);
        assert!(plic.s_external_pending());
        // M threshold does not affect S.
        plic.write(context_reg(CONTEXT_M, THRESHOLD_OFFSET), 4, 7);
        assert!(!plic.m_external_pending());
        assert!(plic.s_external_pending());
    }

    #[test]
    fn disabled_source_is_pending_but_not_claimable() {
        let (mut plic, lines) = configured();
        plic.write(enable_reg(CONTEXT_S), 4, 0);
        lines[4].raise();
        assert_eq!(plic.read(PENDING_BASE, 4), 1 << 5);
        assert!(!plic.s_external_pending());
        assert_eq!(claim(&mut plic, CONTEXT_S), 0);
    }

    #[test]
    fn bogus_completions_are_ignored() {
        let (mut plic, lines) = configured();
        lines[0].raise();
        assert_eq!(claim(&mut plic, CONTEXT_S), 1);
        for id in [0, 2, 33, 64, 1000, u64::MAX] {
            complete(&mut plic, CONTEXT_S, id);
        }
        assert!(!plic.s_external_pending(), "source 1 still in flight");
        complete(&mut plic, CONTEXT_M, 1);
        assert!(
            plic.s_external_pending(),
            "completion from any context ends the flight"
        );
    }

    #[test]
    fn source_32_uses_the_second_word() {
        let mut plic = Plic::new();
        let line = plic.irq_line(NUM_SOURCES).unwrap();
        assert!(plic.irq_line(NUM_SOURCES + 1).is_err());
        plic.write(PRIORITY_BASE + 4 * u64::from(NUM_SOURCES), 4, 1);
        plic.write(enable_reg(CONTEXT_M) + 4, 4, 1);
        line.raise();
        assert_eq!(plic.read(PENDING_BASE + 4, 4), 1);
        assert_eq!(claim(&mut plic, CONTEXT_M), u64::from(NUM_SOURCES));
    }
}
