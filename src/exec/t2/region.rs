//! Region formation: from a hot block, trace the blocks its exits reach statically (both
//! directions of a branch, direct jumps, fall-through, jumps to constant targets) within the
//! hot block's page, up to a budget. The region is compiled as one function; every edge that
//! leaves it (another page, an indirect jump, past the budget) is a region exit.
//!
//! Staying in the entry page is what keeps a region coherent: the run loop validates the
//! entry pc through the execute TLB, so every pc in that page is reached through the same
//! translation for as long as the region runs, and a store into the page drops the region with
//! the page's blocks.

use crate::cpu::tlb::PAGE_MASK;
use crate::exec::block::Block;
use crate::isa::ops::OpClass;
use crate::isa::{Fusion, Insn};

/// Most blocks in one region.
pub const MAX_REGION_BLOCKS: usize = 64;
/// Most guest instructions in one region.
pub const MAX_REGION_INSNS: usize = 1024;

/// One block of a region: its pc and (optimised) instructions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegionBlock {
    pub pc: u32,
    pub insns: Vec<Insn>,
    /// Where the block's ending indirect jump almost always went while it was interpreted
    /// (indirect-jump prediction; user mode only). The region traces it like a direct
    /// successor, and the jump compares its target with it.
    pub predicted: Option<u32>,
}

impl RegionBlock {
    /// The region's view of `block`, entered at `pc`; with `predict`, its indirect jump's
    /// profiled target, if one dominates.
    pub fn new(pc: u32, block: &Block, predict: bool) -> Self {
        let predicted = if predict {
            block.profile.indirect.prediction()
        } else {
            None
        };
        RegionBlock {
            pc,
            insns: block.insns.to_vec(),
            predicted,
        }
    }

    /// The pc after the block's last instruction.
    pub fn end_pc(&self) -> u32 {
        self.insns
            .iter()
            .fold(self.pc, |pc, i| pc.wrapping_add(i.len as u32))
    }

    /// Where a call that ends this block returns to (the pc after it), if it is a call: the
    /// callee's return, an indirect jump, may continue there inside the region.
    pub fn return_site(&self) -> Option<u32> {
        let last = self.insns.last()?;
        let call = matches!(last.op.class(), OpClass::Jal | OpClass::Jalr) && last.rd != 0;
        call.then(|| self.end_pc())
    }

    /// Whether the block ends in an indirect jump that links nothing and whose target is not
    /// a constant: a function's return, as far as a region can tell.
    pub fn ends_in_return(&self) -> bool {
        self.insns.last().is_some_and(|last| {
            last.op.class() == OpClass::Jalr
                && last.rd == 0
                && last.rs1 != 0
                && self.pc_relative_jump_target().is_none()
        })
    }

    /// The target of the block's ending `jalr` if a fused `auipc` right before it made its
    /// base (`auipc ra, hi; jalr ra, lo(ra)`: a pc-relative call or tail call): a constant.
    pub fn pc_relative_jump_target(&self) -> Option<u32> {
        let [.., head, last] = self.insns.as_slice() else {
            return None;
        };
        if head.fusion != Fusion::AuipcJalr
            || last.op.class() != OpClass::Jalr
            || head.rd != last.rs1
        {
            return None;
        }
        let last_pc = self.end_pc().wrapping_sub(last.len as u32);
        let head_pc = last_pc.wrapping_sub(head.len as u32);
        Some(
            head_pc
                .wrapping_add(head.imm as u32)
                .wrapping_add(last.imm as u32)
                & !1,
        )
    }

    /// The pcs control may go to after this block, when they are known statically.
    pub fn successors(&self) -> Vec<u32> {
        let Some(last) = self.insns.last() else {
            return Vec::new();
        };
        let end = self.end_pc();
        let last_pc = end.wrapping_sub(last.len as u32);
        match last.op.class() {
            OpClass::Branch => vec![last_pc.wrapping_add(last.imm as u32), end],
            OpClass::Jal => vec![last_pc.wrapping_add(last.imm as u32)],
            // Constant folding turned the base into x0: the target is known.
            OpClass::Jalr if last.rs1 == 0 => vec![last.imm as u32 & !1],
            OpClass::Jalr => match self.pc_relative_jump_target() {
                Some(target) => vec![target],
                None => self.predicted.into_iter().collect(),
            },
            OpClass::System => Vec::new(),
            // The block ended at its size limit or the page end: it falls through.
            _ => vec![end],
        }
    }
}

/// What tier 2 compiles: blocks of one page, the first of which is the entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegionPlan {
    /// Guest pc of the entry block.
    pub entry_pc: u32,
    /// The region's blocks; `blocks[0]` is the entry.
    pub blocks: Vec<RegionBlock>,
}

impl RegionPlan {
    /// Most return sites an indirect jump is compared with.
    pub const MAX_RETURN_SITES: usize = 8;

    /// The return sites of the region's calls that are blocks of the region, sorted (at most
    /// [`Self::MAX_RETURN_SITES`]).
    pub fn return_sites(&self) -> Vec<u32> {
        let mut sites: Vec<u32> = self
            .blocks
            .iter()
            .filter_map(RegionBlock::return_site)
            .filter(|pc| self.blocks.iter().any(|b| b.pc == *pc))
            .collect();
        sites.sort_unstable();
        sites.dedup();
        sites.truncate(Self::MAX_RETURN_SITES);
        sites
    }

    /// Blocks whose indirect jump has a predicted target that is a block of the region.
    pub fn predicted_jumps(&self) -> usize {
        self.blocks
            .iter()
            .filter_map(|b| b.predicted)
            .filter(|pc| self.blocks.iter().any(|b| b.pc == *pc))
            .count()
    }

    /// Guest instructions in the region.
    pub fn insn_count(&self) -> usize {
        self.blocks.iter().map(|b| b.insns.len()).sum()
    }

    /// Trace a region from `entry`. `block_at(pc)` gives the block at a pc of the entry page
    /// (decoding it if needed), or `None` when no region may include it (for instance a block
    /// whose first instruction straddles into the next page). With `follow_calls`, the return
    /// site of a call is traced too (the callee's return may come back to it inside the
    /// region); that makes regions about four times larger, which pays for hot code only.
    pub fn trace(
        entry: RegionBlock,
        follow_calls: bool,
        mut block_at: impl FnMut(u32) -> Option<RegionBlock>,
    ) -> Self {
        let page = entry.pc & !PAGE_MASK;
        let entry_pc = entry.pc;
        let mut insns = entry.insns.len();
        let mut blocks = vec![entry];
        let mut next = 0;
        while next < blocks.len() {
            let b = &blocks[next];
            let returns = if follow_calls { b.return_site() } else { None };
            for target in b.successors().into_iter().chain(returns) {
                if target & !PAGE_MASK != page
                    || blocks.iter().any(|b| b.pc == target)
                    || blocks.len() >= MAX_REGION_BLOCKS
                {
                    continue;
                }
                let Some(block) = block_at(target) else {
                    continue;
                };
                if insns + block.insns.len() > MAX_REGION_INSNS {
                    continue;
                }
                insns += block.insns.len();
                blocks.push(block);
            }
            next += 1;
        }
        RegionPlan { entry_pc, blocks }
    }

    /// The part of the region on cycles through its entry, if the entry is on one: a hot
    /// region entered at a loop header (where a long run in compiled code stops) keeps its
    /// loop nest and drops the rest of the page's code that the trace reached (function
    /// prologues and epilogues, other loops, cold paths that leave), which LLVM's full
    /// pipeline would spend most of its time on. Edges are those of [`Self::reaches_entry`].
    /// Without a cycle through the entry, the plan is kept.
    pub fn entry_loop(self, follow_calls: bool) -> Self {
        let reaches_entry = self.reaches_entry(follow_calls);
        // Every block was traced from the entry, so reaching the entry puts it on a cycle.
        if !reaches_entry[0] || reaches_entry.iter().all(|&r| r) {
            return self;
        }
        let RegionPlan { entry_pc, blocks } = self;
        let blocks = blocks
            .into_iter()
            .zip(reaches_entry)
            .filter_map(|(b, keep)| keep.then_some(b))
            .collect();
        RegionPlan { entry_pc, blocks }
    }

    /// For each block, whether it is on a cycle of the region's static edges (its
    /// successors that are region blocks): whether it may run again without the region being
    /// left.
    pub fn on_cycles(&self) -> Vec<bool> {
        let edges = self.edges(false);
        (0..self.blocks.len())
            .map(|start| {
                let mut seen = vec![false; self.blocks.len()];
                let mut work = edges[start].clone();
                while let Some(b) = work.pop() {
                    if b == start {
                        return true;
                    }
                    if !std::mem::replace(&mut seen[b], true) {
                        work.extend(&edges[b]);
                    }
                }
                false
            })
            .collect()
    }

    /// For each block, the indices of the region blocks control may go to from it: its static
    /// successors and, with `follow_calls`, a call's return site (as [`Self::trace`] follows).
    fn edges(&self, follow_calls: bool) -> Vec<Vec<usize>> {
        let index_of = |pc: u32| self.blocks.iter().position(|b| b.pc == pc);
        self.blocks
            .iter()
            .map(|b| {
                let returns = if follow_calls { b.return_site() } else { None };
                b.successors()
                    .into_iter()
                    .chain(returns)
                    .filter_map(index_of)
                    .collect()
            })
            .collect()
    }

    /// Whether the entry is on a cycle of the region (see [`Self::reaches_entry`]): control
    /// can come back to it without leaving.
    pub fn loops(&self, follow_calls: bool) -> bool {
        self.reaches_entry(follow_calls)[0]
    }

    /// For each block, whether the entry can be reached from it inside the region. Edges are
    /// those [`Self::trace`] followed (`follow_calls` as given to it); with `follow_calls`,
    /// also from each return (an indirect jump that links nothing) that a call's target
    /// reaches to that call's return site, where its code goes on: a recursive function's
    /// epilogue is on the cycle through its calls, and a function called after a loop puts
    /// nothing on the loop.
    fn reaches_entry(&self, follow_calls: bool) -> Vec<bool> {
        let n = self.blocks.len();
        let index_of = |pc: u32| self.blocks.iter().position(|b| b.pc == pc);
        let mut edges = self.edges(follow_calls);
        if follow_calls {
            let mut return_edges = Vec::new();
            for call in &self.blocks {
                let (Some(site), Some(&callee)) = (
                    call.return_site().and_then(index_of),
                    call.successors().first(),
                ) else {
                    continue;
                };
                let Some(callee) = index_of(callee) else {
                    continue;
                };
                let mut reached = vec![false; n];
                reached[callee] = true;
                let mut work = vec![callee];
                while let Some(from) = work.pop() {
                    if self.blocks[from].ends_in_return() {
                        return_edges.push((from, site));
                    }
                    for &to in &edges[from] {
                        if !reached[to] {
                            reached[to] = true;
                            work.push(to);
                        }
                    }
                }
            }
            for (from, site) in return_edges {
                edges[from].push(site);
            }
        }
        // Walk the edges backwards from the entry.
        let mut reaches_entry = vec![false; n];
        let mut work = vec![0usize];
        while let Some(to) = work.pop() {
            for from in 0..n {
                if !reaches_entry[from] && edges[from].contains(&to) {
                    reaches_entry[from] = true;
                    work.push(from);
                }
            }
        }
        reaches_entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::decode;

    fn block(pc: u32, words: &[u32]) -> RegionBlock {
        RegionBlock {
            pc,
            insns: words.iter().map(|&w| decode(w)).collect(),
            predicted: None,
        }
    }

    #[test]
    fn a_loop_and_its_exit_are_traced_within_the_page() {
        // 0x1000: addi a0, a0, -1 ; bnez a0, 0x1000   -> loop to itself, fall through to 0x1008
        // 0x1008: jal x0, 0x2008 (another page)
        let lp = block(0x1000, &[0xfff50513, 0xfe051ee3]);
        let exit = block(0x1008, &[0x0000106f]);
        let plan = RegionPlan::trace(lp, true, |pc| (pc == 0x1008).then(|| exit.clone()));
        let pcs: Vec<u32> = plan.blocks.iter().map(|b| b.pc).collect();
        assert_eq!(pcs, vec![0x1000, 0x1008]);
        assert_eq!(plan.blocks[0].successors(), vec![0x1000, 0x1008]);
        assert_eq!(plan.blocks[1].successors(), vec![0x2008]);
    }

    #[test]
    fn a_hot_region_keeps_the_loop_nest_of_its_entry() {
        // 0x1000: bnez a0, 0x1000 (self-loop)   -> falls through to 0x1004
        // 0x1004: jal x0, 0x1000 (outer loop back to the inner one)
        // ...and 0x1008 (after a branch at 0x100c) leaves: not on a cycle through the entry.
        let inner = block(0x1000, &[0x00051063]);
        let outer = block(0x1004, &[0xffdff06f]);
        let plan = RegionPlan {
            entry_pc: 0x1000,
            blocks: vec![inner.clone(), outer.clone()],
        };
        assert_eq!(plan.clone().entry_loop(false), plan, "all on the cycle");
        assert!(plan.loops(false));
        // 0x1000: beq a0, x0, 0x1008 ; 0x1004: jal x0, 0x1000 ; 0x1008: jal x0, 0x2000
        let head = block(0x1000, &[0x00050463]);
        let latch = block(0x1004, &[0xffdff06f]);
        let leave = block(0x1008, &[0x7f90006f]);
        let plan = RegionPlan::trace(head, false, |pc| match pc {
            0x1004 => Some(latch.clone()),
            0x1008 => Some(leave.clone()),
            _ => None,
        });
        assert_eq!(plan.blocks.len(), 3);
        let pcs: Vec<u32> = plan.entry_loop(false).blocks.iter().map(|b| b.pc).collect();
        assert_eq!(pcs, vec![0x1000, 0x1004]);
        // No cycle through the entry: kept whole.
        let straight = RegionPlan::trace(leave_to(0x1008, 0x100c), false, |pc| {
            (pc == 0x100c).then(|| block(0x100c, &[0x00008067]))
        });
        assert_eq!(straight.blocks.len(), 2);
        assert_eq!(straight.clone().entry_loop(false), straight);
        assert!(!straight.loops(false));
    }

    /// A block at `pc` of one `jal x0` to `target`.
    fn leave_to(pc: u32, target: u32) -> RegionBlock {
        let off = target.wrapping_sub(pc);
        let imm = ((off >> 20) & 1) << 31
            | ((off >> 1) & 0x3ff) << 21
            | ((off >> 11) & 1) << 20
            | ((off >> 12) & 0xff) << 12;
        block(pc, &[imm | 0x6f])
    }

    /// A block at `pc` calling `target` pc-relatively: `auipc ra, 0; jalr ra, off(ra)`, fused
    /// as the block optimiser fuses them.
    fn call_to(pc: u32, target: u32) -> RegionBlock {
        let off = target.wrapping_sub(pc) as i32;
        assert!((-0x800..0x800).contains(&off), "a short call");
        let imm = (off as u32 & 0xfff) << 20;
        let mut b = block(pc, &[0x0000_0097, imm | 1 << 15 | 1 << 7 | 0x67]);
        b.insns[0].fusion = Fusion::AuipcJalr;
        b
    }

    /// `jalr x0, 0(ra)`: a return.
    const RET: u32 = 0x0000_8067;

    #[test]
    fn a_pc_relative_call_has_a_constant_target() {
        let call = call_to(0x1004, 0x1200);
        assert_eq!(call.pc_relative_jump_target(), Some(0x1200));
        assert_eq!(call.successors(), vec![0x1200]);
        assert_eq!(call.return_site(), Some(0x100c));
        assert!(!call.ends_in_return());
        // Unfused (the block optimiser off), the target is the register's: unknown.
        let mut plain = call.clone();
        plain.insns[0].fusion = Fusion::None;
        assert_eq!(plain.pc_relative_jump_target(), None);
        assert!(plain.successors().is_empty());
        assert!(block(0x1200, &[RET]).ends_in_return());
    }

    #[test]
    fn a_hot_loop_keeps_the_functions_it_calls_but_not_those_called_after_it() {
        // 0x1000: beq a0, x0, 0x1100   loop head: leaves to 0x1100 when done
        // 0x1004: call 0x1200          g, in the loop; returns to 0x100c
        // 0x100c: jal x0, 0x1000       back edge
        // 0x1100: call 0x1300          h, after the loop; returns to 0x1108
        // 0x1108: jal x0, 0x2000       leaves the page
        // 0x1200: ret (g)    0x1300: ret (h)
        let blocks = [
            block(0x1000, &[0x1005_0063]),
            call_to(0x1004, 0x1200),
            leave_to(0x100c, 0x1000),
            call_to(0x1100, 0x1300),
            leave_to(0x1108, 0x2000),
            block(0x1200, &[RET]),
            block(0x1300, &[RET]),
        ];
        assert_eq!(blocks[0].successors(), vec![0x1100, 0x1004]);
        let plan = RegionPlan::trace(blocks[0].clone(), true, |pc| {
            blocks.iter().find(|b| b.pc == pc).cloned()
        });
        assert_eq!(plan.blocks.len(), 7, "the trace follows calls and returns");
        let pcs: Vec<u32> = plan.entry_loop(true).blocks.iter().map(|b| b.pc).collect();
        assert_eq!(pcs, vec![0x1000, 0x1004, 0x1200, 0x100c]);
    }

    #[test]
    fn a_recursive_functions_epilogue_stays_in_the_loop_that_recurses() {
        // 0x1000: f: beq a0, x0, 0x1010   -> 0x1010 (epilogue) or 0x1004
        // 0x1004: call 0x1000 (f itself); returns to 0x100c
        // 0x100c: jal x0, 0x1000          loop back to f's head
        // 0x1010: ret
        let blocks = [
            block(0x1000, &[0x0005_0863]),
            call_to(0x1004, 0x1000),
            leave_to(0x100c, 0x1000),
            block(0x1010, &[RET]),
        ];
        let plan = RegionPlan::trace(blocks[0].clone(), true, |pc| {
            blocks.iter().find(|b| b.pc == pc).cloned()
        });
        assert_eq!(plan.blocks.len(), 4);
        // The return goes back to 0x100c (the recursive call's return site): on the cycle.
        assert_eq!(plan.clone().entry_loop(true), plan);
        assert!(plan.loops(true));
    }

    #[test]
    fn an_indirect_jumps_predicted_target_is_traced_like_a_direct_successor() {
        // 0x1000: jalr x1, 0(x8)     -> predicted 0x1400 (same page) or 0x2400 (another page)
        // 0x1400: jalr x0, 0(x1)     -> unpredicted: nothing traced
        let mut call = block(0x1000, &[0x000400e7]);
        let callee = block(0x1400, &[0x00008067]);
        assert!(call.successors().is_empty(), "no profile, no successor");
        call.predicted = Some(0x1400);
        let plan = RegionPlan::trace(call.clone(), false, |pc| {
            (pc == 0x1400).then(|| callee.clone())
        });
        let pcs: Vec<u32> = plan.blocks.iter().map(|b| b.pc).collect();
        assert_eq!(pcs, vec![0x1000, 0x1400]);
        assert_eq!(plan.predicted_jumps(), 1);
        call.predicted = Some(0x2400);
        let plan = RegionPlan::trace(call, false, |_| panic!("only the entry page is traced"));
        assert_eq!(plan.blocks.len(), 1);
        assert_eq!(
            plan.predicted_jumps(),
            0,
            "a target outside the region is no prediction"
        );
    }
}
