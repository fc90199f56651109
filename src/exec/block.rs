//! Basic blocks: instructions decoded once, from a start address to the first control transfer,
//! system instruction or page boundary. A block holds its instructions and its profile; the
//! code each tier makes of it lives in that tier.

use super::platform::{Platform, Target};
use crate::cpu::tlb::PAGE_MASK;
use crate::cpu::{Access, Exception, Hart, Trap};
use crate::isa::{decode, insn_len, Insn};

/// Upper bound on instructions per block, so a block stays short in time (interrupts are taken
/// only between blocks).
pub const MAX_BLOCK_INSNS: usize = 128;

/// What the engine has learned about a block while running it (the promotion policy reads it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Profile {
    /// Entries through the run loop, counted while the block may still move up a tier.
    pub runs: u32,
    /// Under `--tier t2`: how often compiled code that had used up its chaining budget (a
    /// long run without leaving compiled code) came back to the run loop at this block.
    pub hot_samples: u32,
    /// Where the block's indirect jump went, while it was interpreted.
    pub indirect: IndirectProfile,
}

/// The targets of a block's ending indirect jump (`jalr` through a register) seen while the
/// block was interpreted: the current candidate for the most frequent target (a one-counter
/// majority vote) and how often it was taken since it became the candidate, out of all jumps.
#[derive(Clone, Copy, Debug, Default)]
pub struct IndirectProfile {
    candidate: u32,
    /// Jumps to `candidate` since it became the candidate.
    hits: u32,
    /// Majority-vote counter: the candidate is replaced when it drops to zero.
    votes: u32,
    /// All jumps recorded.
    jumps: u32,
}

impl IndirectProfile {
    /// Fewest recorded jumps a prediction is made from.
    pub const MIN_JUMPS: u32 = 16;
    /// The share of all recorded jumps (percent) the predicted target must have.
    pub const MIN_PERCENT: u64 = 90;

    /// Record a jump to `target`.
    pub fn record(&mut self, target: u32) {
        self.jumps = self.jumps.saturating_add(1);
        if self.votes > 0 && target == self.candidate {
            self.votes = self.votes.saturating_add(1);
            self.hits = self.hits.saturating_add(1);
        } else if self.votes == 0 {
            self.candidate = target;
            self.votes = 1;
            self.hits = 1;
        } else {
            self.votes -= 1;
        }
    }

    /// The target the jump took at least [`Self::MIN_PERCENT`] percent of the time, once
    /// [`Self::MIN_JUMPS`] were recorded.
    pub fn prediction(&self) -> Option<u32> {
        let enough = self.jumps >= Self::MIN_JUMPS;
        let share = u64::from(self.hits) * 100 >= u64::from(self.jumps) * Self::MIN_PERCENT;
        (enough && share).then_some(self.candidate)
    }
}

/// A decoded basic block.
pub struct Block {
    /// Guest virtual address of the first instruction when the block was built.
    pub pc: u32,
    /// Host address of the first instruction's bytes: the block's identity, so the same code
    /// reached through another mapping reuses the block, and a remapped page never does.
    pub host: usize,
    /// The instructions, after the block optimiser ([`super::ir`]).
    pub insns: Box<[Insn]>,
    /// Host address of the second half of a first instruction that straddles into the next
    /// page: a store there changes this block too.
    pub straddle: Option<usize>,
    pub profile: Profile,
}

/// Host address of the instruction at `pc`, translating through the platform on a TLB miss.
/// Fetches from non-RAM raise an instruction access fault.
#[inline(always)]
pub fn fetch_host<P: Platform>(hart: &mut Hart, plat: &mut P, pc: u32) -> Result<usize, Trap> {
    if let Some(h) = hart.tlb.lookup(pc, Access::Execute) {
        return Ok(h);
    }
    fetch_host_slow(hart, plat, pc)
}

#[cold]
fn fetch_host_slow<P: Platform>(hart: &mut Hart, plat: &mut P, pc: u32) -> Result<usize, Trap> {
    match plat.translate(hart, pc, Access::Execute)? {
        Target::Ram { host, cacheable } => {
            if cacheable {
                let page = host.wrapping_sub((pc & PAGE_MASK) as usize);
                hart.tlb.insert(pc, Access::Execute, page);
            }
            Ok(host as usize)
        }
        Target::Mmio { .. } => Err(Trap::new(Exception::InsnAccessFault, pc)),
    }
}

/// Read the 16-bit parcel at host address `host`.
fn parcel(host: usize) -> u16 {
    // SAFETY: callers pass host addresses of guest RAM obtained from `fetch_host` for a pc in
    // the same page, with at least 2 bytes left in that page.
    unsafe { std::ptr::read_unaligned(host as *const u16) }
}

/// Decode the block starting at `pc`, whose first byte is at host address `host`, of at most
/// `max_insns` instructions (at most [`MAX_BLOCK_INSNS`]).
pub fn build<P: Platform>(
    hart: &mut Hart,
    plat: &mut P,
    pc: u32,
    host: usize,
    opts: super::ir::IrOptions,
    max_insns: usize,
) -> Result<Block, Trap> {
    let max_insns = max_insns.clamp(1, MAX_BLOCK_INSNS);
    let mut insns = Vec::with_capacity(16);
    let to_page_end = 0x1000 - (pc & PAGE_MASK);
    let mut off: u32 = 0;
    let mut straddle = None;
    loop {
        let page_left = to_page_end - off;
        let lo = parcel(host + off as usize);
        let len = insn_len(lo);
        let bits = if len == 2 {
            lo as u32
        } else if page_left >= 4 {
            lo as u32 | (parcel(host + off as usize + 2) as u32) << 16
        } else if insns.is_empty() {
            // A 32-bit instruction straddling a page boundary: fetch its upper half through
            // the next page's translation (which may fault with that page's address).
            let next = fetch_host(hart, plat, pc.wrapping_add(off + 2))?;
            straddle = Some(next);
            lo as u32 | (parcel(next) as u32) << 16
        } else {
            break; // let a block of its own handle the straddling instruction
        };
        let insn = decode(bits);
        insns.push(insn);
        off += len as u32;
        if insn.ends_block()
            || insns.len() >= max_insns
            || off >= to_page_end
            || plat.ends_block_before(pc.wrapping_add(off))
        {
            break;
        }
    }
    super::ir::optimize(&mut insns, opts);
    Ok(Block {
        pc,
        host,
        insns: insns.into_boxed_slice(),
        straddle,
        profile: Profile::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::IndirectProfile;

    fn profile(targets: impl IntoIterator<Item = u32>) -> IndirectProfile {
        let mut p = IndirectProfile::default();
        for t in targets {
            p.record(t);
        }
        p
    }

    #[test]
    fn a_target_taken_nine_times_in_ten_is_predicted_once_enough_jumps_were_seen() {
        let few = profile([0x1000; 15]);
        assert_eq!(few.prediction(), None, "15 jumps are too few");
        let steady = profile([0x1000; 16]);
        assert_eq!(steady.prediction(), Some(0x1000));
        // 18 of 20 (90%): predicted; 17 of 20 (85%): not.
        let ninety = profile((0..20).map(|i| if i % 10 == 3 { 0x2000 } else { 0x1000 }));
        assert_eq!(ninety.prediction(), Some(0x1000));
        let eighty_five = profile((0..20).map(|i| {
            if i == 2 || i == 9 || i == 15 {
                0x2000
            } else {
                0x1000
            }
        }));
        assert_eq!(eighty_five.prediction(), None);
    }

    #[test]
    fn alternating_or_changing_targets_are_not_predicted() {
        let alternating = profile((0..100).map(|i| 0x1000 + (i % 2) * 4));
        assert_eq!(alternating.prediction(), None);
        // The first target for a while, then another: neither has 90% of all jumps.
        let changed = profile((0..100).map(|i| if i < 30 { 0x1000 } else { 0x3000 }));
        assert_eq!(changed.prediction(), None);
        let settled = profile((0..400).map(|i| if i < 4 { 0x1000 } else { 0x3000 }));
        assert_eq!(settled.prediction(), Some(0x3000));
    }
}
