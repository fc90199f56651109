//! The promotion policy, in one place: which tiers run, and when a block moves up. Blocks count
//! their runs in their profile ([`super::block::Profile`]); this module decides what a count
//! means.

use crate::cpu::Priv;

/// An execution tier, or the policy that mixes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tier {
    /// The interpreter over decoded blocks, only.
    Interp,
    /// Tier 1 for every block: each block is compiled before it first runs.
    T1,
    /// Tier 2 as the top tier, compiled synchronously: tier 1 compiles every block before it
    /// first runs, and a block that keeps coming back to the run loop (`t2_threshold` entries)
    /// gets a tier-2 region, compiled before it runs again. With `t2_threshold` 0 every block
    /// gets a region before it first runs (tier 1 off): every instruction runs in tier 2.
    T2,
    /// The default policy: the interpreter, tier 1 for blocks that ran `t1_threshold` times,
    /// and tier 2 (compiled in the background) for blocks that stay hot.
    #[default]
    Auto,
}

impl Tier {
    /// Every tier this build has, by CLI name.
    pub const ALL: &'static [(&'static str, Tier)] = &[
        ("interp", Tier::Interp),
        #[cfg(tier1)]
        ("t1", Tier::T1),
        #[cfg(tier2)]
        ("t2", Tier::T2),
        ("auto", Tier::Auto),
    ];

    /// Parse a `--tier` value (only tiers this build has).
    pub fn from_name(name: &str) -> Option<Tier> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, t)| t)
    }
}

/// Runs after which `Tier::Auto` compiles a block with tier 1 (measured: see docs/codegen.md).
pub const DEFAULT_T1_THRESHOLD: u32 = 16;

/// Further run-loop entries after which `Tier::Auto` asks tier 2 for a region at a block.
/// Once a block is compiled by tier 1 most of its runs are chained and never reach the run
/// loop, so these entries are samples: a block that keeps coming back is hot.
pub const DEFAULT_T2_THRESHOLD: u32 = 256;

/// Under `Tier::Auto`, a block of supervisor code (an operating system's kernel) asks for a
/// region after this many times the run-loop entries of other code ([`DEFAULT_T2_THRESHOLD`]
/// or `--t2-threshold`). The kernel's hot spots come in bursts (a process starting, pages
/// cleared, a boot's probes): at the same threshold as user code, the bundled Linux asked for
/// 30-40 kernel regions of up to 165 instructions as the in-guest benchmark started, whose
/// 100-190 ms compiles each landed after their burst and held the compile thread while the
/// benchmark's own loops waited behind them. With 16 times the threshold (medians of 11
/// alternating runs): the in-guest benchmark 415 -> 377 ms, an OpenSBI boot to the prompt
/// 0.340 -> 0.308 s, a `dd` of 160 MB in 4 KiB and 1 MiB blocks (a kernel-bound job, whose
/// copy loops still get their regions) 566 -> 336 ms; 32 measured the same as 16. Machine
/// mode (firmware, bare-metal programs) and user code keep the plain threshold; under
/// `--tier t2` (fast regions, threshold 4096) a factor changed nothing measurable.
pub const SUPERVISOR_T2_THRESHOLD_FACTOR: u32 = 16;

/// Run-loop entries after which `Tier::T2` compiles a region at a block (tier 1 ran it until
/// then). Higher than auto's: the guest waits for these compiles, so only blocks that stay hot
/// get regions (a Linux boot: 22 regions, against 131 at 256; measured: see docs/codegen.md).
pub const DEFAULT_T2_THRESHOLD_SYNC: u32 = 4096;

/// Under `--tier t2`: samples after which a block whose region was compiled fast gets it
/// compiled again with full optimisation. A sample is a long run of compiled code that ended
/// at the block (its chaining budget used up, or many instructions before an interrupt, a trap
/// or an exit): regions chain into each other and loop inside themselves, so that is where the
/// run loop learns where the guest spends its time.
pub const DEFAULT_T2_REOPTIMISE_THRESHOLD: u32 = 4;

/// Samples (as for [`DEFAULT_T2_REOPTIMISE_THRESHOLD`]) after which a block of user code with
/// no region asks for one, however few its run-loop entries. A hot loop gets that many within
/// milliseconds (nbody's asked 23-31 ms into the run with 4 or with 256), while a shell's
/// bursts do not: with 4, the guest's busybox asked for eight regions as the benchmark
/// started (155 ms of compile CPU, 64 ms for one), which the benchmark's loops waited behind;
/// with 64 three small ones; with 256 none.
pub const T2_SAMPLED_REGION_SAMPLES: u32 = 256;

/// While tier 1 runs the rest, a region whose entry is on no cycle needs at least this many
/// instructions to be compiled. Such a region runs each of its instructions at most once
/// per entry and pays an entry and an exit each time (registers loaded and stored back, the
/// chain helper), which tier 1's chained blocks do not: a trap handler's path entered from
/// the run loop after every trap, or an interpreter's instruction handlers, entered and left
/// through indirect jumps (a Lua 5.4 interpreter ran 1.5 s in tier 1 and 2.3-2.6 s with
/// such regions under `--tier t2` and `auto`; an SQLite workload 2.6 s against 3.4 s). Only
/// very long straight code is left to tier 2. (16 until session 27.)
pub const MIN_STRAIGHT_REGION_INSNS: usize = 512;

/// A region that tier 1 has entered [`REGION_USE_MIN_ENTRIES`] times and that retired fewer
/// than this many instructions per entry goes back to tier 1 for the rest of the epoch: each
/// entry and exit (hart registers loaded and stored back, a return into tier 1's stub and
/// its jump-cache probe) costs more than tier 1's chained jumps save. Interpreters' dispatch
/// loops made such regions: SQLite's `sqlite3VdbeExec` retired about 15 instructions per
/// entry, a Lua interpreter's about 6, and both ran 10-15% slower under auto than under
/// `--tier t1`; the loops of `tests/guest/bench` retire about 16 000.
pub const MIN_REGION_INSNS_PER_ENTRY: u64 = 64;

/// See [`MIN_REGION_INSNS_PER_ENTRY`].
pub const REGION_USE_MIN_ENTRIES: u64 = 4096;

/// How hard tier 2's compiler (LLVM) optimises a region: the trade between compile time and
/// code quality.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum T2Opt {
    /// LLVM's O2 pipeline and its best instruction selection: the default for regions compiled
    /// in the background (`--tier auto`), where compile time is off the guest's path.
    Full,
    /// No IR passes (guest registers stay in stack slots), then LLVM's O0 code generation
    /// (fast instruction selection and register allocation): many times less compile time,
    /// the default for `--tier t2`, which compiles every region before it first runs, and for
    /// deterministic runs, which wait for every region too.
    Fast,
}

impl T2Opt {
    /// By CLI name (`full`, `fast`).
    pub fn from_name(name: &str) -> Option<T2Opt> {
        match name {
            "full" => Some(T2Opt::Full),
            "fast" => Some(T2Opt::Fast),
            _ => None,
        }
    }
}

/// Engine settings chosen by the user.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// The tier (or tier policy) blocks run in.
    pub tier: Tier,
    /// With `Tier::Auto`: compile a block once it ran this many times.
    pub t1_threshold: u32,
    /// With `Tier::Auto`: ask for a region at a block after this many more run-loop entries.
    /// With `Tier::T2`: compile a region at a block after this many run-loop entries (0: at
    /// every block before it first runs, tier 1 off).
    pub t2_threshold: u32,
    /// With `Tier::T2`: compile a block's fast region again with full optimisation once it has
    /// more than this many samples (long runs of compiled code that ended at it).
    pub t2_reoptimise_threshold: u32,
    /// Tier 2's optimisation level; `None` picks by tier (`Full` for auto, `Fast` for t2).
    pub t2_opt: Option<T2Opt>,
    /// Chain compiled blocks with patched direct jumps (`--no-chain` turns it off).
    pub chain: bool,
    /// Block optimisation passes (`--no-constopt`, `--no-fuse`).
    pub ir: super::ir::IrOptions,
    /// A deterministic run (`--deterministic`): compiled code is installed at the same
    /// instruction in every run, so tier 2 compiles each region before it runs instead of in
    /// the background (tier 1 always compiles synchronously).
    pub deterministic: bool,
}

impl EngineConfig {
    /// Whether the guest waits for each tier-2 compile (`--tier t2`, a deterministic run)
    /// instead of running on while it compiles in the background.
    pub fn t2_waits(&self) -> bool {
        self.tier == Tier::T2 || self.deterministic
    }

    /// Whether regions compiled fast are compiled again with full optimisation once their
    /// entry block proves hot: under `--tier t2` unless the level was chosen (`--t2-opt`).
    pub fn reoptimises(&self) -> bool {
        self.tier == Tier::T2 && self.t2_opt.is_none()
    }

    /// Tier 2's optimisation level for this configuration: `Fast` where the guest waits for
    /// every compile (`--tier t2`, a deterministic run), else `Full`.
    pub fn t2_opt(&self) -> T2Opt {
        self.t2_opt.unwrap_or(if self.t2_waits() {
            T2Opt::Fast
        } else {
            T2Opt::Full
        })
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            tier: Tier::default(),
            t1_threshold: DEFAULT_T1_THRESHOLD,
            t2_threshold: DEFAULT_T2_THRESHOLD,
            t2_reoptimise_threshold: DEFAULT_T2_REOPTIMISE_THRESHOLD,
            t2_opt: None,
            chain: true,
            ir: super::ir::IrOptions::default(),
            deterministic: false,
        }
    }
}

/// When blocks move up a tier.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// Runs after which a block is compiled by tier 1; `None` when tier 1 is off (not asked
    /// for, not built in, or disabled because code memory cannot be mapped).
    t1_after: Option<u32>,
    /// Runs after which a region is asked for at a block; `None` when tier 2 is off.
    t2_after: Option<u32>,
    /// The same for a block of supervisor code ([`SUPERVISOR_T2_THRESHOLD_FACTOR`]).
    t2_supervisor_after: Option<u32>,
    /// Tier 2 compiles before the block runs (`--tier t2`, or a deterministic run) instead of
    /// in the background.
    t2_wait: bool,
    /// Samples after which a block whose region was compiled fast gets it compiled again with
    /// full optimisation; `None` when regions are not re-optimised.
    t2_reoptimise_after: Option<u32>,
    /// Re-optimisation waits for the compile (a deterministic run).
    t2_reoptimise_wait: bool,
    /// Samples after which a block with no region asks for one, whatever its run-loop
    /// entries: a loop that tier 1 chains into itself seldom enters the run loop. `None`
    /// without tier 1 (every block then comes through the run loop) and in deterministic runs.
    t2_sampled_after: Option<u32>,
}

impl Policy {
    /// The policy for `config` in this build.
    pub fn new(config: &EngineConfig) -> Policy {
        let (t1_after, t2_after, t2_supervisor_after) = match config.tier {
            Tier::Interp => (None, None, None),
            Tier::T1 => (Some(0), None, None),
            Tier::T2 if config.t2_threshold == 0 => (None, Some(0), Some(0)),
            Tier::T2 => (
                Some(0),
                Some(config.t2_threshold),
                Some(config.t2_threshold),
            ),
            Tier::Auto => (
                Some(config.t1_threshold),
                Some(config.t1_threshold.saturating_add(config.t2_threshold)),
                Some(
                    config.t1_threshold.saturating_add(
                        config
                            .t2_threshold
                            .saturating_mul(SUPERVISOR_T2_THRESHOLD_FACTOR),
                    ),
                ),
            ),
        };
        let t1_after = t1_after.filter(|_| cfg!(tier1));
        let t2_after = t2_after.filter(|_| cfg!(tier2));
        let t2_supervisor_after = t2_supervisor_after.filter(|_| cfg!(tier2));
        Policy {
            t1_after,
            t2_after,
            t2_supervisor_after,
            t2_wait: config.t2_waits(),
            t2_reoptimise_after: config
                .reoptimises()
                .then_some(config.t2_reoptimise_threshold)
                .filter(|_| cfg!(tier2)),
            t2_reoptimise_wait: config.deterministic,
            t2_sampled_after: Some(T2_SAMPLED_REGION_SAMPLES)
                .filter(|_| t1_after.is_some() && t2_after.is_some() && !config.deterministic),
        }
    }

    /// Whether long runs of compiled code are sampled (see [`Policy::t2_sampled_due`] and
    /// [`Policy::t2_reoptimise_due`]).
    #[inline(always)]
    pub fn t2_samples(&self) -> bool {
        self.t2_reoptimise_after.is_some() || self.t2_sampled_after.is_some()
    }

    /// Whether a block with no region and `samples` samples should ask for one.
    #[inline(always)]
    pub fn t2_sampled_due(&self, samples: u32) -> bool {
        self.t2_sampled_after.is_some_and(|after| samples > after)
    }

    /// Tests: blocks with no region ask for one after `samples` samples (where they ask at
    /// all), so a short run gets there.
    #[cfg(test)]
    pub fn sample_regions_after(&mut self, samples: u32) {
        if let Some(after) = &mut self.t2_sampled_after {
            *after = samples;
        }
    }

    /// Whether tier 1 may compile blocks at all.
    #[inline(always)]
    pub fn t1_enabled(&self) -> bool {
        self.t1_after.is_some()
    }

    /// Whether tier 2 may compile regions at all.
    #[inline(always)]
    pub fn t2_enabled(&self) -> bool {
        self.t2_after.is_some()
    }

    /// Whether some compiling tier is on (so every block entry should pass the run loop,
    /// which counts runs).
    #[inline(always)]
    pub fn compiling(&self) -> bool {
        self.t1_enabled() || self.t2_enabled()
    }

    /// Whether a block that has now run `runs` times (this run included) should be compiled
    /// by tier 1.
    #[inline(always)]
    pub fn t1_due(&self, runs: u32) -> bool {
        self.t1_after.is_some_and(|after| runs > after)
    }

    /// Whether a block that has now run `runs` times, at privilege `prv`, should get a region.
    #[inline(always)]
    pub fn t2_due(&self, runs: u32, prv: Priv) -> bool {
        let after = if prv == Priv::Supervisor {
            self.t2_supervisor_after
        } else {
            self.t2_after
        };
        after.is_some_and(|after| runs > after)
    }

    /// The run count a block goes back to when its region expired unstarted in the compile
    /// queue: it must earn the tier-2 threshold again (as after its tier-1 compile) before it
    /// asks for another.
    pub fn t2_cooled_runs(&self) -> u32 {
        self.t1_after.unwrap_or(0)
    }

    /// Whether regions compiled fast are compiled again with full optimisation when hot.
    #[inline(always)]
    pub fn t2_reoptimises(&self) -> bool {
        self.t2_reoptimise_after.is_some()
    }

    /// Whether a block with `samples` samples, and a region compiled fast, should have it
    /// compiled again with full optimisation.
    #[inline(always)]
    pub fn t2_reoptimise_due(&self, samples: u32) -> bool {
        self.t2_reoptimise_after
            .is_some_and(|after| samples > after)
    }

    /// Whether the run loop waits for a re-optimisation (a deterministic run) instead of going
    /// on while it compiles.
    pub fn t2_reoptimise_waits(&self) -> bool {
        self.t2_reoptimise_wait
    }

    /// Whether tier 1 runs a fast region's blocks while their re-optimisation compiles in the
    /// background (its code is faster than a fast region's); without tier 1 the fast region
    /// goes on.
    pub fn t2_suspends_fast_regions(&self) -> bool {
        self.t2_reoptimises() && !self.t2_reoptimise_wait && self.t1_enabled()
    }

    /// Whether a block's first region, asked for when the block already has `samples` samples,
    /// is compiled with full optimisation in the background while tier 1 runs the block,
    /// instead of fast while the guest waits: its fast region would be suspended for a
    /// re-optimisation at its next sample (`t2_suspends_fast_regions`), so waiting for it
    /// bought a millisecond of code slower than tier 1's (a loop sampled at every chaining
    /// budget reaches the re-optimisation threshold long before the region threshold).
    pub fn t2_first_region_in_background(&self, samples: u32) -> bool {
        self.t2_suspends_fast_regions() && self.t2_reoptimise_due(samples)
    }

    /// Whether a region that tier 1 entered `entries` times, retiring `insns` instructions in
    /// them, runs too little per entry and goes back to tier 1 ([`MIN_REGION_INSNS_PER_ENTRY`]).
    pub fn t2_region_too_short(&self, entries: u64, insns: u64) -> bool {
        self.t1_enabled()
            && entries >= REGION_USE_MIN_ENTRIES
            && insns < entries.saturating_mul(MIN_REGION_INSNS_PER_ENTRY)
    }

    /// Whether a block with these instructions may be part of a tier-2 region. Tier 2 runs
    /// FP loads and stores, the common F/D computations (narrowing included), conversions to
    /// a word rounding to nearest or toward zero and the exact operations (sign injection,
    /// moves, compares, min/max, classification, widening conversions) natively
    /// (`native_fp::runs_natively`), but calls helpers for the rest (other rounding modes):
    /// while tier 1 is on, a block with such an instruction stays there (a region's exit leads
    /// to it). With tier 1 off (`--tier t2`) every block goes to tier 2.
    pub fn t2_takes(&self, insns: &[crate::isa::Insn]) -> bool {
        #[cfg(tier2)]
        let native = super::t2::native_fp::runs_natively;
        #[cfg(not(tier2))]
        let native = |_: &crate::isa::Insn| true;
        !self.t1_enabled() || insns.iter().all(native)
    }

    /// Whether a region compiled at `opt` keeps only its entry's loop nest: hot code, and a
    /// fast region while tier 1 runs the rest. Without tier 1 a fast region runs everything
    /// its entry reaches.
    pub fn t2_loop_nest_only(&self, opt: T2Opt) -> bool {
        opt == T2Opt::Full || self.t1_enabled()
    }

    /// Whether a first region of `insns` instructions, whose entry is on a cycle (`loops`) or
    /// not, is worth compiling ([`MIN_STRAIGHT_REGION_INSNS`]).
    pub fn t2_worth_compiling(&self, insns: usize, loops: impl FnOnce() -> bool) -> bool {
        !self.t1_enabled() || insns >= MIN_STRAIGHT_REGION_INSNS || loops()
    }

    /// Whether the run loop waits for tier 2 (`--tier t2`, or a deterministic run).
    pub fn t2_waits(&self) -> bool {
        self.t2_wait
    }

    /// Tier 1 cannot work on this host (no executable memory): interpret from now on.
    pub fn disable_t1(&mut self) {
        self.t1_after = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deterministic_run_waits_for_tier_2_under_every_policy() {
        for tier in [Tier::Auto, Tier::T2] {
            let config = EngineConfig {
                tier,
                deterministic: true,
                ..EngineConfig::default()
            };
            let policy = Policy::new(&config);
            assert!(policy.t2_waits(), "{tier:?}");
            assert_eq!(config.t2_opt(), T2Opt::Fast, "{tier:?}");
        }
        // The normal mode is unchanged: auto compiles in the background, with full effort.
        let config = EngineConfig::default();
        assert!(!Policy::new(&config).t2_waits());
        assert_eq!(config.t2_opt(), T2Opt::Full);
        // An explicit --t2-opt still wins.
        let config = EngineConfig {
            deterministic: true,
            t2_opt: Some(T2Opt::Full),
            ..EngineConfig::default()
        };
        assert_eq!(config.t2_opt(), T2Opt::Full);
    }

    #[test]
    fn floating_point_blocks_tier_2_runs_natively_may_leave_tier_1() {
        let fadd = crate::isa::decode(0x0010_7053); // fadd.s f0, f0, f1 (dynamic rounding)
        let fadd_rtz = crate::isa::decode(0x0010_1053); // fadd.s f0, f0, f1, rtz
        let fsgnj = crate::isa::decode(0x2010_0053); // fsgnj.s f0, f0, f1
        let fmin = crate::isa::decode(0x2810_0053); // fmin.s f0, f0, f1
        let to_int_rdn = crate::isa::decode(0xc200_a553); // fcvt.w.d a0, f1, rdn
        assert_eq!(to_int_rdn.op, crate::isa::Op::FcvtWD);
        let flw = crate::isa::decode(0x0005_2007); // flw f0, 0(a0)
        let addi = crate::isa::decode(0x0015_0513); // addi a0, a0, 1
        let auto = Policy::new(&EngineConfig::default());
        let t2 = Policy::new(&EngineConfig {
            tier: Tier::T2,
            t2_threshold: 0,
            ..EngineConfig::default()
        });
        if auto.t1_enabled() {
            assert!(auto.t2_takes(&[addi]));
            if cfg!(tier2) {
                assert!(auto.t2_takes(&[addi, fadd, flw]));
                assert!(auto.t2_takes(&[addi, fsgnj]), "exact: plain IR in tier 2");
                assert!(auto.t2_takes(&[addi, fmin]), "exact: plain IR in tier 2");
            }
            assert!(!auto.t2_takes(&[addi, to_int_rdn]), "a helper in tier 2");
            assert!(!auto.t2_takes(&[fadd_rtz, addi]), "only RNE runs natively");
        }
        assert!(t2.t2_takes(&[addi, fadd, flw, fsgnj, fmin, to_int_rdn, fadd_rtz]));
    }

    #[test]
    fn under_auto_supervisor_code_asks_for_regions_later_than_other_code() {
        let auto = Policy::new(&EngineConfig {
            tier: Tier::Auto,
            t1_threshold: 16,
            t2_threshold: 256,
            ..EngineConfig::default()
        });
        if !cfg!(tier2) {
            return assert!(!auto.t2_due(u32::MAX, Priv::User));
        }
        let supervisor_after = 16 + 256 * SUPERVISOR_T2_THRESHOLD_FACTOR;
        for prv in [Priv::User, Priv::Machine] {
            assert!(!auto.t2_due(16 + 256, prv) && auto.t2_due(16 + 257, prv));
        }
        assert!(!auto.t2_due(16 + 257, Priv::Supervisor));
        assert!(!auto.t2_due(supervisor_after, Priv::Supervisor));
        assert!(auto.t2_due(supervisor_after + 1, Priv::Supervisor));
    }

    #[test]
    fn tier_2_takes_hot_blocks_from_tier_1_unless_its_threshold_is_0() {
        let t2 = Policy::new(&EngineConfig {
            tier: Tier::T2,
            t2_threshold: 64,
            ..EngineConfig::default()
        });
        let every_block = Policy::new(&EngineConfig {
            tier: Tier::T2,
            t2_threshold: 0,
            ..EngineConfig::default()
        });
        assert!(t2.t2_waits() && every_block.t2_waits());
        if cfg!(tier2) {
            for prv in [Priv::User, Priv::Supervisor, Priv::Machine] {
                assert!(!t2.t2_due(1, prv) && !t2.t2_due(64, prv) && t2.t2_due(65, prv));
                assert!(every_block.t2_due(1, prv));
            }
        }
        if cfg!(tier1) {
            assert!(t2.t1_due(1), "tier 1 compiles before a block first runs");
        }
        assert!(
            !every_block.t1_enabled(),
            "every instruction runs in tier 2"
        );
    }

    /// The default configuration with these three settings.
    fn config(tier: Tier, t2_threshold: u32, deterministic: bool) -> EngineConfig {
        EngineConfig {
            tier,
            t2_threshold,
            deterministic,
            ..EngineConfig::default()
        }
    }

    #[test]
    fn only_a_background_reoptimisation_with_tier_1_on_suspends_or_skips_fast_regions() {
        let t2 = Policy::new(&config(Tier::T2, 64, false));
        // Only where both other tiers exist: tier 1 runs the blocks meanwhile.
        assert_eq!(t2.t2_suspends_fast_regions(), cfg!(all(tier1, tier2)));
        for (why, other) in [
            ("the run waits for the compile", config(Tier::T2, 64, true)),
            ("no tier 1 to run the blocks", config(Tier::T2, 0, false)),
            (
                "no fast regions to re-optimise",
                config(Tier::Auto, 64, false),
            ),
        ] {
            let other = Policy::new(&other);
            assert!(!other.t2_suspends_fast_regions(), "{why}");
            assert!(!other.t2_first_region_in_background(u32::MAX), "{why}");
        }
        // A block sampled past the re-optimisation threshold gets no fast region first.
        let after = DEFAULT_T2_REOPTIMISE_THRESHOLD;
        assert!(!t2.t2_first_region_in_background(after));
        assert_eq!(
            t2.t2_first_region_in_background(after + 1),
            cfg!(all(tier1, tier2))
        );
    }

    #[test]
    fn blocks_sampled_hot_ask_for_a_region_only_while_tier_1_runs_them() {
        let after = T2_SAMPLED_REGION_SAMPLES;
        for tier in [Tier::Auto, Tier::T2] {
            let p = Policy::new(&config(tier, 64, false));
            assert_eq!(p.t2_samples(), cfg!(all(tier1, tier2)), "{tier:?}");
            assert!(!p.t2_sampled_due(after), "{tier:?}");
            assert_eq!(p.t2_sampled_due(after + 1), cfg!(all(tier1, tier2)));
        }
        for (why, other) in [
            ("deterministic runs", config(Tier::Auto, 64, true)),
            (
                "no tier 1: every block passes the run loop",
                config(Tier::T2, 0, false),
            ),
            ("no tier 2", config(Tier::T1, 64, false)),
        ] {
            assert!(!Policy::new(&other).t2_sampled_due(u32::MAX), "{why}");
        }
    }

    #[test]
    fn a_region_is_too_short_only_with_tier_1_on_after_enough_entries() {
        let (n, per) = (REGION_USE_MIN_ENTRIES, MIN_REGION_INSNS_PER_ENTRY);
        for tier in [Tier::Auto, Tier::T2] {
            let p = Policy::new(&config(tier, 64, false));
            let tier1 = cfg!(tier1);
            assert_eq!(p.t2_region_too_short(n, n * per - 1), tier1, "{tier:?}");
            assert!(
                !p.t2_region_too_short(n, n * per),
                "{tier:?}: enough per entry"
            );
            assert!(
                !p.t2_region_too_short(n - 1, 0),
                "{tier:?}: too few entries yet"
            );
        }
        let every_block = Policy::new(&config(Tier::T2, 0, false));
        assert!(
            !every_block.t2_region_too_short(n, 0),
            "without tier 1 nothing else would run the blocks"
        );
    }
}
